"""Capture overhead: compile time and peak memory with the lens vs without, in fresh processes.

    python benchmarks/capture_overhead.py [--layers 1,4,12] [--runs 3]

Each measurement is its own Python process (nothing warm, caches disabled in every mode) that
compiles ``inductor_lens.examples.GPT2(layers=N)`` and runs it once. Modes:

- ``plain``: torch.compile alone;
- ``lens``: inside ``inductor_lens.capture()`` (report built at exit; its time is included);
- ``debug``: ``TORCH_COMPILE_DEBUG=1`` (torch's own debug dump), an anchor;
- ``trace``: ``TORCH_TRACE=<dir>`` with ``INDUCTOR_PROVENANCE=1`` (what tlparse reads), an anchor.

Prints, per size, the median time and peak RSS of each mode and their ratios to ``plain``, plus
the report's build time and JSON size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ("plain", "lens", "debug", "trace")


def child(mode: str, layers: int) -> dict:
    import resource

    import torch

    import inductor_lens
    from inductor_lens.examples import GPT2, gpt2_inputs

    torch.manual_seed(0)
    model = GPT2(layers=layers)
    x = gpt2_inputs()
    out: dict = {"mode": mode, "layers": layers}
    compiled = torch.compile(model)
    if mode == "lens":
        cap = inductor_lens.capture()
        t0 = time.perf_counter()
        with cap:
            compiled(x)
            t1 = time.perf_counter()
        t2 = time.perf_counter()
        out["compile_s"] = t2 - t0
        out["build_s"] = t2 - t1
        out["json_bytes"] = len(cap.report.to_json().encode())
        out["kernels"] = len(cap.report.kernels)
        out["fused_nodes"] = sum(len(c.fused_nodes) for c in cap.report.compiles)
    else:
        t0 = time.perf_counter()
        compiled(x)
        out["compile_s"] = time.perf_counter() - t0
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def measure(mode: str, layers: int) -> dict:
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", PYTHONUNBUFFERED="1")
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "debug":
            env["TORCH_COMPILE_DEBUG"] = "1"
            env["TORCH_COMPILE_DEBUG_DIR"] = tmp
        elif mode == "trace":
            env["TORCH_TRACE"] = tmp
            env["INDUCTOR_PROVENANCE"] = "1"
        proc = subprocess.run(
            [sys.executable, __file__, "--child", mode, str(layers)], env=env, capture_output=True, text=True, cwd=tmp
        )
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} with {layers} layer(s) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(layers: list[int], runs: int, modes=MODES, log=print) -> list[dict]:
    rows = []
    for n in layers:
        samples: dict[str, list[dict]] = {m: [] for m in modes}
        for r in range(runs):
            for m in modes:  # interleaved, so drifting machine load hits every mode alike
                samples[m].append(measure(m, n))
                log(f"  layers={n} run={r + 1}/{runs} {m}: {samples[m][-1]['compile_s']:.1f}s")
        base_t = statistics.median(s["compile_s"] for s in samples["plain"])
        base_m = statistics.median(s["peak_rss_mb"] for s in samples["plain"])
        for m in modes:
            t = statistics.median(s["compile_s"] for s in samples[m])
            mem = statistics.median(s["peak_rss_mb"] for s in samples[m])
            row = {
                "layers": n,
                "mode": m,
                "runs": runs,
                "compile_s": round(t, 2),
                "time_ratio": round(t / base_t, 3),
                "peak_rss_mb": round(mem, 1),
                "mem_ratio": round(mem / base_m, 3),
            }
            if m == "lens":
                row["build_s"] = round(statistics.median(s["build_s"] for s in samples[m]), 3)
                row["json_mb"] = round(samples[m][-1]["json_bytes"] / 1e6, 2)
                row["kernels"] = samples[m][-1]["kernels"]
                row["fused_nodes"] = samples[m][-1]["fused_nodes"]
            rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    head = "| layers | mode | compile s (median) | time ratio | peak RSS MB | mem ratio | report build s | JSON MB | fused nodes |"
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in rows:
        lines.append(
            f"| {r['layers']} | {r['mode']} | {r['compile_s']} | {r['time_ratio']} | {r['peak_rss_mb']} | "
            f"{r['mem_ratio']} | {r.get('build_s', '')} | {r.get('json_mb', '')} | {r.get('fused_nodes', '')} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", default="1,4", help="comma-separated GPT-2 depths (default 1,4; 12 takes minutes)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--child", nargs=2, metavar=("MODE", "LAYERS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
        return
    rows = run(
        [int(x) for x in args.layers.split(",")],
        args.runs,
        args.modes.split(","),
        log=lambda s: print(s, file=sys.stderr, flush=True),
    )
    print(table(rows))


if __name__ == "__main__":
    main()
