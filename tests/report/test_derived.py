"""The derived fields the views show, decided once in Python (report/rules.py, report/finish.py): the user
line of each fused node and kernel, short op names, kernel call sites, autotune choice configs and epilogue,
the compare page's "what changed"; and a report written before these fields gets them when loaded."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest

import inductor_lens
from inductor_lens.analysis.diff import KernelDiff
from inductor_lens.report import rules
from inductor_lens.report.finish import finish_compile
from inductor_lens.report.model import (
    Compile,
    Frame,
    FusedNode,
    Graph,
    GraphNode,
    Kernel,
    KernelLaunch,
    LaunchArg,
    Trigger,
)

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _frame(line: int, code: str = "y = f(x)") -> Frame:
    return Frame(file="/home/me/model.py", line=line, function="forward", code=code)


def _compile() -> Compile:
    """mm (line 3) -> relu (line 4) and sin (line 4) in one C++ kernel -> cos (line 9) in a kernel that
    recorded no stack of its own; relu's kernel is called again for op5 (line 11): its source is reused."""
    nodes = [
        GraphNode("mm", "call_function", "aten.mm.default", user_stack=[_frame(1, "main()"), _frame(3)]),
        GraphNode("getitem", "call_function", "_operator.getitem"),
        GraphNode("relu", "call_function", "aten.relu.default", user_stack=[_frame(4)]),
        GraphNode("sin", "call_function", "aten.sin.default", user_stack=[_frame(4)]),
        GraphNode("cos", "call_function", "aten.cos.default", user_stack=[_frame(9)]),
        GraphNode("relu_1", "call_function", "aten.relu.default", user_stack=[_frame(11)]),
        GraphNode("x", "placeholder", "x"),
    ]
    fused = [
        FusedNode("op0", "extern", ["mm"], "extern_kernels.mm"),
        FusedNode("op1", "nop", ["getitem"]),
        FusedNode("op2", "pointwise", ["relu"], "cpp_fused_relu_0"),
        FusedNode("op3", "pointwise", ["sin", "getitem"], "cpp_fused_relu_0"),
        FusedNode("op4", "pointwise", ["cos"], "cpp_fused_cos_1"),
        FusedNode("op5", "pointwise", ["relu_1"], "cpp_fused_relu_0"),
    ]
    kernels = [
        Kernel("extern_kernels.mm", "extern", "extern_kernels.mm(x, w)", ["op0"], ["mm"], metadata={"callee": "mm"}),
        Kernel("cpp_fused_relu_0", "cpp", "...", ["op2", "op3", "op5"], ["relu", "sin", "relu_1"]),
        Kernel("cpp_fused_cos_1", "cpp", "...", ["op4"], ["cos"]),
    ]
    return _forward(nodes, fused, kernels)


def _forward(nodes: list, fused: list, kernels: list) -> Compile:
    """A finished forward compile of these post-grad nodes, fused nodes and kernels."""
    return finish_compile(
        Compile(
            id="0/0 forward",
            compile_id="0/0",
            graph_kind="forward",
            trigger=Trigger("first_call", ""),
            graphs={"post_grad": Graph(nodes=nodes)},
            fused_nodes=fused,
            kernels=kernels,
        )
    )


def test_short_op_is_one_rule_and_getitem_reads_getitem():
    c = _compile()
    ops = {n.name: n.short_op for n in c.graphs["post_grad"].nodes}
    assert ops == {
        "mm": "mm",
        "getitem": "getitem",
        "relu": "relu",
        "sin": "sin",
        "cos": "cos",
        "relu_1": "relu",
        "x": "",
    }
    assert rules.short_op("aten.sum.dim_IntList") == "sum"
    # a frozen CPU graph's MKL linear, named without its overload (a C++ GEMM template's epilogue listed "mkl"),
    # is the matmul: no epilogue op, and counted as one (cost.py reads the same name)
    assert rules.short_op("mkl._mkl_linear") == rules.short_op("mkl._mkl_linear.default") == "_mkl_linear"
    assert rules.epilogue_ops(["_mkl_linear", "relu", "_mkl_linear"]) == ["relu"]
    assert [n.ops for n in c.fused_nodes] == [["mm"], [], ["relu"], ["sin"], ["cos"], ["relu"]]


def test_user_line_of_a_fused_node_and_its_kernel_is_one_line():
    c = _compile()
    line = {n.name: [(f.line, f.code) for f in n.user_lines] for n in c.fused_nodes}
    assert line["op0"] == [(3, "y = f(x)")], "the innermost frame: the line that ran, not main()"
    assert line["op2"] == line["op3"] == [(4, "y = f(x)")]
    k = {k.name: [f.line for f in k.user_lines] for k in c.kernels}
    assert k == {"extern_kernels.mm": [3], "cpp_fused_relu_0": [4, 11], "cpp_fused_cos_1": [9]}
    for n in c.fused_nodes:  # a node's user line is its kernel's, or one of its kernel's lines
        if n.kernel and n.user_lines:
            assert n.user_lines[0] in c.kernel(n.kernel).user_lines


def test_the_user_line_is_the_users_call_of_torch_code_that_dynamo_traced_through():
    """flex_attention, torch.func's transforms: dynamo records the frames it traced through torch's own Python
    after the user's. The line is the user's call (the trial's FlexAttention kernel named flex_attention.py:2462);
    torch's frame only where the stack has no other (a compiled optimizer.step() alone)."""
    torch_frame = Frame(
        file="/venv/lib/python3.11/site-packages/torch/nn/attention/flex_attention.py",
        line=2462,
        function="flex_attention",
        code="out, lse = flex_attention_hop(",
    )
    lib = Frame(
        file="/venv/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py",
        line=80,
        function="forward",
        code="attn = q @ k",
    )
    nodes = [
        GraphNode(
            "flex", "call_function", "aten.mm.default", user_stack=[_frame(16, "out = flex(q, k, v)"), torch_frame]
        ),
        GraphNode("hf", "call_function", "aten.relu.default", user_stack=[lib, torch_frame]),
        GraphNode("opt", "call_function", "aten.sin.default", user_stack=[torch_frame]),
    ]
    fused = [
        FusedNode("op0", "extern", ["flex"], "extern_kernels.mm"),
        FusedNode("op1", "pointwise", ["hf"], "cpp_fused_relu_0"),
        FusedNode("op2", "pointwise", ["opt"], "cpp_fused_sin_1"),
    ]
    kernels = [
        Kernel("extern_kernels.mm", "extern", "extern_kernels.mm(x, w)", ["op0"], ["flex"], metadata={"callee": "mm"}),
        Kernel("cpp_fused_relu_0", "cpp", "...", ["op1"], ["hf"]),
        Kernel("cpp_fused_sin_1", "cpp", "...", ["op2"], ["opt"]),
    ]
    c = _forward(nodes, fused, kernels)
    lines = {n.name: [(f.file.rsplit("/", 1)[-1], f.line) for f in n.user_lines] for n in c.fused_nodes}
    assert lines == {"op0": [("model.py", 16)], "op1": [("modeling_gpt2.py", 80)], "op2": [("flex_attention.py", 2462)]}
    assert [f.line for f in c.kernel("extern_kernels.mm").user_lines] == [16]


def test_a_kernels_lines_are_in_the_order_of_its_ops():
    """The capture records a kernel's stacks in the order Inductor met them: the trial's Kernels table named a
    kernel's `return` line (11) first where its first op ran at line 5, as the panel of its first box said. The
    others follow its ops; the first is the line that defines it, its reduction's (``rules.lead_line``): here the
    `return` line 11's ``sum``, and the first box's (it holds the sum) says the same."""
    nodes = [
        GraphNode("mul", "call_function", "aten.mul.Tensor", user_stack=[_frame(5)]),
        GraphNode("gt", "call_function", "aten.gt.Scalar", user_stack=[_frame(6)]),
        GraphNode("mul_3", "call_function", "aten.mul.Tensor", user_stack=[_frame(10)]),
        GraphNode("sum_2", "call_function", "aten.sum.default", user_stack=[_frame(11)]),
    ]
    fused = [
        FusedNode("op3", "reduction", ["mul", "sum_2"], "k0"),
        FusedNode("op0", "pointwise", ["gt", "mul_3"], "k0"),
    ]
    stacks = [[_frame(10)], [_frame(6)], [_frame(11)], [_frame(5)]]
    kernels = [Kernel("k0", "cpp", "...", ["op3", "op0"], ["mul", "gt", "mul_3", "sum_2"], user_stack=stacks)]
    c = _forward(nodes, fused, kernels)
    assert [f.line for f in c.kernel("k0").user_lines] == [11, 5, 6, 10]
    assert c.kernel("k0").user_lines[0] == c.fused_nodes[0].user_lines[0]
    assert [f.line for f in c.fused_nodes[1].user_lines] == [6, 10]


def test_a_kernel_is_named_by_the_line_that_defines_it_not_its_first_op():
    """nu19 O-c: a BatchNorm whose input a forward pre-hook doubles (`register_forward_pre_hook(lambda m, inp:
    (inp[0] * 2,))`, line 30) is one kernel with the batch norm of line 23 (`torch.relu(self.bn(self.fc(x)))`): its
    title named the hook's lambda, whose `mul` runs first. It is the batch norm's kernel (its reduction, its
    running-stat updates), named so in the table and both of its boxes; line 30 stays in the list."""
    hook = "net.bn.register_forward_pre_hook(lambda m, inp: (inp[0] * 2,))"
    ops = [("mul", 30), ("var_mean", 23), ("add_1", 23), ("rsqrt", 23), ("sub", 23), ("mul_1", 23)]
    ops += [("mul_2", 23), ("add_2", 23), ("relu", 23), ("copy_", 0)]
    nodes = [
        GraphNode(name, "call_function", f"aten.{name.split('_')[0]}.default", user_stack=[_frame(ln)] if ln else [])
        for name, ln in ops
    ]
    nodes[0] = dataclasses.replace(nodes[0], user_stack=[_frame(30, hook)])
    stacks = [[_frame(30, hook)], [_frame(23)]]
    fused = [
        FusedNode("op1_op2", "reduction", ["mul", "var_mean", "mul_2", "add_2", "copy_"], "k0", user_stack=stacks),
        FusedNode("op4", "pointwise", ["mul", "var_mean", "add_1", "rsqrt", "sub", "mul_1", "relu"], "k0"),
    ]
    kernels = [Kernel("k0", "cpp", "...", ["op1_op2", "op4"], [name for name, _ in ops], user_stack=stacks)]
    c = _forward(nodes, fused, kernels)
    assert [f.line for f in c.kernel("k0").user_lines] == [23, 30]
    assert [[f.line for f in n.user_lines] for n in c.fused_nodes] == [[23, 30], [23, 30]]


def test_recorded_gpt2_kernels_are_named_by_their_softmax_and_layer_norm():
    """The recorded GPT-2 block (tests/fixtures/gpu_gpt2_block.json): the softmax kernel, which inlines the scaling
    `att = (q @ k.transpose(-2, -1)) / math.sqrt(...)` of line 43, is line 45's (`.softmax(-1)`, its reduction);
    the layer norm that Inductor fused with the residual add before it is ln_2's line 62, not the attention's
    output projection (line 47, a `view` of its result); the block's last residual add (line 62, two adds against
    line 61's one) is line 62, not line 47's `view`."""
    c = inductor_lens.load(FIXTURES / "gpu_gpt2_block.json").compiles[0]
    first = {k.name: k.user_lines[0].line for k in c.kernels if k.user_lines}
    assert first["triton_per_fused__softmax_div_exp_masked_fill_prepare_softmax_online_sub_view_4"] == 45
    assert first["triton_per_fused_add_native_layer_norm_view_7"] == 62
    assert first["triton_poi_fused_add_addmm_view_9"] == 62
    assert [f.line for f in c.kernel("triton_per_fused_add_native_layer_norm_view_7").user_lines] == [62, 47, 61]


def test_a_fused_nodes_lines_are_in_the_order_of_its_ops_as_its_kernels_are():
    """Inductor's origins of a kernel that feeds a custom op name the custom op too (``cpp_fused_gelu_mul_mysin_0``):
    its fused node's stacks came line 40 (``h = mysin(h) + 1.0``, an op of another kernel) first, and the panel's
    headline named line 40 where every op of the node ran at line 10, the line the Kernels table named."""
    nodes = [
        GraphNode("mul", "call_function", "aten.mul.Tensor", user_stack=[_frame(10)]),
        GraphNode("erf", "call_function", "aten.erf.default", user_stack=[_frame(10)]),
        GraphNode("mysin", "call_function", "nu2.mysin.default", user_stack=[_frame(40)]),
    ]
    fused = [
        FusedNode(
            "op1", "pointwise", ["mul", "erf"], "cpp_fused_erf_mul_mysin_0", user_stack=[[_frame(40)], [_frame(10)]]
        ),
        FusedNode("op2", "extern", ["mysin"], "torch.ops.nu2.mysin.default"),
    ]
    kernels = [
        Kernel(
            "cpp_fused_erf_mul_mysin_0", "cpp", "...", ["op1"], ["mul", "erf"], user_stack=[[_frame(40)], [_frame(10)]]
        ),
        Kernel("torch.ops.nu2.mysin.default", "extern", "...", ["op2"], ["mysin"]),
    ]
    c = _forward(nodes, fused, kernels)
    assert [f.line for f in c.fused_nodes[0].user_lines] == [10, 40]
    assert c.fused_nodes[0].user_lines[0] == c.kernel("cpp_fused_erf_mul_mysin_0").user_lines[0]


def test_kernel_call_sites_without_a_record_are_runs_of_consecutive_boxes():
    c = _compile()
    assert c.kernel("cpp_fused_relu_0").call_sites == [["op2", "op3"], ["op5"]]
    assert c.kernel("cpp_fused_cos_1").call_sites == [["op4"]]
    # a recorded call site wins (only put in execution order)
    recorded = dataclasses.replace(c.kernel("cpp_fused_relu_0"), call_sites=[["op5"], ["op3", "op2"]])
    again = finish_compile(
        dataclasses.replace(c, kernels=[recorded if k.name == recorded.name else k for k in c.kernels])
    )
    assert again.kernel("cpp_fused_relu_0").call_sites == [["op5"], ["op2", "op3"]]


def test_autotune_choices_carry_their_config_and_the_template_its_epilogue():
    """Inductor names the template kernel after what it fused: ``triton_tem_fused_addmm_relu_t_0`` is the
    matmul with the bias add and the relu as epilogue."""
    r = inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    tuned = {k.name: k.metadata["autotune"] for k in r.kernels if "autotune" in k.metadata}
    assert tuned["triton_tem_fused_addmm_relu_t_0"]["epilogue"] == ["add", "relu"]
    assert tuned["triton_tem_fused_addmm_t_1"]["epilogue"] == []
    for a in tuned.values():
        for ch in a["choices"]:
            if ch.get("description"):
                assert "BLOCK_K" in ch["config"] and f"num_warps={ch['config']['num_warps']}" in ch["description"]
    assert rules.choice_config("BLOCK_K=32, num_warps=8, ACC_TYPE='tl.float32'") == {
        "BLOCK_K": "32",
        "num_warps": "8",
        "ACC_TYPE": "tl.float32",
    }


def test_what_changed_names_moved_ops_by_their_short_name():
    row = KernelDiff("changed", "k1", "k1b", moved_ops_in=["aten.sum.dim_IntList"], changes=["fusion", "source"])
    assert row.what_changed == "+ sum; source"
    assert KernelDiff("only_a", "k2", None).what_changed == "removed"
    assert KernelDiff("only_b", None, "k3").what_changed == "added"


def test_a_report_written_before_the_derived_fields_gets_them_on_load(training_report, tmp_path):
    data = training_report.to_dict()
    del data["derived"]
    for c in data["compiles"]:
        for g in c["graphs"].values():
            for n in g["nodes"]:
                n.pop("short_op")
        for n in c["fused_nodes"]:
            n.pop("user_lines"), n.pop("ops")
        assert c.pop("edges")
        for k in c["kernels"]:
            k.pop("user_lines")
            k["call_sites"] = []  # as a trace import without them: the runs rebuilt agree with the capture here
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert inductor_lens.load(old) == training_report  # the line-by-line reader
    assert inductor_lens.report.model.Report.from_dict(data) == training_report  # a dict


def test_the_fusion_graphs_edges_run_past_glue_and_are_decided_once_in_python():
    """``Compile.edges`` (``rules.fusion_edges``): what the graph draws and what the module view counts rows
    by. Glue (a getitem, a view of a view) passes its producer on, a graph input read through a view stays an
    input, an output reached through glue comes from its producer, what a node writes in place and reads again
    draws no loop, and an input returned as it came draws no output edge."""

    def node(name, reads, writes, glue=False):
        return FusedNode(name, "nop" if glue else "pointwise", [], None if glue else f"k_{name}", reads, writes)

    fused = [
        node("op0", ["x"], ["buf0"]),
        node("op1", ["buf0"], ["buf1"], glue=True),  # a getitem of op0's result
        node("op2", ["buf1"], ["buf2"], glue=True),  # a view of it
        node("op3", ["buf2", "buf3"], ["buf3"]),  # reads through two glue nodes; updates buf3 in place
        node("op4", ["x"], ["buf4"], glue=True),  # a view of the input
        node("op5", ["buf4", "buf2", "buf1"], ["buf5"]),  # the input through a view; op0 twice, one edge
        node("op6", ["buf5"], ["buf6"], glue=True),
    ]
    c = finish_compile(
        Compile(
            "0/0 forward",
            "0/0",
            "forward",
            Trigger("first_call", ""),
            fused_nodes=fused,
            graph_inputs=["x"],
            graph_outputs=["buf6", "buf2", "x"],
        )
    )
    assert [(e.kind, e.source, e.target, e.buffers) for e in c.edges] == [
        ("input", "x", "op0", ["x"]),
        ("node", "op0", "op3", ["buf2"]),
        ("input", "x", "op5", ["x"]),
        ("node", "op0", "op5", ["buf2", "buf1"]),
        ("output", "op5", "0", ["buf6"]),  # each output by its position in Compile.outputs
        ("output", "op0", "1", ["buf2"]),
    ]
    assert finish_compile(c).edges == c.edges  # idempotent


def test_fusion_edges_in_the_corners_and_as_the_front_end_drew_them_on_a_recorded_step():
    """Where an output reached through glue comes from two producers, each draws its edge; a fused node named as a
    graph input or output keeps the edge between them (only a node's edge to itself is none). And on the recorded GPU
    training step, the edges are those the front end drew before the rule moved to Python (``data.js fusionEdges``
    at 673b543, compared edge for edge on every recorded fixture): their count by kind and a digest, pinned."""
    import collections
    import hashlib
    from types import SimpleNamespace as N

    def node(name, reads, writes, glue=False):
        return N(name=name, reads=reads, writes=writes, is_glue=glue)

    cat = [node("op0", ["x"], ["buf0"]), node("op1", ["x"], ["buf1"]), node("op2", ["buf0", "buf1"], ["buf2"], True)]
    assert [e for e in rules.fusion_edges(cat, ["x"], ["buf2"]) if e[0] == "output"] == [
        ("output", "op0", "buf2", ["buf2"]),
        ("output", "op1", "buf2", ["buf2"]),
    ]
    clash = [node("x", ["x"], ["buf0"]), node("buf1", ["buf0"], ["buf1"])]
    assert rules.fusion_edges(clash, ["x"], ["buf1"]) == [
        ("input", "x", "x", ["x"]),
        ("node", "x", "buf1", ["buf0"]),
        ("output", "buf1", "buf1", ["buf1"]),
    ]
    report = inductor_lens.load(FIXTURES / "gpu_training.json")
    drawn = {
        c.id: (
            dict(collections.Counter(e.kind for e in c.edges)),
            hashlib.sha1(repr([(e.kind, e.source, e.target, e.buffers) for e in c.edges]).encode()).hexdigest()[:12],
        )
        for c in report.compiles
    }
    assert drawn == {
        "0/0 forward": ({"input": 21, "node": 25, "output": 21}, "dca41a0f8341"),
        "0/0 backward": ({"input": 38, "node": 43}, "18a711a65329"),
    }
    # an output edge's target is now the output's position in Compile.outputs: by its buffer, the edges drawn before
    by_buffer = [
        (e.kind, e.source, c.outputs[int(e.target)].buffer if e.kind == "output" else e.target, e.buffers)
        for c in report.compiles[:1]
        for e in c.edges
    ]
    assert hashlib.sha1(repr(by_buffer).encode()).hexdigest()[:12] == "e54bb2468af2"


def test_arithmetic_intensity_is_flops_per_byte_moved_and_never_stale():
    from inductor_lens.report.model import Cost

    c = Cost(bytes_read=96.0, bytes_written=32.0, flops=256.0)
    assert c.arithmetic_intensity == 2.0  # 256 FLOP over 128 bytes
    assert dataclasses.replace(c, flops=64.0).arithmetic_intensity == 0.5
    assert Cost(bytes_read=None, flops=1.0).arithmetic_intensity is None
    assert Cost(bytes_read=0.0, bytes_written=0.0, flops=1.0).arithmetic_intensity is None


def test_the_trigger_is_said_in_words_also_for_a_report_written_before_the_field():
    """The panel's "When it compiled" showed the raw kind (``first_call``); Python says it in words, and a report
    recorded before ``Trigger.summary`` (the Llama fixture, derived generation 1) gets it when loaded."""
    import pathlib

    import inductor_lens
    from inductor_lens.report.rules import trigger_summary

    path = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_llama8b_4layers_training.json.gz"
    report = inductor_lens.load(path)
    assert {c.trigger.summary for c in report.compiles} <= {
        "at the first call of the compiled function",
        "at the first .backward() through the compiled forward",
    }
    assert all(c.trigger.summary == trigger_summary(c.trigger.kind) for c in report.compiles)
    assert trigger_summary("compiled_autograd") == "at a .backward() call (compiled autograd)"
    assert "_" not in trigger_summary("recompile") and "known" in trigger_summary("")


def test_the_views_a_report_opens_and_whether_it_is_profiled_are_decided_in_python():
    """``Report.views`` and ``Report.profiled`` (the tabs the lens opens; whether it colours by time) and
    ``StepProfile.unattributed_text`` are derived from the content whenever a report is built or loaded: a stored
    value is ignored, and a replaced report gets them anew."""
    gpu = inductor_lens.load(FIXTURES / "gpu_perf_gpt2_training.json")  # profiled with costs, no memory timeline
    assert gpu.profiled and gpu.views == ["fusion", "fx", "timeline", "source", "kernels", "roofline"]
    mem = inductor_lens.load(FIXTURES / "gpu_memory_gpt2.json.gz")
    assert "memory" in mem.views and mem.views.index("memory") == len(mem.views) - 1
    bare = dataclasses.replace(gpu, compiles=[dataclasses.replace(c, kernels=[]) for c in gpu.compiles])
    assert not bare.profiled and bare.views == ["fusion", "fx", "timeline", "source", "kernels"]
    data = json.loads(inductor_lens.report.io.dumps(gpu))
    assert data["views"] == gpu.views and data["profiled"] is True
    assert data["profile"]["unattributed_text"] == rules.unattributed_text(gpu.profile.unattributed_share) != ""
    data.update(views=["fusion", "memory"], profiled=False)  # a hand-edited file: the content decides
    data["profile"]["unattributed_text"] = "unattributed: 99%"
    again = inductor_lens.load(json.dumps(data).encode())
    assert again.views == gpu.views and again.profiled
    assert again.profile.unattributed_text == gpu.profile.unattributed_text
    assert set(rules.VIEWS) >= set(again.views) and rules.VIEWS[0] == "fusion"


def test_unattributed_text_rounds_half_up_like_every_other_percentage():
    assert rules.unattributed_text(0.125) == "unattributed: 13%"  # JS's Math.round and Python's round() disagreed
    assert rules.unattributed_text(0.005) == "unattributed: 1%"
    assert rules.unattributed_text(0.0) == "unattributed: 0%"
    assert rules.unattributed_text(None) == ""


def test_the_views_of_a_loaded_report_are_known_before_any_compile_is_built(tmp_path):
    """``load()`` leaves each compile's kernels on its line until read (``report/lazy.py``): ``Report.views`` and
    ``profiled`` are answered from the lines, build nothing, and agree with the built compiles."""
    from inductor_lens.report import lazy

    gpu = inductor_lens.load(FIXTURES / "gpu_memory_gpt2.json.gz")  # profiled with costs, and memory
    path = tmp_path / "r.json"
    gpu.save_json(path)
    again = inductor_lens.load(path)
    assert again.compiles and all(lazy.pending(c) for c in again.compiles)
    assert again.views == gpu.views and "roofline" in again.views and "memory" in again.views
    assert again.profiled is True and all(lazy.pending(c) for c in again.compiles)
    assert [lazy.view_facts(c) for c in again.compiles] == [rules.view_facts(c) for c in gpu.compiles]


def test_why_a_fused_node_has_no_line_is_said_once_in_python():
    c = finish_compile(_compile())
    reasons = {n.name: n.no_line_reason for n in c.fused_nodes}
    assert all(reasons[n.name] == "" for n in c.fused_nodes if n.user_lines)
    assert rules.no_line_reason(False, ["relu"]) == rules.INSIDE_TORCH
    assert rules.no_line_reason(False, []) == rules.NO_FX_OPS
    assert rules.no_line_reason(False, [], rules.NO_PROVENANCE) == rules.NO_PROVENANCE  # the importer's word is kept
    assert rules.no_line_reason(True, [], rules.NO_PROVENANCE) == ""


def _copy_step(out_stride: list) -> Compile:
    """As a ResNet's training step on the CPU: Inductor copies stem.0.weight and x into buffers of ``out_stride``
    for the convolution, in one C++ kernel into which it also fused the BatchNorm's ``num_batches_tracked += 1``."""
    from inductor_lens.report.model import KernelLaunch, LaunchArg

    nodes = [
        GraphNode(
            "primals_1", "placeholder", "primals_1", shape=[8, 3, 3, 3], role="parameter", display_name="stem.0.weight"
        ),
        GraphNode("primals_2", "placeholder", "primals_2", shape=[2, 3, 3, 3], role="input", display_name="x"),
        GraphNode("primals_3", "placeholder", "primals_3", role="buffer", display_name="stem.1.num_batches_tracked"),
        GraphNode("add", "call_function", "aten.add.Tensor", inputs=["primals_3"]),
        GraphNode("copy_", "call_function", "aten.copy_.default", inputs=["primals_3", "add"]),
    ]
    fused = [
        FusedNode("op0", "pointwise", ["primals_1"], "cpp_fused_add_copy__0", ["primals_1"], ["buf0"]),
        FusedNode("op1", "pointwise", ["primals_2"], "cpp_fused_add_copy__0", ["primals_2"], ["buf1"]),
        FusedNode("op9_op10", "pointwise", ["add", "copy_"], "cpp_fused_add_copy__0", ["primals_3"], ["buf9"]),
    ]
    args = [LaunchArg(f"buf{i}", shape=[n, 3, 3, 3], stride=out_stride) for i, n in ((0, 8), (1, 2))]
    kernel = Kernel("cpp_fused_add_copy__0", "cpp", "...", ["op0", "op1", "op9_op10"], ["primals_1", "primals_2"])
    return _forward(nodes, fused, [dataclasses.replace(kernel, launch=KernelLaunch(args=args))])


def test_an_input_copy_fused_with_other_ops_is_labelled_and_the_other_ops_keep_the_kernel_name():
    c = _copy_step([27, 1, 9, 3])  # channels-last: channels innermost
    labels = {n.name: n.label for n in c.fused_nodes}
    assert labels == {
        "op0": "channels-last copy: stem.0.weight, x",
        "op1": "channels-last copy: stem.0.weight, x",
        "op9_op10": "cpp_fused_add_copy__0",
    }
    copy, _, add = c.fused_nodes
    assert copy.ops == [] and copy.no_line_reason == rules.INPUT_COPY
    assert add.ops == ["add", "copy_"] and add.no_line_reason == rules.INSIDE_TORCH
    # buffers laid out otherwise (another stride order): still a copy into another layout, not said channels-last
    assert _copy_step([27, 9, 3, 1]).fused_nodes[0].label == "layout copy: stem.0.weight, x"


def test_a_saved_result_of_a_multi_output_op_is_named_by_which_result_it_is():
    """Issue 22: ``rules.saved_name`` says which result of a multi-output op a saved tensor is (``GraphNode.output``,
    the first on the way through views to the op), and what made a tensor its decomposition did not return."""
    ln = dict(original_op="native_layer_norm", module_stack=["h", "h.0.ln"])
    forward = {
        n.name: n
        for n in [
            GraphNode("var_mean", "call_function", "aten.var_mean.correction", **ln),
            GraphNode("getitem_1", "call_function", "_operator.getitem", ["var_mean"], output="mean", **ln),
            GraphNode("rsqrt", "call_function", "aten.rsqrt.default", ["var_mean"], output="rstd", **ln),
            GraphNode("add_1", "call_function", "aten.add.Tensor", ["rsqrt"], output="output", **ln),
            GraphNode("view_3", "call_function", "aten.view.default", ["add_1"]),
            GraphNode("mul", "call_function", "aten.mul.Tensor", ["rsqrt"], **ln),
            GraphNode(
                "gelu", "call_function", "aten.mul.Tensor", ["add_1"], original_op="gelu", module_stack=["h.0.mlp"]
            ),
        ]
    }
    names = {n: rules.saved_name(n, forward) for n in ("getitem_1", "rsqrt", "view_3", "mul", "gelu")}
    assert names == {
        "getitem_1": "h.0.ln layer_norm: mean (saved)",
        "rsqrt": "h.0.ln layer_norm: rstd (saved)",
        "view_3": "h.0.ln layer_norm: output (saved)",  # a view of its output
        "mul": "h.0.ln layer_norm: mul (saved)",  # made on the way, none of its results
        "gelu": "h.0.mlp gelu (saved)",  # one result: nothing to tell apart
    }
    assert rules.output_name("aten._native_batch_norm_legit_functional.default", 2) == "save_invstd"
    assert rules.output_name("aten._scaled_dot_product_flash_attention.default", 1, "logsumexp") == "logsumexp"
    assert rules.output_name("aten.unknown.default", 3) == "output 3"


def test_a_launch_argument_an_extern_kernel_returned_gets_its_writers_dtype():
    """``buf4 = extern_kernels.convolution(...)`` has no allocation line, so the output code gives the kernel that
    reads buf4 no dtype for it: the report gives the dtype of the FX op that wrote it (not "?" in the launch table,
    not a guess in the reproducer). A buffer of a multi-output op whose results differ in dtype gets none."""
    nodes = [
        GraphNode("convolution", "call_function", "aten.convolution.default", dtype="bfloat16"),
        GraphNode("max_pool", "call_function", "aten.max_pool2d_with_indices.default"),
        GraphNode("getitem", "call_function", "_operator.getitem", dtype="bfloat16"),
        GraphNode("getitem_1", "call_function", "_operator.getitem", dtype="int64"),
        GraphNode("add", "call_function", "aten.add.Tensor", dtype="bfloat16"),
    ]
    fused = [
        FusedNode("op0", "extern", ["convolution"], "extern_kernels.convolution", writes=["buf0"]),
        FusedNode("op1", "extern", ["max_pool", "getitem", "getitem_1"], "aten.max_pool", writes=["buf1"]),
        FusedNode("op2", "pointwise", ["add"], "cpp_fused_add_0", reads=["buf0", "buf1"], writes=["buf2"]),
    ]
    args = [
        LaunchArg("buf2", shape=[2, 8], stride=[8, 1], dtype="bfloat16", param="out_ptr0"),
        LaunchArg("buf0", shape=[2, 8], stride=[8, 1], param="in_ptr0"),
        LaunchArg("buf1", shape=[2, 8], stride=[8, 1], param="in_ptr1"),
        LaunchArg("ks0", value=8, param="ks0"),
    ]
    kernels = [
        Kernel("extern_kernels.convolution", "extern", "", ["op0"], ["convolution"]),
        Kernel("cpp_fused_add_0", "cpp", "...", ["op2"], ["add"], launch=KernelLaunch(args=args)),
    ]
    (_, k) = _forward(nodes, fused, kernels).kernels
    assert [(a.name, a.dtype) for a in k.launch.args] == [
        ("buf2", "bfloat16"),
        ("buf0", "bfloat16"),
        ("buf1", None),
        ("ks0", None),
    ]


def test_what_a_node_writes_in_place_is_named_by_where_it_lives():
    """``FusedNode.in_place`` (report/finish.py, ``rules.in_place_text``) by the FX node of each buffer it writes in
    place: a graph input by its name and role; a model's buffer that an AOTInductor graph holds (a ``get_attr``, no
    graph input) as such, not as a buffer made in the graph; an input with no name by its buffer; a made buffer; a
    global of the user's code not as a tensor the caller passed in."""
    nodes = [
        GraphNode("arg0_1", "placeholder", "arg0_1", role="input", display_name="x"),
        GraphNode("arg1_1", "placeholder", "arg1_1"),
        GraphNode("arg2_1", "placeholder", "arg2_1", role="global", display_name="cache"),
        GraphNode("count", "get_attr", "count", role="buffer", display_name="count"),
        GraphNode("add", "call_function", "aten.add.Tensor", ["arg0_1"]),
        GraphNode("copy_", "call_function", "aten.copy_.default", ["arg0_1", "add"]),
    ]
    fused = [
        FusedNode("op0", "pointwise", ["add", "copy_"], "cpp_fused_add_copy__0", mutates=["arg0_1", "count"]),
        FusedNode("op1", "pointwise", ["add"], "cpp_fused_add_1", mutates=["arg1_1", "buf0"]),
        FusedNode("op2", "pointwise", ["add"], "cpp_fused_add_1"),
        FusedNode("op3", "pointwise", ["add"], "cpp_fused_add_1", mutates=["arg2_1"]),
    ]
    kernels = [
        Kernel("cpp_fused_add_copy__0", "cpp", "...", ["op0"], ["add", "copy_"]),
        Kernel("cpp_fused_add_1", "cpp", "...", ["op1", "op2", "op3"], ["add"]),
    ]
    c = dataclasses.replace(_forward(nodes, fused, kernels), graph_inputs=["arg0_1", "arg1_1", "arg2_1"])
    c = finish_compile(c)
    said = {n.name: n.in_place for n in c.fused_nodes}
    assert said["op0"] == (
        "Writes x in place (graph input arg0_1): the tensor your code passed in is changed. "
        "Writes count in place (a buffer of your model, which the compiled graph holds)."
    )
    assert (
        said["op1"]
        == "Writes arg1_1 in place (a graph input). Writes buf0 in place (a buffer made earlier in this graph)."
    )
    assert said["op2"] == ""
    # a global the compiled code reads (dynamo's G['cache']: rules.source_role) is no tensor the caller passed in
    assert said["op3"] == "Writes cache in place (graph input arg2_1, a global of your code)."


def test_a_launch_argument_is_named_by_what_it_holds_and_never_by_a_value_it_held_before():
    """``LaunchArg.holds`` (``finish._buffer_holds``): a graph input by its user name, a buffer by the op one fused
    node computes it with; a buffer a later node writes in place (``zeros`` then ``index_add_``) by nothing: it was
    named ``zeros`` beside an output that said ``index_add``."""
    from inductor_lens.report.finish import _buffer_holds
    from inductor_lens.report.model import FusedNode, GraphNode

    fx = {
        n.name: n
        for n in [
            GraphNode("primals_1", "placeholder", "primals_1", display_name="fc.weight", role="parameter"),
            GraphNode("full", "call_function", "aten.full.default", module_stack=["fc"]),
            GraphNode("index_put", "call_function", "aten.index_put.default", inputs=["full"]),
            GraphNode("relu", "call_function", "aten.relu.default", inputs=["primals_1"], module_stack=["act"]),
        ]
    }
    fused = [
        FusedNode("op0", "pointwise", fx_nodes=["full"], writes=["buf0"]),
        FusedNode("op1", "pointwise", fx_nodes=["index_put"], writes=["buf1"], mutates=["buf0"]),
        FusedNode("op2", "pointwise", fx_nodes=["relu"], writes=["buf2"]),
    ]
    assert _buffer_holds(fused, fx) == {"primals_1": "fc.weight", "buf1": "index_put", "buf2": "act relu"}


def test_a_buffer_of_a_fused_node_that_writes_several_is_named_by_the_op_whose_result_it_is():
    """nu23 (custom op + autograd.Function under max-autotune): the backward's ``op4_op5`` fuses the Function's
    backward chain into one node of two members writing ``buf4`` and ``buf5`` (Inductor's ``buf5 = buf4; del buf4  #
    reuse``, the kernel's ``in_out_ptr0``); ``buf5``, the gradient ``fc1``'s ``mm`` and ``sum`` read, had a bare name
    in the launch table (a node of one write only was named). It is named by the one op of the node another node's op
    reads (``mul_5``); in the forward, a node writing the returned ``relu`` and the saved mask ``le``, each by its output
    node (``Compile.output_nodes``)."""
    from inductor_lens.report.finish import _buffer_holds
    from inductor_lens.report.model import FusedNode, GraphNode

    fx = {
        n.name: n
        for n in [
            GraphNode("addmm", "placeholder", "addmm", display_name="fc1 addmm (saved)", role="saved"),
            GraphNode("primals_3", "placeholder", "primals_3", display_name="x", role="saved"),
            GraphNode("sigmoid", "call_function", "aten.sigmoid.default", inputs=["addmm"]),
            GraphNode("mul_4", "call_function", "aten.mul.Tensor", inputs=["sigmoid", "addmm"]),
            GraphNode("mul_5", "call_function", "aten.mul.Tensor", inputs=["mul_4", "sigmoid"]),
            GraphNode("mm_2", "call_function", "aten.mm.default", inputs=["mul_5", "primals_3"], module_stack=["fc1"]),
            GraphNode("sum_2", "call_function", "aten.sum.dim_IntList", inputs=["mul_5"], module_stack=["fc1"]),
            GraphNode("relu", "call_function", "aten.relu.default", inputs=["addmm"], module_stack=["fc2"]),
            GraphNode("le", "call_function", "aten.le.Scalar", inputs=["relu"], module_stack=["fc2"]),
        ]
    }
    fused = [
        FusedNode("op4_op5", "pointwise", fx_nodes=["sigmoid", "mul_4", "mul_5"], reads=["addmm"],
                  writes=["buf4", "buf5"], members=["op4", "op5"]),
        FusedNode("op7", "reduction", fx_nodes=["sum_2"], reads=["buf5"], writes=["buf7"]),
        FusedNode("op6", "extern", fx_nodes=["mm_2"], reads=["buf5", "primals_3"], writes=["buf6"]),
        FusedNode("op8_op9", "pointwise", fx_nodes=["relu", "le"], reads=["addmm"], writes=["buf8", "buf9"]),
    ]  # fmt: skip
    holds = _buffer_holds(fused, fx, {"buf8": "relu", "buf9": "le"})
    assert holds["buf5"] == "mul"
    assert "buf4" not in holds  # inside the node only: its storage is buf5's
    assert (holds["buf8"], holds["buf9"]) == ("fc2 relu", "fc2 le")


def test_an_output_that_is_a_copy_of_a_graph_input_is_named_as_a_copy():
    """``Compile.output_names``: the forward returns its input ``x`` (saved for the backward), and the output code
    returns ``buf1``, Inductor's channels-last copy of it: named ``x`` where the launch table said ``copy of x``."""
    from inductor_lens.report.finish import output_names
    from inductor_lens.report.model import GraphNode

    fx = {
        n.name: n
        for n in [
            GraphNode("primals_1", "placeholder", "primals_1", display_name="x", role="input"),
            GraphNode("primals_2", "placeholder", "primals_2", display_name="fc.weight", role="parameter"),
            GraphNode("relu", "call_function", "aten.relu.default", inputs=["primals_1"], module_stack=["act"]),
        ]
    }
    c = Compile(
        id="0/0 forward",
        compile_id="0/0",
        graph_kind="forward",
        trigger=Trigger("first_call", ""),
        graph_outputs=["buf0", "buf1", "primals_2"],
        output_nodes={"buf0": "relu", "buf1": "primals_1", "primals_2": "primals_2"},
    )
    assert output_names(c, fx) == {"buf0": "act relu", "buf1": "copy of x", "primals_2": "fc.weight"}


def test_an_output_inductor_gives_its_promised_strides_is_named_by_what_it_holds():
    """A frozen graph's last linear (oneDNN's ``_mkl_linear``) reaches the output through Inductor's
    ``inductor_force_stride_order``: its oval said ``inductor_force_stride_order``, Inductor's own op, where it holds
    the linear's result: ``head addmm``, as a view on the way is looked through."""
    from inductor_lens.report.finish import output_names
    from inductor_lens.report.model import GraphNode

    fx = {
        n.name: n
        for n in [
            GraphNode("mean", "placeholder", "mean", display_name="h", role="input"),
            GraphNode(
                "_mkl_linear", "call_function", "mkl._mkl_linear", inputs=["mean"], module_stack=["head"],
                original_op="addmm",
            ),
            GraphNode(
                "inductor_force_stride_order_default", "call_function", "prims.inductor_force_stride_order.default",
                inputs=["_mkl_linear"],
            ),
        ]
    }  # fmt: skip
    c = Compile(
        id="0/0 inference",
        compile_id="0/0",
        graph_kind="inference",
        trigger=Trigger("first_call", ""),
        graph_outputs=["buf7"],
        output_nodes={"buf7": "inductor_force_stride_order_default"},
    )
    assert output_names(c, fx) == {"buf7": "head addmm"}


def test_a_backwards_outputs_are_named_by_the_forward_inputs_they_are_the_gradients_of():
    """``Compile.output_names`` of a backward: its return holds the gradient of each forward input in its place
    (``GraphNode.returns``, ``""`` for a None: ``x`` needs none), named by ``forward_inputs`` where the two are as
    many; where its forward is not known (compiled autograd's backward, a report made before these fields) or the
    two are not as many, by the op that made each, as before."""
    from inductor_lens.report.finish import output_names
    from inductor_lens.report.model import GraphNode

    nodes = [
        GraphNode("tangents_1", "placeholder", "tangents_1", display_name="gradient of output 1", role="tangent"),
        GraphNode("mm", "call_function", "aten.mm.default", inputs=["tangents_1"], module_stack=["0"]),
        GraphNode("mm_1", "call_function", "aten.mm.default", inputs=["tangents_1"], module_stack=["0"]),
        GraphNode("sum_1", "call_function", "aten.sum.dim_IntList", inputs=["tangents_1"], module_stack=["0"]),
        GraphNode("output", "output", "output", inputs=["mm", "sum_1", "mm_1"], returns=["mm", "sum_1", "", "mm_1"]),
    ]
    fx = {n.name: n for n in nodes}
    c = Compile(
        id="0/0 backward",
        compile_id="0/0",
        graph_kind="backward",
        trigger=Trigger("lazy_backward", ""),
        graph_outputs=["buf0", "buf1", "buf2"],
        output_nodes={"buf0": "mm", "buf1": "sum_1", "buf2": "mm_1"},
        forward_inputs=["0.weight", "0.bias", "y", "x"],
    )
    grads = {"buf0": "0.weight.grad", "buf1": "0.bias.grad", "buf2": "x.grad"}
    assert output_names(c, fx) == grads
    before = {"buf0": "[0] mm", "buf1": "[0] sum", "buf2": "[0] mm"}  # which gradient, they do not say
    unpaired = dataclasses.replace(c, forward_inputs=[])  # compiled autograd's backward: no forward of its own
    assert output_names(unpaired, fx) == before
    assert output_names(dataclasses.replace(c, forward_inputs=["0.weight", "x"]), fx) == before  # not as many
    older = dict(fx, output=dataclasses.replace(fx["output"], returns=[]))  # a report made before `returns`
    assert output_names(c, older) == before
    # a TORCH_TRACE import has no output_nodes: its buffers are the output node's inputs, each once
    imported = dataclasses.replace(c, graph_outputs=["mm", "sum_1", "mm_1"], output_nodes={})
    assert output_names(imported, fx) == {
        "mm": "0.weight.grad",
        "sum_1": "0.bias.grad",
        "mm_1": "x.grad",
    }
    # one tensor returned for two inputs (the gradient of x + y passed through): named for both
    both = dict(fx, output=dataclasses.replace(fx["output"], returns=["mm", "sum_1", "mm_1", "mm_1"]))
    assert output_names(c, both)["buf2"] == "y.grad, x.grad"
    assert output_names(dataclasses.replace(c, graph_kind="forward"), fx) == before  # only a backward's
    # compiled autograd's backward: the parameter whose .grad each place holds, "" where none is known there (no
    # ".grad" of nothing): that output is named by its op
    ca = dataclasses.replace(c, trigger=Trigger("compiled_autograd", ""), forward_inputs=["0.weight", "", "", "x"])
    assert output_names(ca, fx) == {"buf0": "0.weight.grad", "buf1": "[0] sum", "buf2": "x.grad"}


def test_a_top_level_sequential_childs_index_reads_as_python_indexes_it():
    """A saved tensor, an output or a launch argument made in ``nn.Sequential(...)[1]`` was named ``1 relu (saved)``,
    which reads as a count: ``[1] relu (saved)``; a named module stays as it is."""
    node = GraphNode("relu", "call_function", "aten.relu.default", module_stack=["1"])
    nested = GraphNode("addmm", "call_function", "aten.addmm.default", module_stack=["0.2"])
    named = GraphNode("gelu", "call_function", "aten.gelu.default", module_stack=["h.0.mlp"])
    fx = {n.name: n for n in (node, nested, named)}
    assert rules.saved_name("relu", fx) == "[1] relu (saved)"
    assert rules.made_by_text("addmm", fx) == "[0][2] addmm"
    assert rules.saved_name("gelu", fx) == "h.0.mlp gelu (saved)"


def test_a_compiles_size_guards_are_its_guards_on_sizes_only():
    """``Compile.size_guards`` lists the root lambda guards that relate sizes. Dynamo puts others there too: two
    inputs that are one object (``input_ids is labels``), tied weights, a global's function: on the recorded GPT-2
    training step the list held 15 of those and no size guard."""
    report = inductor_lens.load(FIXTURES / "gpu_perf_gpt2_training.json")
    texts = [c.guards for c in report.compiles if c.guards]
    assert any(" is " in t for t in texts)  # the fixture holds the guards that are not about sizes
    for c in report.compiles:
        assert all(
            (".size(" in g or ".stride(" in g or ".storage_offset(" in g) and " is " not in g for g in c.size_guards
        )
    assert rules.size_guards("+- LAMBDA_GUARD: 2 <= L['x'].size()[0]  # m.py:3\n+- LAMBDA_GUARD: L['a'] is L['b']") == [
        "2 <= x.size()[0]"
    ]


def test_a_launch_scalar_is_shipped_as_exact_text():
    """``LaunchArg.value_text``: the page's JSON reader rounds an int past 2**53 (Inductor's seeds are drawn by
    ``aten.randint.low_out(-9223372036854775808, 9223372036854775807, ...)``, shown as 9223372036854776000), so
    Python ships each scalar's text, derived on every build and load (a stored one is ignored)."""
    from inductor_lens.report.model import LaunchArg

    assert LaunchArg("high", value=2**63 - 1, value_text="9223372036854776000").value_text == "9223372036854775807"
    assert LaunchArg("ks0", value="s0", hint=8).value_text == "s0 = 8"
    assert LaunchArg("eps", value=1e-05).value_text == "1e-05"
    assert LaunchArg("buf0", shape=[3], stride=[1], dtype="int64").value_text == ""


def test_a_training_forwards_note_names_up_to_eight_outputs():
    """A model returning its KV cache before its loss and logits: "returns 6 buffers (values, keys, values_1, keys_1
    and 2 more)" hid the two the user asked for (nu20 O-f); up to eight are named."""
    from inductor_lens.report.rules import graph_note

    names = ["values", "keys", "values_1", "keys_1", "loss", "logits"]
    note = graph_note("forward", names, ["mm"])
    assert "It returns 6 outputs (values, keys, values_1, keys_1, loss, logits) to your code" in note, note
    assert "and 1 more" in graph_note("forward", [f"o{i}" for i in range(9)], ["mm"])


def _optimizer_step(params: list[str]) -> Compile:
    """A compiled optimizer step as Inductor makes it (nu23's AdamW, compile 2/0): one C++ kernel call of one fused
    node per parameter, each writing the parameter, its ``exp_avg``, ``exp_avg_sq`` and ``step`` in place (graph inputs
    named as dynamo's sources name them: ``exp_avg of cls``)."""
    nodes, fused, inputs = [], [], []
    for i, p in enumerate(params):
        names = [p] + [f"{what} of {p}" for what in ("exp_avg", "exp_avg_sq", "step")]
        args = [f"arg{4 * i + j}_1" for j in range(4)]
        for j, (arg, shown) in enumerate(zip(args, names)):
            nodes.append(
                GraphNode(arg, "placeholder", arg, role="parameter" if j == 0 else "attribute", display_name=shown)
            )
        nodes.append(GraphNode(f"add_{i}", "call_function", "aten.add.Tensor", args[:2]))
        fused.append(FusedNode(f"op{i}", "pointwise", [f"add_{i}"], "cpp_fused_add_copy__0", mutates=args))
        inputs += args
    kernel = Kernel(
        "cpp_fused_add_copy__0", "cpp", "...", [n.name for n in fused], [f"add_{i}" for i in range(len(params))]
    )
    kernel = dataclasses.replace(kernel, call_sites=[[n.name for n in fused]])
    return finish_compile(dataclasses.replace(_forward(nodes, fused, [kernel]), graph_inputs=inputs))


OPTIMIZER_PARAMS = ["cls", "pos", "patch.weight", "patch.bias", "head.weight", "head.bias"]


def test_a_kernel_call_of_several_nodes_says_all_it_writes_in_place():
    """nu23 D5: a kernel of several fused nodes (a compiled AdamW step: one kernel updates every parameter) said only
    its first node's writes ("Writes cls in place ... Writes exp_avg of cls, exp_avg_sq of cls"): ``Kernel.in_place``
    says what the whole call writes, counted by kind, a few named, the parameters' state said once as theirs."""
    c = _optimizer_step(OPTIMIZER_PARAMS)
    (k,) = c.kernels
    assert k.in_place == [
        "Writes 6 parameters of your model in place (cls, pos, patch.weight and 3 more), and their exp_avg, "
        "exp_avg_sq and step."
    ]
    assert c.fused_nodes[0].in_place.startswith("Writes cls in place")  # each node's own sentence stays its own
    # a call of one node says nothing more than the node; a call of a few names each as the node sentence does
    one = _optimizer_step(["w"])
    assert one.kernels[0].in_place == []
    two = _forward(
        [GraphNode(a, "placeholder", a, role="buffer", display_name=f"bn.{a}") for a in ("m", "v")],
        [FusedNode(f"op{i}", "pointwise", [], "k0", mutates=[a]) for i, a in enumerate(("m", "v"))],
        [dataclasses.replace(Kernel("k0", "cpp", "...", ["op0", "op1"], []), call_sites=[["op0", "op1"]])],
    )
    assert two.kernels[0].in_place == ["Writes bn.m, bn.v in place (graph inputs m, v, buffers of your model)."], (
        two.kernels[0].in_place
    )


def test_a_batch_norms_welford_m2_buffer_is_named_in_its_launch_table():
    """nu31 D7: a batch norm kernel's launch table named ``buf26 out_ptr1`` by nothing, between its neighbours'
    ``batch_norm: save_mean`` and ``save_invstd``: its C++ source stores the Welford accumulator's ``.m2`` (the sum
    of squares about the mean, of which the variance is made) through that pointer, which no graph op names."""
    from tests._recorded import recorded

    report = recorded("cpu_resnet_fp32.json.gz")
    forward = finish_compile(next(c for c in report.compiles if c.graph_kind == "forward"))
    kernel = next(k for k in forward.kernels if k.name == "cpp_fused__native_batch_norm_legit_functional_copy__relu_3")
    assert "tmp_acc0_vec.m2.store(out_ptr1 " in kernel.source
    args = {a.param: (a.name, a.holds) for a in kernel.launch.args}
    assert args["out_ptr0"] == ("buf25", "model.block2.bn1 batch_norm: save_mean")
    assert args["out_ptr1"] == (
        "buf26",
        "model.block2.bn1 batch_norm: var_mean (Welford m2: the sum of squares about the mean)",
    )
    assert args["out_ptr4"] == ("buf28", "model.block2.bn1 batch_norm: save_invstd")
    unnamed = [(k.name, a.name) for k in forward.kernels if k.launch for a in k.launch.args if a.shape and not a.holds]
    assert not [u for u in unnamed if "batch_norm" in u[0]], unnamed


def test_why_not_fused_rows_are_decided_once_in_python_one_per_neighbour():
    """nu24: the panel's "Why not fused" grouped the refusals by neighbour in panel.js, and hid a neighbour in another
    launch of the same kernel as "fused after all". The rows are FusedNode.refusals now: one per neighbour, its pairs
    and distinct reasons; a refusal inside one kernel call is no row; another launch of the node's own kernel is
    (Inductor did not fuse the two), named with its node like two rows that would read alike."""
    from inductor_lens.report.model import FusionDecision

    c = _compile()
    decisions = [
        FusionDecision("op2", "op3", "same call", "op2", "op3"),  # one call of cpp_fused_relu_0: fused after all
        FusionDecision("op3", "op5", "no shared data", "op3", "op5"),  # two launches of cpp_fused_relu_0
        FusionDecision("cos", "relu", "intermediate nodes between node1 & node2", "op4", "op2"),
        FusionDecision("cos2", "relu", "too far apart\nno shared data", "op4", "op2"),
        FusionDecision("cos", "sin", "intermediate nodes between node1 & node2", "op4", "op3"),
        FusionDecision("buf7", "mm", "template epilogue", None, "op0"),
    ]
    c = finish_compile(dataclasses.replace(c, fusion_decisions=decisions))
    assert [(d.node1, d.node2) for d in c.fusion_decisions] == [(d.node1, d.node2) for d in decisions[1:]]
    rows = {
        n.name: [(r.other, r.name, r.text, r.tell, r.reasons, r.pairs_text) for r in n.refusals] for n in c.fused_nodes
    }
    assert rows["op4"] == [
        (
            "op2",
            "op2",
            "cpp_fused_relu_0",
            "op2",
            ["intermediate nodes between node1 & node2", "too far apart\nno shared data"],
            "(2 node pairs)",
        ),
        ("op3", "op3", "cpp_fused_relu_0", "op3", ["intermediate nodes between node1 & node2"], "(cos + sin)"),
    ]
    assert rows["op3"] == [
        ("op5", "op5", "cpp_fused_relu_0", "op5", ["no shared data"], "(op3 + op5)"),
        ("op4", "op4", "cpp_fused_cos_1", "", ["intermediate nodes between node1 & node2"], "(cos + sin)"),
    ]
    assert rows["op0"] == [(None, "buf7 / mm", "buf7 / mm", "", ["template epilogue"], "(buf7 + mm)")]
    assert rows["op2"][0][2:4] == ("cpp_fused_cos_1", "") and rows["op1"] == []
    assert next(n for n in c.fused_nodes if n.name == "op4").refusals[0].pairs == ["cos + relu", "cos2 + relu"]


def test_the_all_compiles_time_by_line_is_every_compiles_rows_added_also_without_a_step_profile():
    """nu24: the Source view's gutter over all compiles added up the compiles' Compile.time_by_line rows in JS.
    Report.time_by_line is that, decided in Python: the profile's by_line where the report has a profile, and the
    same rule where its kernels were timed alone (no profile)."""
    import collections

    for name in ("gpu_training.json", "gpu_perf_gpt2_training.json"):
        report = inductor_lens.load(FIXTURES / name)
        added = collections.Counter()
        for c in report.compiles:
            for r in c.time_by_line:
                added[(r.file, r.line, r.built)] += r.us
        every = {(r.file, r.line, r.built): r.us for r in report.time_by_line}
        assert len(every) == len(report.time_by_line) and every, name
        assert every == pytest.approx(dict(added), abs=0.01), name
        assert all(r.text for r in report.time_by_line), name
        if report.profile is not None:
            assert report.time_by_line == report.profile.by_line
    assert inductor_lens.load(FIXTURES / "gpu_training.json").profile is None  # kernels timed alone


def test_the_kernel_tables_word_for_each_reason_a_kernel_has_no_line():
    """Kernel.no_line_text, the kernel table's line cell of a kernel no line of the user's ran: each reason
    rules.no_line_reason gives has its own words, those made by a function (the seeds', code with no file) too."""
    from types import SimpleNamespace as F

    words = {
        rules.INPUT_COPY: "Inductor's layout copy",
        rules.INSIDE_TORCH: "inside torch",
        rules.NO_FX_OPS: "no FX op linked",
        rules.NO_PROVENANCE: "not in the log",
        rules.seeds_reason([F(file="/a/m.py", line=3)]): "Inductor's random seeds",
        rules.no_file_reason("<string>"): "code with no file",
        "": "",
    }
    assert {reason: rules.no_line_text(reason) for reason in words} == words
