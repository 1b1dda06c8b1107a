"""Issue 26: a click draws the part of its panel that shows in the click's frame, the rest in the task after
its paint (panel.js ``drawBelowTheFoldLater``), and nothing moves when the rest is drawn.

Read on the Llama-3-8B-shaped 4-layer training step (recorded on an H200: panels with a launch table, a Triton
source and both backtraces, taller than the view) at 1000 x 700. No timing is asserted: what is drawn in the
click's frame is read in a requestAnimationFrame callback queued after the panel's own.
"""

from __future__ import annotations

import pathlib

import pytest

import inductor_lens

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
pytestmark = pytest.mark.gpu_fixture

#: The panel in the click's frame (after the panel's requestAnimationFrame, before the frame's paint) and once
#: every section is shown: each section's state and place, the fold, and the kernel source's.
_CLICK_JS = """
async (name) => {
  const box = document.querySelector(`[data-view="fusion"] [data-node="${CSS.escape(name)}"]`);
  const panel = document.querySelector('.il-panel:not(.il-prewarm)');
  const snap = () => {
    const pre = panel.querySelector('pre[data-role="kernel-source"]');
    const rect = (e) => e.getBoundingClientRect();
    return {
      fold: Math.min(rect(panel).bottom, innerHeight),
      sections: [...panel.children].map((s) => ({later: s.classList.contains('il-later'), top: rect(s).top,
                                                  bottom: rect(s).bottom, text: s.textContent.length})),
      pre: pre ? {later: pre.classList.contains('il-later'), shown: !pre.parentElement.closest('.il-later'),
                  top: rect(pre).top} : null,
      height: panel.scrollHeight,
    };
  };
  box.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  await Promise.resolve(); // after anything the click queued, its panel's requestAnimationFrame included
  const frame = await new Promise((r) => requestAnimationFrame(() => r(snap())));
  while (panel.querySelector('.il-later')) await new Promise((r) => setTimeout(r, 20));
  return {frame, settled: snap()};
}
"""


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    report = inductor_lens.load(FIXTURES / "gpu_llama8b_4layers_training.json.gz")
    path = tmp_path_factory.mktemp("fold") / "llama4.html"
    report.save_html(path)
    return path


def test_a_click_draws_what_shows_in_its_frame_and_the_rest_after_without_moving_it(chromium_browser, page_path):
    from tests.views.test_html_export import _open

    context = chromium_browser.new_context(viewport={"width": 1000, "height": 700})
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        _open(page, page_path)
        names = page.evaluate("""() => [...document.querySelectorAll('[data-view="fusion"] [data-node]')]
                                  .filter((g) => g.dataset.kernel).map((g) => g.dataset.node)""")
        assert names, "no kernel box at open"
        deferred = 0
        for name in names:
            r = page.evaluate(_CLICK_JS, name)
            frame, settled, fold = r["frame"], r["settled"], r["frame"]["fold"]
            later = [s["later"] for s in frame["sections"]]
            assert not later[0], f"{name}: the panel's header was not drawn in the click's frame"
            assert later == sorted(later), f"{name}: the click's frame drew a section below one it left: {later}"
            shown = [s for s in frame["sections"] if not s["later"]]
            if any(later):  # drawn up to the fold: the last section drawn reaches it, the next starts below it
                deferred += 1
                assert shown[-1]["bottom"] >= fold, f"{name}: a section that shows was left for later"
                assert settled["sections"][len(shown)]["top"] >= fold, f"{name}: a section left for later shows"
            for a, b in zip(shown, settled["sections"]):  # nothing drawn in the frame moved afterwards
                assert (a["top"], a["bottom"]) == (b["top"], b["bottom"]), f"{name}: a section moved: {a} -> {b}"
            assert [s["text"] for s in settled["sections"]] == [s["text"] for s in frame["sections"]]
            pre = frame["pre"]
            if pre and pre["shown"]:  # the source is drawn in the frame exactly when its top shows
                assert pre["later"] == (pre["top"] >= fold), f"{name}: kernel source at {pre['top']}, fold {fold}"
            # the kernel source, drawn once scrolled into view, is as tall as it was while it was not drawn
            before = settled["height"]
            page.locator('.il-panel:not(.il-prewarm) pre[data-role="kernel-source"]').scroll_into_view_if_needed()
            page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))")
            assert page.evaluate("() => document.querySelector('.il-panel:not(.il-prewarm)').scrollHeight") == before
        assert deferred, "no click left a section below the fold for later: the panels were not taller than the view"
        assert errors == []
    finally:
        context.close()


def test_the_kernel_sources_lines_are_numbered_1_2_3(chromium_browser, page_path):
    """The panel's kernel source is drawn with ``content-visibility: auto`` (style containment), under which a
    counter incremented on each line's ``::before`` restarted on every line: every line read 1. The gutter of each
    of the first lines is read as pixels (counter values are not in the DOM): lines 1, 2 and 3 must differ, and
    line 11's number is wider than line 1's (two digits)."""
    from tests.views.test_html_export import _open

    context = chromium_browser.new_context(viewport={"width": 1000, "height": 700})
    try:
        page = context.new_page()
        _open(page, page_path)
        name = page.evaluate("""() => [...document.querySelectorAll('[data-view="fusion"] [data-node]')]
                                 .find((g) => (g.dataset.kernel || "").startsWith("triton_")).dataset.node""")
        page.locator(f'[data-view="fusion"] [data-node="{name}"]').first.click()
        pre = page.locator('.il-panel:not(.il-prewarm) pre[data-role="kernel-source"]')
        pre.scroll_into_view_if_needed()
        page.wait_for_function(
            """() => { const p = document.querySelector('.il-panel:not(.il-prewarm) pre[data-role="kernel-source"]');
                       return p && !p.classList.contains('il-later') && p.querySelectorAll('.il-line').length > 12; }"""
        )
        lines = pre.locator(".il-line")

        def gutter(i):  # the line's number: the ::before box at its left, 3.2em wide
            line = lines.nth(i)
            line.scroll_into_view_if_needed()
            box = line.bounding_box()
            em = page.evaluate("(e) => parseFloat(getComputedStyle(e).fontSize)", line.element_handle())
            return page.screenshot(clip={"x": box["x"], "y": box["y"], "width": 3.2 * em, "height": box["height"]})

        shots = [gutter(i) for i in (0, 1, 2)]
        assert len(set(shots)) == 3, "the first three lines of the kernel source carry the same number"
        assert gutter(10) not in shots
    finally:
        context.close()
