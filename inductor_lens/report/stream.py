"""Reading a report one compile at a time: the line layout of the written form.

The lens writes a report as (``encode``)::

    {"torch_version":...,"interned":{...},"compiles":[
    {one compile},
    {the next compile}
    ]}

that is, every top-level field but ``compiles`` on the first line (``interned`` with them, so the tables
are known before any compile), then each compile on a line of its own, then ``]}``. It is ordinary JSON
(any reader reads it whole). JSON text never holds a raw newline inside a string (it is written ``\\n``),
so splitting at newlines is exact: :func:`read_layout` parses the first line, then yields the compiles
one by one, and a reader never holds more than one compile's parsed tree besides the top-level fields.

A file not in this layout (written by an older lens, by ``json.dumps``, edited by hand, gzip'd or not)
raises :class:`NotInLayout`, at the start or at the first line that does not fit, and the caller reads
it whole instead: correct, only slower and larger in memory. So does anything orjson cannot parse
(NaN, lone surrogates, bad JSON): the whole-file reader fixes what can be fixed and words the error.
"""

from __future__ import annotations

import gzip
import io
import zlib
from typing import Callable, Iterator, Optional

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    orjson = None

OPEN = b'"compiles":['
CLOSE = b"]}"
_SPACE = b" \t\r\n"
_READ_ERRORS = (OSError, EOFError, zlib.error, ValueError)


class NotInLayout(Exception):
    """The file is not (or stops being) in the line layout: read it whole."""


def encode(data: dict, dump: Callable[[object], bytes]) -> bytes:
    """``data`` (plain report data) as JSON bytes in the line layout; ``dump`` serializes one value
    without newlines (``orjson.dumps``, or ``json.dumps`` without ``indent``)."""
    compiles = data.get("compiles")
    if type(compiles) is not list or not compiles:
        return dump(data)
    return b"".join(layout_parts({k: v for k, v in data.items() if k != "compiles"}, [dump(c) for c in compiles], dump))


def layout_parts(head: dict, compiles: list[bytes], dump: Callable[[object], bytes]) -> list[bytes]:
    """The pieces of the line layout (joined, the file): the first line of ``head`` (every top-level field but
    the compiles), then the compiles, each serialized already, one a line."""
    first = dump(head)  # b"{...}"
    parts = [first[:-1] + (b"," if len(first) > 2 else b"") + OPEN + b"\n"]
    for c in compiles:  # the separators apart: a compile's bytes are not copied
        parts += (c, b",\n")
    parts[-1] = b"\n"
    parts.append(CLOSE + b"\n")
    return parts


def open_binary(f: io.BufferedIOBase) -> io.BufferedIOBase:
    """``f``, or a gzip reader over it when it starts with gzip's magic bytes (whatever the file's name)."""
    magic = f.peek(2)[:2] if hasattr(f, "peek") else b""
    if magic == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=f, mode="rb")
    return f


def read_layout(f: io.BufferedIOBase, feed: Optional[Callable[[bytes], None]] = None) -> tuple[dict, Iterator[dict]]:
    """The top-level fields of a report in the line layout and an iterator over its compiles, parsed one by
    one; :class:`NotInLayout` (at once or from the iterator) where the file leaves the layout. ``feed``
    receives every byte read, in order (``inductor-lens show`` packs the page from it meanwhile)."""
    if orjson is None:  # pragma: no cover
        raise NotInLayout("no orjson")
    feed = feed or (lambda b: None)
    try:
        first = f.readline()
    except _READ_ERRORS as e:
        raise NotInLayout(str(e)) from None
    line = first.rstrip()
    if not (line.startswith(b"{") and line.endswith(OPEN)):
        raise NotInLayout("the first line does not open the compiles")
    head_text = line[: -len(OPEN)]
    head_text = head_text[:-1] + b"}" if head_text.endswith(b",") else head_text + b"}"
    try:
        head = orjson.loads(head_text)
    except orjson.JSONDecodeError as e:
        raise NotInLayout(str(e)) from None
    if "compiles" in head:
        raise NotInLayout("two 'compiles' fields")
    feed(first)
    return head, _Compiles(f, feed)


class _Compiles:
    """The compiles of a report in the line layout, parsed one by one; :attr:`line` is the JSON of the last
    one yielded, as the file has it (``load()`` keeps it to build the compile when it is first read)."""

    def __init__(self, f, feed) -> None:
        self.line: Optional[memoryview] = None
        self._it = self._each(f, feed)

    def __iter__(self) -> "_Compiles":
        return self

    def __next__(self) -> dict:
        return next(self._it)

    def _each(self, f, feed) -> Iterator[dict]:
        comma: Optional[bool] = None  # whether the previous compile's line ended with a comma
        try:
            for line in f:
                feed(line)
                end = len(line)
                while end and line[end - 1] in _SPACE:
                    end -= 1
                if end < 8 or line[0] in _SPACE:  # the closing bracket, or a line not as the lens writes it
                    s = line.strip()
                    line, end = s, len(s)
                else:
                    s = None
                if s is not None and s == CLOSE:
                    if comma:
                        raise NotInLayout("a comma before the closing bracket")
                    rest = f.read()
                    feed(rest)
                    if rest.strip():
                        raise NotInLayout("text after the report")
                    self.line = None
                    return
                if comma is False:
                    raise NotInLayout("two compiles without a comma")
                comma = end > 0 and line[end - 1] == 44  # ","
                s = memoryview(line)[: end - 1 if comma else end]  # the compile's JSON, not copied
                try:
                    parsed = orjson.loads(s)
                except orjson.JSONDecodeError as e:
                    raise NotInLayout(str(e)) from None
                self.line = s
                del line, s
                yield parsed
        except _READ_ERRORS as e:
            raise NotInLayout(str(e)) from None
        raise NotInLayout("the file ends before the compiles are closed")


class Packer:
    """gzip of a byte stream, compressed in a thread (zlib lets go of the GIL) while the caller parses.

    >>> p = Packer(6); p.feed(b"..."); p.feed(b"..."); page_payload = p.result()
    """

    CHUNK = 8 << 20

    def __init__(self, level: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self._pool = ThreadPoolExecutor(1)
        self._z = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: the gzip format, mtime 0
        self._buf: list[bytes] = []
        self._size = 0
        self._done: list = []
        self.fed = 0

    def feed(self, data: bytes) -> None:
        self._buf.append(data)
        self._size += len(data)
        self.fed += len(data)
        if self._size >= self.CHUNK:
            self._submit()

    #: Chunks handed to the thread and not compressed yet, at most: past it the caller waits (so a reader
    #: faster than zlib never holds the whole file in the queue).
    AHEAD = 1

    def _submit(self) -> None:
        if self._buf:
            data, self._buf, self._size = b"".join(self._buf), [], 0
            self._done.append(self._pool.submit(self._z.compress, data))
            waiting = [f for f in self._done if not f.done()]
            if len(waiting) > self.AHEAD:
                waiting[0].result()

    def result(self) -> bytes:
        """The gzip'd bytes of everything fed."""
        self._submit()
        self._done.append(self._pool.submit(self._z.flush))
        out = b"".join(f.result() for f in self._done)
        self.close()
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
