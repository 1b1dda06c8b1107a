"""A report's written form in one pass over its dataclasses: what ``intern.compact(io.to_plain(report))`` makes,
without making the expanded plain tree first.

The two-step path walks a report twice and holds two whole copies of it as dicts and lists (a compile's graphs,
fused nodes and kernels, each frame of every stack) before a byte is written. Here each value is made plain and
compact in the same visit, and each compile is serialized as soon as it is walked, so only the bytes of the
compiles written so far are held. The result is the same, byte for byte: tables are filled in the same order,
the same lists become stacks and the same texts interned lines. What needs a note in the report's diagnostics
(a NaN, a lone surrogate) or an error (nesting too deep) is not handled here: :class:`Unclean` is raised and
the caller takes the two-step path, which says it.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from typing import Any, Callable, Iterable, Iterator, Optional

from .check import MAX_DEPTH
from .intern import _FRAME_KEYSET, MIN_TEXT, TEXT_KEYS, _is_frame, _Tables


class Unclean(Exception):
    """The report holds a value that JSON cannot (or a nesting too deep): write it the two-step way."""


_UNKNOWN: Any = object()
_SCALARS = (str, int, float, bool, type(None))


class _Writer:
    def __init__(self) -> None:
        self.tables = _Tables()
        self._fields: dict[type, Optional[tuple[str, ...]]] = {}  # type -> its field names (None: no dataclass)
        self._frames: dict[int, int] = {}  # id() of a Frame object -> its interned index (objects are shared)
        self._getters: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple]]] = {}  # dataclass type -> values

    def fields(self, obj: Any) -> Optional[tuple[str, ...]]:
        """The field names of a dataclass object (``dataclasses.fields``, once per type), else None."""
        t = type(obj)
        names = self._fields.get(t, _UNKNOWN)
        if names is _UNKNOWN:
            names = tuple(f.name for f in dataclasses.fields(obj)) if dataclasses.is_dataclass(obj) else None
            if not isinstance(obj, type):  # a dataclass's class is a dataclass too, but its type is not one
                self._fields[t] = names
        return names

    # -- the plain value (io._Cleaner.plain, without the notes) -------------------------------------
    def plain(self, obj: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise Unclean
        t = type(obj)
        if t is str:
            if obj.isascii():
                return obj
            try:
                obj.encode("utf-8")
            except UnicodeEncodeError:
                raise Unclean from None
            return obj
        if t is float:
            if math.isfinite(obj):
                return obj
            raise Unclean
        if obj is None or t is int or t is bool:
            return obj
        depth += 1
        if t is list or t is tuple:
            return [self.plain(v, depth) for v in obj]
        names = self.fields(obj)
        if names is not None:
            return {n: self.plain(getattr(obj, n), depth) for n in names}
        if isinstance(obj, dict):
            return {
                self.plain(k if isinstance(k, str) else str(k), depth): self.plain(v, depth) for k, v in obj.items()
            }
        if isinstance(obj, (list, tuple)):
            return [self.plain(v, depth) for v in obj]
        depth -= 1
        if isinstance(obj, (int, float)):
            return self.plain(float(obj) if isinstance(obj, float) else int(obj), depth)
        return self.plain(str(obj), depth)

    # -- the written value (intern.compact of the plain value) ---------------------------------------
    def value(self, obj: Any, depth: int) -> Any:
        """The written form of ``obj`` at nesting ``depth`` (as ``io._Cleaner.plain`` counts it)."""
        t = type(obj)
        if t is str or t is float or obj is None or t is int or t is bool:
            return self.plain(obj, depth)
        if depth > MAX_DEPTH:
            raise Unclean
        depth += 1
        if t is list or t is tuple:
            return self.sequence(obj, depth)
        got = self._getters.get(t)
        if got is not None:  # a dataclass met before: its fields' values in one call
            return self.mapping(got[0], got[1](obj), depth)
        names = self.fields(obj)
        if names is not None:
            if not isinstance(obj, type) and names:
                get = operator.attrgetter(*names)
                self._getters[t] = (names, get if len(names) > 1 else lambda o, get=get: (get(o),))
            return self.mapping(names, [getattr(obj, n) for n in names], depth)
        if isinstance(obj, dict):
            if all(type(k) is str and k.isascii() for k in obj):  # keys that stay as they are
                return self.mapping(obj.keys(), obj.values(), depth)
            # keys made plain first: two keys that become one keep the last value, as there
            d = {self.plain(k if isinstance(k, str) else str(k), depth): v for k, v in obj.items()}
            return self.mapping(d.keys(), d.values(), depth)
        if isinstance(obj, (list, tuple)):
            return self.sequence(obj, depth)
        return self.plain(obj, depth - 1)  # a number subclass or any other object: a scalar once plain

    def mapping(self, keys: Iterable[str], values: Iterable[Any], depth: int) -> dict:
        """A dict of the written values at ``depth``; long texts under ``TEXT_KEYS`` become interned lines."""
        out = {}
        if depth > MAX_DEPTH and keys:  # each value would be refused, a plain one too
            raise Unclean
        text, string = self.tables.text, self.string
        for k, v in zip(keys, values):
            t = type(v)
            if t is str:
                v = string(k, v, depth)
            elif t is int or t is bool or v is None:  # the common values inline: no call
                pass
            else:
                v = self.value(v, depth)
                if k in TEXT_KEYS and isinstance(v, str) and len(v) >= MIN_TEXT:
                    v = text(v)
            out[k] = v
        return out

    def string(self, key: str, v: str, depth: int) -> Any:
        """The written value of text ``v`` under ``key``: made plain where it is not ASCII, an interned line
        reference where it is a long text under ``TEXT_KEYS``."""
        if not v.isascii():
            v = self.plain(v, depth)
        if len(v) >= MIN_TEXT and key in TEXT_KEYS:
            return self.tables.text(v)
        return v

    def sequence(self, items: Any, depth: int) -> Any:
        """A list of the written values at ``depth``; ``{"@s": i}`` when every element is a frame once plain
        (only dataclasses with a frame's fields and dicts of at least as many keys can be)."""
        if not items:
            return []
        if depth > MAX_DEPTH:
            raise Unclean
        if self.frame_like(items):  # every element may be a frame: decide on the plain values, as compact does
            ids, plains = self.frame_ids(items, depth)
            if ids is not None:
                tables = self.tables
                return {"@s": tables._index(tables.stacks, tables._stack_ix, tuple(ids), ids)}
            return [self.tables.walk(p) for p in plains]
        out = []
        for x in items:
            t = type(x)
            if t is str:
                out.append(x if x.isascii() else self.plain(x, depth))
            elif t is int or t is bool or x is None:
                out.append(x)
            else:
                out.append(self.value(x, depth))
        return out

    def frame_like(self, items: Any) -> bool:
        """Whether every element of ``items`` may be a frame once plain (only dataclasses with a frame's fields
        and dicts of at least as many keys can be): :meth:`sequence` then decides on their plain values."""
        fields = self._fields
        for x in items:
            t = type(x)
            if t is str or t is int:
                return False
            names = fields.get(t, _UNKNOWN)
            if names is _UNKNOWN:
                names = self.fields(x)
            if names is not None:
                if len(names) == len(_FRAME_KEYSET) and _FRAME_KEYSET.issuperset(names):
                    continue
                return False
            if not (isinstance(x, dict) and len(x) >= len(_FRAME_KEYSET)):
                return False
        return True

    # -- the written value as JSON in pieces (what Spooled.add writes) --------------------------------
    def parts(self, obj: Any, depth: int, levels: int, dump: Callable[[Any], bytes]) -> Iterator[bytes]:
        """``dump(self.value(obj, depth))`` in pieces, for a ``dump`` that writes compact JSON (orjson's): the
        dataclasses, dicts and lists of the first ``levels`` levels are written a field or an element at a time,
        so that neither the written value of a whole compile nor its JSON is held, only one element's (a kernel, a
        graph node). The same visits in the same order as :meth:`value`: the same tables, the same bytes."""
        if levels > 0 and depth <= MAX_DEPTH:
            t = type(obj)
            if t is list or t is tuple:
                # a list of containers that are not frames: element by element (a list of scalars: whole)
                if obj and type(obj[0]) not in _SCALARS and not self.frame_like(obj):
                    yield from self._sequence_parts(obj, depth + 1, levels - 1, dump)
                    return
            elif t is dict:
                if all(type(k) is str and k.isascii() for k in obj):  # keys that stay as they are (value())
                    yield from self._mapping_parts(obj.keys(), obj.values(), depth + 1, levels - 1, dump)
                    return
            elif t not in _SCALARS:
                got = self._getters.get(t)
                if got is not None:
                    yield from self._mapping_parts(got[0], got[1](obj), depth + 1, levels - 1, dump)
                    return
                names = self.fields(obj)
                if names and not isinstance(obj, type):
                    get = operator.attrgetter(*names)
                    self._getters[t] = (names, get if len(names) > 1 else lambda o, get=get: (get(o),))
                    yield from self._mapping_parts(names, [getattr(obj, n) for n in names], depth + 1, levels - 1, dump)
                    return
        yield dump(self.value(obj, depth))

    def _mapping_parts(
        self, keys: Any, values: Iterable[Any], depth: int, levels: int, dump: Callable[[Any], bytes]
    ) -> Iterator[bytes]:
        """:meth:`mapping` as JSON in pieces (see :meth:`parts`)."""
        if depth > MAX_DEPTH and keys:
            raise Unclean
        text, string = self.tables.text, self.string
        sep = b"{"
        for k, v in zip(keys, values):
            t = type(v)
            key = sep + dump(k) + b":"
            sep = b","
            if t is str:
                v = string(k, v, depth)
            elif t is int or t is bool or v is None:
                pass
            elif levels > 0 and (t is list or t is tuple or t is dict or self.fields(v) is not None):
                yield key  # a container: in pieces (never a text to intern: its written value is no str)
                yield from self.parts(v, depth, levels, dump)
                continue
            else:
                v = self.value(v, depth)
                if k in TEXT_KEYS and isinstance(v, str) and len(v) >= MIN_TEXT:
                    v = text(v)
            yield key + dump(v)
        yield b"}" if sep == b"," else b"{}"

    def _sequence_parts(self, items: Any, depth: int, levels: int, dump: Callable[[Any], bytes]) -> Iterator[bytes]:
        """:meth:`sequence` of a list that is no list of frames, as JSON in pieces (see :meth:`parts`)."""
        if depth > MAX_DEPTH:
            raise Unclean
        sep = b"["
        for x in items:
            yield sep
            sep = b","
            yield from self.parts(x, depth, levels, dump)
        yield b"]"

    def frame_ids(self, items: Any, depth: int) -> tuple[Optional[list[int]], list]:
        """``(interned indices, None)`` of ``items`` when each is a frame once plain, else ``(None, the plain
        values)`` (nothing interned). Frames met before are known by their object."""
        known = self._frames
        ids = [known.get(id(x), -1) for x in items]
        if -1 not in ids:
            return ids, []
        plains = [self.plain(x, depth) for x in items]
        if not all(_is_frame(p) for p in plains):
            return None, plains
        for i, (x, p) in enumerate(zip(items, plains)):
            if ids[i] < 0:
                ids[i] = self.tables.frame(p)
                if dataclasses.is_dataclass(x):  # frozen, shared and alive while the report is: safe to key by id
                    known[id(x)] = ids[i]
        return ids, []


#: Bytes read back from a spool at a time (each block is held while a writer gzips or writes it, and the writer's
#: pieces made of the one before: 64 KB keeps that small beside a small log's import).
CHUNK = 64 << 10
#: How many levels of a compile :meth:`Spooled.add` writes a field or an element at a time (the compile's fields;
#: its lists and the graphs' dict; each kernel, graph and fused node; their lists): deeper, each value whole.
LEVELS = 4


class Spooled:
    """A report's written form made compile by compile: each compile's line appended to ``spool`` (a binary
    file, or ``io.BytesIO``) as it is walked, then the first line (every top-level field but ``compiles``, and
    ``interned``, the tables), so that a writer holds the tables and one compile, never all of them. :meth:`add`
    each compile in order, then :meth:`finish` with the report (its other fields); :meth:`parts` then gives the
    file's bytes in pieces, as often as needed.

    Interning walks the compiles first, then the fields after them, as ``intern.compact`` walks a report, so the
    bytes are the two-step path's. :class:`Unclean` is raised as there: the caller writes the report the
    two-step way.

    >>> s = Spooled(orjson.dumps, io.BytesIO())
    >>> for c in report.compiles: s.add(c)
    >>> s.finish(report); data = b"".join(s.parts())      # == io.dumps(report)
    """

    def __init__(self, dump: Callable[[Any], bytes], spool: Any) -> None:
        self._w = _Writer()
        self._dump = dump
        self._spool = spool
        # a compile is written in pieces where the pieces joined are what ``dump`` writes of it whole: compact JSON
        self._levels = LEVELS if dump(["a", {"b": 1.5, "c": None}]) == b'["a",{"b":1.5,"c":null}]' else 0
        self._head: Optional[tuple] = None  # the first line's pieces
        self.compiles = 0  # compiles added
        self.kernels = 0  # their kernels

    def add(self, compile: Any, transient: bool = False) -> None:
        """Walk and serialize the next compile, written to the spool in pieces (``_Writer.parts``). ``transient``:
        ``compile`` is dropped after this (a pending compile of a loaded report, built for the writer only): frames
        are not remembered by object. After :class:`Unclean` (or any error) the spool holds part of a compile: the
        caller drops it (``io.written`` writes the report the two-step way, a streamed import imports whole)."""
        write = self._spool.write
        if self.compiles:
            write(b",\n")
        for piece in self._w.parts(compile, 2, self._levels, self._dump):  # depth as io._Cleaner.plain reaches it
            write(piece)
        if transient:
            self._w._frames.clear()  # its frames die with it: their id()s may be reused
        self.compiles += 1
        self.kernels += len(compile.kernels)

    def finish(self, report: Any) -> None:
        """Walk every field of ``report`` (a dataclass) but its compiles, which were added; the first line."""
        w = self._w
        names = w.fields(report)
        if names is None:
            raise TypeError(f"a report dataclass, not {type(report).__name__}")
        head: dict = {}
        before = True
        for name in names:
            if name == "interned":
                continue
            v = getattr(report, name)
            if name == "compiles":
                before = False
                head[name] = None  # its place among the fields (for a report without compiles)
            elif before and not isinstance(v, _SCALARS):  # walked before the compiles there: other tables
                raise Unclean
            else:
                head[name] = w.value(v, 1)
        t = w.tables
        head["interned"] = t.tables()
        if not self.compiles:
            head["compiles"] = []
            self._head = (self._dump(head),)
            return
        del head["compiles"]
        first = self._dump(head)  # b"{...}": as stream.layout_parts writes it; not copied to cut its "}"
        self._head = (memoryview(first)[:-1], (b"," if len(first) > 2 else b"") + b'"compiles":[\n')

    def parts(self) -> Iterator[bytes]:
        """The written report's bytes, in pieces (joined: ``io.dumps`` of the report)."""
        if self._head is None:
            raise RuntimeError("Spooled.finish() first")
        yield from self._head
        if not self.compiles:
            return
        spool = self._spool
        spool.seek(0)
        while True:
            block = spool.read(CHUNK)
            if not block:
                break
            yield block
        spool.seek(0, 2)
        yield b"\n]}\n"

    def close(self) -> None:
        self._spool.close()
