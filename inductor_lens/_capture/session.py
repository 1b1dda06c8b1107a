"""The public capture API: ``capture()`` and ``inspect()``."""

from __future__ import annotations

import contextlib
import traceback
from typing import Any, Callable, Optional

from ..model import Diagnostic, Report

__all__ = ["capture", "inspect", "profile", "CaptureError"]

#: Diagnostic codes that make a strict capture raise: the capture itself failed somewhere.
STRICT_CODES = frozenset({"hook_missing", "hook_failed", "build_failed"})


class CaptureError(RuntimeError):
    """A strict capture (``capture(strict=True)``) could not record everything."""


class capture:
    """Record every Inductor compile that the code inside the ``with`` block triggers.

    Parameters
    ----------
    reset : bool, default True
        Call ``torch._dynamo.reset()`` on entry, so that functions compiled before the block
        compile again inside it (a capture that finds everything already compiled sees nothing).
        With ``reset=False`` only new compiles are recorded.
    strict : bool, default False
        Raise :class:`CaptureError` on exit if any part of the capture failed (the report's
        ``diagnostics``). Tests use it; users normally want the partial report instead.
    title : str
        A name shown in the widget and the exported page.
    on_event : callable, optional
        Called with short progress strings (phase names, kernels built) while compiling.

    While the block runs, Inductor's FX graph and AOT autograd caches are disabled (a cache hit
    skips fusion and codegen); every patched function, config value and log handler is
    restored on exit, also when the block raises. A failure inside the capture itself never
    breaks the compile: it becomes a line in ``report.diagnostics``.

    Examples
    --------
    >>> with inductor_lens.capture() as cap:
    ...     torch.compile(f)(x)
    >>> cap.report.compiles[0].kernels[0].name
    'cpp_fused_add_cos_mul_pow_sin_0'
    """

    def __init__(self, *, reset: bool = True, strict: bool = False, title: str = "",
                 on_event: Optional[Callable[[str], None]] = None):
        self.reset = reset
        self.strict = strict
        self.title = title
        self.on_event = on_event
        self.report: Optional[Report] = None
        self.error: Optional[BaseException] = None
        self._stack: Optional[contextlib.ExitStack] = None
        self._raw = None

    def __enter__(self) -> "capture":
        if self._stack is not None:
            raise CaptureError("this capture is already active: use a new inductor_lens.capture() for each block")
        from .adapter import Hooks, Raw, now_us

        self.report = None
        self._raw = Raw(t0_us=now_us())
        stack = contextlib.ExitStack()
        try:
            Hooks(self._raw, reset_dynamo=self.reset, on_event=self.on_event).install(stack)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        stack, self._stack = self._stack, None
        try:
            if stack is not None:
                stack.close()  # restore torch first, whatever happens next
        finally:
            self.report = self._build(exc)
        if self.strict:
            problems = [d.message for d in self.report.diagnostics if d.code in STRICT_CODES]
            if problems and exc_type is None:
                raise CaptureError("the capture was incomplete:\n" + "\n".join(problems))
        return False  # never swallow the user's exception

    def _build(self, exc: Optional[BaseException]) -> Report:
        from .adapter import torch_version
        from .build import build_report

        raw = self._raw
        try:
            report = build_report(raw, str(torch_version()), title=self.title)
        except Exception as e:  # the report builder must not lose the user's result either
            report = Report(torch_version=str(torch_version()), device=raw.device, title=self.title,
                            diagnostics=[Diagnostic(*d) for d in raw.diagnostics] + [Diagnostic(
                                "build_failed", f"the report could not be built ({type(e).__name__}: {e})",
                                "".join(traceback.format_exception(type(e), e, e.__traceback__))[-2000:])])
        if exc is not None:
            self.error = exc
            report.diagnostics.append(Diagnostic(
                "user_code_raised", f"the captured code raised {type(exc).__name__}: {exc}; the report holds what "
                "compiled before that"))
        return report


def inspect(fn: Callable, *args: Any, backward: bool = False, profile: bool = False, title: str = "",
            **compile_kwargs: Any) -> Report:
    """Compile ``fn`` with Inductor, run it once on ``args``, and return what Inductor did.

    Parameters
    ----------
    fn : callable or torch.nn.Module
        What to compile (it is not modified: a fresh ``torch.compile`` wrapper is used).
    *args
        Inputs for one call.
    backward : bool
        Also run ``.sum().backward()`` on the output, so the backward graph compiles too.
    profile : bool
        Afterwards, run the compiled function a few times under the PyTorch profiler and
        attribute the measured time to each kernel (``Kernel.profile``).
    **compile_kwargs
        Passed to ``torch.compile`` (``mode``, ``dynamic``, ``options``, ``fullgraph``).

    Examples
    --------
    >>> report = inductor_lens.inspect(lambda x: torch.sin(x) ** 2 + torch.cos(x) ** 2, torch.randn(8))
    >>> [k.name for k in report.kernels]
    ['cpp_fused_add_cos_pow_sin_0']
    """
    import torch

    backend = compile_kwargs.pop("backend", "inductor")
    if backend != "inductor":
        raise ValueError(f"inspect() shows what Inductor does, so the backend must be 'inductor', not {backend!r}")
    if not callable(fn):
        raise TypeError(f"inspect() needs a function or nn.Module to compile, not {type(fn).__name__}")
    name = title or getattr(fn, "__qualname__", None) or type(fn).__name__
    from .adapter import kernel_profiling

    # C++ kernels are only visible to the profiler when compiled with kernel profiling on
    options = kernel_profiling() if profile else contextlib.nullcontext()
    with options, capture(title=name) as cap:
        compiled = torch.compile(fn, backend="inductor", **compile_kwargs)
        out = compiled(*args)
        if backward:
            _backward(out)
    report = cap.report
    if profile:
        report = _profile(report, compiled, *args, backward=backward)
    return report


def profile(report: Report, compiled: Callable, *args: Any, backward: bool = False) -> Report:
    """Run ``compiled(*args)`` (and its backward) a few times under the PyTorch profiler and return a copy
    of ``report`` whose kernels carry measured time (``Kernel.profile``).

    ``compiled`` must be the compiled function or module that produced ``report``. C++ kernels are only
    visible to the profiler when they were compiled with ``torch._inductor.config.cpp.enable_kernel_profile``
    on (``inspect(..., profile=True)`` and the magic's ``--profile`` do that); Triton and extern kernels
    always are.
    """
    from .profile import profile_kernels

    return profile_kernels(report, compiled, args, backward=backward)


def _backward(out: Any) -> None:
    import torch

    tensors = [t for t in (out if isinstance(out, (tuple, list)) else [out])
               if isinstance(t, torch.Tensor) and t.requires_grad]
    if not tensors:
        raise ValueError("backward=True needs an output that requires grad (a parameter or an input with "
                         "requires_grad=True must feed it)")
    sum(t.sum() for t in tensors).backward()


_profile = profile  # inspect() has a parameter named `profile`
