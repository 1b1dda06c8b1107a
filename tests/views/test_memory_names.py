"""The Memory view's roll-ups at real scale (the Llama-3-8B-shaped step recorded on an H200): a module path of a
repeated layer is long (``model.layers.0-31.mlp.down_proj``) and rows differ only at its end, so the name wraps
after a dot instead of losing its end to an ellipsis."""

from __future__ import annotations

import pytest

from tests.views.test_llama8b_page import _opened, pages  # noqa: F401 (a module fixture)

pytestmark = pytest.mark.gpu_fixture


def test_module_names_in_the_roll_ups_are_shown_whole(pages, offline_context):  # noqa: F811
    _, path = pages("gpu_llama8b_training")
    with _opened(offline_context, path) as page:
        page.click('[data-tab="memory"]')
        page.wait_for_selector('[data-view="memory"] [data-role="saved-by-module"] li')
        rows = page.evaluate(
            """() => [...document.querySelectorAll('[data-view="memory"] [data-role="saved-by-module"] > ul > li,'
                + '[data-view="memory"] [data-role="peak-by-module"] > ul > li')].map((li) => {
                const n = li.querySelector('.il-mem-name');
                return {module: li.dataset.module, text: n.textContent, clipped: n.scrollWidth > n.clientWidth + 1,
                        right: n.getBoundingClientRect().right,
                        times: li.querySelector('.il-mem-times').getBoundingClientRect().left};
            })"""
        )
        assert len(rows) >= 8
        assert any(r["module"].endswith("mlp.down_proj") for r in rows)
        for r in rows:
            assert r["text"].startswith(r["module"]), r  # the whole path, in order
            assert not r["clipped"] and r["right"] <= r["times"] + 1, r  # nothing cut, nothing under the count
        assert not page.errors
