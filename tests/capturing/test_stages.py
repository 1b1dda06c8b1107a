"""Inductor's path, stage by stage (nu25 D2, D3): which lowering function made each op (``GraphNode.lowered_by``),
where a fused node's ops were merged (``FusedNode.merge_text``: inlined by lowering, or fused by the scheduler), and
the paths to lowering and fusion (``Compile.lowering_stack``, ``fusion_stack``), against what torch runs (checked by
hand on torch 2.13 and 2.15: a ``sys.setprofile`` probe of ``make_foreach_pointwise.<locals>.inner``, torch's
``ir_pre_fusion.txt`` and a wrapper of ``Scheduler.fuse_nodes`` counting its nodes in and out)."""

import pytest
import torch

import inductor_lens


def _foreach_step(ps, gs):
    torch._foreach_add_(ps, gs, alpha=-0.1)
    return ps


def _relu_sum(x):
    return (x.relu() * 2).sum(1) + 1


@pytest.fixture(scope="module")
def foreach_and_reduction_report():
    """Two small compiles: an optimizer-like ``_foreach_add_`` over three tensors, and a pointwise op feeding a
    reduction (torch: ``fuse_nodes`` gets 2 nodes, op0 = relu, mul, sum and op1 = add, and returns 1)."""
    ps = [torch.randn(64), torch.randn(32, 8), torch.randn(5)]
    gs = [torch.randn_like(p) for p in ps]
    with inductor_lens.capture(strict=True, title="stages") as cap:
        torch.compile(_foreach_step)(ps, gs)
        torch.compile(_relu_sum)(torch.randn(8, 16))
    return cap.report


def _node(c, name):
    return next(n for n in c.graphs["post_grad"].nodes if n.name == name)


def test_each_op_names_the_lowering_function_torch_ran(sin_cos_report):
    c = sin_cos_report.compiles[0]
    sin = _node(c, "sin")
    assert [f.function for f in sin.lowered_by] == ["make_pointwise.<locals>.inner"]
    assert sin.lowered_by[0].file.replace("\\", "/").endswith("torch/_inductor/lowering.py")
    assert sin.lowered_by[0].code.startswith("def inner(")
    assert [f.function for f in _node(c, "pow_1").lowered_by] == ["pow"]
    assert all(not n.lowered_by for n in c.graphs["post_grad"].nodes if n.op != "call_function")
    assert all(not n.lowered_by for n in c.graphs["dynamo"].nodes)  # dynamo's graph is not lowered


def test_a_foreach_op_names_make_foreach_pointwise_through_its_registration_wrapper(foreach_and_reduction_report):
    c = foreach_and_reduction_report.compiles[0]
    (op,) = [n for n in c.graphs["post_grad"].nodes if n.target.startswith("aten._foreach_add_")]
    assert [f.function for f in op.lowered_by] == [
        "register_foreach_inplace.<locals>.fn",
        "make_foreach_pointwise.<locals>.inner",
    ]
    # one FX op, which lowering made into one scheduler node per tensor
    assert [n.member_ops for n in c.fused_nodes] == [[[op.name]]] * 3
    assert "which lowering made into 3 scheduler nodes" in c.fused_nodes[0].merge_text
    # on the CPU the three are one C++ kernel: its code generation wrote them together (nu27 D3), which is said
    (kernel,) = {n.kernel for n in c.fused_nodes}
    assert kernel.startswith("cpp_") and len(c.kernel(kernel).fused_nodes) == 3
    assert "Its C++ kernel also runs 2 other fused nodes" in c.fused_nodes[0].merge_text


def test_sin_cos_ops_were_inlined_at_lowering_and_the_scheduler_fused_nothing(sin_cos_report):
    (n,) = sin_cos_report.compiles[0].fused_nodes
    assert n.members == ["op0"] and len(n.member_ops) == 1 and len(n.member_ops[0]) == 5
    assert n.merge_text.startswith("5 ops in one loop: Inductor's lowering inlined them (GraphLowering.run)")
    assert "The scheduler fused nothing into it" in n.merge_text


def test_a_pointwise_op_feeding_a_reduction_is_fused_by_the_scheduler(foreach_and_reduction_report):
    c = foreach_and_reduction_report.compiles[1]
    (n,) = [n for n in c.fused_nodes if not n.is_glue]
    assert n.members == ["op0", "op1"]
    assert n.merge_text == (
        "2 scheduler nodes fused by the scheduler (Scheduler.fuse_nodes): op0 (3 ops inlined at lowering: relu, "
        "mul, sum), op1 (add)."
    )


def test_lowering_and_fusion_paths_branch_off_codegen_s_inside_inductor(sin_cos_report):
    c = sin_cos_report.compiles[0]
    codegen = c.kernels[0].compiler_stack
    low, fus = c.lowering_stack, c.fusion_stack
    assert low[-1].function.endswith("call_function") and fus[-1].function.endswith("fuse_nodes")
    # the three start at the user's call and share the path through dynamo and AOT autograd into Inductor
    for path in (low, fus):
        assert path[0].code == "compiled(torch.randn(64))"
        shared = next(i for i, (a, b) in enumerate(zip(path, codegen)) if (a.file, a.line) != (b.file, b.line))
        assert any(f.function == "fx_codegen_and_compile" for f in path[:shared])
    assert any(f.function == "run" and f.file.replace("\\", "/").endswith("_inductor/graph.py") for f in low)
    assert any(f.function == "_init" for f in fus)  # Scheduler._init, which codegen's path starts the scheduler by
    # the panel draws the frames all three share once: how many, decided in Python (Kernel.stage_shared, stage_note)
    both = min(
        next(i for i, (a, b) in enumerate(zip(p, codegen)) if (a.file, a.line) != (b.file, b.line)) for p in (low, fus)
    )
    kernel = c.kernels[0]
    assert kernel.stage_shared == both and f"They share {both} frames, down to " in kernel.stage_note
    assert c.stage_shared >= both  # without a kernel's path: the lowering and fusion paths' own


def test_a_report_without_member_ops_still_says_who_merged_from_its_members():
    """Report data alone (no torch): a report written before ``member_ops`` gets ``merge_text`` on load from its
    members: several were fused by the scheduler; one holding several ops was inlined at lowering."""
    from inductor_lens.report.finish import derive_compile
    from inductor_lens.report.model import Compile, FusedNode, Graph, GraphNode, Trigger

    nodes = [GraphNode("x", "placeholder", "x")] + [
        GraphNode(n, "call_function", t, inputs=["x"])
        for n, t in (("relu", "aten.relu.default"), ("sum_1", "aten.sum.dim_IntList"), ("sin", "aten.sin.default"))
    ]
    fused = [
        FusedNode("op0_op1", "reduction", fx_nodes=["relu", "sum_1"], kernel="k0", members=["op0", "op1"]),
        FusedNode("op2", "pointwise", fx_nodes=["sin", "x"], kernel="k1", members=["op2"]),
    ]
    c = Compile(
        "0/0 inference",
        "0/0",
        "inference",
        Trigger("first_call", ""),
        graphs={"post_grad": Graph(nodes)},
        fused_nodes=fused,
    )
    got = derive_compile(c)
    assert [n.merge_text for n in got.fused_nodes] == [
        "2 scheduler nodes fused by the scheduler (Scheduler.fuse_nodes): op0, op1.",
        "One op (sin) in a loop of its own: nothing was inlined into it at lowering (GraphLowering.run) nor fused by "
        "the scheduler (Scheduler.fuse_nodes).",
    ]


def test_a_reused_cpp_kernels_other_calls_are_not_its_mates():
    """Report data alone: a C++ kernel whose source is reused (a 12-layer GPT-2: one kernel called by every layer)
    holds the fused nodes of every call; a node's merge text named the other calls' nodes ("also runs 10 other fused
    nodes (op0, op1, op2, op90_op116, ...)") as written together with it. Only its own call's are."""
    from inductor_lens.report.finish import derive_compile
    from inductor_lens.report.model import Compile, FusedNode, Graph, GraphNode, Kernel, Trigger

    nodes = [GraphNode("x", "placeholder", "x")] + [
        GraphNode(n, "call_function", "aten.sin.default", inputs=["x"]) for n in ("s0", "s1", "s2")
    ]
    fused = [FusedNode(f"op{i}", "pointwise", fx_nodes=[f"s{i}"], kernel="cpp_k", members=[f"op{i}"]) for i in range(3)]
    k = Kernel("cpp_k", "cpp", "", fused_nodes=["op0", "op1", "op2"], call_sites=[["op0"], ["op1", "op2"]])
    c = Compile(
        "0/0 inference",
        "0/0",
        "inference",
        Trigger("first_call", ""),
        graphs={"post_grad": Graph(nodes)},
        fused_nodes=fused,
        kernels=[k],
    )
    got = {n.name: n.merge_text for n in derive_compile(c).fused_nodes}
    assert "other fused node" not in got["op0"], got["op0"]
    assert "Its C++ kernel also runs 1 other fused node (named above" in got["op1"], got["op1"]
