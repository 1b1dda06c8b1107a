"""What a lens cell shows: the live progress line under the cell, the widget (or its text form), the
compare view, and the notices (one line each: files written, options that did nothing, diagnostics)."""

from __future__ import annotations

import html
import threading
import time
from typing import Optional

_PROGRESS_INTERVAL_S = 0.25


class _Html:
    """A display object with a text and an HTML form."""

    def __init__(self, text: str, html_: str):
        self._text, self._html = text, html_

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": self._text, "text/html": self._html}


class _Progress:
    """The live line under the cell, in the user's words (``views/progress.py``): created at the first
    compile event, updated at most 4x/s (and at each kernel generated). At the end its place holds the lens, or,
    where the cell showed something after it (a training loop's prints), a last line that says so
    (:func:`show_cell_result`): never an empty output, which a saved notebook kept (a new user's trial, nu19 O-f)."""

    def __init__(self, shell=None):
        from .progress import Progress

        self.state = Progress()
        self.handle = None
        self.last = 0.0
        self.error: Optional[BaseException] = None
        self.error_tb = None
        self._lock = threading.Lock()
        self._after = _OutputsAfter(shell)

    def __call__(self, message: str) -> None:
        try:
            with self._lock:
                change = self.state.update(message)
                if change is None:
                    return
                now = time.monotonic()
                if self.handle is not None and now - self.last < _PROGRESS_INTERVAL_S and change != "kernel":
                    return
                self.last = now
                self._show()
        except Exception as e:  # shown after the cell (never swallowed), progress stops
            import sys

            self.error, self.error_tb = e, sys.exc_info()
            raise

    def _show(self) -> None:
        from IPython.display import display

        obj = _Html(self.text(), self.html())
        if self.handle is None:
            self.handle = display(obj, display_id=True)
            self._after.start()
        else:
            self.handle.update(obj)

    def came_after(self) -> bool:
        """Whether the cell showed anything (prints, displays) under the line since it was made; True where that is
        not known (outside ipykernel)."""
        return self._after.seen()

    def close(self) -> None:
        self._after.stop()

    def last_line(self, report=None) -> _Html:
        """What the line says once the lens is shown below the cell's output: where Inductor started, what it built;
        where ``report`` holds no compile, that nothing compiled and why (``Report.nothing``, what the widget says):
        the line said "Inductor compiled from here, 0 kernel(s) generated" above a widget saying "Nothing was
        compiled: dynamo could not compile the frame" (a new user's trial, nu24 D6)."""
        from ..report.rules import kernels_text

        nothing = getattr(report, "nothing", "") if report is not None and not report.compiles else ""
        if nothing:
            text = (
                f"inductor_lens: dynamo started here. {nothing.rstrip('.')}; the lens is below, after the cell's output"
                f"{_LIVE_ONLY}"
            )
            return _Html(text, _line_html(text, "lens-nothing-here"))
        n = len(self.state.kernels)
        text = (
            f"inductor_lens: Inductor compiled from here, {kernels_text(n)} generated; "
            f"the lens is below, after the cell's output{_LIVE_ONLY}"
        )
        return _Html(text, _line_html(text, "lens-compiled-here"))

    def text(self) -> str:
        return "inductor_lens: " + self.state.line()

    def html(self) -> str:
        return _line_html(self.text(), "lens-progress")


#: What the last line adds on the widget below it: a notebook saved as HTML (``jupyter nbconvert --to html``) or
#: opened without its kernel cannot draw a live widget (nu25 D7, nu27 D5: blank under "the lens is below")
_LIVE_ONLY = (
    " (a live widget: a copy of the notebook as HTML shows none; %%inductor_lens --export FILE.html writes a page)"
)


def _line_html(text: str, role: str) -> str:
    return (
        f'<div class="inductor-lens-progress" data-role="{role}" '
        f'style="font-family:monospace;font-size:12px;opacity:.8">{html.escape(text)}</div>'
    )


#: The messages that add an output under a cell (an update of a display, ``update_display_data``, adds none).
_OUTPUT_MESSAGES = frozenset({"stream", "display_data", "execute_result", "error"})


class _OutputsAfter:
    """Counts the outputs the kernel sends from :meth:`start` on, through its session's ``send`` (the one place
    ipykernel sends streams and displays from; ``publish`` flushes the streams first, so the order holds). Outside
    ipykernel (no session) nothing is counted and :meth:`seen` says True: the lens then goes after, never above,
    what the cell showed."""

    def __init__(self, shell):
        self.session = getattr(getattr(shell, "kernel", None), "session", None)
        self.count = 0
        self._watching = False

    def start(self) -> None:
        session = self.session
        if session is None or self._watching or "send" in vars(session):
            self.session = None
            return
        send = session.send

        def counting_send(stream, msg_or_type, *args, **kwargs):
            kind = (
                msg_or_type.get("msg_type", msg_or_type.get("header", {}).get("msg_type"))
                if isinstance(msg_or_type, dict)
                else msg_or_type
            )
            if kind in _OUTPUT_MESSAGES:
                self.count += 1
            return send(stream, msg_or_type, *args, **kwargs)

        session.send = counting_send
        self._watching = True

    def seen(self) -> bool:
        if not self._watching:
            return True
        import sys

        for stream in (sys.stdout, sys.stderr):  # what the cell printed is sent (and counted) first
            try:
                stream.flush()
            except Exception:
                pass
        return self.count > 0

    def stop(self) -> None:
        if self._watching:
            del self.session.send
            self._watching = False


def _diff_view(baseline, report):
    """The compare view of ``baseline`` (A) and this cell's ``report`` (B); text without widgets."""
    d = baseline.diff(report)
    try:
        return d.widget()
    except ImportError as e:
        return _Html(
            d.text() + f"\n(the interactive widget is unavailable: {e})", f"<pre>{html.escape(d.text())}</pre>"
        )


def _notices(lines: list[str]) -> _Html:
    items = "".join(f"<li>{html.escape(s)}</li>" for s in lines)
    return _Html(
        "\n".join(f"inductor_lens: {s}" for s in lines),
        f'<div class="inductor-lens-notices" data-role="lens-notices">'
        f'<b>inductor_lens</b><ul style="margin:2px 0">{items}</ul></div>',
    )


def save_hint(name: Optional[str], export: Optional[str]) -> str:
    """How a lens cell's widget, where it cannot be drawn, tells to save a page (``LensWidget.how_to_save``), by the
    cell's ``--name`` and ``--export``: no variable holds the report without ``--name``.

    >>> save_hint(None, None)
    "or save a page that opens anywhere: add --export page.html to the cell's %%inductor_lens line (or --name VAR, then VAR.save_html(path))"
    >>> save_hint("rep", None), save_hint("rep", "lens.html")
    ('or save a page that opens anywhere with rep.save_html(path)', 'or open lens.html, the page --export saved: it opens anywhere')
    """
    if export:
        return f"or open {export}, the page --export saved: it opens anywhere"
    if name:
        return f"or save a page that opens anywhere with {name}.save_html(path)"
    return (
        "or save a page that opens anywhere: add --export page.html to the cell's %%inductor_lens line "
        "(or --name VAR, then VAR.save_html(path))"
    )


def _widget_or_text(report, **kwargs):
    """The widget; without the widget machinery, the text summary and why."""
    try:
        return report.widget(**{k: v for k, v in kwargs.items() if v is not None})
    except ImportError as e:
        return _Html(
            report.summary() + f"\n(the interactive widget is unavailable: {e})",
            f"<pre>{html.escape(report.summary())}</pre>"
            f"<p>(the interactive widget is unavailable: {html.escape(str(e))})</p>",
        )


def show_cell_result(shell, progress: _Progress, view, lines: list[str], report=None) -> None:
    """Show ``view`` in the progress line's place, or, where the cell showed something after that line (a training
    loop's prints), after what the cell showed (as a cell's value comes last; it went above the prints) with the line
    saying so; then the notices, then a progress error."""
    from IPython.display import display

    if progress.handle is None:
        display(view)
    elif progress.came_after():
        progress.handle.update(progress.last_line(report))
        display(view)
    else:
        progress.handle.update(view)
    if lines:
        display(_notices(lines))
    if progress.error is not None:
        shell.showtraceback(progress.error_tb)
