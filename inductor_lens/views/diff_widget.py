"""The compare widget: an anywidget over the same front end as the compare page (``diff_views``), which needs no
anywidget: ``inductor-lens diff -o page.html`` writes its page where only the report's dependencies are importable.
(``inductor_lens._diff_views``, the old path, is this module: it holds the page's functions too.)"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

from ..analysis.diff import ReportDiff
from .diff_views import diff_title, pack_diff, save_diff_html, slim_report, to_diff_html  # noqa: F401 (the old path's)
from .frontend import answer_request, widget_css, widget_esm


class DiffWidget(anywidget.AnyWidget):
    """The compare view of a :class:`~inductor_lens.diff.ReportDiff` (``display(diff)``).

    ``compile_pair`` (synced) is the shown pair's index in ``diff.compiles``; ``selected`` the
    selected row's kernel name (B's, or A's for a kernel only in A).
    """

    _esm = widget_esm()
    _css = widget_css()

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
