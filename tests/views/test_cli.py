"""The ``inductor-lens`` command. A few real subprocess runs (the console script, a real compile, Ctrl-C
mid-compile); the demo and every argument and exit-code case in-process through ``cli.main()``."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import inductor_lens
from inductor_lens.views import cli
from tests.report.test_report_io import _bad_inputs

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = textwrap.dedent("""\
    import json, sys, time, torch
    print(json.dumps({"argv": sys.argv, "name": __name__, "file": __file__}), flush=True)
    def f(x):
        return torch.sin(x) ** 2 + torch.cos(x) ** 2
    def g(x):
        return torch.relu(x) * 3 + 1
    compiled = torch.compile(f)
    if "--nocompile" not in sys.argv:  # argv/exit cases skip the C++ build
        compiled(torch.randn(8))
    if "--boom" in sys.argv:
        raise ValueError("boom after the compile")
    if "--exit3" in sys.argv:
        sys.exit(3)
    if "--then-wait" in sys.argv:  # compiles g, then "trains" until interrupted
        print("f is compiled", file=sys.stderr, flush=True)
        torch.compile(g)(torch.randn(8))
        time.sleep(300)
    from torch._inductor import async_compile  # how many threads built the kernels (tests/conftest.py: 1)
    print(json.dumps({"compile_threads": async_compile.get_compile_threads()}), flush=True)
""")


def lens(*args, cwd, module=False, compile_workers=False, **kw):
    """Run the installed console script (or ``python -m inductor_lens``) in ``cwd``. ``compile_workers``: with
    torch's own compile workers, as users run it (the suite turns them off: tests/conftest.py)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    if compile_workers:
        env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
        env.pop("TORCHINDUCTOR_VEC_ISA_OK", None)
    exe = pathlib.Path(sys.executable).with_name("inductor-lens")
    cmd = [sys.executable, "-m", "inductor_lens", *args] if module else [str(exe), *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kw)


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "script.py").write_text(SCRIPT)
    return d


@pytest.fixture
def inproc(workdir, monkeypatch, capsys):
    """``cli.main(argv)`` in this process, in ``workdir``: returns (status, stdout, stderr)."""
    monkeypatch.chdir(workdir)

    def call(*argv):
        status = cli.main(list(argv))
        out = capsys.readouterr()
        return status, out.out, out.err

    return call


@pytest.fixture(scope="module")
def ran(workdir):
    """One real ``inductor-lens run`` (console script, real compile) shared by the tests that read its outputs; the
    one capture of the suite with torch's compile workers on (the kernels built on their threads, as users'
    are) and torch's check of the CPU's instruction sets, which every other compiling process of the suite runs
    without (tests/conftest.py)."""
    return lens(
        "run",
        "-o",
        "out.html",
        "--json",
        "out.json",
        "script.py",
        "pos",
        "--flag",
        "1",
        "-q",
        "--json",
        "x",
        cwd=workdir,
        compile_workers=True,
    )


# -- real subprocesses -------------------------------------------------------------------------------


def test_console_script_is_installed():
    assert pathlib.Path(sys.executable).with_name("inductor-lens").exists(), (
        "the inductor-lens console script is missing: pip install -e ."
    )


def test_run_runs_the_script_as_python_would(ran, workdir):
    assert ran.returncode == 0, ran.stderr
    seen, workers = (json.loads(line) for line in ran.stdout.strip().splitlines())
    # everything after SCRIPT is the script's, also what looks like the lens's own options
    # an absolute __file__, as python gives a script (it was the relative path the CLI was given)
    file = seen.pop("file")
    assert os.path.isabs(file) and pathlib.Path(file).samefile(workdir / "script.py"), file
    assert seen == {"argv": ["script.py", "pos", "--flag", "1", "-q", "--json", "x"], "name": "__main__"}
    # torch's compile workers built the kernel (torch gives one per core; a machine of one core has none)
    assert workers["compile_threads"] > 1 or len(os.sched_getaffinity(0)) == 1, workers
    assert not (workdir / "x").exists()
    report = inductor_lens.load(workdir / "out.json")
    assert [k.name for k in report.kernels] == ["cpp_fused_add_cos_pow_sin_0"]
    assert report.compiles[0].frame == "f"
    assert (workdir / "out.html").read_text().lstrip().lower().startswith("<!doctype html")
    # progress in the user's words (stderr is a pipe: plain lines), kernels as they are built
    assert "kernel generated: cpp_fused_add_cos_pow_sin_0 (0/0 inference)" in ran.stderr
    for step in ("dynamo tracing", "AOT autograd", "graph passes", "lowering", "scheduler fusion", "code generation"):
        assert f"] {step}\n" in ran.stderr, step
    lines = ran.stderr.rstrip("\n").splitlines()
    at = max(i for i, t in enumerate(lines) if t.startswith("inductor-lens: torch.compile("))
    progress = "\n".join(lines[:at])  # the progress lines: not Report.when and the last line
    assert "pass.post_grad_passes" not in progress and "compile_fx" not in progress  # (Report.when names compile_fx)
    assert "\r" not in ran.stderr, "no updating line when stderr is not a terminal"
    line = last_line(ran.stderr)
    assert str(workdir / "out.html") in line and str(workdir / "out.json") in line
    assert "1 compile(s), 1 kernel(s)" in line
    # above it, when Inductor ran: the report's own words (Report.when), the user's call of f named, a sentence to a
    # line each wrapped under the program's name (one line of 600 characters was hard to read)
    said = lines[at:-1]
    assert len(said) >= 3 and all(len(t) <= 100 for t in said) and all(t.startswith(" " * 15) for t in said[1:]), said
    when = " ".join(t.strip() for t in said)
    assert when == f"inductor-lens: {report.when}" and "Inductor first ran at " not in when, when
    assert "The first call of f() (script.py:" in when and "handed the graph to Inductor (compile_fx)" in when, when


def test_the_when_paragraph_is_a_sentence_to_a_line_wrapped_to_the_terminal(monkeypatch, capsys):
    """nu24 (a new user's trial): the CLI said when Inductor ran in one line of ~600 characters. A sentence to a line,
    wrapped to the terminal (here 60 columns), a time never cut from its unit; the words are the report's whole."""
    from inductor_lens.views.cli_common import _say_paragraph

    text = (
        "torch.compile(f) at train.py:9 ran at 120 µs, took 6.00 ms and only wrapped f: nothing compiled there. The "
        "first call of f() (train.py:12) started the compile: dynamo began at 4.06 s and traced its bytecode until "
        "4.14 s, then handed the graph to Inductor (compile_fx), which lowered, fused and generated code until 9.20 s."
    )
    monkeypatch.setenv("COLUMNS", "60")
    _say_paragraph(text)
    lines = capsys.readouterr().err.rstrip("\n").split("\n")
    assert lines[0].startswith("inductor-lens: torch.compile(f)") and all(len(t) <= 60 for t in lines), lines
    assert any(t.strip().startswith("The first call of f()") for t in lines), lines  # a sentence starts a line
    assert not any(re.search(r"\d$", t) for t in lines), lines  # "4.06" never left without its "s"
    assert " ".join(t.strip() for t in lines) == f"inductor-lens: {text}"


def test_a_run_of_several_compiles_says_when_each_compiled(capsys):
    """nu25 M2: the CLI said when Inductor ran for the first compile only: a lazy backward, an optimizer step and a
    recompile were in no line of it. Under the paragraph, one line per compile (a region's graph is its caller's)."""
    from inductor_lens.report.rules import compile_when_line
    from inductor_lens.views.cli import _say_when

    report = inductor_lens.load(REPO / "tests" / "fixtures" / "cpu_breaks_213.json.gz")
    own = [c for c in report.compiles if not c.subgraph]
    assert len(own) > 1 and any(c.trigger.kind != "first_call" for c in own)
    _say_when(report)
    err = capsys.readouterr().err.splitlines()
    listed = err[err.index("inductor-lens: each compile:") + 1 :]
    assert listed == [f"inductor-lens:   {compile_when_line(c)}" for c in own]
    assert all(line.split(": ", 1)[1].strip().startswith(c.id) for line, c in zip(listed, own))


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_mid_run_writes_the_partial_report_and_exits_130(workdir):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "inductor_lens",
            "run",
            "-o",
            "int.html",
            "--json",
            "int.json",
            "script.py",
            "--then-wait",
        ],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C's default action in the child, whatever this worker inherited or was given: a process that starts
        # with SIGINT ignored keeps it ignored (Python installs KeyboardInterrupt only over SIG_DFL), and then
        # every SIGINT below is lost (a cold-cache CI run: four, two minutes apart)
        preexec_fn=_sigint_default,
    )
    lines = []
    deadline = time.monotonic() + 300
    for line in proc.stderr:  # f compiled and ran; g compiles next (Ctrl-C lands in its compile or the wait)
        lines.append(line)
        if "f is compiled" in line or time.monotonic() > deadline:
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=300)[1], None
    stderr = "".join(lines) + rest
    assert proc.returncode == 130, f"SIGINT here: {signal.getsignal(signal.SIGINT)}\n{stderr}"
    line = last_line(stderr)
    assert line.startswith("inductor-lens: interrupted; the partial report") and str(workdir / "int.json") in line
    report = inductor_lens.load(workdir / "int.json")
    assert "cpp_fused_add_cos_pow_sin_0" in [k.name for k in report.kernels]
    assert any("interrupted by Ctrl-C" in str(d) for d in report.diagnostics)
    assert (workdir / "int.html").exists()


def test_a_script_with_a_syntax_error_is_shown_as_python_shows_it(inproc, workdir):
    """No frame of the script ran: the error alone (its file, line and caret), not runpy's frames and ours."""
    (workdir / "syn.py").write_text("def f(:\n    pass\n")
    status, _, stderr = inproc("run", "-q", "-o", "syn.html", "syn.py")
    assert status == 1
    shown = stderr[: stderr.index("inductor-lens: error:")]
    assert shown.splitlines()[0].strip().startswith('File "') and 'syn.py", line 1' in shown.splitlines()[0]
    assert shown.rstrip().endswith("SyntaxError: invalid syntax"), shown
    assert "Traceback" not in shown and "runpy" not in shown and "cli.py" not in shown, shown
    assert (workdir / "syn.html").exists()


def test_script_that_raises_exits_1_and_still_writes_the_report(inproc, workdir, ran):
    """Run in this process (a real compile of the script's f, then its exception): a process of its own would cost a
    torch import, and ``python -m inductor_lens`` and a real process's exit status are checked by ``ran`` and the
    Ctrl-C test."""
    status, _, stderr = inproc("run", "-o", "boom.html", "--json", "boom.json", "script.py", "--boom")
    assert status == 1
    line = last_line(stderr)
    assert line.startswith("inductor-lens: error: script.py raised ValueError: boom after the compile")
    assert str(workdir / "boom.html") in line
    report = inductor_lens.load(workdir / "boom.json")
    assert len(report.kernels) == 1
    # this process takes the CPU's instruction sets as /proc/cpuinfo says (tests/conftest.py), ``ran`` has torch check
    # them as users' processes do: one pick (the width the reproducers compile for)
    assert ran.returncode == 0, ran.stderr
    checked = inductor_lens.load(workdir / "out.json").compiles[0]
    assert report.compiles[0].cpu_isa, report.compiles[0]
    assert (report.compiles[0].cpu_isa, report.compiles[0].cpu_isa_bits) == (checked.cpu_isa, checked.cpu_isa_bits)
    raised = [
        d
        for d in report.diagnostics
        if d.code == "user_code_raised" and "raised ValueError: boom after the compile" in d.message
    ]
    assert len(raised) == 1, report.diagnostics
    # the script's own traceback is shown, starting at the script (not at runpy or the CLI), by its absolute path
    # as python shows it
    tb = stderr[stderr.index("Traceback") :]
    assert re.search(r'File "/[^"]*/script\.py", line 11', tb) and "runpy" not in tb and "cli.py" not in tb, tb


def test_demo_writes_one_report_with_fused_and_extern_kernels(tmp_path, monkeypatch, capsys):
    # through cli.main in this process (the console script's and ``python -m``'s real processes: ``ran``, Ctrl-C)
    monkeypatch.chdir(tmp_path)
    status = cli.main(["demo", "--json", "demo.json"])
    err = capsys.readouterr().err
    assert status == 0, err
    assert (tmp_path / "lens-demo.html").exists(), "demo's default output is lens-demo.html"
    assert str(tmp_path / "lens-demo.html") in last_line(err)
    report = inductor_lens.load(tmp_path / "demo.json")
    assert [c.frame for c in report.compiles] == ["sin_cos", "SmallMLP.forward"]
    kernels = {k.name: k.language for k in report.kernels}
    assert kernels["cpp_fused_add_cos_pow_sin_0"] == "cpp"
    assert "extern" in kernels.values(), f"the MLP's matmul should stay an extern kernel: {kernels}"
    assert any(lang == "cpp" and "relu" in name for name, lang in kernels.items())


# -- in-process: arguments, outputs, exit codes ----------------------------------------------------------


def test_script_arguments_are_everything_after_script(inproc, workdir):
    status, out, err = inproc("run", "--json", "dd.json", "script.py", "-o", "mine", "--nocompile", "-q")
    assert json.loads(out.splitlines()[0])["argv"] == ["script.py", "-o", "mine", "--nocompile", "-q"]
    assert status == 1 and "nothing compiled" in last_line(err)
    assert (workdir / "dd.json").exists() and not (workdir / "mine").exists()
    status, out, _ = inproc("run", "-q", "--", "script.py", "--nocompile")  # `--` ends the lens's options
    assert json.loads(out.splitlines()[0])["argv"] == ["script.py", "--nocompile"]


def test_script_exit_status_is_kept_and_the_report_written(inproc, workdir):
    status, _, err = inproc("run", "--json", "exit3.json", "script.py", "--exit3", "--nocompile")
    assert status == 3
    assert "script.py exited with status 3" in last_line(err) and str(workdir / "exit3.json") in last_line(err)
    assert (workdir / "exit3.json").exists()
    # and the report says so, as it says a script that raised (the page read later has no terminal beside it)
    said = [d for d in inductor_lens.load(str(workdir / "exit3.json")).diagnostics if d.code == "user_code_raised"]
    assert [d.message for d in said] == [
        "the script exited with status 3 (sys.exit); the report holds what compiled before that"
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["run", "-o", "script.py", "script.py", "--nocompile"],
            "refusing to write script.py: it is the script itself",
        ),
        (["run", "--json", "./script.py", "script.py"], "it is the script itself"),
        (
            ["run", "-o", "/nonexistent/x.html", "script.py"],
            "cannot write /nonexistent/x.html: the folder /nonexistent does not exist",
        ),
        (["run", "--json", "/tmp", "script.py"], "cannot write /tmp: it is a directory"),
        (["run", "-o", "same.html", "--json", "same.html", "script.py"], "-o and --json both name same.html"),
        (["run", "--verbose", "script.py"], "unknown option '--verbose'"),
        (["run", "-o"], "-o needs a value"),
        (["run", "-o", "x.html"], "no SCRIPT given"),
        (["run", "-o", "x.html", "nope.py"], "run: no such script: nope.py"),
        (["demo", "-o", "/nonexistent/demo.html"], "the folder /nonexistent does not exist"),
    ],
)
def test_bad_arguments_and_outputs_stop_before_anything_runs(inproc, workdir, argv, message):
    before = (workdir / "script.py").read_bytes()
    status, out, err = inproc(*argv)
    assert status == 2 and out == "", (out, err)
    assert err.count("\n") == 1 and message in err, err
    assert (workdir / "script.py").read_bytes() == before


def test_show_refuses_to_overwrite_its_input(inproc, workdir):
    inductor_lens.Report(torch_version="2", device="cpu").save_json(workdir / "in.json")
    before = (workdir / "in.json").read_bytes()
    status, _, err = inproc("show", "in.json", "-o", "in.json")
    assert status == 2 and "refusing to write in.json: it is the input report itself" in err
    assert (workdir / "in.json").read_bytes() == before


def test_nothing_compiled_says_why_on_stderr_and_in_the_report(inproc, workdir):
    (workdir / "wraps_only.py").write_text("import torch\ng = torch.compile(lambda x: x + 1)\n")
    status, _, err = inproc("run", "--json", "none.json", "wraps_only.py")
    assert status == 1
    line = last_line(err)
    assert line.startswith("inductor-lens: error: nothing compiled:")
    assert "never called" in line and "first call" in line
    (workdir / "eager.py").write_text("import torch\ntorch.compile(lambda x: x + 1, backend='eager')(torch.ones(2))\n")
    status, _, err = inproc("run", "--json", "eager.json", "eager.py")
    assert status == 1 and "used backend 'eager', which does not use Inductor" in last_line(err)
    (workdir / "plain.py").write_text("x = 1\n")
    status, _, err = inproc("run", "--json", "plain.json", "plain.py")
    assert status == 1 and "never called torch.compile()" in last_line(err)
    report = inductor_lens.load(workdir / "plain.json")
    assert [str(d) for d in report.diagnostics if "nothing compiled: the script never called" in str(d)]


def test_a_report_that_could_not_be_built_says_so_not_that_nothing_compiled(inproc, workdir, monkeypatch):
    """The report builder failing (a bug of ours) left a report with no compile and no torch.compile() call:
    the CLI said "the script never called torch.compile()" after listing the kernels it compiled."""
    from inductor_lens.capturing import build

    def broken(*args, **kwargs):
        raise NameError("name 'EmptyFrame' is not defined")

    monkeypatch.setattr(build, "build_report", broken)
    (workdir / "plain2.py").write_text("x = 1\n")
    status, _, err = inproc("run", "--json", "broken.json", "plain2.py")
    line = last_line(err)
    assert status == 1 and "never called" not in line, line
    assert "the report could not be built (NameError: name 'EmptyFrame' is not defined)" in line, line
    assert "a bug of inductor_lens" in line


def test_script_raising_before_any_compile_is_in_the_page(inproc, workdir):
    (workdir / "early.py").write_text("raise RuntimeError('no GPU here')\n")
    status, _, err = inproc("run", "-o", "early.html", "--json", "early.json", "early.py")
    assert status == 1 and "early.py raised RuntimeError: no GPU here" in last_line(err)
    diags = [str(d) for d in inductor_lens.load(workdir / "early.json").diagnostics]
    assert any("raised RuntimeError: no GPU here before anything compiled" in d for d in diags), diags
    assert any("nothing compiled: the script raised RuntimeError" in d for d in diags), diags


def test_quiet_run_prints_only_the_last_line(inproc, workdir):
    status, out, err = inproc("run", "-q", "--json", "quiet.json", "script.py", "--nocompile")
    assert status == 1 and "running" not in err, err  # nothing compiled: exit 1, the one last line says why
    assert err.count("\n") == 1 and "nothing compiled" in err, err


def test_show_says_when_it_replaces_the_page_that_run_wrote(inproc, workdir):
    inductor_lens.Report(torch_version="2", device="cpu").save_json(workdir / "again.json")
    (workdir / "again.html").write_text("the page run wrote")
    status, _, err = inproc("show", "again.json")
    assert status == 0, err
    assert "show: replacing again.html, which exists already" in err.splitlines()[0] and "-o PATH" in err, err
    assert last_line(err) == f"inductor-lens: wrote {workdir / 'again.html'}"
    status, _, err = inproc("show", "again.json", "-o", "other.html")  # a path the user chose: nothing to say
    assert status == 0 and "replacing" not in err, err


def test_a_fullgraph_error_is_reported_as_raised_not_as_run_eagerly(inproc, workdir):
    (workdir / "fullgraph.py").write_text(
        "import torch\n"
        "def f(x):\n"
        "    torch._dynamo.graph_break()\n"
        "    return x + 1\n"
        "torch.compile(f, fullgraph=True)(torch.ones(2))\n"
    )
    status, _, err = inproc("run", "--json", "fullgraph.json", "fullgraph.py")
    assert status == 1 and "error: fullgraph.py raised Unsupported" in err, err
    diags = inductor_lens.load(workdir / "fullgraph.json").diagnostics
    codes = [d.code for d in diags]
    assert "compile_raised" in codes and "eager_fallback" not in codes, codes
    (raised,) = [d for d in diags if d.code == "compile_raised"]
    assert "raised Unsupported to your code" in raised.message and "graph_break" in raised.message
    assert "with fullgraph=True a graph break is an error" in raised.message


def test_an_error_found_while_tracing_is_raised_without_blaming_fullgraph(inproc, workdir):
    """A shape error dynamo finds while tracing (no fullgraph) reaches the user's code: the diagnostic says it was
    raised and nothing ran eagerly, and nothing about fullgraph, which the script never set."""
    (workdir / "shapes.py").write_text(
        "import torch\ndef f(x, w):\n    return x @ w\ntorch.compile(f)(torch.ones(2, 3), torch.ones(4, 5))\n"
    )
    status, _, err = inproc("run", "--json", "shapes.json", "shapes.py")
    assert status == 1 and "error: shapes.py raised " in err, err
    # torch's message is many lines (the traceback above has them): the lens's own says it on one
    said = err.strip().splitlines()[-1]
    assert said.startswith("inductor-lens: error: shapes.py raised TorchRuntimeError: ") and "shapes.json" in said
    (raised,) = [d for d in inductor_lens.load(workdir / "shapes.json").diagnostics if d.code == "compile_raised"]
    assert "nothing ran eagerly" in raised.message and "fullgraph" not in raised.message, raised.message


def test_show_renders_a_saved_report_and_gzip(inproc, workdir):
    r = inductor_lens.load(REPO / "tests" / "fixtures" / "gpu_sin_cos.json")
    r.save_json(workdir / "saved.json.gz")
    status, _, err = inproc("show", "saved.json.gz")
    assert status == 0, err
    assert last_line(err) == f"inductor-lens: wrote {workdir / 'saved.html'}"
    page = (workdir / "saved.html").read_text()
    assert page.lstrip().lower().startswith("<!doctype html") and r.torch_version in page


def test_every_bad_report_is_one_line_exit_2_no_traceback(inproc, workdir, tmp_path):
    cases = _bad_inputs(tmp_path)
    for name, path, words in cases:
        status, out, err = inproc("show", str(path), "-o", str(tmp_path / "page.html"))
        assert status == 2, (name, err)
        assert err.count("\n") == 1 and words in err and str(path) in err, (name, err)
        assert "Traceback" not in err
    assert not (tmp_path / "page.html").exists()


def test_help_lists_the_commands(inproc):
    status, out, _ = inproc("--help")
    assert status == 0
    for word in ("run", "demo", "show"):
        assert word in out
    status, out, _ = inproc("run", "--help")
    assert status == 0 and "SCRIPT [ARGS...]" in out and "BEFORE SCRIPT" in out
    for option in ("-o, --output PATH", "--json PATH", "--title T", "-q, --quiet"):  # each one explained
        assert option in out
    # torchrun's, as argparse prints the others' (it printed the module's docstring, :mod: markup and all)
    status, out, _ = inproc("torchrun", "--help")
    assert status == 0 and out.startswith("usage: inductor-lens torchrun ") and "``" not in out and ":mod:" not in out
    for option in ("-o, --output PAGE", "--json-dir DIR", "--title T", "--timeout S", "-q, --quiet"):
        assert option in out
    assert "default: no limit" in out and "exit status 124" in out


def test_show_of_a_report_with_nan_and_surrogates_embeds_the_fixed_data(inproc, workdir):
    import base64
    import gzip
    import re

    text = report_io_dumps_text()
    text = text.replace('"share":0.5', '"share":NaN').replace('"title":""', '"title":"t\\ud800"')
    (workdir / "odd.json").write_text(text)
    status, _, err = inproc("show", "odd.json")
    assert status == 0, err
    page = (workdir / "odd.html").read_text(encoding="utf-8")
    blob = re.search(r'id="il-report">([^<]*)<', page).group(1)
    data = json.loads(gzip.decompress(base64.b64decode(blob)))
    assert data["compiles"][0]["kernels"][0]["profile"]["share"] is None and data["title"] == "t\\ud800"
    assert any("NaN or infinite" in str(d) for d in data["diagnostics"])


def report_io_dumps_text() -> str:
    from inductor_lens.report import io as report_io
    from tests.report.test_report_io import _report

    return report_io.dumps(_report()).decode()


def test_undecodable_argument_never_costs_the_old_report(inproc, workdir):
    """`run --json old.json s.py $'\\xff'`: the argument reaches Python as a lone surrogate."""
    (workdir / "old.json").write_bytes(b"x" * 30_000)
    status, _, err = inproc("run", "--json", "old.json", "script.py", "--nocompile", os.fsdecode(b"\xff"))
    assert status == 1 and "nothing compiled" in err  # (the script compiles nothing with --nocompile)
    report = inductor_lens.load(workdir / "old.json")
    assert report.title == "script.py --nocompile \\udcff"


def test_show_streams_a_report_in_the_line_layout_and_parses_others_whole(inproc, workdir):
    """The page embeds the report file's own JSON whether it was read compile by compile (the lens's line
    layout) or whole (a file in one line), and says the same counts."""
    import base64
    import gzip
    import re

    from tests.report.test_report_io import _three_compiles

    r = _three_compiles()
    r.save_json(workdir / "lines.json")
    (workdir / "one.json").write_text(json.dumps(r.to_dict(compact=True)))
    assert (workdir / "lines.json").read_text().count("\n") == 5
    for name in ("lines", "one"):
        status, _, err = inproc("show", f"{name}.json")
        assert status == 0, err
        page = (workdir / f"{name}.html").read_text(encoding="utf-8")
        blob = re.search(r'id="il-report">([^<]*)<', page).group(1)
        assert gzip.decompress(base64.b64decode(blob)) == (workdir / f"{name}.json").read_bytes()
        assert "3 compile(s), 3 kernel(s), 0 graph break(s)" in page


def test_run_ir_option_reaches_the_capture(monkeypatch):
    """``run --ir SCRIPT`` asks the capture for the IR stages; without it they are off (issue 24)."""
    script, args, opts = cli._split_run_args(["--ir", "-q", "train.py", "--ir"])
    assert (script, args, opts["ir"], opts["quiet"]) == ("train.py", ["--ir"], True, True)
    assert cli._split_run_args(["train.py"])[2]["ir"] is False
    seen = {}

    class Spy:
        def __init__(self, **kwargs):
            seen.update(kwargs)

        def __enter__(self):
            raise RuntimeError("stop here")

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr("inductor_lens.capturing.pipeline.capture", Spy)
    run = cli._ScriptRun("train.py", [], "t", quiet=True, ir=True)
    with pytest.raises(RuntimeError, match="stop here"):
        run.run()
    assert seen["ir"] is True


@pytest.mark.parametrize(
    "args",
    [
        ["t.log"],
        ["t.log", "-o", "p.html"],
        ["-q", "--json", "r.json", "t.log", "--output", "p.html"],
        ["--quiet", "dir/"],
        ["-o", "p.html", "t.log", "-q", "--json", "r.json"],
        ["", "-o", "p.html"],
        ["t.log", "-o", "-5"],  # argparse takes a negative-number-like value: parsed there
        ["t.log", "--out", "p.html"],  # an abbreviation
        ["t.log", "--output=p.html"],
        ["t.log", "-op.html"],
        ["t.log", "-qo", "p.html"],
        ["t.log", "-o", "a.html", "-o", "b.html"],  # a repeated option: the last wins there
        ["t.log", "-q", "-q"],
        ["--", "-t.log"],
        ["a.log", "b.log"],
        ["t.log", "-o"],
        ["-o", "p.html"],
        ["t.log", "--help"],
        [],
    ],
)
def test_import_trace_arguments_in_their_plain_forms_are_read_as_argparse_reads_them(args):
    """``import-trace`` starts without argparse (and the 1.8 MB it loads) where its arguments are in the plain forms:
    read exactly as argparse reads them; every other form is left to argparse (None), which parses it or says what
    is wrong."""
    plain = cli._plain_import_trace(args)
    try:
        parsed = vars(cli._parser().parse_args(["import-trace", *args]))
    except SystemExit:
        parsed = None
    if plain is not None:
        assert vars(plain) == parsed
    plainly_written = all(not a.startswith("-") or a in ("-o", "--output", "--json", "-q", "--quiet") for a in args)
    if parsed is not None and plainly_written and len(set(args)) == len(args) and "-5" not in args:
        assert plain is not None  # the plain forms are not left to argparse
    assert plain is None or args[:1] != ["--"]


def test_diff_names_two_reports_by_their_files_where_their_titles_do_not_tell_them_apart():
    """``inductor-lens diff a.json b.json``'s page said "A: report A -> B: report B" for two reports without titles,
    and one title twice for two runs of one script: the files name them."""
    from inductor_lens.report.model import Report
    from inductor_lens.views.diff_cli import named_by_files

    def titled(t):
        return Report(torch_version="2.13.0", device="cpu", compiles=[], title=t)

    pairs = {
        ("", ""): ("seq16.json", "seq32.json"),
        ("train", "train"): ("train (seq16.json)", "train (seq32.json)"),
        ("relu", "gelu"): ("relu", "gelu"),
        ("train", ""): ("train (seq16.json)", "seq32.json"),
    }
    for (ta, tb), want in pairs.items():
        a, b = titled(ta), titled(tb)
        got = named_by_files(a, b, "/runs/seq16.json", "runs/seq32.json")
        assert (got[0].title, got[1].title) == want
        assert (a.title, b.title) == (ta, tb)  # the loaded reports are left as they are


def test_a_page_asked_for_without_the_built_front_end_is_refused_before_the_script_runs(
    inproc, workdir, monkeypatch, tmp_path
):
    """A clean clone without ``make bundle`` ran a whole capture (40 s in the trial) and only then failed at writing
    the page (nu22): the missing bundle is said first, nothing runs; a JSON-only run needs no front end."""
    from inductor_lens.views import frontend

    monkeypatch.setattr(frontend, "STATIC", tmp_path)  # an empty folder: no lens.js, lens.css, layout-worker.js
    marker = workdir / "ran.txt"
    (workdir / "marks.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    status, out, err = inproc("run", "-o", "page.html", "marks.py")
    assert status == 2 and out == "" and not marker.exists(), (out, err)
    assert "cannot write a page:" in err and "make bundle" in err and err.count("\n") == 1, err
    status, _, err = inproc("run", "--json", "only.json", "marks.py")
    assert status == 1 and marker.exists() and "nothing compiled" in err, err  # it ran (and compiled nothing)


def test_the_compare_page_is_written_without_anywidget_and_the_cli_module_runs_as_a_script(tmp_path):
    """nu30 D7, D8: ``inductor-lens diff -o page.html`` died with a traceback where anywidget was not importable
    (the compare's page module defined the widget), though the report's page needs none; ``python -m
    inductor_lens.views.cli ...`` did nothing and exited 0 (no ``__main__`` block)."""
    fixtures = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
    a, b = fixtures / "cpu_profiled_mlp_default.json", fixtures / "cpu_profiled_mlp_max_autotune.json"
    out = tmp_path / "diff.html"
    code = (
        "import sys; sys.modules['anywidget'] = None\n"  # import anywidget raises ImportError
        "from inductor_lens.views import cli\n"
        f"sys.exit(cli.main(['diff', {str(a)!r}, {str(b)!r}, '-o', {str(out)!r}]))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert p.returncode == 0 and out.stat().st_size > 10_000, p.stderr[-2000:]
    out2 = tmp_path / "diff2.html"
    p = subprocess.run(
        [sys.executable, "-m", "inductor_lens.views.cli", "diff", str(a), str(b), "-o", str(out2)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert p.returncode == 0 and out2.read_bytes() == out.read_bytes(), p.stderr[-2000:]
