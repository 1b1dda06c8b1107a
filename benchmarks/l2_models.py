"""Which L2 state before a timed run makes a Triton reproducer's time match the step's (run on a GPU machine).

    PYTHONPATH=. python3 benchmarks/l2_models.py REPORT [--out OUTDIR] [--runs 200]

Issue 24: a kernel's reproducer must time it within 20% of the time the report measured in the step. The time
depends on what the L2 cache holds when the kernel starts. This writes every Triton kernel's reproducer of REPORT
(``inductor_lens.reproducer``), compiles them (8 processes at once, so that Triton's cache holds each), then, in one
process, loads each script's own functions (``load``, ``arguments``, ``times_us``) and times the kernel with the L2
prepared by each model below, the same runs and warm-up for all:

- ``step``: the script's default: the L2 read through (clean lines of no argument), then the launches before the
  kernel in the step replayed as far back as the L2 holds (``analysis.reproducer.step_before``), each launch's
  tensors touched side by side in ``CHUNKS`` parts;
- ``step-seq``: the same, each launch's tensors one after another (reads first);
- ``step-full``: the replay sized for the whole L2 (the script's ``L2_SHARE`` is a half: a partitioned L2 holds a
  line that every SM reads twice);
- ``step-dirty``: the replay after a flush that writes (``zero_``: the L2 full of dirty lines of no argument);
- ``cold``: the L2 read through; ``cold-dirty``: flushed by a write (``triton.testing.do_bench``'s way);
- ``step-gemm``, ``cold-gemm``: a 4096 x 768 x 2304 fp32 matmul (~380 us on an H200) right after the flush, as
  the step runs one before some kernels: whether a GPU kept busy runs the kernel slower (clocks, power);
- ``hot``: nothing between runs.

Prints, per kernel, each model's median over the report's time, then per model how many are within 20%.

``--configs NAME[,NAME]``: instead, each named kernel under every config its autotuner held in the step (the
script keeps the one the capture recorded), with the default L2 model: does another config run as the step did?
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys

import torch

import inductor_lens

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures"))
from make_metal_fixtures import write_reproducers  # noqa: E402

MODELS = ("step", "step-full", "step-seq", "step-dirty", "step-gemm", "cold", "cold-dirty", "cold-gemm", "hot")


def _time(g: dict, run, args, kwargs, model: str, runs: int) -> float:
    """Median device time (us) of the kernel with the L2 as ``model`` prepares it, through the script's own
    ``times_us``; the script's knobs are set for the model and put back after."""
    keep = {k: g[k] for k in ("CHUNKS", "L2_SHARE", "_flush")}
    flush = g["_flush"]
    try:
        if model == "step-seq":
            g["CHUNKS"] = 1
        if model == "step-full":
            g["L2_SHARE"] = 1.0
        if model.endswith("-dirty"):
            g["_flush"] = lambda buffer: buffer.zero_()
        if model.endswith("-gemm"):
            a, b = torch.randn(4096, 768, device="cuda"), torch.randn(768, 2304, device="cuda")
            g["_flush"] = lambda buffer: (flush(buffer), torch.mm(a, b))
        mode = model.split("-")[0]
        return statistics.median(g["times_us"](run, args, kwargs, runs, mode))
    finally:
        g.update(keep)


def _configs(k, path: str, opts) -> None:
    """``k`` timed with each config of its autotuner (its reproducer run once per config, the script's ``CONFIG``
    set to it before ``load``), ``--l2 step``."""
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    probe = {"__name__": "reproducer", "__file__": path}
    exec(code, probe)
    configs = list(probe[re.search(r"^def (\w+)\(", k.source, re.M).group(1)].configs)
    report_us = (k.profile or {}).get("per_call_us")
    print(f"{k.name}: report {report_us} us (recorded config {probe['CONFIG']}); {len(configs)} configs", flush=True)
    for cfg in configs:
        g = {"__name__": "reproducer", "__file__": path}
        exec(code, g)
        g["CONFIG"] = {"block": dict(cfg.kwargs), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
        try:
            torch.manual_seed(0)
            run = g["load"]()
            args, kwargs = g["arguments"]()
            for _ in range(opts.warmup):
                run(args, kwargs)
            torch.cuda.synchronize()
            us = statistics.median(g["times_us"](run, args, kwargs, opts.runs, "step"))
            print(f"  {g['CONFIG']}: {us:.2f} us ({us / report_us:.2f})", flush=True)
        except Exception as e:
            print(f"  {g['CONFIG']}: {type(e).__name__}: {e}", flush=True)
        finally:
            g.clear()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report")
    p.add_argument("--out", default="l2-models")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    p.add_argument("--configs", default="", help="kernel names: time each under every config of its autotuner")
    p.add_argument("--only", default="", help="kernel names (comma-separated): time only these")
    opts = p.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    models = [m for m in opts.models.split(",") if m]
    assert set(models) <= set(MODELS), f"models are {MODELS}"
    report = inductor_lens.load(opts.report)
    props = torch.cuda.get_device_properties(0)
    print(f"{torch.cuda.get_device_name()}, L2 {getattr(props, 'L2_cache_size', 0) / 2**20:.0f} MiB, torch "
          f"{torch.__version__}; reproducers of {opts.report}", flush=True)  # fmt: skip
    only = [n for n in (opts.configs or opts.only).split(",") if n]
    written = write_reproducers(report, os.path.join(opts.out, "repro"), print, only)
    kernels, scripts = [(c, k) for c, k, _ in written], [s for _, _, s in written]
    if opts.configs:
        for (_, k), path in zip(kernels, scripts):
            _configs(k, path, opts)
        return
    rows = []
    for (c, k), path in zip(kernels, scripts):
        report_us = (k.profile or {}).get("per_call_us")
        g = {"__name__": "reproducer", "__file__": path}
        try:
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), g)
            torch.manual_seed(0)
            run = g["load"]()
            args, kwargs = g["arguments"]()
            g["check"](run, args, kwargs)
            for _ in range(opts.warmup):
                run(args, kwargs)
            torch.cuda.synchronize()
            us = {m: _time(g, run, args, kwargs, m, opts.runs) for m in models}
        except Exception as e:  # one kernel's failure is printed; the others still run
            print(f"{c.id} {c.graph_kind} {k.name}: {type(e).__name__}: {e}", flush=True)
            continue
        finally:
            g.clear()
            torch.cuda.empty_cache()
        ratios = {m: u / report_us for m, u in us.items()} if report_us else {}
        rows.append((k.name, report_us, ratios))
        cells = ", ".join(f"{m} {us[m]:.2f} ({ratios[m]:.2f})" for m in models) if ratios else str(us)
        print(f"{c.graph_kind} {k.name}: report {report_us} us; {cells}", flush=True)
    print(f"{len(rows)} of {len(kernels)} kernels timed")
    for m in models:
        rs = sorted(r[2][m] for r in rows if r[2])
        if rs:
            big = [r for r in rows if r[2] and r[1] >= 5]
            print(f"{m:>10}: within 20% {sum(0.8 <= x <= 1.2 for x in rs)} of {len(rs)}; median "
                  f"{statistics.median(rs):.2f}, min {rs[0]:.2f}, max {rs[-1]:.2f}; kernels of 5 us or more: "
                  f"{sum(0.8 <= r[2][m] <= 1.2 for r in big)} of {len(big)}")  # fmt: skip


if __name__ == "__main__":
    main()
