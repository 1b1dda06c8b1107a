"""Compare two reports: which kernel launches are the same, changed, or only on one side.

>>> d = inductor_lens.diff(report_a, report_b)      # or report_a.diff(report_b)
>>> d.summary                                      # kernel launches
{'same': 5, 'changed': 1, 'only_a': 0, 'only_b': 0}
>>> display(d)                                     # the compare view; d.save_html("diff.html")

Torch-free: it reads two :class:`~inductor_lens.model.Report` objects only.

How things are paired
---------------------
* **Compiles** by (traced frame, graph kind, order among compiles of that frame and kind), so
  ``0/0 forward`` pairs with the other report's first forward of the same function even when
  graph breaks renumbered the frames; then those left, of one graph kind, whose kernels' sources are equal
  (:func:`_pair_by_kernels`: frames named differently, ``AdamW.step`` and ``Adam.step``). ``pairs=[("0/0 forward", "1/0 forward")]`` overrides this
  for the compiles it names; the rest are paired automatically.
* **Kernel launches** by what they compute, never by name or buffer number (both shift when anything
  upstream changes). The unit, counted the same everywhere (summary, table rows, badges, legend), is a
  kernel launch: one call of a kernel in the output code (``Kernel.call_sites``), with every fused node
  that call computes; a kernel Inductor calls twice is two launches, each saying which (``launch_a``).
  Each launch is described by the multiset of its FX ops' targets (``aten.mul.Tensor``), the multiset
  of (target, shape), and the sets of user source lines (``model.py:12``) and nn.Module paths they
  come from. The similarity of two launches is a weighted Jaccard index over these (``sum(min) /
  sum(max)``); a line or module set empty on both sides is no evidence and is left out (the other
  weights rescaled); halved when one is an extern call and the other generated code. Launches with
  identical descriptions pair first, in order (where one side has more, those closest in position:
  :func:`_align`); then generated launches with equal sources (normalised, without a profiled capture's
  instrumentation: :func:`_same_code`; a TORCH_TRACE import links no op to a C++ kernel); then launches that
  **merged** or **split**, by the ops each covers (:func:`_merges`: each FX
  node has an identity across the reports, its op, module and source line, :func:`_node_facts`): an A launch
  whose ops all run in one B launch, as another A launch's do, is merged into it (epilogue fusion into a GEMM
  template: A's matmul and A's pointwise kernel after it), the first of them paired with it and the others
  ``merged`` rows, never ``removed``, also where the B launch had paired already with one of them (A's bias add of
  a frozen linear, whose only op is the linear, as B's template's: :func:`_into_paired`); the converse is a split.
  The rest are paired greedily: the most similar
  pair first (ties: the closer relative position in the compile), each launch at most once, and only above
  :data:`MIN_SIMILARITY`. Greedy is not an optimal assignment, but with these features near-ties are rare and
  the result is explainable (``similarity`` is kept). Last, a launch left on each side, one an extern call and one
  generated, that compute the same user lines pair as one call computed another way (:func:`_same_call`: the change
  ``lowering``, an SDPA decomposed into a C++ kernel by torch 2.13 and an extern call by 2.15).

When the reports share little
-----------------------------
:func:`shared` counts the ops both sides compute (by identity, whatever launch holds them: a fusion that moved
ops between launches changes nothing); when they are fewer than :data:`SHARED_LITTLE` of the ops of the side
with fewer, the diff has a note with code ``different_models`` (``ReportDiff.notes``), printed by ``text()``
and the CLI and shown as a banner.

Time
----
Where both reports were profiled, each row has both measured times and the delta, and the diff (and each compile
pair) the measured kernel time of each side with a verdict (``kernel_time_us``: ``"B is 2.2× slower in measured
kernel time: 88.9 µs against 40.5 µs in A"``; else why not). ``timing`` says how each side was timed and warns where
not alike (note ``timed_differently``). Where B's autotuning chose a template over a library kernel that A called for
the same op and shapes and measured, the row says both times (``autotune_vs_a``) and, where the autotuner timed the
library kernel far above A's measurement, a note says so (``autotune_vs_measured``). See :mod:`.diff_time`.

What "same" means
-----------------
A pair is ``same`` when its ops (target and shape) are equal, the shapes of its launch's tensor arguments are
equal (an input's too: ``mm(x[4, 16], w[16, 8])`` and ``mm(x[4, 32], w[32, 8])`` write the same ``[4, 8]``), its
cost (FLOPs, bytes moved) is equal, its sources are equal after normalisation (kernel names, ``bufN`` numbers and
long hashes replaced, kernel-path comments dropped, a profiled capture's two instrumentation lines of a C++ kernel
left out: :func:`kernel_source`), its launch configuration and autotune choice are equal, and it computes its ops in
as many fused nodes; otherwise ``changed``, with ``changes`` saying which of ``fusion`` (ops moved in or out),
``nodes`` (the same ops, each counted once per launch, in more or fewer fused nodes: ``config.max_fusion_size=1``),
``shape``, ``dtype`` and ``layout`` (of the launch's tensor arguments: ``float32 → bfloat16``, ``contiguous →
channels_last``), ``cost``, ``source``, ``args`` (the sources equal but for the names of the tensors passed, which hold
other things: an extern call on the user's channels-last ``x`` in B, on A's copy of it), ``launch``, ``autotune``
differ (``KernelDiff.arg_changes``); a compile pair says which graph inputs changed dtype or layout
(``CompileDiff.inputs``). What one side does not know (a TORCH_TRACE import's
ops of a C++ kernel, an op's shape) is not compared, and the row says so (``not_known_a``, ``not_known_b``).
``what_changed`` says it in words, for the page and the CLI alike.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence, Union

from ..report import hooks
from ..report.model import Compile, Kernel, Memory, Report
from ..report.rules import (
    bytes_text,
    delta_us_text,
    fmt_us,
    layout_name,
    line_frame,
    short_op,
    without_kernel_profile,
)
from .diff_time import autotune_summary, autotune_vs_measured, doubts, doubts_note, kernel_time, measured_us, timing

#: Kernel pairs less similar than this stay unpaired (``only_a`` / ``only_b``).
MIN_SIMILARITY = 0.2
#: The diff notes ``different_models`` when fewer than this share of the ops of the side with fewer are computed on
#: the other side too (:func:`shared`). Measured (share): default vs max-autotune, epilogues fused into GEMM
#: templates (an MLP under freezing on the CPU, an MLP on an H200): 1.0; a GPT-2 block vs a 1-layer GPT-2 training
#: step 0.94; an MLP on an H200 vs on the CPU (``mm`` + bias add vs ``addmm``) 0.67; an MLP vs a GPT-2 block or
#: training step (a few lines of ``examples.py`` shared) 0.2; sin/cos vs an MLP, an MLP vs an attention block 0.0.
SHARED_LITTLE = 0.3
#: Weights of the four multisets in the similarity (they sum to 1).
WEIGHTS = {"ops": 0.35, "loc": 0.25, "mod": 0.25, "shape": 0.15}
STATUSES = ("same", "changed", "merged", "split", "only_a", "only_b")
#: What the page calls each status (its badges, legend and table): decided here, drawn there.
STATUS_WORDS = {
    "same": "same",
    "changed": "changed",
    "merged": "merged",
    "split": "split",
    "only_a": "removed",
    "only_b": "added",
}
#: What a diff counts, everywhere (each ``KernelDiff`` is one): the page names its counts with it.
UNIT = "kernel launches"
#: 2: the unit is a kernel launch (a call site), no longer a fused node; ``fused_a``/``fused_b`` are lists;
#: ``launch_a``/``launch_b``, ``unit``, ``status_words``, ``shared``, ``notes``, per compile ``launches``, ``label``.
#: 3: statuses ``merged`` and ``split`` (``merged_into``, ``split_from``, ``merged_with``, ``split_with``); ``shared``
#: counts ops (``ops_a``, ``ops_b``, ``ops_shared``), per compile ``ops``.
#: 4: ``kernel_time_us`` (whole reports and per compile: each side's measured kernel time and the verdict),
#: ``timing`` (how each side was timed, ``warning`` where not alike), per row ``autotune_vs_a``; notes
#: ``timed_differently`` and ``autotune_vs_measured``.
#: 5: per row ``ops_word`` (what ``flops_a``/``flops_b`` count: ``"int8 ops"`` for a quantized kernel's).
#: 6: per row ``not_known_a``/``not_known_b`` (``"ops"``, ``"shape"``: what a side does not know, not compared); the
#: change ``nodes`` (the same ops in more or fewer fused nodes of the launch).
#: 7: per row ``arg_changes`` (a launch's tensor arguments whose dtype or layout changed, or what they hold where the
#: sources differ only by the names passed); the changes ``dtype``, ``layout``, ``args`` (no longer ``source`` for
#: such sources); per compile ``inputs`` (the graph inputs whose dtype or layout changed) and ``inputs_text``;
#: ``kernel_time_us.doubts`` and ``tone``, the note ``times_uncertain``; per row ``time_a_text``, ``time_b_text``,
#: ``time_delta_text``.
#: 8: ``shared.unpaired_a``/``unpaired_b`` (and the ops that compiles unpaired on both sides share counted as shared),
#: the note ``unpaired_compiles``, compiles paired by their kernels (``BY_KERNELS``); the change ``lowering`` and a
#: row's ``lowering`` (:func:`_same_call`); per compile ``memory.saved_by_forward`` and ``saved_by_forward_text``.
#: 9: an argument change ``reads``'s ``buffer_a`` and ``made_by_a`` (the kernel of A that wrote what A's argument holds
#: where B launches none such: ``_made_by_removed``), which ``what_changed`` names.
DIFF_FORMAT_VERSION = 9
#: The codes of :class:`DiffNote`, and what each means.
DIFF_NOTE_CODES = {
    "different_models": "A and B share little: fewer than SHARED_LITTLE of the ops of the side with fewer are also "
    "on the other side (the same op from the same source line and module); the pairs shown may be unrelated",
    "timed_differently": "both reports were profiled, but not alike (statistic, runs, warm-up runs, device or "
    "profiling method differ, or one side did not record it: ``timing``): part of a time delta may be the method's",
    "times_uncertain": "the measured kernel times cannot carry a verdict (``kernel_time_us.doubts``): a side's noisy "
    "kernels take NOISY_SHARE of its time or more, the machine's measured ceilings differ CEILING_FACTOR or more "
    "between the two profiles, or a side was timed in fewer than MIN_RUNS runs (``diff_time``); the verdict says so",
    "unpaired_compiles": "both A and B hold compiles that pair with no compile of the other side (``shared``'s "
    "``unpaired_a``, ``unpaired_b``): which, and how to pair them by hand; the ops they share with each other count "
    "as shared",
    "autotune_vs_measured": "B's autotuning timed the library kernel of an op (ATen mm, addmm) at AUTOTUNE_OFF times "
    "or more what A's profile measured for the same op and shapes: why B chose another kernel (``autotune_vs_a``)",
}
_GLUE_TARGETS = {"_operator.getitem", "output", "placeholder"}


@dataclass(frozen=True)
class KernelDiff:
    """One pair of kernel launches (or a launch on one side only). The unit, everywhere in a diff (the summary,
    the table's rows, the page's counts), is a kernel launch: one call of a kernel in the output code
    (``Kernel.call_sites``), whatever number of fused nodes it computes. A kernel whose code Inductor reuses
    for two calls gives two entries, and ``launch_a``/``launch_b`` say which call (``"launch 2 of 2"``).

    ``a``/``b`` are kernel names (``None`` on the side where absent); ``moved_ops_in`` are the
    FX op targets in B's kernel and not in A's, ``moved_ops_out`` the reverse; ``time_delta_us``
    is B's measured total minus A's (``None`` unless both reports were profiled).
    ``source_diff`` holds the line diff of the two sources as ``difflib`` opcodes
    ``[tag, a_start, a_end, b_start, b_end]`` (computed over normalised lines), or ``None``.
    """

    status: str
    a: Optional[str]
    b: Optional[str]
    moved_ops_in: list = field(default_factory=list)
    moved_ops_out: list = field(default_factory=list)
    time_delta_us: Optional[float] = None
    changes: list = field(default_factory=list)
    similarity: Optional[float] = None
    time_a_us: Optional[float] = None
    time_b_us: Optional[float] = None
    source_diff: Optional[list] = None
    #: The fused nodes this launch computes on each side (its call site), for the graph view; ``[]`` where absent.
    fused_a: list = field(default_factory=list)
    fused_b: list = field(default_factory=list)
    #: Which call of a kernel called more than once this is, ``"launch 2 of 3"``; ``""`` for a kernel called once.
    launch_a: str = ""
    launch_b: str = ""
    #: The FX op targets of B's side (A's for ``only_a``).
    ops: list = field(default_factory=list)
    #: Where the shapes changed (``"shape"`` in ``changes``): the shape of A's ops that B's lack and of B's that A's
    #: lack, the most frequent of each (``"[16, 64]"``, ``"[32, 64]"``); ``""`` otherwise.
    shape_a: str = ""
    shape_b: str = ""
    #: The launch's tensor arguments whose shape changed, where the ops' shapes did not say it (an input of an
    #: extern call, a size a generated kernel takes as an argument): ``[{"arg", "a", "b"}]``, ``arg`` what it holds
    #: as the launch table names it (``LaunchArg.holds``, else its name), ``a``/``b`` the concrete shapes
    #: (``"[4, 16]"``, a symbolic size by its hint). Compared by position, where both kernels' launches are
    #: recorded with as many arguments (``Kernel.launch``: its first call); ``[]`` otherwise.
    arg_shapes: list = field(default_factory=list)
    #: The launch's tensor arguments whose dtype or layout changed, or, where the sources differ only by the names of
    #: the arguments they pass (an extern call reading the user's channels-last ``x`` in B and a channels-last copy of
    #: it in A), what they hold: ``[{"arg", "what", "a", "b"}]``, ``what`` ``dtype`` (``"float32"`` → ``"bfloat16"``),
    #: ``layout`` (``"contiguous"`` → ``"channels_last"``, ``rules.layout_name``; the strides, ``"[12288, 4096, 64,
    #: 1]"``, where a side's is no named layout) or ``reads`` (``"copy of x"`` → ``"x"``; with ``buffer_a``, A's
    #: argument, and ``made_by_a``, the kernel of A that wrote it where B launches none such: A's channels-last
    #: copy of the user's tensors, ``"cpp_fused_0"``; else ``""``); ``arg`` as in
    #: ``arg_shapes`` (B's). Arguments pair by position where both launches have as many, else by what they hold
    #: (:func:`_arg_pairs`); ``changes`` holds ``dtype``, ``layout``, ``args`` (the sources equal but for those names:
    #: not ``source``). ``[]`` otherwise.
    arg_changes: list = field(default_factory=list)
    #: FLOPs and bytes moved (read + written) of one call on each side (``Kernel.cost``), ``None`` where unknown;
    #: ``changes`` holds ``cost`` where both sides' are known, measured alike (``Cost.source``) and differ.
    flops_a: Optional[float] = None
    flops_b: Optional[float] = None
    #: What ``flops_a``/``flops_b`` count, as ``what_changed`` names it: ``"FLOPs"``; ``"int8 ops"`` where both sides
    #: count integer ops (``Cost.integer_ops``: a quantized matmul's multiply-adds are not floating-point); ``"ops"``
    #: where one side counts integer ops and the other FLOPs.
    ops_word: str = "FLOPs"
    bytes_a: Optional[float] = None
    bytes_b: Optional[float] = None
    #: A launch of A whose ops all moved into one launch of B, as did another's (``status`` ``merged``: A's matmul
    #: and its epilogue's kernel, B's GEMM template with that epilogue): that B kernel, which the row of the merge's
    #: first A launch pairs; ``""`` otherwise. ``fused_b`` holds its fused nodes.
    merged_into: str = ""
    #: The converse (``status`` ``split``): a launch of B whose ops all come from one launch of A, as do another's:
    #: that A kernel; ``""`` otherwise. ``fused_a`` holds its fused nodes.
    split_from: str = ""
    #: On the row that pairs the B launch of a merge: the other A kernels merged into it (their rows follow); on the
    #: row that pairs the A launch of a split: the other B kernels split off it. ``[]`` otherwise.
    merged_with: list = field(default_factory=list)
    split_with: list = field(default_factory=list)
    #: The "what changed" cell of the compare page and of the CLI (one writer: :func:`change_text`): the moved ops
    #: as short names (``rules.short_op``), the other changes, ``removed``/``added``, a merge or split (``"+ relu;
    #: merged with A's cpp_fused_relu_0; source"``, ``"merged into B's cpp_fused_addmm_relu_0 (relu)"``, ``"split
    #: from A's cpp_fused_add_mul_0 (mul)"``); filled from the fields above.
    what_changed: str = ""
    #: Where B's kernel is what B's autotuning chose over the library kernel of its op, and A called that library
    #: kernel for the same op and shapes and measured it: what A measured and what B's autotuning timed it at
    #: (``diff_time.autotune_vs_measured``: ``{op, a, a_us, a_merged_us, autotuned_us, ratio, chosen, chosen_us, b_us,
    #: note, detail}``, ``note`` the row's sentence, ``"A measured mm at 13.6 µs; B's autotuning timed it at 61.0 µs
    #: (4.5×)"``, ``detail`` with B's choice, ``"... and chose triton_mm_4 (44.5 µs), which B's profile measured at
    #: 41.9 µs"``); ``{}`` otherwise.
    autotune_vs_a: dict = field(default_factory=dict)
    #: What one side of a pair does not know that the other does, and so was not compared: ``"ops"`` (the FX ops of
    #: its launch: a TORCH_TRACE import without provenance links none to a C++ kernel), ``"shape"`` (of an op: an
    #: import's multi-output op); ``what_changed`` says it (``"ops not known in B"``). ``[]`` otherwise.
    not_known_a: list = field(default_factory=list)
    not_known_b: list = field(default_factory=list)
    #: The row's times as the table shows them: ``time_a_text``/``time_b_text`` by ``rules.fmt_us`` (``"33.6 ms"``),
    #: ``time_delta_text`` in the unit of the larger of the two (``rules.delta_us_text``: ``"−33.3 ms"``, never
    #: ``"−33306 µs"`` beside times in ms); ``""`` where unknown. Derived from the numbers.
    time_a_text: str = ""
    time_b_text: str = ""
    time_delta_text: str = ""
    #: Where the pair is one call of the user's computed another way (change ``lowering``, :func:`_same_call`): how
    #: each side computes it, ``"decomposed into a C++ kernel → an extern call of
    #: _scaled_dot_product_flash_attention_for_cpu"`` (``what_changed`` says it); ``""`` otherwise.
    lowering: str = ""

    def __post_init__(self) -> None:
        if not self.what_changed:
            object.__setattr__(self, "what_changed", change_text(self))
        for key, t in (("time_a_text", self.time_a_us), ("time_b_text", self.time_b_us)):
            object.__setattr__(self, key, fmt_us(t) if t is not None else "")
        object.__setattr__(self, "time_delta_text", delta_us_text(self.time_delta_us, self.time_a_us, self.time_b_us))


def _shape_change(a: Counter, b: Counter) -> tuple[str, str]:
    """The shapes two launches' ops changed from and to (``a``/``b``: ``(op, shape)`` multisets): the most frequent
    shape of A's ops that B's lack, and of B's that A's lack; ``""`` for a side with none."""
    gone, new = a - b, b - a

    def most(c: Counter) -> str:
        shapes = Counter()
        for (_, shape), n in c.items():
            shapes[shape] += n
        return shapes.most_common(1)[0][0] if shapes else ""

    return most(gone), most(new)


def _arg_shapes(x: Kernel, y: Kernel) -> list:
    """The tensor arguments of two kernels' launches whose concrete shapes differ (see ``KernelDiff.arg_shapes``)."""
    la, lb = x.launch, y.launch
    if la is None or lb is None or len(la.args) != len(lb.args):
        return []
    out = []
    for p, q in zip(la.args, lb.args):
        sp, sq = _concrete_shape(p), _concrete_shape(q)
        if sp is not None and sq is not None and sp != sq:
            out.append({"arg": q.holds or p.holds or q.name, "a": repr(sp), "b": repr(sq)})
    return out


def _concrete_shape(a: Any) -> Optional[list]:
    """A launch argument's sizes as torch ran it: the hint where a size is symbolic; ``None`` for a scalar."""
    if a.shape is None:
        return None
    if any(not isinstance(d, int) for d in a.shape) and isinstance(a.hint, list) and len(a.hint) == len(a.shape):
        return list(a.hint)
    return list(a.shape)


def _tensor_args(k: Kernel) -> list:
    return [a for a in k.launch.args if a.shape is not None] if k.launch is not None else []


def _arg_pairs(x: Kernel, y: Kernel) -> list:
    """The tensor arguments of two kernels' launches (their first calls), paired: by position where both have as
    many, else by what they hold (``LaunchArg.holds``: the n-th argument holding ``model.stem convolution`` in A with
    the n-th in B; an argument that holds nothing named is left out)."""
    ta, tb = _tensor_args(x), _tensor_args(y)
    if len(ta) == len(tb):
        return list(zip(ta, tb))
    queues: dict = {}
    for q in tb:
        if q.holds:
            queues.setdefault(q.holds, []).append(q)
    return [(p, queues[p.holds].pop(0)) for p in ta if p.holds and queues.get(p.holds)]


def _layout(a: Any) -> str:
    """A tensor argument's layout as a row says it: its name (``channels_last``), else its strides."""
    return layout_name(_concrete_shape(a), a.stride) or repr(a.stride)


def _arg_changes(x: Kernel, y: Kernel, reads: bool) -> list:
    """``KernelDiff.arg_changes`` of two kernels (``reads``: say what each argument holds where that differs)."""
    out = []
    for p, q in _arg_pairs(x, y):
        arg = q.holds or p.holds or q.name
        if p.dtype and q.dtype and p.dtype != q.dtype:
            out.append({"arg": arg, "what": "dtype", "a": p.dtype, "b": q.dtype})
        named = layout_name(_concrete_shape(p), p.stride), layout_name(_concrete_shape(q), q.stride)
        if p.stride is not None and q.stride is not None and p.stride != q.stride:
            if all(named):  # named on both sides, whatever the sizes (equal: strides of size-1 dimensions only)
                if named[0] != named[1]:
                    out.append({"arg": arg, "what": "layout", "a": named[0], "b": named[1]})
            elif _concrete_shape(p) == _concrete_shape(q):  # other strides of the same sizes
                out.append({"arg": arg, "what": "layout", "a": _layout(p), "b": _layout(q)})
        if reads and p.holds and q.holds and p.holds != q.holds:
            out.append({"arg": arg, "what": "reads", "a": p.holds, "b": q.holds, "buffer_a": p.name, "made_by_a": ""})
    return out


def _made_by_removed(kernels: list, ca: Compile) -> list:
    """``kernels`` (a compile pair's rows) with each argument change ``reads`` of A named by the kernel of A that
    wrote what A's argument holds (``made_by_a``), where B launches no such kernel (its row is ``only_a``: the
    channels-last copy A made of the user's tensors and B does not need), and ``what_changed`` said again with it."""
    # kernels of A none of whose launches B pairs (a kernel of two launches, one of them paired, is launched in B)
    removed = {k.a for k in kernels if k.status == "only_a"} - {k.a for k in kernels if k.status != "only_a"}
    if not removed:
        return kernels
    writer = {b: n.kernel for n in ca.fused_nodes if n.kernel in removed for b in n.writes}
    out = []
    for k in kernels:
        changes = [
            dict(c, made_by_a=writer[c["buffer_a"]])
            if c["what"] == "reads" and c.get("buffer_a") in writer and not c.get("made_by_a")
            else c
            for c in k.arg_changes
        ]
        if changes != k.arg_changes:
            k = dataclasses.replace(k, arg_changes=changes, what_changed="")  # said again, with the makers
        out.append(k)
    return out


def _names_only(x: "_Features", y: "_Features") -> bool:
    """Two launches' sources equal once the names of the tensors each passes (its launch's arguments: buffers, graph
    inputs) are one placeholder: the same code called on other tensors (an extern call's ``convolution(buf1, buf0,
    ...)`` in A, ``convolution(primals_2, primals_1, ...)`` in B)."""

    def lines(f: "_Features") -> list:
        k = f.kernel
        names = sorted({a.name for a in _tensor_args(k)}, key=len, reverse=True)
        text = kernel_source(k)
        if names:
            text = re.sub(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", "ARG", text)
        return normalise_source(text, k.name).splitlines()

    return bool(_tensor_args(x.kernel)) and lines(x) == lines(y)


def _cost(k: Kernel) -> tuple:
    """``(flops, bytes read + written, how)`` of one call of ``k``; ``None`` where unknown."""
    c = k.cost
    if c is None:
        return None, None, ""
    moved = c.bytes_read + (c.bytes_written or 0.0) if c.bytes_read is not None else None
    return c.flops, moved, c.source


def _ops_word(x: Kernel, y: Kernel) -> str:
    """``KernelDiff.ops_word``: ``"FLOPs"``, ``"int8 ops"`` where both kernels count integer ops, ``"ops"`` where one
    does."""
    kinds = {k.cost.integer_ops if k.cost is not None else "" for k in (x, y)}
    if kinds == {""}:
        return "FLOPs"
    return f"{kinds.pop()} ops" if len(kinds) == 1 else "ops"


def _cost_changed(x: Kernel, y: Kernel) -> bool:
    fa, ba, how_a = _cost(x)
    fb, bb, how_b = _cost(y)
    if how_a != how_b:  # counted another way (another version of the lens): no evidence of a change
        return False
    return (fa is not None and fb is not None and fa != fb) or (ba is not None and bb is not None and ba != bb)


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.4g}"


def _cost_text(k: "KernelDiff") -> str:
    """``"FLOPs 1,024 → 2,048, bytes 896 → 1,664"`` (``"int8 ops 1,024 → 2,048"``): the counts that differ."""
    parts = [
        f"{what} {_num(a)} → {_num(b)}"
        for what, a, b in ((k.ops_word, k.flops_a, k.flops_b), ("bytes", k.bytes_a, k.bytes_b))
        if a is not None and b is not None and a != b
    ]
    return ", ".join(parts) or "cost"


def _shape_text(k: "KernelDiff") -> str:
    """``"shape [4, 16] → [4, 32]"`` (the ops'), else ``"shape of x [4, 16] → [4, 32], w [16, 8] → [32, 8]"``."""
    if k.shape_a and k.shape_b:
        return f"shape {k.shape_a} → {k.shape_b}"
    if k.arg_shapes:
        return "shape of " + ", ".join(f"{s['arg']} {s['a']} → {s['b']}" for s in k.arg_shapes)
    return "shape"


def _listed(names: list, most: int = 3) -> str:
    """``"x, w, b"``, ``"x, w, b +2 more"``: the first ``most`` names, each once."""
    names = list(dict.fromkeys(names))
    more = f" +{len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _args_text(k: "KernelDiff", what: str) -> str:
    """``"dtype float32 → bfloat16 (model.stem convolution, model relu)"``, ``"layout of x contiguous →
    channels_last"``, ``"same code, other arguments: copy of x → x"``: the arguments' changes of one kind, each
    transition once with the arguments that made it."""
    rows = [c for c in k.arg_changes if c["what"] == what]
    if what == "reads":
        said = ", ".join(f"{c['a']} → {c['b']}" for c in rows)
        makers = list(dict.fromkeys(c["made_by_a"] for c in rows if c.get("made_by_a")))
        made = f"; in A made by {', '.join(makers)}, which B does not launch" if makers else ""
        return "same code, other arguments" + (f": {said}" if said else "") + made
    by: dict = {}
    for c in rows:
        by.setdefault((c["a"], c["b"]), []).append(c["arg"])
    if len(by) == 1 and len(rows) == 1:
        (((a, b), args),) = by.items()
        return f"{what} of {args[0]} {a} → {b}"
    return "; ".join(f"{what} {a} → {b} ({_listed(args)})" for (a, b), args in by.items())


def _nodes_text(k: "KernelDiff") -> str:
    """``"fused nodes 1 → 6 (the scheduler fused fewer; the same ops)"``: the launch computes the same ops from more
    (fewer) scheduler nodes (``config.max_fusion_size=1``: the C++ backend still emits one kernel of six nodes)."""
    a, b = len(k.fused_a), len(k.fused_b)
    return f"fused nodes {a} → {b} (the scheduler fused {'fewer' if b > a else 'more'}; the same ops)"


def _ops_text(targets: list) -> str:
    """``"add ×4, mul ×12, tanh"``: short op names, each once with its count."""
    counts = Counter(short_op(t) for t in targets)
    return ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in counts.items())


def change_text(k: "KernelDiff") -> str:
    """What a kernel pair's row says changed: ``"+ mul; − add ×2; source"``, ``"removed"``, ``"added"``,
    ``"merged into B's cpp_fused_addmm_relu_0 (relu)"``; the page's cell and the CLI's line."""
    parts = []
    if k.status == "merged":
        parts.append(f"merged into B's {k.merged_into} ({_ops_text(k.ops)})")
    if k.status == "split":
        parts.append(f"split from A's {k.split_from} ({_ops_text(k.ops)})")
    if k.moved_ops_in:
        parts.append("+ " + _ops_text(k.moved_ops_in))
    if k.merged_with:
        parts.append(f"merged with A's {', '.join(k.merged_with)}")
    if k.moved_ops_out:
        parts.append("− " + _ops_text(k.moved_ops_out))
    if k.split_with:
        parts.append(f"split with B's {', '.join(k.split_with)}")
    words = {
        "shape": _shape_text,
        "cost": _cost_text,
        "nodes": _nodes_text,
        "dtype": lambda k: _args_text(k, "dtype"),
        "layout": lambda k: _args_text(k, "layout"),
        "args": lambda k: _args_text(k, "reads"),
        "lowering": lambda k: k.lowering,
    }
    parts += [words[c](k) if c in words else c for c in k.changes if c != "fusion"]
    parts += [f"{', '.join(w)} not known in {side}" for side, w in (("A", k.not_known_a), ("B", k.not_known_b)) if w]
    if k.status == "only_a":
        parts.append("removed")
    if k.status == "only_b":
        parts.append("added")
    return "; ".join(parts)


@dataclass(frozen=True)
class DiffNote:
    """Something the user should know about the whole diff. Consumers switch on ``code`` (``DIFF_NOTE_CODES``),
    never on the wording of ``message``."""

    code: str
    message: str


@dataclass(frozen=True)
class CompileDiff:
    """A pair of compiles (or one on one side only) and its kernel pairs."""

    a: Optional[str]
    b: Optional[str]
    kernels: list
    paired_by: str = "frame, graph kind and order"
    guards_added: list = field(default_factory=list)
    guards_removed: list = field(default_factory=list)
    compile_time_us: dict = field(default_factory=dict)
    trigger: dict = field(default_factory=dict)
    #: Memory of A and B and the change (``memory_delta``): ``peak_bytes``, ``saved_bytes``,
    #: ``measured_peak_bytes`` as ``{a, b, delta}``; ``sizes_at``: ``{a, b}``, the sizes a side's bytes are counted
    #: at where its graph has symbolic sizes (``Memory.sizes_at``: ``at s77=4``; only where a side has them);
    #: ``saved_by_line``: ``[{file, line, a, b, delta}]``, the lines
    #: whose saved bytes changed, largest change first (``file`` ``""``, ``line`` 0: what has no line of the user's);
    #: ``saved_by_forward`` (``{a, b, delta}`` of ``Memory.saved_activation_bytes``) and ``saved_by_forward_text``
    #: (``"of it made by the forward 16.45 MiB → 16 MiB (−457.7 KiB)"``, the facts bar and the CLI say it) where the
    #: part of the saved bytes made by the forward changed otherwise than the total (an equal total whose parts moved).
    #: Empty when neither side has memory.
    memory: dict = field(default_factory=dict)
    #: CUDA graphs on each side (``used``, ``skipped: <reason>``, ``not used``, or None outside reduce-overhead)
    #: and whether that changed: ``{"a", "b", "changed"}``.
    cudagraphs: dict = field(default_factory=dict)
    #: The ops each side's kernel launches compute (post-grad FX nodes, glue left out) and how many of them the other
    #: side computes too (the same identity: op, module, source line, ``_node_facts``): ``{"a", "b", "shared"}``.
    ops: dict = field(default_factory=dict)
    #: The measured kernel time of each side's compile and the verdict (``diff_time.kernel_time``): ``{a, b, delta,
    #: ratio, unmeasured_a, unmeasured_b, verdict, why}``; ``verdict`` (``"B is 2.2× slower in measured kernel time:
    #: 88.9 µs against 40.5 µs in A"``) where both sides were measured, else ``why`` says why not.
    kernel_time_us: dict = field(default_factory=dict)
    #: The graph inputs whose dtype or layout changed (:func:`input_changes`): ``[{"input", "what", "a", "b"}]``,
    #: ``input`` as the user knows it (``x``, ``model.stem.weight``), ``what`` ``dtype`` or ``layout`` as in
    #: ``KernelDiff.arg_changes``; ``inputs_text``: them in one line, as the facts bar and the CLI say it (``"inputs:
    #: layout contiguous → channels_last (x, model.stem.weight, model.block1.conv1.weight +3 more)"``), ``""`` where
    #: none changed.
    inputs: list = field(default_factory=list)
    inputs_text: str = ""

    @property
    def summary(self) -> dict:
        return _count(self.kernels)

    @property
    def launches(self) -> dict:
        """Kernel launches on each side of the pair: ``{"a": n, "b": n}``."""
        return {"a": sum(k.a is not None for k in self.kernels), "b": sum(k.b is not None for k in self.kernels)}

    @property
    def label(self) -> str:
        """What the pair selector says: ``"0/0 forward ↔ 0/0 forward · 26 → 38 kernel launches"``."""
        n = self.launches
        return f"{self.a or '—'} ↔ {self.b or '—'} · {n['a']} → {n['b']} {UNIT}"


class ReportDiff:
    """The difference between report ``a`` and report ``b`` (see :func:`diff`)."""

    def __init__(self, a: Report, b: Report, compiles: list, extra: dict, across: int = 0):
        self.a, self.b, self.compiles, self._extra = a, b, compiles, extra
        self.shared = shared(self.compiles, across)
        pa, pb = _profiled(a), _profiled(b)
        ds = doubts(a, b) if pa and pb else []
        #: the measured kernel time of each whole report and the verdict (as ``CompileDiff.kernel_time_us``), said
        #: as no verdict where the times cannot carry one (``diff_time.doubts``)
        self.kernel_time_us = kernel_time(a.kernels, b.kernels, pa, pb, doubts=ds)
        #: how each side was timed, and the warning where not alike (``diff_time.timing``)
        self.timing = timing(a, b, pa and pb)
        checks = [k.autotune_vs_a for k in self.kernels if k.autotune_vs_a]
        uncertain = doubts_note(ds) if self.kernel_time_us["verdict"] else ""
        self.notes = notes(self.shared, self.timing["warning"], autotune_summary(checks), uncertain)
        if not any(n.code == "different_models" for n in self.notes):  # there, no pair is more than a guess
            self.notes += _unpaired_note(a, b, self.shared)

    @property
    def summary(self) -> dict:
        """How many kernel launches are ``same``, ``changed``, ``only_a``, ``only_b`` (all compile pairs)."""
        return _count([k for c in self.compiles for k in c.kernels])

    @property
    def kernels(self) -> list:
        return [k for c in self.compiles for k in c.kernels]

    def compile(self, a: Optional[str] = None, b: Optional[str] = None) -> CompileDiff:
        """The compile pair whose A side is ``a`` (or B side ``b``), by ``Compile.id``."""
        for c in self.compiles:
            if (a is not None and c.a == a) or (b is not None and c.b == b):
                return c
        raise KeyError(f"no compile pair with a={a!r} b={b!r} (pairs: {[(c.a, c.b) for c in self.compiles]})")

    def to_dict(self) -> dict:
        from ..report.plain import to_plain as _to_plain

        return {
            "format": "inductor_lens.diff",
            "version": DIFF_FORMAT_VERSION,
            "a": _facts(self.a),
            "b": _facts(self.b),
            #: both reports were profiled: kernels carry times and deltas (the compare table shows time columns)
            "timed": _profiled(self.a) and _profiled(self.b),
            "unit": UNIT,
            "status_words": STATUS_WORDS,
            "summary": self.summary,
            "shared": self.shared,
            "notes": _to_plain(self.notes),
            "kernel_time_us": self.kernel_time_us,
            "timing": self.timing,
            "compiles": [
                {**_to_plain(c), "summary": c.summary, "launches": c.launches, "label": c.label} for c in self.compiles
            ],
            **self._extra,
        }

    def to_json(self, indent: Optional[int] = None) -> str:
        """The diff as JSON: ``compiles[].kernels[]`` with ``status``, ``a``, ``b``, ``moved_ops_in``,
        ``moved_ops_out``, ``time_delta_us``, ``what_changed``; and ``summary``."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def text(self) -> str:
        """A few lines of plain text: the summary, the notes, and :meth:`changes_text`."""
        lines = [f"inductor_lens diff: {summary_text(self.summary)}"]
        lines.append(f"  {self.kernel_time_us['verdict'] or self.kernel_time_us['why']}")
        lines += [f"  note [{n.code}]: {n.message}" for n in self.notes]
        return "\n".join([*lines, self.changes_text()])

    def changes_text(self) -> str:
        """Each compile pair, what changed in its memory and CUDA graphs, and each kernel launch that is not ``same``
        with what changed in it, as the compare page's row says it (``KernelDiff.what_changed``): ``changed
        extern_kernels.mm[buf0] -> cpp_fused_addmm_relu_0: + relu; merged with A's cpp_fused_relu_0; source``. The
        CLI prints it."""
        lines = []
        for c in self.compiles:
            lines.append(f"  {c.a or '-'}  <->  {c.b or '-'}  ({c.paired_by})")
            if c.kernel_time_us.get("verdict"):
                lines.append(f"    {c.kernel_time_us['verdict']}")
            if c.inputs_text:
                lines.append(f"    {c.inputs_text}")
            for key in ("peak_bytes", "saved_bytes"):
                d = (c.memory or {}).get(key) or {}
                if d.get("delta"):
                    lines.append(f"    memory {key}: {d['a']} -> {d['b']} ({d['delta']:+d} bytes)")
            if (c.memory or {}).get("saved_by_forward_text"):
                lines.append(f"    memory saved for backward: {c.memory['saved_by_forward_text']}")
            if c.cudagraphs.get("changed"):
                lines.append(f"    CUDA graphs: {c.cudagraphs['a'] or 'off'} -> {c.cudagraphs['b'] or 'off'}")
            for k in c.kernels:
                if k.status != "same":
                    ka = f"{k.a} ({k.launch_a})" if k.launch_a else k.a or "-"
                    kb = f"{k.b} ({k.launch_b})" if k.launch_b else k.b or "-"
                    lines.append(f"    {STATUS_WORDS[k.status]:8} {ka} -> {kb}: {k.what_changed}")
                if k.autotune_vs_a:
                    lines.append(f"             autotune: {k.autotune_vs_a['detail']}")
        return "\n".join(lines)

    def widget(self, **kwargs):
        """The compare view as a widget (``display(diff)`` shows it)."""
        return hooks.call("diff_widget", self, **kwargs)

    def save_html(self, path: Union[str, os.PathLike]) -> str:
        """Write one self-contained offline HTML page with the compare view; returns its path."""
        return hooks.call("save_diff_html", self, path)

    def save_json(self, path: Union[str, os.PathLike]) -> str:
        from ..report.io import atomic_write

        return atomic_write(path, self.to_json().encode("utf-8"))

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<inductor_lens.ReportDiff: {len(self.compiles)} compile pair(s); {UNIT}: {s['same']} same, "
            f"{s['changed']} changed, {s['only_a']} only_a, {s['only_b']} only_b>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            return self.widget()._repr_mimebundle_(include=include, exclude=exclude)
        except Exception:  # no widget machinery (plain terminal): text
            return {"text/plain": self.text()}


def diff(a: Report, b: Report, pairs: Optional[Sequence[tuple]] = None) -> ReportDiff:
    """Compare report ``a`` (before) with report ``b`` (after).

    Parameters
    ----------
    a, b : Report
    pairs : list of (str, str), optional
        Compile pairs to use instead of the automatic pairing, by ``Compile.id``
        (``[("0/0 forward", "0/0 forward")]``); compiles not named are paired automatically.

    Returns
    -------
    ReportDiff
        ``.compiles`` (each with ``.kernels``), ``.summary``, ``.to_json()``, ``.save_html()``.
    """
    for name, r in (("a", a), ("b", b)):
        if not isinstance(r, Report):
            raise TypeError(
                f"diff() compares two inductor_lens.Report objects; {name} is a {type(r).__name__} "
                "(load a saved one with inductor_lens.load(path))"
            )
    profiled = (_profiled(a), _profiled(b))
    origins = (a.origin, b.origin)
    paired = pair_compiles(a, b, pairs)
    out = [_diff_compile(ca, cb, how, profiled, origins, (a, b)) for ca, cb, how in paired]
    alone = [{k for c in cs for f in _units(c, o != "trace") for k in f.keys if k is not None} for cs, o in (
        ([ca for ca, cb, _ in paired if cb is None], origins[0]),
        ([cb for ca, cb, _ in paired if ca is None], origins[1]),
    )]  # fmt: skip
    across = _shared_ops(*alone, "trace" in origins) if all(alone) else 0
    return ReportDiff(a, b, out, _report_extras(a, b), across)


# -- compiles ------------------------------------------------------------------------------------


def _function(c: Compile) -> str:
    """A compile's function without its class: ``forward`` of ``MLP.forward``."""
    return c.frame.rsplit(".", 1)[-1]


def _one_unqualified(ca: Compile, cb: Compile) -> bool:
    """A method's frame is named with its class (``MLP.forward``) by captures since 0.2.0, ``forward`` before: such
    frames pair by the function's name, never two named with different classes."""
    return "." not in ca.frame or "." not in cb.frame


#: Automatic compile pairing: each pass pairs the n-th compile with a key in A with the n-th in B (that ``fits`` it,
#: where a pass says), among compiles still unpaired. Forward and inference graphs of one frame pair in the third.
_PASSES = (
    ("frame, graph kind and order", lambda c: (c.frame, c.graph_kind), None),
    ("function, graph kind and order", lambda c: (_function(c), c.graph_kind), _one_unqualified),
    ("frame and order (graph kind differs)", lambda c: (c.frame, c.graph_kind == "backward"), None),
    ("function and order (graph kind differs)", lambda c: (_function(c), c.graph_kind == "backward"), _one_unqualified),
)


def pair_compiles(a: Report, b: Report, pairs: Optional[Sequence[tuple]] = None) -> list:
    """``[(compile_a or None, compile_b or None, how)]`` in A's order, then B's leftovers."""
    ids_a, ids_b = [c.id for c in a.compiles], [c.id for c in b.compiles]
    match: dict = {}  # A id -> (B compile, how)
    for p in pairs or ():
        if not (isinstance(p, (tuple, list)) and len(p) == 2):
            raise ValueError(f"each pair is (compile id in a, compile id in b), not {p!r}")
        pa, pb = p
        if pa not in ids_a:
            raise ValueError(f"no compile {pa!r} in a (compiles: {ids_a})")
        if pb not in ids_b:
            raise ValueError(f"no compile {pb!r} in b (compiles: {ids_b})")
        if pa in match or pb in {c.id for c, _ in match.values()}:
            raise ValueError(f"compile pair {tuple(p)!r} names a compile that is already paired")
        match[pa] = (b.compile(pb), "chosen")
    for how, key, fits in _PASSES:
        used_b = {c.id for c, _ in match.values()}
        queues: dict = {}
        for c in b.compiles:
            if c.id not in used_b:
                queues.setdefault(key(c), []).append(c)
        for c in a.compiles:
            q = queues.get(key(c))
            if c.id in match or not q:
                continue
            pick = next((i for i, cb in enumerate(q) if fits is None or fits(c, cb)), None)
            if pick is not None:
                match[c.id] = (q.pop(pick), how)
    _pair_by_kernels(a, b, match)
    used_b = {c.id for c, _ in match.values()}
    result = [(c, *match[c.id]) if c.id in match else (c, None, "no match") for c in a.compiles]
    result.extend((None, c, "no match") for c in b.compiles if c.id not in used_b)
    return result


#: How :func:`_pair_by_kernels` says it paired two compiles.
BY_KERNELS = "the same kernels, graph kind and order (the frames are named differently)"


def _kernel_sources(c: Compile) -> Counter:
    """The multiset of ``c``'s kernels' sources, normalised (:func:`normalise_source`)."""
    return Counter(normalise_source(kernel_source(k), k.name) for k in c.kernels)


def _pair_by_kernels(a: Report, b: Report, match: dict) -> None:
    """Pair (into ``match``, A id -> (B compile, how)) each compile still unpaired with the first unpaired compile of
    the other side of its graph kind whose kernels' sources are the same (normalised), whatever its frame is named:
    one script's optimizer step is ``AdamW.step`` in a live capture and was ``Adam.step`` in a TORCH_TRACE import
    made before the import read the class of its ``self`` (nu30 D3), and such compiles paired with nothing."""
    used_b = {c.id for c, _ in match.values()}
    left = [c for c in b.compiles if c.id not in used_b and c.kernels]
    if not left:
        return
    sources: dict = {}
    for ca in a.compiles:
        if ca.id in match or not ca.kernels:
            continue
        mine = _kernel_sources(ca)
        for i, cb in enumerate(left):
            if cb.graph_kind != ca.graph_kind:
                continue
            if cb.id not in sources:
                sources[cb.id] = _kernel_sources(cb)
            if sources[cb.id] == mine:
                match[ca.id] = (left.pop(i), BY_KERNELS)
                break


def _diff_compile(
    ca: Optional[Compile],
    cb: Optional[Compile],
    how: str,
    profiled: tuple,
    origins: tuple = ("capture", "capture"),
    reports: tuple = (None, None),
) -> CompileDiff:
    """One compile pair; ``profiled``: whether report A and report B were profiled; ``origins``: their
    ``Report.origin`` (a TORCH_TRACE import's fused nodes are its kernels, not the scheduler's nodes); ``reports``:
    A and B, whose profiles say whether the pair's times can carry a verdict (``diff_time.doubts``)."""
    timed = profiled[0] and profiled[1]
    ds = doubts(*reports, ca.kernels, cb.kernels) if timed and ca and cb and None not in reports else []
    fa, fb = _units(ca, origins[0] != "trace"), _units(cb, origins[1] != "trace")
    matched = match_kernels(fa, fb)
    kernels = []
    for i, j, sim, link in matched:
        x, y = fa[i] if i is not None else None, fb[j] if j is not None else None
        row = _kernel_pair(x, y, sim, timed, link, fa, fb)
        if y is not None and ca is not None and cb is not None:  # B's autotuning against A's measurement
            check = autotune_vs_measured(
                y.kernel, cb, ca, prefer=x.kernel.name if x is not None else None, merged=row.merged_with
            )
            if check:
                row = dataclasses.replace(row, autotune_vs_a=check)
        kernels.append(row)
    if ca is not None:
        kernels = _made_by_removed(kernels, ca)
    keys_a = {k for f in fa for k in f.keys if k is not None}
    keys_b = {k for f in fb for k in f.keys if k is not None}
    same_guards = ca is not None and cb is not None and ca.guards == cb.guards
    ga, gb = (set(), set()) if same_guards else (_guard_lines(ca), _guard_lines(cb))
    ta, tb = _compile_time(ca), _compile_time(cb)
    inputs = input_changes(ca, cb)
    return CompileDiff(
        a=ca.id if ca else None,
        b=cb.id if cb else None,
        kernels=kernels,
        paired_by=how,
        guards_added=sorted(gb - ga) if ca and cb else [],
        guards_removed=sorted(ga - gb) if ca and cb else [],
        compile_time_us={"a": ta, "b": tb, "delta": (tb - ta) if ta is not None and tb is not None else None},
        trigger={"a": _trigger(ca), "b": _trigger(cb)},
        memory=memory_delta(ca.memory if ca else None, cb.memory if cb else None),
        cudagraphs=_cudagraphs_change(ca, cb),
        ops={"a": len(keys_a), "b": len(keys_b), "shared": _shared_ops(keys_a, keys_b, "trace" in origins)},
        kernel_time_us=kernel_time(
            ca.kernels if ca else None, cb.kernels if cb else None, *profiled, what="this compile pair", doubts=ds
        ),
        inputs=inputs,
        inputs_text=inputs_text(inputs),
    )


def _shared_ops(keys_a: set, keys_b: set, imported: bool = False) -> int:
    """How many ops (identities, :func:`_node_facts`) both sides compute. Where a side is a TORCH_TRACE import
    (``imported``), whose modules are inferred from what its graphs read (a log's graphs do not carry the live
    module stack: an optimizer's ops, which the capture ties to the parameter each updates, ``emb``, have none; a
    layer norm's op in a function that calls the model, ``ln1`` live, is the ``model``'s), an op that no identity
    matches counts where its op and line match one of the other side's (the n-th with the n-th): the same script
    captured live and imported shares its ops (nu30 D3: "They may be different models")."""
    both = keys_a & keys_b
    if not imported:
        return len(both)
    loose_a = Counter((k[0], k[2]) for k in keys_a - both)
    loose_b = Counter((k[0], k[2]) for k in keys_b - both)
    return len(both) + sum((loose_a & loose_b).values())


def _input_facts(c: Compile) -> dict:
    """What each graph input of ``c`` is, as its kernels' launches pass it: ``{name the user knows: (dtype, layout)}``
    (``layout`` as ``_layout`` says it). A generated kernel's argument first; an extern call's where its source does
    not pass a view of it (``reinterpret_tensor(primals_38, ...)``: the view's strides, not the input's)."""
    ins = set(c.graph_inputs)
    out: dict = {}
    for k in sorted(c.kernels, key=lambda k: k.language == "extern"):
        src = k.source if k.language == "extern" else ""
        for a in _tensor_args(k):
            if a.name in ins and (a.holds or a.name) not in out and f"reinterpret_tensor({a.name}," not in src:
                out[a.holds or a.name] = (a.dtype, layout_name(_concrete_shape(a), a.stride) or repr(a.stride), a)
    return out


def input_changes(ca: Optional[Compile], cb: Optional[Compile]) -> list:
    """``CompileDiff.inputs``: the graph inputs of both compiles, by the name the user knows them by, whose dtype or
    layout changed (a named layout against another, or other strides of the same sizes)."""
    if ca is None or cb is None:
        return []
    fa, fb = _input_facts(ca), _input_facts(cb)
    graph = ca.graphs.get("post_grad") or next(iter(ca.graphs.values()), None)
    nodes = {n.name: n for n in graph.nodes} if graph is not None else {}
    order = {}  # the user's own arguments first (``x``), then the graph's inputs in order
    for i, name in enumerate(ca.graph_inputs):
        n = nodes.get(name)
        if n is not None:
            order.setdefault(n.display_name or name, (n.role != "input", i))
    fa = dict(sorted(fa.items(), key=lambda kv: order.get(kv[0], (True, len(order)))))
    out = []
    for name, (dt_a, lay_a, p) in fa.items():
        if name not in fb:
            continue
        dt_b, lay_b, q = fb[name]
        if dt_a and dt_b and dt_a != dt_b:
            out.append({"input": name, "what": "dtype", "a": dt_a, "b": dt_b})
        named = layout_name(_concrete_shape(p), p.stride), layout_name(_concrete_shape(q), q.stride)
        if lay_a != lay_b and (all(named) or (not any(named) and _concrete_shape(p) == _concrete_shape(q))):
            out.append({"input": name, "what": "layout", "a": lay_a, "b": lay_b})
    return out


def inputs_text(changes: list) -> str:
    """``CompileDiff.inputs_text``: ``"inputs: layout contiguous → channels_last (x, model.stem.weight +5 more)"``."""
    by: dict = {}
    for c in changes:
        by.setdefault((c["what"], c["a"], c["b"]), []).append(c["input"])
    parts = [f"{what} {a} → {b} ({_listed(names)})" for (what, a, b), names in by.items()]
    return f"inputs: {'; '.join(parts)}" if parts else ""


def _ab(a: Optional[float], b: Optional[float]) -> dict:
    return {"a": a, "b": b, "delta": (b - a) if a is not None and b is not None else None}


def memory_delta(ma: Optional[Memory], mb: Optional[Memory]) -> dict:
    """What changed in memory between two compiles (see ``CompileDiff.memory``)."""
    if ma is None and mb is None:
        return {}
    out = {
        key: _ab(getattr(ma, key, None) if ma else None, getattr(mb, key, None) if mb else None)
        for key in ("peak_bytes", "saved_bytes", "measured_peak_bytes")
    }
    sizes = {"a": getattr(ma, "sizes_at", "") or "", "b": getattr(mb, "sizes_at", "") or ""}
    if sizes["a"] or sizes["b"]:  # a dynamic graph's bytes at the sizes seen: "at s77=4"
        out["sizes_at"] = sizes
    made = _ab(getattr(ma, "saved_activation_bytes", None), getattr(mb, "saved_activation_bytes", None))
    saved = out["saved_bytes"]
    if made["delta"] is not None and saved["delta"] is not None and made["delta"] != saved["delta"]:
        # the parts of what the backward keeps moved: the total alone hides it (nu31 D6: a channels-last step keeps
        # the user's own tensors where the contiguous one kept copies the forward made, 457.7 KiB, at an equal total)
        out["saved_by_forward"] = made
        out["saved_by_forward_text"] = (
            f"of it made by the forward {bytes_text(made['a'])} → {bytes_text(made['b'])} "
            f"({_signed_bytes(made['delta'])})"
        )
    lines: dict[tuple, list] = {}
    for side, m in ((0, ma), (1, mb)):
        for row in m.saved_by_line if m else []:
            lines.setdefault((row.file, row.line), [0, 0])[side] += row.bytes
    changed = [{"file": f, "line": ln, "a": a, "b": b, "delta": b - a} for (f, ln), (a, b) in lines.items() if a != b]
    out["saved_by_line"] = sorted(changed, key=lambda r: (-abs(r["delta"]), r["file"], r["line"]))
    return out


def _signed_bytes(delta: int) -> str:
    """A change of bytes as the compare's facts bar writes one: ``+1.5 KiB``, ``−457.7 KiB``, ``±0 B``."""
    return f"{'+' if delta > 0 else '−' if delta < 0 else '±'}{bytes_text(abs(delta))}"


def _cudagraph_status(c: Optional[Compile]) -> Optional[str]:
    g = c.cudagraphs if c is not None else None
    if g is None:
        return None
    if g.used:
        return "used"
    return f"skipped: {g.skip_reason}" if g.skip_reason else "not used"


def _cudagraphs_change(ca: Optional[Compile], cb: Optional[Compile]) -> dict:
    a, b = _cudagraph_status(ca), _cudagraph_status(cb)
    return {"a": a, "b": b, "changed": ca is not None and cb is not None and a != b}


def _trigger(c: Optional[Compile]) -> Optional[str]:
    if c is None:
        return None
    return f"{c.trigger.kind}: {c.trigger.reason}" if c.trigger.reason else c.trigger.kind


def _compile_time(c: Optional[Compile]) -> Optional[float]:
    if c is None or not c.phases:
        return None
    return round(sum(p.duration_us for p in c.phases if p.depth == 0), 1)


_ID = re.compile(r"[0-9]{6,}")  # object ids and addresses


def _guard_lines(c: Optional[Compile]) -> set:
    if c is None:
        return set()
    out = set()
    for line in _ID.sub("N", c.guards).splitlines():
        line = line.split("  #")[0].strip().lstrip("|+- ").strip()
        if line and not line.startswith("Guard latency"):  # a timing, not a guard
            out.add(line)
    return out


# -- kernels -------------------------------------------------------------------------------------


class _Features:
    """What one kernel launch computes (one call site of a kernel: the fused nodes that call computes), as
    multisets (see the module docstring). A kernel called twice (Inductor reuses identical code) is two launches."""

    __slots__ = (
        "kernel",
        "nodes",
        "index",
        "pos",
        "ops",
        "loc",
        "mod",
        "shape",
        "extern",
        "exact",
        "call",
        "calls",
        "inputs",
        "keys",
        "known",
        "nodes_known",
    )

    def __init__(
        self,
        kernel: Kernel,
        nodes: list,
        index: int,
        total: int,
        facts: dict,
        call: int = 0,
        calls: int = 1,
        inputs: frozenset = frozenset(),
        nodes_known: bool = True,
    ):
        self.kernel, self.nodes, self.index, self.call, self.calls, self.inputs = (
            kernel,
            nodes,
            index,
            call,
            calls,
            inputs,
        )
        self.pos = index / max(1, total - 1)
        rows = []
        keys = []
        # each FX op once: the fused nodes of one launch each list the ops inlined into them (a pointwise op computed
        # again in each of six unfused nodes' loops is one op of the graph, as in the one node they fuse into)
        names = dict.fromkeys(f for n in nodes for f in n.fx_nodes) if nodes else dict.fromkeys(kernel.fx_nodes)
        for name in names:
            row = facts.get(name)
            if row is None:
                row = (name.rstrip("_0123456789") or name, "", "", "", None)
            if row[0] not in _GLUE_TARGETS:
                rows.append(row[:4])
                keys.append(row[4])
        #: each op's identity across reports (``_node_facts``); ``None`` for an op the post-grad graph lacks
        self.keys = keys
        #: its ops are known (a TORCH_TRACE import without provenance links none to a C++ kernel): else not compared
        self.known = bool(names)
        #: its fused nodes are the scheduler's (a TORCH_TRACE import has one per kernel): their count is compared
        self.nodes_known = nodes_known
        if not rows:  # nothing known about its ops: fall back on the name's words
            rows.append((re.sub(r"_?\d+$|\[.*\]$", "", kernel.name), "", "", ""))
        self.ops = Counter(r[0] for r in rows)
        self.shape = Counter((r[0], r[1]) for r in rows)
        # where it comes from, as sets: how many ops came from a line is the ops' business (a gelu is 10 ops, the
        # relu that replaced it on the same line 1; as multisets the line alone would call them a third alike)
        self.loc = Counter({r[2]: 1 for r in rows if r[2]})
        self.mod = Counter({r[3]: 1 for r in rows if r[3]})
        self.extern = kernel.language == "extern"
        self.exact = (self.extern, tuple(sorted(rows)))


_NODE_CACHE: dict = {}


def _node_facts(c: Compile) -> dict:
    """FX node name -> (op, shape, "file.py:line", module, identity) of ``c``'s post-grad graph (cached). ``op``: the
    node's target, or the op it ``wraps`` (a lowering pattern's call, which two frozen graphs would otherwise both
    name ``torch._inductor...fn``). ``identity``: what names the node across two reports (:func:`match_kernels`), ``(op,
    module, line, n)``: ``module`` the last part of the innermost module's path (``ln_1`` of ``h.0.ln_1``: a block
    compiled alone and inside a model, a model wrapped in another, are named alike), ``line`` the text of the line that
    ran (``"h = torch.relu(self.fc1(x))"``; its ``file.py:line`` where the stack has no text), so that a script saved
    under another name or with lines added above still matches; ``n`` counts the nodes of equal ``(op, module,
    line)`` in graph order (the n-th pairs with the n-th: a model's layers, in order)."""
    hit = _NODE_CACHE.get(id(c))
    if hit is not None and hit[0] is c:
        return hit[1]
    graph = c.graphs.get("post_grad") or next(iter(c.graphs.values()), None)
    base: dict = {}
    facts = {}
    seen: Counter = Counter()
    for n in graph.nodes if graph else ():
        loc = where = ""
        if n.user_stack:
            f = line_frame(n.user_stack)  # the line that ran, as every view names it
            if f.file not in base:
                base[f.file] = posixpath.basename(f.file.replace("\\", "/"))
            loc = f"{base[f.file]}:{f.line}"
            where = (f.code or "").strip() or loc
        op = n.wraps or n.target  # a lowering pattern's call (``mkldnn_fusion.fn``) by the op it lowers to
        module = n.module_stack[-1] if n.module_stack else ""
        ident = (op, module.rsplit(".", 1)[-1], where)  # the module by its own name: ``h.0.ln_1`` is ``ln_1`` alone
        seen[ident] += 1
        facts[n.name] = (op, repr(n.shape), loc, module, (*ident, seen[ident]))
    if len(_NODE_CACHE) > 64:
        _NODE_CACHE.clear()
    _NODE_CACHE[id(c)] = (c, facts)
    return facts


def _units(c: Optional[Compile], nodes_known: bool = True) -> list:
    """One :class:`_Features` per kernel launch of ``c`` (``Kernel.call_sites``: each entry is one call of the
    kernel in the output code, the fused nodes that call computes), in execution order (the first fused node of
    each call); kernels with no call site (no fused node names them) last, one launch each."""
    if c is None:
        return []
    by_name = {n.name: n for n in c.fused_nodes}
    order = {n.name: i for i, n in enumerate(c.fused_nodes)}
    launches = []  # (position, kernel, fused nodes, call index, calls of this kernel)
    for k in c.kernels:
        sites = [s for s in k.call_sites if s] or [[]]
        for i, site in enumerate(sites):
            start = min((order[f] for f in site if f in order), default=len(order))
            launches.append((start, k, [by_name[f] for f in site if f in by_name], i, len(sites)))
    launches.sort(key=lambda x: x[0])  # stable: kernels with no fused node keep their order, last
    facts, inputs = _node_facts(c), frozenset(c.graph_inputs)
    return [
        _Features(k, nodes, i, len(launches), facts, call, calls, inputs, nodes_known)
        for i, (_, k, nodes, call, calls) in enumerate(launches)
    ]


def _jaccard(x: Counter, y: Counter) -> float:
    inter = sum(min(v, y[k]) for k, v in x.items() if k in y)
    union = sum(x.values()) + sum(y.values()) - inter
    return inter / union if union else 0.0


def similarity(x: _Features, y: _Features) -> float:
    """Weighted Jaccard similarity of two kernel launches' multisets, in [0, 1]. A multiset empty on both sides
    (no user line, or no module, known for either) is no evidence: it is left out and the other weights
    rescaled. Counting it as equal paired unrelated kernels of two models whose ops run at the top level."""
    num = den = 0.0
    for key, w in WEIGHTS.items():
        fx, fy = getattr(x, key), getattr(y, key)
        if fx or fy:
            num += w * _jaccard(fx, fy)
            den += w
    s = num / den if den else 0.0
    return s * (0.5 if x.extern != y.extern else 1.0)


def match_kernels(fa: list, fb: list) -> list:
    """``[(i or None, j or None, similarity, link)]``: identical descriptions first (in order, :func:`_align`), then
    the launches that merged or split (:func:`_merges`), then the greedy best match; the result is in B's order with
    A-only launches at A's position. ``link`` is ``None``, or for a row of a merge or split: ``("merged", j)`` (A's
    launch ``i`` merged into B's ``j``, which another row pairs), ``("split", i)`` (B's launch ``j`` split off A's
    ``i``), and on the row that pairs ``j`` (``i``) ``("merged_with", [A launches])`` (``("split_with", [B
    launches])``), the others of the merge (split); each of those rows follows the row it belongs with."""
    pairs: dict = {}
    keys_b: dict = {}
    for j, f in enumerate(fb):
        keys_b.setdefault(f.exact, []).append(j)
    keys_a: dict = {}
    for i, f in enumerate(fa):
        keys_a.setdefault(f.exact, []).append(i)
    for key, ia in keys_a.items():
        jb = keys_b.get(key)
        for x, y in _align([fa[i].pos for i in ia], [fb[j].pos for j in jb or ()]):
            pairs[ia[x]] = (jb[y], 1.0)
    taken_b = {j for j, _ in pairs.values()}
    _same_code(fa, fb, pairs, taken_b)
    merged, split = _merges(fa, fb, pairs, taken_b)
    rest_a = [i for i in range(len(fa)) if i not in pairs and i not in merged]
    rest_b = [j for j in range(len(fb)) if j not in taken_b and j not in split]
    cands = []
    for i in rest_a:
        for j in rest_b:
            s = similarity(fa[i], fb[j])
            if s >= MIN_SIMILARITY:
                cands.append((-s, abs(fa[i].pos - fb[j].pos), i, j))
    cands.sort()
    done_a: set = set()
    for neg, _, i, j in cands:
        if i in done_a or j in taken_b:
            continue
        done_a.add(i)
        taken_b.add(j)
        pairs[i] = (j, round(-neg, 3))
    lowered = _same_call(fa, fb, pairs, taken_b, merged, split)
    by_b = {j: (i, s) for i, (j, s) in pairs.items()}
    merged_in: dict = {}  # B launch -> the A launches merged into it
    for i, j in sorted(merged.items()):
        merged_in.setdefault(j, []).append(i)
    split_off: dict = {}  # B launch paired with the A launch split -> the other B launches of it
    for j, i in sorted(split.items()):
        split_off.setdefault(pairs[i][0], []).append(j)
    out = []
    a_left = sorted(i for i in range(len(fa)) if i not in pairs and i not in merged)
    for j in range(len(fb)):
        if j in split:  # after the row of the launch it split off with
            continue
        while a_left and _a_before(fa[a_left[0]], fb[j]):
            out.append((a_left.pop(0), None, None, None))
        i, s = by_b.get(j, (None, None))
        link = (
            ("merged_with", merged_in[j])
            if j in merged_in
            else ("split_with", split_off[j])
            if j in split_off
            else ("lowering", None)
            if j in lowered
            else None
        )
        out.append((i, j, s, link))
        out.extend((m, None, None, ("merged", j)) for m in merged_in.get(j, ()))
        out.extend((None, k, None, ("split", i)) for k in split_off.get(j, ()))
    out.extend((i, None, None, None) for i in a_left)
    return out


def _same_call(fa: list, fb: list, pairs: dict, taken_b: set, merged: dict, split: dict) -> set:
    """Pair (into ``pairs``) a launch left on each side where one is an extern call and the other generated code, and
    they compute the ops of the same user lines, each the only launch left on its side from those lines: the same
    call of the user's computed another way (nu30 D5: torch 2.13 decomposed the SDPA of a line into a C++ kernel,
    2.15 calls ``_scaled_dot_product_flash_attention_for_cpu`` for it, which the compare listed as an unrelated
    removal and addition). Returns the B launches so paired (their rows say ``lowering``)."""
    rest_a = [i for i in range(len(fa)) if i not in pairs and i not in merged and fa[i].loc]
    rest_b = [j for j in range(len(fb)) if j not in taken_b and j not in split and fb[j].loc]
    out = set()
    for i in rest_a:
        x = fa[i]
        near = [j for j in rest_b if j not in taken_b and fb[j].extern != x.extern and set(fb[j].loc) & set(x.loc)]
        if len(near) != 1:
            continue
        y = fb[near[0]]
        lines = set(x.loc) | set(y.loc)
        if set(x.loc) != set(y.loc) and not (set(y.loc) <= set(x.loc) or set(x.loc) <= set(y.loc)):
            continue  # each computes lines the other does not: not one call
        if sum(1 for k in rest_a if k not in pairs and set(fa[k].loc) & lines) != 1:
            continue  # another launch left in A from those lines: which one is the call is a guess
        if sum(1 for k in rest_b if k not in taken_b and set(fb[k].loc) & lines) != 1:
            continue  # so in B (a generated launch beside the extern call, from those lines)
        pairs[i] = (near[0], round(similarity(x, y), 3))
        taken_b.add(near[0])
        out.add(near[0])
    return out


def _lowering_words(f: _Features) -> str:
    """How one launch computes a call: ``"an extern call of _scaled_dot_product_flash_attention_for_cpu"``,
    ``"decomposed into a C++ kernel"`` (a Triton kernel)."""
    if f.extern:
        ops = [short_op(t) for t in f.ops]
        return f"an extern call of {ops[0]}" if len(ops) == 1 else "an extern call"
    return f"decomposed into a {'C++' if f.kernel.language == 'cpp' else f.kernel.language.capitalize()} kernel"


def _same_code(fa: list, fb: list, pairs: dict, taken_b: set) -> None:
    """Pair the generated launches not yet paired whose sources are equal (``_source_lines``: normalised, without a
    profiled capture's instrumentation), in order (:func:`_align`); ``pairs``, ``taken_b``: updated. The same code
    computes the same thing whatever each report knows of its ops: a TORCH_TRACE import without provenance links no
    FX op to a C++ kernel, which the description cannot pair with the live capture's."""
    by_src: dict = {}
    for j, f in enumerate(fb):
        if j not in taken_b and not f.extern:
            by_src.setdefault(tuple(_source_lines(f)), ([], []))[1].append(j)
    if not by_src:
        return
    for i, f in enumerate(fa):
        if i not in pairs and not f.extern:
            hit = by_src.get(tuple(_source_lines(f)))
            if hit is not None:
                hit[0].append(i)
    for ia, jb in by_src.values():
        for x, y in _align([fa[i].pos for i in ia], [fb[j].pos for j in jb]) if ia else ():
            pairs[ia[x]] = (jb[y], round(similarity(fa[ia[x]], fb[jb[y]]), 3))
            taken_b.add(jb[y])


def _merges(fa: list, fb: list, pairs: dict, taken_b: set) -> tuple:
    """Launches that merged or split, by the ops they compute (``_Features.keys``, each FX node's identity across the
    reports), among those not yet paired: an A launch whose ops all moved into one B launch, where two or more did
    (epilogue fusion: A's matmul and A's pointwise kernel after it, B's template with that epilogue), is a merge;
    the first of them in A pairs with the B launch (``pairs``, ``taken_b``: updated), the others are returned as
    ``{A launch: B launch}``. The converse, a B launch whose ops all come from one A launch, where two or more do, is
    a split, returned as ``{B launch: A launch}``."""

    def owners(fs: list) -> dict:
        return {k: n for n, f in enumerate(fs) for k in f.keys if k is not None}

    def inside(f: _Features, owner: dict, free: set) -> Optional[int]:
        """The one launch of the other side that computes every op of ``f``, where it is unpaired."""
        if not f.keys or None in f.keys:
            return None
        held = {owner.get(k) for k in f.keys}
        (o,) = held if len(held) == 1 else (None,)
        return o if o in free else None

    def groups(facts: list, candidates: Iterable[int], owner: dict, free: set) -> dict:
        """The candidates (two or more) whose ops all run in one free launch of the other side, by that launch, in
        execution order."""
        into: dict = {}
        for i in candidates:
            j = inside(facts[i], owner, free)
            if j is not None:
                into.setdefault(j, []).append(i)
        return {j: sorted(ii, key=lambda i: facts[i].pos) for j, ii in into.items() if len(ii) > 1}

    merged: dict = {}
    split: dict = {}
    owner_a, owner_b = owners(fa), owners(fb)
    free_b = {j for j in range(len(fb)) if j not in taken_b}
    for j, (first, *rest) in groups(fa, [i for i in range(len(fa)) if i not in pairs], owner_b, free_b).items():
        pairs[first] = (j, round(similarity(fa[first], fb[j]), 3))
        taken_b.add(j)
        merged.update((i, j) for i in rest)
    free_a = {i for i in range(len(fa)) if i not in pairs and i not in merged}
    for i, (first, *rest) in groups(fb, [j for j in range(len(fb)) if j not in taken_b], owner_a, free_a).items():
        pairs[i] = (first, round(similarity(fa[i], fb[first]), 3))
        taken_b.add(first)
        split.update((j, i) for j in rest)
    _into_paired(fa, fb, pairs, taken_b, merged, split, owner_a, owner_b, inside)
    return merged, split


def _into_paired(fa, fb, pairs, taken_b, merged, split, owner_a, owner_b, inside) -> None:
    """The merges (splits) whose B (A) launch is already paired with one of them: an A launch left unpaired whose
    ops all run in one B launch that is paired with an A launch whose ops all run there too (A computed a frozen
    linear in two launches, its MKL call and its bias add; B's GEMM template computes both, and the bias add's
    description equals the template's: they paired first) is merged into it like any merge: the first of them in
    A pairs with the B launch, the others are ``merged`` rows, never ``removed``. The converse for splits.
    ``pairs``, ``taken_b``, ``merged``, ``split``: updated."""
    by_b = {j: i for i, (j, _) in pairs.items()}
    into: dict = {}
    for i in range(len(fa)):
        if i not in pairs and i not in merged:
            j = inside(fa[i], owner_b, set(by_b) - set(split.values()))
            if j is not None and inside(fa[by_b[j]], owner_b, {j}) == j:
                into.setdefault(j, []).append(i)
    for j, ii in into.items():
        first, *rest = sorted({*ii, by_b[j], *(m for m, k in merged.items() if k == j)}, key=lambda i: fa[i].pos)
        del pairs[by_b[j]]
        pairs[first] = (j, round(similarity(fa[first], fb[j]), 3))
        merged.update((i, j) for i in rest)
    by_a = {i: j for i, (j, _) in pairs.items()}
    off: dict = {}
    for j in range(len(fb)):
        if j not in taken_b and j not in split:
            i = inside(fb[j], owner_a, set(by_a) - set(merged))
            if i is not None and inside(fb[by_a[i]], owner_a, {i}) == i:
                off.setdefault(i, []).append(j)
    for i, jj in off.items():
        first, *rest = sorted({*jj, by_a[i], *(m for m, k in split.items() if k == i)}, key=lambda j: fb[j].pos)
        taken_b.discard(by_a[i])
        split.pop(first, None)
        pairs[i] = (first, round(similarity(fa[i], fb[first]), 3))
        taken_b.add(first)
        split.update((j, i) for j in rest)


def _align(xs: list, ys: list) -> list:
    """``[(i, j)]``: identical launches paired in order, ``xs``/``ys`` their relative positions in A and B. With as
    many on each side, the n-th with the n-th; else the in-order pairing of all of the fewer side that keeps each
    pair closest in position (least total ``|x - y|``, by dynamic programming), so that a layer whose kernels
    changed leaves its own place empty, not the last layer's (four identical launches in A, three in B where
    the second changed: A's 1st, 3rd, 4th pair with B's three)."""
    swap = len(xs) > len(ys)
    if swap:
        xs, ys = ys, xs
    m, n = len(xs), len(ys)
    if m == n or m == 0 or m * n > 250_000:  # equal counts: in order is the only way; very many: in order too
        out = [(i, i) for i in range(m)]
    else:
        inf = float("inf")
        cost = [[0.0] * (n + 1)] + [[inf] * (n + 1) for _ in range(m)]  # xs[:i] paired within ys[:j]
        for i in range(1, m + 1):
            row, up = cost[i], cost[i - 1]
            for j in range(i, n + 1):
                row[j] = min(row[j - 1], up[j - 1] + abs(xs[i - 1] - ys[j - 1]))
        out, i, j = [], m, n
        while i:
            if j > i and cost[i][j] == cost[i][j - 1]:
                j -= 1
            else:
                out.append((i - 1, j - 1))
                i, j = i - 1, j - 1
        out.reverse()
    return [(j, i) for i, j in out] if swap else out


def _a_before(x: _Features, y: _Features) -> bool:
    return x.pos < y.pos


def _kernel_pair(
    x: Optional[_Features],
    y: Optional[_Features],
    sim: Optional[float],
    timed: bool,
    link: Optional[tuple] = None,
    fa: Sequence = (),
    fb: Sequence = (),
) -> KernelDiff:
    """One row: the pair ``x``/``y``, or a launch on one side; ``link`` as :func:`match_kernels` gives it (``fa``,
    ``fb``: the launches its indexes name)."""
    ta = _unit_time(x)
    tb = _unit_time(y)
    delta = None
    if timed:
        delta = (
            round((tb or 0.0) - (ta or 0.0), 3)
            if (x is None or ta is not None) and (y is None or tb is not None)
            else None
        )
    if x is None or y is None:
        status = "only_b" if x is None else "only_a"
        into = came = None  # the B launch an A launch merged into; the A launch a B launch split off
        if link and link[0] == "merged":
            status, into = "merged", fb[link[1]]
        elif link and link[0] == "split":
            status, came = "split", fa[link[1]]
        src_diff = None
        if into or came:  # the page shows both sources: the launch's and the one it merged into (split off)
            la, lb = _source_lines(x or came), _source_lines(y or into)
            src_diff = [list(op) for op in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes()]
        return KernelDiff(
            status=status,
            a=x.kernel.name if x else None,
            b=y.kernel.name if y else None,
            time_delta_us=delta,
            time_a_us=ta,
            time_b_us=tb,
            source_diff=src_diff,
            fused_a=_fused_names(x or came),
            fused_b=_fused_names(y or into),
            launch_a=_launch_text(x),
            launch_b=_launch_text(y),
            ops=_op_list(x or y),
            merged_into=into.kernel.name if into else "",
            split_from=came.kernel.name if came else "",
        )
    known = x.known and y.known  # one side's ops not known (a TORCH_TRACE import): not compared, said so
    unknown = ([] if x.known else ["ops"], [] if y.known else ["ops"])
    moved_in = sorted((y.ops - x.ops).elements()) if known else []
    moved_out = sorted((x.ops - y.ops).elements()) if known else []
    shape_x, shape_y, blind_x, blind_y = _known_shapes(x.shape, y.shape)
    for side, blind in ((0, blind_x), (1, blind_y)):
        if blind and known:
            unknown[side].append("shape")
    changes = []
    shapes = ("", "")
    args = _arg_shapes(x.kernel, y.kernel)
    lowering = ""
    if link and link[0] == "lowering":  # one call of the user's, computed another way: its ops are not moved ones
        lowering = f"{_lowering_words(x)} → {_lowering_words(y)}"
        changes.append("lowering")
        moved_in = moved_out = []
    elif moved_in or moved_out or (link and link[0] in ("merged_with", "split_with")):
        changes.append("fusion")
    elif known and shape_x != shape_y and not lowering:
        changes.append("shape")
        shapes = _shape_change(shape_x, shape_y)
    elif args:  # the ops write the same shapes from other ones (an input of a matmul), or sizes passed as arguments
        changes.append("shape")
    if not {"fusion", "lowering"} & set(changes) and known and x.nodes_known and y.nodes_known and x.nodes and y.nodes:
        if len(x.nodes) != len(y.nodes):  # the same ops, fused into more or fewer scheduler nodes in the kernel
            changes.append("nodes")
    renamed = False  # the sources differ only by the names of the tensors passed: the arguments changed, not the code
    src_diff = None
    if not _same_source(x, y):
        la, lb = _source_lines(x), _source_lines(y)
        renamed = _names_only(x, y)
        src_diff = [list(op) for op in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes()]
    arg_changes = _arg_changes(x.kernel, y.kernel, reads=renamed)
    for what in ("dtype", "layout"):
        if any(c["what"] == what for c in arg_changes):
            changes.append(what)
    if _cost_changed(x.kernel, y.kernel):
        changes.append("cost")
    if src_diff is not None and not renamed:
        changes.append("source")
    elif renamed and any(c["what"] == "reads" for c in arg_changes):
        changes.append("args")
    elif renamed:  # the same code on tensors named otherwise and holding the same: no change to show
        src_diff = None
    la_x, la_y = _launch(x.kernel), _launch(y.kernel)
    if la_x is not None and la_y is not None and la_x != la_y:  # one side without: another language
        changes.append("launch")
    if _autotune(x.kernel) != _autotune(y.kernel):
        changes.append("autotune")
    return KernelDiff(
        status="changed" if changes else "same",
        a=x.kernel.name,
        b=y.kernel.name,
        moved_ops_in=moved_in,
        moved_ops_out=moved_out,
        time_delta_us=delta,
        changes=changes,
        similarity=sim,
        time_a_us=ta,
        time_b_us=tb,
        source_diff=src_diff,
        fused_a=_fused_names(x),
        fused_b=_fused_names(y),
        launch_a=_launch_text(x),
        launch_b=_launch_text(y),
        ops=_op_list(y),
        shape_a=shapes[0],
        shape_b=shapes[1],
        arg_shapes=args if "shape" in changes and not shapes[0] else [],
        arg_changes=arg_changes,
        flops_a=_cost(x.kernel)[0],
        flops_b=_cost(y.kernel)[0],
        ops_word=_ops_word(x.kernel, y.kernel),
        bytes_a=_cost(x.kernel)[1],
        bytes_b=_cost(y.kernel)[1],
        merged_with=[fa[i].kernel.name for i in link[1]] if link and link[0] == "merged_with" else [],
        split_with=[fb[j].kernel.name for j in link[1]] if link and link[0] == "split_with" else [],
        not_known_a=unknown[0],
        not_known_b=unknown[1],
        lowering=lowering,
    )


def _known_shapes(x: Counter, y: Counter) -> tuple:
    """Two launches' ``(op, shape)`` multisets without the ops whose shape a side does not know (``"None"``: a
    TORCH_TRACE import's multi-output op), and the ops whose shape only A's (only B's) side does not know: a shape
    one side does not know is no change."""
    bx = {op for op, shape in x if shape == "None"}
    by = {op for op, shape in y if shape == "None"}
    blind = bx | by

    def keep(c: Counter) -> Counter:
        return Counter({k: n for k, n in c.items() if k[0] not in blind}) if blind else c

    return keep(x), keep(y), sorted(bx - by), sorted(by - bx)


def _fused_names(f: Optional[_Features]) -> list:
    return [n.name for n in f.nodes] if f is not None else []


def _launch_text(f: Optional[_Features]) -> str:
    return f"launch {f.call + 1} of {f.calls}" if f is not None and f.calls > 1 else ""


def _op_list(f: _Features) -> list:
    return sorted(f.ops.elements())


_SOURCE_CACHE: dict = {}


def kernel_source(k: Kernel) -> str:
    """The source a diff compares and the compare page shows of ``k``: as torch writes it without profiling
    (``rules.without_kernel_profile``: a profiled capture's C++ kernels carry two lines of instrumentation that a
    kernel compiled without ``--profile``, or read from a TORCH_TRACE log, lacks)."""
    return without_kernel_profile(k.source)


def _same_source(x: _Features, y: _Features) -> bool:
    """Equal sources: most often equal as they are, or once each kernel's own name is replaced; else normalised."""
    ka, kb = x.kernel, y.kernel
    sa, sb = kernel_source(ka), kernel_source(kb)
    if sa == sb or sa.replace(ka.name, "KERNEL") == sb.replace(kb.name, "KERNEL"):
        return True
    return _source_lines(x) == _source_lines(y)


_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def _source_lines(f: _Features) -> list:
    """Normalised source lines. An extern call's arguments are graph inputs named after FX nodes (saved
    activations such as ``relu_1``), which shift like buffer numbers: they read ``IN`` there."""
    k = f.kernel
    key = (k.name, k.source, f.inputs if f.extern else None)
    hit = _SOURCE_CACHE.get(key)
    if hit is None:
        if len(_SOURCE_CACHE) > 4096:
            _SOURCE_CACHE.clear()
        text = normalise_source(kernel_source(k), k.name)
        if f.extern and f.inputs:
            text = _IDENT.sub(lambda m: "IN" if m.group(0) in f.inputs else m.group(0), text)
        hit = _SOURCE_CACHE[key] = text.splitlines()
    return hit


def _unit_time(f: Optional[_Features]) -> Optional[float]:
    """Measured time of one launch; a kernel's measured total is split evenly over its calls."""
    if f is None:
        return None
    t = _time(f.kernel)
    return round(t / f.calls, 3) if t is not None else None


def _time(k: Kernel) -> Optional[float]:
    return measured_us(k)


def _launch(k: Kernel) -> Any:
    la = k.metadata.get("launch")
    if not isinstance(la, dict):
        return None
    return {x: la.get(x) for x in ("num_warps", "num_stages", "block")}


def _autotune(k: Kernel) -> Any:
    at = k.metadata.get("autotune")
    if not isinstance(at, dict):
        return None
    fastest = at.get("fastest")
    desc = next(
        (c.get("description") for c in at.get("choices") or [] if isinstance(c, dict) and c.get("name") == fastest),
        None,
    )
    return (at.get("op"), desc if desc is not None else normalise_source(str(fastest), ""))


_KERNEL_NAME = re.compile(r"\b(?:cpp|triton)_(?:fused|poi|per|red|tem|mm|bmm|flex|foreach|\w+?_fused)\w*")
_BUF = re.compile(r"\bbuf\d+\b")
_HASH = re.compile(r"\b[0-9A-Fa-f]{32,}\b")
_PATH_COMMENT = re.compile(r"^\s*#\s*(?:kernel path|Source Nodes|Original ATen|Topologically Sorted)\b.*$", re.M)
_TMP_PATH = re.compile(r"(?:/tmp|/var/folders)/\S+")


def normalise_source(source: str, name: str) -> str:
    """``source`` with what shifts between otherwise equal compiles replaced: the kernel's own name
    and other kernel names (``KERNEL``), buffer numbers (``buf#``), long hashes, temp paths."""
    if name:
        source = source.replace(name, "KERNEL")
    source = _PATH_COMMENT.sub("", source)
    source = _KERNEL_NAME.sub("KERNEL", source)
    source = _BUF.sub("buf#", source)
    source = _HASH.sub("HASH", source)
    return _TMP_PATH.sub("TMP", source)


# -- report level --------------------------------------------------------------------------------


def _profiled(r: Report) -> bool:
    """Whether ``r`` was profiled: it has a step profile (``Report.profile``), or, a report made before step profiles,
    a kernel with a measured time. A profiled report whose profiler tied no event to a kernel (a C++ GEMM template's
    event before the twenty-first session, nu28 D2) was profiled all the same: its kernels were not measured."""
    return r.profile is not None or any(_time(k) is not None for k in r.kernels)


def _facts(r: Report) -> dict:
    return {
        "title": r.title,
        "torch_version": r.torch_version,
        "device": r.device,
        "created": r.created,
        "profiled": _profiled(r),
    }


def _count(kernels: Iterable[KernelDiff]) -> dict:
    c = Counter(k.status for k in kernels)
    return {s: c.get(s, 0) for s in STATUSES}


def summary_text(s: dict) -> str:
    """``"kernel launches: 5 same, 1 changed, 0 only in A, 2 only in B"`` (the CLI, the text, the page's header);
    merged and split launches where there are any (``"2 merged"``)."""
    moved = "".join(f", {s[k]} {k}" for k in ("merged", "split") if s.get(k))
    return f"{UNIT}: {s['same']} same, {s['changed']} changed{moved}, {s['only_a']} only in A, {s['only_b']} only in B"


def shared(compiles: Sequence[CompileDiff], across: int = 0) -> dict:
    """How much A and B share, all compile pairs together: ``launches_a``, ``launches_b`` (kernel launches on each
    side), ``ops_a``, ``ops_b`` (the ops those launches compute), ``ops_shared`` (ops computed on both sides: the
    same op from the same source line and module, ``CompileDiff.ops``), ``share`` (``ops_shared`` over the ops of
    the side with fewer, so that a model with layers added still shares all of its smaller self, and a fusion that
    moved ops between launches, an epilogue into a GEMM template, changes nothing; ``None`` when a side has none),
    and the threshold, ``little_below``. ``across``: the ops that the compiles paired with nothing on one side share
    with those paired with nothing on the other (:func:`diff`), counted as shared: the ops of compiles left unpaired
    only because their frames are named differently are not "in A only" and "in B only" (nu30 D3: a live capture's
    optimizer step, ``AdamW.step``, and an import's, ``Adam.step``, put the share under the threshold).
    ``unpaired_a``, ``unpaired_b``: the ids of the compiles paired with nothing (:func:`_unpaired_note`)."""
    kernels = [k for c in compiles for k in c.kernels]
    na = sum(k.a is not None for k in kernels)
    nb = sum(k.b is not None for k in kernels)
    oa, ob, both = (sum((c.ops or {}).get(x, 0) for c in compiles) for x in ("a", "b", "shared"))
    both += across
    return {
        "launches_a": na,
        "launches_b": nb,
        "ops_a": oa,
        "ops_b": ob,
        "ops_shared": both,
        "share": round(both / min(oa, ob), 3) if min(oa, ob) else None,
        "little_below": SHARED_LITTLE,
        "unpaired_a": [c.a for c in compiles if c.b is None and c.a],
        "unpaired_b": [c.b for c in compiles if c.a is None and c.b],
    }


def notes(sh: dict, timed_differently: str = "", autotune: str = "", uncertain: str = "") -> list:
    """The diff's notes (``DiffNote``): ``times_uncertain`` first, with why the measured times cannot carry a verdict
    (``diff_time.doubts_note``); ``different_models`` when the reports share little (see :func:`shared`);
    ``timed_differently`` with its warning (``diff_time.timing``) and ``autotune_vs_measured`` with its summary
    (``diff_time.autotune_summary``) where they are not ``""``."""
    out = [DiffNote("times_uncertain", uncertain)] if uncertain else []
    out += _different_models(sh)
    if timed_differently:
        out.append(DiffNote("timed_differently", timed_differently))
    if autotune:
        out.append(DiffNote("autotune_vs_measured", autotune))
    return out


def _different_models(sh: dict) -> list:
    if sh["share"] is None or sh["share"] >= SHARED_LITTLE:
        return []
    small = "A" if sh["ops_a"] <= sh["ops_b"] else "B"
    ops, launches = sh[f"ops_{small.lower()}"], sh[f"launches_{small.lower()}"]
    other = "B" if small == "A" else "A"
    return [
        DiffNote(
            "different_models",
            f"A and B share little: {sh['ops_shared']} of the {ops} ops that the {launches} {UNIT} of {small} "
            f"compute {'is' if sh['ops_shared'] == 1 else 'are'} in {other} too (the same op from the same source "
            "line and module). They may be different models: a pair below is a guess, not the same kernel changed.",
        )
    ]


def _unpaired_note(a: Report, b: Report, sh: dict) -> list:
    """The note ``unpaired_compiles`` where both sides hold compiles that paired with nothing (``shared``'s
    ``unpaired_a``, ``unpaired_b``): which, with their frames, and how to pair them by hand. Their launches are listed
    as removed and added, which reads as a change of the model where it may be a change of names only."""
    if not (sh["unpaired_a"] and sh["unpaired_b"]):
        return []

    def named(r: Report, ids: list) -> str:
        frames = {c.id: c.frame for c in r.compiles}
        return ", ".join(f"{i} ({frames[i]})" if frames.get(i) else i for i in ids)

    first = (sh["unpaired_a"][0], sh["unpaired_b"][0])
    return [
        DiffNote(
            "unpaired_compiles",
            f"Compiles paired with nothing: A's {named(a, sh['unpaired_a'])}; B's {named(b, sh['unpaired_b'])} "
            "(compiles pair by their frame's name, graph kind and order, then by equal kernels): their launches are "
            f"listed as removed and added. To pair two by hand: --pair '{first[0]}={first[1]}' "
            f"(diff(a, b, pairs=[{first!r}])).",
        )
    ]


def _report_extras(a: Report, b: Report) -> dict:
    def breaks(r):
        return Counter(g.reason for g in r.graph_breaks)

    def recompiles(r):
        return Counter(reason or cid for cid, reason in r.recompiles())  # a frame with no graph's too

    def total_time(r):
        ts = [t for t in (_compile_time(c) for c in r.compiles) if t is not None]
        return round(sum(ts), 1) if ts else None

    ba, bb, ra, rb = breaks(a), breaks(b), recompiles(a), recompiles(b)
    ta, tb = total_time(a), total_time(b)
    return {
        "graph_breaks": {
            "a": sum(ba.values()),
            "b": sum(bb.values()),
            "added": sorted((bb - ba).elements()),
            "removed": sorted((ba - bb).elements()),
        },
        "recompiles": {
            "a": sum(ra.values()),
            "b": sum(rb.values()),
            "added": sorted((rb - ra).elements()),
            "removed": sorted((ra - rb).elements()),
        },
        "compile_time_us": {
            "a": ta,
            "b": tb,
            "delta": round(tb - ta, 1) if ta is not None and tb is not None else None,
        },
    }
