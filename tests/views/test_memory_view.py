"""The Memory view in headless Chromium (exported page, offline): one point per fused node in order, the peak
marked, a click on a point selects its fused node and a selected box marks its point, the saved-for-backward
table sorts and its rows select their producer, and the fused-node panel says what the node allocates."""

import dataclasses

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
    # what it holds apart from the curve, in Python's words (Memory.held_text: the front end's twin of it is gone)
    assert fwd.memory.held_text.startswith("inputs ")
    assert view.locator('[data-role="memory-inputs"]').inner_text() == fwd.memory.held_text
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
    selected = view.locator('[data-role="memory-point"].il-selected')
    assert selected.get_attribute("data-node") == first
    # the first point, selected, stays clear of the byte axis's labels (its ring covered "0 B": it read "0 E")
    dot = selected.bounding_box()
    labels = [t.bounding_box() for t in view.locator('[data-role="memory-curve"] text.il-mem-tick').all()]
    axis = [
        b for b in labels if b and b["x"] + b["width"] <= dot["x"] + dot["width"] and b["y"] < dot["y"] + dot["height"]
    ]
    assert axis and all(b["x"] + b["width"] <= dot["x"] for b in axis), (dot, axis)
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
    # by the name the column shows: the user's for an input (x, fc1.weight), torch's for an activation
    by_shown = [s.name for s in sorted(saved, key=lambda s: s.display or s.name)]
    page.click('[data-view="memory"] th[data-sort="name"]')
    assert names() == by_shown
    page.click('[data-view="memory"] th[data-sort="name"]')
    assert names() == by_shown[::-1]
    # an input's row names it as the user does (x, fc1.weight), torch's name beside it
    inp = next(s for s in saved if s.kind == "input" and s.display)
    cell = page.locator(f'[data-view="memory"] [data-role="saved-row"][data-name="{inp.name}"] td').nth(1)
    assert cell.inner_text().split() == [inp.display, inp.name]
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


# ---- at the size of a real model: repeated layers, hundreds of fused nodes and saved tensors ---------------


def _memory_tab(page, report, path, size=(1000, 700)):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    report.save_html(path)
    _open(page, path)
    page.click('[data-tab="memory"]')
    return page.locator('[data-view="memory"]')


def _group_rows(view):
    rows = view.locator('[data-role="saved-group-row"]')
    return [
        (r.get_attribute("data-module"), r.get_attribute("data-what"), int(r.get_attribute("data-count")))
        for r in rows.all()
    ]


def test_repeated_layers_read_as_one_row_per_repeated_tensor(tmp_path, offline_page, stack_training_report):
    """models.Stack has four identical blocks: the saved-for-backward table opens with one row per tensor of a
    block (its four copies folded, ``Memory.saved_groups``), its rows holding every saved tensor once; "your
    line" is in sight in a 1000 x 700 page; a toggle lists the tensors one by one and back; a row selects the
    producer of its first tensor."""
    page = offline_page
    fwd = next(c for c in stack_training_report.compiles if c.graph_kind == "forward")
    m = fwd.memory
    assert [r.modules for r in fwd.module_view.repeats] == [[f"layers.{i}" for i in range(4)]]
    view = _memory_tab(page, stack_training_report, tmp_path / "stack.html")
    section = view.locator('[data-role="saved-section"]')
    assert section.get_attribute("data-mode") == "groups"
    rows = _group_rows(view)
    assert rows == [(g.module, g.what, g.count) for g in m.saved_groups]
    # the columns say what their numbers are: a count of tensors, their bytes together, one's bytes ("×4 3 MiB" did not)
    heads = view.locator('[data-role="saved-groups"] th').all_inner_texts()
    assert [t.strip() for t in heads[3:6]] == ["tensors", "total", "each"], heads
    # each block's tensors fold four to a row (one per layer); together the rows hold every saved tensor once
    assert [n for mod, _, n in rows if mod.startswith("layers.0-3")] and all(
        n == 4 for mod, _, n in rows if mod.startswith("layers.0-3")
    )
    names = " ".join(r.get_attribute("data-names") for r in view.locator('[data-role="saved-group-row"]').all())
    assert sorted(names.split()) == sorted(s.name for s in m.saved_for_backward)
    right = view.evaluate("v => v.getBoundingClientRect().right")
    line = view.locator('[data-role="saved-groups"] th[data-sort="line"]')
    assert line.evaluate("th => th.getBoundingClientRect().right") <= right, "your line is clipped"
    # one row per tensor, largest first, and back
    view.locator('[data-role="saved-mode"]').click()
    assert section.get_attribute("data-mode") == "tensors"
    flat = [r.get_attribute("data-name") for r in view.locator('[data-role="saved-row"]').all()]
    assert sorted(flat) == sorted(s.name for s in m.saved_for_backward)
    view.locator('[data-role="saved-mode"]').click()
    assert _group_rows(view) == rows
    first = next(g for g in m.saved_groups if g.kind == "activation")
    producer = next(n.name for n in fwd.fused_nodes if first.fx_node in n.fx_nodes)
    view.locator('[data-role="saved-group-row"]').first.click()
    assert page.locator(".il-root").get_attribute("data-selected") == producer
    # the roll-up by module folds the blocks: their activations in one row, the sum of the 4
    folded = view.locator('[data-role="saved-by-module"] li[data-module="layers.0-3"]')
    block_bytes = sum(
        s.bytes for s in m.saved_for_backward if s.kind == "activation" and s.module.startswith("layers.")
    )
    assert int(folded.get_attribute("data-bytes")) == block_bytes and "sum of 4" in folded.inner_text()
    # the roll-up by line quotes the line
    first_line = view.locator('[data-role="saved-by-line"] li').first
    assert m.saved_by_line[0].code and m.saved_by_line[0].code in first_line.inner_text()
    _assert_clean(page)


def test_the_axis_names_each_layer_and_the_peak_stays_clear_of_the_curve(tmp_path, offline_page, stack_training_report):
    """The curve's axis says which module ran where (``Memory.regions``): models.Stack's input layer, its
    four blocks by number under one bracket, its output layer (the backward: the other way round); the peak's
    label sits above every point, inside the plot's frame."""
    page = offline_page
    view = _memory_tab(page, stack_training_report, tmp_path / "stack.html")
    for c, labels, repeat in [
        (stack_training_report.compiles[0], ["inp", "0", "1", "2", "3", "out"], "layers.0-3"),
        (stack_training_report.compiles[1], ["out", "3", "2", "1", "0", "inp"], "layers.3-0"),
    ]:
        page.select_option("select.il-compile", c.id)
        page.click('[data-tab="memory"]')
        curve = view.locator('[data-role="memory-curve"]')
        shown = curve.locator('[data-role="memory-region"]').evaluate_all("ts => ts.map(t => t.firstChild.nodeValue)")
        assert shown == labels
        assert [t.get_attribute("data-module") for t in curve.locator('[data-role="memory-region"]').all()] == [
            r.module for r in c.memory.regions
        ]
        assert curve.locator('[data-role="memory-repeat"] + text').text_content() == repeat
        peak = curve.locator('[data-role="memory-peak"]').evaluate(
            "t => { const b = t.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; }"
        )
        tops = curve.locator('[data-role="memory-point"]').evaluate_all(
            "cs => cs.map(c => +c.getAttribute('cy') - +c.getAttribute('r'))"
        )
        width = float(curve.get_attribute("viewBox").split()[2])
        assert 0 <= peak[0] and peak[2] <= width and peak[1] >= 0, peak
        assert peak[3] <= min(tops), "the peak's label is drawn over the curve"
    _assert_clean(page)


def test_a_dense_curve_is_a_line_with_one_hover_and_click_target_per_column(tmp_path, offline_page):
    """192 fused nodes in 564 px: no dots but the peak (they washed the line out); the pointer over a column
    names its fused node, its layer and bytes, and a click selects it; the twelve layers' labels never overlap."""
    from tests._synthetic_report import memory_report

    page = offline_page
    report = memory_report(layers=12, per_layer=16)
    view = _memory_tab(page, report, tmp_path / "dense.html")
    curve = view.locator('[data-role="memory-curve"]')
    assert curve.get_attribute("data-dense") == "1"
    shown = curve.locator('[data-role="memory-point"]').evaluate_all(
        "cs => cs.filter(c => getComputedStyle(c).display !== 'none').map(c => c.dataset.node)"
    )
    assert shown == [report.compiles[0].memory.peak_node]
    hit = curve.locator('[data-role="memory-hit"]').bounding_box()
    y = hit["y"] + hit["height"] / 2  # any height: the column is the target
    for k in (5, 100, 190):
        x = curve.locator(f'[data-role="memory-point"][data-index="{k}"]').evaluate(
            """c => new DOMPoint(+c.getAttribute('cx'), 0).matrixTransform(c.ownerSVGElement.getScreenCTM()).x"""
        )
        page.mouse.move(x, y)
        text = curve.locator(".il-mem-hovertext").text_content()
        assert f"live while #{k} runs in h.{k // 16}: " in text, text
        page.mouse.click(x, y)
        assert page.locator(".il-root").get_attribute("data-selected") == f"op{k}"
    boxes = curve.locator('[data-role="memory-region"]').evaluate_all(
        "ts => ts.map(t => { const b = t.getBBox(); return [b.x, b.x + b.width, t.firstChild.nodeValue]; })"
    )
    assert {"0", "11"} <= {b[2] for b in boxes}
    assert all(a[1] <= b[0] for a, b in zip(boxes, boxes[1:])), boxes
    _assert_clean(page)


def test_one_row_per_tensor_is_drawn_200_at_a_time(tmp_path, offline_page):
    """450 saved tensors that fold into nothing: one row per tensor, the first 200 (largest first), then 200 more
    per click until all are there."""
    from tests._synthetic_report import memory_report

    page = offline_page
    report = memory_report(layers=2, per_layer=4, saved=450)
    view = _memory_tab(page, report, tmp_path / "paged.html")
    rows = view.locator('[data-role="saved-row"]')
    more = view.locator('[data-role="saved-more"]')
    assert rows.count() == 200 and "250 not shown" in more.inner_text()
    assert rows.first.get_attribute("data-name") == "t449" and rows.nth(199).get_attribute("data-name") == "t250"
    more.click()
    assert rows.count() == 400 and "50 not shown" in more.inner_text()
    more.click()
    assert rows.count() == 450 and more.count() == 0
    _assert_clean(page)


def test_a_long_peak_label_wraps_inside_the_memory_view(tmp_path, offline_page, training_report):
    """The peak fact names the fused node at the peak; a backward's kernel name runs to 90 characters
    (``cpp_fused_add_embedding_dense_backward_native_layer_norm_...``) and its chip ran past the pane at 1000 x 700.
    Every chip stays inside the view."""
    import copy

    from inductor_lens.report.rules import memory_peak_text
    from tests.views.test_front_views import _page_from_dict

    data = copy.deepcopy(training_report.to_dict())
    c = next(c for c in data["compiles"] if c.get("memory"))
    peak = next(n for n in c["fused_nodes"] if n["name"] == c["memory"]["peak_node"])
    peak["label"] = "cpp_fused_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_sum_view_7"
    c["memory"]["sizes_at"] = "at s77=4"  # a symbolic size: the figures say at which sizes they are counted
    c["memory"]["peak_text"] = memory_peak_text(c["memory"]["peak_bytes"], "at s77=4")  # Python's words, as shipped
    path = _page_from_dict(tmp_path, training_report, data, "long.html")
    page = offline_page
    page.set_viewport_size({"width": 1000, "height": 700})
    _open(page, path)
    page.select_option(".il-compile", c["id"])
    page.click('[data-tab="memory"]')
    fact = page.locator('[data-role="memory-peak-fact"]')
    assert peak["label"] in fact.inner_text() and "(at s77=4)" in fact.inner_text(), fact.inner_text()
    view = page.locator('[data-view="memory"]').bounding_box()
    for chip in page.locator('[data-view="memory"] .il-chip').all():
        box = chip.bounding_box()
        assert box["x"] + box["width"] <= view["x"] + view["width"] + 0.5, (chip.inner_text(), box, view)
    _assert_clean(page)


def test_a_backward_node_that_recomputes_forward_ops_says_so(tmp_path, offline_page, training_report):
    """The partitioner recomputes cheap forward ops (a layer norm's statistics) in the backward rather than saving
    them; activation checkpointing recomputes whole layers. The backward's panel never said so: a node that
    recomputes forward ops marks them (↻) and says why, and the backward's Memory view lists them too."""
    bwd = next(c for c in training_report.compiles if c.graph_kind == "backward")
    redo = {r.fx_node for r in bwd.memory.recomputed}
    node = next(n for n in bwd.fused_nodes if redo & set(n.fx_nodes) and not n.is_glue)
    path = tmp_path / "redo.html"
    training_report.save_html(path)
    page = offline_page
    _open(page, path)
    page.select_option(".il-compile", bwd.id)
    page.evaluate("(n) => window.inductorLens.select(n)", node.name)
    note = page.locator('[data-role="recomputed-ops"]')
    n = len(redo & set(node.fx_nodes))
    assert note.inner_text().startswith(f"Recomputes {n} forward op"), note.inner_text()
    marked = page.locator('[data-role="fx-nodes"] li', has_text="↻")
    assert marked.count() == n
    page.click('[data-tab="memory"]')
    assert page.locator('[data-view="memory"] [data-role="recomputed"]').count() == 1
    _assert_clean(page)


def test_a_graph_that_allocates_nothing_says_so_instead_of_a_flat_curve(tmp_path, offline_page, training_report):
    """An optimizer's step writes every result into its inputs' storage: its peak is 0 B, and the view drew a flat
    line on an axis of "1 B". It says what that means instead (the tables stay)."""
    import dataclasses

    fwd = training_report.compiles[0]
    points = [dataclasses.replace(p, live_bytes=0, allocates=[], frees=[]) for p in fwd.memory.timeline]
    none = dataclasses.replace(fwd.memory, peak_bytes=0, timeline=points, peak_buffers=[], peak_by_module=[])
    report = dataclasses.replace(training_report, compiles=[dataclasses.replace(fwd, memory=none)])
    path = tmp_path / "nothing.html"
    report.save_html(path)
    page = offline_page
    _open(page, path)
    page.click('[data-tab="memory"]')
    view = page.locator('[data-view="memory"]')
    assert "allocates nothing" in view.locator('[data-role="memory-allocates-nothing"]').inner_text()
    assert view.locator('[data-role="memory-point"]').count() == 0
    assert view.locator('[data-role="saved-row"]').count() == len(fwd.memory.saved_for_backward)
    _assert_clean(page)


def test_the_memory_chart_fits_its_pane_at_every_width_with_its_text_readable(
    tmp_path, offline_context, training_report
):
    """The chart is drawn at its plot's width: all of it in the view, its text 11 px. Scaled from a 640-unit viewBox,
    its axis text was ~8 px in JupyterLab at 1280 px; held at 582 px to keep 10 px, it ran 90 px under JupyterLab's
    side panel (nu24 D7: a 492 px pane, the last 3 of 23 points and the right axis labels hidden). At a 850 px page
    (a ~470 px stage), 1000 and 1600 px, and back at 850 px (a resize draws it again): every point and text of the
    chart inside the view, nothing to scroll sideways, every text at 10 px or more."""
    path = tmp_path / "m.html"
    training_report.save_html(path)
    page = offline_context.new_page(viewport={"width": 850, "height": 800})
    try:
        _open(page, path)
        page.click('[data-tab="memory"]')
        curve = page.locator('[data-role="memory-curve"]').first
        curve.wait_for()
        n = len(training_report.compiles[0].memory.timeline)
        for width in (850, 1000, 1600, 850):
            page.set_viewport_size({"width": width, "height": 800})
            # the resize observed and the chart drawn again: two frames later
            page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            geo = page.evaluate(
                """() => { const v = document.querySelector('[data-view="memory"]'), r = v.getBoundingClientRect();
                  const s = v.querySelector('[data-role="memory-curve"]');
                  const box = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.right]; };
                  return {view: [r.left + v.clientLeft, r.left + v.clientLeft + v.clientWidth],
                    scroll: [v.scrollWidth, v.clientWidth],
                    points: [...s.querySelectorAll('[data-role="memory-point"]')].map(box),
                    texts: [...s.querySelectorAll('text')].filter((t) => t.textContent).map(box),
                    sizes: [...s.querySelectorAll('text.il-mem-tick')].map(
                      (t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)}; }"""
            )
            x0, x1 = geo["view"]
            assert len(geo["points"]) == n, (width, geo)
            for what in ("points", "texts"):
                out = [b for b in geo[what] if b[0] < x0 - 0.5 or b[1] > x1 + 0.5]
                assert not out, (width, f"{what} outside the view", out, geo["view"])
            assert geo["scroll"][0] <= geo["scroll"][1], (width, "the view scrolls sideways", geo["scroll"])
            assert geo["sizes"] and min(geo["sizes"]) >= 10 - 1e-6, (width, geo["sizes"])
    finally:
        page.close()


def test_the_curve_draws_lower_bounds_as_such_and_names_which_peak_it_is(tmp_path, offline_page, training_report):
    """nu26 D3: where a buffer of a data-dependent size is live (``Memory.uncounted_at``) the live bytes are a lower
    bound, and the chart drew them like exact ones under "peak 96 KiB"; its backward's label "peak 5.3 MiB" was its
    buffers' peak, the device's high-water mark (4.55 MiB) only in the header. D6: "(#4 of 5)" for the last of 5."""
    fwd, bwd = training_report.compiles[0], next(c for c in training_report.compiles if c.graph_kind == "backward")
    order = [p.node for p in fwd.memory.timeline]
    least = order[1:]
    memory = dataclasses.replace(fwd.memory, uncounted=["buf_u0"], uncounted_at=least)
    report = dataclasses.replace(
        training_report,
        compiles=[dataclasses.replace(c, memory=memory) if c is fwd else c for c in training_report.compiles],
    )
    page = offline_page
    view = _memory_tab(page, report, tmp_path / "least.html")
    page.select_option("select.il-compile", fwd.id)
    page.click('[data-tab="memory"]')
    curve = view.locator('[data-role="memory-curve"]')
    assert curve.locator('[data-role="memory-peak"]').text_content().startswith("peak ≥ ")
    hollow = curve.locator('[data-role="memory-point"][data-least="1"]')
    assert [p.get_attribute("data-node") for p in hollow.all()] == least
    assert curve.locator('[data-role="memory-least-line"]').count() == 1
    assert view.locator('[data-role="memory-least-legend"]').inner_text().strip() == memory.curve_least_text
    at = order.index(fwd.memory.peak_node)
    assert f"(#{at}, the " in view.locator('[data-role="memory-peak-fact"]').inner_text()
    page.select_option("select.il-compile", bwd.id)
    page.click('[data-tab="memory"]')
    assert bwd.memory.freed_input_bytes and bwd.memory.curve_high_water_text
    curve = view.locator('[data-role="memory-curve"]')
    assert curve.locator('[data-role="memory-peak"]').text_content().startswith("peak of the graph's buffers ")
    assert curve.locator('[data-role="memory-high-water-label"]').text_content() == bwd.memory.curve_high_water_text
    # the high-water mark is the top of the curve's second line (the live bytes less the inputs freed by then), marked
    # there on it, not a flat line across the curve (the trial's ViT: 420.6 KiB drawn under a 1.36 MiB peak)
    assert bwd.memory.high_water_node and curve.locator('[data-role="memory-net-line"]').count() >= 1
    mark = curve.locator('[data-role="memory-high-water"]')
    at = curve.locator(f'[data-role="memory-point"][data-node="{bwd.memory.high_water_node}"]')
    assert mark.evaluate("e => e.tagName") == "circle" and mark.get_attribute("cx") == at.get_attribute("cx")
    assert view.locator('[data-role="memory-net-legend"]').inner_text().strip() == bwd.memory.curve_net_text
    assert curve.locator('[data-role="memory-least-line"]').count() == 0
    assert view.locator('[data-role="memory-least-legend"]').count() == 0
    _assert_clean(page)
