"""nu22 D1: torch 2.15's output code checks layouts with two calls torch 2.13 does not write:
``assert_tensor_metadata(buf1, sizes, strides, dtype, op)`` after an extern kernel's new result, and
``assert_size_stride_grouped((names), (sizes), (strides), 'input')`` for the graph inputs a kernel reads first. Read
by the one parser (``report.rules.asserted_layouts``), they give a launch its layouts (a convolution's result was a
bare ``buf1``, so ``repro`` could not build it) and a dynamic graph input its symbolic sizes (they were get_args'
concrete ones). Real output code: ``tests/fixtures/oc215_conv_dynamic.txt`` (``make_oc215_fixture.py``) and lines
of a channels-last convnet's (nu22 s1, ``TORCH_LOGS=output_code``). No torch."""

from __future__ import annotations

import pathlib

import pytest

from inductor_lens.analysis.reproducer import kernel_script
from inductor_lens.capturing.launch import kernel_launch
from inductor_lens.capturing.parse import OutputCodeLayouts, cpp_arg_types, parse_output_code_kernels
from inductor_lens.report.model import Kernel
from inductor_lens.report.rules import asserted_layouts

OC215 = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "oc215_conv_dynamic.txt"
FUSED = "cpp_fused__native_batch_norm_legit_no_training_add_mean_native_layer_norm_relu_1"

# nu22 s1 (torch 2.15, 0/0 inference): the first convolution's result, renamed for the BatchNorm that runs in place
S1_CALL = """
    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1 = args
        args.clear()
        assert_size_stride_grouped((arg1_1, arg0_1), ((4, 3, 32, 32), (16, 3, 3, 3)), ((3072, 1, 96, 3), (27, 1, 9, 3)), 'input')
        # Topologically Sorted Source Nodes: [input_1], Original ATen: [aten.convolution]
        buf0 = extern_kernels.convolution(arg1_1, arg0_1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
        assert_tensor_metadata(buf0, (4, 16, 32, 32), (16384, 1, 512, 16), torch.float32, 'torch.ops.aten.convolution.default')
        del arg0_1
        del arg1_1
        assert_size_stride_grouped((arg2_1, arg3_1, arg4_1, arg5_1), ((16, ), (16, ), (16, ), (16, )), ((1, ), (1, ), (1, ), (1, )), 'input')
        buf1 = buf0; del buf0  # reuse
        assert_size_stride(arg6_1, (16, 16, 3, 3), (144, 1, 48, 16), 'input')
        cpp_fused__native_batch_norm_legit_no_training_relu_0(buf1, arg2_1, arg3_1, arg4_1, arg5_1)
"""  # noqa: E501


@pytest.fixture(scope="module")
def oc215() -> str:
    return OC215.read_text()


def test_each_assertion_form_gives_the_layouts_it_checks():
    """The three forms, as torch's wrapper writes them (``codegen/wrapper.py`` ``_codegen_assert_size_stride`` and
    ``_codegen_assert_size_stride_grouped``); any other line, the aliases' definitions included, asserts nothing."""
    assert asserted_layouts("        assert_size_stride(arg0_1, (8, 3, 3, 3), (27, 9, 3, 1), 'input')") == [
        ("arg0_1", [8, 3, 3, 3], [27, 9, 3, 1], None)
    ]
    assert asserted_layouts(
        "        assert_tensor_metadata(buf1, (s17, 8, 8, 8), (512, 1, 64, 8), torch.float32, "
        "'torch.ops.aten.convolution.default')"
    ) == [("buf1", ["s17", 8, 8, 8], [512, 1, 64, 8], "float32")]
    assert asserted_layouts(
        "        assert_size_stride_grouped((arg3_1, arg1_1, x_0), ((s17, 3, 8, 8), (8, ), ()), "
        "((192, 1, 24, 3), (1, ), ()), 'input')"
    ) == [("arg3_1", ["s17", 3, 8, 8], [192, 1, 24, 3], None), ("arg1_1", [8], [1], None), ("x_0", [], [], None)]
    for other in (
        "assert_size_stride_grouped = torch._C._dynamo.guards.assert_size_stride_grouped",
        "from torch._inductor.runtime.runtime_utils import assert_tensor_metadata",
        "        assert_alignment(arg0_1, 16, 'input')",
        "        buf0 = empty_strided_cpu((8, ), (1, ), torch.float32)",
    ):
        assert asserted_layouts(other) == [], other


def test_torch_215s_assertions_give_an_extern_result_and_a_dynamic_input_their_layouts(oc215):
    """The fixture's fused kernel reads the convolution's result ``buf1`` (``in_ptr0``) and the dynamic input
    ``arg10_1`` (``in_ptr7``, ``y`` of ``[s17, 8]``): both get the sizes, strides and dtype the output code asserts,
    with get_args' values as hints, and the kernel's reproducer script builds them."""
    layouts = OutputCodeLayouts(oc215)
    lay = layouts.layouts
    assert (lay["buf1"]["shape"], lay["buf1"]["stride"], lay["buf1"]["dtype"]) == (
        ["s17", 8, 8, 8],
        [512, 1, 64, 8],
        "float32",
    )
    x = lay["arg3_1"]  # x, channels-last, of the symbolic batch
    assert (x["shape"], x["stride"], x["dtype"], x["hint_shape"]) == (
        ["s17", 3, 8, 8],
        [192, 1, 24, 3],
        "float32",
        [2, 3, 8, 8],
    )
    assert (lay["arg10_1"]["shape"], lay["arg10_1"]["hint_shape"]) == (["s17", 8], [2, 8])
    _, source = parse_output_code_kernels(oc215)[FUSED]
    launch = kernel_launch(layouts, FUSED, "cpp", source, arg_types=cpp_arg_types(oc215)[FUSED])
    args = {a.param: a for a in launch.args}
    conv, y = args["in_ptr0"], args["in_ptr7"]
    assert (conv.name, conv.shape, conv.stride, conv.dtype, conv.hint) == (
        "buf1",
        ["s17", 8, 8, 8],
        [512, 1, 64, 8],
        "float32",
        [2, 8, 8, 8],
    )
    assert (y.name, y.shape, y.stride, y.dtype, y.hint) == ("arg10_1", ["s17", 8], [8, 1], "float32", [2, 8])
    text = kernel_script(Kernel(name=FUSED, language="cpp", source=source, launch=launch))
    # the dynamic batch is the script's SIZES at its value at capture (--size s17=N runs another)
    assert "make([size('s17'), 8, 8, 8], [512, 1, 64, 8], 'float32', 0" in text, text
    assert "SIZES = {'s17': 2}  # s17: its value at capture (a dynamic size)" in text, text


def test_an_extern_result_renamed_for_an_in_place_kernel_keeps_its_asserted_layout():
    """nu22 s1: ``buf1 = buf0; del buf0  # reuse`` after the convolution; the BatchNorm kernel's ``in_out_ptr0`` was
    ``buf1`` with no shape (``repro``: "'buf0' is neither a number nor a literal"). It is the convolution's
    channels-last result."""
    layouts = OutputCodeLayouts(S1_CALL)
    source = (
        'extern "C" void kernel(float* in_out_ptr0, const float* in_ptr0, const float* in_ptr1, '
        "const float* in_ptr2, const float* in_ptr3)\n{}"
    )
    launch = kernel_launch(layouts, "cpp_fused__native_batch_norm_legit_no_training_relu_0", "cpp", source)
    out, mean, *_ = launch.args
    assert (out.name, out.shape, out.stride, out.dtype) == ("buf1", [4, 16, 32, 32], [16384, 1, 512, 16], "float32")
    assert (mean.name, mean.shape, mean.stride) == ("arg2_1", [16], [1])
    conv = kernel_launch(layouts, "extern_kernels.convolution", "extern", "", buffer="buf0")
    assert [(a.name, a.shape, a.stride) for a in conv.args[:2]] == [
        ("arg1_1", [4, 3, 32, 32], [3072, 1, 96, 3]),
        ("arg0_1", [16, 3, 3, 3], [27, 1, 9, 3]),
    ]


REGION_CODE = """
def repeated_subgraph0(args):
    repeated_subgraph0_arg0_1, repeated_subgraph0_arg1_1 = args
    args.clear()
    assert_size_stride(repeated_subgraph0_arg0_1, (2, 32, 64), (2048, 64, 1), 'input')
    assert_size_stride(repeated_subgraph0_arg1_1, (64, ), (1, ), 'input')
    repeated_subgraph0_buf0 = empty_strided_cpu((2, 32, 1), (32, 1, 64), torch.float32)
    repeated_subgraph0_buf1 = empty_strided_cpu((2, 32, 64), (2048, 64, 1), torch.float32)
    cpp_fused_mean_mul_rsqrt_1(repeated_subgraph0_buf0, repeated_subgraph0_arg0_1, repeated_subgraph0_arg1_1, repeated_subgraph0_buf1)
    del repeated_subgraph0_arg0_1
    return (repeated_subgraph0_buf1, reinterpret_tensor(repeated_subgraph0_buf0, (2, 32), (32, 1), 0), )


class Runner:
    def call(self, args):
        primals_1, primals_2, primals_3 = args
        args.clear()
        assert_size_stride(primals_1, (2, 32, 64), (2048, 64, 1), 'input')
        assert_size_stride(primals_2, (64, ), (1, ), 'input')
        assert_size_stride(primals_3, (64, ), (1, ), 'input')
        repeated_subgraph0_args = [primals_1, primals_2]
        buf0 = repeated_subgraph0(repeated_subgraph0_args)
        buf1 = buf0[0]
        buf2 = buf0[1]
        del buf0
        buf3 = empty_strided_cpu((2, 32, 1), (32, 1, 64), torch.float32)
        buf4 = empty_strided_cpu((2, 32, 64), (2048, 64, 1), torch.float32)
        cpp_fused_mean_mul_rsqrt_1(buf3, buf1, primals_3, buf4)
        return (buf4, buf2, )
"""


def test_a_kernel_named_alike_in_a_region_and_its_caller_is_read_at_each_graphs_own_call():
    """nu25 H1: Inductor gives a kernel of the same code one name in a region and in the graph that calls it (a layer's
    RMSNorm and the model's final norm); the caller's launch was read from the region's call (model.norm's kernel
    called with layer 0's tensors, its reproducer timing them). Each graph reads its own function's calls, and an item
    of the region's result (``buf1 = buf0[0]``) has the layout the region returns there."""
    from inductor_lens.capturing.launch import kernel_launch

    caller = OutputCodeLayouts(REGION_CODE)
    caller.scope_calls("")
    args = kernel_launch(caller, "cpp_fused_mean_mul_rsqrt_1", "cpp", "").args
    assert [a.name for a in args] == ["buf3", "buf1", "primals_3", "buf4"]
    assert (args[1].shape, args[1].stride, args[1].dtype) == ([2, 32, 64], [2048, 64, 1], "float32")
    assert caller.layouts["buf2"]["shape"] == [2, 32]  # a view the region returns: its view's layout
    region = OutputCodeLayouts(REGION_CODE)
    region.scope_calls("repeated_subgraph0")
    names = [a.name for a in kernel_launch(region, "cpp_fused_mean_mul_rsqrt_1", "cpp", "").args]
    assert names == [
        "repeated_subgraph0_buf0",
        "repeated_subgraph0_arg0_1",
        "repeated_subgraph0_arg1_1",
        "repeated_subgraph0_buf1",
    ]
