"""Naming a frozen graph's constants by the parameters they come from (``capturing/constants.constant_names``), on
origins as the capture records them (no torch): the records here are those a frozen conv + BatchNorm net and a frozen
linear made on torch 2.13 (``_frozen_paramN`` by freezing, the folded ones by constant folding)."""

from __future__ import annotations

from inductor_lens.capturing.constants import TEMPLATE_PACK, constant_names

_INPUTS = {
    "arg0_1": ("parameter", "conv1.weight"),
    "arg1_1": ("parameter", "bn1.weight"),
    "arg2_1": ("buffer", "bn1.running_var"),
    "arg3_1": ("parameter", "fc.weight"),
}


def _fold(base: str, *others: str, ops=("aten.mul.Tensor",), shape=None, dtype="float32") -> dict:
    return {"base": base, "others": list(others), "ops": list(ops), "shape": shape, "dtype": dtype}


def _names(origins: dict) -> dict[str, str]:
    return {c: shown for c, (_, shown) in constant_names(origins, lambda n: _INPUTS.get(n, ("", ""))).items()}


def test_a_folded_batchnorm_and_a_packed_weight_say_what_they_come_from():
    origins = {
        "_frozen_param0": {"input": "arg0_1", "shape": [8, 3, 3, 3]},
        "_frozen_param1": {"input": "arg1_1", "shape": [8]},
        "_frozen_param2": {"input": "arg2_1", "shape": [8]},
        # bn1's scale, from its running variance and weight; then folded into conv1's weight (its first argument)
        "_frozen_param5": _fold("_frozen_param2", ops=("aten.add.Tensor", "aten.sqrt.default")),
        "_frozen_param6": _fold("_frozen_param0", "_frozen_param5", "_frozen_param1", shape=[8, 3, 3, 3]),
        "_frozen_param7": _fold("_frozen_param6", ops=("mkldnn._reorder_convolution_weight",), shape=[8, 3, 3, 3]),
        # a bias conv2 lacks (the fold's first argument is 0): bn1's alone
        "_frozen_param8": _fold("", "_frozen_param5", "_frozen_param1", ops=("aten.sub.Tensor",), shape=[8]),
    }
    names = _names(origins)
    assert names["_frozen_param0"] == "conv1.weight"
    assert names["_frozen_param6"] == "conv1.weight folded with bn1"
    assert names["_frozen_param7"] == "conv1.weight folded with bn1 (packed for oneDNN)"
    assert names["_frozen_param8"] == "folded from bn1"


def test_a_linears_weight_permuted_packed_and_converted():
    origins = {
        "_frozen_param3": {"input": "arg3_1", "shape": [32, 16]},
        "_frozen_param4": _fold("_frozen_param3", ops=("aten.permute.default",), shape=[16, 32]),
        "_frozen_param6": _fold("_frozen_param4", ops=("aten.permute.default",), shape=[32, 16]),  # back as it was
        "_frozen_param7": _fold("_frozen_param6", ops=("mkl._mkl_reorder_linear_weight",), shape=[1459233, 1]),
        "_frozen_param9": _fold("_frozen_param3", ops=("prims.convert_element_type.default",), dtype="bfloat16"),
        "_frozen_param10": _fold("_frozen_param3", ops=("aten.mul.Tensor",), shape=[32, 16]),
        "constant5": dict(_fold("_frozen_param6", ops=(TEMPLATE_PACK,), shape=[2, 16, 16]), lowered=True),
    }
    names = _names(origins)
    assert names["_frozen_param4"] == "fc.weight (permuted)"
    assert names["_frozen_param6"] == "fc.weight"
    assert names["_frozen_param7"] == "fc.weight (packed for MKL)"
    assert names["_frozen_param9"] == "fc.weight (as bfloat16)"
    assert names["_frozen_param10"] == "computed from fc.weight"
    assert names["constant5"] == "fc.weight (packed for the C++ GEMM template)"


def test_only_what_the_record_says_is_claimed():
    """A constant whose base is not traced (a tensor dynamo held, ``_tensor_constant0``; an input no name is known
    of) keeps Inductor's name; another tensor folded in that is not traced is said by its own name."""
    origins = {
        "_frozen_param0": {"input": "arg0_1", "shape": [8, 3, 3, 3]},
        "_frozen_param1": {"input": "arg9_1", "shape": [8]},  # no name known
        "_frozen_param2": _fold("_tensor_constant0", "_frozen_param0"),
        "_frozen_param3": _fold("_frozen_param0", "_tensor_constant0"),
    }
    names = _names(origins)
    assert "_frozen_param1" not in names and "_frozen_param2" not in names
    assert names["_frozen_param3"] == "conv1.weight folded with _tensor_constant0"
