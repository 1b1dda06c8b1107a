"""The typed check of plain report data: the type of every field, against the model's dataclasses.

Used by :mod:`inductor_lens.report_io` before a report is built or shown, so that nothing of the wrong
type reaches a view. Checkers are made once per dataclass from its type hints; a wrong value raises
``_Invalid`` whose path is filled in as it unwinds (the hot path never formats one).
"""

from __future__ import annotations

import dataclasses
import threading
import types
import typing
from typing import Any, Callable, Union

from .model import Report, ReportError
from .text import TEXT_FIELDS, LinesText

#: Deepest nesting accepted inside free-form fields (``Kernel.metadata``); deeper is an error, not a RecursionError.
MAX_DEPTH = 200
#: Numbers ``Kernel.profile`` (``KernelProfile``) holds: number or null, also in reports of 0.2 (whose
#: ``mean_us`` and ``runs`` load as ``total_us`` and ``iterations``); keys the model does not know are ignored.
PROFILE_NUMBERS = (
    "total_us",
    "calls",
    "per_call_us",
    "share",
    "share_of_step",
    "iterations",
    "mean_us",
    "std_us",
    "runs",
    "achieved_gbps",
    "achieved_tflops",
    "arithmetic_intensity",
    "peak_fraction",
    "estimated_us",
    "estimate_ratio",
)
#: Texts ``Kernel.profile`` holds (string or null).
PROFILE_TEXTS = ("device", "bound", "verdict")


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


Check = Callable[[Any], None]
_CHECKS: dict = {}


class _Invalid(Exception):
    """A wrong value; ``parts`` is its path, innermost first, filled in as the error unwinds (so the
    hot path never formats a path)."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem
        self.parts: list = []

    def where(self) -> str:
        out = ""
        for p in reversed(self.parts):
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
        return out


class _Memo(threading.local):
    """The lists shared by many places of the report being checked in this thread (the interned stacks that
    ``_intern.Expander`` hands out, named by ``id``: the expander keeps them alive, so the ids are unique), and
    those of them already found right: each is checked once, where it first appears, so an error has the
    path it always had."""

    shared: frozenset = frozenset()
    ok: "set | None" = None


_memo = _Memo()


class _shared_lists:
    """Within the block, lists whose ``id`` is in ``shared`` are checked once (``ok``: those found right)."""

    def __init__(self, shared: frozenset, ok: "set | None" = None) -> None:
        self.shared, self.ok = shared, (ok if ok is not None else set()) if shared else None

    def __enter__(self):
        self.was = (_memo.shared, _memo.ok)
        _memo.shared, _memo.ok = self.shared, self.ok

    def __exit__(self, *exc):
        _memo.shared, _memo.ok = self.was
        return False


def validate(data: dict, name: str = "report", shared: frozenset = frozenset()) -> None:
    """Check the type of every field of plain report data against the model; :class:`ReportError` if wrong.

    Free-form fields (``Kernel.metadata``) may hold any JSON value up to :data:`MAX_DEPTH` levels deep;
    the numbers of ``Kernel.profile`` (:data:`PROFILE_NUMBERS`) must be numbers or null. ``shared``: the
    ``id`` of lists that many places hold (``_intern.Expander.shared``), checked once each.
    """
    try:
        with _gc_paused(), _shared_lists(shared):
            _checker(Report)(data)
    except _Invalid as e:
        raise ReportError(f"{name}: {e.where() or 'the report'}: {e.problem}") from None


class _gc_paused:
    """No cyclic GC while millions of containers are made or walked (it rescans them all, again and again)."""

    def __enter__(self):
        import gc

        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        import gc

        if self.was:
            gc.enable()
        return False


def _checker(tp: Any) -> Check:
    key = tp
    if key in _CHECKS:
        return _CHECKS[key]
    _CHECKS[key] = lambda v: _CHECKS[key](v)  # recursion guard for self-referencing types
    _CHECKS[key] = check = _make_checker(tp)
    return check


def _expect(what: str, v: Any):
    shown = repr(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) else ""
    raise _Invalid(f"expected {what}, got {_json_type(v)}" + (f" ({shown[:40]})" if shown else ""))


def _make_checker(tp: Any) -> Check:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return _dataclass_checker(tp)
    if origin in (Union, getattr(types, "UnionType", Union)):
        return _union_checker(tp)
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        ci = _checker(item)
        plain = _plain_types(item)
        if plain is not None:

            def check_plain_list(v):
                if type(v) is not list:
                    _expect("an array", v)
                for i, x in enumerate(v):
                    if type(x) not in plain:
                        _fail(ci, x, i)

            return check_plain_list

        def check_list(v):
            if type(v) is not list:
                _expect("an array", v)
            memo = _memo.ok
            if memo is not None and id(v) in memo:
                return
            for i, x in enumerate(v):
                try:
                    ci(x)
                except _Invalid as e:
                    e.parts.append(i)
                    raise
            if memo is not None and id(v) in _memo.shared:
                memo.add(id(v))

        return check_list
    if origin is dict:
        args = typing.get_args(tp)
        cv = _checker(args[1] if len(args) == 2 else Any)

        def check_dict(v):
            if type(v) is not dict:
                _expect("an object", v)
            for k, x in v.items():
                try:
                    cv(x)
                except _Invalid as e:
                    e.parts.append(k)
                    raise

        return check_dict
    simple = {
        str: ((str,), "a string"),
        bool: ((bool,), "true or false"),
        int: ((int,), "a whole number"),
        float: ((float, int), "a number"),
    }
    if tp in simple:
        ok, what = simple[tp]
        return lambda v: None if type(v) in ok else _expect(what, v)
    if tp in (list, dict):
        want = list if tp is list else dict

        def check_free(v):
            if type(v) is not want:
                _expect("an array" if want is list else "an object", v)
            _depth(v, 0)

        return check_free
    return lambda v: _depth(v, 0)  # Any


def _union_checker(tp) -> Check:
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    optional = len(args) < len(typing.get_args(tp))
    inner = [_checker(a) for a in args]
    if len(inner) == 1:
        only = inner[0]
        return lambda v: None if (v is None and optional) else only(v)

    def check_union(v):
        if v is None and optional:
            return
        for c in inner:
            try:
                return c(v)
            except _Invalid:
                pass
        _expect(" or ".join(_type_name(a) for a in args) + (" or null" if optional else ""), v)

    return check_union


def _type_name(tp: Any) -> str:
    return {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}.get(
        tp, "an array" if typing.get_origin(tp) is list or tp is list else "an object"
    )


def _depth(v: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Invalid(f"nested more than {MAX_DEPTH} levels deep")
    t = type(v)
    if t is dict:
        for x in v.values():
            if type(x) in (dict, list):
                _depth(x, depth + 1)
    elif t is list:
        for x in v:
            if type(x) in (dict, list):
                _depth(x, depth + 1)


def _numbers_inside(keys, texts=()) -> Check:
    keys = frozenset(keys)
    texts = frozenset(texts)

    def check(v):
        if v is None:
            return
        if type(v) is not dict:
            _expect("an object or null", v)
        _depth(v, 0)
        for k in keys.intersection(v):
            x = v[k]
            if x is not None and type(x) not in (int, float):
                try:
                    _expect("a number or null", x)
                except _Invalid as e:
                    e.parts.append(k)
                    raise
        for k in texts.intersection(v):
            x = v[k]
            if x is not None and type(x) is not str:
                try:
                    _expect("a string or null", x)
                except _Invalid as e:
                    e.parts.append(k)
                    raise

    return check


#: Free-form fields whose known keys have types (the front end does arithmetic with them).
#: ``Kernel.profile`` is checked by its keys (not as a ``KernelProfile``) so that the 0.2 dict loads too.
_FIELD_RULES: dict = {("Kernel", "profile"): _numbers_inside(PROFILE_NUMBERS, PROFILE_TEXTS)}


def _dataclass_checker(tp) -> Check:
    """The check of the dataclass ``tp``, written out field by field (the way ``dataclasses`` writes
    ``__init__``): a field of a plain type (``str``, ``Optional[int]``...) is checked inline, the others by
    their checker; a wrong value goes through its field's checker, which words the error."""
    from .plain import hints as _hints

    hints = _hints(tp)
    env: dict = {"_Invalid": _Invalid, "_expect": _expect, "_fail": _fail}
    lines = ["def check(v):", "    if type(v) is not dict:", f"        _expect({f'an object ({tp.__name__})'!r}, v)"]
    for i, f in enumerate(dataclasses.fields(tp)):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        hint = hints[f.name]
        rule = _FIELD_RULES.get((tp.__name__, f.name))
        env[f"c{i}"] = rule or _lazy(env, f"c{i}", hint)
        lines += [f"    if {f.name!r} in v:", f"        x = v[{f.name!r}]"]
        plain = None if rule else _plain_types(hint)
        if plain is not None and f.name in TEXT_FIELDS.get(tp.__name__, ()):
            plain = plain | {LinesText}  # a long text read lazily (``_text``)
        if plain is not None:
            env[f"t{i}"] = plain
            lines += [f"        if type(x) not in t{i}:", f"            _fail(c{i}, x, {f.name!r})"]
        else:
            lines += [
                "        try:",
                f"            c{i}(x)",
                "        except _Invalid as e:",
                f"            e.parts.append({f.name!r})",
                "            raise",
            ]
        if required:
            lines += ["    else:", f"        raise _Invalid({f'missing field {f.name!r} of {tp.__name__}'!r})"]
    exec("\n".join(lines), env)  # noqa: S102 - the text is made above from the model's field names only
    return env["check"]


_PLAIN = {str: (str,), bool: (bool,), int: (int,), float: (float, int)}


def _plain_types(tp: Any):
    """The exact types a value of ``tp`` may have when ``tp`` is a plain type or an optional one, else ``None``."""
    if tp in _PLAIN:
        return frozenset(_PLAIN[tp])
    if typing.get_origin(tp) in (Union, getattr(types, "UnionType", Union)):
        args = typing.get_args(tp)
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2 and inner[0] in _PLAIN:
            return frozenset(_PLAIN[inner[0]] + (type(None),))
    return None


def _lazy(env: dict, key: str, tp: Any) -> Check:
    """A check that makes ``_checker(tp)`` at its first use (the model's types refer to each other) and puts
    it in ``env[key]`` in its own place."""

    def first(v):
        env[key] = check = _checker(tp)
        return check(v)

    return first


def _fail(check: Check, v: Any, name) -> None:
    try:
        check(v)
    except _Invalid as e:
        e.parts.append(name)
        raise


class PartsCheck:
    """The check of :func:`validate`, for a report given as its top-level fields and then its compiles
    one at a time (``report_io`` reading the line layout): the same errors, with the same paths, in the
    same order (the fields before ``compiles`` first, then each compile, then the fields after).

    >>> parts = PartsCheck(head, name)   # raises at once for a wrong field before ``compiles``
    >>> for i, c in enumerate(compiles): parts.compile(i, c)
    >>> parts.finish()                   # raises for a wrong field after ``compiles``
    """

    def __init__(self, head: dict, name: str, shared: frozenset = frozenset()) -> None:
        from .model import Compile

        self.name = name
        self._shared = shared
        self._ok: set = set()
        self._compile = _checker(Compile)
        self._later: _Invalid | None = None
        order = [f.name for f in dataclasses.fields(Report)]
        try:
            with _gc_paused(), _shared_lists(shared, self._ok):
                _checker(Report)(head if "compiles" in head else dict(head, compiles=[]))
        except _Invalid as e:
            outer = e.parts[-1] if e.parts else None
            if outer is None or outer not in order or order.index(outer) < order.index("compiles"):
                self._raise(e)
            self._later = e

    def compile(self, i: int, value) -> None:
        try:
            with _shared_lists(self._shared, self._ok):
                self._compile(value)
        except _Invalid as e:
            e.parts += [i, "compiles"]
            self._raise(e)

    def finish(self) -> None:
        if self._later is not None:
            self._raise(self._later)

    def _raise(self, e: _Invalid):
        raise ReportError(f"{self.name}: {e.where() or 'the report'}: {e.problem}") from None
