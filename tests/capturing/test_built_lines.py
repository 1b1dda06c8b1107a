"""Issue 22, "The Source view annotates no line of a model built from nn.Sequential": real CPU captures of models
made only of torch's modules (tests/sequential_models.py, built and compiled there as a user's script does it).
No op has a line that ran it; each fused node gets the line that BUILT the innermost module of its ops
(``FusedNode.built_lines``, report/built.py), forward and backward, while a model with its own forward keeps the
lines that ran."""

from __future__ import annotations

import json
import math
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


def test_a_compiled_sequentials_input_and_output_are_named_as_the_user_reads_them(sequential_mlp_report):
    """torch.compile runs a module of torch's (``nn.Sequential``) through its ``inner(*args, **kwargs)`` wrapper, so
    dynamo's source of the input is ``L['args'][0]``: the lens named it ``args[0]`` (a new user's trial, nu22), and
    named the output ``input_3``, a local of torch's ``Sequential.forward`` (``input = module(input)``), where
    dynamo's graph has no line of the user's. The input is forward's first argument, ``input``; the output is what
    computes it, the last layer's addmm."""
    (c,) = sequential_mlp_report.compiles
    for graph in ("dynamo", "post_grad"):
        inputs = [n.display_name for n in c.graphs[graph].nodes if n.op == "placeholder" and n.role == "input"]
        assert inputs == ["input"], (graph, inputs)
    (out,) = [o for o in c.outputs if o.role == "returned"]  # a forward (the weights need their gradients)
    assert out.name == "[2] addmm" and not any(n.variable for n in c.graphs["dynamo"].nodes), out
    assert "args[0]" not in c.graph_note and "input_" not in c.graph_note, c.graph_note


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


def _measured(report):
    """A profile of ``report`` by hand: kernel number i of a compile took (i + 1) µs per run (no profiler ran)."""
    from inductor_lens.analysis.perf import Measured

    times = {(c.id, k.name): [float(i + 1)] * 2 for c in report.compiles for i, k in enumerate(c.kernels)}
    return Measured(device="cpu", runs=2, warmup=1, kernels=times, step_us=[1000.0, 1000.0])


def test_the_kernel_table_time_by_line_and_memory_roll_ups_name_the_built_lines_marked_built(
    nested_sequential_training_report,
):
    """Issue 22: no line of the user's ran a nested Sequential's ops, so the kernel table, the time by line and the
    memory roll-ups by line said "(no line)" for all of it. Each names the line that built the modules instead,
    marked built (never as a line that ran): the same lines the Source view and the panel show."""
    from inductor_lens.analysis.perf import apply_profile

    report = apply_profile(nested_sequential_training_report, _measured(nested_sequential_training_report), None)
    share: dict = {}  # (line) -> µs: each kernel's time split evenly between the lines of its ops' modules
    for c in report.compiles:
        expected = _expected(c, NESTED_BUILT)
        for k in c.kernels:
            lines = sorted({ln for f in k.fused_nodes for _, ln in expected.get(f, ())})
            assert not k.user_lines and lines, (c.id, k.name)
            # the kernel's built lines: those of its fused nodes' ops, each once, in execution order
            assert sorted(b.line for b in k.built_lines) == lines, (c.id, k.name)
            assert all(b.file == str(MODELS) for b in k.built_lines)
            for ln in lines:
                share[ln] = share.get(ln, 0.0) + k.profile.total_us / len(lines)
    by_line = report.profile.by_line
    assert all(r.built and r.file == str(MODELS) for r in by_line), "no '(no line)' row, no line said to have run"
    assert {r.line: r.us for r in by_line} == {ln: round(us, 3) for ln, us in share.items()}
    assert {r.line for r in by_line} == {_line(code) for code in NESTED_BUILT.values()}

    fwd = report.compiles[0]
    m, fx = fwd.memory, {n.name: n for n in fwd.graphs["post_grad"].nodes}
    kept: dict = {}  # line -> bytes of the activations the ops of the modules it built save, from their shapes
    for s in m.saved_for_backward:
        if s.kind == "activation":
            path = fx[s.fx_node].module_stack[-1]
            ln = _line(NESTED_BUILT.get(path) or NESTED_BUILT[path.rsplit(".", 1)[-1]])
            kept[ln] = kept.get(ln, 0) + 4 * math.prod(s.shape)  # float32
    assert kept and all(r.built and r.file == str(MODELS) for r in m.saved_by_line)
    assert {r.line: r.bytes for r in m.saved_by_line} == kept
    assert m.recomputed and all(r.built and r.file == str(MODELS) for r in m.recomputed_by_line)
    assert sum(r.count for r in m.recomputed_by_line) == len(m.recomputed)


def test_a_model_with_its_own_forward_rolls_up_by_the_lines_that_ran(stack_training_report):
    """A line that ran always wins: ``models.Stack``'s kernels and roll-ups name its forward's lines, none built."""
    from inductor_lens.analysis.perf import apply_profile

    report = apply_profile(stack_training_report, _measured(stack_training_report), None)
    assert not any(k.built_lines for c in report.compiles for k in c.kernels)
    assert report.profile.by_line and not any(r.built for r in report.profile.by_line)
    m = report.compiles[0].memory
    assert m.saved_by_line and not any(r.built for r in [*m.saved_by_line, *m.recomputed_by_line])


def test_a_profiled_report_written_before_built_roll_ups_gets_them_on_load(nested_sequential_training_report, tmp_path):
    """A report of version 7 (built lines in the Source view only) loads with the kernels' built lines and its
    roll-ups by line made again with them, as a fresh capture has them."""
    from inductor_lens.analysis.perf import apply_profile

    report = apply_profile(nested_sequential_training_report, _measured(nested_sequential_training_report), None)
    data = json.loads(report.to_json())
    data["derived"] = 7
    for c in data["compiles"]:
        for k in c["kernels"]:
            k.pop("built_lines", None)
        if c.get("memory"):
            c["memory"]["saved_by_line"] = []  # what version 7 made: activations of no line are left out
            c["memory"]["recomputed_by_line"] = (
                [{"count": len(c["memory"]["recomputed"]), "file": "", "line": 0, "ops": []}]
                if c["memory"]["recomputed"]
                else []
            )
    total = sum(r["us"] for r in data["profile"]["by_line"])
    data["profile"]["by_line"] = [{"file": "", "line": 0, "code": "", "us": total, "share": 1.0, "kernels": []}]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert inductor_lens.load(old) == report


#: A model class defined through ``exec()`` (nu23's s1i.py): its code has no file (``<string>``).
EXEC_SOURCE = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        return self.out(torch.relu(self.fc(x)) * 2)
"""


def test_ops_of_a_model_defined_through_exec_have_no_line_and_its_built_line_takes_none_of_their_time():
    """nu23: a model whose class ``exec()`` defined runs in code with no file; torch records no stack for it. Every
    kernel fell back to the line that built the model ("built here"), and the time by line gave that line 99.8%: a
    line that built a module never ran its ops. The fused nodes say why no line is known (``rules.no_file_reason``),
    the kernels keep the built line as the fact it is, and the time by line counts their time under no line."""
    import torch
    from torch import nn

    from inductor_lens.analysis.perf import apply_profile
    from inductor_lens.report.rules import no_file_reason

    scope = {"torch": torch, "nn": nn}
    exec(EXEC_SOURCE, scope)
    Net = scope["Net"]
    model = Net()  # the line that built the model
    compiled = torch.compile(model)
    with inductor_lens.capture(title="exec") as cap:
        compiled(torch.randn(4, 8, requires_grad=True)).sum().backward()
    report = cap.report
    assert report.compiles
    nodes = [n for c in report.compiles for n in c.fused_nodes if not n.is_glue and n.fx_nodes]
    assert nodes and not any(n.user_lines for n in nodes)
    assert {n.no_line_reason for n in nodes} == {no_file_reason("<string>")}
    # the line that built the model, as report/built.py finds it where it reads the file that built it (s1i.py:4)
    import dataclasses

    from inductor_lens.report.model import BuiltLine

    here = BuiltLine(file=__file__, line=1, code="model = Net()", modules=["fc"], module_types=["Linear"])
    report = dataclasses.replace(
        report,
        compiles=[
            dataclasses.replace(c, kernels=[dataclasses.replace(k, built_lines=[here]) for k in c.kernels])
            for c in report.compiles
        ],
    )
    report = apply_profile(report, _measured(report), None)
    assert all(k.built_lines == [here] for c in report.compiles for k in c.kernels), "kept: a fact of its own"
    assert [(r.file, r.line, r.built) for r in report.profile.by_line] == [("", 0, False)]
    assert report.profile.by_line[0].share == 1.0


def test_only_the_ops_of_code_with_no_file_that_have_no_line_of_the_users_say_so():
    """``build._fileless`` on report data: a fused node of code with no file (``<string>``) that has no frame of the
    user's says why; one whose stacks hold a user's frame (``FusedNode.user_stack`` is one stack per line) keeps its
    line; the code FX generates for a GraphModule (``<eval_with_key>.N``: an exported or PT2E model, whose nodes keep
    the user's stack traces) is not such code (a PT2E capture crashed on it: its stacks were read as frames)."""
    from inductor_lens.capturing.build import _fileless
    from inductor_lens.report import rules
    from inductor_lens.report.model import Compile, Frame, FusedNode, Trigger

    user = Frame(file="/w/train.py", line=3, function="forward", code="y = x.relu()")
    torch_frame = Frame(file="/x/site-packages/torch/nn/functional.py", line=9, function="relu")
    c = Compile(
        id="0/0 inference",
        compile_id="0/0",
        graph_kind="inference",
        trigger=Trigger(kind="first_call", reason=""),
        fused_nodes=[
            FusedNode(name="op0", kind="pointwise", fx_nodes=["relu"], user_stack=[[torch_frame, user]]),
            FusedNode(name="op1", kind="pointwise", fx_nodes=["mul"], user_stack=[]),
        ],
    )
    marked = _fileless(c, "<string>")
    assert marked.fused_nodes[0].no_line_reason == ""  # a line of the user's: kept
    assert marked.fused_nodes[1].no_line_reason == rules.no_file_reason("<string>")
    assert _fileless(c, "<eval_with_key>.15") is c and _fileless(c, "/w/train.py") is c
