"""Issue 25: the page of the Llama-3-8B-shaped training step (1,551 fused nodes, recorded on an H200) opens
readable at 1000 x 700 and 1920 x 1080: no box cut on the left or top, labels >= 11 px, forward and backward."""

from __future__ import annotations

import pathlib

import pytest

import inductor_lens

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
pytestmark = pytest.mark.gpu_fixture


@pytest.mark.parametrize("name", ["gpu_llama8b_training", "gpu_llama8b_4layers_training"])
def test_the_page_opens_unclipped_and_readable_at_two_sizes(tmp_path, chromium_browser, name):
    from tests.views.test_front_views import assert_opening_unclipped
    from tests.views.test_html_export import _open

    report = inductor_lens.load(FIXTURES / f"{name}.json.gz")
    path = tmp_path / f"{name}.html"
    report.save_html(path)
    pane = '[data-view="fusion"] [data-role="graph-pane"]'
    for width, height in ((1000, 700), (1920, 1080)):
        context = chromium_browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            _open(page, path)
            for c in report.compiles:
                if page.locator(".il-compile").input_value() != c.id:
                    page.select_option(".il-compile", c.id)
                page.wait_for_function(
                    "([sel, c]) => document.querySelector(sel).dataset.drawn === c", arg=[pane, c.id]
                )
                assert_opening_unclipped(page, f"{name} {width}px {c.id}")
            assert errors == []
        finally:
            context.close()
