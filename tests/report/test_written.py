"""The one-pass writer (``report/written.py``) writes what the two-step path writes, byte for byte: the
expanded plain tree (``io.to_plain``) compacted (``intern.compact``) and laid out a compile a line (no torch)."""

from __future__ import annotations

import dataclasses
import glob
import gzip
import io as _bytes_io
import json
import os

import pytest

import inductor_lens
from inductor_lens.report import intern, io, written
from inductor_lens.report.model import Frame
from inductor_lens.views.frontend import pack_report
from tests._recorded import recorded
from tests._synthetic_report import hostile_report

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")


def _two_step(report) -> bytes:
    return io.encode(intern.compact(io.to_plain(report)))


def _one_pass_taken(report) -> bool:
    w = io.written(report, _bytes_io.BytesIO())
    try:
        return isinstance(w, written.Spooled)  # else Unclean was raised and the two-step path wrote it
    finally:
        w.close()


def _with_metadata(report, metadata):
    """``report`` with ``metadata`` on the first kernel of its first compile."""
    c = report.compiles[0]
    k = dataclasses.replace(c.kernels[0], metadata=metadata)
    c = dataclasses.replace(c, kernels=[k, *c.kernels[1:]])
    return dataclasses.replace(report, compiles=[c, *report.compiles[1:]])


@pytest.mark.parametrize(
    "name", ["gpu_mlp.json", "gpu_max_autotune.json", "gpu_perf_gpt2_training.json", "gpu_metal_cudagraphs.json.gz"]
)
def test_a_recorded_report_is_written_byte_for_byte_as_the_two_step_path_writes_it(name):
    report = recorded(name)
    assert _one_pass_taken(report)
    assert io.dumps(report) == _two_step(report)
    assert gzip.decompress(pack_report(report)) == _two_step(report)  # the page's payload: pieces compressed


def test_every_fixture_report_is_written_as_the_two_step_path_writes_it():
    found = 0
    for path in sorted(glob.glob(os.path.join(FIXTURES, "gpu_*.json*"))):
        report = recorded(os.path.basename(path))
        assert io.dumps(report) == _two_step(report), path
        found += 1
    assert found >= 10


def test_hostile_text_and_a_report_without_compiles_are_written_the_same():
    report = hostile_report()
    assert _one_pass_taken(report)
    assert io.dumps(report) == _two_step(report)
    empty = dataclasses.replace(report, compiles=[])
    assert io.dumps(empty) == _two_step(empty)


FRAME_DICT = {"file": "a.py", "line": 1, "function": "f", "code": "x = 1", "stage": "user", "is_user": True}


EDGE_METADATA = [
    {"stack": [Frame("a.py", 1, "f"), Frame("b.py", 2, "g")]},  # frames in metadata: an interned stack
    {"stack": [FRAME_DICT, FRAME_DICT]},  # frame-shaped dicts: a stack too, as compact decides
    {"stack": [dict(FRAME_DICT, is_user=False)]},  # is_user not stage == "user": not a frame
    {"stack": [FRAME_DICT, dict(FRAME_DICT, extra=1)]},  # one dict with a seventh key: an ordinary list
    {"stack": [Frame("a.py", 1, "f"), 3]},
    {1: "int key", "1": "the same key once plain: the last value wins"},
    {"code": "long text " * 20, "source": ["not a text: a list"], "guards": "short"},
    {"nested": [[{"a": (1, 2.5, None, True)}]], "obj": object.__name__},
    {"é": [{"ü": "ö" * 100}], "code": ["ä" * 90, {"code": "ß" * 90}], "": {}},
]


@pytest.mark.parametrize("metadata", EDGE_METADATA)
def test_edge_values_are_written_the_same(metadata):
    report = _with_metadata(recorded("gpu_mlp.json"), metadata)
    assert _one_pass_taken(report)
    assert io.dumps(report) == _two_step(report)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "lone \udcff surrogate"])
def test_a_value_json_cannot_hold_takes_the_two_step_path_that_notes_it(bad):
    report = _with_metadata(recorded("gpu_mlp.json"), {"x": bad})
    assert not _one_pass_taken(report)
    data = io.dumps(report)
    assert data == _two_step(report)
    assert b"non_finite_number" in data or b"unencodable_text" in data


def _nest(depth: int, leaf, kind: str):
    v = leaf
    for _ in range(depth):
        v = {"a": v} if kind == "dict" else [v]
    return v


@pytest.mark.parametrize("kind", ["dict", "list"])
@pytest.mark.parametrize("leaf", [1, "x", [], {}, [1]])
def test_nesting_at_the_limit_is_refused_exactly_where_the_two_step_path_refuses_it(kind, leaf):
    base = recorded("gpu_mlp.json")
    outcomes = []
    for depth in range(188, 198):  # the kernel's metadata sits a few levels down: the limit is in here
        outcomes.append(_as_the_two_step_path(_with_metadata(base, {"m": _nest(depth, leaf, kind)})))
    assert outcomes[0] == "ok" and outcomes[-1] == "refused"  # both sides of the limit were tried


def _as_the_two_step_path(report) -> str:
    """``report`` written as the two-step path writes it, or refused with its error: "ok" or "refused"."""
    try:
        expected = _two_step(report)
    except inductor_lens.ReportError as e:
        with pytest.raises(inductor_lens.ReportError) as raised:
            io.dumps(report)
        assert str(raised.value) == str(e)
        return "refused"
    assert io.dumps(report) == expected
    return "ok"


@pytest.mark.parametrize("levels", [0, 1, 2, 3, 5, 8, 400])
def test_a_compile_written_in_pieces_to_any_depth_is_the_same_bytes(monkeypatch, levels):
    """``Spooled.add`` writes a compile a field or an element at a time down to ``written.LEVELS`` levels (so that
    neither its written value nor its JSON is held whole): to any depth, the pieces are the bytes of the whole."""
    monkeypatch.setattr(written, "LEVELS", levels)
    base = inductor_lens.load(os.path.join(FIXTURES, "gpu_mlp.json"))
    reports = [hostile_report(), inductor_lens.load(os.path.join(FIXTURES, "gpu_perf_gpt2_training.json"))]
    for report in reports + [_with_metadata(base, m) for m in EDGE_METADATA]:
        assert _one_pass_taken(report)
        assert io.dumps(report) == _two_step(report)
    outcomes = [  # the nesting limit, met inside the pieces too
        _as_the_two_step_path(_with_metadata(base, {"m": _nest(d, [1], "list"), "d": _nest(d, {}, "dict")}))
        for d in (190, 192, 194)
    ]
    assert outcomes[0] == "ok" and outcomes[-1] == "refused"


def test_a_dump_that_is_not_compact_json_writes_each_compile_whole():
    """The pieces are joined with ``,`` and ``:``: a ``dump`` that writes other separators gets each compile whole."""
    report = inductor_lens.load(os.path.join(FIXTURES, "gpu_mlp.json"))
    spaced = written.Spooled(lambda v: json.dumps(v).encode(), _bytes_io.BytesIO())
    assert spaced._levels == 0
    for c in report.compiles:
        spaced.add(c)
    spaced.finish(report)
    assert json.loads(b"".join(spaced.parts())) == json.loads(io.dumps(report))
    assert written.Spooled(io._dump, _bytes_io.BytesIO())._levels == written.LEVELS > 0
