"""Screenshots for docs/ (README shows them): the opening view of real models in a 1000 x 700 page, light
and dark, the source view and the Memory view of the decoder's training step, and the Llama-3-8B-shaped step
recorded on an H200 (a test fixture) at 1000 x 700 and 1920 x 1080 and its Memory view. Uses the reports cached by ``benchmarks/front.py`` (captured if missing).

    python benchmarks/screenshots.py                          # writes docs/screenshot-*.png
    python benchmarks/screenshots.py screenshot-resnet.png    # chosen ones
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.browser import CHROMIUM_ARGS, _chromium  # noqa: E402
from benchmarks.front import report_path  # noqa: E402

DOCS = REPO / "docs"

SHOTS = [
    # (file, model, mode, colour scheme, steps)
    ("screenshot-decoder.png", "decoder", "forward", "light", []),
    ("screenshot-decoder-dark.png", "decoder", "forward", "dark", []),
    ("screenshot-resnet.png", "resnet", "training", "light", []),
    ("screenshot-resnet-dark.png", "resnet", "training", "dark", []),
    ("screenshot-source.png", "decoder", "training", "light", ["source-line"]),
    ("screenshot-memory-decoder.png", "decoder", "training", "light", ["memory"]),
    # the Llama-3-8B-shaped training step recorded on an H200 (tests/fixtures), at both sizes of issue 25
    ("screenshot-llama8b.png", "fixture", "gpu_llama8b_training", "light", []),
    ("screenshot-llama8b-1080.png", "fixture", "gpu_llama8b_training", "light", [], (1920, 1080)),
    ("screenshot-memory-llama8b.png", "fixture", "gpu_llama8b_training", "light", ["memory"]),
    # the compare page: an H200 MLP compiled by default against max-autotune (two recorded fixtures)
    ("screenshot-compare.png", "diff", "gpu_mlp_wide_default|gpu_max_autotune", "light", []),
]


def shoot(browser, html: pathlib.Path, out: pathlib.Path, scheme: str, steps: list[str], size=(1000, 700)) -> None:
    page = browser.new_page(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)
    page.goto(html.as_uri())
    view = "compare" if html.name.startswith("diff_") else "fusion"
    page.wait_for_selector(f'[data-view="{view}"] .il-graph[data-ready="1"]', timeout=120000)
    for step in steps:
        if step == "select-first-conv":
            name = page.evaluate("""() => { const b = [...document.querySelectorAll('[data-view="fusion"] [data-node]')]
                .find((g) => /conv/.test(g.textContent)); return b ? b.dataset.node : null; }""")
            if name:
                page.evaluate("(n) => window.inductorLens.select(n)", name)
        if step == "memory":  # the forward's Memory view as it opens
            page.click('[data-tab="memory"]')
            page.wait_for_selector('[data-view="memory"] [data-role="memory-curve"]')
        if step == "source-line":
            page.click('[data-tab="source"]')
            key = page.evaluate("""() => { const rows = [...document.querySelectorAll('[data-view="source"] .il-src-hot')]
                .filter((r) => /mlp|attn/.test(r.textContent));
                return (rows[0] || document.querySelector('[data-view="source"] .il-src-hot')).dataset.sourceLine; }""")
            page.locator(f'[data-source-line="{key}"]').scroll_into_view_if_needed()
            page.locator(f'[data-source-line="{key}"]').click()
    page.wait_for_timeout(400)
    page.screenshot(path=str(out))
    page.close()


def main() -> int:
    from playwright.sync_api import sync_playwright

    import inductor_lens
    from inductor_lens.views.html import to_html

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        only = [a for a in sys.argv[1:] if not a.startswith("-")]
        for name, model, mode, scheme, steps, *size in SHOTS:
            if only and name not in only:
                continue
            html = pathlib.Path(tmp) / f"{model}_{mode}.html"
            if model == "diff":
                a, b = (inductor_lens.load(report_path("fixture", m)) for m in mode.split("|"))
                html = pathlib.Path(tmp) / f"diff_{mode.replace('|', '_')}.html"
                inductor_lens.diff(a, b).save_html(html)
            elif not html.exists():
                html.write_text(to_html(inductor_lens.load(report_path(model, mode))), encoding="utf-8")
            shoot(browser, html, DOCS / name, scheme, steps, *size)
            print(f"wrote docs/{name}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
