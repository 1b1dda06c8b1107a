"""One run of a cell under ``%%inductor_lens``, in named parts.

- :class:`_CellPlan`: before the cell runs: which ``-f`` names the cell binds (and that every other one is
  bound already), the ``--compare`` baseline;
- :class:`_FunctionCompiler`: ``-f NAME``: compiles NAME right after the cell binds it and records its first
  call (for ``--backward`` and ``--profile``);
- :class:`LensedCell`: the adapter between the cell and the run pipeline (``capturing/pipeline.py``): the
  cell runs through IPython's ``run_cell`` inside the pipeline's capture, then the pipeline profiles and
  adds the outcome; the cell's own notices (what ``-f`` did) are added here;
- :func:`_write_files`, :func:`_register`: ``--json``/``--export``, and which compiled objects remember
  the report (``display(f)``).
"""

from __future__ import annotations

import argparse
import ast
import functools
import sys
import traceback
from typing import Any, Optional

from ..report import outcome as _outcome
from ..report.outcome import message_of
from .cell_compile import (
    _HELPER,
    _REGISTRY,
    MAGIC_NAME,
    _compile_id_for,
    _CompileAfterBinding,
    _Entry,
    _is_compiled_safe,
    _is_optimized_module,
    _original,
)
from .cell_display import _diff_view, _Progress, _widget_or_text, save_hint, show_cell_result


def cell_raised(original: BaseException, shown: Optional[list] = None) -> "CellRaised":
    """The :class:`CellRaised` that fails the cell, of a class named as ``original``'s (the kernel's reply names the
    error by its class: nbclient and papermill then report the user's ``ZeroDivisionError: division by zero``, not
    ``CellRaised``); ``str()`` of it is the original's. Not a subclass of the user's class: IPython shows a
    SyntaxError its own way, and a user's class may run code of its own when subclassed."""
    if not isinstance(original, Exception):  # KeyboardInterrupt, SystemExit: IPython's own handling, kept
        return CellRaised(original, shown)
    try:
        cls = type(type(original).__name__, (CellRaised,), {"__str__": _original_str})
        return cls(original, shown)
    except Exception:
        return CellRaised(original, shown)


def _original_str(self) -> str:
    return str(self.original)


class CellRaised(Exception):
    """The cell under ``%%inductor_lens`` raised.

    Raised by the magic after the lens is shown so that the cell counts as failed (``Run All``
    stops, nbclient reports it). It renders as the cell's own traceback, the one IPython made for the
    user's error and that the magic held back (``shown``, :class:`_HeldTraceback`): the cell has one error
    output, the user's (a saved notebook had two, the second with an empty traceback: nbval, papermill and a
    CI that counts error outputs saw the error twice; a new user's trial, nu19 O-f). Where IPython showed the
    traceback itself (``shown`` None: a path the magic does not hold back), it renders as nothing.
    """

    def __init__(self, original: BaseException, shown: Optional[list] = None):
        super().__init__(
            f"the cell raised {type(original).__name__}: {original}; the lens above shows what compiled before that"
        )
        self.original = original
        self.shown = shown

    def __reduce__(self):
        """Pickled as what :func:`cell_raised` makes of the original (its class, named as the user's, is made
        anew on loading): pickle cannot find a class made at run time by its name."""
        return (cell_raised, (self.original,))

    def _render_traceback_(self):
        """The cell's own traceback as IPython made it (or nothing, where IPython showed it); and IPython, which has
        just made this the last error (``sys.last_value``), gets the cell's own back: ``%debug`` and ``%tb`` go to
        the user's frame."""
        original = self.original
        sys.last_type, sys.last_value, sys.last_traceback = type(original), original, original.__traceback__
        if hasattr(sys, "last_exc"):  # Python 3.12+
            sys.last_exc = original
        return list(self.shown or [])


#: IPython's functions that show the error that ends a cell (``run_code``'s ``except``, a syntax error in
#: ``run_cell_async``); a traceback the cell's own code shows (``get_ipython().showtraceback()``) is not held back.
_CELL_ERROR_SHOWERS = frozenset({"run_code", "run_cell_async", "_run_cell"})
_SHOW_FUNCTIONS = frozenset({"showtraceback", "showsyntaxerror", "showindentationerror"})


class _HeldTraceback:
    """While the cell runs, the traceback IPython makes for the error that ends it is held back instead of sent
    (``shell._showtraceback``, the one place IPython and ipykernel send a traceback): :class:`CellRaised` shows it,
    as the cell's one error output, after the lens. Only the cell-ending error's: one that the cell's code shows
    itself, or that a display formatter raised, is sent at once, in its place."""

    def __init__(self, shell):
        self.shell = shell
        self.held: Optional[tuple] = None  # (the error, IPython's structured traceback)
        self._patched = False

    def __enter__(self):
        show = getattr(self.shell, "_showtraceback", None)
        if show is None:
            return self
        self._send = show
        self._own = vars(self.shell).get("_showtraceback")  # ipykernel leaves one on the instance: put back as it was

        def _showtraceback(etype, evalue, stb):
            if self.held is None and _shown_by_ipython_for_the_cell(sys._getframe(1)):
                self.held = (evalue, list(stb))
                return None
            return self._send(etype, evalue, stb)

        self.shell._showtraceback = _showtraceback
        self._patched = True
        return self

    def __exit__(self, *exc):
        if self._patched:
            if self._own is None:
                del self.shell._showtraceback
            else:
                self.shell._showtraceback = self._own
            self._patched = False
        return False

    def take(self, error: Optional[BaseException]) -> Optional[list]:
        """The traceback held for ``error`` (None where it was not held: IPython sent it); a held traceback of another
        error (never expected) is sent now rather than lost."""
        held, self.held = self.held, None
        if held is None:
            return None
        if held[0] is error:
            return held[1]
        self._send(type(held[0]), held[0], held[1])
        return None


def _shown_by_ipython_for_the_cell(frame) -> bool:
    """Whether the traceback being sent is the one IPython shows for the error that ended the cell: the caller chain,
    past IPython's ``show*`` functions, is IPython's own ``run_code``/``run_cell_async``."""
    for _ in range(6):
        if frame is None:
            return False
        name = frame.f_code.co_name
        if name in _SHOW_FUNCTIONS:
            frame = frame.f_back
            continue
        return name in _CELL_ERROR_SHOWERS and "IPython" in frame.f_code.co_filename
    return False


# -- before the cell ------------------------------------------------------------------------------


class _CellPlan:
    """What is known before the cell runs; a UsageError (nothing has run) when it cannot run."""

    def __init__(self, shell, args: argparse.Namespace, cell: str):
        self.names = list(dict.fromkeys(args.functions))
        self.baseline = _compare_baseline(shell.user_ns, args.compare)
        _check_outputs(args)
        self.defined_in_cell: set[str] = set()
        self.transformer: Optional[_CompileAfterBinding] = None
        if self.names:
            self._find_bindings(shell, cell)

    def _find_bindings(self, shell, cell: str) -> None:
        from IPython.core.error import UsageError

        detector = _CompileAfterBinding(self.names)
        try:
            detector.visit(ast.parse(shell.transform_cell(cell)))
        except SyntaxError:
            pass  # run_cell reports it, with IPython's own message
        self.defined_in_cell = detector.bound
        missing = [n for n in self.names if n not in self.defined_in_cell and n not in shell.user_ns]
        if missing:
            raise UsageError(
                f"%%{MAGIC_NAME}: -f {missing[0]}: the cell does not define {missing[0]!r} and "
                f"nothing is bound to it yet (define the function or module, e.g. "
                f"`def {missing[0]}(x): ...` or `{missing[0]} = MyModule()`)"
            )
        self.transformer = _CompileAfterBinding(self.names)  # fresh state for IPython's own pass


def _check_outputs(args: argparse.Namespace) -> None:
    """A UsageError, before the cell runs, where ``--json`` or ``--export`` cannot be written (a folder that does not
    exist): as ``inductor-lens run`` checks its outputs before the script runs, so a long cell is not run for a
    report that could not be saved. (Written after the cell, a failure is still one line: :func:`_write_files`.) The
    built front end too, which the widget and the page embed."""
    from IPython.core.error import UsageError

    from ..report.io import check_writable

    for option, path in (("--json", args.json_path), ("--export", args.export)):
        why = check_writable(path) if path else None
        if why is not None:
            raise UsageError(f"%%{MAGIC_NAME}: {option} {path}: cannot write it: {why} (nothing ran)")
    from .frontend import BundleMissingError, check_bundle

    try:  # the widget (and an --export page) embed the built front end: refused now, not after the cell's capture
        check_bundle()
    except BundleMissingError as e:
        raise UsageError(f"%%{MAGIC_NAME}: {e} (nothing ran)") from None


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


# -- -f: compile, record the first call -----------------------------------------------------------


class _FunctionCompiler:
    """Compiles each ``-f`` name (``__inductor_lens_compile__`` in the user namespace while the cell runs)
    and, for ``--backward``/``--profile``, keeps each one's first call: ``(args, kwargs, output)``."""

    def __init__(self, ns: dict, args: argparse.Namespace):
        self.ns, self.args = ns, args
        self.compiled_here: dict[str, Any] = {}
        self.first_calls: dict[str, tuple] = {}
        self.recording = False  # whether first calls are recorded (only while the cell runs)
        self.hook_handles: list = []

    def __call__(self, name: str) -> None:
        import torch

        obj = _original(self.ns[name])
        if isinstance(obj, type):
            raise TypeError(
                f"%%{MAGIC_NAME} -f {name}: {name} is a class; compile an instance instead "
                f"(`model = {name}(...)` and -f model)"
            )
        if not callable(obj):
            raise TypeError(f"%%{MAGIC_NAME} -f {name}: {name} is a {type(obj).__name__}, not a function or module")
        compiled = torch.compile(obj, **self.compile_kwargs())
        if self.args.backward or self.args.profile:
            compiled = self._record_first_call(compiled, name)
        self.ns[name] = compiled
        self.compiled_here[name] = compiled

    def compile_kwargs(self) -> dict:
        """``torch.compile``'s arguments for the -f functions (kernel profiling is the pipeline's)."""
        args = self.args
        kwargs: dict[str, Any] = {"backend": "inductor"}
        if args.mode:
            kwargs["mode"] = args.mode
        if args.dynamic:
            kwargs["dynamic"] = True
        if args.options:
            kwargs["options"] = dict(args.options)
        return kwargs

    def _record_first_call(self, compiled, name: str):
        if _is_optimized_module(compiled):

            def hook(module, args, kwargs, output):
                if self.recording and name not in self.first_calls:
                    self.first_calls[name] = (args, kwargs, output)

            self.hook_handles.append(compiled.register_forward_hook(hook, with_kwargs=True))
            return compiled

        @functools.wraps(compiled)
        def recorder(*a, **k):
            out = compiled(*a, **k)
            if self.recording and name not in self.first_calls:
                self.first_calls[name] = (a, k, out)
            return out

        return recorder

    def remove_hooks(self) -> None:
        self.recording = False
        for handle in self.hook_handles:
            handle.remove()
        self.hook_handles.clear()


# -- the cell -------------------------------------------------------------------------------------


class LensedCell:
    """One run of a cell under ``%%inductor_lens``: plan, run the cell through the run pipeline, finish
    the report, write the files, show the lens (see the module docstring for the parts)."""

    def __init__(self, shell, args: argparse.Namespace, cell: str):
        self.shell, self.args, self.cell = shell, args, cell
        self.ns = shell.user_ns
        self.plan: Optional[_CellPlan] = None
        self.compiler = _FunctionCompiler(self.ns, args)
        self.notices: list[str] = []
        self.progress = _Progress(shell)
        self.result = None
        self.held = _HeldTraceback(shell)

    @property
    def names(self) -> list[str]:
        return self.plan.names if self.plan is not None else list(dict.fromkeys(self.args.functions))

    def run(self):
        from ..capturing.pipeline import Run

        self.plan = _CellPlan(self.shell, self.args, self.cell)  # a UsageError here: nothing has run
        before = {k: id(v) for k, v in self.ns.items() if _is_compiled_safe(v)}
        # a cell compiling no named function: by its number (In [N], as its lines are named: "cell [N]:3"), so that
        # its exported page (named by the title) is not inductor_lens-cell.html for every cell of every notebook
        from ..capturing.sources import running_cell

        number = running_cell(self.shell)
        cell = f"%%inductor_lens cell [{number}]" if number is not None else "%%inductor_lens cell"
        title = self.args.title or (", ".join(self.names) if self.names else cell)
        pipeline = Run(
            title=title,
            on_event=self.progress,
            profile="calls" if self.args.profile else None,
            who="the cell",
            reset=getattr(self.args, "reset", True),
        )
        try:
            self._execute(pipeline)
            error = self._error()
            report = self._finish(pipeline, error)
            self.notices += _write_files(report, self.args, self.plan.baseline)
            exported = self.args.export and not any(n.startswith("error: --export ") for n in self.notices)
            how_to_save = save_hint(self.args.name, self.args.export if exported else None)
            _register(self.ns, report, before, self.compiler.compiled_here, self.args, how_to_save)
            self._show(report, how_to_save)
        except BaseException:
            self.held.take(None)  # the lens failed: the cell's own traceback (if any) is sent, not lost
            raise
        finally:
            self.progress.close()
        if error is not None:
            raise cell_raised(error, self.held.take(error))
        return None

    def _execute(self, pipeline) -> None:
        """The cell through IPython's ``run_cell`` inside the pipeline's capture; then ``--backward``."""
        from IPython.core.error import UsageError

        plan = self.plan
        self.ns[_HELPER] = self.compiler
        if plan.transformer is not None:
            self.shell.ast_transformers.append(plan.transformer)
        try:
            with pipeline:
                for name in plan.names:
                    if name not in plan.defined_in_cell:  # defined in an earlier cell: compile it now
                        try:
                            self.compiler(name)
                        except TypeError as e:
                            raise UsageError(str(e)) from None
                self.compiler.recording = True
                with self.held:
                    self.result = self.shell.run_cell(self.cell, store_history=False)
                self.compiler.recording = False
                if self._error() is not None:
                    pipeline.raised(self._error())
                if self.args.backward and self._error() is None:
                    self._backward(pipeline)
        finally:
            self._clean_up()

    def _backward(self, pipeline) -> None:
        for name, (_, _, out) in self.compiler.first_calls.items():
            e = pipeline.backward(out)
            if isinstance(e, ValueError):
                self.notices.append(
                    f"--backward: the output of {name} does not require grad, so there is no "
                    f"backward graph to compile ({e})"
                )
            elif e is not None:
                raise e

    def _clean_up(self) -> None:
        self.compiler.remove_hooks()
        transformer = self.plan.transformer if self.plan is not None else None
        if transformer is not None and transformer in self.shell.ast_transformers:
            self.shell.ast_transformers.remove(transformer)
        if self.ns.get(_HELPER) is self.compiler:
            del self.ns[_HELPER]

    def _error(self) -> Optional[BaseException]:
        if self.result is None:
            return None
        return self.result.error_before_exec or self.result.error_in_exec

    def _finish(self, pipeline, error: Optional[BaseException]):
        """The pipeline's profile and outcome, and the cell's notices about ``-f``."""
        if self.args.profile and error is None:
            self._queue_profiles(pipeline)
        captured = pipeline.report
        called = {
            n
            for n in self.names
            if n in self.compiler.first_calls or _compile_id_for(captured, self.ns.get(n)) is not None
        }
        never = [n for n in self.names if n not in called] if error is None else []
        tb = "".join(traceback.format_exception(type(error), error, error.__traceback__)) if error else ""
        report = pipeline.finish(error, traceback_text=tb, explain_empty=error is None and not never)
        if never:
            # the user wrote no torch.compile(): say what -f did, not what torch.compile() did
            report = _outcome.without(report, "nothing_compiled", "never_ran")
            self.notices.append(
                f"-f compiled {', '.join(never)} but the cell never called "
                f"{'it' if len(never) == 1 else 'them'}: Inductor runs at the first call, so call "
                f"{never[0]}(...) in the cell to see its kernels"
            )
        elif not report.compiles and error is None and not report.compile_calls:
            self.notices.append(
                "call a torch.compile()d function or module in the cell, or let the magic "
                "compile one for you with -f NAME"
            )
        return report

    def _queue_profiles(self, pipeline) -> None:
        """--profile: each -f function runs again on its first call's inputs under the PyTorch profiler."""
        for name in self.names:
            call = self.compiler.first_calls.get(name)
            if call is None or call[1]:
                self.notices.append(
                    f"--profile: {name} was not called with positional arguments only in the "
                    f"cell, so it was not profiled"
                )
                continue
            pipeline.time_later(self.compiler.compiled_here[name], call[0], backward=self.args.backward)

    def _show(self, report, how_to_save: str) -> None:
        baseline = self.plan.baseline
        view = (
            _widget_or_text(report, view=self.args.view, how_to_save=how_to_save)
            if baseline is None
            else _diff_view(baseline, report)
        )
        lines = [message_of(d) for d in report.diagnostics] + self.notices
        show_cell_result(self.shell, self.progress, view, lines, report)


def _register(
    ns: dict, report, before: dict, compiled_here: dict, args: argparse.Namespace, how_to_save: Optional[str] = None
) -> None:
    """Remember the report of the compiled wrappers made in this cell, and of older ones that ran in it
    (``how_to_save``: what their widget's text form says, ``cell_display.save_hint``)."""
    for key, value in list(ns.items()):
        if not _is_compiled_safe(value):
            continue
        cid = _compile_id_for(report, value)
        if key in compiled_here or before.get(key) != id(value) or cid is not None:
            _REGISTRY[value] = _Entry(report, cid, args.view, how_to_save)
    if args.name:
        ns[args.name] = report


def _write_files(report, args: argparse.Namespace, baseline=None) -> list[str]:
    """--json / --export: one notice each; a file that cannot be written is a line, never a traceback. --export
    writes the page the cell shows: with --compare (``baseline``), the comparison of the two (it wrote the cell's
    report alone, a new user's trial, nu19 D3); --json the cell's report, which ``load()`` reads back."""
    from ..report.io import check_writable, describe_os_error

    notices = []
    page = report.save_html if baseline is None else (lambda path: baseline.diff(report).save_html(path))
    for option, path, save in (
        ("--json", args.json_path, report.save_json),
        ("--export", args.export, page),
    ):
        if not path:
            continue
        why = check_writable(path)
        if why is None:
            try:
                notices.append(f"wrote {save(path)}")
                continue
            except OSError as e:
                why = describe_os_error(e)
        notices.append(f"error: {option} {path}: cannot write it: {why}")
    return notices
