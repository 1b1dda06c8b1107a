"""Shared test set-up. Real compiles are slow on CPU: each test model is captured once per session
(``tests/_capture_fixtures.py``) and its report shared by all tests; browser fixtures (Chromium, a real
JupyterLab server) live in ``tests/_browser_fixtures.py``."""

pytest_plugins = ["tests._capture_fixtures", "tests._browser_fixtures"]
