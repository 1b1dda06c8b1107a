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
import os
from typing import Any, Iterable, Iterator, Union

from ..report import io as report_io
from ..report.io import atomic_write, escape_surrogates
from ..report.model import Report
from ..report.outcome import code_of
from ..report.rules import breaks_text, frames_met
from .frontend import (  # noqa: F401 (engine_gz, pack_report: re-exported)
    MODES,
    REPORT_GZIP_LEVEL,
    bundle_b64,
    engine_gz,
    engine_gz_parts,
    pack_report,
    static,
    static_path,
)

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
  const app = document.getElementById("il-app");
  await lens.mount(app, { mode: app.dataset.mode, report: $("il-report"), engine: $("il-engine") });
} catch (e) {
  const p = document.getElementById("il-app");
  p.textContent = "inductor_lens could not start in this browser: " + (e && e.message || e);
}
"""


# What the page shows until the front end has drawn it (js/src/index.js mount removes it): all that a headless
# browser's picture taken at the load event shows, as the report is unpacked and drawn after it.
_BOOT_NOTE = (
    '<p class="il-boot">Drawing the report… A browser that takes its picture as soon as the page has loaded '
    "(<code>chromium --headless --screenshot</code> or <code>--print-to-pdf</code>) shows only this line: "
    "give it time with <code>--virtual-time-budget=10000</code>.</p>"
)

#: ``'sha256-...'``: the base64 SHA-256 of ``_BOOT`` (written out, so that writing a page needs no hashlib and
#: its OpenSSL; ``tests/views/test_html_export.py`` checks it against the script whenever the script changes).
_BOOT_HASH = "'sha256-G1IVZTKucsUgikKFlWNwH7PJBo6AVrNj38OultTdAs4='"

# No network at all. The one inline script (_BOOT) is pinned by its hash, so markup injected into the page
# could not run even if escaping failed; the bundle and the layout worker come from blob: URLs it makes.
_CSP = (
    f"default-src 'none'; script-src {_BOOT_HASH} blob: 'wasm-unsafe-eval'; worker-src blob:; "
    "style-src 'unsafe-inline'; img-src data: blob:; connect-src 'none'; base-uri 'none'; form-action 'none'"
)


def _escape(s: str) -> str:
    """``html.escape(s)`` (quotes included), without importing ``html`` and its 2,200 named entities."""
    return (
        s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#x27;")
    )


def _script_data(id_: str, payload: bytes) -> list[bytes]:
    return list(_script_blocks(id_, [payload]))


def _script_blocks(id_: str, payload: Iterable[bytes]) -> Iterator[bytes]:
    yield f'<script type="application/octet-stream" id="{id_}">'.encode("ascii")
    for piece in payload:
        # base64 has no '<', '>' or '&'; assert it so a future change cannot break out of the block
        if b"<" in piece or b">" in piece or b"&" in piece:
            raise ValueError("script payload must be base64")
        yield piece
    yield b"</script>\n"


def to_html(report: Report) -> str:
    """The report as one self-contained HTML page (a string)."""
    return b"".join(page_parts(report)).decode("utf-8")


def page_parts(report: Report) -> Iterator[bytes]:
    """The bytes of :func:`to_html` in pieces, made as they are read (the compiles spooled in the temporary
    folder): the widget's Export sends them to the front end in parts, never the page whole. Close the
    generator (or read it to its end) to remove the spool."""
    import io
    import tempfile

    try:
        spool = report_io.spool_file(os.path.join(tempfile.gettempdir(), "page"))
    except OSError:  # no writable temporary folder: the compiles are held in memory
        spool = io.BytesIO()
    w = _written(report, spool)  # a TypeError now, not at the first piece
    return _closing(_report_page(report, w), w)


def _closing(parts: Iterable[bytes], w: Any) -> Iterator[bytes]:
    try:
        yield from parts
    finally:
        w.close()


def _written(report: Report, spool: Any) -> Any:
    if not isinstance(report, Report):
        spool.close()
        raise TypeError(f"to_html needs an inductor_lens.Report, not {type(report).__name__}")
    return report_io.written(report, spool)


def _report_page(report: Report, w: Any) -> Iterator[bytes]:
    """The page of ``report`` in pieces, its payload from ``w`` (``report_io.written`` of it): gzip'd and
    base64-encoded as it is read, so neither the JSON nor the gzip of it is held whole."""
    facts = {
        "title": report.title,
        "torch_version": report.torch_version,
        "device": report.device,
        "created": report.created,
        "compiles": w.compiles,
        "kernels": w.kernels,
        "graph_breaks": len(report.graph_breaks),
        "met_in": frames_met(report.graph_breaks),
        "codes": [d.code for d in report.diagnostics],
    }
    return _page_parts(
        _facts_title(facts),
        _facts_line(facts),
        _base64_parts(report_io.gzip_parts(w.parts(), REPORT_GZIP_LEVEL)),
        *_REPORT_WORDS,
    )


def _base64_parts(parts: Iterable[bytes]) -> Iterator[bytes]:
    """base64 of the concatenated ``parts`` (``base64.b64encode(b"".join(parts))``), in pieces."""
    rest = b""
    for part in parts:
        rest = rest + part if rest else part
        n = len(rest) - len(rest) % 3
        if n:
            yield base64.b64encode(memoryview(rest)[:n])  # not a copy of the piece first
            rest = rest[n:]
    if rest:
        yield base64.b64encode(rest)


def facts_of(data: dict) -> dict:
    """The header facts of plain report data (what :func:`page` needs besides the packed report)."""
    compiles = data.get("compiles") or []
    return {
        "title": data.get("title") or "",
        "torch_version": data.get("torch_version") or "",
        "device": data.get("device") or "",
        "created": data.get("created") or "",
        "compiles": len(compiles),
        "kernels": sum(len(c.get("kernels") or []) for c in compiles),
        "graph_breaks": len(data.get("graph_breaks") or []),
        "met_in": frames_met(data.get("graph_breaks") or []),
        "codes": [code_of(d) for d in data.get("diagnostics") or []],
    }


def page(facts: dict, packed: bytes) -> str:
    """The page for a report given as its header ``facts`` and its gzip'd JSON (``_frontend.pack_report``)."""
    return page_bytes(facts, packed).decode("utf-8")


_REPORT_WORDS = (
    "What torch.compile's Inductor did: fused kernels, their source, and the code that produced them.",
    "inductor-lens run -o report.html script.py",
    'report.save_html("report.html")',
)


def _facts_title(facts: dict) -> str:
    return facts["title"] or "torch.compile report"


def _facts_line(facts: dict) -> str:
    return (
        f"torch {facts['torch_version']} · {facts['device']} · {facts['created'] or 'date unknown'} · "
        f"{facts['compiles']} compile(s), {facts['kernels']} kernel(s), "
        f"{breaks_text(facts['graph_breaks'], facts.get('codes') or (), facts.get('met_in') or ())}"
    )


def page_bytes(facts: dict, packed: bytes) -> bytes:
    """:func:`page`, as the UTF-8 bytes that are written."""
    return _page(_facts_title(facts), _facts_line(facts), packed, *_REPORT_WORDS)


def page_html(
    title: str,
    facts_line: str,
    packed: bytes,
    what: str,
    command: str,
    python: str = "",
    suffix: str = "inductor_lens",
    mode: str = "lens",
) -> str:
    """One self-contained page: the front end, its styles, the layout engine and the gzip'd ``packed``
    payload inlined, opened in ``mode`` (one of :data:`~inductor_lens.views.frontend.MODES`: a report in
    ``"lens"``, a compare payload in ``"compare"``, a job payload in ``"job"``). Every text is escaped; the
    CSP pins the boot script by hash. The report page, the compare page (``diff_views``) and the job page
    (``job_html``) all use it."""
    return _page(title, facts_line, packed, what, command, python, suffix, mode).decode("utf-8")


def _page(
    title: str,
    facts_line: str,
    packed: bytes,
    what: str,
    command: str,
    python: str = "",
    suffix: str = "inductor_lens",
    mode: str = "lens",
) -> bytes:
    """:func:`page_html` as UTF-8 bytes, joined from pieces: the base64 payloads (most of the page) are never
    made into text, widened or encoded again."""
    return b"".join(_page_parts(title, facts_line, [base64.b64encode(packed)], what, command, python, suffix, mode))


def _page_parts(
    title: str,
    facts_line: str,
    payload: Iterable[bytes],
    what: str,
    command: str,
    python: str = "",
    suffix: str = "inductor_lens",
    mode: str = "lens",
) -> Iterator[bytes]:
    """The pieces of :func:`_page`, the report's base64 ``payload`` written as its pieces come."""
    from .._version import __version__

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (must be one of {list(MODES)})")

    with open(static_path("lens.css"), encoding="utf-8") as f:
        css = f.read()
    if "</style" in css.lower():
        raise ValueError("lens.css must not contain '</style'")

    def esc(s) -> str:
        return _escape(escape_surrogates(str(s)))

    how = f"<code>{esc(command)}</code>" + (f" or <code>{esc(python)}</code> in Python" if python else "")
    head = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="inductor_lens {esc(__version__)}">
<title>{esc(title)} · {esc(suffix)}</title>
<style>
{css}
</style>
</head>
<body class="il-standalone il-host">
<header class="il-page-head">
<h1>{esc(title)}</h1>
<p class="il-page-facts">{esc(facts_line)}</p>
<p>{esc(what)}
Made with inductor_lens {esc(__version__)}; make your own with {how}.</p>
</header>
<main class="il-page-main"><div id="il-app" data-mode="{mode}"><noscript>This page needs JavaScript to draw the report.</noscript>{_BOOT_NOTE}</div></main>
"""
    tail = f"""<script type="module">{_BOOT}</script>
</body>
</html>
"""
    yield head.encode("utf-8")
    yield from _script_blocks("il-report", payload)
    yield from _script_data("il-bundle", bundle_b64().encode("ascii"))
    yield from _script_blocks("il-engine", _base64_parts(engine_gz_parts()))
    yield tail.encode("utf-8")


def save_html(report: Report, path: Union[str, os.PathLike]) -> str:
    """Write :func:`to_html` of ``report`` to ``path`` (atomically: a failure leaves an old file intact), compile
    by compile (``report_io.written``, spooled beside ``path``)."""
    w = _written(report, report_io.spool_file(path))
    try:
        return save_written(report, w, path)
    finally:
        w.close()


def save_written(report: Report, w: Any, path: Union[str, os.PathLike]) -> str:
    """Write the page of ``report`` to ``path`` from ``w``, its ``report_io.written`` form (``inductor-lens
    import-trace`` writes the page and the JSON from one)."""
    return atomic_write(path, _report_page(report, w))


def save_page(facts: dict, packed: bytes, path: Union[str, os.PathLike]) -> str:
    """Write :func:`page` to ``path`` atomically (``inductor-lens show`` uses it without building a Report)."""
    return atomic_write(path, page_bytes(facts, packed))
