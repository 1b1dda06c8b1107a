"""What a diff says about a launch's arguments (nu31 D2): their dtype, their layout, and a source that differs only by
the names of the tensors it is called on. On nu31's small ResNet training step's forward (``cpu_resnet_*.json.gz``):
float32, channels_last (the model and input), bf16 autocast; no compile, no torch."""

from __future__ import annotations

import pathlib

import pytest

import inductor_lens
from inductor_lens.analysis.diff import DIFF_FORMAT_VERSION

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"


@pytest.fixture(scope="module")
def resnet():
    return {m: inductor_lens.load(FIXTURES / f"cpu_resnet_{m}.json.gz") for m in ("fp32", "cl", "bf16")}


def _convs(d):
    return [k for k in d.compiles[0].kernels if k.a and k.a.startswith("extern_kernels.convolution")]


def test_channels_last_convolutions_read_the_users_tensors_not_copies(resnet):
    """nu31 D2: each 3x3 convolution was "changed · source" with similarity 1: A's ``convolution(buf1, buf0, ...)``
    read the channels-last copies a C++ kernel made of x and the weights, B's ``convolution(primals_2, primals_1,
    ...)`` the user's tensors, channels-last already. The same code on other arguments, and which; the graph inputs'
    layout is said once for the pair (A's x: strides [12288, 4096, 64, 1]; B's: [12288, 1, 192, 3])."""
    d = inductor_lens.diff(resnet["fp32"], resnet["cl"])
    convs = _convs(d)
    assert len(convs) == 6
    first = convs[0]
    assert first.changes == ["args"] and first.status == "changed"
    # nu24: what made A's copies is named: A's kernel that B does not launch (its row says "removed")
    (copies,) = [k.a for k in d.compiles[0].kernels if k.status == "only_a"]
    assert first.what_changed == (
        "same code, other arguments: copy of x → x, copy of model.stem.weight → model.stem.weight; "
        f"in A made by {copies}, which B does not launch"
    )
    read = [(c["arg"], c["what"], c["a"], c["b"], c["made_by_a"]) for c in first.arg_changes]
    assert read == [
        ("x", "reads", "copy of x", "x", copies),
        ("model.stem.weight", "reads", "copy of model.stem.weight", "model.stem.weight", copies),
    ]
    by_name = {n.name: n for n in d.a.compiles[0].fused_nodes}
    for c in first.arg_changes:  # A's argument is a buffer that kernel writes
        assert any(c["buffer_a"] in n.writes and n.kernel == copies for n in by_name.values()), c
    # the 3x3 ones; the 1x1 shortcut's source really differs: A passes a view of its weight (reinterpret_tensor)
    assert [c.changes for c in convs] == [["args"]] * 5 + [["source"]]
    assert "reinterpret_tensor" in d.a.compiles[0].kernel(convs[5].a).source
    pair = d.compiles[0]
    assert {"input": "x", "what": "layout", "a": "contiguous", "b": "channels_last"} in pair.inputs
    assert pair.inputs[0]["input"] == "x"  # the user's own argument first
    assert pair.inputs_text == (
        "inputs: layout contiguous → channels_last (x, model.stem.weight, model.block1.conv1.weight +3 more)"
    )
    assert f"\n    {pair.inputs_text}\n" in d.changes_text()
    data = d.to_dict()
    assert data["version"] == DIFF_FORMAT_VERSION == 9
    assert data["compiles"][0]["inputs_text"] == pair.inputs_text
    # A against itself: nothing
    same = inductor_lens.diff(resnet["cl"], resnet["cl"])
    assert same.compiles[0].inputs == [] and all(k.status == "same" for k in same.kernels)


def test_bf16_autocast_says_float32_to_bfloat16(resnet):
    """nu31 D2: float32 → bfloat16 appeared in no row (the convolutions said only their bytes). Now each paired
    convolution and batch-norm kernel says which of its tensors changed dtype; the graph inputs stay float32."""
    d = inductor_lens.diff(resnet["fp32"], resnet["bf16"])
    first = _convs(d)[0]
    assert "dtype" in first.changes and "source" not in first.changes
    assert first.what_changed.startswith("dtype float32 → bfloat16 (model.stem to_copy)"), first.what_changed
    assert "bytes 2,492,096 → 1,246,048" in first.what_changed
    paired = [k for k in d.compiles[0].kernels if k.a and k.b]
    assert paired and all("float32 → bfloat16" in k.what_changed for k in paired), [
        k.what_changed for k in paired if "bfloat16" not in k.what_changed
    ]
    bn = next(k for k in paired if "batch_norm" in k.a)
    assert {"arg": "model.stem convolution", "what": "dtype", "a": "float32", "b": "bfloat16"} in bn.arg_changes
    assert d.compiles[0].inputs == [] and d.compiles[0].inputs_text == ""


def test_an_equal_saved_total_whose_part_made_by_the_forward_moved_says_that_part(resnet):
    """nu31 D6: "saved for backward 16.45 MiB → 16.45 MiB (±0 B)" hid that the part the forward made dropped by
    457.7 KiB (A's backward keeps channels-last copies of x and the weights, 468,672 B, B's the user's own tensors).
    Where that part changed otherwise than the total, the compile pair says it, for the facts bar and the CLI."""
    a, b = resnet["fp32"], resnet["cl"]
    ma, mb = a.compiles[0].memory, b.compiles[0].memory
    assert ma.saved_bytes == mb.saved_bytes  # the total: equal
    mem = inductor_lens.diff(a, b).compiles[0].memory
    assert mem["saved_by_forward"] == {"a": 17248452, "b": 16779780, "delta": -468672}
    assert mem["saved_by_forward_text"] == "of it made by the forward 16.45 MiB → 16 MiB (−457.7 KiB)"
    assert "    memory saved for backward: of it made by the forward 16.45 MiB → 16 MiB (−457.7 KiB)\n" in (
        inductor_lens.diff(a, b).changes_text()
    )
    # nothing moved: not said
    assert "saved_by_forward_text" not in inductor_lens.diff(b, b).compiles[0].memory
