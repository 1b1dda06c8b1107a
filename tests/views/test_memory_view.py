"""The Memory view in headless Chromium (exported page, offline): one point per fused node in order, the peak
marked, a click on a point selects its fused node and a selected box marks its point, the saved-for-backward
table sorts and its rows select their producer, and the fused-node panel says what the node allocates."""

import pytest

from tests.views.test_html_export import _assert_clean, _open

pytestmark = pytest.mark.browser


def test_memory_tab_draws_one_point_per_fused_node_and_a_click_selects_it(tmp_path, offline_page, training_report):
    page = offline_page
    fwd = training_report.compiles[0]
    path = tmp_path / "train.html"
    training_report.save_html(path)
    _open(page, path)
    page.click('[data-tab="memory"]')
    view = page.locator('[data-view="memory"]')
    points = view.locator('[data-role="memory-point"]')
    assert [p.get_attribute("data-node") for p in points.all()] == [n.name for n in fwd.fused_nodes]
    peak = view.locator('[data-role="memory-point"].il-mem-peak')
    assert [p.get_attribute("data-node") for p in peak.all()] == [fwd.memory.peak_node]
    # the points rise and fall with live_bytes: their heights are ordered as the numbers are
    ys = [float(p.get_attribute("cy")) for p in points.all()]
    live = [p.live_bytes for p in fwd.memory.timeline]
    for i in range(len(live)):
        for j in range(len(live)):
            if live[i] > live[j]:
                assert ys[i] < ys[j]
    target = fwd.fused_nodes[-1].name
    points.nth(len(fwd.fused_nodes) - 1).click()
    assert page.locator(".il-root").get_attribute("data-selected") == target
    assert view.locator('[data-role="memory-point"].il-selected').get_attribute("data-node") == target
    # the panel of the selected node: its live bytes and what it allocates
    panel = page.locator('[data-role="node-memory"]')
    point = fwd.memory.timeline[-1]
    for b in point.allocates:
        assert b.name in panel.inner_text()
    # select a box in the fusion graph: the memory view marks its point
    first = next(n.name for n in fwd.fused_nodes if not n.is_glue)
    page.click('[data-tab="fusion"]')
    page.locator(f'[data-view="fusion"] [data-node="{first}"]').first.click()
    page.click('[data-tab="memory"]')
    assert view.locator('[data-role="memory-point"].il-selected').get_attribute("data-node") == first
    _assert_clean(page)


def test_saved_table_sorts_and_a_row_selects_its_producer(tmp_path, offline_page, training_report):
    page = offline_page
    fwd = training_report.compiles[0]
    saved = fwd.memory.saved_for_backward
    path = tmp_path / "train.html"
    training_report.save_html(path)
    _open(page, path)
    page.click('[data-tab="memory"]')
    rows = page.locator('[data-view="memory"] [data-role="saved-row"]')
    names = lambda: [r.get_attribute("data-name") for r in rows.all()]  # noqa: E731
    by_bytes = [s.name for s in sorted(saved, key=lambda s: -s.bytes)]  # the opening order: largest first
    assert sorted(names()) == sorted(s.name for s in saved)
    assert [next(s.bytes for s in saved if s.name == n) for n in names()] == [
        next(s.bytes for s in saved if s.name == n) for n in by_bytes
    ]
    page.click('[data-view="memory"] th[data-sort="name"]')
    assert names() == sorted(s.name for s in saved)
    page.click('[data-view="memory"] th[data-sort="name"]')
    assert names() == sorted((s.name for s in saved), reverse=True)
    act = next(s for s in saved if s.kind == "activation")
    producer = next(n.name for n in fwd.fused_nodes if act.fx_node in n.fx_nodes)
    page.locator(f'[data-view="memory"] [data-role="saved-row"][data-name="{act.name}"]').click()
    assert page.locator(".il-root").get_attribute("data-selected") == producer
    total = page.locator('[data-view="memory"] [data-role="memory-saved-total"]').inner_text()
    assert f"in {len(saved)} tensors" in total
    _assert_clean(page)


def test_the_fusion_graph_colours_boxes_by_the_bytes_alive_after_them(tmp_path, offline_page, training_report):
    """ "colour by memory": every box of a compile with a memory timeline carries the most bytes alive once any of
    its fused nodes ran (``Compile.memory.timeline``), filled by its share of the peak; the peak's box is the
    fullest, and the legend names the peak."""
    page = offline_page
    fwd = training_report.compiles[0]
    path = tmp_path / "train.html"
    training_report.save_html(path)
    _open(page, path)
    page.click('[data-role="colour-by"] [data-colour="memory"]')
    root = page.locator(".il-root")
    assert root.get_attribute("data-colour-by") == "memory" and "il-by-memory" in root.get_attribute("class")
    live = {p.node: p.live_bytes for p in fwd.memory.timeline}
    boxes = page.locator('[data-view="fusion"] [data-node]')
    seen = {}
    for i in range(boxes.count()):
        b = boxes.nth(i)
        names = (b.get_attribute("data-nodes") or b.get_attribute("data-node")).split()
        want = max(live[n] for n in names if n in live)
        assert int(b.get_attribute("data-live-bytes")) == want, names
        seen[names[0]] = want
    assert max(seen.values()) == fwd.memory.peak_bytes
    legend = page.locator('[data-role="memory-legend"]')
    assert "alive: the peak" in legend.inner_text() and fwd.memory.peak_node in legend.get_attribute("title")
    fill = page.locator(f'[data-view="fusion"] [data-node="{fwd.memory.peak_node}"] rect:not(.il-stripe)').first
    assert fill.evaluate("r => getComputedStyle(r).fill") != "none"
    _assert_clean(page)


def test_the_source_view_says_what_each_line_keeps_for_the_backward(tmp_path, offline_page, training_report):
    """Each line of the forward's ``Memory.saved_by_line`` is marked in the source view with the bytes its ops save
    for the backward; no other line is."""
    page = offline_page
    fwd = training_report.compiles[0]
    rows = fwd.memory.saved_by_line
    assert rows and all(r.bytes > 0 for r in rows)
    path = tmp_path / "train.html"
    training_report.save_html(path)
    _open(page, path)
    page.click('[data-tab="source"]')
    marks = page.locator('[data-view="source"] [data-role="source-saved"]')
    assert marks.count() == len(rows)
    got = {}
    for i in range(marks.count()):
        m = marks.nth(i)
        line = m.locator("xpath=ancestor::*[@data-source-line][1]").get_attribute("data-line")
        got[int(line)] = int(m.get_attribute("data-saved-bytes"))
        assert m.inner_text().strip().startswith("keeps ")
    assert got == {r.line: r.bytes for r in rows}
    _assert_clean(page)
