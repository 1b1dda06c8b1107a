"""Fidelity of the capture, with real compiles on CPU (issue 2)."""

import json
import logging
import os
import re

import pytest
import torch

import inductor_lens
from inductor_lens.capturing.parse import parse_output_code_kernels
from tests import models


def _all_output_kernels(compile_):
    return parse_output_code_kernels(compile_.output_code)


def test_sin_cos_is_one_compile_and_one_cpp_kernel_with_all_five_ops(sin_cos_report):
    r = sin_cos_report
    assert len(r.compiles) == 1
    c = r.compiles[0]
    assert c.id == "0/0 inference" and c.compile_id == "0/0" and c.graph_kind == "inference"
    assert [k.language for k in c.kernels] == ["cpp"]
    k = c.kernels[0]
    targets = {n.name: n.target for n in c.graphs["post_grad"].nodes}
    ops = sorted(targets[n] for n in k.fx_nodes)
    assert ops == sorted(
        ["aten.sin.default", "aten.cos.default", "aten.pow.Tensor_Scalar", "aten.pow.Tensor_Scalar", "aten.add.Tensor"]
    )
    assert len(c.fused_nodes) == 1 and c.fused_nodes[0].kernel == k.name
    assert k.fused_nodes == [c.fused_nodes[0].name]
    assert c.fused_nodes[0].kind == "pointwise"


def test_trigger_is_the_first_call_not_torch_compile(sin_cos_report):
    c = sin_cos_report.compiles[0]
    assert c.trigger.kind == "first_call"
    assert c.trigger.user_stack[-1].code == "compiled(torch.randn(64))"
    (call,) = sin_cos_report.compile_calls
    assert call.target == "sin_cos" and call.user_stack[-1].code == "compiled = torch.compile(models.sin_cos)"
    # torch.compile() returned before anything compiled: every phase starts after the first call
    assert call.time_us < c.trigger.time_us <= min(p.start_us for p in c.phases)
    names = {p.name for p in c.phases}
    assert {"bytecode_tracing", "inductor_compile", "GraphLowering.run"} <= names
    # how long the torch.compile() call took: it had returned before the first call began (nu25 D1)
    assert call.duration_us is not None and 0 < call.duration_us < c.trigger.time_us - call.time_us
    # the trigger's time is dynamo's start; Inductor was called later, when dynamo's backend_compile phase began
    # (torch's "calling compiler function inductor"), after dynamo traced the bytecode (nu25 D4)
    t = c.trigger
    (backend,) = [p for p in c.phases if p.name == "backend_compile"]
    (tracing,) = [p for p in c.phases if p.name == "bytecode_tracing"]
    assert (t.inductor_start_us, t.inductor_end_us) == (
        backend.start_us,
        round(backend.start_us + backend.duration_us, 1),
    )
    assert t.time_us < tracing.start_us + tracing.duration_us <= t.inductor_start_us < t.inductor_end_us
    lowering = next(p for p in c.phases if p.name == "GraphLowering.run")
    assert t.inductor_start_us < lowering.start_us < t.inductor_end_us
    from inductor_lens.report.rules import fmt_us

    when = sin_cos_report.when
    assert (
        f"started the compile: dynamo began at {fmt_us(t.time_us)} and traced its bytecode until "
        f"{fmt_us(t.inductor_start_us)}" in when
    )
    assert f"took {fmt_us(call.duration_us)} and only wrapped sin_cos" in when and "Inductor first ran" not in when
    # the capture's start, timed; whether it imported Inductor depends on what ran before it in this process
    start = sin_cos_report.capture_start
    assert start is not None and start.duration_us > 0
    assert ("because the capture's start" in when) is start.imported_inductor
    # the panel's "When it compiled" names the torch.compile() call that wrapped the function
    (wrapped,) = sin_cos_report.wrapped_by.items()
    assert wrapped == (
        c.id,
        type(wrapped[1])(
            0,
            f"torch.compile(sin_cos) at {call.line.split()[0]} only wrapped sin_cos; this compile began "
            f"{fmt_us(t.time_us - call.time_us)} later, at the first call of the compiled function ({t.line.split()[0]}).",
        ),
    )


def test_compiler_stack_walks_from_user_call_through_dynamo_aot_and_inductor_to_codegen(sin_cos_report):
    stack = sin_cos_report.compiles[0].kernels[0].compiler_stack
    files = [f.file.replace("\\", "/") for f in stack]
    assert stack[0].code == "compiled(torch.randn(64))"
    order = [
        "torch/_dynamo/eval_frame.py",
        "torch/_dynamo/convert_frame.py",
        "torch/_dynamo/output_graph.py",
        "torch/_inductor/compile_fx.py",
        "torch/_functorch/aot_autograd.py",
        "torch/_inductor/graph.py",
        "torch/_inductor/scheduler.py",
        "torch/_inductor/codegen/cpp.py",
    ]
    positions = [next(i for i, f in enumerate(files) if f.endswith(o)) for o in order]
    assert positions == sorted(positions), positions
    # none of the lens's own frames (its package folder; a clone folder named inductor_lens holds torch's too)
    lens_dir = os.path.dirname(os.path.abspath(inductor_lens.__file__)).replace("\\", "/") + "/"
    assert not any(f.startswith(lens_dir) for f in files[1:]), [f for f in files if f.startswith(lens_dir)]


def _groups(stack):
    """The panel's groups of a compiler stack (js/src/data.js groupFrames): consecutive frames of one stage, a plain
    torch or library frame staying in the stage that called it."""
    out = []
    for f in stack:
        stage = "library" if f.stage == "other" else f.stage
        if out and (out[-1][0] == stage or (stage in ("torch", "library") and out[-1][0] != "user")):
            out[-1][1].append(f)
        else:
            out.append((stage, [f]))
    return out


def test_compiler_stack_names_frames_by_qualified_name_and_torch_path_and_hands_off_to_inductor(sin_cos_report):
    """nu25 D5/D6, against the real backtrace of this path (torch 2.13: /tmp/nu25/bt.log): the seven ``__call__``
    frames read as their classes', files by their path in torch, dynamo's hand-off to the backend torch.compile()
    built is Inductor's, and the C hop into dynamo's callback and the cache-bypass branch are said."""
    stack = sin_cos_report.compiles[0].kernels[0].compiler_stack
    calls = [(f.file_label, f.function_label) for f in stack if f.function == "__call__"]
    assert calls == [
        ("torch/_dynamo/convert_frame.py", "CatchErrorsWrapper.__call__"),
        ("torch/_dynamo/convert_frame.py", "ConvertFrame.__call__"),
        ("torch/_dynamo/convert_frame.py", "ConvertFrameAssert.__call__"),
        ("torch/_dynamo/repro/after_dynamo.py", "WrapBackendDebug.__call__"),
        ("torch/__init__.py", "_TorchCompileInductorWrapper.__call__"),
        ("torch/_dynamo/backends/common.py", "AotAutograd.__call__"),
        ("torch/_functorch/_aot_autograd/schemas.py", "SerializableAOTDispatchCompiler.__call__"),
    ], calls
    assert stack[0].is_user and stack[0].file_label == "_capture_fixtures.py"  # the user's file: its name
    groups = [(stage, fs[0].function_label, fs[-1].function_label) for stage, fs in _groups(stack)]
    assert [g[0] for g in groups] == ["user", "dynamo", "inductor", "aot", "inductor", "codegen"], groups
    assert groups[1][2] == "WrapBackendDebug.__call__"  # dynamo ends where it calls the backend...
    assert groups[2][1] == "_TorchCompileInductorWrapper.__call__"  # ...which is Inductor's: compile_fx
    assert groups[3][1:] == ("AotAutograd.__call__", "SerializableAOTDispatchCompiler.__call__")
    noted = {f.function_label: f.note for f in stack if f.note}
    assert set(noted) == {"CatchErrorsWrapper.__call__", "_TorchCompileInductorWrapper.__call__", "_compile_fx_inner"}
    hop = next(i for i, f in enumerate(stack) if f.note and "CPython called this" in f.note)
    assert stack[hop - 1].function == "compile_wrapper" and stack[hop - 1].file_label == "torch/_dynamo/eval_frame.py"
    bypass = next(f for f in stack if f.function == "_compile_fx_inner")
    assert "cache-bypass branch" in bypass.note and bypass.code == "mb_compiled_graph = fx_codegen_and_compile("
    # torch's own source says which branch that line is: the comment above it names the bypass
    src = open(bypass.file, encoding="utf-8").read().splitlines()
    above = "\n".join(src[max(0, bypass.line - 20) : bypass.line])
    assert above.rfind("# CACHE BYPASS") > above.rfind("# CACHE MISS"), above


def test_kernel_source_is_exactly_the_output_code(sin_cos_report, training_report, break_recompile_report):
    for report in (sin_cos_report, training_report, break_recompile_report):
        for c in report.compiles:
            in_code = _all_output_kernels(c)
            assert in_code, c.id
            mine = {k.name: k for k in c.kernels}
            for name, (lang, source) in in_code.items():
                assert mine[name].source == source and mine[name].language == lang
                assert source in c.output_code
                assert mine[name].fused_nodes, f"{c.id}: {name} links to no fused node"


def test_user_stack_points_at_the_users_line(sin_cos_report):
    k = sin_cos_report.compiles[0].kernels[0]
    assert k.user_stack
    frame = k.user_stack[0][-1]
    assert frame.file.endswith("inductor_lens/examples.py") and frame.function == "sin_cos"
    assert frame.code == "return torch.sin(x) ** 2 + torch.cos(x) ** 2"


def test_training_step_has_forward_and_lazy_backward_both_linked(training_report):
    r = training_report
    kinds = [c.graph_kind for c in r.compiles]
    assert kinds == ["forward", "backward"]
    fwd, bwd = r.compiles
    assert fwd.trigger.kind == "first_call" and bwd.trigger.kind == "lazy_backward"
    assert bwd.trigger.user_stack[-1].code == "loss.backward()"
    assert fwd.backward_compiled == "first_backward" and bwd.backward_compiled == ""
    assert "the backward compiles at the first .backward()." in fwd.graph_note
    for c in (fwd, bwd):
        for k in c.kernels:
            assert k.fused_nodes and k.fx_nodes and k.compiler_stack, (c.id, k.name)
            for fn in k.fused_nodes:
                assert c.fused_node(fn).kernel is not None
        for n in c.fused_nodes:
            if n.kind != "nop":
                assert n.kernel in {k.name for k in c.kernels}, (c.id, n.name)
    assert any(f.function == "backward" or "backward" in f.code for f in bwd.kernels[0].compiler_stack)
    # below AOT Autograd, dynamo's frames are wrappers (the lazy backward's compiler runs inside torch._dynamo.disable,
    # eval_frame.py's _fn), not dynamo tracing: they are shown in the stage they run in (rules.stack_stages)
    for c in (fwd, bwd):
        for k in c.kernels:
            stages = [f.stage for f in k.compiler_stack]
            assert "dynamo" not in stages[stages.index("aot") :], (c.id, k.name, stages)
    assert any("eval_frame" in f.file and f.stage == "aot" for f in bwd.kernels[0].compiler_stack)
    # the timeline's phases for people (rules.phase_words): fusion is Scheduler.__init__, in both graphs
    for c in (fwd, bwd):
        fusion = next(p for p in c.phases if p.name == "Scheduler.__init__")
        assert fusion.gloss == "fusion" and "fuses them into kernels" in fusion.what, (c.id, fusion)
    assert next(p for p in fwd.phases if p.name.startswith("compile_attempt_")).gloss.startswith("dynamo")
    # each path (extern calls' too) ends where Inductor generates the kernel or writes its call, a codegen step,
    # not in the provenance comment where the capture's hook is called (stacks.HOOK_CALLERS)
    for c in (fwd, bwd):
        for k in c.kernels:
            assert k.compiler_stack[-1].function != "codegen_comment", (c.id, k.name)
            assert k.compiler_stack[-1].stage == "codegen", (c.id, k.name, k.compiler_stack[-1])


@pytest.mark.compile
def test_a_training_forward_of_plain_tensors_says_an_input_requires_grad_not_a_models_parameters(training_report):
    """nu24 (a new user's trial): a compiled loss of plain tensors (no module, no parameter) was explained as "an input
    requires grad (a model's parameters do, even after .eval())". The parameters are said only where the graph has
    some."""

    def huber(pred, target):
        return torch.nn.functional.huber_loss(pred * 2, target)

    pred, target = torch.randn(8, requires_grad=True), torch.randn(8)
    with inductor_lens.capture() as cap:
        torch.compile(huber)(pred, target).backward()
    (fwd,) = [c for c in cap.report.compiles if c.graph_kind == "forward"]
    assert fwd.graph_note.startswith(
        "A training forward: grad mode was on and an input requires grad, so AOT autograd split forward from backward;"
    ), fwd.graph_note
    model = training_report.compiles[0]  # a model's: its parameters require grad
    assert "an input requires grad (a model's parameters do, even after .eval()), so" in model.graph_note


def test_a_training_forward_says_what_it_returns_and_what_it_saves_for_the_backward(
    training_report, stack_training_report, sin_cos_report
):
    """Compile.returned_outputs / saved_outputs, read at capture from AOT autograd's layout of the forward's outputs:
    what the forward saves is what its backward takes besides the gradients (its inputs but the tangents)."""
    for report in (training_report, stack_training_report):
        fwd, bwd = report.compiles
        taken = [n for n in bwd.graphs["post_grad"].nodes if n.op == "placeholder" and n.role != "tangent"]
        assert len(fwd.returned_outputs) == 1 and len(fwd.saved_outputs) == len(taken) > 1, report.title
        assert set(fwd.returned_outputs + fwd.saved_outputs) <= set(fwd.graph_outputs + fwd.graph_inputs)
        # the note names a saved graph input as its box does (the user's x), a buffer by its name
        assert fwd.graph_note.startswith("A training forward: grad mode was on")
        assert f"saves {len(taken)} buffers (x, " in fwd.graph_note and "torch.no_grad()" in fwd.graph_note
        assert (bwd.returned_outputs, bwd.saved_outputs, bwd.graph_note) == ([], [], "")
        # every output by what holds it, not its buffer (buf10): the output boxes and the note say it so
        (ret,) = fwd.returned_outputs
        assert set(fwd.output_names) == set(fwd.graph_outputs) and set(bwd.output_names) == set(bwd.graph_outputs)
        assert not [n for c in (fwd, bwd) for n in c.output_names.values() if n.startswith("buf")], report.title
        assert f"It returns 1 output ({fwd.output_names[ret]}) to your code" in fwd.graph_note
        # the backward's outputs are the weights' gradients, each named by the parameter it is the gradient of
        # (by position: AOT autograd returns the gradient of each forward input in its place, None for x's), where
        # they were named by the op that made them ("fc2 mm"), which says nothing of which gradient it is
        params = [n.display_name for n in fwd.graphs["post_grad"].nodes if n.role == "parameter"]
        assert sorted(bwd.output_names.values()) == sorted(f"{p}.grad" for p in params), bwd.output_names
    mlp = training_report.compiles[0]
    assert mlp.output_names[mlp.returned_outputs[0]] == "softmax"  # examples.MLP ends in .softmax(-1)
    # the launch table names what each argument holds, not primals_4 or tangents_1 (LaunchArg.holds)
    for c in training_report.compiles:
        fx = {n.name: n for n in c.graphs["post_grad"].nodes}
        args = [a for k in c.kernels if k.launch for a in k.launch.args]
        placeholders = [a for a in args if a.name in fx and fx[a.name].op == "placeholder"]
        assert placeholders and all(a.holds == fx[a.name].display_name for a in placeholders), c.id
        made = [a for a in args if a.name.startswith("buf") and a.holds]
        assert made and not [a for a in made if a.holds.startswith(("buf", "primals", "tangents"))], c.id
    shown = {a.holds for k in training_report.compiles[1].kernels if k.launch for a in k.launch.args}
    assert {"fc2.weight", "gradient of output 1"} <= shown, shown
    (inference,) = sin_cos_report.compiles  # no input requires grad: one inference graph, nothing saved
    assert inference.graph_kind == "inference"
    assert (inference.returned_outputs, inference.saved_outputs, inference.graph_note) == ([], [], "")


def test_linear_layers_are_extern_kernels_beside_fused_cpp(training_report):
    fwd = training_report.compiles[0]
    langs = {k.language for k in fwd.kernels}
    assert {"extern", "cpp"} <= langs
    externs = [k for k in fwd.kernels if k.language == "extern"]
    assert all(re.match(r"extern_kernels\.(addmm|mm)\[buf\d+\]$", k.name) for k in externs)
    for k in externs:
        assert k.metadata["callee"] in k.source and k.metadata["buffer"] in k.source
        (fused,) = k.fused_nodes
        assert fwd.fused_node(fused).kind == "extern"
        # origin_node, not the over-approximating origins (pytorch issue 100096)
        assert len(k.fx_nodes) == 1


def test_kernel_nodes_agree_with_inductors_provenance_mapping(training_report):
    fwd, bwd = training_report.compiles
    checked = 0
    for k in fwd.kernels:
        if "torch_provenance_fx_nodes" in k.metadata:
            assert k.fx_nodes == k.metadata["torch_provenance_fx_nodes"], k.name
            checked += 1
    assert checked == len(fwd.kernels)
    # torch's mapping is empty for a lazily compiled backward; ours still links every kernel
    assert all(k.fx_nodes for k in bwd.kernels)


def test_fx_node_module_stack_names_the_layers(training_report):
    nodes = {n.name: n for n in training_report.compiles[0].graphs["post_grad"].nodes}
    paths = {p for n in nodes.values() for p in n.module_stack}
    assert {"fc1", "fc2", "norm"} <= paths
    types = {p: t for n in nodes.values() for p, t in zip(n.module_stack, n.module_types)}
    assert types["fc1"] == "Linear" and types["norm"] == "LayerNorm"


def test_fusion_decisions_map_to_fused_nodes(training_report):
    decisions = [d for c in training_report.compiles for d in c.fusion_decisions]
    assert decisions, "Inductor refuses some fusions in an MLP step; none were recorded"
    for c in training_report.compiles:
        names = {n.name for n in c.fused_nodes}
        for d in c.fusion_decisions:
            assert d.reason and d.fused1 in names and d.fused2 in names


def test_edges_between_fused_nodes_follow_buffers(training_report):
    for c in training_report.compiles:
        written = {w for n in c.fused_nodes for w in n.writes}
        for n in c.fused_nodes:
            for r in n.reads:
                assert r in written or r in c.graph_inputs or r.startswith(("primals", "tangents", "arg")), (c.id, r)


def test_graph_break_gives_two_frames_and_the_reason(break_recompile_report):
    r = break_recompile_report
    assert r.graph_breaks
    gb = r.graph_breaks[0]
    assert "print" in gb.reason
    assert gb.user_stack[-1].code == 'print("graph break here")'
    # from the user's outermost frame: what launched the user's code (here pytest's frames) left out
    assert gb.user_stack[0].is_user, [(f.file, f.stage) for f in gb.user_stack[:3]]
    first = [c for c in r.compiles if c.trigger.kind == "first_call"]
    assert {c.compile_id for c in first} == {"0/0", "1/0"}
    resumed = r.compile("1/0")
    assert "graph break" in resumed.trigger.reason


def test_shape_change_recompiles_and_names_the_failed_guard(break_recompile_report):
    recompiles = [c for c in break_recompile_report.compiles if c.trigger.kind == "recompile"]
    assert recompiles
    assert any("rank mismatch" in c.trigger.reason or "size mismatch" in c.trigger.reason for c in recompiles), [
        c.trigger.reason for c in recompiles
    ]
    # the user's call that hit the failed guard is on every recompile's stack (the resumed frame after
    # the break is entered from inside with_graph_break, so its stack goes one frame deeper)
    assert all("compiled(torch.randn(4, 4))" in [f.code for f in c.trigger.user_stack] for c in recompiles)


def test_json_round_trip_is_lossless(sin_cos_report, training_report, break_recompile_report):
    for r in (sin_cos_report, training_report, break_recompile_report):
        again = inductor_lens.load(r.to_json())
        assert again == r
        assert again.to_json() == r.to_json()


def _snapshot():
    import torch._inductor.codegen.cpp as cpp
    import torch._inductor.compile_fx as cfx
    import torch._inductor.debug as debug
    from torch._dynamo.callback import callback_handler
    from torch._inductor.graph import GraphLowering
    from torch._inductor.scheduler import WhyNoFuse

    loggers = [logging.getLogger(n) for n in ("torch.__trace", "torch._inductor.scheduler.__fusion")]
    return {
        "config": torch._inductor.config.get_config_copy(),
        "loggers": [(lg.level, lg.propagate, list(lg.handlers)) for lg in loggers],
        "functions": (
            torch.compile,
            debug.log_ir_pre_fusion,
            debug.log_ir_post_fusion,
            debug.set_kernel_post_grad_provenance_tracing,
            cpp.set_kernel_post_grad_provenance_tracing,
            cfx.compile_fx,
            GraphLowering.save_output_code,
            GraphLowering.compile_to_module,
            WhyNoFuse.__call__,
        ),
        "callbacks": (list(callback_handler.start_callbacks), list(callback_handler.end_callbacks)),
    }


def test_torch_is_restored_even_when_the_compile_raises():
    from torch._dynamo.callback import callback_handler

    def users_callback(args):  # dynamo.reset() inside the capture must not drop the user's callbacks
        pass

    callback_handler.register_start_callback(users_callback)
    before = _snapshot()

    def broken_pass(graph):
        raise RuntimeError("user pass exploded")

    with torch._inductor.config.patch(post_grad_custom_post_pass=broken_pass):
        inner_before = _snapshot()
        with pytest.raises(Exception, match="user pass exploded"):
            with inductor_lens.capture() as cap:
                torch.compile(models.sin_cos)(torch.randn(8))
        assert _snapshot() == inner_before
    assert _snapshot() == before
    assert users_callback in callback_handler.start_callbacks
    callback_handler.remove_start_callback(users_callback)
    assert any(d.code == "user_code_raised" and "raised" in d.message for d in cap.report.diagnostics)


def test_a_failing_hook_becomes_a_diagnostic_and_the_compile_still_works(monkeypatch):
    from inductor_lens.capturing import adapter

    def boom(snode, *args, **kwargs):
        raise ValueError("injected fault")

    monkeypatch.setattr(adapter, "raw_sched_node", boom)
    x = torch.randn(8)
    with inductor_lens.capture() as cap:
        out = torch.compile(models.sin_cos)(x)
    torch.testing.assert_close(out, models.sin_cos(x))
    assert any(d.code == "hook_failed" and "injected fault" in d.message for d in cap.report.diagnostics)
    with pytest.raises(inductor_lens.CaptureError, match="injected fault"):
        with inductor_lens.capture(strict=True):
            torch.compile(models.sin_cos)(x)


def test_caches_never_hide_a_compile_and_nested_captures_both_record(sin_cos_report):
    # same function, compiled and called again: a fresh capture sees the whole compile again
    with inductor_lens.capture(strict=True, title="outer") as outer:
        with inductor_lens.capture(strict=True, title="sin_cos") as inner:
            compiled = torch.compile(models.sin_cos)
            compiled(torch.randn(64))

    def stable(report):
        return [
            (
                c.id,
                [(k.name, k.source, k.fused_nodes, k.fx_nodes) for k in c.kernels],
                [(n.name, n.kind, n.fx_nodes, n.reads, n.writes) for n in c.fused_nodes],
            )
            for c in report.compiles
        ]

    assert stable(inner.report) == stable(sin_cos_report)
    assert stable(outer.report) == stable(sin_cos_report)


def test_compiled_but_never_called_says_so():
    with inductor_lens.capture() as cap:
        torch.compile(models.sin_cos)
    assert not cap.report.compiles
    # (dynamo_reset, last: what the earlier tests of the process compiled, by test order)
    assert [d.code for d in cap.report.diagnostics if d.code != "dynamo_reset"] == ["never_ran"]
    assert "only wraps the function" in cap.report.diagnostics[0].message


def test_a_frame_dynamo_could_not_trace_is_said_with_why_and_when_and_its_result_is_eager():
    """A graph break inside ``try``/``finally`` (torch 2.13 to 2.15; an ``nn.GRU`` on 2.13 alike): dynamo cannot
    resume there, gives up on the whole ``forward()`` and runs it eagerly; nothing compiles. The report names the
    frame, why and when (``EmptyFrame.fail``, ``time_us`` after ``torch.compile``'s call, the time dynamo spent),
    beside the graph break and the ``eager_fallback`` diagnostic; the lens changes nothing of the result, nor how
    many frames dynamo attempted."""

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.fc = torch.nn.Embedding(20, 8), torch.nn.Linear(8, 8)

        def forward(self, x):
            try:
                h = self.emb(x)
                torch._dynamo.graph_break()
                return self.fc(h).relu()[:, -1]
            finally:
                pass

    torch.manual_seed(0)
    model, x = Tagger(), torch.randint(0, 20, (2, 5))
    want = model(x)
    torch._dynamo.reset()
    plain = torch._dynamo.utils.counters["frames"]["total"]
    torch.compile(model)(x)
    plain = torch._dynamo.utils.counters["frames"]["total"] - plain
    torch._dynamo.reset()
    lensed = torch._dynamo.utils.counters["frames"]["total"]
    with inductor_lens.capture() as cap:
        got = torch.compile(model)(x)
    lensed = torch._dynamo.utils.counters["frames"]["total"] - lensed
    torch.testing.assert_close(got, want)
    report = cap.report
    assert not report.compiles and lensed == plain >= 1
    (frame,) = report.empty_frames
    assert (frame.compile_id, frame.label, frame.line) == ("0/0", "forward()", Tagger.forward.__code__.co_firstlineno)
    assert "graph_break()" in frame.fail and frame.fail in report.graph_breaks[0].reason, (frame.fail, report)
    # dynamo logged the break, then its giving up on the frame: one break, which says the frame ran eagerly
    (only,) = report.graph_breaks
    assert only.summary.endswith("(dynamo skipped the whole frame: it ran eagerly)"), only.summary
    assert frame.what == f"dynamo could not trace it and ran it eagerly (uncompiled): {frame.fail}"
    assert frame.time_us > report.compile_calls[0].time_us and frame.duration_us > 0
    assert "eager_fallback" in [d.code for d in report.diagnostics]


@pytest.mark.kernel  # a fresh Python process that imports torch and compiles
def test_no_hook_survives_a_first_capture_in_a_fresh_process(tmp_path):
    """A module that torch imports for the first time during the capture must not keep a hook; the report's
    clock starts after those imports."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import sys, time, torch, inductor_lens
        from tests import models
        assert "torch._inductor.lowering" not in sys.modules
        entering = time.perf_counter()
        with inductor_lens.capture() as cap:
            entered = time.perf_counter() - entering  # a first capture imports torch's compiler for its hooks
            torch.compile(models.sin_cos)(torch.randn(8))
        assert cap.report.compiles[0].kernels[0].fused_nodes
        # the report's clock starts where the user's code does, after those imports: the torch.compile call, the
        # block's first statement, is not dated by the seconds the capture took to start
        called = cap.report.compile_calls[0].time_us / 1e6
        assert called < entered / 2, (called, entered)
        # and the report says so (nu25 D1): the start imported Inductor, which a plain run's torch.compile() does,
        # so that torch.compile() took a fraction of the start's time
        start, call = cap.report.capture_start, cap.report.compile_calls[0]
        assert start.imported_inductor and 0 < start.duration_us <= entered * 1e6, (start, entered)
        assert call.duration_us < start.duration_us / 10, (call, start)
        assert "because the capture's start" in cap.report.when, cap.report.when
        with inductor_lens.capture() as again:  # Inductor is imported now: this start imported nothing
            pass
        assert not again.report.capture_start.imported_inductor, again.report.capture_start
        import types
        def hooked(v):
            v = v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
            return isinstance(v, types.FunctionType) and v.__dict__.get("_inductor_lens_hook", False)
        leaks = []
        for modname, mod in list(sys.modules.items()):
            for attr, value in list(getattr(mod, "__dict__", {}).items()):
                if hooked(value):
                    leaks.append(f"{modname}.{attr}")
                if isinstance(value, type) and str(getattr(value, "__module__", "")).startswith("torch"):
                    leaks += [f"{modname}.{attr}.{c}" for c, v in list(vars(value).items()) if hooked(v)]
        print("LEAKS", sorted(set(leaks)))
        sys.exit(1 if leaks else 0)
    """)
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]


def test_profile_measures_every_cpu_kernel():
    report = inductor_lens.inspect(models.sin_cos, torch.randn(4096), profile=True)
    (k,) = report.kernels
    assert k.profile.device == "cpu" and k.profile.total_us > 0 and k.profile.calls == 1
    assert k.profile.share == 1.0
    assert not [d for d in report.diagnostics if d.code == "profile_failed"]


def test_another_backend_is_named_and_not_mistaken_for_a_function_never_called():
    with inductor_lens.capture() as cap:
        out = torch.compile(models.sin_cos, backend="eager")(torch.randn(8))
    assert out.shape == (8,) and not cap.report.compiles
    # (dynamo_reset, last: what the earlier tests of the process compiled, by test order)
    assert [d.code for d in cap.report.diagnostics if d.code != "dynamo_reset"] == ["other_backend"]
    notes = " ".join(d.message for d in cap.report.diagnostics)
    assert "backend 'eager'" in notes and "never ran" not in notes


def test_a_compiled_container_module_is_named_forward_not_a_torch_wrapper():
    """``torch.compile(nn.Sequential(...))``: dynamo traces torch's module-call wrapper, which inlines
    ``Sequential.forward`` (torch's code). The compile read "forward() (via torch's inner wrapper)" (a new user asked
    what that was); it reads as the module the user compiled."""
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    with inductor_lens.capture() as cap:
        torch.compile(m)(torch.randn(2, 4))
    (c,) = cap.report.compiles
    assert c.frame == "Sequential.forward" and c.label.startswith("Sequential.forward():"), c.label
    assert c.trigger.reason.startswith("first call of Sequential.forward():") and "Sequential" in cap.report.when
    # a function of torch's compiled as it is goes through the same wrapper: it is no Sequential's forward
    with torch.no_grad(), inductor_lens.capture() as cap:
        torch.compile(m)(torch.randn(2, 4))
        torch.compile(torch.nn.functional.gelu)(torch.randn(2, 4))
    frames = [c.frame for c in cap.report.compiles]
    assert len(frames) == 2 and frames[1] != "Sequential.forward", frames
    # compiled before the capture (as inspect() takes it), then two containers of two classes: each by its own class
    # (the module torch's wrapper holds, read at capture); they read "forward() (via torch's inner wrapper)"
    cm = torch.compile(m)
    with torch.no_grad(), inductor_lens.capture() as cap:
        cm(torch.randn(2, 4))
    assert [c.frame for c in cap.report.compiles] == ["Sequential.forward"]
    with torch.no_grad(), inductor_lens.capture() as cap:
        torch.compile(m)(torch.randn(2, 4))
        torch.compile(_Stack(torch.nn.Tanh()))(torch.randn(2, 4))
    assert [c.frame for c in cap.report.compiles] == ["Sequential.forward", "_Stack.forward"]


class _Stack(torch.nn.Sequential):
    """A container of the user's whose forward is torch's (``Sequential.forward``)."""


def test_a_dynamo_reset_inside_the_capture_keeps_the_timing_of_later_compiles():
    """torch._dynamo.reset() clears dynamo's compile callbacks; a user's reset inside a capture (a notebook
    cell often starts with one) must not cut the phases and trigger of the compiles after it."""
    from torch._dynamo.callback import callback_handler

    def mine(args):  # the user's own callback: reset clears it, as reset means
        pass

    with inductor_lens.capture() as cap:
        torch.compile(models.sin_cos)(torch.randn(8))
        callback_handler.register_start_callback(mine)
        torch._dynamo.reset()
        assert mine not in callback_handler.start_callbacks
        torch.compile(models.with_graph_break)(torch.randn(8))
    assert len(cap.report.compiles) >= 2
    for c in cap.report.compiles:
        assert c.phases and c.trigger.user_stack, c.id
    # the user's reset is in the report, at its line and between the compiles it separates (the timeline marks it);
    # the capture's own reset at its start is not
    (reset,) = cap.report.resets
    assert reset.line.startswith("test_capture.py:") and "torch._dynamo.reset()" in reset.user_stack[-1].code
    first, later = cap.report.compiles[0], cap.report.compiles[-1]
    assert first.trigger.time_us < reset.time_us < later.trigger.time_us


def test_a_function_compiled_again_after_a_reset_says_so_not_first_call():
    """nu17 D5: after the user's ``torch._dynamo.reset()`` a function called before compiles again; dynamo calls it a
    first call (for dynamo it is), but the user called it before: the compile says it compiled again after the
    reset, at its line, naming the compile it forgot (``Trigger.kind`` ``after_reset``). A function first called
    after the reset is a first call still."""
    import inspect

    def g(x):
        return x.cos() + 1

    cf, cg = torch.compile(models.sin_cos), torch.compile(g)
    x = torch.randn(8)
    here = inspect.currentframe().f_lineno
    with inductor_lens.capture() as cap:
        cf(x)
        cf(x)  # no compile: dynamo's cache
        torch._dynamo.reset()
        cf(x)
        cg(x)
    first, again, other = cap.report.compiles
    assert [c.frame for c in cap.report.compiles] == ["sin_cos", "sin_cos", "g"]
    assert [c.trigger.kind for c in cap.report.compiles] == ["first_call", "after_reset", "first_call"]
    (reset,) = cap.report.resets
    assert reset.user_stack[-1].line == here + 4
    assert again.trigger.summary == "again, at the first call of the compiled function after torch._dynamo.reset()"
    assert again.why == (
        f"compiled again after torch._dynamo.reset() at test_capture.py:{here + 4}: the reset made dynamo forget its "
        f"compile of sin_cos() ({first.id}, at test_capture.py:{here + 2} cf(x)), so this call traced sin_cos() "
        "again and handed the graph to Inductor"
    )
    assert again.trigger.line == f"test_capture.py:{here + 5} cf(x)"
    assert other.why.startswith("first call of g()")


def test_backward_nodes_carry_the_module_whose_forward_they_differentiate(training_report):
    """AOT autograd gives a backward node no ``nn_module_stack`` of its own but the forward node's as
    ``fwd_nn_module_stack``: the backward's ops (the grads of fc1 and fc2) are grouped under those modules, as
    the forward's are, instead of all landing in "(no module)"."""
    fwd, bwd = (next(c for c in training_report.compiles if c.graph_kind == k) for k in ("forward", "backward"))
    ops = [n for n in bwd.graphs["post_grad"].nodes if n.op == "call_function"]
    with_module = [n for n in ops if n.module_stack]
    assert len(with_module) >= len(ops) // 2, [(n.name, n.module_stack) for n in ops]
    forward_modules = {m for n in fwd.graphs["post_grad"].nodes for m in n.module_stack}
    assert {m for n in with_module for m in n.module_stack} <= forward_modules
    assert any(n.module_stack for n in bwd.fused_nodes if n.kind == "extern")  # the mm of a Linear's grad


def test_a_trace_that_started_again_says_why_on_its_next_attempt(break_recompile_report):
    """Dynamo traced the frame, met the graph break, and started again to compile the part before it: the
    timeline's "dynamo, again" phase said only that tracing "had to start again". It now says why, from
    compilation_metrics' restart_reasons: the break's telling line; a restart torch records by its exception
    class alone is said in words (rules.restart_words)."""
    from inductor_lens.report.rules import restart_words

    summary = break_recompile_report.graph_breaks[0].summary
    again = [p for c in break_recompile_report.compiles for p in c.phases if p.name == "compile_attempt_1"]
    assert again and all(p.what.endswith(f"had to start again: {summary}") for p in again), [p.what for p in again]
    # beside the phase's name, in a few words (the trial's "compile_attempt_1 · dynamo, again" said not why)
    assert all(p.gloss == "up to the break" for p in again), [p.gloss for p in again]
    assert restart_words("<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>").startswith(
        "a Python float that dynamo traced as a tensor had to be specialized"
    )
    assert restart_words("<class 'x.NewRestart'>") == "NewRestart"


def test_a_data_dependent_size_costs_the_user_no_warning_of_the_lens():
    """An unbacked size (``nonzero``'s): the lens read its hint through torch's deprecated ``size_hint``, and torch
    2.13 printed a FutureWarning on the user's stderr, twice, that the same script without the lens never shows."""
    import warnings

    import torch

    def f(x):
        return x[torch.nonzero(x > 0).squeeze(1)].exp().sum()

    x = torch.randn(16)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with inductor_lens.capture(strict=True) as cap:
            out = torch.compile(f)(x)
    assert torch.allclose(out, f(x)) and cap.report.compiles
    package = os.path.dirname(os.path.abspath(inductor_lens.__file__)) + os.sep  # not the clone's folder's name
    ours = [f"{m.filename}:{m.lineno} {m.message}" for m in w if os.path.abspath(m.filename).startswith(package)]
    assert ours == []
    # the unbacked size is symbolic in the report, with no hint made up for it
    shapes = [n.shape for n in cap.report.compiles[0].graphs["post_grad"].nodes if n.shape]
    assert any(isinstance(d, str) for s in shapes for d in s if not isinstance(d, list)), shapes


def test_each_output_buffer_is_tied_to_the_node_returned_in_its_place():
    """``torchread.output_nodes``, read at capture: the graph's output node returns a view and a saved view of one
    buffer (two nodes, one buffer twice); the report's output node lists each node once, so the names could not be
    aligned afterwards (``Compile.output_names`` was empty for such a forward)."""
    import torch

    from inductor_lens.capturing.torchread import output_nodes

    def f(x):
        y = torch.relu(x)
        return y, y.t(), x

    gm = torch.fx.symbolic_trace(f)
    assert output_nodes(gm, ["buf0", "buf0", "arg0_1"]) == {"buf0": "relu", "arg0_1": "x"}
    assert output_nodes(gm, ["buf0", None, "arg0_1"]) == {"buf0": "relu", "arg0_1": "x"}  # a constant: no buffer
    assert output_nodes(gm, ["buf0"]) == {}  # not one to one: nothing guessed


def test_a_compile_dynamo_threw_away_after_inductor_compiled_it_says_it_never_ran():
    """``mark_dynamic(x, 0, max=64)`` on a function that branches on ``x.shape[0] > 40``: Inductor compiles the graph,
    then dynamo raises ``ConstraintViolationError`` building its guards and throws the code away. The report showed it
    as an ordinary compile; it is incomplete, and its panel says first that it never ran."""
    from inductor_lens.report.rules import INCOMPLETE_NOTE

    def branchy(x):
        y = x.sin()
        if x.shape[0] > 40:
            y = y * 2
        return y.cos()

    x = torch.randn(16, 8)
    torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
    with pytest.raises(Exception, match="Constraints violated"):
        with inductor_lens.capture() as cap:
            torch.compile(branchy)(x)
    (c,) = cap.report.compiles
    assert c.kernels and not c.complete and c.graph_note.startswith(INCOMPLETE_NOTE), c.graph_note
    assert c.label.endswith("(did not finish)") and "compile_raised" in [d.code for d in cap.report.diagnostics]
    # derived again on load, it says the same (the label's "(did not finish)" was lost then)
    data = json.loads(cap.report.to_json())
    data["derived"] = 0
    (again,) = inductor_lens.load(data).compiles
    assert (again.label, again.graph_note) == (c.label, c.graph_note)
    # a compile that ran is complete and says nothing of the kind
    with inductor_lens.capture() as ran:
        torch.compile(branchy)(torch.randn(16, 8))
    assert all(c.complete and INCOMPLETE_NOTE not in c.graph_note for c in ran.report.compiles)


def test_a_frame_that_raised_after_a_reset_leaves_the_compile_of_its_id_before_the_reset_complete():
    """Compile ids start again at ``0/0`` after ``torch._dynamo.reset()``: a ``fullgraph=True`` frame that raises at
    its graph break (no compile of its own) must not mark the ``0/0`` compiled before the reset, which ran, as thrown
    away."""

    def whole(x):
        return x.sin().cos()

    def broken(x):
        y = x.sin()
        print("a graph break")
        return y.cos()

    with inductor_lens.capture() as cap:
        torch.compile(whole)(torch.randn(8))
        torch._dynamo.reset()
        with pytest.raises(Exception, match="print"):
            try:
                torch.compile(broken, fullgraph=True)(torch.randn(8))
            except Exception as e:
                cap.note_raised(e)
                raise
    (c,) = cap.report.compiles
    assert c.complete and "compile_raised" in [d.code for d in cap.report.diagnostics]


def test_a_recompile_of_a_frame_with_no_graph_is_a_recompile_with_its_failed_guard():
    """The code after a ``float(y.mean())`` graph break is handed the float, and dynamo guards on its value: the
    next call retraces that frame (torch: "Recompiling function torch_dynamo_resume_in_smooth_at_N ... guard failure
    1/0: ___stack2 == 0.21"). The frame has no tensor op, so no compile: the report listed ``1/1`` as a frame with no
    graph and no recompile, its failed guard nowhere, and a diff counted no recompile."""
    import dataclasses
    import json

    from inductor_lens.analysis.diff import diff

    def smooth(x):
        y = x.sin() * 2
        print("mean", float(y.mean()))
        return (y + x).relu()

    torch._dynamo.reset()
    with inductor_lens.capture() as cap:
        cs = torch.compile(smooth)
        for _ in range(2):
            cs(torch.randn(4, 16))
    report = cap.report
    first, again = [f for f in report.empty_frames if f.function.startswith("torch_dynamo_resume_in_smooth")]
    assert (first.compile_id, first.recompile_reason, first.why, first.recompiled) == ("1/0", "", "", False)
    assert again.compile_id == "1/1" and again.recompile_reason.startswith("1/0: ___stack"), again
    assert " == " in again.recompile_reason.splitlines()[0] and again.why.startswith("1/0: ___stack"), again.why
    assert report.recompiles() == [("1/1", again.trigger_reason)]
    assert again.trigger_reason.startswith("recompile of torch_dynamo_resume_in_smooth_at_")
    assert "  1/1: smooth() after line" in report.summary() and "[recompile, no graph]" in report.summary()
    once = dataclasses.replace(report, empty_frames=[first])
    counted = json.loads(diff(once, report).to_json())["recompiles"]
    assert (counted["a"], counted["b"], counted["added"]) == (0, 1, [again.trigger_reason]), counted


def test_every_backward_op_of_an_unrolled_cell_is_the_cells_as_torch_ties_it(gru_unrolled_report):
    """AOT autograd ties a backward op to its forward op by their autograd sequence number, and misses some: the
    ``mul`` of ``(h - n) * z``'s backward (its forward node carries the next number, after a ``clone``), and each
    ``addmm`` Inductor's post-grad pattern makes of a gradient's ``mm`` and the sum it is added to (it copies the
    sum's meta: no ``fwd_nn_module_stack``). Those are the cell's (they read its weight, its saved activations, make
    its parameters' gradients): every backward fused node is ``cell``'s, as every forward op is, and the only
    ops left in no module are those torch says are: the ``select`` of ``torch.stack``'s backward (tied to a forward
    op of no module) and autograd's sums of two gradients of one hidden state."""
    fwd, bwd = (next(c for c in gru_unrolled_report.compiles if c.graph_kind == k) for k in ("forward", "backward"))
    assert {tuple(n.module_stack) for n in bwd.fused_nodes} == {("cell",)}, [
        (n.name, n.fx_nodes, n.module_stack) for n in bwd.fused_nodes
    ]
    ops = [n for n in bwd.graphs["post_grad"].nodes if n.op == "call_function"]
    addmm = [n for n in ops if n.short_op == "addmm"]
    assert addmm and all(n.module_stack == ["cell"] for n in addmm)
    assert {n.short_op for n in ops if not n.module_stack} == {"select", "add"}
    assert all(n.module_types == ["GRUCell"] for n in ops if n.module_stack)


def test_the_backward_ops_the_lens_files_in_an_unrolled_cell_get_the_call_their_evidence_gives(gru_unrolled_report):
    """The ops torch ties to no forward op (``module_paths.fill_backward``) had a module and no call, so 8 of the
    backward's 13 boxes sat in the cell's box outside any call. Each now takes the call its evidence gives
    (``module_paths._filled_calls``): an op that reads a saved activation of one call is that call's backward (the
    ``mul`` of ``(h - n) * z``, even where it reads the gradient the next call's backward passed it), the ``addmm``
    of a hidden state's gradient its gates' call; a sum over calls (a weight's gradient, the partial sums of it) is
    in none."""
    bwd = next(c for c in gru_unrolled_report.compiles if c.graph_kind == "backward")
    post = {n.name: n for n in bwd.graphs["post_grad"].nodes}
    fwd = next(c for c in gru_unrolled_report.compiles if c.graph_kind == "forward")
    made = {n.name: tuple(n.module_calls) for n in fwd.graphs["post_grad"].nodes}
    # a saved activation one call makes and only that call reads (not h1, call 1's output, which call 2 reads)
    across = {
        i
        for n in fwd.graphs["post_grad"].nodes
        for i in n.inputs
        if made.get(i) and made[n.name] and made[i] != made[n.name]
    }
    saved = {
        n.name: tuple(n.module_calls)
        for n in post.values()
        if n.role == "saved" and n.module_calls and n.name not in across
    }
    ops = [n for n in post.values() if n.op == "call_function" and n.module_stack]
    read = [(n, {saved[i] for i in n.inputs if i in saved}) for n in ops]
    assert sum(1 for n, got in read if len(got) == 1) > 10
    for n, got in read:
        if len(got) == 1:
            assert (tuple(n.module_calls),) == tuple(got), n.name
    (out,) = [n for n in post.values() if n.op == "output"]
    assert all(not post[g].module_calls for g in out.inputs)  # the parameters' gradients: sums over every call
    addmm = sorted(tuple(n.module_calls) for n in ops if n.short_op == "addmm" and n.name not in out.inputs)
    assert addmm == [(), (), (1,), (2,)]  # two partial sums of W_ih's gradient; h1's and h0's gradients
    boxes = [n for n in bwd.fused_nodes if not n.is_glue]
    outside = [n for n in boxes if len(n.group_path) < 2]
    assert len(boxes) == 13 and len(outside) == 6, [(n.name, n.fx_nodes) for n in outside]


def test_the_calls_of_an_unrolled_cell_are_folded_and_numbered_as_dynamo_numbers_them(gru_unrolled_report):
    """A ``GRUCell`` called 3 times in one graph: dynamo keys each call's ``nn_module_stack`` entry ``<id>``,
    ``<id>@1``, ``<id>@2``; the post-grad ops carry that number (``GraphNode.module_calls``), and the fusion graph
    folds the cell's fused nodes by call, in execution order, each call's box named by its number (nu23 D6: 24 calls
    read as 24 identical boxes told apart by ``#N`` only). The forward's calls run one after another, each with its two
    matmuls (``x @ W_ih``, ``h @ W_hh``); the backward's in reverse, the ops the lens filed in the cell itself and the
    sums of a weight's gradients over every call in no call."""
    fwd, bwd = (next(c for c in gru_unrolled_report.compiles if c.graph_kind == k) for k in ("forward", "backward"))
    (calls,) = fwd.module_view.calls
    assert (calls.module, calls.keys, calls.summary) == ("cell", ["cell@0", "cell@1", "cell@2"], "cell · 3 calls")
    assert calls.labels == ["cell · call 1 of 3", "cell · call 2 of 3", "cell · call 3 of 3"]
    ops = [n for n in fwd.graphs["post_grad"].nodes if n.op == "call_function" and n.module_stack]
    assert {tuple(n.module_calls) for n in ops} == {(0,), (1,), (2,)}
    boxes = [n for n in fwd.fused_nodes if not n.is_glue]
    order = [n.group_path[1] for n in boxes]
    assert all(n.group_path[0] == "cell" for n in boxes)
    assert order == sorted(order), order  # call 0's nodes, then call 1's, then call 2's
    for key in calls.keys:
        assert [n.label for n in boxes if n.group_path[1] == key and n.kind == "extern"] == ["addmm", "addmm"]
    (back,) = bwd.module_view.calls
    assert back.keys == ["cell@0", "cell@1", "cell@2"]
    ran = [n.group_path[1] for n in bwd.fused_nodes if not n.is_glue and n.group_path]
    assert ran and ran[0] == "cell@2" and "cell@0" in ran  # the last call's gradients first
    post = {n.name: n for n in bwd.graphs["post_grad"].nodes}
    for n in bwd.fused_nodes:
        if len(n.group_path) == 2:  # a call's node: some of its ops were made in that call
            call = int(n.group_path[1].rpartition("@")[2])
            assert any(post[x].module_calls == [call] for x in n.fx_nodes if x in post), n.name


def _float_steps(source: str) -> set:
    """The element counts a C++ kernel's vectorized loops load and step (``Vectorized<float>::loadu(p, 16)``)."""
    return {int(n) for n in re.findall(r"Vectorized<float>::loadu\([^;]*?static_cast<int64_t>\((\d+)\)\)", source)}


def test_a_cpu_compile_records_the_vector_isa_its_cpp_kernels_were_written_for(sin_cos_report):
    """A C++ kernel's source is written for one vector width (a loop that steps 16 floats, an unmasked store of one
    ``Vectorized``): a reproducer compiled for another width read and wrote past its buffers. The capture records
    the width Inductor wrote for (``pick_vec_isa()`` inside the compile, under its own ``cpp.simdlen``): this CPU's
    widest by default, 256 bits where the compile asked for them, none for a compile with no C++ kernel (torch's ISA
    checks, which compile test programs, are then never run by the lens)."""
    from torch._inductor.cpu_vec_isa import pick_vec_isa, valid_vec_isa_list

    widest = pick_vec_isa()
    c = sin_cos_report.compiles[0]
    assert (c.cpu_isa, c.cpu_isa_bits) == (str(widest), widest.bit_width())
    if widest.bit_width():
        assert _float_steps(c.kernels[0].source) == {widest.bit_width() // 32}
    if not any(i.bit_width() == 256 for i in valid_vec_isa_list()) or widest.bit_width() == 256:
        pytest.skip("this CPU has no vector width but 256 bits to ask for instead of its widest")

    def pointwise(x):
        return torch.sin(x) * 2 + 1

    def matmul(a, b):
        return a @ b

    x = torch.randn(1000)
    with inductor_lens.capture() as cap:
        with torch._inductor.config.patch({"cpp.simdlen": 256}):
            torch.compile(pointwise)(x)
        torch.compile(matmul)(torch.randn(8, 8), torch.randn(8, 8))
    narrow, mm = cap.report.compiles
    assert [k.language for k in narrow.kernels] == ["cpp"] and [k.language for k in mm.kernels] == ["extern"]
    assert (narrow.cpu_isa, narrow.cpu_isa_bits) == ("avx2", 256) and _float_steps(narrow.kernels[0].source) == {8}
    assert (mm.cpu_isa, mm.cpu_isa_bits) == ("", None)
    assert "\nCPU_ISA = 'avx2'  #" in narrow.kernels[0].reproducer
    assert "\nCPU_ISA_BITS = 256  #" in narrow.kernels[0].reproducer


def test_each_kernels_panel_script_is_the_one_repro_writes(training_report):
    """nu25 L3: the panel's "Copy reproducer" script was written while the capture built each compile, before its
    launches said what each argument holds: its comments said ``# buf1`` where ``repro``'s said ``# buf1: copy of x``,
    and its docstring lacked the report's title. It is written again from the whole report."""
    from inductor_lens.analysis.reproducer import reproducer

    scripts = [(c, k) for c in training_report.compiles for k in c.kernels if k.reproducer]
    assert scripts
    for c, k in scripts:
        assert k.reproducer == reproducer(training_report, k), (c.id, k.name)
    assert any(
        ": " in line.split("#", 1)[1]
        for _, k in scripts
        for line in k.reproducer.splitlines()
        if "make(" in line and "#" in line
    )
    assert all("mlp training step" in k.reproducer for _, k in scripts)
