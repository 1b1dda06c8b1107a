"""Memory facts of a compile: the buffers Inductor's scheduler will allocate (size, dtype, which fused node
writes each and which read it last), read at ``log_ir_post_fusion`` (``read_buffers``, the only part here that
touches torch), and the ``Compile.memory`` field built from them (``memory_of``, torch-free) with the pure
computations of ``analysis/memory.py``.

Sizes are read through the graph's ``sizevars`` hint functions, which never add a guard."""

from __future__ import annotations

from typing import Any, Optional

from ..analysis import memory as analysis
from ..report.model import Compile, Memory
from .torchread import constant_nbytes, ir_fx_nodes


def _hint(expr: Any) -> Optional[int]:
    """The size ``expr`` had at capture, None where it depends on the data (an unbacked ``u0``, whose "hint" torch
    would give as a fallback guess)."""
    from torch._inductor.virtualized import V

    try:
        from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

        if free_unbacked_symbols(expr):
            return None
    except Exception:  # not a sympy expression (a plain int), or no such helper on this torch: read as below
        pass
    sizevars = V.graph.sizevars
    read = getattr(sizevars, "optimization_hint", None) or getattr(sizevars, "size_hint", None)
    try:
        return int(read(expr, fallback=0))  # a hint is a plain int: no SymInt, no guard
    except Exception:
        return None


def _layout_bytes(ir_node: Any) -> tuple[Optional[int], list, str]:
    """``(bytes, shape, dtype)`` of an IR buffer; bytes 0 for a layout that allocates nothing of its own
    (``NoneLayout``; a ``MultiOutputLayout`` whose parts are counted as the buffers they are)."""
    from torch._inductor import ir
    from torch._inductor.utils import get_dtype_size

    layout = getattr(ir_node, "layout", None)
    if isinstance(layout, (ir.NoneLayout, ir.MultiOutputLayout)):
        return 0, [], ""
    try:
        dtype = ir_node.get_dtype()
        numel = _hint(ir_node.get_numel())
        shape = [_hint(s) for s in ir_node.get_size()]
    except Exception:
        return None, [], ""
    return (None if numel is None else numel * get_dtype_size(dtype)), shape, str(dtype).replace("torch.", "")


def _views(nodes: Any) -> dict[str, str]:
    """``{buffer: the buffer or graph input whose storage it is}`` for the results of fallback ops that return views
    of their input (``aten.view_as_complex``, ``view_as_real``: every result of the op's schema an alias, which
    Inductor names in ``FallbackKernel.alias_names``): their buffers (the op's own on torch 2.15, its ``MultiOutput``
    on 2.13) allocate nothing. A view of a
    view is its root's."""
    from torch._inductor import ir

    out: dict[str, str] = {}
    for fused in nodes:
        for sub in fused.get_nodes():
            node = getattr(sub, "node", None)
            # the op's buffer is its result (torch 2.15: ``buf0 = ...view_as_complex(...)``), or a MultiOutput takes
            # it from the op's (2.13: ``buf1 = buf0``)
            src = node.inputs[0] if isinstance(node, ir.MultiOutput) and node.inputs else node
            names = list(getattr(src, "alias_names", None) or []) if isinstance(src, ir.FallbackKernel) else []
            schema = getattr(getattr(src, "op_overload", None), "_schema", None)
            returns = list(getattr(schema, "returns", None) or [])
            if len(set(names)) == 1 and returns and all(r.alias_info is not None for r in returns):
                out[node.get_name()] = names[0]
    for view in out:
        seen = {view}
        while out[view] in out and out[view] not in seen:
            seen.add(out[view])
            out[view] = out[out[view]]
    return out


def _dropped_outputs(node: Any, kept: set[str]) -> list[Any]:
    """The results of a fallback op's call (``buf7 = torch.ops.aten.nonzero.default(buf6)``, SDPA's, an RNG-state
    higher-order op's) that no buffer takes (Inductor made a ``MultiOutput`` for each tensor result and dropped those
    nothing reads: ``nonzero``'s, read only for its size ``u1``; SDPA's ``logsumexp`` under a checkpoint): the call
    allocates them all the same, and they live until the output code ``del``s the call's result. ``kept``: the names
    of the scheduled buffers. None for a call whose results are views of its inputs (``alias_names``)."""
    from torch._inductor import ir

    if not isinstance(node, ir.FallbackKernel) or not isinstance(getattr(node, "layout", None), ir.MultiOutputLayout):
        return []
    if getattr(node, "alias_names", None):
        return []
    out: list[Any] = []

    def walk(o: Any) -> None:
        if isinstance(o, (list, tuple)):
            for x in o:
                walk(x)
        elif isinstance(o, ir.MultiOutput) and o.get_name() not in kept:
            out.append(o)

    walk(getattr(node, "outputs", None) or [])
    return out


def read_buffers(nodes: Any) -> dict:
    """Plain data for the memory timeline of one graph, from its post-fusion scheduler nodes in order:
    ``{"buffers": [{name, node, bytes, shape, dtype, users, is_output}], "inputs": {name: bytes}, "constants":
    {name: bytes}}`` (the graph constants its kernels read: frozen weights, not graph inputs).

    ``node`` is the fused node that writes the buffer, ``users`` the fused nodes that read it (a buffer
    renamed by an in-place mutation passes its readers to the buffer it mutates, which is counted once);
    ``is_output``: the graph returns it (it stays live after the last node). ``internal``: only its own fused
    node reads it and the graph does not return it: the kernel may keep it in registers (the output code says
    whether it was allocated after all). A fallback op's call buffer (``buf5 = torch.ops...(...)``, whose results
    ``MultiOutput`` buffers take: ``buf6 = buf5[0]``) counts the results no buffer takes (``unused_results``: their
    names, :func:`_dropped_outputs`), allocated by the call and freed with it; its ``bytes`` None where one of them
    has a data-dependent size. ``inputs`` holds the graph's tensor inputs only (a size, ``Sym(s77)``, is none)."""
    from torch._inductor.scheduler import OutputNode
    from torch._inductor.virtualized import V

    scheduler = getattr(V.graph, "scheduler", None)
    real = dict(getattr(scheduler, "mutation_real_name", None) or {})
    fused_of: dict[str, str] = {}
    for fused in nodes:
        for sub in fused.get_nodes():
            fused_of[sub.get_name()] = fused.get_name()
    outputs = set()
    for o in getattr(V.graph, "graph_outputs", None) or []:
        try:
            outputs.add(o.get_name())
        except (AttributeError, NotImplementedError):
            continue  # a constant output names no buffer
    buffers: list[dict] = []
    by_name: dict[str, dict] = {}
    externs = set()
    kept = {buf.get_name() for fused in nodes for buf in fused.get_outputs()}
    for fused in nodes:
        extern = bool(fused.is_extern())
        if extern:
            externs.add(fused.get_name())
        for buf in fused.get_outputs():
            name = buf.get_name()
            size, shape, dtype = _layout_bytes(buf.node)
            dropped = _dropped_outputs(buf.node, kept)
            for o in dropped:  # a result of the call no buffer takes: held by the call's own buffer until its del
                part = _layout_bytes(o)[0]
                size = None if size is None or part is None else size + part
            users, returned = [], name in outputs
            for u in buf.users:
                if isinstance(u.node, OutputNode):
                    returned = True
                    continue
                if getattr(u, "is_weak", False):
                    continue  # an ordering edge, not a read
                owner = fused_of.get(u.node.get_name(), u.node.get_name())
                if owner not in users:
                    users.append(owner)
            entry = {
                "name": name,
                "node": fused.get_name(),
                "origins": ir_fx_nodes(buf.node, extern),
                "bytes": size,
                "shape": shape,
                "dtype": dtype,
                "users": users,
                "is_output": returned,
            }
            if dropped:
                entry["unused_results"] = [o.get_name() for o in dropped]
            buffers.append(entry)
            by_name[name] = entry
    for new, old in real.items():  # buf1 = mutation_(buf0): one storage, alive until the last use of either
        if new in by_name and old in by_name and new != old:
            a, b = by_name[old], by_name[new]
            a["users"] += [u for u in b["users"] + [b["node"]] if u not in a["users"]]
            a["is_output"] = a["is_output"] or b["is_output"]
            b["bytes"], b["users"] = 0, []
    graph_inputs = getattr(V.graph, "graph_inputs", None) or {}
    for view, base in _views(nodes).items():  # a view a fallback op returns (view_as_complex): the storage of its base
        if view in by_name:
            v = by_name[view]
            if base in by_name:
                b = by_name[base]
                b["users"] += [u for u in v["users"] + [v["node"]] if u not in b["users"] and u != b["node"]]
                b["is_output"] = b["is_output"] or v["is_output"]
            v["bytes"], v["users"], v["view_of"] = 0, [], base
    for new, old in real.items():  # written into a graph input's storage (an in-place update of a parameter, a
        if new in by_name and old not in by_name and old in graph_inputs:  # buffer, a cache): allocates nothing
            by_name[new]["bytes"], by_name[new]["into_input"] = 0, old
    for entry in buffers:
        internal = all(u == entry["node"] for u in entry["users"])
        entry["internal"] = bool(
            internal and not entry["is_output"] and entry["node"] not in externs and entry["name"] not in real.values()
        )
    inputs: dict[str, Optional[int]] = {}
    for name, value in graph_inputs.items():
        if not hasattr(value, "get_size"):
            continue  # a size (``Sym(s77)``: a sympy expression) or another non-tensor input holds no tensor bytes
        try:
            size, _, _ = _layout_bytes(value)
        except Exception:
            size = None
        inputs[str(name)] = size
    return {"buffers": buffers, "inputs": inputs, "constants": _constants_read(nodes)}


def _constants_read(nodes: Any) -> dict[str, int]:
    """``{name: bytes}`` of the graph constants (``V.graph.constants``: frozen parameters, packed weights) that the
    nodes read, as they are held (:func:`torchread.constant_nbytes`: a packed weight's own buffer)."""
    from torch._inductor.virtualized import V

    constants = getattr(V.graph, "constants", None) or {}
    out: dict[str, int] = {}
    for fused in nodes:
        for sub in fused.get_nodes():
            for dep in sub.read_writes.reads:
                name = dep.name
                if name in constants and name not in out and name not in V.graph.name_to_buffer:
                    try:
                        out[name] = constant_nbytes(constants[name])
                    except Exception:  # its size not readable: left out of the total, the timeline kept
                        continue
    return out


def memory_of(
    compile: Compile,
    facts: Optional[dict],
    backward: Optional[Compile],
    device: str = "cpu",
    forward: Optional[Compile] = None,
    calls: Optional[dict[str, tuple[str, int]]] = None,
) -> Optional[Memory]:
    """``Compile.memory`` from ``read_buffers``' facts (None when they were not recorded) and, for a forward
    graph of a training step, the backward compile that reads its saved tensors (for a backward, its forward);
    ``calls``: what each call of a repeated region holds inside (``analysis.memory``)."""
    if facts is None:
        return None
    return analysis.memory(
        compile,
        facts["buffers"],
        facts.get("inputs") or {},
        backward,
        device=device,
        forward=forward,
        constants=facts.get("constants") or {},
        calls=calls,
    )


def measure_peaks(report: Any, step: Any, on_gpu: bool) -> Any:
    """``report`` with each compile's ``memory.measured_peak_bytes``: over one more run of ``step`` on a GPU,
    the most bytes allocated during each call of a compiled graph beyond what was allocated when it was
    called (``torch.cuda.reset_peak_memory_stats`` / ``max_memory_allocated``; a call is tied to its compile by
    its output code, the largest of several calls counts). On a CPU: null, and ``source`` says so."""
    if not on_gpu:
        return _with_measured(report, {}, analysis.NOT_MEASURED_CPU)
    import torch
    from torch._inductor.output_code import CompiledFxGraph

    seen: list[tuple[str, int]] = []
    original = CompiledFxGraph.__call__

    def __call__(self: Any, inputs: Any) -> Any:
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        try:
            return original(self, inputs)
        finally:
            torch.cuda.synchronize()
            seen.append((str(getattr(self, "source_code", "") or ""), torch.cuda.max_memory_allocated() - before))

    # patched for this one run only, and restored whatever happens (unless someone patched over us since)
    CompiledFxGraph.__call__ = __call__
    try:
        step()
    finally:
        if CompiledFxGraph.__dict__.get("__call__") is __call__:
            CompiledFxGraph.__call__ = original
    peaks: dict[str, int] = {}
    for code, peak in seen:
        peaks[_key(code)] = max(peaks.get(_key(code), 0), int(peak))
    return _with_measured(report, peaks, "")


def _key(code: str) -> str:
    """Output code compared without blank lines and trailing spaces (the file torch loads and the text the
    capture kept are the same module)."""
    return "\n".join(line.rstrip() for line in str(code).splitlines() if line.strip())


def _with_measured(report: Any, peaks: dict[str, int], note: str) -> Any:
    import dataclasses

    compiles = []
    for c in report.compiles:
        m = c.memory
        if m is not None:
            base = m.source.split("; peak ")[0]
            measured = peaks.get(_key(c.output_code)) if peaks else None
            how = (
                note
                if note
                else "peak measured: torch.cuda.max_memory_allocated() during one call of this graph, less "
                "torch.cuda.memory_allocated() when it was called"
                if measured is not None
                else "peak not measured: no call of this graph was seen in the measured run"
            )
            m = dataclasses.replace(m, measured_peak_bytes=measured, source=f"{base}; {how}")
            m = dataclasses.replace(m, estimate_ratio=analysis.estimate_ratio(m))
            c = dataclasses.replace(c, memory=m)
        compiles.append(c)
    return dataclasses.replace(report, compiles=compiles)
