"""One self-contained HTML page for a report: opens from ``file://``, makes no network request.

>>> inductor_lens.save_html(report, "report.html")     # or report.save_html(...)

The page inlines the front end (``static/lens.js``), its styles, the Graphviz layout engine
(WebAssembly inside ``layout-worker.js``) and the report. The script and the report are stored
gzip'd and base64-encoded (so nothing in a report can end a ``<script>`` block) and unpacked with
the browser's ``DecompressionStream``. A Content-Security-Policy forbids every request to the
network, so a page that tried would fail loudly instead of leaking.
"""

from __future__ import annotations

import base64
import gzip
import html
import os
from typing import Union

from .model import Report
from .widget import _static, engine_gz, pack_report

# The only script that is not gzip'd: it unpacks the bundle and mounts it. Written by hand.
_BOOT = """
const $ = (id) => document.getElementById(id).textContent;
async function gunzip(b64) {
  const bin = atob(b64.replace(/\\s+/g, ""));
  const u8 = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
  return await new Response(new Blob([u8]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}
try {
  const url = URL.createObjectURL(new Blob([await gunzip($("il-bundle"))], { type: "text/javascript" }));
  const lens = await import(url);
  URL.revokeObjectURL(url);
  await lens.mount(document.getElementById("il-app"), { report: $("il-report"), engine: $("il-engine") });
} catch (e) {
  const p = document.getElementById("il-app");
  p.textContent = "inductor_lens could not start in this browser: " + (e && e.message || e);
}
"""

# No network at all: scripts only inline or from blob: (the bundle, the worker), WASM compile allowed.
_CSP = ("default-src 'none'; script-src 'unsafe-inline' blob: 'wasm-unsafe-eval'; worker-src blob:; "
        "style-src 'unsafe-inline'; img-src data: blob:; connect-src 'none'; base-uri 'none'; form-action 'none'")


def _b64gz(data: bytes, level: int = 9) -> str:
    return base64.b64encode(gzip.compress(data, compresslevel=level, mtime=0)).decode("ascii")


def _script_data(id_: str, payload: str) -> str:
    # base64 has no '<', '>' or '&'; assert it so a future change cannot break out of the block
    if any(c in payload for c in "<>&"):
        raise ValueError("script payload must be base64")
    return f'<script type="application/octet-stream" id="{id_}">{payload}</script>'


_bundle_cache: dict = {}


def _bundle_b64() -> str:
    path = _static("lens.js")
    key = (str(path), path.stat().st_mtime_ns)
    if key not in _bundle_cache:
        _bundle_cache.clear()
        _bundle_cache[key] = _b64gz(path.read_bytes())
    return _bundle_cache[key]


def to_html(report: Report) -> str:
    """The report as one self-contained HTML page (a string)."""
    if not isinstance(report, Report):
        raise TypeError(f"to_html needs an inductor_lens.Report, not {type(report).__name__}")
    from . import __version__

    css = _static("lens.css").read_text(encoding="utf-8")
    if "</style" in css.lower():
        raise ValueError("lens.css must not contain '</style'")
    title = report.title or "torch.compile report"
    esc = html.escape
    n_kernels = len(report.kernels)
    facts = (f"torch {report.torch_version} · {report.device} · {report.created or 'date unknown'} · "
             f"{len(report.compiles)} compile(s), {n_kernels} kernel(s), {len(report.graph_breaks)} graph break(s)")
    report_b64 = base64.b64encode(pack_report(report)).decode("ascii")
    engine_b64 = base64.b64encode(engine_gz()).decode("ascii")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="inductor_lens {esc(__version__)}">
<title>{esc(title)} · inductor_lens</title>
<style>
{css}
</style>
</head>
<body class="il-standalone il-host">
<header class="il-page-head">
<h1>{esc(title)}</h1>
<p class="il-page-facts">{esc(facts)}</p>
<p>What torch.compile's Inductor did: fused kernels, their source, and the code that produced them.
Made with inductor_lens {esc(__version__)}; make your own with <code>inductor-lens run script.py -o report.html</code>
or <code>report.save_html("report.html")</code> in Python.</p>
</header>
<main class="il-page-main"><div id="il-app"><noscript>This page needs JavaScript to draw the report.</noscript></div></main>
{_script_data("il-report", report_b64)}
{_script_data("il-bundle", _bundle_b64())}
{_script_data("il-engine", engine_b64)}
<script type="module">{_BOOT}</script>
</body>
</html>
"""


def save_html(report: Report, path: Union[str, os.PathLike]) -> str:
    """Write :func:`to_html` of ``report`` to ``path``; returns the path as a string."""
    text = to_html(report)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return os.fspath(path)
