"""The memory of a compile imported from a TORCH_TRACE log (torch-free): the buffers its output code allocates, read
from the text of its ``call()`` in order, in the form ``capturing/memory.read_buffers`` gives the capture's (a log
holds no scheduler buffers), for the same ``analysis/memory.py`` timeline.

- ``buf4 = empty_strided_cpu((2, 32, 64), (2048, 64, 1), torch.float32)``: a buffer of the storage those sizes and
  strides span, written by the next kernel launch;
- ``buf2 = buf1; del buf1  # reuse`` (also through ``reinterpret_tensor``): the dead buffer's storage, merged by the
  timeline (``analysis.memory.reuses``);
- ``buf9 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(...)``, then ``buf10 = buf9[0]``: an
  extern's result, sized by the assertion that follows (``assert_size_stride``; torch 2.15: ``assert_tensor_metadata``,
  which gives its dtype too; a tuple's items each, the tuple itself is no storage), else its dtype the post-grad
  graph's (the node of that shape the launch computes);
- ``del buf3``: freed after the last launch before it; a buffer the ``return`` names lives to the end.

Where this cannot be read (no output code; a C++ wrapper, ``cpp_wrapper=True``; a launch not found) the reason is
returned instead, for the diagnostic."""

from __future__ import annotations

import math
import re
from typing import Any, Optional, Union

from ..analysis.cost import DTYPE_BYTES
from ..analysis.memory import ALLOCATION, extent_bytes, int_list, tensor_bytes
from ..report.model import Compile
from ..report.rules import asserted_layouts, returned_items, size_tuple, split_args, storage_name
from .parse import OutputCodeLayouts, parse_output_code_kernels
from .trace_graph import _body, call_launches, subgraph_defs

#: What ``Memory.source`` says of an imported compile's figures.
SOURCE = (
    "from the output code of the TORCH_TRACE log: each buffer its call() allocates (empty_strided: the storage its "
    "sizes and strides span; an extern's result: the sizes the output code asserts for it) is live from the kernel "
    "launch after the allocation to the last launch before its del, or to the end if the call returns it; a buffer "
    "written into a dead one's storage (the output code's '# reuse') is counted once; graph inputs are counted "
    "apart (input_bytes); left out: an extern call's results its output code drops (sort's indices where only its "
    "values are read), which the log does not size, though the call allocates them until its del"
)

_REUSED = re.compile(r"^(?P<buf>\w+) = (?:reinterpret_tensor\()?(?P<old>\w+)\b[^\n]*; del (?P=old)\b")
_ALIASED = re.compile(r"^(?P<buf>\w+) = reinterpret_tensor\((?P<old>\w+)\b")
_ITEM = re.compile(r"^(?P<buf>\w+) = (?P<tuple>\w+)\[(?P<i>\d+)\]$")
_NAME = re.compile(r"[A-Za-z_]\w*")
#: The functions a printed size may call (``max(1, s17)``, sympy's ``Max``): no size symbols
_SIZE_FUNCS = frozenset({"max", "min", "Max", "Min"})
_DEL = re.compile(r"^del (?P<names>[\w, ]+)$")
#: ``repeated_subgraph0_args = [buf1, arg3_1, arg4_1]``: the list a region's call takes, which holds them until it runs
_REGION_ARGS = re.compile(r"^\w+_args = \[(?P<args>[^\]]*)\]$")


def code_buffers(c: Compile) -> Union[dict, str]:
    """``{"buffers", "inputs", "constants"}`` for ``capturing/memory.memory_of`` from ``c``'s output code and
    post-grad graph (its fused nodes one per kernel launch, in launch order, as the import makes them), or the
    reason why not (a sentence)."""
    code = str(c.output_code or "")
    if not code.strip():
        return "the log holds no output code for it"
    # a subgraph (a repeated region's ``def repeated_subgraph0(args)``) is read in its own function, its calls in call()
    sub = f"\ndef {c.subgraph}(" if c.subgraph and f"\ndef {c.subgraph}(" in code else ""
    body = _body(code, sub) if sub else _body(code, "\ndef call(") or _body(code, "    def call(self, args")
    if not body:
        return "its output code has no Python call() to read (a C++ wrapper, cpp_wrapper=True)"
    if "def partition_" in code:
        return "its output code runs in partitions (CUDA graphs), which this reading does not follow"
    kernels = set(parse_output_code_kernels(code))
    nodes = list(c.fused_nodes)
    # a call of a subgraph the import made a node of (an invoke_subgraph's; a torch.cond's branch, called in an if,
    # has none: trace_import)
    named = {n.name for n in nodes}
    launches = [
        x
        for x in call_launches(code, kernels, sub, () if sub else subgraph_defs(code))
        if not x.get("subgraph") or x["buffer"] in named
    ]
    if len(launches) != len(nodes):
        return f"its output code launches {len(launches)} kernels where the import made {len(nodes)} fused nodes"
    post = c.graphs.get("post_grad")
    fx = {n.name: n for n in post.nodes} if post is not None else {}
    sized = _Sizes(code)
    returned = [storage_name(i) for i in (_returned_by(body) if sub else returned_items(code))]
    outs = next((list(n.returns or []) for n in fx.values() if n.op == "output"), [])
    made_as = {b: r for b, r in zip(returned, outs) if r and b.startswith("buf")}  # a returned buffer: its node
    buffers: dict[str, dict] = {}
    tuples: dict[str, int] = {}  # an extern's tuple result -> the launch that made it
    called: dict[str, str] = {}  # a repeated region's call's tuple result -> the region's function
    k = 0  # launches seen
    for raw in body:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if k < len(launches) and line == launches[k]["line"]:
            buf = launches[k]["buffer"]
            if buf and buf not in buffers:  # an extern's own result: sized by the assert that follows
                buffers[buf] = _entry(buf, nodes[k].name, None, [], "")
                tuples[buf] = k
                if launches[k].get("subgraph"):  # a region's call: its items are what the region's function returns
                    called[buf] = launches[k]["subgraph"]
            k += 1
            here = nodes[k - 1].name
            for name in dict.fromkeys(_NAME.findall(line)):  # every buffer a launch reads is live to it
                b = buffers.get(name)
                if b is not None and b["node"] != here and here not in b["users"]:
                    b["users"].append(here)
            continue
        at = nodes[min(k, len(nodes) - 1)].name if nodes else ""  # the launch the allocation is for
        m = ALLOCATION.match(line)
        if m:
            sizes, strides = sized.at_hints(m["sizes"]), sized.at_hints(m["strides"])
            size = DTYPE_BYTES.get(m["dtype"])
            nbytes = extent_bytes(sizes, strides, size) if sizes is not None and strides is not None and size else None
            buffers[m["buf"]] = _entry(m["buf"], at, nbytes, sizes or [], m["dtype"])
            if nbytes is None:
                buffers[m["buf"]]["unsized_why"] = sized.why(m["sizes"], m["strides"])
            continue
        m = _REUSED.match(line)
        if m:
            old = buffers.get(m["old"])
            buffers[m["buf"]] = _entry(m["buf"], at, old["bytes"] if old else None, [], old["dtype"] if old else "")
            if old and old.get("unsized_why"):  # the dead buffer's storage: its size, unknown for its reason
                buffers[m["buf"]]["unsized_why"] = old["unsized_why"]
            continue
        m = _ITEM.match(line)
        if m and m["tuple"] in buffers:
            writer = buffers[m["tuple"]]["node"]
            buffers[m["tuple"]]["bytes"] = 0  # a tuple: its items are the storages
            buffers[m["buf"]] = _entry(m["buf"], writer, None, [], "")
            if m["tuple"] in called:  # no assert follows a region's call: its function's return says the layout
                item = _region_item(code, called[m["tuple"]], int(m["i"]), sized)
                if item is not None:
                    buffers[m["buf"]].update(bytes=item[0], shape=item[1], dtype=item[2])
            continue
        asserted = asserted_layouts(line)  # torch 2.13's assert_size_stride, 2.15's assert_tensor_metadata
        if asserted:
            for name, sizes, strides, dtype in asserted:
                b = buffers.get(name)
                if b is None or b["bytes"] is not None:
                    continue
                symbolic = (sizes, strides)
                sizes, strides = sized.hinted(sizes), sized.hinted(strides)
                dtype = dtype or _dtype_of(sizes, b["node"], nodes, fx, sized)
                if sizes is not None and strides is not None and dtype in DTYPE_BYTES:
                    b["bytes"], b["shape"], b["dtype"] = extent_bytes(sizes, strides, DTYPE_BYTES[dtype]), sizes, dtype
                    b.pop("unsized_why", None)
                else:
                    b["unsized_why"] = sized.why(*symbolic)
            continue
        m = _REGION_ARGS.match(line)
        if m and k < len(nodes):  # a region's arguments, held by their list through its call (del'd before it)
            for name in _NAME.findall(m["args"]):
                b = buffers.get(name)
                if b is not None and nodes[k].name not in b["users"]:
                    b["users"].append(nodes[k].name)
            continue
        m = _DEL.match(line)
        if m:
            last = nodes[k - 1].name if k else ""
            for name in (n.strip() for n in m["names"].split(",")):
                b = buffers.get(name)
                if b is not None and last and last != b["node"] and last not in b["users"]:
                    b["users"].append(last)
    if k != len(launches):
        return "its output code's launches could not be followed in call()"
    for name, b in buffers.items():
        b["is_output"] = name in returned
        b["origins"] = _origins(b, made_as.get(name), nodes, fx)
    inputs = {n.name: tensor_bytes(n) or sized.input_bytes(n.name) for n in fx.values() if n.op == "placeholder"}
    return {"buffers": list(buffers.values()), "inputs": inputs, "constants": {}, "sizes_at": sized.said()}


class _Sizes:
    """The sizes of the output code at the values it was compiled for: a backed dynamic size (``s17``, automatic
    dynamic shapes after a recompile) has a hint, which the output code holds in ``get_args()`` (``arg0_1 = 16``,
    bound by ``s17 = arg0_1`` in ``call()``: ``parse.OutputCodeLayouts.hints``). The live capture counts such
    buffers at their hints (``Memory.sizes_at``); an import counted none and said they were data-dependent (nu30
    D4)."""

    def __init__(self, code: str):
        self.code = code
        self._layouts: Optional[OutputCodeLayouts] = None
        self.used: dict[str, int] = {}  # each symbol a size was counted at, in the order met

    @property
    def layouts(self) -> OutputCodeLayouts:
        """The output code's layouts and hints, read at the first symbolic size (a static graph's never are)."""
        if self._layouts is None:
            self._layouts = OutputCodeLayouts(self.code)
        return self._layouts

    def hinted(self, dims: Optional[list]) -> Optional[list[int]]:
        """``dims`` (ints, or symbolic text: ``s17``, ``64*s17``) at their hints; None where one has none (a
        data-dependent size, ``u0``, or a symbol the log does not bind)."""
        if dims is None:
            return None
        if all(isinstance(d, int) for d in dims):
            return list(dims)
        out = [self.layouts.hint(d) for d in dims]
        if any(v is None for v in out):
            return None
        for d in dims:
            for name in _NAME.findall(d) if isinstance(d, str) else ():
                if name in self.layouts.hints:
                    self.used.setdefault(name, self.layouts.hints[name])
        return out

    def at_hints(self, text: str) -> Optional[list[int]]:
        """A size or stride tuple's text (``s17, 64``) at its hints."""
        plain = int_list(text)
        return plain if plain is not None else self.hinted(size_tuple(f"({text})"))

    def why(self, *tuples: Any) -> str:
        """Why a size of ``tuples`` (text, or lists of :func:`size_tuple`) is not known: a data-dependent size
        (``u0``: nonzero, unique, a boolean mask) or a backed size whose value the log does not hold (``s17``)."""
        words = []
        for t in tuples:
            for d in (size_tuple(f"({t})") or []) if isinstance(t, str) else (t or []):
                words += (
                    [w for w in _NAME.findall(d) if w not in self.layouts.hints and w not in _SIZE_FUNCS]
                    if isinstance(d, str)
                    else []
                )
        unbacked = [w for w in dict.fromkeys(words) if w.startswith("u")]
        if unbacked or not words:
            return ""  # data-dependent: what the note says by default
        return f"a backed dynamic size, {', '.join(dict.fromkeys(words))}, whose value at the compile the log does not hold"

    def input_bytes(self, name: str) -> Optional[int]:
        """Bytes of graph input ``name`` as ``get_args()`` makes it (``rand_strided`` of the sizes at their hints)."""
        lay = self.layouts.layouts.get(name) or {}
        sizes = self.hinted(lay.get("hint_shape") or lay.get("shape"))
        strides = self.hinted(lay.get("hint_stride") or lay.get("stride"))
        size = DTYPE_BYTES.get(str(lay.get("dtype")))
        return extent_bytes(sizes, strides, size) if sizes is not None and strides is not None and size else None

    def said(self) -> str:
        """``Memory.sizes_at``: ``at s17=16`` where a size was counted at its hint, else ``""``."""
        return "at " + ", ".join(f"{k}={v}" for k, v in self.used.items()) if self.used else ""


def _region_item(code: str, region: str, i: int, sized: "_Sizes") -> Optional[tuple[int, list, str]]:
    """``(bytes, sizes, dtype)`` of item ``i`` of what repeated region ``region``'s function returns
    (``return (repeated_subgraph0_buf3, )``: the layout its ``empty_strided`` gave that buffer, through its reuses),
    at the size hints; None where not known. A region's call in ``call()`` is followed by no size assertion: its
    results were said to be of a size known only when the graph runs."""
    body = _body(code, f"\ndef {region}(")
    items = _returned_by(body) if body else []
    if i >= len(items):
        return None
    lay = sized.layouts.layouts.get(storage_name(items[i])) or {}
    sizes, strides = sized.hinted(lay.get("shape")), sized.hinted(lay.get("stride"))
    size = DTYPE_BYTES.get(str(lay.get("dtype")))
    if sizes is None or strides is None or not size:
        return None
    return extent_bytes(sizes, strides, size), sizes, str(lay.get("dtype"))


def _returned_by(body: list[str]) -> list[str]:
    """The items of the last ``return (...)`` of a function's lines (a subgraph's: ``return (repeated_subgraph0_buf5, )``)."""
    line = next((x.strip() for x in reversed(body) if x.strip().startswith("return (")), "")
    return [x for x in split_args(line[len("return (") : line.rfind(")")]) if x]


def _entry(name: str, node: str, nbytes: Optional[int], shape: list, dtype: str) -> dict:
    return {"name": name, "node": node, "bytes": nbytes, "shape": shape, "dtype": dtype, "users": [], "internal": False}


def _dtype_of(
    sizes: Optional[list[int]], node: str, nodes: list, fx: dict, sized: Optional[_Sizes] = None
) -> Optional[str]:
    """The dtype of an extern's result of ``sizes``: the post-grad node of that shape (at its hints, ``sized``) among
    those its launch (the fused node ``node``) computes, and the items they make (a tuple's ``getitem``)."""
    fused = next((n for n in nodes if n.name == node), None)
    if fused is None or sizes is None:
        return None
    own = [fx[n] for n in fused.fx_nodes if n in fx]
    names = {g.name for g in own}
    items = [g for g in fx.values() if any(i in names for i in g.inputs) and g.target == "_operator.getitem"]
    for g in [*own, *items]:
        shape = sized.hinted(g.shape) if sized is not None and isinstance(g.shape, list) else g.shape
        if isinstance(shape, list) and shape == sizes and g.dtype:
            return str(g.dtype)
    return None


def _origins(b: dict, returned_as: Optional[str], nodes: list, fx: dict) -> list[str]:
    """The post-grad nodes that compute a buffer: the node the graph returns in its place, else those of its launch of
    its shape (a kernel that writes several buffers), else all its launch's."""
    if returned_as and returned_as in fx and fx[returned_as].op != "placeholder":
        return [returned_as]
    fused = next((n for n in nodes if n.name == b["node"]), None)
    own = [n for n in (fused.fx_nodes if fused is not None else []) if n in fx]
    shaped = [n for n in own if isinstance(fx[n].shape, list) and b["shape"] and fx[n].shape == b["shape"]]
    if shaped:
        return shaped
    numel = math.prod(b["shape"]) if b["shape"] else None
    same = [n for n in own if isinstance(fx[n].shape, list) and _numel(fx[n].shape) == numel]
    return same or own


def _numel(shape: list) -> Optional[int]:
    return math.prod(shape) if all(isinstance(d, int) for d in shape) else None


def with_memory(
    c: Compile,
    device: str,
    backward: Optional[Compile] = None,
    forward: Optional[Compile] = None,
    calls: Optional[dict[str, tuple[str, int]]] = None,
) -> tuple[Compile, str]:
    """``(c with its memory, "")`` built from its output code (:func:`code_buffers`; a training forward with the
    ``backward`` that reads what it saved, a backward with its ``forward``; ``calls``: what each call of a repeated
    region holds inside, as ``analysis.memory`` takes it), or ``(c, why not)``."""
    import dataclasses

    from ..analysis import memory as analysis
    from ..report.finish import compile_note

    try:
        facts = code_buffers(c)
        if isinstance(facts, str):
            return dataclasses.replace(c, memory=None), facts
        m = analysis.memory(c, facts["buffers"], facts["inputs"], backward, device=device, forward=forward, calls=calls)
        if facts["sizes_at"] and not m.sizes_at:  # counted at the hints the output code holds, as the capture says
            m = dataclasses.replace(m, sizes_at=facts["sizes_at"])
    except Exception as e:  # the memory is an extra: the report stands without it, and says why
        return dataclasses.replace(c, memory=None), f"its memory could not be worked out ({type(e).__name__}: {e})"
    rest = m.source[len(analysis.SOURCE) :] if m.source.startswith(analysis.SOURCE) else "; " + m.source
    m = dataclasses.replace(m, source=SOURCE + rest)
    c = dataclasses.replace(c, memory=m)
    return dataclasses.replace(c, graph_note=compile_note(c)), ""


def imported_memory(compiles: list[Compile], device: str) -> tuple[list[Compile], list[str]]:
    """Each compile of an import with its memory (:func:`with_memory`), and where one has none, why (``"2/0
    backward: ..."``)."""
    from ..analysis.memory import region_call_bytes, region_order
    from ..report.finish import pair_backward

    backs = pair_backward(compiles)
    by_id = {c.id: c for c in compiles}
    fronts = {b.id: by_id[f] for f, b in backs.items()}
    order, called = region_order(compiles)  # the regions first: a call holds what its region allocates inside
    done: dict[str, Compile] = {}
    why: dict[str, str] = {}
    for c in (compiles[i] for i in order):
        calls = region_call_bytes(c.id, called, done)
        done[c.id], reason = with_memory(c, device, backs.get(c.id), fronts.get(c.id), calls)
        if reason:
            why[c.id] = f"{c.id}: {reason}"
    return [done[c.id] for c in compiles], [why[c.id] for c in compiles if c.id in why]
