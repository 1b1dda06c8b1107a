"""``inductor-lens``: capture a script, run the built-in demo, or render a saved report.

    inductor-lens run SCRIPT [ARGS...] -o report.html [--json report.json]
    inductor-lens demo [-o lens-demo.html] [--json lens-demo.json]
    inductor-lens show report.json -o report.html
    inductor-lens diff a.json b.json -o diff.html

Progress (Inductor's phases, the kernels it builds) goes to stderr while compiling; the last line
says where the file is. Errors exit non-zero with a one-line reason on stderr.

Exit codes: 0 ok; 1 the script raised (the report of what compiled before is still written) or
nothing was compiled; 2 usage errors (missing script, unreadable report, bad options).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys
import textwrap
import time
import traceback
from typing import Optional, Sequence

PROG = "inductor-lens"


class CLIError(Exception):
    """A one-line reason to stop, with an exit code."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


_QUIET_PHASES = {"gc", "compile_attempt_0", "insert_deferred_runtime_asserts", "additional_fake_tensor_prop",
                 "aot_collect_metadata", "PythonWrapperCodegen.generate", "async_compile.wait"}


class _StderrProgress:
    """``on_event`` for capture(): phase changes and kernels as they are built, one line each."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.last_phase = None
        self.kernels = 0
        self.t0 = time.monotonic()

    def __call__(self, message: str) -> None:
        if self.quiet:
            return
        kind, _, text = message.partition(": ")
        if kind == "phase":
            # Inductor's many small graph passes ("pass.post_grad_passes.*") would drown the big steps
            if text == self.last_phase or text.startswith("pass.") or text in _QUIET_PHASES:
                return
            self.last_phase = text
        elif kind == "kernel":
            self.kernels += 1
        _say(f"[{time.monotonic() - self.t0:5.1f}s] {message}")


# -- writing -----------------------------------------------------------------------------------

def _write(report, html_path: Optional[str], json_path: Optional[str]) -> list[str]:
    written = []
    for path, save in ((html_path, report.save_html), (json_path, report.save_json)):
        if path:
            try:
                written.append(os.path.abspath(save(path)))
            except OSError as e:
                raise CLIError(f"cannot write {path}: {e.strerror or e}") from None
    return written


def _where(written: list[str]) -> str:
    return " and ".join(written)


# -- run ---------------------------------------------------------------------------------------

def _split_run_args(tokens: Sequence[str]):
    """``run`` options may come before or after SCRIPT; after ``--`` everything is the script's."""
    opts = {"output": None, "json": None, "title": None, "quiet": False, "profile": False}
    script, script_args = None, []
    i = 0
    takes_value = {"-o": "output", "--output": "output", "--json": "json", "--title": "title"}
    while i < len(tokens):
        tok = tokens[i]
        if tok == "--":
            rest = list(tokens[i + 1:])
            if script is None and rest:
                script, rest = rest[0], rest[1:]
            script_args += rest
            break
        key, eq, value = tok.partition("=")
        if key in takes_value:
            if not eq:
                if i + 1 >= len(tokens):
                    raise CLIError(f"run: {tok} needs a value")
                value = tokens[i + 1]
                i += 1
            opts[takes_value[key]] = value
        elif tok in ("-q", "--quiet"):
            opts["quiet"] = True
        elif tok == "--profile":
            opts["profile"] = True
        elif tok in ("-h", "--help") and script is None:
            raise _Help()
        elif script is None:
            if tok.startswith("-"):
                raise CLIError(f"run: unknown option {tok!r} before SCRIPT (options: -o, --json, --title, -q, "
                               f"--profile)")
            script = tok
        else:
            script_args.append(tok)
        i += 1
    if script is None:
        raise CLIError("run: no SCRIPT given (usage: inductor-lens run SCRIPT [ARGS...] -o report.html)")
    return script, script_args, opts


class _Help(Exception):
    pass


def cmd_run(tokens: Sequence[str]) -> int:
    from . import capture

    script, script_args, opts = _split_run_args(tokens)
    if not os.path.isfile(script):
        raise CLIError(f"run: no such script: {script}")
    html_path = opts["output"]
    json_path = opts["json"]
    if html_path is None and json_path is None:
        html_path = os.path.splitext(os.path.basename(script))[0] + "-lens.html"
    title = opts["title"] or " ".join([os.path.basename(script), *script_args])

    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script, *script_args]
    script_dir = os.path.dirname(os.path.abspath(script))
    if sys.path:
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    failure: Optional[str] = None
    exit_code = 0
    _say(f"running {script} under capture (Inductor compiles at each compiled function's first call)"
         + ("; --profile: under the PyTorch profiler too" if opts["profile"] else ""))
    profiled = contextlib.nullcontext()
    if opts["profile"]:
        from ._capture.profile import profiling_script
        profiled = profiling_script()
    apply_profile = None
    try:
        with profiled as apply_profile, capture(title=title, on_event=_StderrProgress(opts["quiet"])) as cap:
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as e:
                if e.code not in (None, 0):
                    failure = f"{script} exited with status {e.code}"
                    exit_code = e.code if isinstance(e.code, int) else 1
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the script raised: show its traceback, still write the report
        tb = e.__traceback__  # start at the script's own frames, not runpy's and ours
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != os.path.abspath(script):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        failure = f"{script} raised {type(e).__name__}: {e}"
        exit_code = 1
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None and sys.path:
            sys.path[0] = saved_path0
    report = cap.report
    if apply_profile is not None and report.compiles:
        report = apply_profile(report)
    written = _write(report, html_path, json_path)
    n = len(report.compiles)
    if failure:
        _say(f"error: {failure}; the report of what compiled before that ({n} compile(s), "
             f"{len(report.kernels)} kernel(s)) is at {_where(written)}")
        return exit_code or 1
    if n == 0:
        reason = report.diagnostics[0] if report.diagnostics else \
            "the script never called a torch.compile()d function"
        _say(f"error: nothing compiled: {reason} (report written to {_where(written)})")
        return 1
    _say(f"{n} compile(s), {len(report.kernels)} kernel(s); wrote {_where(written)}")
    return 0


# -- demo ----------------------------------------------------------------------------------------

def _demo_report(progress, profile: bool = False):
    from .examples import demo

    return demo(on_event=progress, profile=profile)


def cmd_demo(args: argparse.Namespace) -> int:
    _say("demo: compiling sin(x)**2 + cos(x)**2 and a small MLP (CPU compiles take a few seconds)")
    report = _demo_report(_StderrProgress(args.quiet), profile=args.profile)
    if not report.compiles:
        raise CLIError("demo: nothing compiled: " + "; ".join(report.diagnostics), code=1)
    written = _write(report, args.output, args.json)
    _say(f"{len(report.compiles)} compile(s), {len(report.kernels)} kernel(s); wrote {_where(written)}")
    return 0


# -- show ----------------------------------------------------------------------------------------

def cmd_show(args: argparse.Namespace) -> int:
    from .model import ReportError, load

    if not os.path.isfile(args.report):
        raise CLIError(f"show: no such report: {args.report}")
    try:
        report = load(args.report)
    except (ReportError, UnicodeDecodeError) as e:
        raise CLIError(f"show: {args.report} is not a readable inductor_lens report: {e}") from None
    output = args.output or os.path.splitext(args.report)[0] + ".html"
    written = _write(report, output, None)
    _say(f"wrote {_where(written)}")
    return 0


# -- main ----------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="See what torch.compile's Inductor did: fused kernels, their source, and the "
                               "code that produced them, as one self-contained HTML page.")
    from . import __version__
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    run = sub.add_parser("run", help="run a Python script under capture and write its report",
                         usage=f"{PROG} run SCRIPT [ARGS...] [-o report.html] [--json report.json] [--title T] [-q] "
                               "[--profile]",
                         description=textwrap.fill(
                             "Runs SCRIPT as `python SCRIPT ARGS` would (same sys.argv, __name__ == '__main__') "
                             "with every Inductor compile recorded. Options may come before or after SCRIPT; put "
                             "`--` before the script's arguments if they use -o or --json themselves.", 100),
                         epilog="options (parsed by hand around SCRIPT):\n"
                                "  -o, --output PATH   HTML file to write (default: SCRIPT-lens.html)\n"
                                "  --json PATH         also write the report as JSON\n"
                                "  --title T           a title for the page (default: the script and its arguments)\n"
                                "  -q, --quiet         no progress lines on stderr\n"
                                "  --profile           also run the script under the PyTorch profiler: each kernel's\n"
                                "                      measured time, bytes, FLOPs and fraction of the device's peak\n"
                                "                      (every call of a compiled graph after its first is a run)",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("script_and_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    demo = sub.add_parser("demo", help="the built-in example: the user's sin**2 + cos**2 and a small MLP")
    demo.add_argument("-o", "--output", default="lens-demo.html", help="HTML file to write (default: %(default)s)")
    demo.add_argument("--json", default=None, help="also write the report as JSON")
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    demo.add_argument("--profile", action="store_true",
                      help="measure each kernel's time and set it against the machine's peaks")
    show = sub.add_parser("show", help="render a saved JSON report as HTML")
    show.add_argument("report", help="a report.json (from --json, report.save_json, or %%%%inductor_lens --json)")
    show.add_argument("-o", "--output", default=None, help="HTML file to write (default: REPORT.html)")
    from ._diff_cli import add_parser as _add_diff  # the compare command lives in its own module
    _add_diff(sub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        if argv and argv[0] == "run":  # argparse cannot take options after a REMAINDER: parse by hand
            try:
                return cmd_run(argv[1:])
            except _Help:
                parser.parse_args(["run", "--help"])
        args = parser.parse_args(argv)
        if args.command == "demo":
            return cmd_demo(args)
        if args.command == "show":
            return cmd_show(args)
        if args.command == "diff":
            from ._diff_cli import cmd_diff
            return cmd_diff(args)
        parser.error(f"unknown command {args.command!r}")
    except CLIError as e:
        _say(f"error: {e}")
        return e.code
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    return 0

