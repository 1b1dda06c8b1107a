"""A live capture and a TORCH_TRACE import of the same script compare as the same thing (nu30 D3): compiles whose
frames are named differently pair by their kernels, an import's inferred modules do not make its ops "not shared",
and compiles left unpaired are said, their shared ops not counted against the share."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import inductor_lens
from inductor_lens.analysis.diff import BY_KERNELS

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _mlp():
    return inductor_lens.load(FIXTURES / "cpu_profiled_mlp_default.json")


def _renamed(r, frame: str, **kw):
    """``r`` with its one compile's frame named ``frame``."""
    return dataclasses.replace(r, compiles=[dataclasses.replace(r.compiles[0], frame=frame, **kw)])


def _codes(d) -> set:
    return {n.code for n in d.notes}


def _without_modules(c):
    post = c.graphs["post_grad"]
    nodes = [dataclasses.replace(n, module_stack=[]) for n in post.nodes]
    return {**c.graphs, "post_grad": dataclasses.replace(post, nodes=nodes)}


def test_compiles_whose_frames_are_named_differently_pair_by_their_equal_kernels():
    """nu30 D3: the capture named the optimizer's frame ``AdamW.step``, the import ``Adam.step``: the compiles paired
    with nothing, and the same kernel was "removed" and "added". Compiles left unpaired by name, of one graph kind,
    whose kernels' sources are equal, pair."""
    a = _mlp()
    b = _renamed(a, "Other.forward")
    d = inductor_lens.diff(a, b)
    assert [(c.a, c.b, c.paired_by) for c in d.compiles] == [("0/0 inference", "0/0 inference", BY_KERNELS)]
    assert d.summary["same"] == len(d.kernels) and not _codes(d) & {"unpaired_compiles", "different_models"}
    # another kernel: no pair by kernels (nor by name): both said, the note names them
    k0 = b.compiles[0].kernels[1]
    other = dataclasses.replace(k0, source=k0.source.replace("relu", "gelu"))
    c = _renamed(a, "Other.forward", kernels=[other, *b.compiles[0].kernels[2:]])
    d = inductor_lens.diff(a, c)
    assert [(x.a, x.b) for x in d.compiles] == [("0/0 inference", None), (None, "0/0 inference")]
    assert (d.shared["unpaired_a"], d.shared["unpaired_b"]) == (["0/0 inference"], ["0/0 inference"])
    (note,) = [n for n in d.notes if n.code == "unpaired_compiles"]
    assert "A's 0/0 inference (Sequential.forward); B's 0/0 inference (Other.forward)" in note.message
    assert "--pair '0/0 inference=0/0 inference'" in note.message and note.message in d.text()


def test_the_ops_of_compiles_left_unpaired_on_both_sides_count_as_shared_where_they_are_the_same():
    """nu30 D3: ``shared()`` counted the ops of the unpaired optimizer compiles as A's only and B's only: 73 of 825
    shared, "They may be different models", beside "55 same, 0 changed". The ops that the compiles left unpaired
    share with each other are shared."""
    a = _mlp()
    k = a.compiles[0].kernels[1]
    b = _renamed(a, "Other.forward", kernels=[dataclasses.replace(k, source=k.source + "\n// other"), *a.kernels[2:]])
    d = inductor_lens.diff(a, b)
    assert [(x.a, x.b) for x in d.compiles] == [("0/0 inference", None), (None, "0/0 inference")]
    assert d.shared["ops_shared"] == d.shared["ops_b"] > 0 and d.shared["share"] == 1.0, d.shared
    assert "different_models" not in _codes(d)


def test_an_imports_ops_are_shared_with_the_captures_where_only_its_inferred_modules_differ():
    """nu30 D3: an import infers modules from what its graphs read (an optimizer's ops have none; a layer norm in a
    function that calls the model is the ``model``'s), the capture records them: the same ops from the same lines
    counted as not shared (the optimizer's 81 of 702). Where a side is an import, an op and its line match."""
    a = _mlp()
    c = a.compiles[0]
    imported = dataclasses.replace(a, origin="trace", compiles=[dataclasses.replace(c, graphs=_without_modules(c))])
    d = inductor_lens.diff(a, imported)
    ops = d.compiles[0].ops
    assert ops["shared"] == ops["a"] == ops["b"] > 0, ops
    # two captures whose modules differ do not share those ops: the module names them there
    captured = dataclasses.replace(imported, origin="capture")
    ops = inductor_lens.diff(a, captured).compiles[0].ops
    assert ops["shared"] < ops["a"], ops


def test_one_call_decomposed_on_one_side_and_an_extern_on_the_other_is_one_changed_row_that_says_so():
    """nu30 D5: the SDPA of ``breaks.py:13`` is a decomposed C++ kernel on torch 2.13 and an extern call of
    ``_scaled_dot_product_flash_attention_for_cpu`` on 2.15; the compare listed a removal and an addition, unrelated.
    Launches left on each side, one extern and one generated, that compute the same user line (each the only one
    left from it) are one changed row saying how each side computes it."""
    a = inductor_lens.load(FIXTURES / "cpu_breaks_213.json.gz")
    b = inductor_lens.load(FIXTURES / "cpu_breaks_215.json.gz")
    d = inductor_lens.diff(a, b)
    assert d.summary["only_a"] == d.summary["only_b"] == 0, d.text()
    rows = [k for k in d.kernels if k.status == "changed"]
    assert [c.a for c in d.compiles if any(k in rows for k in c.kernels)] == ["2/0 inference", "2/1 inference"]
    for k in rows:
        assert k.a.startswith("cpp_fused__safe_softmax_bmm") and "_scaled_dot_product_flash_attention_for_cpu" in k.b
        assert k.changes[0] == "lowering" and not k.moved_ops_in and not k.moved_ops_out
        words = "decomposed into a C++ kernel → an extern call of _scaled_dot_product_flash_attention_for_cpu"
        assert k.lowering == words and k.what_changed.startswith(words)
    assert "lowering" in json.dumps(d.to_dict()["compiles"][1]["kernels"])


def test_a_call_is_not_paired_as_lowered_otherwise_where_b_has_two_launches_left_from_its_line():
    """The rule pairs one launch left in A with one left in B computing the same user lines, each the only one left
    on its side: B's side was not checked, so a generated launch B also had left from the line did not stop a guess
    ("decomposed into a C++ kernel → an extern call of ..." for a pairing that may be wrong)."""
    from types import SimpleNamespace as N

    from inductor_lens.analysis.diff import _same_call

    line = [("f.py", 10)]
    fa = [N(loc=line, extern=False)]
    fb = [N(loc=line, extern=True), N(loc=line, extern=False)]
    pairs: dict = {}
    assert _same_call(fa, fb, pairs, set(), {}, {}) == set() and pairs == {}
