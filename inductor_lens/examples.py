"""Small example models, defined here so that nothing is downloaded: the user's ``sin**2 + cos**2``,
an MLP with Linear layers (extern matmuls), and a GPT-2-style transformer stack for benchmarks and
GPU fixtures. Importing this module imports torch."""

from __future__ import annotations

import math

import torch
from torch import nn


def sin_cos(x):
    """The example from the question that started this project: five pointwise ops, one fused kernel."""
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


class MLP(nn.Module):
    """Linear layers (extern matmul kernels) around pointwise and reduction ops (fused kernels)."""

    def __init__(self, d_in: int = 16, d_hidden: int = 32, d_out: int = 8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.norm(self.fc2(h)).softmax(-1)


class Attention(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    """A GPT-2 block: pre-norm attention and a GELU MLP, with residuals."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """A GPT-2-style stack of ``layers`` blocks (token + position embeddings, final norm, LM head)."""

    def __init__(self, layers: int = 2, d: int = 64, heads: int = 4, vocab: int = 256, ctx: int = 64):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.h = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def gpt2_inputs(batch: int = 2, seq: int = 32, vocab: int = 256, device: str = "cpu") -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, vocab, (batch, seq), generator=g).to(device)


def demo(on_event=None, profile=False):
    """The built-in example of ``inductor-lens demo``: the user's ``sin**2 + cos**2`` (one fused kernel) and a
    small MLP (extern matmuls beside fused kernels), captured in one report. The code lives here, in an
    example module, so that its lines show as the user's code in the report. It runs through the run pipeline
    (``capturing/pipeline.py``), as ``inspect`` does; with ``profile``, each kernel's time is measured
    afterwards."""
    from .capturing.pipeline import Run

    class SmallMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.fc2 = nn.Linear(32, 8)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x))).softmax(-1)

    torch.manual_seed(0)
    title = "inductor-lens demo: sin(x)**2 + cos(x)**2, and a small MLP"
    run = Run(title=title, on_event=on_event, profile="calls" if profile else None, who="the demo")
    with run:
        compiled_f = torch.compile(sin_cos)  # only wraps sin_cos: nothing is compiled here
        x = torch.randn(1024)
        compiled_f(x)  # dynamo traces and Inductor compiles: one fused kernel
        mlp = torch.compile(SmallMLP())
        batch = torch.randn(4, 16)
        with torch.no_grad():
            mlp(batch)  # matmuls stay extern kernels; bias+relu, softmax fuse
    if profile:
        run.time_later(compiled_f, (x,))
        run.time_later(mlp, (batch,), no_grad=True)
    return run.finish()
