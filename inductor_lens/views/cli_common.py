"""What every ``inductor-lens`` command shares: its program name, the error that stops it, and how it speaks."""

from __future__ import annotations

import sys

PROG = "inductor-lens"


class CLIError(Exception):
    """A one-line reason to stop, with an exit code."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
