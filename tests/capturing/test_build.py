"""build.py on recorded raw captures (tests/fixtures/raw_*.json): no compile here.

The fixtures hold exactly what the adapter's hooks saw for tiny CPU compiles; the expectations below come
from the models themselves (tests/fixtures/make_raw_fixtures.py) and from the output code torch wrote.
"""

import dataclasses
import re
import traceback

import pytest

from inductor_lens.capturing import sources
from inductor_lens.capturing.build import build_report
from inductor_lens.report import finish as _finish
from inductor_lens.report.model import Frame
from tests._raw import load_raw


@pytest.fixture(scope="module")
def training():
    return build_report(load_raw("training"), "2.13.0", cells={})


@pytest.fixture(scope="module")
def recompiles():
    return build_report(load_raw("break_recompile"), "2.13.0", cells={})


def _post(c):
    return {n.name: n for n in c.graphs["post_grad"].nodes}


def test_graph_inputs_are_named_by_what_they_are(training):
    fwd, bwd = training.compiles
    inputs = {n.name: (n.role, n.display_name) for n in fwd.graphs["post_grad"].nodes if n.op == "placeholder"}
    # TinyAttention: qkv and proj Linear layers, called on x
    assert sorted(d for r, d in inputs.values() if r == "parameter") == [
        "proj.bias",
        "proj.weight",
        "qkv.bias",
        "qkv.weight",
    ]
    assert [d for r, d in inputs.values() if r == "input"] == ["x"]
    dyn = {n.display_name for n in fwd.graphs["dynamo"].nodes if n.op == "placeholder"}
    assert dyn == {"proj.bias", "proj.weight", "qkv.bias", "qkv.weight", "x"}
    back = {n.name: (n.role, n.display_name) for n in bwd.graphs["post_grad"].nodes if n.op == "placeholder"}
    assert back["tangents_1"][0] == "tangent"
    # a forward input the backward needs keeps its name there (proj.weight for the input gradient)
    assert ("parameter", "proj.weight") in back.values()
    assert all(role in ("parameter", "tangent", "saved") for role, _ in back.values())


def test_extern_boxes_are_labelled_by_their_op_and_getitems_are_glue(training):
    for c in training.compiles:
        post = _post(c)
        for n in c.fused_nodes:
            targets = [post[f].target for f in n.fx_nodes]
            if n.kernel is None:
                assert n.is_glue, n
            if all(t == "_operator.getitem" for t in targets):
                assert n.is_glue and n.label == "getitem" and n.kernel is None
            elif n.kind == "extern":
                assert n.label == targets[0].split(".")[1], (n.label, targets)
    labels = {n.label for n in training.compiles[0].fused_nodes}
    assert {"addmm", "_scaled_dot_product_flash_attention_for_cpu", "getitem"} <= labels


def test_fused_together_and_called_again_are_kept_apart(training):
    bwd = training.compiles[1]
    for k in bwd.kernels:
        if k.language == "extern":
            continue
        # how often the output code's call() launches the kernel = how many call sites it has
        launches = len(re.findall(rf"^\s+{re.escape(k.name)}\(", bwd.output_code, re.M))
        assert launches == len(k.call_sites), k.name
        assert sorted(f for site in k.call_sites for f in site) == sorted(k.fused_nodes)
    cat = next(k for k in bwd.kernels if "cat" in k.name)
    assert len(cat.call_sites) == 1 and len(cat.call_sites[0]) == 3  # three nodes fused into one kernel


def test_no_refusal_between_nodes_of_one_kernel_call(training):
    for c in training.compiles:
        site = {f: (k.name, i) for k in c.kernels for i, s in enumerate(k.call_sites) for f in s}
        for d in c.fusion_decisions:
            assert d.fused1 != d.fused2
            assert d.fused1 not in site or site[d.fused1] != site.get(d.fused2)


def test_fused_node_stacks_point_at_the_model(training):
    fwd = training.compiles[0]
    for n in fwd.fused_nodes:
        assert n.user_stack, n.name
        assert all(s[-1].file.endswith("make_raw_fixtures.py") and s[-1].is_user for s in n.user_stack)
    # the SDPA call is line 35 of the fixture script: its node's stack ends there
    sdpa = next(n for n in fwd.fused_nodes if "scaled_dot_product" in n.label)
    assert "scaled_dot_product_attention" in sdpa.user_stack[0][-1].code


def test_compiler_stack_frames_are_typed(training):
    k = training.compiles[0].kernels[-1]
    stages = [f.stage for f in k.compiler_stack]
    assert stages[0] == "user" and stages[-1] == "codegen"
    assert "dynamo" in stages and "aot" in stages
    assert all(not f.is_user for f in k.compiler_stack if "/torch/" in f.file)


def test_recompiles_and_breaks_read_as_text(recompiles):
    ids = [c.compile_id for c in recompiles.compiles]
    assert ids == ["0/0", "1/0", "0/1", "1/1"]
    by = {c.compile_id: c for c in recompiles.compiles}
    assert by["0/0"].recompile_reason == "" and by["0/0"].trigger.kind == "first_call"
    # the input went from 1-D (size 8) to 2-D (4 x 4): dynamo's guard text, one reason per line
    assert by["0/1"].recompile_reason == "0/0: tensor 'x' rank mismatch. expected 1, actual 2"
    assert not by["0/1"].recompile_reason.startswith("[")
    assert by["1/0"].frame_label == "with_graph_break() after line 13"
    assert by["1/0"].label == "with_graph_break() after line 13: inference graph · 1/0"
    assert {c.label.split(": ")[0] for c in recompiles.compiles} == {
        "with_graph_break()",
        "with_graph_break() after line 13",
    }
    assert recompiles.graph_breaks and all("print" in b.reason for b in recompiles.graph_breaks)
    assert all(b.user_stack[-1].line == 13 for b in recompiles.graph_breaks)


def test_identical_compiles_are_marked(recompiles):
    c = recompiles.compiles[0]
    twin = dataclasses.replace(c, id="2/0 inference", compile_id="2/0")
    other = recompiles.compiles[1]
    marked = _finish.mark_same_graphs([c, other, twin])
    assert [m.same_graph_as for m in marked] == [None, None, c.id]
    # the recompile for a 2-D input has other shapes: not the same graph
    assert all(m.same_graph_as is None for m in recompiles.compiles)


def test_source_files_hold_the_user_files_or_say_why_not(recompiles, tmp_path):
    files = {s.file: s for s in recompiles.source_files}
    models_py = next(f for f in files if f.endswith("tests/models.py"))
    s = files[models_py]
    if s.text:
        assert 'print("graph break here")' in s.text.splitlines()[12]
    else:
        assert "could not be read" in s.note  # recorded on another machine
    long = tmp_path / "long.py"
    long.write_text("x = 1\n" * (sources.MAX_FILE_CHARS // 3))
    got = sources.read_sources([str(long), str(tmp_path / "gone.py"), "cell [9]"], {})
    assert got[0].note.startswith("truncated") and len(got[0].text) <= sources.MAX_FILE_CHARS
    assert got[0].text.endswith("\n")
    assert "could not be read (FileNotFoundError" in got[1].note and got[1].text == ""
    assert "no longer in IPython's history" in got[2].note


def test_code_torch_fx_generated_is_read_from_linecache():
    """A PT2E-converted model's inserted quantize ops point at the forward torch.fx wrote (``<eval_with_key>.N``):
    no file on disk, but ``linecache`` holds its text; the Source view shows it and says what it is."""
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1

    keys = [torch.fx.symbolic_trace(f).forward.__code__.co_filename for f in (M(), lambda x: torch.tanh(x))]
    assert all(k.startswith("<eval_with_key>") for k in keys)  # the lambda's ends "in <lambda>": not in linecache
    *got, gone = sources.read_sources([*keys, "<eval_with_key>.999999"], {})
    assert "def forward" in got[0].text and "relu" in got[0].text and "tanh" in got[1].text
    assert all("torch.fx generated" in g.note and "could not be read" not in g.note for g in got)
    assert gone.text == "" and "no longer holds its text" in gone.note


def test_notebook_cells_are_named_and_the_magic_is_not_the_user():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    seen = {}

    def lens(line, cell):  # stands in for %%inductor_lens: runs the body as the real magic does
        shell.run_cell(cell, store_history=False)

    shell.register_magic_function(lens, magic_kind="cell", magic_name="inductor_lens")
    shell.user_ns["seen"] = seen
    shell.user_ns["traceback"] = traceback
    shell.run_cell("def f():\n    return traceback.extract_stack()\n", store_history=True)
    body = "a = 1\nseen['stack'] = f()\n"
    shell.run_cell("%%inductor_lens -f model\n" + body, store_history=True)
    cells = sources.cell_map(shell)
    frames = [
        sources.localize(Frame(fr.filename, fr.lineno, fr.name, (fr.line or "").strip()), cells) for fr in seen["stack"]
    ]
    mine = [f for f in frames if f.file.startswith("cell [")]
    n = shell.execution_count - 1
    # the magic's own call (line 1 of the cell) is not the user's; the body's line 2 is line 3 as shown
    assert [(f.file, f.line, f.is_user) for f in mine] == [
        (f"cell [{n}]", 1, False),
        (f"cell [{n}]", 3, True),
        (f"cell [{n - 1}]", 2, True),
    ]
    assert mine[0].code.startswith("%%inductor_lens")
    assert mine[1].code == "seen['stack'] = f()"
    text = {s.file: s.text for s in sources.read_sources([f.file for f in mine if f.is_user], cells)}
    assert text[f"cell [{n}]"].splitlines()[2] == "seen['stack'] = f()"
    assert text[f"cell [{n - 1}]"].startswith("def f():")


def test_cells_rename_frames_in_the_whole_report(recompiles):
    path = next(s.file for s in recompiles.source_files if s.file.endswith("tests/models.py"))
    text = "# a cell\n" + "\n" * 20
    cells = {path: sources.Cell(name="cell [7]", offset=1, wrapper=False, text=text)}
    r = build_report(load_raw("break_recompile"), "2.13.0", cells=cells)
    frames = [f for c in r.compiles for k in c.kernels for s in k.user_stack for f in s]
    frames += [f for b in r.graph_breaks for f in b.user_stack]
    assert frames and not any(f.file == path for f in frames)
    assert {(f.file, f.line) for b in r.graph_breaks for f in b.user_stack if f.file.startswith("cell")} == {
        ("cell [7]", 14)
    }  # line 13 of the file, one line down in the cell
    assert {s.file: s.text for s in r.source_files}["cell [7]"] == text


def test_a_break_dynamo_could_not_resume_from_is_one_break_that_says_the_frame_ran_eagerly():
    """Dynamo logs an ``nn.LSTM`` it cannot wrap (torch 2.13) twice: the break, then, after the restart, its giving up
    on the frame ("falling back to eager"). The report counted 2 graph breaks; it is one, in the words of the second."""
    from inductor_lens.capturing.build import _graph_breaks, _Trace

    cause = "Attempted to wrap RNN, GRU, or LSTM\n  Explanation: Dynamo does not support RNN, GRU, or LSTM."
    heads = (
        "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):",
        "Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break "
        "encountered:",
    )
    where = 'User code traceback:\n  File "/home/u/lstm.py", line 7, in f\n    o, _ = lstm(x)\n'
    records = [
        (
            {"dynamo_graph_break_reason": {}, "frame_id": 0, "frame_compile_id": 0, "attempt": attempt},
            f"Graph Break Reason: {head}\n\n{cause}\n{where}",
        )
        for attempt, head in enumerate(heads)
    ]
    (only,) = _graph_breaks(_Trace(records))
    assert only.compile_ids == ["0/0"] and [f.line for f in only.user_stack] == [7]
    assert only.summary == "Attempted to wrap RNN, GRU, or LSTM (dynamo skipped the whole frame: it ran eagerly)"
    # two different breaks at one line stay two, also where only their explanations differ (torch 2.6+ words the
    # type of a break on its first line: "Attempted to call function marked as skipped", foo's and bar's alike)
    other = [(records[0][0], records[0][1].replace("Attempted to wrap RNN, GRU, or LSTM", "Unsupported call"))]
    assert len(_graph_breaks(_Trace(records + other))) == 2
    skipped = [
        (records[0][0], f"Graph Break Reason: {heads[0]}\n\nAttempted to call function marked as skipped\n"
         f"  Explanation: the function `m.{name}` is skipped\n{where}")
        for name in ("foo", "bar")
    ]  # fmt: skip
    assert [len(b.reason) > 0 for b in _graph_breaks(_Trace(skipped))] == [True, True]


def test_a_break_met_in_two_frames_is_one_break_whatever_bytecode_its_header_names():
    """nu29's D5: the optimizer's ``graph_break()`` (torch/optim/optimizer.py:79) broke frames 1/0 and 2/0, its reason's
    header naming ``CALL`` in one and ``CALL_FUNCTION_EX`` in the other; torch's log calls the second a duplicate (its
    type and places are the first's). The report listed it twice, while it kept the break that one frame met again
    when it recompiled (0/0, 0/1) once, and said of that one "met in 2 frames"."""
    from inductor_lens.capturing.build import _graph_breaks, _Trace
    from inductor_lens.report.rules import breaks_text, frames_met

    cause = "Call to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph break. Message: None\n"
    where = 'User code traceback:\n  File "/home/u/opt.py", line 79, in _use_grad\n    torch._dynamo.graph_break()\n'
    header = "Encountered graph break when attempting to trace {}: a function call, e.g. f(x, y):"
    step = 'User code traceback:\n  File "/home/u/moe.py", line 60, in train_step\n    loss.backward()\n'
    records = [
        ({"dynamo_graph_break_reason": {}, "frame_id": frame, "frame_compile_id": n}, f"Graph Break Reason: {text}")
        for frame, n, text in (
            (0, 0, f"{header.format('CALL')}\n\nUnsupported Tensor.backward() call\n{step}"),
            (1, 0, f"{header.format('CALL')}\n\n{cause}{where}"),
            (2, 0, f"{header.format('CALL_FUNCTION_EX')}\n\n{cause}\nStack variable source attribution: ...\n{where}"),
            (0, 1, f"{header.format('CALL')}\n\nUnsupported Tensor.backward() call\n{step}"),
        )
    ]
    breaks = _graph_breaks(_Trace(records))
    assert [b.compile_ids for b in breaks] == [["0/0", "0/1"], ["1/0", "2/0"]]
    assert breaks_text(len(breaks), [], frames_met(breaks)) == (
        "2 graph break(s) (4 as torch counts them: one break met in 2 frames; one met again as its frame recompiled)"
    )


def test_cells_rename_the_places_that_diagnostics_and_reasons_cite():
    """The trial's notebook: a diagnostic said ``h() (/tmp/ipykernel_10525/1673700272.py:2)`` where the same report's
    break said ``cell [6]:6``. Text that cites a place in a cell's file names it as the frames do."""
    from inductor_lens.capturing.build import _localized
    from inductor_lens.report.model import Diagnostic, GraphBreak

    cells = {
        "/tmp/ipykernel_1/23.py": sources.Cell(name="cell [6]", offset=1, wrapper=False, text="%%inductor_lens\n"),
        "/tmp/ipykernel_1/9.py": sources.Cell(name="cell [6]", offset=0, wrapper=True, text="%%inductor_lens\n"),
    }
    message = "compile 0/0: dynamo could not compile h() (/tmp/ipykernel_1/23.py:2) and ran it eagerly"
    reason = 'graph break\n  File "/tmp/ipykernel_1/23.py", line 4, in h\n    print(x)'
    got = _localized([Diagnostic("eager_fallback", message, reason), GraphBreak(reason)], cells)
    assert got[0].message == "compile 0/0: dynamo could not compile h() (cell [6]:3) and ran it eagerly"
    assert got[0].detail == got[1].reason == 'graph break\n  File "cell [6]", line 5, in h\n    print(x)'
    assert sources.localize_text("at /tmp/ipykernel_1/9.py:3", cells) == "at /tmp/ipykernel_1/9.py:3"  # the magic's
    assert sources.localize_text("h (/tmp/ipykernel_1/23.py line 4)", cells) == "h (cell [6]:5)"


def test_the_code_after_a_break_in_a_lens_cell_is_named_by_the_cells_line_in_every_frame():
    """Dynamo names the code after a graph break by the line of the code it traced (``..._resume_in_train_step_at_34``),
    the cell less its %%inductor_lens line: a stack frame's "train_step (after the graph break at line 34)" and an
    empty frame's "h() after line 3" were one line low, where the compile picker, the timeline and the graph-break list
    say the cell's line (nu24 D4). A plain cell (offset 0) and the magic's own call keep theirs."""
    from inductor_lens.capturing.build import _localized
    from inductor_lens.report.model import EmptyFrame

    cells = {
        "/tmp/ipykernel_1/23.py": sources.Cell(name="cell [3]", offset=1, wrapper=False, text="%%inductor_lens\n"),
        "/tmp/ipykernel_1/8.py": sources.Cell(name="cell [2]", offset=0, wrapper=False, text="def h(x): ...\n"),
    }
    resume = "torch_dynamo_resume_in_train_step_at_34"
    frame, plain, empty = _localized(
        [
            Frame("/tmp/ipykernel_1/23.py", 36, resume),
            Frame("/tmp/ipykernel_1/8.py", 4, "torch_dynamo_resume_in_h_at_3"),
            EmptyFrame("1/0", "torch_dynamo_resume_in_h_at_3", "/tmp/ipykernel_1/23.py", 3),
        ],
        cells,
    )
    assert (frame.file, frame.line, frame.function_label) == (
        "cell [3]",
        37,
        "train_step (after the graph break at line 35)",
    )
    assert plain.function_label == "h (after the graph break at line 3)"
    assert (empty.line, empty.label) == (4, "h() after line 4")


def test_a_raise_while_dynamo_traced_is_not_also_nothing_to_compile():
    """The trial's cell ``x @ torch.randn(3, 3)`` (a shape error dynamo met tracing, raised to the user's code) got a
    second line "dynamo ran but Inductor compiled no graph (nothing to compile in the traced frames, or they were
    skipped)" under the error that says why. A raise that is not dynamo's still leaves that line."""
    import torch

    import inductor_lens

    def f(x):
        return x @ torch.ones(3, 3)

    cap = inductor_lens.capture()
    with pytest.raises(Exception, match="mat1 and mat2|size mismatch|shapes cannot be multiplied|a and b"):
        with cap:
            torch.compile(f)(torch.ones(2, 2))
    codes = [d.code for d in cap.report.diagnostics]
    assert "compile_raised" in codes and "nothing_compiled" not in codes, codes
    raw = load_raw("break_recompile")
    raw.graphs, raw.raised = [], RuntimeError("the user's own error, after the compiles")
    assert "nothing_compiled" in [d.code for d in build_report(raw, "2.13.0", cells={}).diagnostics]


def test_a_traced_method_and_its_code_after_a_break_are_named_with_their_class(tmp_path):
    """Regional compilation compiles each block's ``forward``: named with its class, and so is dynamo's code after
    a graph break in it (its first line is the break's, inside the method, not the ``def``)."""
    from inductor_lens.capturing.build import _qualified
    from inductor_lens.report.rules import frame_label

    path = tmp_path / "m.py"
    path.write_text(
        "class Block:\n    @staticmethod\n    def forward(x):\n        y = x\n        print(y)\n        return y\n\n"
        "def forward(x):\n    return x\n"
    )
    file = str(path)
    assert _qualified("forward", file, 2) == "Block.forward"  # its first line: the decorator's
    assert _qualified("forward", file, 8) == "forward"  # a function of the same name: no class
    resumed = _qualified("torch_dynamo_resume_in_forward_at_5", file, 5)
    assert resumed == "Block.torch_dynamo_resume_in_forward_at_5"
    assert frame_label(resumed) == "Block.forward() after line 5"
    assert _qualified("forward", str(tmp_path / "gone.py"), 3) == "forward"  # no text: the name alone


def test_a_lazy_backward_names_the_call_that_compiled_it():
    """A backward compiled lazily at ``torch.autograd.grad`` (a gradient penalty) was said to compile "at the first
    .backward()": the call the capture recorded says which."""
    from inductor_lens.capturing.build import _trigger
    from inductor_lens.capturing.raw import RawGraph, RawWindow

    rec = RawGraph(key=0, compile_id="1/0", graph_kind="backward", start_us=20.0)
    for code, said in (
        ("(g,) = torch.autograd.grad(out.sum(), x, create_graph=True)", "at the first torch.autograd.grad() through"),
        ("loss.backward()", "at the first .backward() through"),
    ):
        window = RawWindow("LAZY_BACKWARD", "1/0", 10.0, 30.0, [("/home/u/train.py", 10, "step", code)])
        trigger = _trigger(rec, window, None, 0.0, "step")
        assert trigger.kind == "lazy_backward" and said in trigger.reason, trigger.reason


def test_an_imported_inherited_methods_frame_is_named_by_its_selfs_class_as_its_guards_say(tmp_path):
    """nu30 D3: torch's ``AdamW`` runs ``Adam.step``'s code. The live capture names that frame ``AdamW.step`` (the
    class of its ``self``), a TORCH_TRACE import named it ``Adam.step``, and a compare of the two paired the
    optimizer's compiles with nothing. The log's guard tree names the class of ``L['self']`` (the lines below are a
    torch 2.15 log's): the import names the frame by it."""
    from inductor_lens.capturing.build import _frame_name, _Trace

    path = tmp_path / "adam.py"
    path.write_text("class Adam:\n    def step(self, closure=None):\n        return closure\n")
    ids = {"frame_id": 4, "frame_compile_id": 0, "attempt": 0}
    metrics = {"co_name": "step", "co_filename": str(path), "co_firstlineno": 2}
    guards = (
        "TREE_GUARD_MANAGER:\n+- RootGuardManager\n"
        "| +- GuardManager: source=L['self'], accessed_by=FrameLocalsGuardAccessor(key='self', framelocals_idx=0), "
        "type=<class 'torch.optim.adamw.AdamW'>, tag_safe=(False, False)\n"
        "| | +- ID_MATCH: ___check_obj_id(L['self'], 139769157892944), type=<class 'torch.optim.adamw.AdamW'>\n"
    )
    records = [({"compilation_metrics": metrics, **ids}, None), ({"dynamo_cpp_guards_str": {}, **ids}, guards)]
    assert _frame_name(_Trace(records), "4/0") == "AdamW.step"
    # no guard naming the self's class: the class that defines the method, as before
    assert _frame_name(_Trace(records[:1]), "4/0") == "Adam.step"
    # a live capture's classes of the frame's self decide (Raw.self_types)
    assert _frame_name(_Trace(records), "4/0", self_type=["Adam", "Optimizer", "object"]) == "Adam.step"
