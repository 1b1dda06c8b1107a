"""Issue 24: ``Compile.cudagraphs``. On the CPU a real ``mode="reduce-overhead"`` compile is recorded as compiled
for CUDA graphs and not run through them, and a default compile has none; torch's skip messages and the structured
trace's ``CUDAGraphNode.record`` spans become the skip reason and the recordings (the H200 fixture, recorded by
tests/fixtures/make_metal_fixtures.py, checks a used and a skipped graph: tests/views/test_metal_fixtures.py)."""

import torch

import inductor_lens
from inductor_lens.capturing.cudagraphs import ON_CPU, cudagraphs_of
from inductor_lens.capturing.raw import RawGraph
from inductor_lens.report.model import CudaGraphRecording, CudaGraphs
from inductor_lens.report.rules import recording_reason


def f(x):
    return torch.sin(x) * 2


def test_reduce_overhead_is_recorded_and_the_default_mode_is_not():
    ro = inductor_lens.inspect(f, torch.randn(8), compile_options={"mode": "reduce-overhead"})
    (c,) = ro.compiles
    # torch applies CUDA graphs to CUDA graphs only: on the CPU the graph is compiled for them and not run in one, and
    # torch logs no skip for it; the report says why (the page said "not used", nothing more)
    assert c.cudagraphs == CudaGraphs(used=False, skip_reason=ON_CPU, recordings=[])
    # (dynamo_reset, last: what the earlier tests of the process compiled, by test order)
    assert [d.code for d in ro.diagnostics if d.code != "dynamo_reset"] == [
        "cudagraph_skipped"
    ] and "runs on the CPU" in ro.diagnostics[0].message
    # every graph on the CPU is said in one line, not one each (a training step and a recompile made four)
    with inductor_lens.capture() as cap:
        g = torch.compile(f, mode="reduce-overhead")
        g(torch.randn(8))
        g(torch.randn(4, 4))
    ids = [c.id for c in cap.report.compiles]
    (said,) = [d for d in cap.report.diagnostics if d.code == "cudagraph_skipped"]
    assert len(ids) == 2 and said.message.startswith(", ".join(ids) + ": ") and ON_CPU in said.message
    plain = inductor_lens.inspect(f, torch.randn(8))
    assert [c.cudagraphs for c in plain.compiles] == [None]
    again = inductor_lens.load(ro.to_json())
    assert again.compiles[0].cudagraphs == c.cudagraphs


def _events(cid, backward, spans):
    out = []
    for ts, dur in spans:
        args = {"compile_id": cid, "is_backward": backward}
        out += [{"name": "CUDAGraphNode.record", "ph": "B", "ts": ts, "args": args}]
        out += [{"name": "CUDAGraphNode.record", "ph": "E", "ts": ts + dur, "args": {"compile_id": cid}}]
    return out


def test_skips_and_recordings_read_from_torchs_messages_and_spans():
    used = RawGraph(key=0, compile_id="0/0", graph_kind="forward", start_us=0, cudagraphs=True, cudagraphs_used=True)
    events = _events("0/0", False, [(100.0, 2500.0), (9000.0, 1800.0)]) + _events("0/0", True, [(5000.0, 900.0)])
    events.sort(key=lambda e: e["ts"])
    assert cudagraphs_of(used, events) == CudaGraphs(
        used=True,
        recordings=[
            # what the spans say: a second recording is another size or a re-record, not told apart (nu21 D4)
            CudaGraphRecording(recording_reason(0), 2500.0),
            CudaGraphRecording(recording_reason(1), 1800.0),
        ],
    )
    assert "re-recorded" not in recording_reason(1) and "the recording does not say which" in recording_reason(1)
    # an older lens's words are said anew on load
    from inductor_lens.report.finish import _recordings_said

    old = CudaGraphs(used=True, recordings=[CudaGraphRecording("re-recorded (recording 2 of this graph)", 1.0)])
    assert [r.reason for r in _recordings_said(old).recordings] == [recording_reason(1)]
    skipped = RawGraph(key=1, compile_id="1/0", graph_kind="forward", start_us=0, cudagraphs=True)
    skipped.cudagraph_skips.append(
        'skipping cudagraphs due to mutated inputs (1 instances). Found from : \n   File "m.py", line 3, in f'
    )
    assert cudagraphs_of(skipped, events) == CudaGraphs(used=False, skip_reason="mutated inputs (1 instances)")
    assert cudagraphs_of(RawGraph(key=2, compile_id="2/0", graph_kind="forward", start_us=0), events) is None


def test_skips_and_repeated_recordings_reach_the_diagnostics():
    from inductor_lens.capturing.build import _cudagraph_notes

    notes = []
    used = CudaGraphs(used=True, recordings=[CudaGraphRecording("r", 1000.0)] * 3)
    assert _cudagraph_notes(used, "0/0 forward", notes) is used
    assert [d.code for d in notes] == ["cudagraph_rerecorded"] and "recorded 3 times (3.0 ms" in notes[0].message
    _cudagraph_notes(CudaGraphs(used=False, skip_reason="mutated inputs (1 instances)"), "1/0 forward", notes)
    assert notes[-1].code == "cudagraph_skipped" and notes[-1].message.endswith("skipped: mutated inputs (1 instances)")
    _cudagraph_notes(CudaGraphs(used=True, recordings=[CudaGraphRecording("r", 1.0)] * 2), "2/0 forward", notes)
    _cudagraph_notes(None, "3/0 forward", notes)
    assert len(notes) == 2


def _mutating(x, acc):
    acc.add_(1)
    return x.sin() + acc


def test_a_skip_for_mutated_inputs_names_the_input_and_its_line(monkeypatch):
    """nu21 f: the skip read "mutated inputs (1 instances)", torch's words, naming no input. The compiled graph
    shows it: the post-grad graph copies ``add`` back into the placeholder of ``acc`` (``copy_``, with the line
    ``acc.add_(1)``), as torch's ``get_mutating_use_stack_trace_from_node`` reads it. Torch logs this skip only for a
    graph on the GPU: here the CPU compile is real and torch's message is given to the capture as it would read it."""
    import inductor_lens.capturing.build as build

    said = "mutated inputs (1 instances)"
    real = build.cudagraphs_of
    monkeypatch.setattr(
        build, "cudagraphs_of", lambda rec, events: real(rec, events) and CudaGraphs(used=False, skip_reason=said)
    )
    report = inductor_lens.inspect(
        _mutating, torch.randn(8), torch.zeros(8), compile_options={"mode": "reduce-overhead"}
    )
    (c,) = report.compiles
    post = {n.name: n for n in c.graphs["post_grad"].nodes}
    (copy,) = [n for n in post.values() if n.target == "aten.copy_.default"]  # torch's evidence of the mutation
    assert post[copy.inputs[0]].display_name == "acc" and copy.user_stack[-1].code == "acc.add_(1)"
    line = _mutating.__code__.co_firstlineno + 1
    note = f"{said}: acc is written in place, by acc.add_(1) at test_cudagraphs.py:{line}"
    assert c.cudagraphs.skip_reason == said and c.cudagraphs.skip_note == note
    (d,) = [d for d in report.diagnostics if d.code == "cudagraph_skipped"]
    assert d.message.endswith(f"CUDA graphs skipped: {note}"), d.message
