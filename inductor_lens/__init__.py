"""inductor_lens: see what torch.compile's Inductor did.

>>> import inductor_lens
>>> with inductor_lens.capture() as cap:
...     compiled(x)            # the first call is where Inductor runs
>>> cap.report                 # fused kernels, their source, and the code that produced them

Layers: ``capture`` (the only code that touches ``torch._*``), ``model`` (plain dataclasses, no torch),
and the views (``widget``, ``html``, ``magic``, ``cli``), loaded lazily.
"""

from ._capture.session import CaptureError, capture, inspect, profile, time_kernels
from .job import Job, load_job
from .model import SCHEMA_VERSION, Diagnostic, Report, ReportError, load
# torch-free; binding the function here also keeps `inductor_lens.diff` the function, not the module
from .diff import ReportDiff, diff

__version__ = "0.1.0"

__all__ = ["SCHEMA_VERSION", "Diagnostic", "Report", "ReportError", "load", "capture", "inspect", "LensWidget",
           "save_html", "CaptureError", "time_kernels", "profile", "diff", "ReportDiff", "__version__", "Job", "load_job",
           "load_trace"]


def __getattr__(name):  # lazy: importing inductor_lens must not import torch or the widget machinery
    if name == "LensWidget":
        from .widget import LensWidget
        return LensWidget
    if name == "load_trace":
        from ._capture.trace_import import load_trace
        return load_trace
    if name == "save_html":
        from .html import save_html
        return save_html
    raise AttributeError(f"module 'inductor_lens' has no attribute {name!r}")


def load_ipython_extension(ipython):
    """``%load_ext inductor_lens``: registers ``%%inductor_lens`` and the display formatter."""
    from .magic import load_ipython_extension as _load
    _load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext inductor_lens``: removes what ``load_ipython_extension`` added."""
    from .magic import unload_ipython_extension as _unload
    _unload(ipython)
