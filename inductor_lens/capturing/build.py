"""Turn the raw records of a capture into a :class:`~inductor_lens.model.Report`.

Works on plain data only (the adapter already took what it needed from torch objects), so a
failure here can be reported without touching torch again.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime
import os
import re
from collections import defaultdict
from typing import Any, Optional, Sequence

from ..analysis.memory import reuses
from ..analysis.reproducer import ReproducerError, kernel_script, launch_order, with_scripts
from ..report import rules
from ..report.built import mark_built
from ..report.finish import finish_compile, forward_inputs, incomplete, link_branches, mark_same_graphs
from ..report.lines import lent_lines, line_ops
from ..report.model import (
    AutotuneMode,
    CaptureStart,
    Compile,
    CompileCall,
    CustomPass,
    Diagnostic,
    DynamoReset,
    EmptyFrame,
    Frame,
    FusedNode,
    FusionDecision,
    Graph,
    GraphBreak,
    GraphNode,
    GraphOutput,
    Kernel,
    KernelIR,
    Phase,
    RecompileLimit,
    Report,
    Trigger,
)
from ..report.module_paths import combine, fill_backward, infer_compile, missing, node_stack
from ..report.rules import (
    MODULE_ROOT_ARG,
    compiler_stack_notes,
    control_flow,
    cudagraph_skip_message,
    phase_words,
    placeholder_source,
    readable_reasons,
    recompile_limit_advice,
    source_role,
    stack_stages,
    wraps_module,
)
from .artifacts import READERS, record_kind
from .constants import constant_names
from .cudagraphs import ON_CPU, cudagraphs_of
from .launch import kernel_launch
from .parse import (
    OutputCodeLayouts,
    cpp_arg_types,
    cpp_wrapper_code,
    find_call_lines,
    ir_source_lines,
    kept_modules,
    model_modules,
    parse_graph_break,
    parse_output_code_kernels,
    parse_stack_trace,
    triton_source_metadata,
)
from .raw import RESETS, Raw, RawGraph, RawKernel, RawSchedNode, RawWindow, aot_lowered, loads_payload
from .sources import Cell, cell_map, localize, localize_text, method_class, read_sources, shift_resume
from .stacks import logged_user_frames
from .trace_graph import callee_op, calls_op


def _frames(tuples: list[tuple]) -> list[Frame]:
    """Frames of plain ``(file, line, function, code[, qualname])`` (``stacks.frames_of``; a log's have no qualname)."""
    return [
        Frame(file=f, line=int(ln), function=fn, code=code, qualname=q[0] if q else "")
        for f, ln, fn, code, *q in tuples
    ]


def _compiler_frames(tuples: list[tuple], cache_turned_off: bool = False) -> list[Frame]:
    """A compiler call stack's frames, each in the stage it runs in (``rules.stack_stages``), with the notes of
    ``rules.compiler_stack_notes`` (``cache_turned_off``: the capture turned the FX graph cache off)."""
    frames = _frames(tuples)
    stages = stack_stages([f.stage for f in frames])
    notes = compiler_stack_notes([(f.file, f.function, f.qualname, f.code) for f in frames], cache_turned_off)
    return [
        f if f.stage == st and not note else dataclasses.replace(f, stage=st, note=note)
        for f, st, note in zip(frames, stages, notes)
    ]


def _localized(value: Any, cells: dict[str, Cell]) -> Any:
    """``value`` (a report or any part of it) with every frame in a notebook cell named as the user sees it."""
    if isinstance(value, Frame):
        return localize(value, cells)
    if isinstance(value, EmptyFrame) and value.file in cells:  # its place, a file and a line of its own
        at = localize(Frame(file=value.file, line=value.line, function=value.function), cells)
        return dataclasses.replace(value, file=at.file, line=at.line, function=at.function)
    if isinstance(value, list):
        return [_localized(v, cells) for v in value]
    if isinstance(value, dict):
        return {k: _localized(v, cells) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _localized(getattr(value, f.name), cells)
            for f in dataclasses.fields(value)
            if f.name not in ("source", "output_code", "code", "guards", "metadata")
        }
        for name in _TEXTS.intersection(changes):  # the words that cite a place: a diagnostic's, a reason's
            if isinstance(changes[name], str):
                changes[name] = localize_text(changes[name], cells)
        return dataclasses.replace(value, **changes)
    return value


#: Text fields that cite places in the user's files (``f() (/tmp/ipykernel_1/2.py:4)``, ``File "...", line 4``):
#: named as the frames are, ``cell [6]:5``.
_TEXTS = frozenset({"message", "detail", "reason", "recompile_reason", "what"})


def _cid(md: dict) -> Optional[str]:
    """A record's compile id as torch spells it (``CompileId.__str__``): ``0/1``, ``0/1_2`` (a restart),
    ``!0/1/0`` (a graph of compiled autograd, whose id leads)."""
    if "frame_id" not in md:
        return None
    cid = f"{md['frame_id']}/{md.get('frame_compile_id', 0)}"
    if md.get("compiled_autograd_id") is not None:
        cid = f"!{md['compiled_autograd_id']}/{cid}"
    if md.get("attempt"):
        cid += f"_{md['attempt']}"
    return cid


def _base_cid(cid: str) -> str:
    """``"0/1_2"`` -> ``"0/1"``: the compile id without the restart attempt."""
    return cid.split("_", 1)[0]


def _trace_key(cid: str, resets: int = 0) -> str:
    """The key of compile id ``cid``'s trace records (any attempt) logged after ``resets`` resets: ``"0/1"``, and
    ``"0/1@2"`` after two (ids start again at 0/0 after a ``torch._dynamo.reset()``)."""
    base = _base_cid(cid)
    return f"{base}@{resets}" if resets else base


def _key(rec: RawGraph) -> str:
    """The key of the trace records of ``rec``'s compile (:func:`_trace_key`)."""
    return _trace_key(rec.compile_id, rec.resets)


def _record_key(cid: str, md: dict) -> str:
    """The key of one trace record of compile id ``cid`` (:func:`_trace_key`)."""
    return _trace_key(cid, md.get(RESETS) or 0)


class _Trace:
    """The structured-trace records of a capture, indexed the ways the builder needs them."""

    def __init__(self, records: list[tuple[dict, Any]]):
        self.strings: dict[int, str] = {}
        self.by_kind: dict[str, list[tuple[Optional[str], Any, dict]]] = defaultdict(list)
        self.events: list[dict] = []
        self.failures: dict[str, int] = defaultdict(int)  # kind -> records its reader could not read
        self._by_cid: dict[str, dict[str, list]] = {}
        self._sorted = False  # events: appended in order, sorted once (add() keeps them sorted after)
        for md, payload in records:
            self.add(md, payload)
        self.events.sort(key=lambda e: float(e.get("ts", 0)))
        self.event_ts = [float(e.get("ts", 0)) for e in self.events]
        self._sorted = True

    def add(self, md: dict, payload: Any) -> None:
        """Index one more record (in log order): what a streamed build adds as the log is read."""
        kind = record_kind(md)
        reader = READERS.get(kind or "")
        if reader is None:
            return
        try:
            value = reader(payload)
            if kind == "str":
                name, idx = md["str"]
                self.strings[int(idx)] = name
            elif kind == "chromium_event":
                if isinstance(value, dict):
                    if self._sorted:  # after the same stable sort by time stamp as the whole list gets
                        ts = float(value.get("ts", 0))
                        i = bisect.bisect_right(self.event_ts, ts)
                        self.events.insert(i, value)
                        self.event_ts.insert(i, ts)
                    else:
                        self.events.append(value)
            else:
                rec = (_cid(md), value, md)
                self.by_kind[kind].append(rec)
                index = self._by_cid.get(kind)
                if index is not None and rec[0] is not None:
                    index[_record_key(rec[0], md)].append(rec)
        except Exception:  # counted, and reported once per kind by build_report
            self.failures[kind] += 1

    def _of(self, kind: str, cid: str) -> list[tuple]:
        """Records of ``kind`` for the compile ``cid`` (any attempt; a :func:`_trace_key` for one after a reset),
        indexed once per kind: a long log has thousands of compiles."""
        index = self._by_cid.get(kind)
        if index is None:
            index = self._by_cid[kind] = defaultdict(list)
            for rec in self.by_kind.get(kind, []):
                if rec[0] is not None:
                    index[_record_key(rec[0], rec[2])].append(rec)
        return index.get(_base_cid(cid), [])

    def events_between(self, start: float, end: Optional[float]) -> list[dict]:
        """The phase events with ``start - 1 <= ts <= end + 1`` (events are sorted by ``ts``)."""
        lo = bisect.bisect_left(self.event_ts, start - 1)
        hi = len(self.events) if end is None else bisect.bisect_right(self.event_ts, end + 1)
        return self.events[lo:hi]

    def diagnostics(self) -> list[Diagnostic]:
        return [
            Diagnostic(
                "hook_failed",
                f"{n} structured-trace record(s) of kind {kind!r} could not be read; "
                "what they hold is missing from the report",
            )
            for kind, n in sorted(self.failures.items())
        ]

    def payloads(self, kind: str, cid: str) -> list[Any]:
        return [p for _, p, _ in self._of(kind, cid)]

    def metadata(self, kind: str, cid: str) -> list[dict]:
        return [md for _, _, md in self._of(kind, cid)]

    def dynamo_start_stack(self, cid: str) -> list[Frame]:
        for md in self.metadata("dynamo_start", cid)[-1:]:
            frames = []
            for fr in md["dynamo_start"].get("stack", []):
                fname = fr.get("filename")
                fname = self.strings.get(fname, str(fname)) if isinstance(fname, int) else str(fname)
                frames.append(
                    Frame(
                        file=fname,
                        line=int(fr.get("line", 0)),
                        function=str(fr.get("name", "")),
                        code=str(fr.get("loc", "") or ""),
                    )
                )
            return frames
        return []


def _phases(
    events: list[dict], t0: float, start: float, end: Optional[float], restarts: Sequence[str] = ()
) -> list[Phase]:
    """Phases from chromium begin/end events inside ``[start, end]``, with nesting depth (``restarts``: why dynamo's
    tracing of the frame started again, for the words of its attempts: ``rules.phase_words``)."""
    spans: list[tuple[float, float, str, int]] = []
    open_: dict[tuple, list[tuple[str, float]]] = defaultdict(list)
    for ev in sorted(events, key=lambda e: float(e.get("ts", 0))):
        ts = float(ev.get("ts", 0))
        if ts < start - 1 or (end is not None and ts > end + 1):
            continue
        key = (ev.get("pid"), ev.get("tid"))
        ph = ev.get("ph")
        name = str(ev.get("name", "?"))
        if ph == "B":
            open_[key].append((name, ts))
        elif ph == "E":
            stack = open_[key]
            for i in range(len(stack) - 1, -1, -1):
                if stack[i][0] == name:
                    _, begin = stack.pop(i)
                    spans.append((begin, ts, name, i))
                    break
        elif ph == "X":
            spans.append((ts, ts + float(ev.get("dur", 0)), name, len(open_[key])))
    spans.sort(key=lambda s: (s[0], -s[1]))
    return [Phase(n, round(b - t0, 1), round(e - b, 1), d, *phase_words(n, restarts)) for b, e, n, d in spans]


def _handed_over(trigger: Trigger, phases: Sequence[Phase]) -> Trigger:
    """``trigger`` with when dynamo handed its graph to Inductor and when Inductor gave the code back
    (``Trigger.inductor_start_us``/``inductor_end_us``): torch's ``backend_compile`` phase, which times dynamo's call
    of the backend (``compile_fx``), of the frame's last attempt (a restarted trace calls it again). Only for a
    compile dynamo started (``rules.DYNAMO_KINDS``); a lazy backward's and AOTInductor's have no such phase."""
    if trigger.kind not in rules.DYNAMO_KINDS:
        return trigger
    span = next((p for p in reversed(phases) if p.name == "backend_compile"), None)
    if span is None:
        return trigger
    return dataclasses.replace(
        trigger, inductor_start_us=span.start_us, inductor_end_us=round(span.start_us + span.duration_us, 1)
    )


def _dynamo_graph(raw: Raw, rec: RawGraph) -> Optional[list[dict]]:
    """The dynamo graph ``rec`` compiled: of its compile id (or the id without its restart attempt), the last one
    dynamo handed over before Inductor began ``rec`` (after a ``torch._dynamo.reset()`` ids start again at ``0/0``);
    a capture's log says when, an import's does not (its graphs, built as the log goes, are the latest)."""
    for cid in (rec.compile_id, _base_cid(rec.compile_id)):
        kept = [nodes for t, c, nodes in raw.dynamo_graph_log if c == cid and t <= rec.start_us]
        if kept:
            return kept[-1]
    found = raw.dynamo_graphs.get(_key(rec)) if rec.resets else None  # an import's, after a reset
    return found or raw.dynamo_graphs.get(rec.compile_id) or raw.dynamo_graphs.get(_base_cid(rec.compile_id))


def _sources_if_shapes_agree(sources: list, shapes: list, post: list[dict], lifted: int) -> list:
    """Dynamo's placeholders (``sources``: role and name of each, ``shapes``: its shape) for naming AOT's inputs by
    position (``argN_1``), where the post-grad inputs' shapes agree with them, else ``[]``: unnamed rather than
    misnamed (a frozen graph whose input ``x`` was named ``b.bias`` when read against another compile's dynamo
    graph). A placeholder whose shape either side does not know checks nothing."""
    given = {
        i - lifted: n.get("shape")
        for n in post
        if n["op"] in ("placeholder", "get_attr") and (i := _input_number(n["name"])) is not None
    }
    agree = all(
        i >= len(sources) or shape is None or shapes[i] is None or shapes[i] == shape
        for i, shape in given.items()
        if i >= 0
    )
    return sources if agree else []


def _lowered_ops(kernels: list[Kernel]) -> dict[str, str]:
    """FX node name -> the op of the extern kernel that computes it (``mkldnn._convolution_pointwise.binary``,
    ``aten.mm`` for ``extern_kernels.mm``), as a post-grad target is spelled."""
    out: dict[str, str] = {}
    for k in kernels:
        callee = str(k.metadata.get("callee") or "") if k.language == "extern" else ""
        if callee:
            op = callee.replace("torch.ops.", "")
            op = "aten." + op[len("extern_kernels.") :] if op.startswith("extern_kernels.") else op
            for f in k.fx_nodes:
                out.setdefault(f, op)
    return out


def _graph_nodes(
    nodes: list[dict],
    roles: Optional[dict[str, tuple[str, str]]] = None,
    wrapped: bool = False,
    lowered: Optional[dict[str, str]] = None,
    own: str = "self",
) -> list[GraphNode]:
    """The report's nodes of a graph; ``wrapped``: its frame is torch's wrapper around the compiled module, whose
    ``L['fn']`` is the root of module paths (``rules.WRAPPED_ROOT``); ``own``: the frame's name for its ``self``
    (``Raw.self_names``). ``lowered`` (:func:`_lowered_ops`): a node that
    calls a lowering pattern's Python function (``"lowering"``, ``torchread.lowering_match``) wraps the op of the
    extern kernel it lowers to, where it lowers to one (its box and its ops are named by it, not by the handler's
    package, ``torch._inductor.fx_passes.mkldnn_fusion.fn``)."""
    out = []
    roles = roles or {}
    lowered = lowered or {}
    # where dynamo numbers a module's later calls in this graph (``<id>@1``), a node without a number is its first call
    numbered = any(n.get("module_calls") for n in nodes)
    for n in nodes:
        role, display = roles.get(n["name"], ("", ""))
        types = n.get("module_types") or [""] * len(n.get("module_stack", []))
        kept = kept_modules(n.get("module_stack", []), types, wrapped, own)
        modules = [(p, t) for _, p, t in kept]
        # which call of each module made it (dynamo's ``<id>@N`` keys); none recorded: all first calls
        calls = n.get("module_calls") or []
        called = [calls[i] if i < len(calls) else 0 for i, _, _ in kept]
        out.append(
            GraphNode(
                name=n["name"],
                op=n["op"],
                target=n["target"],
                wraps=(lowered.get(n["name"]) if n.get("lowering") else None) or n.get("wraps") or "",
                inputs=list(n["inputs"]),
                shape=n.get("shape"),
                shape_hint=n.get("shape_hint"),
                dtype=n.get("dtype"),
                user_stack=parse_stack_trace(n.get("stack_trace")),
                module_stack=[p for p, _ in modules],
                module_types=[t for _, t in modules] if all(t for _, t in modules) else [],
                module_calls=called if numbered else [],
                role=role,
                display_name=display,
                original_op=rules.original_op(n["target"], n.get("original", "")),
                output=rules.output_name(*n["result_of"]) if n.get("result_of") else n.get("index") or "",
                returns=list(n.get("returns") or []),
                recompute=n.get("recompute") or "",
                variable=user_variable(n),
                lowered_by=_frames(n.get("lowered_by") or []),
            )
        )
    return out


def _forward_wrapper(dynamo: Optional[list[dict]], frame: str) -> Optional[int]:
    """How far a decorator around ``forward`` shifts the user's positional arguments, or ``None`` if the
    traced frame is no such wrapper. transformers 5 wraps each model's forward: ``wrapped_func(*args,
    **kwargs)`` gets the module as ``args[0]`` (shift 1: ``args[1]`` is forward's first argument), and
    ``wrapper(self, *args, **kwargs)`` gets it as ``self`` (shift 0). A wrapper is recognised by the module's
    parameters under ``args[0]``, or by a frame other than ``forward`` whose module is ``self`` and whose
    inputs come in ``*args``/``**kwargs``."""
    placeholders = [str(n.get("source", "")) for n in dynamo or [] if n["op"] == "placeholder"]
    weights = [s for s in placeholders if source_role(s)[0] in ("parameter", "buffer")]
    if any(MODULE_ROOT_ARG.match(s) for s in weights):
        return 1
    varargs = any(re.match(r"^L\[['\"](args|kwargs)['\"]\]", s) for s in placeholders if s not in weights)
    if frame and frame != "forward" and varargs and any(s.startswith(("L['self']", 'L["self"]')) for s in weights):
        return 0
    return None


def _user_arg_name(display: str, arg_names: list[str], shift: int) -> str:
    """``args[1]`` of ``wrapped_func(*args)`` around ``forward(self, input_ids, ...)`` (shift 1) -> ``input_ids``."""
    m = re.fullmatch(r"args\[(\d+)\](.*)", display)
    if not m or not arg_names:
        return display
    i = int(m.group(1)) - shift
    return arg_names[i] + m.group(2) if 0 <= i < len(arg_names) else display


def _input_roles(
    dynamo: Optional[list[dict]],
    post: list[dict],
    graph_kind: str,
    arg_names: Optional[list[str]] = None,
    shift: Optional[int] = None,
    forward: Optional[dict[str, GraphNode]] = None,
    positional: bool = True,
    wrapped: bool = False,
    own: str = "self",
    also: tuple = (),
    renamed: Optional[dict[str, str]] = None,
) -> tuple[dict, dict]:
    """What each graph input is: ``{name: (role, display name)}`` for the dynamo graph and the post-grad one.

    Dynamo's placeholders carry their source (``L['self']._modules['fc1']._parameters['weight']``); AOT
    keeps their order, naming them ``primals_1..`` (training) or ``arg0_1..`` (inference), after the tensors it
    lifts from the graph module (dynamo's ``get_attr`` tensors, unnamed here); a backward graph
    takes forward inputs by the same ``primals_N`` names, gradients as ``tangents_N`` and the rest are
    forward activations saved for it, named by the forward's node that made them (``forward``: its post-grad
    nodes by name; ``rules.saved_name``). ``wrapped``: the frame is torch's wrapper around the compiled module
    (``rules.wraps_module``), whose ``L['fn']`` is no part of a parameter's name; ``own``: the frame's name for its
    ``self`` (``def forward(s, x)``: ``s``). ``also``: inputs the post-grad graph no longer has (a frozen graph's
    parameters, which freezing made constants and folding may have consumed: ``RawGraph.constant_origins``), named
    too, by the same positions. ``renamed``: dynamo's inputs named by what the graph does with them rather than by
    their source (a PT2E weight, :func:`_quantized_weights`), by dynamo's node name."""
    renamed = renamed or {}
    dyn_roles: dict[str, tuple[str, str]] = {}
    sources = []
    shapes = []  # of each dynamo placeholder, beside its role
    for n in dynamo or []:
        if n["op"] == "placeholder":
            shapes.append(n.get("shape"))
            rd = source_role(n.get("source") or placeholder_source(n.get("target", "")), wrapped, own)  # a log: none
            if n.get("known_as") and rd[0]:  # a gradient an optimizer reads, by its parameter's name in the model
                rd = (rd[0], str(n["known_as"]))
            if shift is not None and rd[0] == "input":
                rd = (rd[0], _user_arg_name(rd[1], arg_names or [], shift))
            if rd[0] and n["name"] in renamed:
                rd = (rd[0], renamed[n["name"]])
            sources.append(rd)
            if rd[0]:
                dyn_roles[n["name"]] = rd
    # AOT Autograd lifts the graph module's own tensors (dynamo's get_attr nodes of a tensor: an optimizer's
    # parameters, a constant) ahead of the placeholders (aot_module_simplified: the module's parameters, then its
    # buffers), so primals_N / argN_1 count those first. Their order among themselves is not in the graph: a live
    # capture reads it, with each one's kind and dynamo's source (torchread.mark_lifted), and names them; from a log
    # they are left unnamed. Inputs are named by position only where the positions are known to line up: every
    # number below lifted + placeholders in the graph that takes every input (this one, or for a backward the
    # forward it pairs with). Not so in a subgraph (a torch.cond branch takes its own inputs) nor under compiled
    # autograd (AOT flattens its list placeholder `inputs`): those are named otherwise (_operand_roles, _ca_inputs).
    lifted = len({n["target"] for n in dynamo or [] if n["op"] == "get_attr" and n.get("shape") is not None})
    held = {n["lifted"][0]: n for n in dynamo or [] if n["op"] == "get_attr" and n.get("lifted")}
    held_roles: list[tuple[str, str]] = []
    if held and all(n["lifted"][1] == len(held) for n in held.values()) and set(held) == set(range(len(held))):
        lifted = len(held)
        for i in range(lifted):
            rd = _held_role(held[i], wrapped, own)
            held_roles.append((rd[0], renamed[held[i]["name"]]) if rd[0] and held[i]["name"] in renamed else rd)
        for n in held.values():
            if held_roles[n["lifted"][0]][0]:
                dyn_roles[n["name"]] = held_roles[n["lifted"][0]]
    if graph_kind == "backward":
        takes_all = [name for name, g in (forward or {}).items() if g.op == "placeholder"]
    else:
        takes_all = [n["name"] for n in post if n["op"] == "placeholder"]
    numbers = [_input_number(name) for name in takes_all]
    numbers = [i for i in numbers if i is not None]
    if not positional or not numbers or max(numbers) >= lifted + len(sources):
        sources, held_roles = [], []
    sources = _sources_if_shapes_agree(sources, shapes, post, lifted)
    post_roles: dict[str, tuple[str, str]] = {}
    gone = [{"name": name, "op": "placeholder"} for name in also if name not in {n["name"] for n in post}]
    for n in post + gone:
        name = n["name"]
        # a frozen graph's parameters are constants of it (``get_attr`` of ``_frozen_param1``) that keep their input's
        # name (``arg1_1``): named as that input
        if n["op"] != "placeholder" and not (n["op"] == "get_attr" and _input_number(name) is not None):
            continue
        i = _input_number(name)
        if i is not None and i < len(held_roles):
            if held_roles[i][0]:
                post_roles[name] = held_roles[i]
        elif i is not None:
            i -= lifted
            if 0 <= i < len(sources) and sources[i][0]:
                post_roles[name] = sources[i]
        elif name.startswith("tangents_"):
            post_roles[name] = ("tangent", f"gradient of output {name.split('_', 1)[1]}")
        elif graph_kind == "backward":
            post_roles[name] = ("saved", rules.saved_name(name, forward or {}))
    return dyn_roles, post_roles


#: PT2E's dequantize ops (``quantized_decomposed.dequantize_per_channel``, ``dequantize_per_tensor``), which
#: ``convert_pt2e`` puts between a quantized weight and the op that reads it
_DEQUANTIZE = "quantized_decomposed.dequantize_per_"
#: The arguments of a dequantize op, by their schema's names, that are the quantized tensor's quantization
_QPARAMS = {"scales": "scale", "scale": "scale", "zero_points": "zero point", "zero_point": "zero point"}


def _quantized_weights(dyn: Optional[list[dict]], wrapped: bool = False, own: str = "self") -> dict[str, tuple]:
    """``{dynamo node: (display name, dtype, of)}`` of each input of dynamo's graph that is a weight PT2E quantized, or
    its scale or zero point. ``convert_pt2e`` replaces a module's weight by a buffer of the quantized values
    (``_frozen_param1``, int8) and a ``dequantize_per_channel(_frozen_param1, _scale_1, _zero_point_1, ...)`` that
    feeds the op that read the weight: the buffer is named as the argument it ends up as (its schema's name,
    ``torchread.argument_names``) of the module whose op takes it: ``fc.weight`` (dtype ``int8``), the others by
    what they are of it: ``scale of fc.weight`` (``of``: ``fc.weight``). Left out where the dequantize has not one
    user, the user is in no module, or no argument names were recorded (a TORCH_TRACE import)."""
    nodes = dyn or []
    by_name = {d["name"]: d for d in nodes}
    users: dict[str, list[dict]] = defaultdict(list)
    for d in nodes:
        for i in d.get("inputs", ()):
            users[i].append(d)

    def held(name: str) -> bool:
        return by_name.get(name, {}).get("op") in ("get_attr", "placeholder")

    out: dict[str, tuple] = {}
    for dq in nodes:
        if dq["op"] != "call_function" or not str(dq["target"]).startswith(_DEQUANTIZE):
            continue
        args = dq.get("arguments") or {}
        tensor = next((i for i, a in args.items() if a == "input"), "")
        takers = users.get(dq["name"], [])
        if not held(tensor) or len(takers) != 1 or not (takers[0].get("arguments") or {}).get(dq["name"]):
            continue
        user = takers[0]
        stack = user.get("module_stack") or []
        modules = model_modules(stack, user.get("module_types") or [""] * len(stack), wrapped, own)
        if not modules or not modules[-1][0]:
            continue
        name = f"{modules[-1][0]}.{user['arguments'][dq['name']]}"
        out[tensor] = (name, str(by_name[tensor].get("dtype") or ""), "")
        for i, a in args.items():
            if a in _QPARAMS and held(i):
                out[i] = (f"{_QPARAMS[a]} of {name}", "", name)
    return out


_LOG_MODULE_ROOT = re.compile(r"^L_(\w+?)_(?:modules|parameters|buffers)_")


def _log_self_name(dyn: Optional[list[dict]], frame: str) -> str:
    """The name a method's frame gives its ``self`` where only a TORCH_TRACE log tells (its placeholders carry no
    source, only names: ``def forward(s, x)`` makes ``L_s_modules_attn_parameters_in_proj_weight_``): for a method
    (``Block.forward``, or ``forward`` where the log names no class), the one local whose modules, parameters or
    buffers the graph reads; else ``"self"`` (a function's module argument keeps its name). A live capture reads the
    frame itself (``Raw.self_names``).

    >>> dyn = [{"op": "placeholder", "target": "L_s_modules_attn_parameters_in_proj_weight_"},
    ...        {"op": "placeholder", "target": "L_x_"}]
    >>> _log_self_name(dyn, "Block.forward"), _log_self_name(dyn, "forward"), _log_self_name(dyn, "step")
    ('s', 's', 'self')
    """
    method = "." in str(frame or "") or str(frame or "").split(" ")[0] == "forward"  # a log may not name its class
    if not method or not dyn or any(n.get("source") for n in dyn):
        return "self"
    roots = {
        m.group(1)
        for n in dyn
        if n.get("op") == "placeholder"
        for m in [_LOG_MODULE_ROOT.match(str(n.get("target", "")))]
        if m and m.group(1) not in ("args_0", "self_dict")
    }
    return next(iter(roots)) if len(roots) == 1 else "self"


def _held_role(node: dict, wrapped: bool = False, own: str = "self") -> tuple[str, str]:
    """``(role, display name)`` of a tensor dynamo held as the graph module's own (a ``get_attr`` node that AOT
    lifts, marked by ``torchread.mark_lifted``): named by dynamo's source of it; a ``parameter`` where it is an
    ``nn.Parameter`` (an optimizer's parameters), a ``buffer`` where the source is a module's buffer, else an
    ``attribute`` (an optimizer's state, ``self.state[...]['exp_avg']``: no buffer of the user's model). A tensor
    an earlier graph of the capture took as a parameter or buffer of the user's model is named as there
    (``known_as``: ``conv1.weight``, not the optimizer's ``self.param_groups[0]['params'][0]``)."""
    role, shown = source_role(node.get("source", ""), wrapped, own)
    if node.get("state_of"):  # an optimizer's state: its key and parameter (torchread._mark_optimizer_state)
        return "attribute", str(node["state_of"])
    if node.get("known_as"):
        return ("parameter" if node["lifted"][2] == "parameter" else "buffer"), str(node["known_as"])
    if not shown:
        return "", ""
    if node["lifted"][2] == "parameter":
        return "parameter", shown
    return ("buffer" if role == "buffer" else "attribute"), shown


def _input_number(name: str) -> Optional[int]:
    """The position AOT gave a graph input, from 0: ``primals_3`` -> 2, ``arg2_1`` -> 2; None for another name."""
    m = re.fullmatch(r"primals_(\d+)|arg(\d+)_1", name)
    return None if m is None else int(m.group(1)) - 1 if m.group(1) else int(m.group(2))


def _members_of(name: str) -> list[str]:
    """Pre-fusion names inside a (possibly intermediate) fused node name ``op1_op2``."""
    return [p for p in name.split("_") if p]


class _GraphBuilder:
    def __init__(self, raw: Raw, rec: RawGraph, trace: _Trace, diagnostics: list[Diagnostic]):
        self.raw, self.rec, self.trace, self.diagnostics = raw, rec, trace, diagnostics
        self.order = {n["name"]: i for i, n in enumerate(rec.post_grad_nodes)}
        self.pre_fusion_by_name = {sn.name: sn for sn in rec.pre_fusion}
        self.fx_inputs = {n["name"]: n.get("inputs", ()) for n in rec.post_grad_nodes}
        self.fx_op = {n["name"]: n.get("op", "") for n in rec.post_grad_nodes}
        # the ops of the top level: a line of the user's code and no module, in a graph where modules were recorded
        # (where most ops lack one, as in an AOT export's, all are inferred again later: module_paths.infer_compile)
        calls = [n for n in rec.post_grad_nodes if n.get("op") == "call_function"]
        self.top_level = (
            {n["name"] for n in calls if n.get("stack_trace") and not n.get("module_stack")}
            if any(n.get("module_stack") for n in calls)
            else set()
        )
        # the ops Inductor calls whole (a custom op, convolution_backward, SDPA: a fallback kernel, not an
        # extern_kernels.* call, whose op Inductor may split into a library call and pointwise kernels: addmm's bias):
        # only the nodes that call the kernel's own op (an import's provenance also names the producers of its inputs)
        by_name = {n["name"]: n for n in rec.post_grad_nodes}
        self.whole_ops = {
            f
            for rk in rec.kernels
            if rk.is_extern and not rk.name.startswith("extern_kernels.")
            for f in rk.fx_nodes
            if f in by_name and calls_op(by_name[f], callee_op(rk.name))
        }
        # the nodes whose lines are their readers' (a CSE'd constant, the 0.0 of every threshold_backward)
        self.lent = lent_lines(
            (n["name"], n.get("op", ""), n.get("inputs", ()), n.get("shape"), bool(n.get("stack_trace")))
            for n in rec.post_grad_nodes
        )
        self._calls: Optional[dict[str, RawSchedNode]] = None  # buffer -> the extern node writing it (upstream_of_call)
        self._computed: Optional[tuple[dict, dict]] = None  # computed_ops of the pre- and post-fusion nodes
        self._traces: Optional[dict[str, set[str]]] = None  # a stack trace -> the post-grad ops that have it
        self._trace_ends: dict[Optional[tuple], set[str]] = {}  # a stack trace's innermost frame -> the same
        self.member_to_fused: dict[str, str] = {}
        for fn in rec.post_fusion:
            for m in fn.members:
                self.member_to_fused[m] = fn.name
            self.member_to_fused[fn.name] = fn.name

    def fused_of(self, name: str) -> Optional[str]:
        if name in self.member_to_fused:
            return self.member_to_fused[name]
        for m in _members_of(name):
            if m in self.member_to_fused:
                return self.member_to_fused[m]
        return None

    def sort_fx(self, names: list[str]) -> list[str]:
        """``names`` once each, in graph order. A subgraph's (a ``torch.cond`` branch) keeps its own graph's nodes only:
        Inductor gives its nodes the origins of the parent's call too (``cond``, ``true_graph_0``), which are not
        ops of the branch."""
        if self.rec.subgraph:
            names = [n for n in names if n in self.order]
        return sorted(dict.fromkeys(names), key=lambda n: self.order.get(n, 1 << 30))

    def own_ops(self, names: list[str], extern: bool = False) -> list[str]:
        """The post-grad ops of a kernel or node that is not a fallback call, less the ops a fallback call runs whole:
        Inductor gives the buffer it makes ready for one (a copy into the layout the op needs, fused with the op
        before it) that op's origin, so the ``g * 3`` kernel before ``mylib.scaled_clip`` listed ``scaled_clip``
        (and counted its FLOPs as unknown), a batch norm's backward ``convolution_backward`` (and its module). Where
        that leaves nothing, the node only makes that input: its ops stay as recorded. An extern or fallback node's
        (``extern``) are its own."""
        if extern or not self.whole_ops:
            return names
        return [n for n in names if n not in self.whole_ops] or names

    def upstream_of_template(self, sn: RawSchedNode, fx: list[str], snodes: list[RawSchedNode]) -> set[str]:
        """The ops a template node lists that the kernel making its input computed: the origins Inductor gives a C++
        GEMM template reading ``relu(x @ w1)`` hold that ``relu`` and the first matmul (torch names the kernel
        ``cpp_fused_add_addmm_relu_1`` for them): an op that a node writing one of this node's inputs also lists, and
        that feeds an op this node keeps, is that node's."""
        writers = {b: other for other in snodes if other is not sn for b in (*other.writes, *other.outputs)}
        upstream = {f for b in sn.reads if b in writers for f in writers[b].fx_nodes} & set(fx)
        feeds: set[str] = set()
        todo = [f for f in fx if f not in upstream] if upstream else []
        while todo:
            for i in self.fx_inputs.get(todo.pop(), ()):
                if i in upstream and i not in feeds:
                    feeds.add(i)
                    todo.append(i)
        return feeds

    def upstream_of_call(self, sn: RawSchedNode, snodes: list[RawSchedNode]) -> set[str]:
        """The ops a node's origins hold that ran before a library or fallback call whose result it reads: Inductor's
        origins of a frozen linear's bias add (``cpp_fused_addmm_relu_1``, a kernel of its own after MKL's call)
        hold the relu and the linear before the call. What flows into a call was made, in buffers, before it: this
        node reads the call's result, it computes none of that (where it needs one of them too, that one was made
        a buffer for the call before this node was lowered, and this node reads it)."""
        if self._calls is None:
            self._calls = {
                b: other for other in snodes if other.kind == "extern" for b in (*other.writes, *other.outputs)
            }
        mine = set(sn.fx_nodes)
        out: set[str] = set()
        for b in sn.reads:
            call = self._calls.get(b)
            if call is None or call is sn:
                continue
            todo = [i for f in call.fx_nodes for i in self.fx_inputs.get(f, ())]
            while todo:
                f = todo.pop()
                if f in mine and f not in out:
                    out.add(f)
                    todo += self.fx_inputs.get(f, ())
        return out

    def computed_ops(self, snodes: list[RawSchedNode]) -> dict[str, set[str]]:
        """Of each non-extern node of ``snodes`` (one level: the pre-fusion nodes, or the fused ones), the ops of its
        origins it computes, less those whose value it reads from a buffer another node of ``snodes`` writes.
        Inductor's origins over-approximate: an op inlined into a view or loader that a later op reads keeps its
        origins after it was realized into a buffer of its own, so the gather after a LayerNorm whose output is
        stored lists the whole LayerNorm (and Inductor names the kernel after them:
        ``cpp_fused_add_index_select_native_layer_norm_..``) though its code only loads that output.

        The rule: the node computes the ops it needs, walking back from its results (its ops that none of its other
        ops reads) through their inputs, and stopping at a value it loads: a graph input it reads, or the result of
        the node writing a buffer it reads (that node's computed ops that none of them reads, where there is exactly
        one). An op its results need on another path (recomputed, not loaded) stays; where the walk keeps nothing or
        a buffer's value is not known, the node keeps all its ops (no cut without a loaded value)."""
        writer = {b: sn for sn in snodes for b in (*sn.writes, *sn.outputs)}
        placeholders = {n["name"] for n in self.rec.post_grad_nodes if n.get("op") == "placeholder"}
        done: dict[str, set[str]] = {}

        unpack = {n["name"] for n in self.rec.post_grad_nodes if "getitem" in str(n.get("target", ""))}

        def inputs(f: str) -> list[str]:  # through tuple unpacking, which origins leave out (var_mean's getitem)
            return [j for i in self.fx_inputs.get(f, ()) for j in (self.fx_inputs.get(i, ()) if i in unpack else [i])]

        def results(ops: set[str]) -> set[str]:
            fed = {i for f in ops for i in inputs(f)}
            return {f for f in ops if f not in fed}

        def value_of(buf: str, seen: frozenset) -> Optional[str]:
            if buf in placeholders:
                return buf
            w = writer.get(buf)
            if w is None or w.name in seen:
                return None
            out = results(computed(w, seen)) if w.kind != "extern" else set(w.fx_nodes)
            return next(iter(out)) if len(out) == 1 else None

        def computed(sn: RawSchedNode, seen: frozenset = frozenset()) -> set[str]:
            if sn.name in done:
                return done[sn.name]
            ops = set(sn.fx_nodes)
            if sn.kind == "extern" or not ops:
                done[sn.name] = ops
                return ops
            seen = seen | {sn.name}
            loaded = {v for b in sn.reads if writer.get(b) is not sn for v in [value_of(b, seen)] if v}
            keep = results(ops)
            todo = list(keep)
            while todo:
                for i in inputs(todo.pop()):
                    if i in ops and i not in keep and i not in loaded:
                        keep.add(i)
                        todo.append(i)
            done[sn.name] = keep or ops
            return done[sn.name]

        return {sn.name: computed(sn) for sn in snodes if sn.kind != "extern"}

    def computed_of(self, pre_names: list[str], fused: Optional[str] = None) -> Optional[set[str]]:
        """The ops the pre-fusion nodes ``pre_names`` compute (``computed_ops`` of the pre-fusion nodes, whose buffers
        are each one's own), or those of the fused node ``fused`` where a pre-fusion node is unknown (a TORCH_TRACE
        import without them); None where neither is known (no cut)."""
        if self._computed is None:
            self._computed = (
                self.computed_ops(self.rec.pre_fusion),
                self.computed_ops(self.rec.post_fusion),
            )
        pre, post = self._computed
        if pre_names and all(m in pre for m in pre_names):
            return set().union(*(pre[m] for m in pre_names))
        return post.get(fused) if fused is not None else None

    def own_traces(self, rk: RawKernel, own: list[str]) -> list[str]:
        """The stack traces Inductor gives a kernel (those of all its origins), less those that only ops it does not
        compute have (``own``: its ops, less those of the kernels before it that its origins also hold; an extern
        call's, its one op): a C++ GEMM template reading ``relu(fc1(x))``, or a frozen linear's MKL call after it,
        claimed the relu's line beside its own. A trace no op of the graph has is kept; all of them where its ops have
        none (nothing better is known). A trace is an op's where it is the op's, or where it ends at the op's innermost
        frame: a TORCH_TRACE log prints each op's innermost frame only (``# File: x.py:183 in f``), while torch's
        provenance gives a kernel whole stacks (an import's SDPA call kept the lines of the q/k/v splits before it).
        A node that lends its line (``lines.lent_lines``: a CSE'd ``full``, a constant) counts as its readers
        (``lines.line_ops``): those in the kernel, else (a constant the kernel writes for an op elsewhere) those
        elsewhere, whose lines the kernel then gets too."""
        if self._traces is None:
            self._traces, self._trace_ends = {}, {}
            for n in self.rec.post_grad_nodes:
                if n.get("stack_trace"):
                    self._traces.setdefault(n["stack_trace"], set()).add(n["name"])
                    self._trace_ends.setdefault(_innermost(n["stack_trace"]), set()).add(n["name"])
        ops_of_lines = line_ops(own, self.lent)
        mine = set(ops_of_lines)
        if not any(mine & names for names in self._traces.values()):
            return list(rk.stack_traces)
        kept = []
        for t in rk.stack_traces:
            ops = self._traces.get(t) or self._trace_ends.get(_innermost(t))
            if not ops or ops & mine:
                kept.append(t)
        outside = set(ops_of_lines) - set(own)  # the readers elsewhere of a constant the kernel writes
        for n in self.rec.post_grad_nodes:
            t = n.get("stack_trace")
            if n["name"] in outside and t and t not in kept:
                kept.append(t)
        return kept

    def kept_ops(self, raw: list[str], fx: list[str], drop: set[str]) -> list[str]:
        """``fx`` less ``drop``. Where that leaves no op (graph inputs and constants aside), the results of ``raw``
        (the origins as recorded: the ops no other of them reads): a frozen linear's bias add, its own kernel after
        MKL's call, computes part of that ``_mkl_linear``, whose origins also name the linear and relu before it."""
        kept = [f for f in fx if f not in drop]
        if not drop or any(self.fx_op.get(f) == "call_function" for f in kept):
            return kept or fx
        fed = {i for g in raw for i in self.fx_inputs.get(g, ())}
        results = [f for f in raw if f not in fed and self.fx_op.get(f) == "call_function"]
        return results or kept or fx

    def each_member_ops(self, sn: RawSchedNode, fx: list[str]) -> list[list[str]]:
        """The post-grad ops of each pre-fusion member of ``sn``, in ``sn.members``' order (``FusedNode.member_ops``),
        of those the node keeps (``fx``: not an op upstream that Inductor's origins also name); ``[]`` where a member
        was not seen before fusion."""
        pre = self.pre_fusion_by_name
        if not sn.members or any(m not in pre for m in sn.members):
            return []
        keep = set(fx)
        return [self.sort_fx([f for f in pre[m].fx_nodes if f in keep]) for m in sn.members]

    def member_ops(self, sn: RawSchedNode) -> list[list[str]]:
        """Each pre-fusion member's post-grad ops; the node's own where its members are unknown."""
        pre = self.pre_fusion_by_name
        extern = sn.kind == "extern"
        known = [
            self.sort_fx(self.own_ops(pre[m].fx_nodes, extern)) for m in sn.members if m in pre and pre[m].fx_nodes
        ]
        return known or [self.sort_fx(self.own_ops(sn.fx_nodes, extern))]

    def kernels(self) -> tuple[list[Kernel], dict[str, str]]:
        """Kernels (merged by name, sources from the output code) and scheduler node -> kernel."""
        rec = self.rec
        code_kernels = parse_output_code_kernels(rec.output_code)
        launches = _Launches(rec, self.diagnostics, self.raw.device or "cpu")
        # the output code of every graph of its compile id: a forward's check of a data-dependent size's range
        # (u0 <= 64) bounds its backward's too (analysis.reproducer.size_bounds)
        launches.bounds_code = "\n".join(g.output_code for g in self.raw.graphs if g.compile_id == rec.compile_id)
        provenance = self._torch_provenance()
        merged: dict[str, dict] = {}
        node_kernel: dict[str, str] = {}
        not_own = {  # of each node, the ops of the kernels before it that its origins hold
            sn.name: (
                self.upstream_of_template(sn, self.own_ops(sn.fx_nodes), rec.post_fusion)
                if sn.kind == "template"
                else set()
            )
            | (self.upstream_of_call(sn, rec.post_fusion) if sn.kind != "extern" else set())
            for sn in rec.post_fusion
        }
        for i, rk in enumerate(rec.kernels):
            name = rk.report_name
            entry = merged.setdefault(
                name, {"raw": rk, "sched": [], "fx": [], "traces": [], "torch": None, "sites": []}
            )
            site = list(dict.fromkeys(f for f in map(self.fused_of, rk.scheduler_nodes) if f))
            if site and site not in entry["sites"]:
                entry["sites"].append(site)
            entry["sched"] += [s for s in rk.scheduler_nodes if s not in entry["sched"]]
            own = self.own_ops(rk.fx_nodes, rk.is_extern)
            drop = {f for node in site for f in not_own.get(node, ())}
            own = (
                self.kept_ops(rk.fx_nodes, own, drop) if not rk.is_extern else [f for f in own if f not in drop] or own
            )
            computed = (
                None if rk.is_extern else self.computed_of(rk.scheduler_nodes, site[0] if len(site) == 1 else None)
            )
            if computed is not None:  # not the ops whose values it loads from another node's buffer
                own = [f for f in own if f in computed] or own
            entry["fx"] += own
            entry["traces"] += [t for t in self.own_traces(rk, own) if t not in entry["traces"]]
            if i < len(provenance) and provenance[i][0] == rk.name:
                entry["torch"] = (entry["torch"] or []) + [
                    n for n in provenance[i][1] if n not in (entry["torch"] or [])
                ]
            for s in rk.scheduler_nodes:
                node_kernel.setdefault(s, name)
        kernels: list[Kernel] = []
        code_lines = rec.output_code.splitlines()
        call_lines: dict[str, list[str]] = {}  # extern callee -> the lines that call it
        words: dict[str, frozenset] = {}  # a call line -> its words
        for name, e in merged.items():
            rk: RawKernel = e["raw"]
            metadata: dict = {}
            if rk.is_extern:
                language = "extern"
                lines = find_call_lines(rec.output_code, rk.name, rk.buffer, code_lines, call_lines, words)
                source = "\n".join(lines) if lines else rk.name
                metadata["callee"] = rk.name
                if rk.buffer:
                    metadata["buffer"] = rk.buffer
            elif rk.name in code_kernels:
                language, source = code_kernels[rk.name]
            else:
                language, source = "other", ""
                self.diagnostics.append(
                    Diagnostic(
                        "source_missing",
                        f"{rec.compile_id} {rec.graph_kind}: kernel "
                        f"{rk.name} was generated but its source is not in the output code",
                    )
                )
            if language == "triton":
                metadata.update(triton_source_metadata(source))
            ir = None
            if rk.name in rec.runtime:
                runtime = dict(rec.runtime[rk.name])
                ir_plain = runtime.pop("ir", None)
                ir = _kernel_ir(ir_plain) if isinstance(ir_plain, dict) else None
                runtime.pop("grid_prefix", None)
                if runtime:
                    metadata["launch"] = runtime
            info = self._kernel_info().get(rk.name)
            if info:
                metadata["compile_info"] = info
            if e["torch"] is not None:
                metadata["torch_provenance_fx_nodes"] = self.sort_fx(e["torch"])
            fused = []
            for s in e["sched"]:
                f = self.fused_of(s)
                if f and f not in fused:
                    fused.append(f)
            stacks: list[list[Frame]] = []
            seen = set()
            fx = set(e["fx"])
            ops = [n for n in self.rec.post_grad_nodes if n["name"] in fx]
            traces = e["traces"] or [n["stack_trace"] for n in ops if n.get("stack_trace")]
            # after the call's own line, those of the subgraphs it inlines (flex_attention's score_mod and
            # mask_mod, whose ops the template kernel computes: Inductor's stacks name only the call)
            traces = traces + [t for n in ops for t in n.get("subgraph_stack_traces") or () if t not in traces]
            for t in traces:
                frames = parse_stack_trace(t)
                key = tuple((f.file, f.line) for f in frames)
                if frames and key not in seen:
                    seen.add(key)
                    stacks.append(frames)
            kernels.append(
                Kernel(
                    name=name,
                    language=language,
                    source=source,
                    fused_nodes=fused,
                    fx_nodes=self.sort_fx(e["fx"]),
                    user_stack=stacks,
                    compiler_stack=_compiler_frames(rk.compiler_stack, "fx_graph_cache" in self.raw.caches_off),
                    metadata=metadata,
                    call_sites=e["sites"],
                    launch=launches.of(rk.name, language, source, rk.buffer if rk.is_extern else None),
                    ir=ir,
                )
            )
        kernels = self._attach_autotune(kernels)
        known = {k.name for k in kernels} | {e["raw"].name for e in merged.values()}
        for kname, (language, source) in code_kernels.items():
            # a subgraph's kernel is in its compile; a subgraph's code is its parent's: their kernels are the parent's
            if kname not in known and kname not in rec.subgraph_kernels and not rec.subgraph:
                kernels.append(
                    Kernel(name=kname, language=language, source=source, launch=launches.of(kname, language, source))
                )
                self.diagnostics.append(
                    Diagnostic(
                        "source_missing",
                        f"{rec.compile_id} {rec.graph_kind}: kernel "
                        f"{kname} is in the output code but Inductor did not say which "
                        "nodes it implements",
                    )
                )
        order, aliases = launch_order(kernels, rec.output_code or ""), reuses(rec.output_code or "")
        return [launches.script(k, order, aliases) for k in kernels], node_kernel

    def _kernel_info(self) -> dict:
        """``triton_kernel_info`` artifacts of this compile: per-kernel compile time and cache facts."""
        if not hasattr(self, "_info"):
            self._info = {}
            for payload in self.trace.payloads("triton_kernel_info", _key(self.rec)):
                data = loads_payload(payload)
                if isinstance(data, dict):
                    self._info.update({k: v for k, v in data.items() if isinstance(v, dict)})
        return self._info

    def _attach_autotune(self, kernels: list[Kernel]) -> list[Kernel]:
        """``kernels`` with the autotuning results on the kernel that reads the tuned op's inputs: the chosen
        template or extern kernel. ``metadata.autotune = {op, fastest, timed, choices: [{name, description,
        time_ms}]}``; which choice the kernel came from (``chosen``) is worked out by ``_finish``. New kernels
        where results go (``dataclasses.replace``), never a change to a built one. A kernel the output code calls
        at several places (``call_sites``: a template emitted once for a matmul of each of a model's layers) takes
        one autotuning per place, matched by the reads of that place's fused nodes; the first it takes is shown."""
        reads = {fn.name: set(fn.reads) for fn in self.rec.post_fusion}
        read_anywhere = set().union(*reads.values()) if reads else set()
        kernels = list(kernels)
        used: set[tuple[str, int]] = set()  # (kernel, call site) that took an autotuning
        for tune in self.rec.autotune:
            # inputs no fused node reads as a buffer are constants (frozen parameters, packed weights under
            # freezing): the kernel reads them too, but not as a scheduler buffer
            inputs = set(tune.get("inputs") or []) & read_anywhere
            if self._link_autotune(kernels, tune, inputs, reads, used):
                continue
            self.diagnostics.append(
                Diagnostic(
                    "autotune_unlinked",
                    f"{self.rec.compile_id} {self.rec.graph_kind}: "
                    f"autotuning of {tune.get('op')} could not be tied to a kernel",
                )
            )
        return kernels

    @staticmethod
    def _link_autotune(kernels: list[Kernel], tune: dict, inputs: set, reads: dict, used: set) -> bool:
        for i, k in enumerate(kernels):
            sites = k.call_sites or [k.fused_nodes]
            for j, site in enumerate(sites):
                if (k.name, j) in used:
                    continue
                site_reads = set().union(*(reads.get(f, set()) for f in site)) if site else set()
                if inputs and inputs <= site_reads:
                    used.add((k.name, j))
                    if "autotune" not in k.metadata:
                        choices = tune.get("choices", [])
                        # the fastest choice alone is not always what Inductor emits: with epilogue fusion a
                        # template can win overall, so both are stated
                        autotune = {
                            "op": tune.get("op"),
                            "fastest": choices[0]["name"] if choices else None,
                            "choices": choices,
                        }
                        if tune.get("timed"):  # benchmarked here, or read from torch's autotune cache
                            autotune["timed"] = tune["timed"]
                        kernels[i] = dataclasses.replace(k, metadata={**k.metadata, "autotune": autotune})
                    return True
        return False

    def _torch_provenance(self) -> list[tuple[str, list[str]]]:
        """Torch's own kernel -> post-grad mapping (when provenance tracking is on), in debug-handle order."""
        names = {rk.name for rk in self.rec.kernels}
        for payload in self.trace.payloads("inductor_provenance_tracking_node_mappings", _key(self.rec)):
            data = loads_payload(payload)
            if not isinstance(data, dict):
                continue
            pairs = []
            for key, value in data.items():
                if key.endswith("CodeToPost") and isinstance(value, dict):
                    for k, v in value.items():
                        kname, _, handle = k.rpartition(":")
                        pairs.append((int(handle) if handle.isdigit() else 0, kname or k, list(v)))
            if pairs and {p[1] for p in pairs} <= names:
                pairs.sort()
                return [(k, v) for _, k, v in pairs]
        return []

    def fused_nodes(
        self, snodes: list[RawSchedNode], node_kernel: dict[str, str], fx_modules: dict[str, list[str]]
    ) -> list[FusedNode]:
        out = []
        kernel_of = {sn.name: next((node_kernel[m] for m in sn.members if m in node_kernel), None) for sn in snodes}
        # the ops a generated kernel computes: a node with no kernel (a torch.cond call) that also has one of them as
        # its origin (the predicate ``gt`` made ready for the call) does not list it again
        computed = {f for sn in snodes if kernel_of[sn.name] and sn.kind != "extern" for f in sn.fx_nodes}
        # a node that lends its line lends its module too: a constant a kernel writes is its readers' (fc2.bias's)
        fx_modules = {
            **fx_modules,
            **{n: list(combine(fx_modules.get(r) or () for r in rs)) for n, rs in self.lent.items()},
        }
        for sn in snodes:
            kernel = kernel_of[sn.name]
            est = sn.estimated_runtime_ms
            fx = self.own_ops(sn.fx_nodes, sn.kind == "extern")
            if kernel is None:
                fx = [f for f in fx if f not in computed] or fx
            if sn.kind == "template":
                fx = [f for f in fx if f not in self.upstream_of_template(sn, fx, snodes)] or fx
            if sn.kind != "extern":
                fx = self.kept_ops(sn.fx_nodes, fx, self.upstream_of_call(sn, snodes))
            read: list[str] = []
            done = self.computed_of(sn.members, sn.name) if sn.kind != "extern" else None
            if done is not None and any(f in done for f in fx):  # not the ops whose values it loads from a buffer
                read = [f for f in fx if f not in done]
                fx = [f for f in fx if f in done]
            out.append(
                FusedNode(
                    name=sn.name,
                    kind=sn.kind,
                    fx_nodes=self.sort_fx(fx),
                    kernel=kernel,
                    reads=sn.reads,
                    writes=sorted(set(sn.writes) | set(sn.outputs)),
                    members=sn.members,
                    estimated_runtime_us=round(est * 1000, 3) if est is not None else None,
                    module_stack=node_stack(self.member_ops(sn), fx_modules, self.fx_inputs, self.top_level),
                    mutates=list(dict.fromkeys(sn.mutates.values())),
                    member_ops=self.each_member_ops(sn, fx),
                    read_ops=self.sort_fx(read),
                )
            )
        return out

    def decisions(self) -> list[FusionDecision]:
        seen, out = set(), []
        for n1, n2, reason in self.rec.fusion_refusals:
            if (n1, n2, reason) in seen:
                continue
            if self.fused_of(n1) is not None and self.fused_of(n1) == self.fused_of(n2):
                continue  # refused in one round, fused in a later one: not a refusal the user sees
            seen.add((n1, n2, reason))
            out.append(
                FusionDecision(node1=n1, node2=n2, reason=reason, fused1=self.fused_of(n1), fused2=self.fused_of(n2))
            )
        return out


def _with_costs(compile: Compile, rec: RawGraph, diagnostics: list) -> Compile:
    """Each kernel's bytes and FLOPs (``Kernel.cost``), from Inductor's buffer accesses and the shapes."""
    import dataclasses

    from ..analysis.cost import with_costs

    inductor_bytes = {
        sn.name: (sn.read_bytes, sn.write_bytes, sn.constant_read_bytes, sn.gather_read_bytes, sn.loop_flops)
        for sn in rec.post_fusion
    }
    try:
        return dataclasses.replace(compile, kernels=with_costs(compile, inductor_bytes))
    except Exception as e:
        diagnostics.append(
            Diagnostic(
                "build_failed", f"capture: kernel costs of {compile.id} could not be computed ({type(e).__name__}: {e})"
            )
        )
        return compile


def _innermost(trace: str) -> Optional[tuple]:
    """``(file, line)`` of a stack trace's innermost frame, None for a trace without one."""
    frames = parse_stack_trace(trace)
    return (frames[-1].file, frames[-1].line) if frames else None


def _window_for(rec: RawGraph, windows: list[RawWindow], starts: Optional[list[float]] = None) -> Optional[RawWindow]:
    """The latest-starting window that contains the graph's start. With ``starts`` (the windows sorted by
    start, and their starts) it looks back from the graph's time instead of at every window."""
    if starts is None:
        windows = sorted(windows, key=lambda w: w.start_us)
        starts = [w.start_us for w in windows]
    for i in range(bisect.bisect_right(starts, rec.start_us) - 1, -1, -1):
        w = windows[i]
        if w.end_us is None or rec.start_us <= w.end_us:
            return w
    return None


def _trigger(rec: RawGraph, window: Optional[RawWindow], trace: _Trace, t0: float, frame: str) -> Trigger:
    user_stack = _frames(window.user_stack) if window else []
    time_us = round(window.start_us - t0, 1) if window else None
    if window is not None and window.trigger == "LAZY_BACKWARD":
        # the stack of the .backward() call, which the capture takes; never dynamo's stack of the forward's frame
        # (a TORCH_TRACE log holds only that one: the forward's line is not what compiled the backward)
        # torch.autograd.grad runs the backward as .backward() does (a gradient penalty, torch.func's transforms)
        called = "torch.autograd.grad()" if user_stack and "autograd.grad(" in (user_stack[-1].code or "") else ""
        reason = (
            f"the backward graph is compiled lazily, at the first {called or '.backward()'} through the compiled "
            "forward"
        )
        if not user_stack:
            reason += " (which line called it was not recorded)"
        return Trigger(kind="lazy_backward", user_stack=user_stack, time_us=time_us, reason=_from_cache(reason, rec))
    if not user_stack:  # no window, or none of the user's frames in it: the user's of dynamo's (the same rule)
        logged = trace.dynamo_start_stack(_key(rec))
        user_stack = _frames(logged_user_frames([(f.file, f.line, f.function, f.code) for f in logged]))
    frame = (frame or "").split(" (")[0]  # "forward (via torch's inner wrapper)" -> "forward"
    base = _base_cid(rec.compile_id)
    reasons = [readable_reasons(p) for p in trace.payloads("recompile_reasons", _key(rec)) if p]
    parts = base.split("/")
    if reasons or (len(parts) == 2 and parts[1].isdigit() and int(parts[1]) > 0):
        text = "; ".join(r.replace("\n", "; ") for r in reasons) if reasons else "a guard of an earlier compile failed"
        kind, reason = "recompile", f"recompile of {frame or 'the frame'}: {text}"
    else:
        m = re.match(r"((?:\w+\.)?)torch_dynamo_resume_in_(\w+)_at_(\d+)", frame or "")
        if m:
            kind, reason = (
                "first_call",
                (f"first call of the code after a graph break in {m.group(1)}{m.group(2)}() at line {m.group(3)}"),
            )
        else:
            kind, reason = (
                "first_call",
                f"first call of {frame or 'the compiled function'}(): dynamo traced it "
                "and handed the graph to Inductor",
            )
    if rec.graph_kind == "backward" and rec.cache_hit == "aot_autograd":  # AOT autograd's cache gave back both
        reason += " (the backward graph was read from the cache with the forward)"
    elif rec.graph_kind == "backward":
        reason += " (the backward graph was compiled together with the forward)"
    return Trigger(kind=kind, reason=_from_cache(reason, rec), user_stack=user_stack, time_us=time_us)


def _from_cache(reason: str, rec: RawGraph) -> str:
    """``reason``, and where ``rec`` was read from torch's caches (``RawGraph.cache_hit``), that it was
    (``rules.FROM_CACHE``): what made dynamo call the backend is the same; what the backend did is not."""
    return f"{reason}; {rules.FROM_CACHE[rec.cache_hit]}" if rec.cache_hit in rules.FROM_CACHE else reason


#: The frame of a compiled-autograd graph: no user frame was traced, the autograd graph of a .backward() was
CA_FRAME = "backward (compiled autograd)"


def _compiled_autograd(cid: str) -> bool:
    """Compiled autograd's graphs have ids ``!A/F/N`` (torch's CompileId with a compiled_autograd_id)."""
    return str(cid).startswith("!")


def _ca_trigger(window: Optional[RawWindow], trace: _Trace, t0: float, cid: str) -> Trigger:
    user_stack = _frames(window.user_stack) if window else []
    return Trigger(
        kind="compiled_autograd",
        user_stack=user_stack or trace.dynamo_start_stack(cid),
        time_us=round(window.start_us - t0, 1) if window else None,
        reason="compiled autograd (torch._dynamo.config.compiled_autograd) traced the whole autograd graph of "
        "a .backward() call and Inductor compiled it there, at that call",
    )


#: The header torch writes at the top of a graph's output code: the AOT graph it compiled (``# AOT ID: ['0_forward']``,
#: ``TracingContext.aot_graph_name``: AOT's id of the compile, ``aot_config.aot_id``, and the graph's part)
_AOT_ID = re.compile(r"^# AOT ID: \['(\d+)_forward'\]", re.M)
#: The name compiled autograd gives a placeholder of an AOT backward it copies into its graph:
#: ``aot{aot id}_{name}``, ``aot{aot id}_{n}_{name}`` for its n-th copy (``compiled_autograd.make_unique``)
_CA_AOT_NAME = re.compile(r"aot(\d+)(?:_\d+)?_([A-Za-z_]\w*)")


def _aot_forward_id(code: str) -> Optional[str]:
    """The AOT id of a training forward's graph, from its output code's header (``# AOT ID: ['0_forward']``: ``0``),
    else None."""
    m = _AOT_ID.search(code[:4000]) if code else None
    return m.group(1) if m else None


def _ca_inputs(
    dyn: Optional[list[dict]], post: list[dict], forwards: dict[str, dict[str, GraphNode]]
) -> tuple[dict[str, tuple[str, str]], dict[str, GraphNode]]:
    """What each input of compiled autograd's graph is, as the backward of a forward names it: ``({post-grad input:
    (role, display name)}, {post-grad input: the forward's node it is})``. Dynamo's graph of it takes one list,
    ``L['inputs']``, which AOT flattens into ``arg0_1``, ``arg1_1``... in order (taken only where every item's shape
    is that input's); the capture marked what each item is (``torchread.mark_compiled_autograd``): a placeholder of
    the AOT backward of a forward (``aot0_primals_3``, AOT id ``0``; ``forwards``: each forward's post-grad nodes by
    the AOT id its output code names), named as that backward names it (``x``, ``net.head.weight``, ``net.fc addmm
    (saved)``, ``gradient of output 1``), else a parameter or buffer of the user's model by identity
    (``net.fc.bias``, whose gradient it accumulates). ``({}, {})`` where the capture marked nothing (a TORCH_TRACE
    import: its printed graph has no structure to read)."""
    ph = next((n for n in dyn or [] if n["op"] == "placeholder"), None)
    entries = ph.get("ca_inputs") if ph is not None else None
    given = [n for n in post if n["op"] == "placeholder"]
    shapes = ph.get("shape") if ph is not None else None
    if not entries or len(given) < len(entries) or not isinstance(shapes, list) or len(shapes) != len(entries):
        return {}, {}
    for i, (n, shape) in enumerate(zip(given, shapes)):
        if n["name"] != f"arg{i}_1" or (n.get("shape") or []) != (shape or []):
            return {}, {}
    roles: dict[str, tuple[str, str]] = {}
    made: dict[str, GraphNode] = {}
    for n, e in zip(given, entries):
        m = _CA_AOT_NAME.fullmatch(str(e.get("aot") or ""))
        fwd = forwards.get(m.group(1)) if m else None
        bw = m.group(2) if m else ""
        node = fwd.get(bw) if fwd is not None else None
        if fwd is not None and re.fullmatch(r"tangents_\d+", bw):
            roles[n["name"]] = ("tangent", f"gradient of output {bw.split('_', 1)[1]}")
        elif node is not None and node.op == "placeholder" and node.role and node.display_name:
            roles[n["name"]] = (node.role, node.display_name)
        elif node is not None and node.op != "placeholder":
            roles[n["name"]] = ("saved", rules.saved_name(bw, fwd))
            made[n["name"]] = node
        elif e.get("known_as") and e.get("kind") in ("parameter", "buffer"):
            roles[n["name"]] = (str(e["kind"]), str(e["known_as"]))
    return roles, made


def _ca_gradients(dyn: Optional[list[dict]], post: list[dict], roles: dict[str, tuple[str, str]]) -> list[str]:
    """``Compile.forward_inputs`` of compiled autograd's graph: at each place of what it returns, the parameter (or
    buffer) of the user's model whose ``.grad`` that value is (``ca_grad_of``, marked at capture), by the name its
    input has (:func:`_ca_inputs`), ``""`` where it is none or not known; ``[]`` where its post-grad graph returns
    another number of values than dynamo's, or none is known."""
    out = next((n for n in dyn or [] if n["op"] == "output"), None)
    grad_of = out.get("ca_grad_of") if out is not None else None
    post_out = next((n for n in post if n["op"] == "output"), None)
    if not grad_of or post_out is None or len(post_out.get("returns") or []) != len(grad_of):
        return []
    names = []
    for i in grad_of:
        role, shown = roles.get(f"arg{i}_1", ("", "")) if i is not None else ("", "")
        names.append(shown if role in ("parameter", "buffer") else "")
    return names if any(names) else []


def _with_forward_facts(nodes: list[GraphNode], made: dict[str, GraphNode]) -> list[GraphNode]:
    """``nodes`` with each saved input of compiled autograd's graph (``made``: the forward's node it is) given that
    node's line, module and op, as AOT's own backward's saved inputs carry them."""
    return [
        dataclasses.replace(
            n,
            user_stack=list(made[n.name].user_stack),
            module_stack=list(made[n.name].module_stack),
            module_types=list(made[n.name].module_types),
            module_calls=list(made[n.name].module_calls),
            original_op=made[n.name].original_op,
            output=made[n.name].output,
        )
        if n.name in made
        else n
        for n in nodes
    ]


def _call_arg_names(raw: Raw) -> list[str]:
    """The positional parameter names of what ``torch.compile`` wrapped, when every call agrees on them."""
    names = {tuple(c.get("arg_names") or ()) for c in raw.compile_calls} - {()}
    return list(next(iter(names))) if len(names) == 1 else []


def _qualified(name: str, file: str, line: Any, self_type: Sequence[str] = (), logged_self: str = "") -> str:
    """A traced method named with its class, ``Block.forward`` (regional compilation compiles each block's
    ``forward``: the compiles read alike by name alone); dynamo's code after a graph break in one,
    ``Block.torch_dynamo_resume_in_forward_at_13``. A function, or a file whose text is not known: ``name``.
    ``self_type``: the classes of the frame's ``self`` (``Raw.self_types``): an inherited method is named by the
    class of the object that ran it, ``AdamW.step`` for ``Adam.step`` run by an ``AdamW``. ``logged_self``: that
    class as a TORCH_TRACE log's guards name it (:func:`_logged_self_class`; the log does not say its bases: it is, or
    derives from, the class that defines the method, since the method ran with it as its ``self``)."""
    resumed = re.fullmatch(r"torch_dynamo_resume_in_(\w+?)_at_\d+", name)
    try:
        cls = method_class(file, int(line), resumed.group(1) if resumed else name) if file and line else ""
    except (TypeError, ValueError):
        cls = ""
    if cls and cls in self_type[1:]:
        cls = self_type[0]
    elif cls and logged_self:
        cls = logged_self
    return f"{cls}.{name}" if cls else name


#: A guard on the frame's ``self`` in dynamo's guard tree, with its class (torch 2.13+: ``source=L['self'],
#: accessed_by=FrameLocalsGuardAccessor(...), type=<class 'torch.optim.adamw.AdamW'>``).
_SELF_GUARD = re.compile(r"source=L\['self'\], accessed_by=[^\n]*?\btype=<class '(?:[\w.]+\.)?(\w+)'>")


def _logged_self_class(trace: _Trace, cid: str) -> str:
    """The class of the ``self`` of compile ``cid``'s frame as its guards name it, where a TORCH_TRACE log holds no
    live frame to read (``Raw.self_types``): ``"AdamW"`` for ``Adam.step`` run by an ``AdamW`` (nu30 D3: the import
    said ``Adam.step``, the capture ``AdamW.step``, and a compare of the two paired the optimizer's compiles with
    nothing). ``""`` where no guard names it."""
    for text in trace.payloads("dynamo_cpp_guards_str", cid):
        m = _SELF_GUARD.search(str(text or ""))
        if m:
            return m.group(1)
    return ""


def _cell_resume(frame: str, cell: Optional[Cell]) -> str:
    """A resume function's name (``torch_dynamo_resume_in_forward_at_8``: the code after the graph break at line 8 of
    the code dynamo traced) with its line as the notebook cell shows it, where that code is a cell's (``cell``: the
    %%inductor_lens line the magic strips shifts it by one; the label said "after line 8" where the cell's line 9
    breaks, and the rest of the widget says 9: a new user's trial, nu20 D5)."""
    if cell is None or cell.wrapper:
        return frame
    return shift_resume(frame, cell.offset)


def _wraps_module(trace: _Trace, cid: str) -> bool:
    """Whether the frame dynamo traced for compile ``cid`` is torch's ``inner`` wrapper around the compiled module
    (``rules.wraps_module``), by its ``compilation_metrics`` record."""
    for md in trace.metadata("compilation_metrics", cid):
        metrics = md["compilation_metrics"]
        if metrics.get("co_name"):
            return wraps_module(str(metrics["co_name"]), str(metrics.get("co_filename") or ""))
    return False


def _frame_code(trace: _Trace, cid: str, frame: str) -> tuple:
    """The code dynamo traced for compile ``cid``: its file, first line and name (``compilation_metrics``), else the
    frame's name ``frame``."""
    for md in trace.metadata("compilation_metrics", cid):
        m = md["compilation_metrics"]
        if m.get("co_name"):
            return (str(m.get("co_filename") or ""), m.get("co_firstlineno"), str(m["co_name"]))
    return (frame,)


def _frame_name(trace: _Trace, cid: str, modules: Sequence[str] = (), self_type: Sequence[str] = ()) -> str:
    """The frame dynamo traced for compile ``cid``; ``modules``: the classes of the modules ``torch.compile`` wrapped
    in the capture; ``self_type``: the classes of the frame's ``self`` (:func:`_qualified`)."""
    for md in trace.metadata("compilation_metrics", cid):
        name = md["compilation_metrics"].get("co_name")
        filename = str(md["compilation_metrics"].get("co_filename") or "").replace("\\", "/")
        if name and re.search(r"/torch/(_dynamo/external_utils|nn/modules/module)\.py$", filename):
            # dynamo traced torch's own module-call wrapper (`inner`, `_call_impl`), which inlines forward(): a module
            # of torch's own compiled as it is (torch.compile(nn.Sequential(...))), its class's forward where the
            # capture compiled modules of one class (a new user read "forward() (via torch's inner wrapper)")
            if len(set(modules)) == 1:
                return f"{modules[0]}.forward"
            if self_type:  # the module the wrapper holds (its fn), read at capture: compiled before the capture too
                return f"{self_type[0]}.forward"
            return f"forward (via torch's {name} wrapper)"
        if name:
            line = md["compilation_metrics"].get("co_firstlineno")
            logged = "" if self_type else _logged_self_class(trace, cid)
            return _qualified(str(name), filename, line, self_type, logged)
    stack = trace.dynamo_start_stack(cid)
    return stack[-1].function if stack else ""


def _empty_frames(
    trace: _Trace,
    compiled: Optional[set[str]] = None,
    raised: Optional[BaseException] = None,
    windows: Sequence[RawWindow] = (),
    t0: float = 0.0,
) -> list[EmptyFrame]:
    """The frames dynamo traced that gave Inductor no graph, from their ``compilation_metrics`` record, whose compile
    id (its restart attempt, ``_1``, left out) made no compile (``compiled``: the ids that did): a frame with no op in
    its graph (``graph_op_count`` 0, or none recorded) and no failure, and a frame dynamo could not trace and ran
    eagerly (``fail_type`` ``Unsupported`` or ``UserError``, not the error the captured code raised: ``raised``),
    with the first line of why: only where dynamo's graph-break record of that frame says it falls back to eager
    (an error raised to the user's code, as under ``fullgraph=True``, says no such thing; a TORCH_TRACE log does
    not tell what the code raised). Each with when dynamo began it and for how long (its compile window,
    ``windows``, from ``t0``) where the capture saw it. In compile-id order, once each."""
    seen: dict[str, EmptyFrame] = {}
    raised_md = _raised_metrics(trace, raised)
    eager = _eager_ids(trace)
    spans: dict[str, RawWindow] = {}
    for w in windows:  # the frame's first window (a restart's, 0/0_1, is another attempt at it)
        spans.setdefault(_base_cid(w.compile_id), w)
    for cid, _, md in trace.by_kind.get("compilation_metrics", []):
        m = md["compilation_metrics"]
        ops = m.get("graph_op_count")
        failed = m.get("fail_type")
        if not cid or (failed and (failed not in _EAGER_FAILS or md is raised_md)) or (ops and not failed):
            continue
        cid = _base_cid(str(cid))
        if cid in seen or (compiled is not None and cid in compiled) or (failed and cid not in eager):
            continue
        line = m.get("co_firstlineno")
        reason = str(m.get("fail_reason") or "") if failed else ""
        w = spans.get(cid)
        # a recompile of the frame (1/1): the guards of its earlier compile that failed, as for any compile
        guards = [readable_reasons(p) for p in trace.payloads("recompile_reasons", _record_key(cid, md)) if p]
        seen[cid] = EmptyFrame(
            compile_id=cid,
            function=str(m.get("co_name") or ""),
            file=str(m.get("co_filename") or ""),
            line=line if isinstance(line, int) else 0,
            ops=ops if isinstance(ops, int) else None,
            fail=(reason.strip().splitlines() or [str(failed)])[0] if failed else "",
            recompile_reason="\n".join(r for r in guards if r),
            time_us=round(w.start_us - t0, 1) if w is not None else None,
            duration_us=round(w.end_us - w.start_us, 1) if w is not None and w.end_us is not None else None,
        )

    def order(cid: str) -> tuple:
        return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[/_]", cid))

    return [seen[c] for c in sorted(seen, key=order)]


#: The failures after which dynamo runs the frame eagerly, uncompiled (a graph break it could not resume from).
_EAGER_FAILS = ("Unsupported", "UserError")


def _eager_ids(trace: _Trace) -> set[str]:
    """The compile ids (restart attempts left out) of the frames dynamo says it ran eagerly: its graph-break record
    of the frame falls back to eager ("Skipping the function and falling back to eager")."""
    return {
        _base_cid(str(cid))
        for cid, payload, _ in trace.by_kind.get("dynamo_graph_break_reason", [])
        if cid and "falling back to eager" in str(payload or "")
    }


def _thrown_away(compiles: list[Compile], trace: _Trace, raw: Raw) -> list[Compile]:
    """``compiles`` with those of the frame whose error the captured code raised marked incomplete: dynamo raised
    after Inductor had compiled its graph (a ``ConstraintViolationError`` while building its guards, past
    ``compile_fx``), so that code was thrown away and never ran. The last compile of that id (ids repeat after a
    ``torch._dynamo.reset()``: one made since the user's last reset), with the graph that calls it where it is a
    subgraph. A frame that raised before Inductor compiled anything (a graph break under ``fullgraph=True``) has none."""
    raised = _raised_metrics(trace, raw.raised)
    cid = next((c for c, _, md in trace.by_kind.get("compilation_metrics", []) if md is raised), None)
    if raised is None or not cid:
        return compiles
    cid = _base_cid(str(cid))
    last = max((i for i, c in enumerate(compiles) if _base_cid(c.compile_id) == cid), default=None)
    reset = max((r["time_us"] - raw.t0_us for r in raw.resets), default=None)
    began = compiles[last].trigger.time_us if last is not None else None
    if last is None or (reset is not None and (began is None or began < reset)):
        return compiles  # the compile of that id made before the reset ran; the frame that raised made none
    first = last
    while compiles[first].subgraph and first > 0 and _base_cid(compiles[first - 1].compile_id) == cid:
        first -= 1  # a torch.cond branch's graph comes after the graph that calls it: that one too
    return [incomplete(c) if first <= i <= last else c for i, c in enumerate(compiles)]


def _raised_metrics(trace: _Trace, raised: Optional[BaseException]) -> Optional[dict]:
    """The ``compilation_metrics`` record of the frame whose error the captured code raised (``raised``: the last
    failed frame, when it failed with that error's type, as ``Unsupported`` under ``fullgraph=True``), else None."""
    failed = [
        md for _, _, md in trace.by_kind.get("compilation_metrics", []) if md["compilation_metrics"].get("fail_type")
    ]
    if failed and raised is not None and failed[-1]["compilation_metrics"].get("fail_type") == type(raised).__name__:
        return failed[-1]
    return None


_LIMIT = re.compile(r"Limit type: (\w+)")
_LIMIT_VALUE = re.compile(r"currently set to (\d+)")


def _fullgraph_only(calls: list[dict], co_name: str) -> bool:
    """Whether every ``torch.compile`` call of the capture whose function is the frame ``co_name`` (its name's last
    part; ``forward`` for a module) passed ``fullgraph=True``, and there is one: dynamo raises a frame of such a call
    that it cannot trace whole to the caller's code, it runs nothing of it eagerly."""
    mine = [
        c
        for c in calls
        if str(c.get("target", "")).rsplit(".", 1)[-1] == co_name or (c.get("module") and co_name == "forward")
    ]
    return bool(mine) and all(c.get("fullgraph") for c in mine)


def _limit_hit(trace: _Trace, cid: Any, md: dict) -> Optional[tuple[str, Optional[int], str, str]]:
    """Where the ``compilation_metrics`` record ``md`` (of compile ``cid``) is dynamo's refusal to recompile, a limit
    hit (``fail_reason``: ``Limit type: recompile_limit``, the frame then runs eagerly; under ``fullgraph=True`` torch
    raises ``FailOnRecompileLimitHit`` instead, whose reason says no limit): the limit's name, its value (None where
    the reason does not say it), and the guard that failed last in torch's words with the compile it belongs to, as
    torch's warning says them ("last reason: 0/1: k == 1": its first line; ``""`` where none is recorded). Else None."""
    reason = str(md["compilation_metrics"].get("fail_reason") or "")
    limit = _LIMIT.search(reason) if md["compilation_metrics"].get("fail_type") else None
    if not limit:
        return None
    value = _LIMIT_VALUE.search(reason)
    failed = [
        r.splitlines()[0].split("#")[0].strip()
        for p in trace.payloads("recompile_reasons", _record_key(cid, md))
        for r in [readable_reasons(p)]
        if r
    ]
    of, _, guard = failed[0].partition(": ") if failed else ("", "", "")
    return limit.group(1), int(value.group(1)) if value else None, guard, of


def _recompile_limits(trace: _Trace, t0: float = 0.0) -> list[RecompileLimit]:
    """Each limit dynamo hit (:func:`_limit_hit`) as a ``RecompileLimit``, in the log's order: its frame, from the
    record or from another record of the same frame (``frame_id``), and when dynamo began the compile it refused (the
    record's ``start_time_us``, on the wall clock as ``t0``; dynamo refuses before its compile callbacks run, so the
    capture saw no compile window of that id)."""
    frames: dict[Any, dict] = {}
    for _, _, md in trace.by_kind.get("compilation_metrics", []):
        if md["compilation_metrics"].get("co_name"):
            frames.setdefault(md.get("frame_id"), md["compilation_metrics"])
    out: list[RecompileLimit] = []
    for cid, _, md in trace.by_kind.get("compilation_metrics", []):
        hit = _limit_hit(trace, cid, md) if cid else None
        if not hit:
            continue
        m = md["compilation_metrics"]
        f = m if m.get("co_name") else frames.get(md.get("frame_id"), {})
        start = m.get("start_time_us")
        if start is None and m.get("start_time") is not None:  # the legacy field, in seconds
            start = float(m["start_time"]) * 1e6
        line = f.get("co_firstlineno")
        out.append(
            RecompileLimit(
                compile_id=str(cid),
                function=str(f.get("co_name") or ""),
                file=str(f.get("co_filename") or ""),
                line=line if isinstance(line, int) else 0,
                limit=hit[0],
                value=hit[1],
                guard=hit[2],
                guard_of=hit[3],
                time_us=round(float(start) - t0, 1) if start is not None and t0 > 0 else None,
            )
        )
    return out


def _gave_up(trace: _Trace, raised: Optional[BaseException] = None, calls: Sequence[dict] = ()) -> list[Diagnostic]:
    """Where torch gave up on a frame (``compilation_metrics`` with a ``fail_type``): the recompile limit,
    a frame dynamo could not trace, or a compile error that dynamo swallowed (``suppress_errors``).
    ``raised``: what the captured code raised; when it is the error of the last frame dynamo could not
    trace (its ``fail_type``, e.g. ``Unsupported`` under ``fullgraph=True``), that frame did not run
    eagerly: torch raised (``compile_raised``); so too where the frame's ``torch.compile`` calls (``calls``,
    ``Raw.compile_calls``) all passed ``fullgraph=True`` and the user's code caught the error."""
    raised_md = _raised_metrics(trace, raised)
    eager = _eager_ids(trace)
    names: dict[Any, str] = {}
    whole: dict[Any, bool] = {}  # frame id -> its compile calls all passed fullgraph=True
    for _, _, md in trace.by_kind.get("compilation_metrics", []):
        m = md["compilation_metrics"]
        if m.get("co_name"):
            names[md.get("frame_id")] = f"{m['co_name']}() ({m.get('co_filename')}:{m.get('co_firstlineno')})"
            whole[md.get("frame_id")] = _fullgraph_only(list(calls), m["co_name"])
    out: list[Diagnostic] = []
    for cid, _, md in trace.by_kind.get("compilation_metrics", []):
        m = md["compilation_metrics"]
        if not m.get("fail_type"):
            continue
        stack = trace.dynamo_start_stack(_record_key(cid, md)) if cid else []
        frame = names.get(md.get("frame_id")) or (
            f"{stack[-1].function}() ({stack[-1].file}:{stack[-1].line})" if stack else "a frame"
        )
        reason = str(m.get("fail_reason") or "")
        hit = _limit_hit(trace, cid, md)
        if hit:
            limit, value, guard, of = hit
            last = f", whose guard {guard} (of compile {of}) failed last" if guard else ""
            out.append(
                Diagnostic(
                    "recompile_limit",
                    f"compile {cid}: torch hit config.{limit} "
                    f"({'?' if value is None else value}) for {frame}{last}: it stopped recompiling "
                    "and runs that frame eagerly (uncompiled) for inputs no compile fits; "
                    + recompile_limit_advice(limit, guard),
                    reason,
                )
            )
        elif md is raised_md or (
            m.get("fail_type") in _EAGER_FAILS
            and whole.get(md.get("frame_id"))
            and _base_cid(str(cid or "")) not in eager
        ):
            # a graph break raises only under fullgraph=True; any other error (a shape mismatch found while
            # tracing: TorchRuntimeError) raises whatever the options
            why = "with fullgraph=True a graph break is an error; " if m.get("fail_type") in _EAGER_FAILS else ""
            caught = "" if md is raised_md else ", which caught it"
            out.append(
                Diagnostic(
                    "compile_raised",
                    f"compile {cid}: dynamo could not compile {frame} and raised {m.get('fail_type')} to your "
                    f"code{caught} ({why}nothing ran eagerly): {reason.splitlines()[0] if reason else ''}",
                    reason,
                )
            )
        elif m.get("fail_type") in _EAGER_FAILS and _base_cid(str(cid or "")) in eager:
            out.append(
                Diagnostic(
                    "eager_fallback",
                    f"compile {cid}: dynamo could not compile {frame} and ran it "
                    f"eagerly: {reason.splitlines()[0] if reason else m.get('fail_type')}",
                    reason,
                )
            )
        elif m.get("fail_type") in _EAGER_FAILS:  # no record says which: a TORCH_TRACE log, an error caught inside
            out.append(
                Diagnostic(
                    "compile_unsupported",
                    f"compile {cid}: dynamo could not compile {frame} ({m.get('fail_type')}: "
                    f"{reason.splitlines()[0] if reason else ''}); it ran eagerly unless the error reached your "
                    "code (fullgraph=True raises it): nothing recorded says which",
                    reason,
                )
            )
        else:
            out.append(
                Diagnostic(
                    "compile_error",
                    f"compile {cid} of {frame} failed ({m.get('fail_type')}: "
                    f"{reason.splitlines()[0] if reason else ''}); unless the error reached your code, "
                    "torch swallowed it (suppress_errors) and ran the frame eagerly",
                    reason,
                )
            )
    return out


AOT_FRAME = rules.AOT_FRAME


def _aot_call(rec: RawGraph, raw: Raw) -> Optional[dict]:
    """The AOTInductor compile call (``Raw.aot_calls``) that lowered ``rec``: the latest to start before it."""
    calls = [c for c in raw.aot_calls if c.get("start_us", 0) <= rec.start_us]
    return max(calls, key=lambda c: c["start_us"]) if rec.aot and calls else None


def _aot_roles(post: list[dict], call: Optional[dict]) -> dict[str, tuple[str, str]]:
    """``{name: (role, display name)}`` of an AOTInductor graph's inputs as the exported program names them: its
    placeholders (the user's inputs: ``arg6_1`` is ``x``) and the parameters and buffers it reads as constants
    (``get_attr`` nodes, by their path)."""
    names = {str(k): (str(v[0]), str(v[1])) for k, v in ((call or {}).get("inputs") or {}).items()}
    by_path = {d: (r, d) for r, d in names.values() if r in ("parameter", "buffer")}
    roles = {}
    for n in post:
        if n["op"] == "placeholder" and n["name"] in names:
            roles[n["name"]] = names[n["name"]]
        elif n["op"] == "get_attr" and n["target"] in by_path:
            roles[n["name"]] = by_path[n["target"]]
    return roles


def _aot_trigger(call: Optional[dict], t0: float) -> Trigger:
    entry = (
        f"torch._inductor.{call['entry']}()"
        if call and call.get("entry")
        else "torch._inductor.aoti_compile_and_package()"
    )
    return Trigger(
        kind="ahead_of_time",
        reason=f"AOTInductor compiled an exported program ahead of time, at the {entry} call: no dynamo frame and no "
        "guards; the package runs these kernels from its C++ wrapper",
        user_stack=_frames(call.get("user_stack") or []) if call else [],
        time_us=round(call["start_us"] - t0, 1) if call else None,
    )


def _with_subgraph_code(graphs: list[RawGraph]) -> list[RawGraph]:
    """Each subgraph (a torch.cond branch: ``RawGraph.subgraph``) with its parent's output code, which holds its
    code and kernels, its inputs named as that code names them (:func:`_qualified_inputs`) and each marked with
    the parent's node it is (:func:`_with_operands`), and each parent with the names of the kernels its subgraphs
    recorded (``subgraph_kernels``: in its output code, but theirs)."""
    graphs = [_qualified_inputs(_own_subgraph_attrs(rec)) for rec in graphs]
    by_key = {rec.key: rec for rec in graphs}
    subs: dict[int, list[str]] = {}
    out = []
    for rec in graphs:
        parent = by_key.get(rec.parent_key) if rec.subgraph else None
        if parent is not None:
            subs.setdefault(parent.key, []).extend(k.name for k in rec.kernels)
            if not rec.output_code:
                rec = dataclasses.replace(rec, output_code=parent.output_code)
            if rec.cpu_isa is None:  # its C++ kernels are written with its parent's, in the parent's output code
                rec = dataclasses.replace(rec, cpu_isa=parent.cpu_isa)
            rec = _with_operands(rec, parent)
        out.append(rec)
    return [dataclasses.replace(r, subgraph_kernels=subs[r.key]) if r.key in subs else r for r in out]


def _own_subgraph_attrs(rec: RawGraph) -> RawGraph:
    """``rec`` with each call of a subgraph naming its own ``get_attr`` of it: Inductor lowers a repeated region
    (``torch.compiler.nested_compile_region``: ``invoke_subgraph``) once, and the scheduler node of every later call
    has the first call's ``get_attr`` (``repeated_subgraph0``, in ``layers.0``) among its origins where the graph
    gives it its own (``repeated_subgraph0_1``, in ``layers.1``): its module was the top level's, a vote of the two
    (nu30 D1). A node whose calls read no ``get_attr`` keeps its origins as they are."""
    op = {n["name"]: n.get("op", "") for n in rec.post_grad_nodes}
    inputs = {n["name"]: n.get("inputs") or () for n in rec.post_grad_nodes}
    calls = {
        n["name"]
        for n in rec.post_grad_nodes
        if n.get("op") == "call_function" and control_flow([str(n.get("target", "")).rpartition(".")[2]])
    }

    def own(names: list[str]) -> list[str]:
        attrs = [x for x in names if op.get(x) == "get_attr"]
        mine = [i for x in names if x in calls for i in inputs[x] if op.get(i) == "get_attr"]
        if not attrs or not mine or set(attrs) == set(mine):
            return names
        return [x for x in names if x not in attrs] + [x for x in dict.fromkeys(mine)]

    if not calls:
        return rec
    return dataclasses.replace(
        rec,
        pre_fusion=[dataclasses.replace(sn, fx_nodes=own(sn.fx_nodes)) for sn in rec.pre_fusion],
        post_fusion=[dataclasses.replace(sn, fx_nodes=own(sn.fx_nodes)) for sn in rec.post_fusion],
    )


def _qualified_inputs(rec: RawGraph) -> RawGraph:
    """A subgraph's post-grad inputs by the names its output code and Inductor's buffers give them: Inductor prefixes
    each name of a subgraph with the subgraph's (``GraphLowering.qualify_name``), so the placeholder ``arg0_1`` of
    ``while_loop_body_graph_0`` is its graph input ``while_loop_body_graph_0_arg0_1``, the name its kernels' launches,
    its fused nodes' reads and its memory use. Renamed (``target`` keeps torch's ``arg0_1``) where Inductor's graph
    inputs hold the prefixed name, with every reference to it, so that an input's node (its dtype, its name shown)
    is found from the buffer as in any other graph."""
    if not rec.subgraph:
        return rec
    inputs = set(rec.graph_inputs)
    new = {
        n["name"]: f"{rec.subgraph}_{n['name']}"
        for n in rec.post_grad_nodes
        if n["op"] == "placeholder" and f"{rec.subgraph}_{n['name']}" in inputs
    }
    if not new:
        return rec

    def named(names):
        return [new.get(x, x) for x in names]

    nodes = []
    for n in rec.post_grad_nodes:
        n = {**n, "name": new.get(n["name"], n["name"]), "inputs": named(n.get("inputs") or ())}
        if n.get("returns"):
            n["returns"] = named(n["returns"])
        nodes.append(n)
    return dataclasses.replace(
        rec,
        post_grad_nodes=nodes,
        pre_fusion=[dataclasses.replace(sn, fx_nodes=named(sn.fx_nodes)) for sn in rec.pre_fusion],
        post_fusion=[dataclasses.replace(sn, fx_nodes=named(sn.fx_nodes)) for sn in rec.post_fusion],
        kernels=[dataclasses.replace(k, fx_nodes=named(k.fx_nodes)) for k in rec.kernels],
        output_nodes={b: new.get(f, f) for b, f in rec.output_nodes.items()},
        outputs=[{**o, "node": new.get(o["node"], o["node"])} for o in rec.outputs],
    )


def _with_operands(rec: RawGraph, parent: RawGraph) -> RawGraph:
    """``rec`` (a subgraph) with each post-grad input marked ``operand``: the node of ``parent`` passed in its place.
    The parent calls it from a higher-order op (``cond(pred, true_graph_0, false_graph_0, w, x)``,
    ``while_loop(cond_graph, body_graph, *carried, *captured)``) whose operands follow the subgraphs it names, in the
    order of the subgraph's inputs. Left unmarked where the call is not found or its operands do not line up (their
    count or a shape differs)."""
    by_name = {n["name"]: n for n in parent.post_grad_nodes}
    call = next(
        (
            n
            for n in parent.post_grad_nodes
            if n["op"] == "call_function"
            and any(by_name.get(i, {}).get("op") == "get_attr" and i == rec.subgraph for i in n.get("inputs") or ())
        ),
        None,
    )
    if call is None:
        return rec
    inputs = list(call.get("inputs") or ())
    last = max(i for i, name in enumerate(inputs) if by_name.get(name, {}).get("op") == "get_attr")
    operands = inputs[last + 1 :]
    own = [n for n in rec.post_grad_nodes if n["op"] == "placeholder"]
    if len(own) != len(operands):
        return rec
    if any(
        n.get("shape") is not None
        and by_name[o].get("shape") is not None
        and list(n["shape"]) != list(by_name[o]["shape"])
        for n, o in zip(own, operands)
    ):
        return rec
    operand = {n["name"]: o for n, o in zip(own, operands)}
    nodes = [{**n, "operand": operand[n["name"]]} if n["name"] in operand else n for n in rec.post_grad_nodes]
    return dataclasses.replace(rec, post_grad_nodes=nodes)


def _with_aot_code(graphs: list[RawGraph], trace: _Trace) -> list[RawGraph]:
    """AOTInductor compiles have no compile id and no Python output code: give each its C++ wrapper and
    kernels (the ``inductor_aot_*_code`` records, in order) and the id ``aot/N``."""
    wrappers = [p for _, p, _ in trace.by_kind.get("inductor_aot_wrapper_code", [])]
    kernel_code = [p for _, p, _ in trace.by_kind.get("inductor_aot_kernel_code", [])]
    out, n = [], 0
    for rec in graphs:
        if aot_lowered(rec):
            code = rec.output_code
            if n < len(wrappers):
                code = "\n".join(filter(None, [wrappers[n], kernel_code[n] if n < len(kernel_code) else ""]))
            rec = dataclasses.replace(
                rec, output_code=code, compile_id=rec.compile_id if rec.compile_id != "?" else f"aot/{n}"
            )
            n += 1
        out.append(rec)
    return out


def _with_memory(compiles: list[Compile], facts: list[Optional[dict]], device: str, diagnostics: list) -> list[Compile]:
    """Each compile with its ``memory`` (capturing/memory.py); a forward of a training step is paired with its
    backward, which says what it saved. A repeated region's compile is worked out before the compiles that call it,
    whose calls then hold what the region allocates inside (``analysis/memory.region_extra``). A failure is a
    diagnostic, never a lost report."""
    from ..analysis.memory import region_call_bytes, region_order
    from ..report.finish import compile_note, pair_backward
    from .memory import memory_of

    backs = pair_backward(compiles)
    fronts = {b.id: fid for fid, b in backs.items()}
    by_id = {c.id: c for c in compiles}
    order, called = region_order(compiles)  # the regions first, then the rest in the capture's order
    done: dict[str, Compile] = {}
    for i in order:
        c, f = compiles[i], facts[i]
        try:
            front = by_id.get(fronts.get(c.id, ""))
            calls = region_call_bytes(c.id, called, done)
            c = dataclasses.replace(
                c, memory=memory_of(c, f, backs.get(c.id), device=device, forward=front, calls=calls)
            )
            c = dataclasses.replace(c, graph_note=compile_note(c))  # it says whether the tensors saved are known
        except Exception as e:
            diagnostics.append(
                Diagnostic(
                    "build_failed", f"the memory of compile {c.id} could not be worked out ({type(e).__name__}: {e})"
                )
            )
        done[c.id] = c
    return [done[c.id] for c in compiles]


def _env_int(name: str) -> Optional[int]:
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


_FROM_ENV: Any = object()


def _lines_of_outputs(nodes: list[dict]) -> None:
    """An op of several outputs that Inductor made itself has no stack of its own: its outputs do. The attention
    ``(q @ k.transpose(-1, -2)) / d ** 0.5`` then ``.softmax(-1) @ v`` that Inductor's pattern pass replaces with
    one ``_scaled_dot_product_flash_attention_for_cpu`` node: the ``getitem`` of its output keeps the replaced
    output's stack (the line of ``... @ v``), the new node none, so its kernel said it came from code inside torch.
    Each such node takes the stack of its first ``getitem`` that has one (in place, in the raw nodes: the same on
    every build)."""
    unpacked: dict[str, str] = {}
    for n in nodes:
        if n.get("target") == "_operator.getitem" and n.get("stack_trace") and n.get("inputs"):
            unpacked.setdefault(n["inputs"][0], n["stack_trace"])
    if not unpacked:
        return
    for n in nodes:
        if n["op"] == "call_function" and not n.get("stack_trace") and n["name"] in unpacked:
            n["stack_trace"] = unpacked[n["name"]]


#: PT2E's quantize and dequantize ops (``quantized_decomposed.quantize_per_tensor``, ``dequantize_per_channel``,
#: ``choose_qparams``...), which ``convert_pt2e`` puts in the GraphModule it returns with no stack trace of their own
QUANTIZERS = "quantized_decomposed."
#: How far :func:`_lines_of_quantizers` walks from a quantize op to the op it quantizes
_QUANTIZED_DEPTH = 8


def _generated_only(trace: str) -> bool:
    """Whether a stack trace's frames are all in code torch.fx generated (``<eval_with_key>.15``: the forward of a
    GraphModule, such as PT2E's converted model, whose nodes kept no trace of the user's code)."""
    frames = parse_stack_trace(trace)
    return bool(frames) and all(f.file.startswith("<eval_with_key>") for f in frames)


def _lines_of_quantizers(nodes: list[dict], kernels: Sequence[RawKernel]) -> None:
    """PT2E's quantize and dequantize ops take the stack of the op they quantize. ``convert_pt2e`` inserts them with
    no stack trace, so dynamo, tracing the converted GraphModule, gives them the line of its generated forward
    (``<eval_with_key>.15:16 quantize_per_tensor_default = ...``), where the ops the user wrote keep theirs (dynamo
    copies the exported program's ``stack_trace`` from the GraphModule's nodes). The op it quantizes is the first op
    it feeds (through other quantize ops and views with no line of their own) whose stack is the user's: the
    ``quantize_per_tensor`` of ``x`` takes the ``qconv``'s line, that of ``y.flatten(1)`` the ``qlinear``'s; one that
    feeds none such (the graph's output) takes that of the op it reads. Its module stack too, where it has none. In
    place, in the raw nodes and the kernels' stack traces (the same on every build: a rewritten trace is the user's)."""
    by_name = {n["name"]: n for n in nodes}
    users: dict[str, list[dict]] = {}
    for n in nodes:
        for i in n.get("inputs", ()):
            users.setdefault(i, []).append(n)

    def own(n: dict) -> bool:
        return bool(n.get("stack_trace")) and not _generated_only(n["stack_trace"])

    def passes(n: dict) -> bool:  # an op on the way to the quantized one
        return n["op"] == "call_function" and not own(n)

    def find(start: dict, step) -> Optional[dict]:
        seen, todo = {start["name"]}, [start]
        for _ in range(_QUANTIZED_DEPTH):
            todo = [m for n in todo for m in step(n) if m["name"] not in seen and not seen.add(m["name"])]
            hit = next((m for m in todo if m["op"] == "call_function" and own(m)), None)
            if hit is not None or not todo:
                return hit
            todo = [m for m in todo if passes(m)]
        return None

    remap: dict[str, str] = {}
    for n in nodes:
        trace = n.get("stack_trace") or ""
        if n["op"] != "call_function" or not str(n["target"]).startswith(QUANTIZERS):
            continue
        if trace and not _generated_only(trace):
            continue
        found = find(n, lambda m: users.get(m["name"], ())) or find(
            n, lambda m: [by_name[i] for i in m.get("inputs", ()) if i in by_name]
        )
        if found is None:
            continue
        if trace:
            remap.setdefault(trace, found["stack_trace"])
        n["stack_trace"] = found["stack_trace"]
        if not n.get("module_stack") and found.get("module_stack"):
            n["module_stack"] = list(found["module_stack"])
            n["module_types"] = list(found.get("module_types") or [])
    for rk in kernels if remap else ():
        rk.stack_traces = list(dict.fromkeys(remap.get(t, t) for t in rk.stack_traces))


def _subgraph_lines_from_dynamo(nodes: list[dict], dynamo: Optional[list[dict]]) -> None:
    """The stacks of the subgraphs a higher-order op's call takes (flex_attention's ``sdpa_score0`` and
    ``sdpa_mask0``), from dynamo's graph where it has them: AOT retraces the ``score_mod`` into the post-grad
    subgraph with only the call's stack (``attn`` then torch's ``flex_attention_hop``), while dynamo's
    ``score_mod_0`` keeps the line of ``relbias`` it traced. The k-th call of an op in the post-grad graph is the
    k-th of dynamo's, and its i-th subgraph operand dynamo's i-th (the op's signature, which AOT keeps). In place,
    in the raw nodes (the same on every build); a subgraph dynamo's graph has no call of (flex_attention's
    backward) keeps its own."""
    if not dynamo:
        return
    by_name = {n["name"]: n for n in dynamo}
    calls: dict[str, list[list[dict]]] = {}
    for n in dynamo:
        subs = [by_name[i] for i in n.get("inputs", ()) if i in by_name and by_name[i]["op"] == "get_attr"]
        if n["op"] == "call_function" and subs:
            calls.setdefault(n["target"], []).append(subs)
    post = {n["name"]: n for n in nodes}
    seen: dict[str, int] = {}
    for n in nodes:
        subs = [post[i] for i in n.get("inputs", ()) if i in post and post[i]["op"] == "get_attr"]
        if n["op"] != "call_function" or not subs:
            continue
        k = seen[n["target"]] = seen.get(n["target"], -1) + 1
        theirs = calls.get(n["target"], [])
        if k < len(theirs) and len(theirs[k]) == len(subs):
            for mine, their in zip(subs, theirs[k]):
                if their.get("subgraph_stack_traces"):
                    mine["subgraph_stack_traces"] = list(their["subgraph_stack_traces"])


def _compile(
    raw: Raw,
    rec: RawGraph,
    trace: _Trace,
    diagnostics: list,
    cid: str,
    idx: int,
    windows: list[RawWindow],
    starts: list[float],
    forward_nodes: Optional[dict[str, GraphNode]] = None,
    view_later: bool = False,
    parent_nodes: Optional[dict[str, GraphNode]] = None,
    aot_forwards: Optional[dict[str, dict[str, GraphNode]]] = None,
    cells: Optional[dict[str, Cell]] = None,
) -> Compile:
    """One compile of ``rec``; ``forward_nodes``: for a backward graph, the post-grad nodes of the forward
    compile it pairs with (``report.finish.pair_backward``), which name what it saved; ``parent_nodes``: for a
    subgraph, those of the graph that calls it, whose operands name its inputs. ``view_later``: a compile
    that lacks module paths (``module_paths.missing``) is made without its module view, which the paths inferred
    after would change (``finish.with_module_view``); ``aot_forwards``: the post-grad nodes of each training forward so
    far by its AOT id, which name compiled autograd's inputs (:func:`_ca_inputs`)."""
    _lines_of_outputs(rec.post_grad_nodes)
    _lines_of_quantizers(rec.post_grad_nodes, rec.kernels)
    dyn = _dynamo_graph(raw, rec)
    if not rec.subgraph:  # a branch's calls are not numbered as its parent's dynamo graph numbers them
        _subgraph_lines_from_dynamo(rec.post_grad_nodes, dyn)
    b = _GraphBuilder(raw, rec, trace, diagnostics)
    kernels, node_kernel = b.kernels()
    ca = _compiled_autograd(rec.compile_id)
    # the class of the modules torch.compile wrapped, where it wrapped nothing else: a function of torch's compiled as
    # it is (torch.compile(F.gelu)) goes through the same wrapper
    calls = [c for c in raw.compile_calls if c.get("backend") == "inductor"]
    modules = [c["target"] for c in calls] if calls and all(c.get("module") for c in calls) else []
    frame = (
        AOT_FRAME
        if rec.aot
        else CA_FRAME
        if ca
        else _frame_name(trace, _key(rec), modules, raw.self_types.get(_key(rec), ()))
    )
    if cells and "torch_dynamo_resume_in_" in frame:  # the code after a break in a notebook cell: the cell's lines
        frame = _cell_resume(frame, cells.get(str(_frame_code(trace, _key(rec), frame)[0])))
    shift = None if rec.aot or ca else _forward_wrapper(dyn, frame)
    wrapped = not rec.aot and not ca and _wraps_module(trace, _key(rec))
    # the frame's name for its self (def forward(s, x): s): the live frame's; a log's, from its placeholders' names
    own = raw.self_names.get(_key(rec)) or _log_self_name(dyn, frame)
    if shift is not None and frame != "forward":
        # transformers 5 wraps forward (wrapped_func, wrapper): the module's class where the frame's self says it
        owner = raw.self_types.get(_key(rec), ())
        forward = f"{owner[0]}.forward" if owner else "forward"
        frame = f"{forward} (via the {frame} decorator)"
    quantized = _quantized_weights(dyn, wrapped, own) if rec.constant_origins else {}
    dyn_roles, post_roles = _input_roles(
        dyn,
        rec.post_grad_nodes,
        "inference" if ca else rec.graph_kind,
        _call_arg_names(raw),
        # torch's inner(*args, **kwargs) around a compiled module of torch's (nn.Sequential) hands forward its args as
        # they are: args[0] is forward's first argument (Sequential's input)
        0 if shift is None and wrapped else shift,
        forward_nodes or {},
        positional=not ca and not rec.subgraph,
        wrapped=wrapped,
        own=own,
        also=tuple(o["input"] for o in rec.constant_origins.values() if "input" in o),
        renamed={k: v[0] for k, v in quantized.items()},
    )
    aot = _aot_call(rec, raw) if rec.aot else None
    if rec.aot:
        post_roles = _aot_roles(rec.post_grad_nodes, aot)
    if rec.subgraph and parent_nodes:
        post_roles.update(_operand_roles(rec.post_grad_nodes, parent_nodes, dyn, rec.subgraph))
    ca_made: dict[str, GraphNode] = {}
    if ca and not rec.aot:
        ca_roles, ca_made = _ca_inputs(dyn, rec.post_grad_nodes, aot_forwards or {})
        post_roles.update(ca_roles)
    constants = _constant_roles(rec, post_roles, {v[0]: v[1:] for v in quantized.values()})
    graph_nodes = _graph_nodes(rec.post_grad_nodes, post_roles, wrapped, _lowered_ops(kernels), own=own)
    graph_nodes = _with_forward_facts(graph_nodes, ca_made)
    if rec.graph_kind == "backward" and forward_nodes and not ca and any(n.module_stack for n in graph_nodes):
        # the ops torch tied to no forward op: filed by what they read (the addmm of a gradient and its sum); only
        # where torch recorded modules (a live capture): a TORCH_TRACE import's are all inferred, and said so, below
        ties = {n["name"]: n for n in rec.post_grad_nodes if n.get("gradient_sum") or n.get("forward_top_level")}
        graph_nodes = fill_backward(
            graph_nodes,
            list(forward_nodes.values()),
            top={k for k, n in ties.items() if n.get("forward_top_level")},
            sums={k for k, n in ties.items() if n.get("gradient_sum")},
        )
        b.top_level -= {n.name for n in graph_nodes if n.module_stack}
    if constants:
        constants.update(_lowered_constant_names(rec, kernels, graph_nodes, constants))
    fx_modules = {n.name: n.module_stack for n in graph_nodes}
    window = _window_for(rec, windows, starts)
    trigger = (
        _ca_trigger(window, trace, raw.t0_us, _key(rec))
        if ca and not rec.aot
        else _trigger(rec, window, trace, raw.t0_us, frame)
        if not rec.aot
        else _aot_trigger(aot, raw.t0_us)
    )
    restarts = [
        str(r) for md in trace.metadata("compilation_metrics", _key(rec))
        for r in md["compilation_metrics"].get("restart_reasons") or ()
    ]  # fmt: skip
    phases = (
        _phases(
            trace.events_between(window.start_us, window.end_us), raw.t0_us, window.start_us, window.end_us, restarts
        )
        if window
        else []
    )
    trigger = _handed_over(trigger, phases)
    graphs = {}
    if dyn is not None and rec.graph_kind != "backward" and not rec.subgraph:  # a branch has no dynamo graph of its own
        codes = trace.payloads("dynamo_output_graph", _key(rec))
        graphs["dynamo"] = Graph(
            nodes=_graph_nodes(dyn, dyn_roles, wrapped, own=own), code=str(codes[-1]) if codes else ""
        )
    post_codes = trace.payloads("inductor_post_grad_graph", _key(rec))
    graphs["post_grad"] = Graph(nodes=graph_nodes, code=str(post_codes[idx]) if 0 <= idx < len(post_codes) else "")
    guards = trace.payloads("dynamo_cpp_guards_str", _key(rec)) or trace.payloads("dynamo_guards", _key(rec))
    reasons = [readable_reasons(p) for p in trace.payloads("recompile_reasons", _key(rec)) if p]
    complete = rec.loaded is not False or rec.aot  # AOTInductor packages its module, never loading it here
    if not complete:
        diagnostics.append(
            Diagnostic(
                "compile_incomplete",
                f"{rec.compile_id} {rec.graph_kind} did not finish (interrupted, or it raised): its "
                f"{len(kernels)} kernel(s) were generated, but torch never loaded them",
            )
        )
    made = Compile(
        id=cid,
        compile_id=rec.compile_id,
        graph_kind=rec.graph_kind,
        trigger=trigger,
        frame=frame,
        recompile_reason="\n".join(r for r in reasons if r) if trigger.kind == "recompile" else "",
        phases=phases,
        graphs=graphs,
        fused_nodes=b.fused_nodes(rec.post_fusion, node_kernel, fx_modules),
        kernels=kernels,
        output_code=rec.output_code,
        fusion_decisions=b.decisions(),
        graph_inputs=rec.graph_inputs,
        graph_outputs=rec.graph_outputs,
        returned_outputs=rec.returned_outputs,
        saved_outputs=rec.saved_outputs,
        output_nodes=dict(rec.output_nodes),
        constant_names=constants,
        outputs=[GraphOutput(o["buffer"], o["node"], o["view"], o["role"]) for o in rec.outputs],
        # what names its outputs: the gradient of each of its forward's inputs, in order (report/lines.gradients_of)
        # (compiled autograd's: the parameter whose .grad each value it returns is)
        forward_inputs=forward_inputs(forward_nodes)
        if forward_nodes and not rec.subgraph
        else _ca_gradients(dyn, rec.post_grad_nodes, post_roles)
        if ca and not rec.aot
        else [],
        backward_compiled=_backward_compiled(rec, raw, window, windows, starts),
        from_cache=rec.cache_hit,
        autotune_mode=AutotuneMode(**rec.autotune_mode) if rec.autotune_mode else None,
        cpu_isa=rec.cpu_isa[0] if rec.cpu_isa else "",
        cpu_isa_bits=rec.cpu_isa[1] if rec.cpu_isa else None,
        custom_passes=[CustomPass(**p) for p in rec.custom_passes],
        subgraph=rec.subgraph,
        guards=str(guards[-1]) if guards else "",
        complete=complete,
        lowering_stack=_compiler_frames(rec.lowering_stack),
        fusion_stack=_compiler_frames(rec.fusion_stack),
        unrecorded=dict(rec.unrecorded),
        cudagraphs=cudagraphs_of(rec, trace.events),
    )
    if ca and not rec.aot:  # torch records no module for its ops: from the parameters they read, the gradients made
        made = infer_compile(made)
    made = finish_compile(made, view=not (view_later and missing(made)))
    _cudagraph_notes(made.cudagraphs, cid, diagnostics)  # once derived: a skip names what it can (skip_note)
    return made


def _constant_roles(
    rec: RawGraph, roles: dict[str, tuple[str, str]], quantized: Optional[dict[str, tuple[str, str]]] = None
) -> dict[str, str]:
    """``Compile.constant_names``: each graph constant of a frozen graph that its kernels may read (a ``get_attr`` of the
    post-grad graph, or one Inductor made while lowering: a C++ GEMM template's packed weight) traced to the user's
    parameters and buffers (``constants.constant_names``, over ``RawGraph.constant_origins``; ``roles``: the graph's
    inputs by name, those freezing made constants too; ``quantized``: ``{display name: (dtype, of)}`` of the PT2E
    weights and their scales and zero points, :func:`_quantized_weights`). Each ``get_attr`` node so traced, and not
    named already by the input whose name it keeps (``arg1_1``), takes its role and name in ``roles``."""
    if not rec.constant_origins:
        return {}
    quantized = quantized or {}
    traced = constant_names(
        rec.constant_origins,
        lambda name: roles.get(name, ("", "")),
        lambda name: quantized.get(roles.get(name, ("", ""))[1], ("", "")),
    )
    out = {}
    for n in rec.post_grad_nodes:
        if n["op"] == "get_attr" and n["target"] in traced:
            out[n["target"]] = traced[n["target"]][1]
            if not roles.get(n["name"], ("", ""))[1]:
                roles[n["name"]] = traced[n["target"]]
    out.update((c, shown) for c, (_, shown) in traced.items() if rec.constant_origins[c].get("lowered"))
    return out


#: The constants Inductor's oneDNN lowerings of a quantized op make from its arguments (``mkldnn_lowerings.py``:
#: ``add_tensor_constant(torch.tensor(x_scale), name="x_scale")``): the scale and zero point of its quantized input
#: ``x``, the op's first input
_LOWERED_QPARAMS = {"x_scale": "scale", "x_zp": "zero point"}


def _lowered_constant_names(
    rec: RawGraph, kernels: list[Kernel], nodes: list[GraphNode], names: dict[str, str]
) -> dict[str, str]:
    """Names of the constants Inductor made while lowering a quantized op, which no ``get_attr`` names and its kernels
    read (``RawGraph.memory``'s ``constants``), by the extern kernel that reads them (its post-grad node) and the name
    the lowering asked for (``allocate_non_dup_const_name`` adds ``_0``, ``_1`` where the name is taken): ``x_scale``,
    ``x_zp`` the scale and zero point of the op's quantized input, its first (``scale of quantize_per_tensor_1 (fc's
    input)``); ``_frozen_param6_0`` a copy of the constant ``_frozen_param6`` (``w_zp``, made int32: ``zero point of
    fc.weight (as int32)``); else ``a constant Inductor made for qconv_pointwise``."""
    made = [c for c in (rec.memory or {}).get("constants") or {} if c not in names]
    by_name = {n.name: n for n in nodes}
    out: dict[str, str] = {}
    for c in made:
        readers = [(k, a) for k in kernels if k.language == "extern" and k.launch for a in k.launch.args if a.name == c]
        if not readers:
            continue
        k, arg = readers[0]
        node = by_name.get(k.fx_nodes[0]) if k.fx_nodes else None
        asked = re.sub(r"_\d+$", "", c)
        if asked in names:  # a copy of a constant, where the dtype differs, in its own
            before = (rec.constant_origins.get(asked) or {}).get("dtype")
            out[c] = names[asked] + (f" (as {arg.dtype})" if arg.dtype and before and arg.dtype != before else "")
        elif asked in _LOWERED_QPARAMS and node is not None and node.inputs and node.inputs[0] in by_name:
            x = by_name[node.inputs[0]]
            whose = f"{x.module_stack[-1]}'s" if x.module_stack else f"{node.short_op}'s"
            out[c] = f"{_LOWERED_QPARAMS[asked]} of {x.name} ({whose} input)"
        else:
            op = str(k.metadata.get("callee") or k.name).replace("torch.ops.", "").split(".")
            out[c] = f"a constant Inductor made for {op[1] if len(op) > 1 else op[0]}"
    return out


def _operand_roles(
    nodes: list[dict],
    parent_nodes: dict[str, GraphNode],
    dyn: Optional[list[dict]] = None,
    subgraph: str = "",
) -> dict[str, tuple[str, str]]:
    """``(role, display name)`` of each input of a subgraph whose operand in the parent's call (``operand``, marked by
    :func:`_with_operands`) has a name shown there: ``cond(pred, tb, fb, (x, w))``'s branch takes ``x`` and ``w``, a
    loop body a parameter the parent took. An operand the parent computed has no input's name: it is named from the
    parent's dynamo graph (``dyn``) where that is known (:func:`_operand_names`): a value the user's code holds,
    ``y``, or a loop's carried value, which no graph names inside the loop."""
    out = {}
    named = _operand_names(nodes, parent_nodes, dyn, subgraph) if dyn else {}
    for n in nodes:
        op = parent_nodes.get(n.get("operand") or "") if n["op"] == "placeholder" else None
        if op is not None and op.display_name:
            out[n["name"]] = (op.role, op.display_name)
        elif n["name"] in named:
            out[n["name"]] = ("", named[n["name"]])
    return out


def _operand_names(
    nodes: list[dict], parent_nodes: dict[str, GraphNode], dyn: list[dict], subgraph: str
) -> dict[str, str]:
    """The display name of each input of ``subgraph`` (its post-grad placeholders, in order) by the parent's dynamo
    graph, whose higher-order call of the same kind, the k-th as the post-grad call is the k-th, passes its operands in
    the same order (left out where their counts differ). ``while_loop(cond, body, carried, captured)``: the
    ``carried`` values (as many as the call returns) exist, inside the loop, in no graph of torch's: named
    ``loop-carried value 0``, with the variable that holds the value after the loop where dynamo names one
    (``i`` of ``i, acc = while_loop(...)``); a captured operand (and a ``cond`` operand) by the variable of the user's
    code that holds it (``y``), where it is the user's (:func:`user_variable`: not pytree's ``child``)."""
    own = [n for n in nodes if n["op"] == "placeholder"]
    calls = [g for g in parent_nodes.values() if g.op == "call_function" and subgraph in g.inputs]
    if not own or len(calls) != 1:
        return {}
    call = calls[0]
    same = [g for g in parent_nodes.values() if g.op == "call_function" and g.target == call.target]
    dcalls = [d for d in dyn if d["op"] == "call_function" and d["target"] == call.target]
    if len(same) != len(dcalls):
        return {}
    dcall = dcalls[same.index(call)]
    by_name = {d["name"]: d for d in dyn}
    operands = _after_subgraphs(dcall["inputs"], lambda i: by_name.get(i, {}).get("op"))
    if len(operands) != len(own):
        return {}
    loop = call.target.endswith("while_loop")
    carried = len(call.shape) if loop and isinstance(call.shape, list) else 0
    if loop and not all(isinstance(s, list) for s in call.shape or ()):
        return {}
    held = {  # the variable that holds each result of the loop after it
        d["item"]: d["variable"]
        for d in dyn
        if d.get("item") is not None and d["inputs"] == [dcall["name"]] and user_variable(d)
    }
    out = {}
    for p, (n, operand) in enumerate(zip(own, operands)):
        if p < carried:
            after = f" ({held[p]} after the loop)" if p in held else ""
            out[n["name"]] = f"loop-carried value {p}{after}"
            continue
        d = by_name.get(operand) or {}
        if user_variable(d):
            out[n["name"]] = d["variable"]
    return out


def _after_subgraphs(inputs: list[str], op_of) -> list[str]:
    """A higher-order call's operands: its inputs after the last subgraph it names (a ``get_attr``)."""
    subs = [i for i, name in enumerate(inputs) if op_of(name) == "get_attr"]
    return list(inputs[subs[-1] + 1 :]) if subs else []


def user_variable(node: dict) -> str:
    r"""``GraphNode.variable`` of dynamo's graph node ``node`` (a raw node): the local variable dynamo named it after
    (``torchread.variable_name``) where that is the user's: where the innermost frame of its stack is the user's code
    (not torch's, nor the forward torch.fx generated for a GraphModule, ``<eval_with_key>.15``, whose locals FX named
    after its nodes: PT2E's ``linear``, ``quantize_per_tensor_default``) and that line assigns it (``y`` in ``y =
    torch.cond(...)``, ``acc`` in ``i, acc = while_loop(...)``); else ``""``: ``child``, a local of torch's pytree code
    that dynamo named a node after while inlining it, whose stack ends at the user's ``i, acc = loop(...)``.

    >>> at = '  File "t.py", line 5, in f\n    i, acc = loop(c, b, (x,))\n        ^^^^\n'
    >>> user_variable({"variable": "acc", "stack_trace": at}), user_variable({"variable": "child", "stack_trace": at})
    ('acc', '')
    """
    variable = node.get("variable") or ""
    frames = parse_stack_trace(node.get("stack_trace"))
    if not variable or not frames or not frames[-1].is_user or frames[-1].file.startswith("<eval_with_key>"):
        return ""
    target = re.match(r"\s*([^=]*?)\s*(?<![=!<>+\-*/%&|^@:])=(?!=)", frames[-1].code)
    return variable if target and variable in re.findall(r"[A-Za-z_]\w*", target.group(1)) else ""


def _backward_compiled(
    rec: RawGraph, raw: Raw, window: Optional[RawWindow], windows: list[RawWindow], starts: list[float]
) -> str:
    """``Compile.backward_compiled`` of a training forward: ``with_forward`` where a backward of its compile id began
    inside the forward's own compile window (AOT autograd compiled it at once), ``first_backward`` where it began in
    a window of its own (the lazy backward, at the first ``.backward()``), ``""`` where no backward was seen and in
    a TORCH_TRACE import (streamed, a forward is made before its backward is read: the whole import says the same)."""
    if rec.graph_kind != "forward" or rec.subgraph or window is None or raw.imported:  # a branch: its parent's say
        return ""
    for g in raw.graphs:
        if g.graph_kind == "backward" and g.compile_id == rec.compile_id and g.start_us >= rec.start_us:
            return "with_forward" if _window_for(g, windows, starts) is window else "first_backward"
    return ""


class CompileMaker:
    """The compiles of a capture's graphs, made one graph at a time in order (with their costs; before the
    steps that look at all of them): what :func:`_build` loops over, and what a streamed TORCH_TRACE import
    (``trace_stream.py``) calls as each graph is complete. A backward is made with its forward, the forward
    compile of its compile id that it is the how-manieth backward of (as ``finish.pair_backward`` pairs them);
    what the backward reads of it, its post-grad nodes, is held here until the backward comes (not the compile:
    its kernels, texts and scripts go once it is written). ``view_later``: as :func:`_compile`'s, for a maker whose
    compiles get their module paths inferred after (the streamed import)."""

    def __init__(
        self,
        raw: Raw,
        trace: _Trace,
        diagnostics: list,
        view_later: bool = False,
        cells: Optional[dict[str, Cell]] = None,
    ) -> None:
        self.raw, self.trace, self.diagnostics, self.view_later = raw, trace, diagnostics, view_later
        self.cells = cells or {}  # the notebook's cells (sources.cell_map): a resume function's line as the cell's
        self.ids: dict[str, int] = {}
        self.seen_of_cid: dict[str, int] = {}
        self.backs: dict[str, int] = {}
        # compile id -> the post-grad nodes of each forward, each let go once its backward came
        self.forwards: dict[str, list[Optional[dict[str, GraphNode]]]] = defaultdict(list)
        # a graph that calls subgraphs (RawGraph.subgraph_kernels) -> its post-grad nodes, which name their inputs
        self.parents: dict[int, dict[str, GraphNode]] = {}
        # the code dynamo traced (_frame_code) -> (id, trigger) of each forward or inference compile of it so far
        self.compiled: dict[tuple, list[tuple[str, Trigger]]] = defaultdict(list)
        # each training forward's post-grad nodes by its AOT id (``# AOT ID: ['0_forward']``), which name compiled
        # autograd's inputs
        self.aot_forwards: dict[str, dict[str, GraphNode]] = {}

    def make(self, rec: RawGraph, windows: list[RawWindow], starts: list[float]) -> Optional[Compile]:
        """The compile of ``rec`` (None for a graph that never reached the scheduler, e.g. a subgraph helper);
        ``windows`` sorted by start, and their ``starts``."""
        if not rec.post_fusion and not rec.output_code:
            return None
        base_id = f"{rec.compile_id} {rec.graph_kind}"
        self.ids[base_id] = n = self.ids.get(base_id, 0) + 1
        # the how-manieth graph of this compile id this is, which picks its post-grad code; torch logs none for a
        # subgraph (a torch.cond branch lowered inside its parent): it has none, and takes no other graph's
        idx = -1 if rec.subgraph else self.seen_of_cid.get(_key(rec), 0)
        if not rec.subgraph:
            self.seen_of_cid[_key(rec)] = idx + 1
        forward_nodes = None
        if rec.graph_kind == "backward":
            i = self.backs.get(rec.compile_id, 0)
            self.backs[rec.compile_id] = i + 1
            forwards = self.forwards.get(rec.compile_id) or []
            if i < len(forwards):
                forward_nodes, forwards[i] = forwards[i], None  # the i-th backward is the only one it pairs with
        compile = _compile(
            self.raw,
            rec,
            self.trace,
            self.diagnostics,
            base_id if n == 1 else f"{base_id} #{n}",
            idx,
            windows,
            starts,
            forward_nodes,
            self.view_later,
            self.parents.get(rec.parent_key) if rec.subgraph and rec.parent_key is not None else None,
            self.aot_forwards,
            self.cells,
        )
        if rec.subgraph_kernels:
            self.parents[rec.key] = _post_nodes(compile)
        compile = _with_costs(compile, rec, self.diagnostics)
        if not rec.subgraph:
            code = _frame_code(self.trace, _key(rec), compile.frame)
            compile = _fileless(self._after_reset(compile, code), str(code[0]) if len(code) > 1 else "")
        if compile.graph_kind == "forward":
            self.forwards[compile.compile_id].append(_post_nodes(compile))
            aot_id = _aot_forward_id(rec.output_code)
            if aot_id is not None and not self.raw.imported:  # (an import, streamed, keeps no forward it needs not)
                self.aot_forwards[aot_id] = self.forwards[compile.compile_id][-1]
        return compile

    def _after_reset(self, c: Compile, code: tuple) -> Compile:
        """``c``, a first call that came after a ``torch._dynamo.reset()`` of the user's, of code compiled before that
        reset in this capture, as what it is: compiled again because the reset made dynamo forget (``Trigger.kind``
        ``after_reset``; dynamo's own words, "first call", are true only for dynamo); a forward's backward compiled
        with it too. Keeps the forward and inference compiles of each code for the later ones."""
        t = c.trigger.time_us
        if t is None:
            return c
        if c.trigger.kind == "first_call":
            resets = [r for r in self.raw.resets if r["time_us"] - self.raw.t0_us <= t]
            at = resets[-1]["time_us"] - self.raw.t0_us if resets else None
            before = [(i, tr) for i, tr in self.compiled.get(code, ()) if at is not None and (tr.time_us or 0) < at]
            if before:
                earlier, trigger = before[-1]
                reason = rules.after_reset_reason(
                    c.frame, _frames(resets[-1]["user_stack"]), earlier, trigger.user_stack
                )
                if c.graph_kind == "backward":
                    reason += " (the backward graph was compiled together with the forward)"
                kind = "after_reset"
                trig = dataclasses.replace(c.trigger, kind=kind, reason=reason, summary=rules.trigger_summary(kind))
                c = dataclasses.replace(c, trigger=trig)
        if c.graph_kind != "backward":
            self.compiled[code].append((c.id, c.trigger))
        return c

    def waiting(self) -> int:
        """Forwards held for a backward that has not come."""
        return sum(n is not None for fs in self.forwards.values() for n in fs)


def _post_nodes(c: Optional[Compile]) -> dict[str, GraphNode]:
    post = c.graphs.get("post_grad") if c is not None else None
    return {n.name: n for n in post.nodes} if post is not None else {}


#: Recordings of one graph from which re-recording is worth a line in the diagnostics banner.
RERECORD_NOTE = 3


def _cudagraph_notes(graphs, cid: str, diagnostics: list):
    """``graphs``, and a diagnostic when CUDA graphs were skipped or re-recorded again and again."""
    if graphs is not None and graphs.skip_reason == ON_CPU:  # one line for every graph on the CPU, not one each
        said = next(
            (i for i, d in enumerate(diagnostics) if d.code == "cudagraph_skipped" and ON_CPU in d.message), None
        )
        ids = [*(diagnostics[said].detail.split(", ") if said is not None else []), cid]
        note = Diagnostic(
            "cudagraph_skipped",
            f'{", ".join(ids)}: mode="reduce-overhead" but CUDA graphs skipped: {ON_CPU}',
            ", ".join(ids),
        )
        if said is None:
            diagnostics.append(note)
        else:
            diagnostics[said] = note
    elif graphs is not None and graphs.skip_reason:
        diagnostics.append(
            Diagnostic("cudagraph_skipped", cudagraph_skip_message(cid, graphs.skip_note or graphs.skip_reason))
        )
    if graphs is not None and len(graphs.recordings) >= RERECORD_NOTE:
        total = sum(r.time_us or 0 for r in graphs.recordings)
        diagnostics.append(
            Diagnostic(
                "cudagraph_rerecorded",
                f"{cid}: the CUDA graph was recorded {len(graphs.recordings)} times ({total / 1000:.1f} ms recording): "
                "each new input shape or changed static input records it again",
            )
        )
    return graphs


def _graph_breaks(trace: _Trace) -> list[GraphBreak]:
    """The graph breaks dynamo logged, each once (by its cause and stack), with the compile ids of the frames it
    broke in (a recompile breaks again at the same place: ``1/0``, ``1/1``). Dynamo logs a break it cannot resume
    from twice, the break and then its giving up on the frame ("falling back to eager": the same text under another
    header, and more after it): one break, whose reason is the second (it says the frame ran eagerly)."""
    found: dict[tuple, list] = {}
    for cid, payload, _ in trace.by_kind.get("dynamo_graph_break_reason", []):
        reason, stack = parse_graph_break(str(payload or ""))
        # from the user's outermost frame: the launcher's (inductor-lens run, runpy, a notebook's kernel) left out
        stack = stack[next((i for i, f in enumerate(stack) if f.is_user), 0) :]
        where = tuple((f.file, f.line) for f in stack)
        key, fallback = (reason, where), "falling back to eager" in reason.partition("\n")[0]
        if fallback:  # the same break again (its text under another header, and more after it): one break
            body = _body(reason)
            key = next((k for k in found if k[1] == where and _body(k[0]) and body.startswith(_body(k[0]))), key)
        entry = found.setdefault(key, [reason, stack, []])
        if fallback:
            entry[0] = reason
        cid = _base_cid(str(cid or ""))
        if cid and cid not in entry[2]:
            entry[2].append(cid)
    # one break per cause and place, as torch's log tells duplicates (``graph_break_dup_warning_checker``: the break's
    # type and its frames' places): the optimizer's ``graph_break()`` met in two frames (``1/0``, ``2/0``) is one
    # break, though the bytecode its reason's header names differs (``CALL``, ``CALL_FUNCTION_EX``)
    merged: dict[tuple, list] = {}
    for key, (r, st, ids) in found.items():
        entry = merged.setdefault((rules.break_summary(r), key[1]) if key[1] else key, [r, st, []])
        entry[2] += [i for i in ids if i not in entry[2]]
    return [GraphBreak(reason=r, user_stack=st, compile_ids=ids) for r, st, ids in merged.values()]


def _body(reason: str) -> str:
    """A graph break's text without torch's header line ("Encountered graph break when attempting to trace ...:")."""
    head, _, body = reason.partition("\n")
    return body.strip() if head.rstrip().endswith(":") else ""


def _user_files(compiles: list[Compile], others: list[list[Frame]]) -> list[str]:
    """Every file that a user frame of the report points into, in order of first appearance."""
    stacks: list[list[Frame]] = list(others)
    for c in compiles:
        stacks.append(c.trigger.user_stack)
        for g in c.graphs.values():
            stacks += [n.user_stack for n in g.nodes]
        for k in c.kernels:
            stacks += k.user_stack
    return list(dict.fromkeys(f.file for s in stacks for f in s if f.is_user))


def _torch_path(file: str) -> str:
    """``torch/nn/modules/container.py`` for a file of an installed package (after its ``site-packages/``), else
    the file as it is."""
    f = file.replace("\\", "/")
    cut = max(f.rfind("/site-packages/"), f.rfind("/dist-packages/"))
    return f[cut + len("/site-packages/") :] if cut >= 0 else file


def _skipped_calls(raw: Raw) -> list[Diagnostic]:
    """A diagnostic for each compiled call that ran eagerly because dynamo skipped its frame
    (``adapter._install_skip_hook``): ``Module._call_impl`` skipped counts only with the module's forward."""
    out = []
    for s in raw.skipped_calls:
        if s.get("compiled"):
            continue  # dynamo traced a frame inside it (torch.compile(model): the user's forward) and compiled that
        via_module = s.get("module", False)
        shown = s["forward"] or s
        line = rules.stack_line_text(_frames(s["user_stack"]))
        message = (
            f"dynamo skipped the compiled call{' at ' + line if line else ''}: it would not trace {shown['function']} "
            f"({_torch_path(shown['file'])}{':' + str(shown['line']) if shown['line'] else ''}): "
            f'"{shown["reason"].rstrip(".")}", so the call ran '
            "eagerly and nothing of it was compiled"
        )
        if via_module:
            message += (
                ". Module.compile() compiles torch's Module._call_impl, which dynamo skips, then the module's forward, "
                "skipped too where it is torch's own (nn.Sequential, nn.Linear...): call torch.compile(module) "
                "instead (pytorch/pytorch#150915)"
            )
        out.append(Diagnostic("call_skipped", message))
    return out


def _nothing_compiled(
    raw: Raw, calls: list[CompileCall], diagnostics: Sequence[Diagnostic] = ()
) -> Optional[Diagnostic]:
    if raw.windows and any(d.code == "compile_raised" for d in diagnostics):
        return None  # dynamo raised what it met tracing to the user's code: compile_raised says what (and why nothing)
    if raw.windows:
        if all(c.backend == "inductor" for c in calls):
            return Diagnostic(
                "nothing_compiled",
                "dynamo ran but Inductor compiled no graph (nothing to compile in "
                "the traced frames, or they were skipped)",
            )
        return None
    if calls:
        message = (
            "torch.compile() was called but the compiled function never ran inside the capture: "
            "torch.compile() only wraps the function; dynamo and Inductor run at its first call"
        )
        generate = [c["target"] for c in raw.compile_calls if c.get("has_generate")]
        if generate:
            message += (
                f". If you called .generate() on the compiled {generate[0]}: generate() belongs to the "
                "original model, and it calls that model's forward uncompiled. Compile the forward "
                "instead (model.forward = torch.compile(model.forward), or model.compile()), then call "
                "model.generate(...)"
            )
        return Diagnostic("never_ran", message)
    return Diagnostic(
        "nothing_compiled",
        "nothing was compiled inside the capture: no torch.compile()d function "
        "was called in it (or every call found its code already compiled before the capture, with "
        "reset=False)",
    )


def _dynamo_state(raw: Raw) -> list[Diagnostic]:
    """What the capture's start did to the functions dynamo had compiled before it (``Raw.dynamo_before``): reset
    (``dynamo_reset``: they compile again at their next call, also after the capture) or kept (``no_reset``: a call
    that finds one of their compiles is not recorded); nothing where dynamo had compiled nothing (a fresh process)."""
    before = raw.dynamo_before or {}
    functions = before.get("functions") or []
    if not functions:
        return []
    state = "reset" if before.get("state") == "reset" else "kept"
    names = [f"{name}() ({file}:{line})" for name, file, line in functions]
    return [Diagnostic("dynamo_reset" if state == "reset" else "no_reset", rules.dynamo_state_text(state, names))]


def _fileless(c: Compile, file: str) -> Compile:
    """``c``, a compile of code with no file (``file``, the traced frame's: ``<string>``, a model class defined
    through ``exec()``), its fused nodes with FX ops and no frame of the user's saying so (``rules.no_file_reason``):
    torch records an empty stack trace for code with no file, so they are not ops of torch's own code
    (``rules.INSIDE_TORCH``), and the line that built their module did not run them (``lines.kernel_keys``)."""
    if not rules.fileless(file):
        return c
    why = rules.no_file_reason(file)
    fused = [
        dataclasses.replace(n, no_line_reason=why)
        if n.fx_nodes
        and n.no_line_reason in ("", rules.INSIDE_TORCH)
        and not any(f.is_user for stack in n.user_stack for f in stack)
        else n
        for n in c.fused_nodes
    ]
    return dataclasses.replace(c, fused_nodes=fused)


def _no_provenance(c: Compile) -> Compile:
    """``c`` imported from a TORCH_TRACE log, its fused nodes with no FX op saying why (``rules.NO_PROVENANCE``; for
    a graph read from torch's caches, ``rules.NO_PROVENANCE_CACHED``)."""
    why = rules.NO_PROVENANCE_CACHED if c.from_cache else rules.NO_PROVENANCE
    fused = [
        dataclasses.replace(n, no_line_reason=why) if not n.fx_nodes and not n.user_lines else n for n in c.fused_nodes
    ]
    return dataclasses.replace(c, fused_nodes=fused)


def build_report(
    raw: Raw,
    torch_version: str,
    title: str = "",
    cells: Optional[dict[str, Cell]] = None,
    *,
    origin: str = "capture",
    rank: Optional[int] = _FROM_ENV,
    world_size: Optional[int] = _FROM_ENV,
) -> Report:
    """The report of one capture. ``cells``: the notebook's cells (default: read from the running IPython);
    frames in a cell are named ``cell [N]`` and its text goes into ``source_files``. ``rank``/``world_size``
    default to ``RANK``/``WORLD_SIZE`` (set by torchrun)."""
    if rank is _FROM_ENV:
        rank = _env_int("RANK") if _env_int("WORLD_SIZE") is not None else None
    if world_size is _FROM_ENV:
        world_size = _env_int("WORLD_SIZE") if rank is not None else None
    cells = cell_map() if cells is None else cells
    report = dataclasses.replace(
        _build(raw, torch_version, title, cells), origin=origin, rank=rank, world_size=world_size
    )
    report = dataclasses.replace(
        report, compiles=link_branches(report.compiles)
    )  # a torch.cond's links to its branches
    if origin == "trace":  # a kernel with no FX op in a log: torch logged no provenance map for it
        report = dataclasses.replace(report, compiles=[_no_provenance(c) for c in report.compiles])
    if cells:
        report = _localized(report, cells)
    files = _user_files(
        report.compiles, [b.user_stack for b in report.graph_breaks] + [c.user_stack for c in report.compile_calls]
    )
    report = dataclasses.replace(report, source_files=read_sources(files, cells))
    try:
        report = mark_built(report)
    except Exception as e:  # the map of where modules were built is an extra: the report stands without it
        message = f"capture: the lines that built the modules could not be worked out ({type(e).__name__}: {e})"
        report = dataclasses.replace(report, diagnostics=[*report.diagnostics, Diagnostic("build_failed", message)])
    # the panel's scripts as `repro` writes them: with what each argument holds (a TORCH_TRACE import keeps the ones it
    # built compile by compile: its streamed form, which never holds the whole report, writes the same)
    return with_scripts(report) if origin != "trace" else report


def _cache_notes(raw: Raw, compiles: list[Compile]) -> list[Diagnostic]:
    """What the caches the capture turned off change beyond hiding nothing: compiled autograd traces a backward
    that holds a forward's compiled backward otherwise where the AOT-autograd cache hits (the forward's entry read from
    the cache), so the backward a warm-cache run of the script compiles and runs is another, its results equal to the
    last bits (a new user's trial, nu19 D1: a cold-cache run is the capture's exactly)."""
    if "enable_autograd_cache" not in raw.caches_off or not any(_compiled_autograd(c.compile_id) for c in compiles):
        return []
    return [
        Diagnostic(
            "ca_cache_off",
            "compiled autograd ran while the capture kept torch's AOT-autograd cache off (to see every compile): what "
            "it shows is what a run with a cold cache compiles. Where that cache hits (a warm cache: the script run "
            "before), torch's compiled autograd traces another backward graph, with other kernels and results equal "
            "to the last bits",
        )
    ]


def _build(raw: Raw, torch_version: str, title: str, cells: Optional[dict[str, Cell]] = None) -> Report:
    trace = _Trace(raw.trace)
    diagnostics = [Diagnostic(code, message, detail) for code, message, detail in raw.diagnostics]
    diagnostics += trace.diagnostics()
    compiles: list[Compile] = []
    windows = sorted(raw.windows, key=lambda w: w.start_us)
    starts = [w.start_us for w in windows]
    facts: list[Optional[dict]] = []
    maker = CompileMaker(raw, trace, diagnostics, cells=cells)
    for rec in _with_aot_code(_with_subgraph_code(raw.graphs), trace):
        compile = maker.make(rec, windows, starts)
        if compile is not None:
            compiles.append(compile)
            facts.append(rec.memory)
    compiles = _with_memory(compiles, facts, raw.device, diagnostics)
    compiles = mark_same_graphs(compiles)
    compiles = _thrown_away(compiles, trace, raw)
    breaks = _graph_breaks(trace)
    calls = [
        CompileCall(
            target=c["target"],
            backend=c["backend"],
            user_stack=_frames(c["user_stack"]),
            time_us=round(c["time_us"] - raw.t0_us, 1),
            duration_us=c.get("duration_us"),
        )
        for c in raw.compile_calls
    ]
    for c in calls:
        if c.backend != "inductor":
            diagnostics.append(
                Diagnostic(
                    "other_backend",
                    f"torch.compile({c.target}) used backend {c.backend!r}: only "
                    "the inductor backend generates kernels, so there is no fusion or kernel of "
                    "it to show",
                )
            )
    diagnostics += _gave_up(trace, raw.raised, raw.compile_calls)
    diagnostics += _cache_notes(raw, compiles)
    skipped = _skipped_calls(raw)
    diagnostics += skipped
    if not compiles and not skipped:  # a skipped call says why nothing compiled, and where
        note = _nothing_compiled(raw, calls, diagnostics)
        if note:
            diagnostics.append(note)
    diagnostics += _dynamo_state(raw)  # last: what went wrong comes first (the banner's line is the first one's)
    return Report(
        torch_version=torch_version,
        device=raw.device,
        compiles=compiles,
        graph_breaks=breaks,
        diagnostics=diagnostics,
        compile_calls=calls,
        resets=[
            DynamoReset(user_stack=_frames(r["user_stack"]), time_us=round(r["time_us"] - raw.t0_us, 1))
            for r in raw.resets
        ],
        empty_frames=_empty_frames(trace, {c.compile_id for c in compiles}, raw.raised, raw.windows, raw.t0_us),
        recompile_limits=_recompile_limits(trace, raw.t0_us),
        title=title,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        start_wall_us=round(raw.t0_us, 1) if raw.t0_us > 0 else None,  # now_us(): wall clock, like torch's events
        capture_start=CaptureStart(**raw.start) if raw.start else None,
    )


class _Launches:
    """``Kernel.launch`` of each kernel of one compile, read from its output code (``launch.py``); a call that
    cannot be read leaves the kernel without a launch and says so once, never failing the report."""

    def __init__(self, rec, diagnostics: list, device: str = "cpu", torch: str = "") -> None:
        self.rec, self.diagnostics, self.failed = rec, diagnostics, False
        self.device, self.torch = device, torch
        self.bounds_code = rec.output_code
        try:
            self.layouts = OutputCodeLayouts(rec.output_code)
            self.layouts.scope_calls(rec.subgraph or "")  # a kernel's call in this graph's own function
            self.arg_types = cpp_arg_types(rec.output_code)
            # an input the output code gives no dtype (a subgraph's: get_args() holds only its parent's) has its
            # post-grad placeholder's; one it gives no layout at all (torch 2.15 asserts no size of a subgraph's
            # input) its placeholder's shape and dtype, its strides unknown
            for n in rec.post_grad_nodes:
                if n["op"] != "placeholder" or not n.get("dtype"):
                    continue
                lay = self.layouts.layouts.get(n["name"])
                if lay is None and rec.subgraph and isinstance(n.get("shape"), list):
                    self.layouts.layouts[n["name"]] = {"shape": n["shape"], "stride": None, "dtype": n["dtype"]}
                elif lay is not None and not lay.get("dtype"):
                    lay["dtype"] = n["dtype"]
        except Exception as e:
            self.layouts = None
            self._fail(e)
        if rec.aot:  # AOTInductor's package launches its kernels from C++ (its trigger says so): none is read
            self.layouts = None  # (its C++ declarations, ``void cpp_fused_0(const float* in_ptr0)``, are no calls)
        elif cpp_wrapper_code(rec.output_code):  # C++ launches its kernels: none is read
            self.layouts = None
            diagnostics.append(
                Diagnostic(
                    "launch_unread",
                    f"{rec.compile_id} {rec.graph_kind} was written with the C++ wrapper (cpp_wrapper=True): the "
                    "launches of its kernels are C++ calls, which inductor_lens does not read, so its kernels have "
                    "no launch table and no reproducer",
                )
            )

    def _fail(self, e: Exception) -> None:
        if not self.failed:
            self.failed = True
            self.diagnostics.append(
                Diagnostic(
                    "hook_failed",
                    f"{self.rec.compile_id} {self.rec.graph_kind}: kernel launches could not be read from the "
                    f"output code ({type(e).__name__}: {e})",
                )
            )

    def script(self, k: Kernel, order: list[Kernel], aliases: dict[str, str]) -> Kernel:
        """``k`` with its reproducer (``analysis.reproducer``) when one can be written (``order``: its compile's
        kernels as the output code launches them, for what the launches before it touched; ``aliases``: its
        ``# reuse`` lines)."""
        if k.launch is None:
            return k
        try:
            text = kernel_script(
                k,
                compile_id=f"{self.rec.compile_id} {self.rec.graph_kind}",
                device=self.device,
                torch_version=self.torch,
                order=order,
                aliases=aliases,
                cpu_isa=self.rec.cpu_isa,
                bounds_code=self.bounds_code,
            )
        except ReproducerError as e:
            return dataclasses.replace(k, reproducer_note=str(e))
        except Exception as e:
            self._fail(e)
            return k
        return dataclasses.replace(k, reproducer=text)

    def of(self, name: str, language: str, source: str, buffer: Optional[str] = None):
        if self.layouts is None or not self.rec.output_code:
            return None
        try:
            return kernel_launch(
                self.layouts,
                name,
                language,
                source,
                buffer=buffer,
                runtime=self.rec.runtime.get(name),
                arg_types=self.arg_types.get(name),
            )
        except Exception as e:
            self._fail(e)
            return None


def _kernel_ir(plain: dict) -> KernelIR:
    """``Kernel.ir`` from what the capture read (``torchread.kernel_ir``), with each stage's source lines."""
    lines = {}
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        mapped = ir_source_lines(stage, plain.get(stage))
        if mapped is not None:
            lines[stage] = mapped
    return KernelIR(**{k: v for k, v in plain.items() if k in KernelIR.__dataclass_fields__}, source_lines=lines)
