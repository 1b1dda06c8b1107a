"""The front end's pure-JS unit tests (js/test/*.mjs, `npm test`) run under node as part of pytest, so
CI runs them. A missing node FAILS (CI builds the bundle with it); it is never a silent skip."""

import pathlib
import shutil
import subprocess

import pytest

JS = pathlib.Path(__file__).resolve().parent.parent / "js"


def test_js_unit_tests_pass():
    node = shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH; the front end's unit tests need it", pytrace=False)
    tests = sorted(str(p.relative_to(JS)) for p in (JS / "test").glob("*.test.mjs"))
    assert tests, "no JS unit tests found"
    r = subprocess.run([node, "--test", *tests], cwd=JS, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "# fail 0" in r.stdout and "# pass 0" not in r.stdout
