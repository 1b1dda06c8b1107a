"""Views of a :class:`~inductor_lens.diff.ReportDiff`: the offline page, and what the widget (``diff_widget``) sends.

Both ship one payload to the same front end as a report does: ``{"mode": "compare", "kind": "diff",
"diff": ..., "a": report_a, "b": report_b}`` gzip'd, and name the mode (the widget's ``_mode``, the
page's ``data-mode``): the front-end shell (``js/src/shell.js``) mounts the compare view
(``js/src/compare.js``) in it.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Union

from ..analysis.diff import UNIT, ReportDiff, kernel_source, summary_text
from ..report.io import atomic_write

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
