"""Raw records of a capture: plain Python, what the hooks saw (``adapter.py``) or what a TORCH_TRACE log
holds (``trace_import.py``), turned into model objects by ``build.py``. No torch import."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Optional


def now_us() -> float:
    """Wall clock in microseconds since the epoch: the clock of torch's chromium events."""
    return time.time_ns() / 1000.0


@dataclass
class RawKernel:
    name: str
    is_extern: bool
    scheduler_nodes: list[str]  # pre-fusion scheduler node names (op0, op1, ...)
    fx_nodes: list[str]  # post-grad node names
    buffer: Optional[str] = None  # for extern kernels: the buffer the call writes
    compiler_stack: list[tuple] = field(default_factory=list)  # (file, line, function, code)
    stack_traces: list[str] = field(default_factory=list)

    @property
    def report_name(self) -> str:
        """Its name in the report (``Kernel.name``): an extern call's callee with the buffer it writes
        (``extern_kernels.addmm[buf0]``: two addmm calls are two kernels), a generated kernel's own name (one kernel
        however many fused nodes call it). The one rule the report counts kernels by, and the name ``capture``'s
        ``kernel:`` events give (the progress lines of the magic and the CLI count those)."""
        return f"{self.name}[{self.buffer}]" if self.is_extern and self.buffer else self.name


@dataclass
class RawSchedNode:
    name: str
    kind: str
    members: list[str]
    fx_nodes: list[str]
    reads: list[str]
    writes: list[str]
    outputs: list[str]
    # the buffers it writes in place (Inductor's mutations: ``x.add_(1)`` of a graph input ``arg0_1``), by the name
    # of its own buffer that does it: ``{"buf2": "arg0_1"}``
    mutates: dict[str, str] = field(default_factory=dict)
    # Inductor's own view of the bytes the node moves, per buffer (post-fusion nodes only): see _costs
    read_bytes: Optional[dict[str, int]] = None
    write_bytes: Optional[dict[str, int]] = None
    estimated_runtime_ms: Optional[float] = None
    # what Inductor's accounting leaves out or overcounts (see torchread._extra_reads): the graph constants the node
    # reads (frozen weights, packed weights) with their bytes, and the buffers it reads only through an index (an
    # embedding's table) with the most bytes its indexed loads can fetch
    constant_read_bytes: Optional[dict[str, int]] = None
    gather_read_bytes: Optional[dict[str, int]] = None
    # the arithmetic its loops do (post-fusion nodes only, generated code: iterations x arithmetic ops of each
    # member's loop body, torchread.loop_flops); None for a template, an extern call, a node of another kind
    loop_flops: Optional[int] = None


@dataclass
class RawGraph:
    """One Inductor graph compilation (one GraphLowering)."""

    key: int
    compile_id: str
    graph_kind: str
    start_us: float
    post_grad_nodes: list[dict] = field(default_factory=list)
    pre_fusion: list[RawSchedNode] = field(default_factory=list)
    post_fusion: list[RawSchedNode] = field(default_factory=list)
    kernels: list[RawKernel] = field(default_factory=list)
    fusion_refusals: list[tuple[str, str, str]] = field(default_factory=list)
    output_code: str = ""
    graph_inputs: list[str] = field(default_factory=list)
    graph_outputs: list[str] = field(default_factory=list)
    loaded: Optional[bool] = None  # the compiled module was loaded (None: not known, as in a trace import)
    # read from torch's caches, not compiled in this run (a TORCH_TRACE import reads it from the log's cache-hit
    # artifacts): "fx_graph" (Inductor's FX-graph cache), "aot_autograd" (AOT autograd's cache, with the graphs of
    # its compile id); "" for a graph Inductor compiled (the in-process capture turns those caches off)
    cache_hit: str = ""
    outputs_read: bool = False  # graph_outputs read (lowering had made them when a hook saw the graph)
    # a training forward's outputs: those returned to the user's code, and those it saves for the backward (the
    # outputs after the user's, as AOT autograd lays them out); both empty where not known
    returned_outputs: list[str] = field(default_factory=list)
    saved_outputs: list[str] = field(default_factory=list)
    # each output buffer -> the post-grad node returned in its place (torchread.output_nodes); {} where not known
    output_nodes: dict[str, str] = field(default_factory=dict)
    # each value the graph returns, position by position: {buffer, node, view, role} (torchread.graph_outputs)
    outputs: list[dict] = field(default_factory=list)
    autotune: list[dict] = field(default_factory=list)  # {op, inputs, choices: [{name, time_ms}]}
    runtime: dict[str, dict] = field(default_factory=dict)  # kernel name -> launch metadata after running
    aot: bool = False  # an AOTInductor compile (aot_mode)
    # a subgraph Inductor lowers inside another graph (a torch.cond branch, a while_loop body): its name
    # ("true_graph_0") and the key of the graph whose output code holds it; "" and None for the others
    subgraph: str = ""
    parent_key: Optional[int] = None
    subgraph_kernels: list[str] = field(default_factory=list)  # of a parent: the kernels its subgraphs recorded
    memory: Optional[dict] = None  # buffers and input sizes for the memory timeline (capturing/memory.py)
    # Inductor's autotuning settings as this graph compiled ({max_autotune, gemm_backends, freezing}; None: not read)
    autotune_mode: Optional[dict] = None
    # the vector instruction set its C++ kernels were generated for, (name, bits) (torchread.cpu_vec_isa); None: no
    # C++ kernel, or not read
    cpu_isa: Optional[tuple[str, int]] = None
    # the user's graph passes set in Inductor's config as this graph compiled: [{setting, name}] (adapter._custom_passes)
    custom_passes: list[dict] = field(default_factory=list)
    cudagraphs: bool = False  # compiled with config.triton.cudagraphs on (mode="reduce-overhead")
    cudagraphs_used: bool = False  # torch wrapped it in CUDA graphs (compile_fx.cudagraphify ran)
    cudagraph_skips: list[str] = field(default_factory=list)  # torch's "skipping cudagraphs due to ..." messages
    # a frozen graph's constants -> where each comes from, as torch made it (capturing/constants.py): {"input": "arg3_1"}
    # or {base, others, ops, shape, dtype}; {} where none was seen (no freezing, a TORCH_TRACE import)
    constant_origins: dict[str, dict] = field(default_factory=dict)
    device: str = ""  # the devices of its code (GraphLowering.device_types: "cpu", "cuda", "cpu,cuda"); "" not read
    # the torch._dynamo.reset() calls the capture had seen when it began (compile ids start again at 0/0 after one):
    # the trace records of its compile id are those logged since (their ``RESETS`` key), not an earlier compile's
    resets: int = 0
    # the path from the user's call to where this graph's lowering starts (the first GraphLowering.call_function) and
    # to the scheduler's fusion (Scheduler.fuse_nodes), trimmed as a kernel's compiler_stack; [] where not seen
    lowering_stack: list[tuple] = field(default_factory=list)
    fusion_stack: list[tuple] = field(default_factory=list)
    # what its record cannot hold, by the panel's section that would show it (Compile.unrecorded): a TORCH_TRACE
    # import's rules.TRACE_UNRECORDED, {} where the capture's hooks saw the compile
    unrecorded: dict[str, str] = field(default_factory=dict)


def aot_lowered(graph: RawGraph) -> bool:
    """Whether ``graph`` is an AOTInductor compile that lowered something (scheduler nodes or output code): those are
    the compiles the report numbers ``aot/0``, ``aot/1``... in order (AOTInductor gives them no compile id: ``"?"``),
    in ``build._with_aot_code`` and in ``capture``'s ``kernel:`` events as they are made."""
    return graph.aot and bool(graph.post_fusion or graph.output_code)


#: The key the capture adds to its own copy of a structured-trace record's metadata logged after it saw the N-th
#: ``torch._dynamo.reset()`` (absent before any): the records of compile id ``0/0`` after a reset are another
#: compile's than those before it (``RawGraph.resets``)
RESETS = "lens_resets"


@dataclass
class RawWindow:
    """A span during which dynamo (or a lazy backward) compiled: from the callbacks."""

    trigger: str  # "DYNAMO" | "LAZY_BACKWARD" | ...
    compile_id: str
    start_us: float
    end_us: Optional[float] = None
    user_stack: list[tuple] = field(default_factory=list)


@dataclass
class Raw:
    t0_us: float
    diagnostics: list[tuple[str, str, str]] = field(default_factory=list)  # (code, message, detail)
    #: What the captured code raised (``capture.__exit__``), so that the report can tell a frame torch
    #: raised for from one it ran eagerly.
    raised: Optional[BaseException] = None
    graphs: list[RawGraph] = field(default_factory=list)
    windows: list[RawWindow] = field(default_factory=list)
    trace: list[tuple[dict, Any]] = field(default_factory=list)  # (metadata, payload) in order
    dynamo_graphs: dict[str, list[dict]] = field(default_factory=dict)  # compile id -> nodes (its latest graph)
    # every graph dynamo handed to Inductor, (time kept, compile id, nodes) in order: after a torch._dynamo.reset()
    # compile ids start again at 0/0, and the compile "0/0 #2" is not the graph of the first "0/0"
    dynamo_graph_log: list[tuple[float, str, list[dict]]] = field(default_factory=list)
    #: The user's ``torch.compile()`` calls: ``{target, backend, time_us, user_stack, ...}``, with ``duration_us`` once
    #: the call returned (``adapter._install_torch_compile``).
    compile_calls: list[dict] = field(default_factory=list)
    #: What the capture's start did before ``t0_us`` (``adapter.capture_start``): ``{duration_us, imported_inductor}``;
    #: None where no capture started (a TORCH_TRACE import).
    start: Optional[dict] = None
    #: The trace key of a compile (``build._trace_key``) -> the classes of its frame's ``self``, most derived first
    #: (``["AdamW", "Adam", "Optimizer", "object"]``): the frame of an inherited method (``Adam.step`` run by an
    #: ``AdamW``) is named by the class of the object that ran it. Absent for a frame with no ``self``.
    self_types: dict[str, list[str]] = field(default_factory=dict)
    #: The trace key of a compile -> its frame's name for ``self`` where that is another (``def forward(s, x)``:
    #: ``s``): the root of its sources that is the compiled module (``rules.module_relative``'s ``own``).
    self_names: dict[str, str] = field(default_factory=dict)
    resets: list[dict] = field(default_factory=list)  # the user's torch._dynamo.reset() calls: {time_us, user_stack}
    #: What dynamo held compiled when the capture began (``adapter._compiled_before``), ``(function, file, line)`` of
    #: each function, and whether the capture's start reset it (``"reset"``: they compile again at their next call)
    #: or kept it (``"kept"``, ``capture(reset=False)``: a call that finds one of those compiles compiles nothing);
    #: ``None`` where the capture did not look (a capture inside another, an import).
    dynamo_before: Optional[dict] = None
    #: Calls of torch.compile'd functions whose own frame dynamo skipped (``adapter._install_skip_hook``):
    #: ``{function, file, line, reason, time_us, user_stack, forward, call, compiled}``; ``forward``: what the call
    #: runs, skipped too (``{function, file, line, reason}``: ``Sequential.forward`` after ``Module._call_impl``);
    #: ``call``: the call while it runs (``adapter._call_key``); ``compiled``: a compile started inside it;
    #: ``module``: the call went through torch's module-call wrappers (``Module.compile()``).
    skipped_calls: list[dict] = field(default_factory=list)
    #: AOTInductor compiles seen starting (``aot_export_module``): ``{start_us, user_stack, entry, inputs}``,
    #: ``inputs`` the lowered graph's placeholders as ``{name: [role, display name]}``.
    aot_calls: list[dict] = field(default_factory=list)
    device: str = "cpu"
    #: Rebuilt from a TORCH_TRACE log (``trace_import``), not captured: a streamed import makes each forward before
    #: its backward is read, so what only the backward tells (``Compile.backward_compiled``) is left unknown.
    imported: bool = False
    #: The caches the capture turned off (``adapter._caches_off``: ``fx_graph_cache``, ``enable_autograd_cache``...),
    #: those that were on: a compile that torch makes otherwise on a cache hit is said (``build._cache_notes``).
    caches_off: list[str] = field(default_factory=list)

    def diag(self, code: str, message: str, detail: str = "") -> None:
        """Note a diagnostic (see ``model.DIAGNOSTIC_CODES``); the same one twice is kept once."""
        entry = (code, message, detail)
        if entry not in self.diagnostics:
            self.diagnostics.append(entry)


def loads_payload(payload: Any) -> Any:
    if isinstance(payload, str):
        try:
            return json.loads(payload)
        except ValueError:
            return payload
    return payload
