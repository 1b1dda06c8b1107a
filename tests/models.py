"""Small models for tests, benchmarks and the demo. No downloads: everything is defined here."""

import torch
from torch import nn


def sin_cos(x):
    """The example from the user's question: five pointwise ops that Inductor fuses into one kernel."""
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


class MLP(nn.Module):
    """Linear layers (extern matmul kernels) around pointwise and reduction ops (fused C++ kernels)."""

    def __init__(self, d_in=16, d_hidden=32, d_out=8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.norm(self.fc2(h)).softmax(-1)


def with_graph_break(x):
    """A print splits this function into two compiled frames."""
    y = torch.sin(x) * 2
    print("graph break here")
    return y + torch.cos(x)
