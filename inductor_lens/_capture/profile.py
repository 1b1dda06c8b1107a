"""Measured kernel time: run a compiled function under the PyTorch profiler and attribute the time
to the report's kernels (``Kernel.profile``).

Generated kernels are matched by name (Triton kernels are device kernels named like the kernel, linked by
the profiler to the CPU call that launched them; C++ kernels are recorded when ``cpp.enable_kernel_profile``
was on while compiling). Extern kernels are
matched to the aten op they call (``extern_kernels.mm`` -> ``aten::mm``), in execution order.
Forward and backward are told apart by ``record_function`` markers around each.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from typing import Any, Callable

from ..model import Diagnostic, Kernel, Report

WARMUP = 1
ITERATIONS = 3
_FWD, _BWD = "inductor_lens::forward", "inductor_lens::backward"


def _aten_name(callee: str) -> str:
    base = callee.rsplit(".", 1)[-1]
    return f"aten::{base}"


def _total_time(ev: Any, on_gpu: bool) -> float:
    if on_gpu:
        for attr in ("device_time_total", "cuda_time_total"):
            v = getattr(ev, attr, None)
            if v:
                return float(v)
        return 0.0
    return float(getattr(ev, "cpu_time_total", 0.0) or 0.0)


def profile_kernels(report: Report, compiled: Callable, args: tuple, backward: bool = False) -> Report:
    """A copy of ``report`` whose kernels carry ``profile = {total_us, calls, per_call_us, share}``."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from .session import _backward

    on_gpu = torch.cuda.is_available() and any(
        isinstance(a, torch.Tensor) and a.is_cuda for a in args)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])

    def step() -> None:
        with record_function(_FWD):
            out = compiled(*args)
        if backward:
            with record_function(_BWD):
                _backward(out)

    diagnostics = list(report.diagnostics)
    try:
        for _ in range(WARMUP):
            step()
        if on_gpu:
            torch.cuda.synchronize()
        with profile(activities=activities) as prof:
            for _ in range(ITERATIONS):
                step()
            if on_gpu:
                torch.cuda.synchronize()
        events = list(prof.events())
    except Exception as e:
        diagnostics.append(Diagnostic("profile_failed", f"profile: the profiled runs failed ({type(e).__name__}: {e}); "
                                      "no kernel times"))
        return dataclasses.replace(report, diagnostics=diagnostics)

    # which marker (forward/backward) each CPU event falls in, by time
    markers = [(ev.time_range.start, ev.time_range.end, "backward" if ev.name == _BWD else "forward")
               for ev in events if ev.name in (_FWD, _BWD)]

    def phase_of(ev: Any) -> str:
        t = ev.time_range.start
        for start, end, kind in markers:
            if start <= t <= end:
                return kind
        return "forward"

    # CPU events by (forward|backward, name); device kernels by the phase of the CPU call that launched
    # them (the profiler links each kernel to its launch), so a kernel name used by both the forward and
    # the backward graph is told apart
    by_name: dict[tuple[str, str], list[float]] = defaultdict(list)
    on_device: dict[tuple[str, str], list[float]] = defaultdict(list)
    for ev in events:
        if str(getattr(ev, "device_type", "CPU")).endswith(("CUDA", "XPU", "PrivateUse1")):
            continue
        phase = phase_of(ev)
        name = re.sub(r"^graph_\d+_", "", ev.name)  # C++ kernels profile as graph_<N>_<kernel>
        by_name[(phase, name)].append(_total_time(ev, on_gpu))
        for kern in getattr(ev, "kernels", None) or []:
            on_device[(phase, kern.name)].append(float(kern.duration))

    times: dict[tuple[str, str], dict] = {}
    extern_cursor: dict[tuple[str, str], int] = defaultdict(int)
    for c in report.compiles:
        phase = "backward" if c.graph_kind == "backward" else "forward"
        for k in c.kernels:
            samples: list[float] = []
            if k.language == "extern":
                key = (phase, _aten_name(k.metadata.get("callee", k.name)))
                per_iter = [t for t in by_name.get(key, [])]
                n_same = sum(1 for kk in c.kernels if kk.language == "extern"
                             and kk.metadata.get("callee") == k.metadata.get("callee"))
                i = extern_cursor[(c.id, key[1])]
                extern_cursor[(c.id, key[1])] += 1
                samples = per_iter[i::n_same] if n_same else []
            else:
                samples = (on_device if on_gpu else by_name).get((phase, k.name)) or []
            if samples:
                times[(c.id, k.name)] = {"total_us": round(sum(samples) / ITERATIONS, 3),
                                         "calls": round(len(samples) / ITERATIONS, 2)}
    total = sum(t["total_us"] for t in times.values()) or 1.0
    compiles = []
    for c in report.compiles:
        kernels: list[Kernel] = []
        for k in c.kernels:
            t = times.get((c.id, k.name))
            if t is not None:
                t = dict(t, per_call_us=round(t["total_us"] / max(t["calls"], 1e-9), 3),
                         share=round(t["total_us"] / total, 4), device="cuda" if on_gpu else "cpu",
                         iterations=ITERATIONS)
            kernels.append(dataclasses.replace(k, profile=t))
        compiles.append(dataclasses.replace(c, kernels=kernels))
    missing = [f"{c.id}: {k.name}" for c in compiles for k in c.kernels if k.profile is None]
    if missing:
        diagnostics.append(Diagnostic("profile_failed", "profile: no measured time for " + ", ".join(missing[:20]) +
                                      (" ..." if len(missing) > 20 else "") +
                                      " (the profiler saw no event with that kernel's name)"))
    return dataclasses.replace(report, compiles=compiles, diagnostics=diagnostics)
