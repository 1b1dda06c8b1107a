"""Time and peak memory of loading and showing a large report (issue 10, section 5).

    python benchmarks/load_show.py [--mb 200] [--keep] [--kind compact] [--case load()] [--report FILE]

Builds two valid reports of about ``--mb`` MB from the compiles of the recorded GPT-2 block
(tests/fixtures/gpu_gpt2_block.json), each copy a distinct compile (kernels renamed everywhere, stack
lines moved, kernel paths changed, so that no interning by value makes the copies free): ``compact``,
written as the lens writes a report, and ``expanded``, a plain ``json.dumps`` of the expanded form.
Then measures, each in a fresh process:
``inductor_lens.load(path)`` (the full model) and ``inductor-lens show path -o page.html``
(parse, type-check every field, pack, write). Prints wall time and peak RSS (ru_maxrss) next to
the file size, and the CPU time (the machine may be shared). Targets (issue 26): <= 5 s and peak RSS
<= 1.5x the file size. The measured processes run in this checkout's folder (``python -c`` puts the current
folder first on ``sys.path``: run elsewhere, they would import whatever inductor_lens is there).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "gpu_gpt2_block.json"

MEASURE = """
import resource, sys, time
t0 = time.perf_counter()
{body}
dt = time.perf_counter() - t0
u = resource.getrusage(resource.RUSAGE_SELF)
print(dt, u.ru_utime + u.ru_stime, u.ru_maxrss * 1024)
"""

CASES = {
    "baseline (python -c 'import inductor_lens')": "import inductor_lens",
    "load() -> Report": "import inductor_lens\nr = inductor_lens.load(sys.argv[1])",
    "load_data() (parse + typed check)": "from inductor_lens import report_io\nd = report_io.load_data(sys.argv[1])",
    "inductor-lens show": "from inductor_lens import cli\nassert cli.main(['show', sys.argv[1], '-o', sys.argv[2]]) == 0",
}


_KERNEL = re.compile(rb"\b((?:triton|cpp)_[a-z]+_fused\w*)")
_LINE = re.compile(rb'"line":(\d+)')
_TMP = re.compile(rb"tmp[a-z0-9]{8}")


def _copy(text: bytes, i: int) -> bytes:
    """Compile ``i`` of the big report: its kernels renamed (names, sources, output code, links), its stack
    lines moved and its kernel paths changed, so that no two copies share these strings by value."""
    text = _KERNEL.sub(lambda m: m.group(1) + b"_v%d" % i, text)
    text = _LINE.sub(lambda m: b'"line":%d' % (int(m.group(1)) + i % 997), text)
    return _TMP.sub(b"tmp%08d" % i, text)


def make_report(path: pathlib.Path, mb: float, kind: str) -> int:
    """A valid schema-2 report of about ``mb`` MB: ``expanded`` (plain ``json.dumps`` of the expanded form)
    or ``compact`` (what the lens writes: ``report_io.dumps`` of a Report)."""
    import orjson

    from inductor_lens.report import intern as _intern
    from inductor_lens.report.model import Report

    base = Report.from_dict(json.loads(FIXTURE.read_text())).to_dict()
    one = [orjson.dumps(c) for c in base["compiles"]]

    def build(copies: int) -> dict:
        data = dict(base)
        data["compiles"] = []
        for i in range(copies):
            for c in one:
                comp = orjson.loads(_copy(c, i))
                comp["id"], comp["compile_id"] = f"{comp['id']} #{i}", f"{comp['compile_id']}.{i}"
                data["compiles"].append(comp)
        return data

    def encode(data: dict) -> bytes:
        if kind == "expanded":
            return json.dumps(data).encode()
        return _write_form(_intern.compact(data))

    small = len(encode(build(10)))
    per_copy = (len(encode(build(30))) - small) / 20  # what one more copy adds (the tables grow less)
    text = encode(build(max(1, round((mb * 1e6 - small) / per_copy) + 10)))
    path.write_bytes(text)
    return len(text)


def _write_form(compact: dict) -> bytes:
    from inductor_lens.report import io as report_io

    writer = getattr(report_io, "encode", None)  # the lens's own writer (line layout) where there is one
    return writer(compact) if writer else report_io.dumps(compact, trusted=True)


def _env() -> dict:
    """This checkout's inductor_lens first on the path (not an installed one)."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def measure(body: str, *args: str) -> tuple[float, float, int]:
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE.format(body=body), *args],
        env=_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    dt, cpu, rss = proc.stdout.split()[-3:]
    return float(dt), float(cpu), int(rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--keep", action="store_true", help="keep the generated report")
    ap.add_argument(
        "--kind",
        nargs="*",
        default=["compact", "expanded"],
        choices=["compact", "expanded"],
        help="which reports to measure: compact (what the lens writes), expanded (plain json.dumps)",
    )
    ap.add_argument(
        "--case",
        nargs="*",
        default=[],
        help="measure only the cases whose name holds one of these words (e.g. --case load show)",
    )
    ap.add_argument("--report", help="measure this report file (as --kind says it is) instead of making one")
    ap.add_argument("--make", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make:
        print(make_report(pathlib.Path(args.make), args.mb, args.kind[0]))
        return
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="lens-bench-"))
    try:
        import orjson  # noqa: F401

        parser = "orjson"
    except ImportError:
        parser = "json (stdlib)"
    print(
        f"parser: {parser}; python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    for kind in args.kind:
        if args.report:
            report = pathlib.Path(args.report)
            size = report.stat().st_size
        else:
            report = tmp / f"{kind}.json"
            # made in a child process: Linux carries a parent's peak RSS into the children it forks
            made = subprocess.run(
                [sys.executable, __file__, "--make", str(report), "--mb", str(args.mb), "--kind", kind],
                capture_output=True,
                text=True,
                check=True,
                env=_env(),
            )
            size = int(made.stdout.split()[-1])
        with open(report, "rb") as f:  # in blocks: a long line read here would raise the children's ru_maxrss
            lines = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
        print(f"\n{kind} report: {size / 1e6:.0f} MB, {lines} line(s) ({report})")
        print(f"{'case':45} {'time s':>8} {'CPU s':>7} {'peak RSS MB':>12} {'RSS / file':>10}")
        for name, body in CASES.items():
            if args.case and not any(w in name for w in args.case) and not name.startswith("baseline"):
                continue
            dt, cpu, rss = measure(body, str(report), str(tmp / "page.html"))
            print(f"{name:45} {dt:8.1f} {cpu:7.1f} {rss / 1e6:12.0f} {rss / size:10.2f}", flush=True)
    if not args.keep:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
