"""Where the test suite's time goes: CPU seconds per test and per file, child processes included (issue 21).

The suite is CPU-bound on the 2-core machine (about 600 CPU-seconds of tests for 5 minutes of wall time), so its
wall time is cut by cutting CPU, and a test's CPU is mostly not its own process: Chromium renderers, Jupyter and
marimo servers, notebook kernels, ``inductor-lens`` and torchrun subprocesses, gcc. This runs the suite as ``make
test`` does (pytest-xdist, the same markers) with each worker in a cgroup of its own (cgroup v1 ``cpuacct``, where
the machine lets us make one: every process a worker starts is counted, also those it never waits for), and
records each test's wall time and the CPU its worker's cgroup used meanwhile. Without such a cgroup it falls back to
the worker's own CPU plus its waited-for children (servers and Chromium are then missed: the output says so).

    python benchmarks/suite_cpu.py                    # the whole suite but the wheel test
    python benchmarks/suite_cpu.py tests/views -k cli # any pytest arguments
    python benchmarks/suite_cpu.py --top 40

Prints the totals (with the machine's speed before and after: the CPU of one fixed workload), each worker's tests (when its first began and its last ended: a worker idle at the end shows
there), the files by CPU and the tests by CPU (markdown tables). Nothing is written in the checkout.
"""

from __future__ import annotations

import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
CGROUP_ROOT = pathlib.Path("/sys/fs/cgroup/cpuacct")
_OUT_ENV = "INDUCTOR_LENS_SUITE_CPU"
_GROUP_ENV = "INDUCTOR_LENS_SUITE_CPU_GROUP"


# -- the pytest plugin (``-p benchmarks.suite_cpu``), in each xdist worker --------------------------------------


class _Meter:
    """CPU seconds of this worker: its cgroup's usage, else its own and its waited-for children's rusage."""

    def __init__(self, worker: str):
        self.group = None
        parent = CGROUP_ROOT / os.environ.get(_GROUP_ENV, f"inductor-lens-suite-{os.getppid()}")
        try:
            group = parent / worker
            group.mkdir(parents=True, exist_ok=True)
            (group / "cgroup.procs").write_text(str(os.getpid()))
            self.group = group
        except OSError:
            pass

    def cpu(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


_state: dict = {}


def pytest_configure(config):
    out = os.environ.get(_OUT_ENV)
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _state["meter"] = _Meter(worker)
    _state["file"] = open(os.path.join(out, f"{worker}.jsonl"), "a", encoding="utf-8")


def _protocol(item, nextitem):
    meter = _state.get("meter")
    if meter is None:
        yield
        return
    t0, c0, start = time.perf_counter(), meter.cpu(), time.time()
    yield
    row = {"id": item.nodeid, "wall": time.perf_counter() - t0, "cpu": meter.cpu() - c0, "cgroup": bool(meter.group)}
    row.update(worker=os.environ.get("PYTEST_XDIST_WORKER", "main"), start=start, end=time.time())
    _state["file"].write(json.dumps(row) + "\n")
    _state["file"].flush()


try:  # the hook, where pytest is there (the command itself runs without it)
    import pytest as _pytest

    pytest_runtest_protocol = _pytest.hookimpl(hookwrapper=True)(_protocol)
except ImportError:  # pragma: no cover
    pass


# -- the command ------------------------------------------------------------------------------------------------


def machine_speed(rounds: int = 3) -> float:
    """CPU seconds of one fixed pure-Python workload (the best of ``rounds``), taken before and after the suite:
    the same tests took 498 and 627-653 CPU-s hours apart on this idle machine, and this tells a slow CPU (it took
    0.82-1.39 s) from a suite grown slower for another reason."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        sum(i * i for i in range(10**7))
        best = min(best, time.process_time() - t0)
    return best


def main(argv: list[str]) -> int:
    top = 25
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    args = argv or ["-m", "not wheel"]
    with tempfile.TemporaryDirectory() as out:
        group = f"inductor-lens-suite-{os.getpid()}"
        env = dict(os.environ, **{_OUT_ENV: out, _GROUP_ENV: group})
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
        cmd = [sys.executable, "-m", "pytest", "-p", "benchmarks.suite_cpu", "-n", "auto", "--dist", "loadfile", "-q"]
        speed = [machine_speed()]
        t0 = time.perf_counter()
        rc = subprocess.run([*cmd, *args], cwd=REPO, env=env).returncode
        wall = time.perf_counter() - t0
        speed.append(machine_speed())
        rows = [json.loads(line) for p in pathlib.Path(out).glob("*.jsonl") for line in p.read_text().splitlines()]
    for d in [*(CGROUP_ROOT / group).glob("*/"), CGROUP_ROOT / group]:  # empty once the workers are gone
        try:
            d.rmdir()
        except OSError:
            pass
    if not rows:
        print("no test ran", file=sys.stderr)
        return rc or 1
    files: dict = {}
    for r in rows:
        f = files.setdefault(r["id"].split("::", 1)[0], [0.0, 0.0, 0])
        f[0], f[1], f[2] = f[0] + r["wall"], f[1] + r["cpu"], f[2] + 1
    how = "each worker's cgroup" if all(r["cgroup"] for r in rows) else "own + waited-for children (no cgroup)"
    print(
        f"\n{len(rows)} tests in {wall:.0f} s wall; tests' CPU {sum(r['cpu'] for r in rows):.0f} s ({how}), "
        f"their wall time summed over workers {sum(r['wall'] for r in rows):.0f} s; load average now "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg())
        + f"; the machine's speed (a fixed workload, best of 3): {speed[0]:.2f} CPU-s before, {speed[1]:.2f} after"
    )
    print("\n| worker | tests | CPU s | first test starts | last test ends |\n|---|---|---|---|---|")
    t_first = min(r["start"] for r in rows)
    for worker in sorted({r["worker"] for r in rows}):
        mine = [r for r in rows if r["worker"] == worker]
        print(
            f"| {worker} | {len(mine)} | {sum(r['cpu'] for r in mine):.0f} | "
            f"{min(r['start'] for r in mine) - t_first:.0f} s | {max(r['end'] for r in mine) - t_first:.0f} s |"
        )
    print("\n| file | tests | CPU s | wall s |\n|---|---|---|---|")
    for name, (w, c, n) in sorted(files.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"| {name} | {n} | {c:.1f} | {w:.1f} |")
    print("\n| test | CPU s | wall s |\n|---|---|---|")
    for r in sorted(rows, key=lambda r: -r["cpu"])[:top]:
        print(f"| {r['id']} | {r['cpu']:.1f} | {r['wall']:.1f} |")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
