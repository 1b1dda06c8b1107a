"""Issue 25: the page of the Llama-3-8B-shaped training step (1,551 fused nodes, recorded on an H200) opens
readable at 1000 x 700 and 1920 x 1080: no box cut on the left or top, labels >= 11 px, forward and backward."""

from __future__ import annotations

import contextlib

import pytest

from tests._recorded import recorded

pytestmark = pytest.mark.gpu_fixture


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """``name -> (report, exported page)``, each fixture loaded and exported once for the file's tests."""
    out, tmp = {}, tmp_path_factory.mktemp("llama")

    def page(name: str):
        if name not in out:
            report = recorded(f"{name}.json.gz")  # loaded once per process (tests/_recorded.py)
            path = tmp / f"{name}.html"
            report.save_html(path)
            out[name] = (report, path)
        return out[name]

    return page


@contextlib.contextmanager
def _opened(offline_context, path, size=(1000, 700)):
    """The page at ``path`` opened in a fresh page of ``size``; closed after."""
    from tests.views.test_html_export import _open

    page = offline_context.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        _open(page, path)
        page.errors = errors
        yield page
    finally:
        page.close()


@pytest.mark.parametrize("name", ["gpu_llama8b_training", "gpu_llama8b_4layers_training"])
def test_the_page_opens_unclipped_and_readable_at_two_sizes(pages, offline_context, name):
    from tests.views.test_front_views import assert_opening_unclipped

    report, path = pages(name)
    pane = '[data-view="fusion"] [data-role="graph-pane"]'
    for width, height in ((1000, 700), (1920, 1080)):
        with _opened(offline_context, path, (width, height)) as page:
            for c in report.compiles:
                if page.locator(".il-compile").input_value() != c.id:
                    page.select_option(".il-compile", c.id)
                page.wait_for_function(
                    "([sel, c]) => document.querySelector(sel).dataset.drawn === c", arg=[pane, c.id]
                )
                assert_opening_unclipped(page, f"{name} {width}px {c.id}")
            assert page.errors == []


def test_the_forward_opens_with_the_layers_as_one_repeated_block_that_a_click_expands(pages, offline_context):
    _, path = pages("gpu_llama8b_training")
    with _opened(offline_context, path) as page:
        view = '[data-view="fusion"]'
        assert page.locator(".il-compile").input_value().endswith("forward")
        boxes = page.locator(f"{view} .il-nodes > g.il-item:not(.il-stub)")
        assert boxes.count() > 1
        block = page.locator(f'{view} g.il-repeat[data-module="repeat:model.layers.0-31"]')
        assert block.get_attribute("data-repeat") == "32"
        text = block.locator("text").all_text_contents()
        assert text[0] == "model.layers.0-31 ×32"
        assert "same kernels except in 2 of 32: layers.0 (other kernels), layers.1 (other kernels)" in " ".join(text)
        assert page.locator(f'{view} g.il-group[data-module="model.rotary_emb"], {view} g[data-node]').count() >= 3
        # a click shows the 32 layers, each a module box
        block.locator("rect").first.dispatch_event("click")
        page.wait_for_function(
            "(s) => document.querySelectorAll(s).length === 32",
            arg=f'{view} g.il-group[data-module^="model.layers."]',
        )
        assert page.locator(f"{view} g.il-repeat").count() == 0


def test_the_backward_opens_with_its_inferred_layers_as_one_repeated_block(pages, offline_context):
    """The fixture's backward was recorded without module paths for its own ops: inferred on load
    (report/module_paths.py), its layers fold into one box, and the panel says the paths are inferred. (At
    1000 x 700 the box is inside the collapsed ``model``: expanding it would show 10 boxes on a screen of 9.) The
    recording of 2026-12-01, before the capture read them; today's fixture records them."""
    _, path = pages("gpu_llama8b_training_unrecorded_backward")
    with _opened(offline_context, path, (1920, 1080)) as page:
        view = '[data-view="fusion"]'
        page.select_option(".il-compile", "0/0 backward")
        pane = f"{view} [data-role='graph-pane']"
        page.wait_for_function("(sel) => document.querySelector(sel).dataset.drawn === '0/0 backward'", arg=pane)
        block = page.locator(f'{view} g.il-repeat[data-module="repeat:model.layers.31-0"]')
        assert block.get_attribute("data-repeat") == "32"
        assert block.locator("text").all_text_contents()[0] == "model.layers.31-0 ×32"
        assert 4 < page.locator(f"{view} .il-nodes > g.il-item:not(.il-stub)").count() <= 36
        assert "inferred, not recorded" in page.locator('[data-role="modules-inferred"]').inner_text()
