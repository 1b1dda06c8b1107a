"""Where the report's dataclasses reach code that lives in other modules, without importing it.

``Report.to_json``, ``Report.from_dict``, ``load`` and the conveniences ``Report.save_html``,
``Report.widget`` and ``Report.diff`` are public API on the dataclasses, but their work is done by report
I/O (this layer), by the analysis layer and by the views. The model imports none of them: each module that
does the work registers it here under a name (``provide``), the model looks it up at the call (``call``).
``inductor_lens.report`` registers its I/O when it is imported, and the package root ``inductor_lens``
registers the views and the analysis; both are always imported before any of their modules, so the
table is full whenever a report exists. Imports still point one way: nothing here imports anything.
"""

from __future__ import annotations

from typing import Any, Callable

_PROVIDED: dict[str, Callable[..., Any]] = {}


def provide(name: str, fn: Callable[..., Any]) -> None:
    """Register ``fn`` as the implementation of ``name``."""
    _PROVIDED[name] = fn


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call what was registered as ``name``; a clear error when nothing was."""
    try:
        fn = _PROVIDED[name]
    except KeyError:
        raise RuntimeError(
            f"inductor_lens: {name!r} is not available: import inductor_lens (the package) first "
            f"(registered: {sorted(_PROVIDED)})"
        ) from None
    return fn(*args, **kwargs)
