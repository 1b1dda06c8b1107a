"""``inductor-lens``: capture a script, run the built-in demo, or render a saved report.

    inductor-lens run [-o report.html] [--json report.json] [--title T] [-q] SCRIPT [ARGS...]
    inductor-lens demo [-o lens-demo.html] [--json lens-demo.json]
    inductor-lens show report.json[.gz] [-o report.html]
    inductor-lens diff a.json b.json -o diff.html
    inductor-lens torchrun [-o job.html] [--json-dir DIR] [torchrun options] SCRIPT [ARGS...]
    inductor-lens import-trace DIR_OR_FILE -o page.html [--json report.json]

As with ``python`` and ``torchrun``, everything after SCRIPT belongs to the script: the lens's own
options go before it. Output paths are checked before anything runs. Progress (Inductor's steps in
plain words, the kernels it builds) goes to stderr: one updating line on a terminal, plain lines
otherwise; the last line says where the files are.

Exit codes: 0 ok; 1 the script raised (the report of what compiled before is still written) or
nothing was compiled; the script's own code when it calls ``sys.exit(N)``; 130 interrupted by
Ctrl-C (the partial report is written); 2 usage errors (missing script, unreadable report, an
output that cannot be written).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:  # argparse, and what it imports (shutil, gettext, locale: ~1.8 MB), only for the commands it parses
    import argparse

from .cli_common import PROG, CLIError, _say, _say_paragraph


def _run_script(path: str) -> None:
    """Run a script file as ``python path`` does: as ``__main__``, its ``__file__`` and code's file name absolute
    (Python 3.9+: a script that changes directory and reads beside itself finds its files; ``runpy.run_path``
    keeps the path as given), ``sys.argv[0]`` as given, ``__spec__`` None."""
    import builtins
    import types

    full = os.path.abspath(path)
    with open(full, "rb") as f:
        code = compile(f.read(), full, "exec")
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=full, __builtins__=builtins, __cached__=None, __spec__=None, __loader__=None)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _progress(quiet: bool):
    from .progress import TerminalProgress

    return TerminalProgress(sys.stderr, quiet=quiet, prefix=f"{PROG}: ")


# -- writing -----------------------------------------------------------------------------------


def _check_outputs(outputs: Sequence[Optional[str]], inputs: Sequence[tuple[str, str]]) -> None:
    """Before any work: each output can be written and is none of the inputs (the script, the report), and where the
    first, the page, is given, the front end it embeds is built."""
    from ..report.io import check_writable, same_file

    given = [o for o in outputs if o]
    for i, out in enumerate(given):
        for what, path in inputs:
            if same_file(out, path):
                raise CLIError(f"refusing to write {out}: it is the {what} itself (choose another -o/--json path)")
        for other in given[:i]:
            if same_file(out, other):
                raise CLIError(f"-o and --json both name {out}: give them different paths")
        why = check_writable(out)
        if why:
            raise CLIError(f"cannot write {out}: {why}")
    if outputs and outputs[0]:  # the page (every caller gives it first): the front end it embeds must be built
        from .frontend import BundleMissingError, check_bundle

        try:
            check_bundle()
        except BundleMissingError as e:
            raise CLIError(f"cannot write a page: {e}") from None


def _write(report, html_path: Optional[str], json_path: Optional[str], progress=None) -> list[str]:
    """Write the page and the JSON from one walk of the report, compile by compile (``report_io.written``,
    spooled beside the first of them); SIGINT waits until both are on disk (each write is atomic anyway).
    ``progress(line)`` hears how far the walk is, every few seconds."""
    from ..report import io as report_io
    from ..report.io import describe_os_error

    paths = [p for p in (html_path, json_path) if p]
    if not paths:
        return []
    with _no_interrupt():
        try:
            w = report_io.written(report, report_io.spool_file(paths[0]), _every_few_seconds(progress))
        except OSError as e:
            raise CLIError(f"cannot write {paths[0]}: {describe_os_error(e)}") from None
        try:
            return _write_from(report, w, html_path, json_path)
        finally:
            w.close()


def _write_from(report, w, html_path: Optional[str], json_path: Optional[str]) -> list[str]:
    """Write the page and the JSON of ``report`` from ``w``, its written form (``report_io.written``)."""
    from ..report import io as report_io
    from ..report.io import describe_os_error
    from . import html

    written = []
    for path, save in ((html_path, html.save_written), (json_path, None)):
        if path:
            try:
                done = save(report, w, path) if save else report_io.save_written(w, path)
            except OSError as e:
                raise CLIError(f"cannot write {path}: {describe_os_error(e)}") from None
            written.append(os.path.abspath(done))
    return written


def _every_few_seconds(progress):
    """``on_compile(done, total)`` for ``report_io.written`` that says ``writing: N of M compile(s)`` every 3 s."""
    if progress is None:
        return None
    last = [time.monotonic()]

    def on_compile(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 3 or (done == total and total > 100):
            last[0] = time.monotonic()
            progress(f"writing: {done} of {total} compile(s)")

    return on_compile


class _no_interrupt:
    """Hold Ctrl-C while the report is being written (main thread only); a held one is re-raised after."""

    def __init__(self, reraise: bool = True):
        self.reraise = reraise
        self.hit = False
        self.old = None

    def __enter__(self):
        self.hit = False
        self.old = None
        try:
            self.old = signal.signal(signal.SIGINT, self._hold)
        except ValueError:  # not the main thread
            pass
        return self

    def _hold(self, signum, frame):
        self.hit = True

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
            self.old = None
        if self.hit and exc[0] is None and self.reraise:
            raise KeyboardInterrupt
        return False


_COMMAND_LINE = False


def _exit_anyway_after(code: int, seconds: float) -> None:
    """The report is written: if the process has not exited ``seconds`` later (an interrupt that landed
    while torch's compile workers were starting or busy can leave their shutdown, at exit, waiting on them),
    end it with ``code`` rather than hang after Ctrl-C. A daemon thread: a normal exit never waits for it."""
    import threading

    def later() -> None:
        time.sleep(seconds)
        sys.stderr.flush()
        os._exit(code)

    threading.Thread(target=later, name="inductor-lens exit", daemon=True).start()


def _finished(code: int) -> int:
    """A command that holds nothing more to write is done: when the process is ours (``inductor-lens``, not a
    caller of :func:`main`), exit at once with ``code``, stdout and stderr flushed, rather than free a large
    report's millions of objects one by one and tear every module down (mypy ends so too). Else ``code``."""
    if _COMMAND_LINE:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _where(written: list[str]) -> str:
    return " and ".join(written)


# -- run ---------------------------------------------------------------------------------------

_RUN_OPTS = {"-o": "output", "--output": "output", "--json": "json", "--title": "title"}


def _split_run_args(tokens: Sequence[str]):
    """The lens's options come before SCRIPT; SCRIPT and everything after it are the script's."""
    opts = {"output": None, "json": None, "title": None, "quiet": False, "profile": False, "ir": False}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "--":
            i += 1
            break
        if not tok.startswith("-") or tok == "-":
            break
        key, eq, value = tok.partition("=")
        if key in _RUN_OPTS:
            if not eq:
                if i + 1 >= len(tokens):
                    raise CLIError(f"run: {tok} needs a value")
                i += 1
                value = tokens[i]
            opts[_RUN_OPTS[key]] = value
        elif tok in ("-q", "--quiet"):
            opts["quiet"] = True
        elif tok == "--profile":
            opts["profile"] = True
        elif tok == "--ir":
            opts["ir"] = True
        elif tok in ("-h", "--help"):
            raise _Help()
        else:
            raise CLIError(
                f"run: unknown option {tok!r} (the lens's options are -o, --json, --title, -q, --profile, --ir, "
                f"and go before SCRIPT; everything after SCRIPT is the script's)"
            )
        i += 1
    if i >= len(tokens):
        raise CLIError("run: no SCRIPT given (usage: inductor-lens run [-o report.html] SCRIPT [ARGS...])")
    return tokens[i], list(tokens[i + 1 :]), opts


class _Help(Exception):
    pass


class _ScriptRun:
    """One run of a script under capture: its outcome (exit code, exception) and its report."""

    def __init__(self, script: str, args: list[str], title: str, quiet: bool, profile: bool = False, ir: bool = False):
        self.script, self.args, self.title, self.profile, self.ir = script, args, title, profile, ir
        self.progress = _progress(quiet)
        self.exit_code = 0
        self.error: Optional[BaseException] = None
        self.error_tb = ""
        self.interrupted = False
        self.pipeline = None
        self.hold = _no_interrupt(reraise=False)  # from the script's end until the report is written

    def run(self):
        """Run the script inside the run pipeline's capture; returns the pipeline (``finish`` makes the report)."""
        from ..capturing.pipeline import Run

        saved_argv, saved_path = sys.argv[:], sys.path[:]
        sys.argv = [self.script, *self.args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(self.script)))
        # with --profile the whole script runs under the PyTorch profiler too
        self.pipeline = Run(
            title=self.title, on_event=self.progress, profile="script" if self.profile else None, ir=self.ir
        )
        try:
            with self.pipeline:
                try:
                    _run_script(self.script)
                except SystemExit as e:
                    self._exited(e)
                except KeyboardInterrupt:
                    self.interrupted, self.exit_code = True, 130
                except BaseException as e:  # the script raised: keep its traceback, still write the report
                    self._raised(e)
                self.hold.__enter__()
        finally:
            sys.argv = saved_argv
            sys.path[:] = saved_path
            self.progress.done()
        return self.pipeline

    def _exited(self, e: SystemExit) -> None:
        if e.code is None or e.code == 0:
            return
        if isinstance(e.code, int):
            self.exit_code = e.code
        else:  # sys.exit("message"): Python prints it and exits 1
            print(e.code, file=sys.stderr)
            self.exit_code = 1

    def _raised(self, e: BaseException) -> None:
        tb = e.__traceback__  # start at the script's own frames, not runpy's and ours
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != os.path.abspath(self.script):
            tb = tb.tb_next
        import traceback

        # no frame of the script: it did not compile (a SyntaxError), and Python shows the error alone, so do we
        lines = (
            traceback.format_exception(type(e), e, tb)
            if tb is not None
            else traceback.format_exception_only(type(e), e)
        )
        self.error_tb = "".join(lines)
        sys.stderr.write(self.error_tb)
        self.error, self.exit_code = e, 1
        self.pipeline.raised(e)


def cmd_run(tokens: Sequence[str]) -> int:
    from ..report import outcome as _outcome

    script, script_args, opts = _split_run_args(tokens)
    if not os.path.isfile(script):
        raise CLIError(f"run: no such script: {script}")
    html_path, json_path = opts["output"], opts["json"]
    if html_path is None and json_path is None:
        html_path = os.path.splitext(os.path.basename(script))[0] + "-lens.html"
    _check_outputs([html_path, json_path], [("script", script)])
    title = opts["title"] or " ".join([os.path.basename(script), *script_args])
    if not opts["quiet"]:
        _say(f"running {script} under capture (Inductor compiles at each compiled function's first call)")
    run = _ScriptRun(script, script_args, title, opts["quiet"], opts["profile"], opts["ir"])
    try:
        report = run.run().finish(run.error, traceback_text=run.error_tb, interrupted=run.interrupted)
        if run.exit_code and run.error is None and not run.interrupted:  # sys.exit(3): said in the report too
            report = _outcome.add(
                report,
                "user_code_raised",
                f"the script exited with status {run.exit_code} (sys.exit); the report holds what compiled before that",
            )
        reason = _outcome.why_nothing_compiled(report, run.error) if not report.compiles else None
        written = _write(report, html_path, json_path)
    finally:
        run.hold.__exit__(None, None, None)
    run.interrupted = run.interrupted or run.hold.hit
    n, k = len(report.compiles), len(report.kernels)
    if run.interrupted:
        _say(f"interrupted; the partial report ({n} compile(s), {k} kernel(s)) is at {_where(written)}")
        if _COMMAND_LINE:
            _exit_anyway_after(130, seconds=30)
        return 130
    if run.error is not None:
        # one line: the traceback above holds the whole message (torch's are often many lines)
        said = next((ln.strip() for ln in str(run.error).splitlines() if ln.strip()), "")
        _say(
            f"error: {script} raised {type(run.error).__name__}: {said}; the report of what compiled "
            f"before that ({n} compile(s), {k} kernel(s)) is at {_where(written)}"
        )
        return 1
    if run.exit_code:
        _say(
            f"{script} exited with status {run.exit_code}; the report of what compiled ({n} compile(s), "
            f"{k} kernel(s)) is at {_where(written)}"
        )
        return run.exit_code
    if reason is not None:
        _say(f"error: nothing compiled: {reason} (report written to {_where(written)})")
        return 1
    if not opts["quiet"]:
        _say_when(report)  # the answer to "when did Inductor run?"; the last line stays what was written
    _say(f"{n} compile(s), {k} kernel(s); wrote {_where(written)}")
    return 0


def _say_when(report) -> None:
    """When Inductor ran (``Report.when``, the first compile's story), then, where there are several, one line per
    compile (``rules.compile_when_line``: a lazy backward, an optimizer step, a recompile; a repeated region's graph
    is compiled within its caller's, not listed)."""
    from ..report.rules import compile_when_line

    _say_paragraph(report.when)
    own = [c for c in report.compiles if not c.subgraph]
    if len(own) > 1:
        _say("each compile:")
        for c in own:
            _say(f"  {compile_when_line(c)}")


# -- demo ----------------------------------------------------------------------------------------


def _demo_report(progress, profile: bool = False):
    from ..examples import demo

    return demo(on_event=progress, profile=profile)


def cmd_demo(args: argparse.Namespace) -> int:
    _check_outputs([args.output, args.json], [])
    if not args.quiet:
        _say(
            "demo: compiling sin(x)**2 + cos(x)**2 and a small MLP (a CPU compile: 10-30 s the first time, while gcc builds the kernels)"
        )
    progress = _progress(args.quiet)
    try:
        report = _demo_report(progress, profile=args.profile)
    finally:
        progress.done()
    if not report.compiles:
        from ..report import outcome as _outcome

        raise CLIError("demo: nothing compiled: " + _outcome.why_nothing_compiled(report, who="the demo"), code=1)
    written = _write(report, args.output, args.json)
    if not args.quiet:
        _say_when(report)
    _say(f"{len(report.compiles)} compile(s), {len(report.kernels)} kernel(s); wrote {_where(written)}")
    return 0


# -- show ----------------------------------------------------------------------------------------


def cmd_show(args: argparse.Namespace) -> int:
    """Render a saved report without building the model: read, check every field, pack, write.

    A report in the line layout (what the lens writes) is read, expanded and checked one compile at a
    time, and its own bytes are gzip'd for the page in a thread meanwhile; any other file is parsed whole
    (slower, and several times its size in memory). Progress lines for reports over 20 MB.
    """
    from ..report import io as report_io
    from ..report.model import ReportError
    from . import html

    if len(args.report) > 1 or os.path.isdir(args.report[0]):
        return _show_job(args)
    src = args.report[0]
    output = args.output or _default_page(src)
    _check_outputs([output], [("input report", src)])
    if args.output is None and os.path.exists(output):  # e.g. the page `run` wrote beside its --json
        _say(f"show: replacing {output}, which exists already (give -o PATH to write the page elsewhere)")
    t0 = time.monotonic()
    size = os.path.getsize(src) if os.path.isfile(src) else 0
    step = (lambda text: _say(f"[{time.monotonic() - t0:5.1f}s] {text}")) if size > 20_000_000 else (lambda text: None)
    step(f"reading {src} ({size / 1e6:.0f} MB), checking every field and packing the page meanwhile")
    page = _ShowPage(size, step)
    try:
        facts, packed = report_io.read_parts(src, src, page.use, feed=page.new_sink)
    except ReportError as e:
        raise CLIError(f"show: {e}") from None
    finally:
        page.close()
    step(f"writing {output}")
    try:
        written = [os.path.abspath(html.save_page(facts, packed, output))]
    except OSError as e:
        raise CLIError(f"cannot write {output}: {report_io.describe_os_error(e)}") from None
    _say(f"wrote {_where(written)}")
    return 0


class _ShowPage:
    """What ``show`` makes of a report's parts (``report_io.read_parts``): the page's facts and payload."""

    def __init__(self, size: int, step) -> None:
        self.level = 1 if size > 50_000_000 else 6  # level 1 for large reports: 2-3x faster, a page ~1.3x larger
        self.step = step
        self.packer = None

    def new_sink(self):
        from ..report.stream import Packer

        self.close()
        self.packer = Packer(self.level)
        return self.packer.feed

    def close(self) -> None:
        if self.packer is not None:
            self.packer.close()

    def use(self, parts) -> tuple[dict, bytes]:
        from ..report import io as report_io
        from ..report.check import _gc_paused
        from ..report.model import DERIVED_VERSION, SCHEMA_VERSION
        from . import html
        from .frontend import pack_report

        parts.check_version()
        # an older schema, or derived fields of an older lens (the page reads Python's derived fields: a report written
        # before them broke it, "Cannot read properties of undefined"): the model converts it and derives them
        if parts.head["schema_version"] != SCHEMA_VERSION or (parts.head.get("derived") or 0) < DERIVED_VERSION:
            report = report_io.load(parts.whole(), name=parts.name)
            return html.facts_of(report_io.to_plain(report)), pack_report(report)
        if not parts.layout:
            self.step("not in the line layout (written by an older lens or another tool): parsed whole")
        compiles = kernels = 0
        kept = None if parts.pristine else []
        last = time.monotonic()
        # kept compiles are written again: joined texts; else the file's bytes are the page's, and a compile
        # found right as written is only counted
        with _gc_paused():  # millions of short-lived containers: no cyclic GC rescanning them
            for c in parts.checked(lazy_texts=kept is None, as_written=kept is None):
                compiles += 1
                kernels += len(c.get("kernels") or [])
                if kept is not None:
                    kept.append(c)
                if time.monotonic() - last > 3:
                    last = time.monotonic()
                    self.step(f"checked {compiles} compile(s)")
        facts = dict(html.facts_of(dict(parts.head_expanded, compiles=[])), compiles=compiles, kernels=kernels)
        if kept is None:
            return facts, self.packer.result()
        # NaN or lone surrogates were fixed: embed the fixed data, not the file
        import gzip

        return facts, gzip.compress(report_io.dumps(dict(parts.head_expanded, compiles=kept), trusted=True), 6, mtime=0)


def _default_page(src: str) -> str:
    base = src[:-3] if src.lower().endswith(".gz") else src
    return os.path.splitext(base)[0] + ".html"


# -- distributed jobs and TORCH_TRACE logs (inductor_lens/job.py, _torchrun.py, _capture/trace_import.py) --


def _show_job(args: argparse.Namespace) -> int:
    from ..analysis.job import load_job
    from ..report.model import ReportError

    try:
        job = load_job(args.report)
    except (FileNotFoundError, ReportError) as e:
        raise CLIError(f"show: {e}") from None
    first = args.report[0].rstrip("/\\")
    output = args.output or (first + "-job.html" if os.path.isdir(first) else "job.html")
    job.save_html(output)
    _say(job.summary())
    _say(f"wrote {os.path.abspath(output)}")
    return 0


def cmd_torchrun(tokens: Sequence[str]) -> int:
    from .torchrun import TorchrunUsage, launch

    try:
        return launch(tokens, say=_say)
    except TorchrunUsage as e:
        raise CLIError(str(e)) from None


def cmd_import_trace(args: argparse.Namespace) -> int:
    from ..capturing.trace_import import TraceError, load_trace
    from ..report.check import _gc_paused

    progress = None if args.quiet else (lambda msg: _say(msg))
    output = args.output or os.path.splitext(os.path.basename(args.trace.rstrip("/\\")))[0] + "-lens.html"
    with _gc_paused():  # reading and writing make millions of objects, none cyclic: no collection rescans them
        try:
            written = _import_streamed(args.trace, output, args.json, progress)
            if written is None:  # several logs (a job), or a log that must be imported whole
                result = load_trace(args.trace, on_progress=progress)
                written = (
                    _write(result, output, args.json, progress)
                    if hasattr(result, "compiles")
                    else _write_job(result, output, args.json, progress)
                )
        except (FileNotFoundError, TraceError) as e:
            raise CLIError(f"import-trace: {e}") from None
    _say(f"wrote {_where(written)}")
    return _finished(0)  # the files are complete on disk (atomic_write syncs them)


def rank_json_paths(json_path: str, ranks: Sequence[int]) -> list[str]:
    """Where ``import-trace --json PATH`` of a directory of rank logs writes each rank's report: ``PATH`` with
    ``.rankN`` before its ``.json`` (``job.json`` -> ``job.rank0.json``, ``job.rank1.json``), which ``show`` opens
    together as the job page."""
    stem, ext = (json_path[:-8], ".json.gz") if json_path.endswith(".json.gz") else os.path.splitext(json_path)
    return [f"{stem}.rank{r}{ext or '.json'}" for r in ranks]


def _write_job(job, html_path: str, json_path: Optional[str], progress) -> list[str]:
    """The job page of a directory of rank logs, and with ``--json PATH`` each rank's report (``rank_json_paths``):
    what the user asked for, never dropped."""
    jsons = rank_json_paths(json_path, [e.rank for e in job.ranks]) if json_path else []
    _check_outputs([html_path, *jsons], [])
    written = [os.path.abspath(job.save_html(html_path))]
    for entry, path in zip(job.ranks, jsons):
        written += _write(entry.report, None, path, progress)
    return written


def _import_streamed(trace: str, html_path: str, json_path: Optional[str], progress) -> Optional[list[str]]:
    """``import-trace`` of one log, compile by compile (``capturing/trace_stream.py``): the page and the JSON
    written from a spool beside the page (the phase events in a second one while the log is read), in memory that
    does not grow with the log. None where the log must be
    imported whole (a directory of several logs, or records out of the order the streamed import relies on)."""
    from ..capturing.trace_read import find_logs
    from ..capturing.trace_stream import stream_trace
    from ..report import io as report_io
    from ..report.io import describe_os_error
    from ..report.written import Spooled, Unclean

    files = find_logs(trace)
    if len(files) != 1:
        return None
    try:
        spool = report_io.spool_file(html_path)
    except OSError as e:
        raise CLIError(f"cannot write {html_path}: {describe_os_error(e)}") from None
    sink = Spooled(report_io._dump, spool)
    try:
        events = report_io.spool_file(html_path)
    except OSError as e:
        sink.close()
        raise CLIError(f"cannot write {html_path}: {describe_os_error(e)}") from None
    try:
        head = stream_trace(files[0], sink, progress, spill=events)
        if head is None:
            if progress is not None:
                progress("the log's records are not in the order a streamed import needs: importing it whole")
            return None
        try:
            sink.finish(head)
        except Unclean:
            return None
        events.close()  # read: the phase events' spill goes before the page is written
        with _no_interrupt():
            return _write_from(head, sink, html_path, json_path)
    finally:
        events.close()
        sink.close()


# -- main ----------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    import argparse
    import textwrap

    p = argparse.ArgumentParser(
        prog=PROG,
        description="See what torch.compile's Inductor did: fused kernels, their source, and the "
        "code that produced them, as one self-contained HTML page.",
    )
    from .._version import __version__

    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    run = sub.add_parser(
        "run",
        help="run a Python script under capture and write its report",
        usage=f"{PROG} run [-o report.html] [--json report.json] [--title T] [-q] [--profile] [--ir] SCRIPT [ARGS...]",
        description=textwrap.fill(
            "Runs SCRIPT as `python SCRIPT ARGS` would (same sys.argv, __name__ == '__main__') "
            "with every Inductor compile recorded. As with python and torchrun, the lens's options "
            "go BEFORE SCRIPT and everything after SCRIPT is the script's own (so `run -o r.html "
            "train.py --epochs 1 -q` gives train.py `--epochs 1 -q`). The output paths are checked "
            "before the script runs. Ctrl-C or sys.exit still write the report of what compiled.",
            100,
        ),
        epilog="options (before SCRIPT):\n"
        "  -o, --output PATH   HTML file to write (default: SCRIPT-lens.html)\n"
        "  --json PATH         also write the report as JSON\n"
        "  --title T           a title for the page (default: the script and its arguments)\n"
        "  -q, --quiet         no progress lines on stderr\n"
        "  --profile           also run the script under the PyTorch profiler: each kernel's\n"
        "                      measured time, bytes, FLOPs and fraction of the device's peak\n"
        "                      (every call of a compiled graph after its first is a run)\n"
        "  --ir                keep each Triton kernel's IR stages (TTIR, TTGIR, LLIR, PTX, SASS)\n"
        "                      and its registers, shared memory and spills (large)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("script_and_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    demo = sub.add_parser("demo", help="the built-in example: the user's sin**2 + cos**2 and a small MLP")
    demo.add_argument("-o", "--output", default="lens-demo.html", help="HTML file to write (default: %(default)s)")
    demo.add_argument("--json", default=None, help="also write the report as JSON")
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    demo.add_argument(
        "--profile", action="store_true", help="measure each kernel's time and set it against the machine's peaks"
    )
    show = sub.add_parser("show", help="render a saved JSON report as HTML")
    show.add_argument(
        "report",
        nargs="+",
        help="a report.json or report.json.gz (from --json, report.save_json, or %%%%inductor_lens "
        "--json); several rank reports or a directory of them (inductor-lens torchrun "
        "--json-dir) make one job page",
    )
    show.add_argument("-o", "--output", default=None, help="HTML file to write (default: REPORT.html)")
    from .diff_cli import add_parser as _add_diff  # the compare command lives in its own module

    _add_diff(sub)
    from .repro_cli import add_parser as _add_repro  # so does the reproducer command

    _add_repro(sub)
    sub.add_parser(
        "torchrun",
        help="run a script under torchrun (torch.distributed.run), every rank captured",
        usage=f"{PROG} torchrun [-o job.html] [--json-dir DIR] [--timeout S] [-q] [torchrun options] SCRIPT [ARGS...]",
        add_help=False,
    )
    imp = sub.add_parser("import-trace", help="rebuild reports from TORCH_TRACE logs (a file, or a directory of them)")
    imp.add_argument("trace", help="a TORCH_TRACE log file or the directory TORCH_TRACE pointed at")
    imp.add_argument("-o", "--output", default=None, help="HTML file to write (default: TRACE-lens.html)")
    imp.add_argument(
        "--json",
        default=None,
        help="also write the report as JSON (a directory of rank logs: one report per rank, PATH with .rankN before .json)",
    )
    imp.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return p


#: ``import-trace``'s options in the forms :func:`_plain_import_trace` reads (each with its value as the next token)
_IMPORT_TRACE_OPTS = {"-o": "output", "--output": "output", "--json": "json"}


def _plain_import_trace(tokens: Sequence[str]):
    """The arguments of ``import-trace`` (after the command) as argparse parses them, where they are in the plain
    forms: one TRACE, ``-o``/``--output PATH``, ``--json PATH``, ``-q``/``--quiet``, in any order, each once at
    most, no token but the values of ``-o`` and ``--json`` starting with ``-``. None for anything else
    (``--help``, ``--out=x``, ``-qo x``, a repeated option, an error...): argparse parses those, and says what is
    wrong. The common command then starts without argparse and what it imports (``shutil``, ``gettext``,
    ``locale``: ~1.8 MB of a small log's import)."""
    import types

    found = {"trace": None, "output": None, "json": None, "quiet": False}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        key = _IMPORT_TRACE_OPTS.get(tok)
        if key is not None:
            if i + 1 >= len(tokens) or tokens[i + 1].startswith("-") or found[key] is not None:
                return None
            found[key] = tokens[i + 1]
            i += 2
            continue
        if tok in ("-q", "--quiet") and not found["quiet"]:
            found["quiet"] = True
        elif tok.startswith("-") or found["trace"] is not None:
            return None
        else:
            found["trace"] = tok
        i += 1
    if found["trace"] is None:
        return None
    return types.SimpleNamespace(command="import-trace", **found)


def main(argv: Optional[Sequence[str]] = None) -> int:
    global _COMMAND_LINE
    _COMMAND_LINE = argv is None  # the process is ours (inductor-lens / python -m inductor_lens), not a caller's
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "import-trace":  # the plain forms without argparse (a small log's import is ~10% it)
            plain = _plain_import_trace(argv[1:])
            if plain is not None:
                return cmd_import_trace(plain)
        if argv and argv[0] == "run":  # argparse cannot take options after a REMAINDER: parse by hand
            try:
                return cmd_run(argv[1:])
            except _Help:
                _parser().parse_args(["run", "--help"])
        if argv and argv[0] == "torchrun":  # torchrun's options and the script's are not ours to parse
            if argv[1:2] in (["-h"], ["--help"]):
                from . import torchrun as _torchrun

                print(_torchrun.HELP, end="")
                return 0
            return cmd_torchrun(argv[1:])
        parser = _parser()
        args = parser.parse_args(argv)
        if args.command == "import-trace":
            return cmd_import_trace(args)
        if args.command == "demo":
            return cmd_demo(args)
        if args.command == "show":
            return cmd_show(args)
        if args.command == "diff":
            from .diff_cli import cmd_diff

            return cmd_diff(args)
        if args.command == "repro":
            from .repro_cli import cmd_repro

            return cmd_repro(args)
        parser.error(f"unknown command {args.command!r}")
    except CLIError as e:
        _say(f"error: {e}")
        return e.code
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except SystemExit as e:  # argparse's --help / usage errors, as a status for in-process callers
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    return 0


if __name__ == "__main__":  # python -m inductor_lens.views.cli: the same as python -m inductor_lens
    sys.exit(main())
