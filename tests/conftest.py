"""Shared test set-up. Real compiles are slow on CPU: each test model is captured once per session
(``tests/_capture_fixtures.py``) and its report shared by all tests; browser fixtures (Chromium, a real
JupyterLab server) live in ``tests/_browser_fixtures.py``. Neither module imports torch or playwright at
collection: a test that needs no compile (model, JS, recorded GPU reports) never loads them.

Markers (pyproject.toml) select layers: ``make test-fast`` runs ``-m "not browser and not kernel and not
slow and not wheel"``. The markers that follow from a fixture are added here, so a test cannot use a
compile, a kernel or a browser without carrying its marker.
"""

import pytest

pytest_plugins = ["tests._capture_fixtures", "tests._browser_fixtures"]

FIXTURE_MARKERS = {"kernel": "kernel", "chromium_browser": "browser", "offline_page": "browser",
                   "jupyter_lab": "browser"}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config, items):
    capture = config.pluginmanager.get_plugin("tests._capture_fixtures")
    markers = dict(FIXTURE_MARKERS, **{name: "compile" for name in capture.CAPTURE_FIXTURES})
    for item in items:
        for name in set(getattr(item, "fixturenames", ())) & markers.keys():
            item.add_marker(getattr(pytest.mark, markers[name]))
