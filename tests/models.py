"""Test models: the package's examples, plus one that breaks the graph."""

import torch

from inductor_lens.examples import MLP, sin_cos  # noqa: F401  (re-exported for the tests)


def with_graph_break(x):
    """A print splits this function into two compiled frames."""
    y = torch.sin(x) * 2
    print("graph break here")
    return y + torch.cos(x)
