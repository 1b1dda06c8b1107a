"""The front end's pure-JS unit tests (js/test/*.mjs, `npm test`) run under node as part of pytest, so
CI runs them. A missing node FAILS (CI builds the bundle with it); it is never a silent skip."""

import json
import pathlib
import shutil
import subprocess

import pytest

JS = pathlib.Path(__file__).resolve().parents[2] / "js"


def test_js_unit_tests_pass():
    node = shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH; the front end's unit tests need it", pytrace=False)
    tests = sorted(str(p.relative_to(JS)) for p in (JS / "test").glob("*.test.mjs"))
    assert tests, "no JS unit tests found"
    r = subprocess.run([node, "--test", *tests], cwd=JS, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "# fail 0" in r.stdout and "# pass 0" not in r.stdout


def test_js_fixtures_are_the_recorded_reports_as_python_upgrades_them():
    """js/test/fixtures/*.v2.json are what tests/fixtures/make_js_fixtures.py writes today: the front end's
    unit tests read schema-2 data, as the page does (it never receives a version-1 report)."""
    from tests.fixtures.make_js_fixtures import NAMES, OUT, js_fixture

    for name, facts_only in NAMES.items():
        data = json.loads((OUT / f"{name}.v2.json").read_text(encoding="utf-8"))
        assert data["schema_version"] >= 2
        assert (OUT / f"{name}.v2.json").read_text(encoding="utf-8") == js_fixture(name, facts_only), (
            f"{name}.v2.json is stale: run `PYTHONPATH=. python tests/fixtures/make_js_fixtures.py`"
        )
