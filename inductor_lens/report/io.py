"""Reading and writing reports: never a lost file, never an unreadable one, never a traceback.

>>> report_io.save_json(report, "r.json.gz")     # gzip'd because the name ends in .gz
>>> report_io.load("r.json.gz")                   # ReportError: one line naming the file and the problem

Writing
    Everything is serialized in memory first, then written to a temporary file in the target's
    folder and moved over the target with ``os.replace``: a failure at any point leaves the old
    file as it was, byte for byte (:func:`atomic_write`, used by the JSON and HTML writers).
    :func:`dumps` makes every value writable: a lone surrogate (from ``sys.argv``, a non-UTF-8
    path, ``"\\ud800"`` in a loaded JSON) becomes the visible text ``\\ud800``; NaN and infinities
    become ``null``. Both are said in the written report's ``diagnostics``, never dropped silently.

Loading
    :func:`load` accepts a path (``.json`` or gzip'd, whatever its name), JSON text, bytes or a
    parsed dict. Every problem is a :class:`~inductor_lens.model.ReportError` (a ``ValueError``)
    whose message is one line naming the file. Before a report is built, :func:`validate` checks
    the type of every field against the model's dataclasses (and the numbers inside
    ``Kernel.profile``), so nothing of the wrong type reaches a view.
"""

from __future__ import annotations

import dataclasses
import errno
import gzip
import json
import math
import os
import zlib
from typing import Any, Iterable, Iterator, Optional, Union

from . import hooks
from . import stream as _report_stream
from . import text as _text
from .check import MAX_DEPTH, PROFILE_NUMBERS, PartsCheck, _gc_paused, _json_type, validate
from .model import DERIVED_VERSION, SCHEMA_VERSION, Compile, Report, ReportError
from .stream import NotInLayout

try:  # 5-10x faster parsing and writing of large reports; the stdlib is the fallback
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    orjson = None

__all__ = [
    "load",
    "load_data",
    "read_parts",
    "save_json",
    "dumps",
    "encode",
    "atomic_write",
    "validate",
    "escape_surrogates",
    "check_writable",
    "same_file",
    "MAX_DEPTH",
    "PROFILE_NUMBERS",
]


PathLike = Union[str, os.PathLike]


# -- writing ------------------------------------------------------------------------------------


def atomic_write(path: PathLike, data: Union[bytes, str, Iterable[bytes]]) -> str:
    """Write ``data`` (bytes, text written as UTF-8, or an iterable of bytes written piece by piece as it
    yields them) to ``path`` through a temporary file in the same folder and ``os.replace``: the one writer of
    every file the lens writes (reports, pages, a job's ``rank{N}.json`` and ``job.json``).

    The old file (if any) is untouched until the new one is complete on disk; on any error the
    temporary file is removed and the error raised. A new file gets the usual permissions
    (``0o666`` less the umask); a replaced one keeps its own. A ``path`` that is a directory raises
    ``IsADirectoryError`` naming ``path`` (never the temporary file). Returns ``os.fspath(path)``.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "it is a directory, not a file (give a file name)", path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = os.path.dirname(os.path.abspath(path))
    mode = _mode_for(path)
    fd, tmp = _temp_file(folder, "." + os.path.basename(path)[:60] + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, (bytes, bytearray, memoryview)):
                f.write(data)
            else:
                for part in data:
                    f.write(part)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _temp_file(folder: str, prefix: str) -> tuple[int, str]:
    """A new file ``folder/prefix<random>.tmp`` opened for writing, readable by its owner only: what
    ``tempfile.mkstemp`` makes (without importing tempfile, shutil, random and the compressors they pull in)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            if os.path.isdir(folder):
                raise
            # the user's folder is missing: say so, never with the name of a temporary file they never asked for
            raise FileNotFoundError(errno.ENOENT, "the folder to write in does not exist (create it first)", folder)
    raise FileExistsError(errno.EEXIST, "no free temporary file name", os.path.join(folder, prefix))


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def check_writable(path: PathLike) -> Optional[str]:
    """Why ``path`` cannot be written (one short phrase), or ``None`` if it can.

    Checked the way :func:`atomic_write` writes: a temporary file is created in the folder and removed.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        return "it is a directory"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"the folder {folder} does not exist"
    try:
        fd, tmp = _temp_file(folder, ".inductor-lens-check.")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        return f"the folder {folder} is not writable ({e.strerror or e})"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "the file is read-only"
    return None


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name the same file (existing or not)."""
    a, b = os.fspath(a), os.fspath(b)
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def escape_surrogates(s: str) -> str:
    """``s`` with every lone surrogate written as the visible text ``\\udXXX`` (a no-op for valid text)."""
    if s.isascii():
        return s
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)


class _Cleaner:
    """One pass over a report (dataclasses or plain data) to plain JSON values, fixing what JSON cannot hold."""

    def __init__(self):
        self.non_finite: list[str] = []
        self.surrogates = 0
        self._fields: dict = {}

    def plain(self, obj: Any, path: Any, depth: int = 0) -> Any:
        """``obj`` as plain JSON values. ``path`` says where ``obj`` is, for messages: a string, or a chain of
        ``(parent path, field name or index)`` pairs that is only made into text when a message needs it."""
        if depth > MAX_DEPTH:
            raise ReportError(f"{_path_text(path)}: nested more than {MAX_DEPTH} levels deep")
        t = type(obj)
        if t is str:
            if obj.isascii():
                return obj
            fixed = escape_surrogates(obj)
            if fixed is not obj:
                self.surrogates += 1
            return fixed
        if t is float:
            if math.isfinite(obj):
                return obj
            self.non_finite.append(f"{_path_text(path)} = {obj}")
            return None
        if obj is None or t is int or t is bool:
            return obj
        depth += 1
        if t is list or t is tuple:
            return [self.plain(v, (path, i), depth) for i, v in enumerate(obj)]
        if dataclasses.is_dataclass(obj):
            names = self._fields.get(t)
            if names is None:
                names = self._fields[t] = tuple(f.name for f in dataclasses.fields(obj))
            return {n: self.plain(getattr(obj, n), (path, n), depth) for n in names}
        if isinstance(obj, dict):
            return {
                self.plain(k if isinstance(k, str) else str(k), path, depth): self.plain(v, (path, k), depth)
                for k, v in obj.items()
            }
        if isinstance(obj, (list, tuple)):
            return [self.plain(v, (path, i), depth) for i, v in enumerate(obj)]
        depth -= 1
        if isinstance(obj, (int, float)):  # numpy / bool subclasses and the like
            return self.plain(float(obj) if isinstance(obj, float) else int(obj), path, depth)
        return self.plain(str(obj), path, depth)

    def notes(self) -> list[tuple[str, str, str]]:
        """``(code, message, detail)`` of what was changed."""
        out = []
        if self.non_finite:
            out.append(
                (
                    "non_finite_number",
                    f"{len(self.non_finite)} number(s) were NaN or infinite and are "
                    f"written as null (JSON cannot hold them)",
                    "; ".join(self.non_finite[:50]),
                )
            )
        if self.surrogates:
            out.append(
                (
                    "unencodable_text",
                    f"{self.surrogates} text value(s) held lone surrogates (e.g. from a "
                    f"non-UTF-8 path or argument), written as visible \\udXXX escapes",
                    "",
                )
            )
        return out


def _path_text(path: Any) -> str:
    """``compiles[0].kernels[2].cost`` from the chain ``((((("", "compiles"), 0), "kernels"), 2), "cost")``."""
    parts = []
    while isinstance(path, tuple):
        path, key = path
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    text = (path or "") + "".join(reversed(parts))
    return text[1:] if text.startswith(".") else text


def add_note(data: dict, code: str, message: str, detail: str = "") -> None:
    """Append a diagnostic to plain report data, in the form its other diagnostics have."""
    diags = data.setdefault("diagnostics", [])
    if any(isinstance(d, dict) for d in diags) or int(data.get("schema_version") or 0) >= 2:
        if not any(isinstance(d, dict) and d.get("code") == code and d.get("message") == message for d in diags):
            diags.append({"code": code, "message": message, "detail": detail})
    else:  # version-1 diagnostics are strings: the detail goes into the text, shortened
        text = f"{message}: {detail[:300]}" if detail else message
        if text not in diags:
            diags.append(text)


def to_plain(report: Report) -> dict:
    """The report as plain JSON data, with every value writable (see the module docstring)."""
    return _clean_plain(report)


def dumps(report: Union[Report, dict], *, trusted: bool = False) -> bytes:
    """The report as UTF-8 JSON bytes: always encodable, never NaN.

    ``trusted=True`` skips the cleaning pass for plain data that :func:`load_data` produced.
    """
    if isinstance(report, Report):
        return b"".join(dump_parts(report))
    return encode(report if trusted and isinstance(report, dict) else _clean_plain(report))


def dump_parts(report: Report) -> list[bytes]:
    """:func:`dumps` of a report as pieces (joined, the bytes): what a writer can compress or write one by
    one. Made in one pass over the dataclasses (:func:`written`), held in memory."""
    import io as _io

    w = written(report, _io.BytesIO())
    try:
        return list(w.parts())
    finally:
        w.close()


def written(report: Report, spool: Any, on_compile: Optional[Any] = None) -> Any:
    """The written form of ``report`` (:func:`dumps`' bytes), made compile by compile into ``spool`` (a binary
    file opened for reading and writing, or ``io.BytesIO``): ``.parts()`` yields the bytes, as often as needed;
    ``.compiles`` and ``.kernels`` count them; ``.close()`` closes the spool. A compile of a loaded report that
    is still pending (``report/lazy.py``) is built for the walk and dropped, not kept on the report, so that
    writing a large loaded report holds one compile at a time. ``on_compile(done, total)`` is called after each.

    One pass over the dataclasses (``report/written.py``); a report with a value JSON cannot hold takes the
    two-step path, which fixes it and says so in the diagnostics."""
    from . import intern as _intern
    from .lazy import whole
    from .written import Spooled, Unclean

    out = Spooled(_dump, spool)
    compiles = report.compiles
    try:
        try:
            if type(compiles) is not list:
                raise Unclean
            for i, c in enumerate(compiles):
                full = whole(c)
                out.add(full, transient=full is not c)
                del full
                if on_compile is not None:
                    on_compile(i + 1, len(compiles))
            out.finish(report)
            return out
        except Unclean:
            spool.seek(0)
            spool.truncate()
            whole_bytes = encode(_intern.compact(to_plain(report)))
            return _Whole(whole_bytes, spool, len(compiles), sum(len(c.kernels) for c in compiles))
    except BaseException:  # Ctrl-C included: the spool goes, nothing is left behind
        spool.close()
        raise


class _Whole:
    """:func:`written`'s answer for a report written the two-step way: the bytes, made at once."""

    def __init__(self, data: bytes, spool: Any, compiles: int, kernels: int) -> None:
        self._data, self._spool, self.compiles, self.kernels = data, spool, compiles, kernels

    def parts(self) -> Iterator[bytes]:
        yield self._data

    def close(self) -> None:
        self._spool.close()


def spool_file(near: PathLike) -> Any:
    """A temporary binary file beside ``near`` (in its folder, as :func:`atomic_write` writes), opened for reading
    and writing and removed when closed: where :func:`written` puts the compiles of a large report."""
    folder = os.path.dirname(os.path.abspath(os.fspath(near)))
    fd, tmp = _temp_file(folder, ".inductor-lens-spool.")
    f = open(fd, "w+b")  # noqa: SIM115  (closed by the caller; removed at once where that is allowed)
    if os.name == "posix":  # gone from the folder now; the space is freed when it is closed (or the process ends)
        os.unlink(tmp)
        return f
    return _Removed(f, tmp)


class _Removed:
    """A file removed from its folder when closed (where an open file cannot be unlinked)."""

    def __init__(self, f: Any, path: str) -> None:
        self._f, self._path = f, path

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def close(self) -> None:
        self._f.close()
        try:
            os.unlink(self._path)
        except OSError:
            pass


def encode(data: dict) -> bytes:
    """Plain, writable report data as JSON bytes, one compile per line (the layout that :func:`load` and
    ``inductor-lens show`` read one compile at a time; see :mod:`inductor_lens._report_stream`)."""
    return _report_stream.encode(data, _dump)


def _dump(value: Any) -> bytes:
    if orjson is not None:
        return orjson.dumps(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


def _clean_plain(data: Union[Report, dict]) -> dict:
    cleaner = _Cleaner()
    out = cleaner.plain(data, "")
    for code, message, detail in cleaner.notes():
        add_note(out, code, message, detail)
    return out


def gzip_json(data: dict) -> bytes:
    """Plain report data that :func:`load_data` produced, as gzip'd JSON (the form the page embeds)."""
    return gzip.compress(dumps(data, trusted=True), compresslevel=6, mtime=0)


def save_json(report: Union[Report, dict], path: PathLike) -> str:
    """Write the report as JSON (gzip'd when ``path`` ends in ``.gz``), atomically; returns the path. A
    :class:`Report` is written compile by compile (:func:`written`, spooled beside ``path``)."""
    if not isinstance(report, Report):
        data = dumps(report)
        if os.fspath(path).lower().endswith(".gz"):
            data = gzip.compress(data, compresslevel=6, mtime=0)
        return atomic_write(path, data)
    w = written(report, spool_file(path))
    try:
        return save_written(w, path)
    finally:
        w.close()


def save_written(w: Any, path: PathLike) -> str:
    """Write :func:`written`'s ``w`` to ``path`` as :func:`save_json` does (gzip'd when it ends in ``.gz``)."""
    parts = w.parts()
    if os.fspath(path).lower().endswith(".gz"):
        parts = gzip_parts(parts, 6)
    return atomic_write(path, parts)


def gzip_parts(parts: Iterable[bytes], level: int) -> Iterator[bytes]:
    """gzip of the concatenated ``parts`` (``gzip.compress(b"".join(parts), level, mtime=0)``), in pieces."""
    z = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: the gzip format, with mtime 0
    for part in parts:
        out = z.compress(part)
        if out:
            yield out
    yield z.flush()


# -- loading ------------------------------------------------------------------------------------


def load(source: Union[PathLike, bytes, dict], *, name: Optional[str] = None) -> Report:
    """A report from a path, JSON text, bytes or a parsed dict; :class:`ReportError` on any problem.

    ``name`` is how errors call the source (default: the path, or ``"report"``). A file in the line layout
    (what the lens writes) is parsed, checked and built one compile at a time; other files are parsed whole.
    """
    name = name or (
        os.fspath(source) if isinstance(source, (str, os.PathLike)) and not _is_json_text(source) else "report"
    )
    try:
        return read_parts(source, name, _build)
    except ReportError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as e:
        raise ReportError(f"{name}: not a readable report ({type(e).__name__}: {e})") from None


def from_dict(cls: type, data: dict) -> Report:
    """``Report.from_dict``: a report from plain data, the expanded or compact form, of this schema version
    or version 1 (converted by :func:`inductor_lens.report.finish.upgrade_v1`)."""
    from . import intern as _intern
    from .builder import build
    from .finish import derive_report, upgrade_v1

    if not isinstance(data, dict):
        raise ReportError(f"a report is a JSON object, not {type(data).__name__}")
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise ReportError("not an inductor_lens report: no integer 'schema_version'")
    if version > SCHEMA_VERSION:
        raise ReportError(
            f"report schema_version {version} is newer than this inductor_lens reads "
            f"({SCHEMA_VERSION}): upgrade inductor-lens"
        )
    try:
        data = _intern.expand(data)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ReportError(f"report: its interned tables are damaged ({type(e).__name__}: {e})") from None
    report = build(cls, data)
    if version < 2:
        return upgrade_v1(report, data)
    return derive_report(report) if _underived(data) else report


def _underived(head: dict) -> bool:
    """Whether a report was written before the derived fields it should carry (``DERIVED_VERSION``)."""
    d = head.get("derived")
    return not isinstance(d, int) or d < DERIVED_VERSION


def _build(parts: "Parts") -> Report:
    from .builder import Builder

    name = parts.name
    _check_version(parts.head, name)
    if parts.head["schema_version"] != SCHEMA_VERSION:  # an older schema: the model converts it, then check
        data = parts.whole()
        try:
            with _gc_paused():
                report = Report.from_dict(data)
        except ReportError as e:
            raise ReportError(f"{name}: {e}") from None
        validate(to_plain(report), name)
        return report
    from .finish import mark_built, rederive, skips_said

    builder, compiles = Builder(), []
    underived = _underived(parts.head)  # written before its derived fields: filled as each compile is built
    if parts.layout and not underived and isinstance(parts.head.get("interned"), dict):
        return _build_lazily(parts, builder)
    with _gc_paused():
        for c in parts.checked():
            builder.shared = parts.shared  # known once the tables are expanded
            compiles.append(builder.build(Compile, c))
        if underived:  # module paths inferred where missing, saved inputs named, then each is derived
            compiles = rederive(compiles, parts.head.get("origin", "capture"))
        report = builder.build(Report, dict(parts.head_expanded, compiles=[]))
    report = dataclasses.replace(report, compiles=compiles, derived=DERIVED_VERSION)
    return mark_built(skips_said(report)) if underived else report  # built lines read the report's source files


def _build_lazily(parts: "Parts", builder) -> Report:
    """:func:`_build` of a current report in the line layout: each compile checked as written
    (:mod:`.fastcheck`; the exact check where that is not sure), its heavy fields built when first read
    (:mod:`.lazy`)."""
    from .fastcheck import CompactCheck
    from .lazy import Loader

    compiles = []
    lines = parts.compiles  # stream._Compiles: .line is the JSON of the compile just yielded
    with _gc_paused():
        expander, exact = parts.expand_head()
        builder.shared = expander.shared
        fast, loader = CompactCheck(expander), Loader(expander, builder)
        for i, c in enumerate(lines):
            if fast.ok(c):
                compiles.append(loader.compile(lines.line, c))
                continue
            try:  # wrong, or unusual: the exact check words the error (or passes), then build it now
                _text.lazy_texts(c, expander.lines)
                c = expander.fill(c)
            except _DAMAGE as e:
                raise parts._damaged(e) from None
            exact.compile(i, c)
            compiles.append(builder.build(Compile, c))
        exact.finish()
        report = builder.build(Report, dict(parts.head_expanded, compiles=[]))
    return dataclasses.replace(report, compiles=compiles, derived=DERIVED_VERSION)


def load_data(source: Union[PathLike, bytes, dict], *, name: Optional[str] = None) -> tuple[dict, str]:
    """Plain report data, parsed, cleaned and type-checked, and the name errors use for its source.

    Reports of an older ``schema_version`` are returned as they are (``Report.from_dict`` converts them)
    after the checks that do not depend on the version.
    """
    if isinstance(source, dict):
        name = name or "report"
        data = _clean_plain(source)  # a copy: the caller's dict is not changed
    else:
        raw, name = _read(source, name)
        data, _ = parse(_gunzip(raw, name), name)
    check(data, name)
    return data, name


class Parts:
    """A report read as its top-level fields (``head``) and then its compiles, one at a time.

    ``compiles`` yields the compiles as written (compact); :meth:`checked` yields them expanded and
    type-checked, after checking the top-level fields (``head_expanded``), with the errors :func:`check`
    gives for the whole report (from then on ``head`` lacks ``interned``: :meth:`whole` is for before). ``layout``: whether the file was read line by line (else it was parsed
    whole); ``pristine``: whether the data is exactly the file's JSON (no NaN or lone surrogate fixed).
    """

    def __init__(self, head: dict, compiles, name: str, pristine: bool, layout: bool) -> None:
        self.head, self.compiles, self.name, self.pristine, self.layout = head, compiles, name, pristine, layout
        self.head_expanded = head
        self._expander = None
        #: ``id`` of the lists that many places share (the interned stacks), once :meth:`checked` has begun.
        self.shared: frozenset = frozenset()

    def check_version(self) -> None:
        """``ReportError`` unless ``schema_version`` is one this version reads."""
        _check_version(self.head, self.name)

    def whole(self) -> dict:
        """The whole report data (every compile read now)."""
        return dict(self.head, compiles=list(self.compiles))

    def checked(self, lazy_texts: bool = True, as_written: bool = False):
        """The compiles, expanded and checked (the current schema only). ``lazy_texts``: the long texts of a
        compile stay :class:`~inductor_lens._text.LinesText` (for building a Report), else they are joined
        (plain data that is written out again). ``as_written``: a compile that the check of the compact form
        (:mod:`.fastcheck`) finds right is yielded as written, not expanded (``show`` only counts them)."""
        from .fastcheck import CompactCheck

        expander, parts = self.expand_head()
        fast = CompactCheck(expander) if as_written and expander is not None else None
        for i, c in enumerate(self.compiles):
            if fast is not None and fast.ok(c):
                yield c
                continue
            if self._expander is not None:
                try:  # in place: the compile is ours (fresh from the parser, or handed over by _whole_parts)
                    if lazy_texts:
                        _text.lazy_texts(c, self._expander.lines)  # its long texts stay line references
                    c = self._expander.fill(c)
                except _DAMAGE as e:
                    raise self._damaged(e) from None
            parts.compile(i, c)
            yield c
        parts.finish()

    def expand_head(self):
        """The top-level fields expanded (``head_expanded``) and checked: the expander of the interned tables
        (``None`` if there are none) and the :class:`PartsCheck` that checks the compiles next."""
        from . import intern as _intern

        _check_version(self.head, self.name)
        head = self.head
        try:
            if "interned" in head:
                self._expander = _intern.Expander(head["interned"])
                self.shared = self._expander.shared
                self.head = {k: v for k, v in head.items() if k != "interned"}  # let go of the tables as
                del head  # parsed: the expander holds what the compiles need, as frames and stacks
                self.head_expanded = self._expander.value(self.head)
        except _DAMAGE as e:
            raise self._damaged(e) from None
        return self._expander, PartsCheck(self.head_expanded, self.name, self.shared)

    def _damaged(self, e: Exception) -> ReportError:
        return ReportError(f"{self.name}: its interned tables are damaged ({type(e).__name__}: {e})")


_DAMAGE = (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError)


def read_parts(source: Union[PathLike, bytes, dict], name: str, use, feed=None):
    """``use(parts)`` for the report in ``source`` (a :class:`Parts`), and its result.

    A file in the line layout is read line by line; where it is not (or stops being) in that layout,
    ``use`` is called again on the whole parsed file (so ``use`` must not keep anything from a first
    call that raised). ``feed``, if given, is a function that returns a new byte sink for each attempt:
    every byte of the report's JSON (unpacked if gzip'd) goes to it, in order.
    """
    if not isinstance(source, dict):
        f = _open(source, name)
        try:
            try:
                head, compiles = _report_stream.read_layout(_report_stream.open_binary(f), feed and feed())
                if not isinstance(head.get("schema_version"), int):  # let the whole-file reader word it
                    raise NotInLayout("no schema_version")
                parts = Parts(head, compiles, name, True, True)
                del head  # the parts alone hold it (and let go of its tables once expanded)
                return use(parts)
            except NotInLayout:
                pass
        finally:
            f.close()
    return use(_whole_parts(source, name, feed and feed()))


def _whole_parts(source, name: str, sink) -> Parts:
    if isinstance(source, dict):
        data, pristine = _clean_plain(source), False
    else:
        raw = _gunzip(_read(source, name)[0], name)
        if sink is not None:
            sink(raw)
        data, pristine = parse(raw, name)
        del raw
    _check_version(data, name)
    compiles = data.get("compiles")
    if type(compiles) is not list:
        return Parts(data, iter(()), name, pristine, False)
    head = {k: v for k, v in data.items() if k != "compiles"}
    del data

    def each():  # hand each compile over and let go of it, so that its memory can be reused
        for i in range(len(compiles)):
            c, compiles[i] = compiles[i], None
            yield c

    return Parts(head, each(), name, pristine, False)


def _is_json_text(source) -> bool:
    return isinstance(source, str) and source.lstrip().startswith(("{", "["))


def _open(source, name: str):
    """A binary file object over ``source`` (a path, bytes or JSON text); ``ReportError`` if unreadable."""
    import io

    if isinstance(source, bytes):
        return io.BytesIO(source)
    if _is_json_text(source):
        return io.BytesIO(source.encode("utf-8", "surrogatepass"))
    if not isinstance(source, (str, os.PathLike)):
        raise ReportError(
            f"cannot load a report from a {type(source).__name__} (pass a path, JSON text, bytes or a dict)"
        )
    path = os.fspath(source)
    if os.path.isdir(path):
        raise ReportError(f"{name}: is a directory, not a report file")
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise ReportNotFoundError(
            f"{name}: no such file (no report at {path!r}; pass a path to a .json or .json.gz report, or JSON text)"
        ) from None
    except OSError as e:
        raise ReportError(f"{name}: cannot be read ({e.strerror or e})") from None


def _read(source, name: Optional[str]) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        return source, name or "report"
    if _is_json_text(source):
        return source.encode("utf-8", "surrogatepass"), name or "report"
    if not isinstance(source, (str, os.PathLike)):
        raise ReportError(
            f"cannot load a report from a {type(source).__name__} (pass a path, JSON text, bytes or a dict)"
        )
    path = os.fspath(source)
    name = name or path
    if os.path.isdir(path):
        raise ReportError(f"{name}: is a directory, not a report file")
    try:
        with open(path, "rb") as f:
            return f.read(), name
    except FileNotFoundError:
        raise ReportNotFoundError(
            f"{name}: no such file (no report at {path!r}; pass a path to a .json or .json.gz report, or JSON text)"
        ) from None
    except OSError as e:
        raise ReportError(f"{name}: cannot be read ({e.strerror or e})") from None


class ReportNotFoundError(ReportError, FileNotFoundError):
    """``load()`` was given a path where there is no file (also a ``FileNotFoundError``)."""


def read_json_bytes(source: PathLike, name: Optional[str] = None) -> tuple[bytes, str]:
    """The JSON bytes of a report file (unpacked if gzip'd) and the name errors use; ``ReportError`` if unreadable."""
    raw, name = _read(source, name)
    return _gunzip(raw, name), name


def _gunzip(raw: bytes, name: str) -> bytes:
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise ReportError(f"{name}: a gzip file that cannot be unpacked ({e}); it may be truncated") from None


def parse(raw: bytes, name: str) -> tuple[dict, bool]:
    """Parsed report data and whether it is exactly the file's JSON (``False`` when NaN or lone surrogates
    had to be fixed); the version and the types are not checked here (see :func:`load_data`)."""
    if not raw.strip():
        raise ReportError(f"{name}: empty file, not a report")
    pristine = False
    if orjson is not None:
        try:
            with _gc_paused():
                data, pristine = orjson.loads(raw), True
        except orjson.JSONDecodeError as e:
            if "recursion" in str(e).lower():
                raise ReportError(f"{name}: JSON nested too deeply to be a report") from None
            data = _parse_stdlib(raw, name)  # NaN, lone surrogates, or a precise error message
    else:  # pragma: no cover
        data = _parse_stdlib(raw, name)
    if not isinstance(data, dict):
        raise ReportError(f"{name}: a report is a JSON object, not {_json_type(data)}")
    return data, pristine


def check(data: dict, name: str) -> None:
    """The schema version, and for a current-version report the type of every field."""
    _check_version(data, name)
    if data.get("schema_version") == SCHEMA_VERSION:
        from . import intern as _intern

        try:  # the written form stores repeated frames, stacks and long texts once: check what they expand to
            expander = _intern.Expander(data["interned"]) if data.get("interned") is not None else None
            expanded = expander.value({k: v for k, v in data.items() if k != "interned"}) if expander else data
        except _DAMAGE as e:
            raise ReportError(f"{name}: its interned tables are damaged ({type(e).__name__}: {e})") from None
        validate(expanded, name, expander.shared if expander else frozenset())


def _parse_stdlib(raw: bytes, name: str) -> Any:
    constants: list[str] = []

    def constant(token: str):  # NaN, Infinity, -Infinity: JSON has no such numbers
        constants.append(token)
        return None

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReportError(f"{name}: not UTF-8 text (byte {e.start}), so not a JSON report") from None
    try:
        data = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as e:
        if text.lstrip()[:1] == "<":  # a page the lens exported, most likely: the report inside is not for reading back
            raise ReportError(
                f"{name}: an HTML page, not a JSON report; load and show read the report's JSON (write it with "
                "`inductor-lens run --json FILE ...` or `report.save_json(FILE)`)"
            ) from None
        where = (
            "truncated: the text ends early"
            if e.pos >= len(text.rstrip())
            else f"line {e.lineno} column {e.colno}: {e.msg}"
        )
        raise ReportError(f"{name}: not valid JSON ({where})") from None
    except RecursionError:
        raise ReportError(f"{name}: JSON nested too deeply to be a report") from None
    if isinstance(data, dict):
        cleaner = _Cleaner()
        data = cleaner.plain(data, "")
        if constants:
            add_note(
                data,
                "non_finite_number",
                f"{len(constants)} number(s) in the file were NaN or infinite and were read as null",
                ", ".join(constants[:20]),
            )
        for code, message, detail in cleaner.notes():
            add_note(data, code, message, detail)
    return data


def _check_version(data: dict, name: str) -> None:
    if "schema_version" not in data:
        raise ReportError(f"{name}: not an inductor_lens report (no 'schema_version')")
    v = data["schema_version"]
    if type(v) is not int:
        raise ReportError(f"{name}: schema_version must be a whole number, not {_json_type(v)} ({v!r:.40})")
    if v < 1:
        raise ReportError(f"{name}: schema_version {v} does not exist (versions start at 1)")
    if v > SCHEMA_VERSION:
        raise ReportError(
            f"{name}: report schema_version {v} is newer than this inductor_lens reads "
            f"({SCHEMA_VERSION}): upgrade inductor-lens"
        )


def describe_os_error(e: OSError) -> str:
    """A short reason for an OSError (``No space left on device``) without the errno noise."""
    return e.strerror or errno.errorcode.get(e.errno or 0, "") or str(e)


# The dataclasses' own I/O methods (``Report.to_json``, ``from_dict``, ``save_json``, ``load``) call these.
hooks.provide("dumps", dumps)
hooks.provide("from_dict", from_dict)
hooks.provide("save_json", save_json)
hooks.provide("load", load)
