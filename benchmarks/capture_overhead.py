"""Capture overhead: compile time and peak memory with the lens vs without, in fresh processes.

    python benchmarks/capture_overhead.py [--layers 1,4,12] [--runs 3]
    python benchmarks/capture_overhead.py --gpu --layers 6 --runs 5      # on a CUDA machine

Each measurement is its own Python process (nothing warm, caches disabled in every mode) that
compiles ``inductor_lens.examples.GPT2(layers=N)`` and runs it once. With ``--gpu``: GPT-2 small's width
(d=768, 12 heads, vocab 50257), bf16 on CUDA, batch 8 x 512, a training step (forward + backward), each
process with a fresh Inductor and Triton cache (what a user's first compile pays), and the CPU time of the
process tree (the child and the compile workers it waited for) beside the wall time. ``--where`` profiles one
lens run with cProfile and prints the time spent in the lens's own functions. Modes:

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


def _workload(layers: int, gpu: bool):
    """The model's step as a function of no arguments, and the compiled module."""
    import torch

    from inductor_lens.examples import GPT2, gpt2_inputs

    torch.manual_seed(0)
    if not gpu:
        model = GPT2(layers=layers)
        x = gpt2_inputs()
        compiled = torch.compile(model)
        return (lambda: compiled(x)), compiled
    model = GPT2(layers=layers, d=768, heads=12, vocab=50257, ctx=512).to("cuda", torch.bfloat16)
    x = gpt2_inputs(batch=8, seq=512, vocab=50257, device="cuda")
    compiled = torch.compile(model)

    def step():
        out = compiled(x)
        out.float().mean().backward()
        torch.cuda.synchronize()

    return step, compiled


def child(mode: str, layers: int, gpu: bool = False, where: bool = False) -> dict:
    import resource

    import inductor_lens

    step, _ = _workload(layers, gpu)
    out: dict = {"mode": mode, "layers": layers}
    if mode == "lens":
        cap = inductor_lens.capture()
        prof = None
        if where:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        t0 = time.perf_counter()
        with cap:
            step()
            t1 = time.perf_counter()
        t2 = time.perf_counter()
        out["compile_s"] = t2 - t0
        out["build_s"] = t2 - t1
        out["json_bytes"] = len(cap.report.to_json().encode())
        out["kernels"] = len(cap.report.kernels)
        out["fused_nodes"] = sum(len(c.fused_nodes) for c in cap.report.compiles)
        if prof is not None:
            prof.disable()
            out["where"] = _lens_share(prof, out["compile_s"])
    else:
        t0 = time.perf_counter()
        step()
        out["compile_s"] = time.perf_counter() - t0
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _lens_share(prof, total_s: float) -> dict:
    """The time cProfile saw inside the lens's own functions (its files under ``inductor_lens/``), the
    main thread only: the hooks, the buffer reader and the report build; the top ones by own time."""
    import pstats

    st = pstats.Stats(prof)
    own = []
    for (file, line, fn), (_cc, _nc, tt, ct, _callers) in st.stats.items():
        if "/inductor_lens/" in file.replace("\\", "/"):
            own.append((tt, ct, f"{file.rsplit('inductor_lens/', 1)[-1]}:{line}:{fn}"))
    own.sort(reverse=True)
    lens_s = sum(t for t, _, _ in own)
    return {
        "lens_own_s": round(lens_s, 3),
        "share_of_step": round(lens_s / total_s, 4) if total_s else None,
        "top": [(round(t, 3), round(c, 3), name) for t, c, name in own[:15]],
    }


def measure(mode: str, layers: int, gpu: bool = False, where: bool = False) -> dict:
    import resource

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the child runs in a temporary folder
    env = dict(
        os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    with tempfile.TemporaryDirectory() as tmp:
        if gpu:  # a fresh cache per process, as a user's first compile: Inductor's and Triton's
            env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
            env["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        else:
            env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
        if mode == "debug":
            env["TORCH_COMPILE_DEBUG"] = "1"
            env["TORCH_COMPILE_DEBUG_DIR"] = tmp
        elif mode == "trace":
            env["TORCH_TRACE"] = tmp
            env["INDUCTOR_PROVENANCE"] = "1"
        cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, str(layers)]
        cmd += ["--gpu"] if gpu else []
        cmd += ["--where"] if where else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} with {layers} layer(s) failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = wall  # the whole process: start-up, torch import, compile, exit
    out["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out


def run(layers: list[int], runs: int, modes=MODES, log=print, gpu: bool = False) -> list[dict]:
    rows = []
    for n in layers:
        samples: dict[str, list[dict]] = {m: [] for m in modes}
        for r in range(runs):
            order = modes if r % 2 == 0 else tuple(reversed(modes))  # interleaved, the order alternating
            for m in order:  # so drifting machine load and warm OS caches hit every mode alike
                samples[m].append(measure(m, n, gpu))
                s = samples[m][-1]
                log(f"  layers={n} run={r + 1}/{runs} {m}: {s['compile_s']:.1f}s step, {s['cpu_s']:.1f}s CPU")
        base_t = statistics.median(s["compile_s"] for s in samples["plain"])
        base_c = statistics.median(s["cpu_s"] for s in samples["plain"])
        base_m = statistics.median(s["peak_rss_mb"] for s in samples["plain"])
        for m in modes:
            t = statistics.median(s["compile_s"] for s in samples[m])
            cpu = statistics.median(s["cpu_s"] for s in samples[m])
            mem = statistics.median(s["peak_rss_mb"] for s in samples[m])
            pairs = [a["compile_s"] / b["compile_s"] for a, b in zip(samples[m], samples["plain"])]
            row = {
                "layers": n,
                "mode": m,
                "runs": runs,
                "compile_s": round(t, 2),
                "time_ratio": round(t / base_t, 3),
                "pair_ratios": [round(x, 3) for x in pairs],
                "cpu_s": round(cpu, 1),
                "cpu_ratio": round(cpu / base_c, 3),
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
    head = (
        "| layers | mode | step s (median) | time ratio | pair ratios | CPU s (tree) | CPU ratio | peak RSS MB "
        "| mem ratio | report build s | JSON MB | fused nodes |"
    )
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in rows:
        lines.append(
            f"| {r['layers']} | {r['mode']} | {r['compile_s']} | {r['time_ratio']} | "
            f"{' '.join(map(str, r['pair_ratios']))} | {r['cpu_s']} | {r['cpu_ratio']} | {r['peak_rss_mb']} | "
            f"{r['mem_ratio']} | {r.get('build_s', '')} | {r.get('json_mb', '')} | {r.get('fused_nodes', '')} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", default="1,4", help="comma-separated GPT-2 depths (default 1,4; 12 takes minutes)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--gpu", action="store_true", help="GPT-2 small's width, bf16, a training step on CUDA")
    p.add_argument("--where", action="store_true", help="also profile one lens run: time in the lens's functions")
    p.add_argument("--child", nargs=2, metavar=("MODE", "LAYERS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.gpu, args.where)))
        return
    layers = [int(x) for x in args.layers.split(",")]
    print(f"load average at start: {os.getloadavg()}", flush=True)
    rows = run(
        layers,
        args.runs,
        tuple(args.modes.split(",")),
        log=lambda s: print(s, file=sys.stderr, flush=True),
        gpu=args.gpu,
    )
    print(table(rows))
    print(f"load average at end: {os.getloadavg()}")
    if args.where:
        for n in layers:
            w = measure("lens", n, args.gpu, where=True)["where"]
            print(
                f"layers={n}: the lens's own functions took {w['lens_own_s']} s ({w['share_of_step']:.2%} of the step, under cProfile)"
            )
            for tt, ct, name in w["top"]:
                print(f"  {tt:8.3f} s own  {ct:8.3f} s cumulative  {name}")


if __name__ == "__main__":
    main()
