"""Text parsers for what a TORCH_TRACE log holds instead of live objects. No torch needed.

- FX graphs as ``GraphModule.print_readable()`` prints them (``dynamo_output_graph``,
  ``inductor_post_grad_graph``): nodes, their targets, inputs, shapes, dtypes and the user's line;
- the ``call()`` function of Inductor's output code: which kernel is launched in which order, with
  the provenance debug handle torch writes above each launch when provenance tracking is on.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Sequence

from .parse import SUBGRAPH_DEF

_DTYPES = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "f64": "float64",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u8": "uint8",
    "b8": "bool",
    "c64": "complex64",
    "c128": "complex128",
    "c32": "complex32",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
    "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz",
}
_ANNOT = re.compile(r"^(?P<dtype>[a-z]+\d*[a-z0-9]*)\[(?P<shape>[^\]]*)\]")
#: The line comment ``print_readable`` writes above a run of nodes: ``# File: x.py:81 in forward, code: ...``. What
#: torch may write before ``File:`` on that line (``torch/fx/graph.py``, ``append_stacktrace_summary``) is no part of
#: the line: ``Backward of forward node:`` (torch 2.15: a backward's op, whose stack trace is its forward op's, as
#: the capture records it), ``Annotation: {...}``, ``recompute: MUST_SAVE``, a ``# seq_nr: 3`` of extra metadata.
_FILE = re.compile(r"^\s*#.*?(?<![\w.])File: (?P<file>.+?):(?P<line>\d+) in (?P<func>[^,]+), code: (?P<code>.*)$")
_ASSIGN = re.compile(r'^\s+(?P<name>[A-Za-z_]\w*)(?:\s*:\s*"(?P<annot>[^"]*)")?\s*=\s*(?P<expr>.+?)\s*$')
_PARAM = re.compile(r'(?:^|,\s*)(?P<name>[A-Za-z_]\w*)\s*(?::\s*(?:"(?P<annot>[^"]*)"|[^,"]+))?')
_IDENT = re.compile(r"[A-Za-z_]\w*")
_ARG = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?!\s*=[^=])(?![\w.(])")
_CALL = re.compile(r"^(?P<target>[A-Za-z_][\w.]*)\(")
_BINOPS = [
    (" @ ", "_operator.matmul"),
    (" ** ", "_operator.pow"),
    (" + ", "_operator.add"),
    (" - ", "_operator.sub"),
    (" * ", "_operator.mul"),
    (" // ", "_operator.floordiv"),
    (" / ", "_operator.truediv"),
    (" % ", "_operator.mod"),
    (" == ", "_operator.eq"),
    (" < ", "_operator.lt"),
    (" > ", "_operator.gt"),
]


def _shape_dtype(annot: Optional[str]) -> tuple[Optional[list], Optional[str]]:
    """``"f32[4, s0][s0, 1]cpu"`` -> ``([4, "s0"], "float32")``; ``"Sym(s0)"`` and tuples -> ``(None, None)``."""
    if not annot:
        return None, None
    m = _ANNOT.match(annot)
    if not m or m["dtype"] not in _DTYPES:
        return None, None
    shape: list = []
    for part in (p.strip() for p in m["shape"].split(",")):
        if not part:
            continue
        shape.append(int(part) if part.lstrip("-").isdigit() else part)
    return shape, _DTYPES[m["dtype"]]


def _strip_deletes(expr: str) -> str:
    """``mm(a, b);  a = b = None`` -> ``mm(a, b)``."""
    i = expr.find(";  ")
    return expr[:i] if i >= 0 else expr


def _target(expr: str, known: set) -> tuple[str, str]:
    """``(op, target)`` of a node from its right-hand side."""
    m = _CALL.match(expr)
    if m:
        target = m["target"]
        head, _, method = target.partition(".")
        if head in known and method and "." not in method:
            return "call_method", method
        if target.startswith("torch.ops."):
            target = target[len("torch.ops.") :]
        elif target == "operator.getitem":
            target = "_operator.getitem"
        return "call_function", target
    if re.match(r"^[A-Za-z_]\w*\[", expr):
        return "call_function", "_operator.getitem"
    if re.match(r"^self\.[\w.]+$", expr):
        return "get_attr", expr[len("self.") :]
    for token, target in _BINOPS:
        if token in expr:
            return "call_function", target
    if expr.startswith("-"):
        return "call_function", "_operator.neg"
    return "call_function", expr.split("(")[0][:60]


def parse_readable_graph(text: str) -> list[dict]:
    """Nodes of an FX graph printed by ``print_readable`` as the dicts ``torchread.fx_graph_nodes`` makes
    (``module_stack`` is empty: the printed graph does not hold it)."""
    nodes: list[dict] = []
    known: set = set()
    params: dict[str, Optional[str]] = {}
    stack = ""
    in_forward = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("def forward(self"):
            in_forward = True
            inside = stripped[len("def forward(self") :].rsplit(")", 1)[0].lstrip(", ")
            for pm in _PARAM.finditer(inside):
                params[pm["name"]] = pm["annot"]
            for name, annot in params.items():
                shape, dtype = _shape_dtype(annot)
                nodes.append(_node(name, "placeholder", name, [], shape, dtype, ""))
                known.add(name)
            continue
        if not in_forward or not stripped:
            if not stripped:
                stack = ""
            continue
        if stripped.startswith("class ") or (stripped.startswith("def ") and in_forward):
            break  # a nested submodule's graph follows: only the top-level forward is this graph
        if stripped.startswith("#"):
            m = _FILE.match(line)
            if m:
                stack = f'  File "{m["file"]}", line {m["line"]}, in {m["func"]}\n    {m["code"]}\n'
            elif "No stacktrace found" in stripped:
                stack = ""
            continue
        if stripped.startswith("return"):
            nodes.append(_output(stripped[len("return") :], nodes, known))
            continue
        m = _ASSIGN.match(line)
        if not m:
            continue
        name, expr = m["name"], _strip_deletes(m["expr"])
        if expr in params and m["annot"] is None:  # dynamo's `l_x_ = L_x_`: the placeholder, renamed
            for n in nodes:
                if n["name"] == expr and n["op"] == "placeholder":
                    n["name"] = name
                    known.add(name)
            continue
        op, target = _target(expr, known)
        shape, dtype = _shape_dtype(m["annot"])
        args = expr[expr.find("(") + 1 :] if op in ("call_function", "call_method") and _CALL.match(expr) else expr
        found = _ARG.findall(args)
        if op == "call_method":
            found = [expr.split(".", 1)[0]] + found  # the object the method is called on comes first
        inputs = list(dict.fromkeys(t for t in found if t in known and t != name))
        nodes.append(_node(name, op, target, inputs, shape, dtype, stack))
        known.add(name)
    return nodes


def _output(ret: str, nodes: list[dict], known: set) -> dict:
    """The output node; its shape is the list of its tensors' shapes when every element is a tensor; ``returns``:
    what it returns position by position (``torchread.returned_names``)."""
    elems = [e.strip() for e in ret.strip().strip("()[]").split(",") if e.strip()]
    by_name = {n["name"]: n for n in nodes}
    shape = dtype = None
    if elems and all(e in by_name and by_name[e]["shape"] is not None for e in elems):
        shape, dtype = [by_name[e]["shape"] for e in elems], by_name[elems[0]]["dtype"]
    inputs = list(dict.fromkeys(t for t in _ARG.findall(ret) if t in known))
    # position by position, "" for a None (``return (None, mm, ...)``: a backward's gradient of an input needing none)
    return dict(
        _node("output", "output", "output", inputs, shape, dtype, ""), returns=[e if e in known else "" for e in elems]
    )


def _node(name, op, target, inputs, shape, dtype, stack) -> dict:
    return {
        "name": name,
        "op": op,
        "target": target,
        "inputs": inputs,
        "shape": shape,
        "dtype": dtype,
        "stack_trace": stack,
        "module_stack": [],
        "module_types": [],
    }


# -- output code: the launches in call() -----------------------------------------------------------

_HANDLES = re.compile(r"#\s*\[Provenance debug handles\]\s*(?P<items>.+)$")
_SOURCE_NODES = re.compile(r"#\s*Topologically Sorted Source Nodes:\s*\[(?P<nodes>[^\]]*)\]")
_EXTERN = re.compile(r"\b(?P<name>extern_kernels\.\w+)\(")
_OUT = re.compile(r"\bout=(?P<buf>\w+)")
_ASSIGNED = re.compile(r"^(?P<buf>\w+)\s*=")
# a fallback kernel: an op Inductor calls as it is, writing a buffer (``buf12 = torch.ops.aten.convolution_backward.
# default(...)``, ``aten.randint.low_out(..., out=buf18)``, a custom op ``torch.ops.mylib.op.default(...)``)
_OP_CALL = re.compile(r"^(?:(?P<buf>\w+)\s*=\s*)?(?P<name>(?:torch\.ops\.)?[A-Za-z_]\w*\.[A-Za-z_]\w*\.[A-Za-z_]\w*)\(")


_PARTITION_CALL = re.compile(r"\bself\.partitions\[(?P<i>\d+)\]\(")


def _body(code: str, header: str) -> list[str]:
    """The lines of the function that ``header`` opens (``"\ndef call("``), up to the next line of the module's
    top level; ``[]`` where there is none."""
    start = code.find(header)
    if start < 0:
        return []
    out = []
    for raw in code[start:].splitlines()[1 + (header[0] == "\n") :]:
        if raw and not raw[0].isspace():
            break
        out.append(raw)
    return out


def subgraph_defs(code: str) -> list[str]:
    """The subgraphs Inductor wrote as functions of the output code and ``call()`` runs (``def repeated_subgraph0(args)``,
    a region of ``torch.compiler.nested_compile_region``, called as ``buf0 = repeated_subgraph0(...)``), in the order
    they are defined; not ``call`` itself nor a partition (``partition_0``, which :func:`call_launches` reads in place).
    """
    return [
        m["name"]
        for m in SUBGRAPH_DEF.finditer(code)
        if m["name"] != "call"
        and not re.fullmatch(r"partition_\d+", m["name"])
        and re.search(rf"= {m['name']}\(", code)
    ]


def nested_graph_text(text: str, name: str) -> str:
    """The printed graph of the submodule ``name`` of a printed graph (``class repeated_subgraph0(torch.nn.Module):``
    inside the post-grad graph), from its ``forward``: what :func:`parse_readable_graph` reads; ``""`` where there is
    none."""
    m = re.search(rf"^\s*class {re.escape(name)}\(torch\.nn\.Module\):\n", text, re.M)
    return text[m.end() :] if m else ""


def call_launches(code: str, kernel_names: set, header: str = "", subgraphs: Iterable[str] = ()) -> list[dict]:
    """The kernel launches of ``call()`` in order: ``{name, extern, buffer, handle, args, operands, source_nodes}``. Where
    Inductor split the graph into partitions (CUDA graphs of parts of it: ``def partition_0(args)`` at the top level,
    called from ``Runner.call`` as ``self.partitions[0](...)``), each partition's launches where ``call()`` calls it.

    ``handle`` is the provenance debug handle (``name:N``) of the comment above the launch, if any;
    ``source_nodes`` the node names of the "Topologically Sorted Source Nodes" comment; ``args`` the buffers and
    inputs the call passes, ``operands`` every name in its arguments (a graph's node such as ``view_13`` too).
    ``header``: another function's launches (``"\\ndef repeated_subgraph0("``, a subgraph's, :func:`subgraph_defs`).
    ``subgraphs``: the subgraphs whose calls (``buf0 = repeated_subgraph0(repeated_subgraph0_args)``) are in the
    list too, each with ``subgraph`` its name and ``buffer`` what it returns: no launch of its own, its kernels'."""
    if header:
        body = _body(code, header)
    else:
        body = _body(code, "\ndef call(") or _body(code, "    def call(self, args")
    out: list[dict] = []
    _launches(code, body, kernel_names, out, set(), frozenset(subgraphs))
    return out


_SUBGRAPH_CALL = re.compile(r"^(?P<buf>\w+) = (?P<name>\w+)\((?P=name)_args\)$")


def _launches(
    code: str, body: list[str], kernel_names: set, out: list[dict], seen: set, subgraphs: frozenset = frozenset()
) -> None:
    handles: list[str] = []
    sources: list[str] = []
    for raw in body:
        line = raw.strip()
        if not line:
            continue
        if "#" in line:  # the comments torch writes above a launch, or one after a call
            h = _HANDLES.search(line) if "[Provenance debug handles]" in line else None
            if h:
                handles = [x.strip() for x in h["items"].split(",") if x.strip()]
                continue
            s = _SOURCE_NODES.search(line) if "Topologically Sorted Source Nodes:" in line else None
            if s:
                sources = [x.strip() for x in s["nodes"].split(",") if x.strip()]
                continue
            if line.startswith("#"):
                continue
        part = _PARTITION_CALL.search(line) if "self.partitions[" in line else None
        if part is not None and part["i"] not in seen:  # a partition's launches, where call() runs it
            seen.add(part["i"])
            _launches(code, _body(code, f"\ndef partition_{part['i']}("), kernel_names, out, seen, subgraphs)
            continue
        sub = _SUBGRAPH_CALL.match(line) if subgraphs and "_args)" in line else None
        if sub is not None and sub["name"] in subgraphs:  # a subgraph's call: its launches are its own compile's
            out.append(
                {
                    "name": sub["name"],
                    "extern": True,
                    "buffer": sub["buf"],
                    "handle": None,
                    "line": line,
                    "args": [],
                    "operands": [],
                    "source_nodes": [],
                    "subgraph": sub["name"],
                }
            )
            handles, sources = [], []
            continue
        ext = _EXTERN.search(line) if "extern_kernels." in line else None
        name = ext["name"] if ext else None
        op = _OP_CALL.match(line) if name is None and "." in line else None
        extern = ext is not None
        # a fallback kernel: it writes a buffer (``bufN = ...``, ``out=bufN``), as an extern kernel does, or it is an op
        # called as torch.ops or aten (a mutating custom op, a collective, ``wait_tensor``, the
        # ``aten.scatter_reduce_.two(buf23, ...)`` of Inductor's scatter, which writes its input: the capture's too)
        if (
            op is not None
            and (op["buf"] or _OUT.search(line) or op["name"].startswith(("torch.ops.", "aten.")))
            and (op["name"].startswith("torch.ops.") or not op["name"].startswith("torch."))
        ):
            name, extern = op["name"], True
        elif name is None:
            m = re.match(r"^(?:\w+\s*=\s*)?(?P<name>\w+)(?:\.run)?\(", line)
            if not m or m["name"] not in kernel_names:
                continue
            name = m["name"]
        buf = None
        if extern:
            o = _OUT.search(line)
            a = _ASSIGNED.match(line)
            buf = o["buf"] if o else (a["buf"] if a else None)
        handle = next((x for x in handles if x.rpartition(":")[0] == name), None)
        args = line[line.find("(") + 1 : line.rfind(")")] if "(" in line else ""
        out.append(
            {
                "name": name,
                "extern": extern,
                "buffer": buf,
                "handle": handle,
                "line": line,
                "args": [a for a in _IDENT.findall(args) if a.startswith(("buf", "arg", "primals", "tangents"))],
                "operands": _IDENT.findall(args),
                "source_nodes": sources,
            }
        )
        handles, sources = [], []


_MAPPING = re.compile(r"^#\s+(?P<src>[\w.]+) => (?P<nodes>[\w, ]+)$")
_DEFINITION = re.compile(r"^(?P<name>\w+) = async_compile\.")


def definition_nodes(code: str, kernel_names: set) -> dict[str, list[str]]:
    """``{kernel: post-grad nodes}`` from the "Source node to ATen node mapping" comment that Inductor writes
    above a kernel's definition (Triton kernels do; C++ kernels do not)."""
    out: dict[str, list[str]] = {}
    block: list[str] = []
    for raw in code.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            m = _MAPPING.match(line)
            if m:
                block += [n.strip() for n in m["nodes"].split(",") if n.strip()]
            continue
        d = _DEFINITION.match(line) if " = async_compile." in line else None
        if d and d["name"] in kernel_names and block:
            out[d["name"]] = list(dict.fromkeys(block))
        if line:
            block = []
    return out


def extern_op_nodes(
    extern: str,
    candidates: list[str],
    nodes: dict[str, dict],
    claimed: set,
    by_op: Optional[dict[str, list[str]]] = None,
    near: Sequence[str] = (),
    passed: Sequence[str] = (),
) -> list[str]:
    """The one post-grad node an extern kernel call implements (``extern_kernels.mm`` -> an ``aten.mm`` node), not
    yet ``claimed`` by another call, the first found of:

    - of ``candidates``, the post-grad nodes that its launch comment names (every origin, which over-approximates;
      torch lists them in graph order, so the call's own node, which the others feed), the last that calls the op;
    - the node of the op that reads most of those nodes and of ``passed`` (the graph's nodes that the call passes,
      ``view_13`` in ``mm(..., view_13, out=buf1)``): a comment need not name the call's own node (with
      ``INDUCTOR_PROVENANCE`` on, torch names a backward mm by the node it was made from), but names the views and
      permutes of its operands that Inductor folded into the call;
    - of ``near`` (the nodes on the user lines of the dynamo nodes the comment names, in graph order: a forward's
      comment names dynamo's nodes, not post-grad ones), the first;
    - the first such node of the graph.

    ``by_op``: op -> the nodes that call it, in graph order, when the caller asks for many externs of a graph."""
    for op in (callee_op(extern), *_CALLED_FOR.get(callee_op(extern), ())):
        everywhere = list(nodes) if by_op is None else by_op.get(op, []) or by_op.get(op.rstrip("_"), [])
        own = [n for n in candidates if n in nodes]
        read = {*own, *passed}
        score = {n: len(read.intersection(nodes[n].get("inputs", ()))) for n in everywhere if n in nodes}
        fed = sorted((n for n in everywhere if score.get(n)), key=lambda n: -score[n])  # stable: graph order
        for pool in (own[::-1], fed, [n for n in near if n in nodes], everywhere):
            for n in pool:
                if n not in claimed and calls_op(nodes[n], op):
                    return [n]
    return []


# a fallback kernel that Inductor calls for a node of another op: dropout's seeds (prims.inductor_seeds) are drawn by
# aten.randint.low_out
_CALLED_FOR = {"randint": ("inductor_seeds",)}


def callee_op(callee: str) -> str:
    """The op an extern or fallback kernel calls: ``extern_kernels.mm`` -> ``mm``,
    ``torch.ops.aten.convolution_backward.default`` -> ``convolution_backward``, ``aten.randint.low_out`` ->
    ``randint``, ``torch.ops.mylib.scaled_clip.default`` -> ``scaled_clip``."""
    parts = callee.split(".")
    return parts[-1] if parts[0] == "extern_kernels" or len(parts) < 3 else parts[-2]


def calls_op(node: dict, op: str) -> bool:
    """Whether a post-grad node (``{op, target}``) calls ``op`` (``aten.mm.default`` calls ``mm``); a node of the
    functional op is the one an in-place call implements (``_c10d_functional.all_reduce`` for ``all_reduce_``)."""
    called = str(node.get("target", "")).split(".")[1:2]
    return (
        node.get("op") == "call_function"
        and bool(called)
        and (called[0] in (op, op.rstrip("_")) or called[0] in _CALLED_AS.get(op, ()))
    )


#: The ops a fallback call of another name implements: Inductor's scatter (``ScatterFallback``) calls
#: ``aten.scatter_reduce_.two`` for a ``scatter_add`` of the graph.
_CALLED_AS = {"scatter_reduce_": ("scatter_add", "scatter_add_", "scatter_reduce")}


# an aten op that writes its first argument (copy_, index_put_, add_), not a dunder (__and__)
_IN_PLACE = re.compile(r"^aten\.\w*[^\W_]_\.\w+$")


def input_mutations(fx: list[str], nodes: dict[str, dict], inputs: list[str]) -> dict[str, str]:
    """``RawSchedNode.mutates`` of a kernel read from a printed post-grad graph, which holds no scheduler buffers:
    each of its nodes ``fx`` that calls an in-place aten op (a trailing ``_``: the ``copy_`` that writes a mutated
    input back, an ``index_put_`` that Inductor's re-inplacing pass made) on a graph input, ``{node: input}``, in
    the order of the graph's ``inputs``. ``copy_ = aten.copy_.default(arg0_1, add)`` in ``fx`` gives
    ``{"copy_": "arg0_1"}``. A buffer made inside the graph and written in place there is not seen (the printed
    graph holds no op of its own for it).
    """
    out = []
    for n in fx:
        node = nodes.get(n) or {}
        args = node.get("inputs") or ()
        if node.get("op") == "call_function" and _IN_PLACE.match(node.get("target", "")) and args:
            if (nodes.get(args[0]) or {}).get("op") == "placeholder":
                out.append((n, args[0]))
    if len(out) > 1:
        place = {name: i for i, name in enumerate(inputs)}
        out.sort(key=lambda item: place.get(item[1], len(place)))
    return dict(out)
