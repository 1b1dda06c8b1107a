"""What became of a lensed run (a script, a notebook cell), said on the report itself.

The run pipeline (``capturing/pipeline.py``) adds these diagnostics for ``inspect``, the CLI and the
magic, so the page shows them in its diagnostics banner, not only the terminal: ``user_code_raised`` (with the exception and its traceback as
``detail``), ``interrupted`` (Ctrl-C) and ``nothing_compiled`` (with the reason: never called,
another backend, torch gave up, or the user's code raised first). Each function returns a new report
(``dataclasses.replace``); a report is never changed in place.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from .rules import breaks_text, frames_met

#: Codes of the capture's diagnostics that mean torch gave up on a frame: why a report holds no compile.
GAVE_UP = ("recompile_limit", "eager_fallback", "compile_error", "compile_raised", "compile_unsupported")


def code_of(d: Any) -> Optional[str]:
    """The ``code`` of a diagnostic (a ``Diagnostic``, its plain dict, or a version-1 string: ``None``)."""
    if isinstance(d, dict):
        return d.get("code")
    return getattr(d, "code", None)


def message_of(d: Any) -> str:
    if isinstance(d, str):
        return d
    if isinstance(d, dict):
        return str(d.get("message", ""))
    return str(getattr(d, "message", d))


def add(report, code: str, message: str, detail: str = ""):
    """``report`` with one more diagnostic (the same one twice is kept once); a new report, never a change
    to the old one."""
    from .model import Diagnostic

    if any(code_of(d) == code and message_of(d) == message for d in report.diagnostics):
        return report
    return dataclasses.replace(
        report, diagnostics=[*report.diagnostics, Diagnostic(code=code, message=message, detail=detail)]
    )


def without(report, *codes: str):
    """``report`` without its diagnostics of ``codes`` (chosen by code, never by text)."""
    keep = [d for d in report.diagnostics if code_of(d) not in codes]
    return report if len(keep) == len(report.diagnostics) else dataclasses.replace(report, diagnostics=keep)


def user_raised(report, exc: BaseException, traceback_text: str, who: str = "the script"):
    """``report`` with ``user_code_raised``: the user's code raised ``exc``."""
    message = (
        f"{who} raised {type(exc).__name__}: {exc}; the report holds what compiled before that"
        if report.compiles
        else f"{who} raised {type(exc).__name__}: {exc} before anything compiled"
    )
    return add(report, "user_code_raised", message, traceback_text[-4000:])


def why_nothing_compiled(report, error: Optional[BaseException] = None, who: str = "the script") -> str:
    """Why a report holds no compile, in the user's terms (never the circular "nothing compiled")."""
    if error is not None:
        return f"{who} raised {type(error).__name__} before anything compiled"
    failed = [d for d in report.diagnostics if code_of(d) == "build_failed"]
    if failed:  # with no compile in the report: the report itself failed, not the compile (a bug of ours)
        return (
            f"{message_of(failed[0])}; whatever Inductor compiled is not in this report (a bug of inductor_lens: "
            "the diagnostic's detail holds the traceback)"
        )
    gave_up = [d for d in report.diagnostics if code_of(d) in GAVE_UP]
    if gave_up:
        return "torch gave up compiling: " + message_of(gave_up[0])
    kept = [d for d in report.diagnostics if code_of(d) == "no_reset"]
    if kept:  # dynamo kept what it had compiled: a call that found one of those compiles compiled nothing
        return (
            f"no call in {who} needed a new compile: dynamo kept its state (no reset), and a call of a function "
            f"compiled before (the diagnostic names them) that finds its compile compiles nothing (or {who} called "
            "no compiled function); without --no-reset (reset=False) dynamo is reset and they compile again"
        )
    calls = list(report.compile_calls)
    if not calls:
        return f"{who} never called torch.compile(), so nothing was handed to Inductor"
    others = [c for c in calls if c.backend != "inductor"]
    if others and len(others) == len(calls):
        c = others[0]
        return (
            f"torch.compile({c.target}) used backend {c.backend!r}, which does not use Inductor: "
            f"leave out backend= (Inductor is the default) to see kernels"
        )
    names = ", ".join(dict.fromkeys(c.target for c in calls if c.backend == "inductor"))
    if report.graph_breaks:
        return (
            f"dynamo traced {names} but handed Inductor no graph (every frame broke or fell back to eager; "
            f"{breaks_text(len(report.graph_breaks), map(code_of, report.diagnostics), frames_met(report.graph_breaks))})"
        )
    return (
        f"torch.compile() wrapped {names} but the compiled function was never called: torch.compile() only "
        f"wraps; dynamo and Inductor run at the first call"
    )


def nothing_compiled(report, error: Optional[BaseException] = None, who: str = "the script"):
    """``report`` with ``nothing_compiled`` and its reason (in place of the capture's own, which cannot say
    who the user's code was). Where the capture said the compiled function never ran (``never_ran``, with what to do
    about a ``.generate()``), that says it: a second line said the same again."""
    if error is None and any(code_of(d) == "never_ran" for d in report.diagnostics):
        return without(report, "nothing_compiled")
    reason = why_nothing_compiled(report, error, who)
    return add(without(report, "nothing_compiled"), "nothing_compiled", f"nothing compiled: {reason}")
