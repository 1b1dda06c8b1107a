"""The cost of ``--profile``: a 12-layer GPT-2-like training step captured without and with profiling.

    python benchmarks/profile_overhead.py [--layers 12] [--width 64] [--device cpu|cuda]

Each mode runs in its own fresh Python process (caches disabled by the capture in both):

- ``capture``: ``inductor_lens.capture()`` around the first call and ``.backward()`` (what ``inspect(...,
  backward=True)`` does);
- ``profile``: the same compiled with ``cpp.enable_kernel_profile`` (what ``profile=True`` turns on), then
  ``inductor_lens.time_kernels`` (1 warm-up + 5 profiled runs, attribution, the device's peaks: on a CPU the
  bandwidth/compute probe).

Prints one table row per mode: compile + first step, the profile phase (and its probe part), one training
step without the profiler and under it, how many profiler events were read, kernels timed, unattributed share.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def child(mode: str, layers: int, width: int, device: str) -> dict:
    import torch

    import inductor_lens
    from inductor_lens.capturing import kernel_timing as prof
    from inductor_lens.examples import GPT2, gpt2_inputs

    torch.manual_seed(0)
    model = GPT2(layers=layers, d=width, heads=4).to(device)
    x = gpt2_inputs(device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    patch = torch._inductor.config.patch({"cpp.enable_kernel_profile": mode == "profile"})
    t0 = time.perf_counter()
    with patch, inductor_lens.capture() as cap:
        compiled = torch.compile(model)
        compiled(x).sum().backward()
        sync()
    out = {
        "mode": mode,
        "layers": layers,
        "width": width,
        "device": device,
        "compile_s": round(time.perf_counter() - t0, 2),
        "kernels": len(cap.report.kernels),
    }

    def step() -> None:
        compiled(x).sum().backward()
        sync()

    step()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    out["step_ms"] = round(statistics.median(times) * 1000, 2)
    if mode == "profile":
        seen = {}
        original = prof.attribute

        def counting(events, report, on_gpu):
            seen["events"] = len(events)
            return original(events, report, on_gpu)

        prof.attribute = counting
        t = time.perf_counter()
        report = inductor_lens.time_kernels(cap.report, compiled, x, backward=True)
        out["profile_s"] = round(time.perf_counter() - t, 2)
        if device == "cpu":
            t = time.perf_counter()
            prof.probe_cpu()
            out["probe_s"] = round(time.perf_counter() - t, 2)
        out["events"] = seen.get("events")
        out["timed"] = sum(1 for k in report.kernels if k.profile)
        s = report.profile
        out["step_under_profiler_ms"] = round(s["device_total_us"] / 1000, 2) if device == "cpu" else None
        out["unattributed_share"] = s["unattributed_share"]
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--device", default="cpu")
    p.add_argument("--child", default=None)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.layers, a.width, a.device)))
        return
    rows = []
    for mode in ("capture", "profile"):
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                mode,
                "--layers",
                str(a.layers),
                "--width",
                str(a.width),
                "--device",
                a.device,
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode:
            sys.exit(proc.stderr[-3000:])
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    keys = [
        "mode",
        "compile_s",
        "profile_s",
        "probe_s",
        "step_ms",
        "step_under_profiler_ms",
        "events",
        "kernels",
        "timed",
        "unattributed_share",
    ]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join("" if r.get(k) is None else str(r.get(k)) for k in keys) + " |")


if __name__ == "__main__":
    main()
