"""Test models: the package's examples, plus one that breaks the graph."""

import torch

from inductor_lens.examples import MLP, sin_cos

__all__ = ["MLP", "Stack", "TwoInputs", "sin_cos", "unrolled_gru", "with_graph_break"]


def with_graph_break(x):
    """A print splits this function into two compiled frames."""
    y = torch.sin(x) * 2
    print("graph break here")
    return y + torch.cos(x)


def unrolled_gru(cell, xs, h):
    """``cell`` (an ``nn.GRUCell``) run over the time steps of ``xs``, one call each, the hidden states stacked."""
    outs = []
    for t in range(xs.shape[0]):
        h = cell(xs[t], h)
        outs.append(h)
    return torch.stack(outs)


class StackBlock(torch.nn.Module):
    """A residual MLP block: ``x + down(relu(up(x)))``."""

    def __init__(self, d: int):
        super().__init__()
        self.up = torch.nn.Linear(d, 2 * d)
        self.down = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Stack(torch.nn.Module):
    """``layers`` identical blocks in an ``nn.ModuleList`` between an input and an output layer: a model's
    repeated layers (the fusion graph folds them, ``Compile.module_view.repeats``), small enough to compile in
    seconds."""

    def __init__(self, d_in: int = 8, d: int = 16, layers: int = 4, d_out: int = 4):
        super().__init__()
        self.inp = torch.nn.Linear(d_in, d)
        self.layers = torch.nn.ModuleList(StackBlock(d) for _ in range(layers))
        self.out = torch.nn.Linear(d, d_out)

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        return self.out(x)


class TwoInputs(torch.nn.Module):
    """Two inputs, two layers and a buffer: what an exported program names (AOTInductor's tests)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(16, 8), torch.nn.Linear(8, 4)
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x, y):
        return self.fc2(torch.relu(self.fc1(x))) * self.scale + y
