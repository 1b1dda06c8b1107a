"""Long texts of a loaded report, held as references to the lines its file stores once.

A written report stores each distinct line of its long texts once (``_intern``: guards, output code,
kernel sources, graph code) and each text as a list of line numbers. Joined into ``str`` on load, those
texts alone took 1.65x the file's size in memory, since a kernel's source is also in its compile's output
code and recompiles repeat most guard lines. :func:`load` keeps them as :class:`LinesText` instead: the
file's line table, shared, and 4 bytes per line; a text is joined each time it is read.

Nothing outside the model sees a :class:`LinesText`: the model's text fields (:data:`TEXT_FIELDS`) are
read through :class:`_TextSlot`, which joins them, so ``kernel.source`` is always a ``str``.
"""

from __future__ import annotations

from array import array
from typing import Any

#: The model's long-text fields that may hold a :class:`LinesText`: dataclass name -> field names.
TEXT_FIELDS = {"Compile": ("output_code", "guards"), "Kernel": ("source",), "Graph": ("code",)}

_IDS = "I"  # 4-byte unsigned line numbers
if array(_IDS).itemsize != 4:  # pragma: no cover - "I" is 4 bytes on every platform CPython runs on
    _IDS = "L"


class LinesText:
    """A text as its lines' numbers in a shared line table; ``str(t)`` joins them with ``"\\n"``."""

    __slots__ = ("_table", "_ids")

    def __init__(self, table: list, ids: list) -> None:
        """``ids``: whole numbers, each an index of ``table``; ``IndexError``/``TypeError``/``OverflowError``
        if one is not."""
        packed = array(_IDS, ids)  # TypeError for a non-number, OverflowError for a negative one
        if packed and max(packed) >= len(table):
            raise IndexError(f"a text's line {max(packed)} is not in the report's {len(table)} lines")
        self._table = table
        self._ids = packed.tobytes()  # bytes: 33 bytes + 4 a line (an array would take 64 + 4 a line)

    def __str__(self) -> str:
        table = self._table
        return "\n".join([table[i] for i in memoryview(self._ids).cast(_IDS)])

    def __repr__(self) -> str:
        return f"LinesText({len(self._ids) // 4} lines)"


def held(obj: Any, name: str) -> Any:
    """What the field ``name`` of ``obj`` holds: a ``str``, or a :class:`LinesText` where it reads as one."""
    attr = type(obj).__dict__.get(name)
    return attr._slot.__get__(obj, type(obj)) if isinstance(attr, _TextSlot) else getattr(obj, name)


class _TextSlot:
    """A dataclass field whose slot may hold a :class:`LinesText`: it reads as ``str``."""

    __slots__ = ("_slot",)

    def __init__(self, slot: Any) -> None:
        self._slot = slot

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self
        v = self._slot.__get__(obj, cls)
        return v if type(v) is str else str(v)

    def __set__(self, obj: Any, value: Any) -> None:
        self._slot.__set__(obj, value)

    def __delete__(self, obj: Any) -> None:
        self._slot.__delete__(obj)


def install(classes: dict) -> None:
    """Read the :data:`TEXT_FIELDS` of ``classes`` (name -> slots dataclass) through :class:`_TextSlot`."""
    for cls_name, names in TEXT_FIELDS.items():
        cls = classes[cls_name]
        for name in names:
            slot = cls.__dict__[name]
            if not isinstance(slot, _TextSlot):
                setattr(cls, name, _TextSlot(slot))


def lazy_texts(compile_: Any, lines: list) -> None:
    """In a written compile (plain data, in place): each text field of :data:`TEXT_FIELDS` still stored as
    ``{"@g": [line numbers]}`` becomes a :class:`LinesText` over ``lines``. Values of any other shape are
    left for the expander and the typed check."""
    if type(compile_) is not dict:
        return
    for key in TEXT_FIELDS["Compile"]:
        _lazy(compile_, key, lines)
    kernels = compile_.get("kernels")
    if type(kernels) is list:
        for k in kernels:
            if type(k) is dict:
                _lazy(k, "source", lines)
    graphs = compile_.get("graphs")
    if type(graphs) is dict:
        for g in graphs.values():
            if type(g) is dict:
                _lazy(g, "code", lines)


def _lazy(d: dict, key: str, lines: list) -> None:
    v = d.get(key)
    if type(v) is dict and len(v) == 1:
        ids = v.get("@g")
        if type(ids) is list:
            d[key] = LinesText(lines, ids)
