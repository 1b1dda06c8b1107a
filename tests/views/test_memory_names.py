"""The Memory view's roll-ups at real scale (the Llama-3-8B-shaped step recorded on an H200): a module path of a
repeated layer is long (``model.layers.0-31.mlp.down_proj``) and rows differ only at its end, so at 1000 px the two
roll-ups stand one above the other and each name is whole on one line (it wrapped after a dot, mid-name, in two
narrow columns); a row that folds the instances of a repeated layer says its bytes are their sum."""

from __future__ import annotations

import pytest

from tests.views.test_llama8b_page import _opened, pages  # noqa: F401 (a module fixture)

pytestmark = pytest.mark.gpu_fixture


def test_module_names_in_the_roll_ups_are_shown_whole(pages, offline_context):  # noqa: F811
    report, path = pages("gpu_llama8b_training")
    with _opened(offline_context, path) as page:
        page.click('[data-tab="memory"]')
        page.wait_for_selector('[data-view="memory"] [data-role="saved-by-module"] li')
        rows = page.evaluate(
            """() => [...document.querySelectorAll('[data-view="memory"] [data-role="saved-by-module"] > ul > li,'
                + '[data-view="memory"] [data-role="peak-by-module"] > ul > li')].map((li) => {
                const n = li.querySelector('.il-mem-name'), head = n.querySelector('.il-cut-head');
                const t = li.querySelector('.il-mem-times');
                return {module: li.dataset.module, text: n.textContent, title: li.title,
                        clipped: n.scrollWidth > n.clientWidth + 1 || (!!head && head.scrollWidth > head.clientWidth),
                        lines: Math.round(n.getBoundingClientRect().height
                                          / li.querySelector('.il-mem-bytes').getBoundingClientRect().height),
                        right: n.getBoundingClientRect().right, count: t.textContent,
                        times: t.getBoundingClientRect().left};
            })"""
        )
        assert len(rows) >= 8
        assert any(r["module"].endswith("mlp.down_proj") for r in rows)
        for r in rows:
            assert r["text"].startswith(r["module"]), r  # the whole path, in order
            assert not r["clipped"] and r["right"] <= r["times"] + 1, r  # nothing cut, nothing under the count
            assert r["lines"] == 1, r  # one line: not broken after a dot
        # a folded row (model.layers.0-31.mlp) holds the sum of its instances and says so; its instances are the
        # ones Python folded into it (BytesBy.instances)
        memory = report.compile(page.input_value(".il-compile")).memory
        folded = {b.module: b.instances for b in [*memory.saved_by_module_folded, *memory.peak_by_module]}
        repeated = [r for r in rows if folded.get(r["module"], 0) > 1]
        assert repeated, rows
        for r in repeated:
            n = folded[r["module"]]
            assert r["count"] == f"sum of {n}" and f"in all {n} instances together" in r["title"], r
        assert all(r["count"] == "" for r in rows if folded.get(r["module"], 0) <= 1)
        assert not page.errors


def test_a_module_path_too_long_for_its_row_is_cut_in_its_middle_on_one_line(tmp_path, pages, offline_context):  # noqa: F811
    """A path longer than its row (a deep module of a repeated layer) stays on one line: its head ends in an
    ellipsis, its last part is whole and in view, and the row's title says the whole path. It broke after a dot,
    over two or three lines, mid-name."""
    from tests.views.test_front_views import _page_from_dict

    report, _ = pages("gpu_llama8b_4layers_training")
    data = report.to_dict()
    rows = data["compiles"][0]["memory"]["saved_by_module_folded"]
    long = "model.layers.0-3.self_attn.rotary_emb.cached_cos_sin_table.inverse_frequencies"
    rows[1]["module"] = long
    path = _page_from_dict(tmp_path, report, data)
    with _opened(offline_context, path) as page:
        page.click('[data-tab="memory"]')
        li = page.locator(f'[data-view="memory"] [data-role="saved-by-module"] li[data-module="{long}"]')
        got = li.evaluate(
            """(li) => { const n = li.querySelector('.il-mem-name'), head = n.querySelector('.il-cut-head');
                const range = document.createRange();
                range.selectNodeContents(n.lastChild);
                return {text: n.textContent, title: li.title, cut: !!head && head.scrollWidth > head.clientWidth,
                        tail: n.lastChild.textContent, tailRight: range.getBoundingClientRect().right,
                        right: n.getBoundingClientRect().right,
                        lines: Math.round(n.getBoundingClientRect().height
                                          / li.querySelector('.il-mem-bytes').getBoundingClientRect().height)}; }"""
        )
        assert got["text"] == long and got["title"].startswith(f"{long}: "), got
        assert got["lines"] == 1 and got["cut"], got
        assert got["tail"] == ".inverse_frequencies" and got["tailRight"] <= got["right"] + 0.5, got
        assert not page.errors
