"""inductor_lens beside its peer: ``inductor-lens import-trace`` against tlparse on the same TORCH_TRACE logs.

    python benchmarks/peers.py [--source LOG] [--small LOG ...] [--mb 100] [--rounds 5] [--huge MB] [--before ROOT]

tlparse comes from the package index, in a venv of its own (it is a benchmark dependency, the ``bench`` extra,
never a test one)::

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install tlparse     # or: pip install inductor-lens[bench]

Logs: each ``--small`` log as it is, and a big one of ``--mb`` megabytes built from ``--source`` by
``benchmarks/trace_import.py`` (copies with shifted frame ids and time stamps, every md5 recomputed: tlparse's
own count of ``fail_payload_md5`` is printed and must be 0). Without ``--source`` a log is written here: a
training step of ``examples.GPT2(layers=2)`` under ``TORCH_TRACE`` with ``INDUCTOR_PROVENANCE=1``.

Every measurement is a fresh process (one untimed warm-up of each first, so both find the file in the page
cache and Python its bytecode); the two tools alternate within each of ``--rounds`` rounds. Printed per log:
the median CPU time of the process tree (user + system, from ``wait4``), wall time and peak RSS of each tool,
and the ratio lens / tlparse (below 1: the lens is ahead). Each tool is started by a small runner process
(``python -S -I``), not by this one: Linux counts the memory of the process that forked a child in that child's
peak RSS (``ru_maxrss`` takes the high-water mark of the address space it replaced at ``exec``), so a tool
started from here would never show less than this script's own peak. The runner's floor is printed. The load average is printed before and after:
on a shared machine wall time is mostly waiting for a core, CPU time is the number to compare.
``--huge MB`` also imports a log of that size once (a 1 GB log: streamed, memory bounded), with progress.
``--before ROOT`` also measures the checkout at ROOT (e.g. ``git worktree add /tmp/main main``) in the same
rounds, interleaved with the other two: the before/after table of a change, under the same load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import trace_import  # noqa: E402  the log builder (benchmarks/trace_import.py)


def _tlparse(given: str | None) -> str:
    for c in (given, shutil.which("tlparse"), "/tmp/peers/bin/tlparse"):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    sys.exit("tlparse not found: python3 -m venv /tmp/peers && /tmp/peers/bin/pip install tlparse (or --tlparse PATH)")


# Forks the command, waits for it and prints its exit code, CPU (user + system of it and the children it waited
# for), wall time and peak RSS. A process's ru_maxrss includes the address space it had before exec (its
# parent's, copied at fork), so the fork is made from this small interpreter (-S -I: no site, ~8 MB), never
# from the benchmark (tens of MB after building the big log): that was the floor of every RSS measured before.
_RUNNER = """
import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime, time.perf_counter() - t0, ru.ru_maxrss)
"""


def _measure(cmd: list[str], env: dict, show_stderr: bool = False) -> dict:
    """CPU (user + system of the process and the children it waited for), wall and peak RSS of one run. It runs
    in an empty folder: ``python -m`` puts the working directory first on ``sys.path``, where a checkout would
    shadow the one ``PYTHONPATH`` names (``--before``)."""
    proc = subprocess.run(
        [sys.executable, "-S", "-I", "-c", _RUNNER, *cmd],
        env=env,
        cwd=_NEUTRAL,
        stdout=subprocess.PIPE,
        stderr=None if show_stderr else subprocess.PIPE,
    )
    err = (proc.stderr or b"").decode(errors="replace")
    try:
        code, cpu, wall, rss_kb = proc.stdout.split()
    except ValueError:
        raise SystemExit(f"the runner failed ({proc.returncode}):\n{err[-3000:]}") from None
    if int(code) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({int(code)}):\n{err[-3000:]}")
    return {"cpu": float(cpu), "wall": float(wall), "rss_mb": int(rss_kb) / 1024, "stderr": err}


_NEUTRAL = tempfile.mkdtemp(prefix="lens-peers-cwd-")


def _lens_env(tmp: str, root: str = ROOT) -> dict:
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode: so does this one
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache", os.path.basename(root.rstrip("/")) or "root")
    return env


def _lens(log: str, tmp: str, root: str, name: str) -> tuple[list[str], dict]:
    out = os.path.join(tmp, f"{name}.html")
    return [sys.executable, "-m", "inductor_lens", "import-trace", log, "-o", out, "-q"], _lens_env(tmp, root)


def _tools(log: str, tmp: str, tlparse: str, before: Optional[str] = None) -> dict:
    tools = {"lens": _lens(log, tmp, ROOT, "lens")}
    if before:  # another checkout (e.g. main), measured in the same rounds
        tools["before"] = _lens(log, tmp, before, "before")
    tools["tlparse"] = (
        [tlparse, log, "-o", os.path.join(tmp, "tl_out"), "--overwrite", "--no-browser"],
        dict(os.environ),
    )
    return tools


def _stats(stderr: str) -> dict:
    m = re.search(r"Stats \{([^}]*)\}", stderr)
    return {k.strip(): int(v) for k, v in (kv.split(":") for kv in m.group(1).split(","))} if m else {}


def _size(path: str) -> tuple[float, int]:
    if os.path.isfile(path):
        return os.path.getsize(path) / 1e6, 1
    total, files = 0, 0
    for d, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(d, n))
            files += 1
    return total / 1e6, files


def compare(log: str, rounds: int, tmp: str, tlparse: str, before: Optional[str] = None) -> dict:
    tools = _tools(log, tmp, tlparse, before)
    runs: dict[str, list[dict]] = {name: [] for name in tools}
    for name, (cmd, env) in tools.items():  # warm-up: page cache, bytecode, the page's engine cache
        first = _measure(cmd, env)
        if name == "tlparse":
            runs["_stats"] = _stats(first["stderr"])
    for r in range(rounds):
        order = list(tools) if r % 2 == 0 else list(reversed(tools))
        for name in order:
            cmd, env = tools[name]
            runs[name].append(_measure(cmd, env))
    out = {"log_mb": os.path.getsize(log) / 1e6, "stats": runs.pop("_stats")}
    for name, rs in runs.items():
        out[name] = {k: statistics.median(x[k] for x in rs) for k in ("cpu", "wall", "rss_mb")}
    out["lens_out"] = _size(os.path.join(tmp, "lens.html"))
    out["tlparse_out"] = _size(os.path.join(tmp, "tl_out"))
    return out


def _row(label: str, r: dict) -> str:
    lens, tl = r["lens"], r["tlparse"]
    before = ""
    if "before" in r:
        b = r["before"]
        before = (
            f"| {b['cpu']:.2f} s CPU, {b['rss_mb']:.0f} MB: {b['cpu'] / tl['cpu']:.2f}x CPU, "
            f"{b['rss_mb'] / tl['rss_mb']:.2f}x RSS "
        )
    return (
        f"| {label} ({r['log_mb']:.1f} MB) {before}| {lens['cpu']:.2f} s CPU, {lens['wall']:.2f} s wall, "
        f"{lens['rss_mb']:.0f} MB | {tl['cpu']:.2f} s CPU, {tl['wall']:.2f} s wall, {tl['rss_mb']:.0f} MB "
        f"| **{lens['cpu'] / tl['cpu']:.2f}x** CPU, {lens['wall'] / tl['wall']:.2f}x wall, "
        f"{lens['rss_mb'] / tl['rss_mb']:.2f}x RSS |"
    )


def huge(source: str, mb: float, tmp: str) -> None:
    big = os.path.join(tmp, "dedicated_log_torch_trace_huge.log")
    copies, size = trace_import.big_log(source, mb, big)
    print(f"huge log: {size / 1e6:.0f} MB ({copies} copies); importing once, progress on stderr", flush=True)
    cmd = [sys.executable, "-m", "inductor_lens", "import-trace", big, "-o", os.path.join(tmp, "huge.html")]
    r = _measure(cmd, _lens_env(tmp), show_stderr=True)
    print(
        f"huge: {r['cpu']:.1f} s CPU, {r['wall']:.1f} s wall, peak RSS {r['rss_mb']:.0f} MB "
        f"({r['rss_mb'] * 2**20 / size:.2f}x the log)"
    )
    os.remove(big)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", help="a real TORCH_TRACE log to build the big log from (default: write one)")
    p.add_argument("--small", action="append", default=[], help="a log compared as it is (repeatable)")
    p.add_argument("--mb", type=float, default=100.0, help="size of the big log (0: none)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--huge", type=float, default=0.0, help="also import a log of this many MB once")
    p.add_argument("--tlparse", help="the tlparse executable (default: on PATH, else /tmp/peers/bin/tlparse)")
    p.add_argument("--before", help="another checkout's root (e.g. of main), measured in the same rounds as before")
    args = p.parse_args()
    tlparse = _tlparse(args.tlparse)
    version = subprocess.run([tlparse, "--version"], capture_output=True, text=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="lens-peers-")
    source = args.source or trace_import.real_log(tmp)
    print(f"{version}; {os.cpu_count()} cores; load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    floor = _measure(["true"], dict(os.environ))["rss_mb"]
    print(f"RSS floor of the runner (`true` started the same way): {floor:.1f} MB")
    logs = [(os.path.basename(s), os.path.abspath(s)) for s in (args.small or [source])]
    if args.mb:
        big = os.path.join(tmp, "dedicated_log_torch_trace_big.log")
        copies, _ = trace_import.big_log(source, args.mb, big)
        logs.append((f"{copies} copies of {os.path.basename(source)}", big))
    rows = []
    for label, log in logs:
        r = compare(log, args.rounds, tmp, tlparse, args.before)
        bad = r["stats"].get("fail_payload_md5", 0)
        print(
            f"{label}: tlparse read {r['stats']}{'  <- CORRUPT LOG' if bad else ''}; outputs: lens "
            f"{r['lens_out'][0]:.1f} MB in 1 file, tlparse {r['tlparse_out'][0]:.1f} MB in {r['tlparse_out'][1]} files",
            flush=True,
        )
        rows.append(_row(label, r))
    print(f"\nmedians of {args.rounds} rounds, fresh processes, interleaved")
    if args.before:
        print(
            "| log | before: lens, lens / tlparse | after: inductor-lens import-trace | tlparse | after: lens / tlparse |"
            "\n|---|---|---|---|---|"
        )
    else:
        print("| log | inductor-lens import-trace | tlparse | lens / tlparse |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.huge:
        huge(source, args.huge, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(_NEUTRAL, ignore_errors=True)


if __name__ == "__main__":
    main()
