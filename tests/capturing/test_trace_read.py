"""Streaming a TORCH_TRACE log: records cut at chunk boundaries come out exactly as from the whole text, a record
longer than a chunk included, and each payload is the string whose md5 torch wrote (no torch needed)."""

import hashlib
import json

import pytest

from inductor_lens.capturing import trace_read
from inductor_lens.capturing.trace_read import TraceReader

PREFIX = "V1201 22:51:32.391000 4343 torch/_logging/_internal.py:1551] "


def _record(meta: dict, payload=None) -> str:
    if payload is None:
        return PREFIX + json.dumps(meta) + "\n"
    meta = dict(meta, has_payload=hashlib.md5(payload.encode()).hexdigest())
    return PREFIX + json.dumps(meta) + "\n" + "".join(f"\t{ln}\n" for ln in payload.split("\n"))


def _log(tmp_path, n: int = 40):
    parts, expected = [], []
    for i in range(n):
        ev = {"name": f"phase{i}", "ts": 1000.0 + i, "ph": "B", "args": {"compile_id": f"{i}/0"}}
        parts.append(_record({"chromium_event": {}, "frame_id": i}, json.dumps(ev, indent=0)))
        code = "\n".join(f"    line {j} of graph {i}" for j in range(5 + 300 * (i == 7)))  # one record > a chunk
        parts.append(
            _record({"inductor_output_code": {"filename": "x.py"}, "frame_id": i}, code + ("\n" if i % 3 else ""))
        )
        expected.append(code + ("\n" if i % 3 else ""))
    parts.append("not a record\n")
    path = tmp_path / "dedicated_log_torch_trace_rank_3_ab.log"
    path.write_text("".join(parts))
    return path, expected


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000, 1 << 20])
def test_chunked_reading_gives_every_record_exactly(tmp_path, monkeypatch, chunk):
    """Blocks of 1 and 7 bytes put record boundaries at every place of a block and at the joint of two; the record
    of graph 7 (~6 KB) spans many blocks (kept as its blocks until it ends)."""
    path, codes = _log(tmp_path)
    monkeypatch.setattr(trace_read, "_CHUNK", chunk)
    monkeypatch.setattr(trace_read, "_REPORT_EVERY", max(chunk, 64))
    seen = []
    reader = TraceReader(str(path), on_progress=lambda done, total: seen.append((done, total)))
    records = list(reader)
    outputs = [p for md, p, _ in records if "inductor_output_code" in md]
    assert outputs == codes
    for md, payload, _ in records:  # each payload is the string torch hashed
        text = payload if isinstance(payload, str) else None
        if text is not None:
            assert hashlib.md5(text.encode()).hexdigest() == md["has_payload"]
    events = [p for md, p, _ in records if "chromium_event" in md]
    assert [e["name"] for e in events] == [f"phase{i}" for i in range(40)]
    assert [t for md, _, t in records if "inductor_output_code" in md] == [1000.0 + i for i in range(40)]
    assert reader.records == 80 and reader.bad_lines == 1 and reader.rank == 3
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)
    if chunk <= 64:
        assert len(seen) > 10  # progress while reading, not only at the end


def test_a_log_without_a_final_newline_keeps_its_last_record(tmp_path):
    path = tmp_path / "x.log"
    path.write_text(_record({"str": ["a.py", 1]}) + _record({"dynamo_output_graph": {}}, "a\nb").rstrip("\n"))
    records = list(TraceReader(str(path)))
    assert [p for _, p, _ in records] == [None, "a\nb"]
