"""The profiler event of an extern kernel that a higher-order op runs (recorded on an H200: a Llama training step
with activation checkpointing, where Inductor calls attention through ``graphsafe_run_with_rng_state``)."""

from inductor_lens.capturing.kernel_timing import _aten_name
from inductor_lens.report.model import Kernel

CALL = (
    "buf13 = torch.ops.higher_order.graphsafe_run_with_rng_state(torch.ops.aten._scaled_dot_product_cudnn_attention"
    ".default, buf10, reinterpret_tensor(buf11, (1, 32, 2048, 128), (0, 262144, 128, 1), 0), reinterpret_tensor("
    "buf12, (1, 32, 2048, 128), (0, 262144, 128, 1), 0), buf9, True, scale=0.0883, rng_state=fwd_rng_state_0)"
)


def test_a_higher_order_op_is_timed_as_the_op_it_runs():
    k = Kernel(
        name="torch.ops.higher_order.graphsafe_run_with_rng_state[buf13]",
        language="extern",
        source=CALL,
        metadata={"callee": "torch.ops.higher_order.graphsafe_run_with_rng_state"},
    )
    # before: aten::graphsafe_run_with_rng_state, an event the profiler never shows (profile_missing for 32 kernels)
    assert _aten_name(k, {}) == "aten::_scaled_dot_product_cudnn_attention"


def test_plain_extern_kernels_keep_their_aten_op():
    mm = Kernel(name="extern_kernels.mm[buf0]", language="extern", source="extern_kernels.mm(a, b, out=buf0)",
                metadata={"callee": "extern_kernels.mm"})  # fmt: skip
    assert _aten_name(mm, {}) == "aten::mm"


def test_an_op_of_another_namespace_keeps_its_namespace():
    op = Kernel(name="torch.ops.nu2.mysin.default[buf1]", language="extern", source="buf1 = torch.ops.nu2.mysin.default(buf0)",
                metadata={"callee": "torch.ops.nu2.mysin.default"})  # fmt: skip
    assert _aten_name(op, {}) == "nu2::mysin"  # before: aten::default, an event no profile shows
