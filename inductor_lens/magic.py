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

__all__ = ["load_ipython_extension", "unload_ipython_extension", "inductor_lens_magic", "report_for"]

MAGIC_NAME = "inductor_lens"
VIEWS = ("fusion", "fx", "timeline")
_HELPER = "__inductor_lens_compile__"  # bound in the user namespace only while a lens cell runs
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
        prog=f"%%{MAGIC_NAME}", add_help=True,
        description="Run the cell under inductor_lens.capture() and show what Inductor did: the fused kernels, "
                    "their source, and the line of your code and the path through torch that produced each.")
    p.add_argument("-f", "--function", metavar="NAME", action="append", default=[], dest="functions",
                   help="compile the function or nn.Module instance bound to NAME in this cell (or before it) "
                        "with torch.compile(backend='inductor'), so the cell can define a plain function and call "
                        "it. Repeatable. NAME stays bound to the compiled object after the cell.")
    p.add_argument("--mode", default=None,
                   help="torch.compile mode for -f functions (default, reduce-overhead, max-autotune, ...)")
    p.add_argument("--dynamic", action="store_true", default=None,
                   help="torch.compile(dynamic=True) for -f functions")
    p.add_argument("-O", "--option", metavar="KEY=VALUE", action="append", type=_key_value, default=[],
                   dest="options", help="an Inductor option for -f functions, e.g. -O max_autotune=True "
                                        "(repeatable; values are Python literals)")
    p.add_argument("--backward", action="store_true",
                   help="after the cell, run .sum().backward() on the first output of each -f function that "
                        "requires grad and whose backward did not compile in the cell (this adds to .grad)")
    p.add_argument("--profile", action="store_true",
                   help="after the cell, run each -f function again on its first call's inputs under the PyTorch "
                        "profiler (a few warm-up and timed runs) and show each kernel's measured time")
    p.add_argument("--export", metavar="PATH.html", default=None,
                   help="also write the report as one self-contained HTML page")
    p.add_argument("--json", metavar="PATH", default=None, dest="json_path",
                   help="also write the report as JSON (inductor_lens.load() reads it back)")
    p.add_argument("--name", metavar="VAR", default=None,
                   help="bind the report to the variable VAR in the notebook")
    p.add_argument("--compare", metavar="VAR", default=None,
                   help="show how this cell's report differs from the report bound earlier to VAR (by --name VAR): "
                        "the compare view instead of the lens")
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
    compile_opts = [o for o, v in (("--mode", args.mode), ("--dynamic", args.dynamic), ("-O", args.options),
                                   ("--backward", args.backward), ("--profile", args.profile)) if v]
    if compile_opts and not args.functions:
        raise UsageError(f"%%{MAGIC_NAME}: {', '.join(compile_opts)} apply to the functions the magic compiles: "
                         f"add -f NAME (or pass them to your own torch.compile call)")
    if args.mode and args.options:
        raise UsageError(f"%%{MAGIC_NAME}: torch.compile takes --mode or -O options, not both "
                         f"(put the mode's settings in -O instead)")
    if args.mode and args.profile:
        raise UsageError(f"%%{MAGIC_NAME}: --profile compiles with options={{'cpp.enable_kernel_profile': True}}, "
                         f"and torch.compile takes --mode or options, not both (put the mode's settings in -O)")
    return args


# -- the -f rewrite ----------------------------------------------------------------------------

def _bound_names(stmt: ast.stmt) -> set[str]:
    """Names a module-level statement binds in the global namespace."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    targets: list = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    names = set()
    for t in targets:
        for node in ast.walk(t):
            if isinstance(node, ast.Name):
                names.add(node.id)
    return names


class _CompileAfterBinding(ast.NodeTransformer):
    """After each module-level statement that binds one of ``names``, insert
    ``__inductor_lens_compile__("NAME")`` (with the statement's line number, so tracebacks stay right)."""

    _BLOCKS = ("body", "orelse", "finalbody")

    def __init__(self, names):
        self.names = tuple(names)
        self.bound: set[str] = set()

    def visit_Module(self, node: ast.Module) -> ast.Module:
        node.body = self._rewrite(node.body)
        return node

    def _rewrite(self, body: list) -> list:
        out = []
        for stmt in body:
            # blocks at module level (if/for/while/with/try) still bind globals
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for attr in self._BLOCKS:
                    block = getattr(stmt, attr, None)
                    if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                        setattr(stmt, attr, self._rewrite(block))
                for handler in getattr(stmt, "handlers", []) or []:
                    handler.body = self._rewrite(handler.body)
            out.append(stmt)
            for name in sorted(_bound_names(stmt) & set(self.names)):
                self.bound.add(name)
                call = ast.Expr(ast.Call(ast.Name(_HELPER, ast.Load()), [ast.Constant(name)], []))
                out.append(ast.fix_missing_locations(ast.copy_location(call, stmt)))
        return out


# -- compiled objects ----------------------------------------------------------------------------

def _original(obj):
    """The plain function/module under a torch.compile wrapper (so a re-run compiles it afresh)."""
    for _ in range(8):
        orig = getattr(obj, "_torchdynamo_orig_callable", None)
        if orig is None and _is_optimized_module(obj):
            orig = obj._orig_mod
        if orig is None:
            return obj
        obj = orig
    return obj


def _is_optimized_module(obj) -> bool:
    return type(obj).__name__ == "OptimizedModule" and hasattr(obj, "_orig_mod")


def _is_compiled(obj) -> bool:
    if isinstance(obj, types.FunctionType):
        return getattr(obj, "_torchdynamo_orig_callable", None) is not None
    return _is_optimized_module(obj)


def _frame_names(obj) -> set[str]:
    orig = _original(obj)
    names = {getattr(orig, "__name__", None), getattr(orig, "__qualname__", None)}
    if not isinstance(orig, types.FunctionType):
        names |= {"forward", "_call_impl", type(orig).__name__}
    return {n for n in names if n}


def _compile_id_for(report, obj) -> Optional[str]:
    names = _frame_names(obj)
    for c in report.compiles:
        if c.frame in names or c.frame.split(".")[-1] in names:
            return c.id
    return None


# -- progress ------------------------------------------------------------------------------------

class _Progress:
    """The live line under the cell: created at the first compile event, updated at most 4x/s."""

    def __init__(self):
        self.handle = None
        self.phase = ""
        self.kernels: list[str] = []
        self.t0 = time.monotonic()
        self.last = 0.0
        self.error: Optional[BaseException] = None
        self.error_tb = None
        self._lock = threading.Lock()

    def __call__(self, message: str) -> None:
        try:
            kind, _, text = message.partition(": ")
            with self._lock:
                if kind == "phase":
                    self.phase = text
                elif kind == "kernel":
                    self.kernels.append(text)
                now = time.monotonic()
                if self.handle is not None and now - self.last < _PROGRESS_INTERVAL_S and kind != "kernel":
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
        k = self.kernels
        s = f"inductor_lens: Inductor is compiling ({time.monotonic() - self.t0:.0f} s)"
        if self.phase:
            s += f"; phase: {self.phase}"
        s += f"; {len(k)} kernel(s) built"
        if k:
            s += ": " + ", ".join(k[-4:]) + (" ..." if len(k) > 4 else "")
        return s

    def html(self) -> str:
        return (f'<div class="inductor-lens-progress" data-role="lens-progress" '
                f'style="font-family:monospace;font-size:12px;opacity:.8">{html.escape(self.text())}</div>')


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

    from .model import Report
    if var not in ns:
        raise UsageError(f"%%{MAGIC_NAME}: --compare {var}: nothing is bound to {var!r} yet (run a cell with "
                         f"`%%{MAGIC_NAME} --name {var}` first, or `{var} = inductor_lens.load('report.json')`)")
    if not isinstance(ns[var], Report):
        raise UsageError(f"%%{MAGIC_NAME}: --compare {var}: {var!r} is a {type(ns[var]).__name__}, not an "
                         f"inductor_lens report (bind one with `%%{MAGIC_NAME} --name {var}`)")
    return ns[var]


def _diff_view(baseline, report):
    """The compare view of ``baseline`` (A) and this cell's ``report`` (B); text without widgets."""
    d = baseline.diff(report)
    try:
        return d.widget()
    except ImportError as e:
        return _Html(d.text() + f"\n(the interactive widget is unavailable: {e})", f"<pre>{html.escape(d.text())}</pre>")


def _notices(lines: list[str]) -> _Html:
    items = "".join(f"<li>{html.escape(s)}</li>" for s in lines)
    return _Html("\n".join(f"inductor_lens: {s}" for s in lines),
                 f'<div class="inductor-lens-notices" data-role="lens-notices">'
                 f'<b>inductor_lens</b><ul style="margin:2px 0">{items}</ul></div>')


def _widget_or_text(report, **kwargs):
    """The widget; without the widget machinery, the text summary and why."""
    try:
        return report.widget(**{k: v for k, v in kwargs.items() if v is not None})
    except ImportError as e:
        return _Html(report.summary() + f"\n(the interactive widget is unavailable: {e})",
                     f"<pre>{html.escape(report.summary())}</pre>"
                     f"<p>(the interactive widget is unavailable: {html.escape(str(e))})</p>")


# -- the magic -----------------------------------------------------------------------------------

class CellRaised(Exception):
    """The cell under ``%%inductor_lens`` raised; its traceback is shown above the lens.

    Raised by the magic after the widget is shown so that the cell counts as failed (``Run All``
    stops, nbclient reports it), rendered as one line instead of a second traceback.
    """

    def __init__(self, original: BaseException):
        super().__init__(f"the cell raised {type(original).__name__}: {original} (traceback above); "
                         f"the lens above shows what compiled before that")
        self.original = original

    def _render_traceback_(self):
        return [f"{type(self).__name__}: {self}"]


def inductor_lens_magic(line: str, cell: str) -> None:
    from IPython import get_ipython

    shell = get_ipython()
    try:
        args = _parse(line)
    except _HelpShown:
        return None
    return _run(shell, args, cell)


def _run(shell, args: argparse.Namespace, cell: str):
    from IPython.core.error import UsageError
    from IPython.display import display

    from ._capture.session import capture

    ns = shell.user_ns
    baseline = _compare_baseline(ns, args.compare)  # checked before the cell runs
    names = list(dict.fromkeys(args.functions))
    transformer = None
    defined_in_cell: set[str] = set()
    if names:
        detector = _CompileAfterBinding(names)
        try:
            detector.visit(ast.parse(shell.transform_cell(cell)))
        except SyntaxError:
            pass  # run_cell reports it, with IPython's own message
        defined_in_cell = detector.bound
        missing = [n for n in names if n not in defined_in_cell and n not in ns]
        if missing:
            raise UsageError(f"%%{MAGIC_NAME}: -f {missing[0]}: the cell does not define {missing[0]!r} and "
                             f"nothing is bound to it yet (define the function or module, e.g. "
                             f"`def {missing[0]}(x): ...` or `{missing[0]} = MyModule()`)")
        transformer = _CompileAfterBinding(names)  # fresh state for IPython's own pass

    compiled_here: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    recording = {"on": True}

    def compile_name(name: str) -> None:
        import torch

        obj = _original(ns[name])
        if isinstance(obj, type):
            raise TypeError(f"%%{MAGIC_NAME} -f {name}: {name} is a class; compile an instance instead "
                            f"(`model = {name}(...)` and -f model)")
        if not callable(obj):
            raise TypeError(f"%%{MAGIC_NAME} -f {name}: {name} is a {type(obj).__name__}, not a function "
                            f"or module")
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
            compiled = _record_first_call(compiled, name, calls, recording)
        ns[name] = compiled
        compiled_here[name] = compiled

    before = {k: id(v) for k, v in ns.items() if _is_compiled_safe(v)}
    title = args.title or (", ".join(names) if names else "%%inductor_lens cell")
    progress = _Progress()
    cap_kwargs: dict[str, Any] = {"title": title, "on_event": progress}
    notices: list[str] = []
    result = None
    ns[_HELPER] = compile_name
    if transformer is not None:
        shell.ast_transformers.append(transformer)
    try:
        with capture(**cap_kwargs) as cap:
            for name in names:
                if name not in defined_in_cell:  # defined in an earlier cell: compile it now
                    try:
                        compile_name(name)
                    except TypeError as e:
                        raise UsageError(str(e)) from None
            result = shell.run_cell(cell, store_history=False)
            recording["on"] = False
            if args.backward and (result.error_before_exec is None and result.error_in_exec is None):
                _run_backward(calls, notices)
    finally:
        recording["on"] = False
        profile_calls = {n: (compiled_here[n], a) for n, (a, k, _) in calls.items() if not k} if args.profile else {}
        called = set(calls)
        calls.clear()
        for handle in recording.get("handles", []):
            handle.remove()
        if transformer is not None and transformer in shell.ast_transformers:
            shell.ast_transformers.remove(transformer)
        if ns.get(_HELPER) is compile_name:
            del ns[_HELPER]

    report = cap.report
    error = None
    if result is not None:
        error = result.error_before_exec or result.error_in_exec
    if args.profile and error is None:
        report = _profile(report, names, profile_calls, args.backward, notices)
    if error is not None:
        report.diagnostics.append(f"the cell raised {type(error).__name__}: {error}; the report holds what "
                                  f"compiled before that")
    if not report.compiles and not any("torch.compile" in d for d in report.diagnostics) and error is None:
        notices.append("nothing was compiled in this cell: call a torch.compile()d function or module in it, "
                       "or let the magic compile one for you with -f NAME")
    never = [n for n in names if n not in called]
    diagnostics = list(report.diagnostics)
    if never and error is None:
        # the user wrote no torch.compile(): say what -f did, not that "torch.compile() was called"
        diagnostics = [d for d in diagnostics if not d.startswith("torch.compile() was called but")]
        notices.append(f"-f compiled {', '.join(never)} but the cell never called "
                       f"{'it' if len(never) == 1 else 'them'}: Inductor runs at the first call, so call "
                       f"{never[0]}(...) in the cell to see its kernels")
    notices = diagnostics + notices

    # register compiled wrappers (for display(f)): the ones made in this cell, and older ones that ran in it
    for key, value in list(ns.items()):
        if not _is_compiled_safe(value):
            continue
        cid = _compile_id_for(report, value)
        if key in compiled_here or before.get(key) != id(value) or cid is not None:
            _REGISTRY[value] = _Entry(report, cid, args.view)

    if args.name:
        ns[args.name] = report
    written = []
    try:
        if args.json_path:
            written.append(report.save_json(args.json_path))
        if args.export:
            written.append(report.save_html(args.export))
    except Exception:
        shell.showtraceback()
    notices += [f"wrote {p}" for p in written]

    view = _widget_or_text(report, view=args.view) if baseline is None else _diff_view(baseline, report)
    if progress.handle is not None:
        progress.handle.update(view)
    else:
        display(view)
    if notices:
        display(_notices(notices))
    if progress.error is not None:
        shell.showtraceback(progress.error_tb)
    if error is not None:
        raise CellRaised(error)
    return None


def _is_compiled_safe(value) -> bool:
    try:
        return _is_compiled(value)
    except Exception:
        return False


def _record_first_call(compiled, name, calls, recording):
    """For --backward/--profile: keep the first call's (args, kwargs, output) while the cell runs."""
    if _is_optimized_module(compiled):
        def hook(module, args, kwargs, output):
            if recording["on"] and name not in calls:
                calls[name] = (args, kwargs, output)
        recording.setdefault("handles", []).append(compiled.register_forward_hook(hook, with_kwargs=True))
        return compiled
    import functools

    @functools.wraps(compiled)
    def recorder(*a, **k):
        out = compiled(*a, **k)
        if recording["on"] and name not in calls:
            calls[name] = (a, k, out)
        return out
    return recorder


def _profile(report, names, profile_calls, backward, notices):
    """--profile: re-run each -f function on its first call's inputs under the PyTorch profiler."""
    from . import profile as profile_kernels

    for name in names:
        if name not in profile_calls:
            notices.append(f"--profile: {name} was not called with positional arguments only in the cell, so it "
                           f"was not profiled")
            continue
        compiled, call_args = profile_calls[name]
        report = profile_kernels(report, compiled, *call_args, backward=backward)
    return report


def _run_backward(calls: dict, notices: list) -> None:
    import torch

    for name, (_, _, out) in calls.items():
        tensors = [t for t in (out if isinstance(out, (tuple, list)) else [out])
                   if isinstance(t, torch.Tensor) and t.requires_grad and t.grad_fn is not None]
        if not tensors:
            notices.append(f"--backward: the output of {name} does not require grad, so there is no backward "
                           f"graph to compile (give it parameters or an input with requires_grad=True)")
            continue
        sum(t.sum() for t in tensors).backward()


# -- display(f) ----------------------------------------------------------------------------------

def _mimebundle(obj):
    entry = _lookup(obj)
    if entry is None:
        return None  # not ours: IPython goes on with its usual formatters
    view = _widget_or_text(entry.report, view=entry.view, compile_id=entry.compile_id)
    return view._repr_mimebundle_()


_FORMATTER_TYPES = [("builtins", "function"), ("torch._dynamo.eval_frame", "OptimizedModule")]
_saved: dict = {}


def load_ipython_extension(ipython) -> None:
    """Register ``%%inductor_lens`` and the ``display(f)`` formatter for compiled functions/modules."""
    ipython.register_magic_function(inductor_lens_magic, magic_kind="cell", magic_name=MAGIC_NAME)
    fmt = ipython.display_formatter.mimebundle_formatter
    key = id(ipython)
    if key not in _saved:
        saved = []
        saved.append(("type", types.FunctionType, fmt.for_type(types.FunctionType, _mimebundle)))
        saved.append(("name", ("torch._dynamo.eval_frame", "OptimizedModule"),
                      _pop_deferred_or_type(fmt, "torch._dynamo.eval_frame", "OptimizedModule")))
        fmt.for_type_by_name("torch._dynamo.eval_frame", "OptimizedModule", _mimebundle)
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
    "    model(x).sum().backward()\n\n"
    + _make_parser().format_help()
)
