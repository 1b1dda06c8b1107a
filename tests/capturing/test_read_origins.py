"""Inductor's origins over-approximate (nu29's D4): an op inlined into a view that a later op reads keeps its origins
after it was stored in a buffer of its own, so the gather after a stored LayerNorm listed the LayerNorm as its own ops,
its lines and its merge text. The ops a node loads from another node's buffer are kept apart (``FusedNode.read_ops``),
those it computes stay (a LayerNorm fused into one kernel, ``sin(x)**2 + cos(x)**2``)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import inductor_lens

NORM_LINE = 20  # the line of the layer_norm below


def norm_gather(x, w, i1, i2):
    """A LayerNorm whose output three ops read (Inductor stores it), two of them gathers that load it."""
    h = x + 1
    y = F.layer_norm(h, (32,))
    y = y.reshape(-1, 32)
    a = y.index_select(0, i1)
    b = y.index_select(0, i2)
    return a @ w, b @ w, y @ w


@pytest.fixture(scope="module")
def norm_gather_compile():
    with inductor_lens.capture(strict=True, title="stored norm, gathers") as cap:
        args = (torch.randn(2, 8, 32), torch.randn(32, 4), torch.tensor([1, 3, 5]), torch.tensor([0, 2]))
        torch.compile(norm_gather)(*args)
    (c,) = cap.report.compiles
    return c


def _lines(frames) -> set[int]:
    return {f.line for f in frames if f.file.endswith("test_read_origins.py")}


def _fx(c) -> dict:
    return {n.name: n for n in c.graphs["post_grad"].nodes}


def _gathers(c):
    fx = _fx(c)
    return [n for n in c.fused_nodes if any(fx[f].short_op == "index" for f in n.fx_nodes)]


def test_a_gather_of_a_stored_layer_norm_computes_the_gather_only(norm_gather_compile):
    c = norm_gather_compile
    fx = _fx(c)
    gathers = _gathers(c)
    assert len(gathers) == 2
    for n in gathers:
        assert [fx[f].short_op for f in n.fx_nodes] == ["reshape", "index"], n.fx_nodes
        assert {fx[f].short_op for f in n.read_ops} >= {"var_mean", "sub", "mul", "rsqrt"}
        assert "var_mean" not in n.ops and "var_mean" not in n.label
        assert NORM_LINE not in _lines(n.user_lines)
        assert "it does not compute: it loads their result from a buffer another node writes" in n.merge_text
        assert "Inductor's lowering inlined them (GraphLowering.run), before the scheduler: reshape, index." in (
            n.merge_text
        )
    # the C++ kernel of the second gather runs it alone (the first one's also runs the LayerNorm's node before it)
    alone = [k for k in c.kernels if k.fused_nodes and set(k.fused_nodes) <= {n.name for n in gathers}]
    assert alone
    for k in alone:
        assert [fx[f].short_op for f in k.fx_nodes] == ["reshape", "index"], k.fx_nodes
        assert NORM_LINE not in {line for s in k.user_stack for line in _lines(s)}


def test_the_layer_norm_keeps_its_ops(norm_gather_compile):
    """The node that computes the LayerNorm (its reductions and its pointwise part fused) still lists all of it."""
    c = norm_gather_compile
    fx = _fx(c)
    (norm,) = [n for n in c.fused_nodes if any(fx[f].short_op == "var_mean" for f in n.fx_nodes)]
    assert {fx[f].short_op for f in norm.fx_nodes} >= {"add", "var_mean", "sub", "rsqrt", "mul"}
    assert norm.read_ops == []
    assert NORM_LINE in _lines(norm.user_lines)
