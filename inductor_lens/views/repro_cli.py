"""``inductor-lens repro REPORT KERNEL -o kernel.py``: write the standalone reproducer of one kernel.

Kept apart from ``cli.py`` so that the command is one registration there.
"""

from __future__ import annotations

import argparse
import os

from .cli_common import CLIError, _say


def add_parser(sub) -> None:
    p = sub.add_parser(
        "repro",
        help="write a standalone script that runs one kernel of a saved report on its real argument shapes and times it",
        description="Writes a Python script that imports torch only, builds the kernel's arguments with the "
        "recorded shapes, strides and dtypes, runs the kernel, checks that it ran, and prints its median time.",
    )
    p.add_argument("report", help="a saved report (.json or .json.gz)")
    p.add_argument(
        "kernel",
        help="the kernel's name as the report shows it (e.g. cpp_fused_relu_0, extern_kernels.mm[buf9]); "
        "COMPILE:NAME picks the one of a compile where several hold the name (e.g. '0/1 backward:extern_kernels.mm[buf0]')",
    )
    p.add_argument("-o", "--output", default=None, help="the script to write (default: KERNEL.py; '-' prints it)")
    p.add_argument("--runs", type=int, default=None, help="timed runs the script makes by default")
    p.add_argument("--warmup", type=int, default=None, help="warm-up runs before timing")
    p.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="NAME=N",
        help="the value of a data-dependent size the report holds none of (u0 of a nonzero's result; repeatable); "
        "without it each runs at the upper bound the output code checks (u0 <= 64), and the script's own --size "
        "runs another",
    )


def cmd_repro(args: argparse.Namespace) -> int:
    from ..analysis.reproducer import RUNS, WARMUP, ReproducerError, kernel_matches, reproducer, split_compile
    from ..report.io import atomic_write
    from ..report.model import ReportError, load

    if not os.path.isfile(args.report):
        raise CLIError(f"repro: no such report: {args.report}")
    try:
        report = load(args.report)
    except (ReportError, UnicodeDecodeError) as e:
        raise CLIError(f"repro: {args.report} is not a readable inductor_lens report: {e}") from None
    sizes = {}
    for item in args.size:
        name, _, value = item.partition("=")
        if not name.strip() or not value.strip().isdigit():
            raise CLIError(f"repro: --size {item}: give NAME=N, a size's name and a whole number (--size u0=16)")
        sizes[name.strip()] = int(value)
    try:
        script = reproducer(
            report,
            args.kernel,
            runs=args.runs if args.runs is not None else RUNS,
            warmup=args.warmup if args.warmup is not None else WARMUP,
            sizes=sizes or None,
        )
    except KeyError as e:
        raise CLIError(f"repro: {e.args[0]}") from None
    except ReproducerError as e:
        raise CLIError(f"repro: {e}") from None
    if args.output == "-":
        print(script, end="")
        return 0
    output = args.output or "".join(c if c.isalnum() or c in "_-" else "_" for c in args.kernel) + ".py"
    atomic_write(output, script.encode("utf-8"))
    _say(f"wrote {output}: python {output}")
    found = kernel_matches(report, args.kernel)
    if len(found) > 1:  # a forward and its backward, or a recompile, can each hold a kernel of this name
        name = split_compile(report, args.kernel)[1]  # '0/1:NAME' matches 0/1's forward and backward
        where = ", ".join(cid for _, cid in found)
        _say(f"repro: {len(found)} kernels are named {name} ({where}); this is the one of {found[0][1]}: "
             f"name another as 'COMPILE:{name}', e.g. '{found[1][1]}:{name}'")  # fmt: skip
    return 0
