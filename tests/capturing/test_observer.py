"""The observer effect (issue 10 section 1): a capture never adds a guard, never specializes a size,
never changes a result.

Each scenario runs twice in this process with real compiles, dynamo reset between: once plain, once
inside ``inductor_lens.capture()``. Torch's own graph count, the guards of every compiled frame (read
from torch's ``guards`` log, which both runs enable alike) and the outputs must be identical, and the
report must hold exactly the compiles torch made.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import os
import re

import pytest
import torch

import inductor_lens
from tests import models


class _GuardLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.guards: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "GUARD_MANAGER" in text:  # the guard tree of one compiled frame (not the latency line)
            # the trailing comments say where each guard was added (codegen, or a cache hit's check): not
            # part of the guard
            lines = [line.split("  # ", 1)[0].rstrip() for line in text.splitlines()]
            # and dynamo numbers the globals it installs per process (__builtins_dict___0, then ___2...)
            text = "\n".join(re.sub(r"0x[0-9a-f]+", "0x?", line) for line in lines)
            text = re.sub(r"(\w___)\d+\b", r"\1N", text)
            # and a compiled optimizer's global, by its objects' ids and a count: __optimizer_<id>_<id>_c2
            self.guards.append(re.sub(r"__optimizer_\d+_\d+_c\d+", "__optimizer_N", text))


@contextlib.contextmanager
def _guard_log():
    handler = _GuardLog()
    logger = logging.getLogger("torch._dynamo.guards.__guards")
    torch._logging.set_logs(guards=True)
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()


def _flat(out):
    if isinstance(out, torch.Tensor):
        return [out.detach()]
    if isinstance(out, dict):
        return [t for v in out.values() for t in _flat(v)]
    if hasattr(out, "to_tuple"):  # transformers' ModelOutput
        return _flat(out.to_tuple())
    if isinstance(out, (list, tuple)):
        return [t for v in out for t in _flat(v)]
    return []


def _run(scenario, lens: bool, **capture_kwargs):
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    cap = None
    with _guard_log() as log:
        ctx = inductor_lens.capture(**capture_kwargs) if lens else contextlib.nullcontext()
        with ctx as cap:
            outputs = _flat(scenario())
    return {
        "graphs": counters["stats"]["unique_graphs"],
        "guards": log.guards,
        "outputs": outputs,
        "report": cap.report if lens else None,
    }


def observe(scenario, failed=0, skipped=False, **capture_kwargs):
    """Run ``scenario`` plain and under the lens; assert torch did exactly the same; return the report.
    ``failed``: compiles that Inductor began but that failed (torch counts no graph for them). ``skipped``: the
    scenario may hold a compiled call of which dynamo compiled nothing (``call_skipped``); no other may say so
    (``torch.compile(model)`` skips torch's module-call wrapper and compiles the forward: not a skipped call)."""
    plain = _run(scenario, False)
    lensed = _run(scenario, True, **capture_kwargs)
    assert lensed["graphs"] == plain["graphs"], (plain["graphs"], lensed["graphs"])
    assert lensed["guards"] == plain["guards"]
    assert len(lensed["outputs"]) == len(plain["outputs"]) > 0
    for a, b in zip(plain["outputs"], lensed["outputs"]):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert torch.equal(a, b), (a - b).abs().max()
    report = lensed["report"]
    assert len({c.compile_id for c in report.compiles}) == plain["graphs"] + failed, [c.id for c in report.compiles]
    assert not [d for d in report.diagnostics if d.code in ("hook_missing", "hook_failed", "build_failed")]
    assert skipped or not [d.message for d in report.diagnostics if d.code == "call_skipped"]
    return plain, report


def _symbolic_dims(report):
    return {
        d
        for c in report.compiles
        for g in c.graphs.values()
        for n in g.nodes
        for d in (n.shape or [])
        if isinstance(d, str)
    }


def _f(x):
    return torch.sin(x) * 2 + x.sum()


def test_dynamic_true_over_three_sizes_is_one_graph_with_symbolic_shapes():
    def scenario():
        c = torch.compile(_f, dynamic=True)
        return [c(torch.arange(n, dtype=torch.float32)) for n in (32, 50, 77)]

    plain, report = observe(scenario)
    assert plain["graphs"] == 1
    (compile_,) = report.compiles
    nodes = compile_.graphs["post_grad"].nodes
    shaped = [n for n in nodes if n.shape and isinstance(n.shape[0], str)]
    assert shaped, [n.shape for n in nodes]
    # the symbol is kept, and the size used at capture time is its hint
    assert all(n.shape_hint == [32] for n in shaped), [(n.shape, n.shape_hint) for n in shaped]
    assert not any(n.shape == [32] for n in nodes)


def test_automatic_dynamic_over_four_sizes():
    def scenario():
        c = torch.compile(_f)
        return [c(torch.ones(n)) for n in (8, 9, 10, 11)]

    plain, report = observe(scenario)
    assert plain["graphs"] == 2
    assert _symbolic_dims(report)


def test_mark_dynamic_on_a_module_input_does_not_raise():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU())

    def scenario():
        c = torch.compile(model)
        outs = []
        for batch in (4, 6):
            x = torch.randn(batch, 16, generator=torch.Generator().manual_seed(batch))
            torch._dynamo.mark_dynamic(x, 0)
            outs.append(c(x))
        return outs

    plain, report = observe(scenario)
    assert plain["graphs"] == 1
    assert _symbolic_dims(report)


@pytest.mark.slow
def test_dynamic_training_step_over_two_batch_sizes():
    torch.manual_seed(0)
    model = models.MLP()

    def scenario():
        model.zero_grad()
        c = torch.compile(model, dynamic=True)
        outs = []
        for batch in (4, 6):
            loss = c(torch.randn(batch, 16, generator=torch.Generator().manual_seed(batch))).pow(2).sum()
            loss.backward()
            outs += [loss] + [p.grad.clone() for p in model.parameters()]
        return outs

    plain, report = observe(scenario)
    assert plain["graphs"] == 1
    assert {c.graph_kind for c in report.compiles} == {"forward", "backward"}
    # the forward saves symbolic sizes for the backward, so AOT autograd compiled the backward at once, with it:
    # the forward's panel says so (it said "the backward compiles at the first .backward()"), as the backward's does
    fwd, bwd = report.compile("0/0 forward"), report.compile("0/0 backward")
    assert fwd.backward_compiled == "with_forward" and bwd.trigger.time_us == fwd.trigger.time_us
    assert "the backward compiled at once, with this forward, not at the first .backward()" in fwd.graph_note
    assert "compiled together with the forward" in bwd.trigger.reason


def test_graph_breaks_and_a_shape_recompile():
    def scenario():
        c = torch.compile(models.with_graph_break, dynamic=False)
        return [c(torch.ones(8)), c(torch.ones(4, 4))]

    plain, report = observe(scenario)
    assert plain["graphs"] == 4
    assert report.graph_breaks
    assert not [d for d in report.diagnostics if d.code in ("eager_fallback", "compile_error", "recompile_limit")]


def test_dtype_recompile():
    def scenario():
        c = torch.compile(_f)
        return [c(torch.ones(8)), c(torch.ones(8, dtype=torch.float64))]

    plain, report = observe(scenario)
    assert plain["graphs"] == 2


def test_reduce_overhead_mode_on_cpu():
    def scenario():
        c = torch.compile(_f, mode="reduce-overhead")
        return [c(torch.ones(8)), c(torch.ones(8) * 2)]

    plain, _ = observe(scenario)
    assert plain["graphs"] == 1


@pytest.mark.slow
def test_hf_gpt2_at_several_sequence_lengths():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, n_positions=64, vocab_size=97)
    model = transformers.GPT2LMHeadModel(config).eval()

    def scenario():
        c = torch.compile(model)
        with torch.no_grad():
            return [c(torch.arange(n).remainder(97).unsqueeze(0)).logits for n in (8, 12, 20)]

    plain, report = observe(scenario)
    assert plain["graphs"] <= 2
    assert _symbolic_dims(report)


@pytest.mark.slow
def test_export_with_a_dynamic_batch_and_aoti_package_gives_the_same_results(aoti_pair):
    """Exported with a dynamic batch and packaged by AOTInductor, plain and under the capture (``aoti_pair``, whose
    report test_names.py reads): both packages give the model's results on a batch size never exported, and the
    same results bit for bit."""
    for out in (aoti_pair.plain, aoti_pair.lensed):
        assert out.shape == (7, 4)
        torch.testing.assert_close(out, aoti_pair.eager)
    assert torch.equal(aoti_pair.plain, aoti_pair.lensed)
    (c,) = aoti_pair.report.compiles
    assert c.compile_id == "aot/0"


# -- when torch gives up, the report says so ---------------------------------------------------


def _recompiling(x):
    return torch.cos(x) + 1


def test_recompile_limit_is_a_diagnostic_with_the_frame_and_the_limit():
    def scenario():
        c = torch.compile(_recompiling, dynamic=False)
        return [c(torch.ones(n)) for n in (1, 2, 3, 4)]

    with torch._dynamo.config.patch(recompile_limit=2, automatic_dynamic_shapes=False):
        plain, report = observe(scenario)
    assert plain["graphs"] == 2
    (diag,) = [d for d in report.diagnostics if d.code == "recompile_limit"]
    assert "_recompiling" in diag.message and "recompile_limit" in diag.message and "2" in diag.message
    assert "eager" in diag.message
    # the guard that failed last, as torch's own warning says it ("last reason: 0/1: ..."), with its compile
    assert re.search(r"whose guard .*'x'.* \(of compile 0/1\) failed last", diag.message), diag.message
    # a size can be made dynamic: the advice says how
    assert diag.message.endswith(
        "make the changing size dynamic (torch._dynamo.mark_dynamic, or torch.compile(dynamic=True))"
    )
    # nu23 D7: the moment torch gave up is a record of its own (the timeline's row), not only a diagnostic: the
    # compile it refused (0/2; no compile window of that id: dynamo refuses before its compile callbacks run), when
    # (the record's start, after the last compile's phases), and what it means in Python's words
    (hit,) = report.recompile_limits
    assert (hit.compile_id, hit.function, hit.line, hit.limit, hit.value, hit.guard_of) == (
        "0/2",
        "_recompiling",
        _recompiling.__code__.co_firstlineno,
        "recompile_limit",
        2,
        "0/1",
    )
    assert "'x'" in hit.guard and hit.guard in diag.message
    last = report.compiles[-1]
    assert last.compile_id == "0/1" and hit.time_us >= max(p.start_us + p.duration_us for p in last.phases)
    assert hit.text.startswith(
        "torch stopped compiling _recompiling() at config.recompile_limit (2): later calls of _recompiling() whose "
        "inputs fit none of its compiles run eagerly (uncompiled)"
    )


def test_the_recompile_limit_hit_on_a_dtype_advises_what_can_be_done_about_a_dtype():
    """nu23: the limit hit on a dtype guard (``tensor 'x' dtype mismatch``) advised "make the changing input dynamic",
    which a dtype cannot be: the advice is by the kind of the guard that failed last."""

    def scenario():
        c = torch.compile(_recompiling)
        return [c(torch.ones(4, dtype=dt)) for dt in (torch.float32, torch.float64, torch.float16)]

    with torch._dynamo.config.patch(recompile_limit=2):
        plain, report = observe(scenario)
    (diag,) = [d for d in report.diagnostics if d.code == "recompile_limit"]
    assert re.search(r"whose guard .*'x' dtype mismatch.* failed last", diag.message), diag.message
    assert "dynamic" not in diag.message.split("failed last")[1].replace("cannot be made dynamic", ""), diag.message
    assert "a dtype cannot be made dynamic" in diag.message and "cast the inputs to one dtype" in diag.message


def test_a_compile_error_dynamo_swallowed_is_a_diagnostic():
    def scenario():
        return torch.compile(_recompiling)(torch.ones(3))

    with (
        torch._dynamo.config.patch(suppress_errors=True),
        torch._inductor.config.patch({"cpp.cxx": ("/nonexistent/c++",)}),
    ):
        plain, report = observe(scenario, failed=1)
    assert plain["graphs"] == 0  # the frame fell back to eager
    (diag,) = [d for d in report.diagnostics if d.code == "compile_error"]
    assert "_recompiling" in diag.message and "nonexistent" in diag.message
    assert "eager" in diag.message


def test_the_capture_compiles_the_same_code_and_leaves_no_folders_in_the_inductor_cache():
    """The capture turns off only the caches that would skip the Scheduler (FX graph, AOT autograd): the
    generated code is what torch writes without the lens, and compiling again under a new capture reuses the
    kernels' binaries instead of leaving a new temporary folder in the cache folder each time (which is what
    ``force_disable_caches`` did: gcc for every kernel, gigabytes over a day of captures)."""
    import os

    from torch._inductor.runtime.cache_dir_utils import cache_dir
    from torch._inductor.utils import run_and_get_code

    def code(text):  # but the first line: "# AOT ID: ['0_inference']", a counter of the process
        return re.sub(r"^# AOT ID: .*\n", "", text)

    x = torch.randn(33)
    torch._dynamo.reset()
    _, (plain_code, *_) = run_and_get_code(torch.compile(models.sin_cos), x)
    plain_code = code(plain_code)
    with inductor_lens.capture() as cap:
        torch.compile(models.sin_cos)(x)
    (compiled,) = cap.report.compiles
    assert code(compiled.output_code) == plain_code

    def temp_folders():  # force_disable_caches made one (tempfile.mkdtemp in the cache folder) per compile
        return {name for name in os.listdir(cache_dir()) if name.startswith("tmp")}

    before = temp_folders()
    for _ in range(2):
        with inductor_lens.capture() as again:
            torch.compile(models.sin_cos)(x)
        assert code(again.report.compiles[0].output_code) == plain_code  # compiled again, not a cache hit
    assert temp_folders() == before


def _frames_offered_to_dynamo(monkeypatch, run) -> collections.Counter:
    """The frames dynamo's frame hook was offered while ``run()`` ran, by file (torch's skip check sees each)."""
    import torch._dynamo.trace_rules as trace_rules

    seen: collections.Counter = collections.Counter()
    original = trace_rules.check_verbose

    def spy(obj, is_inlined_call=False, *args, **kwargs):
        if not is_inlined_call:
            code = getattr(obj, "f_code", obj)
            name = str(getattr(code, "co_filename", code))  # generated code is numbered per process
            seen[re.sub(r"<eval_with_key>\.\d+", "<eval_with_key>", re.sub(r"0x[0-9a-f]+", "0x?", name))] += 1
        return original(obj, is_inlined_call, *args, **kwargs)

    monkeypatch.setattr(trace_rules, "check_verbose", spy)
    try:
        run()
    finally:
        monkeypatch.undo()
    return seen


def _a_backward_under_a_compiled_step(monkeypatch, *configs, traced_too=False):
    """``loss.backward()`` inside a torch.compile'd training step (an MLP), run plain and under the lens, each under
    ``configs``: dynamo must never be offered a frame of the lens, nor any frame the plain run does not offer it
    (torch's own structured trace, which the lens turns on, costs frames of its own: its records' JSON, dataclasses,
    ``torch.distributed``; a user's TORCH_TRACE pays them, the lens may not: ``counters["frames"]`` said 61/66
    against 56/57), and the two give the same loss and gradients. ``traced_too``: a frame is allowed where a plain
    run with a handler on ``torch.__trace`` (as TORCH_TRACE has) offers it too. Returns the lens's report and the
    frames offered to dynamo, plain and under it."""
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(4, 8)

    def step():
        model.zero_grad()

        @torch.compile
        def train(x):
            loss = model(x).pow(2).mean()
            loss.backward()
            return loss

        return train(x).detach(), [p.grad.clone() for p in model.parameters()]

    def plain():
        torch._dynamo.reset()
        counters.clear()
        return step()

    def with_trace_handler():
        trace_log = logging.getLogger("torch.__trace")
        handler = logging.NullHandler()
        trace_log.addHandler(handler)
        try:
            return plain()
        finally:
            trace_log.removeHandler(handler)

    results = {}

    def lensed():
        torch._dynamo.reset()
        counters.clear()
        with inductor_lens.capture() as cap:
            results["lens"] = step()
        results["report"] = cap.report

    with contextlib.ExitStack() as stack:
        for config in configs:
            stack.enter_context(config)
        # torch.__trace as in a user's process: no handler (pytest's log capture puts its own there, and torch's
        # LazyTraceHandler with no folder takes itself off at its first record); put back after
        trace_handlers = logging.getLogger("torch.__trace").handlers
        stack.callback(trace_handlers.extend, list(trace_handlers))
        trace_handlers.clear()
        plain()  # warm: the first run imports what it needs (those imports' frames are offered too)
        base = _frames_offered_to_dynamo(monkeypatch, lambda: results.setdefault("plain", plain()))
        frames = dict(counters["frames"])
        traced = _frames_offered_to_dynamo(monkeypatch, with_trace_handler) if traced_too else {}
        lens = _frames_offered_to_dynamo(monkeypatch, lensed)
    lens_dir = os.path.dirname(os.path.abspath(inductor_lens.__file__))
    assert not [f for f in lens if f.startswith(lens_dir)], "dynamo was offered frames of the lens"
    beyond = {f: n - max(base.get(f, 0), traced.get(f, 0)) for f, n in lens.items()}
    assert not {f: n for f, n in beyond.items() if n > 0}, "frames offered beyond the plain run's"
    if not traced_too:
        assert dict(counters["frames"]) == frames, (frames, dict(counters["frames"]))
    (loss_plain, grads_plain), (loss_lens, grads_lens) = results["plain"], results["lens"]
    assert torch.equal(loss_plain, loss_lens) and all(torch.equal(a, b) for a, b in zip(grads_plain, grads_lens))
    return results["report"], base, lens


def test_compiled_autograd_never_offers_dynamo_a_frame_of_the_lens_and_names_the_backward(monkeypatch):
    """With compiled autograd, Inductor compiles inside ``.backward()``, while dynamo's frame hook is on: the
    lens's callbacks run there (``_a_backward_under_a_compiled_step``)."""
    # each run compiles whole, as the lens's does (a cache hit of the runs without it would skip Inductor's frames)
    report, base, lens = _a_backward_under_a_compiled_step(
        monkeypatch,
        torch._dynamo.config.patch(compiled_autograd=True),
        torch._inductor.config.patch(fx_graph_cache=False),
        torch._functorch.config.patch(enable_autograd_cache=False),
        traced_too=True,  # compiled autograd: 3 frames of torch (dynamo/utils.py, fx/graph.py) as TORCH_TRACE costs
    )
    assert not [f for f in lens if f.endswith("/logging/__init__.py") and lens[f] > base.get(f, 0)]
    ca = [c for c in report.compiles if c.compile_id.startswith("!")]
    assert len(ca) == 1, [c.id for c in report.compiles]
    (c,) = ca
    assert c.graph_kind == "backward" and c.trigger.kind == "compiled_autograd"
    assert c.frame == "backward (compiled autograd)" and c.label.startswith("backward(): backward graph")
    assert c.trigger.user_stack and c.trigger.user_stack[-1].code == "loss.backward()"
    # the structured trace's records of compiled autograd (ids "!A/F/N") join its graph
    assert c.kernels and c.graphs["post_grad"].code and c.guards and c.phases
    # its inputs by what they are (nu19 D2: they were arg0_1 ... arg7_1): dynamo's graph of it takes one list, whose
    # items compiled autograd hands to the forward's AOT backward (named as that backward names them) or accumulates
    # gradients into (the parameters, by identity)
    shown = {n.name: (n.role, n.display_name) for n in c.graphs["post_grad"].nodes if n.op == "placeholder"}
    assert shown == {
        "arg0_1": ("tangent", "gradient of output 1"),
        "arg1_1": ("input", "x"),
        "arg2_1": ("parameter", "model.2.weight"),
        "arg3_1": ("saved", "model.1 relu (saved)"),
        "arg4_1": ("saved", "model.2 addmm (saved)"),
        "arg5_1": ("parameter", "model.2.bias"),
        "arg6_1": ("parameter", "model.0.bias"),
        "arg7_1": ("parameter", "model.0.weight"),
    }, shown
    saved = next(n for n in c.graphs["post_grad"].nodes if n.name == "arg3_1")
    assert (
        saved.module_stack == ["model", "model.1"] and saved.original_op == "" and saved.user_stack
    )  # the forward's relu's
    # its outputs: the .grad of each parameter it accumulates into, as AOT's own backward names its outputs
    assert c.forward_inputs == ["model.2.weight", "model.2.bias", "model.0.bias", "model.0.weight"]
    assert sorted(c.output_names.values()) == [f"model.{p}.grad" for p in ("0.bias", "0.weight", "2.bias", "2.weight")]
    # its modules from the parameters its ops read and the gradients they make (torch records none), never deeper
    # than that shows: the pow's backward, of no module, gets none; the relu's (model.1), between 2's and 0's, model
    assert c.modules_inferred
    stacks = {n.name: (n.ops, n.module_stack) for n in c.fused_nodes}
    grads = {o: n.module_stack for n in c.fused_nodes for buf, o in c.output_names.items() if buf in n.writes}
    assert grads == {
        f"model.{p}.grad": ["model", f"model.{p[0]}"] for p in ("0.bias", "0.weight", "2.bias", "2.weight")
    }
    assert {n.name: n.module_stack for n in c.fused_nodes if "pow" in n.ops} == {
        n.name: [] for n in c.fused_nodes if "pow" in n.ops
    }
    assert [n.module_stack for n in c.fused_nodes if "where" in n.ops] == [["model"]], stacks
    # torch records no line for its ops: said as what it is, not "code inside torch" (nu19 D2), also on loading a
    # report that said that
    from inductor_lens.report import rules
    from inductor_lens.report.finish import derive_compile

    unlined = [n for n in c.fused_nodes if not n.user_lines and n.fx_nodes and not n.is_glue]
    assert unlined and {n.no_line_reason for n in unlined} == {rules.COMPILED_AUTOGRAD}
    old = dataclasses.replace(
        c, fused_nodes=[dataclasses.replace(n, no_line_reason=rules.INSIDE_TORCH) for n in unlined]
    )
    assert {n.no_line_reason for n in derive_compile(old).fused_nodes if n.name in {u.name for u in unlined}} == {
        rules.COMPILED_AUTOGRAD
    }
    # the user's AOT-autograd cache was off already: the capture changed nothing there, and says nothing
    assert "ca_cache_off" not in [d.code for d in report.diagnostics]


def test_compiled_autograd_under_a_cache_the_capture_turned_off_is_said():
    """nu19 D1: with compiled autograd, torch traces another backward where the AOT-autograd cache hits (a warm
    cache), so the capture, which keeps that cache off, shows a cold-cache run's backward: said where it turned the
    cache off (``Raw.caches_off``, recorded by ``adapter._caches_off``) and compiled autograd compiled."""
    from types import SimpleNamespace

    from inductor_lens.capturing import adapter, build
    from inductor_lens.capturing.raw import Raw

    raw = Raw(t0_us=0.0)
    with torch._functorch.config.patch(enable_autograd_cache=True), torch._inductor.config.patch(fx_graph_cache=True):
        prior = adapter._caches_off(SimpleNamespace(raw=raw))
        try:
            assert not torch._functorch.config.enable_autograd_cache
        finally:
            adapter._caches_restore(prior)
        assert torch._functorch.config.enable_autograd_cache
    assert {"enable_autograd_cache", "fx_graph_cache"} <= set(raw.caches_off)
    ca, plain = SimpleNamespace(compile_id="!0/1/0"), SimpleNamespace(compile_id="0/0")
    (d,) = build._cache_notes(raw, [plain, ca])
    assert d.code == "ca_cache_off" and "cold cache" in d.message
    assert build._cache_notes(raw, [plain]) == [] and build._cache_notes(Raw(t0_us=0.0), [ca]) == []


def test_a_float_argument_torch_specialized_after_a_restart_is_no_input_of_the_graph_shown():
    """A float argument that changes becomes dynamic, and AOT's tensorify pass, unable to keep it symbolic,
    specializes it and has dynamo trace the frame again (``TensorifyScalarRestartAnalysis``). The FX view showed
    the first attempt's graph (a ``theta`` placeholder: "a runtime input"), beside the code of the graph Inductor
    compiled, which has none; the recompile that follows said its guard came from
    ``_dynamo/output_graph.py:3375 in remove_tensorify_specialized_graphargs``."""

    def scaled(x, theta: float):
        return x * (theta ** torch.arange(x.shape[-1]).float())

    def scenario():
        torch._dynamo.reset()
        f = torch.compile(scaled)
        x = torch.arange(8.0).reshape(2, 4)
        return [f(x, theta) for theta in (2.0, 2.0, 3.0, 5.0)]

    plain, report = observe(scenario)
    for c in report.compiles:
        shown = [n.name for n in c.graphs["dynamo"].nodes if n.op == "placeholder"]
        signature = c.graphs["dynamo"].code.split("def forward(self, ", 1)[1].split(")", 1)[0]
        assert shown == ["l_x_"] and "L_theta_" not in signature, (c.id, shown, signature)
    last = report.compiles[-1]
    assert last.trigger.kind == "recompile" and "theta == 3.0" in last.why
    assert "made by torch: it could not keep this float argument symbolic" in last.why, last.why
    assert "output_graph.py" not in last.why


def test_a_lazy_backward_under_a_compiled_step_never_offers_dynamo_a_frame_of_the_lens(monkeypatch):
    """``loss.backward()`` inside a torch.compile'd step (a graph break): the lazy backward compiles while dynamo's
    frame hook is on, and torch runs its compile callbacks (``install_callbacks``) before its own compile turns the
    hook off. The lens's callbacks ran there in sight: dynamo was offered ``adapter.py``'s ``start``, ``_each``,
    ``on_start``, ``stacks.py``'s ``frames_of`` and the stdlib frames under them (``traceback``, ``tokenize``,
    ``inspect``), about 36 frames a compile. Now none, and no frame beyond what torch's structured trace costs."""
    # each run compiles whole, as the lens's does (a cache hit of the runs without it would skip Inductor's frames)
    report, _, _ = _a_backward_under_a_compiled_step(
        monkeypatch,
        torch._inductor.config.patch(fx_graph_cache=False),
        torch._functorch.config.patch(enable_autograd_cache=False),
    )
    lazy = [c for c in report.compiles if c.trigger.kind == "lazy_backward"]
    assert len(lazy) == 1 and lazy[0].trigger.user_stack[-1].code == "loss.backward()"


def test_module_compile_of_torchs_own_modules_is_told_as_torch_did_it():
    """Regional compilation by ``block.compile()``: Module.compile() compiles torch's ``Module._call_impl``, which
    dynamo skips, then the module's forward; nn.Sequential's is torch's own, skipped too on torch 2.13 (pytorch
    #150915): nothing compiles, and torch says so only in a debug log line. The lens names the call, what dynamo
    would not trace and what to do (``call_skipped``), not "no torch.compile()d function was called". Where torch
    compiles it (a torch with the fix), the report holds those compiles and no skip. Either way the compile calls
    name the modules, not ``Module._call_impl``."""
    torch.manual_seed(0)
    blocks = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU()) for _ in range(2)])

    def scenario():
        for b in blocks:
            b.compile()
        return blocks(torch.randn(4, 16, generator=torch.Generator().manual_seed(0)))

    plain, report = observe(scenario, skipped=True)
    assert [c.target for c in report.compile_calls] == ["Sequential", "Sequential"]
    skipped = [d.message for d in report.diagnostics if d.code == "call_skipped"]
    if plain["graphs"] == 0 and _skips_told():
        (message,) = skipped  # the blocks share their code: dynamo is offered it once
        assert "test_observer.py:" in message and "blocks(torch.randn(4, 16" in message, message
        assert "Sequential.forward (torch/nn/modules/container.py:" in message, message
        assert "torch.compile(module)" in message, message
        assert "nothing_compiled" not in [d.code for d in report.diagnostics]
    else:
        assert not skipped, skipped


def test_module_compile_of_a_users_module_compiles_and_skips_nothing():
    """The same call on a module whose forward is the user's: dynamo skips ``_call_impl`` and traces the forward."""
    torch.manual_seed(0)
    model = models.MLP()

    def scenario():
        model.compile()
        return model(torch.randn(4, 16, generator=torch.Generator().manual_seed(0)))

    plain, report = observe(scenario)
    assert plain["graphs"] == 1
    assert [c.target for c in report.compile_calls] == ["MLP"]
    assert not [d for d in report.diagnostics if d.code == "call_skipped"]


# Whether this torch tells a skipped frame where the lens can hear it (``CatchErrorsWrapper._handle_skip``, 2.13+):
# torch 2.11 says it only in a debug log line, and the lens tells no skipped call there.
def _skips_told() -> bool:
    from torch._dynamo import convert_frame  # not at collection: dynamo's import is seconds

    return hasattr(convert_frame.CatchErrorsWrapper, "_handle_skip")


class _Net(torch.nn.Module):
    """A block of the user's and a head of torch's own modules, each compiled by ``Module.compile()``."""

    def __init__(self):
        super().__init__()
        self.block = models.MLP()
        self.head = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.GELU())

    def forward(self, x):
        y = self.block(x)
        return self.head(y)  # HEAD_CALL


def test_of_two_module_compiles_the_skipped_one_is_named_at_its_own_call():
    """``block.compile(); head.compile()``: dynamo skips ``Module._call_impl`` once, at the block's call (then it
    traces the block's forward), and never offers it again; at the head's call it is offered nn.Sequential's forward
    behind it, and skips that. The skip is the head's call, at its own line, not the block's that compiled."""
    torch.manual_seed(0)
    net = _Net()

    def scenario():
        net.block.compile()
        net.head.compile()
        return net(torch.randn(4, 16, generator=torch.Generator().manual_seed(0)))

    plain, report = observe(scenario, skipped=True)
    skipped = [d.message for d in report.diagnostics if d.code == "call_skipped"]
    if len(report.compiles) == 1 and _skips_told():  # torch 2.13: the block compiled, the head did not
        (message,) = skipped
        assert "return self.head(y)  # HEAD_CALL" in message and "Sequential.forward" in message, message
    else:
        assert not skipped, skipped


def test_the_decorator_torch_compile_returns_names_the_users_function():
    """``torch.compile(dynamic=False)(f)``: torch.compile returns a decorator, which calls torch.compile from
    torch/__init__.py with ``f``; that call is the user's (it was taken for torch's own and dropped: "torch.compile(?)
    ... only wrapped ?")."""
    with inductor_lens.capture() as cap:
        torch.compile(dynamic=False)(_f)(torch.ones(8))
    assert [c.target for c in cap.report.compile_calls] == ["_f"]
    assert "test_observer.py" in cap.report.compile_calls[0].line


def test_torchs_own_torch_compile_is_not_the_users_call():
    """flex_attention run eagerly compiles its higher-order op with torch.compile(backend="eager") itself: not the
    user's call, so no "used backend 'eager'" warning (the trial's FlexAttention page had one)."""
    from torch.nn.attention.flex_attention import flex_attention

    q, k, v = (torch.randn(1, 1, 16, 8, generator=torch.Generator().manual_seed(i)) for i in range(3))
    with inductor_lens.capture() as cap:
        out = flex_attention(q, k, v)
    assert out.shape == (1, 1, 16, 8)
    report = cap.report
    assert report.compile_calls == [] and "other_backend" not in [d.code for d in report.diagnostics]


def test_an_in_place_write_of_an_input_is_named_and_the_compile_is_the_same():
    """``x.add_(1)`` on the caller's tensor: Inductor writes the graph input in place (a copy back that AOT
    Autograd adds, fused into the kernel). The fused node names it, by the argument's name (``FusedNode.mutates``,
    ``in_place``), and the lens changes nothing torch does: same graphs, guards and results (the input mutated
    the same way); a buffer made in the graph and written in place (``index_put_``) is named as such."""

    def f(x, y, idx):
        x.add_(1)
        z = y * 2
        z.index_put_((idx,), torch.ones(2), accumulate=True)
        return x * z

    def scenario():
        c = torch.compile(f)
        x = torch.arange(8, dtype=torch.float32)
        out = c(x, torch.ones(8), torch.tensor([1, 3]))
        return [out, x]  # x: the caller's tensor, written in place

    plain, report = observe(scenario)
    (c,) = report.compiles
    inputs = {n.name: n for n in c.graphs["post_grad"].nodes if n.op == "placeholder"}
    writers = {b: n for n in c.fused_nodes for b in n.mutates}
    (x_buffer,) = [b for b in writers if b in inputs]
    assert inputs[x_buffer].display_name == "x" and inputs[x_buffer].role == "input"
    assert writers[x_buffer].in_place.startswith(f"Writes x in place (graph input {x_buffer}): the tensor your code")
    made = [b for b in writers if b not in inputs]
    assert made and all(b.startswith("buf") for b in made), writers
    assert any(f"Writes {b} in place (a buffer made earlier in this graph)" in writers[b].in_place for b in made)


def test_an_optimizer_steps_parameters_are_not_named_as_their_gradients():
    """A compiled ``SGD.step`` with momentum: dynamo holds the parameters and their momentum buffers as the graph
    module's own tensors (``get_attr``), which AOT Autograd lifts ahead of the placeholders, so the post-grad graph
    takes those first (``arg0_1``...) and the gradients after. The gradients' names go to the gradients (they went
    to the first inputs, and the step "wrote the gradients in place"); the lifted tensors, written in place, are
    named in the order AOT lifted them, which the capture reads from the graph module (``torchread.mark_lifted``):
    a parameter by the name the compiled forward of the same capture took it under (``fc.weight``, not the
    optimizer's ``self.param_groups[0]['params'][0]``), and its gradient so too (``fc.weight.grad``); a momentum
    buffer by its key in the optimizer's state and its parameter (``momentum_buffer of fc.weight``: dynamo's
    source, ``self.state[list(dict.keys(self.state))[1]]['momentum_buffer']``, says neither which parameter nor,
    for some entries, which key). Each parameter's name is the live tensor of that name, and each update reads the
    parameter, the gradient and the momentum buffer of one name. A momentum buffer is no buffer of the user's
    model: an ``attribute``."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x)

    torch.manual_seed(0)
    m = Net()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)  # one optimizer for both runs: its guards name ids
    m(torch.ones(2, 4)).sum().backward()
    opt.step()  # eager: the momentum buffers exist before the compiled step reads them
    start = [p.detach().clone() for p in m.parameters()]
    momentum = [opt.state[p]["momentum_buffer"].clone() for p in m.parameters()]

    def scenario():
        with torch.no_grad():
            for p, p0, b0 in zip(m.parameters(), start, momentum):
                p.copy_(p0)
                opt.state[p]["momentum_buffer"].copy_(b0)
        opt.zero_grad()
        torch.compile(m)(torch.ones(2, 4)).sum().backward()
        torch.compile(opt.step)()
        return [p.detach().clone() for p in m.parameters()] + [
            opt.state[p]["momentum_buffer"].clone() for p in m.parameters()
        ]

    plain, report = observe(scenario)
    (c,) = [c for c in report.compiles if any(n.mutates for n in c.fused_nodes)]
    inputs = {n.name: n for n in c.graphs["post_grad"].nodes if n.op == "placeholder"}
    grads = {n.name: n.display_name for n in inputs.values() if n.display_name.endswith(".grad")}
    written = {b for n in c.fused_nodes for b in n.mutates}
    assert len(grads) == 2 and len(written) == 4 and not written & set(grads), (grads, written)
    params = {b for b in written if inputs[b].role == "parameter"}
    bufs = {b for b in written if inputs[b].role == "attribute"}
    assert len(params) == len(bufs) == 2, {b: (inputs[b].role, inputs[b].display_name) for b in written}
    # what is copied into each parameter is computed from exactly one gradient, the one of that very name
    post = {n.name: n for n in c.graphs["post_grad"].nodes}

    def reads(name, seen):
        for i in post[name].inputs:
            if i not in seen:
                seen.add(i)
                reads(i, seen)
        return seen

    copies = [n for n in post.values() if n.short_op == "copy_" and n.inputs[0] in params]
    assert sorted(n.inputs[0] for n in copies) == sorted(params)
    for n in copies:
        (grad,) = reads(n.inputs[1], set()) & set(grads)
        assert inputs[grad].display_name == inputs[n.inputs[0]].display_name + ".grad", n
        (buf,) = reads(n.inputs[1], set()) & bufs  # and from one momentum buffer, of the parameter's shape
        assert inputs[buf].shape == inputs[n.inputs[0]].shape, (inputs[buf], inputs[n.inputs[0]])
        # named by its key in the optimizer's state and the parameter it belongs to: the one its update writes
        assert inputs[buf].display_name == f"momentum_buffer of {inputs[n.inputs[0]].display_name}", inputs[buf]
    live = dict(m.named_parameters())
    assert sorted(inputs[b].display_name for b in params) == ["fc.bias", "fc.weight"]
    for b in params:
        assert inputs[b].shape == list(live[inputs[b].display_name].shape), inputs[b]
    assert sorted(grads.values()) == ["fc.bias.grad", "fc.weight.grad"]
    assert sorted(inputs[b].shape for b in params) == sorted(inputs[b].shape for b in bufs) == [[3], [3, 4]]
    assert all(".grad" not in n.in_place for n in c.fused_nodes)
    said = " ".join(n.in_place for n in c.fused_nodes)
    for b in params:
        assert f"Writes {inputs[b].display_name} in place (graph input {b}, a parameter of your model)." in said
    for b in bufs:
        assert f"Writes {inputs[b].display_name} in place (graph input {b})." in said
