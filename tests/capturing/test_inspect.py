"""inspect() as users call it (issue 10 section 8): model keyword arguments, ModelOutput-like outputs,
backward that fails, and torch.compile(model).generate()."""

import dataclasses
import json

import pytest
import torch

import inductor_lens


@dataclasses.dataclass
class _Out:
    logits: torch.Tensor
    loss: torch.Tensor = None


class _LM(torch.nn.Module):
    """Returns a dataclass with ``loss`` when given ``labels``, like a transformers model."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x, labels=None):
        logits = self.lin(x)
        loss = None if labels is None else (logits - labels).pow(2).mean()
        return _Out(logits=logits, loss=loss)

    def generate(self, x, steps=2):
        for _ in range(steps):
            x = self(x).logits
        return x


def test_model_keywords_reach_the_model_and_backward_uses_the_loss():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    report = inductor_lens.inspect(_LM(), x, labels=x, backward=True)
    assert {c.graph_kind for c in report.compiles} == {"forward", "backward"}
    assert not [d for d in report.diagnostics if d.code == "backward_failed"]
    # logits - labels is in the forward graph: labels reached forward()
    targets = {n.target for c in report.compiles if c.graph_kind == "forward" for n in c.graphs["post_grad"].nodes}
    assert "aten.sub.Tensor" in targets, targets


def test_a_training_forward_without_its_backward_saves_an_unknown_amount_not_zero():
    """A forward-only inspect() of a model whose parameters require grad compiles a training forward; its backward
    never compiles, so what it saves is not known. The Memory view and a diff said "saved for backward 0 B" (a
    diff of relu against gelu: "0 B -> 0 B (±0 B)") beside a panel that said it saves 2 buffers."""
    torch.manual_seed(0)
    report = inductor_lens.inspect(_LM(), torch.randn(4, 8))
    (fwd,) = report.compiles
    assert fwd.graph_kind == "forward" and fwd.saved_outputs
    m = fwd.memory
    assert m.saved_for_backward == [] and m.saved_bytes is None and m.saved_activation_bytes is None
    # the panel says so too, not that the Memory view lists them (its note was written before memory was known)
    assert "its backward did not compile while the lens captured, so the Memory view cannot list" in fwd.graph_note
    assert "the Memory view lists the tensors saved" not in fwd.graph_note
    # a report written before (derived 19, with the old note) gets the same note on loading
    data = json.loads(report.to_json())
    data["derived"] = 19
    data["compiles"][0]["graph_note"] = "the Memory view lists the tensors saved"
    assert inductor_lens.load(data).compiles[0].graph_note == fwd.graph_note
    d = inductor_lens.diff(report, report).compiles[0].memory
    assert d["saved_bytes"] == {"a": None, "b": None, "delta": None}


def test_the_old_spelling_of_compile_options_is_a_clear_type_error():
    with pytest.raises(TypeError, match=r"compile_options=\{'mode': 'max-autotune'\}"):
        inductor_lens.inspect(torch.sin, torch.randn(4), mode="max-autotune")


def test_a_failing_backward_keeps_the_forward_report():
    report = inductor_lens.inspect(lambda x: torch.cos(x) + 1, torch.randn(8), backward=True)
    assert [c.graph_kind for c in report.compiles] == ["inference"]
    (d,) = [d for d in report.diagnostics if d.code == "backward_failed"]
    assert "requires grad" in d.message


def test_generate_on_a_compiled_module_says_why_nothing_compiled():
    model = _LM()
    with inductor_lens.capture() as cap:
        torch.compile(model).generate(torch.randn(2, 8))
    assert not cap.report.compiles
    (d,) = [d for d in cap.report.diagnostics if d.code != "dynamo_reset"]  # that one where a test compiled before
    assert d.code == "never_ran"
    assert "generate() belongs to the original model" in d.message and "torch.compile(model.forward)" in d.message


@pytest.mark.slow
def test_hf_gpt2_with_labels_and_backward():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, n_positions=32, vocab_size=64)
    ids = torch.arange(8).unsqueeze(0)
    report = inductor_lens.inspect(transformers.GPT2LMHeadModel(config), ids, labels=ids, backward=True)
    assert "backward" in {c.graph_kind for c in report.compiles}
    assert not [d for d in report.diagnostics if d.code == "backward_failed"]


def test_something_already_compiled_is_inspected_with_its_own_options():
    """inspect(torch.compile(m, dynamic=True), x) wrapped the compiled module again, with inspect's options: the
    report showed a static graph the user's module never runs, its compile call named OptimizedModule, and the
    user's next call compiled once more."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU()).requires_grad_(False)  # one graph, no backward
    cm = torch.compile(m, dynamic=True)
    x = torch.randn(3, 8)
    report = inductor_lens.inspect(cm, x)
    c = report.compiles[0]
    (x_in,) = [n for n in c.graphs["post_grad"].nodes if n.op == "placeholder" and n.role == "input" and n.shape]
    assert isinstance(x_in.shape[0], str), x_in  # the batch is symbolic: dynamic=True kept (it was 3)
    assert "OptimizedModule" not in report.when and not report.compile_calls, report.when
    # the user's own next call runs what compiled there: no compile more
    before = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    assert torch.allclose(cm(x), m(x)) and torch._dynamo.utils.counters["stats"]["unique_graphs"] == before
    with pytest.raises(TypeError, match="already torch.compile'd"):
        inductor_lens.inspect(cm, x, compile_options={"mode": "max-autotune"})
    assert report.title == "Sequential"  # the model's name, not OptimizedModule's


def test_a_module_compiled_in_place_or_by_another_backend_is_inspected_as_it_is():
    """Module.compile(dynamic=True) leaves the user's class (only _compiled_call_impl says it is compiled): it was
    wrapped again, static. A wrapper of another backend, called as it is, compiles nothing for Inductor: the
    report says why, not that dynamo found nothing to compile."""
    torch.manual_seed(0)
    m = _LM().requires_grad_(False)  # an inference graph: the backward would compile at once (dynamic)
    m.compile(dynamic=True)
    report = inductor_lens.inspect(m, torch.randn(3, 8))
    inputs = [n for n in report.compiles[0].graphs["post_grad"].nodes if n.op == "placeholder" and n.role == "input"]
    shapes = [n.shape for n in inputs if n.shape]  # x's batch symbolic: dynamic=True kept (it was [3, 8])
    assert shapes and all(isinstance(sh[0], str) for sh in shapes), [(n.display_name, n.shape) for n in inputs]
    other = inductor_lens.inspect(torch.compile(_LM().requires_grad_(False), backend="aot_eager"), torch.randn(3, 8))
    assert other.compiles == []
    (said,) = [d.message for d in other.diagnostics if d.code == "nothing_compiled"]
    assert "already torch.compile'd" in said and "another backend" in said, said
