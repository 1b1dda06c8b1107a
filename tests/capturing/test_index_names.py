"""Issue 22: the q, k and v that attention takes out of one projection were saved for the backward under one name:
``qkv[0], qkv[1], qkv[2]`` (timm's style) are three ``select``s of one ``addmm``, and each was ``b.qkv addmm (saved)``
in the backward's inputs, its graph's input stubs and the Memory view. Each now says which part it is, as Python
indexes it (``GraphNode.output`` of a ``select``/``slice``: ``[1]``, ``[:, :, 16:32]``): ``b.qkv addmm[1] (saved)``.
A real CPU capture of one training step of three attention blocks: indexing, slicing and ``unbind``."""

from __future__ import annotations

import pytest

import inductor_lens


@pytest.fixture(scope="module")
def qkv_report():
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Index(nn.Module):
        def __init__(self, d=16, nh=2):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.nh = nh

        def heads(self, x):
            B, T, C = x.shape
            return self.qkv(x).reshape(B, T, 3, self.nh, C // self.nh).permute(2, 0, 3, 1, 4)

        def forward(self, x):
            qkv = self.heads(x)
            q, k, v = qkv[0], qkv[1], qkv[2]
            return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(x.shape)

    class Slice(Index):
        def forward(self, x):
            B, T, C = x.shape
            qkv = self.qkv(x)
            q, k, v = qkv[:, :, :C], qkv[:, :, C : 2 * C], qkv[:, :, 2 * C :]
            q, k, v = (t.reshape(B, T, self.nh, C // self.nh).transpose(1, 2) for t in (q, k, v))
            return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(x.shape)

    class Unbind(Index):
        def forward(self, x):
            q, k, v = self.heads(x).unbind(0)
            return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(x.shape)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = Index(), Slice(), Unbind()

        def forward(self, x):
            return self.c(self.b(self.a(x))).sum()

    torch.manual_seed(0)
    return inductor_lens.inspect(Net(), torch.randn(2, 8, 16), backward=True, title="q, k, v")


def test_q_k_and_v_of_one_projection_are_saved_under_names_of_their_own(qkv_report):
    fwd, bwd = qkv_report.compiles
    saved = {n.name: n.display_name for n in bwd.graphs["post_grad"].nodes if n.role == "saved"}
    names = list(saved.values())
    # by hand: qkv[i] of a.qkv's addmm; qkv[:, :, a:b] of b.qkv's; unbind's results of c's
    assert [n for n in names if n.startswith("a.qkv addmm")] == [f"a.qkv addmm[{i}] (saved)" for i in range(3)]
    assert sorted(n for n in names if n.startswith("b.qkv addmm")) == sorted(
        f"b.qkv addmm[:, :, {r}] (saved)" for r in (":16", "16:32", "32:")
    )
    assert [n for n in names if "unbind" in n] == [f"c unbind: output {i} (saved)" for i in range(3)]
    assert len(set(names)) == len(names), "no two saved tensors share a name"
    selects = [n for n in fwd.graphs["post_grad"].nodes if n.short_op == "select"]
    assert [n.output for n in selects] == ["[0]", "[1]", "[2]"]
    # the Memory view: q, k and v are three rows, never one row of three
    m = fwd.memory
    acts = [s for s in m.saved_for_backward if s.kind == "activation"]
    assert len(acts) >= 9
    folded = [g for g in m.saved_groups if g.kind == "activation" and g.count > 1]
    assert folded == [], [(g.what, g.names) for g in folded]
    # q, k and v of a.qkv view one storage, held whole: counted once, at the storage's bytes as the forward's output
    # code allocates it
    from inductor_lens.analysis.memory import allocation_bytes
    from inductor_lens.report.rules import counted_bytes

    views = [x for x in acts if x.view_op and x.module == "a.qkv"]
    (storage,) = {x.storage for x in views}
    counted = dict(zip((x.name for x in m.saved_for_backward), counted_bytes(m.saved_for_backward)))
    assert len(views) == 3 and sum(counted[x.name] for x in views) == allocation_bytes(fwd.output_code)[storage]
    # (torch 2.13 interleaves them, each spanning nearly all of it: their sum said 2.9x; 2.15 lays them out apart)
    assert sum(x.bytes for x in views) >= allocation_bytes(fwd.output_code)[storage]
