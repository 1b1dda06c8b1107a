"""Reading torch's objects into plain data: scheduler nodes, IR origins, FX graphs, sizes (never guarding),
launch facts of Triton kernels. Part of the capture layer (the only code that touches ``torch._*``); used by
``adapter.py``'s hooks. torch is imported inside each function."""

from __future__ import annotations

import contextlib
import itertools
import re
from typing import Any, Iterator, Optional

from ..report.rules import template_block
from .raw import RawSchedNode


def _node_kind(snode: Any) -> str:
    from torch._inductor import scheduler as S

    if isinstance(snode, S.ExternKernelSchedulerNode):
        return "extern"
    if isinstance(snode, S.NopKernelSchedulerNode):
        return "nop"
    foreach = getattr(S, "ForeachKernelSchedulerNode", None)
    if foreach is not None and isinstance(snode, foreach):
        return "foreach"
    try:
        if snode.is_template():
            return "template"
    except (AttributeError, NotImplementedError):  # not every node kind has it
        pass
    try:
        if snode.is_reduction():
            return "reduction"
    except (AttributeError, NotImplementedError):  # not every node kind has it
        pass
    if isinstance(snode, (S.SchedulerNode, S.FusedSchedulerNode)):
        return "pointwise"
    return "other"


def ir_fx_nodes(ir_node: Any, is_extern: bool) -> list[str]:
    """Post-grad node names of an IR node: ``origin_node`` for extern kernels (``origins``
    over-approximates there, pytorch issue 100096), else ``origins``."""
    if ir_node is None:
        return []
    origins = list(getattr(ir_node, "origins", ()) or ())
    if not origins and type(ir_node).__name__ == "AssertScalar":
        return _assert_fx_nodes(ir_node)
    if is_extern:
        origin = getattr(ir_node, "origin_node", None)
        # the output given its promised strides (prims.inductor_force_stride_order, no stack of its own) is the
        # lowering's result, not the op it calls: that op is its input (a frozen int8 graph's qlinear)
        while origin is not None and "inductor_force_stride_order" in str(getattr(origin, "target", "")):
            args = getattr(origin, "args", ())
            origin = args[0] if args and hasattr(args[0], "name") and hasattr(args[0], "target") else None
        if origin is not None:
            return [origin.name]
        # a fallback kernel (e.g. SDPA) without origin_node: keep the origins that call the kernel's own op
        op = getattr(ir_node, "op_overload", None) or getattr(ir_node, "python_kernel_name", None)
        exact: list = []
        inside = set(origins)
        if op is not None:
            base = str(op).split("::")[-1].replace("torch.ops.", "").split(".")
            base = base[1] if len(base) > 1 and base[0] == "aten" else base[0]
            exact = [o for o in origins if base and base in str(getattr(o, "target", ""))]
            if exact:
                origins = exact
        if op is not None and len(origins) > 1:
            # its origins also hold the ops of the inputs it was given, which kernels of their own computed: a
            # fallback whose op the graph names otherwise (ScatterFallback: ``aten.scatter_reduce_.two`` for
            # ``scatter_add``, with the ``full`` and ``view`` of ``torch.zeros(...).scatter_add_(...)``), a frozen
            # graph's second ``mkl._mkl_linear`` with the first one and the relu between them: the op the call
            # computes is the one that none of the others feeds, where there is one
            last = [o for o in origins if not any(u in inside for u in getattr(o, "users", ()))]
            if len(last) == 1:
                origins = last
    return sorted({o.name for o in origins})


def _assert_fx_nodes(ir_node: Any) -> list[str]:
    """The graph's ``_assert_scalar`` op that an ``AssertScalar`` checks at run time (the wrapper's ``if not (u0 >=
    0): raise RuntimeError(...)``). Inductor makes one, with no origins, while the FX node defining an unbacked
    symbol runs (``nonzero``'s ``u0``, an ``.item()``): for the symbol's value range and for the graph's deferred
    runtime asserts (a ``torch._check``), each with the same expression text as the ``_assert_scalar`` the graph
    holds for it (``"Runtime assertion failed for expression u0 >= 0 on node 'ge'"``). Only that text is read: the
    graph is walked, nothing is evaluated. ``[]`` where no op says that expression (the node stays unlinked)."""
    expr = getattr(ir_node, "scalar", None)
    if expr is None:
        return []
    import torch
    from torch._inductor.virtualized import V

    try:
        nodes = V.graph.graph.nodes
    except Exception:  # no graph being lowered: nothing to read
        return []
    said = f"expression {expr} on node"
    target = torch.ops.aten._assert_scalar.default
    for n in nodes:
        if n.op == "call_function" and n.target is target and len(n.args) > 1:
            if isinstance(n.args[1], str) and said in n.args[1]:
                return [n.name]
    return []


def _snode_fx_nodes(snode: Any) -> list[str]:
    out: list[str] = []
    for sub in snode.get_nodes():
        is_extern = _node_kind(sub) == "extern"
        for n in ir_fx_nodes(getattr(sub, "node", None), is_extern):
            if n not in out:
                out.append(n)
    return out


def raw_sched_node(snode: Any, costs: bool = False) -> RawSchedNode:
    rw = snode.read_writes
    outputs: list[str] = []
    mutates: dict[str, str] = {}
    try:
        buffers = list(snode.get_outputs())
        outputs = [b.get_name() for b in buffers]
    except (AttributeError, NotImplementedError):  # not every node kind has it
        buffers = []
    for b in buffers:
        # SchedulerBuffer.get_mutations: the buffers this one writes in place (a MutationLayout's target, a fallback
        # op's mutated argument); a buffer that cannot say is left out, the node kept
        try:
            for target in getattr(b, "get_mutations", lambda: ())() or ():
                mutates.setdefault(b.get_name(), str(target))
        except Exception:
            continue
    raw = RawSchedNode(
        name=snode.get_name(),
        kind=_node_kind(snode),
        members=[s.get_name() for s in snode.get_nodes()],
        fx_nodes=_snode_fx_nodes(snode),
        # a fake WeakDep only orders this node after another (control_deps under fallback_random: rand_like after the
        # dropout; Inductor's own words: "control dependencies for ordering only, they should not extend buffer
        # lifetimes"): no buffer it reads
        reads=sorted({d.name for d in rw.reads if not getattr(d, "is_fake", False)}),
        writes=sorted({d.name for d in rw.writes}),
        outputs=outputs,
        mutates=mutates,
    )
    if costs:
        with leaves_no_trace(snode):
            _costs(snode, raw)
    return raw


@contextlib.contextmanager
def leaves_no_trace(snode: Any) -> Iterator[None]:
    """Put back what reading ``snode``'s costs leaves in torch: Inductor's FLOP count adds to
    ``counters["inductor"]["flop_count"]`` each time it runs (``estimate_flops``, which a GPU's runtime estimate
    calls; a plain compile runs it only for metrics logs and tlparse), and ``cache_on_self`` keeps each answer on the
    node (``__estimate_flops_cache``, ``__get_read_write_buffers_sizes_cache``...), so that torch's own later call
    would count nothing. Both are as they were afterwards: torch's counters the same with and without the lens."""
    from torch._dynamo.utils import counters

    had = "inductor" in counters
    before = dict(counters["inductor"]) if had else {}
    nodes = [snode, *_sub_nodes(snode)]
    cached = [set(_cache_keys(n)) for n in nodes]
    try:
        yield
    finally:
        if had:
            counters["inductor"].clear()
            counters["inductor"].update(before)
        else:
            counters.pop("inductor", None)
        for n, old in zip(nodes, cached):
            for key in set(_cache_keys(n)) - old:
                with contextlib.suppress(AttributeError, TypeError):
                    object.__delattr__(n, key)


def _sub_nodes(snode: Any) -> list:
    try:
        return [n for n in snode.get_nodes() if n is not snode]
    except Exception:
        return []


def _cache_keys(node: Any) -> list[str]:
    """The attributes ``cache_on_self`` set on ``node`` (``__<method>_cache``)."""
    return [k for k in getattr(node, "__dict__", {}) if k.startswith("__") and k.endswith("_cache")]


def _costs(snode: Any, raw: RawSchedNode) -> None:
    """What Inductor itself estimates for a scheduler node: the bytes of each buffer it reads and writes
    (``get_read_write_buffer_accesses``: buffer numel x element size, buffers made and consumed inside a fused
    node left out) and its estimated runtime (GPU only; Inductor returns 0 on CPU). Both read sizes through
    ``sizevars.optimization_hint``, which never adds a guard; nothing here calls ``int()`` on a symbolic size.
    The private method is gated by name: when it is missing the cost falls back to shapes (model side). What that
    accounting leaves out (graph constants) or counts whole (a gathered table) is read apart (:func:`_extra_reads`)."""
    accesses = getattr(snode, "get_read_write_buffer_accesses", None)
    if accesses is not None:
        try:
            raw.read_bytes = {str(k): int(v) for k, v in accesses(include_reads=True, include_writes=False).items()}
            raw.write_bytes = {str(k): int(v) for k, v in accesses(include_reads=False, include_writes=True).items()}
        except Exception:
            raw.read_bytes = raw.write_bytes = None
    try:
        ms = float(snode.get_estimated_runtime())
        raw.estimated_runtime_ms = estimated_ms(snode, ms) if ms > 0 else None
    except Exception:
        pass
    try:
        raw.constant_read_bytes, raw.gather_read_bytes = _extra_reads(snode)
    except Exception:
        raw.constant_read_bytes = raw.gather_read_bytes = None
    try:
        raw.loop_flops = loop_flops(snode)
    except Exception:
        raw.loop_flops = None


#: The ops of a loop body (``LoopBody``: what Inductor generates a node's loops from) that move, index, convert or pick
#: data: no arithmetic (``where`` picks; the cost model counts it 0 in a graph too, ``analysis/cost``)
_LOOP_NOT_ARITHMETIC = frozenset(
    {
        "load",
        "store",
        "store_reduction",
        "partial_accumulate",
        "constant",
        "index_expr",
        "to_dtype",
        "to_dtype_bitcast",
        "where",
        "masked",
        "indirect_indexing",
        "check_bounds",
        "load_seed",
        "rand",
        "randn",
        "randint64",
        "identity",
        "output",
        "device_assert_async",
    }
)


def loop_flops(snode: Any) -> Optional[int]:
    """The arithmetic a generated (C++ or Triton) node's loops do, as Inductor's own loop bodies hold it: for each
    member, the iterations of its loops (pointwise and reduction ranges, at their hints) times the arithmetic ops of
    its body (``SchedulerNode._body``, its masked sub-blocks too; a reduction's combine one, Inductor's online softmax
    four: the max, subtraction, exp and sum, as the cost model counts ``prepare_softmax_online``). What the loops
    compute, not the origins Inductor names: a buffer this node reads carries the origins of the ops that made it (a
    layer norm's ``var_mean`` and the residual ``add`` it reduced, ``utils.gather_origins``), which a kernel that
    only reads the variance lists too. An upper bound on the code generated from it (its common subexpressions,
    shared between fused members, are computed once). None for a template, an extern call or a node of another
    kind, or a data-dependent range."""
    from torch._inductor.virtualized import V

    read = getattr(V.graph.sizevars, "optimization_hint", None) or V.graph.sizevars.size_hint
    total = 0
    for sub in snode.get_nodes():
        body, sizes = getattr(sub, "_body", None), getattr(sub, "_sizes", None)
        if body is None or sizes is None or sub.is_template() or sub.is_extern():
            return None
        iterations = 1
        for size in (d for group in sizes for d in group):
            if getattr(size, "free_symbols", None) and any(str(s).startswith("u") for s in size.free_symbols):
                return None  # a data-dependent size: no hint
            iterations *= int(read(size, fallback=0))
        graphs = [body.root_block.graph] + [b.graph for b in getattr(body, "subblocks", {}).values()]
        ops = 0
        for graph in graphs:
            for n in graph.nodes:
                if n.op != "call_method" or n.target in _LOOP_NOT_ARITHMETIC:
                    continue
                online = n.target == "reduction" and "online_softmax" in str(n.args[-2] if n.args else "")
                ops += 4 if online else 1
        total += iterations * ops
    return total


#: A GPU's dense peak for any dtype is above this many TFLOP/s (a T4's float32 8.1, a V100's 15.7): a peak below it is
#: in PFLOP/s.
_LEAST_TFLOPS = 1.0


def cpu_vec_isa(output_code: str) -> Optional[tuple[str, int]]:
    """The vector instruction set Inductor generated this graph's C++ kernels for, as it compiles now
    (``cpu_vec_isa.pick_vec_isa()`` under the compile's ``cpp.simdlen``): ``(name, bit width)``, ``("INVALID_VEC_ISA",
    0)`` for scalar code; None where the output code compiles no C++ kernel (a GPU graph, extern calls only: torch
    then never checked the CPU's instruction sets, and reading them would compile its test programs). A C++ kernel's
    source is written for that width (a loop that steps 16 floats, an unmasked store of one ``Vectorized``): compiled
    for another it reads and writes past its buffers, so a reproducer compiles it for this one."""
    if "async_compile.cpp" not in output_code and 'extern "C"' not in output_code:
        return None
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    isa = pick_vec_isa()
    return str(isa), int(isa.bit_width())


def estimated_ms(snode: Any, ms: float) -> float:
    """Inductor's estimated run time of ``snode`` in ms, ``ms`` as ``get_estimated_runtime`` returned it, in the unit
    it claims.

    Its FLOP branch is ``max(flops / peak FLOP/s, bytes / peak bandwidth)``, the peak from
    ``get_device_tflops(dtype) * 1e12``. Where that peak comes back in PFLOP/s (below :data:`_LEAST_TFLOPS`: torch
    2.11 with its Triton gave the H200's float32 as 0.0335), every matmul's estimate is 1000x too long (a 349 us
    ``addmm`` estimated at 433 ms, nu21 D2): the estimate is worked out again from Inductor's own counts with the peak
    in TFLOP/s. Only Inductor's cached FLOP count is read (``estimate_flops`` adds to torch's counters when it runs),
    and only an estimate that is exactly that formula's (not a benchmarked one) is changed."""
    try:
        from torch._inductor.utils import get_device_tflops, get_gpu_dram_gbps

        flops = getattr(snode, "__estimate_flops_cache", None)
        if not flops:
            return ms  # no FLOP count: the bytes branch, in ms
        dtype = snode.get_nodes()[0].get_outputs()[0].node.get_dtype()
        peak = float(get_device_tflops(dtype))
        if not 0 < peak < _LEAST_TFLOPS:
            return ms
        gbps = float(get_gpu_dram_gbps())
        moved = float(snode.get_read_write_buffers_sizes() or 0)
        as_torch = max(float(flops) / (peak * 1e12) * 1e9, moved / gbps) / 1e6
        if abs(as_torch - ms) > 1e-6 * ms:
            return ms  # another path (a benchmarked estimate): as torch gave it
        return max(float(flops) / (peak * 1e15) * 1e9, moved / gbps) / 1e6
    except Exception:
        return ms


def constant_nbytes(value: Any) -> int:
    """The bytes a graph constant holds: an opaque oneDNN/MKL tensor (a prepacked weight, whose logical shape says
    nothing of its layout: ``i8[8, 3, 3, 3]`` stored in 576 bytes, MKL's packed ``f32[1459233, 1]``) its buffer as
    ``mkldnn._nbytes`` counts it (what Inductor's ``codecache`` counts for AOTInductor's constants blob too), another
    tensor its elements (two constants viewing one storage count their own elements, not the storage twice)."""
    import torch

    if value.numel() == 0:
        return 0
    if getattr(value, "is_mkldnn", False):
        return int(torch.ops.mkldnn._nbytes(value))
    return int(value.numel()) * int(value.element_size())


def _extra_reads(snode: Any) -> tuple[dict[str, int], dict[str, int]]:
    """What ``get_read_write_buffer_accesses`` leaves out or counts whole: ``(constants, gathers)``.

    ``constants``: each graph constant the node reads (``V.graph.constants``: frozen parameters ``_frozen_param1``,
    the packed weights of a C++ GEMM template ``constant6``, a oneDNN prepacked weight), which Inductor's accounting
    skips (it sizes only buffers and graph inputs), with its bytes: those its loops reach (the elements each load's
    index spans, a bias broadcast over rows read once), at most the constant's; all of it where a library call reads
    it (an extern kernel's ``StarDep``) or its layout is opaque (an MKLDNN tensor: :func:`constant_nbytes`).

    ``gathers``: each buffer, graph input or constant read only through an index that is itself loaded (an
    embedding's table, ``c1 + 32*tmp0``), with the most bytes those loads can fetch: one element per iteration of
    each distinct load (the same index in two nodes of a fused kernel reads the same rows), at most the buffer.
    Inductor counts such a buffer whole in a fused kernel (its bound by the loop size applies to a lone node only).
    Sizes at their hints (``optimization_hint``: no guard); a load of a data-dependent size is left to Inductor's
    count."""
    from torch._inductor.dependencies import MemoryDep
    from torch._inductor.utils import get_dtype_size, sympy_product
    from torch._inductor.virtualized import V

    graph = V.graph
    constants = getattr(graph, "constants", None) or {}

    # optimization_hint where this torch has it (2.13), else size_hint (older): neither adds a guard
    read = getattr(graph.sizevars, "optimization_hint", None) or graph.sizevars.size_hint

    def hint(expr: Any) -> int:
        return int(read(expr, fallback=0))

    loads: dict[str, list] = {}
    for sub in snode.get_nodes():
        for dep in sub.read_writes.reads:
            if not getattr(dep, "is_fake", False):
                loads.setdefault(dep.name, []).append(dep)
    consts: dict[str, int] = {}
    gathers: dict[str, int] = {}
    for name, deps in loads.items():
        memory = all(isinstance(d, MemoryDep) for d in deps)
        if name in constants and name not in graph.name_to_buffer and name not in graph.graph_inputs:
            value = constants[name]
            whole = constant_nbytes(value)
            if not memory or getattr(value, "is_mkldnn", False):
                consts[name] = whole
                continue
            # distinct loads: a gather loads one element per iteration, another the elements its index spans
            spans = {(str(d.index), tuple(map(str, d.size))): d for d in deps}.values()
            elements = sum(hint(sympy_product(d.size) if d.is_indirect() else d.get_numel()) for d in spans)
            consts[name] = min(elements, int(value.numel())) * int(value.element_size())
            if all(d.is_indirect() for d in deps) and consts[name] < whole:
                gathers[name] = consts[name]
            continue
        if not memory or not all(d.is_indirect() for d in deps) or any(d.has_unbacked_symbols() for d in deps):
            continue
        spans = {(str(d.index), tuple(map(str, d.size))): d for d in deps}.values()
        elements = sum(hint(sympy_product(d.size)) for d in spans)
        numel = hint(graph.get_numel(name))
        if 0 < elements < numel:
            gathers[name] = elements * get_dtype_size(graph.get_dtype(name))
    return consts, gathers


def _dim(size: Any) -> tuple[Any, Optional[int]]:
    """One size as ``(value, hint)`` WITHOUT guarding: an ``int`` stays an int (hint None); a SymInt
    whose expression is a number gives that number; a symbolic one gives its expression as text
    (``"s0"``, ``"2*s0 + 1"``) and the concrete value torch used for it, read from the node's hint or
    the shape environment's ``size_hint`` (neither adds a guard). ``int()``, ``bool()``, ``==`` or
    hashing of a SymInt would install a guard and specialize the user's compile: never do that here."""
    import torch

    if type(size) is int:
        return size, None
    if isinstance(size, torch.SymInt):
        node = size.node
        const = node.maybe_as_int()  # reads the sympy expression: no guard
        if const is not None:
            return const, None
        hint = node.hint if node.has_hint() else None
        if hint is None and getattr(node, "shape_env", None) is not None:
            try:
                # torch 2.13 marks size_hint deprecated (FutureWarning, on the user's stderr): its successors hint
                # an unbacked size with a guess (optimization_hint) or guard (guarding_hint_or_throw); None here.
                # The function under the deprecation wrapper is called: no warning, and the process's warning
                # filters untouched (catch_warnings changes them for every thread and resets what was shown once)
                size_hint = type(node.shape_env).size_hint
                hint = getattr(size_hint, "__wrapped__", size_hint)(node.shape_env, node.expr, allow_none=True)
            except Exception:
                hint = None
        try:  # a sympy Integer or a python int; never a SymInt here (int() of those guards)
            hint = int(hint) if hint is not None and not isinstance(hint, torch.SymInt) else None
        except Exception:
            hint = None
        return node.str(), hint
    return str(size), None


def shape_dtype(val: Any) -> tuple[Optional[list], Optional[list], Optional[str]]:
    """``(shape, shape_hint, dtype)`` of a node's example value; ``shape_hint`` is None unless a dim is
    symbolic. Never guards (see :func:`_dim`)."""
    import torch

    if isinstance(val, torch.Tensor):
        dims = [_dim(s) for s in val.shape]
        symbolic = any(isinstance(d, str) for d, _ in dims)
        return (
            [d for d, _ in dims],
            [h if h is not None else d for d, h in dims] if symbolic else None,
            str(val.dtype).replace("torch.", ""),
        )
    if isinstance(val, (list, tuple)) and len(val) > 0 and all(isinstance(v, torch.Tensor) for v in val):
        parts = [shape_dtype(v) for v in val]
        hints = [h if h is not None else s for s, h, _ in parts] if any(h is not None for _, h, _ in parts) else None
        return [s for s, _, _ in parts], hints, parts[0][2]
    return None, None, None


def _target_name(node: Any) -> str:
    t = node.target
    if isinstance(t, str):
        return t
    try:
        from torch.fx.node import _get_qualified_name

        name = _get_qualified_name(t)
    except Exception:
        name = getattr(t, "__name__", None) or str(t)
    return name.replace("torch.ops.", "")


#: Higher-order ops that run one op of a subgraph and only add an ordering to it: ``control_deps(deps, subgraph,
#: *args)``, which ``fallback_random`` wraps each random op in (``rand_like`` after the dropout before it).
_ORDERING_HOPS = frozenset({"higher_order.control_deps"})


#: Higher-order ops that run one op (an ``OpOverload`` argument) on a saved RNG state, by the position of that op
#: among their arguments: under activation checkpointing the forward runs a random op of the region (SDPA, dropout)
#: under ``run_and_save_rng_state(op, *args)``, the backward runs it again under ``run_with_rng_state(state, op,
#: *args)`` (``graphsafe_run_with_rng_state(op, *args, rng_state=...)`` on a GPU).
RNG_HOPS = {
    "higher_order.run_and_save_rng_state": 0,
    "higher_order.run_with_rng_state": 1,
    "higher_order.graphsafe_run_with_rng_state": 0,
}


def wrapped_op(node: Any) -> str:
    """The target of the op a :data:`_ORDERING_HOPS` node runs (its subgraph's one op: ``aten.rand_like.default``),
    or a :data:`RNG_HOPS` node (its op argument: ``aten._scaled_dot_product_flash_attention_for_cpu.default``),
    ``""`` for another node or a subgraph of several ops."""
    import torch

    if node.op != "call_function":
        return ""
    at = RNG_HOPS.get(_target_name(node))
    if at is not None:
        op = node.args[at] if len(node.args) > at else None
        return _op_name(op) if op is not None and not isinstance(op, torch.fx.Node) else ""
    if _target_name(node) not in _ORDERING_HOPS or len(node.args) < 2:
        return ""
    sub = node.args[1]
    if getattr(sub, "op", None) == "get_attr":
        sub = node.graph.owning_module
        for part in str(node.args[1].target).split("."):
            sub = getattr(sub, part, None)
    graph = getattr(sub, "graph", None)
    ops = [n for n in getattr(graph, "nodes", ()) if n.op == "call_function"]
    return _target_name(ops[0]) if len(ops) == 1 else ""


def lowering_match(node: Any) -> list:
    """The nodes a lowering pattern of Inductor's replaced with ``node`` (freezing's oneDNN fusions: conv + relu), in
    the pattern's order; ``[]`` for another node. Such a node calls a Python function, the pattern's handler bound to
    its match (``pattern_matcher.LoweringPatternEntry``: ``functools.partial(handler, match)``, named like the handler,
    ``mkldnn_fusion.fn``), which the lowering turns into a call of an op (``mkldnn._convolution_pointwise``). The
    match keeps the replaced nodes, their targets and meta (the conv's ``nn_module_stack``)."""
    import functools

    t = node.target if node.op == "call_function" else None
    if not isinstance(t, functools.partial) or not t.args:
        return []
    nodes = getattr(t.args[0], "nodes", None)
    return [m for m in nodes if hasattr(m, "meta") and hasattr(m, "target")] if isinstance(nodes, list) else []


def _module_stack(meta: dict) -> tuple[list[str], list[str], list[int]]:
    """``(paths, classes, calls)`` of a node's ``nn_module_stack``, outermost first. ``calls``: which call of each
    module made the node, as dynamo numbers them in the stack's keys: a module's first call is keyed by its id, a later
    one by ``<id>@1``, ``<id>@2``... (torch 2.13: a ``GRUCell`` called in a loop); a key without ``@`` is 0."""
    mstack, mtypes, mcalls = [], [], []
    # a backward node has no nn_module_stack of its own: AOT autograd gives it the forward node's, as
    # fwd_nn_module_stack (the module whose forward made the op it differentiates), keys included
    for key, v in (meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack") or {}).items():
        path = v[0] if isinstance(v, (tuple, list)) else str(v)
        mstack.append(str(path))
        cls = v[1] if isinstance(v, (tuple, list)) and len(v) > 1 else None
        name = getattr(cls, "__name__", None) or (str(cls).rsplit(".", 1)[-1].strip("'>") if cls else "")
        mtypes.append(name)
        call = str(key).rpartition("@")[2] if "@" in str(key) else ""
        mcalls.append(int(call) if call.isdigit() else 0)
    return mstack, mtypes, mcalls


def _deepest_modules(meta: dict, matched: list) -> tuple[list[str], list[str], list[int]]:
    """The module stack of a lowering's node: the deepest of its own and its replaced nodes' (conv + relu in a
    model's forward: its own meta, copied from the pattern's last node, the relu, has the model's; the conv's names
    ``conv1``), the first of the deepest on a tie."""
    stacks = [_module_stack(meta)] + [_module_stack(m.meta) for m in matched]
    return max(stacks, key=lambda st: len(st[0]))


def subgraph_stack_traces(gm: Any, node: Any) -> list[str]:
    """The stack traces of the ops of the subgraph a ``get_attr`` node of ``gm`` names (flex_attention's
    ``sdpa_score0`` / ``sdpa_mask0``: the user's ``score_mod`` and ``mask_mod``, traced into a subgraph whose ops
    carry the lines of those functions, which Inductor inlines into the attention's template kernel), in graph
    order, each once, a subgraph's subgraphs' after its own; ``[]`` for another node or an attribute that is no
    graph module."""
    if node.op != "get_attr":
        return []
    sub = gm
    for part in str(node.target).split("."):
        sub = getattr(sub, part, None)
    graph = getattr(sub, "graph", None)
    out: list[str] = []
    for n in getattr(graph, "nodes", ()):
        trace = (n.meta.get("stack_trace") or "") if n.op == "call_function" else ""
        for t in ([trace] if trace else []) + subgraph_stack_traces(sub, n):
            if t not in out:
                out.append(t)
    return out


def fx_graph_nodes(gm: Any, variables: bool = False) -> list[dict]:
    """Plain dicts for the nodes of an FX GraphModule (see ``model.GraphNode``); ``variables`` (dynamo's graph): each
    node dynamo named after a local variable of the user's code has ``"variable"`` (:func:`variable_name`), and each
    call of an op with a schema ``"arguments"``, the schema's name of the argument each input is passed as
    (:func:`argument_names`: a PT2E weight's ``dequantize_per_channel`` is ``linear``'s ``weight``). A node a lowering pattern put in the
    graph (:func:`lowering_match`) is ``"lowering": True``, ``wraps`` the first op it replaced, without its overload (the
    capture names it by the op of the kernel it lowers to where that is known, ``build._graph_nodes``), its module stack the deepest of its own and
    theirs. A ``get_attr`` node of a subgraph also has ``subgraph_stack_traces`` (:func:`subgraph_stack_traces`), where
    its ops have any."""
    out = []
    for n in gm.graph.nodes:
        inner = subgraph_stack_traces(gm, n)
        val = n.meta.get("val", n.meta.get("example_value"))
        shape, shape_hint, dtype = shape_dtype(val)
        matched = lowering_match(n)
        mstack, mtypes, mcalls = _deepest_modules(n.meta, matched)
        ops = [m for m in matched if getattr(m, "op", "") == "call_function"]
        out.append(
            {
                "name": n.name,
                "op": n.op,
                "target": _target_name(n),
                # a lowering: the op it replaced, without its overload (conv + add + relu replaces a .default conv
                # and calls the .binary one): the capture puts the extern kernel's op in its place where known
                "wraps": wrapped_op(n) or (_target_name(ops[0]).rsplit(".", 1)[0] if ops else ""),
                **({"lowering": True} if matched else {}),
                "inputs": [a.name for a in n.all_input_nodes],
                "shape": shape,
                "shape_hint": shape_hint,
                "dtype": dtype,
                "stack_trace": n.meta.get("stack_trace") or "",
                "module_stack": mstack,
                "module_types": mtypes,
                **({"module_calls": mcalls} if any(mcalls) else {}),
                "source": _input_source(n),
                "original": str(n.meta.get("original_aten") or ""),  # the op it was decomposed from
                "result_of": result_of(n),
                "index": index_of(n),
                **({"item": k} if (k := item_of(n)) is not None else {}),
                **({"returns": returned_names(n)} if n.op == "output" else {}),
                **({"variable": v} if variables and (v := variable_name(gm, n)) else {}),
                **({"arguments": a} if variables and (a := argument_names(n)) else {}),
                **({"subgraph_stack_traces": inner} if inner else {}),
                **({"recompute": policy} if (policy := _recompute_policy(n.meta)) else {}),
                **_backward_ties(n.meta),
            }
        )
    return out


def _backward_ties(meta: dict) -> dict:
    """What AOT autograd says of a backward op that has no module of its own: ``{"forward_top_level": True}`` where
    it tied the op to its forward op by their sequence number and that op ran in no module (the ``select`` of a
    ``torch.stack``'s backward: ``fwd_nn_module_stack`` set to None), ``{"gradient_sum": True}`` for autograd's sum of
    the gradients of a value used twice (``is_gradient_acc``, which it ties to no forward op); ``{}`` otherwise, also
    for an op it could not tie (a forward op whose sequence number no forward node carries, a node a post-grad pattern
    put in place of others: torch copies no ``fwd_nn_module_stack`` to it), whose module the capture infers
    (``module_paths.fill_backward``)."""
    if meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack"):
        return {}
    if meta.get("is_gradient_acc"):
        return {"gradient_sum": True}
    return {"forward_top_level": True} if "fwd_nn_module_stack" in meta else {}


def _recompute_policy(meta: dict) -> str:
    """The ``CheckpointPolicy`` AOT autograd gave an op of a ``torch.utils.checkpoint`` region (FX meta ``recompute``),
    lower case (``prefer_recompute``); ``""`` for an op of no region."""
    policy = meta.get("recompute")
    if policy is None:
        return ""
    return str(getattr(policy, "name", policy)).lower()


def variable_name(gm: Any, node: Any) -> str:
    """The name of dynamo's graph node ``node`` where dynamo named it after the local variable of the user's code it
    was stored in (``y`` for ``y = x @ w``: at the first ``STORE_FAST`` of a tensor, ``TensorVariable.set_name_hint``
    renames its node, ``_rename`` adding ``_1`` where the name is taken), else ``""``: a node keeps the name FX gives
    its target (``matmul``, ``mul_1``; ``Graph._target_to_str``) until then, so a name that is not that one, with or
    without a count, is a variable's."""
    if node.op not in ("call_function", "call_method"):
        return ""
    try:
        default = gm.graph._target_to_str(node.target)
    except Exception:  # a target FX names otherwise (an older torch): no variable claimed
        return ""
    return "" if re.fullmatch(rf"{re.escape(default)}(_\d+)?", node.name) else node.name


def argument_names(node: Any) -> dict[str, str]:
    """``{input node's name: argument name}`` of a call of an op with a schema (``aten.linear.default(dq, dq_1, b)``
    -> ``{"dq": "input", "dq_1": "weight", "b": "bias"}``), the first argument each input is passed as (positional, then
    keyword; a node inside a list argument is not read); ``{}`` for any other node."""
    schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
    if schema is None:
        return {}
    names = [a.name for a in schema.arguments]
    out: dict[str, str] = {}
    for name, value in [*zip(names, node.args), *node.kwargs.items()]:
        if hasattr(value, "op") and isinstance(getattr(value, "name", None), str):
            out.setdefault(value.name, str(name))
    return out


def returned_names(node: Any) -> list[str]:
    """What output node ``node`` returns, position by position: the name of the node at each, ``""`` where it
    returns no node (``None``: the gradient of an input that needs none, in a backward; a constant). Its
    ``all_input_nodes`` leave those positions out, so a backward's i-th result, the gradient of its forward's i-th
    input, could not be found from them. ``[]`` where it returns no flat tuple."""
    args = node.args[0] if node.args else None
    if not isinstance(args, (list, tuple)):
        return []
    return [a.name if hasattr(a, "op") and isinstance(getattr(a, "name", None), str) else "" for a in args]


#: The FX node meta key under which the capture marks each tensor the decomposition of an op with several
#: results returned, as ``(op, i)`` (:func:`mark_results`; read by :func:`result_of`).
RESULT_KEY = "inductor_lens_result"


def graph_outputs(gm: Any, outputs: list, inputs: Any, forward: bool = False) -> list[dict]:
    """Each value Inductor's graph returns, position by position (``outputs``: ``GraphLowering.graph_outputs``, the IR
    nodes its output code returns; ``inputs``: the names of its graph inputs), as ``{buffer, node, view, role}``:
    ``buffer`` the buffer or graph input it returns there (``""``: no buffer, a ``None`` or a size); ``node`` the
    post-grad node the graph's output node returns there (``""`` where the two are not as many); ``view`` whether it
    is a view of a graph input's storage, no copy (a ``ReinterpretView`` of it: the output code returns
    ``reinterpret_tensor(arg0_1, ...)``), not the input itself; ``role`` of a training forward's (``forward``) output,
    ``returned``
    to the user's code (``user_visible_output_idxs``) or ``saved`` for the backward (after the last of those), else
    ``""``."""
    from torch._inductor import ir

    outs = [n for n in gm.graph.nodes if n.op == "output"]
    args = outs[0].args[0] if outs and outs[0].args else None
    args = list(args) if isinstance(args, (list, tuple)) and len(args) == len(outputs) else [None] * len(outputs)
    idxs = outs[0].meta.get("user_visible_output_idxs") if outs else None
    result = []
    for i, (o, arg) in enumerate(zip(outputs, args)):
        try:
            buffer = str(o.get_name())
        except (AttributeError, NotImplementedError):
            buffer = ""  # a constant output (NoneAsConstantBuffer...) names no buffer
        node = getattr(arg, "name", None)
        role = ""
        if forward and idxs and max(idxs) < len(outputs):
            role = "returned" if i in idxs else "saved" if i > max(idxs) else ""
        result.append(
            {
                "buffer": buffer,
                "node": node if isinstance(node, str) else "",
                "view": bool(buffer) and buffer in inputs and isinstance(o, ir.ReinterpretView),
                "role": role,
            }
        )
    return result


def forward_outputs(gm: Any, names: list) -> tuple[list[str], list[str]]:
    """A training forward's outputs (``names``: its output buffers in order, ``None`` for a constant) as (those
    returned to the user's code, those saved for the backward). Inductor marks the user's outputs on the graph's
    output node (``meta["user_visible_output_idxs"]``, from AOT autograd's layout: the inputs' mutations, then the
    user's outputs, then what the backward needs); those after the last of them are saved. ``([], [])`` where the
    mark is missing (an older torch, ``keep_output_stride`` off) or the user's outputs are all constants."""
    outs = [n for n in gm.graph.nodes if n.op == "output"]
    idxs = outs[0].meta.get("user_visible_output_idxs") if outs else None
    if not idxs or len(outs[0].args[0]) != len(names) or max(idxs) >= len(names):
        return [], []
    returned = [names[i] for i in idxs if names[i] is not None]
    saved = [n for n in names[max(idxs) + 1 :] if n is not None]
    return list(dict.fromkeys(returned)), list(dict.fromkeys(saved))


def output_nodes(gm: Any, names: list) -> dict[str, str]:
    """Each output buffer (``names``: the graph's output buffers in order, ``None`` for a constant) -> the name of
    the post-grad node the graph's output node returns in its place, the first where a buffer is returned twice (a
    view returned and a view saved of one buffer); ``{}`` where the output node's arguments and ``names`` are not
    one to one. The report has only the output node's inputs, each node once, which cannot be aligned then."""
    outs = [n for n in gm.graph.nodes if n.op == "output"]
    args = outs[0].args[0] if outs and outs[0].args else None
    if not isinstance(args, (list, tuple)) or len(args) != len(names):
        return {}
    out: dict[str, str] = {}
    for arg, buf in zip(args, names):
        name = getattr(arg, "name", None)  # an fx.Node; a constant has none
        if buf is not None and isinstance(name, str) and buf not in out:
            out[buf] = name
    return out


def mark_results(tracer: Any, op: Any, out: Any, before: int) -> None:
    """Mark the nodes of ``tracer``'s graph that hold the results ``out`` of ``op``'s decomposition (a tuple, run
    by make_fx while the graph had ``before`` nodes) with ``(op, i)``: AOT autograd decomposes a layer norm into
    ``var_mean``, ``rsqrt``, ... and nothing in the graph says which of them is its mean. Only nodes the
    decomposition made are marked (one that returns an input unchanged says nothing of it); an op decomposed
    inside another's decomposition marks first, and the outer op, whose name ``original_aten`` keeps, last."""
    import torch
    from torch.fx.experimental.proxy_tensor import get_proxy_slot

    nodes = tracer.graph.nodes
    made = set(itertools.islice(reversed(nodes), max(len(nodes) - before, 0)))
    for i, t in enumerate(out):
        if not isinstance(t, torch.Tensor):
            continue
        node = getattr(get_proxy_slot(t, tracer, None, lambda x: x.proxy), "node", None)
        if node is not None and node in made:
            node.meta[RESULT_KEY] = (str(op), i)


def result_of(node: Any) -> Optional[list]:
    """``[op, i, name]`` where ``node`` is result ``i`` of ``op`` (``name``: torch's name for that return in the
    op's schema, ``""`` where it has none): the i-th tensor that the decomposition of the op it was decomposed
    from (``original_aten``) returned (:func:`mark_results`), else the i-th item (``getitem``) of an op's call;
    ``None`` for any other node."""
    import operator

    import torch

    mark, original = node.meta.get(RESULT_KEY), node.meta.get("original_aten")
    if mark is not None and original is not None and mark[0] == str(original):
        return [_op_name(original), mark[1], _return_name(original, mark[1])]
    if node.op != "call_function" or node.target is not operator.getitem or len(node.args) < 2:
        return None
    call, i = node.args[0], node.args[1]
    if not isinstance(i, int) or not isinstance(call, torch.fx.Node) or call.op != "call_function":
        return None
    if _target_name(call) == "higher_order.run_and_save_rng_state" and i == 0:  # (RNG state, the op's results)
        return [_target_name(call), 0, "rng_state"]
    if not isinstance(call.target, torch._ops.OpOverload):  # a higher-order op's items are no results of one op
        return None
    return [_target_name(call), i, _return_name(call.target, i)]


#: Larger than any size: a slice's end that means "to the end" (``x[16:]`` is ``slice(x, 0, 16, 2**63 - 1)``).
_TO_END = 1 << 62


def item_of(node: Any) -> Optional[int]:
    """Which result a ``getitem`` node takes of a call that returns several (``i, acc = while_loop(...)``: 0 and 1), as
    a plain int; None for any other node (its inputs, each node once, do not say)."""
    import operator

    if node.op != "call_function" or node.target is not operator.getitem or len(node.args) < 2:
        return None
    k = node.args[1]
    return k if type(k) is int else None


def index_of(node: Any) -> str:
    """Which part of its input a ``select`` or ``slice`` node takes, as Python indexes it: ``[1]`` for
    ``aten.select.int(x, 0, 1)`` (``qkv[1]``), ``[:, 16:32]`` for ``aten.slice.Tensor(x, 1, 16, 32)``; ``""`` for any
    other node and where a bound is symbolic (only plain ints are read: a SymInt is never touched, so nothing guards)."""
    import torch

    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return ""
    op = target.overloadpacket.__name__
    if op not in ("select", "slice"):
        return ""
    try:
        names = [a.name for a in target._schema.arguments]
    except AttributeError:
        return ""
    given = dict(zip(names, node.args), **{k: v for k, v in node.kwargs.items() if k in names})
    dim = given.get("dim", 0)
    if type(dim) is not int or dim < 0:
        return ""
    if op == "select":
        i = given.get("index")
        return f"[{':, ' * dim}{i}]" if type(i) is int else ""
    start, end, step = given.get("start"), given.get("end"), given.get("step", 1)
    if any(v is not None and type(v) is not int for v in (start, end, step)):
        return ""
    text = f"{start or ''}:{'' if end is None or end >= _TO_END else end}" + (
        f":{step}" if step not in (None, 1) else ""
    )
    return f"[{':, ' * dim}{text}]"


def _op_name(op: Any) -> str:
    return str(op).replace("torch.ops.", "")


def _return_name(op: Any, i: int) -> str:
    """Torch's name for return ``i`` of ``op`` in its schema (SDPA's ``logsumexp``), ``""`` where it has none."""
    try:
        return str(op._schema.returns[i].name or "")
    except (AttributeError, IndexError, TypeError):
        return ""


def _input_source(node: Any) -> str:
    """Where dynamo got a graph input from (``L['self']._modules['fc1']._parameters['weight']``), or ``""``."""
    if node.op != "placeholder":
        return ""
    return _source_name(getattr(node.meta.get("grapharg"), "source", None))


def _source_name(source: Any) -> str:
    """A dynamo Source's text (``L['self'].param_groups[0]['params'][0]``), or ``""``."""
    try:
        name = getattr(source, "name", None)  # a method before torch 2.12, a cached property since
        return str(name() if callable(name) else name) if name is not None else ""
    except Exception:  # an input whose source cannot be named is shown by its graph name
        return ""


def _translator() -> Any:
    """dynamo's translator of the frame it is compiling, while the backend runs (its ``f_code``, ``f_locals``,
    ``f_globals``: the frame's own objects); ``None`` where there is none on this thread (a graph compiled outside
    dynamo's tracing)."""
    from torch._dynamo.symbolic_convert import InstructionTranslator

    try:
        return InstructionTranslator.current_tx()
    except Exception:
        return None


def frame_code() -> Any:
    """The code object of the frame dynamo is compiling (:func:`_translator`), or ``None``."""
    return getattr(_translator(), "f_code", None)


def frame_self_name(code: Any = None, f_locals: Any = None) -> str:
    """The name of the ``self`` of the frame dynamo is compiling (:func:`_translator`, or ``code`` and its
    ``f_locals``): ``self``, or the first parameter of a method that names it otherwise (``def forward(s, x)``: ``s``;
    its code's qualified name names a class of that argument's), or ``fn`` in torch's ``inner`` wrapper around a
    compiled module (``torch.compile(nn.Sequential(...))``); ``""`` for a frame with no ``self``. Reads ``type()`` of
    a local, nothing called on it."""
    if code is None:
        tx = _translator()
        code, f_locals = getattr(tx, "f_code", None), getattr(tx, "f_locals", None)
    if not isinstance(f_locals, dict):
        return ""
    if "self" in f_locals:
        return "self"
    if code is None:
        return ""
    from ..report.rules import wraps_module

    if wraps_module(str(code.co_name), str(code.co_filename)):  # torch's wrapper around a compiled module: its fn
        import torch

        return "fn" if isinstance(f_locals.get("fn"), torch.nn.Module) else ""
    if getattr(code, "co_argcount", 0) < 1:
        return ""
    first = code.co_varnames[0]
    owner = str(getattr(code, "co_qualname", "")).split(".")[-2:-1]  # MLP of MLP.forward (Python 3.11+)
    if first not in f_locals or not owner or owner[0] == "<locals>":
        return ""
    return first if owner[0] in {c.__name__ for c in type(f_locals[first]).__mro__} else ""


def frame_self_types() -> list[str]:
    """The classes of the ``self`` of the frame dynamo is compiling (:func:`frame_self_name`), most derived first
    (``["AdamW", "Adam", "Optimizer", "object"]``: ``Raw.self_types``); ``[]`` for a frame with no ``self``.
    ``type()`` of a local, nothing called on it."""
    f_locals = getattr(_translator(), "f_locals", None)
    name = frame_self_name()
    if not name:
        return []
    return [c.__name__ for c in type(f_locals[name]).__mro__]


def model_tensors(nodes: list[dict], example_inputs: Any, code: Any = None) -> list[tuple[Any, str]]:
    """``(tensor, name)`` of each parameter or buffer of the user's model that dynamo's graph takes as an input
    (``nodes``: ``fx_graph_nodes(gm)``, whose placeholders come in the order of the backend's ``example_inputs``,
    the real tensors): named by its source (``conv1.weight``), from the module compiled in the frame of ``code``
    (``frame_code``; ``rules.wraps_module``), as the report names it. A later graph that holds the same tensor as its
    own (an optimizer step's ``self.param_groups[0]['params'][0]``) is named by it (``mark_lifted``)."""
    from ..report.rules import source_role, wraps_module

    wrapped = code is not None and wraps_module(str(code.co_name), str(code.co_filename))
    own = (frame_self_name() or "self") if code is not None else "self"
    out = []
    for n, t in _placeholder_inputs(nodes, example_inputs):
        role, name = source_role(n.get("source", ""), wrapped, own)
        if role in ("parameter", "buffer") and name:
            out.append((t, name))
    return out


def mark_gradients(nodes: list[dict], example_inputs: Any, known: list[tuple[Any, str]]) -> None:
    """Mark each placeholder of dynamo's graph that is a parameter's gradient (its source ends in ``.grad``: an
    optimizer step's ``self.param_groups[0]['params'][0].grad``) with ``known_as``, the name of that parameter as
    an earlier graph took it (``known``: ``(tensor, name)`` of the user's parameters seen so far) plus ``.grad``:
    ``conv1.weight.grad``. Compares the ``.grad`` of leaf tensors (a non-leaf's would warn) by identity; reads
    nothing else."""
    if not known:
        return
    for n, t in _placeholder_inputs(nodes, example_inputs):
        if str(n.get("source", "")).endswith(".grad") and t is not None:
            name = next((nm for p, nm in known if getattr(p, "is_leaf", False) and p.grad is t), None)
            if name:
                n["known_as"] = f"{name}.grad"


def mark_stack_values(nodes: list[dict], code: Any) -> None:
    """Mark each placeholder of dynamo's graph that is a value the code before a graph break handed to the code
    after it (``L['___stack0']``, a resume function's argument; ``code``: the frame's code, ``frame_code``) with
    ``known_as``, the name the user's code stores it in (``sources.resume_stack_names``: ``x`` of
    ``x = x.requires_grad_(True)``). Reads the code's bytecode only."""
    from .sources import resume_stack_names

    names = resume_stack_names(code) if code is not None else {}
    for n in nodes:
        if n["op"] == "placeholder" and str(n.get("source", "")) in names:
            n["known_as"] = names[str(n["source"])]


def _placeholder_inputs(nodes: list[dict], example_inputs: Any) -> list[tuple[dict, Any]]:
    """Each placeholder of dynamo's graph with the backend's example input in its place; ``[]`` where the two do
    not line up."""
    placeholders = [n for n in nodes if n["op"] == "placeholder"]
    inputs = list(example_inputs or ())
    return list(zip(placeholders, inputs)) if len(placeholders) == len(inputs) else []


def mark_lifted(gm: Any, nodes: list[dict], known: Any = None) -> None:
    """Mark each ``get_attr`` node of dynamo's graph ``gm`` (``nodes``: ``fx_graph_nodes(gm)``) that AOT Autograd
    lifts into a graph input with ``lifted``: ``[its place among the lifted, how many are lifted, "parameter" or
    "buffer"]``, and with dynamo's source of it (``source``: ``L['self'].param_groups[0]['params'][0]``, an
    optimizer's parameter). AOT lifts the graph module's parameters, then its buffers, ahead of the placeholders
    (``aot_module_simplified``); dynamo keeps the source of each (``gm._param_name_to_source``, which AOT reads to
    guard them). ``known``: a tensor -> the name it had as an input of an earlier graph (``model_tensors``), or
    None; where it has one, the node says it (``known_as``: ``conv1.weight``). Reads names only; the nodes are stored
    before, so a failure here loses only the names."""
    try:
        params = dict(gm.named_parameters(remove_duplicate=False))
        tensors = {**params, **dict(gm.named_buffers(remove_duplicate=False))}
        lifted = list(tensors)
        sources = dict(getattr(gm, "_param_name_to_source", None) or {})
    except Exception:  # a graph module that cannot list its tensors: they stay unnamed
        return
    place = {name: i for i, name in enumerate(lifted)}
    held = []
    for n in nodes:
        if n["op"] == "get_attr" and n["target"] in place:
            n["lifted"] = [place[n["target"]], len(lifted), "parameter" if n["target"] in params else "buffer"]
            n["source"] = _source_name(sources.get(n["target"]))
            name = known(tensors[n["target"]]) if known is not None else None
            if name:
                n["known_as"] = name
            held.append(n)
    _mark_optimizer_state(held, tensors)


#: An optimizer's state in a dynamo source: ``L['self'].state[list(dict.keys(L['self'].state))[0]]...``, the
#: optimizer a local (``self`` in ``Adam.step``) or a global (``G['opt']``) of the frame dynamo compiles.
_STATE_SOURCE = re.compile(r"^(L|G)\[['\"]([^'\"]+)['\"]\]\.state\[")


def _mark_optimizer_state(held: list[dict], tensors: dict[str, Any]) -> None:
    """Mark each tensor of an optimizer's state among a graph's held tensors (``held``: the lifted ``get_attr``
    nodes, ``tensors``: target -> tensor) with ``state_of``: its key in the state and the parameter it belongs to,
    as the graph names that parameter (``exp_avg of fc1.weight``, ``step of self.param_groups[0]['params'][1]``).
    Dynamo's source names the state's entries by their position only (``self.state[list(dict.keys(self.state))[0]]
    [list(dict.keys(...))[1]]``): the optimizer, found in the frame dynamo compiles (its locals and globals, while
    the backend runs), says which. Reads the state's dicts by identity (no entry is made, nothing is traced); a
    source of another form, or an object that is not an optimizer, is left as it is."""
    roots = {m.groups() for n in held if (m := _STATE_SOURCE.match(n.get("source") or ""))}
    if not roots:
        return
    import torch

    tx = _translator()
    if tx is None:  # the names stay
        return
    entries: dict[int, tuple[str, Any]] = {}
    for scope, name in roots:
        frame = getattr(tx, "f_locals" if scope == "L" else "f_globals", None) or {}
        opt = frame.get(name)
        state = vars(opt).get("state") if isinstance(opt, torch.optim.Optimizer) else None
        for param, entry in list(state.items()) if isinstance(state, dict) else ():
            for key, value in list(entry.items()) if isinstance(entry, dict) else ():
                if isinstance(value, torch.Tensor):
                    entries[id(value)] = (str(key), param)
    from ..report.rules import source_role

    shown = {id(tensors[n["target"]]): n.get("known_as") or source_role(n["source"])[1] for n in held}
    for n in held:
        key, param = entries.get(id(tensors[n["target"]]), (None, None))
        if key is not None and shown.get(id(param)):
            n["state_of"] = f"{key} of {shown[id(param)]}"


def aot_input_names(mod: Any, signature: Any) -> dict[str, list[str]]:
    """``{placeholder: [role, display name]}`` of the graph AOTInductor lowers, from ``aot_export_module``'s graph
    signature: a lifted parameter or buffer by its path (``fc1.weight``), the i-th user input by the name of the
    i-th input of the module it exported (``ep.module()``: ``x``). Reads names only: nothing is specialised."""
    out: dict[str, list[str]] = {}
    for name, fqn in dict(getattr(signature, "inputs_to_parameters", None) or {}).items():
        out[str(name)] = ["parameter", str(fqn)]
    for name, fqn in dict(getattr(signature, "inputs_to_buffers", None) or {}).items():
        out[str(name)] = ["buffer", str(fqn)]
    graph = getattr(mod, "graph", None)
    given = [str(n.name) for n in graph.nodes if n.op == "placeholder"] if graph is not None else []
    for i, name in enumerate(getattr(signature, "user_inputs", None) or []):
        out[str(name)] = ["input", given[i] if i < len(given) else str(name)]
    return out


def launch_metadata(kernel: Any) -> Optional[dict]:
    """Launch facts of a Triton ``CachingAutotuner`` after it ran: the config autotuning picked."""
    launchers = getattr(kernel, "launchers", None)
    configs = getattr(kernel, "configs", None)
    if launchers is None and configs is None:
        return None
    meta: dict = {}
    if configs is not None:
        meta["candidate_configs"] = len(configs)
    if launchers:
        cfg = getattr(launchers[0], "config", None)
        if cfg is not None:
            meta["num_warps"] = getattr(cfg, "num_warps", None)
            meta["num_stages"] = getattr(cfg, "num_stages", None)
            meta["block"] = {
                k: v
                for k, v in dict(getattr(cfg, "kwargs", {}) or {}).items()
                if isinstance(v, (int, float, str, bool))
            }
            inductor_meta = getattr(kernel, "inductor_meta", None)
            if not meta["block"] and isinstance(inductor_meta, dict):
                # a template's config holds only warps and stages: its tile sizes are constants of its source,
                # which the launcher keeps as ``config_args`` (``TritonTemplateKernel``'s meta)
                meta["block"] = template_block(inductor_meta.get("config_args"))
        shared = getattr(launchers[0], "shared", None)
        if isinstance(shared, int):
            meta["shared_mem_bytes"] = shared
        n_regs = getattr(launchers[0], "n_regs", None)
        if isinstance(n_regs, int):
            meta["registers"] = n_regs
    heuristics = getattr(kernel, "heuristic_type", None)
    if heuristics is not None:
        meta["heuristic"] = str(getattr(heuristics, "name", heuristics)).lower()
    return {k: v for k, v in meta.items() if v is not None}


def launch_grid(kernel: Any) -> Optional[dict]:
    """The launch grid of the config a Triton ``CachingAutotuner`` runs, as Inductor's launcher computes it:
    ``{"grid": [x, y, z], "grid_prefix": [...]}``, each an int or an expression over the kernel's arguments
    (``-((xnumel) // -(128))``), from ``GridExpr.from_meta(inductor_meta, config)`` (torch 2.6+); None when
    this torch has no ``GridExpr`` or the autotuner holds no chosen config."""
    launchers = getattr(kernel, "launchers", None)
    meta = getattr(kernel, "inductor_meta", None)
    if not launchers or not isinstance(meta, dict) or "grid_type" not in meta:
        return None
    cfg = getattr(launchers[0], "config", None)
    try:
        from torch._inductor.runtime.triton_heuristics import GridExpr
    except ImportError:
        return None
    if cfg is None:
        return None
    try:
        grid = GridExpr.from_meta(meta, cfg)
    except Exception:  # a grid kind that needs more than the config (precomputed, combo, user kernels): unknown
        return None
    return {
        "grid": [g if isinstance(g, int) else str(g) for g in (grid.x_grid, grid.y_grid, grid.z_grid)],
        "grid_prefix": [str(p) for p in grid.prefix],
    }


#: Triton's IR stages as ``CompiledKernel.asm`` keys and as the files of Triton's cache.
IR_STAGES = ("ttir", "ttgir", "llir", "ptx")


def _stage_files(folder: str) -> dict:
    """The IR stages (text) and the cubin (bytes) among the files of one kernel's folder in Triton's cache."""
    import os

    out: dict = {}
    for name in sorted(os.listdir(folder)) if folder and os.path.isdir(folder) else []:
        ext = name.rpartition(".")[2]
        if ext in IR_STAGES or ext == "cubin":
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            out[ext] = data if ext == "cubin" else data.decode("utf-8", "replace")
    return out


def _cache_folders(key: str) -> list[str]:
    """Where Triton's file cache may hold the kernel of ``cache_hash`` ``key``: the folder named by the key under
    the ``TRITON_CACHE_DIR`` Inductor sets for its compile workers (``{inductor cache}/triton/{device}``; torch
    2.11's static CUDA launcher keeps only this key), and what Triton's own cache manager says (it wants a hex
    key on triton 3.6 and refuses Inductor's base32 one)."""
    import os

    out = []
    roots = [os.environ.get("TRITON_CACHE_DIR")]
    try:
        import torch
        from torch._inductor.runtime.cache_dir_utils import triton_cache_dir

        if torch.cuda.is_available():
            roots.append(triton_cache_dir(torch.cuda.current_device()))
    except Exception:
        pass
    out += [os.path.join(r, key) for r in roots if r]
    try:
        from triton.runtime.cache import get_cache_manager

        out.append(get_cache_manager(key).cache_dir)
    except Exception:
        pass
    return out


def _asm_of(kernel: Any) -> tuple[dict, str]:
    """``(stage -> text or bytes, where)`` from the compiled kernel behind a Triton autotuner's chosen launcher:
    ``compile_results[0].kernel.asm`` (a ``triton.compiler.CompiledKernel``), the launcher's ``.bin.asm`` (kept when
    ``store_cubin``), else the kernel's folder in Triton's file cache: beside the cubin of torch's static CUDA
    launcher (``StaticallyLaunchedCudaKernel.cubin_path``, torch 2.11), or named by ``launcher.cache_hash``, which
    every launcher kind has."""
    import os

    results = getattr(kernel, "compile_results", None) or []
    for r in results:
        asm = getattr(getattr(r, "kernel", None), "asm", None)
        if isinstance(asm, dict) and asm:
            return dict(asm), "compile_results[0].kernel.asm"
    launchers = getattr(kernel, "launchers", None) or []
    for launcher in launchers:
        asm = getattr(getattr(launcher, "bin", None), "asm", None)
        if isinstance(asm, dict) and asm:
            return dict(asm), "launcher.bin.asm"
    for r in results:
        cubin = getattr(getattr(r, "kernel", None), "cubin_path", None)
        if isinstance(cubin, str) and cubin:
            found = _stage_files(os.path.dirname(cubin))
            if any(s in found for s in IR_STAGES):
                return found, f"beside the static launcher's cubin ({os.path.dirname(cubin)})"
    for launcher in launchers:
        key = getattr(launcher, "cache_hash", None)
        if not isinstance(key, str) or not key:
            continue
        for folder in _cache_folders(key):
            found = _stage_files(folder)
            if found:
                return found, f"Triton's cache ({folder})"
    return {}, ""


def _sass(cubin: Any) -> Optional[str]:
    """``cuobjdump -sass`` (else ``nvdisasm``) of a cubin, when the CUDA toolkit's tool is on the PATH."""
    import shutil
    import subprocess
    import tempfile

    if not isinstance(cubin, (bytes, bytearray)) or not cubin:
        return None
    for tool, args in (("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        path = shutil.which(tool)
        if not path:
            continue
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            try:
                p = subprocess.run([path, *args, f.name], capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if p.returncode == 0 and p.stdout.strip():
                return p.stdout
    return None


def kernel_ir(kernel: Any) -> tuple[Optional[dict], str]:
    """``(KernelIR fields, "")`` of a Triton autotuner after it ran, or ``(None, why)``: the IR stages of its
    compiled kernel (:func:`_asm_of`), SASS where a disassembler is on the PATH, and the launcher's
    ``n_regs``, ``shared`` and ``n_spills`` (torch 2.6+ sets them on every launcher)."""
    launchers = getattr(kernel, "launchers", None)
    if not launchers:
        return None, "the autotuner has no launcher (the kernel never ran inside the capture)"
    asm, where = _asm_of(kernel)
    launcher = launchers[0]

    def number(name: str) -> Optional[int]:
        v = getattr(launcher, name, None)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    out: dict = {s: asm.get(s) if isinstance(asm.get(s), str) else None for s in IR_STAGES}
    out["sass"] = _sass(asm.get("cubin"))
    out["registers"], out["shared_bytes"], out["spills"] = number("n_regs"), number("shared"), number("n_spills")
    if not any(out[s] for s in IR_STAGES):
        return out, "no IR text found on the compiled kernel (compile_results, launcher.bin, Triton's cache)"
    return out, ""


def mark_compiled_autograd(gm: Any, nodes: list[dict], example_inputs: Any, known: Any = None) -> None:
    """What each input of compiled autograd's graph is, from the graph dynamo traced of it (``gm``; ``nodes``:
    ``fx_graph_nodes(gm)``) and the real tensors it takes (``example_inputs``: dynamo's one list, ``L['inputs']``,
    which AOT flattens into the post-grad graph's ``arg0_1``, ``arg1_1``... in its order). Marks its placeholder with
    ``ca_inputs``, one dict per item of the list:

    - ``aot``: the name compiled autograd gave the AOT backward's placeholder the item is handed to
      (``aot0_primals_3``: ``aot{aot id}_{name}``, the forward's node of that name). The item is the j-th saved
      tensor of a ``call_aot_bwd_prologue``, whose result is AOT's ``[*symints, *saved tensors, ...]``
      (``runtime_wrappers._codegen_backward_prologue``), so its result ``len(symints) + j``; or a gradient flowing in
      (after ``validate_outputs``), the k-th of the prologue's non-None gradients, which are the backward's
      ``tangents_*`` in order where they are as many;
    - ``known_as`` and ``kind`` (``parameter`` or ``buffer``): the tensor itself is one the capture knows as the
      user's model's (``known``: tensor -> its name, ``model_tensors``), compared by identity.

    Marks the output node with ``ca_grad_of``: for each value the graph returns, the place in the list of the
    tensor whose ``.grad`` it is (the first result of an ``AccumulateGrad`` of that tensor, which
    ``external_utils.call_accumulate_grad`` sets as its ``.grad``), else None. Reads the graph's structure and the
    tensors' identity only; marks nothing where the graph is not of that form."""
    import operator

    import torch

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    by_name = {n["name"]: n for n in nodes}
    if not placeholders or _input_source(placeholders[0]) != "L['inputs']" or placeholders[0].name not in by_name:
        return
    examples = list(example_inputs or ())
    values = examples[0] if examples and isinstance(examples[0], (list, tuple)) else None
    if values is None:
        return
    entries: list[dict] = [{} for _ in values]
    position: dict = {}  # getitem node of the list -> its index
    for n in placeholders[0].users:
        if n.op == "call_function" and n.target is operator.getitem and isinstance(n.args[1], int):
            if 0 <= n.args[1] < len(values):
                position[n] = n.args[1]
    for i, t in enumerate(values):
        name = known(t) if known is not None and isinstance(t, torch.Tensor) else None
        if name:
            entries[i]["known_as"] = name
            entries[i]["kind"] = "parameter" if isinstance(t, torch.nn.Parameter) else "buffer"

    def item(node: Any) -> Optional[int]:
        """The list's place of ``node``: an item of it, or an item of ``validate_outputs`` of its items."""
        if node in position:
            return position[node]
        if getattr(node, "op", "") == "call_function" and node.target is operator.getitem:
            src, k = node.args[0], node.args[1]
            if _ca_op(getattr(src, "target", None), "validate_outputs") and isinstance(k, int):
                given = src.args[0] if src.args else None
                if isinstance(given, (list, tuple)) and 0 <= k < len(given):
                    return position.get(given[k])
        return None

    for n in gm.graph.nodes:
        prologue = getattr(n.target, "__module__", "") == "torch._dynamo.compiled_autograd"
        if n.op != "call_function" or getattr(n.target, "__name__", "") != "call_aot_bwd_prologue" or not prologue:
            continue
        if len(n.args) != 4:
            continue
        saved, symints, opaque, grads = n.args
        if not all(isinstance(a, (list, tuple)) for a in (saved, symints, opaque, grads)):
            continue
        results = {u.args[1]: u.name for u in n.users if u.target is operator.getitem and isinstance(u.args[1], int)}
        for j, s in enumerate(saved):
            i, name = item(s), results.get(len(symints) + j)
            if i is not None and name and s in position:
                entries[i].setdefault("aot", name)
        start = len(symints) + len(saved) + len(opaque)
        tangents = [results[k] for k in sorted(results) if k >= start]
        given = [g for g in grads if g is not None]
        if tangents and len(given) == len(tangents) and all(re.search(r"_tangents_\d+$", t) for t in tangents):
            for g, name in zip(given, tangents):
                i = item(g)
                if i is not None:
                    entries[i].setdefault("aot", name)
    by_name[placeholders[0].name]["ca_inputs"] = entries
    outs = [n for n in gm.graph.nodes if n.op == "output"]
    returned = outs[0].args[0] if outs and outs[0].args else None
    if not isinstance(returned, (list, tuple)) or outs[0].name not in by_name:
        return
    grad_of: list = []
    for r in returned:
        acc = r.args[0] if getattr(r, "op", "") == "call_function" and r.target is operator.getitem else None
        ok = acc is not None and r.args[1] == 0 and getattr(acc, "target", None) is not None
        ok = ok and _ca_op(acc.target, "AccumulateGrad") and len(acc.args) > 1
        grad_of.append(position.get(acc.args[1]) if ok else None)
    by_name[outs[0].name]["ca_grad_of"] = grad_of


def _ca_op(target: Any, name: str) -> bool:
    """Whether ``target`` is compiled autograd's op ``name`` (``torch._dynamo.compiled_autograd.ops.AccumulateGrad``)."""
    return getattr(target, "__module__", "") == "torch._dynamo.compiled_autograd.ops" and (
        getattr(target, "__name__", "") == name
    )
