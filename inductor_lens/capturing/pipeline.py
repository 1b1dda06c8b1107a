"""One run through the lens, whoever asks for it: options -> capture -> (backward) -> (profile) -> outcome.

``inspect()``, the ``%%inductor_lens`` magic, ``inductor-lens run`` and ``inductor-lens demo`` all run their
user code inside one :class:`Run`; they differ only in what the code is (a function call, a cell, a script,
the built-in example) and in how they show the result. The stages, in order:

1. **capture**: :class:`~inductor_lens.capture` around the user's code. With ``profile`` on, Inductor
   compiles C++ kernels with kernel profiling (:func:`kernel_profiling`, the one place that switches it
   on), so the PyTorch profiler sees them; with ``profile="script"`` the whole run is also under the
   profiler (every call of a compiled graph after its first is a run).
2. **backward** (:meth:`Run.backward`, inside the capture): the backward graph compiles lazily there.
3. **profile** (:meth:`Run.time_later`, run by :meth:`Run.finish` after the capture): each recorded
   call runs again a few times under the profiler (:func:`~inductor_lens.time_kernels`). Skipped when the
   user's code raised.
4. **outcome** (:meth:`Run.finish`): what became of the run, as diagnostics on the report
   (:mod:`inductor_lens.report.outcome`): the user's code raised, Ctrl-C, why nothing compiled.

The report is never changed in place: every stage returns a new one.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Optional

from ..report import outcome as _outcome
from ..report.model import Report
from .session import capture, time_kernels

__all__ = ["Run", "inspect", "kernel_profiling", "PROFILE_MODES"]

#: ``"calls"``: re-run recorded calls under the profiler after the capture; ``"script"``: the whole run under it.
PROFILE_MODES = (None, "calls", "script")


def kernel_profiling() -> Any:
    """A context in which Inductor compiles C++ kernels with profiling on (the PyTorch profiler sees each
    as an event; Triton and extern kernels always are). The only place that sets
    ``torch._inductor.config.cpp.enable_kernel_profile``."""
    import torch._inductor.config as inductor_config

    return inductor_config.patch({"cpp.enable_kernel_profile": True})


class _Call:
    __slots__ = ("compiled", "args", "kwargs", "backward", "no_grad")

    def __init__(self, compiled: Callable, args: tuple, kwargs: dict, backward: bool, no_grad: bool):
        self.compiled, self.args, self.kwargs, self.backward, self.no_grad = compiled, args, kwargs, backward, no_grad


class Run:
    """One run of user code under the lens (see the module docstring).

    >>> run = Run(title="f", profile="calls")
    >>> with run:
    ...     out = compiled(x)
    ...     run.backward(out)
    >>> run.time_later(compiled, (x,), backward=True)
    >>> report = run.finish()

    Parameters
    ----------
    title : str
        The report's title.
    on_event : callable, optional
        Progress strings while Inductor compiles (``capture(on_event=...)``).
    profile : None, "calls" or "script"
        No profiling; re-run the calls given to :meth:`time_later`; or the whole run under the profiler.
    who : str
        The user's code in the outcome's messages: ``the script``, ``the cell``, ``the demo``.
    ir : bool
        Keep each Triton kernel's IR stages and resources (``capture(ir=True)``).
    reset : bool
        Reset dynamo at the capture's start (``capture(reset=...)``); the report says what that did to the
        functions compiled before (diagnostic ``dynamo_reset`` or ``no_reset``).
    """

    def __init__(
        self,
        *,
        title: str = "",
        on_event: Optional[Callable[[str], None]] = None,
        profile: Optional[str] = None,
        who: str = "the script",
        ir: bool = False,
        reset: bool = True,
    ):
        if profile not in PROFILE_MODES:
            raise ValueError(f"profile must be one of {list(PROFILE_MODES)}, not {profile!r}")
        self.title, self.on_event, self.profile, self.who, self.ir = title, on_event, profile, who, ir
        self.reset = reset
        self.cap = None
        self._stack: Optional[contextlib.ExitStack] = None
        self._apply_script_profile: Optional[Callable[[Report], Report]] = None
        self._calls: list[_Call] = []
        self._notes: list[tuple[str, str, str]] = []

    # -- 1. capture ------------------------------------------------------------------------------
    def __enter__(self) -> "Run":
        stack = contextlib.ExitStack()
        try:
            if self.profile is not None:
                stack.enter_context(kernel_profiling())
            if self.profile == "script":
                from .kernel_timing import profiling_script

                self._apply_script_profile = stack.enter_context(profiling_script())
            self.cap = stack.enter_context(
                capture(title=self.title, on_event=self.on_event, ir=self.ir, reset=self.reset)
            )
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.__exit__(exc_type, exc, tb)
        return False  # never swallow the user's exception

    @property
    def report(self) -> Optional[Report]:
        """The captured report (``None`` until the capture ended)."""
        return self.cap.report if self.cap is not None else None

    def raised(self, exc: BaseException) -> None:
        """The user's code raised ``exc`` inside the run, and the caller caught it (:meth:`capture.note_raised`)."""
        if self.cap is not None:
            self.cap.note_raised(exc)

    # -- 2. backward -----------------------------------------------------------------------------
    def backward(self, out: Any) -> Optional[Exception]:
        """Run the backward pass of ``out`` (inside the capture, so the backward graph is recorded);
        returns the error it raised, if any (the caller words it: :meth:`note`)."""
        from .outputs import backward as run_backward

        try:
            run_backward(out)
        except Exception as e:  # the forward report is still worth having
            return e
        return None

    def note(self, code: str, message: str, detail: str = "") -> None:
        """A diagnostic that :meth:`finish` adds to the report."""
        self._notes.append((code, message, detail))

    # -- 3. profile ------------------------------------------------------------------------------
    def time_later(
        self,
        compiled: Callable,
        args: tuple,
        kwargs: Optional[dict] = None,
        *,
        backward: bool = False,
        no_grad: bool = False,
    ) -> None:
        """After the capture, run ``compiled(*args, **kwargs)`` (and its backward) under the profiler and
        attribute the time to the report's kernels. Only with ``profile="calls"``."""
        if self.profile != "calls":
            raise ValueError("Run.time_later() needs Run(profile='calls')")
        self._calls.append(_Call(compiled, tuple(args), dict(kwargs or {}), backward, no_grad))

    def _profiled(self, report: Report) -> Report:
        if self._apply_script_profile is not None:
            return self._apply_script_profile(report) if report.compiles else report
        for c in self._calls:
            call = c.compiled if not c.kwargs else (lambda *a, _c=c: _c.compiled(*a, **_c.kwargs))
            with _no_grad() if c.no_grad else contextlib.nullcontext():
                report = time_kernels(report, call, *c.args, backward=c.backward)
        return report

    # -- 4. outcome ------------------------------------------------------------------------------
    def finish(
        self,
        error: Optional[BaseException] = None,
        *,
        traceback_text: str = "",
        interrupted: bool = False,
        explain_empty: bool = True,
    ) -> Report:
        """The run's report: the capture's, with the notes, the profile (unless ``error``) and the outcome.

        ``error``: what the user's code raised (its ``traceback_text`` becomes the diagnostic's detail);
        ``interrupted``: stopped by Ctrl-C; ``explain_empty``: say why nothing compiled, when nothing did.
        """
        report = self.report
        if report is None:
            raise RuntimeError("Run.finish() before the run's capture ended")
        for code, message, detail in self._notes:
            report = _outcome.add(report, code, message, detail)
        if error is None and not interrupted:
            report = self._profiled(report)
        elif self._apply_script_profile is not None:  # the script's profile covers what ran before it stopped
            report = self._profiled(report)
        if error is not None:
            report = _outcome.user_raised(report, error, traceback_text, who=self.who)
        if interrupted:
            report = _outcome.add(
                report, "interrupted", "interrupted by Ctrl-C (SIGINT): the report holds what compiled before that"
            )
        if explain_empty and not report.compiles:
            report = _outcome.nothing_compiled(report, error, who=self.who)
        return report


def _no_grad():
    import torch

    return torch.no_grad()


#: torch.compile's own keyword arguments: given to inspect() as keywords they would be ambiguous
COMPILE_OPTIONS = ("mode", "dynamic", "fullgraph", "options", "backend", "disable")


def inspect(
    fn: Callable,
    *args: Any,
    backward: bool = False,
    profile: bool = False,
    ir: bool = False,
    title: str = "",
    compile_options: Optional[dict] = None,
    kwargs: Optional[dict] = None,
    **model_kwargs: Any,
) -> Report:
    """Compile ``fn`` with Inductor, run it once on ``args`` (and keyword arguments), and return what
    Inductor did.

    Parameters
    ----------
    fn : callable or torch.nn.Module
        What to compile (it is not modified: a fresh ``torch.compile`` wrapper is used). Something already
        ``torch.compile``'d (a module's ``OptimizedModule``, a compiled function) is called as it is, with the
        options it was compiled with (``dynamic=True``...), and ``compile_options`` is refused (the capture resets
        dynamo, so it compiles afresh; later calls of it run what compiled here).
    *args, **model_kwargs
        The inputs of one call: ``inspect(model, ids, labels=ids)`` calls ``model(ids, labels=ids)``.
    backward : bool
        Also run a backward pass, so the backward graph compiles too. What is differentiated: the output's
        ``loss`` (attribute or key, as transformers' ``ModelOutput`` has) when there is one, else the sum of
        every tensor that requires grad inside the output (tensors, tuples, lists, dicts, dataclasses). If the
        backward fails, the forward report is kept with a ``backward_failed`` diagnostic. It leaves no gradient
        behind: the ``.grad`` of every parameter and input it reaches is put back as it was. The forward is the
        model's own call, with its effects (a BatchNorm in training mode updates its running statistics).
    profile : bool
        Afterwards, run the compiled function a few times under the PyTorch profiler and
        attribute the measured time to each kernel (``Kernel.profile``).
    ir : bool
        Keep each Triton kernel's IR stages and resources (``Kernel.ir``; see :class:`capture`).
    compile_options : dict, optional
        Passed to ``torch.compile``: ``{"mode": "max-autotune", "dynamic": True, "options": {...}}``.
    kwargs : dict, optional
        More keyword arguments for ``fn``, for names that ``inspect`` itself uses (``backward``, ``title``...).

    Examples
    --------
    >>> report = inductor_lens.inspect(lambda x: torch.sin(x) ** 2 + torch.cos(x) ** 2, torch.randn(8))
    >>> [k.name for k in report.kernels]
    ['cpp_fused_add_cos_pow_sin_0']
    >>> report = inductor_lens.inspect(model, x, compile_options={"mode": "max-autotune-no-cudagraphs"})
    """
    import torch

    if not callable(fn):
        raise TypeError(f"inspect() needs a function or nn.Module to compile, not {type(fn).__name__}")
    _refuse_compile_options_as_model_kwargs(fn, model_kwargs)
    call_kwargs = {**model_kwargs, **(kwargs or {})}
    options_ = dict(compile_options or {})
    backend = options_.pop("backend", "inductor")
    if backend != "inductor":
        raise ValueError(f"inspect() shows what Inductor does, so the backend must be 'inductor', not {backend!r}")
    shown = getattr(fn, "_orig_mod", fn)  # torch.compile(model) is named as the model, not OptimizedModule
    name = title or getattr(shown, "__qualname__", None) or type(shown).__name__
    run = Run(title=name, profile="calls" if profile else None, who="the function", ir=ir)
    backward_error: Optional[Exception] = None
    given_compiled = _already_compiled(fn)
    if given_compiled and compile_options:
        raise TypeError(
            "inspect(): fn is already torch.compile'd, with its own options, and inspect() calls it as it is: "
            "leave out compile_options, or pass the original to compile it with them (a module's ._orig_mod)"
        )
    with run:
        compiled = fn if given_compiled else torch.compile(fn, backend="inductor", **options_)
        out = compiled(*args, **call_kwargs)
        if backward:
            backward_error = run.backward(out)
    if backward_error is not None:
        run.note(
            "backward_failed",
            f"backward=True: {type(backward_error).__name__}: {backward_error}; the report holds "
            "the forward compile only",
        )
    if profile:
        run.time_later(compiled, args, call_kwargs, backward=backward and backward_error is None)
    report = run.finish(explain_empty=False)
    # what the report says of dynamo's state before it (dynamo_reset, no_reset) is no reason for an empty report
    said = {_outcome.code_of(d) for d in report.diagnostics} - {"nothing_compiled", "dynamo_reset", "no_reset"}
    if given_compiled and not report.compiles and not said:  # called as it is, it handed Inductor nothing
        report = _outcome.add(
            _outcome.without(report, "nothing_compiled"),
            "nothing_compiled",
            "nothing compiled: fn was already torch.compile'd and inspect() called it as it is, which handed Inductor "
            "no graph: it may use another backend (torch.compile(..., backend=...)); pass the uncompiled function or "
            "module (torch.compile's ._orig_mod) to compile it with Inductor",
        )
    return report


def _already_compiled(fn: Any) -> bool:
    """Whether ``fn`` is compiled by ``torch.compile``: a module's ``OptimizedModule`` (it keeps ``_orig_mod``), a
    module after ``Module.compile()`` (it keeps ``_compiled_call_impl``), or a compiled function (dynamo's wrapper
    keeps ``_torchdynamo_orig_callable``; ``torch.compiler.disable``'s keeps it too, marked ``_torchdynamo_disable``,
    and is not compiled)."""
    try:
        if type(fn).__name__ == "OptimizedModule" and hasattr(fn, "_orig_mod"):
            return True
        if getattr(fn, "_compiled_call_impl", None) is not None:
            return True
        wrapped = getattr(fn, "_torchdynamo_orig_callable", None) is not None
        return wrapped and not getattr(fn, "_torchdynamo_disable", False)
    except Exception:  # an object whose attributes raise: not one of torch's wrappers
        return False


def _refuse_compile_options_as_model_kwargs(fn: Callable, model_kwargs: dict) -> None:
    """``inspect(f, x, mode="max-autotune")`` (the 0.1 spelling) is refused unless ``f`` takes ``mode``."""
    import inspect as pyinspect

    clashing = [k for k in model_kwargs if k in COMPILE_OPTIONS]
    if not clashing:
        return
    target = getattr(fn, "forward", fn)
    try:
        params = pyinspect.signature(target).parameters
        accepts = (
            {k for k in clashing if k in params}
            if not any(p.kind is p.VAR_KEYWORD for p in params.values())
            else set(clashing)
        )
    except (TypeError, ValueError):
        accepts = set()
    refused = [k for k in clashing if k not in accepts]
    if refused:
        given = ", ".join(f"{k!r}: {model_kwargs[k]!r}" for k in refused)
        raise TypeError(
            f"inspect(): {', '.join(refused)} is a torch.compile option, and keyword arguments of "
            f"inspect() go to the model: pass compile_options={{{given}}}"
        )
