"""Shared test set-up. Real compiles are slow on CPU: each test model is captured once per session
(``tests/_capture_fixtures.py``) and its report shared by all tests; browser fixtures live in
``tests/_browser_fixtures.py``."""

import os

pytest_plugins = ["tests._capture_fixtures"]
if os.path.exists(os.path.join(os.path.dirname(__file__), "_browser_fixtures.py")):
    pytest_plugins.append("tests._browser_fixtures")
