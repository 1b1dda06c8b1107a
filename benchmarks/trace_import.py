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
import hashlib
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


_MD5 = re.compile(r'"has_payload": "[0-9a-f]*"')


def _records(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The log's records: (metadata line, payload lines), a payload line being one that starts with a tab."""
    out: list[tuple[str, list[str]]] = []
    for ln in lines:
        if ln.startswith("\t") and out:
            out[-1][1].append(ln)
        else:
            out.append((ln, []))
    return out


def payload_of(body: list[str]) -> str:
    """The payload torch logged: its lines without their tab, joined by newlines (what ``has_payload`` hashes)."""
    text = "".join(ln[1:] for ln in body)
    return text[:-1] if text.endswith("\n") else text


def md5_errors(path: str) -> tuple[int, int]:
    """(payloads checked, payloads whose ``has_payload`` md5 is wrong) of a log: tlparse's check, in Python."""
    with open(path, encoding="utf-8", newline="\n") as f:
        records = _records(f.readlines())
    checked = bad = 0
    for header, body in records:
        m = re.search(r'"has_payload": "([0-9a-f]{32})"', header)
        if m:
            checked += 1
            bad += hashlib.md5(payload_of(body).encode("utf-8")).hexdigest() != m.group(1)
    return checked, bad


def _shift(ln: str, shift: int, dt: float) -> str:
    if '"frame_id"' in ln or '"compile_id"' in ln:
        ln = _FRAME.sub(lambda m: f'"frame_id": {int(m.group(1)) + shift}', ln)
        ln = _CID.sub(lambda m: f'"compile_id": "{int(m.group(1)) + shift}/', ln)
    if ln.startswith('\t"ts": '):
        ln = _TS.sub(lambda m: f'\t"ts": {float(m.group(1)) + dt:.1f}', ln)
    return ln


def big_log(source: str, mb: float, out: str) -> tuple[int, int]:
    """Repeat the log ``source`` until ``out`` holds ``mb`` megabytes, each copy's frame ids and time stamps
    shifted after the previous copy's. A payload that changes gets its ``has_payload`` md5 recomputed, so the
    big log is as valid as the source (tlparse checks every md5)."""
    with open(source, encoding="utf-8", newline="\n") as f:
        lines = f.readlines()
    records = _records(lines)
    frames = [int(m.group(1)) for ln in lines for m in [_FRAME.search(ln)] if m]
    step = (max(frames) + 1) if frames else 1
    stamps = [float(m.group(1)) for ln in lines for m in [_TS.match(ln)] if m]
    span = (max(stamps) - min(stamps) + 1e6) if stamps else 0.0  # each copy runs after the previous one
    copies = 0
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        while f.tell() < mb * 1e6:
            shift, dt = copies * step, copies * span
            for header, body in records:
                if shift:
                    header = _shift(header, shift, dt)
                    new = [_shift(ln, shift, dt) for ln in body]
                    if new != body:
                        md5 = hashlib.md5(payload_of(new).encode("utf-8")).hexdigest()
                        header = _MD5.sub(f'"has_payload": "{md5}"', header, count=1)
                        body = new
                f.write(header)
                f.writelines(body)
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
