"""Settings users bring (issue 22): each captured for real, on the CPU, and checked against torch's own record."""

from __future__ import annotations

import functools
import inspect
import re

import pytest
import torch

import inductor_lens


def _returned_buffers(output_code: str) -> list[str]:
    """The names the compiled module's ``call()`` returns, read from torch's output code."""
    (ret,) = re.findall(r"^        return \(([^)]*)\)", output_code, flags=re.M)[:1]
    return [name.strip() for name in ret.split(",") if name.strip()]


class _MLP(torch.nn.Module):
    """Linear, ReLU, Linear, each linear on a line of its own (a kernel's lines are checked against its ops')."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h)


@functools.cache
def _frozen_mlp(autotune_local_cache=None, gemm_backends=None, **compile_options):
    """The report of an inference MLP (Linear, ReLU, Linear) compiled under ``freezing`` (and torch's autotune cache
    on or off where ``autotune_local_cache`` says, the GEMM backends max-autotune may choose from where
    ``gemm_backends`` does), its result checked (one compile per set of settings for the tests of this file: the
    report is immutable)."""
    torch.manual_seed(0)
    model = _MLP().eval()
    x = torch.randn(4, 16)
    cache = {} if autotune_local_cache is None else {"autotune_local_cache": autotune_local_cache}
    if gemm_backends is not None:
        cache["max_autotune_gemm_backends"] = gemm_backends
    with torch.no_grad():
        expected = model(x)
        with torch._inductor.config.patch(freezing=True, **cache), inductor_lens.capture() as cap:
            out = torch.compile(model, **compile_options)(x)
    torch.testing.assert_close(out, expected)
    return cap.report


@pytest.fixture(scope="module")
def tuned_mlp():
    """The frozen MLP under max-autotune, twice, each with how many autotunings torch benchmarked (its counter): first
    with torch's autotune cache off (every choice benchmarked; each autotuning writes the cache anew, with its own
    times only, so the last one's are what it holds), then with it on, so that the second compile finds some there."""
    from torch._dynamo.utils import counters

    runs = []
    for on in (False, True):
        torch._dynamo.reset()
        before = counters["inductor"]["select_algorithm_autotune"]
        report = _frozen_mlp(autotune_local_cache=on, mode="max-autotune-no-cudagraphs")
        runs.append((report, counters["inductor"]["select_algorithm_autotune"] - before))
    return runs


def test_cpu_inference_under_freezing_and_max_autotune_keeps_its_outputs_and_its_autotuning(tuned_mlp):
    """``mode="max-autotune-no-cudagraphs"`` + ``freezing`` + ``no_grad``: autotuning runs during lowering,
    before the graph has outputs; the capture used to fail reading them (``hook_failed``)."""
    report = tuned_mlp[0][0]
    assert not [d for d in report.diagnostics if d.code in ("hook_failed", "autotune_unlinked")], report.diagnostics
    (c,) = report.compiles
    assert c.graph_outputs == _returned_buffers(c.output_code)
    tuned = [k for k in c.kernels if (k.metadata or {}).get("autotune")]
    assert tuned and all(k.metadata["autotune"]["op"] == "packed_linear" for k in tuned)
    # the settings it compiled under are recorded; something was tuned, so there is nothing to explain
    assert c.autotune_mode.max_autotune and c.autotune_mode.freezing and c.autotune_note == ""
    assert c.custom_passes == [] and c.custom_pass_note == ""  # no graph pass of the user's
    # each op is one kernel's: the second GEMM template's origins also hold the first one and the relu it reads (torch
    # names it ..._addmm_relu_1), which the first kernel computed; its epilogue is no relu
    # (where autotuning picks MKL's call over the template, as on torch 2.15, a linear's bias add is a kernel of its
    # own after the call: that op is in both, the call and its remainder)
    called = {f for k in c.kernels if k.kind == "extern" for f in k.fx_nodes}
    ops = [f for n in c.fused_nodes for f in n.fx_nodes]
    assert not {f for f in ops if ops.count(f) > 1} - called, [(n.name, n.fx_nodes) for n in c.fused_nodes]
    listed = [f for k in c.kernels for f in k.fx_nodes]  # (which kernels are templates is what autotuning measured)
    assert not {f for f in listed if listed.count(f) > 1} - called, [(k.name, k.fx_nodes) for k in c.kernels]
    relu = [k.name for k in c.kernels if "relu" in k.fx_nodes]
    assert [k.name for k in tuned if "relu" in k.metadata["autotune"]["epilogue"]] in ([], relu)
    # a kernel of the C++ GEMM template says it came from that choice (it said "not recorded")
    for k in tuned:
        if k.kind == "template":
            assert k.metadata["autotune"]["chosen"].startswith("cpp_"), k.metadata["autotune"]


def test_autotune_times_read_from_torchs_cache_are_not_said_to_be_benchmarked(tuned_mlp):
    """With a warm autotune cache torch benchmarks nothing (``PersistentCache.lookup`` returns the cached times
    and ``select_algorithm_autotune`` stays 0), yet feeds the times to its feedback savers: the panel said
    "2 choices benchmarked" of another run's times. The capture records which it was."""
    (benchmarked, ran_first), (cached, ran_second) = tuned_mlp
    timed = [
        [k.metadata["autotune"].get("timed") for k in r.compiles[0].kernels if "autotune" in k.metadata]
        for r in (benchmarked, cached)
    ]
    assert timed[0] == ["benchmarked", "benchmarked"] and ran_first == 2, timed
    # torch benchmarked one op of the second compile (the counter), and found the other's times in its cache
    assert sorted(timed[1]) == ["benchmarked", "cache"] and ran_second == 1, timed
    first = next(k for k in benchmarked.compiles[0].kernels if k.metadata.get("autotune"))
    second = next(k for k in cached.compiles[0].kernels if k.metadata.get("autotune", {}).get("timed") == "cache")
    # the cached times are those the first compile measured for that op, which torch wrote there
    measured = [
        [ch["time_ms"] for ch in k.metadata["autotune"]["choices"]]
        for k in benchmarked.compiles[0].kernels
        if "autotune" in k.metadata
    ]
    assert [ch["time_ms"] for ch in second.metadata["autotune"]["choices"]] in measured
    assert first.metadata["autotune"]["heading"] == "packed_linear · 2 choices benchmarked"
    assert first.metadata["autotune"]["timed_note"] == ""
    assert second.metadata["autotune"]["heading"] == "packed_linear · 2 choices, cached times"
    assert second.metadata["autotune"]["timed_note"].startswith(
        "From torch's autotune cache (timed by an earlier run, not in this one)"
    )


def test_a_template_that_fused_its_epilogue_says_so(tuned_mlp):
    """The C++ GEMM template of fc1 computes the relu after it in the same kernel (the output code calls no kernel of
    its own for relu): the panel said "Inductor used the fastest choice" and nothing of the relu inside a GEMM. The
    template of fc2 holds no op after its matmul: its origins hold the frozen bias (a parameter, ``get_attr``), which
    was its "epilogue"."""
    # which choice wins is timing (close on a busy machine): each tuned kernel is checked for what it is
    for r, _ in tuned_mlp:
        c = r.compiles[0]
        for k in c.kernels:
            a = k.metadata.get("autotune")
            if not a:
                continue
            if not (a["chosen"] or "").startswith("cpp_"):  # MKL's call won: nothing fused into a template
                assert a["fusion_note"] == "", (k.name, a)
                continue
            # torch's output code: the kernel runs the template's micro GEMM; the relu is in it or in no template
            assert "kernel_micro_gemm" in k.source and f"{k.name}(" in c.output_code
            if "relu" not in k.fx_nodes:  # fc2's: no op after its matmul (its origins hold the frozen bias)
                assert a["epilogue"] == [] and a["fusion_note"] == "", (k.name, a)
            elif a["chosen"] == a["fastest"]:
                assert a["epilogue"] == ["relu"]
                assert a["fusion_note"] == (
                    "The template fused the epilogue relu: one kernel, where the library call (_mkl_linear) needs "
                    "two (the call, then a kernel for relu)."
                )
            else:
                assert a["fusion_note"].startswith("It wins overall because the template fuses the epilogue (relu)")


_FC1_LINE = inspect.getsourcelines(_MLP.forward)[1] + 1


def test_a_kernels_lines_are_those_of_the_ops_it_computes(tuned_mlp):
    """A kernel's (and its only fused node's) lines are its own ops' (nu18 O-b): Inductor gives a kernel the stack
    traces of all its origins, and a C++ GEMM template reading ``relu(fc1(x))``, or a frozen linear's bias add after
    MKL's call, holds fc1 and the relu there too (the capture drops those ops from the kernel: the kernel before it
    computed them), so fc2's template also claimed the relu's line (ReLU's, here inside torch)."""
    for c in [r.compiles[0] for r, _ in tuned_mlp] + _frozen_mlp().compiles:
        fx = {n.name: n for n in c.graphs["post_grad"].nodes}
        assert {f.line for k in c.kernels for f in k.user_lines} == {_FC1_LINE, _FC1_LINE + 1}
        for k in c.kernels:
            own = {(f.file, f.line) for name in k.fx_nodes if name in fx for f in fx[name].user_stack}
            assert {(f.file, f.line) for f in k.user_lines} <= own, (k.name, k.fx_nodes, k.user_lines)
            for n in c.fused_nodes:
                if n.kernel == k.name and len(k.fused_nodes) == 1:
                    assert n.user_lines == k.user_lines, n.name


def test_a_frozen_linear_after_another_is_its_own_op_only():
    """Under ``freezing`` a Linear is MKL's ``mkl._mkl_linear``, a fallback call with no ``origin_node``: the second
    one's origins also hold the first one and the relu between them (the ops of its input), so its box and kernel
    listed both linears, and the first linear's op was in two kernels."""
    (c,) = _frozen_mlp().compiles
    linears = [k for k in c.kernels if k.kind == "extern"]
    assert [k.fx_nodes for k in linears] == [["_mkl_linear_1"], ["_mkl_linear"]], [
        (k.name, k.fx_nodes) for k in linears
    ]
    (first, second) = [n for n in c.fused_nodes if n.kernel in {k.name for k in linears}]
    assert (first.ops, second.ops) == (["_mkl_linear"], ["_mkl_linear"])
    # the second linear's bias add, a kernel of its own after MKL's call: Inductor's origins of it also hold the relu
    # that the kernel after the first call computed and wrote (and that this one only reads, through the call): it is
    # that linear's, with its line, not the relu's
    (bias,) = [n for n in c.fused_nodes if n.kind != "extern" and c.fused_nodes.index(n) > c.fused_nodes.index(second)]
    assert bias.fx_nodes == ["_mkl_linear"] and bias.ops == ["_mkl_linear"], (bias.name, bias.fx_nodes)
    relu = [n.name for n in c.fused_nodes if "relu" in n.ops]
    assert len(relu) == 1, relu
    assert [f.line for f in bias.user_lines] == [f.line for f in second.user_lines]


def test_a_frozen_graphs_kernels_count_the_weights_they_read():
    """Under ``freezing`` the weights are graph constants (``_frozen_param0``...), not graph inputs, and Inductor's
    accounting, which sizes only buffers and graph inputs, left them out: MKL's linear "read" 256 B, the input
    alone, and the Memory view's inputs left them out too (nu18 D6). Each kernel now reads its constants: the first
    linear x (4 x 16) and its weight (32 x 16), MKL's packed copy of that weight left out (the call reads one of the
    two); the relu after it the linear's result and the bias. The graph holds them all, the packed copies at the size
    MKL packs them to (``mkldnn._nbytes``, asked of MKL here for the same shapes): the Memory view says them apart
    from the inputs."""
    (c,) = _frozen_mlp().compiles
    f32 = 4
    linears = [k for k in c.kernels if k.kind == "extern"]
    assert [k.cost.bytes_read for k in linears] == [(4 * 16 + 32 * 16) * f32, (4 * 32 + 8 * 32) * f32], [
        (k.name, k.cost) for k in linears
    ]
    assert "MKL's packed copy of the weight" in linears[0].cost.source, linears[0].cost.source
    relu = next(k for k in c.kernels if "relu" in k.fx_nodes)
    assert relu.cost.bytes_read == (4 * 32 + 32) * f32, relu.cost
    assert "graph constants it reads" in relu.cost.source, relu.cost.source
    packed = sum(
        torch.ops.mkldnn._nbytes(torch.ops.mkl._mkl_reorder_linear_weight(torch.zeros(out, into), 4))
        for out, into in ((32, 16), (8, 32))
    )
    # (the second bias, 8 values, is no constant: Inductor wrote its values into the last kernel's code)
    assert c.memory.constant_bytes == (32 * 16 + 32 + 8 * 32) * f32 + packed, c.memory.constant_bytes
    assert c.memory.input_bytes == 4 * 16 * f32


def test_an_embedding_counts_the_rows_it_gathers_not_its_whole_table():
    """An embedding fused with what follows (``cpp_fused_add_embedding_index_native_layer_norm_0``) was counted as
    reading its whole table, Inductor's accounting of a fused kernel (nu18 O-g: 12.8 KiB for 10 rows of a 100 x 32
    table). It reads one row per index: 10 x 32 x 4 B, an upper bound, said in the source; so too for a frozen table
    (a graph constant) and for a table passed in (``table[ids]``, a graph input). Reads by hand: ids 10 x 8 B, two
    tables' 10 rows, LayerNorm's weight and bias."""

    class Lookup(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.ln = torch.nn.Embedding(100, 32), torch.nn.LayerNorm(32)

        def forward(self, ids, table):
            return self.ln(self.emb(ids) + table[ids])

    torch.manual_seed(0)
    model, ids, table = Lookup().eval(), torch.randint(0, 100, (2, 5)), torch.randn(100, 32)
    with torch.no_grad():
        expected = model(ids, table)
        with torch._inductor.config.patch(freezing=True), inductor_lens.capture() as cap:
            out = torch.compile(model)(ids, table)
    torch.testing.assert_close(out, expected)
    (c,) = cap.report.compiles
    (k,) = c.kernels
    rows = 10 * 32 * 4
    assert k.cost.bytes_read == 10 * 8 + 2 * rows + 2 * 32 * 4, k.cost
    assert "gathered through an index" in k.cost.source and "not the whole 12,800 B Inductor counts" in k.cost.source
    assert "(a graph constant) gathered through an index" in k.cost.source, k.cost.source
    # the graph holds the whole frozen table
    assert (c.memory.constant_bytes, c.memory.input_bytes) == ((100 * 32 + 2 * 32) * 4, 10 * 8 + 100 * 32 * 4)


def test_max_autotune_that_tuned_nothing_says_why():
    """The same model under max-autotune without freezing: its weights are graph inputs, so Inductor offers no
    C++ GEMM template (``use_cpp_gemm_template`` wants a constant weight), has ATen's addmm alone to choose from,
    benchmarks nothing and keeps it. The report showed no choice and no word why; the compile now says so, and
    what would make it tune (with freezing, the test above, it tunes)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    with torch.no_grad(), inductor_lens.capture() as cap:
        torch.compile(model, mode="max-autotune-no-cudagraphs")(torch.randn(4, 16))
    (c,) = cap.report.compiles
    assert not [k for k in c.kernels if (k.metadata or {}).get("autotune")]
    assert c.autotune_mode.max_autotune and not c.autotune_mode.freezing
    assert c.autotune_note.startswith("max-autotune was on, but Inductor had no implementation of these 2 calls")
    assert "freezing = True" in c.autotune_note
    # and a compile without max-autotune has nothing to explain
    with torch.no_grad(), inductor_lens.capture() as plain:
        torch.compile(model)(torch.randn(4, 16))
    (p,) = plain.report.compiles
    assert not p.autotune_mode.max_autotune and p.autotune_note == ""


def test_a_compile_interrupted_before_its_module_loaded_is_marked_incomplete(monkeypatch):
    """Ctrl-C during the C++ build (here: at the load of the compiled module, where the builds are waited
    for): the kernels were generated but never ran; the report must not show the compile as complete."""
    from torch._inductor import codecache

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    x = torch.randn(64)
    cap = inductor_lens.capture()
    try:
        with cap:
            monkeypatch.setattr(codecache.PyCodeCache, "load_by_key_path", interrupted)
            torch.compile(lambda t: torch.sin(t) ** 2 + torch.cos(t) ** 2)(x)
    except KeyboardInterrupt:
        pass
    finally:
        monkeypatch.undo()
    (c,) = cap.report.compiles
    assert c.kernels and not c.complete and c.label.endswith("(did not finish)")
    assert [d.code for d in cap.report.diagnostics].count("compile_incomplete") == 1
    # and a compile that finished says nothing of the kind
    with inductor_lens.capture() as ok:
        torch.compile(lambda t: torch.sin(t) + 1)(x)
    assert all(c.complete for c in ok.report.compiles) and "compile_incomplete" not in [
        d.code for d in ok.report.diagnostics
    ]


def test_a_transformers_model_is_named_with_its_own_module_paths_and_argument_names():
    """transformers 5 wraps each model's forward in a decorator (``wrapped_func(*args, **kwargs)``): the
    compile was named ``wrapped_func()``, paths ``0.model.layers.0``, the user's ``input_ids`` ``args[1]``."""
    transformers = __import__("pytest").importorskip("transformers")
    cfg = transformers.LlamaConfig(
        vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, 64, (1, 8))
    with torch.no_grad():
        report = inductor_lens.inspect(model, ids)
    (c,) = report.compiles
    assert c.frame_label.startswith("forward()") and "wrapped_func" not in c.label
    inputs = {n.display_name: n.role for n in c.graphs["dynamo"].nodes if n.op == "placeholder"}
    assert inputs["input_ids"] == "input"
    assert inputs["model.embed_tokens.weight"] == "parameter" and "lm_head.weight" in inputs
    paths = {p for n in c.fused_nodes for p in n.module_stack}
    assert "model.layers.0.mlp" in paths and not [p for p in paths if p.startswith("0.")], sorted(paths)


def test_a_forward_decorated_by_a_wrapper_taking_self_and_varargs_is_named_as_forward():
    """transformers 5.17 wraps forward as ``wrapper(self, *args, **kwargs)``: dynamo traces ``wrapper`` and
    sees the user's first argument as ``args[0]``; the lens names them as the user wrote them."""
    import functools

    def decorated(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        wrapper.__name__ = "wrapper"  # what dynamo names the frame (functools.wraps copied fn's name)
        wrapper.__code__ = wrapper.__code__.replace(co_name="wrapper")
        return wrapper

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)

        @decorated
        def forward(self, features, scale=1.0):
            return torch.relu(self.fc(features)) * scale

    with torch.no_grad():
        report = inductor_lens.inspect(Net(), torch.randn(2, 8))
    (c,) = report.compiles
    # the module's class, as a forward without the decorator is named (it said "forward()" for every model)
    assert c.frame == "Net.forward (via the wrapper decorator)" and c.label.startswith("Net.forward():"), c.label
    inputs = {n.display_name: n.role for n in c.graphs["dynamo"].nodes if n.op == "placeholder"}
    assert inputs.get("features") == "input" and inputs.get("fc.weight") == "parameter", inputs


def test_torch_cond_branches_are_subgraphs_of_a_compile_that_finished():
    """``torch.cond``: Inductor lowers each branch as a subgraph of the graph that calls it and writes their code into
    that graph's output code. The report said both branches "did not finish" (their own module is never loaded),
    flagged the false branch's kernel as sourceless and the parent's copy of it as unexplained, and warned that
    torch.compile ran with backend 'eager' (torch.cond's own call, tracing a branch)."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 4)

    def f(x):
        p = x.mean(0)
        return torch.cond(p.sum() > 0, lambda p: lin(p).relu(), lambda p: -lin(p), (p,))

    x = torch.randn(4, 8)
    with torch.no_grad():
        expected = f(x)
        with inductor_lens.capture() as cap:
            out = torch.compile(f)(x)
    torch.testing.assert_close(out, expected)
    report = cap.report
    # (dynamo_reset, last: what the earlier tests of the process compiled, by test order)
    assert [d.code for d in report.diagnostics if d.code != "dynamo_reset"] == [], report.diagnostics
    assert [c.backend for c in report.compile_calls] == ["inductor"]
    subs = {c.subgraph: c for c in report.compiles if c.subgraph}
    assert set(subs) == {"true_graph_0", "false_graph_0"}
    assert all(c.complete for c in report.compiles)
    for c in subs.values():
        assert c.kernels and all(k.language != "other" for k in c.kernels), c.id
        assert c.frame_label == f"{c.subgraph} (a subgraph)" and c.graph_note.startswith(f"A subgraph ({c.subgraph})")
    # the call of the branches is a box of its own (it was glue, drawn as an edge), which says what it runs
    parent = next(c for c in report.compiles if not c.subgraph)
    (call,) = [n for n in parent.fused_nodes if "cond" in n.ops]
    assert not call.is_glue and call.kernel is None
    # the predicate (``gt``) is computed by a kernel before it: the call's box does not list it again
    assert (call.label, call.ops) == ("cond → true_graph_0 | false_graph_0", ["cond"]), call.label
    (pred,) = [n for n in parent.fused_nodes if "gt" in n.ops]
    assert pred.kernel and pred.kind != "extern"
    assert "torch.cond runs one of true_graph_0, false_graph_0 here" in call.no_kernel_reason
    # its panel links to each branch's compile (FusedNode.branch_compiles), in the order its box lists them
    assert [(b.name, b.compile) for b in call.branch_compiles] == [
        (name, subs[name].id) for name in ("true_graph_0", "false_graph_0")
    ]
    for c in subs.values():
        # a branch has only its own graph: not the parent's dynamo graph, its ops not the parent's call
        own = {n.name for n in c.graphs["post_grad"].nodes}
        assert set(c.graphs) == {"post_grad"} and c.graphs["post_grad"].code == "", c.id
        for n in c.fused_nodes:
            assert n.fx_nodes and set(n.fx_nodes) <= own and "cond" not in n.ops, (c.id, n.fx_nodes, n.ops)


def test_the_inputs_of_cond_and_while_loop_subgraphs_have_their_dtypes_and_the_parents_names(tmp_path):
    """Inductor names a subgraph's inputs ``while_loop_body_graph_0_arg0_1`` (its output code, its buffers) where its
    post-grad graph says ``arg0_1``: joined by the bare name, the loop counter's launch argument had no dtype, no
    name, and its reproducer built it as a float32 scalar for a kernel that reads ``const int64_t*`` (an out-of-bounds
    read). Each input is now its placeholder (dtype, shape) and is named by what the parent passes: the branches of
    ``cond(..., (x, w))`` take ``x`` and ``w``."""
    import subprocess
    import sys

    def f(x, w):
        y = torch.cond(x.sum() > 0, lambda x, w: (x @ w).relu(), lambda x, w: (x * 2) @ w, (x, w))
        loop = torch._higher_order_ops.while_loop
        i, acc = loop(lambda i, a: i < 3, lambda i, a: (i + 1, (a * 0.5).tanh() + y), (torch.tensor(0), y * 0))
        return acc.cos() + i

    torch.manual_seed(0)
    x, w = torch.randn(8, 16), torch.randn(16, 16)
    with inductor_lens.capture() as cap:
        out = torch.compile(f)(x, w)
    torch.testing.assert_close(out, f(x, w))
    subs = {c.subgraph: c for c in cap.report.compiles if c.subgraph}
    for name, c in subs.items():
        nodes = {n.name: n for n in c.graphs["post_grad"].nodes}
        inputs = [n for n in nodes.values() if n.op == "placeholder"]
        # the placeholders are the graph inputs the output code names, torch's own name kept as their target
        assert [n.name for n in inputs] == [f"{name}_{n.target}" for n in inputs], inputs
        assert set(c.graph_inputs) == {n.name for n in inputs}, (name, c.graph_inputs)
        for k in c.kernels:
            for a in k.launch.args:
                if a.name in nodes and nodes[a.name].op == "placeholder":
                    assert (a.dtype, a.shape) == (nodes[a.name].dtype, nodes[a.name].shape), (k.name, a)
    for branch in ("true_graph_0", "false_graph_0"):
        shown = [(n.display_name, n.role) for n in subs[branch].graphs["post_grad"].nodes if n.op == "placeholder"]
        assert shown == [("w", "input"), ("x", "input")], (branch, shown)
        (mm,) = [k for k in subs[branch].kernels if k.name.startswith("extern_kernels.mm")]
        assert [a.holds for a in mm.launch.args if a.keyword != "out"][-1] == "w"
    # a loop's inputs the parent computed: the captured y by the user's variable (dynamo's parent graph names it),
    # the carried values, which no graph of torch's names inside the loop, as such, with the variable holding each
    # after the loop (they were unnamed; pytree's `child`, dynamo's name for the initial values, is not the user's)
    # dynamo named the loop's initial values `child`, `child_1` after a local of torch's pytree code it inlined (their
    # stack ends at the user's `i, acc = loop(...)`, which assigns no `child`): no variable of the user's
    (parent,) = [c for c in cap.report.compiles if not c.subgraph]
    # a subgraph's C++ kernels are written for its parent's vector width (nu30 D6: its reproducer said the report
    # did not record one)
    assert parent.cpu_isa and all(
        (c.cpu_isa, c.cpu_isa_bits) == (parent.cpu_isa, parent.cpu_isa_bits) for c in subs.values()
    )
    assert all("\nCPU_ISA_BITS = None" not in k.reproducer for c in subs.values() for k in c.kernels)
    variables = {n.name: n.variable for n in parent.graphs["dynamo"].nodes if n.variable}
    assert variables == {"y": "y", "i": "i", "acc": "acc"}, variables
    for loop_graph in ("while_loop_body_graph_0", "while_loop_cond_graph_0"):
        shown = [(n.display_name, n.role) for n in subs[loop_graph].graphs["post_grad"].nodes if n.op == "placeholder"]
        assert shown == [
            ("loop-carried value 0 (i after the loop)", ""),
            ("loop-carried value 1 (acc after the loop)", ""),
            ("y", ""),
        ], (loop_graph, shown)
    body = subs["while_loop_body_graph_0"]
    (k,) = [k for k in body.kernels if k.language == "cpp" and "const int64_t*" in k.launch.arg_types]
    (counter,) = [a for a, t in zip(k.launch.args, k.launch.arg_types) if t == "const int64_t*"]
    assert (counter.name, counter.dtype, counter.shape) == ("while_loop_body_graph_0_arg0_1", "int64", [])
    (line,) = [ln for ln in k.reproducer.splitlines() if f"# {counter.name} " in ln]
    assert line.strip().startswith("make([], [], 'int64',"), line
    script = tmp_path / "body.py"
    script.write_text(k.reproducer)
    ran = subprocess.run(
        [sys.executable, str(script), "--runs", "2", "--warmup", "1"], capture_output=True, text=True, timeout=600
    )
    assert ran.returncode == 0 and f"{k.name}: median" in ran.stdout, ran.stdout + ran.stderr


def test_a_training_step_through_torch_cond_keeps_each_graphs_own_post_grad_code():
    """With a backward, torch logs two post-grad graphs for the compile id (forward, backward) and none for the four
    branches: the branches took the backward's code and the backward had none. Each graph now has its own."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 4)

    def f(x):
        p = lin(x)
        return torch.cond(p.sum() > 0, lambda p: p.cos(), lambda p: p.sin(), (p,)).sum()

    with inductor_lens.capture() as cap:
        torch.compile(f)(torch.randn(4, 8)).backward()
    codes = {c.id: c.graphs["post_grad"].code for c in cap.report.compiles}
    # when the backward compiled is the training forward's fact, not its branches' (their graph_kind is the parent's)
    assert [(c.id, c.backward_compiled) for c in cap.report.compiles if c.backward_compiled] == [
        ("0/0 forward", "first_backward")
    ]
    fwd, bwd = codes["0/0 forward"], codes["0/0 backward"]
    assert "def forward" in fwd and "def forward" in bwd and "tangents_1" in bwd and "tangents_1" not in fwd
    assert [c.subgraph for c in cap.report.compiles if c.subgraph and codes[c.id]] == []


def test_a_module_registered_under_a_name_that_is_no_identifier_is_named_by_that_name():
    """``add_module("ü </script>(1)", ...)``, reached with ``getattr``: dynamo's module path is ``getattr(L.self,
    'ü </script>(1)')``, which the fused node's box showed where its parameters read ``ü </script>(1).weight``."""
    name = "ü </script>(1)"

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module(name, torch.nn.Linear(8, 8))

        def forward(self, x):
            return torch.sin(getattr(self, name)(x))

    with torch.no_grad():
        report = inductor_lens.inspect(Net(), torch.randn(2, 8))
    (c,) = report.compiles
    stacks = [n.module_stack for n in c.graphs["post_grad"].nodes if n.module_stack]
    assert stacks and all(s[0] == name for s in stacks), stacks
    params = {n.display_name for n in c.graphs["dynamo"].nodes if n.op == "placeholder"}
    assert f"{name}.weight" in params, params


def test_after_a_reset_each_compile_of_the_same_id_shows_its_own_dynamo_graph_and_names_its_inputs():
    """``torch._dynamo.reset()`` starts compile ids again at ``0/0``: the second ``0/0`` (here ``freezing``, whose
    dynamo graph holds the parameters as ``get_attr``) was shown with the first one's dynamo graph, and its post-grad
    input ``arg4_1`` (the user's ``x``, f32[4, 16]) named ``b.bias`` by that graph's fifth placeholder."""

    class Residual(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 16)

        def forward(self, x):
            return self.b(torch.relu(self.a(x))) + x

    torch.manual_seed(0)
    model, x = Residual().eval(), torch.randn(4, 16)
    with torch.no_grad():
        expected = model(x)
        with inductor_lens.capture() as cap:
            torch.compile(model)(x)
            torch._dynamo.reset()
            with torch._inductor.config.patch(freezing=True):
                out = torch.compile(model)(x)
    torch.testing.assert_close(out, expected)
    plain, frozen = cap.report.compiles
    assert (plain.id, frozen.id) == ("0/0 inference", "0/0 inference #2")
    held = lambda c: [(n.op, n.display_name) for n in c.graphs["dynamo"].nodes if n.op in ("placeholder", "get_attr")]  # noqa: E731
    assert ("placeholder", "x") in held(plain) and ("placeholder", "a.weight") in held(plain)
    assert held(frozen) == [("placeholder", "x")] + [
        ("get_attr", p) for p in ("a.weight", "a.bias", "b.weight", "b.bias")
    ]
    inputs = {n.name: (n.role, n.display_name) for n in frozen.graphs["post_grad"].nodes if n.display_name}
    (x_name,) = [n.name for n in frozen.graphs["post_grad"].nodes if n.op == "placeholder"]
    assert inputs[x_name] == ("input", "x")
    # the parameters, constants of the graph, and the weights as MKL packs them (traced through freezing's record)
    assert sorted(d for _, d in inputs.values()) == [
        "a.bias", "a.weight", "a.weight (packed for MKL)", "b.bias", "b.weight", "b.weight (packed for MKL)", "x"
    ]  # fmt: skip
    # the kernels' launches say what each argument holds: x and the frozen biases by their names
    holds = {a.name: a.holds for k in frozen.kernels if k.launch for a in k.launch.args if a.holds}
    assert holds.get(x_name) == "x" and {"a.bias", "b.bias"} <= set(holds.values()), holds


def _sin3(x):
    return torch.sin(x) * 3 + 1


def _relu_sq(x):
    return (x.relu() ** 2).sum(0)


def test_after_a_reset_a_compile_of_another_function_is_named_and_told_by_its_own_records():
    """After ``torch._dynamo.reset()`` the compile of another function got the id ``0/0`` again, and was labelled,
    triggered, guarded and shown with the dynamo graph code of the first ``0/0`` (the records of an id were read
    across resets): ``_relu_sq``'s compile said ``_sin3()`` in the compile picker and the timeline."""
    with inductor_lens.capture() as cap:
        a = torch.compile(_sin3)(torch.ones(16))
        torch._dynamo.reset()
        b = torch.compile(_relu_sq)(torch.ones(8, 4))
    torch.testing.assert_close(a, _sin3(torch.ones(16)))
    torch.testing.assert_close(b, _relu_sq(torch.ones(8, 4)))
    first, second = cap.report.compiles
    assert (first.id, second.id) == ("0/0 inference", "0/0 inference #2")
    assert (first.frame, second.frame) == ("_sin3", "_relu_sq")
    assert first.label.startswith("_sin3()") and second.label.startswith("_relu_sq()"), (first.label, second.label)
    assert "first call of _relu_sq()" in second.trigger.reason, second.trigger.reason
    assert "torch.compile(_relu_sq)" in second.trigger.user_stack[-1].code
    code = {c.id: c.graphs["dynamo"].code for c in (first, second)}
    assert "sin" in code[first.id] and "relu" not in code[first.id], code
    assert "relu" in code[second.id] and "sin" not in code[second.id], code
    post = {c.id: c.graphs["post_grad"].code for c in (first, second)}
    assert "sin" in post[first.id] and "relu" in post[second.id] and "sin" not in post[second.id], post


def test_a_torch_trace_log_with_a_reset_imports_each_compile_with_its_own_records(tmp_path):
    """The same in a TORCH_TRACE log, which says nothing of a reset: dynamo starting ``0/0`` again is one. The
    imported second compile was ``_sin3()``'s, with ``_sin3``'s dynamo graph."""
    import logging

    from torch._logging import _internal, structured

    handler = _internal.LazyTraceHandler(str(tmp_path))  # what TORCH_TRACE=tmp_path installs, in this process
    handler.setFormatter(_internal.TorchLogsFormatter(trace=True))
    log, level = _internal.trace_log, _internal.trace_log.level
    interned, dumped = dict(structured.INTERN_TABLE), set(structured.DUMPED_FILES)
    structured.INTERN_TABLE.clear()  # the new log states its file names again, as a fresh process's would
    structured.DUMPED_FILES.clear()
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        torch._dynamo.reset()
        torch.compile(_sin3)(torch.ones(16))
        torch._dynamo.reset()
        torch.compile(_relu_sq)(torch.ones(8, 4))
    finally:
        log.removeHandler(handler)
        handler.close()
        log.setLevel(level)
        structured.INTERN_TABLE.update(interned)
        structured.DUMPED_FILES.update(dumped)
    first, second = inductor_lens.load_trace(str(tmp_path)).compiles
    assert (first.id, second.id) == ("0/0 inference", "0/0 inference #2")
    assert (first.frame, second.frame) == ("_sin3", "_relu_sq")
    assert "sin" in first.graphs["dynamo"].code and "relu" not in first.graphs["dynamo"].code
    assert "relu" in second.graphs["dynamo"].code and "sin" not in second.graphs["dynamo"].code
    assert [k.name for k in second.kernels] == ["cpp_fused_pow_relu_sum_0"]


class _ConvBn(torch.nn.Module):
    """Two conv + BatchNorm + relu layers, the second with a residual add: freezing folds each BatchNorm into its
    conv and oneDNN fuses conv + relu (conv + add + relu) into one call."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8)
        self.conv2, self.bn2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        r = torch.relu(self.bn2(self.conv2(h)) + h)
        return r, r.mean((2, 3))  # r, an output: Inductor gives it its strides (inductor_force_stride_order)


@functools.cache
def _frozen_conv_bn():
    """The report of :class:`_ConvBn` compiled under ``freezing`` in channels-last (one compile for the tests of this
    file), and its BatchNorms' running statistics, set apart from their defaults (so that folding them changes the
    weights)."""
    torch.manual_seed(0)
    model = _ConvBn()
    for bn in (model.bn1, model.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    model.eval()
    x = torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last)
    with torch.no_grad():
        expected = model(x)
        with torch._inductor.config.patch(freezing=True), inductor_lens.capture() as cap:
            out = torch.compile(model)(x)
    torch.testing.assert_close(out, expected)
    return cap.report


def test_a_frozen_conv_fused_with_its_relu_is_named_by_its_op_and_its_conv_module():
    """Under ``freezing`` Inductor's oneDNN patterns replace conv (+ folded BN) + relu by a call of a Python function,
    ``torch._inductor.fx_passes.mkldnn_fusion.fn``, that lowers to ``mkldnn._convolution_pointwise``: a new user's boxes
    read "_inductor" (the handler's package) with no module. The truth, from the output code and the model: the calls
    are ``_convolution_pointwise.default`` and ``.binary``; the convs replaced are ``conv1`` and ``conv2``."""
    (c,) = _frozen_conv_bn().compiles
    called = re.findall(r"torch\.ops\.mkldnn\.(_convolution_pointwise\.\w+)\(", c.output_code)
    assert sorted(called) == ["_convolution_pointwise.binary", "_convolution_pointwise.default"], called
    fused = [n for n in c.graphs["post_grad"].nodes if "mkldnn_fusion" in n.target]
    assert len(fused) == 2, [n.target for n in c.graphs["post_grad"].nodes]
    assert [n.short_op for n in fused] == ["_convolution_pointwise"] * 2
    assert sorted(n.wraps for n in fused) == ["mkldnn." + op for op in sorted(called)]
    assert [n.module_stack for n in fused] == [["conv1"], ["conv2"]]
    labels = [n.label for n in c.fused_nodes if not n.is_glue]
    assert "_inductor" not in " ".join(labels) and labels.count("_convolution_pointwise") >= 2, labels
    # each call tied to the node it lowers, also the one whose result is an output: not to the stride order
    # Inductor put after it (its box was "inductor_force_stride_order", with no module and no line)
    for k in c.kernels:
        if k.language == "extern":
            assert [f for f in k.fx_nodes if f in {n.name for n in fused}] == k.fx_nodes and k.user_lines, k
    # counted as the convolution it is (it was one FLOP per element of its result): 2 * out * C_in * 3 * 3
    (conv1,) = [k for k in c.kernels if k.name.startswith("torch.ops.mkldnn._convolution_pointwise.default")]
    assert conv1.cost.flops == 2 * (8 * 8 * 8) * 3 * 3 * 3, conv1.cost


def test_a_users_post_grad_pass_is_named_on_the_compile():
    """``torch._inductor.config.post_grad_custom_post_pass`` = a pass that turns ``a * y`` into ``a + y``: the page
    showed the rewritten graph (an ``add`` on the line of ``a * y``, true to torch) and nothing said a pass of the
    user's had run. The compile names it and where it ran; the Timeline's phase of it says it is the user's."""
    from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

    class MulToAdd(CustomGraphPass):
        def __call__(self, graph):
            for n in graph.nodes:
                if n.op == "call_function" and n.target is torch.ops.aten.mul.Tensor:
                    n.target = torch.ops.aten.add.Tensor

        def uuid(self):
            return get_hash_for_files((__file__,))

    def f(x, y):
        a = torch.relu(x)
        return torch.tanh(a * y)

    x, y = torch.randn(4, 16), torch.randn(4, 16)
    with torch._inductor.config.patch(post_grad_custom_post_pass=MulToAdd()), inductor_lens.capture() as cap:
        out = torch.compile(f)(x, y)
    torch.testing.assert_close(out, torch.tanh(torch.relu(x) + y))  # torch ran the pass
    (c,) = cap.report.compiles
    # torch's evidence: dynamo's graph multiplies, the post-grad graph adds, and torch timed the pass as a phase
    assert "mul" in {n.name for n in c.graphs["dynamo"].nodes}
    assert "aten.add.Tensor" in {n.target for n in c.graphs["post_grad"].nodes}
    (phase,) = [p for p in c.phases if p.name == "pass.post_grad_passes.post_grad_custom_post_pass"]
    assert phase.gloss == "your post-grad pass"
    name = f"{MulToAdd.__module__}.{MulToAdd.__qualname__}"
    assert [(p.setting, p.name) for p in c.custom_passes] == [("post_grad_custom_post_pass", name)]
    assert c.custom_pass_note.startswith(
        f"A graph pass of yours ran in this compile: {name} (torch._inductor.config.post_grad_custom_post_pass), "
        "on the post-grad graph, after Inductor's post-grad passes."
    )


def _calls(c, op: str) -> list[list[str]]:
    """The arguments of each call of ``op`` in the output code's ``call()``, in order, as written."""
    return [
        [a.strip() for a in args.split(",")]
        for args in re.findall(rf"= torch\.ops\.{re.escape(op)}\(([^\n]*)\)\n", c.output_code)
    ]


def _shown(c, name: str) -> str:
    """What the launch table says a launch argument ``name`` holds (the same in every launch that passes it)."""
    (held,) = {a.holds for k in c.kernels if k.launch for a in k.launch.args if a.name == name}
    return held


def test_a_frozen_linears_weights_are_named_by_the_parameters_they_come_from():
    """Under ``freezing`` the weights are graph constants that Inductor names ``_frozen_param7``, and MKL's packed
    copies of them too: the launch table, the FX view and the cost's source said only that, and a user could not
    tell which of their parameters a call reads (nu18 O-b). Torch's own record of what it replaced with what
    (freezing's ``replace_node_with_constant`` of each parameter, constant folding's of the permutes and of
    ``mkl._mkl_reorder_linear_weight``) names each: MKL's call ``_mkl_linear(x, packed, weight, bias, batch)`` reads
    fc1's weight packed and as it is, the second call fc2's, as the order of the calls and the weights' shapes say."""
    (c,) = _frozen_mlp().compiles
    (first, second) = _calls(c, "mkl._mkl_linear.default")
    for args, fc, shape in ((first, "fc1", [32, 16]), (second, "fc2", [8, 32])):
        packed, weight = args[1], args[2]
        assert (_shown(c, packed), _shown(c, weight)) == (f"{fc}.weight (packed for MKL)", f"{fc}.weight")
        assert c.constant_names[packed] == f"{fc}.weight (packed for MKL)"
        (node,) = [n for n in c.graphs["post_grad"].nodes if n.op == "get_attr" and n.target == weight]
        assert (node.display_name, node.role, node.shape) == (f"{fc}.weight", "parameter", shape)
    # the cost's source says them by name, Inductor's beside it
    mkl = next(k for k in c.kernels if k.kind == "extern")
    assert f"fc1.weight (packed for MKL, {first[1]})" in mkl.cost.source, mkl.cost.source
    assert f"fc1.weight ({first[2]})" in mkl.cost.source, mkl.cost.source


def test_a_c_gemm_templates_packed_weight_is_named_by_its_parameter():
    """A C++ GEMM template packs its weight while lowering into a constant of its own (``constant6``), which no node of
    the graph names: the launch table said ``constant6`` for fc1's template's ``W`` (nu18 O-b). The template packed a
    view of the weight constant (``prep_weight``, the storage it views) and replaced that weight with it
    (``prune_tensors``): fc1's template reads fc1's weight, fc2's fc2's, in the order the kernels run. (The template
    is the only backend offered, so that autotuning cannot pick MKL's call instead.)"""
    (c,) = _frozen_mlp(gemm_backends="CPP", mode="max-autotune-no-cudagraphs").compiles
    templates = [k for k in c.kernels if k.kind == "template"]
    assert len(templates) == 2, [(k.name, k.kind) for k in c.kernels]
    for k, fc in zip(templates, ("fc1", "fc2")):
        (w,) = [a for a in k.launch.args if a.param == "W"]
        assert w.name.startswith("constant"), w
        assert w.holds == c.constant_names[w.name] == f"{fc}.weight (packed for the C++ GEMM template)"
        assert f"{fc}.weight (packed for the C++ GEMM template, {w.name})" in k.cost.source, k.cost.source


def test_a_frozen_convs_folded_batchnorms_are_named_by_the_parameters_they_come_from():
    """Under ``freezing`` each BatchNorm is folded into its conv (binary folding: ``mul(conv1.weight, bn1's scale)``)
    and the result prepacked for oneDNN (``mkldnn._reorder_convolution_weight``): the calls read ``_frozen_param36``
    and nothing said the BatchNorm was folded (nu17 D7). Torch's record of each fold names them: conv1's call reads
    conv1's weight and bias folded with bn1, conv2's (which has no bias of its own) its weight folded with bn2 and a
    bias folded from bn2 alone, each in the order ``_convolution_pointwise(x, weight, bias, ...)`` takes them. (A
    bias of 8 values is no constant of the call: Inductor writes its values into a kernel's code, which makes the
    buffer the call reads; that buffer holds it.)"""
    (c,) = _frozen_conv_bn().compiles
    (conv1,) = _calls(c, "mkldnn._convolution_pointwise.default")
    (conv2,) = _calls(c, "mkldnn._convolution_pointwise.binary")  # (x, other, weight, bias, ...)
    assert _shown(c, conv1[1]) == "conv1.weight folded with bn1 (packed for oneDNN)"
    assert _shown(c, conv1[2]) == "conv1.bias folded with bn1"
    assert _shown(c, conv2[2]) == "conv2.weight folded with bn2 (packed for oneDNN)"
    assert _shown(c, conv2[3]) == "folded from bn2"
    held = {n.target: n.display_name for n in c.graphs["post_grad"].nodes if n.op == "get_attr"}
    assert held[conv1[1]] == "conv1.weight folded with bn1 (packed for oneDNN)", held
