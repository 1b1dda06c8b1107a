"""A model a library built (report/built.py, ``Reader.compiled_at``): the user's call of the library's factory or
class, found from the line that ran the model, is where every module of it was built. Torch-free, on the text of a
user's file; the real capture is tests/capturing/test_factory_built_lines.py."""

from __future__ import annotations

import textwrap

from inductor_lens.report.built import Reader, resolve
from inductor_lens.report.model import CompileCall, Frame, SourceFile

FILE = "/home/me/train.py"


def _at(src: str, ran: str):
    """``(site, line of it)`` that ``Reader.compiled_at`` finds from the line holding ``ran``, or ``(None, 0)``."""
    text = textwrap.dedent(src).lstrip("\n")
    lines = text.split("\n")
    (line,) = [i for i, ln in enumerate(lines, 1) if ran in ln]
    site = Reader([SourceFile(FILE, text)]).compiled_at([(FILE, line)])
    return (site, lines[site.line - 1].strip()) if site is not None else (None, "")


def test_the_factory_or_class_call_that_made_the_model_the_user_ran_is_found_through_names_and_compile():
    src = """
        import timm, torch, transformers
        import inductor_lens

        def main():
            model = timm.create_model("vit_tiny_patch16_224")
            compiled = torch.compile(model)
            x = torch.randn(2, 3, 224, 224)
            compiled(x)
            lm = transformers.GPT2LMHeadModel(config)
            inductor_lens.inspect(lm, ids, labels=ids, backward=True)
            torch.compile(transformers.AutoModel.from_pretrained("gpt2"))(ids)
    """
    site, code = _at(src, "compiled(x)")
    assert code == 'model = timm.create_model("vit_tiny_patch16_224")' and site.factory and site.function == "main"
    assert _at(src, "inductor_lens.inspect(lm")[1] == "lm = transformers.GPT2LMHeadModel(config)"
    assert _at(src, "torch.compile(transformers")[1].startswith("torch.compile(transformers.AutoModel.from_pretrained")
    # it built every module under it: any path resolves to it, of whatever class was recorded
    assert resolve(site, "blocks.3.attn.qkv", {}, through=True) is site
    assert resolve(site, "blocks.3.attn.qkv", {}) is None  # fit() is never told a factory built what it lacks


def test_a_construction_of_the_users_files_or_no_construction_is_not_taken_for_a_factory():
    src = """
        import torch
        from torch import nn

        class Net(nn.Module):
            pass

        def main(batch):
            seq = nn.Sequential(nn.Linear(2, 2))
            seq(batch)
            net = Net()
            net(batch)
            step(batch)
    """
    assert _at(src, "seq(batch)") == (None, "")  # the file's own Sequential: fit() reads it, or nothing does
    assert _at(src, "net(batch)") == (None, "")  # a class of the file
    assert _at(src, "step(batch)") == (None, "")  # a parameter: not assigned in the file


BRANCHES = """
    import argparse, torch
    import transformers as T

    args = argparse.ArgumentParser().parse_args()
    if args.model == "gpt2":
        model = T.GPT2LMHeadModel(cfg)
    elif args.model == "bert":
        model = T.BertForMaskedLM(cfg)
    else:
        model = T.LlamaForCausalLM(cfg)
    model.train()
    cmodel = torch.compile(model)
    for step in range(3):
        out = cmodel(input_ids=ids, labels=ids)
"""


def _from(src: str, ran: str, classes=(), calls=()):
    text = textwrap.dedent(src).lstrip("\n")
    lines = text.split("\n")
    (line,) = [i for i, ln in enumerate(lines, 1) if ran in ln]
    site = Reader([SourceFile(FILE, text)], calls).compiled_at([(FILE, line)], classes)
    return lines[site.line - 1].strip() if site is not None else None


def test_a_model_chosen_by_a_flag_is_the_branch_that_built_the_recorded_class_and_no_branch_where_none_is_known():
    """nu20 D1: the GPT-2 run was said built by the ``else:`` branch's ``LlamaForCausalLM`` (the last assignment in
    the text). The class ``torch.compile`` was given (``CompileCall.target``) or the compiled frame's picks the branch;
    a class no branch builds, or no class at all where several can have run, gives no line."""
    compiled = [CompileCall("GPT2LMHeadModel", "inductor", [Frame(FILE, 12, "<module>")])]
    assert _from(BRANCHES, "out = cmodel(", calls=compiled) == "model = T.GPT2LMHeadModel(cfg)"
    assert _from(BRANCHES, "out = cmodel(", ["BertForMaskedLM"]) == "model = T.BertForMaskedLM(cfg)"
    assert _from(BRANCHES, "out = cmodel(", ["LlamaForCausalLM"]) == "model = T.LlamaForCausalLM(cfg)"
    assert _from(BRANCHES, "out = cmodel(", ["MistralForCausalLM"]) is None
    assert _from(BRANCHES, "out = cmodel(") is None  # three can have run: which did is not known
    # the class torch.compile was given wins over the frame's (a base class may define forward)
    assert _from(BRANCHES, "out = cmodel(", ["PreTrainedModel"], compiled) == "model = T.GPT2LMHeadModel(cfg)"


def test_a_later_assignment_on_the_way_hides_the_earlier_ones_and_a_class_of_another_name_is_never_taken():
    src = """
        import torch, timm
        import transformers as T

        def main(big):
            model = T.GPT2LMHeadModel(cfg)
            if big:
                model = timm.create_model("vit_base")
            model(x)
            m = T.GPT2LMHeadModel(cfg)
            m = T.BertModel(cfg)
            m(x)
            one = T.BertModel(cfg)
            one(x)
            ids = torch.randint(0, 100, (1, 6))
            m.generate(ids)
    """
    assert _from(src, "model(x)") is None  # the factory under the `if` or the line before it: either can have run
    assert _from(src, "m(x)", ["GPT2LMHeadModel"]) is None  # `m` is a BertModel there: not the class recorded
    assert _from(src, "m(x)", ["BertModel"]) == "m = T.BertModel(cfg)"
    assert _from(src, "one(x)", ["GPT2LMHeadModel"]) is None
    assert _from(src, "one(x)") == "one = T.BertModel(cfg)"  # the one assignment that reaches: it ran
    assert _from(src, "m.generate(ids)") is None  # a tensor torch made is no model
