"""Triton reports recorded on a real GPU (tests/fixtures/gpu_*.json), rendered by the exported page in
offline Chromium: Triton source, launch metadata, autotuning choices, measured time, colouring by time.
CPU-only: the fixtures hold everything. One page load per report keeps this cheap."""

import json
import re

import pytest

import inductor_lens
from tests._browser_fixtures import source_text
from tests._recorded import recorded
from tests.analysis.test_gpu_fixtures import FIXTURES
from tests.views.test_html_export import _assert_clean, _open

pytestmark = [pytest.mark.browser, pytest.mark.gpu_fixture]


def _profiled(compile_):
    kernels = {k.name: k for k in compile_.kernels}
    return {
        n.name: kernels[n.kernel].profile
        for n in compile_.fused_nodes
        if n.kernel in kernels and kernels[n.kernel].profile
    }


def _fill(page, name):
    return page.evaluate(
        """(n) => getComputedStyle(document.querySelector(`[data-view="fusion"] [data-node="${CSS.escape(n)}"] rect`)).fill""",
        name,
    )


def _open_fixture(page, tmp_path, name):
    """Export the recorded GPU report ``gpu_<name>.json`` and open it offline; returns the report."""
    report = recorded(f"gpu_{name}.json")  # once per process (tests/_recorded.py)
    path = tmp_path / f"gpu_{name}.html"
    report.save_html(path)
    _open(page, path)
    return report


def test_training_report_launch_metadata_profile_colouring_and_top_kernels(tmp_path, offline_page):
    page = offline_page
    report = _open_fixture(page, tmp_path, "training")
    fwd, bwd = report.compiles
    root = page.locator(".il-root")

    # a profiled report opens coloured by time; every profiled box carries its share
    assert root.get_attribute("data-colour-by") == "time"
    times = _profiled(fwd)
    assert times, "the fixture should carry measured times"
    boxes = page.locator('[data-view="fusion"] [data-node][data-share]')
    assert boxes.count() == len(times)
    shares = {b.get_attribute("data-node"): float(b.get_attribute("data-share")) for b in boxes.all()}
    assert shares == {n: pytest.approx(p.share, abs=1e-4) for n, p in times.items()}
    hot = max(times, key=lambda n: times[n].share)
    cold = min(times, key=lambda n: times[n].share)
    assert _fill(page, hot) != _fill(page, cold), "boxes of 100x different time share look the same"
    # each box shows its time (the same text as the panel's)
    label = page.locator(f'[data-view="fusion"] [data-node="{hot}"] text').all_text_contents()
    assert any(f"({times[hot].share * 100:.1f}%)" in t or f"({times[hot].share * 100:.0f}%)" in t for t in label), label

    # nothing selected: the top-kernels table lists the report's kernels by time, longest first
    top = page.locator('[data-role="top-kernels"] tbody tr')
    expected = sorted(
        ((k.profile.total_us, k.name, c.id) for c in report.compiles for k in c.kernels if k.profile), reverse=True
    )
    assert top.count() == min(12, len(expected))
    got = [(r.get_attribute("data-kernel"), r.get_attribute("data-compile")) for r in top.all()]
    assert got[0] == (expected[0][1], expected[0][2])
    # the whole table in the order the report's times give (computed here, independently of the page)
    assert got == [(k, c) for _, k, c in expected[: top.count()]]
    shown = [float(re.match(r"[\d.]+", r.locator("td").nth(2).inner_text()).group()) for r in top.all()]
    assert len(shown) == top.count() and shown[0] > 0
    assert f"{expected[0][0]:.2f}" in top.first.inner_text() or f"{expected[0][0]:.1f}" in top.first.inner_text()

    # colour by kind: same boxes, kind colours (fill changes, no relayout needed)
    before = _fill(page, hot)
    page.click('[data-role="colour-by"] [data-colour="kind"]')
    assert root.get_attribute("data-colour-by") == "kind"
    assert _fill(page, hot) != before
    page.click('[data-role="colour-by"] [data-colour="time"]')
    assert _fill(page, hot) == before

    # click a Triton box: highlighted Triton source, launch facts from kernel.metadata, measured time
    node, kernel = next(
        (n, k)
        for n in fwd.fused_nodes
        for k in fwd.kernels
        if k.name == n.kernel and k.language == "triton" and k.metadata["launch"]["block"]
    )
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    src = page.locator('[data-role="kernel-source"]')
    assert "@triton.jit" in source_text(src) and src.inner_text().strip() == kernel.source.strip()
    # the source paints plain at once and is highlighted right after the paint: wait for it to say so
    page.locator('[data-role="kernel-source"][data-highlighted-source="done"]').wait_for()
    assert src.locator(".hljs-keyword").count() > 0, "Triton source should be highlighted (as Python)"
    assert "def" in src.locator(".hljs-keyword").all_inner_texts()
    assert src.inner_text().strip() == kernel.source.strip()  # highlighting changed no text
    launch = page.locator('[data-role="launch"]')
    facts = dict(zip(launch.locator("dt").all_inner_texts(), launch.locator("dd").all_inner_texts()))
    lm = kernel.metadata["launch"]
    assert facts["num_warps"] == str(lm["num_warps"]) and facts["num_stages"] == str(lm["num_stages"])
    for b, v in lm["block"].items():
        assert facts[b] == str(v)
    assert facts["registers"] == str(lm["registers"])
    assert facts["heuristic"] == kernel.metadata["heuristic"]
    # size hints are a mapping since schema 2 (converted from the v1 fixture's "{'x': 1024}" text)
    hints = kernel.metadata["size_hints"]
    assert isinstance(hints, dict) and hints
    assert facts["size hints"] == ", ".join(f"{a}={b}" for a, b in hints.items())
    assert "compile time" in facts and "shared memory" in facts
    prof = page.locator('[data-role="profile"]').inner_text()
    assert f"{kernel.profile.share * 100:.1f}"[:3] in prof and "per run" in prof

    # an extern kernel shows the library function it calls
    ext_node, ext = next(
        (n, k) for n in fwd.fused_nodes for k in fwd.kernels if k.name == n.kernel and k.language == "extern"
    )
    page.locator(f'[data-view="fusion"] [data-node="{ext_node.name}"]').click()
    assert ext.metadata["callee"] in page.locator('[data-role="launch"]').inner_text()

    # a top-kernels row of the other compile goes there
    page.keyboard.press("Escape")
    row = page.locator(f'[data-role="top-kernels"] tr[data-compile="{bwd.id}"]').first
    kname = row.get_attribute("data-kernel")
    row.locator("button").click()
    assert page.locator(".il-compile").input_value() == bwd.id
    assert page.locator('[data-role="selected-name"]').inner_text() == kname
    page.wait_for_selector(f'[data-view="fusion"] [data-kernel="{kname}"].il-selected')
    _assert_clean(page)


def _chosen_choice(kernel):
    """The autotune choice a template kernel was generated from: the one whose config matches the
    kernel's tl.constexpr constants and launch config (extern kernels: the choice named like the callee)."""
    tune = kernel.metadata["autotune"]
    if kernel.language == "extern":
        callee = kernel.metadata["callee"].removeprefix("extern_kernels.")
        return next(c["name"] for c in tune["choices"] if c["name"] == callee)
    have = dict(re.findall(r"^\s*(\w+) : tl\.constexpr = (\S+)\s*$", kernel.source, re.M))
    have.update(
        num_warps=str(kernel.metadata["launch"]["num_warps"]), num_stages=str(kernel.metadata["launch"]["num_stages"])
    )
    for c in tune["choices"]:
        want = {k: v.strip("'") for k, v in re.findall(r"(\w+)=('[^']*'|[^,\s]+)", c["description"])}
        if want and all(have.get(k) == v for k, v in want.items()):
            return c["name"]
    raise AssertionError(f"no choice matches {kernel.name}")


def _check_autotune(page, kernel, node):
    tune = kernel.metadata["autotune"]
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    assert "@triton.jit" in source_text(page.locator('[data-role="kernel-source"]'))
    box = page.locator('[data-role="autotune"]')
    # every choice with its time, in the full table
    full = box.locator("details table tbody tr")
    box.locator("details summary").click()
    assert full.count() == len(tune["choices"])
    by_name = {c_["name"]: c_ for c_ in tune["choices"]}
    for r in full.all():
        ch = by_name[r.get_attribute("data-choice")]
        if ch["time_ms"] is None:  # a choice that failed to compile or run: no time, said so
            assert "not measured" in r.inner_text()
            continue
        value, unit = re.search(r"([\d.]+) (µs|ms)\t", r.inner_text()).groups()
        shown_us = float(value) * (1000 if unit == "ms" else 1)
        assert shown_us == pytest.approx(ch["time_ms"] * 1000, rel=0.01), r.inner_text()
    table = box.locator("table").first
    fastest = table.locator("tr[data-fastest]")
    assert fastest.count() == 1 and fastest.get_attribute("data-choice") == tune["fastest"]
    chosen = table.locator("tr[data-chosen]")
    assert chosen.count() == 1 and chosen.get_attribute("data-choice") == _chosen_choice(kernel)
    return box.locator("[data-verdict]"), chosen.get_attribute("data-choice")


def test_max_autotune_report_shows_choices_fastest_and_chosen(tmp_path, offline_page):
    page = offline_page
    data = json.loads((FIXTURES / "gpu_max_autotune.json").read_text())
    report = inductor_lens.load(data)
    (c,) = report.compiles
    path = tmp_path / "gpu_max_autotune.html"
    report.save_html(path)
    _open(page, path)
    assert page.locator('[data-role="top-kernels"] tbody tr').count() == len(c.kernels)
    tuned = [k for k in c.kernels if "autotune" in k.metadata]
    assert tuned
    for k in tuned:
        node = next(n for n in c.fused_nodes if n.kernel == k.name)
        verdict, chosen = _check_autotune(page, k, node)
        expected = "fastest" if chosen == k.metadata["autotune"]["fastest"] else "not-fastest"
        assert verdict.get_attribute("data-verdict") == expected
        assert k.metadata["autotune"]["fastest"] in verdict.inner_text() or chosen in verdict.inner_text()
        # what the chosen template fused, Python's sentence (the fastest's verdict said nothing of it)
        assert k.metadata["autotune"]["fusion_note"] in verdict.inner_text()
        section = page.locator('[data-role="autotune"]').locator("xpath=..")
        assert section.locator("h3 .il-muted").inner_text() == k.metadata["autotune"]["heading"]
        assert "benchmarked" in k.metadata["autotune"]["heading"]
        assert page.locator('[data-role="autotune-timed"]').count() == 0
    assert any(k.metadata["autotune"]["fusion_note"] for k in tuned)
    _assert_clean(page)

    # the case the first H200 recording showed: the library mm was fastest alone, Inductor still
    # emitted the template, because the template fuses the epilogue (add, relu)
    tk = next(k for k in data["compiles"][0]["kernels"] if k["name"] == "triton_tem_fused_addmm_relu_t_0")
    best = min(ch["time_ms"] for ch in tk["metadata"]["autotune"]["choices"] if ch["time_ms"] is not None)
    choices = tk["metadata"]["autotune"]["choices"]
    lib = next((ch for ch in choices if ch["name"] == "mm"), None)
    if lib is None:
        lib = {"name": "mm", "description": ""}
        choices.insert(0, lib)
    lib["time_ms"] = round(best * 0.8, 6)
    tk["metadata"]["autotune"]["fastest"] = "mm"
    tk["metadata"]["autotune"]["timed"] = "cache"  # as a capture records times read from torch's autotune cache
    report = inductor_lens.load(data)
    path = tmp_path / "mm_fastest_alone.html"
    report.save_html(path)
    _open(page, path)
    kernel = report.compiles[0].kernel("triton_tem_fused_addmm_relu_t_0")
    node = next(n for n in report.compiles[0].fused_nodes if n.kernel == kernel.name)
    verdict, chosen = _check_autotune(page, kernel, node)
    assert chosen != "mm"
    assert verdict.get_attribute("data-verdict") == "not-fastest"
    text = verdict.inner_text()
    assert "Not the fastest alone" in text and "mm was fastest" in text and chosen in text
    assert "epilogue" in text and "relu" in text
    assert kernel.metadata["autotune"]["fusion_note"] in text
    # the times were not measured in this run: the heading and a note say so, not "N choices benchmarked"
    timed = page.locator('[data-role="autotune-timed"]')
    assert timed.inner_text() == kernel.metadata["autotune"]["timed_note"]
    assert timed.inner_text().startswith("From torch's autotune cache (timed by an earlier run, not in this one)")
    heading = page.locator('[data-role="autotune"]').locator("xpath=..").locator("h3").inner_text()
    assert "cached times" in heading and "benchmarked" not in heading
    # the library choice's row says what it is (Python's rules.choice_what), a Triton template's its config
    row = page.locator('[data-role="autotune"] tr[data-choice="mm"]').first
    assert row.locator(".il-desc").text_content() == "library kernel (ATen)"
    _assert_clean(page)


def test_report_without_profile_has_no_time_colouring(tmp_path, offline_page):
    """Without measured times the page stays coloured by kind and offers no time toggle."""
    page = offline_page
    data = json.loads((FIXTURES / "gpu_mlp.json").read_text())
    for c in data["compiles"]:
        for k in c["kernels"]:
            k["profile"] = None
    report = inductor_lens.load(data)
    path = tmp_path / "noprofile.html"
    report.save_html(path)
    _open(page, path)
    assert page.locator(".il-root").get_attribute("data-colour-by") == "kind"
    assert page.locator('[data-role="colour-by"]').count() == 0
    assert page.locator("[data-share]").count() == 0
    assert page.locator('[data-role="top-kernels"]').count() == 0
    _assert_clean(page)


def _box(page, selector):
    return page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }",
        selector,
    )


def test_shared_kernels_input_stubs_readable_zoom_search_rows_and_timeline(tmp_path, offline_page):
    page = offline_page
    report = _open_fixture(page, tmp_path, "training")
    fwd, bwd = report.compiles
    root = page.locator(".il-root")
    graph = '[data-view="fusion"] .il-graph'

    # the status says what the graph is; the layout time is a tooltip, not toolbar text
    status = page.locator(".il-status")
    assert status.text_content() == f"{len(fwd.fused_nodes)} fused nodes"
    assert "laid out in" in status.get_attribute("title")

    # search: one row per target (a source line matched by many fused nodes is one row with a count),
    # rows name kernels, not fused-node ids; switching compile closes the dropdown
    page.fill(".il-search-input", "examples.py")
    rows = page.locator(".il-results li[role=option]")
    assert rows.count() > 0
    texts = [r.text_content() for r in rows.all()]
    assert len(texts) == len(set(texts)), texts
    counts = [int(r.get_attribute("data-count")) for r in rows.all()]
    assert max(counts) > 1, "a line matched by several fused nodes should be one row with a count"
    first = rows.first
    fused = first.get_attribute("data-fused")
    node = next(n for c in report.compiles for n in c.fused_nodes if n.name == fused)
    assert node.kernel in first.text_content()
    page.select_option(".il-compile", bwd.id)
    page.wait_for_function("() => document.querySelector('.il-results').hidden")
    page.wait_for_selector(f'{graph}[data-ready="1"] [data-node="{bwd.fused_nodes[-1].name}"]')
    # the backward's modules, inferred on load (the fixture predates fwd_nn_module_stack), open collapsed: expand
    assert bwd.modules_inferred
    page.click('[data-action="expand-all"]')
    page.wait_for_selector(f'{graph}[data-ready="1"] [data-node="{bwd.fused_nodes[0].name}"]')

    # the backward graph has consecutive fused nodes written into one kernel: one box with a count
    by_kernel, runs = {}, []
    for i, n in enumerate(bwd.fused_nodes):
        by_kernel.setdefault(n.kernel, []).append((i, n.name))
        if runs and runs[-1][0] == n.kernel and n.kernel:
            runs[-1][1].append((i, n.name))
        else:
            runs.append((n.kernel, [(i, n.name)]))
    shared = [(k, v) for k, v in runs if len(v) > 1]
    assert shared, "the fixture should have consecutive fused nodes of one kernel"
    kernel, members = shared[0]
    (_, a), (i1, b) = members[0], members[1]
    box = page.locator(f'{graph} [data-node="{members[0][1]}"]')
    assert box.get_attribute("data-kernel") == kernel and box.get_attribute("data-count") == str(len(members))
    assert box.get_attribute("data-nodes").split() == [m for _, m in members]
    label = " ".join(box.locator("text").all_text_contents())
    assert "×" not in label and f"{len(members)} fused nodes · one kernel" in label, label
    # the same kernel called again elsewhere keeps a box of its own there
    elsewhere = [m for _, m in by_kernel[kernel] if m not in {x for _, x in members}]
    for m in elsewhere:
        # drawn by the expand-all above, whose redraw may still be under way on a loaded machine (count() waits not)
        page.wait_for_selector(f'{graph} [data-node="{m}"], {graph} [data-nodes~="{m}"]')
        assert (
            page.locator(f'{graph} [data-node="{m}"]').count() == 1
            or page.locator(f'{graph} [data-nodes~="{m}"]').count() == 1
        )
    # the panel says so, and links to the sibling; selecting the sibling selects the same box
    page.evaluate("(n) => window.inductorLens.select(n)", a)
    note = page.locator('[data-role="shared-kernel"]')
    assert kernel in note.text_content() and f"#{i1}" in note.text_content()
    note.locator(f'[data-sibling="{b}"]').click()
    assert root.get_attribute("data-selected") == b
    assert "il-selected" in box.get_attribute("class")
    # an unshared node has no such note
    lone = next(n.name for n in bwd.fused_nodes if n.kernel and len(by_kernel[n.kernel]) == 1)
    if elsewhere:  # a reused kernel outside the run: said as reuse, not as one fusion
        page.evaluate("(n) => window.inductorLens.select(n)", elsewhere[0])
        assert "reused" in page.locator('[data-role="kernel-reused"], [data-role="shared-kernel"]').first.text_content()
    page.evaluate("(n) => window.inductorLens.select(n)", lone)
    assert page.locator('[data-role="shared-kernel"]').count() == 0

    # graph inputs: small stubs, each feeding one box, instead of one node wired across the graph
    stubs = page.locator(f"{graph} .il-input.il-stub")
    assert stubs.count() > 1
    for s in stubs.all():
        assert page.locator(f'{graph} .il-edge[data-from="{s.get_attribute("data-item")}"]').count() == 1

    # a 41-box graph opens readable (not shrunk to fit), and a selected box is revealed inside the view
    page.keyboard.press("Escape")
    zoom = float(page.locator(f"{graph} svg.il-svg").get_attribute("data-zoom"))
    assert zoom >= 0.7, zoom
    last = bwd.fused_nodes[-1].name
    page.evaluate("(n) => window.inductorLens.select(n)", last)
    view = _box(page, f"{graph} svg.il-svg")
    box = _box(page, f'{graph} [data-node="{last}"] rect')
    assert view[0] <= box[0] and box[2] <= view[2] and view[1] <= box[1] and box[3] <= view[3], (view, box)

    # timeline: every note stays inside the chart
    page.click('[data-tab="timeline"]')
    chart = _box(page, ".il-timeline-chart")
    for i in range(page.locator(".il-tl-note").count()):
        r = page.evaluate(
            "(i) => { const r = document.querySelectorAll('.il-tl-note')[i].getBoundingClientRect(); return [r.left, r.right]; }",
            i,
        )
        assert chart[0] <= r[0] and r[1] <= chart[2] + 1, (r, chart)
    _assert_clean(page)


def test_counts_are_pluralized(tmp_path, offline_page):
    page = offline_page
    report = recorded("gpu_sin_cos.json")
    path = tmp_path / "sin_cos.html"
    report.save_html(path)
    _open(page, path)
    assert page.locator(".il-status").text_content() == "1 fused node"
    summary = page.locator(".il-summary").text_content()
    assert "1 fused node (1 pointwise) in 1 kernel" in summary, summary
    assert "1 fused nodes" not in page.locator(".il-root").text_content()
    _assert_clean(page)


@pytest.mark.parametrize("name", ["perf_gpt2_training", "training", "gpt2_block"])
def test_opening_view_of_every_compile_cuts_no_fused_node_box(tmp_path, offline_context, name):
    """Issue 12: real GPT-2 graphs (recorded on an H200) opened at 1000 x 700, 1280 x 800, in a 700 px cell,
    in a wide, low 1400 x 700 window and at 850 x 800 (a ~500 px graph pane: JupyterLab's notebook at 1280 with
    its sidebar open): for every compile of the selector, the opening view keeps the rule of
    `assert_opening_unclipped` (before: boxes cut at the left edge, e.g. `volution[buf12]`; a forward shown
    whole at 1400 x 700 had its last box under the legend; at 850 px the MLP training step opened on its
    parameters with every kernel box cut at the right edge)."""
    from tests.views.test_front_views import assert_opening_unclipped

    report = recorded(f"gpu_{name}.json")  # once per process (tests/_recorded.py)
    path = tmp_path / f"gpu_{name}.html"
    report.save_html(path)
    pane = '[data-view="fusion"] [data-role="graph-pane"]'
    for width, height in ((1000, 700), (1280, 800), (700, 700), (1400, 700), (850, 800)):
        page = offline_context.new_page(viewport={"width": width, "height": height})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            _open(page, path)
            # the toolbar cuts nothing: its status ("N fused nodes") is whole where it shows (it was "3 fu…" at
            # 1000 px), and the zoom buttons end inside it
            cut = page.evaluate(
                """() => { const bar = document.querySelector('.il-toolbar').getBoundingClientRect();
                const s = document.querySelector('.il-status'); const z = document.querySelector('.il-zoom');
                return [s.offsetParent !== null, s.scrollWidth > s.clientWidth, z.getBoundingClientRect().right > bar.right] }"""
            )
            assert cut == [width >= 1000, False, False], (width, cut)
            if width == 1000:  # a long status (after an export) is cut itself, not the buttons after it
                clipped = page.evaluate(
                    """() => { const s = document.querySelector('.il-status'); const was = s.textContent;
                    s.textContent = 'exported inductor_lens_report_of_a_gpt2_training_step_at_1000_px.html';
                    const bar = document.querySelector('.il-toolbar').getBoundingClientRect();
                    const z = document.querySelector('.il-zoom').getBoundingClientRect().right > bar.right;
                    s.textContent = was; return z }"""
                )
                assert not clipped
            ids = page.evaluate("() => [...document.querySelectorAll('.il-compile option')].map((o) => o.value)")
            assert set(ids) == {c.id for c in report.compiles}
            for cid in ids:
                if cid != ids[0]:
                    page.select_option(".il-compile", cid)
                page.wait_for_function("([sel, c]) => document.querySelector(sel).dataset.drawn === c", arg=[pane, cid])
                assert_opening_unclipped(page, f"{name} {width}px {cid}")
                if width == 1000:  # a stub's name is whole where its oval was made for it (nu25 L1: the oval sized
                    # for its 11 px text, the room counted in the boxes' 12 px mono: "…del.norm.weight")
                    cut = page.evaluate(
                        """() => [...document.querySelectorAll('[data-view="fusion"] g.il-stub')].filter((g) =>
                        { const t = g.querySelector('text').textContent; const whole = g.querySelector('title')
                          .textContent; return t.startsWith('…') && t.length < 28 && !/^\\d+ (in|out)puts$/.test(t)
                          && whole.includes(t.slice(1)) && t.slice(1).length < 26 }).map((g) =>
                          g.querySelector('text').textContent)"""
                    )
                    assert cut == [], (name, cid, cut)
            assert errors == []
        finally:
            page.close()


def test_the_overview_opens_folded_where_it_would_cover_a_box_and_the_users_choice_is_kept(tmp_path, offline_page):
    """At 1000 x 720 the Llama-shaped step's column (with its stubs) runs under the minimap's corner: the
    overview opens folded to a "map" button (Minimap.wouldCover); unfolded, it lies over a box (the fold was needed),
    still moves the view, and the user's fold or unfold holds for the other compiles."""
    page = offline_page
    page.set_viewport_size({"width": 1000, "height": 720})
    report = recorded("gpu_llama8b_4layers_training.json.gz")
    report.save_html(tmp_path / "llama.html")
    _open(page, tmp_path / "llama.html")
    mm, unfold = page.locator('[data-role="minimap"]'), page.locator('[data-role="minimap-unfold"]')
    assert unfold.is_visible() and not mm.is_visible()
    unfold.click()
    assert mm.is_visible() and not unfold.is_visible()
    # a box or an input/output stub (Minimap.wouldCover's items: a stub's label is read too); at the opening zoom of
    # 0.8 (the graph's width does not fit) a stub at the column's right lies under it
    boxes = page.evaluate(
        _BOXES_JS,
        ", ".join(
            f'[data-view="fusion"] {c}'
            for c in (".il-node rect", ".il-group rect", ".il-input ellipse", ".il-output ellipse")
        ),
    )
    m = mm.bounding_box()
    where = {"x0": m["x"], "y0": m["y"], "x1": m["x"] + m["width"], "y1": m["y"] + m["height"]}
    assert any(_overlap(b, where) for b in boxes), "the minimap covers no box: it need not have opened folded"
    before = page.locator('[data-view="fusion"] svg.il-svg .il-viewport').get_attribute("transform")
    page.mouse.click(m["x"] + m["width"] / 2, m["y"] + m["height"] - 4)
    assert page.locator('[data-view="fusion"] svg.il-svg .il-viewport').get_attribute("transform") != before
    # the user's choice holds for the next compile's opening
    pane = '[data-view="fusion"] [data-role="graph-pane"]'
    cid = report.compiles[1].id
    page.select_option(".il-compile", cid)
    page.wait_for_function("([sel, c]) => document.querySelector(sel).dataset.drawn === c", arg=[pane, cid])
    assert mm.is_visible()
    page.locator('[data-role="minimap-fold"]').click()
    assert unfold.is_visible() and not mm.is_visible()
    page.select_option(".il-compile", report.compiles[0].id)
    page.wait_for_function(
        "([sel, c]) => document.querySelector(sel).dataset.drawn === c", arg=[pane, report.compiles[0].id]
    )
    assert unfold.is_visible() and not mm.is_visible()
    _assert_clean(page)


def test_a_kernels_run_says_where_the_graph_draws_its_nodes_as_modules_fold_and_unfold(tmp_path, offline_page):
    """The GPT-2 backward's kernel `triton_per_fused_native_layer_norm_backward_view_2` is called for op44 (h.0.ln_1)
    and op46 (top level) together. The panel said "(one box in the graph)" whatever the folding; with h.0 folded,
    op44 is inside h.0's box and op46 a box of its own. It now says where they are, and follows a fold."""
    page = offline_page
    report = _open_fixture(page, tmp_path, "training")
    bwd = report.compiles[1]
    assert next(k for k in bwd.kernels if k.name == "triton_per_fused_native_layer_norm_backward_view_2").call_sites[
        -1
    ] == ["op44", "op46"]
    pane = '[data-view="fusion"] [data-role="graph-pane"]'
    page.select_option(".il-compile", bwd.id)
    page.wait_for_function("([sel, c]) => document.querySelector(sel).dataset.drawn === c", arg=[pane, bwd.id])
    page.click('[data-action="collapse-all"]')
    page.locator(f'{pane} [data-node="op46"]').dispatch_event("click")  # below the fold
    note = page.locator('[data-role="shared-kernel"]')
    assert "drawn in 2 places: 1 as a box, 1 inside h.0" in note.inner_text(), note.inner_text()
    page.click('[data-action="expand-all"]')
    page.wait_for_function("() => !document.querySelector('[data-view=fusion] [data-module]')")
    assert "(one box in the graph)" in note.inner_text(), note.inner_text()
    _assert_clean(page)


_BOXES_JS = """(sel) => [...document.querySelectorAll(sel)].map((e) => {
  const r = e.getBoundingClientRect();
  return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom, text: e.textContent, kernel: e.dataset.kernel || "",
          memory: e.dataset.memoryOnly === "true"};
})"""


def _overlap(a, b):
    return a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]


def test_h200_roofline_merges_equal_roofs_keeps_labels_clear_and_shows_memory_only_kernels_apart(
    tmp_path, offline_page
):
    # the H200's bf16 and fp16 peaks are equal (989.5 TFLOP/s): one roof, one label; labels clear of the dots;
    # the kernels with no FLOPs sit in a strip of their own by their fraction of the bandwidth, and in a list
    page = offline_page
    report = _open_fixture(page, tmp_path, "perf_gpt2_training")
    peaks = report.device_info.peak_tflops
    assert peaks["bf16"] == peaks["fp16"] and len(set(peaks.values())) == 3
    page.click('[data-tab="roofline"]')
    labels = page.evaluate(_BOXES_JS, '[data-view="roofline"] [data-role="roof-label"]')
    texts = sorted(lb["text"] for lb in labels)
    assert texts == sorted(["bf16/fp16 990 TFLOP/s", "tf32 495 TFLOP/s", "fp32 67 TFLOP/s", "4800 GB/s"]), texts
    assert page.locator('[data-view="roofline"] [data-roof="bf16/fp16"]').count() == 1
    dots = page.evaluate(_BOXES_JS, '[data-view="roofline"] [data-role="roofline-dot"]')
    assert len(dots) == sum(1 for k in report.kernels if k.profile and k.profile.achieved_gbps is not None)
    for i, a in enumerate(labels):
        assert not any(_overlap(a, b) for b in labels[i + 1 :]), (a, labels)
        assert not any(_overlap(a, d) for d in dots), (a, [d for d in dots if _overlap(a, d)])
    # memory-only: the kernels whose profile says 0 FLOP per byte, each in the strip, none in the plot
    memory_only = {
        (c.id, k.name): k.profile
        for c in report.compiles
        for k in c.kernels
        if k.profile and k.profile.arithmetic_intensity == 0
    }
    assert len(memory_only) >= 3
    strip = page.evaluate(_BOXES_JS, '[data-view="roofline"] [data-role="memory-strip"]')[0]
    in_strip = [d for d in dots if d["memory"]]
    assert sorted(d["kernel"] for d in in_strip) == sorted(k for _, k in memory_only)
    for d in dots:
        inside = strip["x0"] <= (d["x0"] + d["x1"]) / 2 <= strip["x1"]
        assert inside == d["memory"], d
    # higher in the strip = a larger fraction of the bandwidth (the step's best kernel, at 95%, on top)
    frac = {k: p.peak_fraction for (_, k), p in memory_only.items()}
    by_height = sorted(in_strip, key=lambda d: d["y0"])
    assert [frac[d["kernel"]] for d in by_height] == sorted(frac.values(), reverse=True)
    rows = page.locator('[data-role="memory-only"] tbody tr')
    assert rows.count() == len(memory_only)
    best = max(memory_only.values(), key=lambda p: p.achieved_gbps)
    assert rows.first.locator("td").nth(2).inner_text() == f"{round(best.peak_fraction * 100)}%"
    _assert_clean(page)


def test_graph_break_reasons_fold_to_their_first_line(tmp_path, offline_context):
    # the four graph breaks of the GPT-2 fixture filled two thirds of the side panel; each now shows its
    # first line and "more", the rest on a click
    report = recorded("gpu_perf_gpt2_training.json")
    path = tmp_path / "gb.html"
    report.save_html(path)
    page = offline_context.new_page(viewport={"width": 1000, "height": 700})
    try:
        _open(page, path)
        section = page.locator('[data-role="graph-breaks"]')
        folds = section.locator('[data-role="folded"]')
        assert folds.count() == len(report.graph_breaks) == 4
        # the telling line, not torch's header naming the bytecode ("Encountered graph break when attempting to
        # trace CALL: a function call, e.g. f(x, y):"), which is all the first line said
        first = report.graph_breaks[0].summary
        assert first == "logging.Logger method not supported for non-export cases"
        assert folds.first.locator("summary").inner_text().startswith(first)
        assert "more" in folds.first.locator("summary").inner_text()
        assert not folds.first.locator(".il-fold-rest").is_visible()
        panel = page.locator(".il-panel").bounding_box()
        # about half the panel: the third break, which dynamo could not resume from, says so in its folded line
        # (one line more: "(not resumable: the rest ran eagerly)")
        assert section.bounding_box()["height"] < panel["height"] * 0.55
        summaries = [b.summary for b in report.graph_breaks]
        assert [s.endswith("(not resumable: the rest ran eagerly)") for s in summaries] == [False, False, True, False]
        folds.first.locator("summary").click()
        assert folds.first.locator(".il-fold-rest").is_visible()
        rest = folds.first.locator(".il-fold-rest").inner_text()
        assert "logging.Logger methods are not supported" in rest and rest.startswith("Encountered graph break")
        line = section.locator('[data-role="break-line"]').first
        assert line.inner_text().startswith("make_perf_fixtures.py:39")  # the user's innermost line
        # it broke inside transformers, beyond that line (torch's hint is not the user's to follow): said under it,
        # in Python's words; the recorded frames staged transformers "torch" (its environment is /opt/torch/.venv)
        inside = section.locator('[data-role="break-inside"]')
        assert inside.count() == 4 and inside.first.is_visible()
        said = report.graph_breaks[0].inside_text
        assert said.startswith("Not in your code: inside a library, transformers/modeling_utils.py:")
        assert inside.first.inner_text() == said and said in line.get_attribute("title")
    finally:
        page.close()


@pytest.mark.parametrize("name", ["perf_gpt2_training.json", "memory_gpt2.json.gz"])
def test_kernel_table_fits_its_view_at_1000_px_with_whose_lines(tmp_path, offline_context, name):
    """Each line of torch's or a library's says so ("(torch's)"): on one line with the line, the table of a 1000 px
    page was wider than its view (it scrolled sideways, its last column cut). Where the view is narrow, "(torch's)"
    goes below the line, and every compile's table fits its view."""
    report = recorded(f"gpu_{name}")
    path = tmp_path / "k.html"
    report.save_html(path)
    page = offline_context.new_page(viewport={"width": 1000, "height": 700})
    try:
        _open(page, path)
        page.click('[data-tab="kernels"]')
        whose = 0
        for c in report.compiles:
            page.select_option(".il-compile", c.id)
            view = page.locator('[data-view="kernels"]')
            view.locator(f'[data-role="kernel-row"][data-kernel="{c.kernels[0].name}"]').wait_for()
            table = page.evaluate(
                """() => { const s = document.querySelector('[data-view="kernels"] .il-kscroll');
                return {scroll: s.scrollWidth, client: s.clientWidth}; }"""
            )
            assert table["scroll"] <= table["client"], (c.id, table)
            whose += view.locator('[data-role="line-whose"]').count()
            for cell in view.locator('.il-kline:has([data-role="line-whose"])').all()[:5]:  # the line, then whose
                # a kernel launched from several lines says how many more ("(+2 more)") before whose the first is
                text = " ".join(cell.inner_text().split())
                assert re.fullmatch(r"\S+:\d+( \(\+\d+ more\))? \((torch|a library)'s\)", text), text
        assert whose, "no line of torch's or a library's in the fixture: the test shows nothing"
        _assert_clean(page)
    finally:
        page.close()


@pytest.mark.parametrize("width", [1000, 1280])
def test_autotune_table_fits_the_panel(tmp_path, offline_context, width):
    """A choice's name and badges did not wrap, so the config column was squeezed to a few pixels beside them and
    cut at the panel's edge (a frozen CPU template's ``cpp_CppMicroGemmFP32Vec_1 fastest chosen`` at 1280 px). The
    config is a line under the choice: the table fits its panel, each choice's config in its row."""
    report = recorded("gpu_max_autotune.json")
    (c,) = report.compiles
    path = tmp_path / "a.html"
    report.save_html(path)
    page = offline_context.new_page(viewport={"width": width, "height": 800})
    try:
        _open(page, path)
        tuned = [k for k in c.kernels if "autotune" in k.metadata]
        assert tuned
        for k in tuned:
            node = next(n for n in c.fused_nodes if n.kernel == k.name)
            page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
            box = page.locator('[data-role="autotune"]')
            box.locator("table").first.wait_for()
            fit = box.evaluate(
                """(b) => { const t = b.querySelector('table'), r = t.getBoundingClientRect();
                const pane = b.closest('.il-section').getBoundingClientRect();
                return {right: r.right, pane: pane.right, rows: [...t.querySelectorAll('tbody tr[data-choice]')].map(
                  (tr) => [tr.dataset.choice, tr.querySelector('.il-desc')?.textContent || '', tr.getBoundingClientRect().height])}; }"""
            )
            assert fit["right"] <= fit["pane"] + 1, (k.name, width, fit)
            by_name = {ch["name"]: ch for ch in k.metadata["autotune"]["choices"]}
            for name, config, height in fit["rows"]:
                assert config, (name, "its config or what it is, under its name")
                if by_name[name].get("description"):
                    assert all(f"{key}=" in by_name[name]["description"] for key in re.findall(r"(\w+)=", config))
                assert height < 80, (name, height)  # a name, its badges and a config of at most two lines
        _assert_clean(page)
    finally:
        page.close()


def test_a_noisy_kernel_is_marked_on_its_box_its_folded_module_and_the_roll_up_tables(tmp_path, offline_page):
    """A kernel whose profiled runs disagree (``KernelProfile.noisy``, Python's sentence) was marked in the Kernels
    table, the top kernels and the roofline, but not on its fusion box, the folded module holding it, nor the
    roofline's roll-ups by kind, module and line. Each now says so: "(x%, noisy)" on its box, "(x%, 1 noisy)" on the
    module's, a "noisy" mark beside the time of each roll-up row that holds it, the sentence in the tooltips."""
    import dataclasses

    from inductor_lens.report.lines import rollups_noisy
    from inductor_lens.report.plain import to_plain
    from tests.views.test_front_views import _page_from_dict

    report = recorded("gpu_llama8b_4layers_training.json.gz")
    fwd = report.compiles[0]
    layer = {n.kernel for n in fwd.fused_nodes if n.module_stack[:2] == ["model", "model.layers.0"] and n.kernel}
    k = max((k for k in fwd.kernels if k.name in layer and k.profile), key=lambda k: k.profile.total_us)
    sentence = "noisy: the slowest run took 100x the fastest (1.00 µs to 100 µs): the machine was busy"
    stalled = dataclasses.replace(k.profile, noisy=sentence, min_us=1.0, max_us=100.0)
    kernels = [dataclasses.replace(x, profile=stalled) if x.name == k.name else x for x in fwd.kernels]
    # the roll-up rows name their noisy kernels as Python does (analysis/perf.py at profile time; on load, this)
    report = rollups_noisy(
        dataclasses.replace(report, compiles=[dataclasses.replace(fwd, kernels=kernels)] + report.compiles[1:])
    )
    assert [r for r in report.profile.by_kind if r.noisy] and all(
        r.noisy == [k.name] for r in report.profile.by_kind if r.noisy
    )
    data = to_plain(report)
    path = _page_from_dict(tmp_path, report, data, "noisy.html")
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 800})
    _open(page, path)
    view = '[data-view="fusion"]'
    # the layers open folded as one repeated block: it counts the noisy kernel, its tooltip has the sentence
    marked = page.locator(f"{view} [data-noisy]")
    assert marked.count() == 1
    assert marked.first.get_attribute("data-module") and "1 noisy)" in marked.first.text_content()
    assert sentence in marked.first.locator("title").last.text_content()
    page.click('[data-action="expand-all"]')
    page.wait_for_selector(f'{view} [data-kernel="{k.name}"]', timeout=60000)
    marked = page.locator(f"{view} [data-noisy]")
    assert [m.get_attribute("data-kernel") for m in marked.all()] == [k.name]
    assert "noisy)" in marked.first.text_content() and sentence in marked.first.locator("title").last.text_content()
    page.click('[data-tab="roofline"]')
    for role, rows in (("kind", report.profile.by_kind), ("module", report.profile.by_module),
                       ("line", report.profile.by_line)):  # fmt: skip
        holding = [r for r in rows if k.name in r.kernels]
        assert holding, role
        marks = page.locator(f'[data-role="rollup-{role}"] [data-role="noisy-mark"]')
        assert marks.count() == len(holding), role
        for m in marks.all():
            assert m.inner_text() in ("noisy", "1 noisy") and sentence in m.get_attribute("title"), role
    _assert_clean(page)
