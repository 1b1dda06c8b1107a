"""What memory (issue 23) costs: report size growth and capture time, on a GPT-2 training step (CPU).

    PYTHONPATH=. python benchmarks/memory_size.py [--layers 2]

One capture of ``examples.GPT2(layers=N)``'s forward + backward. The time inside the capture's memory work is
measured directly (the buffer reader at ``log_ir_post_fusion`` and the build of ``Compile.memory``, each wrapped
with a timer) against the whole capture's wall time; the size is the written report (``save_json``, gzip'd too)
with ``memory`` and with every ``memory`` set to null.
"""

import argparse
import dataclasses
import gzip
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    args = ap.parse_args()
    import torch

    import inductor_lens
    from inductor_lens.capturing import memory as cm
    from inductor_lens.examples import GPT2, gpt2_inputs

    spent = {"read_buffers": 0.0, "memory_of": 0.0}

    def timed(name, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.perf_counter() - t

        return wrapper

    cm.read_buffers = timed("read_buffers", cm.read_buffers)
    cm.memory_of = timed("memory_of", cm.memory_of)
    torch.manual_seed(0)
    model = GPT2(layers=args.layers)
    t = time.perf_counter()
    with inductor_lens.capture(title="memory_size") as cap:
        torch.compile(model)(gpt2_inputs(2, 32)).sum().backward()
        wall = time.perf_counter() - t
    report = cap.report
    total = time.perf_counter() - t
    bare = dataclasses.replace(report, compiles=[dataclasses.replace(c, memory=None) for c in report.compiles])
    with tempfile.TemporaryDirectory() as d:
        sizes = {}
        for name, r in (("with", report), ("without", bare)):
            p = os.path.join(d, f"{name}.json")
            r.save_json(p)
            raw = pathlib.Path(p).read_bytes()
            sizes[name] = (len(raw), len(gzip.compress(raw, 6)))
    nodes = sum(len(c.fused_nodes) for c in report.compiles)
    print(f"GPT2(layers={args.layers}) training step: {len(report.compiles)} compiles, {nodes} fused nodes")
    print(
        f"capture {total:.1f} s (compile+run {wall:.1f} s); memory work {sum(spent.values()) * 1000:.0f} ms "
        f"(read_buffers {spent['read_buffers'] * 1000:.0f} ms, memory_of {spent['memory_of'] * 1000:.0f} ms) = "
        f"{sum(spent.values()) / total:.2%} of the capture"
    )
    (w, wz), (o, oz) = sizes["with"], sizes["without"]
    print(
        f"report {o / 1024:.1f} KiB -> {w / 1024:.1f} KiB (+{(w - o) / o:.1%}); gzip {oz / 1024:.1f} -> {wz / 1024:.1f} KiB (+{(wz - oz) / oz:.1%})"
    )


if __name__ == "__main__":
    main()
