"""A TORCH_TRACE log imported compile by compile: ``inductor-lens import-trace`` of a log of any size in
bounded memory.

:func:`~inductor_lens.capturing.trace_import.load_trace` reads the whole log, then builds every compile, then
the report's steps that look at all of them, and returns the report, which a writer then walks: a 1 GB log
held about twice its size. Here the log is read once, and each time dynamo starts on a new frame (no compile
window open: everything logged for the graphs so far has come) the graphs logged since are built, finished
and written (``report.written.Spooled``) one at a time, then let go. What is kept across the log is small:
the walk's tables (windows, compile ids, which forward waits for its backward), the trace records the builder
looks things up in (``build._Trace``, without the output code), the interned tables of the written form, and
each forward's post-grad nodes until its backward comes (a backward is made from them: :class:`_Forward`).

The result is the report the whole import makes, byte for byte. Each step is the one that path runs, on one
compile (``build.CompileMaker``, ``finish``, ``module_paths.infer_compile``, ``built.BuiltMarker``); what
those steps look up in the whole report is checked at the end against what the whole log holds: every
lookup of trace records (a record of an already built compile logged later), the compile window of each
graph, the device, the user's files that decided the lines that built modules. Where one differs (a log whose
records come out of that order), :func:`stream_trace` answers None and the caller imports the log whole.
"""

from __future__ import annotations

import dataclasses
import datetime
import marshal
import os
import types
from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict, deque
from typing import Any, Callable, Optional

from ..report import rules
from ..report.built import BuiltMarker
from ..report.finish import derive_compile, graph_signature, saved_names, with_module_view
from ..report.model import Compile, Diagnostic, Graph, Report, SourceMark
from ..report.module_paths import infer_compile
from .artifacts import _ID_KEYS, record_kind, wanted
from .build import (
    CompileMaker,
    _base_cid,
    _cid,
    _empty_frames,
    _gave_up,
    _graph_breaks,
    _no_provenance,
    _nothing_compiled,
    _recompile_limits,
    _Trace,
    _user_files,
    _window_for,
)
from .sources import cell_map, read_sources
from .trace_import import _kind, _RawFromTrace, closing_notes, no_memory_text
from .trace_memory import with_memory
from .trace_read import TraceError, TraceReader

__all__ = ["stream_trace", "StreamStats"]


@dataclasses.dataclass
class StreamStats:
    """What a streamed import held: ``held_max`` compiles built and not yet let go at once (at most), over
    ``compiles`` compiles."""

    compiles: int = 0
    held_max: int = 0
    events: int = 0  # phase events read
    events_held: int = 0  # of them, held in memory (the rest are rows of the spill file)


#: What ``build._phases`` reads of a chromium event (a phase's name, kind, time, duration and thread): the rest of
#: an event (its ``args``: often a whole metrics record) is not kept.
_EVENT_KEYS = ("name", "ph", "ts", "dur", "pid", "tid")
#: What the builder reads of a ``compilation_metrics`` record (``build._frame_name``, ``build._gave_up``,
#: ``build._empty_frames``, ``build._recompile_limits``): the frame, the failure, the graph's op count and when it began; the rest (dozens of timings and counters a frame) is not kept.
_METRICS_KEYS = (
    "co_name",
    "co_filename",
    "co_firstlineno",
    "fail_type",
    "fail_reason",
    "graph_op_count",
    "start_time_us",
)
#: Records that only the graphs of their own compile id look up (``build._compile``, ``_GraphBuilder``): their texts
#: are let go once every graph of the compile id is built.
_LET_GO = frozenset(
    {
        "dynamo_output_graph",
        "inductor_post_grad_graph",
        "dynamo_cpp_guards_str",
        "dynamo_guards",
        "recompile_reasons",
        "triton_kernel_info",
        "inductor_provenance_tracking_node_mappings",
    }
)


class _Whole(Exception):
    """The log cannot be imported compile by compile with the same result: import it whole."""


class _Watched(_Trace):
    """``build._Trace`` filled as the log is read, remembering what each lookup found, to check at the end
    that the whole log would have answered the same.

    Phase events (a few per millisecond of compiling: 13,000 in 100 MB of log) are each one row of ``spill``
    (a binary file, ``marshal`` rows), with only their time stamp and row's place in memory (16 bytes an event),
    sorted as ``build._Trace`` sorts them; without a spill file they are held (``events_held``). What
    ``cudagraphs_of`` reads (``CUDAGraphNode.record`` events, with the compile id and direction of their
    ``args``) stays in ``events`` as the whole import has it."""

    def __init__(self, spill: Any = None, stats: Optional[StreamStats] = None) -> None:
        super().__init__([])
        self.asked: dict[tuple[str, str], int] = {}
        self.spans: dict[tuple[float, Optional[float]], int] = {}
        for kind in _LET_GO:  # looked up by compile id only: indexed as they come, never listed
            self._by_cid[kind] = defaultdict(list)
        self._spill = spill
        self._spill_end = 0  # where the next row goes (a read moves the file's position)
        self._ts = array("d")  # each phase event's time stamp, sorted (a stable sort: equal ones in log order)
        self._row = array("q")  # where its row starts in the spill file (or its index in _held)
        self._held: list[dict] = []
        self._frames: dict[tuple, dict] = {}  # dynamo_start frames, shared (_frame)
        self.stats = stats if stats is not None else StreamStats()

    def add(self, md: dict, payload: Any) -> None:
        kind = record_kind(md)
        if kind == "chromium_event" and isinstance(payload, dict):
            self._event(payload)
            return
        if kind == "dynamo_start" and isinstance(md.get(kind), dict) and isinstance(md[kind].get("stack"), list):
            md = dict(md, dynamo_start=dict(md[kind], stack=[self._frame(fr) for fr in md[kind]["stack"]]))
        elif kind == "compilation_metrics" and isinstance(md.get(kind), dict):
            metrics = md[kind]
            md = {k: v for k, v in md.items() if k in _ID_KEYS}
            md[kind] = {k: metrics[k] for k in _METRICS_KEYS if k in metrics}
        super().add(md, payload)
        if kind in _LET_GO and self.by_kind.get(kind):
            self.by_kind[kind].pop()

    def _frame(self, fr: Any) -> Any:
        """One frame of a ``dynamo_start`` stack, the same dict for the same frame: every compile of a long log holds
        its stack to the end (``build._gave_up`` reads them), mostly the frames of the ones before. Read only."""
        if not isinstance(fr, dict):
            return fr
        try:
            key = tuple(fr.items())
            return self._frames.setdefault(key, fr)
        except TypeError:  # an unhashable value: kept as it is
            return fr

    def _event(self, payload: dict) -> None:
        """One phase event, as ``build._Trace.add`` files it (after the events of equal or earlier time)."""
        if payload.get("name") == "CUDAGraphNode.record":  # build.cudagraphs_of reads these whole, in order
            args = payload.get("args")
            kept = {k: payload[k] for k in _EVENT_KEYS if k in payload}
            if isinstance(args, dict):
                kept["args"] = {k: args[k] for k in ("compile_id", "is_backward") if k in args}
            ts = float(kept.get("ts", 0))
            i = bisect_right(self.event_ts, ts)
            self.events.insert(i, kept)
            self.event_ts.insert(i, ts)
        event = {k: payload[k] for k in _EVENT_KEYS if k in payload}  # what build._phases reads
        ts = float(event.get("ts", 0))
        self.stats.events += 1
        if self._spill is None:
            where = len(self._held)
            self._held.append(event)
            self.stats.events_held += 1
        else:
            row = marshal.dumps(event)
            spill = self._spill
            if spill.tell() != self._spill_end:
                spill.seek(self._spill_end)
            spill.write(len(row).to_bytes(4, "little") + row)
            where = self._spill_end
            self._spill_end += 4 + len(row)
        i = bisect_right(self._ts, ts)
        if i == len(self._ts):
            self._ts.append(ts)
            self._row.append(where)
        else:
            self._ts.insert(i, ts)
            self._row.insert(i, where)

    def _span(self, start: float, end: Optional[float]) -> tuple[int, int]:
        """``build._Trace.events_between``'s slice: ``start - 1 <= ts <= end + 1``."""
        lo = bisect_left(self._ts, start - 1)
        return lo, len(self._ts) if end is None else bisect_right(self._ts, end + 1)

    def let_go(self, cid: str) -> None:
        """Forget the records of compile id ``cid`` that only its graphs look up (every graph of it is built): their
        texts and what their metadata says beyond the ids (a dynamo graph's is every node's size); only their count
        stays, for :meth:`same_answers`."""
        for kind in _LET_GO:
            found = self._by_cid[kind].get(cid)
            if found:
                found[:] = [(c, None, {k: md[k] for k in _ID_KEYS if k in md}) for c, _, md in found]

    def _of(self, kind: str, cid: str) -> list[tuple]:
        found = super()._of(kind, cid)
        key = (kind, _base_cid(cid))
        self.asked[key] = min(len(found), self.asked.get(key, len(found)))  # records are only ever added
        return found

    def events_between(self, start: float, end: Optional[float]) -> list[dict]:
        lo, hi = self._span(start, end)
        if self._spill is None:
            found = [self._held[self._row[i]] for i in range(lo, hi)]
        else:
            spill, found = self._spill, []
            for i in range(lo, hi):
                spill.seek(self._row[i])
                n = int.from_bytes(spill.read(4), "little")
                found.append(marshal.loads(spill.read(n)))
        key = (start, end)
        self.spans[key] = min(len(found), self.spans.get(key, len(found)))
        return found

    def _count(self, start: float, end: Optional[float]) -> int:
        lo, hi = self._span(start, end)
        return hi - lo

    def same_answers(self) -> bool:
        """Whether every lookup made so far finds now what it found then."""
        return all(len(_Trace._of(self, k, c)) == n for (k, c), n in self.asked.items()) and all(
            self._count(s, e) == n for (s, e), n in self.spans.items()
        )


class _Walk(_RawFromTrace):
    """The walk of ``trace_import``, handing each batch of complete graphs to ``ready`` and keeping no
    record list: the builder's trace is filled as records come."""

    def __init__(self, records, trace: _Watched, ready: Callable[[Any, list, bool], list]) -> None:
        super().__init__(records)
        self.trace = trace
        self.ready = ready
        self.done_keys: set[int] = set()  # graphs built
        self.done_cids: set[str] = set()
        self.unlinked = self.kernel_count = self.cached_unlinked = 0
        self._next = 0  # the first graph of self.raw.graphs not handed over yet

    def run(self):
        first = 0.0
        add = self.trace.add
        for md, payload, t in self.records:
            self.count += 1
            if t and not first:
                first = self.raw.t0_us = t
            kind = _kind(md)
            md = self._reset_seen(md, kind)
            if self.resets:  # compile ids start again at 0/0: the whole import tells each compile's records apart
                raise _Whole("a torch._dynamo.reset() in the log")
            if kind == "chromium_event" and isinstance(payload, dict) and not self.open_windows:
                name = payload.get("name")
                if payload.get("ph") == "B" and (name == "dynamo" or "bw_compiler" in str(name or "")):
                    self.flush()  # dynamo starts on another frame: the graphs so far are complete
            if wanted(md):
                add(md, payload)
            cid = _cid(md)
            cid = _base_cid(cid) if cid else cid
            handler = getattr(self, "_on_" + (kind or ""), None)
            if handler is not None:
                handler(md, payload, t, cid)
        self.raw.t0_us = first
        self.flush(last=True)
        return self.raw

    def unbuilt(self, builder: _Builder) -> int:
        """The graphs logged and not built yet: not handed over, or waiting in ``builder``'s queue."""
        return len(self.raw.graphs) - self._next + len(builder.queue)

    def flush(self, last: bool = False) -> None:
        graphs = self.raw.graphs[self._next :]
        self._next = len(self.raw.graphs)
        for rec in graphs:
            self._kernels(rec)
            self.kernel_count += len(rec.kernels)
            self.unlinked += sum(not k.fx_nodes for k in rec.kernels)
            if rec.cache_hit:
                self.cached_unlinked += sum(not k.fx_nodes for k in rec.kernels)
        for rec in graphs:  # after all: a subgraph's kernels read its parent's provenance (a repeated region's)
            self.prov_nodes.pop(rec.key, None)
            self.prov_traces.pop(rec.key, None)
        for rec in graphs:  # its kernels are made: a later record for it would be missed
            self.done_keys.add(rec.key)
            self.done_cids.add(_base_cid(rec.compile_id))
        for rec in self.ready(self.raw, graphs, last):  # built: only what names the graph stays
            rec.output_code, rec.post_grad_nodes, rec.kernels, rec.post_fusion = "", [], [], []
        self._stacks_of.clear()
        if len(self.parsed) > 256:  # graphs parsed once per distinct text: a long log's are let go now and then
            self.parsed.clear()

    def _latest(self, cid):
        rec = super()._latest(cid)
        if rec is not None and rec.key in self.done_keys:
            raise _Whole("a record for a graph already built")
        return rec

    def _cached(self, rec, how: str) -> None:
        if rec.key in self.done_keys:
            raise _Whole("a cache hit of a graph already built")
        super()._cached(rec, how)

    def _on_dynamo_output_graph(self, md, payload, t, cid) -> None:
        if cid and _base_cid(cid) in self.done_cids:
            raise _Whole("a dynamo graph of a compile already built")
        super()._on_dynamo_output_graph(md, payload, t, cid)


class _Finish:
    """Each compile as the whole import finishes it (``build_report``, then ``infer_report_modules``), one at a
    time in order, handed to ``write``."""

    def __init__(self, maker: CompileMaker, write: Callable[[Compile], None]) -> None:
        self.maker, self.write = maker, write
        self.first_of: dict[str, str] = {}  # graph signature -> the first compile's id (mark_same_graphs)
        self.files: list[str] = []  # the user's files so far (build._user_files)
        self.marker = BuiltMarker([])
        self.marker_files: Optional[tuple] = None  # the files the marker read, if it read any
        self.forwards: dict[str, list] = defaultdict(list)  # compile id -> [(inferred forward, changed)]
        self.backs: dict[str, int] = defaultdict(int)
        self.facts: list[tuple[bool, bool, bool]] = []
        self.timed: list = []  # the trigger of the first compile whose trigger has a time, as Report.when reads it
        self.triggers: list = []  # each compile's id and trigger, in order
        self.pending: list[Compile] = []  # finished, held until the forwards among them have their backward
        self.waiting: dict[str, list[str]] = defaultdict(list)  # compile id -> its held forwards' ids
        self.no_memory: list[str] = []  # "2/0 backward: why" of each compile with no memory (trace_memory)

    def add(self, c: Compile) -> None:
        if c.kernels:  # finish.mark_same_graphs
            same = self.first_of.setdefault(graph_signature(c), c.id)
            c = dataclasses.replace(c, same_graph_as=same if same != c.id else None)
        c = _no_provenance(c)
        files = _user_files([c], [])
        if any(f not in self.files for f in files):
            self.files += [f for f in files if f not in self.files]
            if self.marker.read:  # the files changed after they decided something: checked at the end
                self.marker_files = ()
            self.marker = BuiltMarker(read_sources(self.files, {}))
        c = self._mark(c)
        # infer_report_modules: module paths inferred, a backward from its inferred forward
        if c.graph_kind == "backward":
            i = self.backs[c.compile_id]
            self.backs[c.compile_id] += 1
            held = self.forwards.get(c.compile_id) or []
            fwd, fwd_changed = held[i] if i < len(held) and held[i] else (None, False)
            if i < len(held):
                held[i] = None
            inferred = infer_compile(c, fwd)
            changed = inferred is not c
            if fwd_changed:
                inferred, changed = saved_names(inferred, fwd), True
        else:
            inferred = infer_compile(c)
            changed = inferred is not c
            if c.graph_kind == "forward":  # what its backward reads of it: the post-grad graph, not its kernels
                self.forwards[c.compile_id].append((_Forward(inferred), changed))
        if changed:  # derived again, and the lines that built modules marked again (the same on the others)
            c = self._mark(derive_compile(inferred))
        elif c.module_view is None:  # made without it for the paths it lacked, and none could be inferred
            c = with_module_view(c)
        self._hold(c)

    def _hold(self, c: Compile) -> None:
        """``c`` with its memory (``trace_memory.with_memory``), written once every compile before it is: a training
        forward waits for its backward (what it saved is read there; the backward's memory reads the forward), and
        the compiles after it wait with it, so they are written in order; each is let go once written."""
        if c.graph_kind == "forward":
            self.waiting[c.compile_id].append(c.id)
            self.pending.append(c)
        elif c.graph_kind == "backward" and self.waiting.get(c.compile_id):
            i = next(i for i, f in enumerate(self.pending) if f.id == self.waiting[c.compile_id][0])
            self.waiting[c.compile_id].pop(0)
            self.pending[i] = self._memory(self.pending[i], backward=c)
            self.pending.append(self._memory(c, forward=self.pending[i]))
        else:
            self.pending.append(self._memory(c))
        del c
        self.release()

    def _memory(self, c: Compile, backward: Optional[Compile] = None, forward: Optional[Compile] = None) -> Compile:
        device = self.maker.raw.device if self.maker is not None else "cpu"
        made, why = with_memory(c, device, backward, forward)
        if why:
            self.no_memory.append(f"{c.id}: {why}")
        return made

    def release(self, last: bool = False) -> None:
        """Write the compiles held up to the first forward still waiting for its backward (``last``: all of them, a
        forward whose backward never came without what it saved)."""
        waiting = {i for held in self.waiting.values() for i in held}
        while self.pending and (last or self.pending[0].id not in waiting):
            c = self.pending.pop(0)
            self._write(self._memory(c) if c.id in waiting else c)
        if last:
            self.waiting.clear()

    def _write(self, c: Compile) -> None:
        self.facts.append(rules.view_facts(c))
        self.triggers.append(types.SimpleNamespace(id=c.id, trigger=c.trigger))  # Report.source_marks reads them
        if not self.timed and c.trigger is not None and c.trigger.time_us is not None:
            # its trigger and frame alone: the compile is let go
            self.timed.append(types.SimpleNamespace(trigger=c.trigger, frame=c.frame))
        self.write(c)

    def _mark(self, c: Compile) -> Compile:
        c = self.marker.mark(c)
        if self.marker.read and self.marker_files is None:
            self.marker_files = tuple(self.files)
        return c

    def held(self) -> int:
        return max(sum(x is not None for fs in self.forwards.values() for x in fs), len(self.pending))


class _Forward:
    """What a backward reads of its forward compile (``build._post_nodes``, ``module_paths.infer_compile``,
    ``finish.saved_names``): the nodes of its post-grad graph. Held by :class:`_Finish` in place of the compile
    until the backward comes (``build.CompileMaker`` holds the same nodes), so that the rest of the forward
    (kernels, output code, reproducer scripts, graph texts: most of it) goes once it is written."""

    __slots__ = ("graphs",)

    def __init__(self, c: Any) -> None:
        post = c.graphs.get("post_grad")
        self.graphs = {"post_grad": Graph(nodes=post.nodes)} if post is not None else {}


class _Builder:
    """Builds the graphs the walk hands over, in order, as soon as what they look up has come: a graph waits
    while a forward of its compile id waits for its backward (what is logged of the compile id up to then,
    kernel facts and provenance, is looked up by each of its graphs). Once every graph of a compile id is
    built, the texts only they look up are let go."""

    def __init__(self, trace: _Watched, sink: Any, stats: StreamStats) -> None:
        self.trace, self.sink, self.stats = trace, sink, stats
        self.diagnostics: list[Diagnostic] = []  # those of building each compile, in order (build._build)
        self.maker: Optional[CompileMaker] = None
        self.finish: Optional[_Finish] = None
        self.queue: deque = deque()  # graphs logged, not built yet
        self.forwards: dict[str, int] = defaultdict(int)  # compile id -> forward graphs logged
        self.backwards: dict[str, int] = defaultdict(int)
        self.gone: set[str] = set()  # compile ids whose texts were let go
        self.devices: set[str] = set()  # the device as each graph was built
        self.windows: list[tuple] = []  # (a graph's start, the window it was built in)

    def held(self) -> int:
        """Graphs waiting to be built, and forwards built and waiting for their backward."""
        done = max(self.maker.waiting(), self.finish.held()) if self.maker is not None else 0
        return len(self.queue) + done

    def _write(self, c: Compile) -> None:
        self.sink.add(c, transient=True)  # let go after: its frames are not remembered by object
        self.stats.compiles += 1

    def ready(self, raw: Any, graphs: list, last: bool) -> list:
        """Build what can be built of the graphs logged so far (``graphs`` the new ones); the graphs built."""
        if self.maker is None:
            self.maker = CompileMaker(raw, self.trace, self.diagnostics, view_later=True)
            self.finish = _Finish(self.maker, self._write)
        for rec in graphs:
            if rec.memory is not None or rec.aot:  # never in a log; the whole import handles them
                raise _Whole("memory facts or an AOTInductor graph")
            if rec.subgraph:  # built with its parent (build._with_subgraph_code), as the whole import does
                raise _Whole("a subgraph of another graph")
            if _base_cid(rec.compile_id) in self.gone:
                raise _Whole("another graph of a compile id whose texts were let go")
            if rec.graph_kind == "forward":
                self.forwards[rec.compile_id] += 1
            elif rec.graph_kind == "backward":
                self.backwards[rec.compile_id] += 1
        self.queue.extend(graphs)
        self.stats.held_max = max(self.stats.held_max, self.held())
        windows = sorted(raw.windows, key=lambda w: w.start_us)
        starts = [w.start_us for w in windows]
        built = []
        while self.queue and (last or self._settled(self.queue[0].compile_id)):
            rec = self.queue.popleft()
            self.devices.add(raw.device)
            self.windows.append((rec.start_us, _window_for(rec, windows, starts)))
            try:
                c = self.maker.make(rec, windows, starts)
                built.append(rec)
                self._let_go(raw, rec)  # before the compile is written: its texts are its own now
                if c is not None:
                    self.stats.held_max = max(self.stats.held_max, 1 + self.held())
                    self.finish.add(c)
            except Exception as e:  # what the whole import does with it (a diagnostic, or the error) is its own
                raise _Whole(f"{type(e).__name__}: {e}") from None
        return built

    def _let_go(self, raw: Any, rec: Any) -> None:
        """Once every graph of ``rec``'s compile id is built (none of it queued, each forward with its backward):
        what only they look up goes."""
        base = _base_cid(rec.compile_id)
        if base in self.gone or not self._settled(rec.compile_id):
            return
        if any(_base_cid(r.compile_id) == base for r in self.queue):
            return
        self.gone.add(base)
        self.trace.let_go(base)
        raw.dynamo_graphs.pop(rec.compile_id, None)
        raw.dynamo_graphs.pop(base, None)

    def _settled(self, cid: str) -> bool:
        return self.backwards[cid] >= self.forwards[cid]

    def as_whole(self, raw: Any, files: list[str]) -> bool:
        """Whether each compile looked up what the whole log holds: the same trace records, the same compile
        window, the device, and the user's files that decided the lines that built modules."""
        windows = sorted(raw.windows, key=lambda w: w.start_us)
        starts = [w.start_us for w in windows]
        return (
            not (self.devices - {raw.device})
            and self.trace.same_answers()
            and all(_window_for(_At(t), windows, starts) is w for t, w in self.windows)
            and (self.finish is None or self.finish.marker_files in (None, tuple(files)))
        )


def stream_trace(
    path: str,
    sink: Any,
    on_progress: Optional[Callable[[str], None]] = None,
    title: str = "",
    stats: Optional[StreamStats] = None,
    spill: Any = None,
) -> Optional[Report]:
    """Import the TORCH_TRACE log ``path`` compile by compile into ``sink`` (``report.written.Spooled``):
    each compile is added to it as it is finished; the report returned holds every field but the compiles,
    for ``sink.finish``. None where the log cannot be imported so (records out of the order this relies on,
    or a notebook's cells to localize): ``sink`` is then incomplete, and the caller imports the log whole.
    ``spill``: a binary file (``report.io.spool_file``) the phase events are kept in, so that what is held
    does not grow with them (without it they are held). :class:`TraceError` for a file that holds no trace
    record."""
    if cell_map():
        return None
    stats = stats if stats is not None else StreamStats()

    def progress(done: int, total: int) -> None:
        if on_progress is not None:
            on_progress(read_progress(os.path.basename(path), done, total, stats.compiles, walk.unbuilt(builder)))

    log = TraceReader(path, progress)
    builder = _Builder(_Watched(spill, stats), sink, stats)
    walk = _Walk(log, builder.trace, builder.ready)
    try:
        raw = walk.run()
    except _Whole:
        return None
    if not walk.count:
        raise TraceError(f"{log.path} holds no structured-trace record: is it a TORCH_TRACE log?")
    trace, finish = builder.trace, builder.finish
    breaks = _graph_breaks(trace)
    files = _user_files([], [b.user_stack for b in breaks])
    files += [f for f in (finish.files if finish else []) if f not in files]
    if not builder.as_whole(raw, files):
        return None
    if finish is not None:
        finish.release(last=True)
    closing_notes(raw, log, walk.unlinked, walk.kernel_count, walk.cached_unlinked)
    diags = [Diagnostic(code, message, detail) for code, message, detail in raw.diagnostics]
    diags += trace.diagnostics() + builder.diagnostics + _gave_up(trace, raw.raised, raw.compile_calls)
    if not stats.compiles:
        note = _nothing_compiled(raw, [], diags)
        if note:
            diags.append(note)
    if finish is not None and finish.no_memory:
        diags.append(Diagnostic("trace_no_memory", no_memory_text(finish.no_memory)))
    facts = finish.facts if finish else []
    head = Report(
        torch_version=log.torch_version.split("+")[0] or "unknown",
        device=raw.device,
        compiles=[],
        graph_breaks=breaks,
        diagnostics=diags,
        compile_calls=[],
        empty_frames=_empty_frames(trace, None, raw.raised, raw.windows, raw.t0_us),  # none made a compile
        recompile_limits=_recompile_limits(trace, raw.t0_us),
        source_files=read_sources(files, {}),
        title=title or os.path.basename(log.path),
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        origin="trace",
        rank=log.rank,
        world_size=None,
        start_wall_us=round(raw.t0_us, 1) if raw.t0_us > 0 else None,  # as build._build: the log's first event
    )
    object.__setattr__(head, "views", list(rules.available_views(facts)))  # of the compiles written
    object.__setattr__(head, "profiled", any(f[0] for f in facts))
    object.__setattr__(head, "when", rules.when_text([], finish.timed if finish else [], head.empty_frames))
    object.__setattr__(head, "nothing", rules.nothing_text(bool(stats.compiles), (d.code for d in diags)))
    marks = rules.source_marks([], finish.triggers if finish else [])
    object.__setattr__(head, "source_marks", [SourceMark(*m) for m in marks])
    if on_progress is not None:
        on_progress(
            f"{os.path.basename(path)}: {log.records} records, {stats.compiles} compile(s), {sink.kernels} kernel(s)"
        )
    return head


def read_progress(name: str, done: int, total: int, built: int, unbuilt: int) -> str:
    """The progress line of a streamed import, ``done`` of ``total`` bytes of log ``name`` read: the compiles built so
    far; once the whole log is read, the graphs logged since dynamo last started on a frame, which are built then.

    >>> read_progress("t.log", 8_000_000, 100_000_000, 3, 1)
    'reading t.log: 8 of 100 MB, 3 compile(s) built'
    >>> read_progress("t.log", 4_000_000, 4_000_000, 0, 4)
    'read t.log (4 MB): building 4 compile(s)'
    >>> read_progress("t.log", 100_000_000, 100_000_000, 96, 4)
    'read t.log (100 MB), 96 compile(s) built: building 4 more'
    """
    if done < total or not unbuilt:
        return f"reading {name}: {done / 1e6:.0f} of {total / 1e6:.0f} MB, {built} compile(s) built"
    if not built:
        return f"read {name} ({total / 1e6:.0f} MB): building {unbuilt} compile(s)"
    return f"read {name} ({total / 1e6:.0f} MB), {built} compile(s) built: building {unbuilt} more"


class _At:
    """What ``build._window_for`` reads of a graph: its start."""

    def __init__(self, start_us: float) -> None:
        self.start_us = start_us
