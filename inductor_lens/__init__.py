"""inductor_lens: see what torch.compile's Inductor did.

>>> import inductor_lens
>>> with inductor_lens.capture() as cap:
...     compiled(x)            # the first call is where Inductor runs
>>> cap.report                 # fused kernels, their source, and the code that produced them

The package is laid out by layer; imports point one way (``tests/structure/test_layers.py`` enforces it):

- ``report``: the torch-free record (dataclasses, JSON I/O, schema, the naming rules). Imports nothing above.
- ``analysis``: work on reports (cost, performance, diff, jobs). Imports ``report``.
- ``capturing``: the only code that touches ``torch._*`` (hooks, builds a report, trace import, timing).
  Imports ``report`` and ``analysis``.
- ``views``: the widget, the page, the magic, the CLI. Imports the layers below.

This file is the public API and the one place that wires the layers together (``report.hooks``).
Importing it imports neither torch nor the widget machinery, and only the report layer at once: every other
name is imported at its first use (``inductor-lens import-trace`` starts in a fraction of the time).
"""

import sys as _sys
import types as _types

from ._version import __version__
from .report import hooks as _hooks
from .report.model import SCHEMA_VERSION, Diagnostic, Report, ReportError, load

#: name -> the module that defines it, imported at the first use of the name (``__getattr__``).
_LAZY = {
    "diff": "analysis.diff",
    "ReportDiff": "analysis.diff",
    "Job": "analysis.job",
    "load_job": "analysis.job",
    "reproducer": "analysis.reproducer",
    "inspect": "capturing.pipeline",
    "CaptureError": "capturing.session",
    "capture": "capturing.session",
    "profile": "capturing.session",
    "time_kernels": "capturing.session",
    "load_trace": "capturing.trace_import",
    "LensWidget": "views.widget",
    "save_html": "views.html",
}

__all__ = [
    "SCHEMA_VERSION",
    "Diagnostic",
    "Report",
    "ReportError",
    "load",
    "capture",
    "inspect",
    "LensWidget",
    "save_html",
    "CaptureError",
    "time_kernels",
    "profile",
    "diff",
    "ReportDiff",
    "__version__",
    "Job",
    "load_job",
    "load_trace",
    "reproducer",
]


def __getattr__(name):  # lazy: importing inductor_lens must not import torch, the widget machinery or more
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'inductor_lens' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    if name not in ("LensWidget", "save_html"):  # these two stay lazy: the widget machinery, the page
        globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


class _Package(_types.ModuleType):
    """The package module: importing an old module path (``import inductor_lens.diff``) must not rebind the
    package's own name (the function ``diff``) to that module, as the import system does for a submodule."""

    def __setattr__(self, name, value):
        if name in _LAZY and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


def _wire() -> None:
    """The dataclasses' convenience methods (``Report.widget``, ``save_html``, ``diff``; ``ReportDiff`` and
    ``Job``'s pages) are done by the layers above them; each is imported at its first call."""

    def widget(report, **kwargs):
        from .views.widget import LensWidget

        return LensWidget(report, **kwargs)

    def save_html(report, path):
        from .views.html import save_html

        return save_html(report, path)

    def diff_widget(d, **kwargs):
        from .views.diff_widget import DiffWidget

        return DiffWidget(d, **kwargs)

    def save_diff_html(d, path):
        from .views.diff_views import save_diff_html

        return save_diff_html(d, path)

    def save_job_html(job, path):
        from .views.job_html import save_job_html

        return save_job_html(job, path)

    for fn in (widget, save_html, diff_widget, save_diff_html, save_job_html):
        _hooks.provide(fn.__name__, fn)

    def diff(a, b, pairs=None):
        from .analysis.diff import diff

        return diff(a, b, pairs=pairs)

    _hooks.provide("diff", diff)


_wire()
from . import _compat  # noqa: E402,F401  old module paths (inductor_lens.model, ...) still import


def load_ipython_extension(ipython):
    """``%load_ext inductor_lens``: registers ``%%inductor_lens`` and the display formatter."""
    from .views.magic import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext inductor_lens``: removes what ``load_ipython_extension`` added."""
    from .views.magic import unload_ipython_extension as _unload

    _unload(ipython)
