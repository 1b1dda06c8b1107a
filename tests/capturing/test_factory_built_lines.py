"""Issue 22: a model a library builds (timm's ``create_model``) ran every op inside the library and was built by no
line the lens could read: no fused node, kernel or roll-up had a line of the user's. The line that built it is the
user's call of the factory: ``FusedNode.built_lines`` name it, marked built. A real CPU capture of a stand-in for
timm (timm is not installed here): a model class in a package under a ``site-packages`` folder (so its frames are a
library's, as timm's are), built by its factory function, called from a user's script that trains it one step."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

LIBRARY = '''
"""A stand-in for timm: a model class of a library and the factory that builds it."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + torch.nn.functional.gelu(self.fc(self.norm(x)))


class TinyNet(nn.Module):
    def __init__(self, d=16, depth=2):
        super().__init__()
        self.stem = nn.Linear(8, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(depth)])
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).relu())


def create_model(name, **kwargs):
    return {"tiny": TinyNet}[name](**kwargs)
'''

SCRIPT = """
import torch

import inductor_lens
import tinylib


def train_step():
    torch.manual_seed(0)
    model = tinylib.create_model("tiny", depth=2)
    x = torch.randn(4, 8)
    return inductor_lens.inspect(model, x, backward=True, title="a library's model")
"""


@pytest.fixture(scope="module")
def factory_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("factory")
    lib = root / "site-packages" / "tinylib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(textwrap.dedent(LIBRARY), encoding="utf-8")
    (root / "user_train.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    sys.path[:0] = [str(root / "site-packages"), str(root)]
    try:
        script = importlib.import_module("user_train")
        return script.train_step(), root / "user_train.py"
    finally:
        sys.path[:] = [p for p in sys.path if p not in (str(root / "site-packages"), str(root))]
        for name in ("user_train", "tinylib"):
            sys.modules.pop(name, None)


def test_a_model_a_library_built_names_the_users_call_of_the_factory_built(factory_report):
    report, script = factory_report
    (line,) = [i for i, ln in enumerate(script.read_text().splitlines(), 1) if "create_model(" in ln]
    assert [c.graph_kind for c in report.compiles] == ["forward", "backward"]
    for c in report.compiles:
        nodes = [n for n in c.fused_nodes if not n.is_glue]
        assert nodes and not any(f.is_user for n in nodes for f in n.user_lines), "every op ran inside the library"
        for n in nodes:
            assert [(b.file, b.line) for b in n.built_lines] == [(str(script), line)], (c.id, n.name)
            assert n.built_lines[0].code == 'model = tinylib.create_model("tiny", depth=2)'
        for k in c.kernels:
            assert [(b.file, b.line) for b in k.built_lines] == [(str(script), line)], (c.id, k.name)
        fx = {g.name: g for g in c.graphs["post_grad"].nodes}
        modules = {m for n in nodes for b in n.built_lines for m in b.modules}
        assert modules == {fx[f].module_stack[-1] for n in nodes for f in n.fx_nodes if f in fx and fx[f].module_stack}
    m = report.compiles[0].memory
    lined = [r for r in m.saved_by_line if r.file]
    assert lined and all((r.file, r.line, r.built) == (str(script), line, True) for r in lined)
    # what no line built or ran (the root module's own relu, in the library's forward) is the row of no line
    unlined = sum(s.bytes for s in m.saved_for_backward if s.kind in ("activation", "copy") and not s.user_line)
    assert sum(r.bytes for r in m.saved_by_line if not r.file) == unlined
    acts = [s for s in m.saved_for_backward if s.kind == "activation"]
    assert acts and all((s.user_line.line, s.user_line.built) == (line, True) for s in acts if s.user_line)
