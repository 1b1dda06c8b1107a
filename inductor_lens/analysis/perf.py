"""Measured time against the hardware: achieved throughput, fraction of peak, roll-ups. Torch-free.

``inductor_lens.capturing.kernel_timing`` measures (``Measured``); :func:`apply_profile` turns that, the kernels'
``cost`` and the device's peaks into ``Kernel.profile`` (``KernelProfile``) and ``Report.profile``
(``StepProfile``), see docs/report-schema.md.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field
from typing import Optional

from ..report.lines import mark_times
from ..report.model import (
    Compile,
    DeviceInfo,
    Kernel,
    KernelProfile,
    KindTime,
    OffEstimate,
    OpTime,
    Report,
    StepProfile,
)
from ..report.rules import (
    FEW_RUNS,
    few_runs_verdict,
    noisy_profile_text,
    noisy_text,
    noisy_verdict,
    peak_fraction_text,
)
from .devices import peak_dtype
from .reproducer import with_scripts

#: A kernel whose measured time is this many times off Inductor's own estimate (either way) is flagged.
ESTIMATE_FACTOR = 3.0


@dataclass
class Measured:
    """What the profiler saw, per run (warm-up runs excluded)."""

    device: str
    runs: int
    warmup: int
    #: (compile id, kernel name) -> time of that kernel in each run (us), and launches per run
    kernels: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    calls: dict[tuple[str, str], float] = field(default_factory=dict)
    #: per run: all device time of the step, and the part inside compiled graphs not tied to a kernel
    step_us: list[float] = field(default_factory=list)
    inside_unmatched_us: list[float] = field(default_factory=list)
    #: op name -> mean time per run of the events inside compiled graphs that no kernel claimed
    unmatched_ops: dict[str, float] = field(default_factory=dict)
    method: str = ""


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _median(xs: list[float]) -> float:
    """The figure a time is given as: the median of the runs (as ``torch.utils.benchmark`` gives it), which one
    stalled run of a few (a busy machine, OpenMP threads waking) does not move as it moves the mean."""
    return statistics.median(xs) if xs else 0.0


def _floating(node) -> Optional[str]:
    d = node.dtype if node is not None else None
    return d if d and ("float" in d or d in ("half", "double")) else None


def _dtype(kernel: Kernel, compile: Compile) -> Optional[str]:
    """The floating dtype a kernel computes in, which picks its roof: its FX nodes' output dtype, else (an op with
    several outputs, such as SDPA's cuDNN and efficient attention, whose node is a tuple with no dtype) the
    dtype of its first floating input, the query."""
    graph = compile.graphs.get("post_grad")
    nodes = {n.name: n for n in (graph.nodes if graph else [])}
    for name in kernel.fx_nodes:
        found = _floating(nodes.get(name))
        if found:
            return found
    for name in kernel.fx_nodes:
        node = nodes.get(name)
        for i in node.inputs if node is not None else []:
            found = _floating(nodes.get(i))
            if found:
                return found
    return None


def against_peak(
    per_call_us: float, kernel: Kernel, compile: Compile, device: Optional[DeviceInfo], on_gpu: bool
) -> dict:
    """``achieved_gbps``, ``achieved_tflops``, ``arithmetic_intensity``, ``peak_fraction``, ``bound`` and a
    one-line ``verdict`` for one call of ``kernel`` taking ``per_call_us``; null where unknown."""
    out: dict = {
        "achieved_gbps": None,
        "achieved_tflops": None,
        "arithmetic_intensity": None,
        "peak_fraction": None,
        "bound": None,
        "verdict": "",
        "at_most": False,
    }
    cost = kernel.cost
    if cost is None or per_call_us <= 0:
        return out
    nbytes = None if cost.bytes_read is None else cost.bytes_read + (cost.bytes_written or 0.0)
    if nbytes is not None:
        out["achieved_gbps"] = round(nbytes / per_call_us / 1e3, 3)
    if cost.flops is not None:
        out["achieved_tflops"] = round(cost.flops / per_call_us / 1e6, 6)
    out["arithmetic_intensity"] = cost.arithmetic_intensity  # decided once, on the model (Cost)
    if device is None:
        return out
    key = peak_dtype(cost.integer_ops or _dtype(kernel, compile))
    peak_tf = device.peak_tflops.get(key)
    peak_bw = device.peak_gbps
    memory = "HBM bandwidth" if on_gpu else "memory bandwidth (measured copy)"
    ai = out["arithmetic_intensity"]
    if cost.integer_ops and peak_tf is None:  # integer ops: never against a floating-point peak
        if peak_bw and out["achieved_gbps"] is not None:
            out["verdict"] = f"{out['achieved_gbps'] / peak_bw:.0%} of {memory}; " + no_integer_peak(
                cost.integer_ops, on_gpu
            )
        return out
    if peak_bw and out["achieved_gbps"] is not None and (peak_tf is None or ai is None or ai * peak_bw / 1e3 < peak_tf):
        out["bound"] = "memory"
        out["peak_fraction"] = round(out["achieved_gbps"] / peak_bw, 4)
        out["at_most"] = bool({"bytes_read", "bytes_written"} & set(cost.upper_bounds))
        out["verdict"] = f"{peak_fraction_text(out['peak_fraction'], out['at_most'])} of {memory}; memory-bound"
    elif peak_tf and out["achieved_tflops"] is not None:
        out["bound"] = "compute"
        out["peak_fraction"] = round(out["achieved_tflops"] / peak_tf, 4)
        out["at_most"] = "flops" in cost.upper_bounds
        out["verdict"] = (
            f"{peak_fraction_text(out['peak_fraction'], out['at_most'])} of {key} compute peak; compute-bound"
        )
    if out["peak_fraction"] is not None and out["peak_fraction"] > OVER_PEAK:
        out["verdict"] = _over_peak(out, key, memory, on_gpu, generated=kernel.language in ("cpp", "triton"))
        out["peak_fraction"] = None  # not a fraction of anything: the count is above what ran
        out["at_most"] = False  # said in the verdict: no fraction to bound
    return out


def no_integer_peak(dtype: str, on_gpu: bool) -> str:
    """What a verdict says of a kernel of ``dtype`` integer ops on a device with no peak for them."""
    where = (
        "a CPU's measured ceiling is a float32 torch.mm's; no VNNI/AMX int8 figure is measured"
        if not on_gpu
        else "this device is not in inductor_lens's table of int8 peaks"
    )
    return f"no {dtype} peak known ({where}): its {dtype} ops are not compared with a floating-point peak"


#: Above this fraction of a peak, the count (bytes or FLOPs) is taken to be more than the kernel did; the
#: margin covers the spread of the timing and of datasheet peaks.
OVER_PEAK = 1.1


def _over_peak(out: dict, key: Optional[str], memory: str, on_gpu: bool = True, generated: bool = False) -> str:
    if out["bound"] == "memory":
        return (
            f"{out['achieved_gbps']:,.0f} GB/s counted, above the {memory}: the kernel moved fewer bytes "
            "to and from memory than its buffers hold (indexed loads or stores, e.g. an embedding gather or "
            "scatter, touch only some rows) or found them in a cache; the byte count is an upper bound, its "
            "fraction of peak unknown"
        )
    if key == "int8":  # integer ops, against the int8 (tensor-core) peak
        return (
            f"{out['achieved_tflops']:,.1f} TOP/s counted, above the int8 compute peak: the kernel did fewer "
            "operations than counted; the op count is an upper bound, its fraction of peak unknown"
        )
    if not on_gpu and generated:  # Inductor's own loops do not outrun the library's matmul: the count is the suspect
        return (
            f"{out['achieved_tflops']:,.2f} TFLOP/s counted, above the measured {key} ceiling (the best of a few "
            "torch.mm at profile time), which a kernel Inductor generated does not outrun: it did fewer operations "
            "than counted (the FLOP count is an upper bound), or the machine was busy when the probe ran; its "
            "fraction of peak unknown"
        )
    if not on_gpu:  # the CPU's ceiling is measured (a few torch.mm at profile time), not a datasheet's
        return (
            f"{out['achieved_tflops']:,.2f} TFLOP/s counted, above the measured {key} ceiling (the best of a few "
            "torch.mm at profile time): the kernel ran faster than that probe (its own library's kernels, or a "
            "busy machine when the probe ran), or did fewer operations than counted; its fraction of peak unknown"
        )
    return (
        f"{out['achieved_tflops']:,.1f} TFLOP/s counted, above the {key} compute peak: the kernel did fewer "
        "operations than counted, or ran on faster units (e.g. TF32 tensor cores for float32); the FLOP count "
        "is an upper bound, its fraction of peak unknown"
    )


def _estimate_us(kernel: Kernel, compile: Compile) -> Optional[float]:
    """Inductor's estimate of one call: the mean over the kernel's call sites of the estimates of each site's
    fused nodes (as ``Kernel.cost`` counts one call); ``None`` where a fused node has no estimate."""
    est = {n.name: n.estimated_runtime_us for n in compile.fused_nodes if n.name in kernel.fused_nodes}
    sites = [s for s in kernel.call_sites if s] or [list(kernel.fused_nodes)]
    per_site = []
    for site in sites:
        values = [est.get(f) for f in site]
        if not values or any(v is None for v in values):
            return None
        per_site.append(sum(values))
    return round(sum(per_site) / len(per_site), 3)


def _kind_of(kernel: Kernel, compile: Compile) -> str:
    if kernel.language == "extern":
        parts = str(kernel.metadata.get("callee", kernel.name)).split("[")[0].split(".")
        for ns in ("aten", "prims"):  # torch.ops.aten.randint.low_out -> randint
            if ns in parts and parts.index(ns) + 1 < len(parts):
                return f"extern {parts[parts.index(ns) + 1]}"
        return f"extern {parts[-1]}"  # extern_kernels.mm -> mm
    kinds = [n.kind for n in compile.fused_nodes if n.name in kernel.fused_nodes]
    return kinds[0] if kinds else kernel.language


def _share(us: float, total: float) -> Optional[float]:
    return round(us / total, 4) if total else None


def _rollup(rows: dict, total: float, make) -> list:
    """The rows of one roll-up, longest first: ``make(key, us, share, kernels, noisy=...)`` for each."""
    out = [make(key, round(us, 3), _share(us, total), names, noisy=noisy) for key, (us, names, noisy) in rows.items()]
    return sorted(out, key=lambda r: -r.us)


def _add(rows: dict, key, us: float, kernel: str, noisy: str) -> None:
    total, names, noisy_names = rows.get(key, (0.0, [], []))
    rows[key] = (total + us, [*names, kernel], [*noisy_names, kernel] if noisy else noisy_names)


def apply_profile(report: Report, m: Measured, device: Optional[DeviceInfo]) -> Report:
    """A copy of ``report`` with ``Kernel.profile``, ``Report.profile`` and ``Report.device_info`` filled.

    Profiling several compiled functions of one report one after the other (the magic's ``-f a -f b``)
    composes: kernels measured before keep their times, and the step totals add up."""
    on_gpu = m.device != "cpu"
    prev = report.profile
    step = _median(m.step_us) + ((prev.device_total_us or 0.0) if prev else 0.0)
    inside = _median(m.inside_unmatched_us) + (prev.inside_graphs_unmatched_us if prev else 0.0)
    measured: dict[tuple[str, str], KernelProfile] = {}
    for c in report.compiles:
        for k in c.kernels:
            runs = m.kernels.get((c.id, k.name))
            if runs:
                measured[(c.id, k.name)] = _kernel_profile(k, c, runs, m, device, on_gpu)
            elif k.profile is not None and prev:
                measured[(c.id, k.name)] = k.profile
    attributed = sum(p.total_us for p in measured.values())
    by_kind: dict = {}
    off: list[OffEstimate] = []
    compiles = []
    for c in report.compiles:
        kernels = []
        for k in c.kernels:
            prof = measured.get((c.id, k.name))
            if prof is None:
                kernels.append(dataclasses.replace(k, profile=None))
                continue
            mean = prof.total_us
            prof = dataclasses.replace(prof, share=_share(mean, attributed), share_of_step=_share(mean, step))
            kernels.append(dataclasses.replace(k, profile=prof))
            if prof.estimate_ratio and not (1 / ESTIMATE_FACTOR <= prof.estimate_ratio <= ESTIMATE_FACTOR):
                off.append(OffEstimate(c.id, k.name, prof.per_call_us, prof.estimated_us, prof.estimate_ratio))
            _add(by_kind, _kind_of(k, c), mean, k.name, prof.noisy)
        compiles.append(dataclasses.replace(c, kernels=kernels))
    unattributed = max(step - attributed, 0.0)
    ops = {o.name: o.us for o in (prev.unmatched_ops if prev else [])}
    for n, us in m.unmatched_ops.items():
        ops[n] = ops.get(n, 0.0) + us
    summary = StepProfile(
        device=m.device,
        runs=m.runs,
        warmup=m.warmup,
        method=m.method,
        statistic="median",
        device_total_us=round(step, 3),
        device_total_std_us=round(statistics.stdev(m.step_us), 3) if len(m.step_us) > 1 else 0.0,
        # the fastest and slowest run of the step, where it was run whole more than once (not in script mode,
        # where the step is each graph's median call added up, nor where several profiles composed)
        device_total_min_us=round(min(m.step_us), 3) if len(m.step_us) > 1 and not prev else None,
        device_total_max_us=round(max(m.step_us), 3) if len(m.step_us) > 1 and not prev else None,
        attributed_us=round(attributed, 3),
        unattributed_us=round(unattributed, 3),
        unattributed_share=_share(unattributed, step),
        inside_graphs_unmatched_us=round(inside, 3),
        outside_graphs_us=round(max(unattributed - inside, 0.0), 3),
        unmatched_ops=[OpTime(n, round(us, 3)) for n, us in sorted(ops.items(), key=lambda kv: -kv[1])[:20]],
        # by_line and by_module: launch by launch, as the fused nodes' times (report/lines.mark_times, below)
        by_kind=_rollup(by_kind, attributed, KindTime),
        off_estimate=off,
        estimate_factor=ESTIMATE_FACTOR,
    )
    missing = [f"{c.id}: {k.name}" for c in compiles for k in c.kernels if k.profile is None]
    timed = [k.profile for c in compiles for k in c.kernels if k.profile is not None]
    noisy = sum(1 for p in timed if p.noisy)
    # a later profile of the same report replaces what an earlier one said (chosen by code)
    diagnostics = [
        d for d in report.diagnostics if getattr(d, "code", None) not in ("profile_missing", "profile_noisy")
    ]
    if missing:
        diagnostics.append(_missing_diagnostic(missing))
    if noisy * 2 > len(timed):  # most kernels' runs disagree: the machine, not a kernel
        diagnostics.append(diagnostic("profile_noisy", noisy_profile_text(noisy, len(timed))))
    # each kernel's script again, now that it can compare its time with the report's (REPORT_US)
    return with_scripts(
        mark_times(
            dataclasses.replace(
                report,
                compiles=compiles,
                profile=summary,
                device_info=device or report.device_info,
                diagnostics=diagnostics,
            )
        )
    )


def _kernel_profile(
    k: Kernel, c: Compile, runs: list[float], m: Measured, device: Optional[DeviceInfo], on_gpu: bool
) -> KernelProfile:
    median = _median(runs)
    calls = m.calls.get((c.id, k.name), 1.0)
    per_call = median / max(calls, 1e-9)
    est = _estimate_us(k, c)
    peak = against_peak(per_call, k, c, device, on_gpu)
    fastest, slowest = round(min(runs), 3), round(max(runs), 3)
    if noisy_text(median, fastest, slowest):  # the median's verdict rests on runs that disagree: it says so
        at_fastest = against_peak(fastest / max(calls, 1e-9), k, c, device, on_gpu)["peak_fraction"]
        peak["verdict"] = noisy_verdict(peak["verdict"], at_fastest, peak["at_most"])
    elif len(runs) < FEW_RUNS:  # one run: no spread to tell it from noise (nu28 D6), the verdict says so
        peak["verdict"] = few_runs_verdict(peak["verdict"])
    return KernelProfile(
        total_us=round(median, 3),
        std_us=round(statistics.stdev(runs), 3) if len(runs) > 1 else 0.0,
        iterations=len(runs),
        statistic="median",
        min_us=fastest,
        max_us=slowest,
        calls=round(calls, 2),
        per_call_us=round(per_call, 3),
        device=m.device,
        estimated_us=est,
        estimate_ratio=round(per_call / est, 3) if est else None,
        **peak,
    )


def diagnostic(code: str, message: str):
    """A report diagnostic: typed (``model.Diagnostic``) where the model has it, else the plain string."""
    from ..report import model

    typed = getattr(model, "Diagnostic", None)
    return typed(code=code, message=message) if typed is not None else message


def _missing_diagnostic(missing: list[str]):
    more = " ..." if len(missing) > 20 else ""
    return diagnostic(
        "profile_missing",
        "profile: no measured time for "
        + ", ".join(missing[:20])
        + more
        + " (no profiler event inside the compiled graph's call was tied to it)",
    )


def unattributed_text(summary: Optional[StepProfile]) -> str:
    """``"unattributed: 3%"`` for a ``Report.profile`` (its ``unattributed_text``); empty without one."""
    return summary.unattributed_text if summary is not None else ""
