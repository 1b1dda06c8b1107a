"""All inductor_lens benchmarks in one command: ``make bench`` or ``python benchmarks/run.py``.

    python benchmarks/run.py [--layers 1,4,12] [--runs 3] [--no-browser] [--results benchmarks/RESULTS.md]

1. Capture overhead (``capture_overhead.py``): compile time and peak memory with the lens vs a plain
   compile, beside ``TORCH_COMPILE_DEBUG=1`` and ``TORCH_TRACE`` (with provenance) as anchors; report build
   time and JSON size. Fresh processes, caches disabled, median of ``--runs``.
2. The page (``browser.py``): report and exported HTML size, page load to an interactive fusion graph, and
   click to kernel panel, in headless Chromium, for forward-only and training reports.

Speed is judged here, never in the tests. Targets: overhead <= 1.05; interactive <= 1 s (12-layer
forward) and <= 2 s (12-layer training); click -> panel <= 50 ms; HTML <= ~1.3x report + fixed cost.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def machine() -> str:
    import torch

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"torch {torch.__version__}, {datetime.date.today().isoformat()}"
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", default="1,4", help="GPT-2 depths (default 1,4; add 12 for the full table: minutes)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--no-browser", action="store_true", help="skip the Chromium measurements")
    p.add_argument("--no-capture", action="store_true", help="skip the capture-overhead measurements")
    p.add_argument("--results", metavar="PATH", help="also write the tables as Markdown to PATH")
    args = p.parse_args(argv)
    layers = [int(x) for x in args.layers.split(",")]
    out = [f"Machine: {machine()}", ""]
    if not args.no_capture:
        import capture_overhead

        print("capture overhead (fresh processes, caches off) ...", file=sys.stderr, flush=True)
        rows = capture_overhead.run(layers, args.runs, log=lambda s: print(s, file=sys.stderr, flush=True))
        out += ["## Capture overhead", "", capture_overhead.table(rows), ""]
        print("\n".join(out[-4:]), flush=True)
    if not args.no_browser:
        import browser

        print("page timings in headless Chromium ...", file=sys.stderr, flush=True)
        rows = browser.run(layers)
        text = browser.format_table(rows)
        out += ["## The page in Chromium", "", text, ""]
        print("\n".join(out[-4:]), flush=True)
    if args.results:
        with open(args.results, "w") as f:
            f.write("# Benchmark results\n\n" + "\n".join(out) + "\n")


if __name__ == "__main__":
    main()
