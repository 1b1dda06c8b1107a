"""The real ``inductor-lens`` command in a subprocess: run, demo, show, and every error exit."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import inductor_lens

REPO = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = textwrap.dedent("""\
    import json, sys, torch
    print(json.dumps({"argv": sys.argv, "name": __name__}))
    def f(x):
        return torch.sin(x) ** 2 + torch.cos(x) ** 2
    compiled = torch.compile(f)
    if "--nocompile" not in sys.argv:  # tests that only check argv/exit handling skip the C++ build
        compiled(torch.randn(8))
    if "--boom" in sys.argv:
        raise ValueError("boom after the compile")
    if "--exit3" in sys.argv:
        sys.exit(3)
""")


def lens(*args, cwd, module=False):
    """Run the installed console script (or ``python -m inductor_lens``) in ``cwd``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    exe = pathlib.Path(sys.executable).with_name("inductor-lens")
    cmd = [sys.executable, "-m", "inductor_lens", *args] if module else [str(exe), *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def last_line(proc) -> str:
    return proc.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "script.py").write_text(SCRIPT)
    return d


@pytest.fixture(scope="module")
def ran(workdir):
    """One ``inductor-lens run`` shared by the tests that read its outputs."""
    return lens("run", "script.py", "pos", "--flag", "1", "-o", "out.html", "--json", "out.json", cwd=workdir)


def test_console_script_is_installed():
    assert pathlib.Path(sys.executable).with_name("inductor-lens").exists(), \
        "the inductor-lens console script is missing: pip install -e ."


def test_run_runs_the_script_as_python_would(ran, workdir):
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout.strip().splitlines()[0])
    assert seen == {"argv": ["script.py", "pos", "--flag", "1"], "name": "__main__"}
    report = inductor_lens.load(workdir / "out.json")
    assert [k.name for k in report.kernels] == ["cpp_fused_add_cos_pow_sin_0"]
    assert report.compiles[0].frame == "f"
    html = (workdir / "out.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    # progress on stderr while compiling, and the last line says where the files are
    assert "kernel: cpp_fused_add_cos_pow_sin_0 (0/0 inference)" in ran.stderr
    assert "phase: Scheduler.codegen" in ran.stderr
    assert "pass.post_grad_passes" not in ran.stderr
    assert str(workdir / "out.html") in last_line(ran) and str(workdir / "out.json") in last_line(ran)
    assert "1 compile(s), 1 kernel(s)" in last_line(ran)


def test_script_arguments_after_double_dash_are_the_scripts(workdir):
    proc = lens("run", "--json", "dd.json", "script.py", "--", "-o", "mine", "--nocompile", module=True,
                cwd=workdir)
    assert proc.returncode == 1 and "nothing compiled" in last_line(proc), proc.stderr
    assert json.loads(proc.stdout.splitlines()[0])["argv"] == ["script.py", "-o", "mine", "--nocompile"]
    assert (workdir / "dd.json").exists() and not (workdir / "mine").exists()


def test_script_that_raises_exits_1_and_still_writes_the_report(workdir):
    proc = lens("run", "script.py", "--boom", "-o", "boom.html", "--json", "boom.json", cwd=workdir)
    assert proc.returncode == 1
    line = last_line(proc)
    assert line.startswith("inductor-lens: error: script.py raised ValueError: boom after the compile")
    assert str(workdir / "boom.html") in line
    report = inductor_lens.load(workdir / "boom.json")
    assert len(report.kernels) == 1
    assert any(d.code == "user_code_raised" and "raised ValueError" in d.message for d in report.diagnostics)
    # the script's own traceback is shown, starting at the script (not at runpy or the CLI)
    tb = proc.stderr[proc.stderr.index("Traceback"):]
    assert 'File "script.py", line 9' in tb and "runpy" not in tb and "cli.py" not in tb


def test_script_exit_status_is_kept(workdir):
    proc = lens("run", "script.py", "--exit3", "--nocompile", "--json", "exit3.json", cwd=workdir)
    assert proc.returncode == 3
    assert "script.py exited with status 3" in last_line(proc)
    assert (workdir / "exit3.json").exists()


def test_missing_script_is_one_line_exit_2(workdir):
    proc = lens("run", "nope.py", "-o", "x.html", cwd=workdir)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "inductor-lens: error: run: no such script: nope.py"
    assert not (workdir / "x.html").exists()


def test_run_without_script_is_a_usage_error(workdir):
    proc = lens("run", "-o", "x.html", cwd=workdir)
    assert proc.returncode == 2 and "no SCRIPT given" in proc.stderr


def test_nothing_compiled_exits_1_and_says_why(workdir):
    (workdir / "wraps_only.py").write_text("import torch\ng = torch.compile(lambda x: x + 1)\n")
    proc = lens("run", "wraps_only.py", "--json", "none.json", cwd=workdir)
    assert proc.returncode == 1
    line = last_line(proc)
    assert line.startswith("inductor-lens: error: nothing compiled:")
    assert "only wraps the function" in line and "first call" in line


def test_demo_writes_one_report_with_fused_and_extern_kernels(tmp_path):
    proc = lens("demo", "--json", "demo.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "lens-demo.html").exists(), "demo's default output is lens-demo.html"
    assert str(tmp_path / "lens-demo.html") in last_line(proc)
    report = inductor_lens.load(tmp_path / "demo.json")
    assert [c.frame for c in report.compiles] == ["sin_cos", "forward"]
    kernels = {k.name: k.language for k in report.kernels}
    assert kernels["cpp_fused_add_cos_pow_sin_0"] == "cpp"
    assert "extern" in kernels.values(), f"the MLP's matmul should stay an extern kernel: {kernels}"
    assert any(lang == "cpp" and "relu" in name for name, lang in kernels.items())


def test_show_renders_a_saved_report(ran, workdir):
    proc = lens("show", "out.json", "-o", "shown.html", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert last_line(proc) == f"inductor-lens: wrote {workdir / 'shown.html'}"
    assert (workdir / "shown.html").read_text().lstrip().lower().startswith("<!doctype html")


@pytest.mark.parametrize("content, reason", [
    (None, "no such report"),
    ("{not json", "not a readable inductor_lens report"),
    ('{"schema_version": 999}', "newer than this inductor_lens reads"),
])
def test_show_errors_are_one_line_exit_2(workdir, content, reason):
    path = workdir / "bad.json"
    if content is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(content)
    proc = lens("show", "bad.json", "-o", "bad.html", cwd=workdir)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and reason in proc.stderr


def test_help_lists_the_commands(workdir):
    proc = lens("--help", module=True, cwd=workdir)
    assert proc.returncode == 0
    for word in ("run", "demo", "show"):
        assert word in proc.stdout
    proc = lens("run", "--help", cwd=workdir)
    assert proc.returncode == 0 and "SCRIPT [ARGS...]" in proc.stdout
    for option in ("-o, --output PATH", "--json PATH", "--title T", "-q, --quiet"):  # each one explained
        assert option in proc.stdout
