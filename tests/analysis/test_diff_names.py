"""The compare table at 1000 x 700 shows each kernel's whole name: the names of one model's kernels differ at
their end (``triton_tem_fused_addmm_relu_0`` / ``triton_tem_fused_addmm_t_1``), which an ellipsis cut."""

from __future__ import annotations

import pathlib

import pytest

import inductor_lens

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.gpu_fixture
def test_kernel_names_in_the_compare_table_are_shown_whole(tmp_path, chromium_browser):
    a = inductor_lens.load(FIXTURES / "gpu_mlp_wide_default.json")
    b = inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    path = inductor_lens.diff(a, b).save_html(tmp_path / "diff.html")
    context = chromium_browser.new_context(viewport={"width": 1000, "height": 700})
    try:
        page = context.new_page()
        page.goto(pathlib.Path(path).as_uri())
        page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
        cells = page.evaluate(
            """() => [...document.querySelectorAll('[data-view="compare"] [data-role="diff-row"] td:is(:nth-child(2), :nth-child(3))')]
                .map((td) => ({text: td.textContent, title: td.title, clipped: td.scrollWidth > td.clientWidth + 1}))"""
        )
        named = [c for c in cells if c["text"] != "—"]
        assert len(named) >= 6 and any(c["text"].startswith("triton_tem_fused_addmm") for c in named)
        for c in named:
            # a merged launch's empty side names the launch its ops run in ("→ triton_tem_..."), whole too
            name = c["text"].removeprefix("→ ")
            assert (c["title"].startswith(name) or f"'s {name}" in c["title"]) and not c["clipped"], c
    finally:
        context.close()
