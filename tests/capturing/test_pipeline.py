"""The one run pipeline (``capturing/pipeline.py``) that ``inspect``, the magic, ``run`` and ``demo`` share."""

from __future__ import annotations

import os

import pytest
import torch

import inductor_lens
from inductor_lens.capturing.pipeline import Run

ROOT = os.path.dirname(inductor_lens.__file__)


def _sources():
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, ROOT), open(path, encoding="utf-8").read()


def test_kernel_profiling_is_switched_on_in_one_place():
    setters = [rel for rel, text in _sources() if '"cpp.enable_kernel_profile"' in text]
    assert setters == [os.path.join("capturing", "pipeline.py")], setters


def test_every_run_path_goes_through_the_pipeline():
    users = {rel for rel, text in _sources() if "pipeline import Run" in text}
    assert users == {
        "examples.py",  # inductor-lens demo
        os.path.join("views", "cli.py"),  # inductor-lens run
        os.path.join("views", "cell_run.py"),  # %%inductor_lens
    }, users
    assert inductor_lens.inspect.__module__ == "inductor_lens.capturing.pipeline"


def test_finish_returns_a_new_report_and_leaves_the_captured_one_as_it_was():
    run = Run(title="empty", who="the test")
    with run:
        pass  # nothing compiles
    captured = run.report
    before = list(captured.diagnostics)
    run.note("backward_failed", "a note")
    report = run.finish(RuntimeError("boom"), traceback_text="tb")
    assert captured.diagnostics == before, "the captured report was changed in place"
    codes = [d.code for d in report.diagnostics]
    assert codes[-3:] == ["backward_failed", "user_code_raised", "nothing_compiled"], codes
    assert report.diagnostics[-1].message == "nothing compiled: the test raised RuntimeError before anything compiled"


def test_time_later_needs_a_run_that_profiles_calls():
    with pytest.raises(ValueError, match="profile='calls'"):
        Run().time_later(print, ())
    with pytest.raises(ValueError, match="must be one of"):
        Run(profile="yes")


def test_a_fullgraph_error_that_leaves_the_capture_is_not_said_to_run_eagerly():
    def f(x):
        torch._dynamo.graph_break()
        return x + 1

    with pytest.raises(torch._dynamo.exc.Unsupported):
        with inductor_lens.capture() as cap:
            torch.compile(f, fullgraph=True)(torch.ones(2))
    codes = [d.code for d in cap.report.diagnostics]
    assert "compile_raised" in codes and "eager_fallback" not in codes, codes
    # caught inside the capture, the error reaches no exit: still no frame is said to have run eagerly (dynamo's
    # graph-break record of a frame it runs eagerly says so; this one raised), and the torch.compile call of f, which
    # passed fullgraph=True, says that it raised to the code that caught it (nu19 O-e: "nothing recorded says which")
    with inductor_lens.capture() as cap:
        with pytest.raises(torch._dynamo.exc.Unsupported):
            torch.compile(f, fullgraph=True)(torch.ones(2))
    assert not [x for x in cap.report.empty_frames if x.fail], cap.report.empty_frames
    (d,) = [d for d in cap.report.diagnostics if d.code in ("compile_raised", "compile_unsupported", "eager_fallback")]
    assert d.code == "compile_raised" and "to your code, which caught it (with fullgraph=True" in d.message, d
    # the same frame compiled again without fullgraph as well: either may have run it, nothing says which
    with inductor_lens.capture() as cap:
        with pytest.raises(torch._dynamo.exc.Unsupported):
            torch.compile(f, fullgraph=True)(torch.ones(2))
        torch.compile(f)  # a call of torch.compile that never ran
    codes = [d.code for d in cap.report.diagnostics]
    assert "compile_unsupported" in codes and "compile_raised" not in codes, codes
    # without fullgraph the same frame breaks into graphs and nothing is raised or said to have failed
    with inductor_lens.capture() as cap:
        torch.compile(f)(torch.ones(2))
    assert not {"compile_raised", "eager_fallback"} & {d.code for d in cap.report.diagnostics}


def test_autotune_results_go_on_a_new_kernel_never_into_a_built_one():
    from inductor_lens.capturing.build import _GraphBuilder
    from inductor_lens.capturing.raw import Raw, RawGraph, RawSchedNode
    from inductor_lens.report.model import Kernel

    node = RawSchedNode("op0", "extern", ["mm"], ["mm"], reads=["a", "b"], writes=["buf0"], outputs=["buf0"])
    rec = RawGraph(key=0, compile_id="0/0", graph_kind="inference", start_us=0.0, post_fusion=[node])
    rec.autotune = [{"op": "mm", "inputs": ["a", "b"], "choices": [{"name": "triton_mm_1", "time_ms": 0.01}]}]
    rec.autotune.append({"op": "addmm", "inputs": ["c"], "choices": []})  # reads of no kernel: a diagnostic
    diagnostics: list = []
    built = Kernel(name="extern_kernels.mm[buf0]", language="extern", source="", fused_nodes=["op0"])
    kernels = _GraphBuilder(Raw(t0_us=0.0), rec, None, diagnostics)._attach_autotune([built])
    assert built.metadata == {}, "the built kernel was changed in place"
    assert kernels[0].metadata["autotune"] == {
        "op": "mm",
        "fastest": "triton_mm_1",
        "choices": [{"name": "triton_mm_1", "time_ms": 0.01}],
    }
    assert [d.code for d in diagnostics] == ["autotune_unlinked"]


def test_a_kernel_called_at_several_places_takes_one_autotuning_per_place():
    """max-autotune on a 4-layer Llama (H200): a Triton template emitted once and called for each layer's matmul
    took the first layer's autotuning, and the others were said to be tied to no kernel (7 ``autotune_unlinked``).
    Each call site (its fused nodes' reads) takes one; a third autotuning of the same inputs has no place left."""
    from inductor_lens.capturing.build import _GraphBuilder
    from inductor_lens.capturing.raw import Raw, RawGraph, RawSchedNode
    from inductor_lens.report.model import Kernel

    nodes = [
        RawSchedNode(f"op{i}", "template", ["mm"], ["mm"], reads=[x, w], writes=[f"buf{i}"], outputs=[f"buf{i}"])
        for i, (x, w) in enumerate([("x0", "w0"), ("x1", "w1")])
    ]
    rec = RawGraph(key=0, compile_id="0/0", graph_kind="forward", start_us=0.0, post_fusion=nodes)
    tune = {"op": "mm", "choices": [{"name": "triton_mm_1", "time_ms": 0.01}]}
    rec.autotune = [dict(tune, inputs=["x0", "w0"]), dict(tune, inputs=["x1", "w1"]), dict(tune, inputs=["x1", "w1"])]
    template = Kernel(
        name="triton_tem_fused_mm_0",
        language="triton",
        source="",
        fused_nodes=["op0", "op1"],
        call_sites=[["op0"], ["op1"]],
    )
    diagnostics: list = []
    kernels = _GraphBuilder(Raw(t0_us=0.0), rec, None, diagnostics)._attach_autotune([template])
    assert kernels[0].metadata["autotune"]["fastest"] == "triton_mm_1"
    assert [d.code for d in diagnostics] == ["autotune_unlinked"]  # the third: both places taken


def test_a_compiled_function_never_called_is_said_once():
    """A new user's cell ``h = torch.compile(lambda t: t * 2)``, never called: two lines said it (the capture's
    ``never_ran`` and the run's ``nothing_compiled``, in other words). The capture's says it, once."""
    run = Run(title="wraps only", who="the cell")
    with run:
        torch.compile(lambda t: t * 2)
    report = run.finish()
    # (dynamo_reset, last: what the earlier tests of the process compiled, by test order)
    assert [d.code for d in report.diagnostics if d.code != "dynamo_reset"] == ["never_ran"], report.diagnostics
    assert "never ran inside the capture" in report.diagnostics[0].message
