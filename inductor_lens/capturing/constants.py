"""Where a frozen graph's constants come from, read as torch makes them (``torch._inductor.config.freezing``).

Freezing replaces each parameter and buffer the graph takes with a graph constant: ``replace_params_with_constants``
calls ``constant_folding.replace_node_with_constant`` on the placeholder (``arg0_1`` becomes ``get_attr
_frozen_param0``). Constant folding then computes new constants from those, again through
``replace_node_with_constant`` on the node it folded (the ``get_attr`` keeps that node's name, ``add_tensor_1``): the
BatchNorms binary folding folded into their convolutions (``mul(conv1.weight, bn1's scale)``: the folded tensor is the
first argument of each op, the other's values the rest) and the weights Inductor's patterns prepack for oneDNN and MKL
(``mkldnn._reorder_convolution_weight``, ``mkl._mkl_reorder_linear_weight``). A C++ GEMM template packs its weight
while lowering (``constant6``): ``prune_tensors(input_nodes, new_input_nodes)`` gets the template's inputs before and
after, the old weight replaced by the packed one, which ``CppGemmTemplate.prep_weight`` made from a view of the
weight constant's storage (``storage_owner``).

Each origin is plain data (``RawGraph.constant_origins``): ``{"input": "arg3_1", "shape", "dtype"}`` for a placeholder
freezing replaced, else ``{"base", "others", "ops", "shape", "dtype"}``: the constant or input the value is folded into
(``base``, ``""`` where the chain of first arguments ends at no tensor: a missing conv bias, ``0``), the other
constants and inputs it reads, and the ops that compute it (``aten.mul.Tensor``; ``CppGemmTemplate.prep_weight`` for
a template's packing, with ``"lowered": True``: made while lowering, a constant no ``get_attr`` node names).
:func:`constant_names` names them as the lens names parameters (``conv1.weight folded with bn1 (packed for
oneDNN)``). The readers import torch only when called; the naming needs none."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .torchread import _target_name

#: How far back :func:`fold_origin` walks the ops a folded constant was computed by (a constant folded from a long
#: chain is left unnamed rather than read at length)
_MAX_OPS = 256

#: The name a C++ GEMM template's packing is recorded by, as an op of the constant it makes
TEMPLATE_PACK = "CppGemmTemplate.prep_weight"


def fold_origin(node: Any, constant: Any) -> Optional[dict]:
    """The origin of the constant that replaces FX ``node`` (see the module's docstring); None where it cannot be read
    (a subgraph past :data:`_MAX_OPS` ops)."""
    if node.op == "placeholder":
        return {"input": node.name, **_layout(constant)}
    base = node
    while base.op == "call_function" and base.args and hasattr(base.args[0], "op"):
        base = base.args[0]
    leaves: list[str] = []
    ops: list[str] = []
    seen: set = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op == "get_attr":
            leaves.append(str(n.target))
        elif n.op == "placeholder":
            leaves.append(n.name)
        else:
            ops.append(_target_name(n))
            if len(ops) > _MAX_OPS:
                return None
            todo.extend(reversed(n.all_input_nodes))
    first = str(base.target) if base.op == "get_attr" else base.name if base.op == "placeholder" else ""
    return {
        "base": first,
        "others": [x for x in dict.fromkeys(leaves) if x != first],
        "ops": list(dict.fromkeys(ops)),
        **_layout(constant),
    }


def _layout(value: Any) -> dict:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    return {
        "shape": [int(s) for s in shape] if shape is not None else None,
        "dtype": str(dtype).replace("torch.", "") if dtype is not None else "",
    }


def storage_owner(value: Any, constants: dict) -> str:
    """The graph constant whose storage ``value`` views (a C++ GEMM template packs ``W``, its weight constant viewed
    with the strides it wants: ``as_strided``), ``""`` where no one constant's is (or the value is an opaque oneDNN
    tensor, which has no storage to compare)."""
    import torch

    if not isinstance(value, torch.Tensor) or getattr(value, "is_mkldnn", False):
        return ""
    ptr = value.untyped_storage().data_ptr()
    owners = [
        name
        for name, c in constants.items()
        if isinstance(c, torch.Tensor) and not c.is_mkldnn and c.untyped_storage().data_ptr() == ptr
    ]
    return owners[0] if len(owners) == 1 else ""


def made_constants(input_nodes: list, new_input_nodes: list, constants: dict) -> list[str]:
    """The constants among a template's new inputs (``prune_tensors``' ``new_input_nodes``) that none of its inputs
    before was: those it made while lowering (``constant6``)."""

    def names(nodes: list) -> list[str]:
        out = []
        for n in nodes:
            try:
                name = n.get_name()
            except Exception:  # (an input that is no buffer: None, a tensor)
                continue
            if name in constants:
                out.append(name)
        return out

    old = set(names(input_nodes))
    return [n for n in dict.fromkeys(names(new_input_nodes)) if n not in old]


def packed_origin(base: str, value: Any) -> dict:
    """The origin of ``value``, the weight constant ``base`` as a C++ GEMM template packed it."""
    return {"base": base, "others": [], "ops": [TEMPLATE_PACK], "lowered": True, **_layout(value)}


# -- naming (no torch) ------------------------------------------------------------------------------------------------

#: Ops that lay a tensor's values out anew without changing them
_LAYOUT = frozenset(
    {"permute", "transpose", "t", "view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "expand", "clone"}
    | {"contiguous", "alias", "detach", "_reshape_alias", "as_strided", "slice", "select"}
)
_CONVERT = frozenset({"_to_copy", "convert_element_type", "to"})
_PERMUTES = frozenset({"permute", "transpose", "t"})


def _short(op: str) -> tuple[str, str]:
    """``(namespace, name)`` of an op as recorded: ``aten.mul.Tensor`` -> ``("aten", "mul")``."""
    parts = op.split(".")
    return (parts[0], parts[1]) if len(parts) > 1 else ("", parts[0])


def pack_note(op: str) -> str:
    """What a packing op made of a weight, in the words a name carries (``packed for MKL``); ``""`` for other ops."""
    if op == TEMPLATE_PACK:
        return "packed for the C++ GEMM template"
    ns, name = _short(op)
    if "reorder" in name or "prepack" in name:
        if ns == "mkl":
            return "packed for MKL"
        if ns in ("mkldnn", "onednn", "quantized"):
            return "packed for oneDNN"
    return ""


@dataclass
class _Traced:
    """A constant traced to the user's tensors: what it is folded into (``base``, the display name of a parameter or
    buffer, ``""`` for none, and ``shape``, that tensor's), what else was folded in (``others``, display names), the notes its name carries
    (``packed for MKL``), whether ops other than layout, dtype and packing ones computed it (``computed``), whether
    its dims are in another order than the tensor's (``permuted``), and the role of the tensor it is named after."""

    base: str
    role: str
    shape: Optional[list] = None
    others: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    computed: bool = False
    permuted: bool = False
    #: a PT2E weight's scale or zero point: the display name of the weight it belongs to (``fc.weight``)
    of: str = ""


def _module_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def _text(t: _Traced) -> str:
    """``conv1.weight folded with bn1 (packed for oneDNN)``, ``fc1.weight (packed for MKL)``, ``folded from bn2``,
    ``computed from fc1.weight``; ``""`` where nothing is known."""
    modules = [m for m in dict.fromkeys(_module_of(o) for o in t.others) if m]
    if t.base and modules:
        text = f"{t.base} folded with {', '.join(modules)}"
    elif modules:
        text = f"folded from {', '.join(modules)}"
    elif t.base and t.computed:
        text = f"computed from {t.base}"
    else:
        text = t.base
    notes = list(dict.fromkeys((["permuted"] if t.permuted else []) + t.notes))
    return f"{text} ({', '.join(notes)})" if text and notes else text


def constant_names(
    origins: dict[str, dict],
    input_role: Callable[[str], tuple[str, str]],
    quantized: Optional[Callable[[str], tuple[str, str]]] = None,
) -> dict[str, tuple[str, str]]:
    """``{constant: (role, display name)}`` of each constant of ``origins`` (``RawGraph.constant_origins``) traced to
    the user's parameters and buffers; ``input_role``: ``(role, display name)`` of a graph input by its name
    (``arg3_1``), ``("", "")`` where unknown; ``quantized``: of a graph input PT2E quantized, ``(note, of)``: the dtype
    of a quantized weight (``int8``: ``fc.weight (int8, packed for oneDNN)``), or the weight a scale or zero point
    belongs to (``fc.weight``), which a packing of that weight reads without folding it in; ``("", "")`` for others.
    A constant whose base is unknown is left out (keeps Inductor's name); an unknown other tensor folded in is said
    by its own name."""
    done: dict[str, Optional[_Traced]] = {}

    def trace(name: str, depth: int = 0) -> Optional[_Traced]:
        if name in done:
            return done[name]
        done[name] = None  # (a cycle reads as unknown)
        rec = origins.get(name)
        out: Optional[_Traced] = None
        if rec is None or "input" in rec:
            role, shown = input_role(rec["input"] if rec else name)
            note, of = quantized(rec["input"] if rec else name) if quantized else ("", "")
            out = _Traced(shown, role, shape=(rec or {}).get("shape"), notes=[note] if note else [], of=of)
            out = out if shown else None
        elif depth < 64:
            base = trace(rec["base"], depth + 1) if rec.get("base") else None
            if rec.get("base") and base is None:
                return None
            others: list[str] = []
            roles: list[str] = []
            for o in rec.get("others") or []:
                got = trace(o, depth + 1)
                if got is None:
                    others.append(o)
                    continue
                if base is not None and got.of and got.of == base.base:  # the weight's own scale, read by its packing
                    continue
                others.extend(([got.base] if got.base else []) + got.others)
                roles.append(got.role)
            ops = [_short(op)[1] for op in rec.get("ops") or []]
            packs = [n for n in (pack_note(op) for op in rec.get("ops") or []) if n]
            notes = list(base.notes) if base else []
            if _CONVERT & set(ops) and rec.get("dtype"):
                notes.append(f"as {rec['dtype']}")
            notes.extend(packs)
            # laid out with its dims in another order: by its shape, against the tensor's (a packed one's is opaque)
            shape = rec.get("shape")
            permuted = bool(base and base.permuted)
            if base and not packs and shape and base.shape:
                permuted = shape != base.shape and (permuted or bool(_PERMUTES & set(ops)))
            plain = _LAYOUT | _CONVERT
            computed = bool(base and base.computed) or any(
                op not in plain and not pack_note(full) for op, full in zip(ops, rec.get("ops") or [])
            )
            role = "parameter" if "parameter" in roles else roles[0] if roles else ""
            out = _Traced(
                base.base if base else "",
                base.role if base else role,
                shape=base.shape if base else None,
                others=(base.others if base else []) + [o for o in others if o != (base.base if base else "")],
                notes=notes,
                computed=computed,
                permuted=permuted,
            )
            if not out.base and not out.others:
                out = None
        done[name] = out
        return out

    result = {}
    for name in origins:
        t = trace(name)
        text = _text(t) if t is not None else ""
        if t is not None and text:
            result[name] = (t.role, text)
    return result
