"""The built front end (``static/``, from ``js/``) and the facts every view shares about it.

Both the widget (``widget.py``) and the offline page (``html.py``) read the bundle through these
helpers, so neither imports the other and the page needs no anywidget. ``VIEWS`` is the one list of
the views a report can open with: the widget's ``view`` trait, the magic's ``--view`` and the
front end (``js/src/app.js``) use these names.
"""

from __future__ import annotations

import base64
import gzip
import os
import zlib
from typing import TYPE_CHECKING, Any, Optional

from ..report import rules as _rules

if TYPE_CHECKING:
    import pathlib

#: The folder of the built front end. ``STATIC``, the same as a ``pathlib.Path``, is made at its first use
#: (:func:`__getattr__`): a page is written with ``os.path`` alone (pathlib and what it imports, ``urllib.parse``
#: and ``ipaddress``, are ~1.3 MB of a small log's ``import-trace``).
_STATIC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")


def __getattr__(name: str) -> Any:
    if name == "STATIC":
        import pathlib

        return pathlib.Path(_STATIC_DIR)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _static_dir() -> str:
    """The front end's folder: ``STATIC`` where it was set (a test's copy of the bundle), else the package's."""
    given = globals().get("STATIC")
    return os.fspath(given) if given is not None else _STATIC_DIR


#: The modes of the one front-end shell (``js/src/shell.js``): a report opens in the lens, a
#: :class:`~inductor_lens.analysis.diff.ReportDiff` in compare, a distributed job in job. Python names the
#: mode (the widget's ``_mode`` trait, the page's ``data-mode``, ``mode`` in the compare and job payloads);
#: the front end never guesses it from the payload's shape.
MODES = ("lens", "compare", "job")

#: The views a lens opens with (``view=`` of the widget, ``--view`` of the magic). The first is the default.
VIEWS = _rules.VIEWS


class BundleMissingError(FileNotFoundError):
    """The front-end bundle was not built (``make bundle``, or ``cd js && npm ci && npm run build``)."""


def static(name: str) -> pathlib.Path:
    """The path of a built front-end file; :class:`BundleMissingError` says how to build it."""
    import pathlib

    return pathlib.Path(static_path(name))


def widget_esm() -> Any:
    """What an anywidget of the front end loads as its module (the lens's and the compare's): the built bundle, or a
    line in the cell saying to build it."""
    if os.path.exists(os.path.join(_static_dir(), "lens.js")):
        return static("lens.js")
    return "export default {render({el}){el.textContent='inductor_lens: front end not built (make bundle)'}}"


def widget_css() -> Any:
    """The stylesheet beside :func:`widget_esm` (``""`` where the front end is not built)."""
    return static("lens.css") if os.path.exists(os.path.join(_static_dir(), "lens.css")) else ""


def static_path(name: str) -> str:
    """:func:`static` as a string (no pathlib)."""
    path = os.path.join(_static_dir(), name)
    if not os.path.exists(path):
        raise BundleMissingError(
            f"{path} is missing: build the front end with `make bundle` (runs `cd js && npm ci && npm run build`)"
        )
    return path


#: What a page or a widget loads: checked before a run that will need them (:func:`check_bundle`).
BUNDLE = ("lens.js", "lens.css", "layout-worker.js")


def check_bundle() -> None:
    """:class:`BundleMissingError` now where the built front end is missing, so that a run that will write a page or
    show the widget is refused before it captures anything (a clean clone without ``make bundle`` ran a whole capture
    and only then failed at ``save_html``: a new user's trial, nu22)."""
    for name in BUNDLE:
        static_path(name)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def b64gz(data: bytes, level: int = 9) -> str:
    """``data`` gzip'd (no timestamp, so the result is deterministic) and base64-encoded."""
    return base64.b64encode(gzip.compress(data, compresslevel=level, mtime=0)).decode("ascii")


_ENGINE_GZ: Optional[bytes] = None


def engine_gz() -> bytes:
    """The layout worker (Graphviz WASM) gzip'd, read once per process: the bundle's ``layout-worker.js.gz``
    (``hatch_build.py`` compresses it at build time), else compressed here (a bundle built before that file)."""
    global _ENGINE_GZ
    if _ENGINE_GZ is None:
        packed = os.path.join(_static_dir(), "layout-worker.js.gz")
        if os.path.isfile(packed):
            _ENGINE_GZ = _read(packed)
        else:
            _ENGINE_GZ = gzip.compress(_read(static_path("layout-worker.js")), compresslevel=9, mtime=0)
    return _ENGINE_GZ


def engine_gz_parts(block: int = 64 << 10):
    """:func:`engine_gz` in pieces, read from the bundle's file as they are written (a page writer need not hold
    the 0.5 MB, nor keep it for the process)."""
    packed = os.path.join(_static_dir(), "layout-worker.js.gz")
    if _ENGINE_GZ is not None or not os.path.isfile(packed):
        yield engine_gz()
        return
    with open(packed, "rb") as f:
        while True:
            piece = f.read(block)
            if not piece:
                return
            yield piece


_bundle_cache: dict = {}


def bundle_b64() -> str:
    """``static/lens.js`` gzip'd and base64-encoded (cached while the file is unchanged): the bundle's
    ``lens.js.gz`` (``hatch_build.py`` compresses it at build time, level 9 without a timestamp, as here) when it
    is as new as ``lens.js``, else compressed here (a bundle built before that file, or rebuilt by npm alone)."""
    path = static_path("lens.js")
    key = (path, os.stat(path).st_mtime_ns)
    if key not in _bundle_cache:
        _bundle_cache.clear()
        packed = os.path.join(_static_dir(), "lens.js.gz")
        try:
            fresh = os.stat(packed).st_mtime_ns >= key[1]
        except OSError:
            fresh = False
        _bundle_cache[key] = base64.b64encode(_read(packed)).decode("ascii") if fresh else b64gz(_read(path))
    return _bundle_cache[key]


#: Bytes of an exported page in one comm message at most: a larger page goes in parts, each sent as it is made
#: (``js/src/comm.js`` joins them), so neither side holds the page as one message.
EXPORT_PART = 4 << 20


def answer_request(widget, content, export, compiles=None) -> None:
    """The kernel side of a widget's request/response messages (matched by id), shared by the lens and the
    compare widget: ``engine`` sends the layout worker, ``export`` sends ``export()`` = (filename, the page: its
    text, bytes, or its bytes in pieces) in parts of :data:`EXPORT_PART` bytes (``part`` 0, 1, ..., ``last`` on
    the final one), ``compiles`` (the lens of a large report) sends ``compiles(ids)``: the compiles the opening
    payload held back (:func:`pack_opening`), as gzip'd JSON. An error is sent back and shown in the widget
    instead of vanishing in the kernel log (after some parts of a page: the front end drops them)."""
    if not isinstance(content, dict):
        return
    kind, rid = content.get("type"), content.get("id")
    try:
        if kind == "engine":
            widget.send({"type": "engine", "id": rid}, [engine_gz()])
        elif kind == "compiles" and compiles is not None:
            ids = [i for i in content.get("ids") or [] if isinstance(i, str)]
            widget.send({"type": "compiles", "id": rid}, [compiles(ids)])
        elif kind == "export":
            filename, page = export()
            try:
                head = {"type": "export", "id": rid, "filename": filename}
                part, n = None, 0
                for nxt in _parts_of(page, EXPORT_PART):  # one ahead: the last part says so
                    if part is not None:
                        widget.send(dict(head, part=n, last=False), [part])
                        n += 1
                    part = nxt
                widget.send(dict(head, part=n, last=True), [part])
            finally:
                close = getattr(page, "close", None)  # a generator's spool goes now, even after an error
                if close is not None:
                    close()
    except Exception as e:
        widget.send({"type": kind, "id": rid, "error": f"{type(e).__name__}: {e}"})


def _parts_of(page, size: int):
    """``page`` (text, bytes, or an iterable of bytes) as pieces of ``size`` bytes, the last one shorter; at
    least one (an empty page is one empty piece)."""
    if isinstance(page, str):
        page = page.encode("utf-8")
    if isinstance(page, (bytes, bytearray, memoryview)):
        page = (page,)
    buf = bytearray()
    sent = False
    for piece in page:
        buf += piece
        while len(buf) >= size:
            yield bytes(memoryview(buf)[:size])
            del buf[:size]
            sent = True
    if buf or not sent:
        yield bytes(buf)


#: zlib level of a report packed whole (:func:`pack_report`: the page's payload, the widget's). Level 2 compresses
#: 2.5-3x faster than 6 (47 -> 17 ms for a 12-layer GPT-2 training step's 3.1 MB of JSON, 334 -> 121 ms for
#: 22 MB) for a payload ~25% larger (248 -> 318 KB; the page's fixed 0.7 MB of front end is unchanged).
REPORT_GZIP_LEVEL = 2


def pack_report(report) -> bytes:
    """The report as gzip'd JSON bytes, the form both the widget and the page receive.

    The JSON comes from :func:`inductor_lens.report_io.dumps`: every string encodable, no NaN. Its pieces are
    compressed as they come (the same bytes as ``gzip.compress`` of the whole, without joining it first).
    """
    from ..report.io import dump_parts

    z = zlib.compressobj(REPORT_GZIP_LEVEL, zlib.DEFLATED, 31)  # gzip.compress(data, level, mtime=0), in pieces
    parts = dump_parts(report)
    out = []
    for i, part in enumerate(parts):
        out.append(z.compress(part))
        parts[i] = b""  # each piece freed once compressed
    out.append(z.flush())
    return b"".join(out)


def pack_opening(report, shown: str) -> tuple[bytes, list[str]]:
    """What the widget of a large report opens with: the report with only compile ``shown`` whole and every
    other compile a stub (its id, label, trigger...: ``report.lazy.LIGHT``; empty graphs, nodes and kernels),
    gzip'd JSON, and the ids of the stubs, listed in the payload as ``pending``. The front end asks for the
    stubs' compiles with ``compiles`` messages (:func:`pack_compiles`), the shown one's first. Reading a
    stub's fields does not build a compile that ``load()`` left pending."""
    import dataclasses

    from ..report import intern as _intern
    from ..report.io import _clean_plain, encode
    from ..report.lazy import LIGHT
    from ..report.model import Compile

    blank = _clean_plain(Compile(id="", compile_id="", graph_kind="", trigger=None))
    compiles, pending = [], []
    for c in report.compiles:
        if c.id == shown:
            compiles.append(c)
        else:
            stub = dict(blank, **_clean_plain({k: getattr(c, k) for k in LIGHT}))
            compiles.append(stub)
            pending.append(c.id)
    data = _clean_plain(dataclasses.replace(report, compiles=[]))
    data.update(views=list(report.views), profiled=report.profiled)  # of every compile, not of none
    data["compiles"] = [x if isinstance(x, dict) else _clean_plain(x) for x in compiles]
    data["pending"] = pending
    return gzip.compress(encode(_intern.compact(data)), compresslevel=6, mtime=0), pending


def pack_compiles(report, ids) -> bytes:
    """The compiles of ``report`` named by ``ids`` (in that order; unknown ids left out), as gzip'd JSON
    ``{"compiles": [...], "interned": {...}}`` in the compact form (``js/src/intern.js`` expands it)."""
    from ..report import intern as _intern
    from ..report.io import _clean_plain, encode

    by_id = {c.id: c for c in report.compiles}
    data = {"compiles": [_clean_plain(by_id[i]) for i in ids if i in by_id]}
    return gzip.compress(encode(_intern.compact(data)), compresslevel=6, mtime=0)
