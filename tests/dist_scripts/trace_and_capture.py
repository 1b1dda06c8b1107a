"""One real compile recorded two ways at once: by TORCH_TRACE (set by the caller) and by
inductor_lens.capture() in process. Writes the in-process report to argv[1]; ``argv[2] == "gpt2"``: a training
step of a two-block GPT-2 instead. ``argv[2:] == ["--then-gpt2", OUT, TRACE]``: after the first, the GPT-2 step
too, in the same process (one torch import for both), its TORCH_TRACE log written to the folder TRACE as a fresh
process would write it (a new log file, string table and dynamo state), its capture to OUT; ``--then-gpt2 OUT TRACE
--then-sdpa OUT2 TRACE2``: then an attention call (``sdpa_step``) the same way, into OUT2 and TRACE2.

A training step of a tiny MLP (forward + lazily compiled backward; its batch norm and a global written in place, a
convolution whose backward is a fallback op), a sort, a custom op that writes its input, two graph breaks (the
second leaves a frame with no tensor op), and a recompile (a new batch size). Run by
tests/capturing/test_trace_import.py with TORCH_TRACE and INDUCTOR_PROVENANCE=1 set."""

import sys

import torch

import inductor_lens

STEPS = torch.zeros(1)  # a global the forward writes in place


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.bn = torch.nn.BatchNorm1d(16)  # training: writes its running stats in place
        self.conv = torch.nn.Conv1d(1, 1, 3, padding=1)  # its backward: a fallback op, not an extern_kernels call
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        STEPS.add_(1)
        h = torch.relu(self.bn(self.fc1(x)))
        h = self.conv(h.unsqueeze(1)).squeeze(1)
        return torch.sigmoid(self.fc2(h)) * 2


@torch.library.custom_op("lens_test::bump", mutates_args=("x",))
def bump(x: torch.Tensor) -> None:
    """A custom op that writes its input: Inductor calls it as it is (``torch.ops.lens_test.bump.default(buf0)``)."""
    x.add_(1)


@bump.register_fake
def _(x):
    return None


def head(x):
    y = torch.sin(x).sort(dim=-1).values + 1  # a fallback op whose provenance also names its input's producer
    print("graph break here")
    w = y * y
    bump(w)
    z = w.sum(dim=-1)
    print("and here")  # what follows has no tensor op: a frame that gives Inductor no graph
    return z


def gpt2_step(out):
    """A two-block GPT-2 training step: attention, layer norms, GELU, repeated blocks, and the LM head's weight tied
    to the token embedding's, as GPT-2's are (the log names the shared parameter ``wte.weight`` only)."""
    from inductor_lens.examples import GPT2, gpt2_inputs

    torch.manual_seed(0)
    with inductor_lens.capture(title="GPT-2, trace vs capture") as cap:
        model = GPT2(layers=2)
        model.lm_head.weight = model.wte.weight
        gpt = torch.compile(model)
        gpt(gpt2_inputs()).sum().backward()
    cap.report.save_json(out)


class Attention(torch.nn.Module):
    """q, k and v split from one projection and viewed as heads on lines of their own before an SDPA call, as
    transformers' GPT-2 attention does: on CPU a fallback call whose provenance names the views' lines too."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(32, 96)

    def forward(self, x):
        q, k, v = self.qkv(x).split(32, dim=-1)
        q = q.view(2, 8, 4, 8).transpose(1, 2)
        k = k.view(2, 8, 4, 8).transpose(1, 2)
        v = v.view(2, 8, 4, 8).transpose(1, 2)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def sdpa_step(out):
    torch.manual_seed(0)
    with inductor_lens.capture(title="SDPA, trace vs capture") as cap:
        torch.compile(Attention())(torch.randn(2, 8, 32))
    cap.report.save_json(out)


def trace_into(folder):
    """From here on, TORCH_TRACE writes a new log in ``folder``, as a process started with TORCH_TRACE=folder
    would: the open log is closed, the interned strings and dumped files are forgotten (the new log states
    them again), and dynamo starts over (compile ids from 0/0)."""
    from torch._logging import _internal, structured

    handler = _internal.LOG_TRACE_HANDLER
    handler.acquire()
    try:
        if hasattr(handler, "_close_stream"):  # torch 2.13+
            handler._close_stream()
        elif handler.stream is not None:  # torch 2.11: the handler's own file, closed and let go
            handler.stream.close()
            handler.stream = None
        handler.root_dir = folder
    finally:
        handler.release()
    structured.INTERN_TABLE.clear()
    structured.DUMPED_FILES.clear()
    torch._dynamo.reset()


if sys.argv[2:] == ["gpt2"]:
    gpt2_step(sys.argv[1])
    sys.exit(0)
torch.manual_seed(0)
with inductor_lens.capture(title="trace vs capture") as cap:
    model = torch.compile(MLP())
    loss = model(torch.randn(4, 8)).pow(2).sum()
    loss.backward()
    f = torch.compile(head, dynamic=False)
    f(torch.randn(6))
    f(torch.randn(3, 6))
cap.report.save_json(sys.argv[1])
if sys.argv[2:3] == ["--then-gpt2"]:
    trace_into(sys.argv[4])
    gpt2_step(sys.argv[3])
if sys.argv[5:6] == ["--then-sdpa"]:
    trace_into(sys.argv[7])
    sdpa_step(sys.argv[6])
