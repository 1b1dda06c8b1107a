"""A PT2E int8 model's capture (tests/fixtures/raw_pt2e_int8.json, recorded with torchao by make_raw_fixtures.py
``pt2e_int8``: nu18's Conv2d + ReLU + Linear, quantized by ``X86InductorQuantizer``, frozen, compiled), built here
without torchao or a compile. The truths below are torch's, read from the recorded post-grad graph and output code."""

import pytest

from inductor_lens.capturing.build import build_report
from tests._raw import load_raw

CONV_LINE, FC_LINE = "y = torch.relu(self.conv(x))", "return self.fc(y.flatten(1))"


@pytest.fixture(scope="module")
def raw():
    return load_raw("pt2e_int8")


@pytest.fixture(scope="module")
def int8(raw):
    return build_report(load_raw("pt2e_int8"), "2.13.0", cells={}).compiles[0]


def _line(frames):
    return [f.code for f in frames if f.is_user]


def test_the_quantize_ops_pt2e_inserts_take_the_line_of_the_op_they_quantize(raw, int8):
    """``convert_pt2e`` inserts each ``quantize_per_tensor`` with no stack trace, so dynamo gives it the line of the
    converted GraphModule's generated forward (``<eval_with_key>.15:16``, as torch's post-grad graph prints it), and
    the page tied the quantize kernel to a file that is no source ("could not be read"). The quantize of ``x`` feeds
    the convolution (``qconv``, at ``y = torch.relu(self.conv(x))``), that of ``y.flatten(1)`` the linear (``qlinear``,
    at ``return self.fc(...)``, module ``fc``): each takes that line, in its graph node, its fused node and its
    kernel."""
    recorded = {n["name"]: n["stack_trace"] for n in raw.graphs[0].post_grad_nodes}
    assert (
        "<eval_with_key>" in recorded["quantize_per_tensor"] and "<eval_with_key>" in recorded["quantize_per_tensor_1"]
    )
    post = {n.name: n for n in int8.graphs["post_grad"].nodes}
    assert _line(post["quantize_per_tensor"].user_stack) == [CONV_LINE]
    assert _line(post["quantize_per_tensor_1"].user_stack) == [FC_LINE] and post[
        "quantize_per_tensor_1"
    ].module_stack == ["fc"]
    fused = {n.name: n for n in int8.fused_nodes}
    assert fused["op0"].fx_nodes == ["quantize_per_tensor"] and _line(fused["op0"].user_lines) == [CONV_LINE]
    kernels = {k.name: k for k in int8.kernels}
    assert _line(kernels["cpp_fused_quantize_per_tensor_0"].user_lines) == [CONV_LINE]
    assert _line(kernels["cpp_fused_quantize_per_tensor_view_1"].user_lines) == [FC_LINE]
    frames = [f for k in int8.kernels for s in k.user_stack for f in s]
    frames += [f for n in int8.fused_nodes for f in n.user_lines] + [f for n in post.values() for f in n.user_stack]
    assert not [f for f in frames if f.file.startswith("<eval_with_key>")]


def test_the_memory_view_lists_each_constant_the_frozen_graph_holds(int8):
    """The Memory view said only "weights 8.8 KiB held as graph constants" (``Memory.constant_bytes``): which weights,
    how large each, was not said. ``Memory.constants`` has a row per constant its kernels read, as the capture sized
    them (oneDNN's packed fc weight at its packed 8,192 B, its logical shape ``[512, 16]`` int8 from the graph's
    ``get_attr``), named by ``Compile.constant_names`` (``_frozen_param9`` is ``fc.weight``, ``_frozen_param1`` is
    ``fc.bias``), largest first; together they are ``constant_bytes``."""
    m = int8.memory
    rows = {c.name: c for c in m.constants}
    assert sum(c.bytes for c in m.constants) == m.constant_bytes == 9008
    assert [c.bytes for c in m.constants] == sorted((c.bytes for c in m.constants), reverse=True)
    assert m.constants[0].name == "_frozen_param9" and (rows["_frozen_param9"].shape, rows["_frozen_param9"].dtype) == (
        [512, 16],
        "int8",
    )
    assert rows["_frozen_param9"].display == "fc.weight (int8, packed for oneDNN)"
    assert (rows["_frozen_param1"].display, rows["_frozen_param1"].bytes, rows["_frozen_param1"].shape) == (
        "fc.bias",
        64,
        [16],
    )
    assert rows["x_scale"].shape is None  # made by the lowering: no get_attr


def test_the_constants_the_quantized_lowerings_make_are_named_by_what_they_are(int8):
    """Inductor's oneDNN lowerings make constants of the quantized op's arguments (``mkldnn_lowerings.py``:
    ``add_tensor_constant(torch.tensor(x_scale), name="x_scale")``, ``_0`` added where the name is taken), which no
    graph node names: they had no name. The output code's ``qlinear_pointwise.tensor(buf5, x_scale_0, x_zp_0,
    _frozen_param9, _frozen_param5, _frozen_param6_0, ...)`` reads them for the post-grad ``qlinear``, whose input is
    ``quantize_per_tensor_1`` (its match: ``'x': quantize_per_tensor_1, 'x_scale': 0.00713..., 'x_zp': 0``): the scale
    and zero point of that quantize, fc's input; ``_frozen_param6_0`` is ``_frozen_param6`` (fc.weight's zero point,
    int64) made int32 for oneDNN."""
    code = int8.output_code
    assert "qlinear_pointwise.tensor(buf5, x_scale_0, x_zp_0, _frozen_param9, _frozen_param5, _frozen_param6_0" in code
    assert "{'x': quantize_per_tensor_1, 'x_scale': 0.007130288984626532, 'x_zp': 0," in code
    assert "{'x': quantize_per_tensor, 'x_scale': 0.030419139191508293, 'x_zp': 143," in code
    rows = {c.name: c.display for c in int8.memory.constants}
    assert rows["x_scale_0"] == "scale of quantize_per_tensor_1 (fc's input)"
    assert rows["x_zp_0"] == "zero point of quantize_per_tensor_1 (fc's input)"
    assert rows["x_scale"] == "scale of quantize_per_tensor (qconv_pointwise's input)"  # the conv's: no module kept
    assert rows["x_zp"] == "zero point of quantize_per_tensor (qconv_pointwise's input)"
    assert rows["_frozen_param6_0"] == "zero point of fc.weight (as int32)"
    assert all(rows.values()), rows
    (qlinear,) = [k for k in int8.kernels if "qlinear_pointwise" in k.name]
    holds = {a.name: a.holds for a in qlinear.launch.args}
    assert holds["x_scale_0"] == "scale of quantize_per_tensor_1 (fc's input)"


def test_no_local_of_the_generated_forward_is_called_the_users_variable(raw, int8):
    """Dynamo traces the converted GraphModule's generated forward (``<eval_with_key>.15``), whose locals torch.fx named
    after its nodes (``linear = torch.ops.aten.linear.default(...)``), and names its nodes after them: these were the
    user's variables (``GraphNode.variable``), and the graph's output was called ``linear``. A variable is the user's
    only where the innermost frame of the node's stack is the user's and its line assigns it: the ``linear`` whose stack
    ends in torch's ``F.linear(input, self.weight, self.bias)``, the quantize at ``<eval_with_key>.15:16``, the
    ``relu`` of ``y = torch.relu(...)`` (which assigns ``y``, not ``relu``) are none."""
    recorded = {n["name"]: n.get("variable") for n in raw.dynamo_graphs["0/0"]}
    assert recorded["linear"] == "linear" and recorded["quantize_per_tensor_default"] == "quantize_per_tensor_default"
    assert [n.variable for n in int8.graphs["dynamo"].nodes if n.variable] == []
    assert [o.name for o in int8.outputs] != ["linear"]


def test_a_pt2e_weight_is_named_as_the_argument_of_the_modules_op_it_ends_up_as(raw, int8):
    """``convert_pt2e`` replaces ``fc.weight`` by an int8 buffer ``_frozen_param1`` (its scale ``_scale_1``, its zero
    point ``_zero_point_1``), and the constants were named by those buffers: Inductor's ``_frozen_param9`` read
    "_frozen_param1 (packed for oneDNN)" while Inductor's own ``_frozen_param1`` is ``fc.bias``. Dynamo's graph shows
    what the buffer is: it feeds a ``dequantize_per_channel`` as its ``input``, and that the ``linear`` of module ``fc``
    as its ``weight`` (the schemas' argument names, recorded at capture). So ``fc.weight (int8, packed for oneDNN)``,
    its scale and zero point by it, and the convolution's packed weight ``conv.weight``, no more "folded with" its own
    scale (``qconv_prepack`` reads it to pack the weight)."""
    dyn = {n["name"]: n for n in raw.dynamo_graphs["0/0"]}
    assert dyn["quantize_per_channel_default_1"]["source"] == "L['self']._buffers['_frozen_param1']"
    assert dyn["dequantize_per_channel_default_1"]["arguments"]["quantize_per_channel_default_1"] == "input"
    assert dyn["linear"]["arguments"]["dequantize_per_channel_default_1"] == "weight"
    frozen = {
        "_frozen_param0": "conv.bias",
        "_frozen_param1": "fc.bias",
        "_frozen_param2": "scale of conv.weight",
        "_frozen_param3": "zero point of conv.weight",
        "_frozen_param5": "scale of fc.weight",
        "_frozen_param6": "zero point of fc.weight",
        "_frozen_param8": "conv.weight (int8, packed for oneDNN)",
        "_frozen_param9": "fc.weight (int8, packed for oneDNN)",
    }
    assert {c: int8.constant_names.get(c) for c in frozen} == frozen
    post = {n.name: n for n in int8.graphs["post_grad"].nodes}
    assert (post["qlinear_prepack"].role, post["qlinear_prepack"].display_name) == (
        "buffer",
        "fc.weight (int8, packed for oneDNN)",
    )
    assert post["arg5_1"].display_name == "scale of fc.weight"
    shown = {n.name: n.display_name for n in int8.graphs["dynamo"].nodes if n.op == "get_attr"}
    assert (
        shown["quantize_per_channel_default_1"] == "fc.weight" and shown["_zero_point_0"] == "zero point of conv.weight"
    )
    (qlinear,) = [k for k in int8.kernels if "qlinear_pointwise" in k.name]
    holds = {a.name: a.holds for a in qlinear.launch.args}
    assert holds["_frozen_param9"] == "fc.weight (int8, packed for oneDNN)" and holds["_frozen_param1"] == "fc.bias"
