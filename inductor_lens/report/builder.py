"""Building the model's dataclasses from plain data that the typed check has already accepted.

``Report.from_dict`` used to walk the data with one generic function that asked ``typing`` about every
value; here each dataclass gets a builder made once from its type hints (the way ``_report_check`` makes
its checkers), so building is a few dict lookups and one constructor call per object. Equal frames are
made once and shared (a report repeats the same stacks on every FX node of a line, on every kernel of a
compile): the memory of a loaded report follows its distinct frames, not its references to them.

The data should have passed the typed check (``report_io.check`` / ``validate``): a value of the wrong
kind raises ``TypeError`` here without a path, and ``Report.from_dict`` then builds the slow way, which
names the field. Lists and dicts are copied, so the report never shares a container with the data; an
interned stack (one list that the expander hands to every place naming it) is built once, and its one list
of frames is shared by those places of the report, as the frames are.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Optional, Union

from .model import Diagnostic, Frame
from .plain import from_plain
from .plain import hints as _hints
from .text import TEXT_FIELDS, LinesText

_BUILDERS: dict = {}
#: Strings shorter than this are held once per report (names, ops, dtypes, module paths).
WORD_MAX = 80


class Builder:
    """Builds dataclasses of the model from checked plain data; one per report (it holds the shared frames)."""

    def __init__(self, shared: frozenset = frozenset()) -> None:
        self.frames: dict[tuple, Frame] = {}
        self.words: dict[str, str] = {}
        #: ``id`` of lists that many places of the data hold (``_intern.Expander.shared``: the interned
        #: stacks, kept alive by the expander); each is built once and its one list shared by those places.
        self.shared = shared
        self.built: dict[int, list] = {}
        self.lists: dict[tuple, list] = {}

    def word(self, v: str) -> str:
        """``v``, the one copy of it this report holds when short (names, ops, dtypes, module paths repeat
        on every node of every compile; a parser makes a new string each time)."""
        if type(v) is not str:
            raise TypeError(f"expected a string, got {type(v).__name__}")
        return self.words.setdefault(v, v) if len(v) < WORD_MAX else v

    def words_of(self, v: list) -> list:
        """A list of strings; equal lists (a node's module path, its inputs' names) are one list."""
        key = tuple(_list(v))
        out = self.lists.get(key)
        if out is None:
            out = self.lists[key] = [self.word(x) for x in key]
        return out

    def frame(self, v: dict) -> Frame:
        key = (
            v["file"],
            v["line"],
            v["function"],
            v.get("code", ""),
            v.get("stage", ""),
            v.get("qualname", ""),
            v.get("note", ""),
        )
        fr = self.frames.get(key)
        if fr is None:
            word = self.word
            fr = self.frames[key] = Frame(
                word(key[0]), key[1], word(key[2]), word(key[3]), word(key[4]), qualname=word(key[5]), note=key[6]
            )
        return fr

    def sizes(self, v: Any) -> Any:
        """A free-form list (a node's shape): one list for equal flat lists of whole numbers and strings."""
        if type(v) is not list or not all(type(x) is int or type(x) is str for x in v):
            return v
        key = (list, *v)  # never equal to a key of ``words_of``
        out = self.lists.get(key)
        if out is None:
            out = self.lists[key] = [self.word(x) if type(x) is str else x for x in v]
        return out

    def build(self, tp: Any, v: Any) -> Any:
        """``tp`` (a dataclass of the model) from ``v``; ``TypeError``/``KeyError`` if ``v`` does not fit."""
        return _builder(tp)(self, v)


def _builder(tp: Any):
    b = _BUILDERS.get(tp)
    if b is None:
        _BUILDERS[tp] = lambda self, v: _BUILDERS[tp](self, v)  # recursion guard
        b = _BUILDERS[tp] = _make(tp)
    return b


def _make(tp: Any):
    if tp is Frame:
        return lambda self, v: self.frame(_dict(v))
    if tp is Diagnostic:  # also reads version-1 strings
        return lambda self, v: Diagnostic.from_plain(v)
    if dataclasses.is_dataclass(tp) and hasattr(tp, "from_plain"):  # reads older spellings (profiles: 0.2 dicts)
        return lambda self, v: tp.from_plain(v, tp.__name__)
    if dataclasses.is_dataclass(tp):
        return _dataclass_builder(tp)
    origin = typing.get_origin(tp)
    if origin in (Union, getattr(types, "UnionType", Union)):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and _needs_build(args[0]):
            inner = _builder(args[0])
            return lambda self, v: None if v is None else inner(self, v)
        return None
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        if _needs_build(item):
            return _list_builder(_builder(item))
        return lambda self, v: list(_list(v))
    if origin is dict:
        args = typing.get_args(tp)
        if len(args) == 2 and _needs_build(args[1]):
            inner = _builder(args[1])
            return lambda self, v: {k: inner(self, x) for k, x in _dict(v).items()}
        return lambda self, v: dict(_dict(v))
    return None  # a plain value (str, int, float, bool, Any): used as it is


def _list_builder(inner):
    def build(self, v):
        if id(v) in self.shared:
            out = self.built.get(id(v))
            if out is None:
                out = self.built[id(v)] = [inner(self, x) for x in _list(v)]
            return out
        return [inner(self, x) for x in _list(v)]

    return build


def _needs_build(tp: Any) -> bool:
    if dataclasses.is_dataclass(tp):
        return True
    return any(_needs_build(a) for a in typing.get_args(tp))


def _dataclass_builder(tp):
    """A function ``build(builder, v)`` for the dataclass ``tp``, written out field by field (the way
    ``dataclasses`` writes ``__init__``): no loop over the fields, no dict of arguments, the short strings
    looked up inline. Each field: its value built (``None`` kept), else its default, else ``KeyError``."""
    hints = _hints(tp)
    env: dict = {"tp": tp, "_dict": _dict, "word": Builder.word, "LinesText": LinesText}
    lines = ["def build(self, v):", "    if type(v) is not dict:", "        _dict(v)", "    words = self.words"]
    args = []
    for i, f in enumerate(dataclasses.fields(tp)):
        if not f.init:
            continue
        x, hint = f"x{i}", hints[f.name]
        lines += [f"    if {f.name!r} in v:", f"        {x} = v[{f.name!r}]"]
        if f.name in TEXT_FIELDS.get(tp.__name__, ()):  # a long text: kept as it is (a str or a LinesText)
            lines += [
                f"        if type({x}) is not str and type({x}) is not LinesText:",
                f"            word(self, {x})",
            ]  # raises TypeError
        elif hint is str or hint == Optional[str]:
            lines += [
                f"        if type({x}) is str:",
                f"            if len({x}) < {WORD_MAX}:",
                f"                {x} = words.setdefault({x}, {x})",
                f"        elif {x} is not None:",
                f"            word(self, {x})",
            ]  # raises TypeError
        else:
            b = _field_builder(hint)
            if b is not None:
                env[f"b{i}"] = b
                lines.append(f"        if {x} is not None: {x} = b{i}(self, {x})")
        lines.append("    else:")
        if f.default is not dataclasses.MISSING:
            env[f"d{i}"] = f.default
            lines.append(f"        {x} = d{i}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"f{i}"] = f.default_factory
            lines.append(f"        {x} = f{i}()")
        else:
            lines.append(f"        raise KeyError({f'missing field {f.name!r} of {tp.__name__}'!r})")
        args.append(f"{f.name}={x}")
    lines.append(f"    return tp({', '.join(args)})")
    exec("\n".join(lines), env)  # noqa: S102 - the text is made above from the model's field names only
    return env["build"]


def _field_builder(hint: Any):
    if hint == list[str]:
        return Builder.words_of
    if hint == Optional[list]:
        return Builder.sizes
    if _needs_build(hint) or typing.get_origin(hint) in (list, dict):
        return _make(hint)
    return None


def _list(v: Any) -> list:
    if type(v) is not list:
        raise TypeError(f"expected a list, got {type(v).__name__}")
    return v


def _dict(v: Any) -> dict:
    if type(v) is not dict:
        raise TypeError(f"expected an object, got {type(v).__name__}")
    return v


def build(tp: Any, data: dict) -> Any:
    """``tp`` from plain data: the fast builders above, and where they refuse the data, the generic walk
    (:func:`inductor_lens.report.plain.from_plain`), which names the field that is wrong."""
    try:
        return Builder().build(tp, data)
    except (TypeError, KeyError, AttributeError, ValueError):
        return from_plain(tp, data, "report")
