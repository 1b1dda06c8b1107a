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


def test_every_graph_backward_included_is_within_15_percent_of_the_measured_peak_net_of_freed_inputs():
    """A backward frees its saved activations as it goes: its live bytes peak at 622 MiB while the allocator rises
    only 27 MiB above its level at the call (22.96x). ``Memory.net_peak_bytes`` is the quantity the measurement
    takes (live bytes less the inputs the output code has ``del``eted), so every graph compares within 15%. The
    rule is applied to the recorded compiles again here and agrees with what the capture stored."""
    import dataclasses

    from inductor_lens.analysis.memory import estimate_ratio, freed_inputs, net_peak
    from inductor_lens.report.finish import pair_backward

    report = inductor_lens.load(FIXTURE)
    fronts = {b.id: fid for fid, b in pair_backward(report.compiles).items()}
    by_id = {c.id: c for c in report.compiles}
    ratios = {}
    for c in report.compiles:
        freed = freed_inputs(c, by_id.get(fronts.get(c.id, "")))
        net, node = net_peak(c.memory.timeline, freed)
        m = dataclasses.replace(c.memory, net_peak_bytes=net, net_peak_node=node, freed_input_bytes=sum(freed))
        ratios[c.id] = estimate_ratio(m)
        # the fixture (re-recorded with the field) carries what the rule gives
        assert (c.memory.net_peak_bytes, c.memory.estimate_ratio) == (net, ratios[c.id]), c.id
        assert net <= m.peak_bytes and node in {p.node for p in m.timeline}
        if c.graph_kind == "forward":
            assert sum(freed) == 0 and net == m.peak_bytes  # a forward's inputs are held by their callers
    assert all(r is not None and abs(r - 1) <= 0.15 for r in ratios.values()), ratios
    main_bwd = max((c for c in report.compiles if c.graph_kind == "backward"), key=lambda c: len(c.fused_nodes))
    assert main_bwd.memory.peak_bytes / main_bwd.memory.measured_peak_bytes > 10  # the raw figure was far off
    # it frees the 2.2 GB of activations saved for it; the logits' 0.8 GB gradient (a tangent) stays with the caller
    assert sum(freed_inputs(main_bwd, by_id[fronts[main_bwd.id]])) > 2_000_000_000


def test_the_header_says_which_peak_is_the_devices_high_water_mark():
    """nu21 c: a backward's header showed two "peaks" on different bases, ``peak 622 MiB`` (the graph's buffers)
    and ``measured 27 MiB ... above the level at the call`` (what the allocator rose by: the buffers less the saved
    activations freed on the way), without saying which is the device's high-water mark. Python says what each
    counts; the forward, which frees no input, says the same number twice, both named."""
    from inductor_lens.report.rules import bytes_text

    report = inductor_lens.load(FIXTURE)
    main_bwd = max((c for c in report.compiles if c.graph_kind == "backward"), key=lambda c: len(c.fused_nodes))
    m = main_bwd.memory
    assert m.freed_input_bytes > 2_000_000_000 and m.peak_bytes > 10 * m.measured_peak_bytes
    assert m.peak_text == f"peak of the graph's buffers {bytes_text(m.peak_bytes)}"
    assert "inputs are not counted" in m.peak_note and "never holds this much" in m.peak_note
    assert bytes_text(m.freed_input_bytes) in m.peak_note
    measured = f"device high-water mark {bytes_text(m.measured_peak_bytes)} above the level at the call, measured"
    assert m.high_water_text.startswith(measured)
    assert f"(estimated {bytes_text(m.net_peak_bytes)}, {m.estimate_ratio:.2f}×)" in m.high_water_text
    assert m.high_water_text.endswith("the graph's buffers less the inputs it has freed by then")
    fwd = next(c for c in report.compiles if c.graph_kind == "forward").memory
    assert fwd.freed_input_bytes == 0 and "never holds" not in fwd.peak_note and "freed" not in fwd.high_water_text
    assert fwd.high_water_text.startswith("device high-water mark ")
