"""Click -> panel on exported pages, by CPU time as well as wall time (issue 26), pages interleaved.

On a shared 2-core machine the wall time of a click moves with the load (load 2 to 9 doubled it); the CPU
time the renderer's main thread spends from the click to the paint after it (the click handler, style,
layout, pre-paint, paint, layerize, commit: Chromium's trace events, thread time) moves much less, so it
is what compares two builds. For each round and page: open the page in headless Chromium (1000 x 700 or
``--size``), wait 2 s, click up to ``--clicks`` kernel boxes (as ``browser.py`` does: from the middle of the
graph on; ``--visible``: only boxes fully in view, as a user clicks), each timed to the next paint. Prints the
median over all clicks and over the first click of each page.

    python benchmarks/click_cpu.py benchmarks/.cache/gpt2_12_training_torch2.13.0.json
    python benchmarks/click_cpu.py old.html new.html --rounds 5 --clicks 8 --size 1920x1080

A ``.html`` argument is used as it is (a page exported by another checkout, to compare builds); any other
is a report, exported with this checkout's front end.
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.browser import CHROMIUM_ARGS, _chromium  # noqa: E402

_CLICK_JS = """
async (name) => {
  const box = document.querySelector(`[data-view="fusion"] [data-node="${CSS.escape(name)}"]`);
  performance.mark("click-start");
  const t0 = performance.now();
  box.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const t = performance.now() - t0;
  performance.mark("click-end");
  const ok = document.querySelector('.il-root').dataset.selected === name
    && !!document.querySelector('[data-role="kernel-source"]');
  await new Promise((r) => setTimeout(r, 300));
  return ok ? t : null;
}
"""
_BOXES_JS = """(visible) => {
  const pane = document.querySelector('[data-view="fusion"] [data-role="graph-pane"]').getBoundingClientRect();
  return [...document.querySelectorAll('[data-view="fusion"] [data-node]')].filter((g) => {
    if (!g.dataset.kernel) return false;
    if (!visible) return true;
    const r = g.getBoundingClientRect();
    return r.left >= pane.left && r.right <= pane.right && r.top >= pane.top && r.bottom <= pane.bottom;
  }).map((g) => g.dataset.node);
}"""
#: Main-thread trace events on the path from a click to its paint (their thread time is summed, nested ones once).
_WORK = {
    "EventDispatch",
    "FunctionCall",
    "UpdateLayoutTree",
    "Layout",
    "PrePaint",
    "Paint",
    "Layerize",
    "Commit",
    "TimerFire",
    "FireAnimationFrame",
    "HitTest",
    "MinorGC",
    "MajorGC",
}


def _page_clicks(browser, html: pathlib.Path, size: tuple[int, int], clicks: int, visible: bool) -> list[tuple]:
    """[(cpu_ms, wall_ms)] for the clicks on one fresh page."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(html.as_uri())
        page.wait_for_selector('[data-view="fusion"] .il-graph[data-ready="1"]', timeout=120000)
        page.wait_for_timeout(2000)
        names = page.evaluate(_BOXES_JS, visible)
        names = (names[len(names) // 2 :] + names[: len(names) // 2])[:clicks]
        cdp = page.context.new_cdp_session(page)
        events, done = [], []
        cdp.on("Tracing.dataCollected", lambda e: events.extend(e["value"]))
        cdp.on("Tracing.tracingComplete", lambda e: done.append(1))
        cdp.send("Tracing.start", {"categories": "devtools.timeline,blink.user_timing", "transferMode": "ReportEvents"})
        walls = [page.evaluate(_CLICK_JS, n) for n in names]
        cdp.send("Tracing.end")
        while not done:
            page.wait_for_timeout(50)
    finally:
        page.close()
    if any(w is None for w in walls):
        raise RuntimeError(f"{html.name}: a click did not show its kernel panel")
    marks = sorted((e["ts"], e["name"]) for e in events if e.get("name") in ("click-start", "click-end"))
    starts = [t for t, n in marks if n == "click-start"]
    ends = [t for t, n in marks if n == "click-end"]
    tid = collections.Counter(e["tid"] for e in events if e.get("name") == "click-start").most_common(1)[0][0]
    work = sorted(
        (e for e in events if e.get("ph") == "X" and e.get("tid") == tid and e["name"] in _WORK),
        key=lambda e: (e["ts"], -e.get("dur", 0)),
    )
    out = []
    for (s, e_), wall in zip(zip(starts, ends), walls):
        out.append((_outermost_cpu([e for e in work if s <= e["ts"] <= e_]) / 1000, wall))
    return out


def _outermost_cpu(events: list) -> float:
    """Thread time of `events` (sorted by start), each counted once: an event inside another (a layout forced
    inside a script's FunctionCall, a listener's FunctionCall inside its EventDispatch) is part of its parent's."""
    total, end = 0.0, -1.0
    for e in events:
        if e["ts"] < end:
            continue
        total += e.get("tdur", e.get("dur", 0))
        end = e["ts"] + e.get("dur", 0)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="+", help="exported pages (.html) or reports")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clicks", type=int, default=8)
    ap.add_argument("--size", default="1000x700")
    ap.add_argument("--visible", action="store_true", help="click only boxes fully in view")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    size = tuple(int(x) for x in a.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        pages = []
        for i, arg in enumerate(a.pages):
            path = pathlib.Path(arg)
            if path.suffix != ".html":
                import inductor_lens
                from inductor_lens.views.html import to_html

                html = pathlib.Path(tmp) / f"{i}_{path.name.split('.')[0]}.html"
                html.write_text(to_html(inductor_lens.load(path)), encoding="utf-8")
                path = html
            pages.append(path)
        browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        res = {p: [] for p in pages}
        firsts = {p: [] for p in pages}
        loads = []
        for _ in range(a.rounds):
            for page in pages:
                rows = _page_clicks(browser, page, size, a.clicks, a.visible)
                res[page] += rows
                firsts[page] += rows[:1]
                loads.append(os.getloadavg()[0])
        browser.close()
    print(f"{a.size}, {a.rounds} pages x {a.clicks} clicks each, load (1 min) {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'page':40} {'cpu median':>10} {'cpu first':>10} {'wall median':>12} {'wall first':>11}")
    for page in pages:
        med = lambda rows, i: statistics.median(r[i] for r in rows)  # noqa: E731
        r, f = res[page], firsts[page]
        print(f"{page.name[:40]:40} {med(r, 0):10.1f} {med(f, 0):10.1f} {med(r, 1):12.1f} {med(f, 1):11.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
