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
from typing import Optional, Union

from ..analysis.cost import DTYPE_BYTES
from ..analysis.memory import ALLOCATION, extent_bytes, int_list, tensor_bytes
from ..report.model import Compile
from ..report.rules import asserted_layouts, returned_items, split_args, storage_name
from .parse import parse_output_code_kernels
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
_DEL = re.compile(r"^del (?P<names>[\w, ]+)$")


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
    returned = [storage_name(i) for i in (_returned_by(body) if sub else returned_items(code))]
    outs = next((list(n.returns or []) for n in fx.values() if n.op == "output"), [])
    made_as = {b: r for b, r in zip(returned, outs) if r and b.startswith("buf")}  # a returned buffer: its node
    buffers: dict[str, dict] = {}
    tuples: dict[str, int] = {}  # an extern's tuple result -> the launch that made it
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
            sizes, strides = int_list(m["sizes"]), int_list(m["strides"])
            size = DTYPE_BYTES.get(m["dtype"])
            nbytes = extent_bytes(sizes, strides, size) if sizes is not None and strides is not None and size else None
            buffers[m["buf"]] = _entry(m["buf"], at, nbytes, sizes or [], m["dtype"])
            continue
        m = _REUSED.match(line)
        if m:
            old = buffers.get(m["old"])
            buffers[m["buf"]] = _entry(m["buf"], at, old["bytes"] if old else None, [], old["dtype"] if old else "")
            continue
        m = _ITEM.match(line)
        if m and m["tuple"] in buffers:
            writer = buffers[m["tuple"]]["node"]
            buffers[m["tuple"]]["bytes"] = 0  # a tuple: its items are the storages
            buffers[m["buf"]] = _entry(m["buf"], writer, None, [], "")
            continue
        asserted = asserted_layouts(line)  # torch 2.13's assert_size_stride, 2.15's assert_tensor_metadata
        if asserted:
            for name, sizes, strides, dtype in asserted:
                b = buffers.get(name)
                if b is None or b["bytes"] is not None:
                    continue
                sizes, strides = _ints(sizes), _ints(strides)
                dtype = dtype or _dtype_of(sizes, b["node"], nodes, fx)
                if sizes is not None and strides is not None and dtype in DTYPE_BYTES:
                    b["bytes"], b["shape"], b["dtype"] = extent_bytes(sizes, strides, DTYPE_BYTES[dtype]), sizes, dtype
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
    inputs = {n.name: tensor_bytes(n) for n in fx.values() if n.op == "placeholder"}
    return {"buffers": list(buffers.values()), "inputs": inputs, "constants": {}}


def _returned_by(body: list[str]) -> list[str]:
    """The items of the last ``return (...)`` of a function's lines (a subgraph's: ``return (repeated_subgraph0_buf5, )``)."""
    line = next((x.strip() for x in reversed(body) if x.strip().startswith("return (")), "")
    return [x for x in split_args(line[len("return (") : line.rfind(")")]) if x]


def _ints(sizes: Optional[list]) -> Optional[list[int]]:
    """Sizes or strides that are all numbers; None where one is symbolic (``s0``) or unknown."""
    return sizes if sizes is not None and all(isinstance(d, int) for d in sizes) else None


def _entry(name: str, node: str, nbytes: Optional[int], shape: list, dtype: str) -> dict:
    return {"name": name, "node": node, "bytes": nbytes, "shape": shape, "dtype": dtype, "users": [], "internal": False}


def _dtype_of(sizes: Optional[list[int]], node: str, nodes: list, fx: dict) -> Optional[str]:
    """The dtype of an extern's result of ``sizes``: the post-grad node of that shape among those its launch (the
    fused node ``node``) computes, and the items they make (a tuple's ``getitem``)."""
    fused = next((n for n in nodes if n.name == node), None)
    if fused is None or sizes is None:
        return None
    own = [fx[n] for n in fused.fx_nodes if n in fx]
    names = {g.name for g in own}
    items = [g for g in fx.values() if any(i in names for i in g.inputs) and g.target == "_operator.getitem"]
    for g in [*own, *items]:
        if isinstance(g.shape, list) and g.shape == sizes and g.dtype:
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
    c: Compile, device: str, backward: Optional[Compile] = None, forward: Optional[Compile] = None
) -> tuple[Compile, str]:
    """``(c with its memory, "")`` built from its output code (:func:`code_buffers`; a training forward with the
    ``backward`` that reads what it saved, a backward with its ``forward``), or ``(c, why not)``."""
    import dataclasses

    from ..analysis import memory as analysis
    from ..report.finish import compile_note

    try:
        facts = code_buffers(c)
        if isinstance(facts, str):
            return dataclasses.replace(c, memory=None), facts
        m = analysis.memory(c, facts["buffers"], facts["inputs"], backward, device=device, forward=forward)
    except Exception as e:  # the memory is an extra: the report stands without it, and says why
        return dataclasses.replace(c, memory=None), f"its memory could not be worked out ({type(e).__name__}: {e})"
    rest = m.source[len(analysis.SOURCE) :] if m.source.startswith(analysis.SOURCE) else "; " + m.source
    m = dataclasses.replace(m, source=SOURCE + rest)
    c = dataclasses.replace(c, memory=m)
    return dataclasses.replace(c, graph_note=compile_note(c)), ""


def imported_memory(compiles: list[Compile], device: str) -> tuple[list[Compile], list[str]]:
    """Each compile of an import with its memory (:func:`with_memory`), and where one has none, why (``"2/0
    backward: ..."``)."""
    from ..report.finish import pair_backward

    backs = pair_backward(compiles)
    by_id = {c.id: c for c in compiles}
    fronts = {b.id: by_id[f] for f, b in backs.items()}
    out, why = [], []
    for c in compiles:
        made, reason = with_memory(c, device, backs.get(c.id), fronts.get(c.id))
        if reason:
            why.append(f"{c.id}: {reason}")
        out.append(made)
    return out, why
