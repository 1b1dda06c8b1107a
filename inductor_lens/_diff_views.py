"""Views of a :class:`~inductor_lens.diff.ReportDiff`: the widget and the offline page.

Both ship one payload to the same front end as a report does: ``{"kind": "diff", "diff": ...,
"a": report_a, "b": report_b}`` gzip'd; the front end sees ``kind == "diff"`` and mounts the
compare view (``js/src/compare.js``) instead of the lens.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import os
import tempfile
from typing import Any, Union

import anywidget
import traitlets

from .diff import ReportDiff
from .widget import STATIC, _static, engine_gz


_KERNEL_FIELDS = ("name", "language", "source", "fused_nodes", "fx_nodes", "metadata", "profile")


def slim_report(r) -> dict:
    """What the compare view draws of a report: per compile its fused nodes, kernels (source, launch facts,
    profile) and post-grad ops (name and target). Stacks, output code, guards, phases and the other graphs
    stay out: the diff already says what differs there, and the page stays small and quick to parse."""
    from .model import _to_plain

    def graph(c):
        g = c.graphs.get("post_grad") or next(iter(c.graphs.values()), None)
        return {"post_grad": {"nodes": [{"name": n.name, "target": n.target} for n in g.nodes]}} if g else {}

    return {"title": r.title, "torch_version": r.torch_version, "device": r.device, "created": r.created,
            "compiles": [{"id": c.id, "compile_id": c.compile_id, "graph_kind": c.graph_kind, "frame": c.frame,
                          "fused_nodes": _to_plain(c.fused_nodes),
                          "kernels": [{f: _to_plain(getattr(k, f)) for f in _KERNEL_FIELDS} for k in c.kernels],
                          "graph_inputs": list(c.graph_inputs), "graph_outputs": list(c.graph_outputs),
                          "graphs": graph(c)} for c in r.compiles]}


def pack_diff(d: ReportDiff) -> bytes:
    """The compare payload as gzip'd JSON (deterministic)."""
    payload = {"kind": "diff", "diff": d.to_dict(), "a": slim_report(d.a), "b": slim_report(d.b)}
    return gzip.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8"), compresslevel=6, mtime=0)


def atomic_write(path: Union[str, os.PathLike], text: str) -> str:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``,
    so a failure never leaves a half-written file where a good one was."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".inductor-lens-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def diff_title(d: ReportDiff) -> str:
    ta, tb = d.a.title or "A", d.b.title or "B"
    return f"{ta} vs {tb}"


def to_diff_html(d: ReportDiff) -> str:
    """The compare view as one self-contained HTML page (same front end and guarantees as a report page:
    no network, everything from the reports shown as text)."""
    from . import __version__
    from .html import _BOOT, _CSP, _bundle_b64, _script_data

    if not isinstance(d, ReportDiff):
        raise TypeError(f"to_diff_html needs an inductor_lens.ReportDiff, not {type(d).__name__}")
    css = _static("lens.css").read_text(encoding="utf-8")
    if "</style" in css.lower():
        raise ValueError("lens.css must not contain '</style'")
    esc = html.escape
    s = d.summary
    facts = (f"A: torch {d.a.torch_version} · {d.a.device} · {len(d.a.kernels)} kernel(s);  "
             f"B: torch {d.b.torch_version} · {d.b.device} · {len(d.b.kernels)} kernel(s);  "
             f"{s['same']} same, {s['changed']} changed, {s['only_a']} only in A, {s['only_b']} only in B")
    payload = base64.b64encode(pack_diff(d)).decode("ascii")
    engine = base64.b64encode(engine_gz()).decode("ascii")
    title = diff_title(d)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="inductor_lens {esc(__version__)}">
<title>{esc(title)} · inductor_lens compare</title>
<style>
{css}
</style>
</head>
<body class="il-standalone il-host">
<header class="il-page-head">
<h1>{esc(title)}</h1>
<p class="il-page-facts">{esc(facts)}</p>
<p>What changed between two torch.compile reports, kernel by kernel. Made with inductor_lens {esc(__version__)};
make your own with <code>inductor-lens diff a.json b.json -o diff.html</code>.</p>
</header>
<main class="il-page-main"><div id="il-app"><noscript>This page needs JavaScript to draw the comparison.</noscript></div></main>
{_script_data("il-report", payload)}
{_script_data("il-bundle", _bundle_b64())}
{_script_data("il-engine", engine)}
<script type="module">{_BOOT}</script>
</body>
</html>
"""


def save_diff_html(d: ReportDiff, path: Union[str, os.PathLike]) -> str:
    """Write :func:`to_diff_html` to ``path`` atomically; returns the path."""
    return atomic_write(path, to_diff_html(d))


class DiffWidget(anywidget.AnyWidget):
    """The compare view of a :class:`~inductor_lens.diff.ReportDiff` (``display(diff)``).

    ``compile_pair`` (synced) is the shown pair's index in ``diff.compiles``; ``selected`` the
    selected row's kernel name (B's, or A's for a kernel only in A).
    """

    _esm = _static("lens.js") if (STATIC / "lens.js").exists() else "export default {render({el}){el.textContent='inductor_lens: front end not built (make bundle)'}}"
    _css = _static("lens.css") if (STATIC / "lens.css").exists() else ""

    _report = traitlets.Bytes(b"").tag(sync=True)
    """bytes: the compare payload, gzip'd JSON (private). Default ``b""``."""

    view = traitlets.Unicode("compare").tag(sync=True)
    """str: always ``"compare"`` for this widget."""

    selected = traitlets.Unicode("").tag(sync=True)
    """str: the selected kernel (B's name, or A's for a kernel only in A). Default ``""``."""

    compile_pair = traitlets.Int(0).tag(sync=True)
    """int: index of the shown compile pair in ``diff.compiles``. Default ``0``."""

    def __init__(self, d: ReportDiff, **kwargs: Any) -> None:
        if not isinstance(d, ReportDiff):
            raise TypeError(f"DiffWidget needs an inductor_lens.ReportDiff, not {type(d).__name__}")
        self._diff = d
        super().__init__(_report=pack_diff(d), **kwargs)
        self.on_msg(self._on_msg)

    @property
    def diff(self) -> ReportDiff:
        return self._diff

    def _on_msg(self, _widget, content, buffers) -> None:
        if not isinstance(content, dict):
            return
        kind, rid = content.get("type"), content.get("id")
        try:
            if kind == "engine":
                self.send({"type": "engine", "id": rid}, [engine_gz()])
            elif kind == "export":
                self.send({"type": "export", "id": rid, "filename": "inductor-lens-diff.html"},
                          [to_diff_html(self._diff).encode("utf-8")])
        except Exception as e:  # shown in the widget instead of vanishing in the kernel log
            self.send({"type": kind, "id": rid, "error": f"{type(e).__name__}: {e}"})

    def __repr__(self) -> str:  # cheap
        return f"<DiffWidget: {self._diff!r}>"
