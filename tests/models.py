"""Test models: the package's examples, plus one that breaks the graph."""

import torch

from inductor_lens.examples import MLP, sin_cos

__all__ = ["MLP", "sin_cos", "with_graph_break"]


def with_graph_break(x):
    """A print splits this function into two compiled frames."""
    y = torch.sin(x) * 2
    print("graph break here")
    return y + torch.cos(x)
