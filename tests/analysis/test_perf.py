"""Where the time goes, against the hardware (issue 13): kernel costs, measured time of every kernel, the
unattributed remainder, fraction of peak, roll-ups. Real CPU compiles; the GPU event structure, which cannot
run here, is exercised with a hand-built event tree shaped like the profiler's (and by the recorded GPU
fixtures in test_perf_gpu_fixtures.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import statistics
from types import SimpleNamespace

import pytest
import torch

import inductor_lens
import inductor_lens.analysis.perf
from inductor_lens.analysis import devices
from inductor_lens.analysis.cost import kernel_cost, with_costs
from inductor_lens.capturing import kernel_timing
from inductor_lens.report.model import (
    Compile,
    DeviceInfo,
    Graph,
    GraphNode,
    Kernel,
    KernelProfile,
    OpTime,
    StepProfile,
    Trigger,
    load,
)

N = 1000
M, K, NN = 64, 32, 48
ROWS, COLS = 16, 100


def sin_cos(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


def matmul(a, b):
    return a @ b


def softmax(x):
    return torch.softmax(x, -1)


@pytest.fixture(scope="module")
def cost_report():
    """Three functions, one capture: one kernel each."""
    with inductor_lens.capture(strict=True, title="costs") as cap:
        torch.compile(sin_cos)(torch.randn(N))
        torch.compile(matmul)(torch.randn(M, K), torch.randn(K, NN))
        torch.compile(softmax)(torch.randn(ROWS, COLS))
    return cap.report


def _only_kernel(report, frame):
    (c,) = [c for c in report.compiles if c.frame == frame]
    (k,) = c.kernels
    return k


def test_sin_cos_reads_4n_and_writes_4n_bytes(cost_report):
    cost = _only_kernel(cost_report, "sin_cos").cost
    assert cost.bytes_read == 4 * N and cost.bytes_written == 4 * N
    assert "Inductor" in cost.source
    assert cost.flops == 5 * N  # sin, pow, cos, pow, add: one per element each


def test_matmul_has_2mkn_flops_and_reads_both_operands(cost_report):
    k = _only_kernel(cost_report, "matmul")
    assert k.language == "extern"
    assert k.cost.flops == 2 * M * K * NN
    assert k.cost.bytes_read == 4 * (M * K + K * NN) and k.cost.bytes_written == 4 * M * NN
    assert "mm" in k.cost.source


def test_softmax_reads_and_writes_what_its_buffers_hold(cost_report):
    k = _only_kernel(cost_report, "softmax")
    # one fused kernel: its max and sum buffers live and die inside it, so only input and output count
    assert k.cost.bytes_read == 4 * ROWS * COLS and k.cost.bytes_written == 4 * ROWS * COLS


def test_cost_survives_json(cost_report):
    again = load(cost_report.to_json())
    assert again == cost_report
    assert json.loads(cost_report.to_json())["compiles"][0]["kernels"][0]["cost"]["bytes_read"] == 4 * N


# -- costs from the model alone (torch-free) ------------------------------------------------------


def _compile(nodes, kernel):
    return Compile(
        id="0/0 forward",
        compile_id="0/0",
        graph_kind="forward",
        trigger=Trigger(kind="first_call", reason=""),
        graphs={"post_grad": Graph(nodes=nodes)},
        kernels=[kernel],
    )


def test_symbolic_sizes_are_counted_at_their_hints_and_said_so():
    nodes = [
        GraphNode("a", "placeholder", "a", shape=["s0", 32], dtype="float32"),
        GraphNode("b", "placeholder", "b", shape=[32, 16], dtype="float32"),
        GraphNode("mm", "call_function", "aten.mm.default", inputs=["a", "b"], shape=["s0", 16], dtype="float32"),
    ]
    for n in (nodes[0], nodes[2]):
        object.__setattr__(n, "shape_hint", [10, n.shape[1]])  # the capture helper's field, where present
    k = Kernel(name="extern_kernels.mm[buf0]", language="extern", source="", fx_nodes=["mm"])
    cost = kernel_cost(k, _compile(nodes, k))
    assert cost.flops == 2 * 10 * 32 * 16
    assert cost.bytes_read == 4 * (10 * 32 + 32 * 16) and cost.bytes_written == 4 * 10 * 16
    assert "hint" in cost.source and "shapes" in cost.source


def test_symbolic_size_without_hint_is_unknown_not_guessed():
    nodes = [
        GraphNode("a", "placeholder", "a", shape=["s0", 32], dtype="float32"),
        GraphNode("b", "placeholder", "b", shape=[32, 16], dtype="float32"),
        GraphNode("mm", "call_function", "aten.mm.default", inputs=["a", "b"], shape=["s0", 16], dtype="float32"),
    ]
    k = Kernel(name="extern_kernels.mm[buf0]", language="extern", source="", fx_nodes=["mm"])
    cost = kernel_cost(k, _compile(nodes, k))
    assert cost.flops is None and cost.bytes_read is None
    # and the panel's "? FLOP" comes with the op that stopped the count
    assert "flops: unknown, mm (mm) has no recorded shape to count from" in cost.source


def test_a_custom_op_is_named_by_its_op_and_its_flops_are_unknown_not_per_element():
    """A ``torch.library.custom_op`` ("trial::softclip") is opaque: its box was titled "trial" (the namespace) and its
    cost claimed one FLOP per element. A collective of torch's own namespace is still counted."""
    x = GraphNode("x", "placeholder", "x", shape=[64, 32], dtype="float32")
    clip = GraphNode("h", "call_function", "trial.softclip.default", inputs=["x"], shape=[64, 32], dtype="float32")
    assert clip.short_op == "softclip"
    k = Kernel(name="torch.ops.trial.softclip.default[buf0]", language="extern", source="", fx_nodes=["h"])
    cost = kernel_cost(k, _compile([x, clip], k))
    assert cost.flops is None and cost.bytes_read == 64 * 32 * 4
    assert "flops: unknown, trial::softclip is a custom op" in cost.source
    ar = GraphNode(
        "ar", "call_function", "_c10d_functional.all_reduce.default", inputs=["x"], shape=[64, 32], dtype="float32"
    )
    assert ar.short_op == "all_reduce"
    k2 = Kernel(name="ext[buf1]", language="extern", source="", fx_nodes=["ar"])
    assert kernel_cost(k2, _compile([x, ar], k2)).flops == 64 * 32


def test_a_foreach_op_counts_every_tensor_of_its_list():
    """nu25 minor: a compiled ``torch._foreach_add_`` (an optimizer's step) said "flops: unknown, _foreach_add_ has no
    recorded shape to count from" while its FX op listed the shapes of its three tensors, ``([64], [32, 8], [5])``: a
    ``_foreach_`` op's shape is one shape per tensor. It is counted per element over the list; the in-place op writes
    the list it adds into, and ``_foreach_norm`` counts what it reads."""
    shapes = [[64], [32, 8], [5]]
    ins = [GraphNode(f"a{i}", "placeholder", f"a{i}", shape=s, dtype="float32") for i, s in enumerate(shapes)]
    ins += [GraphNode(f"b{i}", "placeholder", f"b{i}", shape=s, dtype="float32") for i, s in enumerate(shapes)]
    add = GraphNode(
        "_foreach_add", "call_function", "aten._foreach_add_.List", [n.name for n in ins], shape=shapes, dtype="float32"
    )
    k = Kernel(name="cpp_fused__foreach_add_0", language="cpp", source="", fx_nodes=["_foreach_add"])
    cost = kernel_cost(k, _compile(ins + [add], k))
    assert cost.flops == 64 + 256 + 5
    assert (cost.bytes_read, cost.bytes_written) == (2 * 325 * 4, 325 * 4)
    norm = GraphNode(
        "_foreach_norm", "call_function", "aten._foreach_norm.Scalar", ["a0", "a1", "a2"], shape=[[], [], []]
    )
    k2 = Kernel(name="cpp_fused__foreach_norm_1", language="cpp", source="", fx_nodes=["_foreach_norm"])
    assert kernel_cost(k2, _compile(ins[:3] + [norm], k2)).flops == 325


def test_attention_and_convolution_flops_from_shapes():
    B, H, L, E = 2, 4, 128, 64
    q = [GraphNode(n, "placeholder", n, shape=[B, H, L, E], dtype="bfloat16") for n in "qkv"]
    att = GraphNode(
        "sdpa",
        "call_function",
        "aten._scaled_dot_product_efficient_attention.default",
        inputs=["q", "k", "v"],
        shape=[B, H, L, E],
        dtype="bfloat16",
    )
    k = Kernel(name="ext[buf0]", language="extern", source="", fx_nodes=["sdpa"])
    assert kernel_cost(k, _compile(q + [att], k)).flops == 4 * B * H * L * L * E
    x = GraphNode("x", "placeholder", "x", shape=[1, 3, 8, 8], dtype="float32")
    w = GraphNode("w", "placeholder", "w", shape=[16, 3, 3, 3], dtype="float32")
    conv = GraphNode(
        "conv", "call_function", "aten.convolution.default", inputs=["x", "w"], shape=[1, 16, 6, 6], dtype="float32"
    )
    k = Kernel(name="ext[buf1]", language="extern", source="", fx_nodes=["conv"])
    assert kernel_cost(k, _compile([x, w, conv], k)).flops == 2 * (16 * 6 * 6) * 3 * 3 * 3


def _torch_flops(op, *args):
    """What ``torch.utils.flop_counter.FlopCounterMode`` counts for one call of ``op``."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as m:
        op(*args)
    return m.get_total_flops()


#: (input, weight, stride, transposed, groups) of convolutions of each dimensionality, plain and transposed
_CONVS = [
    ([2, 3, 16], [5, 3, 4], 2, False, 1),
    ([8, 3, 32, 32], [64, 3, 4, 4], 4, False, 1),  # nu23's patch embedding: Conv2d(3, 64, 4, stride 4)
    ([2, 4, 6, 6, 6], [6, 4, 3, 3, 3], 1, False, 1),
    ([2, 6, 5, 5], [6, 3, 3, 3], 2, True, 1),  # ConvTranspose2d(6, 3, 3, stride 2): weight [C_in, C_out, k, k]
    ([2, 4, 7], [4, 4, 3], 2, True, 1),  # as many channels in as out: told apart by the sizes
    ([2, 4, 8, 8], [4, 4, 3, 3], 1, False, 1),
]


def _conv_nodes(x, w, stride, transposed, groups, mask):
    """The post-grad nodes of a convolution's forward and of its backward with ``output_mask`` ``mask``, shaped as torch
    shapes them; and the tensors, for torch's counter."""
    xt, wt = torch.randn(x), torch.randn(w)
    args = ([stride] * (len(x) - 2), [0] * (len(x) - 2), [1] * (len(x) - 2), transposed, [0] * (len(x) - 2), groups)
    y = torch.ops.aten.convolution.default(xt, wt, None, *args)
    go = torch.randn(y.shape)
    nodes = [
        GraphNode("x", "placeholder", "x", shape=x, dtype="float32"),
        GraphNode("w", "placeholder", "w", shape=w, dtype="float32"),
        GraphNode("go", "placeholder", "go", shape=list(y.shape), dtype="float32"),
        GraphNode(
            "conv", "call_function", "aten.convolution.default", ["x", "w"], shape=list(y.shape), dtype="float32"
        ),
        GraphNode("cb", "call_function", "aten.convolution_backward.default", ["go", "x", "w"]),  # a tuple with a None
    ]
    for i, (asked, name, shape) in enumerate(zip(mask, ("grad_input", "grad_weight"), (x, w))):
        if asked:
            nodes.append(GraphNode(f"g{i}", "call_function", "_operator.getitem", ["cb"], shape=shape, output=name))
    fwd = _torch_flops(torch.ops.aten.convolution.default, xt, wt, None, *args)
    back = _torch_flops(torch.ops.aten.convolution_backward.default, go, xt, wt, None, *args, [*mask, False])
    return nodes, fwd, back


@pytest.mark.parametrize("x, w, stride, transposed, groups", _CONVS)
def test_a_convolution_and_its_backward_count_what_torchs_flop_counter_counts(x, w, stride, transposed, groups):
    """nu23 D1: ``convolution_backward`` of the ViT's patch embedding was counted 402,653,184 FLOPs, torch's
    FlopCounterMode 3,145,728: the rule took the input ``[8, 3, 32, 32]`` for the weight (its second argument; the
    weight is the third) and counted both gradients, though the input needs none (``output_mask``), which the roofline
    drew ten times above the measured ceiling. Now each gradient the graph takes (its ``getitem``s) counts the
    forward's FLOPs, as torch counts them, for 1-, 2- and 3-d convolutions, transposed ones (whose forward counted
    the output's elements, not the input's) too."""
    for mask in ([False, True], [True, True], [True, False]):
        nodes, fwd, back = _conv_nodes(x, w, stride, transposed, groups, mask)
        k = Kernel(name="ext[buf0]", language="extern", source="", fx_nodes=["conv"])
        assert kernel_cost(k, _compile(nodes, k)).flops == fwd
        k = Kernel(name="ext[buf1]", language="extern", source="", fx_nodes=["cb"])
        cost = kernel_cost(k, _compile(nodes, k))
        assert cost.flops == back, (mask, cost.flops, back)
        asked = " and ".join(g for g, a in zip(("grad_input", "grad_weight"), mask) if a)
        assert f"convolution_backward ({asked})" in cost.source and cost.upper_bounds == []
    # a report that does not name the getitems' outputs (made before ``GraphNode.output``): both, an upper bound
    nodes = [dataclasses.replace(n, output="") for n in nodes]
    cost = kernel_cost(k, _compile(nodes, k))
    assert cost.flops == 2 * fwd and cost.upper_bounds == ["flops"] and "an upper bound" in cost.source


def test_a_grouped_convolutions_gradients_each_count_its_forward():
    """A depthwise convolution's gradients each do the forward's multiply-adds (one per multiply-add of the forward,
    of the input's gradient and of the weight's): grad_input as torch counts it; torch's count of grad_weight
    multiplies by the groups (its rule skips them), which the lens does not follow."""
    nodes, fwd, back = _conv_nodes([2, 8, 10, 10], [8, 1, 3, 3], 1, False, 8, [True, False])
    k = Kernel(name="ext[buf1]", language="extern", source="", fx_nodes=["cb"])
    assert kernel_cost(k, _compile(nodes, k)).flops == back == fwd == 2 * (2 * 8 * 8 * 8) * 9
    nodes, _, back = _conv_nodes([2, 8, 10, 10], [8, 1, 3, 3], 1, False, 8, [False, True])
    assert kernel_cost(k, _compile(nodes, k)).flops == fwd and back == 8 * fwd


def test_an_attention_backward_counts_torchs_five_matmuls_and_says_so():
    """SDPA's backward was 2.5 times the forward, which nu23 took for a FlashAttention convention beside torch's 2x:
    torch's flop counter counts five matmuls (the scores recomputed, then dV, dP, dQ and dK), 2.5x where the query's
    and value's head dims are equal; the lens counts those five for any head dims, and its note says so."""
    from torch.utils.flop_counter import sdpa_backward_flop_count

    B, H, L, S, E, EV = 2, 4, 16, 32, 8, 24
    shapes = {"go": [B, H, L, EV], "q": [B, H, L, E], "k": [B, H, S, E], "v": [B, H, S, EV]}
    nodes = [GraphNode(n, "placeholder", n, shape=s, dtype="float32") for n, s in shapes.items()]
    back = GraphNode(
        "sb", "call_function", "aten._scaled_dot_product_efficient_attention_backward.default", ["go", "q", "k", "v"]
    )
    k = Kernel(name="ext[buf0]", language="extern", source="", fx_nodes=["sb"])
    cost = kernel_cost(k, _compile([*nodes, back], k))
    assert cost.flops == sdpa_backward_flop_count(*shapes.values())
    assert "attention backward (5 matmuls, the scores recomputed, as torch's flop counter)" in cost.source


def test_a_kernel_is_counted_at_most_what_its_loops_do_not_the_origins_it_reads():
    """nu23 D2: the ViT's ``cpp_fused_add_native_layer_norm_native_layer_norm_backward_view_7`` turns two layer norms'
    variances into ``rsqrt(var / 64 + 1e-5) / 64`` (two loops of 520 elements, four ops each: torch's output code),
    but its FX ops (Inductor's origins: those of the variance it reads, ``utils.gather_origins``) held the residual
    ``add`` and ``var_mean`` over ``[8, 65, 64]`` an earlier kernel computed: 169,520 FLOPs, a dot above the CPU's
    measured ceiling. Inductor's own loop bodies (iterations x arithmetic ops, recorded at capture) bound it."""
    var = [GraphNode("x", "placeholder", "x", shape=[8, 65, 64], dtype="float32")]
    var.append(GraphNode("add", "call_function", "aten.add.Tensor", ["x"], shape=[8, 65, 64], dtype="float32"))
    var.append(GraphNode("vm", "call_function", "aten.var_mean.correction", ["add"], shape=[[8, 65, 1]] * 2))
    var.append(GraphNode("r", "call_function", "aten.rsqrt.default", ["vm"], shape=[8, 65, 1], dtype="float32"))
    k = Kernel(name="cpp_fused_add_native_layer_norm_7", language="cpp", source="", fx_nodes=["add", "vm", "r"])
    k = dataclasses.replace(k, fused_nodes=["op51"])
    accesses = ({"buf18": 2080}, {"buf51": 2080}, {}, {})
    cost = kernel_cost(k, _compile(var, k), {"op51": accesses})  # a report of an older capture: no loop count
    assert cost.flops == 2 * 8 * 65 * 64 + 520 and cost.upper_bounds == []
    cost = kernel_cost(k, _compile(var, k), {"op51": (*accesses, 4 * 520)})
    assert cost.flops == 4 * 520 and cost.upper_bounds == ["flops"]
    assert "flops lowered to its loops' arithmetic (2,080, iterations x arithmetic ops" in cost.source
    cost = kernel_cost(k, _compile(var, k), {"op51": (*accesses, 10**6)})  # loops that recompute: the graph's count
    assert cost.flops == 2 * 8 * 65 * 64 + 520 and cost.upper_bounds == []


def test_a_bias_gradients_sum_counts_the_sum_not_the_gelu_backward_it_reads():
    """A real compile: the bias gradient of ``Linear(16, 64) -> GELU -> Linear`` on a 3-d input is a kernel of its own
    that sums the GELU's gradient another kernel made (torch names it ``cpp_fused_gelu_gelu_backward_sum_view_1``, after
    the origins of the view it reads); it was counted 24,576 FLOPs, the GELU's backward over 32 x 64 elements: its loops
    add 32 x 64 elements."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16))
    r = inductor_lens.inspect(m, torch.randn(4, 8, 16), backward=True)
    (back,) = [c for c in r.compiles if c.graph_kind == "backward"]
    (k,) = [k for k in back.kernels if "gelu_backward" in k.name and "sum_2" in k.fx_nodes]
    assert k.source.count("tmp_acc0_vec + tmp0") == 1 and "erf" not in k.source  # it only sums
    # the GELU backward its name counts is what it reads, not its own ops (FusedNode.read_ops): the sum is counted
    # exactly (it was an upper bound: the loop's arithmetic capping the ops Inductor's origins listed)
    (node,) = [n for n in back.fused_nodes if n.kernel == k.name]
    assert "erf" in node.read_ops and "erf" not in k.fx_nodes
    assert k.cost.flops == 32 * 64 and k.cost.upper_bounds == [], k.cost


def test_flex_attention_is_counted_as_the_dense_attention_it_masks():
    """flex_attention's template kernel said "flex_attention has no recorded shape to count from" though its query,
    key and value have shapes (its own result is several tensors): it is counted as the dense attention, said to be
    an upper bound where its block mask skips blocks; its backward as 2.5 times that, as SDPA's."""
    B, H, L, S, E = 1, 2, 128, 64, 16
    qkv = [GraphNode(n, "placeholder", n, shape=[B, H, L if n == "q" else S, E], dtype="float32") for n in "qkv"]
    score = GraphNode("sdpa_score0", "get_attr", "sdpa_score0")
    flex = GraphNode(
        "flex", "call_function", "higher_order.flex_attention", inputs=["q", "k", "v", "sdpa_score0"],
        shape=[[B, H, L, E], [B, H, L]], dtype="float32",
    )  # fmt: skip
    k = Kernel(name="cpp_fused_flex_attention_0", language="cpp", source="", fx_nodes=["sdpa_score0", "flex"])
    cost = kernel_cost(k, _compile([*qkv, score, flex], k))
    assert cost.flops == 4 * B * H * L * S * E and "dense (blocks a block mask skips counted too)" in cost.source
    back = dataclasses.replace(flex, name="flexb", target="higher_order.flex_attention_backward")
    k = dataclasses.replace(k, fx_nodes=["flexb"])
    assert kernel_cost(k, _compile([*qkv, back], k)).flops == 2.5 * 4 * B * H * L * S * E


def test_a_quantized_convolution_or_linear_is_counted_from_its_prepacked_weights_shape_as_int8_ops():
    """PT2E's int8 ``onednn.qconv_pointwise`` and ``qlinear_pointwise`` (nu18 s2_pt2e: Conv2d(3, 8, 3, padding=1) on
    2x3x8x8, then Linear(512, 16)) were counted one FLOP per element of their result (1,024 and 32), then unknown.
    Their prepacked weights keep their logical shape on the graph's node (``i8[8, 3, 3, 3]``, and the linear's
    transposed ``i8[512, 16]``), from which torch's meta functions size the result: 2 x 1,024 outputs x 27
    multiply-adds = 55,296 and 2 x 2 x 512 x 16 = 32,768, integer ops, which the source says. The nodes are the
    post-grad graph's, the lowering pattern's function wrapping the op; the scales and zero points among the inputs
    (``.tensor``: tensors) are not taken for the weight."""
    nodes = [
        GraphNode("xq", "call_function", "quantized_decomposed.quantize_per_tensor.default", shape=[2, 3, 8, 8]),
        GraphNode("x_scale", "get_attr", "x_scale", shape=[], dtype="float32"),
        GraphNode("wc", "get_attr", "_frozen_param8", shape=[8, 3, 3, 3], dtype="int8"),
        GraphNode("w_scale", "get_attr", "_frozen_param2", shape=[8], dtype="float32"),
        GraphNode("w_zp", "get_attr", "_frozen_param3", shape=[8], dtype="int64"),
        GraphNode("b", "get_attr", "_frozen_param0", shape=[8], dtype="float32"),
        GraphNode(
            "qconv",
            "call_function",
            "torch._inductor.fx_passes.quantization.qconv",
            inputs=["xq", "x_scale", "wc", "w_scale", "w_zp", "b"],
            shape=[2, 8, 8, 8],
            dtype="float32",
            wraps="onednn.qconv_pointwise.tensor",
        ),
        GraphNode("yq", "call_function", "quantized_decomposed.quantize_per_tensor.default", shape=[2, 512]),
        GraphNode("wl", "get_attr", "_frozen_param9", shape=[512, 16], dtype="int8"),
        GraphNode(
            "qlinear",
            "call_function",
            "torch._inductor.fx_passes.quantization.qlinear",
            inputs=["yq", "wl", "w_scale"],
            shape=[2, 16],
            dtype="float32",
            wraps="onednn.qlinear_pointwise.tensor",
        ),
    ]
    nodes = [dataclasses.replace(n, dtype=n.dtype or "uint8") for n in nodes]
    conv = Kernel(
        name="torch.ops.onednn.qconv_pointwise.tensor[buf4]", language="extern", source="", fx_nodes=["qconv"]
    )
    lin = Kernel(
        name="torch.ops.onednn.qlinear_pointwise.tensor[buf6]", language="extern", source="", fx_nodes=["qlinear"]
    )
    c = dataclasses.replace(_compile(nodes, conv), kernels=[conv, lin])
    costs = {k.name: k.cost for k in with_costs(c)}
    assert costs[conv.name].flops == 2 * (2 * 8 * 8 * 8) * 3 * 3 * 3 == 55_296
    assert costs[lin.name].flops == 2 * 2 * 512 * 16 == 32_768
    for cost in costs.values():
        assert "integer ops, not floating-point: 2 per int8 multiply-add" in cost.source, cost.source
        assert cost.integer_ops == "int8", cost  # the views say ops (kOP), not FLOPs; the int8 peak, not fp32
    # a generated kernel that carries the call as an origin does not count it again
    quant = Kernel(name="cpp_fused_quantize_per_tensor_view_1", language="cpp", source="", fx_nodes=["qconv", "yq"])
    (carried,) = [k for k in with_costs(dataclasses.replace(c, kernels=[conv, lin, quant])) if k.name == quant.name]
    assert carried.cost.flops == 2 * 512 and carried.cost.integer_ops == "", carried.cost
    # a weight whose shape does not fit the result's: not guessed
    odd = [dataclasses.replace(n, shape=[16, 512]) if n.name == "wl" else n for n in nodes]
    cost = kernel_cost(lin, dataclasses.replace(c, graphs={"post_grad": Graph(nodes=odd)}))
    assert cost.flops is None and "prepacked weight is not recognised" in cost.source, cost


def test_a_dynamic_fp16_linear_is_counted_from_its_prepacked_weights_shape():
    """PT2E's ``get_x86_inductor_linear_dynamic_fp16_config`` under freezing: Linear(32, 64) + ReLU then Linear(64, 16)
    on a 4x32 input run as ``onednn.linear_relu_dynamic_fp16(X, W, B)`` and ``onednn.linear_dynamic_fp16``, each on
    the fp16 weight oneDNN prepacked, which the post-grad graph keeps transposed (``f16[32, 64][1, 0]``: torch's meta
    function sizes the result by ``W.shape[1]``). They were counted one FLOP per element of their result (256 and 64,
    not the 16,384 and 8,192 of their matmuls); floating-point ops (the activations are float32)."""
    x = GraphNode("x", "placeholder", "arg4_1", shape=[4, 32], dtype="float32")
    w1 = GraphNode("w1", "get_attr", "_frozen_param4", shape=[32, 64], dtype="float16")
    b1 = GraphNode("b1", "get_attr", "_frozen_param1", shape=[64], dtype="float32")
    w2 = GraphNode("w2", "get_attr", "_frozen_param5", shape=[64, 16], dtype="float16")
    fc1 = GraphNode(
        "fc1",
        "call_function",
        "onednn.linear_relu_dynamic_fp16.default",
        inputs=["x", "w1", "b1"],
        shape=[4, 64],
        dtype="float32",
    )
    fc2 = GraphNode(
        "fc2",
        "call_function",
        "onednn.linear_dynamic_fp16.default",
        inputs=["fc1", "w2"],
        shape=[4, 16],
        dtype="float32",
    )
    nodes = [x, w1, b1, w2, fc1, fc2]
    for node, flops in ((fc1, 2 * 4 * 32 * 64), (fc2, 2 * 4 * 64 * 16)):
        k = Kernel(name=f"torch.ops.{node.target}[buf0]", language="extern", source="", fx_nodes=[node.name])
        cost = kernel_cost(k, _compile(nodes, k))
        assert cost.flops == flops and cost.integer_ops == "" and "flops: mm from shapes" in cost.source, cost
    # a weight that does not fit the input: not guessed
    k = Kernel(name="ext[buf2]", language="extern", source="", fx_nodes=["fc2"])
    odd = [dataclasses.replace(n, shape=[16, 64]) if n.name == "w2" else n for n in nodes]
    assert kernel_cost(k, _compile(odd, k)).flops is None


def test_int8_ops_are_compared_with_the_int8_peak_and_never_with_a_floating_point_one():
    """An int8 kernel's work is integer ops (``Cost.integer_ops``): it was judged against the fp32 peak ("50% of fp32
    compute peak"). Against a device's int8 peak where the table has one (H100 SXM: 1,979 dense TOPS, its
    datasheet's 3,958 with sparsity halved); where none is known (a CPU, whose measured ceiling is a float32
    torch.mm's), only the bandwidth is said, and that no int8 peak is known. ``torch._int_mm`` counts int8 ops."""
    from inductor_lens.analysis.perf import against_peak
    from inductor_lens.report.model import Cost

    c = _compile(
        [GraphNode("q", "call_function", "onednn.qlinear_pointwise.tensor", shape=[10], dtype="float32")],
        Kernel(name="k", language="extern", source="", fx_nodes=["q"]),
    )
    cost = Cost(bytes_read=1e3, bytes_written=0.0, flops=5e7, source="", integer_ops="int8")  # 5 TOP/s in 10 us
    k = dataclasses.replace(c.kernels[0], cost=cost)
    cpu = DeviceInfo(name="CPU", peak_gbps=1000.0, peak_tflops={"fp32": 10.0})
    r = against_peak(10.0, k, c, cpu, on_gpu=False)
    assert r["bound"] is None and r["peak_fraction"] is None, r
    assert r["verdict"] == (
        "0% of memory bandwidth (measured copy); no int8 peak known (a CPU's measured ceiling is a float32 "
        "torch.mm's; no VNNI/AMX int8 figure is measured): its int8 ops are not compared with a floating-point peak"
    ), r["verdict"]
    gpu = DeviceInfo(name="G", peak_gbps=1000.0, peak_tflops={"fp32": 10.0, "int8": 100.0})
    r = against_peak(10.0, k, c, gpu, on_gpu=True)
    assert r["bound"] == "compute" and r["peak_fraction"] == 0.05 and "of int8 compute peak" in r["verdict"], r
    assert devices.lookup("NVIDIA H100 80GB HBM3").peak_tflops["int8"] == 1979.0
    # a floating-point kernel of the same counts is still judged against fp32
    r = against_peak(10.0, dataclasses.replace(k, cost=dataclasses.replace(cost, integer_ops="")), c, gpu, on_gpu=True)
    assert "50% of fp32 compute peak" in r["verdict"], r
    # torch._int_mm: int8 x int8 -> int32
    a = GraphNode("a", "placeholder", "a", shape=[32, 64], dtype="int8")
    b = GraphNode("b", "placeholder", "b", shape=[64, 16], dtype="int8")
    mm = GraphNode("mm", "call_function", "aten._int_mm.default", inputs=["a", "b"], shape=[32, 16], dtype="int32")
    k = Kernel(name="extern_kernels._int_mm[buf0]", language="extern", source="", fx_nodes=["mm"])
    cost = kernel_cost(k, _compile([a, b, mm], k))
    assert cost.flops == 2 * 32 * 64 * 16 and cost.integer_ops == "int8", cost


def test_a_whole_layer_fallback_is_unknown_and_a_frozen_cpu_linear_or_convolution_is_counted():
    """``nn.TransformerEncoderLayer`` under no_grad runs as one fallback, ``_transformer_encoder_layer_fwd``: its
    QKV, attention, FFN and norms were counted one FLOP per element of its result (640 for 20 x 32), arithmetic
    intensity 0.016. Such a call's FLOPs are unknown now, and said so. A frozen CPU graph's oneDNN/MKL linear and
    convolution are counted as the matmul and the convolution they are (they were one FLOP per element too)."""
    x = GraphNode("x", "placeholder", "x", shape=[2, 10, 32], dtype="float32")
    layer = GraphNode(
        "enc",
        "call_function",
        "aten._transformer_encoder_layer_fwd.default",
        inputs=["x"],
        shape=[2, 10, 32],
        dtype="float32",
    )
    k = Kernel(name="torch.ops.aten._transformer_encoder_layer_fwd.default[buf1]", language="extern", source="")
    k = dataclasses.replace(k, fx_nodes=["enc"])
    cost = kernel_cost(k, _compile([x, layer], k))
    assert cost.flops is None and cost.bytes_read == 2 * 10 * 32 * 4
    assert "flops: unknown, _transformer_encoder_layer_fwd runs a whole layer" in cost.source, cost.source

    w = GraphNode("w", "placeholder", "w", shape=[64, 32], dtype="float32")
    packed = GraphNode("p", "placeholder", "p", shape=[64, 32], dtype="float32")
    lin = GraphNode(
        "lin",
        "call_function",
        "mkldnn._linear_pointwise.default",
        inputs=["x", "w"],
        shape=[2, 10, 64],
        dtype="float32",
    )
    mkl = GraphNode(
        "mkl", "call_function", "mkl._mkl_linear.default", inputs=["x", "p", "w"], shape=[2, 10, 64], dtype="float32"
    )
    # the frozen graph's pattern rewrite calls MKL's linear by its packet (``mkl._mkl_linear``): its one overload
    mkl_packet = dataclasses.replace(mkl, target="mkl._mkl_linear")
    for node in (lin, mkl, mkl_packet):
        k = Kernel(name="ext[buf2]", language="extern", source="", fx_nodes=[node.name])
        assert kernel_cost(k, _compile([x, w, packed, node], k)).flops == 2 * 20 * 32 * 64, node.target
    img = GraphNode("img", "placeholder", "img", shape=[1, 3, 8, 8], dtype="float32")
    cw = GraphNode("cw", "placeholder", "cw", shape=[16, 3, 3, 3], dtype="float32")
    conv = GraphNode(
        "conv",
        "call_function",
        "mkldnn._convolution_pointwise.default",
        inputs=["img", "cw"],
        shape=[1, 16, 6, 6],
        dtype="float32",
    )
    k = Kernel(name="ext[buf3]", language="extern", source="", fx_nodes=["conv"])
    assert kernel_cost(k, _compile([img, cw, conv], k)).flops == 2 * (16 * 6 * 6) * 3 * 3 * 3
    # the .binary overloads take (X, other, W): not guessed from the .default's positions
    other = GraphNode("other", "placeholder", "other", shape=[2, 10, 64], dtype="float32")
    binary = dataclasses.replace(lin, target="mkldnn._linear_pointwise.binary", inputs=["x", "other", "w"])
    k = Kernel(name="ext[buf4]", language="extern", source="", fx_nodes=["lin"])
    cost = kernel_cost(k, _compile([x, w, other, binary], k))
    assert cost.flops is None and "_linear_pointwise (binary): its FLOPs are not known" in cost.source, cost.source


def test_a_generated_kernel_that_carries_a_convolution_as_its_origin_does_not_count_its_flops():
    """On a CPU, Inductor copies a convolution's input into channels-last layout in a kernel of its own whose origin
    is the convolution (``cpp_fused_convolution_0``), and fuses the bias add and a BatchNorm after it: those kernels
    move the data, the extern convolution computes it. The convolution's FLOPs were counted in each of them, and the
    roofline put a copy at 94% of the compute peak. They now count in the extern kernel only; a convolution no extern
    kernel computes (lowered into a generated kernel) still counts where it is."""
    import dataclasses

    from inductor_lens.analysis.cost import with_costs

    x = GraphNode("x", "placeholder", "x", shape=[1, 3, 8, 8], dtype="float32")
    w = GraphNode("w", "placeholder", "w", shape=[16, 3, 3, 3], dtype="float32")
    conv = GraphNode(
        "conv", "call_function", "aten.convolution.default", inputs=["x", "w"], shape=[1, 16, 6, 6], dtype="float32"
    )
    relu = GraphNode(
        "relu", "call_function", "aten.relu.default", inputs=["conv"], shape=[1, 16, 6, 6], dtype="float32"
    )
    copy = Kernel(name="cpp_fused_convolution_0", language="cpp", source="", fx_nodes=["conv"])
    ext = Kernel(name="ext[buf1]", language="extern", source="", fx_nodes=["conv"])
    act = Kernel(name="cpp_fused_convolution_relu_1", language="cpp", source="", fx_nodes=["conv", "relu"])
    c = dataclasses.replace(_compile([x, w, conv, relu], copy), kernels=[copy, ext, act])
    flops = {k.name: k.cost.flops for k in with_costs(c)}
    assert flops == {"cpp_fused_convolution_0": 0, "ext[buf1]": 2 * (16 * 6 * 6) * 3 * 3 * 3, act.name: 16 * 6 * 6}
    (copied,) = [k for k in with_costs(c) if k.name == copy.name]
    assert "convolution (conv) left out: its extern kernel computes it" in copied.cost.source
    alone = dataclasses.replace(c, kernels=[act])  # no extern kernel: the generated kernel computes it
    assert with_costs(alone)[0].cost.flops == 2 * (16 * 6 * 6) * 3 * 3 * 3 + 16 * 6 * 6


def test_a_kernel_called_from_two_places_costs_one_call_not_both():
    """Inductor emits the same code once for every layer and calls it per layer: the cost of one call is
    one site's buffers and ops (the mean of the sites), never the sum over the layers (2x the bytes and
    FLOPs of a call, read against the time of one call: 2x the device's peak on an H200 GPT-2 report)."""
    from inductor_lens.report.model import FusedNode

    nodes = [GraphNode(f"x{i}", "placeholder", f"x{i}", shape=[1024], dtype="float32") for i in range(2)]
    nodes += [
        GraphNode(f"relu{i}", "call_function", "aten.relu.default", inputs=[f"x{i}"], shape=[1024], dtype="float32")
        for i in range(2)
    ]
    k = Kernel(
        name="triton_poi_fused_relu_0",
        language="triton",
        source="",
        fused_nodes=["op0", "op1"],
        fx_nodes=["relu0", "relu1"],
        call_sites=[["op0"], ["op1"]],
    )
    c = dataclasses.replace(
        _compile(nodes, k),
        fused_nodes=[
            FusedNode(name=f"op{i}", kind="pointwise", fx_nodes=[f"relu{i}"], kernel=k.name) for i in range(2)
        ],
    )
    inductor_bytes = {f"op{i}": ({f"x{i}": 4096}, {f"buf{i}": 4096}) for i in range(2)}
    cost = kernel_cost(k, c, inductor_bytes)
    assert (cost.bytes_read, cost.bytes_written, cost.flops) == (4096, 4096, 1024)
    assert cost.source.endswith("the mean of its 2 call sites")
    one_site = dataclasses.replace(k, call_sites=[["op0", "op1"]])  # two nodes fused into one call: both count
    assert kernel_cost(one_site, c, inductor_bytes).bytes_read == 8192


def _h200_kernel(prefix: str):
    """A kernel of the H200 GPT-2 training report (real Triton source, recorded by make_perf_fixtures.py)."""
    report = load(str(pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_perf_gpt2_training.json"))
    for c in report.compiles:
        for k in c.kernels:
            if k.name.startswith(prefix):
                return c, k
    raise AssertionError(prefix)


def test_a_gather_or_split_reduction_is_counted_within_what_its_loops_touch():
    from inductor_lens.analysis.triton_bounds import triton_bounds

    # the embedding of 4096 tokens from a 50257 x 768 table: Inductor counts the whole table (154 MB)
    c, k = _h200_kernel("triton_per_fused_add_embedding_native_dropout_native_layer_norm")
    read, written, ops = triton_bounds(k.name, k.source)
    rows = 4096 * 768 * 4  # one fp32 row of 768 per token
    assert 2 * rows <= read <= 2 * rows + 4096 * 768 * 4 + 2 * 4096 * 8 + 2 * 768 * 4 + 8  # wte, wpe, residual...
    assert written == k.cost.bytes_written  # its stores are exactly its outputs
    # nll_loss picks one logit of 50257 per token: 823 MB counted, 4096 values read
    _, loss = _h200_kernel("triton_red_fused__log_softmax_clone_nll_loss_forward")
    assert triton_bounds(loss.name, loss.source)[0] < 100_000
    # the second stage of a split reduction sums 32 partials of 3072 columns, not the whole backward's ops
    _, stage2 = _h200_kernel("triton_per_fused_add_mul_pow_sum_tanh_tanh_backward_view_7")
    assert triton_bounds(stage2.name, stage2.source)[2] <= 3072 * 32 * 4
    # kernel_cost applies the bounds and says so
    import dataclasses as dc

    uncapped = dc.replace(k, cost=None)
    graph_free = dc.replace(c, graphs={})
    cost = kernel_cost(uncapped, graph_free, {n: ({"wte": 154_389_504}, {}) for n in k.fused_nodes})
    assert cost.bytes_read == read and "capped at what the kernel's loops touch" in cost.source
    # what is not plainly known is never capped: a template, a symbolic size, an unknown name
    assert triton_bounds("triton_tem_fused_mm_0", k.source) is None
    assert triton_bounds(k.name, k.source.replace("xnumel = 4096", "xnumel = ks0")) is None
    assert triton_bounds(k.name, k.source.replace("r0_1 + 768*x2", "r0_1 + 768*mystery")) is None
    for form in (
        "    xnumel = 16\n",  # a combo kernel: sizes per sub-kernel
        "    for i in tl.static_range(8):\n        tmp99 = tl.load(in_ptr3 + (x0 + 1024*i), None)\n",
        "    tmp98 = tl.load(\n        in_ptr3 + (x0), None)\n",  # a statement over two lines
        "    pid1 = tl.program_id(1)\n",
        "    a, b = x0, x2\n",
    ):
        changed = k.source.replace("    tmp5 = tl.load(", form + "    tmp5 = tl.load(", 1)
        assert changed != k.source and triton_bounds(k.name, changed) is None, form


def test_an_online_softmax_reduction_has_flops_not_none():
    """nu21 minor d: GPT-2's ``..._log_softmax_prepare_softmax_online_view_0`` (a row's max and sum of exp(x - max)
    over 4096 x 50257 logits, then the log) had no FLOPs: ``prims.prepare_softmax_online`` returns a tuple, whose
    node has no one shape, so it was "unknown" - off the roofline's plot and its memory-only strip alike. It is
    counted from its input as the amax, subtraction, exp and sum it decomposes to, as other reductions are."""
    c, k = _h200_kernel("triton_red_fused__log_softmax_prepare_softmax_online_view_0")
    cost = kernel_cost(dataclasses.replace(k, cost=None), c)
    assert cost.flops == 4 * 4096 * 50257 + 4096  # the online softmax, and the log of each row's sum
    from inductor_lens.analysis.cost import ONLINE_SOFTMAX_RULE

    assert f"flops: {ONLINE_SOFTMAX_RULE}, per element from shapes" in cost.source


def _against_peak(op: str, on_gpu: bool = True, language: str = "triton", **cost) -> dict:
    """``against_peak`` for one call of 10 us of a kernel of one ``op`` on a device of 1000 GB/s and 10 TFLOP/s."""
    from inductor_lens.analysis.perf import against_peak

    info = DeviceInfo(name="X", peak_gbps=1000.0, peak_tflops={"fp32": 10.0})
    c = _compile(
        [GraphNode("y", "call_function", op, shape=[10], dtype="float32")],
        Kernel(name="k", language=language, source="", fx_nodes=["y"]),
    )
    k = Kernel(
        name="k", language=language, source="", fx_nodes=["y"], cost=inductor_lens.report.model.Cost(source="", **cost)
    )
    return against_peak(10.0, k, c, info, on_gpu=on_gpu)


def test_inductors_estimate_is_one_call_too():
    from inductor_lens.analysis.perf import _estimate_us
    from inductor_lens.report.model import FusedNode

    k = Kernel(
        name="triton_poi_fused_relu_0",
        language="triton",
        source="",
        fused_nodes=["op0", "op1"],
        call_sites=[["op0"], ["op1"]],
    )
    c = dataclasses.replace(
        _compile([], k),
        fused_nodes=[
            FusedNode(name="op0", kind="pointwise", kernel=k.name, estimated_runtime_us=2.0),
            FusedNode(name="op1", kind="pointwise", kernel=k.name, estimated_runtime_us=4.0),
        ],
    )
    assert _estimate_us(k, c) == 3.0  # the mean of the two calls, not their sum
    c = dataclasses.replace(
        c, fused_nodes=[c.fused_nodes[0], dataclasses.replace(c.fused_nodes[1], estimated_runtime_us=None)]
    )
    assert _estimate_us(k, c) is None  # a call without an estimate: unknown, not a smaller number


def test_a_count_above_the_peak_is_an_upper_bound_not_a_fraction():
    r = _against_peak("aten.embedding.default", bytes_read=3e7, bytes_written=0, flops=0)  # 3 TB/s on 1 TB/s
    assert r["achieved_gbps"] == 3000 and r["bound"] == "memory" and r["peak_fraction"] is None
    assert "above the HBM bandwidth" in r["verdict"] and "upper bound" in r["verdict"]
    r = _against_peak("aten.add.Tensor", bytes_read=1e3, bytes_written=0, flops=5e8)  # 50 TFLOP/s on 10
    assert r["bound"] == "compute" and r["peak_fraction"] is None and "TF32" in r["verdict"]
    r = _against_peak("aten.add.Tensor", bytes_read=1.05e7, bytes_written=0, flops=0)
    assert r["peak_fraction"] == pytest.approx(1.05)  # within the margin
    # a CPU's ceiling is measured (a few torch.mm at profile time): an exact count above it (a convolution, at
    # 70 GFLOP/s on a 60 GFLOP/s probe) blamed the FLOP count; the probe is named as what may be low
    r = _against_peak(
        "aten.convolution.default", on_gpu=False, language="extern", bytes_read=1e3, bytes_written=0, flops=5e8
    )
    assert r["bound"] == "compute" and r["peak_fraction"] is None
    assert "above the measured fp32 ceiling (the best of a few torch.mm at profile time)" in r["verdict"], r["verdict"]
    assert "its own library's kernels" in r["verdict"], r["verdict"]
    # a kernel Inductor generated (nu23 D1, D2: a count too high drew it ten times above the ceiling, and the verdict
    # blamed the probe or the library first): its own loops do not outrun torch.mm, so the count is named first
    r = _against_peak("aten.mul.Tensor", on_gpu=False, language="cpp", bytes_read=1e3, bytes_written=0, flops=5e8)
    assert r["peak_fraction"] is None and "library" not in r["verdict"], r["verdict"]
    assert "a kernel Inductor generated does not outrun: it did fewer operations than counted" in r["verdict"]


def test_peak_table_names_common_gpus_and_their_source():
    cases = {
        "NVIDIA H200": 4800,
        "NVIDIA H100 80GB HBM3": 3350,
        "NVIDIA H100 PCIe": 2000,
        "NVIDIA A100-SXM4-40GB": 1555,
        "NVIDIA A100-SXM4-80GB": 2039,
        "NVIDIA L4": 300,
        "AMD Instinct MI300X": 5300,
    }
    for name, gbps in cases.items():
        info = devices.lookup(name)
        assert info.peak_gbps == gbps, name
        assert set(info.peak_tflops) == {"fp32", "tf32", "bf16", "fp16", "int8"}  # int8: tera integer ops/s
        assert "datasheet" in info.source or "data sheet" in info.source
    assert devices.lookup("Some Future GPU") is None


# -- measured time: a real profiled CPU training step -----------------------------------------------


class TwoLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 16)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), -1)


@pytest.fixture(scope="module")
def profiled():
    torch.manual_seed(0)
    model = TwoLayer()
    x = torch.randn(8, 32)
    report = inductor_lens.inspect(model, x, backward=True, profile=True)
    return report, model, x


def test_every_kernel_of_a_profiled_cpu_report_has_a_time_mean_and_spread(profiled):
    report, _, _ = profiled
    kinds = {c.graph_kind for c in report.compiles}
    assert kinds == {"forward", "backward"}
    assert any(k.language == "extern" for k in report.kernels)
    for k in report.kernels:
        p = k.profile
        assert isinstance(p, KernelProfile), k.name
        assert p.device == "cpu" and p.total_us > 0 and p.std_us >= 0
        # independent sources: the runs the profiler was told to make, and the output code's launches of the
        # kernel (each call site of ``call()`` runs once per step)
        assert p.iterations == kernel_timing.RUNS, k.name
        assert p.calls == len(k.call_sites), k.name
    assert not [d for d in report.diagnostics if d.code == "profile_missing"]
    # one name per fact: the 0.2 duplicates (mean_us = total_us, runs = iterations) are not written
    written = json.loads(report.to_json(compact=False))
    for k in (k for c in written["compiles"] for k in c["kernels"]):
        assert "total_us" in k["profile"] and "mean_us" not in k["profile"] and "runs" not in k["profile"]


def test_a_profiled_cpp_kernels_panel_says_its_source_is_instrumented(profiled):
    """nu28 D5: ``profile=True`` compiles C++ kernels with ``cpp.enable_kernel_profile``, which adds two lines to each
    (the ``aoti_runtime/utils.h`` include and a ``RAIIAtenRecordFunctionHandle`` named ``graph_<N>_<kernel>``): the
    report's source is not what torch writes without the lens, and ``Kernel.source_note`` says so, naming the event.
    An extern kernel, and a C++ kernel compiled without profiling (the recorded max-autotune MLP's templates), say
    nothing."""
    from inductor_lens.report.finish import derive_compile

    report, _, _ = profiled
    cpp = [k for k in report.kernels if k.language == "cpp"]
    assert cpp
    for k in cpp:
        assert "#include <torch/csrc/inductor/aoti_runtime/utils.h>" in k.source  # torch's own two lines
        event = re.search(r'RAIIAtenRecordFunctionHandle record_\w+\("(graph_\d+_\w+)"', k.source).group(1)
        assert event.endswith("_" + k.name)
        assert k.source_note.startswith("Instrumented for profiling: the profiled capture compiled this kernel with ")
        assert f"records each call as the profiler event {event}. Its reproducer runs it without them." in k.source_note
    assert all(k.source_note == "" for k in report.kernels if k.language != "cpp")
    plain = inductor_lens.load(pathlib.Path(__file__).parents[1] / "fixtures" / "cpu_frozen_mlp_max_autotune.json")
    assert [k.source_note for c in plain.compiles for k in derive_compile(c).kernels] == ["", ""]


@torch.library.custom_op("lens_perf::shifted", mutates_args=())
def _shifted(x: torch.Tensor) -> torch.Tensor:
    """A custom op: Inductor calls it as it is (``torch.ops.lens_perf.shifted.default``), the profiler shows
    ``lens_perf::shifted``."""
    return x + 1


@_shifted.register_fake
def _(x):
    return torch.empty_like(x)


def test_a_custom_op_is_timed_as_the_profiler_names_it():
    """A ``torch.library.custom_op`` in the compiled graph was looked for as ``aten::default`` (only aten and prims
    were known): no time, ``profile_missing``, and its time counted as unattributed. It is timed by its own event."""

    def f(x):
        return torch.relu(_shifted(x) * 2)

    report = inductor_lens.inspect(f, torch.randn(64, 64), profile=True)
    (op,) = [k for k in report.kernels if "lens_perf" in k.name]
    assert op.language == "extern"
    with torch.profiler.profile() as probe:  # torch 2.15 records no event of a custom op's own, only the ops inside
        torch.ops.lens_perf.shifted.default(torch.randn(4))
    if "lens_perf::shifted" in {e.name for e in probe.events()}:
        assert op.profile is not None and op.profile.total_us > 0, op
        assert not [d for d in report.diagnostics if d.code == "profile_missing"]
    else:  # nothing to time it by: said, not guessed from the ops inside it
        assert op.profile is None
        assert any(d.code == "profile_missing" and op.name in d.message for d in report.diagnostics)


def test_the_step_against_the_kernels_on_a_cpu_event_tree_by_hand():
    """Two runs of one compiled graph under a hand-built CPU event tree: every number below is worked out by
    hand from the event times (run 100 us; the C++ kernel 10 then 14 us, the matmul 20 us, an allocation
    5 us that no kernel claims)."""
    from inductor_lens.analysis.perf import apply_profile, unattributed_text
    from inductor_lens.capturing.kernel_timing import attribute

    kernels = [
        Kernel(name="cpp_fused_relu_0", language="cpp", source="", fused_nodes=["op1"], call_sites=[["op1"]]),
        Kernel(name="extern_kernels.mm[buf0]", language="extern", source="", metadata={"callee": "extern_kernels.mm"}),
    ]
    c = Compile(id="0/0 inference", compile_id="0/0", graph_kind="inference", trigger=Trigger("first_call", ""))
    report = inductor_lens.Report(
        torch_version="2.13", device="cpu", compiles=[dataclasses.replace(c, kernels=kernels)]
    )

    def run(t0, cpp_us):
        seg = _ev(
            "## Call CompiledFxGraph fabc ##",
            t0 + 1,
            t0 + 60,
            children=[
                _ev("graph_0_cpp_fused_relu_0", t0 + 2, t0 + 2 + cpp_us),
                _ev("aten::mm", t0 + 30, t0 + 50),
                _ev("aten::empty_strided", t0 + 51, t0 + 56),
            ],
        )
        fwd = _ev("inductor_lens::forward", t0 + 0.5, t0 + 70, children=[seg])
        return [_ev("inductor_lens::run", t0, t0 + 100, children=[fwd]), fwd, seg, *seg.cpu_children]

    m = attribute(run(0, 10.0) + run(1000, 14.0), report, on_gpu=False)
    out = apply_profile(report, m, None)
    cpp, mm = (k.profile for k in out.kernels)
    assert (cpp.total_us, cpp.iterations, cpp.calls, cpp.per_call_us) == (12.0, 2, 1.0, 12.0)
    assert cpp.std_us == 2.828  # stdev(10, 14) = 2 * sqrt(2)
    assert (mm.total_us, mm.std_us) == (20.0, 0.0)
    assert (cpp.share, mm.share) == (0.375, 0.625)  # 12 and 20 of 32 us
    assert (cpp.share_of_step, mm.share_of_step) == (0.12, 0.2)
    s = out.profile
    assert isinstance(s, StepProfile)
    assert (s.runs, s.device_total_us, s.device_total_std_us, s.attributed_us) == (2, 100.0, 0.0, 32.0)
    assert (s.unattributed_us, s.unattributed_share) == (68.0, 0.68)
    assert (s.inside_graphs_unmatched_us, s.outside_graphs_us) == (5.0, 63.0)
    assert s.unmatched_ops == [OpTime("aten::empty_strided", 5.0)]
    assert [(r.kind, r.us, r.share) for r in s.by_kind] == [("extern mm", 20.0, 0.625), ("cpp", 12.0, 0.375)]
    assert unattributed_text(s) == "unattributed: 68%"


@pytest.mark.parametrize(
    "share, text", [(0.68, "unattributed: 68%"), (0.025, "unattributed: 3%"), (0.0, "unattributed: 0%")]
)
def test_unattributed_text_rounds_half_up(share, text):
    from inductor_lens.analysis.perf import unattributed_text

    assert unattributed_text(StepProfile(device="cpu", unattributed_share=share)) == text
    assert unattributed_text(None) == "" and unattributed_text(StepProfile(device="cpu")) == ""


def test_unattributed_share_is_the_step_minus_the_kernels(profiled):
    """The step's time is the median of the runs' steps, the kernels' the sum of each kernel's median: two statistics,
    so on a loaded machine the kernels' sum can pass the step's (a fresh clone's CI run: 19.4 ms against 18.0 ms), and
    nothing is unattributed then, never a negative share."""
    report, _, _ = profiled
    s = report.profile
    assert s.attributed_us > 0 and s.device_total_us > 0
    assert s.unattributed_us == pytest.approx(max(s.device_total_us - s.attributed_us, 0.0), abs=0.002)
    assert 0 <= s.unattributed_share < 1
    assert s.runs == kernel_timing.RUNS and s.warmup == kernel_timing.WARMUP and s.method == kernel_timing.METHOD_CPU


def test_achieved_throughput_and_fraction_of_the_measured_cpu_peak(profiled):
    report, _, _ = profiled
    info = report.device_info
    assert info.peak_gbps > 0 and info.peak_tflops["fp32"] > 0 and "measured" in info.source
    for k in report.kernels:
        p = k.profile
        assert p.bound in ("memory", "compute")
        # a kernel whose runs disagree (a loaded machine: this test must pass under load) says its verdict rests on a
        # noisy time, after the bound
        assert (
            p.verdict.endswith(("memory-bound", "compute-bound"))
            or (
                p.noisy
                and ("memory-bound, from a noisy time" in p.verdict or "compute-bound, from a noisy time" in p.verdict)
            )
            or (p.peak_fraction is None and "upper bound" in p.verdict)
        ), p.verdict


def test_the_cpu_is_probed_once_per_process_and_thread_count(profiled, monkeypatch):
    """A profile measures the CPU's peaks (a second of copies and products): a second profile of the same process
    sets its kernels against the same ceiling, measured once; another thread count is probed for itself."""
    report, _, _ = profiled
    probes = []
    monkeypatch.setattr(kernel_timing, "probe_cpu", lambda: probes.append(1) or "probed")
    assert kernel_timing.device_info(False, ()) == report.device_info  # the profile's own probe, kept
    monkeypatch.setattr(kernel_timing, "_PROBED", dict(kernel_timing._PROBED))  # the process's own, as it was after
    threads = torch.get_num_threads()
    torch.set_num_threads(threads + 1)
    try:
        assert kernel_timing.device_info(False, ()) == "probed" and kernel_timing.device_info(False, ()) == "probed"
    finally:
        torch.set_num_threads(threads)
    assert probes == [1]


def test_roll_ups_by_line_module_and_kind_name_the_models_parts(profiled):
    report, _, _ = profiled
    s = report.profile
    kinds = {r.kind for r in s.by_kind}
    assert "extern addmm" in kinds or "extern mm" in kinds
    modules = {r.module for r in s.by_module}
    assert {"fc1", "fc2"} & modules
    assert any(r.file.endswith("test_perf.py") for r in s.by_line)
    assert {n for r in s.by_kind for n in r.kernels} == {k.name for k in report.kernels}
    # every kernel's time goes to the user lines the views name (Kernel.user_lines): here, forward and backward,
    # the one line of TwoLayer.forward
    forward = next(
        i for i, t in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1) if "softmax(self.fc2" in t
    )
    lines = {(pathlib.PurePath(r.file).name, r.line) for r in s.by_line if r.file}
    assert lines == {("test_perf.py", forward)}, s.by_line


def test_a_profile_of_0_2_with_its_duplicate_keys_still_loads():
    """Reports written by 0.2 hold ``Kernel.profile``/``Report.profile`` as dicts with ``mean_us`` (=
    ``total_us``) and ``runs`` (= ``iterations``): they load typed, each fact under its one name."""
    k = {"name": "k", "language": "cpp", "source": ""}
    old = {
        "torch_version": "2.13",
        "device": "cpu",
        "schema_version": 2,
        "compiles": [
            {
                "id": "0/0 inference",
                "compile_id": "0/0",
                "graph_kind": "inference",
                "trigger": {"kind": "first_call", "reason": ""},
                "kernels": [
                    dict(k, profile={"total_us": 7.5, "mean_us": 7.5, "runs": 5, "iterations": 5, "calls": 1}),
                    dict(k, name="k2", profile={"mean_us": 2.0, "runs": 3, "device": "cpu"}),
                ],
            }
        ],
        "profile": {"device": "cpu", "runs": 5, "warmup": 1, "by_line": [{"file": "a.py", "line": 3, "us": 7.5}]},
    }
    r = load(old)
    a, b = (k.profile for k in r.kernels)
    assert (a.total_us, a.iterations, a.calls) == (7.5, 5, 1)
    assert (b.total_us, b.iterations, b.device) == (2.0, 3, "cpu")
    # its roll-ups are made again from its kernels on loading (report/lines.mark_times): these have no line
    assert [(x.file, x.us, x.kernels) for x in r.profile.by_line] == [("", 9.5, ["k", "k2"])] and r.profile.warmup == 1
    with pytest.warns(DeprecationWarning, match="is a dataclass now") as caught:
        assert a["mean_us"] == 7.5
        assert a.get("runs") == 5 and a.get("no such key", "none") == "none"
    assert "read .total_us instead of ['mean_us']" in str(caught[0].message)
    # each warning names the line that read the key, here (``get`` included), not a line of inductor_lens
    assert {(pathlib.PurePath(w.filename).name) for w in caught} == {"test_perf.py"}, [
        (w.filename, w.lineno) for w in caught
    ]
    assert load(r.to_json()) == r


def test_profiling_changes_no_result_gradient_or_random_state():
    torch.manual_seed(0)
    model = TwoLayer()
    x = torch.randn(8, 32, requires_grad=True)
    first = next(model.parameters())
    first.grad = torch.full_like(first, 3.0)  # a gradient the user already had
    report = inductor_lens.inspect(model, x, backward=True)
    # inspect's backward compiled the backward graph and left no gradient behind (it filled every .grad before)
    assert [c.graph_kind for c in report.compiles] == ["forward", "backward"]
    assert torch.equal(first.grad, torch.full_like(first, 3.0)) and x.grad is None
    assert all(p.grad is None for p in list(model.parameters())[1:])
    x = x.detach()
    compiled = torch.compile(model)  # no capture: dynamo's state is as the user left it
    out = compiled(x)
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    rng = torch.get_rng_state()
    inductor_lens.time_kernels(report, compiled, x, backward=True)
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), grads))
    assert torch.equal(torch.get_rng_state(), rng)
    assert torch.equal(compiled(x), out)


def test_profiling_puts_back_the_buffers_and_arguments_its_runs_write_in_place():
    """The profiled runs are the lens's, not the user's: a BatchNorm's running statistics and ``num_batches_tracked``
    and a tensor argument the model writes in place are as the user's one call left them (each run moved them)."""

    class Counted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = torch.nn.BatchNorm1d(8)

        def forward(self, x, calls):
            calls.add_(1)
            return self.bn(x).relu()

    torch.manual_seed(0)
    model = Counted().train()
    x, calls = torch.randn(16, 8), torch.zeros(())
    compiled = torch.compile(model)
    with inductor_lens.capture() as cap:
        compiled(x, calls)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    assert int(state["bn.num_batches_tracked"]) == 1 and float(calls) == 1.0
    timed = inductor_lens.time_kernels(cap.report, compiled, x, calls)
    assert timed.profile is not None and timed.profile.runs > 1  # it ran the model several times
    assert all(torch.equal(model.state_dict()[k], v) for k, v in state.items())
    assert float(calls) == 1.0


# -- the GPU event structure (cannot run here): a tree shaped like torch.profiler's --------------


def _ev(name, start, end, children=(), kernels=(), device_type="DeviceType.CPU"):
    ev = SimpleNamespace(
        name=name,
        time_range=SimpleNamespace(start=start, end=end),
        cpu_children=list(children),
        kernels=[SimpleNamespace(name=n, duration=d) for n, d in kernels],
        cpu_parent=None,
        device_type=device_type,
        cpu_time_total=end - start,
    )
    for ch in ev.cpu_children:
        ch.cpu_parent = ev
    return ev


def _gpu_report():
    nodes = [
        GraphNode("q", "placeholder", "q", shape=[1, 2, 16, 8], dtype="float16"),
        GraphNode(
            "sdpa",
            "call_function",
            "aten._scaled_dot_product_efficient_attention.default",
            inputs=["q", "q", "q"],
            shape=[1, 2, 16, 8],
            dtype="float16",
        ),
        GraphNode("rnd", "call_function", "aten.randint.low", shape=[2], dtype="int64"),
    ]
    kernels = [
        Kernel(name="triton_poi_fused_0", language="triton", source=""),
        Kernel(
            name="extern_kernels.sdpa[buf1]",
            language="extern",
            source="",
            fx_nodes=["sdpa"],
            metadata={"callee": "torch.ops.aten._scaled_dot_product_efficient_attention.default"},
        ),
        Kernel(
            name="extern_kernels.randint[buf2]",
            language="extern",
            source="",
            fx_nodes=["rnd"],
            metadata={"callee": "torch.ops.aten.randint.low_out"},
        ),
    ]
    c = Compile(
        id="0/0 forward",
        compile_id="0/0",
        graph_kind="forward",
        trigger=Trigger("first_call", ""),
        graphs={"post_grad": Graph(nodes=nodes)},
        kernels=kernels,
    )
    c = dataclasses.replace(c, kernels=with_costs(c))  # costs from shapes, as for a report without Inductor's
    return inductor_lens.Report(torch_version="2.11", device="cuda", compiles=[c])


def _gpu_run(t0, sdpa_us):
    # attention's device kernels hang below a nested aten op and carry cutlass names: found by structure
    seg = _ev(
        "## Call CompiledFxGraph fabc ##",
        t0 + 1,
        t0 + 50,
        children=[
            _ev("triton_poi_fused_0", t0 + 2, t0 + 3, kernels=[("triton_poi_fused_0", 4.0)]),
            _ev(
                "aten::_scaled_dot_product_efficient_attention",
                t0 + 4,
                t0 + 10,
                children=[
                    _ev(
                        "aten::_efficient_attention_forward",
                        t0 + 5,
                        t0 + 9,
                        kernels=[("fmha_cutlassF_f16_aligned_64x64_rf_sm80", sdpa_us)],
                    )
                ],
            ),
            _ev("aten::randint", t0 + 11, t0 + 12, kernels=[("distribution_elementwise_grid_stride_kernel", 2.0)]),
            _ev("aten::empty_strided", t0 + 13, t0 + 14, kernels=[("memset", 1.0)]),
        ],
    )
    fwd = _ev("inductor_lens::forward", t0 + 0.5, t0 + 60, children=[seg])
    run = _ev("inductor_lens::run", t0, t0 + 100, children=[fwd])
    device = [
        _ev(n, t0 + 20 + i, t0 + 20 + i + d, device_type="DeviceType.CUDA")
        for i, (n, d) in enumerate([("a", 4.0), ("b", sdpa_us), ("c", 2.0), ("d", 1.0), ("outside", 3.0)])
    ]
    return [run, fwd, seg, *seg.cpu_children, *seg.cpu_children[1].cpu_children, *device]


def test_gpu_structure_times_attention_and_randint_and_leaves_a_remainder():
    from inductor_lens.analysis.perf import apply_profile
    from inductor_lens.capturing.kernel_timing import attribute

    report = _gpu_report()
    events = _gpu_run(0, 30.0) + _gpu_run(1000, 34.0)
    m = attribute(events, report, on_gpu=True)
    out = apply_profile(report, m, devices.lookup("NVIDIA H200"))
    times = {k.name: k.profile for k in out.kernels}
    assert times["extern_kernels.sdpa[buf1]"].total_us == 32.0
    assert times["extern_kernels.sdpa[buf1]"].std_us == pytest.approx(statistics.stdev([30.0, 34.0]), abs=1e-3)
    assert times["extern_kernels.randint[buf2]"].total_us == 2.0
    assert times["triton_poi_fused_0"].total_us == 4.0
    s = out.profile
    assert s.device_total_us == 4 + 32 + 2 + 1 + 3
    assert s.attributed_us == 38.0
    assert s.inside_graphs_unmatched_us == 1.0 and s.outside_graphs_us == 3.0
    assert s.unattributed_share == pytest.approx(4 / 42, abs=1e-4)
    assert s.unmatched_ops == [OpTime("aten::empty_strided", 1.0)]
    sdpa = times["extern_kernels.sdpa[buf1]"]
    flops = 4 * 1 * 2 * 16 * 16 * 8
    assert sdpa.achieved_tflops == pytest.approx(flops / 32.0 / 1e6, rel=1e-3)
    assert out.device_info.name.startswith("NVIDIA H200")


def test_fraction_of_peak_picks_the_roof_the_kernel_is_under():
    r = _against_peak("aten.add.Tensor", bytes_read=4e6, bytes_written=4e6, flops=1e6)  # 800 GB/s, intensity 0.125
    assert r["bound"] == "memory" and r["peak_fraction"] == pytest.approx(0.8)
    assert r["verdict"] == "80% of HBM bandwidth; memory-bound"
    r = _against_peak("aten.add.Tensor", bytes_read=1e6, bytes_written=0, flops=5e7)  # 5 TFLOP/s at intensity 50
    assert r["bound"] == "compute" and r["peak_fraction"] == pytest.approx(0.5)


# -- the page: roofline view, colour by fraction of peak, panel text (offline Chromium) -----------


@pytest.mark.browser
def test_roofline_view_dots_click_selects_and_boxes_coloured_by_peak(tmp_path, offline_page, profiled):
    from tests.views.test_html_export import _assert_clean, _open

    report, _, _ = profiled
    page = offline_page
    path = tmp_path / "profiled.html"
    report.save_html(path)
    _open(page, path)
    page.click('[data-tab="roofline"]')
    dots = page.locator('[data-view="roofline"] [data-role="roofline-dot"]')
    assert dots.count() == len(report.kernels)
    assert page.locator('[data-role="unattributed"]').inner_text() == inductor_lens.analysis.perf.unattributed_text(
        report.profile
    )
    # how the times were taken, in Python's words (StepProfile.runs_text)
    runs = report.profile.runs_text
    assert runs.startswith("median of ") and f" · {runs}" in page.locator('[data-role="perf-summary"]').inner_text()
    for role in ("rollup-kind", "rollup-module", "rollup-line"):
        assert page.locator(f'[data-role="{role}"] tbody tr').count() == len(
            getattr(report.profile, role.replace("rollup-", "by_"))
        )
    # click the dot of the backward graph's longest kernel that no other dot covers (measured times can put two
    # dots on one spot; a click goes to the one on top): its compile and fused node are selected
    bwd = next(c for c in report.compiles if c.graph_kind == "backward")
    uncovered = set(
        page.evaluate(
            """(cid) => [...document.querySelectorAll(
        `[data-role="roofline-dot"][data-compile="${cid}"]`)].filter((d) => {
        const r = d.getBoundingClientRect();
        return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === d;
    }).map((d) => d.dataset.kernel)""",
            bwd.id,
        )
    )
    assert uncovered, "every dot of the backward graph is covered by another"
    k = max((k for k in bwd.kernels if k.name in uncovered), key=lambda k: k.profile.total_us)
    node = next(n for n in bwd.fused_nodes if n.kernel == k.name)
    page.locator(f'[data-role="roofline-dot"][data-compile="{bwd.id}"][data-kernel="{k.name}"]').click()
    root = page.locator(".il-root")
    assert root.get_attribute("data-selected") == node.name
    assert page.locator(".il-compile").input_value() == bwd.id
    assert page.locator('[data-role="peak-verdict"]').inner_text() == k.profile.verdict
    assert "Inductor's buffer accesses" in page.locator('[data-role="kernel-cost"]').inner_text()
    # its lines wrap between words: no word narrower than its box is split over two lines ("FLOP/byt e")
    split = page.evaluate(
        """(root) => {
        const out = [], walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let t = walk.nextNode(); t; t = walk.nextNode()) {
          const width = t.parentElement.getBoundingClientRect().width;
          for (const m of t.data.matchAll(/\\S+/g)) {
            const r = document.createRange();
            r.setStart(t, m.index);
            r.setEnd(t, m.index + m[0].length);
            const rects = [...r.getClientRects()].filter((x) => x.width > 0);
            const lines = new Set(rects.map((x) => Math.round(x.top))).size;
            if (lines > 1 && rects.reduce((a, x) => a + x.width, 0) < width) out.push(m[0]);
          }
        }
        return out;
      }""",
        page.locator('[data-role="kernel-cost"]').element_handle(),
    )
    assert split == [], split
    # fusion boxes coloured by the fraction of peak
    page.click('[data-tab="fusion"]')
    page.click('[data-role="colour-by"] [data-colour="peak"]')
    assert root.get_attribute("data-colour-by") == "peak"
    box = page.locator(f'[data-view="fusion"] [data-node="{node.name}"]')
    assert float(box.get_attribute("data-peak-fraction")) == pytest.approx(k.profile.peak_fraction, abs=1e-4)
    _assert_clean(page)


# -- the command line ---------------------------------------------------------------------------------

LOOP = """import torch
def f(a, b):
    return torch.relu(a @ b) * 2
c = torch.compile(f)
a, b = torch.randn(64, 32), torch.randn(32, 48)
for _ in range(4):
    c(a, b)
"""


def test_cli_run_profile_times_every_kernel_after_the_first_call(tmp_path, monkeypatch, capsys):
    """``inductor-lens run --profile`` through ``cli.main`` in this process (the console script's own process is
    tests/views/test_cli.py's; one more would cost a torch import)."""
    from inductor_lens.views import cli

    (tmp_path / "loop.py").write_text(LOOP)
    monkeypatch.chdir(tmp_path)
    status = cli.main(["run", "--profile", "-q", "--json", "r.json", "-o", "r.html", "loop.py"])
    assert status == 0, capsys.readouterr().err
    report = load(tmp_path / "r.json")
    (c,) = report.compiles
    assert {k.language for k in c.kernels} == {"extern", "cpp"}
    for k in c.kernels:
        assert k.profile.iterations == 3 and k.profile.total_us > 0, k.name  # 4 calls, the first not counted
        assert k.profile.achieved_gbps is not None
    mm = next(k for k in c.kernels if k.language == "extern")
    assert mm.cost.flops == 2 * 64 * 32 * 48
    assert report.profile.method.startswith("script mode") and report.device_info.peak_gbps > 0
    assert report.profile.warmup == 1 and "ran once" not in report.profile.method
    import base64

    from inductor_lens.views.html import pack_report  # the page embeds exactly this packed report

    assert base64.b64encode(pack_report(report)).decode("ascii") in (tmp_path / "r.html").read_text()


def test_cli_run_profile_of_a_graph_called_once_says_it_was_timed_cold_with_no_warm_up(tmp_path, monkeypatch, capsys):
    """A script that calls its compiled function once: that call is the only run, so it is timed, cold. The profile
    said "mean of 1 runs after 1 warm-up run"; there was none. Now ``warmup`` is 0 and the method says which graph
    ran once and how to time it warm."""
    from inductor_lens.views import cli

    (tmp_path / "once.py").write_text(LOOP.replace("range(4)", "range(1)"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "--profile", "-q", "--json", "r.json", "-o", "r.html", "once.py"]) == 0
    report = load(tmp_path / "r.json")
    (c,) = report.compiles
    assert all(k.profile.iterations == 1 and k.profile.total_us > 0 for k in c.kernels)
    assert report.profile.warmup == 0 and report.profile.runs == 1
    assert f"{c.id} ran once: timed on that first call (cold" in report.profile.method
    assert report.profile.runs_text == "1 run, no warm-up run: a graph called once is timed on its first call (cold)"


# -- attention: an extern kernel whose work happens in ops below the call -----------------------------


class Attention(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).sum(1)


def test_sdpa_forward_and_backward_are_timed_with_attention_flops():
    torch.manual_seed(0)
    B, T, D, H = 2, 16, 32, 4
    report = inductor_lens.inspect(Attention(D, H), torch.randn(B, T, D), backward=True, profile=True)
    attention = [
        (c, k) for c in report.compiles for k in c.kernels if "attention" in str(k.metadata.get("callee", k.name))
    ]
    assert {c.graph_kind for c, _ in attention} == {"forward", "backward"}, [k.name for k in report.kernels]
    fwd = 4 * B * H * T * T * (D // H)  # QK^T and PV, no discount for the causal mask
    for c, k in attention:
        assert k.profile and k.profile.total_us > 0, k.name
        if k.language == "extern":  # the call computes the attention
            assert k.cost.flops == (fwd if c.graph_kind == "forward" else 2.5 * fwd), (k.name, k.cost)
            assert "attention" in k.cost.source
        else:  # a generated kernel that readies the call's input (an expand), named after it by Inductor: the call's
            # op is the call's alone, so the kernel's FLOPs are its own ops' (none: it only moves memory)
            targets = [n.target for n in c.graphs["post_grad"].nodes if n.name in k.fx_nodes]
            assert targets and not any("attention" in t for t in targets), (k.name, targets)
            assert k.cost.flops == 0 and "memory-only" in k.cost.source, (k.name, k.cost)
    assert {c.graph_kind for c, k in attention if k.language == "extern"} == {"forward", "backward"}
    assert all(k.profile for k in report.kernels)


def test_reading_costs_adds_no_guard_to_a_dynamic_compile(monkeypatch):
    """Inductor's byte counts are read through size hints: the capture compiles exactly as many graphs with
    the cost reading as without it (the graph count of the capture itself is the capture's own test)."""
    from torch._dynamo.utils import counters

    from inductor_lens.capturing import torchread

    def double_sin(x):
        return torch.sin(x) * 2

    def graphs(read_costs):
        if not read_costs:
            monkeypatch.setattr(torchread, "_costs", lambda snode, raw: None)
        counters.clear()
        with inductor_lens.capture() as cap:
            f = torch.compile(double_sin, dynamic=True)
            for n in (8, 16, 24):
                f(torch.randn(n))
        monkeypatch.undo()
        return counters["stats"]["unique_graphs"], cap.report

    without, _ = graphs(False)
    with_costs_read, report = graphs(True)
    assert with_costs_read == without
    k = report.kernels[0]
    assert k.cost.bytes_read == 4 * 8 and k.cost.bytes_written == 4 * 8  # at the first call's size


def test_a_kernel_time_is_the_median_of_its_runs_with_the_spread_and_a_stall_flagged_noisy():
    """nu20 D2: on a loaded CPU, torch.profiler timed GPT-2's embedding + LayerNorm kernel at 15,336.9, 56,523.2 and
    15.4 us in three steps (prof_check.py), the mm at 58, 35,427 and 82 us; the reproducer times them at 7.61 and
    40.6 us. The mean (23,958 us; 11,856 us) is one stall; the report gives the median, the fastest and slowest run,
    and says the runs disagree."""
    out = _stalled_step()
    ln, mm, relu = (k.profile for k in out.kernels)
    assert (ln.statistic, ln.total_us, ln.min_us, ln.max_us, ln.iterations) == ("median", 15_336.9, 15.4, 56_523.2, 3)
    assert (mm.total_us, mm.per_call_us) == (82.0, 82.0)  # not the mean, 11,855.7 us
    assert relu.total_us == 7.6 and relu.noisy == ""
    assert ln.timing_text == "median of 3 runs (fastest 15.4 µs, slowest 56.5 ms)"
    assert ln.noisy.startswith("noisy: the slowest run took 3,670x the fastest (15.4 µs to 56.5 ms)")
    assert mm.noisy.startswith("noisy: the slowest run took 611x the fastest")
    s = out.profile
    assert (s.statistic, s.device_total_us, s.runs_text) == ("median", 20_000.0, "median of 3 runs after 1 warm-up run")
    back = inductor_lens.load(out.to_json()).kernels[0].profile
    assert back == ln


def test_an_old_profile_reads_as_the_mean_it_was_and_is_flagged_noisy_from_its_deviation():
    """A report made before the median (tp.json of nu20: the mean 14,651.90 us, std 12,781 us of 3 runs) loads as
    a mean with no fastest or slowest run, its deviation beside it, and noisy: the deviation is most of the mean."""
    from inductor_lens.analysis.reproducer import report_time_text

    old = KernelProfile.from_plain({"total_us": 14651.9, "std_us": 12781.0, "iterations": 3, "per_call_us": 14651.9})
    assert (old.statistic, old.min_us, old.max_us) == ("mean", None, None)
    assert old.timing_text == "mean of 3 runs (± 12.8 ms)"
    assert old.noisy.startswith("noisy: the runs spread by ± 12.8 ms around a mean of 14.7 ms")
    assert report_time_text(old) == "mean 14651.90 us per call of 3 runs (std 12781.00 us; noisy: the machine was busy)"


def _stalled_step(relu_runs=(7.4, 7.9, 7.6), mm_runs=(58.0, 35_427.0, 82.0)):
    """nu20 D2's step as ``apply_profile`` gets it: GPT-2's LayerNorm kernel (100 kB moved per call) and mm stalled
    in one run of three, a relu not, on a CPU whose measured copy runs at 20 GB/s."""
    from inductor_lens.analysis.perf import Measured, apply_profile

    cost = inductor_lens.report.model.Cost(source="", bytes_read=60_000.0, bytes_written=40_000.0, flops=0.0)
    kernels = [
        Kernel(name="cpp_fused_layer_norm_0", language="cpp", source="", fused_nodes=["op0"], cost=cost),
        Kernel(name="extern_kernels.mm[buf1]", language="extern", source="", metadata={"callee": "extern_kernels.mm"}),
        Kernel(name="cpp_fused_relu_2", language="cpp", source="", fused_nodes=["op2"], cost=cost),
    ]
    c = Compile(id="0/0 forward", compile_id="0/0", graph_kind="forward", trigger=Trigger("first_call", ""))
    report = inductor_lens.Report(
        torch_version="2.13", device="cpu", compiles=[dataclasses.replace(c, kernels=kernels)]
    )
    m = Measured(device="cpu", runs=3, warmup=1, step_us=[20_000.0, 95_000.0, 400.0])
    m.kernels = {
        ("0/0 forward", "cpp_fused_layer_norm_0"): [15_336.9, 56_523.2, 15.4],
        ("0/0 forward", "extern_kernels.mm[buf1]"): list(mm_runs),
        ("0/0 forward", "cpp_fused_relu_2"): list(relu_runs),
    }
    return apply_profile(report, m, DeviceInfo(name="cpu", peak_gbps=20.0, source="measured copy"))


def test_a_noisy_kernels_verdict_says_it_rests_on_a_noisy_time_with_its_fastest_runs_fraction():
    """nu20 D2: the LayerNorm kernel's median (15.3 ms, one run of 15.4 us beside two stalls) put it at "0% of
    memory bandwidth", stated as a fact. Its verdict says the time is noisy and what its fastest run reached; a
    kernel whose runs agree keeps its plain verdict."""
    out = _stalled_step()
    ln, _, relu = (k.profile for k in out.kernels)
    assert ln.verdict == (
        "0% of memory bandwidth (measured copy); memory-bound, from a noisy time (its runs disagree by more than "
        "3x): 32% at its fastest run"
    )
    assert ln.peak_fraction == 0.0003  # the median's own fraction, drawn marked as noisy (KernelProfile.noisy)
    assert relu.verdict == "66% of memory bandwidth (measured copy); memory-bound" and relu.noisy == ""
    assert inductor_lens.load(out.to_json()).kernels[0].profile == ln


def test_most_kernels_noisy_is_a_report_diagnostic_and_the_summary_gives_the_steps_spread():
    """When most kernels' runs disagree the machine was busy: a ``profile_noisy`` diagnostic says so once for the
    report; ``Report.summary()`` (``inductor-lens run --profile``'s output) gives the step's statistic, runs and
    spread, and how many kernels were noisy. One noisy kernel of three is the kernel's, not the machine's."""
    out = _stalled_step()
    noisy = [d for d in out.diagnostics if d.code == "profile_noisy"]
    assert [d.message for d in noisy] == [
        "the machine was busy while profiling: 2 of 3 kernels' runs disagree by more than 3x (the slowest over 3x "
        "the fastest); their times are medians, their shares and fractions of peak rest on them: rerun on an idle "
        "machine or with more runs"
    ]
    s = out.profile
    assert (s.device_total_us, s.device_total_min_us, s.device_total_max_us) == (20_000.0, 400.0, 95_000.0)
    text = out.summary()
    assert (
        "  profile (cpu): 20000.0 us per step, median of 3 runs (fastest 400 µs, slowest 95.0 ms); "
        "15426.5 us in kernels" in text
    )
    assert "    2 of 3 kernels noisy: their runs disagree (the machine was busy)" in text
    # each roll-up row names its kernels whose runs disagree (Python decides; the roofline's rows draw "N noisy")
    stalled = {k.name for k in out.kernels if k.profile.noisy}
    assert len(stalled) == 2
    for rows in (s.by_kind, s.by_module, s.by_line):
        assert {n for r in rows for n in r.noisy} == stalled
        assert all(set(r.noisy) == stalled & set(r.kernels) for r in rows)
    # all three stalled: 3 of 3; only the LayerNorm kernel: no diagnostic (the kernel's own noise, its verdict says)
    assert "3 of 3 kernels'" in next(d.message for d in _stalled_step((7.4, 90.0, 7.6)).diagnostics)
    assert not [d for d in _stalled_step(mm_runs=(58.0, 60.0, 82.0)).diagnostics if d.code == "profile_noisy"]


def test_script_modes_step_is_each_graphs_median_call_as_its_kernels_times_are():
    """``inductor-lens run --profile`` (script mode: every call of a graph is a run) gave the step as each graph's
    MEAN call while its kernels were medians: one stalled call of three made GPT-2's step 571 ms (nu20 tp.json).
    The step is the median call too, with no fastest or slowest of a whole step (none ran)."""
    c = Compile(
        id="0/0 forward",
        compile_id="0/0",
        graph_kind="forward",
        trigger=Trigger("first_call", ""),
        kernels=[Kernel(name="cpp_fused_relu_0", language="cpp", source="")],
    )
    report = inductor_lens.Report(torch_version="2.13", device="cpu", compiles=[c])
    calls = [(0, 900), (1000, 1012), (2000, 7000), (8000, 8010)]  # a warm-up call, then 12, 5,000 and 10 us
    events = [
        _ev("## Call CompiledFxGraph fx_0 ##", a, b, children=[_ev("cpp_fused_relu_0", a, b - 1)]) for a, b in calls
    ]
    m = kernel_timing.attribute_calls(events, report, on_gpu=False)
    assert m.kernels[("0/0 forward", "cpp_fused_relu_0")] == [11.0, 4999.0, 9.0]
    assert m.step_us == [12.0]  # the mean was 1,674 us
    s = inductor_lens.analysis.perf.apply_profile(report, m, None).profile
    assert (s.device_total_us, s.device_total_min_us, s.device_total_max_us) == (12.0, None, None)


def test_a_cpp_gemm_templates_time_is_its_own_record_not_unmatched():
    """nu28 D2: a profiled C++ GEMM template (max-autotune, freezing) records itself under its inner function's name,
    ``graph_0_gemm_m32n64k256_kernel`` (the ``RAIIAtenRecordFunctionHandle`` of its own source), not
    ``graph_0_cpp_fused_addmm_relu_1``: both templates of the recorded run landed in ``unmatched_ops`` (0 us
    attributed, no Roofline). The events here are named as that run's profiler named them (its ``unmatched_ops``),
    two calls of the graph in script mode, the first a warm-up; each template is timed by the record its source
    declares."""
    from inductor_lens.analysis.perf import apply_profile

    report = inductor_lens.load(pathlib.Path(__file__).parents[1] / "fixtures" / "cpu_profiled_mlp_max_autotune.json")
    recorded = [o.name for o in report.profile.unmatched_ops]  # what the profiler called the two templates' events
    assert report.profile.attributed_us == 0 and sorted(recorded) == [
        "graph_0_gemm_m32n256k128_kernel",
        "graph_0_gemm_m32n64k256_kernel",
    ]
    first, second = report.kernels  # cpp_fused_addmm_relu_0 (128 -> 256, relu), _1 (256 -> 64)
    assert (first.name, second.name) == ("cpp_fused_addmm_relu_0", "cpp_fused_addmm_relu_1")

    def call(t0, us0, us1):
        return _ev(
            "## Call CompiledFxGraph fx_0 ##",
            t0,
            t0 + 100,
            children=[
                _ev("graph_0_gemm_m32n256k128_kernel", t0 + 1, t0 + 1 + us0),
                _ev("graph_0_gemm_m32n64k256_kernel", t0 + 50, t0 + 50 + us1),
            ],
        )

    report = dataclasses.replace(report, profile=None)  # profiled again, as the capture now attributes it
    m = kernel_timing.attribute_calls([call(0, 40, 30), call(1000, 12, 6)], report, on_gpu=False)
    assert m.kernels == {("0/0 inference", first.name): [12.0], ("0/0 inference", second.name): [6.0]}
    assert m.unmatched_ops == {}
    out = apply_profile(report, m, None)
    assert [k.profile.total_us for k in out.kernels] == [12.0, 6.0]
    assert (out.profile.attributed_us, out.profile.device_total_us, out.profile.unmatched_ops) == (18.0, 100.0, [])


def test_a_profile_of_one_run_says_its_times_are_single_timings_and_how_to_take_more(profiled):
    """nu28 D6: ``inductor-lens run --profile`` of a script that calls its model twice times each kernel once ("median of
    1 runs"); a single run has no spread to be flagged noisy, and the ranking and verdicts read as facts (tb.py:
    "1. extern_kernels.mm[buf0] 12.1 ms 93%", 23.9 us in its reproducer). The recorded frozen MLP (script mode, 1 run):
    ``StepProfile.few_runs`` says what the times are worth and the real way to take more (each call after the first is
    a run), the summary says it; a kernel timed once has a verdict that says so. A profile of 5 runs says nothing."""
    from inductor_lens.analysis.perf import apply_profile
    from inductor_lens.report.rules import FEW_RUNS

    one = inductor_lens.load(pathlib.Path(__file__).parents[1] / "fixtures" / "cpu_profiled_mlp_default.json")
    p = one.profile
    assert (p.runs, p.warmup, p.method.startswith("script mode:"), FEW_RUNS) == (1, 1, True, 2)
    assert p.runs_text == "1 run after 1 warm-up run"  # was "median of 1 runs after 1 warm-up run"
    assert p.few_runs == (
        "One run: each kernel's time is a single timing, not a ranking to trust (a stall, a cold cache or another job "
        "on the machine looks the same as a slow kernel). Profile with more runs: inductor-lens run --profile times "
        "every call of a compiled graph after its first, so call the compiled model more times in the script (in a "
        "loop of 10 calls: 9 runs)."
    )
    assert f"median of 1 run; 144.6 us in kernels, unattributed: 25%\n    {p.few_runs}" in one.summary()
    five, _, _ = profiled
    assert five.profile.runs == kernel_timing.RUNS and five.profile.few_runs == ""
    assert not [k for k in five.kernels if "from one run" in k.profile.verdict]
    # script mode on the recorded max-autotune MLP's two templates (their events as its profiler named them)
    report = inductor_lens.load(pathlib.Path(__file__).parents[1] / "fixtures" / "cpu_profiled_mlp_max_autotune.json")
    report = dataclasses.replace(report, profile=None)

    def call(t0):
        return _ev(
            "## Call CompiledFxGraph fx_0 ##",
            t0,
            t0 + 700,
            children=[
                _ev("graph_0_gemm_m32n256k128_kernel", t0 + 1, t0 + 401),
                _ev("graph_0_gemm_m32n64k256_kernel", t0 + 450, t0 + 650),
            ],
        )

    def verdicts(calls):
        m = kernel_timing.attribute_calls([call(1000 * i) for i in range(calls)], report, on_gpu=False)
        return [k.profile.verdict for k in apply_profile(report, m, report.device_info).kernels]

    once = verdicts(2)  # a warm-up call and one run: 32x64x256 (2 * 524,288 FLOPs) in 200 us against 0.0384 TFLOP/s
    assert once[1] == "14% of fp32 compute peak; compute-bound, from one run (a single timing: not told from noise)"
    assert all(v.endswith(", from one run (a single timing: not told from noise)") for v in once), once
    assert [v.split(",")[0] for v in verdicts(4)] == [v.split(",")[0] for v in once]  # the same verdict, 3 runs
    assert not [v for v in verdicts(4) if "one run" in v]


def test_a_profiled_capture_writes_no_profiler_chatter_to_stderr_and_keeps_every_other_line(capfd):
    """Each start and stop of torch's profiler makes its C++ side write ``USDT:... profiler_start`` and
    ``profiler_stop`` to the process's stderr, which Jupyter shows under the cell: two lines of noise for every
    profiled capture. The capture's profiler starts and stops without them; a line anyone else writes to stderr
    meanwhile (another thread, a real error) is written back, and stderr is as it was afterwards."""
    from inductor_lens.capturing import kernel_timing

    capfd.readouterr()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        torch.randn(4).sin()
    bare = capfd.readouterr().err
    report = inductor_lens.inspect(sin_cos, torch.randn(64), profile=True)
    assert all(k.profile is not None for k in report.kernels), report.kernels
    # nu25 L3: the panel's script (Kernel.reproducer) is `repro`'s, written again once the time it compares with is known
    from inductor_lens.analysis.reproducer import reproducer

    (k,) = report.kernels
    assert k.reproducer == reproducer(report, k) and f"REPORT_US = {float(k.profile.per_call_us)!r}" in k.reproducer
    err = capfd.readouterr().err
    assert "profiler_start" not in err and "profiler_stop" not in err, err
    if "profiler_start" not in bare:  # this torch's profiler says nothing: nothing to hide
        pytest.skip(f"torch {torch.__version__}'s profiler writes no start/stop lines")
    with kernel_timing._kineto_quiet():
        os.write(2, bare.encode() + b"a line of another thread\n")
    assert capfd.readouterr().err == "a line of another thread\n"
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"
