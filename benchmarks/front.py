"""Front-end benchmark of issue 12: real models in a 1000 x 700 page, headless Chromium, exported page.

Models (``benchmarks/real_models.py``, written here, nothing downloaded): the 32-layer decoder (RMSNorm,
rotary, SwiGLU, GQA; width 64) forward and training step, and the ResNet-like CNN's training step.
For each report: fused nodes, boxes at open, HTML size, time to interactive (navigation start to the
``il:interactive`` mark, median of 3 loads), click -> panel (median of 5), expand all (click to the
whole graph drawn), source-line click (click to its kernels highlighted and the panel painted).

Captures are slow on CPU (the 32-layer training step: minutes): each is cached as JSON under
``benchmarks/.cache/`` and made in a fresh process.

    python benchmarks/front.py                       # all three
    python benchmarks/front.py decoder:forward       # chosen ones
    python benchmarks/front.py fixture:gpu_llama8b_training --size 1000x700 --size 1920x1080

``fixture:NAME`` measures a recorded report of ``tests/fixtures/`` (the Llama-3-8B-shaped step of issue 25 recorded on
an H200) instead of a capture. Each page also gives: switching to the last compile (the backward) until its graph
is clickable, and opening the Roofline and Memory tabs (click to the next paint) where the report has them.
"""

from __future__ import annotations

import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.browser import _CLICK_JS, _SWITCH_JS, CHROMIUM_ARGS, _chromium  # noqa: E402

CACHE = pathlib.Path(__file__).resolve().parent / ".cache"
FIXTURES = REPO / "tests" / "fixtures"
TARGETS = {"forward": 1000, "training": 2000}

# open a view's tab; time to the next paint (the view renders in the click handler or the frame after it)
_TAB_JS = """
async (id) => {
  const tab = document.querySelector(`[data-tab="${id}"]`);
  if (!tab) return null;
  const t0 = performance.now();
  tab.click();
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const view = document.querySelector(`[data-view="${id}"]`);
  return view && !view.hidden ? performance.now() - t0 : null;
}
"""

_EXPAND_JS = """
async () => new Promise((resolve) => {
  const t0 = performance.now();
  const obs = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => e.name === "il:interactive")) { obs.disconnect(); resolve(performance.now() - t0); }
  });
  obs.observe({ entryTypes: ["mark"] });
  document.querySelector('[data-action="expand-all"]').click();
  setTimeout(() => { obs.disconnect(); resolve(null); }, 120000);
})
"""

_LINE_JS = """
async (key) => {
  const row = document.querySelector(`[data-view="source"] [data-source-line="${CSS.escape(key)}"]`);
  if (!row) return null;
  const t0 = performance.now();
  row.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const n = document.querySelectorAll('[data-view="fusion"] [data-highlighted="true"]').length;
  return n ? [performance.now() - t0, n] : null;
}
"""


def report_path(name: str, mode: str) -> pathlib.Path:
    if name == "fixture":
        return next(p for p in (FIXTURES / f"{mode}.json.gz", FIXTURES / f"{mode}.json") if p.exists())
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    path = CACHE / f"{name}_{mode}.json"
    if not path.exists():
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        tmp = path.with_suffix(".tmp")
        subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "real_models.py"), name, mode, str(tmp)], check=True, env=env
        )
        tmp.rename(path)
    return path


def _load(browser, html: pathlib.Path, size=(1000, 700)):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(html.as_uri())
    page.wait_for_selector('[data-view="fusion"] .il-graph[data-ready="1"]', timeout=120000)
    marks = page.evaluate(
        "() => Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, m.startTime]))"
    )
    return page, errors, marks


def measure(browser, html: pathlib.Path, size=(1000, 700), last_compile: str = "") -> dict:
    loads = []
    for _ in range(3):
        page, errors, marks = _load(browser, html, size)
        loads.append(marks.get("il:interactive"))
        page.close()
    page, errors, _ = _load(browser, html, size)
    boxes = int(page.locator(".il-root").get_attribute("data-boxes"))
    names = page.evaluate("""() => [...document.querySelectorAll('[data-view="fusion"] [data-node]')]
                              .filter(g => g.dataset.kernel).map(g => g.dataset.node)""")
    clicks = [page.evaluate(_CLICK_JS, n) for n in names[:5]]
    page.keyboard.press("Escape")
    page.click('[data-tab="source"]')
    keys = page.evaluate("""() => [...document.querySelectorAll('[data-view="source"] .il-src-hot')]
                             .sort((a, b) => +b.querySelector('.il-src-ann').dataset.count - +a.querySelector('.il-src-ann').dataset.count)
                             .map(r => r.dataset.sourceLine)""")
    lines = [page.evaluate(_LINE_JS, k) for k in keys[:5]]
    page.click('[data-tab="fusion"]')
    page.keyboard.press("Escape")
    expand = page.evaluate(_EXPAND_JS)
    expanded = int(page.locator(".il-root").get_attribute("data-boxes"))
    switch = page.evaluate(_SWITCH_JS, last_compile) if last_compile else None
    tabs = {v: page.evaluate(_TAB_JS, v) for v in ("roofline", "memory")}
    if errors:
        raise RuntimeError(f"page errors: {errors}")
    page.close()
    good = [x for x in lines if x]
    return {
        "boxes": boxes,
        "interactive_ms": round(statistics.median(loads)),
        "click_ms": round(statistics.median([c for c in clicks if c is not None]), 1),
        "line_ms": round(statistics.median([x[0] for x in good]), 1) if good else None,
        "line_boxes": max((x[1] for x in good), default=0),
        "expand_ms": None if expand is None else round(expand),
        "expanded_boxes": expanded,
        "switch_ms": None if switch is None else round(switch),
        **{f"{v}_ms": None if t is None else round(t) for v, t in tabs.items()},
    }


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", help="MODEL:MODE (decoder:forward, resnet:training) or fixture:NAME")
    ap.add_argument("--size", action="append", default=[], help="viewport WxH (default 1000x700; repeatable)")
    opts = ap.parse_args(sys.argv[1:] if argv is None else argv)
    runs = [a.split(":", 1) for a in opts.runs] or [
        ["decoder", "forward"],
        ["decoder", "training"],
        ["resnet", "training"],
    ]
    sizes = [tuple(int(x) for x in s.lower().split("x")) for s in opts.size] or [(1000, 700)]
    from playwright.sync_api import sync_playwright

    import inductor_lens
    from inductor_lens.views.html import to_html

    paths = {(n, m): report_path(n, m) for n, m in runs}
    print("load average (1, 5, 15 min) at the start: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        for (name, mode), path in paths.items():
            report = inductor_lens.load(path)
            html = pathlib.Path(tmp) / f"{name}_{mode}.html"
            html.write_text(to_html(report), encoding="utf-8")
            last = report.compiles[-1].id if len(report.compiles) > 1 else ""
            for size in sizes:
                r = measure(browser, html, size, last)
                rows.append(
                    {
                        "model": name,
                        "mode": mode,
                        "size": f"{size[0]} x {size[1]}",
                        "compiles": len(report.compiles),
                        "fused": sum(len(c.fused_nodes) for c in report.compiles),
                        "html_mb": html.stat().st_size / 1e6,
                        **r,
                    }
                )
        browser.close()
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    head = [
        "model",
        "mode",
        "size",
        "fused nodes",
        "boxes at open",
        "HTML",
        "interactive",
        "click -> panel",
        "source-line click",
        "expand all (boxes)",
        "to the last compile",
        "roofline tab",
        "memory tab",
    ]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows:
        ms = lambda v: "-" if v is None else f"{v} ms"  # noqa: E731
        target = f" (target {TARGETS[r['mode']]})" if r["mode"] in TARGETS else ""
        print(
            f"| {r['model']} | {r['mode']} | {r['size']} | {r['fused']} | {r['boxes']} | {r['html_mb']:.2f} MB | "
            f"{r['interactive_ms']} ms{target} | {r['click_ms']} ms | "
            f"{r['line_ms']} ms ({r['line_boxes']} boxes) | {r['expand_ms']} ms ({r['expanded_boxes']}) | "
            f"{ms(r['switch_ms'])} | {ms(r['roofline_ms'])} | {ms(r['memory_ms'])} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
