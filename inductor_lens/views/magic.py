"""The ``%%inductor_lens`` cell magic and the display formatter for compiled functions.

``%load_ext inductor_lens`` registers both; ``%unload_ext inductor_lens`` removes both.

The cell runs exactly as it would without the magic (through IPython's own ``run_cell``: its
variables, prints, last-expression value and traceback are IPython's), but inside
:func:`inductor_lens.capture`. While Inductor compiles, a line under the cell says which phase it
is in and which kernels it has built; when the cell ends, that line is replaced by the widget (or, where the
cell printed after it, the widget comes after the prints). A cell that raises has one error output, its own
traceback, after the widget.

A function or module compiled in a lens cell (by ``-f NAME`` or by the cell's own
``torch.compile``) remembers its report: ``display(f)`` shows the widget again. This is done with
an IPython formatter for the compiled wrapper types, not by replacing IPython's display machinery.
"""

from __future__ import annotations

import argparse
import ast
import os
import shlex
import types
from typing import Any

from ..capturing.adapter import COMPILED_MODULE_TYPE
from .cell_compile import _REGISTRY, MAGIC_NAME, _lookup, report_for
from .cell_display import _Html, _Progress, _widget_or_text
from .cell_run import CellRaised, LensedCell
from .frontend import VIEWS

__all__ = ["load_ipython_extension", "unload_ipython_extension", "inductor_lens_magic", "report_for"]
# the parts of a cell run live in cell_run.py / cell_display.py; these names stay importable from here
_KEPT = (_Html, _Progress, CellRaised)


# -- argument parsing ----------------------------------------------------------------------------


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that raises (IPython shows a UsageError) instead of exiting the kernel."""

    def error(self, message):
        from IPython.core.error import UsageError

        raise UsageError(f"%%{MAGIC_NAME}: {message}\n{self.format_usage()}")

    def exit(self, status=0, message=None):  # -h: print help, do not exit the kernel
        if message:
            print(message)
        from IPython.core.error import UsageError

        raise UsageError("") if status else _HelpShown()


class _HelpShown(Exception):
    pass


def _key_value(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value (e.g. max_autotune=True), got {text!r}")
    try:
        parsed = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        parsed = value.strip()
    return key.strip(), parsed


def _make_parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(
        prog=f"%%{MAGIC_NAME}",
        add_help=True,
        description="Run the cell under inductor_lens.capture() and show what Inductor did: the fused kernels, "
        "their source, and the line of your code and the path through torch that produced each.",
    )
    p.add_argument(
        "-f",
        "--function",
        metavar="NAME",
        action="append",
        default=[],
        dest="functions",
        help="compile the function or nn.Module instance bound to NAME in this cell (or before it) "
        "with torch.compile(backend='inductor'), so the cell can define a plain function and call "
        "it. Repeatable. NAME stays bound to the compiled object after the cell.",
    )
    p.add_argument(
        "--mode", default=None, help="torch.compile mode for -f functions (default, reduce-overhead, max-autotune, ...)"
    )
    p.add_argument("--dynamic", action="store_true", default=None, help="torch.compile(dynamic=True) for -f functions")
    p.add_argument(
        "-O",
        "--option",
        metavar="KEY=VALUE",
        action="append",
        type=_key_value,
        default=[],
        dest="options",
        help="an Inductor option for -f functions, e.g. -O max_autotune=True (repeatable; values are Python literals)",
    )
    p.add_argument(
        "--backward",
        action="store_true",
        help="after the cell, run .sum().backward() on the first output of each -f function that "
        "requires grad and whose backward did not compile in the cell, so that the backward compiles (every .grad it "
        "reaches is put back as it was)",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="after the cell, run each -f function again on its first call's inputs under the PyTorch "
        "profiler (a few warm-up and timed runs) and show each kernel's measured time",
    )
    # ~ expanded as a shell expands it on the command line (a magic's line goes through no shell)
    p.add_argument(
        "--export",
        metavar="PATH.html",
        default=None,
        type=os.path.expanduser,
        help="also write the page the cell shows as one self-contained HTML file (with --compare, the comparison)",
    )
    p.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        type=os.path.expanduser,
        dest="json_path",
        help="also write the report as JSON (inductor_lens.load() reads it back)",
    )
    p.add_argument("--name", metavar="VAR", default=None, help="bind the report to the variable VAR in the notebook")
    p.add_argument(
        "--compare",
        metavar="VAR",
        default=None,
        help="show how this cell's report differs from the report bound earlier to VAR (by --name VAR): "
        "the compare view instead of the lens",
    )
    p.add_argument(
        "--no-reset",
        action="store_false",
        dest="reset",
        help="keep dynamo's state: by default the cell starts with torch._dynamo.reset(), for the whole session, "
        "so that what it calls compiles again and is seen (functions compiled in other cells then compile again at "
        "their next call, and compile ids start again at 0/0); with --no-reset a call that finds a compile made "
        "before the cell compiles nothing and is not in the lens (the widget names those functions)",
    )
    p.add_argument("--view", choices=VIEWS, default=None, help="which view the widget opens with")
    p.add_argument("--title", default=None, help="a title for the report (default: the -f names)")
    return p


def _parse(line: str) -> argparse.Namespace:
    from IPython.core.error import UsageError

    try:
        argv = shlex.split(line)
    except ValueError as e:
        raise UsageError(f"%%{MAGIC_NAME}: {e}") from None
    args = _make_parser().parse_args(argv)
    if args.name is not None and not args.name.isidentifier():
        raise UsageError(f"%%{MAGIC_NAME}: --name needs a Python identifier, not {args.name!r}")
    if args.compare is not None and not args.compare.isidentifier():
        raise UsageError(f"%%{MAGIC_NAME}: --compare needs a Python identifier, not {args.compare!r}")
    for name in args.functions:
        if not name.isidentifier():
            raise UsageError(f"%%{MAGIC_NAME}: -f needs the name of a function or module, not {name!r}")
    compile_opts = [
        o
        for o, v in (
            ("--mode", args.mode),
            ("--dynamic", args.dynamic),
            ("-O", args.options),
            ("--backward", args.backward),
            ("--profile", args.profile),
        )
        if v
    ]
    if compile_opts and not args.functions:
        raise UsageError(
            f"%%{MAGIC_NAME}: {', '.join(compile_opts)} apply to the functions the magic compiles: "
            f"add -f NAME (or pass them to your own torch.compile call)"
        )
    if args.mode and args.options:
        raise UsageError(
            f"%%{MAGIC_NAME}: torch.compile takes --mode or -O options, not both "
            f"(put the mode's settings in -O instead)"
        )
    if args.mode and args.profile:
        raise UsageError(f"%%{MAGIC_NAME}: --profile and --mode: not both (put the mode's settings in -O options)")
    return args


# -- the magic -----------------------------------------------------------------------------------


def inductor_lens_magic(line: str, cell: str) -> None:
    from IPython import get_ipython

    try:
        args = _parse(line)
    except _HelpShown:
        return None
    return LensedCell(get_ipython(), args, cell).run()


# -- display(f) ----------------------------------------------------------------------------------


def _mimebundle(obj):
    entry = _lookup(obj)
    if entry is None:
        return None  # not ours: IPython goes on with its usual formatters
    view = _widget_or_text(entry.report, view=entry.view, compile=entry.compile_id, how_to_save=entry.how_to_save)
    return view._repr_mimebundle_()


_saved: dict = {}


def load_ipython_extension(ipython) -> None:
    """Register ``%%inductor_lens`` and the ``display(f)`` formatter for compiled functions/modules."""
    ipython.register_magic_function(inductor_lens_magic, magic_kind="cell", magic_name=MAGIC_NAME)
    fmt = ipython.display_formatter.mimebundle_formatter
    key = id(ipython)
    if key not in _saved:
        saved = []
        saved.append(("type", types.FunctionType, fmt.for_type(types.FunctionType, _mimebundle)))
        saved.append(("name", COMPILED_MODULE_TYPE, _pop_deferred_or_type(fmt, *COMPILED_MODULE_TYPE)))
        fmt.for_type_by_name(*COMPILED_MODULE_TYPE, _mimebundle)
        _saved[key] = saved


def _pop_deferred_or_type(fmt, module, name):
    # what was registered before us (rarely anything), to put back on unload
    import sys

    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    if cls is not None and cls in fmt.type_printers:
        return fmt.type_printers[cls]
    return fmt.deferred_printers.get((module, name))


def unload_ipython_extension(ipython) -> None:
    """Remove the magic and the formatter; compiled functions keep working, ``display(f)`` is plain again."""
    magics = ipython.magics_manager.magics["cell"]
    if magics.get(MAGIC_NAME) is inductor_lens_magic:
        del magics[MAGIC_NAME]
    fmt = ipython.display_formatter.mimebundle_formatter
    for kind, what, previous in _saved.pop(id(ipython), []):
        if kind == "type":
            fmt.type_printers.pop(what, None)
            if previous is not None:
                fmt.type_printers[what] = previous
        else:
            module, name = what
            import sys

            mod = sys.modules.get(module)
            cls = getattr(mod, name, None) if mod is not None else None
            if cls is not None:
                fmt.type_printers.pop(cls, None)
            fmt.deferred_printers.pop(what, None)
            if previous is not None:
                fmt.deferred_printers[what] = previous
    _REGISTRY.clear()


inductor_lens_magic.__doc__ = (
    "Run the cell under inductor_lens and show what torch.compile's Inductor did.\n\n"
    "The cell runs as it would without the magic (variables, prints, last value, traceback); every\n"
    "Inductor compile it triggers is recorded. Dynamo is reset first, for the whole session, so re-running the cell\n"
    "compiles again, and functions compiled in other cells compile again at their next call (the widget names them;\n"
    "--no-reset keeps dynamo's state). While Inductor works, a line under the cell shows the phase and the kernels generated so far;\n"
    "then the widget replaces it (or comes after what the cell printed under it). Nothing compiles at\n"
    "torch.compile(): Inductor runs at the first call, so a cell that compiles a function but never calls\n"
    "it shows a note saying so.\n\n"
    "Examples::\n\n"
    "    %%inductor_lens -f f\n"
    "    def f(x):\n"
    "        return torch.sin(x) ** 2 + torch.cos(x) ** 2\n"
    "    f(torch.randn(1024))\n\n"
    "    %%inductor_lens --name rep --export lens.html\n"
    "    model = torch.compile(MLP())\n"
    "    model(x).sum().backward()\n\n" + _make_parser().format_help()
)
