"""nu17 D8: flex_attention's ``score_mod`` and ``mask_mod`` are traced into subgraphs (dynamo's ``score_mod_0`` /
``mask_fn_0``, post-grad ``sdpa_score0`` / ``sdpa_mask0``) whose ops Inductor inlines into the attention's template
kernel: the kernel and its box name their lines after the call's (a real CPU compile, ~10 s)."""

from __future__ import annotations

import inspect

import pytest
import torch

import inductor_lens

flex = pytest.importorskip("torch.nn.attention.flex_attention")


def _causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def _relbias(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx) * 0.01


def _attn(q, k, v, bm):
    o = flex.flex_attention(q, k, v, score_mod=_relbias, block_mask=bm)
    return o.sum(1) * 2


def _line(fn) -> int:
    """The line of ``fn``'s flex_attention call or ``return``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if ln.strip().startswith(("return", "o = ")))


def test_flex_attentions_template_kernel_names_the_score_mod_and_mask_mod_lines():
    """Torch's evidence: the post-grad ``sdpa_mask0``'s op carries ``_causal``'s line, while AOT retraced the score
    mod with only the call's stack (``sdpa_score0``'s ops name ``_attn`` and torch's ``flex_attention_hop``); dynamo's
    ``score_mod_0`` keeps ``_relbias``'s line. Both run in ``cpp_fused_flex_attention_0``."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 128, 16, generator=gen) for _ in range(3))
    bm = flex.create_block_mask(_causal, None, None, 128, 128, device="cpu")
    with inductor_lens.capture() as cap:
        out = torch.compile(_attn)(q, k, v, bm)
    assert out.shape == (1, 128, 16)
    (c,) = cap.report.compiles
    (kernel,) = [k for k in c.kernels if "flex_attention" in k.name]
    call, score, mask = _line(_attn), _line(_relbias), _line(_causal)
    here = __file__
    assert [(f.file, f.line) for f in kernel.user_lines] == [(here, call), (here, score), (here, mask)]
    (box,) = [n for n in c.fused_nodes if n.kernel == kernel.name]
    assert [(f.file, f.line) for f in box.user_lines] == [(here, call), (here, score), (here, mask)]
