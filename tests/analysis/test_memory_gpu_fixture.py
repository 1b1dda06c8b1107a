"""Issue 23 on the H200 (tests/fixtures/make_memory_fixtures.py, torch 2.11): a 12-layer GPT-2 (768 wide,
8 x 512, fp32) training step with memory measured around each compiled graph (memory_summary.txt)."""

from __future__ import annotations

import pathlib

import pytest

import inductor_lens

pytestmark = pytest.mark.gpu_fixture
FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_memory_gpt2.json.gz"


def test_every_graph_has_memory_and_a_forward_estimate_within_15_percent_of_the_measured_peak():
    report = inductor_lens.load(FIXTURE)
    assert report.compiles and all(c.memory is not None for c in report.compiles)
    assert all(c.memory.measured_peak_bytes is not None for c in report.compiles)
    forwards = [c for c in report.compiles if c.graph_kind == "forward"]
    for c in forwards:
        m = c.memory
        assert m.peak_bytes == max(p.live_bytes for p in m.timeline)
        assert abs(m.peak_bytes / m.measured_peak_bytes - 1) <= 0.15, (c.id, m.peak_bytes, m.measured_peak_bytes)
    main = max(forwards, key=lambda c: len(c.fused_nodes))
    # the forward's peak holds at least the activations it saves for the backward
    assert main.memory.saved_activation_bytes > 2_000_000_000
    assert main.memory.peak_bytes >= main.memory.saved_activation_bytes
