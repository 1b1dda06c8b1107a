"""Measured kernel time: run a compiled function under the PyTorch profiler and attribute the time to the
report's kernels (``Kernel.profile``, ``Report.profile``), then set it against the device's peaks.

Attribution goes through the profiler's structure, never through device-kernel names:

- every call of an Inductor graph is one CPU event ``## Call CompiledFxGraph <key> ##``; its direct children
  are the kernel calls in execution order: a generated kernel is a CPU event named after it (Triton's launcher
  records one, C++ kernels do when compiled with ``cpp.enable_kernel_profile``, under the name the
  ``RAIIAtenRecordFunctionHandle`` of the kernel's own source gives: ``graph_<N>_<name>``, a C++ GEMM template's
  ``graph_<N>_<its inner function>``, ``graph_0_gemm_m32n64k256_kernel``, ``rules.kernel_profile_record``), an
  extern kernel is the aten op it calls (``aten::mm``, ``aten::_scaled_dot_product_efficient_attention``);
- on a GPU the device kernels a CPU event launched are linked to it by the profiler's correlation ids
  (``FunctionEvent.kernels``): a child's device time is that of every device kernel linked to it or to any
  event below it, whatever the kernel is called (cutlass, flash, cuBLAS, ``distribution_elementwise...``);
- each profiled run is one ``inductor_lens::run`` event, forward and backward inside it are marked too; the
  step's device time is every device event of the run (on a GPU, a synchronize ends each run, so all its
  kernels lie inside it); on a CPU the "device" is the CPU and the step's time is the run's wall time.

What no kernel claims is the unattributed remainder: inside a compiled graph (allocations, copies) or
outside (the user's ops around the compiled call, autograd's gradient accumulation).

Warm-up runs are not counted. Profiling never changes the user's results: the ``.grad`` of every parameter
and input, and the random number generators, are restored after the runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from typing import Any, Callable, Optional

from ..analysis.perf import Measured, apply_profile, diagnostic
from ..report.model import DeviceInfo, Kernel, Report
from ..report.rules import kernel_profile_record

WARMUP = 1
RUNS = 5
_RUN, _FWD, _BWD = "inductor_lens::run", "inductor_lens::forward", "inductor_lens::backward"
_SEGMENT = "## Call CompiledFxGraph"
_GPU_TYPES = ("CUDA", "XPU", "PrivateUse1")
_KERNELS_GPU = (
    "device kernels tied to each kernel's CPU call by the profiler's correlation ids (the call and every op below it)"
)
_KERNELS_CPU = (
    "CPU time of each kernel's event inside the compiled graph's call (C++ kernels compiled with "
    "cpp.enable_kernel_profile, extern ops as their aten events)"
)
METHOD_GPU = _KERNELS_GPU + "; step total: every device event of the run"
METHOD_CPU = _KERNELS_CPU + "; step total: wall time of the run"


def _is_device(ev: Any) -> bool:
    return str(getattr(ev, "device_type", "CPU")).endswith(_GPU_TYPES)


def _is_device_kernel(ev: Any) -> bool:
    """A device event that is work (a kernel, a copy), not a ``record_function`` range mirrored on the GPU's
    timeline (``gpu_user_annotation``: counting those would count the step twice)."""
    return (
        _is_device(ev)
        and not getattr(ev, "is_user_annotation", False)
        and not str(ev.name).startswith(("inductor_lens::", _SEGMENT))
    )


def _device_us(ev: Any) -> float:
    """Device time of every kernel linked to ``ev`` or to any event below it."""
    total = sum(float(k.duration) for k in (getattr(ev, "kernels", None) or []))
    return total + sum(_device_us(ch) for ch in ev.cpu_children)


_HOP_OP_RE = re.compile(r"torch\.ops\.(?!higher_order\.)(\w+)\.(\w+)")


def _aten_name(kernel: Any, targets: dict[str, str]) -> str:
    """The profiler event an extern kernel's call shows as: the aten op its call line names (the wrapper calls
    ``aten.randint.low_out`` for Inductor's random seeds, whose fx node is ``prims.inductor_seeds``), else its
    fx node's op, else ``aten::<callee>`` (``extern_kernels.mm`` -> ``aten::mm``). An op of another namespace called
    as ``torch.ops.<ns>.<op>`` (a ``torch.library.custom_op``) shows as ``<ns>::<op>``."""
    callee = str(kernel.metadata.get("callee", kernel.name)).split("[")[0]
    parts = callee.split(".")
    if "higher_order" in parts:  # a higher-order op running an op (graphsafe_run_with_rng_state under
        # activation checkpointing runs the attention op on a saved RNG state): the event is that op's
        m = _HOP_OP_RE.search(str(kernel.source or ""))
        if m:
            return f"{m.group(1)}::{m.group(2)}"
    for ns in ("aten", "prims"):
        if ns in parts and parts.index(ns) + 1 < len(parts):
            return f"{ns}::{parts[parts.index(ns) + 1]}"
    if parts[:2] == ["torch", "ops"] and len(parts) > 3:  # an op of another namespace (a custom op: nu2::mysin)
        return f"{parts[2]}::{parts[3]}"
    for n in kernel.fx_nodes:
        t = targets.get(n, "")
        if t.startswith(("aten.", "prims.")):
            ns, op = t.split(".")[:2]
            return f"{ns}::{op}"
    return f"aten::{parts[-1]}"


class _Plan:
    """What the events of one compiled graph's call should look like: event name -> kernels, in order."""

    def __init__(self, compile: Any):
        self.compile = compile
        graph = compile.graphs.get("post_grad")
        targets = {n.name: n.target for n in (graph.nodes if graph else [])}
        self.names: dict[str, list[str]] = defaultdict(list)
        for k in compile.kernels:
            key = _aten_name(k, targets) if k.language == "extern" else _generated_key(k)
            self.names[key].append(k.name)

    def score(self, children: list[Any]) -> int:
        return sum(1 for ch in children if _event_key(ch.name) in self.names)


def _event_key(name: str) -> str:
    return re.sub(r"^graph_\d+_", "", name)  # C++ kernels profile as graph_<N>_<kernel>


def _generated_key(k: Kernel) -> str:
    """The event key of a generated kernel: the record its own source declares (a profiled C++ kernel's; a C++ GEMM
    template records itself under its inner function's name, ``graph_0_gemm_m32n64k256_kernel``, never
    ``graph_0_cpp_fused_addmm_relu_1``: nu28 D2), else its name (Triton's launcher records the kernel's name)."""
    record = kernel_profile_record(k.source) if k.language == "cpp" else ""
    return _event_key(record) if record else k.name


def _in(ev: Any, span: Any) -> bool:
    return span.time_range.start <= ev.time_range.start <= span.time_range.end


def _read_segment(seg: Any, plan: _Plan, on_gpu: bool, times: dict, calls: dict, ops: dict) -> float:
    """Add the kernel calls of one compiled graph's call to ``times``/``calls``; returns the time of its
    events that no kernel claimed (their names into ``ops``)."""
    unmatched = 0.0
    cursor: dict[str, int] = defaultdict(int)
    for ch in sorted(seg.cpu_children, key=lambda e: e.time_range.start):
        us = _device_us(ch) if on_gpu else float(ch.cpu_time_total)
        key = _event_key(ch.name)
        names = plan.names.get(key)
        if not names:
            unmatched += us
            if us > 0:
                ops[ch.name] += us
            continue
        kname = names[cursor[key] % len(names)]
        cursor[key] += 1
        times[(plan.compile.id, kname)] += us
        calls[(plan.compile.id, kname)] += 1
    return unmatched


def _pick(plans: list[_Plan], seg: Any, kinds: tuple, used: dict) -> Optional[_Plan]:
    """The compile a graph call ran: best match of kernel names; identical graphs (regional compilation)
    take turns in order."""
    children = seg.cpu_children
    candidates = [p for p in plans if p.compile.graph_kind in kinds] or plans
    if not candidates:
        return None
    plan = max(candidates, key=lambda p: (p.score(children), -used[p.compile.id]))
    used[plan.compile.id] += 1
    return plan


def attribute(events: list[Any], report: Report, on_gpu: bool) -> Measured:
    """Per-run kernel times from the profiler's events (see the module docstring)."""
    m = Measured(device="cuda" if on_gpu else "cpu", runs=0, warmup=WARMUP, method=METHOD_GPU if on_gpu else METHOD_CPU)
    # on a GPU, record_function also leaves a device-side range of the same name (on the GPU's clock, which lags
    # the CPU's): only the CPU-side ranges say which phase a graph call belongs to
    cpu_events = [e for e in events if not _is_device(e)]
    runs = sorted((e for e in cpu_events if e.name == _RUN), key=lambda e: e.time_range.start)
    marks = [e for e in cpu_events if e.name in (_FWD, _BWD)]
    segments = sorted((e for e in cpu_events if e.name.startswith(_SEGMENT)), key=lambda e: e.time_range.start)
    device_events = [e for e in events if _is_device_kernel(e)] if on_gpu else []
    plans = [_Plan(c) for c in report.compiles]
    m.runs = len(runs)
    per_run: list[tuple[dict, dict]] = []
    ops: dict[str, float] = defaultdict(float)
    for run in runs:
        times: dict[tuple[str, str], float] = defaultdict(float)
        calls: dict[tuple[str, str], int] = defaultdict(int)
        inside_unmatched = 0.0
        used: dict[str, int] = defaultdict(int)
        for seg in (s for s in segments if _in(s, run)):
            phase = next((mk.name for mk in marks if _in(seg, mk)), _FWD)
            plan = _pick(plans, seg, ("backward",) if phase == _BWD else ("forward", "inference"), used)
            if plan is not None:
                inside_unmatched += _read_segment(seg, plan, on_gpu, times, calls, ops)
        if on_gpu:
            step = sum(e.time_range.end - e.time_range.start for e in device_events if _in(e, run))
            if not step:  # no device events listed: every device kernel linked to a CPU event of the run
                step = sum(
                    float(k.duration)
                    for e in events
                    if not _is_device(e) and _in(e, run)
                    for k in (getattr(e, "kernels", None) or [])
                )
        else:
            step = float(run.cpu_time_total)
        m.step_us.append(step)
        m.inside_unmatched_us.append(inside_unmatched)
        per_run.append((times, calls))
    _collect(m, per_run, ops)
    return m


def _collect(m: Measured, per_run: list[tuple[dict, dict]], ops: dict) -> None:
    keys = {k for times, _ in per_run for k in times}
    for key in keys:
        m.kernels[key] = [times.get(key, 0.0) for times, _ in per_run]
        m.calls[key] = sum(calls.get(key, 0) for _, calls in per_run) / max(len(per_run), 1)
    m.unmatched_ops = {n: us / max(len(per_run), 1) for n, us in ops.items()}


def _is_backward_call(seg: Any) -> bool:
    ev = seg.cpu_parent
    while ev is not None:
        if "CompiledFunctionBackward" in ev.name:
            return True
        ev = ev.cpu_parent
    return False


def attribute_calls(events: list[Any], report: Report, on_gpu: bool) -> Measured:
    """Script mode (``inductor-lens run --profile``): no marked runs; every call of a compiled graph is one
    run of it. The first call of a graph (which also built and tuned its kernels) is not counted when it ran
    more than once. The total is the time inside the compiled graphs' calls (one call of each graph)."""
    m = Measured(
        device="cuda" if on_gpu else "cpu",
        runs=0,
        warmup=1,
        method=(
            "script mode: every call of a compiled graph is a run (its first call not counted when "
            "there are more); total: the time inside one call of each compiled graph; "
        )
        + (_KERNELS_GPU if on_gpu else _KERNELS_CPU),
    )
    plans = [_Plan(c) for c in report.compiles]
    used: dict[str, int] = defaultdict(int)
    by_compile: dict[str, list[tuple]] = defaultdict(list)
    ops: dict[str, float] = defaultdict(float)
    for seg in sorted(
        (e for e in events if e.name.startswith(_SEGMENT) and not _is_device(e)), key=lambda e: e.time_range.start
    ):
        kinds = ("backward",) if _is_backward_call(seg) else ("forward", "inference")
        plan = _pick(plans, seg, kinds, used)
        if plan is None:
            continue
        times: dict = defaultdict(float)
        calls: dict = defaultdict(int)
        seg_ops: dict = defaultdict(float)
        unmatched = _read_segment(seg, plan, on_gpu, times, calls, seg_ops)
        total = _device_us(seg) if on_gpu else float(seg.cpu_time_total)
        by_compile[plan.compile.id].append((times, calls, unmatched, total, seg_ops))
    step = inside = 0.0
    once = [cid for cid, rows in by_compile.items() if len(rows) == 1]
    if once:  # timed on its first call, which nothing ran before: no warm-up
        m.warmup = 0
        m.method += (
            f"; {', '.join(once)} ran once: timed on that first call (cold: caches, allocator and page faults"
            " as a first run meets them), with no warm-up run; call it more than once to time it warm"
        )
    for _cid, rows in by_compile.items():
        rows = rows[1:] if len(rows) > 1 else rows
        m.runs = max(m.runs, len(rows))
        per_run = [(r[0], r[1]) for r in rows]
        keys = {k for t, _ in per_run for k in t}
        for key in keys:
            m.kernels[key] = [t.get(key, 0.0) for t, _ in per_run]
            m.calls[key] = sum(c.get(key, 0) for _, c in per_run) / len(per_run)
        # the median call, as each kernel's time is (the mean was one stalled call on a busy machine, nu20 D2)
        step += statistics.median(r[3] for r in rows)
        inside += statistics.median(r[2] for r in rows)
        for r in rows:
            for n, us in r[4].items():
                ops[n] += us / len(rows)
    m.step_us, m.inside_unmatched_us = [step], [inside]
    m.unmatched_ops = dict(ops)
    return m


@contextlib.contextmanager
def _preserved(compiled: Callable, args: tuple):
    """Restore what extra runs would change: ``.grad`` of parameters and inputs, the RNG states, and the values
    the runs write in place: the module's buffers (a BatchNorm's running statistics and ``num_batches_tracked``)
    and the tensors passed in (each put back only if a run wrote it: its version counter moved)."""
    import torch

    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    params = getattr(compiled, "parameters", None) or getattr(getattr(compiled, "_orig_mod", None), "parameters", None)
    if callable(params):
        with contextlib.suppress(Exception):
            leaves += list(params())
    grads = [(t, None if t.grad is None else t.grad.detach().clone()) for t in leaves]
    written = [a for a in args if isinstance(a, torch.Tensor)]
    buffers = getattr(compiled, "buffers", None) or getattr(getattr(compiled, "_orig_mod", None), "buffers", None)
    if callable(buffers):
        with contextlib.suppress(Exception):
            written += list(buffers())
    values = [(t, t._version, t.detach().clone()) for t in written]
    cpu_rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    try:
        yield
    finally:
        with torch.no_grad():
            for t, g in grads:
                t.grad = g
            for t, version, value in values:
                if t._version != version:
                    t.copy_(value)
        torch.set_rng_state(cpu_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)


def device_info(on_gpu: bool, args: tuple) -> DeviceInfo:
    """The device's peaks: the datasheet table on a GPU, a short measurement on a CPU (:func:`probe_cpu`, once per
    process and thread count)."""
    import torch

    from ..analysis.devices import lookup

    if on_gpu:
        index = next((a.device.index for a in args if isinstance(a, torch.Tensor) and a.is_cuda), None)
        index = torch.cuda.current_device() if index is None else index
        name = torch.cuda.get_device_name(index)
        found = lookup(name)
        return found or DeviceInfo(
            name=name, source="not in inductor_lens's table of peaks (inductor_lens/devices.py): no fraction of peak"
        )
    import torch

    threads = torch.get_num_threads()
    found = _PROBED.get(threads)
    if found is None:
        found = _PROBED[threads] = probe_cpu()
    return found


#: The CPU's measured peaks by thread count, probed once per process (a second of copies and products each time,
#: and the same machine: two profiles of one session are set against the same ceiling)
_PROBED: dict[int, DeviceInfo] = {}


def probe_cpu(mib: int = 128, repeats: int = 5) -> DeviceInfo:
    """Measured CPU peaks: memory bandwidth from the best of ``repeats`` copies of a ``mib`` MiB float32 tensor
    (``dst.copy_(src)``; read + write counted), fp32 compute from the best of 7 ``torch.mm`` of 1024x1024."""
    import platform

    import torch

    n = mib * (1 << 20) // 4
    src, dst = torch.ones(n), torch.empty(n)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t)
    gbps = 2 * n * 4 / best / 1e9
    a = torch.full((1024, 1024), 0.5)  # no random numbers: the RNG state stays the user's
    torch.mm(a, a)
    best_mm = float("inf")
    for _ in range(7):  # the best of several: a busy machine's slow run would lower the ceiling
        t = time.perf_counter()
        torch.mm(a, a)
        best_mm = min(best_mm, time.perf_counter() - t)
    tflops = 2 * 1024**3 / best_mm / 1e12
    del src, dst
    name = platform.processor() or platform.machine() or "cpu"
    return DeviceInfo(
        name=f"CPU ({name}, {torch.get_num_threads()} threads)",
        threads=torch.get_num_threads(),
        peak_gbps=round(gbps, 2),
        peak_tflops={"fp32": round(tflops, 4)},
        source=f"measured at profile time: best of {repeats} copies of a {mib} MiB float32 tensor "
        f"(torch copy_, bytes read + written) and best of 7 torch.mm of 1024x1024 float32; "
        f"a measured ceiling, not a datasheet peak",
    )


#: What the profiler's C++ side (kineto) writes to the process's stderr each time it starts and stops
#: (``USDT:2026-12-05 12:23:14 1011:1011 SyncActivityProfilerHandler.cpp:52] profiler_start``, ``STAGE:... Completed
#: Stage: Warm Up``): two lines in the user's notebook or terminal for every profiled capture.
_KINETO_CHATTER = re.compile(rb"^(?:USDT|STAGE):\S+ \S+ \d+:\d+ \w+\.cpp:\d+\] ")


@contextlib.contextmanager
def _kineto_quiet():
    """The profiler's start or stop without kineto's chatter (:data:`_KINETO_CHATTER`) on stderr. The process's
    file descriptor 2 (where C++ writes; Jupyter forwards it to the cell) goes to a temporary file for the call only;
    afterwards every other line written there meanwhile (another thread's, a real error) is written back to stderr,
    and the descriptor is as it was. Where it cannot be redirected (no fd 2), the call runs as it is."""
    try:
        sys.stderr.flush()
    except Exception:  # a closed or replaced stream: nothing of ours to flush
        pass
    try:
        saved = os.dup(2)
        sink = tempfile.TemporaryFile()
    except OSError:
        yield
        return
    try:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            sink.seek(0)
            kept = [line for line in sink.read().splitlines(keepends=True) if not _KINETO_CHATTER.match(line)]
            if kept:
                os.write(2, b"".join(kept))
    finally:
        os.close(saved)
        sink.close()


class _QuietProfile:
    """``torch.profiler.profile`` whose start and stop leave no kineto chatter on stderr (:func:`_kineto_quiet`);
    what runs between them writes to stderr as usual."""

    def __init__(self, prof: Any):
        self.prof = prof

    def __enter__(self) -> Any:
        with _kineto_quiet():
            self.prof.__enter__()
        return self.prof

    def __exit__(self, *exc: Any) -> Any:
        with _kineto_quiet():
            return self.prof.__exit__(*exc)


@contextlib.contextmanager
def profiling_script():
    """``inductor-lens run --profile``: the whole script under the PyTorch profiler (the run pipeline,
    ``capturing/pipeline.py``, switches kernel profiling on around it). Yields a function that turns the
    captured report into the profiled one (call it after the ``with`` block)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    on_gpu = torch.cuda.is_available()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    prof = profile(activities=activities)

    def apply(report: Report) -> Report:
        gpu = on_gpu and report.device != "cpu"
        measured = attribute_calls(list(prof.events()), report, gpu)
        info: Optional[DeviceInfo] = None
        with contextlib.suppress(Exception):
            info = device_info(gpu, ())
        return apply_profile(report, measured, info)

    quiet = _QuietProfile(prof)
    quiet.__enter__()
    try:
        yield apply
    finally:
        if on_gpu:
            torch.cuda.synchronize()
        quiet.__exit__(None, None, None)


def _memory_peaks(report: Report, step: Callable, on_gpu: bool, diagnostics: list) -> Report:
    """The measured peak of each compiled graph (``capturing/memory.py``); a failure is a diagnostic."""
    from .memory import measure_peaks

    try:
        return measure_peaks(report, step, on_gpu)
    except Exception as e:
        diagnostics.append(diagnostic("profile_failed", f"profile: the memory peaks could not be measured ({e})"))
        return report


def profile_kernels(report: Report, compiled: Callable, args: tuple, backward: bool = False) -> Report:
    """A copy of ``report`` with measured kernel times, costs against the device's peaks, and roll-ups."""
    import dataclasses

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from .outputs import backward as _backward

    on_gpu = torch.cuda.is_available() and any(isinstance(a, torch.Tensor) and a.is_cuda for a in args)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])

    def step() -> None:
        with record_function(_FWD):
            out = compiled(*args)
        if backward:
            with record_function(_BWD):
                _backward(out)
        if on_gpu:
            torch.cuda.synchronize()

    diagnostics = list(report.diagnostics)
    try:
        with _preserved(compiled, args):
            for _ in range(WARMUP):
                step()
            with _QuietProfile(profile(activities=activities)) as prof:
                for _ in range(RUNS):
                    with record_function(_RUN):
                        step()
            events = list(prof.events())
            report = _memory_peaks(report, step, on_gpu, diagnostics)
    except Exception as e:
        diagnostics.append(
            diagnostic(
                "profile_failed", f"profile: the profiled runs failed ({type(e).__name__}: {e}); no kernel times"
            )
        )
        return dataclasses.replace(report, diagnostics=diagnostics)
    measured = attribute(events, report, on_gpu)
    info: Optional[DeviceInfo] = None
    try:
        info = device_info(on_gpu, args)
    except Exception as e:
        diagnostics.append(
            diagnostic(
                "profile_peaks",
                f"profile: the device's peaks are unknown ({type(e).__name__}: {e}); no fraction of peak",
            )
        )
    return apply_profile(dataclasses.replace(report, diagnostics=diagnostics), measured, info)
