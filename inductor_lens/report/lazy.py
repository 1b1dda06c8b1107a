"""Compiles of a loaded report built when first read, not while loading.

``load()`` of a report in the line layout checks every field of every compile (nothing of the wrong type
reaches a view), but builds only what names a compile (its ``id``, ``label``, ``trigger``...: :data:`LIGHT`).
The rest (graphs, fused nodes, kernels, output code, ...: :data:`HEAVY`) stays the compile's line of the
file, as bytes, until one of those fields is first read: then the line is parsed again and the compile's
fields are built, all at once, and the bytes let go. For a 200 MB report that is most of the work of
loading (a few million dataclasses) done only for the compiles a view or a script looks at.

Nothing outside the model sees it: the fields are read through :class:`_LazySlot`, which builds them, so
``compile.kernels`` is always the list of :class:`~inductor_lens.report.model.Kernel`; equality, pickling,
``dataclasses.replace`` and the writers read every field and so build it. :func:`count` answers "how many
kernels" without building them (``Report.__repr__``, the widget's summary).
"""

from __future__ import annotations

import threading
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    orjson = None

#: Fields of ``Compile`` built while loading (small: what lists, names and finds a compile).
LIGHT = (
    "id",
    "compile_id",
    "graph_kind",
    "trigger",
    "frame",
    "frame_label",
    "label",
    "recompile_reason",
    "why",
    "same_graph_as",
    "complete",
    "contents",
    "box_count",
)


class Loader:
    """What the pending compiles of one loaded report share: its expander (tables) and builder (frames)."""

    def __init__(self, expander, builder) -> None:
        self.expander, self.builder = expander, builder
        self.lock = threading.RLock()

    def compile(self, raw: bytes, written: dict):
        """A ``Compile`` with its :data:`LIGHT` fields built from ``written`` (its compact form, checked) and
        the others pending on ``raw`` (the compile's JSON)."""
        light = {k: written[k] for k in LIGHT if k in written}
        if "trigger" in light:
            light["trigger"] = self.expander.value(light["trigger"])
        c = self.builder.build(_COMPILE[0], light)
        pending = _Pending(raw, self, len(written.get("kernels") or ()), _written_facts(written))
        for slot in _SLOTS.values():
            slot.__set__(c, pending)
        return c


class _Pending:
    """The heavy fields of one compile, not built yet: its line of the file."""

    __slots__ = ("raw", "loader", "kernels", "facts")

    def __init__(self, raw: bytes, loader: Loader, kernels: int, facts: tuple) -> None:
        self.raw, self.loader, self.kernels, self.facts = raw, loader, kernels, facts

    def build(self, obj: Any) -> None:
        """Build the heavy fields of ``obj`` (whose slots hold this) and put them in place."""
        loader = self.loader
        if loader is None:  # another thread built it meanwhile
            return
        with loader.lock:
            if self.raw is None:
                return
            full = self.make()
            cls = _COMPILE[0]
            for slot in _SLOTS.values():
                slot.__set__(obj, slot.__get__(full, cls))
            self.raw = self.loader = None

    def make(self) -> Any:
        """A new, whole ``Compile`` built from the line (None once the line is let go); the compile whose slots
        hold this stays pending (a writer reads the new one once and drops it)."""
        import gc

        from .text import lazy_texts

        loader = self.loader
        if loader is None:
            return None
        with loader.lock:
            if self.raw is None:  # built meanwhile
                return None
            ex, cls = loader.expander, _COMPILE[0]
            was = gc.isenabled()
            gc.disable()  # no cyclic GC rescanning the thousands of containers made here
            try:
                c = orjson.loads(self.raw)
                lazy_texts(c, ex.lines)
                c = ex.fill(c)
                loader.builder.shared = ex.shared
                full = loader.builder.build(cls, c)
            finally:
                if was:
                    gc.enable()
        return full  # its light fields are those of ``obj``: both are built from the same line


class _LazySlot:
    """A field of ``Compile`` whose slot may hold a :class:`_Pending`: reading it builds the compile."""

    __slots__ = ("_slot",)

    def __init__(self, slot: Any) -> None:
        self._slot = slot

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self
        v = self._slot.__get__(obj, cls)
        if type(v) is _Pending:
            v.build(obj)
            v = self._slot.__get__(obj, cls)
        return v

    def __set__(self, obj: Any, value: Any) -> None:
        self._slot.__set__(obj, value)

    def __delete__(self, obj: Any) -> None:
        self._slot.__delete__(obj)


#: field name -> the raw slot descriptor of each heavy field of ``Compile`` (filled by :func:`install`).
_SLOTS: dict = {}
_COMPILE: list = []  # the class (the model imports this module, not the other way)


def install(compile_cls: type) -> None:
    """Read the heavy fields of ``Compile`` through :class:`_LazySlot` (inside a ``_TextSlot`` where the
    field is a long text)."""
    import dataclasses

    from .text import _TextSlot

    _COMPILE[:] = [compile_cls]
    for f in dataclasses.fields(compile_cls):
        if f.name in LIGHT:
            continue
        attr = compile_cls.__dict__[f.name]
        outer = attr if isinstance(attr, _TextSlot) else None
        slot = outer._slot if outer else attr
        if isinstance(slot, _LazySlot):
            continue
        _SLOTS[f.name] = slot
        if outer:
            outer._slot = _LazySlot(slot)
        else:
            setattr(compile_cls, f.name, _LazySlot(slot))


def count(c: Any, name: str = "kernels") -> int:
    """``len(c.kernels)`` of a compile, without building it where it is still pending."""
    slot = _SLOTS.get(name)
    if slot is not None and name == "kernels":
        v = slot.__get__(c, type(c))
        if type(v) is _Pending:
            return v.kernels
    return len(getattr(c, name))


def _written_facts(written: dict) -> tuple[bool, bool, bool]:
    """``rules.view_facts`` of a compile from its checked compact form: the same three answers, read off the
    kernels' ``profile`` and the compile's ``memory`` as written (neither is interned)."""
    profiles = [k.get("profile") for k in written.get("kernels") or () if isinstance(k, dict)]
    return (
        any(p is not None for p in profiles),
        any(isinstance(p, dict) and p.get("achieved_gbps") is not None for p in profiles),
        written.get("memory") is not None,
    )


def whole(c: Any) -> Any:
    """``c`` if it is built, else a whole copy of it built from its line, ``c`` left pending: a writer walks
    each compile of a loaded report once, and a report it does not keep stays as light as it was loaded."""
    slot = _SLOTS.get("kernels")
    if slot is not None:
        v = slot.__get__(c, type(c))
        if type(v) is _Pending:
            made = v.make()
            if made is not None:
                return made
    return c


def view_facts(c: Any) -> tuple[bool, bool, bool]:
    """``rules.view_facts(c)`` without building ``c`` where it is still pending."""
    from .rules import view_facts as built

    slot = _SLOTS.get("kernels")
    if slot is not None:
        v = slot.__get__(c, type(c))
        if type(v) is _Pending:
            return v.facts
    return built(c)


def pending(c: Any) -> bool:
    """Whether the heavy fields of ``c`` are not built yet."""
    slot = _SLOTS.get("kernels")
    return slot is not None and type(slot.__get__(c, type(c))) is _Pending
