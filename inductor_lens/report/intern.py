"""The compact written form of a report: what repeats is stored once.

A report repeats the same stacks many times (every FX node of a line carries that line's stack, every
kernel Inductor's whole call path) and recompiles repeat most guard lines. In the written form:

- ``interned.files``: each distinct file name once;
- ``interned.frames``: each distinct frame once, as ``[file index, line, function, code, stage]``, then
  ``qualname`` and ``note`` where either is not empty (``[..., stage, qualname]``, ``[..., stage, qualname, note]``)
  (``is_user`` is ``stage == "user"``, so it is not stored, and ``function_label`` is ``qualname`` or ``function``);
- ``interned.function_labels``: ``{function: function_label}`` where a label is not that (dynamo's resume
  functions, ``rules.function_label``), written only where one is;
- ``interned.file_labels``: ``{file: file_label}`` where those differ (``rules.file_label``: every path but a
  notebook cell's), written wherever a frame is (even empty: a report without it was written before file labels);
- ``interned.stacks``: each distinct non-empty stack once, as a list of frame indices;
- ``interned.lines``: each distinct line of the long texts once: guards, output code, kernel sources
  (a kernel's source is also in its compile's output code, and recompiles repeat most guards), graph code;

and in the report itself a stack is ``{"@s": stack index}`` and each of those texts
(``guards``, ``output_code``, ``source``, ``code`` of a graph; at least ``MIN_TEXT`` characters) is
``{"@g": [line index, ...]}`` (the lines joined with ``"\\n"``). Nothing else changes place, so every
other field is where the expanded form has it. :func:`expand` restores the expanded form exactly;
``js/src/intern.js`` does the same in the browser.
"""

from __future__ import annotations

from typing import Any

from .rules import file_label, function_label
from .text import LinesText

FRAME_KEYS = (
    "file",
    "line",
    "function",
    "code",
    "stage",
    "is_user",
    "function_label",
    "qualname",
    "note",
    "file_label",
)
#: Keys whose long text values are stored as interned lines (frames' ``code`` is inside interned stacks).
TEXT_KEYS = frozenset({"guards", "output_code", "source", "code", "reproducer"})
MIN_TEXT = 80
_FRAME_KEYSET = frozenset(FRAME_KEYS)


def _is_frame(x: Any) -> bool:
    return (
        isinstance(x, dict)
        and x.keys() == _FRAME_KEYSET
        and isinstance(x["file"], str)
        and x["is_user"] is (x["stage"] == "user")
        and isinstance(x["qualname"], str)
        and (not x["qualname"] or x["qualname"] != x["function"])
        and x["function_label"] == function_label(x["function"], x["qualname"])
        and x["file_label"] == file_label(x["file"])
    )


class _Tables:
    def __init__(self) -> None:
        self.files: list[str] = []
        self.frames: list[list] = []
        self.stacks: list[list[int]] = []
        self.lines: list[str] = []
        self.labels: dict[str, str] = {}  # function -> its function_label, where not its qualname or name
        self.file_labels: dict[str, str] = {}  # file -> its file_label, where they differ
        self._file_ix: dict[str, int] = {}
        self._frame_ix: dict[tuple, int] = {}
        self._stack_ix: dict[tuple, int] = {}
        self._line_ix: dict[str, int] = {}

    @staticmethod
    def _index(table: list, ix: dict, key: Any, value: Any) -> int:
        i = ix.get(key)
        if i is None:
            i = ix[key] = len(table)
            table.append(value)
        return i

    def frame(self, fr: dict) -> int:
        file = fr["file"]
        f = self._index(self.files, self._file_ix, file, file)
        if fr["file_label"] != file:
            self.file_labels[file] = fr["file_label"]
        fn, label, qualname, note = fr["function"], fr["function_label"], fr["qualname"], fr["note"]
        if label != (qualname or fn):
            self.labels[fn] = label
        row = [f, fr["line"], fn, fr["code"], fr["stage"]]
        if note:
            row += [qualname, note]
        elif qualname:
            row.append(qualname)
        return self._index(self.frames, self._frame_ix, tuple(row), row)

    def tables(self) -> dict:
        """The ``interned`` dict of what was written: ``function_labels`` only where a frame's label is not its
        function's name."""
        out = {"files": self.files, "frames": self.frames, "stacks": self.stacks, "lines": self.lines}
        if self.files:  # even empty: a report without it was written before file labels (views fall back to names)
            out["file_labels"] = self.file_labels
        return dict(out, function_labels=self.labels) if self.labels else out

    def stack(self, frames: list) -> dict:
        ids = [self.frame(fr) for fr in frames]
        return {"@s": self._index(self.stacks, self._stack_ix, tuple(ids), ids)}

    def text(self, text: str) -> dict:
        lines = text.split("\n")
        ix = self._line_ix
        out = [ix.get(ln) for ln in lines]  # most lines are known (a kernel's source is in its output code too)
        if None in out:  # the new ones, numbered in order of first appearance (as _index would)
            table = self.lines
            for i, v in enumerate(out):
                if v is None:
                    ln = lines[i]
                    v = ix.get(ln)
                    if v is None:
                        v = ix[ln] = len(table)
                        table.append(ln)
                    out[i] = v
        return {"@g": out}

    def walk(self, v: Any) -> Any:
        """The written form of the plain value ``v``, its stacks and texts added to the tables."""
        if isinstance(v, list):
            if v and all(_is_frame(x) for x in v):
                return self.stack(v)
            return [self.walk(x) for x in v]
        if isinstance(v, dict):
            return {
                k: self.text(x) if k in TEXT_KEYS and isinstance(x, str) and len(x) >= MIN_TEXT else self.walk(x)
                for k, x in v.items()
            }
        return v


def compact(plain: dict) -> dict:
    """The written form of an expanded report dict (a new dict; ``plain`` is not changed)."""
    tables = _Tables()
    walk = tables.walk
    out = {k: walk(v) for k, v in plain.items() if k != "interned"}
    out["interned"] = tables.tables()
    return out


def expand(data: dict) -> dict:
    """The expanded form of a written report dict; a dict without ``interned`` is returned as it is."""
    tables = data.get("interned")
    if tables is None:
        return data
    return Expander(tables).value({k: v for k, v in data.items() if k != "interned"})


class Expander:
    """Expands parts of a written report with its ``interned`` tables, e.g. one compile at a time.

    Each interned frame becomes one dict and each interned stack one list, handed out to every place that
    refers to it (``{"@s": 3}`` twice gives the same list twice): the reader checks and builds each of them
    once (:attr:`shared` names them), and must not change them. A text is a new string, joined from its lines.
    Damaged tables or references raise ``KeyError``, ``IndexError``, ``TypeError`` or ``ValueError``.
    """

    def __init__(self, tables: dict) -> None:
        files, self.lines = tables["files"], tables["lines"]  # nothing else of ``tables`` is kept
        if type(self.lines) is not list or not all(type(x) is str for x in self.lines):
            raise TypeError("interned lines: expected an array of strings")  # texts are joined from it later
        labels = tables.get("function_labels") or {}
        # a report written before file labels: the rule's
        file_labels = tables["file_labels"] if "file_labels" in tables else {p: file_label(p) for p in files}
        frames = [
            {
                "file": files[f],
                "line": ln,
                "function": fn,
                "code": code,
                "stage": stage,
                "is_user": stage == "user",
                "function_label": labels.get(fn) or (more[0] if more else "") or fn,
                "qualname": more[0] if more else "",
                "note": more[1] if len(more) > 1 else "",
                "file_label": file_labels.get(files[f], files[f]),
            }
            for f, ln, fn, code, stage, *more in tables["frames"]
        ]
        self.stacks = [[frames[i] for i in ids] for ids in tables["stacks"]]
        #: ``id()`` of every interned stack list (alive as long as this expander, so the ids are unique).
        self.shared = frozenset(map(id, self.stacks))

    def value(self, v: Any) -> Any:
        """``v`` with every ``{"@s": i}`` and ``{"@g": [...]}`` inside it expanded (a new value, but for the
        shared stacks)."""
        if isinstance(v, list):
            return [self.value(x) if isinstance(x, _CONTAINERS) else x for x in v]
        if isinstance(v, dict):
            if len(v) == 1:
                if "@s" in v:
                    return self.stacks[v["@s"]]
                if "@g" in v:  # the same checks of the line numbers as a text read lazily
                    return str(LinesText(self.lines, v["@g"]))
            return {k: self.value(x) if isinstance(x, _CONTAINERS) else x for k, x in v.items()}
        return v

    def fill(self, v: Any) -> Any:
        """:meth:`value`, made in place: every reference inside ``v`` (plain dicts and lists that no one
        else holds, e.g. fresh from the parser) is replaced by what it names; returns ``v`` (or what ``v``
        itself names). Nothing is copied but the texts, which are joined."""
        t = type(v)
        if t is dict:
            if len(v) == 1 and ("@s" in v or "@g" in v):
                return self.value(v)
            for k, x in v.items():
                if type(x) is dict or type(x) is list:
                    y = self.fill(x)
                    if y is not x:
                        v[k] = y  # the same keys: the dict may be changed while its items are walked
            return v
        if t is list:
            for i, x in enumerate(v):
                if type(x) is dict or type(x) is list:
                    y = self.fill(x)
                    if y is not x:
                        v[i] = y
            return v
        if isinstance(v, _CONTAINERS):  # a subclass: a new value, as value() makes
            return self.value(v)
        return v


_CONTAINERS = (list, dict)
