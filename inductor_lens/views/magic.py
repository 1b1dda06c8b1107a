"""The ``%%inductor_lens`` cell magic and the display formatter for compiled functions.

``%load_ext inductor_lens`` registers both; ``%unload_ext inductor_lens`` removes both.

The cell runs exactly as it would without the magic (through IPython's own ``run_cell``: its
variables, prints, last-expression value and traceback are IPython's), but inside
:func:`inductor_lens.capture`. While Inductor compiles, a line under the cell says which phase it
is in and which kernels it has built; when the cell ends, that line is replaced by the widget.

A function or module compiled in a lens cell (by ``-f NAME`` or by the cell's own
``torch.compile``) remembers its report: ``display(f)`` shows the widget again. This is done with
an IPython formatter for the compiled wrapper types, not by replacing IPython's display machinery.
"""

from __future__ import annotations

import argparse
import ast
import html
import shlex
import threading
import time
import types
import weakref
from typing import Any, Optional

from ..capturing.adapter import COMPILED_MODULE_TYPE
from ..report.outcome import code_of, message_of
from .cell_compile import _HELPER, _compile_id_for, _CompileAfterBinding, _is_compiled, _is_optimized_module, _original
from .frontend import VIEWS

__all__ = ["load_ipython_extension", "unload_ipython_extension", "inductor_lens_magic", "report_for"]

MAGIC_NAME = "inductor_lens"
_PROGRESS_INTERVAL_S = 0.25


class _Entry:
    __slots__ = ("report", "compile_id", "view")

    def __init__(self, report, compile_id: Optional[str], view: Optional[str]):
        self.report = report
        self.compile_id = compile_id
        self.view = view


# compiled wrapper (function or OptimizedModule) -> the report of the lens cell that compiled it.
_REGISTRY: "weakref.WeakKeyDictionary[Any, _Entry]" = weakref.WeakKeyDictionary()


def report_for(obj) -> Optional[Any]:
    """The :class:`~inductor_lens.Report` of the lens cell that compiled ``obj``, or ``None``."""
    entry = _lookup(obj)
    return entry.report if entry is not None else None


def _lookup(obj) -> Optional[_Entry]:
    try:
        return _REGISTRY.get(obj)
    except TypeError:  # not weak-referenceable / unhashable: never one of ours
        return None


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
        "requires grad and whose backward did not compile in the cell (this adds to .grad)",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="after the cell, run each -f function again on its first call's inputs under the PyTorch "
        "profiler (a few warm-up and timed runs) and show each kernel's measured time",
    )
    p.add_argument(
        "--export", metavar="PATH.html", default=None, help="also write the report as one self-contained HTML page"
    )
    p.add_argument(
        "--json",
        metavar="PATH",
        default=None,
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
        raise UsageError(
            f"%%{MAGIC_NAME}: --profile compiles with options={{'cpp.enable_kernel_profile': True}}, "
            f"and torch.compile takes --mode or options, not both (put the mode's settings in -O)"
        )
    return args


# -- progress ------------------------------------------------------------------------------------


class _Progress:
    """The live line under the cell, in the user's words (``_progress``): created at the first compile
    event, updated at most 4x/s (and at each kernel built)."""

    def __init__(self):
        from .progress import Progress

        self.state = Progress()
        self.handle = None
        self.last = 0.0
        self.error: Optional[BaseException] = None
        self.error_tb = None
        self._lock = threading.Lock()

    def __call__(self, message: str) -> None:
        try:
            with self._lock:
                change = self.state.update(message)
                if change is None:
                    return
                now = time.monotonic()
                if self.handle is not None and now - self.last < _PROGRESS_INTERVAL_S and change != "kernel":
                    return
                self.last = now
                self._show()
        except Exception as e:  # shown after the cell (never swallowed), progress stops
            import sys

            self.error, self.error_tb = e, sys.exc_info()
            raise

    def _show(self) -> None:
        from IPython.display import display

        obj = _Html(self.text(), self.html())
        if self.handle is None:
            self.handle = display(obj, display_id=True)
        else:
            self.handle.update(obj)

    def text(self) -> str:
        return "inductor_lens: " + self.state.line()

    def html(self) -> str:
        return (
            f'<div class="inductor-lens-progress" data-role="lens-progress" '
            f'style="font-family:monospace;font-size:12px;opacity:.8">{html.escape(self.text())}</div>'
        )


class _Html:
    """A display object with a text and an HTML form."""

    def __init__(self, text: str, html_: str):
        self._text, self._html = text, html_

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": self._text, "text/html": self._html}


def _compare_baseline(ns: dict, var: Optional[str]):
    """The report bound to ``var`` for ``--compare``; a UsageError (before the cell runs) if there is none."""
    if var is None:
        return None
    from IPython.core.error import UsageError

    from ..report.model import Report

    if var not in ns:
        raise UsageError(
            f"%%{MAGIC_NAME}: --compare {var}: nothing is bound to {var!r} yet (run a cell with "
            f"`%%{MAGIC_NAME} --name {var}` first, or `{var} = inductor_lens.load('report.json')`)"
        )
    if not isinstance(ns[var], Report):
        raise UsageError(
            f"%%{MAGIC_NAME}: --compare {var}: {var!r} is a {type(ns[var]).__name__}, not an "
            f"inductor_lens report (bind one with `%%{MAGIC_NAME} --name {var}`)"
        )
    return ns[var]


def _diff_view(baseline, report):
    """The compare view of ``baseline`` (A) and this cell's ``report`` (B); text without widgets."""
    d = baseline.diff(report)
    try:
        return d.widget()
    except ImportError as e:
        return _Html(
            d.text() + f"\n(the interactive widget is unavailable: {e})", f"<pre>{html.escape(d.text())}</pre>"
        )


def _notices(lines: list[str]) -> _Html:
    items = "".join(f"<li>{html.escape(s)}</li>" for s in lines)
    return _Html(
        "\n".join(f"inductor_lens: {s}" for s in lines),
        f'<div class="inductor-lens-notices" data-role="lens-notices">'
        f'<b>inductor_lens</b><ul style="margin:2px 0">{items}</ul></div>',
    )


def _widget_or_text(report, **kwargs):
    """The widget; without the widget machinery, the text summary and why."""
    try:
        return report.widget(**{k: v for k, v in kwargs.items() if v is not None})
    except ImportError as e:
        return _Html(
            report.summary() + f"\n(the interactive widget is unavailable: {e})",
            f"<pre>{html.escape(report.summary())}</pre>"
            f"<p>(the interactive widget is unavailable: {html.escape(str(e))})</p>",
        )


# -- the magic -----------------------------------------------------------------------------------


class CellRaised(Exception):
    """The cell under ``%%inductor_lens`` raised; IPython has already shown its traceback.

    Raised by the magic after the lens is shown so that the cell counts as failed (``Run All``
    stops, nbclient reports it); it renders as nothing, so the error is reported once.
    """

    def __init__(self, original: BaseException):
        super().__init__(
            f"the cell raised {type(original).__name__}: {original} (traceback above); "
            f"the lens above shows what compiled before that"
        )
        self.original = original

    def _render_traceback_(self):
        return []


def inductor_lens_magic(line: str, cell: str) -> None:
    from IPython import get_ipython

    try:
        args = _parse(line)
    except _HelpShown:
        return None
    return LensedCell(get_ipython(), args, cell).run()


class LensedCell:
    """One run of a cell under ``%%inductor_lens``.

    :meth:`run` plans (which ``-f`` names the cell binds), executes the cell through IPython inside
    :func:`~inductor_lens.capture` (compiling each ``-f`` name right after the cell binds it), then
    finishes the report (``--backward``, ``--profile``, diagnostics), writes the files and shows the lens.
    """

    def __init__(self, shell, args: argparse.Namespace, cell: str):
        self.shell, self.args, self.cell = shell, args, cell
        self.ns = shell.user_ns
        self.names = list(dict.fromkeys(args.functions))
        self.defined_in_cell: set[str] = set()
        self.transformer: Optional[_CompileAfterBinding] = None
        self.compiled_here: dict[str, Any] = {}
        self.first_calls: dict[str, tuple] = {}  # -f name -> (args, kwargs, output) of its first call
        self.recording = False  # whether first calls are recorded (only while the cell runs)
        self.hook_handles: list = []
        self.notices: list[str] = []
        self.progress = _Progress()
        self.result = None
        self.baseline = None  # --compare: the earlier report this cell's is compared with

    # -- run ------------------------------------------------------------------------------------
    def run(self):
        self.baseline = _compare_baseline(self.ns, self.args.compare)  # checked before the cell runs
        self._plan()
        before = {k: id(v) for k, v in self.ns.items() if _is_compiled_safe(v)}
        report = self._execute()
        error = self._error()
        report = self._finish(report, error)
        self._register(report, before)
        self._write_files(report)
        self._show(report)
        if error is not None:
            raise CellRaised(error)
        return None

    def _plan(self) -> None:
        from IPython.core.error import UsageError

        if not self.names:
            return
        detector = _CompileAfterBinding(self.names)
        try:
            detector.visit(ast.parse(self.shell.transform_cell(self.cell)))
        except SyntaxError:
            pass  # run_cell reports it, with IPython's own message
        self.defined_in_cell = detector.bound
        missing = [n for n in self.names if n not in self.defined_in_cell and n not in self.ns]
        if missing:
            raise UsageError(
                f"%%{MAGIC_NAME}: -f {missing[0]}: the cell does not define {missing[0]!r} and "
                f"nothing is bound to it yet (define the function or module, e.g. "
                f"`def {missing[0]}(x): ...` or `{missing[0]} = MyModule()`)"
            )
        self.transformer = _CompileAfterBinding(self.names)  # fresh state for IPython's own pass

    def _execute(self):
        from IPython.core.error import UsageError

        from ..capturing.session import capture

        title = self.args.title or (", ".join(self.names) if self.names else "%%inductor_lens cell")
        self.ns[_HELPER] = self.compile_name
        if self.transformer is not None:
            self.shell.ast_transformers.append(self.transformer)
        try:
            with capture(title=title, on_event=self.progress) as cap:
                for name in self.names:
                    if name not in self.defined_in_cell:  # defined in an earlier cell: compile it now
                        try:
                            self.compile_name(name)
                        except TypeError as e:
                            raise UsageError(str(e)) from None
                self.recording = True
                self.result = self.shell.run_cell(self.cell, store_history=False)
                self.recording = False
                if self.args.backward and self._error() is None:
                    self._backward()
        finally:
            self._clean_up()
        return cap.report

    def _clean_up(self) -> None:
        self.recording = False
        for handle in self.hook_handles:
            handle.remove()
        self.hook_handles.clear()
        if self.transformer is not None and self.transformer in self.shell.ast_transformers:
            self.shell.ast_transformers.remove(self.transformer)
        if self.ns.get(_HELPER) == self.compile_name:
            del self.ns[_HELPER]

    def _error(self) -> Optional[BaseException]:
        if self.result is None:
            return None
        return self.result.error_before_exec or self.result.error_in_exec

    # -- -f: compile, record the first call -----------------------------------------------------
    def compile_name(self, name: str) -> None:
        """Bound in the user namespace as ``__inductor_lens_compile__`` while the cell runs."""
        import torch

        obj = _original(self.ns[name])
        if isinstance(obj, type):
            raise TypeError(
                f"%%{MAGIC_NAME} -f {name}: {name} is a class; compile an instance instead "
                f"(`model = {name}(...)` and -f model)"
            )
        if not callable(obj):
            raise TypeError(f"%%{MAGIC_NAME} -f {name}: {name} is a {type(obj).__name__}, not a function or module")
        args = self.args
        kwargs: dict[str, Any] = {"backend": "inductor"}
        if args.mode:
            kwargs["mode"] = args.mode
        if args.dynamic:
            kwargs["dynamic"] = True
        options = dict(args.options)
        if args.profile:  # C++ kernels show up in the profiler only when compiled with kernel profiling
            options.setdefault("cpp.enable_kernel_profile", True)
        if options:
            kwargs["options"] = options
        compiled = torch.compile(obj, **kwargs)
        if args.backward or args.profile:
            compiled = self._record_first_call(compiled, name)
        self.ns[name] = compiled
        self.compiled_here[name] = compiled

    def _record_first_call(self, compiled, name: str):
        """For --backward/--profile: keep the first call's (args, kwargs, output) while the cell runs."""
        if _is_optimized_module(compiled):

            def hook(module, args, kwargs, output):
                if self.recording and name not in self.first_calls:
                    self.first_calls[name] = (args, kwargs, output)

            self.hook_handles.append(compiled.register_forward_hook(hook, with_kwargs=True))
            return compiled
        import functools

        @functools.wraps(compiled)
        def recorder(*a, **k):
            out = compiled(*a, **k)
            if self.recording and name not in self.first_calls:
                self.first_calls[name] = (a, k, out)
            return out

        return recorder

    def _backward(self) -> None:
        from ..capturing.outputs import backward as _backward

        for name, (_, _, out) in self.first_calls.items():
            try:
                _backward(out)
            except ValueError as e:
                self.notices.append(
                    f"--backward: the output of {name} does not require grad, so there is no "
                    f"backward graph to compile ({e})"
                )

    def _called(self, report) -> set[str]:
        """The -f names the cell called: a first call was recorded, or a compile of the report is theirs."""
        return {n for n in self.names if n in self.first_calls or _compile_id_for(report, self.ns.get(n)) is not None}

    # -- after the cell -------------------------------------------------------------------------
    def _finish(self, report, error: Optional[BaseException]):
        from ..report import outcome as _outcome

        if self.args.profile and error is None:
            report = self._time_kernels(report)
        if error is not None:
            import traceback

            tb = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            _outcome.user_raised(report, error, tb, who="the cell")
        never = [n for n in self.names if n not in self._called(report)]
        if never and error is None:
            # the user wrote no torch.compile(): say what -f did, not what torch.compile() did
            _drop_never_called(report)
            self.notices.append(
                f"-f compiled {', '.join(never)} but the cell never called "
                f"{'it' if len(never) == 1 else 'them'}: Inductor runs at the first call, so call "
                f"{never[0]}(...) in the cell to see its kernels"
            )
        elif not report.compiles and error is None:
            _outcome.nothing_compiled(report, who="the cell")
            if not report.compile_calls:
                self.notices.append(
                    "call a torch.compile()d function or module in the cell, or let the magic "
                    "compile one for you with -f NAME"
                )
        return report

    def _time_kernels(self, report):
        """--profile: re-run each -f function on its first call's inputs under the PyTorch profiler."""
        from ..capturing.session import time_kernels

        for name in self.names:
            call = self.first_calls.get(name)
            if call is None or call[1]:
                self.notices.append(
                    f"--profile: {name} was not called with positional arguments only in the "
                    f"cell, so it was not profiled"
                )
                continue
            report = time_kernels(report, self.compiled_here[name], *call[0], backward=self.args.backward)
        return report

    def _register(self, report, before: dict) -> None:
        """Remember the report of the compiled wrappers made in this cell, and of older ones that ran in it."""
        for key, value in list(self.ns.items()):
            if not _is_compiled_safe(value):
                continue
            cid = _compile_id_for(report, value)
            if key in self.compiled_here or before.get(key) != id(value) or cid is not None:
                _REGISTRY[value] = _Entry(report, cid, self.args.view)
        if self.args.name:
            self.ns[self.args.name] = report

    def _write_files(self, report) -> None:
        """--json / --export: a file that cannot be written is one line under the cell, never a traceback."""
        from ..report.io import check_writable, describe_os_error

        for option, path, save in (
            ("--json", self.args.json_path, report.save_json),
            ("--export", self.args.export, report.save_html),
        ):
            if not path:
                continue
            why = check_writable(path)
            if why is None:
                try:
                    self.notices.append(f"wrote {save(path)}")
                    continue
                except OSError as e:
                    why = describe_os_error(e)
            self.notices.append(f"error: {option} {path}: cannot write it: {why}")

    def _show(self, report) -> None:
        from IPython.display import display

        from ..report.outcome import message_of

        view = (
            _widget_or_text(report, view=self.args.view) if self.baseline is None else _diff_view(self.baseline, report)
        )
        if self.progress.handle is not None:
            self.progress.handle.update(view)
        else:
            display(view)
        lines = [message_of(d) for d in report.diagnostics] + self.notices
        if lines:
            display(_notices(lines))
        if self.progress.error is not None:
            self.shell.showtraceback(self.progress.error_tb)


def _drop_never_called(report) -> None:
    """Remove the capture's "compiled but never ran" diagnostic (its code, or the version-1 text)."""
    keep = [
        d
        for d in report.diagnostics
        if not (
            code_of(d) in ("nothing_compiled", "never_ran")
            or (code_of(d) is None and message_of(d).startswith("torch.compile() was called but"))
        )
    ]
    report.diagnostics[:] = keep


def _is_compiled_safe(value) -> bool:
    try:
        return _is_compiled(value)
    except Exception:
        return False


# -- display(f) ----------------------------------------------------------------------------------


def _mimebundle(obj):
    entry = _lookup(obj)
    if entry is None:
        return None  # not ours: IPython goes on with its usual formatters
    view = _widget_or_text(entry.report, view=entry.view, compile=entry.compile_id)
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
    "Inductor compile it triggers is recorded (dynamo is reset first, so re-running the cell compiles\n"
    "again). While Inductor works, a line under the cell shows the phase and the kernels built so far;\n"
    "then the widget replaces it. Nothing compiles at torch.compile(): Inductor runs at the first call,\n"
    "so a cell that compiles a function but never calls it shows a note saying so.\n\n"
    "Examples::\n\n"
    "    %%inductor_lens -f f\n"
    "    def f(x):\n"
    "        return torch.sin(x) ** 2 + torch.cos(x) ** 2\n"
    "    f(torch.randn(1024))\n\n"
    "    %%inductor_lens --name rep --export lens.html\n"
    "    model = torch.compile(MLP())\n"
    "    model(x).sum().backward()\n\n" + _make_parser().format_help()
)
