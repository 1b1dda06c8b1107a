"""Issue 22, "The Source view annotates no line of a model built from nn.Sequential": real CPU captures of models
made only of torch's modules (tests/sequential_models.py, built and compiled there as a user's script does it).
No op has a line that ran it; each fused node gets the line that BUILT the innermost module of its ops
(``FusedNode.built_lines``, report/built.py), forward and backward, while a model with its own forward keeps the
lines that ran."""

from __future__ import annotations

import json
import pathlib

import inductor_lens

MODELS = pathlib.Path(__file__).resolve().parents[1] / "sequential_models.py"

#: The innermost module of an op -> the code of the line that built it in tests/sequential_models.py, by hand.
MLP_BUILT = {"0": "nn.Linear(16, 32),", "1": "nn.GELU(),", "2": "nn.Linear(32, 4),"}
NESTED_BUILT = {
    "stem.0": "layers = [nn.Linear(d_in, d)]",
    "stem.1": "layers.append(nn.ReLU())",
    "norm": "self.norm = nn.LayerNorm(d)",  # blocks.N.norm, for every N: the Block's __init__
    "fc": "self.fc = nn.Linear(d, d)",
    "act": "self.act = nn.GELU()",
    "head": "head=nn.Linear(16, 4),",
}


def _line(code: str) -> int:
    (n,) = [i for i, ln in enumerate(MODELS.read_text(encoding="utf-8").splitlines(), 1) if ln.strip() == code]
    return n


def _expected(c, table: dict[str, str]) -> dict[str, set]:
    """Fused node -> {(innermost module path, line)} of its ops, from the table (blocks.N.x looked up as x)."""
    fx = {n.name: n for n in c.graphs["post_grad"].nodes}
    out = {}
    for n in c.fused_nodes:
        if n.is_glue:
            continue
        want = set()
        for name in n.fx_nodes:
            gn = fx.get(name)
            if gn is None or gn.op in ("placeholder", "get_attr") or not gn.module_stack:
                continue
            path = gn.module_stack[-1]
            code = table.get(path) or table[path.rsplit(".", 1)[-1]]
            want.add((path, _line(code)))
        out[n.name] = want
    return out


def _got(n) -> set:
    return {(m, b.line) for b in n.built_lines for m in b.modules}


def test_a_sequential_mlp_annotates_the_line_that_built_each_layer(sequential_mlp_report):
    (c,) = sequential_mlp_report.compiles
    assert any(sf.file == str(MODELS) and sf.text for sf in sequential_mlp_report.source_files)
    nodes = [n for n in c.fused_nodes if not n.is_glue]
    assert nodes and all(not n.user_lines and n.no_line_reason for n in nodes), "the issue: no line ran these ops"
    expected = _expected(c, MLP_BUILT)
    assert {n.name: _got(n) for n in nodes} == expected
    assert {m for want in expected.values() for m, _ in want} == {"0", "1", "2"}  # each layer's kernels
    for n in nodes:
        for b in n.built_lines:
            assert b.file == str(MODELS) and b.function == "sequential_mlp"
            assert b.code == next(code for path, code in MLP_BUILT.items() if path in b.modules)
            assert b.module_types == [{"0": "Linear", "1": "GELU", "2": "Linear"}[m] for m in b.modules]


def test_a_nested_sequential_training_step_maps_forward_and_backward_to_where_each_module_was_built(
    nested_sequential_training_report,
):
    report = nested_sequential_training_report
    assert [c.graph_kind for c in report.compiles] == ["forward", "backward"]
    lines = set()
    for c in report.compiles:
        expected = _expected(c, NESTED_BUILT)
        got = {n.name: _got(n) for n in c.fused_nodes if not n.is_glue}
        assert got == expected, c.id
        assert all(not n.user_lines for n in c.fused_nodes), c.id
        lines |= {ln for want in got.values() for _, ln in want}
    # every construction form of the model: a list filled by append in a function, a ModuleList comprehension
    # spread into a Sequential, a Sequential subclass naming its layers in __init__, an OrderedDict keyword
    assert lines == {_line(code) for code in NESTED_BUILT.values()}
    # the three Blocks' layers are one line each: built once per block, by the one __init__
    fc = [b for n in report.compiles[0].fused_nodes for b in n.built_lines if b.code == NESTED_BUILT["fc"]]
    assert {b.line for b in fc} == {_line(NESTED_BUILT["fc"])}
    assert {m for b in fc for m in b.modules} == {"blocks.0.fc", "blocks.1.fc", "blocks.2.fc"}


def test_a_model_with_its_own_forward_keeps_the_lines_that_ran(stack_training_report):
    """``models.Stack`` calls its layers from forward lines of its own: those lines, never a built one."""
    nodes = [n for c in stack_training_report.compiles for n in c.fused_nodes if not n.is_glue]
    ran = [n for n in nodes if n.user_lines]
    assert ran and all(not n.built_lines for n in ran)
    assert all(f.function == "forward" for n in ran for f in n.user_lines)


def test_a_report_written_before_built_lines_gets_them_on_load(nested_sequential_training_report, tmp_path):
    data = json.loads(nested_sequential_training_report.to_json())
    data["derived"] = 5
    for c in data["compiles"]:
        for n in c["fused_nodes"]:
            n.pop("built_lines", None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert inductor_lens.load(old) == nested_sequential_training_report
