"""The widget in a real JupyterLab, driven by headless Chromium."""

import pathlib
import time

import pytest

import inductor_lens
from inductor_lens.views.widget import LensWidget
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


def _kernel_nodes(compile_):
    kernels = {k.name: k for k in compile_.kernels}
    return [(n, kernels[n.kernel]) for n in compile_.fused_nodes if n.kernel in kernels]


# ---- Python side (no browser) ----------------------------------------------------------------


def _run_to_first_lens(page, base, notebook):
    """Open ``notebook`` in JupyterLab, run all its cells, and wait for its first lens's graph: (panel, lens)."""
    open_notebook(page, base, notebook)
    run_all(page)
    panel = page.locator(".jp-NotebookPanel:visible")
    lens = panel.locator(".il-root").first
    lens.locator('[data-view="fusion"] .il-graph[data-ready="1"]').wait_for(timeout=60000)
    return panel, lens


def test_widget_traits_and_cheap_repr(training_report):
    w = LensWidget(training_report)
    assert w.compile == training_report.compiles[0].id
    assert w.view == "fusion" and w.selected == ""
    assert isinstance(w._report, bytes) and len(w._report) > 0
    assert repr(w).startswith("<LensWidget: 2 compile(s)")
    assert len(repr(w)) < 200
    with pytest.raises(ValueError, match="must be one of"):
        LensWidget(training_report, view="nope")
    with pytest.raises(KeyError, match="compiles:"):
        LensWidget(training_report, compile="9/9")
    # compile is checked on every change, not only in __init__; Compile.compile_id resolves to the id
    import traitlets

    with pytest.raises(traitlets.TraitError, match="compiles:"):
        w.compile = "9/9"
    assert w.compile == training_report.compiles[0].id
    w.compile = training_report.compiles[1].id
    assert w.compile == training_report.compiles[1].id
    w.compile = training_report.compiles[0].compile_id  # "0/0": the first compile with that compile_id
    assert w.compile == training_report.compiles[0].id
    with pytest.deprecated_call(match="compile="):  # the 0.1 name of the trait
        old = LensWidget(training_report, compile_id=training_report.compiles[1].id)
    assert old.compile == training_report.compiles[1].id
    with pytest.deprecated_call(match="now LensWidget.compile"):
        old.compile_id = training_report.compiles[0].id
    assert old.compile == training_report.compiles[0].id
    w.view = "source"
    w.view = "kernels"


def test_widget_answers_engine_and_export_requests(training_report, monkeypatch):
    from inductor_lens.views import frontend
    from inductor_lens.views.html import to_html

    w = LensWidget(training_report)
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    w._on_msg(w, {"type": "engine", "id": "e1"}, [])
    w._on_msg(w, {"type": "export", "id": "x1"}, [])
    (c1, b1), (c2, b2) = sent
    assert c1 == {"type": "engine", "id": "e1"} and b1[0][:2] == b"\x1f\x8b"
    assert c2["id"] == "x1" and c2["filename"].endswith(".html") and b2[0].startswith(b"<!doctype html>")
    assert c2["part"] == 0 and c2["last"] is True  # a page under EXPORT_PART: one message
    page = to_html(training_report).encode("utf-8")
    assert b2 == [page]

    # a page larger than a part goes in parts of EXPORT_PART bytes, in order, the last one said: no message
    # holds the whole page, and the parts joined are the page
    sent.clear()
    monkeypatch.setattr(frontend, "EXPORT_PART", 100_000)
    w._on_msg(w, {"type": "export", "id": "x2"}, [])
    assert len(sent) == -(-len(page) // 100_000) > 5
    assert [c["part"] for c, _ in sent] == list(range(len(sent)))
    assert [c["last"] for c, _ in sent] == [False] * (len(sent) - 1) + [True]
    assert all(c["id"] == "x2" and c["filename"] == c2["filename"] for c, _ in sent)
    assert all(len(b[0]) == 100_000 for _, b in sent[:-1]) and 0 < len(sent[-1][1][0]) <= 100_000
    assert b"".join(b[0] for _, b in sent) == page

    # an error while the page is made: the parts so far, then the error under the same id (the front end
    # drops what came); the spool of the page is closed
    sent.clear()
    closed = []

    def failing():
        try:
            yield page[:250_000]
            raise OSError("disk full")
        finally:
            closed.append(True)

    monkeypatch.setattr("inductor_lens.views.html.page_parts", lambda report: failing())
    w._on_msg(w, {"type": "export", "id": "x3"}, [])
    assert [c.get("part") for c, _ in sent] == [0, None] and sent[-1][0]["error"] == "OSError: disk full"
    assert closed == [True]


# ---- in JupyterLab -----------------------------------------------------------------------------


_TOOLBAR_BOXES = """(lens) => [...lens.querySelectorAll('.il-toolbar > *')].map((e) => {
  const r = e.getBoundingClientRect(); return [e.className, Math.round(r.left), Math.round(r.width)]; })"""


@pytest.mark.browser
def test_widget_in_jupyterlab(jupyter_lab, lab_page, training_report):
    base, root = jupyter_lab
    training_report.save_json(root / "train.json")
    fwd = training_report.compiles[0]
    node, kernel = _kernel_nodes(fwd)[0]
    target = fwd.fused_nodes[-1]
    write_notebook(
        root / "widget.ipynb",
        [
            # display the report; its Export sends the page in parts of 100 kB (the page: ~1 MB)
            "import inductor_lens\nfrom inductor_lens.views import frontend\nfrontend.EXPORT_PART = 100_000\n"
            "r = inductor_lens.load('train.json')\nr",
            "w = r.widget(view='fusion')\nw",  # a widget we script
            "print('selected=' + repr(w.selected))",
        ],
    )
    page = lab_page
    watch = PageWatch(page, allow_console=("favicon",))
    try:
        panel, lens = _run_to_first_lens(page, base, "widget.ipynb")
        # click a box -> kernel source and both backtraces
        lens.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
        assert lens.locator(f'[data-node="{node.name}"]').get_attribute("data-kernel") == kernel.name
        src = lens.locator('[data-role="kernel-source"]')
        assert source_text(src).strip() == kernel.source.strip()
        assert lens.locator('[data-role="user-stack"]').inner_text().strip()
        assert lens.locator('[data-role="compiler-stack"]').inner_text().strip()
        assert all(f in lens.locator('[data-role="fx-nodes"]').inner_text() for f in node.fx_nodes)
        # switch views
        lens.locator('[data-tab="timeline"]').click()
        assert lens.locator('[data-view="timeline"]').is_visible()
        assert fwd.id in lens.locator('[data-view="timeline"]').inner_text()
        lens.locator('[data-tab="fx"]').click()
        lens.locator('[data-view="fx"] .il-graph[data-ready="1"]').wait_for()
        # select an FX node -> its kernel is selected and highlighted
        fx_name = target.fx_nodes[0]
        lens.locator(f'[data-view="fx"] [data-fx="{fx_name}"]').click()
        assert lens.get_attribute("data-selected") == target.name
        assert "il-selected" in lens.locator(f'[data-view="fx"] [data-fx="{fx_name}"]').get_attribute("class")
        lens.locator('[data-tab="fusion"]').click()
        assert "il-selected" in lens.locator(f'[data-view="fusion"] [data-node="{target.name}"]').get_attribute("class")

        # Export: the page arrives in parts over the comm and downloads whole, the page to_html makes
        bar_before = page.evaluate(_TOOLBAR_BOXES, lens.element_handle())
        with page.expect_download(timeout=60000) as got:
            lens.locator(".il-export").click()
        download = got.value
        from inductor_lens.views.html import to_html

        page_bytes = to_html(inductor_lens.load(root / "train.json")).encode("utf-8")
        assert len(page_bytes) > 5 * 100_000  # so it came in more than five parts
        assert download.suggested_filename.endswith(".html")
        assert pathlib.Path(download.path()).read_bytes() == page_bytes
        # the export's outcome is a toast over the pane, gone after a few seconds: it takes no room in the toolbar
        # (nu24 D8: "exported inductor_lens-cell.html" stayed in the toolbar's status and squeezed the search box)
        lens.get_by_text("exported ").wait_for()
        assert page.evaluate(_TOOLBAR_BOXES, lens.element_handle()) == bar_before
        toast = lens.locator('[data-role="toast"]')
        assert toast.inner_text().startswith("exported ")
        bar = lens.locator(".il-toolbar").bounding_box()
        assert toast.bounding_box()["y"] >= bar["y"] + bar["height"] - 0.5, (toast.bounding_box(), bar)
        # ... and goes by itself (app.js TOAST_MS, 5 s), untouched by what follows: checked at the end of the test

        # the scripted widget: Python -> browser, then browser -> Python
        lens2 = panel.locator(".il-root").nth(1)
        lens2.locator('[data-view="fusion"] .il-graph[data-ready="1"]').wait_for(timeout=60000)
        page.evaluate(
            """(code) => { const w = window.jupyterapp.shell.currentWidget;
            w.sessionContext.session.kernel.requestExecute({code}); }""",
            f"w.selected = {kernel.name!r}",
        )
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        second = "document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .il-root')[1]"
        page.wait_for_function(f"() => {second}.dataset.selected === {node.name!r}")
        # the click reaches Python (below) once the page has taken it: a click that lands while the graph is
        # redrawn for the selection above hits nothing, as a user's would, and the user clicks again
        for attempt in (1, 2):
            lens2.locator('[data-view="fusion"] .il-graph[data-ready="1"]').wait_for()
            lens2.locator(f'[data-view="fusion"] [data-node="{target.name}"]').click()
            try:
                page.wait_for_function(f"() => {second}.dataset.selected === {target.name!r}", timeout=5000)
                break
            except PlaywrightTimeout:
                assert attempt == 1, "two clicks on a box of the scripted widget did not select it"
        # ipywidgets sends a model's changes one message at a time (the next waits in the browser until the kernel
        # has handled the last), so a cell run at once can reach the kernel before the click's change: Python is
        # asked again until the change has arrived (30 s at most), never a wait of a guessed length
        deadline = time.monotonic() + 30
        while True:
            page.evaluate("""async () => { const w = window.jupyterapp.shell.currentWidget;
                w.content.activeCellIndex = 2;
                window.__before = w.content.widgets[2].model.executionCount;
                await window.jupyterapp.commands.execute('notebook:run-cell'); }""")
            page.wait_for_function("""() => { const w = window.jupyterapp.shell.currentWidget;
                return w.content.widgets[2].model.executionCount !== window.__before
                  && w.sessionContext.session.kernel.status === 'idle'; }""")
            shown = cell_text(page, 2)
            if f"selected={target.name!r}" in shown or time.monotonic() > deadline:
                break
        assert f"selected={target.name!r}" in shown
        toast.wait_for(state="hidden", timeout=15000)  # the export's toast went by itself meanwhile
        assert not lab_errors(watch, root), watch.errors
    finally:
        watch.stop()
        close_notebook(page)


_NOTEBOOK_STATE = """() => { const w = window.jupyterapp.shell.currentWidget;
  return {types: w.content.widgets.map((c) => c.model.type), mode: w.content.mode,
          lenses: w.node.querySelectorAll('.il-root').length,
          focus: document.activeElement.classList.contains('jp-Cell') ? 'cell'
               : document.activeElement.closest('.il-root') ? 'lens' : document.activeElement.tagName}; }"""


@pytest.mark.browser
def test_widget_keeps_its_keys_and_the_wheel_from_the_notebook(jupyter_lab, lab_page, training_report):
    """Keys typed while the graph has the focus never reach JupyterLab's command-mode shortcuts (`m` turned the cell
    into Markdown and destroyed the widget, `a` inserted a cell); the widget's own keys still work, and Esc hands the
    focus back to the cell, where the notebook's keys work again. A plain wheel over the graph scrolls the notebook
    (not default-prevented, the graph unmoved) until the user clicks into the graph; then it pans the graph."""
    base, root = jupyter_lab
    training_report.save_json(root / "keys.json")
    write_notebook(
        root / "keys.ipynb",
        [
            "import inductor_lens\nr = inductor_lens.load('keys.json')\nr",
            "from IPython.display import HTML\nHTML('<div style=\"height: 3000px\">room to scroll</div>')",
        ],
    )
    page = lab_page
    watch = PageWatch(page, allow_console=("favicon",))
    try:
        panel, lens = _run_to_first_lens(page, base, "keys.ipynb")
        lens.scroll_into_view_if_needed()
        before = page.evaluate(_NOTEBOOK_STATE)
        assert before["types"] == ["code", "code"] and before["lenses"] == 1, before
        svg = lens.locator('[data-view="fusion"] svg.il-svg')
        viewport = svg.locator(".il-viewport")
        box = svg.bounding_box()
        # the wheel over the graph that was never clicked: the notebook's, the graph stays put
        page.evaluate("""() => { window.__wheels = [];
            window.addEventListener('wheel', (e) => window.__wheels.push(e.defaultPrevented)); }""")
        scroller = "document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')"
        top0 = page.evaluate(f"() => {scroller}.scrollTop")
        moved = viewport.get_attribute("transform")
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, 120)
        page.wait_for_function("() => window.__wheels.length === 1")
        assert page.evaluate("() => window.__wheels") == [False]
        assert viewport.get_attribute("transform") == moved
        page.wait_for_function(f"(top0) => {scroller}.scrollTop > top0", arg=top0)
        # clicked into the graph (on its background, no box), zoomed in (+) so that it has more to show below: the
        # wheel pans it and is the graph's alone
        lens.scroll_into_view_if_needed()
        box = svg.bounding_box()
        page.mouse.click(box["x"] + 6, box["y"] + 6)
        assert page.evaluate(_NOTEBOOK_STATE)["focus"] == "lens"
        for _ in range(5):
            page.keyboard.press("+")
        below = svg.evaluate("""(s) => s.querySelector('.il-viewport').getBoundingClientRect().bottom
            - s.getBoundingClientRect().bottom""")
        assert below > 240, below
        moved = viewport.get_attribute("transform")
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, 120)
        page.wait_for_function("() => window.__wheels.length === 2")
        assert page.evaluate("() => window.__wheels")[1] is True
        assert viewport.get_attribute("transform") != moved
        # ... up to the graph's bottom edge, never into blank, and there the wheel is the notebook's again, as a
        # scroller nested in a page hands it on at its end (nu24 D1: 20 wheels left the notebook where it was and the
        # graph panned into empty space until its pane was blank)
        graph_h = viewport.evaluate("(g) => g.getBoundingClientRect().height")
        top0 = page.evaluate(f"() => {scroller}.scrollTop")
        for n in range(3, 3 + int(graph_h / 120) + 3):
            page.mouse.wheel(0, 120)
            page.wait_for_function("(n) => window.__wheels.length === n", arg=n)
            if page.evaluate("() => window.__wheels")[-1] is False:
                break
        else:
            raise AssertionError(f"the graph kept the wheel past its edge: {graph_h} px tall, {n - 2} wheels")
        page.wait_for_function(f"(top0) => {scroller}.scrollTop > top0", arg=top0)
        edges = svg.evaluate("""(s) => { const p = s.getBoundingClientRect();
            const g = s.querySelector('.il-viewport').getBoundingClientRect(); return [p.bottom, g.bottom]; }""")
        assert edges[1] == pytest.approx(edges[0] - 16, abs=1.5), ("the graph's bottom at the pane's margin", edges)
        # the notebook's command-mode keys do nothing to the notebook while the graph has the focus
        for key in ("m", "a", "b", "x", "d", "d", "y", "Shift+M"):
            page.keyboard.press(key)
        after = page.evaluate(_NOTEBOOK_STATE)
        assert after["types"] == ["code", "code"] and after["lenses"] == 1 and after["focus"] == "lens", after
        # ... while the widget's own keys work: 2 shows the second view, 1 the fusion graph again
        views = lens.evaluate("(el) => [...el.querySelectorAll('[data-tab]')].map((b) => b.dataset.tab)")
        page.keyboard.press("2")
        assert lens.get_attribute("data-active-view") == views[1]
        page.keyboard.press("1")
        assert lens.get_attribute("data-active-view") == "fusion"
        # Esc with nothing selected hands the focus to the cell: the notebook's keys work again (b: a cell below)
        page.keyboard.press("Escape")
        assert page.evaluate(_NOTEBOOK_STATE)["focus"] == "cell"
        page.keyboard.press("b")
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.widgets.length === 3")
        # and the wheel is the notebook's again, the focus having left the lens
        page.evaluate("() => { window.__wheels = []; }")
        lens.scroll_into_view_if_needed()
        box = svg.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, 120)
        page.wait_for_function("() => window.__wheels.length === 1")
        assert page.evaluate("() => window.__wheels") == [False]
        assert not lab_errors(watch, root), watch.errors
    finally:
        watch.stop()
        close_notebook(page)
