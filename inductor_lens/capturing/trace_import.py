"""Rebuild reports from TORCH_TRACE logs: ``inductor_lens.load_trace(path)``.

The log holds the same structured-trace records that the in-process capture reads from the
``torch.__trace`` logger (``Raw.trace``), so the report is made by the same builder (``build.py``).
What the in-process hooks add and a log cannot hold is derived where possible:

- graph kinds: AOT logs each forward or inference graph (``aot_forward_graph``/``aot_inference_graph``)
  before Inductor compiles it, so an output code with such a graph waiting is that graph, any other of a
  training frame a backward (DDP splits a frame into several graphs, each with its own); a backward compiled
  after dynamo finished was lazy;
- kernels: every kernel defined in the output code, in launch order from ``call()``, with their exact source;
- kernel <-> post-grad node links: from torch's provenance map (``INDUCTOR_PROVENANCE=1``), else from the comments
  Inductor writes in the output code (a C++ kernel's source-node mapping, the node named above an extern call);
- fused nodes: one per kernel launch, holding the post-grad nodes of that kernel (the provenance map);
  edges between them follow the post-grad graph.

and otherwise listed as diagnostics: pre-fusion nodes, refused fusions, compiler stacks, module paths.
"""

from __future__ import annotations

import dataclasses
import gc
import os
from typing import Any, Callable, Iterable, Optional, Union

from ..report.finish import infer_report_modules, link_branches
from ..report.lines import mark_rollups
from ..report.model import Diagnostic, Report
from ..report.rules import TRACE_UNRECORDED
from .artifacts import wanted
from .build import _base_cid, _cid, _dynamo_graph, _key, _trace_key, build_report
from .parse import parse_output_code_kernels, triton_source_metadata
from .raw import RESETS, Raw, RawGraph, RawKernel, RawSchedNode, RawWindow, loads_payload
from .stacks import logged_user_frames
from .trace_graph import (
    call_launches,
    callee_op,
    calls_op,
    definition_nodes,
    extern_op_nodes,
    input_mutations,
    nested_graph_text,
    parse_readable_graph,
    subgraph_defs,
)
from .trace_memory import imported_memory
from .trace_read import TraceError, TraceLog, TraceReader, find_logs

__all__ = ["load_trace", "report_from_log", "TraceError"]

_NOT_IN_A_TRACE = [
    (
        "trace_no_pre_fusion",
        "a TORCH_TRACE log does not hold the scheduler nodes before fusion, nor the fusions "
        "Inductor refused: those views are empty (capture in process to see them)",
    ),
    ("trace_no_compiler_stack", "a TORCH_TRACE log does not hold the compiler's call stack at each kernel"),
    (
        "trace_no_module_paths",
        "a TORCH_TRACE log prints graphs without their nn.Module paths: they were inferred from the parameters "
        "each op reads and the ops around it (Compile.modules_inferred), never deeper than that shows",
    ),
    (
        "trace_fused_from_provenance",
        "fused nodes were derived from the output code: one per kernel launch, with "
        "the post-grad nodes that torch's provenance map assigns to that kernel",
    ),
]


_IDS = frozenset({"frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "has_payload"})


def _kind(md: dict) -> Optional[str]:
    first = next(iter(md), None)  # torch writes the record's kind first
    if first is not None and first not in _IDS:
        return str(md["artifact"].get("name", "artifact")) if first == "artifact" else first
    for k in md:
        if k not in ("frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "has_payload"):
            if k == "artifact":
                return str(md["artifact"].get("name", "artifact"))
            return k
    return None


class _RawFromTrace:
    """Walks the records of one log in order and fills a :class:`Raw` as the in-process hooks would. Records
    are consumed as they stream in: only what the report uses is kept (``artifacts.READERS``' kinds for the
    builder, the parsed graphs and output code of each compile), so memory follows the report, not the log."""

    def __init__(self, records: Iterable[tuple[dict, Any, float]]):
        self.records = records
        self.raw = Raw(t0_us=0.0, imported=True)
        self.count = 0
        self.parsed: dict[tuple, list[dict]] = {}
        self.post_grad_text: dict[str, str] = {}  # compile id -> latest post-grad graph text
        self.has_forward: set[str] = set()  # compile ids with an aot_forward_graph (training)
        self.pending_aot: dict[str, list] = {}  # AOT graphs logged, not yet compiled: forward/inference
        self.graphs_of: dict[str, list[RawGraph]] = {}
        self.dynamo_done: dict[str, float] = {}  # compile id -> time dynamo finished
        self.open_windows: dict[tuple, RawWindow] = {}
        self.stacks: dict[str, list[tuple]] = {}
        self.strings: dict[int, str] = {}
        self.prov_nodes: dict[int, dict] = {}  # graph key -> {kernel:handle -> post-grad nodes}
        self.prov_traces: dict[int, dict] = {}  # graph key -> {kernel:handle -> stack traces}
        self._stacks_of: dict[str, dict[str, str]] = {}  # compile id -> its dynamo nodes' stack traces
        self.resets = 0  # the torch._dynamo.reset() calls seen so far (compile ids started again at 0/0)
        self.started: set[str] = set()  # compile ids dynamo started since the last

    def _reset_seen(self, md: dict, kind: Optional[str]) -> dict:
        """``md``, with the resets seen before it (``raw.RESETS``, as a capture keeps them): a log says nothing of a
        ``torch._dynamo.reset()``, but dynamo starting a compile id it already started (not a restart of it) is one.
        What was kept of each compile id until then is another compile's: let go."""
        if kind == "dynamo_start" and not md.get("attempt"):
            cid = _cid(md)
            if cid in self.started:
                self.resets += 1
                self.started = set()
                for held in (self.post_grad_text, self.pending_aot, self.graphs_of, self.dynamo_done, self.stacks):
                    held.clear()
                self.has_forward = set()
            if cid:
                self.started.add(cid)
        return {**md, RESETS: self.resets} if self.resets else md

    def run(self) -> Raw:
        first = 0.0
        keep = self.raw.trace.append
        for md, payload, t in self.records:
            self.count += 1
            if t and not first:
                first = t
            kind = _kind(md)
            md = self._reset_seen(md, kind)
            if wanted(md):  # what the builder reads (artifacts.READERS); the rest is consumed here or unused
                keep((md, payload))
            cid = _cid(md)
            cid = _base_cid(cid) if cid else cid  # the in-process capture names compiles without the attempt
            handler = getattr(self, "_on_" + (kind or ""), None)
            if handler is not None:
                handler(md, payload, t, cid)
        self.raw.t0_us = first
        for rec in self.raw.graphs:
            self._kernels(rec)
        return self.raw

    # -- records ----------------------------------------------------------------------------
    def _on_str(self, md, payload, t, cid) -> None:
        try:
            name, idx = md["str"]
            self.strings[int(idx)] = str(name)
        except (TypeError, ValueError, KeyError):
            pass

    def _on_dynamo_start(self, md, payload, t, cid) -> None:
        frames = []
        for fr in md["dynamo_start"].get("stack", []):
            f = fr.get("filename")
            f = self.strings.get(f, str(f)) if isinstance(f, int) else str(f)
            frames.append((f, int(fr.get("line", 0) or 0), str(fr.get("name", "")), str(fr.get("loc", "") or "")))
        if cid:  # the user's frames, as the capture takes them where dynamo starts (not torch's, not a library's)
            self.stacks[_base_cid(cid)] = logged_user_frames(frames)

    def _on_chromium_event(self, md, payload, t, cid) -> None:
        ev = loads_payload(payload)
        if not isinstance(ev, dict):
            return
        name, ph = ev.get("name"), ev.get("ph")
        ecid = str((ev.get("args") or {}).get("compile_id") or "")
        ts = float(ev.get("ts", t) or t)
        if name == "dynamo" and ecid:
            if ph == "B":
                w = RawWindow(trigger="DYNAMO", compile_id=ecid, start_us=ts)
                self.open_windows[("dynamo", ecid)] = w
                self.raw.windows.append(w)
            elif ph == "E":
                w = self.open_windows.pop(("dynamo", ecid), None)
                if w is not None:
                    w.end_us = ts
                    w.user_stack = self.stacks.get(_base_cid(ecid), [])
                self.dynamo_done[_base_cid(ecid)] = ts
        elif name and "bw_compiler" in str(name) and ecid and _base_cid(ecid) in self.dynamo_done:
            # a backward compiled after dynamo finished this frame: the lazy backward, at .backward()
            if ph == "B":
                w = RawWindow(trigger="LAZY_BACKWARD", compile_id=ecid, start_us=ts)
                self.open_windows[("bw", ecid)] = w
                self.raw.windows.append(w)
            elif ph == "E":
                w = self.open_windows.pop(("bw", ecid), None)
                if w is not None:
                    w.end_us = ts

    def _on_aot_forward_graph(self, md, payload, t, cid) -> None:
        if cid:  # AOT logs each forward (or inference) graph before Inductor compiles it
            self.has_forward.add(_base_cid(cid))
            self.pending_aot.setdefault(_base_cid(cid), []).append("forward")

    def _on_aot_inference_graph(self, md, payload, t, cid) -> None:
        if cid:
            self.pending_aot.setdefault(_base_cid(cid), []).append("inference")

    def _on_aot_joint_graph(self, md, payload, t, cid) -> None:
        if cid:
            self.has_forward.add(_base_cid(cid))

    def _graph(self, text: str, dynamo: bool = False) -> list[dict]:
        """The nodes of a printed graph, parsed once per distinct text (recompiles and repeated regions log the
        same graph again): the node dicts are shared, never changed after this."""
        key = (text, dynamo)
        nodes = self.parsed.get(key)
        if nodes is None:
            nodes = parse_readable_graph(text)
            if dynamo:
                for n in nodes:
                    if n["op"] == "output":  # dynamo's output node carries no value (as in process)
                        n["shape"] = n["dtype"] = None
            self.parsed[key] = nodes
        return list(nodes)

    def _on_dynamo_output_graph(self, md, payload, t, cid) -> None:
        if cid and payload:
            self.raw.dynamo_graphs[_trace_key(cid, self.resets)] = self._graph(payload, dynamo=True)

    def _on_inductor_post_grad_graph(self, md, payload, t, cid) -> None:
        if cid:
            self.post_grad_text[cid] = payload or ""

    def _on_inductor_output_code(self, md, payload, t, cid) -> None:
        if not cid:
            return
        base = _base_cid(cid)
        done = self.graphs_of.setdefault(base, [])
        pending = self.pending_aot.get(base)
        if pending:  # the graph AOT logged last for this frame: a forward or an inference graph (DDP splits a
            kind = pending.pop(0)  # frame into several, each with its own AOT graphs)
        elif base in self.has_forward or done:
            kind = "backward"  # no AOT graph waiting: the backward of a forward compiled before
        else:
            kind = "inference"
        if str(cid).startswith("!"):  # compiled autograd's graph is the whole backward (AOT logs inference)
            kind = "backward"
        rec = RawGraph(key=len(self.raw.graphs), compile_id=cid, graph_kind=kind, start_us=t, resets=self.resets)
        rec.unrecorded = dict(TRACE_UNRECORDED)  # no lowering, no scheduler nodes before fusion, no compiler stacks
        rec.output_code = payload or ""
        text = self.post_grad_text.pop(cid, "")
        rec.post_grad_nodes = self._graph(text) if text else []
        rec.graph_inputs = [n["name"] for n in rec.post_grad_nodes if n["op"] == "placeholder"]
        out = [n for n in rec.post_grad_nodes if n["op"] == "output"]
        rec.graph_outputs = list(out[0]["inputs"]) if out else []
        if not text:
            self.raw.diag("trace_incomplete", f"{cid} {kind}: the log has no post-grad graph for this output code")
        done.append(rec)
        self.raw.graphs.append(rec)
        for name in subgraph_defs(rec.output_code):  # a repeated region's code, in this graph's (nu30 D2)
            self._subgraph(rec, name, text)
        if "async_compile.triton(" in rec.output_code:
            self.raw.device = "cuda"

    def _subgraph(self, parent: RawGraph, name: str, text: str) -> None:
        """A subgraph of ``parent`` that its output code defines as a function (``def repeated_subgraph0(args)``): a
        graph of its own, as the capture records it (``RawGraph.subgraph``), its nodes from the submodule of the
        parent's printed post-grad graph, its inputs named as the code names them (``repeated_subgraph0_arg1_1``), its
        launches those of its function (:meth:`_kernels`). Not in ``graphs_of``: the records that follow (provenance)
        are the parent's."""
        sub = nested_graph_text(text, name)
        rec = RawGraph(
            key=len(self.raw.graphs),
            compile_id=parent.compile_id,
            graph_kind=parent.graph_kind,
            start_us=parent.start_us,
            resets=parent.resets,
        )
        rec.subgraph, rec.parent_key = name, parent.key
        rec.unrecorded = dict(parent.unrecorded)
        rec.output_code = parent.output_code
        rec.post_grad_nodes = self._graph(sub) if sub else []
        rec.graph_inputs = [f"{name}_{n['name']}" for n in rec.post_grad_nodes if n["op"] == "placeholder"]
        out = [n for n in rec.post_grad_nodes if n["op"] == "output"]
        rec.graph_outputs = list(out[0]["inputs"]) if out else []
        if not sub:
            self.raw.diag(
                "trace_incomplete",
                f"{parent.compile_id} {parent.graph_kind}: the log's post-grad graph has no submodule {name}, the "
                "subgraph its output code defines: its kernels are listed without their ops",
            )
        self.raw.graphs.append(rec)

    def _on_fx_graph_cache_hit(self, md, payload, t, cid) -> None:
        """Logged after the output code of the graph Inductor's FX-graph cache gave back (that output code is the
        cached one's: nothing was lowered, fused or generated for it in this run)."""
        rec = self._latest(cid)
        if rec is not None:
            self._cached(rec, "fx_graph")

    def _on_aotautograd_cache_hit(self, md, payload, t, cid) -> None:
        """Logged once AOT autograd's cache gave back a compile id's graphs (a forward and its backward, or an
        inference graph), after their output codes, each of which Inductor's FX-graph cache gave back (its hit
        logged first): those graphs, the latest of the compile id back to one that was not such a hit."""
        for rec in reversed(self.graphs_of.get(_base_cid(cid), []) if cid else []):
            if rec.cache_hit != "fx_graph":
                break
            self._cached(rec, "aot_autograd")

    def _cached(self, rec: RawGraph, how: str) -> None:
        rec.cache_hit = how

    def _latest(self, cid: Optional[str]) -> Optional[RawGraph]:
        graphs = self.graphs_of.get(_base_cid(cid)) if cid else None
        return graphs[-1] if graphs else None

    def _on_inductor_provenance_tracking_node_mappings(self, md, payload, t, cid) -> None:
        """Logged after the output code of its graph: ``{cppCodeToPost|tritonCodeToPost: {name:handle: [nodes]}}``."""
        rec, data = self._latest(cid), loads_payload(payload)
        if rec is not None and isinstance(data, dict):
            for key, value in data.items():
                if key.endswith("CodeToPost") and isinstance(value, dict):
                    self.prov_nodes.setdefault(rec.key, {}).update({k: list(v) for k, v in value.items()})

    def _on_inductor_provenance_tracking_kernel_stack_traces(self, md, payload, t, cid) -> None:
        rec, data = self._latest(cid), loads_payload(payload)
        if rec is not None and isinstance(data, dict):
            self.prov_traces.setdefault(rec.key, {}).update(
                {k: list(v) for k, v in data.items() if isinstance(v, list)}
            )

    # -- kernels and fused nodes ----------------------------------------------------------------
    def _kernels(self, rec: RawGraph) -> None:
        code_kernels = parse_output_code_kernels(rec.output_code)
        subs = set() if rec.subgraph else set(subgraph_defs(rec.output_code))
        launches = call_launches(
            rec.output_code, set(code_kernels), f"\ndef {rec.subgraph}(" if rec.subgraph else "", subs
        )
        # a subgraph's provenance is in its parent's maps (one output code, one log record)
        own = rec.parent_key if rec.subgraph and rec.parent_key is not None else rec.key
        prov_nodes, prov_traces = self.prov_nodes.get(own, {}), self.prov_traces.get(own, {})
        by_name = {n["name"]: n for n in rec.post_grad_nodes}
        by_op: dict[str, list[str]] = {}  # an extern's op -> the post-grad nodes calling it, in graph order
        by_stack: dict[str, list[str]] = {}  # a stack trace -> the post-grad nodes on it, in graph order
        for p, node in by_name.items():
            by_stack.setdefault(node["stack_trace"], []).append(p)
            if node["op"] == "call_function":
                for op in node["target"].split(".")[1:2]:
                    by_op.setdefault(op, []).append(p)
        dynamo_stack = self._dynamo_stacks(rec)
        defined = definition_nodes(rec.output_code, set(code_kernels))
        derived: list[str] = []
        claimed: set = set()
        # each subgraph's calls (invoke_subgraph) with the get_attr each reads, in graph order: the code's i-th call of
        # a subgraph is the graph's i-th
        calls: dict[str, list[list[str]]] = {}
        for p, node in by_name.items():
            attr = by_name.get(node["inputs"][0]) if node["op"] == "call_function" and node["inputs"] else None
            if attr is not None and attr["op"] == "get_attr" and attr["target"] in subs:
                calls.setdefault(attr["target"], []).append([attr["name"], p])
        for i, launch in enumerate(launches):
            name = launch["name"]
            if launch.get("subgraph"):  # a call of a subgraph: no kernel of its own (its subgraph's compile has them)
                fx = calls[name].pop(0) if calls.get(name) else []
                if not fx:  # no invoke_subgraph of the graph for it (a torch.cond's branch, called in an if)
                    continue
                group = launch["buffer"] or f"{name}_{i}"
                rec.post_fusion.append(
                    RawSchedNode(
                        name=group,
                        kind="extern",
                        members=[group],
                        fx_nodes=fx,
                        reads=sorted({x for n in fx for x in by_name[n]["inputs"] if x not in fx}),
                        writes=list(fx),
                        outputs=[],
                    )
                )
                continue
            group = (launch["buffer"] or f"{name}_{i}") if launch["extern"] else name
            if any(s.name == group for s in rec.post_fusion):
                group = f"{group}#{i}"
            handle = launch["handle"]
            fx = [n for n in prov_nodes.get(handle, []) if n in by_name] if handle else []
            if fx and launch["extern"]:  # torch's map also names the producers of its inputs: its own op's nodes
                own = [n for n in fx if calls_op(by_name[n], callee_op(name))]
                fx = own or fx
            if not fx:  # no provenance for this kernel: what the output code's comments say
                if launch["extern"]:
                    own, near = self._to_post_grad(launch["source_nodes"], rec, by_stack)
                    fx = extern_op_nodes(name, own, by_name, claimed, by_op, near=near, passed=launch["operands"])
                else:
                    fx = [n for n in defined.get(name, []) if n in by_name]
                if fx:
                    derived.append(name)
            claimed.update(fx)
            traces = list(prov_traces.get(handle, [])) if handle else []
            if not traces:  # no provenance: the user lines of the dynamo nodes the output code names
                traces = [dynamo_stack[s] for s in launch["source_nodes"] if dynamo_stack.get(s)]
            rec.kernels.append(
                RawKernel(
                    name=name,
                    is_extern=launch["extern"],
                    scheduler_nodes=[group],
                    fx_nodes=fx,
                    buffer=launch["buffer"],
                    stack_traces=list(dict.fromkeys(traces)),
                )
            )
            inside = set(fx)
            reads = sorted({i for n in fx for i in by_name[n]["inputs"] if i not in inside}) if fx else launch["args"]
            if rec.subgraph:  # its inputs as its code names them, as its graph inputs are (build._qualified_inputs)
                reads = sorted(
                    f"{rec.subgraph}_{i}" if by_name.get(i, {}).get("op") == "placeholder" else i for i in reads
                )
            rec.post_fusion.append(
                RawSchedNode(
                    name=group,
                    kind=_sched_kind(launch, code_kernels),
                    members=[group],
                    fx_nodes=fx,
                    reads=reads,
                    writes=sorted(inside),
                    outputs=[],
                    mutates=input_mutations(fx, by_name, rec.graph_inputs),
                )
            )
        if derived:
            self.raw.diag(
                "trace_derived",
                f"{rec.compile_id} {rec.graph_kind}: torch logged no provenance for "
                f"{', '.join(derived)}; their post-grad nodes were read from the output code's comments (for an extern kernel: "
                "the node of its op that the comment above its call names, else the one that reads what it names)",
            )

    def _to_post_grad(self, names: list[str], rec: RawGraph, by_stack: dict) -> tuple[list[str], list[str]]:
        """The node names of a launch comment as post-grad nodes: (those it names itself, the nodes on the user lines
        of the others). A backward's comment names the nodes Inductor made for the backward by their post-grad
        names, and the nodes recomputed or saved from the forward by dynamo's names (``x``, ``layer_norm_1``); a
        forward's names dynamo's nodes (``matmul``), which become the post-grad nodes on the same user line
        (``by_stack``: stack trace -> post-grad nodes, in graph order), a whole line's: every call on it."""
        post_grad = {n["name"] for n in rec.post_grad_nodes}
        stacks = self._dynamo_stacks(rec)
        own = [n for n in names if n in post_grad]
        near = [p for n in names if n not in post_grad and stacks.get(n) for p in by_stack.get(stacks[n], [])]
        return own, list(dict.fromkeys(near))

    def _dynamo_stacks(self, rec: RawGraph) -> dict[str, str]:
        """The stack trace of each dynamo node of ``rec``'s compile (made once per compile: every launch asks)."""
        found = self._stacks_of.get(_key(rec))
        if found is None:
            nodes = _dynamo_graph(self.raw, rec) or []
            found = self._stacks_of[_key(rec)] = {n["name"]: n["stack_trace"] for n in nodes if n.get("stack_trace")}
        return found


def _sched_kind(launch: dict, code_kernels: dict) -> str:
    if launch["extern"]:
        return "extern"
    language, source = code_kernels.get(launch["name"], ("other", ""))
    if language == "triton":
        heuristic = triton_source_metadata(source).get("heuristic", "")
        if "template" in heuristic:
            return "template"
        if "reduction" in heuristic:
            return "reduction"
        return "pointwise"
    # Inductor's C++ reductions keep accumulators named tmp_acc0, tmp_acc1... (Welford ones too): a kernel with
    # one reduces, whatever else it fuses (the live capture's fused nodes of such a kernel include a reduction)
    if "tmp_acc" in source or "reduction" in source or "welford" in source.lower():
        return "reduction"
    return "pointwise"


def report_from_log(log: Union[TraceLog, TraceReader], title: str = "") -> Report:
    """The report of one TORCH_TRACE log file: a :class:`TraceReader` (streamed) or a read :class:`TraceLog`."""
    walker = _RawFromTrace(log if isinstance(log, TraceReader) else log.records)
    raw = walker.run()
    if not walker.count:
        raise TraceError(f"{log.path} holds no structured-trace record: is it a TORCH_TRACE log?")
    kernels = [k for g in raw.graphs for k in g.kernels]
    cached = sum(not k.fx_nodes for g in raw.graphs if g.cache_hit for k in g.kernels)
    closing_notes(raw, log, sum(not k.fx_nodes for k in kernels), len(kernels), cached)
    report = build_report(
        raw,
        log.torch_version.split("+")[0] or "unknown",
        title=title or os.path.basename(log.path),
        origin="trace",
        rank=log.rank,
        world_size=None,
    )
    report = infer_report_modules(report)  # the log holds no module paths: report/module_paths.py
    compiles, why = imported_memory(report.compiles, report.device)  # after the module paths its rows name
    diagnostics = list(report.diagnostics)
    if why:
        diagnostics.append(Diagnostic("trace_no_memory", no_memory_text(why)))
    # the calls of a repeated region say its launches, and its compile who calls it, again: the module paths and
    # the memory above made its compiles' notes again
    compiles = link_branches(compiles)
    return mark_rollups(dataclasses.replace(report, compiles=compiles, diagnostics=diagnostics))


def no_memory_text(why: list[str]) -> str:
    """The ``trace_no_memory`` diagnostic of the compiles whose memory the output code does not give (``why``:
    ``"2/0 forward: why"`` each)."""
    return "no Memory view for " + "; ".join(why) + " (capture in process to see it)"


def closing_notes(
    raw: Raw, log: Union[TraceLog, TraceReader], unlinked: int, kernels: int, cached_unlinked: int = 0
) -> None:
    """The diagnostics of an import said once the log is read: what a log cannot hold, the graphs read from torch's
    caches (``cached_unlinked`` of their kernel launches without provenance), the other kernel launches (``unlinked``
    of ``kernels`` in all) without provenance, the lines that were not records."""
    for code, message in _NOT_IN_A_TRACE:
        raw.diag(code, message)
    cached = list(dict.fromkeys(f"{g.compile_id} {g.graph_kind}" for g in raw.graphs if g.cache_hit))
    if cached:
        which = (
            "AOT autograd's and Inductor's FX-graph caches"
            if any(g.cache_hit == "aot_autograd" for g in raw.graphs)
            else "Inductor's FX-graph cache"
        )
        raw.diag(
            "trace_cache_hit",
            f"{', '.join(cached)}: read from torch's caches ({which}), not compiled in the run this log records: "
            "Inductor did not lower, fuse or generate code for them, their kernels are those of the earlier run that "
            "wrote the cache, and torch logged no provenance for them"
            + (f" ({cached_unlinked} kernel launch(es) not linked to post-grad nodes)" if cached_unlinked else "")
            + "; TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 INDUCTOR_PROVENANCE=1 makes torch compile them and log it",
        )
    unlinked -= cached_unlinked
    if unlinked:
        raw.diag(
            "trace_unlinked",
            f"{unlinked} of {kernels} kernel launch(es) are not linked to post-grad "
            "nodes: torch logged no provenance map for them (INDUCTOR_PROVENANCE=1 makes torch log it; a lazily compiled backward "
            "never has one)",
        )
    if log.bad_lines:
        raw.diag(
            "trace_incomplete",
            f"{log.bad_lines} line(s) of {os.path.basename(log.path)} were not trace records and were skipped",
        )


def load_trace(
    path: Union[str, os.PathLike], on_progress: Optional[Callable[[str], None]] = None, title: str = ""
) -> Any:
    """Read TORCH_TRACE logs and return what inductor_lens makes of them.

    Parameters
    ----------
    path : str or path
        A log file (``dedicated_log_torch_trace_*.log``) or the directory ``TORCH_TRACE`` named.
    on_progress : callable, optional
        Called with short lines (bytes read, records, reports built) while reading.

    Returns
    -------
    Report
        For one log file (``report.origin == "trace"``).
    Job
        For a directory of several logs (one per rank): :class:`inductor_lens.Job`, as ``load_job`` returns.

    Examples
    --------
    >>> report = inductor_lens.load_trace("/tmp/trace")     # after TORCH_TRACE=/tmp/trace python train.py
    >>> report.save_html("trace.html")
    """
    files = find_logs(os.fspath(path))
    reports = []
    gc_was_on = gc.isenabled()
    gc.disable()  # millions of small objects, none cyclic: collections would make reading quadratic
    try:
        for f in files:
            reports.append(_one(f, on_progress, title))
    finally:
        if gc_was_on:
            gc.enable()
    if len(reports) == 1:
        return reports[0]
    return _job_of(reports, files, title)


def _one(f: str, on_progress: Optional[Callable[[str], None]], title: str) -> Report:
    """The report of one log file, with progress lines."""

    def progress(done: int, total: int) -> None:
        if on_progress is not None:
            on_progress(f"reading {os.path.basename(f)}: {done / 1e6:.0f} of {total / 1e6:.0f} MB")

    log = TraceReader(f, progress)
    report = report_from_log(log, title=title)
    if on_progress is not None:
        on_progress(
            f"{os.path.basename(f)}: {log.records} records, {len(report.compiles)} compile(s), "
            f"{len(report.kernels)} kernel(s)"
        )
    return report


def _job_of(reports: list[Report], files: list[str], title: str):
    import dataclasses

    from ..analysis.job import Job, RankEntry

    entries = []
    for i, (r, f) in enumerate(zip(reports, files)):
        rank = r.rank if r.rank is not None else i
        entries.append(RankEntry(rank=rank, report=dataclasses.replace(r, rank=rank, world_size=len(reports)), path=f))
    entries.sort(key=lambda e: e.rank)
    return Job(
        ranks=entries, world_size=max(len(entries), max(e.rank for e in entries) + 1), title=title or "TORCH_TRACE logs"
    )
