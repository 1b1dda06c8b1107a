"""Old module paths still import: ``inductor_lens.model`` is ``inductor_lens.report.model``, and so on.

Version 0.1 had one flat package; its modules moved into the layer packages. Importing an old path gives
the moved module itself (the same objects, so ``isinstance`` and monkeypatching keep working) and a
``DeprecationWarning`` naming the new path. ``model``, which importing ``inductor_lens`` loads anyway, is
aliased at once; the others when first imported (``import inductor_lens.diff`` leaves ``inductor_lens.diff``
the function: the package module refuses to rebind its own names to modules).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings

#: old dotted name (under ``inductor_lens``) -> new one
MOVED = {
    "model": "report.model",
    "report_io": "report.io",
    "_derive": "report.rules",
    "_finish": "report.finish",
    "_intern": "report.intern",
    "_text": "report.text",
    "_model_build": "report.builder",
    "_json_schema": "report.schema",
    "_report_check": "report.check",
    "_report_stream": "report.stream",
    "_outcome": "report.outcome",
    "cost": "analysis.cost",
    "perf": "analysis.perf",
    "devices": "analysis.devices",
    "diff": "analysis.diff",
    "job": "analysis.job",
    "_triton_bounds": "analysis.triton_bounds",
    "widget": "views.widget",
    "html": "views.html",
    "job_html": "views.job_html",
    "magic": "views.magic",
    "cli": "views.cli",
    "_diff_views": "views.diff_widget",
    "_frontend": "views.frontend",
    "_progress": "views.progress",
    "_torchrun": "views.torchrun",
    "_diff_cli": "views.diff_cli",
    "_cell_compile": "views.cell_compile",
    "_rank_boot": "capturing.rank_boot",
    "_capture": "capturing",
    **{
        f"_capture.{m}": f"capturing.{m}"
        for m in (
            "adapter",
            "artifacts",
            "build",
            "kernel_timing",
            "parse",
            "raw",
            "session",
            "sources",
            "stacks",
            "torchread",
            "trace_graph",
            "trace_import",
            "trace_read",
        )
    },
}
_PKG = __name__.rsplit(".", 1)[0]
_EAGER = ("model",)


class _Alias:  # a loader (duck-typed: importlib.abc would import importlib.resources, pathlib, zipfile...)
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec):
        old = spec.name
        warnings.warn(
            f"{old} moved to {self.new}; import it from there (or use the names that {_PKG} itself exports)",
            DeprecationWarning,
            stacklevel=4,
        )
        return importlib.import_module(self.new)

    def exec_module(self, module) -> None:  # the moved module is already executed
        pass


class _Finder:  # a meta path finder
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PKG + "."):
            return None
        new = MOVED.get(fullname[len(_PKG) + 1 :])
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(f"{_PKG}.{new}"))


for _old in _EAGER:
    sys.modules.setdefault(f"{_PKG}.{_old}", importlib.import_module(f"{_PKG}.{MOVED[_old]}"))
if not any(isinstance(f, _Finder) for f in sys.meta_path):
    sys.meta_path.insert(0, _Finder())
