"""Where a compile's memory goes, computed from plain data (torch-free): the live bytes after each fused node
from the buffers' sizes and lifetimes, the peak and what is alive there, the tensors a training step's forward
saves for its backward, the ops the backward recomputes, and roll-ups by user line and nn.Module.

The capture (``capturing/memory.py``) reads the buffers from Inductor's scheduler; a forward/backward pair of
compiles alone (an older report, a trace import) gives the saved-for-backward part from its graphs."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import defaultdict
from typing import Iterable, Optional, Sequence

from ..report.finish import region_calls
from ..report.lines import (
    buffer_module,
    built_by_module,
    gradient_buffers,
    memory_lines,
    recomputed_by_line,  # noqa: F401 (imported from here by older callers)
    saved_by_line,
    user_line,
)
from ..report.model import (
    HELD_KINDS,
    BufferBytes,
    BuiltLine,
    BytesBy,
    Compile,
    Frame,
    FusedNode,
    GraphNode,
    HeldConstant,
    LiveBuffer,
    Memory,
    MemoryPoint,
    MemoryRegion,
    ModuleRepeat,
    Recomputed,
    SavedGroup,
    SavedTensor,
)
from ..report.modules import some_instances_label
from ..report.rules import (
    asserted_layouts,
    counted_bytes,
    owner_module,
    returned_items,
    rng_state_note,
    saved_note,
    saved_origin,
    storage_name,
    with_part,
)
from .cost import DTYPE_BYTES, VIEW_OPS, op_name

#: How the static numbers are obtained (``Memory.source``), before any measurement is added.
SOURCE = (
    "estimated from Inductor's scheduler: each buffer's size (numel x element size, at the size hints) is live "
    "from the fused node that writes it to the last fused node that reads it, or to the end if the graph "
    "returns it; the fused nodes of one kernel call are one launch (Inductor allocates every buffer the call "
    "takes before it and frees none until it returns): a buffer written or read in it is live from the call's "
    "first node to its last; a buffer made and read inside one fused kernel costs nothing unless the output code "
    "allocates it; a buffer renamed by an in-place "
    "mutation, or written into a dead buffer's storage (the output code's '# reuse'), is counted once; an extern "
    "call's results that no buffer takes (SDPA's logsumexp where nothing saves it, nonzero's read only for its size) "
    "are live while its call's result is; graph inputs are counted apart (input_bytes); left out: the scratch "
    "memory an extern kernel allocates and frees inside itself (a boolean mask's index runs a nonzero of its own)"
)
NOT_MEASURED_CPU = "peak not measured on CPU (torch.cuda memory statistics exist only on a GPU)"
NOT_MEASURED = "peak not measured (inspect(..., profile=True) on a GPU measures it)"


def tensor_bytes(node: GraphNode) -> Optional[int]:
    """Bytes of one graph node's tensor (numel x element size; the hints where a size is symbolic), or None
    (not one tensor, unknown dtype)."""
    shape = node.shape
    if not isinstance(shape, list) or any(isinstance(d, list) for d in shape):
        return None
    if not all(isinstance(d, int) for d in shape):
        hint = node.shape_hint
        if not (isinstance(hint, list) and len(hint) == len(shape) and all(isinstance(d, int) for d in hint)):
            return None
        shape = hint
    size = DTYPE_BYTES.get(str(node.dtype))
    return None if size is None else math.prod(shape) * size


def asserted_strides(output_code: str) -> dict[str, tuple[list[int], list[int]]]:
    """Graph input name -> (sizes, strides) the output code asserts for it (``assert_size_stride(expand_1, (2, 32),
    (0, 1), 'input')``, or one of torch 2.15's ``assert_size_stride_grouped``: :func:`asserted_layouts`), where both
    are concrete; symbolic ones are left out."""
    out: dict[str, tuple[list[int], list[int]]] = {}
    for line in (output_code or "").splitlines():
        for name, sizes, strides, _ in asserted_layouts(line):
            concrete = sizes is not None and strides is not None and len(sizes) == len(strides)
            if concrete and all(isinstance(d, int) for d in sizes + strides):
                out.setdefault(name, (sizes, strides))
    return out


#: A buffer the output code allocates, on a line of its own (stripped): ``buf40 = empty_strided_cpu((256, 64), (64,
#: 1), torch.float32)`` (AOTInductor and older wrappers: ``torch.empty_strided(..., dtype=torch.float32)``).
ALLOCATION = re.compile(
    r"^(?P<buf>\w+) = (?:torch\.)?empty_strided\w*\(\((?P<sizes>[^)]*)\), \((?P<strides>[^)]*)\), "
    r"(?:dtype=)?torch\.(?P<dtype>\w+)"
)


def int_list(text: str) -> Optional[list[int]]:
    """``"3, 4"`` -> ``[3, 4]``; None where a part is no integer (a symbolic size, ``s0``)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return [int(p) for p in parts] if all(p.lstrip("-").isdigit() for p in parts) else None


def allocation_bytes(output_code: str) -> dict[str, int]:
    """The bytes of each buffer the output code allocates at static sizes (:data:`ALLOCATION`: the storage it spans);
    a buffer of symbolic sizes is left out.

    >>> allocation_bytes("    buf0 = empty_strided_cpu((3, 4), (4, 1), torch.float32)\\n    buf1 = empty_strided_cuda((s0, 4), (4, 1), torch.float16)")
    {'buf0': 48}
    """
    out: dict[str, int] = {}
    for line in output_code.splitlines():
        m = ALLOCATION.match(line.strip())
        if m is None:
            continue
        sizes, strides, itemsize = int_list(m["sizes"]), int_list(m["strides"]), DTYPE_BYTES.get(m["dtype"])
        if sizes is not None and strides is not None and itemsize is not None and len(sizes) == len(strides):
            out[m["buf"]] = extent_bytes(sizes, strides, itemsize) if sizes else itemsize
    return out


def extent_bytes(sizes: list[int], strides: list[int], itemsize: int) -> int:
    """Bytes of the storage a strided tensor spans: (1 + sum((size - 1) * stride)) x itemsize, 0 when a size is 0.
    An expanded view (stride 0) spans its base only: ``(2, 32)`` at strides ``(0, 1)`` of int64 is 256 bytes, not
    512.

    >>> extent_bytes([2, 32], [0, 1], 8), extent_bytes([2, 32], [32, 1], 8), extent_bytes([0, 4], [4, 1], 4)
    (256, 512, 0)
    """
    if any(s == 0 for s in sizes):
        return 0
    return (1 + sum((n - 1) * abs(st) for n, st in zip(sizes, strides))) * itemsize


def _user_stack(node: Optional[GraphNode]) -> list[Frame]:
    return list(node.user_stack) if node is not None else []


def _fx_of(buffer: dict, order: dict[str, int]) -> str:
    """The post-grad node that computes a buffer: its ``origin`` if the capture had one, else the latest in graph
    order of its origins (the op a fused kernel stores)."""
    if buffer.get("origin"):
        return str(buffer["origin"])
    origins = [o for o in buffer.get("origins") or [] if o in order]
    return max(origins, key=order.__getitem__) if origins else ""


def allocated(output_code: str) -> Optional[set[str]]:
    """The buffers the output code allocates (``buf3 = empty_strided_cpu(...)``, ``empty_strided_cuda``...), or
    None when there is no output code."""
    if not output_code:
        return None
    return set(_ALLOC.findall(output_code))


_ALLOC = re.compile(r"^[ \t]*(\w+) = (?:torch\.)?empty(?:_strided)?\w*\(", re.M)


def reuses(output_code: str) -> dict[str, str]:
    """``{new: old}`` for each buffer the output code writes into the storage of a dead one
    (``buf2 = buf1; del buf1  # reuse``, also through ``reinterpret_tensor(buf1, ...)``)."""
    return {m.group(1): m.group(2) for m in _REUSE.finditer(output_code or "")}


def storage_root(name: str, aliases: dict[str, str]) -> str:
    """The buffer (or graph input) whose storage ``name`` is, following the chain of ``aliases`` (new -> old,
    from :func:`reuses`)."""
    seen = set()
    while name in aliases and name not in seen:
        seen.add(name)
        name = aliases[name]
    return name


_REUSE = re.compile(r"^[ \t]*(\w+) = (?:reinterpret_tensor\()?(\w+)\b[^\n]*; del \2[ \t]*# reuse", re.M)
_ALIAS = re.compile(r"^[ \t]*(\w+) = reinterpret_tensor\((\w+)\b[^\n]*#[ \t]*alias[ \t]*$", re.M)


def views(output_code: str) -> dict[str, str]:
    """``{view: base}`` for each buffer the output code makes as a view of another buffer's storage
    (``buf0 = reinterpret_tensor(buf2, (1024, 256), (512, 1), 0)  # alias``: the kernels of a ``cat``'s inputs write
    into the slices of the cat's buffer): it has no storage of its own."""
    return {m.group(1): m.group(2) for m in _ALIAS.finditer(output_code or "")}


def renames(output_code: str) -> dict[str, str]:
    """``{new: old}`` for each buffer the output code names anew by a plain assignment (``buf2 = buf1``: a fallback
    op's result, ``buf1 = torch.ops.nu17.scaled_tanh.default(...)``, taken by its ``MultiOutput``), then ``del``s
    under its old name: the same tensor, which the call that writes it calls by the old name."""
    return {m.group(1): m.group(2) for m in _RENAME.finditer(output_code or "")}


_RENAME = re.compile(r"^[ \t]*(\w+) = (\w+)[ \t]*$", re.M)


def _storages(
    buffers: list[dict], aliases: dict[str, str], made: Optional[set[str]] = None, views: Optional[dict] = None
) -> list[dict]:
    """The buffers with each chain of reuses (``aliases``: new -> old) merged into one storage: the root's name,
    the largest size of the chain, live from the first writer to the last reader of any of them. A buffer
    written into a graph input's storage costs nothing here (the input is in ``input_bytes``); one made and read
    inside one kernel (``internal``) costs nothing unless the output code allocates it (``made``). A view of another
    buffer (``views``: view -> base, :func:`views`) is part of that storage too, live from its own writer on: the
    storage holds the base and its views at once (its ``members`` are the buffers it holds in turn)."""
    views = views or {}
    aliases = {**aliases, **views}

    def costs(b: dict) -> bool:  # a kernel-internal buffer costs only if the output code allocates it
        return not b.get("internal") or (made is not None and (b["name"] in made or b["name"] in aliases))

    buffers = [b if costs(b) else dict(b, bytes=0) for b in buffers]
    by_name = {b["name"]: b for b in buffers}

    def root(name: str) -> str:
        return storage_root(name, aliases)

    merged: dict[str, dict] = {}
    out: list[dict] = []
    for b in buffers:  # the storages first: a view (a cat's slice) is written before the buffer it is a view of
        if root(b["name"]) == b["name"] and b["name"] not in merged:
            merged[b["name"]] = dict(b, users=list(b.get("users") or []), members=[b], writers=[b.get("node", "")])
    for b in buffers:
        r = root(b["name"])
        if r not in by_name:  # written into a graph input's storage (counted in input_bytes)
            out.append(dict(b, bytes=0))
            continue
        base = merged[r]
        if base["members"][0] is b:
            out.append(base)
            continue
        if b["name"] not in views:  # the buffers the storage holds in turn (the peak table names the one it holds)
            base["members"].append(b)
        base["writers"].append(b.get("node", ""))
        base["bytes"] = max(int(base.get("bytes") or 0), int(b.get("bytes") or 0))
        base["users"] += [u for u in [b["node"], *(b.get("users") or [])] if u not in base["users"]]
        base["is_output"] = bool(base.get("is_output")) or bool(b.get("is_output"))
    return out


def box_of(fused: Sequence[FusedNode]) -> dict[str, str]:
    """The box each fused node is drawn in, by name: itself, or for glue (``FusedNode.is_glue``: a ``getitem`` of a
    multi-output call, a nop, a view) the box whose result it unpacks: the box that writes the first buffer it reads
    that a box (or glue homed in one) writes, else the box before it, else the box after it. An attention call's
    outputs are made by the call, not by the ``getitem`` nodes that unpack them after it: the memory timeline has
    one point per box, and what its glue allocates and frees is the box's."""
    writer = {b: n.name for n in fused for b in n.writes}
    home: dict[str, str] = {}
    pending: list[str] = []
    before = None
    for n in fused:
        if not n.is_glue:
            home[n.name] = before = n.name
            home.update((p, n.name) for p in pending)
            pending = []
            continue
        w = next((home[writer[r]] for r in n.reads if writer.get(r) in home), before)
        if w is None:
            pending.append(n.name)
        else:
            home[n.name] = w
    home.update((p, p) for p in pending)  # a graph of glue alone: each is its own point
    return home


def launches(compile: Compile) -> list[list[str]]:
    """The kernel calls of ``compile`` that compute several fused nodes (``Kernel.call_sites``: a C++ kernel group
    holds every node Inductor wrote before the next extern call, a Triton kernel a few), each its nodes' names."""
    return [list(site) for k in compile.kernels for site in k.call_sites if len(site) > 1]


def _spans(n: int, step: dict[str, int], sites: Sequence[Sequence[str]]) -> tuple[list[int], list[int]]:
    """``(first, last)``: for each point of a timeline of ``n`` points, the first and last point of the kernel call
    it is part of (``sites``: the fused nodes of each call, :func:`launches`), else itself."""
    first, last = list(range(n)), list(range(n))
    for site in sites:
        at = [step[f] for f in site if f in step]
        if not at:
            continue
        a, b = min(at), max(at)
        for i in range(a, b + 1):
            first[i], last[i] = min(first[i], a), max(last[i], b)
    return first, last


def timeline(
    order: list[str],
    buffers: list[dict],
    fx: Optional[dict[str, GraphNode]] = None,
    top: Optional[int] = 20,
    aliases: Optional[dict[str, str]] = None,
    made: Optional[set[str]] = None,
    home: Optional[dict[str, str]] = None,
    views: Optional[dict[str, str]] = None,
    sites: Sequence[Sequence[str]] = (),
    named: Optional[dict[str, str]] = None,
) -> tuple[list[MemoryPoint], int, str, list[LiveBuffer]]:
    """``(points, peak_bytes, peak_node, peak_buffers)`` for fused nodes run in ``order``.

    ``buffers``: ``{name, node, bytes, users, is_output}`` each (``node`` writes it, ``users`` read it): it is
    live from its node to its last user (the end of the graph if ``is_output``); ``bytes`` None counts 0. The
    point of a node is what is live once it has run, before the frees after it; ``peak_node`` is the first node
    of the maximum; ``peak_buffers`` the ``top`` largest buffers live there (all of them for ``top=None``). ``aliases`` (``{new: old}``, from
    :func:`reuses`): a buffer written into a dead one's storage is that storage, counted once. ``home`` (from
    :func:`box_of`): a node not in ``order`` writes and reads at its home's point. ``views`` (``{view: base}``, from
    :func:`views`): a view of a buffer's storage (a slice of a ``cat``) costs nothing of its own; the storage is
    live from the first writer of it or its views. ``sites`` (from :func:`launches`): the fused nodes of each kernel
    call that computes several; the output code allocates every buffer such a call takes before it and frees none
    until it returns: a buffer its nodes write is live from its first node on, one they read until its last node.
    (A C++ kernel group of 150 nodes: its 151 buffers all live at its call, where the nodes' own lifetimes freed
    them between nodes that run inside the one call.)

    A point names what it allocates and frees as the output code does there: a storage by the name it is allocated
    under (the call that writes it: ``named``, ``{new: old}`` from :func:`renames`, ``buf2 = buf1`` allocated as
    ``buf1``), freed by the name it has then (the buffer it holds at that point, written into it by a ``# reuse``:
    ``buf3 = buf2; del buf2  # reuse`` ... ``del buf3`` frees ``buf3``)."""
    fx = fx or {}
    named = named or {}
    step = {name: i for i, name in enumerate(order)}
    step.update((name, step[h]) for name, h in (home or {}).items() if h in step and name not in step)
    graph_order = {name: i for i, name in enumerate(fx)}
    n = len(order)
    first, last = _spans(n, step, sites)
    delta = [0] * (n + 1)
    allocs: list[list[BufferBytes]] = [[] for _ in range(n)]
    frees: list[list[BufferBytes]] = [[] for _ in range(n)]
    spans = []
    for b in _storages(buffers, aliases or {}, made, views):
        size = int(b.get("bytes") or 0)
        starts = [step[w] for w in b.get("writers") or [b.get("node", "")] if w in step]
        # from its first writer (a cat's slices are written before it), or the first node of that writer's call
        start = min(first[s] for s in starts) if starts else None
        if start is None or size <= 0:
            continue
        # to its last reader, or the last node of that reader's call (of its writer's, where nothing reads it after)
        ends = [last[step[u]] for u in b.get("users") or [] if u in step] + [last[s] for s in starts]
        end = n - 1 if b.get("is_output") else max([start, *ends])
        delta[start] += size
        delta[end + 1] -= size
        allocs[start].append(BufferBytes(storage_root(b["name"], named), size))
        if not b.get("is_output"):
            frees[end].append(BufferBytes(_held_at(b, end, step, min(starts), first)[0]["name"], size))
        spans.append((start, end, size, b, min(starts)))
    points, live = [], 0
    for i, name in enumerate(order):
        live += delta[i]
        points.append(
            MemoryPoint(
                node=name,
                live_bytes=live,
                allocates=sorted(allocs[i], key=lambda x: (-x.bytes, x.name)),
                frees=sorted(frees[i], key=lambda x: (-x.bytes, x.name)),
            )
        )
    if not points:
        return [], 0, "", []
    peak = max(p.live_bytes for p in points)
    at = next(i for i, p in enumerate(points) if p.live_bytes == peak)
    alive = sorted((s for s in spans if s[0] <= at <= s[1]), key=lambda s: (-s[2], s[3]["name"]))[:top]
    peak_buffers = []
    for _, _, size, b, written in alive:
        held, start = _held_at(b, at, step, written, first)
        fx_node = _fx_of(held, graph_order)
        peak_buffers.append(
            LiveBuffer(
                name=held["name"],
                bytes=size,
                node=order[start],  # a glue node's buffer is its box's
                fx_node=fx_node,
                user_stack=_user_stack(fx.get(fx_node)),
            )
        )
    return points, peak, order[at], peak_buffers


def uncounted_at(
    order: list[str], buffers: list[dict], home: Optional[dict[str, str]] = None, sites: Sequence[Sequence[str]] = ()
) -> list[str]:
    """The points of ``order`` (as :func:`timeline`'s) while a buffer of a size the capture could not know
    (``bytes`` None: data-dependent, ``u0``) is live, from its writer (its call's first node) to its last reader (its
    call's last node; the end of the graph if returned), as :func:`timeline` would count it: their live bytes leave it
    out, a lower bound (``Memory.uncounted_at``).

    >>> bufs = [{"name": "buf0", "node": "op0", "bytes": 8, "users": ["op1"]}, {"name": "buf1", "node": "op1", "bytes": None, "users": ["op2"]}]
    >>> uncounted_at(["op0", "op1", "op2", "op3"], bufs)
    ['op1', 'op2']
    """
    step = {name: i for i, name in enumerate(order)}
    step.update((name, step[h]) for name, h in (home or {}).items() if h in step and name not in step)
    n = len(order)
    first, last = _spans(n, step, sites)
    live = [False] * n
    for b in buffers:
        if b.get("bytes") is not None or b.get("internal"):
            continue
        starts = [step[w] for w in b.get("writers") or [b.get("node", "")] if w in step]
        if not starts:
            continue
        start = min(first[s] for s in starts)
        ends = [last[step[u]] for u in b.get("users") or [] if u in step] + [last[s] for s in starts]
        end = n - 1 if b.get("is_output") else max([start, *ends])
        for i in range(start, end + 1):
            live[i] = True
    return [name for name, on in zip(order, live) if on]


def _held_at(
    storage: dict, at: int, step: dict[str, int], start: int, first: Optional[list[int]] = None
) -> tuple[dict, int]:
    """``(buffer, its writer's step)``: what a storage holds at step ``at``, the last of the buffers written into it
    in turn (``# reuse``: buf5, then buf6, buf13... ``_storages``' ``members``) whose writer ran by then (whose kernel
    call had begun: ``first``, from :func:`_spans`): the peak table names the tensor alive there, not the first that
    storage held (a checkpointed layer's, long dead). ``start``: the step of the storage's first writer."""
    held = (storage, start)
    for m in storage.get("members") or []:
        s = step.get(m.get("node", ""))
        if s is not None and (first[s] if first is not None else s) <= at and s >= held[1]:
            held = (m, s)
    return held


def _base(node: GraphNode, fx: dict[str, GraphNode]) -> GraphNode:
    """The node whose storage a chain of views ends in."""
    seen = set()
    while node.op == "call_function" and op_name(node.target) in VIEW_OPS and node.inputs and node.name not in seen:
        seen.add(node.name)
        parent = fx.get(node.inputs[0])
        if parent is None:
            break
        node = parent
    return node


def saved_for_backward(forward: Compile, backward: Compile) -> list[SavedTensor]:
    """The tensors ``backward`` takes from ``forward``: its post-grad graph's inputs other than tangents (and
    other than sizes: a saved SymInt is no tensor), in its order, each joined by name with the forward's node
    that produced it. A forward placeholder, or a view of one, is an ``input``, unless the forward's output code
    returns a buffer it allocated in its place (a ``copy``: Inductor laid the input out anew, a convolution's
    weight in channels-last on a CPU); anything else an ``activation``."""
    bwd = backward.graphs.get("post_grad")
    fwd = forward.graphs.get("post_grad")
    if bwd is None:
        return []
    fx = {n.name: n for n in fwd.nodes} if fwd is not None else {}
    copies = _copied_inputs(forward, bwd)
    states = rng_states(fwd.nodes, bwd.nodes) if fwd is not None else {}  # checkpoint's saved RNG states
    asserted = asserted_strides(str(backward.output_code or ""))
    stores = saved_storages(forward, bwd)
    seen: dict[str, str] = {}  # a storage -> the first saved tensor that holds it
    out = []
    # a repeated region's backward (``partitioned_bw_subgraph_0_0``) names what it takes with its own prefix: its
    # placeholder's target is the forward region's node (``rsqrt``), or its placeholder (``primals_0``, prefixed there)
    region = f"{forward.subgraph}_" if forward.subgraph and backward.subgraph else ""
    for p in bwd.nodes:
        tangent = p.name.startswith("tangents_") or (region and str(p.target).startswith("tangents_"))
        if p.op != "placeholder" or p.role == "tangent" or tangent:
            continue
        size = tensor_bytes(p)
        if p.shape is None or p.dtype is None:
            continue  # a saved size (SymInt) or an RNG seed that is no tensor
        sizes, stride = asserted.get(p.name, (None, None))
        itemsize = DTYPE_BYTES.get(str(p.dtype))
        if stride is not None and itemsize is not None and size is not None and math.prod(sizes) * itemsize == size:
            size = extent_bytes(sizes, stride, itemsize)  # the storage it spans: an expanded view counts its base
        else:
            stride = None
        made = states.get(p.name) or fx.get(p.name)
        if made is None and region:
            made = fx.get(str(p.target)) or fx.get(region + str(p.target))
        base = _base(made, fx) if made is not None else None
        is_input = base is not None and base.op == "placeholder" or (made is None and p.name.startswith("primals_"))
        display = ""
        if is_input:
            owner = base if base is not None else None
            module = owner_module(owner.display_name) if owner is not None else ""
            display = (owner.display_name if owner is not None else "") or p.display_name or ""
        view_op, copy_of, cast_dtype = "", "", ""
        if not is_input and made is not None and base is not made and base.op == "call_function":
            # a view of another op's output (GPT-2's transposed GELU output, which c_proj's weight gradient takes):
            # its bytes are the storage that op made; the row names that op, and the view the backward takes
            view_op = made.original_op if op_name(made.original_op) in VIEW_OPS else made.short_op  # t, not permute
            view_op = view_op or op_name(made.target)
            made = base
            copy_of, cast_dtype = _cast_input(made, fx)
        if not is_input:
            module = made.module_stack[-1] if made is not None and made.module_stack else ""
        storage = stores.get(p.name, "")
        first = seen.setdefault(storage, p.name) if storage else p.name
        shares = first if first != p.name else ""
        what = saved_what(made, fx) if view_op and made is not None else ""
        shape, hint = list(p.shape), list(p.shape_hint) if p.shape_hint and p.shape_hint != p.shape else None
        stack, note = _user_stack(made), saved_note(view_op, module, what, storage, shares, copy_of, cast_dtype)
        if p.name in states and made is not None:
            # an RNG state: named by the op that ran on it, and at the length the forward knew it by (the backward's
            # graph gives it a symbol of its own, ``s12``, which is no size of the model)
            hop = fx.get(made.inputs[0]) if made.inputs and made.inputs[0] in fx else made
            module = module or _reader_module(hop, fx)
            stack = stack or _user_stack(hop)
            shape, hint = (made.shape, None) if _static(made.shape) else (hint or shape, None)
            note = "; ".join(filter(None, [rng_state_note(hop.short_op or op_name(hop.target)), note]))
        out.append(
            SavedTensor(
                name=p.name,
                shape=shape,  # the graph's, symbolic where dynamic; bytes at the sizes seen at capture
                shape_hint=hint,
                dtype=p.dtype,
                bytes=size,
                kind=("copy" if p.name in copies else "input") if is_input else "activation",
                fx_node=made.name if made is not None else "",
                user_stack=stack,
                module=module,
                display=display if display != p.name else "",
                stride=stride,
                storage=storage,
                shares=shares,
                view_op=view_op,
                note=note,
            )
        )
    # a storage two saved tensors share is held whole, whatever part of it each views (q, k and v of one projection's
    # buffer are three thirds of it): its first row carries the storage's bytes, as the forward allocated it
    allocated_bytes = allocation_bytes(str(forward.output_code or ""))
    shared = {s.shares for s in out if s.shares}
    return [
        dataclasses.replace(s, storage_bytes=allocated_bytes.get(s.storage))
        if s.name in shared and s.storage in allocated_bytes
        else s
        for s in out
    ]


def _static(shape) -> bool:
    return isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in shape)


def _reader_module(node: GraphNode, fx: dict[str, GraphNode]) -> str:
    """The innermost module of the first node that reads ``node`` and has one (an RNG-state op has no module of its
    own: torch makes it after the module stacks are set; the results it unpacks keep theirs)."""
    for g in fx.values():
        if node.name in g.inputs and g.module_stack:
            return g.module_stack[-1]
    return ""


def saved_storages(forward: Compile, backward_post) -> dict[str, str]:
    """Each tensor the backward takes from the forward (by name) -> the storage the forward's output code hands it
    over in: the buffer of its ``return`` item (``reinterpret_tensor(buf40, ...)`` is ``buf40``: :func:`saved_returns`)
    followed through the code's reuses and aliases (:func:`storage_root`), or the graph input it is; two saved
    tensors of one storage (a tensor and a view of it) are held once. Empty where the pairing is not known."""
    code = str(forward.output_code or "")
    aliases = {**reuses(code), **views(code)}
    return {g.name: storage_root(item, aliases) for g, item in saved_returns(forward, backward_post)}


#: Ops that copy their input into another dtype (``torch.autocast``'s cast of a weight: ``_to_copy``, which the
#: post-grad graph holds as ``prims.convert_element_type``).
_CASTS = {"convert_element_type", "_to_copy"}


def _cast_input(node: GraphNode, fx: dict[str, GraphNode]) -> tuple[str, str]:
    """``(input, dtype)`` where ``node`` is a cast of a graph input (through views), the input as the user names it
    (``model.fc.weight``) and the dtype it is cast to (``bfloat16``); ``("", "")`` otherwise."""
    if op_name(node.target) not in _CASTS or not node.inputs or node.inputs[0] not in fx:
        return "", ""
    src = _base(fx[node.inputs[0]], fx)
    if src.op != "placeholder":
        return "", ""
    return src.display_name or src.name, str(node.dtype or "")


def saved_what(node: GraphNode, fx: dict[str, GraphNode]) -> str:
    """The op a saved activation's row names (``SavedGroup.what``): the op it was decomposed from where there is one
    (``gelu``), else its short name; which of its results where it has several (``native_layer_norm: mean``), or
    the part a ``select``/``slice`` on the way took."""
    what = node.original_op or node.short_op or op_name(node.target)
    call = fx.get(node.inputs[0]) if node.inputs and what == "getitem" and node.output else None
    if call is not None and call.op == "call_function":  # a named result of a call (an RNG state): the call's op
        what = call.original_op or call.short_op or op_name(call.target)
    what = with_part(what, node.output)
    origin, part = saved_origin(node.name, fx) if not node.output else (None, "")
    if part and origin is not None and origin.op == "call_function":  # a view of a part: qkv[:, :, :16]
        what = with_part(origin.original_op or origin.short_op, part)
    return what


def recomputed(forward: Compile, backward: Compile, on: str = "backward") -> list[Recomputed]:
    """Ops of the forward that the backward graph computes again: the partitioner copies them from the joint
    graph under their forward names, so a backward call whose name and target match a forward call is one; and a
    random op of a checkpointed region, which the forward ran under ``run_and_save_rng_state`` and the backward runs
    again under ``run_with_rng_state`` on the state it saved (:func:`rng_pairs`: another name, another target).
    ``Recomputed.fx_node`` names the op in the graph of ``on`` (``"forward"`` or ``"backward"``)."""
    bwd = backward.graphs.get("post_grad")
    fwd = forward.graphs.get("post_grad")
    if bwd is None or fwd is None:
        return []
    made = {n.name: n for n in fwd.nodes if n.op == "call_function"}
    again = rng_pairs(fwd.nodes, bwd.nodes)
    # the ops a checkpoint's policy marks (FX meta ``recompute``) that read a node: an RNG-state op has none of its
    # own (torch makes it after the policy is read), its results (``getitem``) do
    marked = {i for g in fwd.nodes if g.recompute for i in g.inputs}
    calls = checkpoint_calls(forward)
    out = []
    for n in bwd.nodes:
        f = made.get(n.name)
        if f is None or f.target != n.target:
            f = again.get(n.name)
        if n.op == "call_function" and f is not None and not _free(n):
            stack = list(n.user_stack or f.user_stack)
            by = "checkpoint" if n.recompute or f.recompute or f.name in marked else "partitioner"
            call = region_call(stack, calls) if by == "checkpoint" else None
            name = f.name if on == "forward" else n.name
            out.append(Recomputed(fx_node=name, user_stack=stack, by=by, checkpoint=call))
    return out


#: The higher-order ops that run one op on a saved RNG state (``GraphNode.wraps`` names that op): the forward of a
#: checkpointed region runs its random ops (SDPA, dropout) under ``run_and_save_rng_state``, which returns the state it
#: ran on, and the backward runs them again under ``run_with_rng_state`` on that state
#: (``graphsafe_run_with_rng_state`` on a GPU, in both graphs).
RNG_SAVE = frozenset({"run_and_save_rng_state", "graphsafe_run_with_rng_state"})
RNG_RUN = frozenset({"run_with_rng_state", "graphsafe_run_with_rng_state"})


def _rng_state_inputs(node: GraphNode) -> list[str]:
    """The inputs of an RNG-state op that are RNG states: ``run_with_rng_state``'s first; the ``rng_state=`` of a
    ``graphsafe_run_with_rng_state`` (``fwd_rng_state_0``)."""
    first = node.inputs[:1] if op_name(node.target) == "run_with_rng_state" else []
    return first + [i for i in node.inputs if "rng_state" in i and i not in first]


def rng_pairs(forward: Sequence[GraphNode], backward: Sequence[GraphNode]) -> dict[str, GraphNode]:
    """Each backward node that runs a forward's random op again on the RNG state the forward saved (:data:`RNG_RUN`)
    -> the forward node that ran it (:data:`RNG_SAVE`): the same op (``wraps``) on the same inputs but the states,
    which the partitioner copies under their forward names; in graph order where several match."""
    calls = lambda nodes, ops: [n for n in nodes if n.op == "call_function" and op_name(n.target) in ops]  # noqa: E731

    def key(n: GraphNode) -> tuple:
        states = _rng_state_inputs(n)
        return (n.wraps, tuple(i for i in n.inputs if i not in states))

    ran: dict[tuple, list[GraphNode]] = {}
    for f in calls(forward, RNG_SAVE):
        ran.setdefault(key(f), []).append(f)
    out = {}
    for n in calls(backward, RNG_RUN):
        same = ran.get(key(n))
        if same:
            out[n.name] = same.pop(0)
    return out


def _rng_state_names(fx: dict[str, GraphNode]) -> set[str]:
    """The nodes of a graph (by name) that are RNG states an RNG-state op runs on (:func:`_rng_state_inputs`)."""
    ops = RNG_SAVE | RNG_RUN
    return {
        i for n in fx.values() if n.op == "call_function" and op_name(n.target) in ops for i in _rng_state_inputs(n)
    }


def rng_states(forward: Sequence[GraphNode], backward: Sequence[GraphNode]) -> dict[str, GraphNode]:
    """Each backward input that is an RNG state the forward saved -> the forward's node of it: the ``RNG state``
    result (``GraphNode.output``) of the forward's ``run_and_save_rng_state`` that the backward's op runs again on it
    (:func:`rng_pairs`), else that forward op itself."""
    pairs = rng_pairs(forward, backward)
    by_name = {n.name: n for n in backward}
    out = {}
    for name, f in pairs.items():
        state = next((g for g in forward if g.inputs == [f.name] and g.output == "RNG state"), f)
        for i in _rng_state_inputs(by_name[name]):
            out[i] = state
    return out


def checkpoint_calls(forward: Compile) -> list[list[Frame]]:
    """The user stacks of the ``torch.utils.checkpoint`` calls dynamo traced in ``forward`` (its graph's
    ``tag_activation_checkpoint`` nodes), in graph order."""
    dynamo = forward.graphs.get("dynamo")
    nodes = dynamo.nodes if dynamo is not None else []
    return [list(n.user_stack) for n in nodes if n.target.endswith("tag_activation_checkpoint") and n.user_stack]


def region_call(stack: list[Frame], calls: list[list[Frame]]) -> Optional[Frame]:
    """The frame of the ``checkpoint(...)`` call whose region an op with user stack ``stack`` is in: the innermost
    frame of the call whose stack is the longest one ``stack`` starts with (dynamo traces the region's function from
    the call, so an op's stack continues its call's, or is the same where the function is torch's own, an
    ``nn.Sequential`` of torch's layers); None where no call's stack is one."""
    key = [(f.file, f.line, f.function) for f in stack]
    best: Optional[list[Frame]] = None
    for call in calls:
        if len(call) <= len(key) and key[: len(call)] == [(f.file, f.line, f.function) for f in call]:
            if best is None or len(call) > len(best):
                best = call
    return best[-1] if best else None


def _free(node: GraphNode) -> bool:
    """A view or a ``getitem``: recomputing it costs nothing."""
    return op_name(node.target) in VIEW_OPS or op_name(node.target) == "getitem"


def _user_line(stack: list[Frame]) -> Optional[Frame]:
    return user_line(stack)


def rollups(
    saved: list[SavedTensor], fx: Optional[dict[str, GraphNode]] = None, built: Optional[dict[str, BuiltLine]] = None
) -> tuple[list[BytesBy], list[BytesBy]]:
    """The saved activations' bytes by user line (the innermost user frame, else the line that built the module of
    the op that made it: ``report/lines.py``) and by nn.Module, largest first."""
    by_module: dict[str, list] = defaultdict(lambda: [0, 0, 0])
    for s, size in zip(saved, counted_bytes(saved)):
        if s.kind not in HELD_KINDS or size == 0:
            continue
        row = by_module[s.module or NO_MODULE]
        row[0] += size or 0
        row[1] += 1
        row[2] += size is None  # of a size known only when the graph runs: in the row, not in its bytes
    modules = [BytesBy(bytes=b, module=m, count=n, uncounted=u) for m, (b, n, u) in by_module.items()]
    return saved_by_line(saved, fx or {}, built or {}), sorted(modules, key=lambda x: (-x.bytes, x.module))


NO_MODULE = "(no module)"


def repeat_instances(compile: Compile) -> dict[str, ModuleRepeat]:
    """Each instance of the compile's repeated modules (``layers.5``) -> its repeat (``Compile.module_view``),
    the outermost repeat where they nest."""
    out: dict[str, ModuleRepeat] = {}
    for r in compile.module_view.repeats if compile.module_view is not None else []:
        for m in r.modules:
            out.setdefault(m, r)
    return out


def _fold_label(folded: str, heads: set[str], modules: set[str], instances: dict[str, ModuleRepeat]) -> str:
    """The name of a row that folds the instances ``heads`` of a repeated module (``folded``: its label and the
    path below it, ``blocks.0-2.fc2``), ``modules`` the paths of its items: the one module where they are one
    (``blocks.2.fc2``), else the instances the row holds (``blocks.0-1.fc2`` where only two of three have it)."""
    if len(modules) == 1:
        return next(iter(modules))
    r = instances.get(next(iter(heads))) if heads and "" not in heads else None
    if r is None:
        return folded
    return some_instances_label(r, sorted(heads)) + folded[len(r.label) :]


def fold_module(module: str, instances: dict[str, ModuleRepeat]) -> tuple[str, str]:
    """``(folded, instance)``: ``layers.5.mlp.gate`` -> ``("layers.1-31.mlp.gate", "layers.5")`` where
    ``layers.5`` is an instance of the repeated module ``layers.1-31`` (the outermost one), else
    ``(module, "")``."""
    parts = module.split(".") if module else []
    for i in range(1, len(parts) + 1):
        head = ".".join(parts[:i])
        r = instances.get(head)
        if r is not None:
            return r.label + module[len(head) :], head
    return module, ""


def fold_rollup(items: Iterable[tuple[str, int]], instances: dict[str, ModuleRepeat]) -> list[BytesBy]:
    """``(module, bytes)`` pairs rolled up by module with the instances of repeated modules folded
    (:func:`fold_module`): bytes, how many items (``count``) and how many instances (``instances``, 1 for a
    module that is no repeat's) each row holds, largest first; an item of bytes None (a size known only when the
    graph runs) is in its row's ``count`` and ``uncounted``, not in its bytes. A row is named by the instances it
    holds (:func:`_fold_label`: ``blocks.0.norm1``, not ``blocks.0-1.norm1``: the range would say it is both)."""
    rows: dict[str, list] = {}
    for module, size in items:
        key, inst = fold_module(module, instances)
        row = rows.setdefault(key or NO_MODULE, [0, 0, set(), set(), 0])
        row[0] += size or 0
        row[1] += 1
        row[2].add(inst)
        row[3].add(module)
        row[4] += size is None
    out = [
        BytesBy(bytes=b, module=m if m == NO_MODULE else _fold_label(m, insts, mods, instances), count=n,
                instances=len(insts), uncounted=u)
        for m, (b, n, insts, mods, u) in rows.items()
    ]  # fmt: skip
    return sorted(out, key=lambda x: (-x.bytes, x.module))


def saved_groups(
    saved: list[SavedTensor], fx: dict[str, GraphNode], instances: dict[str, ModuleRepeat]
) -> list[SavedGroup]:
    """``saved`` said once per repeated thing (``SavedGroup``): tensors of one kind, op, shape, dtype and user
    line in one module, the instances of repeated modules folded. Activations first, then the largest total,
    then the first saved. Empty where no two tensors fold together (the plain list says it all)."""
    groups: dict[tuple, list[SavedTensor]] = {}
    heads: dict[tuple, set[str]] = {}
    for s in saved:
        module, head = fold_module(s.module, instances)
        node = fx.get(s.fx_node)
        if s.kind in ("input", "copy"):
            base = _base(node, fx) if node is not None else None
            what = (base.display_name or base.name).rsplit(".", 1)[-1] if base is not None else s.name
        else:  # the op, and which of its results where it has several (GraphNode.output): native_layer_norm: mean
            what = saved_what(node, fx) if node is not None else ""
            view = fx.get(s.name) if s.view_op else None
            part = saved_what(view, fx) if view is not None else ""
            if s.view_op and "[" in part:  # a part of that op's output (q, k, v of one projection): addmm[0]
                what = part
            elif s.view_op:  # a view of that op's output, as the backward takes it: gelu (t view)
                what = f"{what} ({s.view_op} view)"
        f = _user_line(s.user_stack)
        key = (s.kind, module, what, repr(s.shape), s.dtype, (f.file, f.line) if f is not None else None)
        groups.setdefault(key, []).append(s)
        heads.setdefault(key, set()).add(head)
    if all(len(g) == 1 for g in groups.values()):
        return []
    counted = dict(zip((id(s) for s in saved), counted_bytes(saved)))
    out = []
    for key, members in groups.items():
        kind, module, what, _, dtype, _ = key
        first = members[0]
        out.append(
            SavedGroup(
                module=_fold_label(module, heads[key], {m.module for m in members}, instances) if module else module,
                what=what,
                kind=kind,
                count=len(members),
                # of a size known only when the graph runs (u0): not known, not 0 B (nu29 D1)
                bytes=None if any(m.bytes is None for m in members) else sum(counted[id(m)] or 0 for m in members),
                each=first.bytes,
                shape=first.shape,
                shape_hint=first.shape_hint,
                dtype=dtype,
                names=[m.name for m in members],
                fx_node=first.fx_node,
                user_stack=list(first.user_stack),
                shared=sum(1 for m in members if m.shares),
            )
        )
    order = {id(g): i for i, g in enumerate(out)}
    return sorted(out, key=lambda g: (g.kind not in HELD_KINDS, g.bytes is None, -(g.bytes or 0), order[id(g)]))


def regions(fused: Sequence[FusedNode], instances: dict[str, ModuleRepeat]) -> list[MemoryRegion]:
    """The timeline (one point per fused node of ``fused``) cut into runs of one module at the level of the
    repeated modules (``MemoryRegion``): a node in an instance of a repeat (``layers.5``, by its ``group_path``
    or its module stack) is that instance's; another, the module of its stack at the instances' depth (the
    deepest it has above that: ``head``), else ``""``. A run of ``""`` between two runs of one module is
    theirs (a reshape between two ops of a layer); a module of several runs is labelled under its longest only (its
    number once under the axis). Without repeats, the top-level modules, each labelled by
    its whole name (``blocks.0``: no repeat's name under the axis says what a bare ``0`` is)."""
    depth = 0
    for n in fused:
        inst = next((m for m in n.module_stack if m in instances), None)
        if inst is not None:
            depth = n.module_stack.index(inst)
            break
    keys = []
    for n in fused:
        inst = next((m for m in [*n.group_path, *n.module_stack] if m in instances), None)
        if inst is None:
            st = n.module_stack
            inst = st[min(depth, len(st) - 1)] if st else ""
        keys.append(inst)
    runs: list[list] = []  # [key, first, last]
    for i, k in enumerate(keys):
        if runs and runs[-1][0] == k:
            runs[-1][2] = i
        else:
            runs.append([k, i, i])
    merged: list[list] = []
    for j, run in enumerate(runs):
        if run[0] == "" and merged and j + 1 < len(runs) and runs[j + 1][0] == merged[-1][0]:
            merged[-1][2] = run[2]  # a gap of the top level's own ops inside one module
            continue
        if merged and merged[-1][0] == run[0]:
            merged[-1][2] = run[2]
            continue
        merged.append(list(run))
    # a module in several runs is labelled once, under its longest (the first of the longest): Llama's layer 0 around
    # the rotary embedding; a checkpointed backward's last layer, whose recompute and the final norm's backward
    # interleave (layers.3 0-1, lnf 2, layers.3 3-7, lnf 8-9, layers.3 10-30), named "3" under its main run
    longest: dict[str, int] = {}
    for j, (key, first, last) in enumerate(merged):
        if key and (key not in longest or last - first > merged[longest[key]][2] - merged[longest[key]][1]):
            longest[key] = j
    out: list[MemoryRegion] = []
    for j, (key, first, last) in enumerate(merged):
        r = instances.get(key)
        again = bool(key) and longest[key] != j
        # an instance of a repeat, its number beside the repeat's name under the axis (``layers.1-3``); any other
        # module, its whole name: a bare "0 | 1" under a ViT's blocks, or under a ResNet's layer2-4 (whose blocks
        # differ: no repeat, no name under the axis), said nothing of what they are
        label = "" if again else key.rsplit(".", 1)[-1] if r is not None else key
        out.append(MemoryRegion(module=key, label=label, first=first, last=last, repeat=r.label if r else ""))
    return out


def freed_inputs(compile: Compile, forward: Optional[Compile] = None) -> list[int]:
    """Bytes of the graph's inputs freed after each fused node (``Compile.fused_nodes`` order), as measured on the
    H200 with torch's allocator history (``benchmarks/memory_history.py``), those of a size known only when the graph
    runs (``u0``) left out (:func:`freed_unsized` names them): see :func:`_frees`."""
    out = [0] * len(compile.fused_nodes)
    for i, g in _frees(compile, forward):
        out[i] += tensor_bytes(g) or 0
    return out


def freed_unsized(compile: Compile, forward: Optional[Compile] = None) -> list[tuple[int, str]]:
    """``(fused node index, name)`` of each of the graph's tensor inputs of a size known only when the graph runs
    (``tensor_bytes`` None: a backward's saved ``[u0, 64]``) that it frees, as :func:`_frees` finds them, in the
    order freed: the bytes :func:`freed_inputs` could not count (``Memory.freed_uncounted``)."""
    out = [(i, g.name) for i, g in _frees(compile, forward) if _is_tensor(g) and tensor_bytes(g) is None]
    return sorted(out, key=lambda x: x[0])


def _frees(compile: Compile, forward: Optional[Compile] = None) -> list[tuple[int, GraphNode]]:
    """``(fused node index, input)``: the graph's inputs it frees, each after that fused node (``Compile.fused_nodes``
    order), as measured on the H200 with torch's allocator history (``benchmarks/memory_history.py``):

    - a saved tensor of a backward (``GraphNode.role``; AOTAutograd releases the saved tensors before the call)
      that the output code ``del``s is freed after the last fused node that reads it (one nothing reads, after
      the first), or after the last node of that node's kernel call where the call computes several
      (:func:`launches`: the output code frees nothing until the call returns); one whose storage a buffer reuses
      (``buf9 = reinterpret_tensor(mm_5, ...); del mm_5  # reuse``) is freed after the last reader of that buffer,
      unless the graph returns it;
    - a saved tensor the ``forward`` also returned to its caller (a model's logits: saved for the loss's backward
      and returned in the model's output) stays held by that output: ``del`` frees nothing;
    - a tangent is held by the caller (the autograd function's backward keeps the gradients it was called
      with until the call returns), and a parameter or a user's argument by theirs: ``del`` frees nothing."""
    post = compile.graphs.get("post_grad")
    code = str(compile.output_code or "")
    out: list[tuple[int, GraphNode]] = []
    if post is None or not compile.fused_nodes:
        return out
    # a kernel call of several fused nodes frees what it reads once it returns: after its last node
    _, end = _spans(len(compile.fused_nodes), {f.name: i for i, f in enumerate(compile.fused_nodes)}, launches(compile))
    last: dict[str, int] = {}
    for i, n in enumerate(compile.fused_nodes):
        for r in n.reads:
            last[r] = end[i]
    deleted = set(re.findall(r"^\s*del ([A-Za-z_]\w*)\s*$", code, re.M))
    # the C++ wrapper (cpp_wrapper=True) frees a handle so: ``permute_2.reset();`` (its frees were not read, and a
    # backward's measured-above-the-call figure freed none of its saved tensors: nu19 O-d)
    deleted |= set(re.findall(r"^\s*([A-Za-z_]\w*)\.reset\(\);\s*$", code, re.M))
    chains: dict[str, list[str]] = {}  # an input -> the buffers written into its storage
    aliases = reuses(code)
    for new in aliases:
        chains.setdefault(storage_root(new, aliases), []).append(new)
    returned = set(_returned_names(code))
    held = _returned_to_caller(forward, post) if forward is not None else set()
    for g in post.nodes:
        if g.op != "placeholder" or g.role != "saved" or g.name in held:
            continue
        chain = chains.get(g.name, [])
        if g.name in deleted and not chain:
            out.append((last.get(g.name, end[0]), g))
        elif chain and not returned.intersection(chain):
            out.append((max(last.get(b, end[0]) for b in [g.name, *chain]), g))
    return out


def _returned_names(code: str) -> list[str]:
    return [storage_name(i) for i in returned_items(code)]


def _is_tensor(node: GraphNode) -> bool:
    """A graph node that is one tensor (a shape and a dtype), not a size (SymInt), an opaque object or a seed."""
    return isinstance(node.shape, list) and node.dtype is not None


def saved_returns(forward: Compile, backward_post) -> list[tuple[GraphNode, str]]:
    """Each tensor the backward takes from the forward (its post-grad placeholder) with the item of the forward's
    output code's ``return`` that hands it over (``buf0``, ``primals_5``: ``rules.storage_name``).

    AOT autograd's layout (``torch/_functorch/partitioners.py``): the forward returns its caller's outputs, then the
    saved tensors, then the saved non-tensors (opaque objects, sizes: ``s77``); the backward takes the saved sizes
    first, then the same tensors in the same order, then the rest, then its tangents. So the non-tensors are left out
    of both sides before pairing (a dynamic-shape step paired every tensor with its neighbour's item). Nothing where
    the counts do not line up, or where a pair contradicts the forward's graph: an item that is one of the forward's
    graph inputs is handed over as the tensor itself (or a view of it)."""
    code = str(forward.output_code or "")
    items = _returned_names(code)
    taken = [g for g in backward_post.nodes if g.op == "placeholder" and g.role != "tangent"]
    taken = [g for g in taken if not g.name.startswith("tangents_")]
    tensors = [g for g in taken if _is_tensor(g)]
    n_user = len(items) - len(taken)
    if not tensors or n_user < 0:
        return []
    pairs = list(zip(tensors, items[n_user : n_user + len(tensors)]))
    post = forward.graphs.get("post_grad")
    fx = {n.name: n for n in post.nodes} if post is not None else {}
    inputs = {n.name for n in fx.values() if n.op == "placeholder"}
    for g, item in pairs:
        if item in inputs and g.name != item and (g.name not in fx or _base(fx[g.name], fx).name != item):
            return []  # not the layout read above: pair nothing rather than the wrong things
    return pairs


def _copied_inputs(forward: Compile, backward_post) -> set[str]:
    """The backward's saved inputs for which the forward's output code returns a buffer it allocated (``buf0 =
    empty_strided_cpu(...)``) rather than the input itself: a copy of it (another layout) (:func:`saved_returns`)."""
    made = allocated(str(forward.output_code or "")) or set()
    return {g.name for g, item in saved_returns(forward, backward_post) if item != g.name and item in made}


def _returned_to_caller(forward: Compile, backward_post) -> set[str]:
    """The backward's saved inputs whose storage the forward also returned to its caller (among the items of its
    ``return`` before the saved ones: :func:`saved_returns`)."""
    items = _returned_names(str(forward.output_code or ""))
    taken = [g for g in backward_post.nodes if g.op == "placeholder" and g.role != "tangent"]
    user = set(items[: len(items) - len([g for g in taken if not g.name.startswith("tangents_")])])
    return {g.name for g, item in saved_returns(forward, backward_post) if item in user}


def region_extra(region: Compile) -> int:
    """The bytes a call of a repeated region (``region``: its compile, a ``torch.compiler.nested_compile_region``'s
    subgraph) adds to its caller's at the call: the region's peak (its buffers, outputs among them once allocated)
    less the outputs it returns, which the caller counts already as the call's buffers. So the caller's bytes at the
    call, its own and the call's outputs, plus these, are the most alive while the call runs. Its outputs are found by
    their storage (``buf1 = buf0; del buf0  # reuse``: the output ``buf1`` is allocated as ``buf0``). 0 where the
    region has no memory, or holds nothing but what it returns. (A region's buffer of a size known only when it runs
    is not counted in its peak: then neither here.)"""
    m = region.memory
    if m is None or not m.timeline:
        return 0
    code = str(region.output_code or "")
    aliases = {**renames(code), **reuses(code)}
    # what its function returns (an import's outputs are named by their FX nodes, not by their buffers)
    items = [storage_name(i) for i in returned_items(code, region.subgraph)] if region.subgraph else []
    returned = {storage_root(name, aliases) for name in [*items, *(o.buffer for o in region.outputs)]}
    out = sum(b.bytes for p in m.timeline for b in p.allocates if storage_root(b.name, aliases) in returned)
    return max(0, m.peak_bytes - out)


def region_order(compiles: Sequence[Compile]) -> tuple[list[int], dict[tuple[str, str], str]]:
    """The order to work out the memory of ``compiles`` in (their indices: each repeated region's compile before the
    compiles, so before the calls, that hold what it allocates inside), and each call of a region, ``(caller's id,
    call node) -> region's id`` (``report/finish.region_calls``). Used by the capture and by a TORCH_TRACE import."""
    called = region_calls(list(compiles))
    regions = set(called.values())
    return sorted(range(len(compiles)), key=lambda i: (compiles[i].id not in regions, i)), called


def region_call_bytes(
    caller: str, called: dict[tuple[str, str], str], done: dict[str, Compile]
) -> dict[str, tuple[str, int]]:
    """``memory(calls=...)`` of compile ``caller``: for each of its calls of a region whose memory is worked out (in
    ``done``, by id), the region's name and :func:`region_extra`."""
    return {
        node: (done[r].subgraph, region_extra(done[r]))
        for (who, node), r in called.items()
        if who == caller and r in done
    }


def region_buffer_name(region: str, node: str) -> str:
    """The name of what a call (fused node ``node``) of repeated region ``region`` holds inside while it runs, as the
    Memory view's tables and points name it: ``repeated_subgraph0 at op2: its own buffers`` (one per call)."""
    return f"{region} at {node}: its own buffers"


#: What ``Memory.source`` adds where a graph calls a repeated region: how its calls are counted.
REGION_CALLS_NOTE = (
    "a call of a repeated region (invoke_subgraph) holds the region's own buffers while it runs: counted at the call's "
    "point at their peak, beyond what the region returns (the region's compile's memory, analysis/memory.region_extra)"
)


def net_curve(points: list[MemoryPoint], freed: list[int], fused: Optional[Sequence[FusedNode]] = None) -> list[int]:
    """The live bytes of each point less the inputs freed before it (``freed[i]`` is freed after point ``i``): what
    the allocator holds above its level at the call while each runs (``MemoryPoint.net_bytes``). With ``fused``
    (the compile's fused nodes), ``freed`` is :func:`freed_inputs`' (one per fused node) and a glue node's bytes
    are freed after its box's point (:func:`box_of`).

    >>> pts = [MemoryPoint("a", 10), MemoryPoint("b", 30), MemoryPoint("c", 25)]
    >>> net_curve(pts, [0, 20, 5])
    [10, 30, 5]
    """
    if fused is not None:
        home, by_point = box_of(fused), defaultdict(int)
        for n, b in zip(fused, freed):
            by_point[home.get(n.name, n.name)] += b
        freed = [by_point.get(p.node, 0) for p in points]
    out, gone = [], 0
    for i, p in enumerate(points):
        out.append(p.live_bytes - gone)
        gone += freed[i] if i < len(freed) else 0
    return out


def net_peak(
    points: list[MemoryPoint], freed: list[int], fused: Optional[Sequence[FusedNode]] = None
) -> tuple[Optional[int], str]:
    """``(bytes, node)``: the maximum of :func:`net_curve` (the first point of it), what the allocator sees above its
    level at the call at its highest."""
    best, at = None, ""
    for p, net in zip(points, net_curve(points, freed, fused)):
        if best is None or net > best:
            best, at = net, p.node
    return (max(best, 0), at) if best is not None else (None, "")


def with_net(
    points: list[MemoryPoint], freed: list[int], fused: Sequence[FusedNode], floor_node: str = ""
) -> list[MemoryPoint]:
    """``points`` with their ``net_bytes`` (:func:`net_curve`) where the graph frees inputs on the way (``freed``
    not all 0, or ``floor_node`` set: :func:`net_floor`), up to ``floor_node`` where it is set: after it the graph
    has freed an input of a size known only when it runs, which no byte count holds, and live bytes less the freed
    inputs is no longer what it holds (nu29 D3). ``points`` as they are where it frees none."""
    if not any(freed) and not floor_node:
        return points
    upto = next((i for i, p in enumerate(points) if p.node == floor_node), len(points) - 1) if floor_node else None
    return [
        dataclasses.replace(p, net_bytes=net) if upto is None or i <= upto else p
        for i, (p, net) in enumerate(zip(points, net_curve(points, freed, fused)))
    ]


def net_floor(
    points: list[MemoryPoint], freed: list[int], fused: Sequence[FusedNode], unsized: Sequence[tuple[int, str]]
) -> tuple[Optional[int], str]:
    """``(bytes, node)``: :func:`net_peak` over the points up to ``node``, the one after which the graph frees the
    first of its inputs of a size known only when it runs (``unsized``: :func:`freed_unsized`, by fused node index):
    the only points where no byte it freed is left out of "the inputs freed by then". There, live bytes less the
    freed inputs is at least what it holds (at most, after: nu29 D3), so their maximum is a lower bound of its
    high-water mark. ``(None, "")`` where nothing of such a size is freed (:func:`net_peak` says it all)."""
    if not unsized or not points:
        return None, ""
    home = box_of(fused)
    first = fused[min(i for i, _ in unsized)].name
    at = next((k for k, p in enumerate(points) if p.node == home.get(first, first)), len(points) - 1)
    return net_peak(points[: at + 1], freed, fused)[0], points[at].node


def estimate_ratio(m: Memory) -> Optional[float]:
    """``net_peak_bytes / measured_peak_bytes``, rounded to 3 places; None unless both are known and nonzero."""
    if m.net_peak_bytes is None or not m.measured_peak_bytes:
        return None
    return round(m.net_peak_bytes / m.measured_peak_bytes, 3)


def held_constants(compile: Compile, constants: dict[str, Optional[int]]) -> list[HeldConstant]:
    """``Memory.constants``: each graph constant the kernels of ``compile`` read (``constants``: name -> bytes, read
    at capture), named by the parameters it comes from (``Compile.constant_names``), its shape and dtype from the
    post-grad graph's ``get_attr`` of it; largest first, then by name."""
    post = compile.graphs.get("post_grad")
    attrs = {str(n.target): n for n in (post.nodes if post is not None else []) if n.op == "get_attr"}
    rows = []
    for name, nbytes in constants.items():
        node = attrs.get(name)
        shape = node.shape if node is not None and isinstance(node.shape, list) else None
        rows.append(
            HeldConstant(
                name=name,
                bytes=int(nbytes or 0),
                display=compile.constant_names.get(name, ""),
                shape=shape,
                dtype=node.dtype if node is not None else None,
            )
        )
    return sorted(rows, key=lambda r: (-r.bytes, r.name))


def memory(
    compile: Compile,
    buffers: list[dict],
    inputs: dict[str, Optional[int]],
    backward: Optional[Compile] = None,
    device: str = "cpu",
    forward: Optional[Compile] = None,
    constants: Optional[dict[str, int]] = None,
    calls: Optional[dict[str, tuple[str, int]]] = None,
) -> Memory:
    """The ``Memory`` of ``compile`` from its buffers (see :func:`timeline`), the bytes of its graph inputs and of
    the graph constants its kernels read (frozen weights), and (for the forward of a training step) the backward
    compile that reads what it saved, or (for a backward) the forward that saved its inputs. ``calls``: for each
    fused node that calls a repeated region, the region's name and the bytes it holds while it runs beyond what it
    returns (:func:`region_extra`): a buffer of those bytes, live at the call's point alone, named by the region."""
    post = compile.graphs.get("post_grad")
    fx = {n.name: n for n in post.nodes} if post is not None else {}
    calls = {k: v for k, v in (calls or {}).items() if v[1] > 0}
    if calls:  # each call's region: what it allocates inside, alive at the call only (written and freed there)
        called = {n.name: n for n in compile.fused_nodes if n.name in calls}
        buffers = [
            *buffers,
            *(
                {
                    "name": region_buffer_name(name, node),  # one per call: a name is a storage here
                    "node": node,
                    "bytes": extra,
                    "users": [],
                    "is_output": False,
                    # the call itself (its FX nodes: the invoke_subgraph call and the region's get_attr)
                    "origin": next((f for f in called[node].fx_nodes if f in fx and fx[f].op == "call_function"), ""),
                }
                for node, (name, extra) in calls.items()
                if node in called
            ),
        ]
    home = box_of(compile.fused_nodes)  # one point per box: glue is its box's
    boxes = [n for n in compile.fused_nodes if home[n.name] == n.name]
    order = [n.name for n in boxes]
    code = str(compile.output_code or "")
    points, peak, peak_node, alive = timeline(
        order,
        buffers,
        fx,
        top=None,
        aliases=reuses(code),
        made=allocated(code),
        home=home,
        views=views(code),
        sites=launches(compile),
        named=renames(code),
    )
    saved = saved_for_backward(compile, backward) if backward is not None and compile.graph_kind == "forward" else []
    unknown = compile.graph_kind == "forward" and not compile.subgraph and backward is None
    # the ops the backward computes again: on the forward (what it did not save) and on the backward (where they run)
    redo = (
        recomputed(compile, backward, on="forward")
        if backward is not None and compile.graph_kind == "forward"
        else recomputed(forward, compile)
        if forward is not None and compile.graph_kind == "backward"
        else []
    )
    counted = counted_bytes(saved)  # each storage once: a tensor and a view of it are held once
    built = built_by_module(compile)  # empty at capture: the built lines come later (report/lines.mark_rollups)
    _, by_module = rollups(saved, fx, built)
    instances = repeat_instances(compile)
    nodes = {n.name: n for n in compile.fused_nodes}
    freed = freed_inputs(compile, forward)
    net, net_node = net_peak(points, freed, compile.fused_nodes)
    unsized_freed = freed_unsized(compile, forward)
    floor, floor_node = net_floor(points, freed, compile.fused_nodes, unsized_freed)
    points = with_net(points, freed, compile.fused_nodes, floor_node)
    m = Memory(
        net_peak_bytes=net,
        net_peak_node=net_node,
        freed_input_bytes=sum(freed),
        freed_uncounted=[name for _, name in unsized_freed],
        net_floor_bytes=floor,
        net_floor_node=floor_node,
        peak_bytes=peak,
        peak_node=peak_node,
        timeline=points,
        saved_for_backward=saved,
        # a training forward whose backward did not compile in the capture: what it saves is not known, not 0
        saved_bytes=None if unknown else sum(b or 0 for b in counted),
        saved_activation_bytes=None if unknown else sum(b or 0 for s, b in zip(saved, counted) if s.kind in HELD_KINDS),
        recomputed=redo,
        measured_peak_bytes=None,
        # (the region's words before the measurement's: a measured run replaces what follows "; peak ")
        source=SOURCE
        + (f"; {REGION_CALLS_NOTE}" if calls else "")
        + "; "
        + (NOT_MEASURED_CPU if device == "cpu" else NOT_MEASURED),
        input_bytes=sum(v or 0 for v in inputs.values()),
        constant_bytes=sum(v or 0 for v in (constants or {}).values()),
        constants=held_constants(compile, constants or {}),
        peak_buffers=alive[:PEAK_TOP],
        saved_by_module=by_module,
        regions=regions(boxes, instances),
        saved_groups=saved_groups(saved, fx, instances),
        saved_by_module_folded=fold_rollup(
            ((s.module, b) for s, b in zip(saved, counted) if s.kind in HELD_KINDS and b != 0), instances
        ),
        peak_by_module=fold_rollup(((buffer_module(b, fx, nodes), b.bytes) for b in alive), instances),
        peak_buffer_count=len(alive),
        # an RNG state's length (``s12`` in a backward, the generator's) is no size of the model: not said
        sizes_at=sizes_at(n for n in (post.nodes if post is not None else []) if n.name not in _rng_state_names(fx)),
    )
    unsized = [b["name"] for b in buffers if b.get("bytes") is None and not b.get("internal")]
    if unsized:  # a data-dependent size (nonzero, unique, a boolean mask): not counted, and said
        m = dataclasses.replace(
            m,
            source=m.source + "; " + unsized_note(unsized, _unsized_why(buffers)),
            uncounted=unsized,
            uncounted_at=uncounted_at(order, buffers, home, launches(compile)),
        )
    # a tensor's only: a size (``Sym(s77)``) or another non-tensor input holds no tensor bytes, left out of nothing
    unsized_inputs = sorted(
        name for name, b in inputs.items() if b is None and (name not in fx or _is_tensor(fx[name]))
    )
    if unsized_inputs:  # a saved tensor of a data-dependent size, in a backward's inputs
        m = dataclasses.replace(m, uncounted_inputs=unsized_inputs)
    return memory_lines(
        m, fx, built, nodes, gradient_buffers(compile, fx)
    )  # each row's line and module, the roll-ups by line: report/lines.py


def sizes_at(nodes: Iterable[GraphNode]) -> str:
    """What ``Memory.sizes_at`` says: where a size of the graph's ``nodes`` is symbolic, the sizes the bytes are
    counted at, each plain symbol of a size at the size seen at capture (``GraphNode.shape_hint``), in the order the
    graph first has them; ``""`` where every size is static (or of a data-dependent size, which has no hint and is
    not counted: ``unsized_note``).

    >>> n = lambda shape, hint=None: GraphNode("x", "placeholder", "x", shape=shape, shape_hint=hint)
    >>> sizes_at([n(["s77", 32], [4, 32]), n([["s77", "s1"]], [[4, 9]]), n(["2*s77", 8], [8, 8])])
    'at s77=4, s1=9'
    >>> sizes_at([n(["2*s0"], [8])]), sizes_at([n([8, 32])])
    ('at the size hints', '')
    """
    seen: dict[str, int] = {}
    symbolic = False

    def walk(shape, hint) -> None:
        nonlocal symbolic
        if not isinstance(shape, list):
            return
        for i, d in enumerate(shape):
            h = hint[i] if isinstance(hint, list) and i < len(hint) else None
            if isinstance(d, list):
                walk(d, h)
            elif isinstance(d, str) and isinstance(h, int) and not isinstance(h, bool):
                symbolic = True  # counted at its hint (a data-dependent size, u0, has none: not counted)
                if _SYMBOL.match(d):
                    seen.setdefault(d, h)

    for node in nodes:
        walk(node.shape, node.shape_hint)
    if not symbolic:
        return ""
    return "at " + ", ".join(f"{k}={v}" for k, v in seen.items()) if seen else "at the size hints"


_SYMBOL = re.compile(r"^[A-Za-z_]\w*$")


def unsized_note(names: Sequence[str], why: str = "") -> str:
    """What ``Memory.source`` says of buffers whose size the capture could not know (``bytes`` None): ``why`` where
    it is not that they are data-dependent (a TORCH_TRACE import's backed size whose hint the log does not hold).

    >>> unsized_note(["buf1", "buf6"])
    'not counted: buf1, buf6, of a size known only when the graph runs (data-dependent: nonzero, unique, a boolean mask): the peak is at least the one shown'
    """
    why = why or "data-dependent: nonzero, unique, a boolean mask"
    return f"not counted: {', '.join(names)}, of a size known only when the graph runs ({why}): the peak is at least the one shown"


def _unsized_why(buffers: Sequence[dict]) -> str:
    """Why the buffers of no known size are so, where each says the same other reason than a data-dependent size
    (``unsized_why``: ``capturing/trace_memory``), else ``""``."""
    whys = {b.get("unsized_why") or "" for b in buffers if b.get("bytes") is None and not b.get("internal")}
    return whys.pop() if len(whys) == 1 else ""


#: How many of the buffers alive at the peak ``Memory.peak_buffers`` lists (the largest).
PEAK_TOP = 20
