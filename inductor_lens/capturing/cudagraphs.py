"""CUDA graphs under ``mode="reduce-overhead"`` (``Compile.cudagraphs``): whether each graph ran through CUDA
graphs, why torch skipped them, and each (re-)recording.

What torch says, and where we read it:

- a skip: ``torch._inductor.cudagraph_utils.log_cudagraph_skip_and_bump_counter(msg)`` ("skipping cudagraphs due
  to mutated inputs (1 instances)..."), the function that also bumps ``counters["inductor"]["cudagraph_skips"]``;
  ``output_code``, ``cudagraph_trees`` and dynamo's ``cudagraphs`` backend import it by name, so each module that
  holds it is patched (and restored);
- a use: ``torch._inductor.compile_fx.cudagraphify``, which ``output_code.cudagraph_post_compile`` imports at
  call time, wraps the compiled graph;
- a recording: the ``CUDAGraphNode.record`` span of the structured trace (``dynamo_timed_cudagraph``, whose
  chromium event carries the compile id and ``is_backward``), one per (re-)recording, with its duration.

Which graph a message belongs to: the latest graph of the current compile id (``CompileContext``), else the
latest graph compiled with CUDA graphs on. The hooks live in the capture layer; ``cudagraphs_of`` is torch-free.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from typing import Any, Callable, Optional

from ..report.model import CudaGraphRecording, CudaGraphs
from ..report.rules import recording_reason

_HOLDERS = (
    "torch._inductor.cudagraph_utils",
    "torch._inductor.output_code",
    "torch._inductor.cudagraph_trees",
    "torch._dynamo.backends.cudagraphs",
)
_PREFIX = "skipping cudagraphs due to "


def mode_on() -> bool:
    """Whether the graph compiling now is compiled for CUDA graphs (``config.triton.cudagraphs``, which
    ``mode="reduce-overhead"`` turns on)."""
    import torch._inductor.config as config

    return bool(getattr(config.triton, "cudagraphs", False))


def _graph_now(raw: Any) -> Optional[Any]:
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
    except Exception:
        cid = None
    graphs = raw.graphs
    if cid is not None:
        mine = [g for g in graphs if g.compile_id == str(cid)]
        if mine:
            return mine[-1]
    on = [g for g in graphs if g.cudagraphs]
    return on[-1] if on else (graphs[-1] if graphs else None)


def install(stack: contextlib.ExitStack, each: Callable, patch_attr: Callable) -> None:
    """Patch torch's skip logger (in every module holding it) and ``compile_fx.cudagraphify`` until ``stack``
    closes; ``each(what, fn, *args)`` calls ``fn(hooks, *args)`` for the captures active on this thread."""
    utils = importlib.import_module("torch._inductor.cudagraph_utils")
    original = utils.log_cudagraph_skip_and_bump_counter

    def on_skip(hooks: Any, msg: str) -> None:
        g = _graph_now(hooks.raw)
        if g is not None:
            g.cudagraph_skips.append(str(msg))

    @functools.wraps(original)
    def log_skip(msg, *args, **kwargs):
        each("reading a CUDA-graph skip", on_skip, msg)
        return original(msg, *args, **kwargs)

    modules = []
    for name in _HOLDERS:
        try:
            modules.append(importlib.import_module(name))
        except Exception:
            continue  # e.g. no CUDA build: the module that would log cannot run either
    for mod in modules:
        if getattr(mod, "log_cudagraph_skip_and_bump_counter", None) is original:
            patch_attr(stack, mod, "log_cudagraph_skip_and_bump_counter", log_skip)

    cfx = importlib.import_module("torch._inductor.compile_fx")
    wrap = cfx.cudagraphify

    def on_use(hooks: Any) -> None:
        g = _graph_now(hooks.raw)
        if g is not None:
            g.cudagraphs_used = True

    @functools.wraps(wrap)
    def cudagraphify(*args, **kwargs):
        each("reading a CUDA-graph use", on_use)
        return wrap(*args, **kwargs)

    patch_attr(stack, cfx, "cudagraphify", cudagraphify)


def _reason(msg: str) -> str:
    first = msg.strip().splitlines()[0] if msg.strip() else msg
    first = first[len(_PREFIX) :] if first.startswith(_PREFIX) else first
    return first.split(". Found from")[0].strip()


def _recordings(events: list[dict], compile_id: str, backward: bool) -> list[CudaGraphRecording]:
    """``CUDAGraphNode.record`` spans of this compile id and direction, in order, with their durations."""
    out, open_ = [], []
    for ev in events:
        if ev.get("name") != "CUDAGraphNode.record":
            continue
        args = ev.get("args") or {}
        if str(args.get("compile_id", "")) != compile_id:
            continue
        if ev.get("ph") == "B":
            if bool(args.get("is_backward", False)) == backward:
                open_.append(float(ev.get("ts", 0)))
        elif ev.get("ph") == "E" and open_:
            start = open_.pop(0)
            out.append((start, float(ev.get("ts", 0)) - start))
        elif ev.get("ph") == "X" and bool(args.get("is_backward", False)) == backward:
            out.append((float(ev.get("ts", 0)), float(ev.get("dur", 0))))
    out.sort()
    return [
        CudaGraphRecording(
            reason=recording_reason(i),
            time_us=round(dur, 1),
        )
        for i, (_, dur) in enumerate(out)
    ]


#: Why a graph compiled for CUDA graphs on the CPU ran without them: torch says nothing of it (it logs a skip only for
#: a graph with CUDA work, ``output_code.cudagraph_post_compile``).
ON_CPU = "the graph runs on the CPU: CUDA graphs record GPU work only (torch skips them without a message)"


def cudagraphs_of(rec: Any, events: list[dict]) -> Optional[CudaGraphs]:
    """``Compile.cudagraphs`` of one recorded graph; None when it was not compiled for CUDA graphs. A graph whose code
    runs on the CPU only (``RawGraph.device``) and never ran through CUDA graphs was skipped for that (``ON_CPU``)."""
    if not getattr(rec, "cudagraphs", False):
        return None
    skips = [_reason(m) for m in rec.cudagraph_skips]
    if not skips and not rec.cudagraphs_used and getattr(rec, "device", "") == "cpu":
        skips = [ON_CPU]
    used = bool(rec.cudagraphs_used) and not skips
    return CudaGraphs(
        used=used,
        skip_reason=skips[0] if skips else None,
        recordings=_recordings(events, rec.compile_id, rec.graph_kind == "backward") if used else [],
    )
