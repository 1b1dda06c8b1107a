"""Models built only from torch's modules, each built and compiled here as a user's script does it: this file
is on the compile's stack (the trigger's user frames), so the report keeps its text, and the lines that built
the modules are the Source view's map (``report/built.py``). No op of these models has a line of its own: their
forwards are torch's (``nn.Sequential``). Imported only inside the capture fixtures (it imports torch)."""

from collections import OrderedDict

import torch
from torch import nn

import inductor_lens


def sequential_mlp():
    """A forward of ``nn.Sequential(Linear, GELU, Linear)``, one child a line."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(16, 32),
        nn.GELU(),
        nn.Linear(32, 4),
    )
    return inductor_lens.inspect(model, torch.randn(8, 16), title="sequential mlp")


class Block(nn.Sequential):
    """A block of torch's layers, named in its ``__init__``: its forward is ``nn.Sequential``'s."""

    def __init__(self, d: int):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)
        self.act = nn.GELU()


def make_stem(d_in: int, d: int) -> nn.Sequential:
    layers = [nn.Linear(d_in, d)]
    layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def nested_training_step():
    """A training step of a Sequential of named parts: a stem a function builds, three ``Block``s of a
    ``ModuleList`` comprehension spread into a Sequential, a head."""
    torch.manual_seed(0)
    layers = nn.ModuleList([Block(16) for _ in range(3)])
    model = nn.Sequential(
        OrderedDict(
            stem=make_stem(8, 16),
            blocks=nn.Sequential(*layers),
            head=nn.Linear(16, 4),
        )
    )
    return inductor_lens.inspect(model, torch.randn(4, 8), backward=True, title="nested sequential training step")
