"""Plain data <-> dataclasses, generically: what the report's JSON form is made of.

``to_plain`` turns any tree of dataclasses, lists and dicts into JSON-ready values; ``from_plain`` walks
the type hints to build one back and names the field that is wrong (``report.compiles[2].kernels[0]``).
The fast path for whole reports is :mod:`inductor_lens.report.builder`; this walk is its fallback.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Union


class ReportError(ValueError):
    """A report could not be read: bad JSON, a newer schema, or a missing field."""


def to_plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


_HINTS: dict = {}


def hints(cls) -> dict:
    """``typing.get_type_hints(cls)``, once per class."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def from_plain_fields(tp: Any, value: dict, where: str) -> Any:
    field_types = hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        if f.name in value:
            kwargs[f.name] = from_plain(field_types[f.name], value[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ReportError(f"{where}: missing field {f.name!r} of {tp.__name__}")
    return tp(**kwargs)


def from_plain(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if hasattr(tp, "from_plain"):  # a type that also reads older spellings (Diagnostic: v1 strings)
            return tp.from_plain(value, where)
        if not isinstance(value, dict):
            raise ReportError(f"{where}: expected an object for {tp.__name__}, got {type(value).__name__}")
        return from_plain_fields(tp, value, where)
    if origin in (Union, getattr(types, "UnionType", Union)):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return from_plain(args[0], value, where) if len(args) == 1 else value
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        if not isinstance(value, list):
            raise ReportError(f"{where}: expected a list, got {type(value).__name__}")
        return [from_plain(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        if not isinstance(value, dict):
            raise ReportError(f"{where}: expected an object, got {type(value).__name__}")
        return {k: from_plain(item, v, f"{where}.{k}") for k, v in value.items()}
    return value
