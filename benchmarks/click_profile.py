"""Where a click -> panel goes, in headless Chromium (issue 12's click target, 50 ms).

For a cached report (``benchmarks/.cache/NAME_MODE.json``, made by ``front.py``) or any report JSON: load the
exported page at 1000 x 700 (or ``--size``), wait for the first graph, then click the first N kernel boxes (as front.py does)
and split each click into the synchronous click handler (panel render, marks, reveal), the frame that paints
it (style, layout, paint: rAF to the next task) and the whole; ``--profile`` also records a CPU profile of
the clicks (Chromium's Profiler domain over CDP) and prints the functions with the most self time;
``--trace`` records Chromium's trace (devtools.timeline) and prints, per click, the main thread's self time by
event (the handler's script, UpdateLayoutTree, Layout, PrePaint, Paint, ...: where a slow click's frame went).
``--middle`` clicks from the middle of the graph on, as ``click_cpu.py`` does. An ``.html`` argument is a page
exported by any checkout, used as it is.

    python benchmarks/click_profile.py decoder:training [--clicks 8] [--profile]
    python benchmarks/click_profile.py path/to/report.json
    python benchmarks/click_profile.py before.html --middle --wait 2 --trace
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.browser import CHROMIUM_ARGS, _chromium  # noqa: E402

CACHE = pathlib.Path(__file__).resolve().parent / ".cache"

_SPLIT_JS = """
async (name) => {
  const box = document.querySelector(`[data-view="fusion"] [data-node="${CSS.escape(name)}"]`);
  if (!box) return null;
  performance.mark("click-start");
  const t0 = performance.now();
  box.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  const t1 = performance.now();
  let t2 = 0;
  await new Promise((r) => requestAnimationFrame(() => { t2 = performance.now(); setTimeout(r, 0); }));
  const t3 = performance.now();
  performance.mark("click-end");
  const src = document.querySelector('[data-role="kernel-source"]');
  const done = src ? src.dataset.highlightedSource || "" : "";
  return {handler: t1 - t0, to_raf: t2 - t1, frame: t3 - t2, total: t3 - t0, highlighted: done};
}
"""


def _report_path(arg: str) -> pathlib.Path:
    if ":" in arg and not arg.endswith(".json"):
        name, mode = arg.split(":")
        return CACHE / f"{name}_{mode}.json"
    return pathlib.Path(arg)


def _top_self(profile: dict, n: int = 25):
    nodes = {x["id"]: x for x in profile["nodes"]}
    dt = collections.Counter()
    samples, deltas = profile.get("samples", []), profile.get("timeDeltas", [])
    for sid, d in zip(samples, deltas):
        cf = nodes[sid]["callFrame"]
        key = f"{cf['functionName'] or '(anon)'} {cf['url'].rsplit('/', 1)[-1][:30]}:{cf['lineNumber']}"
        dt[key] += d / 1000
    return dt.most_common(n)


def _self_times(events: list) -> collections.Counter:
    """Self thread time (ms) by event name of complete main-thread events `events` (sorted by start, parents
    first): each event's time less that of the events inside it."""
    own, stack = collections.Counter(), []
    for e in events:
        while stack and e["ts"] >= stack[-1]["ts"] + stack[-1].get("dur", 0):
            stack.pop()
        t = e.get("tdur", e.get("dur", 0)) / 1000
        own[e["name"]] += t
        if stack:
            own[stack[-1]["name"]] -= t
        stack.append(e)
    return own


def _trace_split(events: list) -> list[collections.Counter]:
    """Per click (between its click-start and click-end marks), the main thread's self time by event name."""
    marks = sorted((e["ts"], e["name"]) for e in events if e.get("name") in ("click-start", "click-end"))
    starts = [t for t, n in marks if n == "click-start"]
    ends = [t for t, n in marks if n == "click-end"]
    tid = collections.Counter(e["tid"] for e in events if e.get("name") == "click-start").most_common(1)[0][0]
    work = sorted(
        (e for e in events if e.get("ph") == "X" and e.get("tid") == tid and e.get("dur")),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    return [_self_times([e for e in work if s <= e["ts"] <= e_]) for s, e_ in zip(starts, ends)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--clicks", type=int, default=8)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--trace", action="store_true", help="split each click by trace event (self thread time)")
    ap.add_argument("--middle", action="store_true", help="click from the middle of the graph on")
    ap.add_argument("--size", default="1000x700")
    ap.add_argument("--wait", type=float, default=0, help="seconds to wait after the first graph before clicking")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    import inductor_lens
    from inductor_lens.views.html import to_html

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        html = pathlib.Path(a.report)
        if html.suffix != ".html":
            html = pathlib.Path(tmp) / "page.html"
            html.write_text(to_html(inductor_lens.load(_report_path(a.report))), encoding="utf-8")
        browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        width, height = (int(x) for x in a.size.split("x"))
        page = browser.new_page(viewport={"width": width, "height": height})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.as_uri())
        page.wait_for_selector('[data-view="fusion"] .il-graph[data-ready="1"]', timeout=120000)
        if a.wait:
            page.wait_for_timeout(a.wait * 1000)
        names = page.evaluate("""() => [...document.querySelectorAll('[data-view="fusion"] [data-node]')]
                                  .filter(g => g.dataset.kernel).map(g => g.dataset.node)""")
        if a.middle:
            names = names[len(names) // 2 :] + names[: len(names) // 2]
        cdp = page.context.new_cdp_session(page) if a.profile or a.trace else None
        events, done = [], []
        if a.trace:
            cdp.on("Tracing.dataCollected", lambda e: events.extend(e["value"]))
            cdp.on("Tracing.tracingComplete", lambda e: done.append(1))
            cats = "devtools.timeline,blink.user_timing,disabled-by-default-devtools.timeline"
            cdp.send("Tracing.start", {"categories": cats, "transferMode": "ReportEvents"})
        if a.profile:
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")
        rows = [page.evaluate(_SPLIT_JS, n) for n in names[: a.clicks]]
        prof = cdp.send("Profiler.stop")["profile"] if a.profile else None
        if a.trace:
            cdp.send("Tracing.end")
            while not done:
                page.wait_for_timeout(50)
        browser.close()
    rows = [r for r in rows if r]
    for i, r in enumerate(rows):
        print(
            f"click {i}: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v!r}" for k, v in r.items())
        )
    for k in ("handler", "to_raf", "frame", "total"):
        print(f"median {k}: {statistics.median(r[k] for r in rows):.1f} ms")
    for i, own in enumerate(_trace_split(events) if a.trace else []):
        top = ", ".join(f"{k} {v:.1f}" for k, v in own.most_common(8) if v >= 0.1)
        print(f"click {i} by trace event (self thread time, ms): {top}")
    if prof:
        print("self time over the clicks (ms):")
        for key, ms in _top_self(prof):
            print(f"  {ms:8.1f}  {key}")
    if errors:
        print("page errors:", errors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
