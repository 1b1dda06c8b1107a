"""What every ``inductor-lens`` command shares: its program name, the error that stops it, and how it speaks."""

from __future__ import annotations

import re
import sys

PROG = "inductor-lens"


class CLIError(Exception):
    """A one-line reason to stop, with an exit code."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


#: The widest a paragraph of the CLI is written (a narrower terminal: its width).
PARAGRAPH_WIDTH = 100


def _say_paragraph(text: str) -> None:
    """``text`` (a report's words: ``Report.when``, ~600 characters) said a sentence to a line, each wrapped to the
    terminal (at most PARAGRAPH_WIDTH), under the program's name: one line of 600 characters was the CLI's answer to
    "when did Inductor run?". The words are the report's, whole: the lines joined with spaces give them back."""
    import shutil  # here: every command imports this module, and shutil brings bz2 and lzma (the import's lean path)
    import textwrap

    width = min(PARAGRAPH_WIDTH, shutil.get_terminal_size((PARAGRAPH_WIDTH, 24)).columns)
    lead = f"{PROG}: "
    lines = []
    for sentence in re.split(r"(?<=\.) (?=[A-Z])", text.strip()):
        glued = re.sub(r"(\d) (µs|ms|s|B|KiB|MiB|GiB)\b", "\\1\u00a0\\2", sentence)  # "40.7 ms" on one line
        wrapped = textwrap.wrap(glued, width - len(lead), break_long_words=False, break_on_hyphens=False)
        lines += [line.replace("\u00a0", " ") for line in wrapped] or [""]
    print(
        "\n".join(lead + line if i == 0 else " " * len(lead) + line for i, line in enumerate(lines)),
        file=sys.stderr,
        flush=True,
    )
