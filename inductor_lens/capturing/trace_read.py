"""Reading TORCH_TRACE logs: the files ``TORCH_TRACE=dir`` writes and tlparse reads. No torch needed.

A log is a sequence of records. Each record is one line, a glog-style prefix and the JSON metadata::

    [rank0]:V1130 16:51:24.839000 10360 torch/_dynamo/convert_frame.py:303] {"dynamo_start": {...}, "frame_id": 0, ...}

followed, when the metadata has ``has_payload``, by the payload: its lines, each prefixed with a tab.
The payload is exactly the string torch logged (``"\\n".join`` of those lines), the same string that the
in-process capture receives from the ``torch.__trace`` logger, so both feed the same report builder.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

try:  # orjson parses the metadata lines 2-3x faster than json
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency
    _fast_loads = json.loads


def _loads(text: str) -> Any:
    try:
        return _fast_loads(text)
    except ValueError:  # what orjson refuses and json reads (NaN, Infinity, integers past 64 bits)
        return json.loads(text)


# Records the report never uses (fake-tensor descriptions, symbolic-shape bookkeeping): skipped unparsed.
_SKIP_PREFIXES = (
    '{"describe_storage"',
    '{"describe_tensor"',
    '{"describe_source"',
    '{"create_symbol"',
    '{"guard_added"',
    '{"propagate_real_tensors',
    '{"create_unbacked_symbol"',
    '{"expression_created"',
    '{"missing_fake_kernel"',
    '{"mismatched_fake_kernel"',
    '{"symbolic_shape_specialization"',
    '{"link"',
    '{"dump_file"',
    '{"optimus"',
    '{"graph_dump"',
    '{"freeze_runtime_asserts"',
)
# Artifacts that are large and unused by the report.
SKIP_ARTIFACTS = frozenset(
    {
        "fx_graph_runnable",
        "torch._functorch.config",
        "aot_forward_graph_fw_metadata",
        "before_pre_grad_graph",
        "after_pre_grad_graph",
        "before_post_grad_graph",
        "before_joint_graph",
        "after_joint_graph",
        "backward_prologue",
        "backward_epilogue",
        "compiled_function_forward",
        "compiled_function_backward",
        "compiled_fn_wrapper",
        "runtime_wrapper_orchestration",
        "aotautograd_cache_miss",
        "aotautograd_cache_bypass",
        "fx_graph_cache_miss",
        "fx_graph_cache_bypass",
    }
)
#: Artifacts that say a graph was read from torch's caches (AOT autograd's, Inductor's FX-graph cache), not compiled
#: in this run: the import reads that they came (``trace_import``), never their payload (the cache key's parts: the
#: whole graph again).
CACHE_HITS = frozenset({"aotautograd_cache_hit", "fx_graph_cache_hit"})
_RANK_IN_NAME = re.compile(r"rank_(\d+)")
_RANK_IN_LINE = re.compile(r"^\[rank(\d+)\]:")


class TraceError(ValueError):
    """A path that is not a readable TORCH_TRACE log (the message says what was expected)."""


@dataclass
class TraceLog:
    """One log file: its records ``(metadata, payload or None, time in us)`` in order, and its rank."""

    path: str
    rank: Optional[int] = None
    records: list[tuple[dict, Optional[str], float]] = field(default_factory=list)
    bad_lines: int = 0
    torch_version: str = ""


def find_logs(path: str) -> list[str]:
    """The log files at ``path``: the file itself, or every ``*.log`` in the directory, rank order."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise FileNotFoundError(f"no TORCH_TRACE log at {path!r} (pass a log file or the directory TORCH_TRACE named)")
    files = sorted(
        os.path.join(path, f) for f in os.listdir(path) if f.endswith(".log") and os.path.isfile(os.path.join(path, f))
    )
    if not files:
        raise TraceError(f"{path} holds no .log file: is it the directory TORCH_TRACE pointed at?")

    def key(f: str) -> tuple:
        m = _RANK_IN_NAME.search(os.path.basename(f))
        return (int(m.group(1)) if m else -1, f)

    return sorted(files, key=key)


_RECORD_START = re.compile(r"\n(?=[^\t])")
#: Records whose payload the report never reads (only their metadata): the payload is not kept.
METADATA_ONLY = frozenset({"aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "aot_joint_graph"})
#: Bytes read at a time. A block is held about three times over while it is cut into records (its bytes, then
#: its text, and the record being read and its payload): 256 KB blocks keep that under a megabyte (1 MB blocks:
#: ~3 MB, the most of a small log's import; 8 MB blocks: ~30 MB).
_CHUNK = 256 << 10
#: How often ``on_progress`` hears how far the read is.
_REPORT_EVERY = 8 << 20


class TraceReader:
    """The records of one log file, streamed: iterate to get ``(metadata, payload or None, time in us)`` in
    order. The file is read a megabyte at a time, cut where a line does not start with a tab (a record
    boundary), so a log of any size is read in bounded memory; what the caller keeps is up to the caller.

    A record's payload is the rest of it with the tab of each line removed (string operations in C).
    Chromium events are parsed (``dict`` payloads): their time stamps order the records. After iterating,
    ``rank``, ``bad_lines``, ``records`` (the count) and ``torch_version`` describe the log.
    ``on_progress(bytes_read, total_bytes)`` is called every few megabytes."""

    def __init__(self, path: str, on_progress: Optional[Callable[[int, int], None]] = None):
        self.path = path
        self.on_progress = on_progress
        self.total = os.path.getsize(path)
        self.bad_lines = 0
        self.records = 0
        self.torch_version = ""
        m = _RANK_IN_NAME.search(os.path.basename(path))
        self.rank: Optional[int] = int(m.group(1)) if m else None

    def _texts(self) -> Iterator[str]:
        """The file as text pieces that each end at a record boundary. A record longer than a block is kept as
        its blocks until it ends, then joined once (not copied again with each block). The bytes of a piece are
        let go before it is yielded: what is held at once is a block, or a record longer than one, about twice."""
        rest = b""  # what follows the last record boundary
        long: list[bytes] = []  # the blocks of a record longer than a block, while no boundary has come
        done = 0
        next_report = _REPORT_EVERY
        with open(self.path, "rb") as f:
            while True:
                block = f.read(_CHUNK)
                done += len(block)
                if self.on_progress is not None and done >= next_report:
                    self.on_progress(done, self.total)
                    next_report += _REPORT_EVERY
                if not block:
                    break
                if long:  # the boundary can only be in this block, or where it meets the one before
                    cut = _last_boundary(long[-1][-1:] + block)
                    if cut < 0:
                        long.append(block)
                        continue
                    cut += sum(len(b) for b in long) - 1
                    long.append(block)
                    block = b""
                    data = b"".join(long)
                    long = []
                else:
                    data = rest + block if rest else block
                    block = b""
                    cut = _last_boundary(data)
                    if cut < 0:  # one record longer than a block: keep reading
                        long, rest = [data], b""
                        continue
                rest = data[cut + 1 :]
                text = str(memoryview(data)[:cut], "utf-8", "replace")  # no copy of the bytes first
                data = b""
                yield text
                text = ""
        if long:
            rest = b"".join(long)
        if rest.endswith(b"\n"):
            rest = rest[:-1]  # the newline that ends the last record (a payload may itself end with a newline)
        if rest:
            yield rest.decode("utf-8", "replace")
        if self.on_progress is not None:
            self.on_progress(self.total, self.total)

    def __iter__(self) -> Iterator[tuple[dict, Any, float]]:
        now = 0.0
        loads = _loads
        for text in self._texts():
            for chunk in _records_of(text):
                nl = chunk.find("\n")
                header = chunk if nl < 0 else chunk[:nl]
                start = header.find("] {")
                start = header.find("{") if start < 0 else start + 2
                if start < 0:
                    if header.strip():
                        self.bad_lines += 1
                    continue
                if self.rank is None:
                    r = _RANK_IN_LINE.match(header)
                    if r:
                        self.rank = int(r.group(1))
                body = header[start:]
                if body.startswith(_SKIP_PREFIXES):
                    continue
                try:
                    meta = loads(body)
                except ValueError:
                    self.bad_lines += 1
                    continue
                if not isinstance(meta, dict):
                    self.bad_lines += 1
                    continue
                if not self.torch_version and "compilation_metrics" in meta:  # torch 2.11 logs no torch_version
                    metrics = meta["compilation_metrics"]
                    self.torch_version = str(metrics.get("pytorch_version") or "") if isinstance(metrics, dict) else ""
                art = meta.get("artifact")
                name = art.get("name") if isinstance(art, dict) else None
                if name in SKIP_ARTIFACTS:
                    continue
                payload: Any = None
                if "has_payload" in meta:
                    if nl < 0:
                        payload = ""
                    elif next(iter(meta), None) in METADATA_ONLY or name in CACHE_HITS:
                        payload = None
                    else:
                        payload = chunk[nl + 2 :].replace("\n\t", "\n")
                        if "chromium_event" in meta:
                            try:
                                payload = loads(payload)
                                now = max(now, float(payload.get("ts", now)))
                            except (ValueError, AttributeError, TypeError):
                                pass
                        elif name == "torch_version" and not self.torch_version:
                            self.torch_version = _torch_version(payload)
                self.records += 1
                yield meta, payload, now


def _records_of(text: str) -> Iterator[str]:
    """``_RECORD_START.split(text)``, one record at a time (a list of them would hold the text a second time)."""
    if _RECORD_START.search(text) is None:  # one record: itself, not a copy
        yield text
        return
    search = _RECORD_START.search
    pos = 0
    while True:
        m = search(text, pos)
        if m is None:
            yield text[pos:]
            return
        yield text[pos : m.start()]
        pos = m.end()


def _last_boundary(data: bytes) -> int:
    """Index of the last newline of ``data`` that ends a record (the next line does not start with a tab)."""
    i = data.rfind(b"\n", 0, len(data) - 1)  # the next byte must be known
    while i >= 0 and data[i + 1] == 9:  # a tab: a payload line
        i = data.rfind(b"\n", 0, i)
    return i


def _torch_version(payload: str) -> str:
    try:
        data = json.loads(payload)
        return str(data.get("pytorch_version") or data.get("version") or "")
    except (ValueError, AttributeError):
        return str(payload).strip()


def read_log(path: str, on_progress: Optional[Callable[[int, int], None]] = None) -> TraceLog:
    """Parse one log file whole (every record kept; :class:`TraceReader` streams it instead)."""
    reader = TraceReader(path, on_progress)
    log = TraceLog(path=path)
    log.records = list(reader)
    log.rank, log.bad_lines, log.torch_version = reader.rank, reader.bad_lines, reader.torch_version
    return log
