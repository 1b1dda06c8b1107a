"""The lens widget: an anywidget over the front end in ``js/`` (built into ``static/``).

>>> import inductor_lens
>>> w = inductor_lens.LensWidget(report)      # or report.widget(), or just display(report)
>>> w.selected = "cpp_fused_add_cos_0"         # select a kernel (or fused node) from Python
>>> w.view = "timeline"

The report travels once, gzip'd, in a private ``Bytes`` trait; a large report (more than
``LensWidget.WHOLE_COMPILES`` compiles) opens with only its shown compile whole and the others as stubs,
which the front end asks for with custom messages (``compiles``), the compile a user switches to first:
the comm never carries the whole report at once, and the kernel builds only the compiles asked for. The Graphviz layout engine
(WebAssembly, about 1.5 MB) is not synced with every widget: the front end asks for it with a
custom message once per page. State a user may script (``selected``, ``view``, ``compile``)
lives in public synced traits.
"""

from __future__ import annotations

from typing import Any, Optional

import anywidget
import traitlets

from ..report.model import Report
from ..report.rules import breaks_text, frames_met, kernels_text
from .frontend import (  # noqa: F401 (engine_gz: re-exported)
    VIEWS,
    BundleMissingError,
    answer_request,
    engine_gz,
    pack_compiles,
    pack_opening,
    pack_report,
    widget_css,
    widget_esm,
)

__all__ = ["LensWidget", "BundleMissingError", "VIEWS"]


#: How :meth:`LensWidget.plain_text` tells to save a page, for a widget made from a ``Report`` the user holds.
SAVE_HINT = "or save a page that opens anywhere with report.save_html(path)"


class LensWidget(anywidget.AnyWidget):
    """Fusion graph, FX graph and compile timeline of a :class:`~inductor_lens.Report`.

    Parameters
    ----------
    report : Report
        What a capture recorded (``inductor_lens.capture()`` / ``inspect()``).
    selected, view, compile : str, optional
        Initial values of the synced traits below (``compile_id=`` is the 0.1 name of ``compile``).

    Examples
    --------
    >>> w = report.widget(view="fx")
    >>> w.observe(lambda ch: print(ch["new"]), names=["selected"])
    """

    _esm = widget_esm()
    _css = widget_css()

    _report = traitlets.Bytes(b"").tag(sync=True)
    """bytes: the report as gzip'd JSON (private payload; a Bytes trait arrives as a DataView). Default ``b""``."""

    #: Reports with more compiles than this open with the shown compile only; the front end fetches the rest.
    WHOLE_COMPILES = 16

    _mode = traitlets.Unicode("lens").tag(sync=True)
    """str: the front-end shell's mode (private): always ``"lens"`` for a report."""

    selected = traitlets.Unicode("").tag(sync=True)
    """str: the selected fused node. Set a fused node, kernel or FX node name to select it; the
    front end stores the fused node's name. ``""`` (the default) selects nothing."""

    view = traitlets.Enum(VIEWS, default_value="fusion").tag(sync=True)
    """str: the visible view, one of ``VIEWS``: ``"fusion"`` (default), ``"fx"``, ``"timeline"``, ``"source"``,
    ``"kernels"``, ``"roofline"`` (a profiled report)."""

    compile = traitlets.Unicode("").tag(sync=True)
    """str: the shown compile, by its ``Compile.id`` (``"0/0 forward"``, as ``report.compile(...)`` takes it);
    ``""`` means the first one. (Not ``Compile.compile_id``, torch's ``"0/0"``, which a forward and its
    backward share.)"""

    @traitlets.validate("compile")
    def _valid_compile(self, proposal):
        # checked on every change, not only in __init__: a script setting a wrong id gets the list there is
        value = proposal["value"]
        report = getattr(self, "_report_obj", None)
        if not value or report is None:
            return value
        try:
            return report.compile(value).id
        except KeyError as e:
            raise traitlets.TraitError(str(e.args[0] if e.args else e)) from None

    def __init__(self, report: Report, *, how_to_save: Optional[str] = None, **kwargs: Any) -> None:
        """``how_to_save``: how the plain-text form (:meth:`plain_text`) tells to save a page of ``report``, where
        the code that shows the widget knows better than :data:`SAVE_HINT` (the ``%%inductor_lens`` cell: no
        variable holds the report without ``--name``)."""
        if not isinstance(report, Report):
            raise TypeError(f"LensWidget needs an inductor_lens.Report, not {type(report).__name__}")
        if "view" in kwargs and kwargs["view"] not in VIEWS:
            raise ValueError(f"unknown view {kwargs['view']!r} (must be one of {list(VIEWS)})")
        if "compile_id" in kwargs:  # the 0.1 name: it held Compile.id, not Compile.compile_id
            import warnings

            warnings.warn(
                "LensWidget(compile_id=...) is now LensWidget(compile=...) (a Compile.id)",
                DeprecationWarning,
                stacklevel=2,
            )
            kwargs.setdefault("compile", kwargs.pop("compile_id"))
        ids = [c.id for c in report.compiles]
        cid = kwargs.get("compile")
        if cid:
            kwargs["compile"] = report.compile(cid).id  # KeyError names the compiles there are
        elif ids:
            kwargs["compile"] = ids[0]
        from ..report.lazy import count

        self._report_obj = report
        self._summary = (len(report.compiles), sum(count(c) for c in report.compiles))
        breaks = len(report.graph_breaks)
        raised = any(d.code == "compile_raised" for d in report.diagnostics)
        self._breaks = (
            breaks_text(breaks, [d.code for d in report.diagnostics], frames_met(report.graph_breaks))
            if breaks or raised
            else ""
        )
        self._how_to_save = how_to_save or SAVE_HINT
        if len(ids) > self.WHOLE_COMPILES:
            payload, self._pending = pack_opening(report, kwargs["compile"])
        else:
            payload, self._pending = pack_report(report), []
        super().__init__(_report=payload, **kwargs)
        self.on_msg(self._on_msg)

    @property
    def report(self) -> Report:
        """The report shown."""
        return self._report_obj

    @property
    def compile_id(self) -> str:
        """The 0.1 name of :attr:`compile` (deprecated: it holds a ``Compile.id``, not a ``compile_id``)."""
        import warnings

        warnings.warn("LensWidget.compile_id is now LensWidget.compile", DeprecationWarning, stacklevel=2)
        return self.compile

    @compile_id.setter
    def compile_id(self, value: str) -> None:
        import warnings

        warnings.warn("LensWidget.compile_id is now LensWidget.compile", DeprecationWarning, stacklevel=2)
        self.compile = value

    def _on_msg(self, _widget, content, buffers) -> None:
        # request/response with the front end, matched by id (custom messages only for this)
        def export():  # the page in pieces as they are made: answer_request sends it in parts
            from .html import page_parts

            return _filename(self._report_obj), page_parts(self._report_obj)

        answer_request(self, content, export, self._answer_compiles)

    def _answer_compiles(self, ids: list) -> bytes:
        """The answer to the front end's ``compiles`` request: those compiles, gzip'd JSON."""
        return pack_compiles(self._report_obj, ids)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget's view, and in place of its plain-text form (what a notebook shows where the widget cannot
        be drawn: its kernel gone, a page rendered by nbconvert or GitHub) what it is and how to see it again."""
        out = super()._repr_mimebundle_(**kwargs)
        data, meta = out if isinstance(out, tuple) else (out, None)  # ipywidgets 8: (data, metadata)
        if isinstance(data, dict) and "text/plain" in data:
            data = dict(data, **{"text/plain": self.plain_text()})
        return (data, meta) if isinstance(out, tuple) else data

    def plain_text(self) -> str:
        """What the widget says where it cannot be drawn: the report's totals (its graph breaks where there are
        some), and how to see it again or save a page of it."""
        n, k = self._summary
        breaks = f", {self._breaks}" if self._breaks else ""
        return (
            f"inductor_lens: {n} compile(s), {kernels_text(k)}{breaks}. This interactive view needs the kernel that made "
            f"it: re-run the cell to see it again, {self._how_to_save}."
        )

    def __repr__(self) -> str:  # cheap: never serializes the payload
        n, k = self._summary
        return f"<LensWidget: {n} compile(s), {k} kernel(s), view={self.view!r}, selected={self.selected!r}>"


def _filename(report: Report) -> str:
    import re

    stem = (
        re.sub(r"[^A-Za-z0-9_.-]+", "-", report.title or "inductor-lens-report").strip("-.") or "inductor-lens-report"
    )
    return stem[:80] + ".html"
