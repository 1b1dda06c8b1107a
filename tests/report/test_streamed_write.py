"""Reports written compile by compile (``report.io.written``, ``report.written.Spooled``): the same bytes as the
whole report serialized at once, and a loaded report's pending compiles built for the walk only (no torch)."""

from __future__ import annotations

import base64
import gzip
import io as _io
import os
import re

import pytest

import inductor_lens
from inductor_lens.report import io as report_io
from inductor_lens.report import lazy
from inductor_lens.views import html
from inductor_lens.views.frontend import pack_report

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")
NAMES = ["gpu_perf_gpt2_training.json", "gpu_memory_gpt2.json.gz", "gpu_metal_cudagraphs.json.gz"]


def _joined(report) -> bytes:
    """What a writer that holds everything writes: the two-step path's bytes (the whole plain tree, interned)."""
    from inductor_lens.report import intern

    return report_io.encode(intern.compact(report_io.to_plain(report)))


@pytest.mark.parametrize("name", NAMES)
def test_a_spooled_report_is_the_bytes_of_the_whole_one(name, tmp_path):
    report = inductor_lens.load(os.path.join(FIXTURES, name))
    expected = _joined(report)
    on_disk = report_io.written(report, report_io.spool_file(tmp_path / "x"))
    in_memory = report_io.written(report, _io.BytesIO())
    try:
        assert b"".join(on_disk.parts()) == expected
        assert b"".join(on_disk.parts()) == expected  # read again: the spool is read from its start
        assert b"".join(in_memory.parts()) == expected
        assert (on_disk.compiles, on_disk.kernels) == (len(report.compiles), len(report.kernels))
    finally:
        on_disk.close()
        in_memory.close()
    assert os.listdir(tmp_path) == []  # the spool is never a file in the folder


def test_the_page_written_in_pieces_is_the_page_made_at_once(tmp_path):
    report = inductor_lens.load(os.path.join(FIXTURES, NAMES[0]))
    facts = {
        "title": report.title,
        "torch_version": report.torch_version,
        "device": report.device,
        "created": report.created,
        "compiles": len(report.compiles),
        "kernels": len(report.kernels),
        "graph_breaks": len(report.graph_breaks),
    }
    at_once = html.page_bytes(facts, pack_report(report))
    html.save_html(report, tmp_path / "p.html")
    assert (tmp_path / "p.html").read_bytes() == at_once
    assert html.to_html(report).encode("utf-8") == at_once
    report.save_json(tmp_path / "r.json.gz")
    assert gzip.decompress((tmp_path / "r.json.gz").read_bytes()) == report_io.dumps(report)


def test_writing_a_loaded_report_builds_none_of_its_pending_compiles(tmp_path):
    inductor_lens.load(os.path.join(FIXTURES, NAMES[1])).save_json(tmp_path / "current.json")
    report = inductor_lens.load(tmp_path / "current.json")  # written now: loaded lazily
    assert report.compiles and all(lazy.pending(c) for c in report.compiles)
    html.save_html(report, tmp_path / "p.html")
    report.save_json(tmp_path / "r.json")
    page = (tmp_path / "p.html").read_text()
    assert all(lazy.pending(c) for c in report.compiles)  # each was built for the walk and dropped
    payload = re.search(r'id="il-report">([^<]*)</script>', page).group(1)
    for c in report.compiles:  # now build them all: the same bytes as before
        assert c.kernels is not None
    assert not any(lazy.pending(c) for c in report.compiles)
    assert gzip.decompress(base64.b64decode(payload)) == report_io.dumps(report)
    assert (tmp_path / "r.json").read_bytes() == report_io.dumps(report)


def test_a_report_json_cannot_hold_is_written_the_two_step_way(tmp_path):
    import dataclasses

    report = inductor_lens.load(os.path.join(FIXTURES, NAMES[0]))
    c = report.compiles[0]
    k = dataclasses.replace(c.kernels[0], metadata={"x": float("nan")})
    bad = dataclasses.replace(report, compiles=[dataclasses.replace(c, kernels=[k, *c.kernels[1:]])])
    w = report_io.written(bad, report_io.spool_file(tmp_path / "x"))
    try:
        data = b"".join(w.parts())
    finally:
        w.close()
    assert b"non_finite_number" in data and data == report_io.dumps(bad)
