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
from typing import Any, Callable, Optional

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
        "aotautograd_cache_hit",
        "aotautograd_cache_bypass",
        "fx_graph_cache_miss",
        "fx_graph_cache_hit",
        "fx_graph_cache_bypass",
    }
)
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


def read_log(path: str, on_progress: Optional[Callable[[int, int], None]] = None) -> TraceLog:
    """Parse one log file. ``on_progress(bytes_read, total_bytes)`` is called every few megabytes.

    The file is split into records where a line does not start with a tab; a record's payload is the rest
    of it with the tab of each line removed (string operations in C: a 100 MB log is read in seconds).
    Chromium events are kept parsed (``dict`` payloads): their time stamps order the records."""
    total = os.path.getsize(path)
    log = TraceLog(path=path)
    m = _RANK_IN_NAME.search(os.path.basename(path))
    if m:
        log.rank = int(m.group(1))
    with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
        text = f.read()
    if text.endswith("\n"):
        text = text[:-1]  # the newline that ends the last record (a payload may itself end with a newline)
    records = log.records
    now = 0.0
    done = 0
    next_report = 8 << 20
    loads = json.loads
    for chunk in _RECORD_START.split(text):
        done += len(chunk) + 1
        if on_progress is not None and done >= next_report:
            on_progress(done, total)
            next_report += 8 << 20
        nl = chunk.find("\n")
        header = chunk if nl < 0 else chunk[:nl]
        start = header.find("] {")
        start = header.find("{") if start < 0 else start + 2
        if start < 0:
            if header.strip():
                log.bad_lines += 1
            continue
        if log.rank is None:
            r = _RANK_IN_LINE.match(header)
            if r:
                log.rank = int(r.group(1))
        body = header[start:]
        if body.startswith(_SKIP_PREFIXES):
            continue
        try:
            meta = loads(body)
        except ValueError:
            log.bad_lines += 1
            continue
        art = meta.get("artifact")
        if isinstance(art, dict) and art.get("name") in SKIP_ARTIFACTS:
            continue
        payload: Any = None
        if "has_payload" in meta and nl >= 0:
            payload = chunk[nl + 2 :].replace("\n\t", "\n")
            if "chromium_event" in meta:
                try:
                    payload = loads(payload)
                    now = max(now, float(payload.get("ts", now)))
                except (ValueError, AttributeError, TypeError):
                    pass
        elif "has_payload" in meta:
            payload = ""
        records.append((meta, payload, now))
    for meta, payload, _ in records[:3]:
        art = meta.get("artifact")
        if isinstance(art, dict) and art.get("name") == "torch_version" and payload:
            try:
                data = json.loads(payload)
                log.torch_version = str(data.get("pytorch_version") or data.get("version") or "")
            except (ValueError, AttributeError):
                log.torch_version = str(payload).strip()
    if on_progress is not None:
        on_progress(total, total)
    return log
    return payload
