"""``%%inductor_lens`` in a real JupyterLab (headless Chromium): the progress line gives way to the widget, and a
click on a fused-node box shows that kernel's source."""

from __future__ import annotations

import pytest

import inductor_lens
from tests._browser_fixtures import (
    PageWatch,
    cell_text,
    close_notebook,
    lab_errors,
    open_notebook,
    run_all,
    source_text,
    write_notebook,
)

CELL = """\
%%inductor_lens -f f --json lab.json
def f(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2
print("printed by the cell")
f(torch.randn(64)).shape"""


@pytest.mark.browser
def test_magic_cell_in_jupyterlab_click_box_shows_kernel_source(jupyter_lab, lab_page):
    base, root = jupyter_lab
    write_notebook(root / "magic.ipynb", ["%load_ext inductor_lens\nimport torch", CELL, "display(f)"])
    page = lab_page
    watch = PageWatch(page, allow_console=("favicon",))
    try:
        open_notebook(page, base, "magic.ipynb")
        run_all(page, timeout_ms=300000)
        report = inductor_lens.load(root / "lab.json")
        (kernel,) = report.kernels
        node = next(n for n in report.compiles[0].fused_nodes if n.kernel == kernel.name)

        # the cell's own output is there, no progress line is left: the cell's value came after it, so the widget
        # comes after that, and the line says where Inductor started (never an empty output)
        text = cell_text(page, 1)
        assert "printed by the cell" in text and "torch.Size([64])" in text
        panel = page.locator(".jp-NotebookPanel:visible")
        cell = panel.locator(".jp-CodeCell").nth(1)
        assert cell.locator('[data-role="lens-progress"]').count() == 0
        assert "Inductor compiled from here" in cell.locator('[data-role="lens-compiled-here"]').inner_text()
        lens = cell.locator(".il-root")
        assert lens.count() == 1
        lens.locator('[data-view="fusion"] .il-graph[data-ready="1"]').wait_for(timeout=60000)

        box = lens.locator(f'[data-view="fusion"] [data-node="{node.name}"]')
        assert box.get_attribute("data-kernel") == kernel.name == "cpp_fused_add_cos_pow_sin_0"
        box.click()
        assert source_text(lens.locator('[data-role="kernel-source"]')).strip() == kernel.source.strip()
        assert lens.locator('[data-role="compiler-stack"]').inner_text().strip()

        # display(f) in the next cell shows f's widget again
        again = panel.locator(".jp-CodeCell").nth(2).locator(".il-root")
        again.locator('[data-view="fusion"] .il-graph[data-ready="1"]').wait_for(timeout=60000)
        assert again.locator(f'[data-node="{node.name}"]').get_attribute("data-kernel") == kernel.name
        assert not lab_errors(watch, root), watch.errors
    finally:
        watch.stop()
        close_notebook(page)


_RACE_LOG = """\
[W 2026-12-03 22:54:05.012 ServerApp] Notebook magic.ipynb is not trusted
[E 2026-12-03 22:54:05.393 ServerApp] Uncaught exception GET /api/kernels?1796338445385 (127.0.0.1)
    HTTPServerRequest(protocol='http', host='127.0.0.1:36157', method='GET', uri='/api/kernels?1796338445385')
    Traceback (most recent call last):
      File ".../jupyter_server/services/kernels/kernelmanager.py", line 544, in kernel_model
        "last_activity": isoformat(kernel.last_activity),
    traitlets.traitlets.TraitError: The 'last_activity' trait of a ServerKernelManager instance expected a datetime, \
not the NoneType None.
[W 2026-12-03 22:54:05.402 ServerApp] wrote error: 'Unhandled error'
[E 2026-12-03 22:54:05.410 ServerApp] 500 GET /api/kernels?1796338445385 (b4f8@127.0.0.1) 19.25ms referer=x
[E 2026-12-03 22:54:06.001 ServerApp] Uncaught exception GET /api/kernels?1796338449999 (127.0.0.1)
    Traceback (most recent call last):
    KeyError: 'something else'
[E 2026-12-03 22:54:06.010 ServerApp] 500 GET /api/kernels?1796338449999 (b4f8@127.0.0.1) 3.1ms referer=x
[E 2026-12-03 22:54:07.010 ServerApp] 500 GET /api/contents/magic.ipynb?1 (b4f8@127.0.0.1) 3.1ms referer=x
"""


def test_only_jupyter_servers_own_kernel_list_race_is_forgiven(tmp_path):
    """CI once failed on a 500 that JupyterLab's poll of /api/kernels got while a kernel was starting (Jupyter
    Server's race, not ours). ``lab_errors`` forgives that 500 and no other: not the same URL failing for another
    cause, not another URL, not a console error without a URL."""
    (tmp_path / "server.log").write_text(_RACE_LOG, encoding="utf-8")
    failed = "console: Failed to load resource: the server responded with a status of 500 (Internal Server Error)"
    base = "http://127.0.0.1:36157"

    class Watch:
        errors = [
            f"{failed} [{base}/api/kernels?1796338445385]",
            f"{failed} [{base}/api/kernels?1796338449999]",
            f"{failed} [{base}/api/contents/magic.ipynb?1]",
            failed,
            "pageerror: TypeError: x is undefined",
        ]

    assert lab_errors(Watch, tmp_path) == Watch.errors[1:]
