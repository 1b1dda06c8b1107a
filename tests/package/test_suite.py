"""The test infrastructure itself: layers that need no torch never load it, markers follow fixtures, and
the build hook rebuilds the front-end bundle exactly when js/ changed."""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _py(code: str, cwd=REPO, env=None) -> subprocess.CompletedProcess:
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH", "")] if p)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_model_tests_run_without_importing_torch_or_playwright():
    r = _py("""
        import sys, pytest
        rc = pytest.main(["-q", "-p", "no:cacheprovider", "tests/report/test_model.py", "-m", "not compile"])
        print("RC", int(rc), "torch" in sys.modules, "playwright" in sys.modules)
    """)
    last = r.stdout.strip().splitlines()[-1]
    assert last == "RC 0 False False", r.stdout[-3000:] + r.stderr[-2000:]


def test_markers_follow_the_fixtures_a_test_uses():
    r = _py("""
        import pytest
        pytest.main(["-q", "-p", "no:cacheprovider", "--collect-only", "-m", "compile",
                     "tests/views/test_html_export.py", "tests/views/test_widget_browser.py"])
    """)
    selected = {line.split("::")[1].split("[")[0] for line in r.stdout.splitlines() if "::" in line}
    # independent expectation: the tests whose parameters (their signature, read by ast) name a capture fixture
    captures = {"sin_cos_report", "training_report", "break_recompile_report", "stack_training_report"}
    captures |= {"sequential_mlp_report", "nested_sequential_training_report", "aoti_pair"}
    expected = {
        fn.name
        for name in ("test_html_export.py", "test_widget_browser.py")
        for fn in ast.parse((REPO / "tests" / "views" / name).read_text()).body
        if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_") and {a.arg for a in fn.args.args} & captures
    }
    assert expected and selected == expected


# -- the build hook: the bundle is rebuilt exactly when js/ changed ---------------------------------------


def _load_hook(root: pathlib.Path):
    spec = importlib.util.spec_from_file_location("hatch_build_copy", root / "hatch_build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def tree(tmp_path):
    """A copy of the build inputs (hatch_build.py, js/ without node_modules, a built bundle)."""
    shutil.copy(REPO / "hatch_build.py", tmp_path)
    shutil.copytree(REPO / "js", tmp_path / "js", ignore=shutil.ignore_patterns("node_modules"))
    static = tmp_path / "inductor_lens" / "static"
    static.mkdir(parents=True)
    for f in _load_hook(REPO).BUNDLE:  # lens.js, lens.css, layout-worker.js and its .gz
        (static / f).write_text(f"built {f}")
    return tmp_path


def test_bundle_is_fresh_only_for_the_sources_it_was_built_from(tree):
    hook = _load_hook(tree)
    assert hook.bundle_state()[0] == "stale"  # no record of its sources
    hook.STAMP.write_text(hook.source_hash() + "\n")
    assert hook.bundle_state()[0] == "fresh"
    assert hook.ensure_bundle(log=lambda m: None) == "fresh"  # nothing run: npm is never called
    src = tree / "js" / "src" / "index.js"
    src.write_text(src.read_text() + "\n// changed\n")
    assert hook.bundle_state()[0] == "stale"
    (tree / "js" / "src" / "new_module.js").write_text("export const x = 1;\n")
    src.write_text(src.read_text().replace("\n// changed\n", ""))
    assert hook.bundle_state()[0] == "stale"  # a new file changes the sources too
    (tree / "js" / "src" / "new_module.js").unlink()
    assert hook.bundle_state()[0] == "fresh"


def test_without_node_a_missing_bundle_fails_clearly_and_a_stale_one_is_kept(tree, monkeypatch):
    hook = _load_hook(tree)
    monkeypatch.setattr(hook.shutil, "which", lambda name, *a, **k: None)
    said = []
    assert hook.ensure_bundle(log=said.append) == "kept stale"
    assert "node/npm are not on PATH" in said[0]
    for f in hook.BUNDLE:
        (hook.STATIC / f).unlink()
    with pytest.raises(hook.BundleError, match="missing and node/npm are not on PATH"):
        hook.ensure_bundle(log=said.append)


def test_a_users_own_python3_kernel_spec_never_runs_the_suites_notebooks(tmp_path, monkeypatch):
    """A "python3" kernel spec in the user's Jupyter data folder (``ipykernel install --user`` from another venv)
    wins over the running environment's own: every notebook test ran in that venv, against the inductor_lens
    installed there (the wheel test failed, finding the package in a stranger's venv). The suite's Jupyter data
    folder is its own (tests/conftest.py), so the kernel it starts is this environment's."""
    from jupyter_client.kernelspec import KernelSpecManager

    home = tmp_path / "home"
    spec = home / ".local" / "share" / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        '{"argv": ["/elsewhere/venv/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], '
        '"display_name": "Python 3 (elsewhere)", "language": "python"}'
    )
    monkeypatch.setenv("HOME", str(home))
    # the user's folder first, as outside a venv, or in the wheel test's venv (its kernel spec is in the torch layer)
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "0")
    argv = KernelSpecManager().get_kernel_spec("python3").argv
    assert argv[0] != "/elsewhere/venv/bin/python", argv


def test_the_browser_tests_drive_the_headless_shell_where_it_is_installed_else_the_browser(monkeypatch):
    """The headless shell is half the CPU a page (tests/_browser_fixtures.py): picked first where it is on PATH (an
    A/B run once left the browser first, unseen: every browser test passed on either), the browser where it is not."""
    from tests import _browser_fixtures as fixtures

    on_path = {"chromium-headless-shell": "/usr/bin/chromium-headless-shell", "chromium": "/usr/bin/chromium"}
    monkeypatch.setattr(fixtures.shutil, "which", on_path.get)
    assert fixtures.chromium_exe() == "/usr/bin/chromium-headless-shell"
    del on_path["chromium-headless-shell"]
    assert fixtures.chromium_exe() == "/usr/bin/chromium"
