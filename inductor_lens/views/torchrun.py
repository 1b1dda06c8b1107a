"""``inductor-lens torchrun``: run a script under torch's own launcher, every rank captured.

    inductor-lens torchrun [our options] [torchrun's options] SCRIPT [ARGS...]

Our options (before SCRIPT): ``-o job.html``, ``--json-dir DIR``, ``--title T``, ``--timeout S``, ``-q``.
Everything else before SCRIPT goes to ``python -m torch.distributed.run`` unchanged; everything after
SCRIPT belongs to the script. Each rank runs :mod:`inductor_lens._rank_boot`, which wraps the script in
``inductor_lens.capture()`` and writes ``DIR/rank{RANK}.json``; afterwards the launcher combines the
rank reports into one page (:func:`inductor_lens.load_job`). A rank that crashed or hung is named on the
page; the others' reports are kept.
"""

from __future__ import annotations

import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Optional, Sequence

_OURS_WITH_VALUE = {
    "-o": "output",
    "--output": "output",
    "--json-dir": "json_dir",
    "--title": "title",
    "--timeout": "timeout",
}
_OURS_FLAGS = {"-q": "quiet", "--quiet": "quiet"}


#: What ``inductor-lens torchrun --help`` prints: its usage and options, as argparse prints the other commands'.
HELP = """usage: inductor-lens torchrun [-o PAGE] [--json-dir DIR] [--title T] [--timeout S] [-q]
                              [torchrun options] SCRIPT [ARGS...]

Run SCRIPT under torch's own launcher (python -m torch.distributed.run), every rank captured: each
rank writes its report into DIR/rank<N>.json, then one page shows the whole job (the ranks side by
side, what differs between them; a rank that crashed or hung is named, the others' reports kept).

options of the lens (before SCRIPT):
  -o, --output PAGE   the job's HTML page (default: SCRIPT's name + -job.html, e.g. train-job.html)
  --json-dir DIR      where the ranks write their reports (default: PAGE without .html + -ranks)
  --title T           the page's title (default: the script's name and arguments)
  --timeout S         stop the job after S seconds (each rank writes what it has; exit status 124);
                      default: no limit
  -q, --quiet         no progress lines
  -h, --help          show this help and exit

Every other option before SCRIPT is torchrun's (--nproc-per-node, --nnodes, --standalone, ...:
python -m torch.distributed.run --help); everything after SCRIPT belongs to the script.

example:
  inductor-lens torchrun -o job.html --standalone --nproc-per-node 2 train.py --epochs 1
"""


class TorchrunUsage(ValueError):
    """A bad ``inductor-lens torchrun`` command line (the message says what to change)."""


def _torchrun_flags() -> tuple[set[str], set[str]]:
    """torchrun's own options, split into those that take a value and those that do not."""
    from torch.distributed.run import get_args_parser

    with_value, flags = set(), set()
    for action in get_args_parser()._actions:
        (flags if action.nargs == 0 else with_value).update(action.option_strings)
    return with_value, flags


def split_args(tokens: Sequence[str]) -> tuple[dict, list[str], str, list[str]]:
    """``(our options, torchrun options, SCRIPT, script args)``."""
    with_value, flags = _torchrun_flags()
    ours: dict = {"output": None, "json_dir": None, "title": None, "timeout": None, "quiet": False}
    torchrun: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        key, eq, value = tok.partition("=")
        if tok == "--":
            i += 1
            break
        if key in _OURS_WITH_VALUE or key in with_value:
            if not eq:
                if i + 1 >= len(tokens):
                    raise TorchrunUsage(f"torchrun: {tok} needs a value")
                value = tokens[i + 1]
                i += 1
            if key in _OURS_WITH_VALUE:
                ours[_OURS_WITH_VALUE[key]] = value
            else:
                torchrun += [key, value]
        elif tok in _OURS_FLAGS:
            ours[_OURS_FLAGS[tok]] = True
        elif tok in ("-m", "--module", "--no-python", "--no_python"):
            raise TorchrunUsage(f"torchrun: {tok} is not supported here: give the path of a Python script")
        elif key in flags:
            torchrun.append(tok)
        elif tok.startswith("-"):
            raise TorchrunUsage(
                f"torchrun: unknown option {tok!r} before SCRIPT (ours: -o, --json-dir, --title, "
                "--timeout, -q; the others are torchrun's: python -m torch.distributed.run --help)"
            )
        else:
            break
        i += 1
    if i >= len(tokens):
        raise TorchrunUsage(
            "torchrun: no SCRIPT given (usage: inductor-lens torchrun --nproc-per-node 2 "
            "train.py [ARGS...] -o job.html)"
        )
    if ours["timeout"] is not None:
        try:
            ours["timeout"] = float(ours["timeout"])
        except ValueError:
            raise TorchrunUsage(f"torchrun: --timeout needs seconds, not {ours['timeout']!r}") from None
    return ours, torchrun, tokens[i], list(tokens[i + 1 :])


def expected_world_size(torchrun: list[str], script: str) -> Optional[int]:
    """nnodes x nproc-per-node when both are plain numbers (``1:4`` elastic ranges and ``gpu`` are not)."""
    from torch.distributed.run import get_args_parser

    try:
        args = get_args_parser().parse_args([*torchrun, script])
        low, _, high = str(args.nnodes).partition(":")
        if high and high != low:
            return None
        return int(low) * int(args.nproc_per_node)
    except (SystemExit, ValueError, TypeError):
        return None


def _clear_old(json_dir: str, say) -> None:
    old = glob.glob(os.path.join(json_dir, "rank*.json")) + glob.glob(os.path.join(json_dir, "job.json"))
    if old:
        say(f"replacing {len(old)} report(s) of an earlier run in {json_dir}")
        for f in old:
            os.remove(f)


def launch(tokens: Sequence[str], say=print) -> int:
    """Run the job and write the combined page; returns torchrun's exit status (or 124 on --timeout)."""
    ours, torchrun, script, script_args = split_args(tokens)
    if not os.path.isfile(script):
        raise TorchrunUsage(f"torchrun: no such script: {script}")
    stem = os.path.splitext(os.path.basename(script))[0]
    output = ours["output"] or f"{stem}-job.html"
    json_dir = ours["json_dir"] or os.path.splitext(output)[0] + "-ranks"
    os.makedirs(json_dir, exist_ok=True)
    _clear_old(json_dir, say)
    title = ours["title"] or " ".join([os.path.basename(script), *script_args])
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH", "")) if p)
    env["INDUCTOR_LENS_TITLE"] = title
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *torchrun,
        "-m",
        "inductor_lens.capturing.rank_boot",
        "--json-dir",
        os.path.abspath(json_dir),
        script,
        *script_args,
    ]
    say(f"torchrun {' '.join(torchrun)} {script}: every rank records its compiles into {json_dir}/rank<N>.json")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stderr=subprocess.PIPE, text=True, errors="replace")
    tail: list[str] = []
    relay = threading.Thread(target=_relay, args=(proc.stderr, tail), daemon=True)
    relay.start()
    timed_out = False
    try:
        proc.wait(timeout=ours["timeout"])
    except subprocess.TimeoutExpired:
        timed_out = True
        say(f"--timeout {ours['timeout']:g}s reached: stopping the job (each rank writes what it has)")
        _stop(proc)
    except KeyboardInterrupt:
        say("interrupted: stopping the job (each rank writes what it has)")
        _stop(proc)
    relay.join(timeout=10)
    code = 124 if timed_out else proc.returncode
    size = expected_world_size(torchrun, script)
    meta = {
        "world_size": size,
        "exit_code": code,
        "title": title,
        "command": cmd[1:],
        "failures": failures_of("".join(tail)),
    }
    if timed_out:
        meta["note"] = f"the job was stopped after --timeout {ours['timeout']:g}s"
    elif code:
        meta["note"] = f"torchrun exited with status {code}"
    from ..report.io import atomic_write

    atomic_write(os.path.join(json_dir, "job.json"), json.dumps(meta, indent=1))
    from ..analysis.job import load_job

    job = load_job(json_dir)
    job.save_html(output)
    if not ours["quiet"]:
        say(job.summary())
    say(
        f"{len(job.reports)} of {job.world_size} rank report(s) in {time.monotonic() - t0:.0f}s; "
        f"wrote {os.path.abspath(output)}"
    )
    return code


def _relay(stream, tail: list[str], keep: int = 400) -> None:
    """Copy torchrun's stderr to ours as it comes, keeping the last lines (its failure summary)."""
    for line in stream:
        sys.stderr.write(line)
        tail.append(line)
        if len(tail) > keep:
            del tail[: len(tail) - keep]
    sys.stderr.flush()


_FAILURE = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:\s*\d+\)\s*\n\s*exitcode\s*:\s*(-?\d+)")


def failures_of(text: str) -> dict[str, str]:
    """``{rank: why}`` from the failure summary torchrun prints (``rank : 1 (local_rank: 1)`` / ``exitcode : 3``)."""
    out: dict[str, str] = {}
    for rank, code in _FAILURE.findall(text):
        c = int(code)
        if c < 0:
            try:
                name = signal.Signals(-c).name
            except ValueError:
                name = f"signal {-c}"
            out[rank] = f"killed by {name}"
        elif c in (128 + signal.SIGTERM, 128 + signal.SIGINT):
            out[rank] = f"stopped (exit code {c})"
        else:
            out[rank] = f"exited with code {c}"
    return out


def _stop(proc: subprocess.Popen, grace_s: float = 30.0) -> None:
    """SIGTERM to torchrun's process group (torchrun forwards it to the ranks), SIGKILL after ``grace_s``."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
