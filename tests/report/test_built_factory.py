"""A model a library built (report/built.py, ``Reader.compiled_at``): the user's call of the library's factory or
class, found from the line that ran the model, is where every module of it was built. Torch-free, on the text of a
user's file; the real capture is tests/capturing/test_factory_built_lines.py."""

from __future__ import annotations

import textwrap

from inductor_lens.report.built import Reader, resolve
from inductor_lens.report.model import SourceFile

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
