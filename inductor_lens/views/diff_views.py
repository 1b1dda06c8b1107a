"""Views of a :class:`~inductor_lens.diff.ReportDiff`: the widget and the offline page.

Both ship one payload to the same front end as a report does: ``{"mode": "compare", "kind": "diff",
"diff": ..., "a": report_a, "b": report_b}`` gzip'd, and name the mode (the widget's ``_mode``, the
page's ``data-mode``): the front-end shell (``js/src/shell.js``) mounts the compare view
(``js/src/compare.js``) in it.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any, Union

import anywidget
import traitlets

from ..analysis.diff import UNIT, ReportDiff, kernel_source, summary_text
from ..report.io import atomic_write
from .frontend import STATIC, answer_request
from .frontend import static as _static

_KERNEL_FIELDS = ("name", "language", "source", "fused_nodes", "fx_nodes", "metadata", "profile", "kind")
#: What the fusion graph (js/src/dot.js, the lens's and the compare page's) reads of a compile beside its fused nodes
#: and kernels: the data edges and what each output holds, decided in Python (a compare graph without them had no
#: edge and no input or output stub), which outputs the backward reads, and the repeated modules.
_GRAPH_FIELDS = ("edges", "outputs", "output_names", "returned_outputs", "saved_outputs", "module_view")
#: What it reads of a post-grad node: an input stub is named by what the input is (``display_name``, ``role``).
_NODE_FIELDS = ("name", "target", "display_name", "role")


def slim_report(r) -> dict:
    """What the compare view draws of a report: per compile its fused nodes, kernels (source, launch facts,
    profile), what its fusion graph is drawn from (``_GRAPH_FIELDS``) and post-grad ops (``_NODE_FIELDS``).
    Stacks, output code, guards, phases and the other graphs stay out: the diff already says what differs there,
    and the page stays small and quick to parse."""
    from ..report.plain import to_plain as _to_plain

    def graph(c):
        g = c.graphs.get("post_grad") or next(iter(c.graphs.values()), None)
        nodes = [{f: getattr(n, f) for f in _NODE_FIELDS} for n in g.nodes] if g else []
        return {"post_grad": {"nodes": nodes}} if g else {}

    return {
        "title": r.title,
        "torch_version": r.torch_version,
        "device": r.device,
        "created": r.created,
        "compiles": [
            {
                "id": c.id,
                "compile_id": c.compile_id,
                "graph_kind": c.graph_kind,
                "frame": c.frame,
                "fused_nodes": _to_plain(c.fused_nodes),
                "kernels": [_slim_kernel(k) for k in c.kernels],
                "graph_inputs": list(c.graph_inputs),
                "graph_outputs": list(c.graph_outputs),
                "graphs": graph(c),
                **{f: _to_plain(getattr(c, f)) for f in _GRAPH_FIELDS},
            }
            for c in r.compiles
        ],
    }


def _slim_kernel(k) -> dict:
    """A kernel as the compare view draws it: its source as the diff compared it (``diff.kernel_source``: without
    a profiled capture's instrumentation lines), so that the source diff's line numbers are the page's."""
    from ..report.plain import to_plain as _to_plain

    out = {f: _to_plain(getattr(k, f)) for f in _KERNEL_FIELDS}
    out["source"] = kernel_source(k)
    return out


def pack_diff(d: ReportDiff) -> bytes:
    """The compare payload as gzip'd JSON (deterministic)."""
    payload = {"mode": "compare", "kind": "diff", "diff": d.to_dict(), "a": slim_report(d.a), "b": slim_report(d.b)}
    return gzip.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8"), compresslevel=6, mtime=0)


def diff_title(d: ReportDiff) -> str:
    ta, tb = d.a.title or "A", d.b.title or "B"
    return f"{ta} vs {tb}"


def to_diff_html(d: ReportDiff) -> str:
    """The compare view as one self-contained HTML page (same front end and guarantees as a report page:
    no network, everything from the reports shown as text)."""
    from .html import page_html

    if not isinstance(d, ReportDiff):
        raise TypeError(f"to_diff_html needs an inductor_lens.ReportDiff, not {type(d).__name__}")
    sh = d.shared
    facts = (
        f"A: torch {d.a.torch_version} · {d.a.device} · {sh['launches_a']} {UNIT};  "
        f"B: torch {d.b.torch_version} · {d.b.device} · {sh['launches_b']} {UNIT};  "
        f"{summary_text(d.summary)} (all compile pairs)"
    )
    return page_html(
        diff_title(d),
        facts,
        pack_diff(d),
        "What changed between two torch.compile reports, kernel by kernel.",
        "inductor-lens diff a.json b.json -o diff.html",
        suffix="inductor_lens compare",
        mode="compare",
    )


def save_diff_html(d: ReportDiff, path: Union[str, os.PathLike]) -> str:
    """Write :func:`to_diff_html` to ``path`` atomically; returns the path."""
    return atomic_write(path, to_diff_html(d).encode("utf-8"))


class DiffWidget(anywidget.AnyWidget):
    """The compare view of a :class:`~inductor_lens.diff.ReportDiff` (``display(diff)``).

    ``compile_pair`` (synced) is the shown pair's index in ``diff.compiles``; ``selected`` the
    selected row's kernel name (B's, or A's for a kernel only in A).
    """

    _esm = (
        _static("lens.js")
        if (STATIC / "lens.js").exists()
        else "export default {render({el}){el.textContent='inductor_lens: front end not built (make bundle)'}}"
    )
    _css = _static("lens.css") if (STATIC / "lens.css").exists() else ""

    _report = traitlets.Bytes(b"").tag(sync=True)
    """bytes: the compare payload, gzip'd JSON (private). Default ``b""``."""

    _mode = traitlets.Unicode("compare").tag(sync=True)
    """str: the front-end shell's mode (private): always ``"compare"``."""

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
        answer_request(self, content, lambda: ("inductor-lens-diff.html", to_diff_html(self._diff)))

    def __repr__(self) -> str:  # cheap
        return f"<DiffWidget: {self._diff!r}>"
