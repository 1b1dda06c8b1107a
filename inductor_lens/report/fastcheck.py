"""The typed check of one compile as written (the compact form), without expanding it first.

:mod:`inductor_lens.report.check` checks the *expanded* form: every ``{"@s": i}`` replaced by its stack and
every ``{"@g": [...]}`` by its joined text (``Expander.fill``), which for a 200 MB report is a walk over
millions of values before the check even starts. :func:`CompactCheck.ok` answers the same question on the
compact form directly: a reference is checked where it stands (a stack once per report, by its index; a
text by its line numbers), so nothing is expanded or copied.

It only says "certainly right" (``True``) or "not sure" (``False``): where the data is wrong, or merely
unusual (a reference where the writer never puts one, a bool where a line number goes), the reader runs
the exact check on that compile (expand, then :class:`~inductor_lens.report.check.PartsCheck`), which finds
the error and words it with its path exactly as before. So ``True`` must imply that the exact check passes;
``False`` costs only time.
"""

from __future__ import annotations

import dataclasses
import threading
import types
import typing
from array import array
from typing import Any, Callable, Union

from .check import _FIELD_RULES, MAX_DEPTH, PROFILE_NUMBERS, PROFILE_TEXTS, _plain_types
from .model import Compile, Frame
from .plain import hints as _hints
from .text import _IDS, TEXT_FIELDS

Pred = Callable[[Any], bool]
_PREDS: dict = {}
_CONTAINERS = frozenset((dict, list))


class _Current:
    """The tables of the report being checked (one at a time: :attr:`CompactCheck.ok` holds ``_LOCK``)."""

    good: frozenset = frozenset()  # indices of the interned stacks that are right as list[Frame]
    free: frozenset = frozenset()  # ... whose frames hold only scalars (two levels of nesting, no more)
    nstacks = 0
    lines = 0


C = _Current()
_LOCK = threading.Lock()


class CompactCheck:
    """The check of one report's compiles as written; ``stacks``/``lines`` from its ``_intern.Expander``."""

    def __init__(self, expander) -> None:
        stacks = expander.stacks
        self.good = frozenset(i for i, st in enumerate(stacks) if type(st) is list and all(map(_frame_ok, st)))
        self.free = frozenset(
            i
            for i, st in enumerate(stacks)
            if all(type(fr) is dict and _CONTAINERS.isdisjoint(map(type, fr.values())) for fr in st)
        )
        self.nstacks, self.lines = len(stacks), len(expander.lines)
        self._compile = _pred(Compile)

    def ok(self, compile_: Any) -> bool:
        """Whether the written compile certainly passes the exact check (``False``: not sure)."""
        with _LOCK:
            C.good, C.free, C.nstacks, C.lines = self.good, self.free, self.nstacks, self.lines
            try:
                return self._compile(compile_)
            except RecursionError:
                return False


def _is_ref(v: dict) -> bool:
    return len(v) == 1 and ("@s" in v or "@g" in v)


def _text_ref(v: Any) -> bool:
    """``{"@g": [line numbers]}`` naming lines that exist (what ``text.LinesText`` accepts)."""
    if type(v) is not dict or len(v) != 1:
        return False
    ids = v.get("@g")
    if type(ids) is not list:
        return False
    try:
        packed = array(_IDS, ids)
    except (TypeError, OverflowError):
        return False
    return not packed or max(packed) < C.lines


_FRAME_TYPES = (
    ("file", str),
    ("line", int),
    ("function", str),
    ("code", str),
    ("stage", str),
    ("is_user", bool),
    ("function_label", str),
    ("qualname", str),
    ("note", str),
    ("file_label", str),
)


def _frame_ok(fr: Any) -> bool:
    if type(fr) is not dict:
        return False
    for k, t in _FRAME_TYPES:
        if k in fr:
            if type(fr[k]) is not t:
                return False
        elif k in ("file", "line", "function"):
            return False
    return True


def _frames(v: Any) -> bool:
    """A ``list[Frame]``: an interned stack found right, or a list of frames written out."""
    if type(v) is dict:
        if len(v) != 1:
            return False
        i = v.get("@s")
        return type(i) is int and i in C.good
    return type(v) is list and all(map(_frame_ok, v))


def _free(v: Any, depth: int) -> bool:
    """Any JSON value, nested at most ``MAX_DEPTH`` levels once expanded; every reference inside it valid."""
    if depth > MAX_DEPTH:
        return False
    t = type(v)
    if t is dict:
        if len(v) == 1 and ("@s" in v or "@g" in v):
            if "@s" in v:
                i = v["@s"]
                return type(i) is int and i in C.free and 0 <= i < C.nstacks and depth + 1 <= MAX_DEPTH
            return _text_ref(v)
        if _CONTAINERS.isdisjoint(map(type, v.values())):
            return True
        for x in v.values():
            tx = type(x)
            if (tx is dict or tx is list) and not _free(x, depth + 1):
                return False
    elif t is list:
        if _CONTAINERS.isdisjoint(map(type, v)):
            return True
        for x in v:
            tx = type(x)
            if (tx is dict or tx is list) and not _free(x, depth + 1):
                return False
    return True


def _numbers_inside(keys, texts) -> Pred:
    keys, texts = frozenset(keys), frozenset(texts)

    def ok(v):
        if v is None:
            return True
        if type(v) is not dict or _is_ref(v) or not _free(v, 0):
            return False
        for k in keys.intersection(v):
            x = v[k]
            if x is not None and type(x) is not int and type(x) is not float:
                return False
        for k in texts.intersection(v):
            x = v[k]
            if x is not None and type(x) is not str:
                return False
        return True

    return ok


_RULES = {("Kernel", "profile"): _numbers_inside(PROFILE_NUMBERS, PROFILE_TEXTS)}
assert set(_RULES) == set(_FIELD_RULES), "a field rule of check.py has no compact twin here"


def _pred(tp: Any) -> Pred:
    p = _PREDS.get(tp)
    if p is None:
        _PREDS[tp] = lambda v: _PREDS[tp](v)  # recursion guard for self-referencing types
        p = _PREDS[tp] = _make(tp)
    return p


def _optional(tp: Any):
    """``(inner, optional)`` of ``Optional[inner]``; ``(tp, False)`` for anything else."""
    if typing.get_origin(tp) in (Union, getattr(types, "UnionType", Union)):
        args = typing.get_args(tp)
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            return inner[0], True
    return tp, False


def _make(tp: Any) -> Pred:
    if tp is Frame:
        return _frame_ok
    if dataclasses.is_dataclass(tp):
        return _dataclass_pred(tp)
    origin = typing.get_origin(tp)
    if origin in (Union, getattr(types, "UnionType", Union)):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        preds = [_pred(a) for a in args]
        if len(preds) == 1:
            (only,) = preds
            return (lambda v: v is None or only(v)) if optional else only
        return lambda v: (v is None and optional) or (type(v) is not dict and any(p(v) for p in preds))
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        if item is Frame:
            return _frames
        plain = _plain_types(item)
        if plain is not None:
            return lambda v: type(v) is list and plain.issuperset(map(type, v))
        inner = _pred(item)
        return lambda v: type(v) is list and all(map(inner, v))
    if origin is dict:
        args = typing.get_args(tp)
        inner = _pred(args[1] if len(args) == 2 else Any)
        return lambda v: type(v) is dict and not _is_ref(v) and all(map(inner, v.values()))
    if tp is str:
        return lambda v: type(v) is str or _text_ref(v)
    if tp is bool:
        return lambda v: type(v) is bool
    if tp is int:
        return lambda v: type(v) is int
    if tp is float:
        return lambda v: type(v) is float or type(v) is int
    if tp is dict:
        return lambda v: type(v) is dict and not _is_ref(v) and _free(v, 0)
    if tp is list:
        return lambda v: type(v) is list and _free(v, 0)
    return lambda v: _free(v, 0)  # Any


def _dataclass_pred(tp) -> Pred:
    """The predicate of the dataclass ``tp``, written out field by field like ``check._dataclass_checker``,
    with the common shapes (plain values, lists of them, stacks, lists of dataclasses) inline."""
    hints = _hints(tp)
    env: dict = {
        "_is_ref": _is_ref,
        "_text_ref": _text_ref,
        "_frames": _frames,
        "_free": _free,
        "_FLAT": _CONTAINERS.isdisjoint,
        "C": C,
    }
    lines = ["def ok(v):", "    if type(v) is not dict or _is_ref(v):", "        return False"]
    for i, f in enumerate(dataclasses.fields(tp)):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        hint = hints[f.name]
        rule = _RULES.get((tp.__name__, f.name))
        lines += [f"    if {f.name!r} in v:", f"        x = v[{f.name!r}]"]
        inner, optional = _optional(hint)
        plain = None if rule else _plain_types(hint)
        item = typing.get_args(inner)[0] if typing.get_origin(inner) is list and typing.get_args(inner) else None
        if plain is not None:
            env[f"t{i}"] = plain
            text = str in plain or f.name in TEXT_FIELDS.get(tp.__name__, ())  # may be written as its lines
            lines += [
                f"        if type(x) not in t{i}{' and not _text_ref(x)' if text else ''}:",
                "            return False",
            ]
        elif (
            rule is None
            and item is not None
            and (
                item is Frame
                or _plain_types(item) is not None
                or dataclasses.is_dataclass(item)
                or typing.get_args(item) == (Frame,)
            )
        ):
            cond = "x is not None and " if optional else ""
            if item is Frame:  # an interned stack (the common case) tested inline
                lines += [
                    f"        if {cond}type(x) is dict:",
                    "            if len(x) != 1 or type(i := x.get('@s')) is not int or i not in C.good:",
                    "                return False",
                    f"        elif {cond}not _frames(x):",
                    "            return False",
                ]
            else:
                if _plain_types(item) is not None:
                    env[f"t{i}"] = _plain_types(item)
                    test = f"not t{i}.issuperset(map(type, x))"
                elif item is not None and typing.get_args(item) == (Frame,):
                    test = "not all(map(_frames, x))"
                else:
                    env[f"p{i}"] = _lazy(env, f"p{i}", item)
                    test = f"not all(map(p{i}, x))"
                lines += [f"        if {cond}(type(x) is not list or {test}):", "            return False"]
        elif rule is None and inner is list:  # a free-form list (a shape): flat, as a rule
            cond = "x is not None and " if optional else ""
            lines += [
                f"        if {cond}(type(x) is not list or not (_FLAT(map(type, x)) or _free(x, 0))):",
                "            return False",
            ]
        else:
            env[f"p{i}"] = rule or _lazy(env, f"p{i}", hint)
            lines += [f"        if not p{i}(x):", "            return False"]
        if required:
            lines += ["    else:", "        return False"]
    lines.append("    return True")
    exec("\n".join(lines), env)  # noqa: S102 - the text is made above from the model's field names only
    return env["ok"]


def _lazy(env: dict, key: str, tp: Any) -> Pred:
    """A predicate that makes ``_pred(tp)`` at its first use and puts it in ``env[key]`` in its own place."""

    def first(v):
        env[key] = p = _pred(tp)
        return p(v)

    return first
