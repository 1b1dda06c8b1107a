"""Module paths inferred (report/module_paths.py) against the paths the capture recorded: the Llama-3-8B-shaped
step recorded on an H200 with every backward op's module (2026-12-02), its backward stripped of them and
inferred again. Inference gives no deeper path than its evidence: an inferred path must be a prefix of the
recorded one."""

from __future__ import annotations

import dataclasses

import pytest

from inductor_lens.report.module_paths import infer_compile
from tests._recorded import recorded


def _leaf(stack) -> str:
    return stack[-1] if stack else ""


@pytest.mark.gpu_fixture
def test_inferred_backward_paths_agree_with_the_recorded_ones():
    report = recorded("gpu_llama8b_training.json.gz")
    fwd, bwd = report.compiles
    assert not bwd.modules_inferred  # recorded: the ground truth
    post = bwd.graphs["post_grad"]
    stripped = dataclasses.replace(
        bwd,
        graphs=dict(bwd.graphs, post_grad=dataclasses.replace(post, nodes=[dataclasses.replace(n, module_stack=[]) for n in post.nodes])),
        fused_nodes=[dataclasses.replace(n, module_stack=[]) for n in bwd.fused_nodes],
    )  # fmt: skip
    inferred = infer_compile(stripped, fwd)
    assert inferred.modules_inferred
    truth = {n.name: _leaf(n.module_stack) for n in bwd.fused_nodes if not n.is_glue}
    guess = {n.name: _leaf(n.module_stack) for n in inferred.fused_nodes if not n.is_glue}
    assert len(truth) == 839
    prefix = [k for k in truth if truth[k].startswith(guess[k])]
    exact = [k for k in truth if truth[k] == guess[k]]
    # measured: 775 of 839 a prefix of the truth (92%), 677 exact (613 while a fused node was its ops' majority,
    # not its results': module_paths.node_stack); the 64 others are rotary cos/sin recomputed in each layer's
    # attention, recorded under model.rotary_emb (the forward module that made them)
    assert len(prefix) >= 0.9 * len(truth) and len(exact) >= 0.8 * len(truth)
    wrong = {(truth[k], guess[k].rsplit(".", 1)[-1]) for k in truth if k not in prefix}
    assert {t for t, _ in wrong} <= {"model.rotary_emb", "model", ""} and {g for _, g in wrong} <= {"self_attn", ""}
    # every layer of the model appears in the inferred backward, as in the recorded one
    layers = {g.split(".")[2] for g in guess.values() if g.startswith("model.layers.")}
    assert layers == {str(i) for i in range(32)}
