"""TORCH_TRACE import speed: read a ~100 MB structured-trace log and rebuild its report.

    python benchmarks/trace_import.py [--source LOG] [--mb 100] [--keep]

The big log is made from a real one: ``--source`` (a ``dedicated_log_torch_trace_*.log``), or one written
here by ``TORCH_TRACE=... INDUCTOR_PROVENANCE=1`` over a training step of ``inductor_lens.examples.GPT2(layers=2)``.
It is repeated until it reaches ``--mb`` megabytes, each copy's frame ids shifted, so the big log is one
process's log with many distinct compiles (as a long job's is), not the same compile again.

Prints the log size, the time to read and build the report (``load_trace``, progress on stderr), the
records and compiles found, the rate in MB/s, and the time to write the HTML page. Target: <= 10 s for 100 MB.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

_FRAME = re.compile(r'"frame_id": (\d+)')
_CID = re.compile(r'"compile_id": "(\d+)/')
_TS = re.compile(r'^\t"ts": (\d+(?:\.\d+)?)')

_MAKE = """
import torch
from inductor_lens.examples import GPT2
torch.manual_seed(0)
m = torch.compile(GPT2(layers=2))
x = torch.randint(0, 100, (2, 32))
m(x).sum().backward()
"""


def real_log(tmp: str) -> str:
    d = os.path.join(tmp, "src")
    env = dict(os.environ, TORCH_TRACE=d, INDUCTOR_PROVENANCE="1", PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", _MAKE], env=env, check=True)
    (log,) = glob.glob(os.path.join(d, "*.log"))
    return log


def big_log(source: str, mb: float, out: str) -> tuple[int, int]:
    with open(source, encoding="utf-8") as f:
        lines = f.readlines()
    frames = [int(m.group(1)) for ln in lines for m in [_FRAME.search(ln)] if m]
    step = (max(frames) + 1) if frames else 1
    stamps = [float(m.group(1)) for ln in lines for m in [_TS.match(ln)] if m]
    span = (max(stamps) - min(stamps) + 1e6) if stamps else 0.0  # each copy runs after the previous one
    copies = 0
    with open(out, "w", encoding="utf-8") as f:
        while f.tell() < mb * 1e6:
            shift = copies * step
            for ln in lines:
                if shift and ('"frame_id"' in ln or '"compile_id"' in ln):
                    ln = _FRAME.sub(lambda m: f'"frame_id": {int(m.group(1)) + shift}', ln)
                    ln = _CID.sub(lambda m: f'"compile_id": "{int(m.group(1)) + shift}/', ln)
                elif shift and ln.startswith('\t"ts": '):
                    ln = _TS.sub(lambda m: f'\t"ts": {float(m.group(1)) + copies * span:.1f}', ln)
                f.write(ln)
            copies += 1
    return copies, os.path.getsize(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", help="a real TORCH_TRACE log to repeat (default: write one)")
    p.add_argument("--mb", type=float, default=100.0)
    p.add_argument("--keep", action="store_true", help="keep the big log and the page (prints where)")
    args = p.parse_args()
    import inductor_lens

    tmp = tempfile.mkdtemp(prefix="lens-trace-bench-")
    source = args.source or real_log(tmp)
    big = os.path.join(tmp, "dedicated_log_torch_trace_big.log")
    copies, size = big_log(source, args.mb, big)
    print(
        f"log: {size / 1e6:.1f} MB ({copies} copies of {os.path.basename(source)}, "
        f"{os.path.getsize(source) / 1e6:.2f} MB)"
    )
    t0, c0 = time.perf_counter(), time.process_time()
    report = inductor_lens.load_trace(big, on_progress=lambda m: print("  " + m, file=sys.stderr))
    t1, c1 = time.perf_counter(), time.process_time()
    page = os.path.join(tmp, "big.html")
    report.save_html(page)
    t2 = time.perf_counter()
    print(
        f"load_trace: {t1 - t0:.2f} s wall, {c1 - c0:.2f} s CPU ({size / 1e6 / (t1 - t0):.0f} MB/s): "
        f"{len(report.compiles)} compiles, {len(report.kernels)} kernels, {len(report.graph_breaks)} graph breaks; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(f"save_html: {t2 - t1:.2f} s, page {os.path.getsize(page) / 1e6:.1f} MB")
    if args.keep:
        print(f"kept in {tmp}")
    else:
        os.remove(big)
        os.remove(page)


if __name__ == "__main__":
    main()
