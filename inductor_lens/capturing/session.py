"""The public capture API: ``capture()`` and ``time_kernels()`` (``inspect()`` is the run pipeline's:
``capturing/pipeline.py``)."""

from __future__ import annotations

import contextlib
import dataclasses
import traceback
from typing import Any, Callable, Optional

from ..report.model import Diagnostic, Report

__all__ = ["capture", "time_kernels", "profile", "CaptureError"]

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
        With ``reset=False`` only new compiles are recorded. A capture started while another is active
        never resets (that would make what the other compiled compile again under it): it records only
        new compiles and says so (diagnostic ``reset_skipped``).
    strict : bool, default False
        Raise :class:`CaptureError` on exit if any part of the capture failed (the report's
        ``diagnostics``). Tests use it; users normally want the partial report instead.
    title : str
        A name shown in the widget and the exported page.
    on_event : callable, optional
        Called with short progress strings while compiling: ``"clock: <seconds>"`` once at the start (how long the
        capture has run, the clock the report's times count from), then ``"phase: <torch's phase>"`` and
        ``"kernel: <name> (<compile>)"``, once per kernel of the report, as the report names it and its compile
        (``extern_kernels.addmm[buf0] (0/0 inference)``: an extern call by the buffer it writes).
    ir : bool, default False
        Also keep each Triton kernel's IR stages (TTIR, TTGIR, LLIR, PTX; SASS where ``cuobjdump`` is on the
        PATH) and its registers, shared memory and spills (``Kernel.ir``). They are large: off by default.

    While the block runs, Inductor's FX graph and AOT autograd caches are disabled (a cache hit
    skips fusion and codegen); every patched function, config value and log handler is
    restored on exit, also when the block raises. A failure inside the capture itself never
    breaks the compile: it becomes a :class:`~inductor_lens.model.Diagnostic` in ``report.diagnostics``.

    The capture never changes what torch compiles: no guard, no specialization, same results (sizes
    are read as symbols, never with ``int()``).

    Captures may overlap (nested, or ``a`` entered before ``b`` and exited first) and may run on
    several threads. The hooks are process-wide and reference-counted: the first active capture
    installs them, the last one to exit removes them (each patched attribute only if it is still
    ours). A compile is recorded by every capture active on the thread that compiles it, so nested
    captures both see it and a capture on another thread does not; a compile on a thread where no
    capture is active (a thread pool's worker, the autograd engine's thread) is recorded by every
    active capture. ``reset=True`` resets dynamo for the whole process, and only where no other capture is
    active.

    Examples
    --------
    >>> with inductor_lens.capture() as cap:
    ...     torch.compile(f)(x)
    >>> cap.report.compiles[0].kernels[0].name
    'cpp_fused_add_cos_mul_pow_sin_0'
    """

    def __init__(
        self,
        *,
        reset: bool = True,
        strict: bool = False,
        title: str = "",
        on_event: Optional[Callable[[str], None]] = None,
        ir: bool = False,
    ):
        self.reset = reset
        self.ir = ir
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
        from .adapter import Hooks
        from .raw import Raw, now_us

        self.report = None
        self._raw = Raw(t0_us=now_us())
        stack = contextlib.ExitStack()
        try:
            Hooks(self._raw, reset_dynamo=self.reset, on_event=self.on_event, ir=self.ir).install(stack)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def note_raised(self, exc: BaseException) -> None:
        """The captured code raised ``exc`` and the caller caught it inside the block (a script's runner, a
        notebook cell): the report then tells a frame torch raised for (``fullgraph=True``) from one it ran
        eagerly, as it does for an exception that leaves the block."""
        if self._raw is not None:
            self._raw.raised = exc

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is not None:
            self.note_raised(exc)
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
            report = Report(
                torch_version=str(torch_version()),
                device=raw.device,
                title=self.title,
                diagnostics=[Diagnostic(*d) for d in raw.diagnostics]
                + [
                    Diagnostic(
                        "build_failed",
                        f"the report could not be built ({type(e).__name__}: {e})",
                        "".join(traceback.format_exception(type(e), e, e.__traceback__))[-2000:],
                    )
                ],
            )
        if exc is not None:
            self.error = exc
            report = dataclasses.replace(
                report,
                diagnostics=[
                    *report.diagnostics,
                    Diagnostic(
                        "user_code_raised",
                        f"the captured code raised {type(exc).__name__}: {exc}; the report holds what compiled "
                        "before that",
                    ),
                ],
            )
        return report


def time_kernels(report: Report, compiled: Callable, *args: Any, backward: bool = False) -> Report:
    """Run ``compiled(*args)`` (and its backward) a few times under the PyTorch profiler and return a copy
    of ``report`` whose kernels carry measured time (``Kernel.profile``).

    ``compiled`` must be the compiled function or module that produced ``report``. C++ kernels are only
    visible to the profiler when they were compiled with kernel profiling on
    (:func:`inductor_lens.capturing.pipeline.kernel_profiling`; ``inspect(..., profile=True)``, the magic's
    ``--profile`` and the CLI's do that); Triton and extern kernels always are.
    """
    from .kernel_timing import profile_kernels

    return profile_kernels(report, compiled, args, backward=backward)


def profile(report: Report, compiled: Callable, *args: Any, backward: bool = False) -> Report:
    """The 0.1 name of :func:`time_kernels` (deprecated: ``profile`` is also a parameter, a field and a
    module name)."""
    import warnings

    warnings.warn(
        "inductor_lens.profile() is now inductor_lens.time_kernels() (same arguments)", DeprecationWarning, stacklevel=2
    )
    return time_kernels(report, compiled, *args, backward=backward)
