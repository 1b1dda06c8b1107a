"""``inductor-lens diff A.json B.json -o diff.html``: the compare view of two saved reports.

Kept apart from ``cli.py`` so that the command is one registration there.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any

from .cli_common import CLIError, _say


def add_parser(sub) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two saved JSON reports: which kernels are the same, changed, added, removed",
        description="Pairs the compiles of A and B (by frame, graph kind and order) and their kernel launches "
        "(by the ops they compute), prints each launch that is not the same with what changed in it, and writes "
        "the compare view as one HTML page.",
    )
    p.add_argument("a", help="report A, the baseline (a .json from --json or report.save_json)")
    p.add_argument("b", help="report B, the one compared with A")
    p.add_argument("-o", "--output", default=None, help="HTML file to write (default: A-vs-B.html)")
    p.add_argument("--json", default=None, help="also write the diff as JSON")
    p.add_argument(
        "--pair",
        action="append",
        default=[],
        metavar="A_ID=B_ID",
        help="pair these compiles instead of the automatic pairing, e.g. --pair '0/0 forward=1/0 forward' (repeatable)",
    )


def _load(path: str):
    from ..report.model import ReportError, load

    if not os.path.isfile(path):
        raise CLIError(f"diff: no such report: {path}")
    try:
        return load(path)
    except (ReportError, UnicodeDecodeError) as e:
        raise CLIError(f"diff: {path} is not a readable inductor_lens report: {e}") from None


def named_by_files(a: Any, b: Any, path_a: str, path_b: str) -> tuple:
    """The two reports a diff compares, each titled so that the page's "A: ... -> B: ..." tells them apart: by its
    file where it has no title or both have the same one (two runs of one script), after its title where it has
    one (``train (sdpa.json)``). Copies; the loaded reports are not changed."""
    if a.title and b.title and a.title != b.title:
        return a, b

    def named(r: Any, path: str) -> Any:
        name = os.path.basename(path)
        return dataclasses.replace(r, title=f"{r.title} ({name})" if r.title else name)

    return named(a, path_a), named(b, path_b)


def cmd_diff(args: argparse.Namespace) -> int:
    from ..analysis.diff import diff, summary_text

    a, b = named_by_files(_load(args.a), _load(args.b), args.a, args.b)
    pairs = []
    for p in args.pair:
        pa, sep, pb = p.partition("=")
        if not sep:
            raise CLIError(f"diff: --pair takes A_ID=B_ID, not {p!r}")
        pairs.append((pa.strip(), pb.strip()))
    try:
        d = diff(a, b, pairs=pairs)
    except ValueError as e:
        raise CLIError(f"diff: {e}") from None
    stem = lambda p: os.path.splitext(os.path.basename(p))[0]  # noqa: E731
    output = args.output or f"{stem(args.a)}-vs-{stem(args.b)}.html"
    written = []
    for path, save in ((output, d.save_html), (args.json, d.save_json)):
        if path:
            try:
                written.append(os.path.abspath(save(path)))
            except OSError as e:
                raise CLIError(f"cannot write {path}: {e.strerror or e}") from None
    # the whole reports' measured kernel time, A against B, or why not (a side not profiled): as the page's header
    _say(d.kernel_time_us["verdict"] or d.kernel_time_us["why"])
    for note in d.notes:
        _say(f"note: {note.message}")
    # what changed, launch by launch, in the words of the page's rows (KernelDiff.what_changed)
    print(d.changes_text(), flush=True)
    _say(f"{summary_text(d.summary)}; wrote {' and '.join(written)}")
    return 0
