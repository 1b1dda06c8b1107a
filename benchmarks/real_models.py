"""Real models written here (nothing downloaded) for the front end's scale benchmark and screenshots.

- :class:`Decoder`: a decoder-only transformer as described in issue 12: RMSNorm, rotary position
  embeddings, a SwiGLU MLP and grouped-query attention; 32 layers of width 64 so CPU compiles stay short.
- :class:`ResNetLike`: a small ResNet (stem, 4 stages of 2 basic blocks, batch norm, pooling, head), the
  shape of timm's resnet10t/resnet18 graphs, for when timm is not installed.

``capture(name, mode, out)`` captures one report (``mode``: ``forward`` or ``training``) and saves its JSON;
run as ``python benchmarks/real_models.py NAME MODE OUT.json`` in a fresh process.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class GQAttention(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.kv = nn.Linear(d, 2 * kv_heads * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        q = self.q(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.hd).unbind(2)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class DecoderLayer(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int):
        super().__init__()
        self.attn_norm = RMSNorm(d)
        self.attn = GQAttention(d, heads, kv_heads)
        self.mlp_norm = RMSNorm(d)
        self.mlp = SwiGLU(d, 4 * d)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(nn.Module):
    """Decoder-only transformer: ``layers`` blocks of width ``d`` (issue 12's benchmark model)."""

    def __init__(self, layers: int = 32, d: int = 64, heads: int = 4, kv_heads: int = 2, vocab: int = 256):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DecoderLayer(d, heads, kv_heads) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        freqs = torch.outer(torch.arange(t, device=idx.device).float(), self.inv_freq)
        cos, sin = freqs.cos()[None, None], freqs.sin()[None, None]
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.head(self.norm(x))


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNetLike(nn.Module):
    """A ResNet-18-shaped CNN (narrow channels so that CPU compiles stay short)."""

    def __init__(self, width: int = 16, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        chans = [width, width * 2, width * 4, width * 8]
        layers, cin = [], width
        for i, c in enumerate(chans):
            layers.append(nn.Sequential(BasicBlock(cin, c, 1 if i == 0 else 2), BasicBlock(c, c, 1)))
            cin = c
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(x.mean((2, 3)))


def capture(name: str, mode: str, out: str) -> None:
    import inductor_lens

    torch.manual_seed(0)
    torch._inductor.config.force_disable_caches = True
    if name == "decoder":
        model, x = Decoder(), torch.randint(0, 256, (2, 32), generator=torch.Generator().manual_seed(0))
        title = "Decoder(32 layers, width 64)"
    elif name == "resnet":
        model, x = ResNetLike(), torch.randn(2, 3, 32, 32)
        title = "ResNet-like CNN"
    else:
        raise SystemExit(f"unknown model {name!r} (must be one of ['decoder', 'resnet'])")
    if mode == "forward":
        with torch.no_grad():
            report = inductor_lens.inspect(model, x, title=f"{title} forward")
    elif mode == "training":
        report = inductor_lens.inspect(model, x, backward=True, title=f"{title} training step")
    else:
        raise SystemExit(f"unknown mode {mode!r} (must be one of ['forward', 'training'])")
    report.save_json(out)


if __name__ == "__main__":
    capture(*sys.argv[1:4])
