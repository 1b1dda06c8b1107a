"""Benchmark of ``inductor_lens.diff``: two 12-layer GPT-2 training reports (forward + backward).

A is ``GPT2(layers=12)`` as ``benchmarks/browser.py`` captures it (cached in ``benchmarks/.cache``); B is
the same model with the exact GELU (``approximate="none"``) in block 5 instead of the tanh one, captured
the same way. Measured:

* ``diff`` in Python (median of 5, reports already loaded; wall time and this process's CPU time, which
  differ on a shared, loaded machine), and loading both reports;
* the compare page in headless Chromium (median of 3 loads): ``table`` = navigation start to the kernel
  table drawn (clickable rows), ``interactive`` = to B's fusion graph drawn and clickable; ``row click`` =
  a click on a changed row to both sources side by side (median of 5).

Targets (issue 14): diff <= 1 s; page interactive <= 1.5 s.

    python benchmarks/diff_bench.py            # prints a table row for RESULTS.md
"""

from __future__ import annotations

import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

TARGET_DIFF_S = 1.0
TARGET_INTERACTIVE_MS = 1500

_CAPTURE_B = r"""
import sys, torch, inductor_lens
from torch import nn
from inductor_lens import examples
layers, out = int(sys.argv[1]), sys.argv[2]
torch.manual_seed(0)
torch._inductor.config.force_disable_caches = True
model = examples.GPT2(layers=layers)
model.h[5].mlp[1] = nn.GELU()  # exact GELU in block 5 (the others keep approximate="tanh")
idx = examples.gpt2_inputs()
report = inductor_lens.inspect(model, idx, backward=True, title=f"GPT2(layers={layers}) training, exact GELU in h.5")
report.save_json(out)
"""


def variant_path(layers: int = 12) -> pathlib.Path:
    import torch
    from browser import _cache_dir

    path = _cache_dir() / f"gpt2_{layers}_training_gelu5_torch{torch.__version__.split('+')[0]}.json"
    if not path.exists():
        t0 = time.perf_counter()
        tmp = path.with_suffix(".tmp")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        subprocess.run([sys.executable, "-c", _CAPTURE_B, str(layers), str(tmp)], check=True, env=env, cwd=REPO)
        tmp.rename(path)
        print(f"  captured {path.name} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return path


_ROW_CLICK_JS = """
async () => {
  const row = document.querySelector('[data-role="diff-row"][data-status="changed"]') || document.querySelector('[data-role="diff-row"]');
  if (!row) return null;
  const t0 = performance.now();
  row.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  if (!document.querySelector('[data-role="diff-source"] [data-side="b"] .il-dline')) return null;
  return performance.now() - t0;
}
"""


def measure_page(html_path: pathlib.Path, loads: int = 3, clicks: int = 5) -> dict:
    from browser import CHROMIUM_ARGS, _chromium
    from playwright.sync_api import sync_playwright

    table, interactive, click = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        try:
            for i in range(loads):
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                page = context.new_page()
                errors = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(html_path.as_uri())
                page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=120000)
                marks = page.evaluate("""() => Object.fromEntries(performance.getEntriesByType('mark')
                                                .map(m => [m.name, Math.round(m.startTime)]))""")
                table.append(marks["il:compare-table"])
                interactive.append(marks["il:interactive"])
                if i == 0:
                    for _ in range(clicks):
                        t = page.evaluate(_ROW_CLICK_JS)
                        if t is None:
                            raise RuntimeError("a row click did not show the sources side by side")
                        click.append(t)
                if errors:
                    raise RuntimeError(f"page errors: {errors}")
                context.close()
        finally:
            browser.close()
    return {
        "table_ms": statistics.median(table),
        "interactive_ms": statistics.median(interactive),
        "row_click_ms": round(statistics.median(click), 1),
    }


def main() -> int:
    from browser import report_path

    import inductor_lens

    pa, pb = report_path(12, "training"), variant_path(12)
    t0 = time.perf_counter()
    a, b = inductor_lens.load(pa), inductor_lens.load(pb)
    load_s = time.perf_counter() - t0
    times, cpu = [], []
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        d = inductor_lens.diff(a, b)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    diff_s, diff_cpu_s = statistics.median(times), statistics.median(cpu)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        html = pathlib.Path(d.save_html(pathlib.Path(tmp) / "diff.html"))
        html_s = time.perf_counter() - t0
        size_mb = html.stat().st_size / 1e6
        page = measure_page(html)
    s = d.summary
    launches = sum(len(c.kernels) for c in d.compiles)
    print(
        f"A: {pa.name} ({len(a.kernels)} kernels), B: {pb.name} ({len(b.kernels)} kernels); {launches} launch pairs: "
        f"{s}",
        file=sys.stderr,
    )
    print(
        "| reports | launch pairs | same / changed / only A / only B | load both | diff (wall) | diff (CPU) | save_html "
        "| html | table | interactive | row click |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print(
        f"| GPT2(12) training vs exact GELU in h.5 | {launches} | {s['same']} / {s['changed']} / {s['only_a']} / "
        f"{s['only_b']} | {load_s:.2f} s | {diff_s:.3f} s (<= {TARGET_DIFF_S:g}) | {diff_cpu_s:.3f} s | {html_s:.2f} s | {size_mb:.2f} MB | "
        f"{page['table_ms']:.0f} ms | {page['interactive_ms']:.0f} ms (<= {TARGET_INTERACTIVE_MS}) | "
        f"{page['row_click_ms']} ms |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
