"""One real compile recorded two ways at once: by TORCH_TRACE (set by the caller) and by
inductor_lens.capture() in process. Writes the in-process report to argv[1]; ``argv[2] == "gpt2"``: a training
step of a two-block GPT-2 instead.

A training step of a tiny MLP (forward + lazily compiled backward), a graph break, and a recompile
(a new batch size). Run by tests/capturing/test_trace_import.py with TORCH_TRACE and INDUCTOR_PROVENANCE=1 set."""

import sys

import torch

import inductor_lens


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return torch.sigmoid(self.fc2(h)) * 2


def head(x):
    y = torch.sin(x) + 1
    print("graph break here")
    return (y * y).sum(dim=-1)


torch.manual_seed(0)
if sys.argv[2:] == ["gpt2"]:  # a two-block GPT-2 training step: attention, layer norms, GELU, repeated blocks
    from inductor_lens.examples import GPT2, gpt2_inputs

    with inductor_lens.capture(title="GPT-2, trace vs capture") as cap:
        gpt = torch.compile(GPT2(layers=2))
        gpt(gpt2_inputs()).sum().backward()
    cap.report.save_json(sys.argv[1])
    sys.exit(0)
with inductor_lens.capture(title="trace vs capture") as cap:
    model = torch.compile(MLP())
    loss = model(torch.randn(4, 8)).pow(2).sum()
    loss.backward()
    f = torch.compile(head, dynamic=False)
    f(torch.randn(6))
    f(torch.randn(3, 6))
cap.report.save_json(sys.argv[1])
