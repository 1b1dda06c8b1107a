"""The widget in marimo: a marimo notebook runs ``inductor_lens.inspect(...)`` on a tiny function and shows
``mo.ui.anywidget(report.widget())``; ``marimo run`` serves it and headless Chromium opens it. The widget
renders, and a click on a box shows that kernel's source (compared with the report the notebook saved)."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

import inductor_lens
from tests._browser_fixtures import REPO, PageWatch, _free_port, _require_bundle, serve, source_text

pytestmark = [pytest.mark.browser, pytest.mark.marimo]

NOTEBOOK = textwrap.dedent("""\
    import marimo

    app = marimo.App()


    @app.cell
    def _():
        import marimo as mo
        import torch
        import inductor_lens

        def sin_cos(x):
            return torch.sin(x) ** 2 + torch.cos(x) ** 2

        report = inductor_lens.inspect(sin_cos, torch.randn(64), title="marimo")
        report.save_json("marimo-report.json")
        lens = mo.ui.anywidget(report.widget())
        lens
        return


    if __name__ == "__main__":
        app.run()
""")


@pytest.fixture(scope="module")
def marimo_app(tmp_path_factory):
    """``marimo run`` serving the notebook: yields (url, its directory)."""
    pytest.importorskip("marimo", reason="marimo is a test extra: pip install -e '.[test]'")
    _require_bundle()
    root = tmp_path_factory.mktemp("marimo")
    (root / "lens_app.py").write_text(NOTEBOOK, encoding="utf-8")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env = dict(env, PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    cmd = [
        sys.executable,
        "-m",
        "marimo",
        "run",
        "lens_app.py",
        "--headless",
        "--no-token",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-sandbox",
    ]
    yield from serve("marimo", cmd, root, env, f"http://127.0.0.1:{port}/")


def test_widget_renders_in_marimo_and_a_click_shows_the_kernel_source(marimo_app, chromium_browser):
    url, root = marimo_app
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    watch = PageWatch(page)
    try:
        page.goto(url)
        lens = page.locator(".il-root").first
        # the cell compiles on a CPU when the session starts: seconds, minutes on a loaded machine
        try:
            lens.locator('[data-view="fusion"] .il-graph[data-ready="1"]').wait_for(timeout=900000)
        except Exception as e:
            log = (root / "server.log").read_text(errors="replace")[-3000:]
            pytest.fail(
                f"the lens did not render in marimo ({type(e).__name__}); page text:\n"
                f"{page.inner_text('body')[:1500]}\nserver log:\n{log}\npage errors: {watch.errors}",
                pytrace=False,
            )
        report = inductor_lens.load(root / "marimo-report.json")
        (compile_,) = report.compiles
        kernels = {k.name: k for k in compile_.kernels}
        (node,) = [n for n in compile_.fused_nodes if n.kernel in kernels]
        assert node.kernel.startswith("cpp_fused_")
        box = lens.locator(f'[data-view="fusion"] [data-node="{node.name}"]')
        assert box.get_attribute("data-kernel") == node.kernel
        box.click()
        src = lens.locator('[data-role="kernel-source"]')
        assert source_text(src).strip() == kernels[node.kernel].source.strip()
        assert "sin_cos" in lens.locator('[data-role="user-stack"]').inner_text()
        assert watch.errors == [], watch.errors
    finally:
        context.close()
