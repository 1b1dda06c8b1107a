"""What each rank of ``inductor-lens torchrun`` runs: the user's script inside ``inductor_lens.capture()``.

    python -m torch.distributed.run [torchrun options] -m inductor_lens._rank_boot --json-dir DIR SCRIPT [ARGS...]

The rank's report is written to ``DIR/rank{RANK}.json`` atomically (``report.io.atomic_write``) when the
script ends, raises, exits, or the rank is told to stop (SIGTERM/SIGINT, which torchrun sends to the
other ranks when one fails). A rank stuck inside a collective never returns to Python, so a signal's
Python handler would never run: a watcher thread learns of the signal through ``signal.set_wakeup_fd``
(written by the C-level handler at once), gives the main thread a moment to unwind, and otherwise writes
a snapshot of what the capture has so far, then ends the process.
"""

from __future__ import annotations

import os
import runpy
import signal
import socket
import sys
import threading
import traceback
from typing import Optional

_GRACE_S = 5.0
_KEEP: list = []


def _rank() -> int:
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


class _Writer:
    """Writes the rank's report exactly once, whoever gets there first (main thread or watcher)."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.done = threading.Event()

    def write(self, report, note: str = "", code: str = "rank_stopped") -> None:
        with self.lock:
            if self.done.is_set():
                return
            try:
                if note:
                    import dataclasses

                    from ..analysis.job import diagnostic

                    report = dataclasses.replace(report, diagnostics=[*report.diagnostics, diagnostic(code, note)])
                from ..report.io import atomic_write

                atomic_write(self.path, report.to_json())
            except Exception as e:  # the report is lost, but say so where the launcher will see it
                print(f"inductor-lens: rank {_rank()}: could not write {self.path}: {e}", file=sys.stderr, flush=True)
            self.done.set()


def _snapshot(cap, note: str = ""):
    """The report of what ``cap`` recorded so far (it may still be active: the watcher thread), or, when the
    rank was stopped before its capture started, a report that says so."""
    if cap is not None and getattr(cap, "_raw", None) is not None:
        from .adapter import torch_version
        from .build import build_report

        return build_report(cap._raw, str(torch_version()), title=cap.title)
    from ..analysis.job import diagnostic
    from ..report.model import Report

    world = os.environ.get("WORLD_SIZE")
    return Report(
        torch_version="unknown",
        device="unknown",
        rank=_rank(),
        world_size=int(world) if world and world.isdigit() else None,
        diagnostics=[
            diagnostic(
                "rank_stopped",
                f"rank {_rank()} was stopped while starting, before its capture began: nothing of it was recorded",
            )
        ],
    )


class _State:
    interruptible = False  # a signal in the script stops it (SystemExit); while torch imports, or after the
    # script, the main thread only notes it (interrupting an import can leave the interpreter unusable)
    signal: Optional[int] = None
    cap = None
    phase = "starting"  # starting | script | finishing


def _watch_signals(writer: _Writer, state: _State) -> None:
    r, w = socket.socketpair()
    r.setblocking(True)
    w.setblocking(False)
    main = threading.main_thread()

    def handler(signum, frame):  # runs in the main thread once Python gets control back
        state.signal = signum
        if state.interruptible:
            raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)
    signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False)
    _KEEP.extend((r, w))  # the sockets must outlive this function: closing them would end the watch

    def watch() -> None:
        data = r.recv(1)
        # the main thread writes the report itself unless it is stuck (a hung collective): give it time
        if not data or writer.done.wait(_GRACE_S if state.interruptible else 4 * _GRACE_S) or not main.is_alive():
            return
        signum = data[0]
        where = {
            "starting": "before its script ran (while starting)",
            "script": "while its script had not returned (a hung collective?)",
            "finishing": "after its script ended, while its report was being built",
        }[state.phase]
        try:
            writer.write(
                _snapshot(state.cap),
                f"rank {_rank()} was stopped by signal {signum} {where}; the report holds what compiled until then",
            )
        finally:
            os._exit(128 + signum)

    threading.Thread(target=watch, name="inductor-lens-signal-watch", daemon=True).start()


def main(argv: Optional[list[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 3 or argv[0] != "--json-dir":
        print("usage: python -m inductor_lens._rank_boot --json-dir DIR SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    json_dir, script, script_args = argv[1], argv[2], argv[3:]
    title = os.environ.get("INDUCTOR_LENS_TITLE") or " ".join([os.path.basename(script), *script_args])
    os.makedirs(json_dir, exist_ok=True)
    rank = _rank()
    writer = _Writer(os.path.join(json_dir, f"rank{rank}.json"))
    state = _State()
    _watch_signals(writer, state)  # first: importing torch can take a while, and a stop then must be recorded too
    code = 0
    try:
        from .session import capture

        state.cap = cap = capture(title=title)
        sys.argv = [script, *script_args]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        with cap:
            try:
                state.interruptible, state.phase = True, "script"
                if state.signal is not None:  # stopped while starting: the script is not run
                    raise SystemExit(128 + state.signal)
                runpy.run_path(script, run_name="__main__")
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                state.interruptible, state.phase = False, "finishing"
    finally:  # whatever happened above, the rank's report is written
        state.interruptible, state.phase = False, "finishing"
        cap = state.cap
        report = cap.report if cap is not None else None
        try:
            report = report if report is not None else _snapshot(cap)
        except Exception as e:
            print(
                f"inductor-lens: rank {rank}: no report could be built ({type(e).__name__}: {e})",
                file=sys.stderr,
                flush=True,
            )
            return code or 1
        stopped = f"rank {rank} was stopped by signal {state.signal}" if state.signal else ""
        ended = f"rank {rank}'s script ended with exit status {code}" if code else ""
        writer.write(
            report, "; ".join(x for x in (stopped, ended) if x), "rank_stopped" if state.signal else "user_code_raised"
        )
    return code or (128 + state.signal if state.signal else 0)


if __name__ == "__main__":
    sys.exit(main())
