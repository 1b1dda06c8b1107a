"""Time and peak memory of loading and showing a large report (issue 10, section 5).

    python benchmarks/load_show.py [--mb 200] [--keep]

Builds a valid report of about ``--mb`` MB by repeating the compiles of the recorded GPT-2 block
(tests/fixtures/gpu_gpt2_block.json, ids made unique), then measures, each in a fresh process:
``inductor_lens.load(path)`` (the full model) and ``inductor-lens show path -o page.html``
(parse, type-check every field, pack, write). Prints wall time and peak RSS (ru_maxrss) next to
the file size. Targets: <= 10 s and peak RSS <= 2x the file size.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
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
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""

CASES = {
    "baseline (python -c 'import inductor_lens')": "import inductor_lens",
    "load() -> Report": "import inductor_lens\nr = inductor_lens.load(sys.argv[1])",
    "load_data() (parse + typed check)": "from inductor_lens import report_io\nd = report_io.load_data(sys.argv[1])",
    "inductor-lens show": "from inductor_lens import cli\nassert cli.main(['show', sys.argv[1], '-o', sys.argv[2]]) == 0",
}


def make_report(path: pathlib.Path, mb: float) -> int:
    data = json.loads(FIXTURE.read_text())
    base = data["compiles"]
    one = len(json.dumps(base))
    copies = max(1, int(mb * 1e6 / one))
    data["compiles"] = [dict(c, id=f"{c['id']} #{i}") for i in range(copies) for c in base]
    text = json.dumps(data)
    path.write_text(text)
    return len(text)


def measure(body: str, *args: str) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", MEASURE.format(body=body), *args], env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    dt, rss = proc.stdout.split()[-2:]
    return float(dt), int(rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--keep", action="store_true", help="keep the generated report")
    ap.add_argument("--make", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make:
        print(make_report(pathlib.Path(args.make), args.mb))
        return
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="lens-bench-"))
    report = tmp / "big.json"
    # made in a child process: Linux carries a parent's peak RSS into the children it forks
    made = subprocess.run([sys.executable, __file__, "--make", str(report), "--mb", str(args.mb)],
                          capture_output=True, text=True, check=True)
    size = int(made.stdout.split()[-1])
    try:
        import orjson  # noqa: F401
        parser = "orjson"
    except ImportError:
        parser = "json (stdlib)"
    print(f"report: {size / 1e6:.0f} MB ({report}); parser: {parser}; python {sys.version.split()[0]}")
    print(f"{'case':45} {'time s':>8} {'peak RSS MB':>12} {'RSS / file':>10}")
    for name, body in CASES.items():
        dt, rss = measure(body, str(report), str(tmp / "page.html"))
        print(f"{name:45} {dt:8.1f} {rss / 1e6:12.0f} {rss / size:10.2f}")
    if not args.keep:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
