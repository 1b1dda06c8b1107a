"""The report: a plain, torch-free record of what Inductor did.

Everything in inductor_lens renders a :class:`Report`. It is made of frozen dataclasses that
serialize to JSON (``Report.to_json``) and load back without torch (``load``); the JSON field
names are a public contract, documented in ``docs/report-schema.md`` and versioned by
``SCHEMA_VERSION``.

Names are stable and readable: compile ids look like ``"0/0 forward"``, fused nodes keep
Inductor's names (``op0_op1``), kernels keep theirs (``cpp_fused_add_cos_0``).
"""

from __future__ import annotations

import dataclasses
import json
import operator
import os
import reprlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from . import hooks
from . import intern as _intern
from . import lazy as _lazy
from . import text as _text
from .plain import ReportError, from_plain_fields, to_plain
from .rules import (
    STAGES,
    available_views,
    break_inside,
    break_inside_text,
    break_summary,
    breaks_text,
    compile_why,
    empty_frame_words,
    few_runs_text,
    file_label,
    frame_label,
    frame_stage,
    frames_met,
    function_label,
    high_water_bounds,
    kernels_text,
    launch_value_text,
    least_bytes_text,
    memory_curve_texts,
    memory_held_text,
    memory_high_water_text,
    memory_net_text,
    memory_peak_note,
    memory_peak_text,
    memory_saved_table_text,
    memory_saved_text,
    module_call_glue,
    noisy_text,
    nothing_text,
    readable_reasons,
    recompile_limit_text,
    runs_text,
    saved_group_notes,
    saved_rollup_note,
    short_op,
    source_marks,
    stack_line_text,
    timing_text,
    unattributed_text,
    uncounted_in_source,
    uncounted_words,
    when_text,
    wrapped_by,
)

SCHEMA_VERSION = 2

#: The generation of the derived fields (``report/finish.py``) a report holds. A report written before
#: derived fields were added (no ``derived`` key, or a smaller number) gets them filled when it is loaded.
DERIVED_VERSION = 42  # 2: Trigger.summary; 3: Compile.module_view, FusedNode.group_path; 4: FusedNode.no_line_reason;
# 5: a backward's saved inputs named by what made them, input copies labelled, Trigger.kind ahead_of_time;
# 6: FusedNode.built_lines (where the user's code built the modules of ops that ran inside torch)
# 7: module paths inferred where a compile recorded none (Compile.modules_inferred, report/module_paths.py)
# 8: Kernel.built_lines, and the roll-ups by line name built lines (LineTime/BytesBy/RecomputedBy.built)
# 9: the Memory view's rows say their line (SavedTensor/SavedGroup/LiveBuffer/Recomputed.user_line, RowLine)
# 10: LiveBuffer.module (the peak table's module column, decided in Python)
# 11: module views again (repeats by sub-modules, openings by rows: report/modules.py), autotune choices' `what`
# 12: Compile.edges (the fusion graph's data edges, rules.fusion_edges: the front end drew its own)
# 13: module views again (a kernel call's fused nodes one box in the openings' count; repeats in any order)
# 14: a forward's graph_note says when its backward compiled (Compile.backward_compiled), never only "at the first
#     .backward()"
# 15: Compile.contents and box_count (the panel's and the compile picker's counts of fused nodes and kernels)
# 16: user lines skip torch's own frames after the user's (rules.line_frame); Kernel.user_lines in graph order
# 17: FusedNode.in_place (what a fused node writes in place, rules.in_place_text)
# 18: an input copy has no user line of its own (not its kernel's, which other nodes ran)
# 19: FusedNode.in_place says a parameter's .grad is its gradient, not a parameter
# 20: a training forward's graph_note says when the tensors it saves are not known (no backward in the report);
# ModuleRepeat.summary says how each instance it names differs; Compile.output_names; LaunchArg.holds;
# LiveBuffer.op, and a copy of an input its owner's module and no line; saved_by_line's row of no line; a top-level
# Sequential child's index as Python indexes it in saved names
# 21: FusedNode.user_lines in the order of the node's ops, as Kernel.user_lines (a line Inductor's origins name of an op
# of another kernel, a custom op reading its result, came first); Compile.size_guards
# 22: LaunchArg.holds names a tensor the graph holds by its target (a frozen graph's parameter ``_frozen_param1``);
# a C++ GEMM template kernel's autotune ``chosen`` (rules.autotune_chosen); an incomplete compile's graph_note says so
# 23: FusedNode.no_kernel_reason of a runtime check (``_assert_scalar``) and of ``.item()`` (``_local_scalar_dense``); the
# no_line_reason of Inductor's random seeds (rules.seeds_reason); user lines leave torch's own out beside the user's
# 24: a backward's output buffers named by the gradient they are in LaunchArg.holds and LiveBuffer.op, as in
# Compile.output_names (report/lines.gradient_buffers); Kernel.extern_why
# 25: FusedNode.branch_compiles (a torch.cond's links to its branches' compiles, finish.link_branches); Compile.outputs
# (GraphOutput, one per position), Compile.edges to outputs by position and alias edges, Compile.graph_note naming
# the outputs as the ovals do; autotune heading, timed_note and fusion_note, epilogue without get_attr nodes;
# LaunchArg.holds of a frozen graph's constants by Compile.constant_names; user_lines led by the line that defines the
# kernel (rules.lead_line); Frame.function_label; KernelProfile.timing_text and noisy, StepProfile.runs_text by its
# statistic; built lines only where one call of the compiled class can have built it (report/built.one_maker)
# 26: KernelLaunch.grid_text and config_text, a Triton template's block sizes and grid (report/finish.launch_facts)
# 27: module paths inferred again (report/module_paths.py: a tied weight's op in the module its line calls, autograd's
# gradient sums of none, an op recomputed in a backward in its forward's module); GraphOutput names from GraphNode.variable
# (27 too: CudaGraphs.skip_note, the mutated input a CUDA-graph skip names, finish.mutated_inputs)
# 28: the profile's roll-up rows' noisy kernels (LineTime/ModuleTime/KindTime.noisy, lines.rollups_noisy)
# 29: Kernel.in_place (a call of several fused nodes: all it writes in place, rules.call_in_place_text); the calls of
# one module told apart (Compile.module_view.calls, FusedNode.group_path's call keys cell@N, from GraphNode.module_calls)
# 30: LaunchArg.holds of a buffer of a fused node that writes several (finish._several_writes: by the graph output it is,
# else by the one op whose result another node reads)
# 31: a _foreach_ op's Kernel.cost (every tensor of its list); Memory.curve_peak_text/curve_high_water_text/
# curve_least_text, SavedGroup.note, the regions' labels under a module's longest run
# 32: FusedNode.merge_text (rules.merge_text: inlined at lowering, fused or grouped into a foreach kernel by the
# scheduler), Phase.what of GraphLowering.run and Scheduler.__init__
# 33: FusedNode.merge_text names a C++ kernel's other fused nodes, and an import's says where its ops were merged is
# not known (rules.unrecorded_merge_text); Compile.unrecorded of an imported compile; Kernel.source_note of a profiled
# C++ kernel
# 34: Kernel.stage_shared/stage_note, Compile.stage_shared/stage_note (rules.stage_paths: was worked out in panel.js);
# FusedNode.merge_text names only its own call's mates of a reused C++ kernel
# 35: measured time by launch (report/lines.py): FusedNode.time (a kernel called twice: each call's box its own launch),
# StepProfile.by_module and by_line by each launch's fused nodes, Compile.time_by_line (the Source view's per-line time,
# split as by_line), LineTime.whole_us and text
# 36: tensors of a size known only when the graph runs (u0) said unknown: SavedGroup.bytes null, BytesBy.bytes_text,
# Memory.saved_table_text/saved_rollup_note/held_text, and the high-water mark's bounds (Memory.high_water_line_bytes)
# 37: FusedNode.merge_text names the ops Inductor's origins list that the node loads, not computes (FusedNode.read_ops)
# 38: a call of a repeated region (invoke_subgraph, torch.compiler.nested_compile_region) is a box, not glue:
# FusedNode.branch_compiles, label and no_kernel_reason (its launches); the region's Compile.graph_note (rules.region_note)
# 39: a repeat of two siblings a backward runs last first is labelled up (ModuleRepeat.label/key experts.1-2, not 2-1),
# the Memory view's regions and folded rows named as the view names it (finish._memory_labels);
# LaunchArg.holds of a Welford reduction's result no op names (a batch norm's m2: finish._welford_holds)
# 40: FusedNode.refusals (the panel's "Why not fused" rows, finish.refusal_rows: were grouped in panel.js) and
# Report.time_by_line (the Source view's all-compiles gutter: viewdata.js added up the compiles' rows)
# 41: FusedNode.box_kind and op_count (a region call's box said "extern" and counted its subgraph's get_attr as an
# op); a training forward's graph_note says a model's parameters require grad only where the graph has some;
# Kernel.no_line_reason and no_line_text (the kernel table's line cell of a kernel no line of the user's ran)
# 42: ModuleRepeat.summary counts the fused nodes that run apart with "+" (not in "14-16 fused nodes each": layers.0
# expanded showed 17); a repeated region's graph_note names the call its ops are named after (finish.named_in: a
# backward's said its first call's, layers.2, where its boxes say layers.0); an inference graph that writes the model's
# parameters in place says it is an update (an optimizer's step), rules.graph_note; Compile.kernels_note (a region's
# calls beside the caller's own kernels)

#: Languages a kernel may be written in: what Inductor's output code defines (``async_compile.<kind>``),
#: ``extern`` for calls of library kernels, ``other`` when the source was not found.
KERNEL_LANGUAGES = ("cpp", "triton", "cuda", "rocm", "halide", "mps", "xpu", "cutedsl", "extern", "other")


class _Record:
    """The base of every dataclass of the model, which are ``@dataclass(frozen=True, slots=True)`` with
    ``__eq__``, ``__hash__`` and ``__repr__`` written here once, to the letter of what ``@dataclass`` generates
    per class: the values of all fields as one tuple compared and hashed (the same class only), and
    ``Name(field=value!r, ...)``, ``...`` where it recurses. ``@dataclass`` writes each generated method as
    Python source and compiles it when the module is imported: for these classes that was a third of this
    module's import time, which every command pays (``tests/report/test_model.py`` holds both to the same
    results)."""

    __slots__ = ()

    def __eq__(self, other: Any) -> Any:
        if other.__class__ is self.__class__:
            values = _VALUES.get(self.__class__) or _values_of(self.__class__)
            return values(self) == values(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((_VALUES.get(self.__class__) or _values_of(self.__class__))(self))

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        names = _FIELD_NAMES.get(self.__class__) or _names_of(self.__class__)
        return f"{self.__class__.__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"


#: class -> its field names, and a function giving the tuple of its fields' values (filled at first use)
_FIELD_NAMES: dict = {}
_VALUES: dict = {}


def _names_of(cls: type) -> tuple:
    names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _values_of(cls: type) -> Callable[[Any], tuple]:
    names = _FIELD_NAMES.get(cls) or _names_of(cls)
    get = operator.attrgetter(*names) if names else None
    values = _VALUES[cls] = (
        get if len(names) > 1 else (lambda obj: (get(obj),)) if names else (lambda obj: ())  # always a tuple
    )
    return values


def _record(cls: type) -> type:
    """``@dataclass(frozen=True, slots=True)``, its equality, hash and repr inherited from :class:`_Record`."""
    return dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)


@_record
class Frame(_Record):
    """One frame of a Python stack: where a line of code ran.

    ``file`` is the path, or ``cell [N]`` for a notebook cell (N its execution count; ``line`` is then
    the line in the cell as the user sees it). ``stage`` says where the frame comes from (one of
    ``STAGES``: ``user``, ``dynamo``, ``aot``, ``inductor``, ``lowering``, ``scheduler``, ``codegen``,
    ``runtime``, ``torch``, ``library``, ``other``); when not given it is worked out from ``file``.
    ``is_user`` is ``stage == "user"``: the user's code, not torch, not inductor_lens, not a library.
    ``function_label``: the function as the views name it (``rules.function_label``), ``function`` itself but for
    dynamo's resume function after a graph break, ``torch_dynamo_resume_in_train_step_at_36``, which is
    ``train_step (after the graph break at line 36)``, and the qualified name where one was recorded.
    ``qualname``: the code's qualified name (``code.co_qualname``: ``ConvertFrame.__call__``,
    ``make_foreach_pointwise.<locals>.inner``) where it is not ``function``; empty where it is, where Python had
    none (3.10), and in stacks read from a log (TORCH_TRACE, FX ``stack_trace``), which carry names only.
    ``file_label``: the file as the views name it (``rules.file_label``): a torch or library file by its path inside
    site-packages (``torch/_dynamo/convert_frame.py``), the user's by its name. ``function_label`` and
    ``file_label`` are derived on every construction (a stored value is ignored). ``note``: a sentence the views
    show under this frame of a compiler stack (``rules.compiler_stack_notes``: where dynamo's frame-evaluation
    callback is entered from C, where dynamo hands its graph to Inductor, the FX graph cache's bypass branch).
    """

    file: str
    line: int
    function: str
    code: str = ""
    stage: str = ""
    is_user: bool = False
    function_label: str = ""
    qualname: str = ""
    note: str = ""
    file_label: str = ""

    def __post_init__(self) -> None:
        if self.qualname == self.function:
            object.__setattr__(self, "qualname", "")
        stage = self.stage if self.stage in STAGES else frame_stage(self.file, self.function, self.qualname)
        object.__setattr__(self, "stage", stage)
        object.__setattr__(self, "is_user", stage == "user")
        object.__setattr__(self, "function_label", function_label(self.function, self.qualname))
        object.__setattr__(self, "file_label", file_label(self.file))


@_record
class Trigger(_Record):
    """What made Inductor compile: the call of the user's code that started it.

    ``kind`` is ``first_call`` (dynamo traced a frame for the first time), ``recompile``
    (a guard failed; ``reason`` spells it out), ``compiled_autograd`` (compiled autograd traced the whole autograd graph of a ``.backward()`` call:
    ids ``!A/F/N``, ``graph_kind`` ``backward``), ``lazy_backward`` (the backward graph is
    compiled at the first ``.backward()``), ``ahead_of_time`` (AOTInductor compiled an exported program at the
    user's ``aoti_compile_and_package`` call, which ``user_stack`` ends at when the capture saw it), ``after_reset``
    (dynamo's first call of code it had compiled before in the capture, until the user's ``torch._dynamo.reset()``
    made it forget: compiled again; ``reason`` names the reset's line and the earlier compile), or ``unknown``.
    """

    kind: str
    reason: str
    user_stack: list[Frame] = field(default_factory=list)
    time_us: Optional[float] = None
    #: ``kind`` in words, what "When it compiled" says (``rules.trigger_summary``): "at the first call of the
    #: compiled function", "at a recompile (a guard failed)", ...
    summary: str = ""
    #: The call as the views cite it, ``"train.py:12 y = model(x)"`` (``rules.stack_line_text`` of ``user_stack``;
    #: ``""`` without one). Derived on every construction; a stored value is ignored.
    line: str = ""
    #: When dynamo handed the graph it traced to Inductor (torch's ``backend_compile`` phase began: the backend,
    #: Inductor's ``compile_fx``, was called) and when Inductor gave the compiled code back (that phase ended), µs
    #: from the capture's start. ``time_us`` is when dynamo began (the call that started it); None for a compile
    #: dynamo did not start (a lazily compiled backward, AOTInductor), where the phase was not recorded, and in
    #: reports made before them.
    inductor_start_us: Optional[float] = None
    inductor_end_us: Optional[float] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "line", stack_line_text(self.user_stack))


@_record
class Phase(_Record):
    """A span of the compile timeline; ``start_us`` is measured from the capture's start."""

    name: str
    start_us: float
    duration_us: float
    depth: int = 0
    #: ``name`` for people (``rules.phase_words``): a few words shown beside it (``fusion``), and a sentence; ``""``
    #: for an event not known and in reports made before them.
    gloss: str = ""
    what: str = ""


@_record
class GraphNode(_Record):
    """A node of an FX graph."""

    name: str
    op: str
    target: str
    inputs: list[str] = field(default_factory=list)
    #: Sizes: ints where static, the symbolic expression as text where dynamic (``["s0", 768]``,
    #: ``"2*s0 + 1"``); a list of such lists for a node that yields several tensors. Never specialised.
    shape: Optional[list] = None
    dtype: Optional[str] = None
    user_stack: list[Frame] = field(default_factory=list)
    #: nn.Module path that produced the node, outermost first, e.g. ``["layers.0", "layers.0.mlp"]``.
    module_stack: list[str] = field(default_factory=list)
    #: The class of each module in ``module_stack``, e.g. ``["Block", "MLP"]`` (same length, or empty).
    module_types: list[str] = field(default_factory=list)
    #: Which call of each module in ``module_stack`` made the node, as dynamo numbers a module's calls in one graph
    #: (0 its first, 1 the next: a ``GRUCell`` called in a loop), same length. Empty in a graph where every module
    #: runs once, where torch numbers no call (torch 2.11) and in reports made before it; empty too for an op whose
    #: module the lens inferred (a backward op torch tied to no forward op): which call made it is not known.
    module_calls: list[int] = field(default_factory=list)
    #: The concrete sizes torch used at capture time, same layout as ``shape``; only set when a dim is
    #: symbolic (None otherwise).
    shape_hint: Optional[list] = None
    #: For graph inputs: what the input is, ``parameter``, ``buffer``, ``input`` (an argument of the
    #: user's call), ``global`` (a tensor the user's code reads from its module's globals), ``attribute`` (a tensor
    #: dynamo held as the graph module's own and AOT lifted into an input, no parameter nor a module's buffer: an
    #: optimizer's state), ``tangent`` (a gradient flowing into a backward graph), ``saved`` (a forward
    #: activation saved for backward), or ``""`` when not known.
    role: str = ""
    #: For graph inputs: the name a user knows, e.g. ``layer1.0.conv1.weight`` or ``x``; a backward's ``saved``
    #: input by the forward op that made it and that op's module, ``h.0.mlp gelu (saved)``, and which of its
    #: results it is where it has several, ``h.0.ln layer_norm: mean (saved)`` (``rules.saved_name``); ``""`` if
    #: none.
    display_name: str = ""
    #: The op for people, for a ``call_function`` node: ``aten.mm.default`` -> ``mm``,
    #: ``_operator.getitem`` -> ``getitem`` (``rules.short_op``); ``""`` for other nodes. Filled when not given.
    short_op: str = ""
    #: The op this node was decomposed from, for people (``rules.original_op``), where it is another: ``gelu`` for
    #: the ``mul`` and ``erf`` of a GELU, ``native_layer_norm`` for a layer norm's ``rsqrt``; ``""`` otherwise.
    original_op: str = ""
    #: Which result it is of an op that returns several, by name (``rules.output_name``): a layer norm's ``mean``
    #: (the node its decomposition returned second), SDPA's ``logsumexp`` (a ``getitem`` of the call); read at
    #: capture; for a ``select``/``slice``, the part of its input it takes as Python indexes it, ``[1]``,
    #: ``[:, :, 16:32]`` (the q, k, v of ``qkv[0], qkv[1], qkv[2]``) (``""`` otherwise, and in reports made before it).
    output: str = ""
    #: For a higher-order op that runs one op and only orders it after others (``control_deps``, in which
    #: ``fallback_random`` wraps each random op): that op's target (``aten.rand_like.default``), which names the node
    #: (``short_op``) and its fused node's ``ops``. For a call of a Python function a lowering pattern of Inductor's put
    #: in the graph (freezing's oneDNN conv + relu: ``torch._inductor.fx_passes.mkldnn_fusion.fn``): the op of the
    #: extern kernel it lowers to (``mkldnn._convolution_pointwise.binary``), else the op it replaced without its
    #: overload. ``""`` otherwise, and in reports made before it.
    wraps: str = ""
    #: For the output node: what it returns, position by position, the name of the node at each, ``""`` where it
    #: returns none (``None``: in a backward, the gradient of a forward input that needs none), which ``inputs`` leave
    #: out (read at capture, ``torchread.returned_names``, and from a TORCH_TRACE import's printed graph);
    #: ``[]`` for other nodes and in reports made before it.
    returns: list[str] = field(default_factory=list)
    #: For an op in a region ``torch.utils.checkpoint`` wraps, the policy AOT autograd's partitioner gave it (FX meta
    #: ``recompute``, a ``CheckpointPolicy``, lower case: ``prefer_recompute``, ``must_recompute``, ``must_save``,
    #: ``prefer_save``; read at capture); ``""`` for other ops and in reports made before it.
    recompute: str = ""
    #: In dynamo's graph: the local variable of the user's code dynamo named the node after (``y`` for ``y = x @ w``;
    #: ``torchread.variable_name``; only where the user's own line assigns it, ``build.user_variable``), which names a graph output that holds it (``GraphOutput.name``); ``""`` for a
    #: node named by its op (``mul`` for a ``z * 2`` stored nowhere), in other graphs, a TORCH_TRACE import and in
    #: reports made before it.
    variable: str = ""
    #: For a ``call_function`` node of a graph Inductor lowered: the lowering function ``GraphLowering.call_function``
    #: ran for it, read from torch's ``lowerings`` table once the graph was lowered (fallbacks made in the compile are
    #: there too), outermost first: the function itself (``make_pointwise.<locals>.inner``, ``tuned_mm``,
    #: ``fallback_handler.<locals>.handler``) or a registration wrapper and the lowering it calls
    #: (``register_foreach_inplace.<locals>.fn`` -> ``make_foreach_pointwise.<locals>.inner``); each a ``Frame`` of
    #: its definition (``function`` its qualified name). ``[]`` for other nodes, dynamo's graph, a node with no
    #: lowering (a ``getitem`` of a list of results), a TORCH_TRACE import and reports made before it.
    lowered_by: list[Frame] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.short_op and self.op == "call_function":
            object.__setattr__(self, "short_op", short_op(self.wraps or self.target))


@_record
class Graph(_Record):
    """An FX graph: its nodes in order, and its readable code."""

    nodes: list[GraphNode] = field(default_factory=list)
    code: str = ""


@_record
class BuiltLine(_Record):
    """A line of the user's code that BUILT modules whose ops ran inside torch (``FusedNode.built_lines``).

    Not a line that ran: the ops' stacks end inside torch (``nn.Sequential``'s forward calling ``nn.Linear``'s),
    and this is where the user's file constructed the module they came from (``report/built.py``):
    ``nn.Linear(16, 32)`` as the first argument of ``nn.Sequential(...)``, ``self.fc = nn.Linear(d, d)`` in an
    ``__init__``, the element of ``[Block() for _ in range(n)]``. ``modules``: the module paths built on this
    line that the node's ops come from (``GraphNode.module_stack``, the innermost one that has a line), in op
    order; ``module_types``: their classes, one each.
    """

    file: str
    line: int
    code: str = ""
    function: str = ""
    modules: list[str] = field(default_factory=list)
    module_types: list[str] = field(default_factory=list)


@_record
class Refusal(_Record):
    """One row of a fused node's "Why not fused" (``FusedNode.refusals``): a neighbour Inductor tried to fuse it
    with and did not, all the member pairs it tried between the two (``Compile.fusion_decisions``) in one row."""

    #: The neighbour's fused node (a box of the same compile the row links to); null where the refusal names none.
    other: Optional[str]
    #: The row's key: the neighbour's name, or where it has none the pre-fusion pair (``op3 / op7``).
    name: str
    #: How the row names the neighbour: its box's label (or kernel); ``name`` where it is no box.
    text: str
    #: What tells the row apart where another row of the node, or the node itself, reads alike (fused nodes of one
    #: kernel call; another launch of the node's own kernel): the neighbour's name, shown after ``text`` and never
    #: cut with it (a Triton kernel's name is longer than the panel). ``""`` elsewhere.
    tell: str = ""
    #: Inductor's distinct reasons, in order (``FusionDecision.reason``, one per line each).
    reasons: list[str] = field(default_factory=list)
    #: The member pairs tried (``op3 + op7``), in order, and in words what the row says of them: the one pair, or
    #: how many.
    pairs: list[str] = field(default_factory=list)
    pairs_text: str = ""


@_record
class BranchCompile(_Record):
    """A subgraph a call of control flow runs (``FusedNode.branch_compiles``): its name (``true_graph_0``) and the
    ``Compile.id`` of its compile (``0/0 inference #2``), where its kernels are."""

    name: str
    compile: str


@_record
class NodeTime(_Record):
    """Measured time of the kernel launches a fused node stands for (``FusedNode.time``, ``report/lines.py``): each
    call site of a kernel (``Kernel.call_sites``) is a launch, and its time goes to its lead node (the first of its
    fused nodes with a module, else its first): a kernel called for two BatchNorms puts one launch on each one's node.
    The profiler times a kernel's launches together: each call site gets an even share of ``KernelProfile.total_us``,
    so the nodes' times add up to the kernel's."""

    #: Time per run of its launches (microseconds), and its share of all kernels' measured time.
    us: float
    share: Optional[float] = None
    #: Launches per run it stands for, of its kernel's ``KernelProfile.calls``.
    launches: float = 1.0
    #: What the box's tooltip says of it (``rules.node_time_text``) where its kernel has several call sites: which
    #: launch it is, and that the time is their mean; ``""`` otherwise.
    text: str = ""


@_record
class FusedNode(_Record):
    """A scheduler node after fusion: what Inductor turned into (part of) one kernel call.

    ``fx_nodes`` are post-grad node names; ``reads``/``writes`` are buffer names, from which the
    edges between nodes are drawn; ``members`` are the pre-fusion scheduler nodes it was fused from.
    ``label`` is what its box says first: the op of an extern call (``mm``, ``convolution``); for a kernel that
    only copies graph inputs into another layout (``rules.is_input_copy``), what it is and what it copies, for
    its whole kernel call (``channels-last copy: conv1.weight, x, conv2.weight``); else the kernel's name.
    ``is_glue``: no kernel of its own (a ``getitem`` of a multi-output call, a nop or a view), drawn as an edge
    rather than a box. ``user_stack``: one stack per distinct user line of its
    ops (its kernel's stacks, or its own ops' when the kernel has none). ``user_lines``: the line that ran of each
    of those stacks (``rules.line_frame``: the innermost frame of the user's or a library's code), in the order its
    ops run but for the first: *the* user line every view names, the line that defines it (``rules.lead_line``).
    ``ops``: the distinct short op names of its FX ops (``GraphNode.short_op``), in order, tuple unpacking
    (``getitem``) and the graph inputs and constants it reads (``rules.NOT_OPS``) left out. ``group_path``: the boxes it is folded into in the fusion graph, outermost first,
    where that is not ``module_stack`` (a node of a repeated module: the repeat's key, ``ModuleRepeat.key``,
    comes before the instance; a node of the parent run inside an instance gets the instance; a node of a module
    called several times gets its call's key after the module, ``ModuleCalls.keys``); else empty.
    """

    name: str
    kind: str
    fx_nodes: list[str] = field(default_factory=list)
    kernel: Optional[str] = None
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    #: Inductor's own estimate of the node's run time (its scheduler's cost model), read at capture (in the unit it
    #: claims: ``capturing/torchread.estimated_ms`` undoes torch 2.11's peak FLOP/s in PFLOP/s).
    estimated_runtime_us: Optional[float] = None
    module_stack: list[str] = field(default_factory=list)
    label: str = ""
    is_glue: bool = False
    user_stack: list[list[Frame]] = field(default_factory=list)
    user_lines: list[Frame] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    group_path: list[str] = field(default_factory=list)
    #: Why no line of the user's is known for it (empty when ``user_lines`` has one), in words, as the panel says
    #: it (``rules.no_line_reason``): its ops come from code inside torch, or no FX op is linked to it (in a
    #: TORCH_TRACE import: torch logged no provenance map for its kernel).
    no_line_reason: str = ""
    #: Why it has no kernel (``kernel`` None), as the panel says it (``rules.no_kernel_reason``): a call of control
    #: flow's subgraphs (``torch.cond``) runs theirs, each a compile of its own; else a no-op, a view or a buffer
    #: reuse. Empty for a node with a kernel. Derived when a report is built or loaded.
    no_kernel_reason: str = ""
    #: The subgraphs a call of control flow runs (``torch.cond``'s ``true_graph_0`` and ``false_graph_0``) with the
    #: ``Compile.id`` of each one's compile (``0/0 inference #2``), in the order its box lists them: what its panel
    #: links to (``finish.link_branches``). ``[]`` for other nodes, and where a subgraph is not in the report.
    branch_compiles: list[BranchCompile] = field(default_factory=list)
    #: Where the user's code built the modules its ops come from (``BuiltLine``, ``report/built.py``), one per
    #: distinct line, in op order: only for a node with no ``user_lines`` (a line that ran wins), whose ops ran
    #: inside torch (an ``nn.Sequential`` of torch's layers). Built here, not ran here: views say so.
    built_lines: list[BuiltLine] = field(default_factory=list)
    #: The buffers it writes in place, as Inductor names them, recorded at capture (its buffers' mutations): a graph
    #: input (``arg0_1``: the caller's tensor, written by ``x.add_(1)`` or a BatchNorm's running statistics) or a
    #: buffer an earlier node made (``buf3``, by ``index_put_``). A TORCH_TRACE import reads the graph inputs its
    #: kernel writes from the printed post-grad graph (its in-place aten ops: ``copy_``), not the buffers made
    #: inside. Empty where nothing is written in place or nothing was recorded.
    mutates: list[str] = field(default_factory=list)
    #: What it writes in place, in words, as the panel says it (``rules.in_place_text``): each of ``mutates`` by the
    #: name the user knows (``x``, ``bn1.running_mean``). Empty when ``mutates`` is. Derived when a report is
    #: built or loaded.
    in_place: str = ""
    #: The post-grad ops of each of ``members`` (same order), as the capture read them from the pre-fusion scheduler
    #: nodes: ops of one member were computed in one loop by lowering (an unstored pointwise result is inlined into
    #: the loop that reads it: ``GraphLowering.run``), several members were fused by the scheduler
    #: (``Scheduler.fuse_nodes``). ``[]`` where not recorded (a TORCH_TRACE import, reports made before it).
    member_ops: list[list[str]] = field(default_factory=list)
    #: Where its ops were merged, in words (``rules.merge_text``): inlined at lowering, fused by the scheduler, or
    #: neither. ``""`` for glue. Derived when a report is built or loaded.
    merge_text: str = ""
    #: The measured time of the kernel launches it leads (``NodeTime``): what its box says and colours by time;
    #: null without a profile and for the other fused nodes of a launch. Derived (``report/lines.mark_times``).
    time: Optional[NodeTime] = None
    #: The ops Inductor's origins name for it whose values it loads from a buffer another node writes, rather than
    #: computing them (``capturing/build.py``, ``_GraphBuilder.computed_ops``): an op inlined into a view that a later
    #: op read keeps its origins after it was stored in a buffer of its own (a gather after a stored LayerNorm lists
    #: the LayerNorm). Left out of ``fx_nodes`` (and so of its label, ops, lines and merge text); Inductor's kernel
    #: name still counts them. ``[]`` where none, and in reports made before it.
    read_ops: list[str] = field(default_factory=list)
    #: Its "Why not fused" rows (``Refusal``): one per neighbour of ``Compile.fusion_decisions`` it was refused
    #: fusion with, in the decisions' order (``finish.refusal_rows``). Derived when a report is built or loaded.
    refusals: list[Refusal] = field(default_factory=list)
    #: The kind its box is drawn, counted and coloured as in every view (``Compile.contents`` counts the same): its
    #: control-flow op for a call of control flow's subgraphs with no kernel of its own (``invoke_subgraph``,
    #: ``cond``: Inductor's scheduler holds it as an extern node, but it calls no library), else ``kind``. Derived.
    box_kind: str = ""
    #: How many ops its box counts: its FX nodes less the graph's constants (``get_attr``: a region call's subgraph, a
    #: template's frozen parameter); an input copy's graph inputs count, the nodes it is linked to. Derived.
    op_count: int = 0


@_record
class Cost(_Record):
    """What one call of a kernel moves and computes; each number is null when unknown.

    ``bytes_read``/``bytes_written``: bytes of the buffers the kernel reads and writes (sizes x element size;
    a buffer made and used only inside a fused kernel is not counted). ``flops``: floating-point operations
    (2*M*K*N for a matmul; one per element and op for pointwise code). ``source`` says how each was obtained.
    """

    bytes_read: Optional[float] = None
    bytes_written: Optional[float] = None
    flops: Optional[float] = None
    source: str = ""
    #: Which of ``bytes_read``, ``bytes_written``, ``flops`` are upper bounds rather than counts (``source`` says
    #: why): what the kernel's loops can touch where that is below Inductor's count (``analysis/triton_bounds.py``:
    #: a gather or scatter whose indices may repeat), one element per indexed load of a gathered table, the dense
    #: count of a ``flex_attention``. A throughput or fraction of peak worked out from one is "at most"
    #: (``KernelProfile.at_most``). ``[]`` in reports made before it.
    upper_bounds: list[str] = field(default_factory=list)
    #: Where the operations ``flops`` counts are integer ops, their dtype (``int8``: a quantized convolution or
    #: linear's multiply-adds, two per multiply-add, which the views say in ops, ``kOP``, not FLOPs, and compare with
    #: the device's int8 peak where it is known); ``""`` for floating-point ops and in reports made before it.
    integer_ops: str = ""
    #: ``flops / (bytes_read + bytes_written)`` (FLOP per byte moved, rounded to 4 digits): where the kernel
    #: sits on a roofline. Null when either count is unknown or nothing is moved. Always worked out from
    #: the counts (a value given is ignored), so a copy with other counts cannot keep a stale one.
    arithmetic_intensity: Optional[float] = None

    def __post_init__(self) -> None:
        ai = None
        if self.bytes_read is not None and self.flops is not None:
            moved = self.bytes_read + (self.bytes_written or 0.0)
            if moved > 0:
                ai = round(self.flops / moved, 4)
        object.__setattr__(self, "arithmetic_intensity", ai)


@_record
class DeviceInfo(_Record):
    """The hardware a profile ran on and its peaks: ``peak_gbps`` (memory bandwidth, GB/s) and
    ``peak_tflops`` by dtype (``fp32``, ``tf32``, ``bf16``, ``fp16``); ``source`` names the datasheet or the
    measurement the numbers come from; ``threads``: on a CPU, the threads torch ran with
    (``torch.get_num_threads()``) when the profile was measured (a kernel's reproducer runs with as many), else
    null."""

    name: str
    peak_gbps: Optional[float] = None
    peak_tflops: dict[str, float] = field(default_factory=dict)
    source: str = ""
    threads: Optional[int] = None


class _ReadsLikeADict(_Record):
    """The 0.2 spelling of a profile, a dict: ``p["total_us"]``, ``p.get("runs")`` still read (deprecated),
    and so do the duplicate keys it had (``_ALIASES``)."""

    __slots__ = ()
    _ALIASES: dict = {}

    def __getitem__(self, key: str) -> Any:
        return self._read(key, 3)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self._read(key, 3)
        except KeyError:
            return default

    def _read(self, key: str, stacklevel: int) -> Any:
        import warnings

        # the warning names the line that read the key (``stacklevel``: past this method and its caller here)
        warnings.warn(
            f"{type(self).__name__} is a dataclass now: read .{self._ALIASES.get(key, key)} instead of [{key!r}]",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        try:
            return getattr(self, self._ALIASES.get(key, key))
        except AttributeError:
            raise KeyError(key) from None


def _upgraded(value: Any, where: str, aliases: dict) -> dict:
    """A profile's plain form with the 0.2 duplicate keys folded into their one name."""
    if not isinstance(value, dict):
        raise ReportError(f"{where}: expected an object, got {type(value).__name__}")
    out = dict(value)
    for old, new in aliases.items():
        if old in out:
            out.setdefault(new, out[old])
            del out[old]
    return out


@_record
class KernelProfile(_ReadsLikeADict):
    """Measured time of one kernel (``Kernel.profile``), the median over the profiled runs of the step (warm-up
    runs not counted; reports made before it: the mean, ``statistic``); each name one fact (see
    docs/report-schema.md). ``None``: unknown."""

    #: Time of the kernel per run: all its launches in one run of the step (microseconds), the ``statistic`` of the
    #: runs: their median (one stalled run of a few does not move it), the mean in reports made before it.
    total_us: float
    #: Sample standard deviation of the runs.
    std_us: float = 0.0
    #: How many runs were profiled.
    iterations: int = 0
    #: ``median`` or ``mean`` (reports made before it, where the key is missing): what ``total_us`` is of the runs.
    statistic: str = "mean"
    #: The fastest and the slowest run (microseconds); None in reports made before it.
    min_us: Optional[float] = None
    max_us: Optional[float] = None
    #: Launches per run, and the time of one launch (``total_us / calls``).
    calls: float = 1.0
    per_call_us: float = 0.0
    #: ``cpu`` or the device type the times were measured on (``cuda``).
    device: str = ""
    #: ``total_us`` as a share of all kernels' time, and of the step's whole device time.
    share: Optional[float] = None
    share_of_step: Optional[float] = None
    #: Throughput of one launch from ``Kernel.cost``: GB/s, TFLOP/s, FLOPs per byte.
    achieved_gbps: Optional[float] = None
    achieved_tflops: Optional[float] = None
    arithmetic_intensity: Optional[float] = None
    #: Fraction of the device's peak (bandwidth or compute, whichever bounds it), ``memory``/``compute``,
    #: and the verdict in words.
    peak_fraction: Optional[float] = None
    bound: Optional[str] = None
    verdict: str = ""
    #: Whether the count ``peak_fraction`` rests on (bytes for a memory-bound kernel, FLOPs for a compute-bound one) is
    #: an upper bound (``Cost.upper_bounds``): the fraction, the throughput beside it, are at most that, and the verdict
    #: says "at most". False in reports made before it.
    at_most: bool = False
    #: Inductor's own estimate of one launch, and the measured ``per_call_us`` over it.
    estimated_us: Optional[float] = None
    estimate_ratio: Optional[float] = None
    #: How the time was taken, as the views say it, ``"median of 3 runs (fastest 15.4 µs, slowest 56.5 ms)"``
    #: (``rules.timing_text``), and where the runs disagree, a warning that says by how much
    #: (``rules.noisy_text``: ``"noisy: the slowest run took 3,670x the fastest ..."``), else ``""``. Derived on
    #: every construction; a stored value is ignored.
    timing_text: str = ""
    noisy: str = ""

    _ALIASES = {"mean_us": "total_us", "runs": "iterations"}

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "timing_text", timing_text(self.statistic, self.iterations, self.min_us, self.max_us, self.std_us)
        )
        object.__setattr__(self, "noisy", noisy_text(self.total_us, self.min_us, self.max_us, self.std_us))

    @classmethod
    def from_plain(cls, value: Any, where: str = "profile") -> "KernelProfile":
        """Also the 0.2 form: a dict with ``mean_us`` (= ``total_us``) and ``runs`` (= ``iterations``)."""
        return from_plain_fields(cls, _upgraded(value, where, dict(cls._ALIASES)), where)


@_record
class LineTime(_Record):
    """Measured kernel time of one line of the user's code (``StepProfile.by_line``); a kernel that several
    lines produced is split evenly between them. ``file`` ``""``: kernels with no user line. ``built``: the line
    BUILT the modules of these kernels, whose ops ran inside torch (``Kernel.built_lines``), it did not run them
    (``report/lines.py``)."""

    file: str
    line: int
    code: str = ""
    us: float = 0.0
    share: Optional[float] = None
    kernels: list[str] = field(default_factory=list)
    built: bool = False
    #: The row's kernels whose measured runs disagree (``KernelProfile.noisy``), in the row's order: the roll-up's
    #: "N noisy" mark (``analysis/perf.py``; reports made before it: filled on load, ``report/lines.rollups_noisy``).
    noisy: list[str] = field(default_factory=list)
    #: The whole measured time of its kernels, each once (``us`` is their share of it split by line), and in words
    #: what ``us`` is of it (``rules.line_time_text``), as the Source view's tooltip says it. Derived.
    whole_us: float = 0.0
    text: str = ""


@_record
class ModuleTime(_Record):
    """Measured kernel time of one ``nn.Module`` (``StepProfile.by_module``; ``""``: none)."""

    module: str
    us: float = 0.0
    share: Optional[float] = None
    kernels: list[str] = field(default_factory=list)
    #: The row's kernels whose measured runs disagree (``KernelProfile.noisy``), in the row's order: the roll-up's
    #: "N noisy" mark (``analysis/perf.py``; reports made before it: filled on load, ``report/lines.rollups_noisy``).
    noisy: list[str] = field(default_factory=list)


@_record
class KindTime(_Record):
    """Measured kernel time of one kind of kernel (``StepProfile.by_kind``: ``pointwise``, ``extern mm``)."""

    kind: str
    us: float = 0.0
    share: Optional[float] = None
    kernels: list[str] = field(default_factory=list)
    #: The row's kernels whose measured runs disagree (``KernelProfile.noisy``), in the row's order: the roll-up's
    #: "N noisy" mark (``analysis/perf.py``; reports made before it: filled on load, ``report/lines.rollups_noisy``).
    noisy: list[str] = field(default_factory=list)


@_record
class OpTime(_Record):
    """Time per run of profiler events inside the compiled graphs that no kernel claimed, by name."""

    name: str
    us: float = 0.0


@_record
class OffEstimate(_Record):
    """A kernel whose measured launch is more than ``StepProfile.estimate_factor`` times off Inductor's
    estimate, either way."""

    compile: str
    kernel: str
    measured_us: float
    estimated_us: float
    ratio: float


@_record
class StepProfile(_ReadsLikeADict):
    """The profiled step as a whole (``Report.profile``): its measured device time, the part the kernels
    account for, the unattributed remainder, and roll-ups by line, module and kernel kind."""

    device: str
    #: Profiled runs (each kernel's ``iterations``) and warm-up runs before them (not counted).
    runs: int = 0
    warmup: int = 0
    #: How the times were measured and attributed, in words.
    method: str = ""
    #: ``median`` or ``mean`` (reports made before it): what the kernels' ``total_us`` and ``device_total_us`` are
    #: of the runs.
    statistic: str = "mean"
    #: The step's whole device time per run and its standard deviation.
    device_total_us: Optional[float] = None
    device_total_std_us: float = 0.0
    #: The step's fastest and slowest run; None in reports made before it and where several profiles composed.
    device_total_min_us: Optional[float] = None
    device_total_max_us: Optional[float] = None
    #: The sum of the kernels' ``total_us``; the rest, absolute and as a share of ``device_total_us``.
    attributed_us: float = 0.0
    unattributed_us: float = 0.0
    unattributed_share: Optional[float] = None
    #: The unattributed time inside the compiled graphs' calls, and outside them.
    inside_graphs_unmatched_us: float = 0.0
    outside_graphs_us: float = 0.0
    unmatched_ops: list[OpTime] = field(default_factory=list)
    by_line: list[LineTime] = field(default_factory=list)
    by_module: list[ModuleTime] = field(default_factory=list)
    by_kind: list[KindTime] = field(default_factory=list)
    off_estimate: list[OffEstimate] = field(default_factory=list)
    estimate_factor: float = 3.0
    #: ``unattributed_share`` as the roofline prints it, ``"unattributed: 3%"`` (rounded half up; empty without a
    #: share). Derived from the share on every construction (``rules.unattributed_text``); a stored value is ignored.
    unattributed_text: str = ""
    #: How the times were taken, as the roofline says it: ``"median of 20 runs after 3 warm-up runs"``, or for a
    #: profile without warm-up, that each graph was timed on its first call (``rules.runs_text``); derived like
    #: ``unattributed_text``.
    runs_text: str = ""
    #: Where the profile has too few runs to tell a kernel's time from noise (one), what its times are worth and how to
    #: take more, as the roofline and the top-kernels table say it above their rankings (``rules.few_runs_text``);
    #: ``""`` otherwise. Derived like ``unattributed_text``.
    few_runs: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "unattributed_text", unattributed_text(self.unattributed_share))
        object.__setattr__(self, "runs_text", runs_text(self.runs, self.warmup, self.statistic))
        object.__setattr__(self, "few_runs", few_runs_text(self.runs, self.method))

    @classmethod
    def from_plain(cls, value: Any, where: str = "profile") -> "StepProfile":
        return from_plain_fields(cls, _upgraded(value, where, {}), where)


@_record
class LaunchArg(_Record):
    """One argument of a kernel's call, as the output code passes it.

    ``name`` is what the call passes: a buffer (``buf3``), a graph input (``primals_1``), or for a scalar the
    kernel's parameter name when known. A tensor has ``shape``/``stride`` (ints, or the symbolic expression as
    text, ``"s0"``, with ``hint`` the concrete sizes torch used), ``dtype`` (``float32``) and ``offset`` (its
    storage offset, from ``reinterpret_tensor``). A scalar or any other argument has ``value`` (the text the
    call passes: ``512``, ``"s0"``, ``"(1, 1)"``) and no shape; ``hint`` is a symbolic scalar's concrete value.
    ``param`` is the kernel's own parameter name (``in_out_ptr0``, ``xnumel``) where the source says it;
    ``keyword`` the keyword the call uses (``out``, ``alpha``), ``""`` for a positional argument. ``holds``: what the
    argument holds, as the launch table names it (``report/finish._buffer_holds``): a graph input by the name the
    user knows (``fc1.weight`` for ``primals_4``), a buffer by the op that computes it (``layer1.0.conv1
    convolution``); ``""`` where that is the name itself, for scalars, and in reports made before it.
    ``value_text``: a scalar's value as the launch table shows it, exact (``rules.launch_value_text``: a JSON
    reader's doubles round an int past 2**53), ``s0 = 8`` where symbolic; ``""`` for a tensor. Derived from
    ``value`` and ``hint`` whenever the argument is built or loaded; a stored value is ignored.
    ``items``: an argument that is a list of tensors (``aten.index.Tensor(buf0, [None, primals_6])``'s indices), each
    of them as an argument of its own (shape, stride, dtype), a ``None`` of the list as ``name`` and ``value``
    ``"None"``; null for any other argument, for a list of anything else, and in reports made before it.
    """

    name: str
    shape: Optional[list] = None
    stride: Optional[list] = None
    dtype: Optional[str] = None
    offset: Optional[Union[int, str]] = None
    value: Optional[Union[int, float, str]] = None
    hint: Optional[Union[list, int]] = None
    param: str = ""
    keyword: str = ""
    holds: str = ""
    value_text: str = ""
    items: Optional[list["LaunchArg"]] = None

    def __post_init__(self) -> None:
        text = "" if self.shape is not None else launch_value_text(self.value, self.hint)
        object.__setattr__(self, "value_text", text)


@_record
class KernelLaunch(_Record):
    """How the output code launches a kernel (its first call site); each field null when unknown.

    ``grid``: the Triton launch grid ``[x, y, z]`` (ints, or the expression as text over the kernel's
    arguments when a size is symbolic); ``num_warps``/``num_stages``: the config autotuning picked; ``block``:
    that config's block sizes (``{"XBLOCK": 128}``); ``args``: the call's arguments in order (``LaunchArg``);
    ``call``: the launch line of the output code, verbatim; ``arg_types``: the C++ argument types the output
    code compiles a C++ kernel's Python binding with (``["float*", "const float*"]``); ``device``: where its
    buffers live (``cpu``, ``cuda``). ``grid_text``: the grid as the panel says it (``rules.launch_grid_text``:
    ``2 × 384 × 1 = 768 CTAs``, with Inductor's expression and the sizes it was evaluated at where one is
    symbolic); ``config_text``: grid, warps, stages and block in one line (``rules.launch_config_text``); both
    derived (``report/finish.launch_facts``), ``""`` where there is no grid or config.
    """

    grid: Optional[list] = None
    num_warps: Optional[int] = None
    num_stages: Optional[int] = None
    args: list[LaunchArg] = field(default_factory=list)
    block: Optional[dict] = None
    call: str = ""
    arg_types: Optional[list[str]] = None
    device: Optional[str] = None
    grid_text: str = ""
    config_text: str = ""


@_record
class KernelIR(_Record):
    """A compiled Triton kernel's intermediate stages and resources (``ir=True``); each null where absent.

    ``ttir``, ``ttgir``, ``llir``, ``ptx``: Triton's IR and the PTX, as the compiled kernel holds them;
    ``sass``: the disassembly (``cuobjdump -sass`` of the cubin) when the CUDA toolkit's disassembler was on
    the machine; ``registers``: registers per thread; ``shared_bytes``: static shared memory per block;
    ``spills``: registers spilled to local memory.
    """

    ttir: Optional[str] = None
    ttgir: Optional[str] = None
    llir: Optional[str] = None
    ptx: Optional[str] = None
    sass: Optional[str] = None
    registers: Optional[int] = None
    shared_bytes: Optional[int] = None
    spills: Optional[int] = None
    #: For each stage, the kernel-source line (1-based, a line of ``Kernel.source``) of each of its lines where
    #: Triton records one (TTIR/TTGIR ``loc``, LLIR ``!DILocation``, PTX ``.loc``), else null; ``{}`` if none.
    source_lines: dict[str, list] = field(default_factory=dict)


@_record
class Kernel(_Record):
    """A generated kernel, or a call to an extern one (``language == "extern"``).

    ``source`` is exactly the text in the output code. ``user_stack`` holds one stack per
    distinct user source location of the ops in the kernel; ``compiler_stack`` is the stack
    inside torch when Inductor generated the kernel, outermost (the user's call) first.
    """

    name: str
    language: str
    source: str
    fused_nodes: list[str] = field(default_factory=list)
    fx_nodes: list[str] = field(default_factory=list)
    user_stack: list[list[Frame]] = field(default_factory=list)
    compiler_stack: list[Frame] = field(default_factory=list)
    #: Launch and build facts where torch exposes them: grid, num_warps, num_stages, ``size_hints``
    #: (a mapping ``{"x": 1024, "r0_": 64}``), ``autotune`` (``{op, fastest, chosen, emitted, epilogue,
    #: choices}``; ``chosen`` names the benchmarked choice the emitted kernel came from, ``None`` if not known;
    #: ``epilogue`` the ops fused around the matmul; ``timed`` whether torch benchmarked the choices in this compile
    #: or read their times from its autotune cache, with ``heading``/``timed_note``/``fusion_note`` the panel's words;
    #: each choice's ``config`` is its description's key=value pairs)...
    metadata: dict = field(default_factory=dict)
    #: Measured device time (``KernelProfile``), filled by ``inspect(..., profile=True)`` and the other
    #: ``--profile`` options (see docs/report-schema.md).
    profile: Optional[KernelProfile] = None
    #: One entry per place the output code calls this kernel, each the fused nodes that call computes.
    #: Two fused nodes in one entry were fused into one kernel; in two entries, the same kernel source
    #: is reused (Inductor emits identical code once and calls it twice).
    call_sites: list[list[str]] = field(default_factory=list)
    #: Bytes and FLOPs of one call (``Cost``), from Inductor's buffer accesses and the ops' shapes.
    cost: Optional[Cost] = None
    #: The user's lines of this kernel: the line that ran of each ``user_stack`` (``rules.line_frame``), else of its
    #: fused nodes' (``FusedNode.user_lines``), in the order of its FX ops in the graph, but for the first: the line
    #: that defines it (``rules.lead_line``: its matmul's, else its reductions', else the line of most of its ops),
    #: which the kernel table, the source view, the panel and the roofline's time-by-line table tie the kernel to.
    user_lines: list[Frame] = field(default_factory=list)
    #: What the kernel is, from its fused nodes' kinds (``rules.kernel_kind``: a reduction if any of them
    #: reduces, a kernel of a pointwise node and a mean is not "pointwise"); ``""`` in reports made before it.
    kind: str = ""
    #: Why an extern kernel is a call, not code Inductor generated (``rules.extern_why``): a library call
    #: (``extern_kernels.mm``, oneDNN's), torch's own op where Inductor generates no code for complex tensors or has
    #: none for the op (a fallback), a user's custom op; ``""`` for a generated kernel and in reports made before it.
    extern_why: str = ""
    #: What each call of it (``call_sites``, same order) writes in place, all the call's fused nodes together
    #: (``rules.call_in_place_text``: an optimizer's one kernel updates every parameter and its state), as the panel's
    #: head of its box says it; ``""`` for a call of one fused node (its ``FusedNode.in_place`` says it) or that writes
    #: nothing in place. Empty where no call of several nodes writes in place, and in reports made before it.
    in_place: list[str] = field(default_factory=list)
    #: For a kernel with no ``user_lines`` (its ops ran inside torch, an ``nn.Sequential``'s), the lines of the user's
    #: that BUILT the modules of its fused nodes' ops (their ``built_lines``), one per line, in execution order: what
    #: the kernel table and the time-by-line table name, marked built (``report/built.py``).
    built_lines: list[BuiltLine] = field(default_factory=list)
    #: What the panel says above the kernel's source where the source is not what torch writes without the lens
    #: (``rules.kernel_source_note``): a C++ kernel of a profiled capture, compiled with ``cpp.enable_kernel_profile``,
    #: holds two lines of instrumentation (its reproducer runs it without them); ``""`` otherwise and in reports made
    #: before it.
    source_note: str = ""
    #: Where no line of the user's ran it (``user_lines`` empty): why, as its first fused node with a reason says it
    #: (``FusedNode.no_line_reason``), and in a few words for the kernel table's line cell (``rules.no_line_text``:
    #: ``Inductor's layout copy``, ``inside torch``); the cell shows a line that built its modules first
    #: (``built_lines``). ``""`` where a line ran it. Derived.
    no_line_reason: str = ""
    no_line_text: str = ""
    #: How many frames of its ``compiler_stack`` the compile's lowering and fusion paths share from the user's call, and
    #: the panel's sentence of it (``rules.stage_paths``): the panel draws the shared frames once, then each stage's
    #: own. ``0``/``""`` where the compile has no lowering or fusion path. Derived.
    stage_shared: int = 0
    stage_note: str = ""

    #: How the output code launches it: grid, config, arguments (``KernelLaunch``); null when not read.
    launch: Optional[KernelLaunch] = None
    #: Triton's IR stages and the compiled kernel's resources (``KernelIR``), with ``ir=True``; else null.
    ir: Optional[KernelIR] = None
    #: A standalone script that runs this kernel on its recorded arguments and times it
    #: (``inductor_lens.reproducer``), written at capture; ``""`` when none could be written.
    reproducer: str = ""
    #: Why none could be written, where the capture tried (``ReproducerError``'s words: an argument whose
    #: data-dependent size neither the report nor the output code's checks bound, an AOTInductor compile...): the
    #: panel says it where the "Copy reproducer" button would be; ``""`` otherwise and in reports made before it.
    reproducer_note: str = ""

    def __post_init__(self) -> None:
        if type(self.profile) is dict:  # the 0.2 spelling, a plain dict: typed once, here
            object.__setattr__(self, "profile", KernelProfile.from_plain(self.profile, "Kernel.profile"))


@_record
class FusionDecision(_Record):
    """Inductor considered fusing ``node1`` with ``node2`` and refused, for ``reason``.

    ``node1``/``node2`` are pre-fusion node names; ``fused1``/``fused2`` the post-fusion nodes
    that hold them, so the widget can show the refusal on the boxes a user sees. Refusals that a later
    round of fusion undid (both ends in one fused node, or in one call of one kernel) are not listed.
    """

    node1: str
    node2: str
    #: Inductor's words, one reason per line (``rules.readable_reasons``: a report made before schema 2 kept some
    #: as a JSON list); made so on every construction.
    reason: str
    fused1: Optional[str] = None
    fused2: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", readable_reasons(self.reason))


@_record
class BufferBytes(_Record):
    """A buffer of a compiled graph and its size: ``name`` as the output code calls it (``buf3``)."""

    name: str
    bytes: int


@_record
class MemoryPoint(_Record):
    """The live bytes while fused node ``node`` runs (once it has run, before the frees that follow it): every
    buffer the graph allocated that is still to be read at or after ``node``, or that the graph returns (graph
    inputs are counted apart, in ``Memory.input_bytes``). ``allocates``/``frees``: the buffers the node writes, and
    those whose last reader it is (freed after it), largest first, each named as the output code names it there
    (``analysis/memory.timeline``: allocated under the name the call writes, freed under the name a ``# reuse``
    gave it). A kernel call of several fused nodes
    (``Kernel.call_sites``) is one launch: its buffers are all allocated at its first node and freed after its
    last (``analysis/memory.launches``).

    ``net_bytes``: where the graph frees inputs on the way (a backward drops the saved tensors it is done with):
    ``live_bytes`` less the inputs freed before the node, what the allocator holds above its level when the graph
    was called (``analysis/memory.net_curve``; below 0 where the graph has freed more than it holds). Its maximum is
    ``Memory.net_peak_bytes``. Null where the graph frees no input, after it frees one of a size known only when it
    runs (``Memory.net_floor_node``: not known), and in reports made before it."""

    node: str
    live_bytes: int
    allocates: list[BufferBytes] = field(default_factory=list)
    frees: list[BufferBytes] = field(default_factory=list)
    net_bytes: Optional[int] = None


@_record
class RowLine(_Record):
    """The line of the user's code a row of the Memory view's tables names, its "your line", decided once in Python
    (``report/lines.py``, ``op_key``, the rule of the roll-ups by line): the innermost user frame of the row's stack
    (the line that ran its op), else the line that BUILT the innermost module of its op, which ran inside torch
    (``built`` true: ``FusedNode.built_lines``, ``report/built.py``); a row with neither has none (null)."""

    file: str
    line: int
    code: str = ""
    built: bool = False


@_record
class LiveBuffer(_Record):
    """A buffer alive at the peak: its size, the fused node that writes it, the post-grad node that computes
    it and that node's user stack; ``user_line`` the line the table names (``RowLine``); ``module`` the innermost
    module of the op that computes it, else of its fused node (the module ``peak_by_module`` counts it under); a
    copy of a graph input (its post-grad node a placeholder: a convolution's weight laid out channels-last) has
    the module that owns the input and no line. ``op``: what it holds, as the table's column says it
    (``report/lines.buffer_op``): ``layer_norm: mean``, ``copy of layer4.1.conv1.weight``; ``""`` in reports made
    before it."""

    name: str
    bytes: int
    node: str = ""
    fx_node: str = ""
    user_stack: list[Frame] = field(default_factory=list)
    user_line: Optional[RowLine] = None
    module: str = ""
    op: str = ""


@_record
class HeldConstant(_Record):
    """A graph constant a frozen graph holds and its kernels read (``Memory.constants``): ``name``, Inductor's
    (``_frozen_param1``, ``constant6``); ``display``, the parameters it comes from as ``Compile.constant_names`` says
    them (``fc1.weight (packed for the C++ GEMM template)``), ``""`` where not traced; ``bytes``, at the size of its
    own buffer (a packed weight at its packed size); ``shape`` and ``dtype``, as the post-grad graph's ``get_attr``
    of it gives them (a packed weight's logical shape), null where no node names it (a template's packed weight)."""

    name: str
    bytes: int
    display: str = ""
    shape: Optional[list] = None
    dtype: Optional[str] = None


#: The kinds of ``SavedTensor`` the forward allocated, held from the forward to the backward.
HELD_KINDS = ("activation", "copy")


@_record
class SavedTensor(_Record):
    """A tensor the backward graph takes from the forward: ``name`` is the backward graph's input as torch names it
    (``relu``, ``primals_3``), ``kind`` ``activation`` (computed by the forward: memory held from the forward to
    the backward), ``input`` (a parameter, buffer or argument of the user's call, kept alive anyway) or ``copy``
    (an input the forward's output code copied, into another layout, and saved: a convolution's channels-last
    weight on a CPU; memory held as an activation's is). ``fx_node`` the forward's post-grad node that produced
    it; ``module`` its innermost nn.Module path (for an input, the module that owns the parameter; ``""`` if
    none); ``user_line`` the line its row names (``RowLine``); ``display`` the name the user knows an input or a
    copy by (``x``, ``fc1.weight``: the forward's placeholder's display name), an activation's op as the graph's ovals
    name it where that is not ``name`` (``silu`` for ``div``: ``report/lines.saved_display``), else ``""`` (and in
    reports made before it)."""

    name: str
    shape: Optional[list] = None
    dtype: Optional[str] = None
    bytes: Optional[int] = None
    kind: str = "activation"
    fx_node: str = ""
    user_stack: list[Frame] = field(default_factory=list)
    module: str = ""
    user_line: Optional[RowLine] = None
    display: str = ""
    #: Where a size of ``shape`` is symbolic (``["s77", 32]``: the graph's, dynamic shapes), the sizes seen at capture,
    #: which ``bytes`` counts (``[4, 32]``); None where every size is static, and in reports made before it (whose
    #: ``shape`` holds those sizes).
    shape_hint: Optional[list] = None
    #: The strides the backward's output code asserts for it (``assert_size_stride(expand_1, (2, 32), (0, 1))``, at
    #: the sizes seen at capture): ``bytes`` is then the storage it spans, (1 + sum((size - 1) * stride)) x element
    #: size, so an expanded view (stride 0) counts its base once; None where no stride is known (no output code,
    #: a symbolic stride, reports made before it): ``bytes`` is then numel x element size, an upper bound for a view.
    stride: Optional[list] = None
    #: The forward's buffer whose storage holds it, as its output code returns it (``buf40`` of
    #: ``reinterpret_tensor(buf40, (256, 64), (1, 256), 0)``, through reuses and aliases), or the graph input it is;
    #: ``""`` where not known (no output code, reports made before it).
    storage: str = ""
    #: Where another saved tensor of the same ``storage`` comes earlier in the backward's order, that one's ``name``:
    #: the storage is held once, its bytes counted in that row (the storage's ``storage_bytes`` where known, else the
    #: sum of the rows' ``bytes``, an upper bound) and not in this one's (``rules.counted_bytes``); ``""`` otherwise.
    shares: str = ""
    #: For a view of another op's output (``permute_14``, GPT-2's transposed GELU output, which ``c_proj``'s weight
    #: gradient takes), the view op the backward takes (``t``): ``fx_node``, ``user_stack`` and ``module`` are then
    #: the op's that made the storage it views (``mul_15``, ``mlp.act``); ``""`` otherwise and in reports made before.
    view_op: str = ""
    #: What the Memory view says of a row whose storage is another op's or another row's (``rules.saved_note``):
    #: ``t: a view of transformer.h.1.mlp.act's output (gelu)``, ``... ; its storage buf40 is mul_2's, counted once``.
    #: A view of a cast of a graph input (``torch.autocast``'s copy of a weight) names that copy:
    #: ``t: a view of the bfloat16 copy of model.fc.weight``.
    note: str = ""
    #: For the first row of a storage other rows share (``shares``): the bytes of that storage as the forward's output
    #: code allocates it (the storage is held whole, whatever part each row views: q, k and v of one projection's
    #: buffer), what the storage counts in a total (``rules.counted_bytes``); None elsewhere and where not known.
    storage_bytes: Optional[int] = None


@_record
class Recomputed(_Record):
    """An op the backward computes again instead of saving its result (the partitioner's rematerialization);
    ``user_line`` the line it comes from (``RowLine``). ``by``: why, ``checkpoint`` (the op is in a region
    ``torch.utils.checkpoint`` wraps: ``GraphNode.recompute``) or ``partitioner`` (no checkpoint: AOT autograd's
    partitioner found it cheaper to compute again than to keep); ``""`` in reports made before it. ``checkpoint``:
    for ``by`` ``checkpoint``, the user's call of ``checkpoint(...)`` whose region holds it (the dynamo graph's
    ``tag_activation_checkpoint`` whose stack its own stack continues), None where not found. ``fx_node``: the op in
    the post-grad graph of the compile whose ``Memory`` holds it: the backward keeps the forward's names, but for a
    random op of a checkpointed region, ``run_and_save_rng_state`` in the forward, ``run_with_rng_state`` in the
    backward (``analysis/memory.rng_pairs``)."""

    fx_node: str
    user_stack: list[Frame] = field(default_factory=list)
    user_line: Optional[RowLine] = None
    by: str = ""
    checkpoint: Optional[Frame] = None
    #: ``by`` and ``checkpoint`` in the words the views show (``rules.recomputed_reason``); ``""`` where not known.
    reason: str = ""


@_record
class BytesBy(_Record):
    """Bytes rolled up by one key: a user line (``file``, ``line``) or an nn.Module path (``module``).
    ``count``: the tensors (or buffers) rolled into it (0 in reports made before it); ``instances``: in a
    roll-up folded by repeated module (``layers.1-31.mlp``), the instances folded into the row (1 for a
    module that is no repeat's), else 0; ``code``: a user line's text, as its frame recorded it; ``built``: the line
    BUILT the modules of the ops rolled into it, which ran inside torch (``report/lines.py``), it did not run them."""

    bytes: int
    file: str = ""
    line: int = 0
    module: str = ""
    count: int = 0
    instances: int = 0
    code: str = ""
    built: bool = False
    #: How many of the ``count`` tensors are of a size known only when the graph runs (``u0``): not in ``bytes``,
    #: which is then a lower bound; 0 where none are (and in reports made before it).
    uncounted: int = 0
    #: Derived: what the view writes for ``bytes`` where ``uncounted`` (``rules.least_bytes_text``: ``≥ 5.3 KiB``, ``?``
    #: where it holds only such tensors); ``""`` where every tensor is counted (the view writes ``bytes``).
    bytes_text: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "bytes_text", least_bytes_text(self.bytes, self.uncounted))


@_record
class SavedGroup(_Record):
    """Tensors saved for the backward that are one thing said once: the same ``kind``, op (``what``: for an
    activation the op it was decomposed from where there is one, ``GraphNode.original_op``: ``gelu``, else its
    short name; for an input the parameter's or argument's own name), shape, dtype and
    user line, in the same module once the instances of a repeated module are folded (``module``:
    ``layers.1-31.mlp.gate`` for ``layers.5.mlp.gate``). ``count`` tensors of ``each`` bytes, ``bytes`` in
    all; ``names``: theirs, in the backward graph's order; ``fx_node``, ``user_stack`` and ``user_line`` (the line
    its row names, ``RowLine``): the first one's."""

    module: str
    what: str
    kind: str
    count: int
    #: null where its tensors are of a size known only when the graph runs (``u0``; each ``SavedTensor.bytes`` null):
    #: not known, not 0 (derived on loading for reports made before it).
    bytes: Optional[int]
    each: Optional[int] = None
    shape: Optional[list] = None
    dtype: Optional[str] = None
    names: list[str] = field(default_factory=list)
    fx_node: str = ""
    user_stack: list[Frame] = field(default_factory=list)
    user_line: Optional[RowLine] = None
    #: As ``SavedTensor.shape_hint``: the sizes seen at capture where ``shape`` is symbolic, else None.
    shape_hint: Optional[list] = None
    #: How many of ``names`` share their storage with a tensor counted in another row or earlier in this one
    #: (``SavedTensor.shares``): ``bytes`` counts each storage once; 0 where none.
    shared: int = 0
    #: Derived (by ``Memory``, from ``saved_for_backward``): what the view says under the row where its tensors share
    #: storage with others (``rules.saved_group_notes``): that its total counts such a storage whole, once (``each
    #: shares its storage of 384 KiB with split: output 1, split: output 2: the storage counted once, here (2 × 384
    #: KiB)``), or that another row counts it (``... 0 B here``); ``""`` for none.
    note: str = ""


@_record
class RecomputedBy(_Record):
    """The ops the backward recomputes that come from one user line (``file`` ``""``: no user line):
    ``count`` of them, their distinct short op names (``ops``) in graph order. ``built``: the line BUILT the
    modules of these ops, which ran inside torch (``report/lines.py``), it did not run them."""

    count: int
    file: str = ""
    line: int = 0
    ops: list[str] = field(default_factory=list)
    built: bool = False
    #: Why they are recomputed, as the Memory view says it (``rules.recomputed_reason``): the ``checkpoint(...)`` call
    #: whose region holds them, or the partitioner's choice; ``""`` where not known (reports made before it).
    reason: str = ""


@_record
class MemoryRegion(_Record):
    """A run of consecutive points of ``Memory.timeline`` (indices ``first`` to ``last``) made by one module at
    the level of a compile's repeated modules: an instance (``layers.5``, ``repeat`` its repeat's label
    ``layers.1-31``), else the module at that depth (``embed``, ``head``), else ``""`` (the top-level
    function's own ops). ``label``: what the axis says under it (``5``, ``head``)."""

    module: str
    label: str
    first: int
    last: int
    repeat: str = ""


@_record
class Memory(_Record):
    """Where a compile's memory goes (see docs/report-schema.md, "memory").

    ``timeline``: one point per box (a fused node not ``is_glue``) of ``Compile.fused_nodes``, same order, what
    a glue node allocates and frees in its box's point (reports made before 2026-12-03: one per fused node);
    ``peak_bytes`` its
    maximum ``live_bytes`` and ``peak_node`` the first node where it occurs. ``saved_for_backward``: for the
    forward graph of a training step, every tensor its backward takes (its inputs other than tangents);
    ``saved_bytes`` their total, null where the backward did not compile in the capture (a forward-only
    ``inspect`` of a model whose parameters require grad): what it saves is not known then, not 0. ``recomputed``: ops the backward recomputes. ``measured_peak_bytes``: the
    peak allocated over one run of this graph on a GPU (``inspect(..., profile=True)``), else null.
    ``source`` says how the numbers were obtained."""

    peak_bytes: int = 0
    peak_node: str = ""
    timeline: list[MemoryPoint] = field(default_factory=list)
    saved_for_backward: list[SavedTensor] = field(default_factory=list)
    saved_bytes: Optional[int] = 0
    recomputed: list[Recomputed] = field(default_factory=list)
    measured_peak_bytes: Optional[int] = None
    source: str = ""
    #: Bytes of the graph's tensor inputs (parameters, the user's arguments, saved activations for a
    #: backward), not in ``live_bytes``.
    input_bytes: int = 0
    #: Bytes of the graph constants its kernels read (under ``freezing``: the frozen parameters and the weights
    #: Inductor packed for its GEMM templates or oneDNN, at the size of their own buffers), not in ``live_bytes``
    #: nor in ``input_bytes``: held by the compiled graph, not passed to it. 0 in reports made before it.
    constant_bytes: int = 0
    #: Those constants one by one (``HeldConstant``), largest first: they add up to ``constant_bytes``. Empty in
    #: reports made before it.
    constants: list[HeldConstant] = field(default_factory=list)
    #: The buffers alive at the peak, largest first.
    peak_buffers: list[LiveBuffer] = field(default_factory=list)
    #: The part of ``saved_bytes`` the forward allocated (``kind`` in ``HELD_KINDS``: activations, and copies of
    #: inputs in another layout): memory held for the backward; null where ``saved_bytes`` is.
    saved_activation_bytes: Optional[int] = 0
    #: ``saved_for_backward``'s activations (and copies) rolled up by user line and by nn.Module, largest first;
    #: by line, those of no line in one row of ``file`` ``""`` (``report/lines.saved_by_line``): both add up to
    #: ``saved_activation_bytes``.
    saved_by_line: list[BytesBy] = field(default_factory=list)
    saved_by_module: list[BytesBy] = field(default_factory=list)
    #: What the allocator sees above what was held when the graph was called, the quantity
    #: ``measured_peak_bytes`` measures: the live bytes less the graph inputs its output code has freed (``del``)
    #: after their last reader (a backward drops saved activations as it goes), at its maximum, and where.
    #: ``freed_input_bytes``: those inputs' total. Null in reports made before it.
    net_peak_bytes: Optional[int] = None
    net_peak_node: str = ""
    freed_input_bytes: int = 0
    #: The graph's tensor inputs of a size known only when it runs (of ``uncounted_inputs``) its output code frees on
    #: the way (``analysis/memory.freed_unsized``), in the order freed: not in ``freed_input_bytes``, so after the first
    #: is freed, live bytes less the freed inputs is no lower bound of what the device holds (nu29 D3). Null in
    #: reports made before it (whether any was freed is not known then).
    freed_uncounted: Optional[list[str]] = None
    #: Where ``freed_uncounted`` is not empty: ``net_peak_bytes`` over the points up to ``net_floor_node``, the one
    #: after which the first of them is freed (``analysis/memory.net_floor``): a lower bound of the high-water mark.
    #: Null (and ``""``) else.
    net_floor_bytes: Optional[int] = None
    net_floor_node: str = ""
    #: ``net_peak_bytes / measured_peak_bytes`` (1.0 = the estimate is exact), null until both are known.
    estimate_ratio: Optional[float] = None
    #: The timeline cut by module at the level of the repeated modules (a model's layers), in order
    #: (``MemoryRegion``): what the curve's axis is labelled with. Empty in reports made before it.
    regions: list[MemoryRegion] = field(default_factory=list)
    #: ``saved_for_backward`` said once per repeated thing (``SavedGroup``): activations first, largest total
    #: first; empty where no two tensors fold together (and in reports made before it).
    saved_groups: list[SavedGroup] = field(default_factory=list)
    #: ``saved_by_module`` with the instances of each repeated module folded into one row (``BytesBy.instances``).
    saved_by_module_folded: list[BytesBy] = field(default_factory=list)
    #: Every buffer alive at the peak rolled up by its op's module, repeated modules folded, largest first;
    #: ``peak_buffer_count`` how many buffers that is (``peak_buffers`` holds the 20 largest).
    peak_by_module: list[BytesBy] = field(default_factory=list)
    peak_buffer_count: int = 0
    #: ``recomputed`` rolled up by user line, most ops first (``RecomputedBy``).
    recomputed_by_line: list[RecomputedBy] = field(default_factory=list)
    #: Where a size of the graph is symbolic (dynamic shapes), the sizes every byte count here is taken at, as the
    #: Memory view's figures say it (``analysis/memory.sizes_at``): ``at s77=4`` (each symbol of a size at the
    #: size seen at capture), ``at the size hints`` where no plain symbol has one; ``""`` where every size is static
    #: and in reports made before it.
    sizes_at: str = ""
    #: What the Memory view says of the peak and of the device's high-water mark, and what the peak counts (its
    #: tooltip): ``rules.memory_peak_text``, ``memory_high_water_text``, ``memory_peak_note``. Derived from the
    #: fields above whenever the object is built or loaded; a stored value is ignored.
    peak_text: str = ""
    high_water_text: str = ""
    peak_note: str = ""
    #: The buffers of the graph of a size known only when it runs (data-dependent: ``nonzero``, a boolean mask; ``u0``),
    #: which no byte count here counts (``analysis/memory.unsized_note``); ``uncounted_at``: the points of ``timeline``
    #: (``MemoryPoint.node``) while one of them is live, whose ``live_bytes`` are so a lower bound; ``uncounted_inputs``:
    #: the graph's tensor inputs of such a size (a backward's saved tensors), left out of ``input_bytes`` (a size input,
    #: ``Sym(s77)``, is no tensor and none of them). Empty where every size
    #: is known. A report made before them gets ``uncounted`` from ``source`` on loading, and every point in
    #: ``uncounted_at`` (where each was live was not kept).
    uncounted: list[str] = field(default_factory=list)
    uncounted_at: list[str] = field(default_factory=list)
    uncounted_inputs: list[str] = field(default_factory=list)
    #: Derived: every figure of the peak (``peak_bytes``, ``net_peak_bytes``) leaves out ``uncounted``, a lower bound,
    #: which the views say ("≥"); ``saved_text``: what the view says of ``saved_bytes``
    #: (``rules.memory_saved_text``: "at least" where a saved tensor's size is data-dependent), ``""`` where nothing
    #: is saved or what is saved is not known.
    at_least: bool = False
    saved_text: str = ""
    #: Derived: what ``uncounted`` leaves out, in words (``not counting 16 buffers of a size known only when the graph
    #: runs``), as the panel says it under a point of ``uncounted_at``; ``""`` where nothing is left out.
    uncounted_text: str = ""
    #: Derived: what the view's curve writes on itself (``rules.memory_curve_texts``): its peak's label (``peak ≥ 96
    #: KiB``; ``peak of the graph's buffers 5.3 MiB`` where the graph frees inputs on the way, a backward); there, the
    #: device's high-water mark, drawn as a line (``""`` elsewhere); and what its points of ``uncounted_at``, drawn as
    #: lower bounds, are (``""`` where nothing is left out).
    curve_peak_text: str = ""
    curve_high_water_text: str = ""
    curve_least_text: str = ""
    #: Derived: the height of the curve's line of the device's high-water mark (measured, else the bound of it
    #: ``curve_high_water_text`` says: ``rules.high_water_bounds``); null where no line is drawn.
    high_water_line_bytes: Optional[int] = None
    #: Derived: where the graph frees inputs on the way and the timeline holds ``MemoryPoint.net_bytes`` (reports made
    #: since 2026-12-06), the point of the curve's second line (the live bytes less the inputs freed by then) at the
    #: height of ``high_water_line_bytes``, where the view marks the high-water mark instead of drawing a line across
    #: (``""`` where the mark was measured, none of the second line reaches it, or there is no such line), and what the
    #: view's legend says the second line is (``rules.memory_net_text``; ``""`` where there is none).
    high_water_node: str = ""
    curve_net_text: str = ""
    #: Derived: what the view says the graph holds apart from its curve (``rules.memory_held_text``): its inputs, graph
    #: constants and the inputs it frees on the way, "≥" where some are of a size known only when it runs.
    held_text: str = ""
    #: Derived: the title of the table of the tensors saved for the backward (``rules.memory_saved_table_text``), and
    #: what the roll-ups of what is kept for the backward say under their titles where some of those tensors are of
    #: a size known only when the graph runs (``rules.saved_rollup_note``; ``""`` where none is).
    saved_table_text: str = ""
    saved_rollup_note: str = ""

    def __post_init__(self) -> None:
        if not self.uncounted and (old := uncounted_in_source(self.source)):  # a report made before the field
            object.__setattr__(self, "uncounted", old)
            object.__setattr__(self, "uncounted_at", self.uncounted_at or [p.node for p in self.timeline])
        least = bool(self.uncounted)
        object.__setattr__(self, "at_least", least)
        object.__setattr__(
            self, "uncounted_text", f"not counting {uncounted_words(len(self.uncounted))}" if least else ""
        )
        object.__setattr__(self, "peak_text", memory_peak_text(self.peak_bytes, self.sizes_at, len(self.uncounted)))
        # inputs of a size known only when the graph runs that it frees: how many (None: may be, not recorded)
        freed_unsized = (
            len(self.freed_uncounted) if self.freed_uncounted is not None else None if self.uncounted_inputs else 0
        )
        object.__setattr__(self, "peak_note", memory_peak_note(self.freed_input_bytes, freed_unsized))
        high = memory_high_water_text(
            self.measured_peak_bytes,
            self.net_peak_bytes,
            self.estimate_ratio,
            self.freed_input_bytes,
            self.sizes_at,
            least,
            freed_unsized,
            self.net_floor_bytes,
            self.net_floor_node,
            len(self.uncounted_inputs),
        )
        object.__setattr__(self, "high_water_text", high)
        curve = memory_curve_texts(
            self.peak_bytes,
            least,
            self.freed_input_bytes,
            self.net_peak_bytes,
            self.measured_peak_bytes,
            len(self.uncounted),
            freed_unsized,
            self.net_floor_bytes,
            self.net_floor_node,
        )
        for name, text in zip(("curve_peak_text", "curve_high_water_text", "curve_least_text"), curve):
            object.__setattr__(self, name, text)
        low, top = high_water_bounds(self.net_peak_bytes, least, freed_unsized, self.net_floor_bytes)
        line = self.measured_peak_bytes if self.measured_peak_bytes is not None else low if low is not None else top
        object.__setattr__(self, "high_water_line_bytes", line if self.curve_high_water_text else None)
        drawn = [p for p in self.timeline if p.net_bytes is not None]
        at = (
            next((p.node for p in drawn if p.net_bytes == self.high_water_line_bytes), "")
            if self.measured_peak_bytes is None and self.high_water_line_bytes is not None
            else ""
        )
        object.__setattr__(self, "high_water_node", at)
        cut = self.net_floor_node if drawn and drawn[-1] is not self.timeline[-1] else ""
        below = any(p.net_bytes < 0 for p in drawn)
        text = memory_net_text(self.measured_peak_bytes is not None, bool(at), cut, below) if drawn else ""
        object.__setattr__(self, "curve_net_text", text)
        object.__setattr__(
            self,
            "held_text",
            memory_held_text(
                self.input_bytes,
                len(self.uncounted_inputs),
                self.constant_bytes,
                self.freed_input_bytes,
                freed_unsized,
            ),
        )
        saved = self.saved_for_backward
        unsized = [t for t in saved if t.bytes is None]
        object.__setattr__(
            self, "saved_table_text", memory_saved_table_text(self.saved_bytes, len(unsized)) if saved else ""
        )
        object.__setattr__(
            self,
            "saved_rollup_note",
            saved_rollup_note(sum(1 for t in unsized if t.kind in HELD_KINDS and not t.shares)),
        )
        text = (
            memory_saved_text(
                self.saved_bytes,
                len(saved),
                self.saved_activation_bytes,
                self.sizes_at,
                len(unsized),
                any(t.kind in HELD_KINDS for t in unsized),
            )
            if saved and self.saved_bytes is not None
            else ""
        )
        object.__setattr__(self, "saved_text", text)
        if self.saved_groups:
            notes = saved_group_notes(self.saved_groups, saved)
            # a row of tensors of a size known only when the graph runs: not known, not 0 B (a report made before it)
            unknown = {t.name for t in unsized}
            groups = [
                g
                if g.note == t and (g.bytes is None or not unknown.intersection(g.names))
                else dataclasses.replace(g, note=t, bytes=None if unknown.intersection(g.names) else g.bytes)
                for g, t in zip(self.saved_groups, notes)
            ]
            object.__setattr__(self, "saved_groups", groups)


@_record
class CudaGraphRecording(_Record):
    """One recording (capture) of a CUDA graph: why it was (re-)recorded and, where known, how long it took."""

    reason: str
    time_us: Optional[float] = None


@_record
class CudaGraphs(_Record):
    """CUDA graphs of a compile under ``mode="reduce-overhead"``: ``used`` (torch wrapped the compiled graph
    in CUDA graphs), ``skip_reason`` (why not, as torch logs it: ``mutated inputs (1 instances)``), ``skip_note``
    (derived: the skip said with what the graph shows of it, ``rules.cudagraph_skip_text``: the inputs written in
    place and the lines that write them; ``""`` where there is nothing to add), and each (re-)recording seen in the
    capture."""

    used: Optional[bool] = None
    skip_reason: Optional[str] = None
    skip_note: str = ""
    recordings: list[CudaGraphRecording] = field(default_factory=list)


@_record
class ModuleRepeat(_Record):
    """Numbered sibling nn.Modules run one after another with the same sub-modules: a model's layers.

    Two siblings (children of one module, ``parent``) repeat when the same sub-modules ran in each, in any
    order (``report/modules.py`` says it exactly). ``modules``: the instances in order; ``attached``:
    per instance, the parent's own fused nodes that run inside (or right after) it, drawn with it;
    ``nodes_each``: fused nodes per instance of the most common shape (module path below the instance and
    kind of each node), attached ones and those that run apart left out; ``kinds``: their kinds counted (one
    instance); ``same``: ``kernels`` (each position calls the same kernel, or the same extern op),
    ``kinds`` (module paths and kinds agree) for all instances but those in ``differs``, or ``modules``
    (only the sub-modules agree: no shape is the most common); ``summary``: what the fusion graph's box says
    (``model.layers.0-31 ×32: 13 fused nodes each, same kernels except in 1 of 32: layers.0 (other kernels)``: each
    instance named says how it differs, its count of fused nodes where that differs)."""

    key: str
    label: str
    parent: str
    modules: list[str] = field(default_factory=list)
    attached: list[list[str]] = field(default_factory=list)
    nodes_each: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    same: str = "kinds"
    differs: list[str] = field(default_factory=list)
    summary: str = ""


@_record
class ModuleOpening(_Record):
    """The modules (and repeat keys) a fusion graph opens expanded with on a screen of at least ``fit``
    boxes (up to the next opening's ``fit``), and the ``boxes`` it then shows."""

    fit: int
    expanded: list[str] = field(default_factory=list)
    boxes: int = 0


@_record
class ModuleCalls(_Record):
    """One module called several times in one compile: a cell run over the time steps of an unrolled loop
    (``GraphNode.module_calls``). Its fused nodes fold into the module's box (key ``module``), and inside it into one
    box per call, whose group key is ``keys[i]`` (``cell@2``: the module and dynamo's number of the call, in
    ``FusedNode.group_path`` after the module) and whose text is ``labels[i]`` (``cell · call 3 of 24``), in call
    order. ``summary``: what the module's folded box says (``cell · 24 calls``)."""

    module: str
    keys: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    summary: str = ""


@_record
class ModuleView(_Record):
    """How the fusion graph folds a compile's fused nodes by module (``report/modules.py``).

    ``repeats``: the repeated modules (``ModuleRepeat``). ``openings``: what the graph opens with on a
    screen of N boxes: the last opening whose ``fit`` <= N (the first one below its ``fit``), decided once
    for every N from 4 to 60 (``ModuleOpening``)."""

    repeats: list[ModuleRepeat] = field(default_factory=list)
    openings: list[ModuleOpening] = field(default_factory=list)
    #: The modules called several times in the compile (``ModuleCalls``), outermost first; empty where none is (and
    #: in reports made before it).
    calls: list[ModuleCalls] = field(default_factory=list)


@_record
class FusionEdge(_Record):
    """One data edge of the fusion graph (``rules.fusion_edges``), drawn between the boxes that hold its ends.

    ``kind``: ``node`` (``source`` and ``target`` are fused node names: ``target`` reads what ``source`` writes),
    ``input`` (``source`` is a graph input, ``Compile.graph_inputs``, that the fused node ``target`` reads),
    ``output`` (the fused node ``source`` writes the graph output ``target``: its position in ``Compile.outputs``, as
    text; in reports before those, its buffer) or ``alias`` (the graph output ``target`` is the graph input ``source``
    or a view of it, no copy: ``GraphOutput.view``). A buffer written by glue
    (``FusedNode.is_glue``) stands for what the glue reads: the edge runs from the real producer past it.
    ``buffers``: the buffers the reader names (for an input or an output, that buffer)."""

    kind: str
    source: str
    target: str
    buffers: list[str] = field(default_factory=list)


@_record
class GraphOutput(_Record):
    """One value an Inductor graph returns, in its place in the output code's ``return`` (``Compile.outputs``): each
    place its own, so three views of one input are three outputs (``output_names`` is by buffer).

    Recorded at capture (``torchread.graph_outputs``): ``buffer``, ``node``, ``view``, ``role``; the rest derived
    (``report/finish.graph_outputs``, also filling the recorded ones in a report made before them)."""

    #: The buffer the output code returns here (``buf3``), or the graph input (``arg0_1``) it returns or a view of;
    #: ``""`` where it returns no tensor (``None``: the gradient of an input that needs none; a size).
    buffer: str = ""
    #: The post-grad node the graph's output node returns here (``mm``, ``permute``); ``""`` where not known.
    node: str = ""
    #: A view of the graph input ``buffer`` (the output code returns ``reinterpret_tensor(arg0_1, (16, 8), (1, 16),
    #: 0)``): its storage, no copy; ``False`` for the input itself and for a buffer the graph wrote.
    view: bool = False
    #: A training forward's output: ``returned`` to the user's code or ``saved`` for the backward (AOT autograd's
    #: layout, ``user_visible_output_idxs``); ``""`` for other graphs and where not known.
    role: str = ""
    #: Derived: the graph input ``buffer`` is or views by the name a user knows (``x``, ``fc.weight``); ``""`` for a
    #: buffer the graph wrote.
    input: str = ""
    #: Derived: what its oval says first: the user's variable that holds it where dynamo's graph names it so (``y``),
    #: else what computes it (``lm_head mm``: ``output_names``), a gradient (``fc1.weight.grad``), a graph input by
    #: its name, ``view of x``; ``""`` for no tensor.
    name: str = ""
    #: Derived: its oval's second line: ``graph output``, ``output · returned``, ``saved for backward``, and for a
    #: view of an input ``no copy``, (``rules.output_note``).
    note: str = ""
    #: Derived: whether the fusion graph draws it (an oval, and an edge from its writer or, for a graph input or a
    #: view of one, from that input: ``FusionEdge`` ``alias``): not a constant, nor a graph input saved for the
    #: backward as it is or as a view (every linear layer saves its weight's transpose: the Memory view lists the
    #: saved tensors), nor one a training forward returns as it is other than to the user's code.
    drawn: bool = False


@_record
class AutotuneMode(_Record):
    """Inductor's autotuning settings as a graph compiled (read from ``torch._inductor.config`` at capture):
    ``max_autotune`` (``max_autotune`` or ``max_autotune_gemm``: ``mode="max-autotune"`` sets both),
    ``gemm_backends`` (``max_autotune_gemm_backends``), ``freezing``."""

    max_autotune: bool = False
    gemm_backends: str = ""
    freezing: bool = False


@_record
class CustomPass(_Record):
    """A graph pass of the user's set in Inductor's config as a graph compiled (read from ``torch._inductor.config``
    at capture): ``setting`` (``post_grad_custom_post_pass``, ``joint_custom_pre_pass``, ...) and ``name``, its
    class or function as ``module.QualName``."""

    setting: str
    name: str


@_record
class Compile(_Record):
    """One Inductor graph compilation.

    ``graph_kind`` is ``inference``, ``forward`` or ``backward``.
    """

    id: str
    compile_id: str
    graph_kind: str
    trigger: Trigger
    #: Name of the compiled Python function (the frame dynamo traced).
    frame: str = ""
    #: ``frame`` for people: ``forward()``, ``forward() (via torch's inner wrapper)``.
    frame_label: str = ""
    #: One label for this compile, the same shape for every compile: ``forward(): backward graph · 0/0``.
    label: str = ""
    #: Why it recompiled (the failed guards, one per line); ``""`` for a first compile.
    recompile_reason: str = ""
    #: Why it compiled, as the views say it (``rules.compile_why``): ``recompile_reason``, else the trigger's
    #: reason, one per line. Derived on every construction; a stored value is ignored.
    why: str = ""
    #: The ``id`` of an earlier compile of this report with an identical graph and kernels (regional
    #: compilation compiles each repeated block alike), else ``None``.
    same_graph_as: Optional[str] = None
    phases: list[Phase] = field(default_factory=list)
    graphs: dict[str, Graph] = field(default_factory=dict)
    fused_nodes: list[FusedNode] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    output_code: str = ""
    fusion_decisions: list[FusionDecision] = field(default_factory=list)
    graph_inputs: list[str] = field(default_factory=list)
    graph_outputs: list[str] = field(default_factory=list)
    #: A training forward's outputs (``graph_kind`` ``forward``): the buffers it returns to the user's code, and
    #: those it saves for the backward (recorded at capture from AOT autograd's layout); both empty where not
    #: known (a TORCH_TRACE import, an older report) and for other graphs.
    returned_outputs: list[str] = field(default_factory=list)
    saved_outputs: list[str] = field(default_factory=list)
    #: Each graph output buffer -> the post-grad node the graph's output node returns in its place (read at
    #: capture; the first where a buffer is returned twice); ``{}`` where not known (a TORCH_TRACE import, an older
    #: report): ``output_names`` then aligns the output node's inputs with ``graph_outputs`` where it can.
    output_nodes: dict[str, str] = field(default_factory=dict)
    #: Each graph constant of a frozen graph (``torch._inductor.config.freezing``) that the capture traced to the
    #: user's parameters and buffers, by the name the user knows (``_frozen_param7`` -> ``fc1.weight (packed for
    #: MKL)``, ``_frozen_param36`` -> ``conv1.weight folded with bn1 (packed for oneDNN)``, a C++ GEMM template's
    #: ``constant6`` -> ``fc1.weight (packed for the C++ GEMM template)``): the constants the post-grad graph holds
    #: (``get_attr``, whose ``display_name`` says the same) and those Inductor made while lowering. Read at capture
    #: from freezing's and constant folding's own record of what replaced what (``capturing/constants.py``); a
    #: constant not traced keeps Inductor's name (absent); ``{}`` without freezing, in a TORCH_TRACE import and in
    #: reports made before it.
    constant_names: dict[str, str] = field(default_factory=dict)
    #: Each value the graph returns, position by position (``GraphOutput``): what the output ovals draw. Recorded at
    #: capture; filled on load in reports made before it (``report/finish.graph_outputs``, from ``graph_outputs``,
    #: the output node's ``returns`` and the output code's ``return``).
    outputs: list[GraphOutput] = field(default_factory=list)
    #: Each graph output buffer by what it holds (``report/finish.output_names``), as the output boxes and the
    #: panel name it: the post-grad op that computes it with its module (``lm_head mm``, ``layer4.1.conv1
    #: convolution_backward: grad_weight``), a graph input returned as it is by its name (``stem.weight``); a
    #: backward's output by the forward input it is the gradient of (``fc1.weight.grad``, ``x.grad``, from
    #: ``forward_inputs``), where its forward is known; where that says more than the buffer's name (``buf306``);
    #: ``{}`` where not known and in reports made before it.
    output_names: dict[str, str] = field(default_factory=dict)
    #: A backward's forward's inputs in order (its post-grad placeholders, ``primals_1`` ...), each by the name its
    #: oval shows (``fc1.weight``, ``x``; else the placeholder's name): by AOT autograd's layout the backward returns
    #: the gradient of each in its place, ``None`` for one that needs none (``GraphNode.returns``), which names its
    #: outputs (``output_names``: ``fc1.weight.grad``). Set where the backward is paired with its forward
    #: (``finish.pair_backward``). Compiled autograd's backward returns the new ``.grad`` of each parameter it
    #: accumulates into: at each place of its return, that parameter's name (``""`` where none is known; read at
    #: capture, ``build._ca_gradients``). ``[]`` for other graphs, a backward with no forward in the report and in
    #: reports made before it.
    forward_inputs: list[str] = field(default_factory=list)
    #: When a training forward's backward compiled: ``first_backward`` (lazily, at the first ``.backward()``:
    #: torch's default) or ``with_forward`` (at once, in this forward's compile: AOT autograd does so when the
    #: forward saves symbolic sizes for the backward, dynamic shapes); ``""`` where not seen (no backward in the
    #: capture, a TORCH_TRACE import, an older report) and for other graphs.
    backward_compiled: str = ""
    #: Read from torch's caches, not compiled in this run: ``fx_graph`` (Inductor's FX-graph cache gave back its
    #: output code), ``aot_autograd`` (AOT autograd's cache gave back the graphs of its compile id, each from the
    #: FX-graph cache); Inductor lowered and fused nothing of it here, so nothing of that was recorded (a TORCH_TRACE
    #: import reads it from the log's ``*_cache_hit`` artifacts). ``""`` for a graph Inductor compiled (the
    #: in-process capture turns those caches off) and in reports made before it.
    from_cache: str = ""
    #: What the panel says about the kind of graph (``rules.graph_note``): why a forward is a training forward
    #: and what it saves; ``""`` for other graphs and in reports made before it.
    graph_note: str = ""
    #: What it holds, as its panel says it (``rules.contents_text``): "35 fused nodes (14 pointwise, ...) in 18
    #: kernels", counting the fused nodes drawn as boxes (not the glue); ``""`` in reports made before it.
    contents: str = ""
    #: How many fused nodes the fusion graph draws as boxes (those not ``is_glue``), what the compile picker
    #: counts; ``0`` in reports made before it.
    box_count: int = 0
    #: A subgraph Inductor lowered inside another graph of this compile id (a ``torch.cond`` branch, a loop body):
    #: its name (``true_graph_0``); its code is in that graph's output code, which calls it. ``""`` for the others.
    subgraph: str = ""
    #: Inductor's autotuning settings as it compiled (``AutotuneMode``); None where not recorded (a TORCH_TRACE
    #: import, an older report).
    autotune_mode: Optional[AutotuneMode] = None
    #: What the panel says when max-autotune was on and nothing was tuned, and why (``rules.autotune_note``);
    #: ``""`` otherwise.
    autotune_note: str = ""
    #: The vector instruction set Inductor wrote this compile's C++ kernels for (``pick_vec_isa()`` as it compiled:
    #: the CPU's widest, or the one ``cpp.simdlen`` asked for): ``avx512``, ``avx2``, ``INVALID_VEC_ISA`` (scalar code);
    #: ``cpu_isa_bits`` its vector width (512, 256, 0). A C++ kernel's source is written for that width: compiled for
    #: another (a report's reproducer run on a machine whose widest differs) it reads and writes past its buffers, so
    #: reproducers compile it for this one. ``""`` and ``None`` where the compile has no C++ kernel or it was not
    #: recorded (a TORCH_TRACE import, a report made before it).
    cpu_isa: str = ""
    cpu_isa_bits: Optional[int] = None
    #: The user's graph passes set in Inductor's config as it compiled (``CustomPass``): its post-grad graph (or
    #: its joint graph, dynamo's graph) is not Inductor's alone. ``[]`` where none, or not recorded.
    custom_passes: list[CustomPass] = field(default_factory=list)
    #: What the panel says of them (``rules.custom_pass_note``): which pass ran on which graph; ``""`` for none.
    custom_pass_note: str = ""
    guards: str = ""
    #: The guards on sizes in ``guards`` (``rules.size_guards``: ``17 <= x.size()[0]``), what the panel lists.
    size_guards: list[str] = field(default_factory=list)
    #: ``False`` when the compile never finished (Ctrl-C during the C++ build, or it raised): the kernels
    #: were generated, but torch never loaded them, so this graph never ran compiled.
    complete: bool = True
    #: Where the memory goes: live bytes over the fused nodes, the peak, what is saved for the backward
    #: (``Memory``); None for reports recorded before it existed.
    memory: Optional[Memory] = None
    #: CUDA graphs under ``mode="reduce-overhead"`` (``CudaGraphs``); null in any other mode.
    cudagraphs: Optional[CudaGraphs] = None
    #: The fusion graph's data edges (``FusionEdge``), in the order drawn; filled on load for older reports.
    edges: list[FusionEdge] = field(default_factory=list)
    #: How the fusion graph folds the fused nodes by module: repeated layers, the opening expansion
    #: (``ModuleView``; filled on load for older reports).
    module_view: Optional[ModuleView] = None
    #: ``True`` when module paths of its post-grad ops and fused nodes were inferred, not recorded
    #: (``report/module_paths.py``): from the parameters each op reads, in a backward the gradients it makes and
    #: the activations it reads, and the ops around it; a TORCH_TRACE log holds none, and a report recorded
    #: before the capture read a backward's ``fwd_nn_module_stack`` none for its backward. Recorded paths are kept.
    modules_inferred: bool = False
    #: The path from the user's call to where Inductor lowers this graph (the stack on entering its first
    #: ``GraphLowering.call_function``) and to the scheduler's fusion (its first ``Scheduler.fuse_nodes``), trimmed
    #: like a kernel's ``compiler_stack``: with it, the three paths of a compile (lowering, fusion, codegen), which
    #: share their frames down to Inductor's compile of the graph. ``[]`` where not recorded (a TORCH_TRACE import, a
    #: graph read from a cache, reports made before it).
    lowering_stack: list[Frame] = field(default_factory=list)
    fusion_stack: list[Frame] = field(default_factory=list)
    #: What its record cannot hold, said in the panel's section that would show it, with what to do instead
    #: (``rules.TRACE_UNRECORDED``): for a compile imported from a TORCH_TRACE log, ``lowered_by`` (the lowering
    #: function of each op), ``merge`` (the scheduler nodes before fusion: which ops lowering inlined and which the
    #: scheduler fused) and ``compiler_stack`` (Inductor's call stacks). ``{}`` for a compile captured in process.
    unrecorded: dict[str, str] = field(default_factory=dict)
    #: ``rules.stage_paths`` of the lowering and fusion paths alone, for a node with no kernel. Derived.
    stage_shared: int = 0
    stage_note: str = ""
    #: Its kernels' measured time by the user's line (``LineTime``), by the rule of ``StepProfile.by_line``
    #: (``report/lines.time_by_line``: each launch's time split evenly among its lines): what the Source view
    #: says of a line in this compile. ``[]`` without a profile. Derived.
    time_by_line: list[LineTime] = field(default_factory=list)
    #: Derived: where the graph calls repeated regions (``invoke_subgraph``), what the Kernels view says beside its
    #: own kernels: each region's calls and the kernel launches they run, listed in the region's compile
    #: (``rules.region_kernels_note``, ``finish.link_branches``); ``""`` elsewhere.
    kernels_note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "why", compile_why(self.recompile_reason, getattr(self.trigger, "reason", "")))

    def kernel(self, name: str) -> Kernel:
        """The kernel called ``name``; ``KeyError`` names the ones there are."""
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no kernel {name!r} in compile {self.id!r} (kernels: {[k.name for k in self.kernels]})")

    def fused_node(self, name: str) -> FusedNode:
        """The post-fusion node called ``name``."""
        for n in self.fused_nodes:
            if n.name == name:
                return n
        raise KeyError(f"no fused node {name!r} in compile {self.id!r}")


@_record
class GraphBreak(_Record):
    """Dynamo stopped tracing here and split the function into several compiled frames.

    Derived whenever a break is built or loaded (a stored value is ignored): ``summary``, the reason's telling
    line (``rules.break_summary``: torch's header naming the bytecode left out); ``shown_frame``, the index in
    ``user_stack`` of the line the views show, the user's innermost frame (else the innermost; -1 without a
    stack); ``broke_inside``, where beyond that line it broke: ``torch`` or ``library`` (the stage of the innermost
    frame's file, ``rules.frame_stage``), ``""`` when it broke on the shown line; ``inside_text``, that in the
    views' words (``rules.break_inside_text``: ``Not in your code: inside torch,
    torch/optim/optimizer.py:97 in _use_grad``), ``""`` with it."""

    reason: str
    user_stack: list[Frame] = field(default_factory=list)
    #: The compile ids of the frames it broke in, in order (a recompile breaks again at the same place); empty
    #: where not recorded.
    compile_ids: list[str] = field(default_factory=list)
    summary: str = ""
    shown_frame: int = -1
    broke_inside: str = ""
    inside_text: str = ""

    def __post_init__(self) -> None:
        stack = self.user_stack
        users = [i for i, f in enumerate(stack) if isinstance(f, Frame) and f.stage == "user"]
        shown = users[-1] if users else len(stack) - 1
        inside = text = ""
        # torch's call of a module after the shown line is that line's call, not where it broke (a disabled forward)
        beyond = [f for f in stack[shown + 1 :] if not (isinstance(f, Frame) and module_call_glue(f.file, f.function))]
        if stack and beyond:
            last = beyond[-1]
            # from the file, not the stage stored with the frame: reports recorded in an environment under a folder
            # named torch (/opt/torch/.venv) staged a library's frames "torch"
            inside = break_inside(frame_stage(last.file, last.function) if last.file else last.stage)
            text = break_inside_text(inside, last.file, last.line, last.function)
        object.__setattr__(self, "reason", readable_reasons(self.reason))
        object.__setattr__(self, "summary", break_summary(self.reason))
        object.__setattr__(self, "shown_frame", shown)
        object.__setattr__(self, "broke_inside", inside)
        object.__setattr__(self, "inside_text", text)


@_record
class EmptyFrame(_Record):
    """A frame dynamo traced that gave Inductor no graph (no tensor op in it: a resume function after a graph
    break, an optimizer's ``wrapper``; or dynamo could not trace it and ran it eagerly: a GRU), from torch's
    ``compilation_metrics``: why its compile id is missing from the compiles. ``ops``: the graph's op count torch
    recorded (0), None where it recorded none. ``fail``: where dynamo gave up and ran the frame eagerly, the first
    line of why (``Attempted to wrap RNN, GRU, or LSTM``), else ``""``. ``time_us``/``duration_us``: when dynamo
    began the frame (µs into the capture, or into the log of a TORCH_TRACE import) and for how long, None where
    not recorded (older reports). ``recompile_reason``: where dynamo traced the frame again because a guard of its
    earlier trace failed (``1/1``: ``___stack2 == 0.2163``, a float the code before a graph break handed on), the
    failed guards in torch's words, as ``Compile.recompile_reason``; ``""`` otherwise and in reports made before the
    seventeenth session. Derived whenever it is built or loaded: ``label``, the function as people say it
    ("step() after line 15", as a compile's frame: ``rules.frame_label``), ``what``, why Inductor got nothing
    (``rules.empty_frame_words``), and ``why``, for a recompile (``recompiled``: a failed guard recorded, or a
    trace of the frame after its first, ``1/1``) what failed, as a compile's (``rules.compile_why``), ``""`` for
    a frame's first trace."""

    compile_id: str
    function: str
    file: str = ""
    line: int = 0
    ops: Optional[int] = None
    label: str = ""
    what: str = ""
    fail: str = ""
    time_us: Optional[float] = None
    duration_us: Optional[float] = None
    recompile_reason: str = ""
    why: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", frame_label(self.function) or "a frame")
        object.__setattr__(self, "what", empty_frame_words(self.ops, self.fail))
        said = self.recompile_reason or RECOMPILE_UNSAID
        object.__setattr__(self, "why", compile_why(said, "") if self.recompiled else "")

    @property
    def recompiled(self) -> bool:
        """Dynamo traced the frame again: a guard of an earlier trace failed (its reason recorded, or the frame's
        count in the compile id past 0: ``1/1``)."""
        return bool(self.recompile_reason) or _attempt(self.compile_id) > 0

    @property
    def trigger_reason(self) -> str:
        """The recompile as a compile's ``Trigger.reason`` says it (``recompile of f: 1/0: ...``): what
        :meth:`Report.recompiles` lists; ``""`` for a first trace."""
        if not self.recompiled:
            return ""
        text = "; ".join(ln for ln in self.recompile_reason.splitlines() if ln.strip()) or RECOMPILE_UNSAID
        return f"recompile of {self.function or 'the frame'}: {text}"


@_record
class RecompileLimit(_Record):
    """Where dynamo gave up recompiling a frame: a guard of each of its compiles failed and it had made as many as
    its limit allows (``torch._dynamo.config.recompile_limit``, or ``accumulated_recompile_limit``), so it made no
    compile ``compile_id`` (the id it gave the compile it refused: ``0/3``) and from then on runs the frame eagerly
    for a call whose inputs fit none of its compiles (torch's ``compilation_metrics`` of that id: ``fail_reason``
    ``Limit type: recompile_limit``). Under ``fullgraph=True`` or ``fail_on_recompile_limit_hit`` torch raises instead:
    no such record. ``limit``: the config's name; ``value``: its value, None where torch's words did not say it;
    ``guard``: the guard that failed last, in torch's words, and ``guard_of`` the compile it belongs to (``0/2``),
    ``""`` where torch recorded none. ``time_us``: when dynamo began the refused compile (µs into the capture, or into
    the log of a TORCH_TRACE import; the record's ``start_time_us``), None where not recorded. Derived whenever it is
    built or loaded: ``label``, the function as people say it (``rules.frame_label``: ``f()``), and ``text``, what
    hitting the limit means in words (``rules.recompile_limit_text``): the timeline's row says it."""

    compile_id: str
    function: str
    file: str = ""
    line: int = 0
    limit: str = "recompile_limit"
    value: Optional[int] = None
    guard: str = ""
    guard_of: str = ""
    time_us: Optional[float] = None
    label: str = ""
    text: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", frame_label(self.function))
        text = recompile_limit_text(self.label, self.limit, self.value, self.guard, self.guard_of)
        object.__setattr__(self, "text", text)


#: What a recompile whose failed guards torch did not record says.
RECOMPILE_UNSAID = "a guard of an earlier compile failed"


def _attempt(compile_id: str) -> int:
    """How many times dynamo had traced the frame before (``1/2`` -> 2; a restart's ``_1`` left out)."""
    parts = compile_id.split("_")[0].split("/")
    return int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else 0


@_record
class CompileCall(_Record):
    """A call of ``torch.compile`` seen during the capture: it only wraps the function."""

    target: str
    backend: str
    user_stack: list[Frame] = field(default_factory=list)
    time_us: Optional[float] = None
    #: The call as the views cite it (``rules.stack_line_text``), derived like ``Trigger.line``.
    line: str = ""
    #: How long the call took (µs): the wrapping only, or, for a process's first ``torch.compile()`` with the
    #: inductor backend outside a capture, the import of Inductor too (``CaptureStart.imported_inductor``). None
    #: where it raised, and in reports made before it.
    duration_us: Optional[float] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "line", stack_line_text(self.user_stack))


@_record
class WrappedBy(_Record):
    """The ``torch.compile()`` call that wrapped a compile's function (``Report.wrapped_by``), derived."""

    #: Its index in ``Report.compile_calls``.
    call: int
    #: "torch.compile(f) at spot.py:9 only wrapped f; this compile began 11.0 ms later, at the first call of the
    #: compiled function (spot.py:13)." (``rules.wrapped_by``).
    text: str


@_record
class SourceMark(_Record):
    """A line of the user's code where torch.compile's two spots are (``Report.source_marks``, derived): ``kind``
    ``wraps`` where ``torch.compile()`` was called (it only wrapped the function), ``compiles`` where a call started
    a compile; ``text`` says it (``rules.source_marks``), one line per call or compile."""

    file: str
    line: int
    kind: str
    text: str


@_record
class CaptureStart(_Record):
    """What the capture's own start did, before the clock of the report's times began (``Report.capture_start``).

    Its hooks need Inductor's modules: where Inductor was not imported yet, the start imports it (with dynamo),
    which a plain run's first ``torch.compile()`` with the inductor backend does instead: that call then takes
    seconds (``lowering.py`` registers every lowering as it is imported), and under the lens milliseconds.
    """

    #: How long the start took (µs): joining torch's hooks, importing what they need.
    duration_us: float
    #: Whether it imported Inductor (``torch._inductor.compile_fx`` and ``torch._inductor.lowering`` were not
    #: imported before it); False where the user's code, an earlier ``torch.compile()`` or an earlier capture had.
    imported_inductor: bool = False


@_record
class DynamoReset(_Record):
    """A call of ``torch.compiler.reset()`` (``torch._dynamo.reset()``) by the user's code during the capture: dynamo
    forgot every compile, and the next call of a compiled function compiles again (its id from ``0/0`` again, the
    compile's ``id`` then ends in `` #2``)."""

    user_stack: list[Frame] = field(default_factory=list)
    time_us: Optional[float] = None
    #: The call as the views cite it (``rules.stack_line_text``), derived like ``CompileCall.line``.
    line: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "line", stack_line_text(self.user_stack))


@_record
class Diagnostic(_Record):
    """Something the report could not show, or something torch did that the user should know.

    Consumers switch on ``code`` (never on the wording of ``message``); ``detail`` holds extra text such
    as a traceback. Codes: see ``docs/report-schema.md`` (``DIAGNOSTIC_CODES``). Diagnostics of version-1
    reports, plain strings, load as code ``legacy``.
    """

    code: str
    message: str
    detail: str = ""

    @classmethod
    def from_plain(cls, value: Any, where: str = "diagnostic") -> "Diagnostic":
        if isinstance(value, str):
            return cls(code="legacy", message=value)
        if not isinstance(value, dict):
            raise ReportError(f"{where}: expected an object for Diagnostic, got {type(value).__name__}")
        return from_plain_fields(cls, value, where)

    def __str__(self) -> str:
        return self.message


#: Diagnostic codes the capture emits, and what each means.
DIAGNOSTIC_CODES = {
    "interrupted": "stopped by Ctrl-C (SIGINT): the report holds what compiled before that",
    "hook_missing": "a capture hook could not be installed on this torch version: that part of the report is missing",
    "hook_failed": "a capture hook or record reader failed: that part of the report is missing",
    "build_failed": "the report could not be built from what was recorded",
    "torch_too_old": "torch is older than the oldest version inductor_lens supports",
    "subprocess_mode": "Inductor ran in another process, where no hook fires",
    "recompile_limit": "dynamo hit its recompile limit: the frame runs eagerly from then on",
    "eager_fallback": "dynamo could not compile a frame and ran it eagerly",
    "compile_raised": "dynamo could not compile a frame and raised the error to the user's code (fullgraph=True): "
    "nothing ran eagerly",
    "compile_error": "a compile failed and torch swallowed the error (suppress_errors): the frame ran eagerly",
    "compile_unsupported": "dynamo could not compile a frame; it ran eagerly unless the error reached the user's "
    "code, and nothing recorded says which (a TORCH_TRACE import, an error caught inside the capture)",
    "user_code_raised": "the captured code raised; the report holds what compiled before that",
    "nothing_compiled": "nothing was compiled inside the capture (the message says why)",
    "call_skipped": "dynamo skipped the frame of a torch.compile'd call (its code is in dynamo's skip files, as "
    "torch's own modules are): the call ran eagerly, nothing of it compiled",
    "never_ran": "torch.compile() was called but the compiled function never ran",
    "other_backend": "torch.compile() used a backend other than inductor",
    "source_missing": "a kernel's source or node links are missing",
    "autotune_unlinked": "autotuning results could not be tied to a kernel",
    "compile_incomplete": "a compile did not finish (interrupted, or it raised): its kernels were generated but "
    "never loaded",
    "backward_failed": "the backward pass could not run; the forward report is kept",
    "profile_failed": "profiling failed or some kernels have no measured time",
    "profile_missing": "the profiler saw no event for some kernels: they have no measured time",
    "profile_noisy": "most kernels' profiled runs disagree by more than 3x: the machine was busy while profiling",
    "profile_peaks": "the device's peak bandwidth and compute are unknown: no fraction of peak",
    "trace_no_pre_fusion": "imported from a TORCH_TRACE log, which holds no pre-fusion nodes or refused fusions",
    "trace_no_compiler_stack": "imported from a TORCH_TRACE log, which holds no compiler call stacks",
    "trace_no_module_paths": "imported from a TORCH_TRACE log, whose graphs carry no nn.Module paths",
    "trace_no_memory": "imported from a TORCH_TRACE log: some compiles have no Memory view (no output code, or a C++ "
    "wrapper's, whose allocations are not read)",
    "trace_fused_from_provenance": "imported from a TORCH_TRACE log: fused nodes derived from the output code",
    "trace_derived": "imported from a TORCH_TRACE log: some kernel links were read from the output code's comments",
    "trace_unlinked": "imported from a TORCH_TRACE log: some kernels are not linked to post-grad nodes",
    "trace_incomplete": "imported from a TORCH_TRACE log: some records were missing or unreadable",
    "trace_cache_hit": "imported from a TORCH_TRACE log: some graphs were read from torch's caches (AOT autograd's, "
    "Inductor's FX-graph cache), not compiled in that run: no lowering, fusion or provenance of theirs was logged",
    "rank_missing": "a rank of a distributed job wrote no report",
    "rank_stopped": "a rank was stopped (signal or timeout) before its script finished: its report is partial",
    "cudagraph_skipped": 'mode="reduce-overhead": torch skipped CUDA graphs for a graph (the message gives torch\'s reason)',
    "cudagraph_rerecorded": 'mode="reduce-overhead": a CUDA graph was recorded 3 times or more in the capture',
    "launch_unread": "a compile written with the C++ wrapper (cpp_wrapper=True): its kernels' launches are not read "
    "(no launch table, no reproducer)",
    "ir_missing": "ir=True: a Triton kernel's IR stages or resources could not be read from the compiled kernel",
    "reset_skipped": "a capture started inside another did not reset dynamo (a reset would have made what the "
    "enclosing capture compiled compile again): it records only what compiles anew",
    "dynamo_reset": "the capture's start reset dynamo (torch._dynamo.reset(), for the whole process): the functions "
    "it had compiled before (the message names them) compile again at their next call, also after the capture; "
    "compile ids start again at 0/0",
    "no_reset": "the capture kept dynamo's state (capture(reset=False), %%inductor_lens --no-reset): a call of a "
    "function compiled before it (the message names them) that finds its compile compiles nothing and is not recorded",
    "ca_cache_off": "compiled autograd ran with the AOT-autograd cache the capture turned off: torch traces its "
    "backward otherwise where that cache hits (a warm cache), so a run of the script without the lens may compile "
    "and run another backward",
    "hook_not_run": "a hook registered on a compiled module (or one of its sub-modules) after torch compiled it did "
    "not run, or one removed after it still ran: dynamo does not guard on nn.Module hooks "
    "(torch._dynamo.config.skip_nnmodule_hook_guards)",
    "legacy": "a diagnostic of a version-1 report (plain text)",
}


@_record
class SourceFile(_Record):
    """The text of a file that appears in a user stack (``file`` exactly as ``Frame.file``).

    ``note`` says why ``text`` is missing or shortened (unreadable, too large), or what a text with no file is (code
    torch.fx generated, read from ``linecache``); ``""`` for a whole file.
    """

    file: str
    text: str = ""
    note: str = ""


@_record
class Report(_Record):
    """Everything one capture recorded. See ``docs/report-schema.md``."""

    torch_version: str
    device: str
    compiles: list[Compile] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    compile_calls: list[CompileCall] = field(default_factory=list)
    #: The user's ``torch.compiler.reset()`` calls during the capture (``DynamoReset``), in order.
    resets: list[DynamoReset] = field(default_factory=list)
    #: Frames dynamo traced that gave Inductor no graph (``EmptyFrame``), in compile-id order: the ids the
    #: compiles skip. Empty in reports made before it.
    empty_frames: list[EmptyFrame] = field(default_factory=list)
    #: Where dynamo gave up recompiling a frame (``RecompileLimit``), in compile-id order: later calls of it that
    #: fit none of its compiles ran eagerly. Empty in reports made before it.
    recompile_limits: list[RecompileLimit] = field(default_factory=list)
    #: The user's own source files (and notebook cells, as ``cell [N]``) that its stacks point into.
    source_files: list[SourceFile] = field(default_factory=list)
    title: str = ""
    created: str = ""
    schema_version: int = SCHEMA_VERSION
    #: The device a profile ran on and its peaks (``inspect(..., profile=True)``).
    device_info: Optional[DeviceInfo] = None
    #: The profiled step as a whole (``StepProfile``): measured and attributed device time, the unattributed
    #: remainder, and roll-ups by source line, nn.Module and kernel kind (see docs/report-schema.md).
    profile: Optional[StepProfile] = None
    #: The measured time of every compile's kernels by line of the user's code (``LineTime``, the rule of
    #: ``Compile.time_by_line`` over all compiles, ``report/lines.mark_times``): the Source view's gutter when it
    #: shows all compiles. Also where the report has no ``profile`` (kernels timed alone). Derived.
    time_by_line: list[LineTime] = field(default_factory=list)
    #: The process's rank in a distributed job (``RANK``, or ``torch.distributed.get_rank()``); None alone.
    rank: Optional[int] = None
    #: How many ranks the job had (``WORLD_SIZE``); None outside a distributed job.
    world_size: Optional[int] = None
    #: The wall-clock time the report's times count from (µs since the Unix epoch, ``time.time()``): the capture's
    #: start, or the first event of a TORCH_TRACE log. What a job's ranks are aligned on (``analysis/job.py``); None
    #: in reports made before it.
    start_wall_us: Optional[float] = None
    #: ``capture`` (recorded in process) or ``trace`` (rebuilt from a TORCH_TRACE log by ``load_trace``).
    origin: str = "capture"
    #: What the capture's start did before its clock began (``CaptureStart``): whether it imported Inductor, and
    #: how long it took. None for a TORCH_TRACE import and in reports made before it.
    capture_start: Optional[CaptureStart] = None
    #: Which generation of derived fields the report holds (``DERIVED_VERSION``); see ``report/finish.py``.
    derived: int = DERIVED_VERSION
    #: The views this report has something to show in, in tab order (``rules.available_views``: the roofline
    #: only with measured kernel costs, the memory view only with ``Compile.memory``). Derived from the compiles
    #: on every construction; a stored value is ignored. The front end opens these tabs and no others.
    views: list[str] = field(default_factory=list)
    #: Whether any kernel carries a measured time (``rules.view_facts``), derived like ``views``.
    profiled: bool = False
    #: When Inductor ran, in words (``rules.when_text``): where ``torch.compile`` was called (it only wraps), when
    #: and why Inductor first ran, or where nothing compiled, the frame dynamo ran eagerly. Derived like ``views``;
    #: the timeline's first line, and printed by ``inductor-lens run`` and ``demo`` above their last.
    when: str = ""
    #: Each compile's ``id`` -> the ``torch.compile()`` call that wrapped its function (``WrappedBy``: its index in
    #: ``compile_calls``, and in words how long after it the compile began, ``rules.wrapped_by``). Only compiles
    #: dynamo started, whose function a recorded call wrapped. Derived like ``views``: the panel's "When it
    #: compiled" says it, the timeline draws that call beside the compile.
    wrapped_by: dict[str, WrappedBy] = field(default_factory=dict)
    #: The lines of the user's code where ``torch.compile()`` was called and where a call started a compile
    #: (``SourceMark``, ``rules.source_marks``): the Source view marks them. Derived like ``views``.
    source_marks: list[SourceMark] = field(default_factory=list)
    #: What a report with no compile says instead of a graph (``rules.nothing_text``): why nothing compiled, by its
    #: diagnostics (dynamo skipped the call, another backend, the function never ran...); ``""`` where something
    #: compiled. Derived like ``views``.
    nothing: str = ""
    #: The graph breaks in words (``rules.breaks_text``), as the page's header and ``summary()`` say them: the breaks
    #: recorded, torch's count where it differs (a break met in several frames, or again as its frame recompiled:
    #: ``counters["graph_break"]`` counts it in each compile), and the frames dynamo could not compile. The panel's
    #: "Graph breaks in this capture" heading. Derived like ``views``.
    breaks: str = ""

    def __post_init__(self) -> None:
        if type(self.profile) is dict:  # the 0.2 spelling, a plain dict: typed once, here
            object.__setattr__(self, "profile", StepProfile.from_plain(self.profile, "Report.profile"))
        facts = [_lazy.view_facts(c) for c in self.compiles]  # a compile not built yet answers from its line
        object.__setattr__(self, "views", list(available_views(facts)))
        object.__setattr__(self, "profiled", any(f[0] for f in facts))
        object.__setattr__(
            self, "when", when_text(self.compile_calls, self.compiles, self.empty_frames, self.capture_start)
        )
        said = wrapped_by(self.compile_calls, self.compiles)
        object.__setattr__(self, "wrapped_by", {k: WrappedBy(call, text) for k, (call, text) in said.items()})
        marks = source_marks(self.compile_calls, self.compiles)
        object.__setattr__(self, "source_marks", [SourceMark(*m) for m in marks])
        codes = [getattr(d, "code", "") for d in self.diagnostics]
        object.__setattr__(self, "nothing", nothing_text(bool(self.compiles), codes))
        object.__setattr__(self, "breaks", breaks_text(len(self.graph_breaks), codes, frames_met(self.graph_breaks)))

    # -- access ---------------------------------------------------------------------------
    def compile(self, id: str) -> Compile:
        """The compile whose ``id`` (``"0/0 forward"``) or ``compile_id`` (``"0/0"``) is given."""
        for c in self.compiles:
            if c.id == id:
                return c
        for c in self.compiles:
            if c.compile_id == id:
                return c
        raise KeyError(f"no compile {id!r} (compiles: {[c.id for c in self.compiles]})")

    @property
    def kernels(self) -> list[Kernel]:
        """All kernels of all compiles, in order."""
        return [k for c in self.compiles for k in c.kernels]

    def recompiles(self) -> list[tuple[str, str]]:
        """``(compile id, reason)`` of every recompile, in report order: each compile a recompile triggered
        (``Trigger.reason``, ``recompile of f: 0/0: ...``), then each frame dynamo traced again that gave Inductor
        no graph (``EmptyFrame.trigger_reason``: the code after a graph break, recompiled on a float it was handed).
        What the diff, a job's ranks and the summary count."""
        out = [(c.compile_id, c.trigger.reason) for c in self.compiles if c.trigger.kind == "recompile"]
        return out + [(f.compile_id, f.trigger_reason) for f in self.empty_frames if f.recompiled]

    def summary(self) -> str:
        """Plain text: the totals, when Inductor ran (``when``), one line per compile and one per kernel under it, then
        breaks and diagnostics."""
        import textwrap  # here: importing the model (``import-trace``'s start) does without it

        lines = [
            f"inductor_lens report: {len(self.compiles)} compile(s), {kernels_text(len(self.kernels))}, "
            f"{self.breaks}; "
            f"torch {self.torch_version} on {self.device}",
            *textwrap.wrap(self.when, 116, initial_indent="  when: ", subsequent_indent="        "),
        ]
        for c in self.compiles:
            same = f", same graph as {c.same_graph_as}" if c.same_graph_as else ""
            # counted as the views count them: glue (a getitem of a multi-output call, a view) is no box
            glue = sum(1 for n in c.fused_nodes if n.is_glue)
            lines.append(
                f"  {c.id}: {c.frame_label or c.frame or '?'} [{c.trigger.kind}{same}] "
                f"{len(c.fused_nodes) - glue} fused node(s){f' (+{glue} glue: drawn as edges)' if glue else ''}, "
                f"{len(c.kernels)} kernel(s)"
            )
            for k in c.kernels:
                lines.append(f"    {k.name} ({k.language})")
        for f in self.empty_frames:  # no compile of their own: why the ids jump, and a recompile all the same
            lines.append(f"  {f.compile_id}: {f.label} [{'recompile, ' if f.recompiled else ''}no graph] {f.what}")
            if f.recompiled:
                lines.append(f"    recompiled because: {f.why.splitlines()[0] if f.why else RECOMPILE_UNSAID}")
        for b in self.graph_breaks:
            where = next((f"{f.file}:{f.line}" for f in reversed(b.user_stack) if f.is_user), "")
            lines.append(f"  graph break{' at ' + where if where else ''}: {b.summary or '?'}")
        if self.profile and self.profile.device_total_us is not None:
            p = self.profile
            share = p.unattributed_share
            spread = timing_text(
                p.statistic, p.runs, p.device_total_min_us, p.device_total_max_us, p.device_total_std_us
            )
            timed = [k.profile for k in self.kernels if k.profile is not None]
            noisy = sum(1 for t in timed if t.noisy)
            lines.append(
                f"  profile ({p.device}): {p.device_total_us:.1f} us per step, {spread}; "
                f"{p.attributed_us:.1f} us in kernels" + (f", unattributed: {share:.0%}" if share is not None else "")
            )
            if p.few_runs:
                lines.append(f"    {p.few_runs}")
            if noisy:
                lines.append(
                    f"    {noisy} of {len(timed)} kernels noisy: their runs disagree (the machine was busy), their "
                    f"times ({p.statistic}s) and the verdicts on them are uncertain"
                )
        for d in self.diagnostics:
            lines.append(f"  ! {d.message}")
        return "\n".join(lines)

    def __repr__(self) -> str:  # cheap on purpose: never dumps sources, never builds a pending compile
        kernels = sum(_lazy.count(c) for c in self.compiles)
        return (
            f"<inductor_lens.Report: {len(self.compiles)} compile(s), {kernels} kernel(s), "
            f"{self.breaks}, "
            f"torch {self.torch_version}, {self.device}>"
        )

    # -- serialization --------------------------------------------------------------------
    def to_dict(self, compact: bool = False) -> dict:
        """The report as plain data. ``compact=True`` gives the written form, where each distinct frame,
        stack and guard line is stored once (``interned``) and referred to by index; ``load`` expands it."""
        plain = to_plain(self)
        return _intern.compact(plain) if compact else plain

    def to_json(self, indent: Optional[int] = None, compact: bool = True) -> str:
        """The report as JSON; ``load(report.to_json()) == report``. By default exactly what ``save_json``
        writes: the compact written form, one compile per line, which ``load`` reads compile by compile.
        ``compact=False``: the expanded form; ``indent``: indented (neither is in the line layout)."""
        if compact and indent is None:
            return hooks.call("dumps", self).decode("utf-8")
        return json.dumps(self.to_dict(compact=compact), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        """A report from plain data: the expanded or compact form, of this schema version or version 1."""
        return hooks.call("from_dict", cls, data)

    def save_json(self, path: Union[str, os.PathLike]) -> str:
        """Write the report as JSON (gzip'd if ``path`` ends in ``.gz``) without ever leaving a half-written
        file (see :mod:`inductor_lens.report.io`); returns the path."""
        return hooks.call("save_json", self, path)

    # -- conveniences: the work is done by the views and the analysis (see ``hooks``) -----------------
    def widget(self, **kwargs):
        """The interactive :class:`inductor_lens.LensWidget` for this report."""
        return hooks.call("widget", self, **kwargs)

    def save_html(self, path: Union[str, os.PathLike]) -> str:
        """Write one self-contained HTML page that shows this report offline; returns its path
        (the same as ``inductor_lens.save_html(report, path)``)."""
        return hooks.call("save_html", self, path)

    def diff(self, other: "Report", pairs=None):
        """Compare this report (A) with ``other`` (B): see :func:`inductor_lens.diff`."""
        return hooks.call("diff", self, other, pairs=pairs)

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            return self.widget()._repr_mimebundle_(include=include, exclude=exclude)
        except Exception:  # no widget machinery (plain terminal): fall back to text
            return {"text/plain": self.summary()}


# A loaded report keeps its long texts as references to the file's lines (``_text``): these fields read as str.
_text.install(globals())
# A loaded report builds each compile's graphs, nodes and kernels when they are first read (``lazy``).
_lazy.install(Compile)


def load(source: Union[str, os.PathLike, bytes, dict]) -> Report:
    """Load a report from a path (``.json`` or ``.json.gz``), JSON text, bytes, or a parsed dict.

    Every problem (no file, not JSON, wrong types, an unknown schema version) raises a
    :class:`ReportError` whose one-line message names the file; see :mod:`inductor_lens.report.io`.
    """
    return hooks.call("load", source)
