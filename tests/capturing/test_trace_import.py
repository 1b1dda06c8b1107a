"""TORCH_TRACE import: one real compile is recorded by TORCH_TRACE and by the in-process capture at once
(tests/dist_scripts/trace_and_capture.py, in a subprocess), and the imported report must agree with the
captured one: every kernel's exact source, torch's provenance links, compiles, triggers, guards, graphs."""

import dataclasses
import math
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import inductor_lens
from inductor_lens.capturing.trace_read import TraceError, TraceReader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tests", "dist_scripts", "trace_and_capture.py")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The script's recordings, made by one process (one torch import): its MLP step, graph break and recompile,
    then the GPT-2 step and an attention call, each with TORCH_TRACE moved to a folder of its own (``trace_into``)."""
    tmp = tmp_path_factory.mktemp("trace")
    then = []
    for step in ("gpt2", "sdpa"):
        (tmp / step).mkdir()
        then += [f"--then-{step}", str(tmp / step / "captured.json"), str(tmp / step / "trace")]
    mlp = _record(tmp, *then)
    gpt2, sdpa = (
        (inductor_lens.load(str(tmp / step / "captured.json")), inductor_lens.load_trace(str(tmp / step / "trace")))
        for step in ("gpt2", "sdpa")
    )
    return mlp, gpt2, tmp, sdpa


@pytest.fixture(scope="module")
def both(recorded):
    """(report captured in process, report imported from the TORCH_TRACE log of the same compile, log dir)."""
    (captured, imported), _, tmp, _ = recorded
    return captured, imported, tmp / "trace"


def _record(tmp, *args):
    """Run SCRIPT (with ``args``) under TORCH_TRACE in a fresh process: (captured, imported) of its compiles."""
    env = dict(
        os.environ,
        TORCH_TRACE=str(tmp / "trace"),
        INDUCTOR_PROVENANCE="1",
        PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
    )
    proc = subprocess.run(
        [sys.executable, SCRIPT, str(tmp / "captured.json"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return inductor_lens.load(str(tmp / "captured.json")), inductor_lens.load_trace(str(tmp / "trace"))


def _pairs(both):
    captured, imported, _ = both
    assert [c.id for c in imported.compiles] == [c.id for c in captured.compiles]
    return list(zip(captured.compiles, imported.compiles))


def test_same_compiles_in_the_same_order(both):
    captured, imported, _ = both
    assert imported.origin == "trace" and captured.origin == "capture"
    ids = [c.id for c in captured.compiles]
    # the script: a training step (forward + lazy backward), a graph break (two frames), a recompile of both
    assert ids == ["0/0 forward", "0/0 backward", "1/0 inference", "2/0 inference", "1/1 inference", "2/1 inference"]
    assert imported.torch_version == captured.torch_version


def _as_captured(imported_name: str, captured: list[str]) -> str:
    """The captured name of an imported kernel: the same, but for an op called as ``torch.ops`` that returns
    nothing (a custom op that writes its input), whose buffer (``[buf1]``) the output code does not name."""
    if imported_name.startswith("torch.ops.") and "[" not in imported_name:
        return next((n for n in captured if n.startswith(imported_name + "[")), imported_name)
    return imported_name


def test_every_kernel_source_is_identical(both):
    n = 0
    unnamed = 0
    for c, i in _pairs(both):
        names = [k.name for k in c.kernels]
        assert [_as_captured(k.name, names) for k in i.kernels] == names, c.id
        unnamed += sum(k.name not in names for k in i.kernels)
        for kc, ki in zip(c.kernels, i.kernels):
            assert ki.source == kc.source and ki.language == kc.language, (c.id, kc.name)
            n += 1
        assert i.output_code == c.output_code
    assert n >= 14
    assert unnamed == 2  # the custom op's call in 2/0 and in its recompile 2/1: kept, without a buffer name


def test_why_each_extern_kernel_is_a_call_is_said_alike_captured_and_imported(both):
    """``Kernel.extern_why``: a library call (the MLP's matmuls), torch's own op Inductor has no code for (the sort,
    the convolution's backward), the user's custom op (``lens_test::bump``), derived alike for both reports."""
    whys = {}
    for c, i in _pairs(both):
        for kc, ki in zip(c.kernels, i.kernels):
            assert ki.extern_why == kc.extern_why and bool(kc.extern_why) == (kc.language == "extern"), kc.name
            whys[kc.name.split("[")[0]] = kc.extern_why
    assert whys["extern_kernels.mm"].startswith("A library call")
    (sort,) = [why for name, why in whys.items() if name.startswith("torch.ops.aten.sort")]
    assert (
        sort
        == "torch's own sort, called as it is (a fallback): Inductor has no code generation of its own for this op."
    )
    assert whys["torch.ops.lens_test.bump.default"].startswith("Your custom op lens_test::bump")


def test_provenance_links_equal_where_torch_logged_them(both):
    checked, expected = 0, 0
    for c, i in _pairs(both):
        expected += len(c.kernels) if c.graph_kind != "backward" else 0  # a lazy backward has no provenance map
        for kc, ki in zip(c.kernels, i.kernels):
            logged = kc.metadata.get("torch_provenance_fx_nodes")
            if logged is None:
                continue
            assert ki.metadata.get("torch_provenance_fx_nodes") == logged, (c.id, kc.name)
            assert ki.fx_nodes == kc.fx_nodes, (c.id, kc.name)
            # the fused node that holds the kernel holds the same post-grad nodes
            (fused,) = [f for f in i.fused_nodes if f.kernel == ki.name]
            assert set(fused.fx_nodes) == set(kc.fx_nodes)
            checked += 1
    assert checked == expected and checked >= 8


def test_lazy_backward_extern_links_are_derived_and_right(both):
    """torch logs no provenance for a lazily compiled backward; each mm call is still tied to its own mm node, and
    the convolution's backward, a fallback op the output code calls as it is (``buf5 =
    torch.ops.aten.convolution_backward.default(...)``, no ``extern_kernels`` call), is a kernel of the import as of
    the capture, tied to its own node."""
    captured, imported, _ = both
    c, i = captured.compile("0/0 backward"), imported.compile("0/0 backward")
    externs = [(kc, ki) for kc, ki in zip(c.kernels, i.kernels) if kc.language == "extern"]
    assert len(externs) == 4
    for kc, ki in externs:
        assert (ki.name, ki.source, ki.fx_nodes) == (kc.name, kc.source, kc.fx_nodes)
    (conv,) = [ki for _, ki in externs if ki.name.startswith("torch.ops.aten.convolution_backward.default[")]
    assert [n.target for n in i.graphs["post_grad"].nodes if n.name in conv.fx_nodes] == [
        "aten.convolution_backward.default"
    ]
    assert any("not linked to post-grad nodes" in d.message for d in imported.diagnostics)


def test_every_extern_call_of_a_lazy_backward_is_tied_to_the_node_the_capture_ties_it_to(both, gpt2):
    """torch logs no provenance for a lazy backward: each extern call of the MLP's and the GPT-2's backward is tied,
    from the output code's comments, to the post-grad node the capture ties it to."""
    checked = 0
    for captured, imported in (both[:2], gpt2):
        c, i = captured.compile("0/0 backward"), imported.compile("0/0 backward")
        for kc, ki in zip(c.kernels, i.kernels):
            if kc.language == "extern":
                assert (ki.name, ki.fx_nodes) == (kc.name, kc.fx_nodes), c.id
                checked += kc.name.startswith("extern_kernels.mm[")
    assert checked > 10


BLOCK = pathlib.Path(ROOT, "tests", "fixtures", "trace-block")


def test_a_forward_whose_self_has_another_name_names_its_modules_as_the_capture_does():
    """nu28 minor: the block's ``def forward(s, x)`` put ``s`` before every module and parameter of the import
    ("s.attn", "s.ln1.weight") where the live capture, which reads the frame, says "attn" and "ln1.weight" (a compare of
    the two named every module differently). A log's placeholders carry only names (``L_s_modules_ln1_...``): a
    method's one local whose modules the graph reads is its self (``build._log_self_name``)."""
    imported = inductor_lens.load_trace(str(BLOCK))
    fwd = imported.compiles[0]
    names = [n.display_name for n in fwd.graphs["dynamo"].nodes if n.op == "placeholder"]
    assert names[:3] == ["ln1.weight", "ln1.bias", "x"] and not any(n.startswith("s.") for n in names), names
    modules = {m for c in imported.compiles for n in c.fused_nodes for m in n.module_stack}
    assert {"attn", "ln1", "mlp.0"} <= modules and not any(m == "s" or m.startswith("s.") for m in modules), modules


def test_each_mm_of_a_blocks_backward_is_the_node_its_comment_names():
    """A transformer block's backward (LayerNorm + nn.MultiheadAttention + MLP, a log without provenance) calls
    ``extern_kernels.mm`` 8 times; the comment above each call names the call's own node last
    (``# Topologically Sorted Source Nodes: [clone_3, ..., view_32, permute_29, mm_7]``), after nodes saved from
    the forward (``x``, ``input_1``, ``multi_head_attention_forward``) whose user lines hold other mms. The import
    tied 6 of the 8 to the first unclaimed mm of those lines: the attention's in_proj weight gradient (``buf22``,
    [192, 64]) to ``mm_3`` [64, 64] at the MLP's line. Each is the node torch's comment names, as the capture
    (nu28's tb.json) ties it, on its own user line."""
    imported = inductor_lens.load_trace(str(BLOCK))
    c = imported.compile("0/0 backward")
    shapes = {n.name: n.shape for n in c.graphs["post_grad"].nodes}
    mms = {k.name: k for k in c.kernels if k.name.startswith("extern_kernels.mm[")}
    # torch's own output code: the last node of the comment above each call
    assert {name: k.fx_nodes for name, k in mms.items()} == {
        f"extern_kernels.mm[{buf}]": [node]
        for buf, node in {
            "buf0": "mm_1",
            "buf4": "mm_3",
            "buf12": "mm_5",
            "buf23": "mm_8",
            "buf13": "mm_6",
            "buf22": "mm_7",
            "buf1": "mm_2",
            "buf5": "mm_4",
        }.items()
    }
    in_proj = mms["extern_kernels.mm[buf22]"]
    assert shapes["mm_7"] == [192, 64]
    assert [(pathlib.Path(u.file).name, u.line) for u in in_proj.user_lines] == [("tb.py", 11)]  # the attention


def test_an_extern_call_whose_comment_does_not_name_its_node_is_the_op_that_reads_what_it_names():
    """With INDUCTOR_PROVENANCE on, torch names a backward mm in the comment by the node it was made from: above
    ``extern_kernels.mm(reinterpret_tensor(tangents_1, ...), view_13, out=buf1)`` it writes ``[view_15,
    permute_12, permute_14]`` (no ``mm_2``; nu28's trace2 of the same block). The call is the mm that reads what the
    comment names and what the call passes (``mm_2 = mm(permute_12, view_13)``), not the first unclaimed mm."""
    from inductor_lens.capturing.trace_graph import extern_op_nodes

    def mm(*inputs):
        return {"op": "call_function", "target": "aten.mm.default", "inputs": list(inputs)}

    nodes = {
        "view_15": {"op": "call_function", "target": "aten.reshape.default", "inputs": ["tangents_1"]},
        "mm_1": mm("view_15", "permute_11"),
        "permute_12": {"op": "call_function", "target": "aten.permute.default", "inputs": ["view_15"]},
        "mm_2": mm("permute_12", "view_13"),
        "mm_4": mm("permute_16", "view_11"),
    }
    comment, passed = ["view_15", "permute_12", "permute_14"], ["reinterpret_tensor", "tangents_1", "view_13", "out"]
    assert extern_op_nodes("extern_kernels.mm", comment, nodes, set(), passed=passed) == ["mm_2"]
    assert extern_op_nodes("extern_kernels.mm", comment, nodes, {"mm_2"}, passed=passed) == ["mm_1"]


def test_graphs_triggers_guards_and_breaks_agree(both):
    captured, imported, _ = both
    script = pathlib.Path(ROOT, "tests", "dist_scripts", "trace_and_capture.py").read_text().splitlines()
    for c, i in _pairs(both):
        reason = c.trigger.reason
        if c.trigger.kind == "lazy_backward":
            # the capture has the line of the .backward() call; the log holds only dynamo's stack of the forward's
            # frame, which is not what compiled the backward: the import says so rather than cite the forward
            assert script[c.trigger.user_stack[-1].line - 1].strip() == "loss.backward()"
            assert i.trigger.user_stack == []
            reason += " (which line called it was not recorded)"
        assert (i.graph_kind, i.frame, i.trigger.kind, i.trigger.reason) == (
            c.graph_kind,
            c.frame,
            c.trigger.kind,
            reason,
        ), c.id
        assert i.guards == c.guards and i.guards
        assert set(i.graphs) == set(c.graphs)
        for g in c.graphs:
            key = lambda n: (n.name, n.op, n.target, n.inputs, n.shape, n.dtype)
            # a node of several outputs (the batch norm's var_mean) is printed without its type: no shape imported
            tuples = {
                n.name for n in c.graphs[g].nodes if n.op != "output" and n.shape and isinstance(n.shape[0], list)
            }
            untyped = lambda n: (*key(n)[:4], None, None) if n.name in tuples else key(n)  # noqa: E731
            assert [key(n) for n in i.graphs[g].nodes] == [untyped(n) for n in c.graphs[g].nodes], (c.id, g)
            assert i.graphs[g].code == c.graphs[g].code
        names = {p.name for p in i.phases}
        assert {"GraphLowering.run", "Scheduler.__init__"} <= names or c.graph_kind == "backward"
    assert "rank mismatch. expected 1, actual 2" in imported.compile("1/1 inference").trigger.reason
    assert [b.reason for b in imported.graph_breaks] == [b.reason for b in captured.graph_breaks]
    break_line = next(i for i, s in enumerate(script, 1) if 'print("graph break here")' in s)
    assert imported.graph_breaks and imported.graph_breaks[0].user_stack[-1].line == break_line
    # the frame after head()'s second break holds no tensor op: no compile, its id (3/0) said in both reports
    second = next(i for i, s in enumerate(script, 1) if 'print("and here")' in s)
    assert [(f.compile_id, f.label) for f in captured.empty_frames] == [("3/0", f"head() after line {second}")]

    # when dynamo began it: each from its own clock (the capture's callbacks, the log's events), so only both there
    def untimed(frames):
        return [dataclasses.replace(f, time_us=None, duration_us=None) for f in frames]

    assert untimed(imported.empty_frames) == untimed(captured.empty_frames)
    assert all(f.time_us is not None and f.duration_us for f in imported.empty_frames + captured.empty_frames)
    # each break says the frame it broke in: head()'s two breaks, then again in the recompile (a new call site)
    assert [b.compile_ids for b in captured.graph_breaks] == [["1/0"], ["2/0"], ["1/1"], ["2/1"]]
    assert [b.compile_ids for b in imported.graph_breaks] == [b.compile_ids for b in captured.graph_breaks]


def test_each_compile_is_said_to_start_at_the_call_the_capture_names(both, gpt2):
    """Dynamo's logged stack holds torch's and libraries' frames and ends with the frame it is about to trace, at that
    function's first line (``modeling_gpt2.py:647``, transformers' ``@can_return_tuple`` above GPT-2's ``forward``); the
    capture takes the user's frames of the live stack, where that frame is not yet. The import names the same call:
    the forward's ``loss = model(...)``, not ``MLP.forward``'s ``def`` line; after a graph break, ``head`` at the break
    (the frame that calls the resume function, which torch's stack leaves out), with its code."""
    captured, imported, tmp = both
    first_calls = {}  # frame id -> the frames torch logged where dynamo started on it (its first compile)
    for md, _, _ in TraceReader(str(next(tmp.glob("*.log")))):
        if "dynamo_start" in md and md.get("frame_id") not in first_calls:
            first_calls[md.get("frame_id")] = md["dynamo_start"]["stack"]
    pairs = _pairs(both) + list(zip(*(r.compiles for r in gpt2)))
    for c, i in pairs:
        if c.trigger.kind == "lazy_backward" or c.graph_kind == "backward":
            continue  # the log holds no stack of the .backward() call: test_graphs_triggers_guards_and_breaks_agree
        if c.id.startswith("1/"):
            # torch logs head()'s first frames with nothing above them ([head]): no line of the caller to name
            assert len(first_calls[1]) == 1 and i.trigger.user_stack == [], c.id
            continue
        assert i.trigger.user_stack == c.trigger.user_stack and i.trigger.line == c.trigger.line, c.id
    assert imported.compile("0/0 forward").trigger.line.endswith("loss = model(torch.randn(4, 8)).pow(2).sum()")
    assert imported.compile("2/0 inference").trigger.line.endswith('print("graph break here")')
    script = pathlib.Path(SCRIPT).read_text().splitlines()
    step = next(n for n, s in enumerate(script, 1) if s.strip() == "gpt(gpt2_inputs()).sum().backward()")
    # when dynamo began and when it handed the graph to Inductor, from the log's phases as from a capture's
    from inductor_lens.report.rules import fmt_us

    t = next(c.trigger for c in gpt2[1].compiles if c.trigger is not None and c.trigger.time_us is not None)
    assert t.inductor_start_us is not None and t.time_us < t.inductor_start_us < t.inductor_end_us
    said = f"The first call of GPT2.forward() (trace_and_capture.py:{step}) started the compile: dynamo began at "
    assert said in gpt2[1].when, gpt2[1].when
    assert gpt2[1].when.endswith(
        "then handed the graph to Inductor (compile_fx), which lowered, fused and generated code until "
        + fmt_us(t.inductor_end_us)
        + "."
    ), gpt2[1].when


def test_a_fallback_calls_lines_are_its_own_ops_as_captured(recorded):
    """Torch's provenance gives the CPU SDPA call the whole stacks of its origins, the q/k/v split and view lines
    before it too; a log prints each op's innermost frame only, so those stacks are matched to the ops by it
    (``build.own_traces``): the call has its own line, as captured, and the views' kernels keep theirs."""
    captured, imported = recorded[3]
    script = pathlib.Path(SCRIPT).read_text().splitlines()
    sdpa_line = next(n for n, s in enumerate(script, 1) if "scaled_dot_product_attention(q, k, v" in s)
    for c, i in zip(captured.compiles, imported.compiles):
        for kc, ki in zip(c.kernels, i.kernels):
            assert ki.name == kc.name
            assert [(f.file, f.line) for f in ki.user_lines] == [(f.file, f.line) for f in kc.user_lines], kc.name
    (call,) = [k for k in imported.kernels if "scaled_dot_product" in k.name]
    assert call.fx_nodes and [(f.line, f.code) for f in call.user_lines] == [(sdpa_line, script[sdpa_line - 1].strip())]


def test_what_each_kernel_writes_in_place_is_read_from_the_log(both):
    """The log holds no scheduler buffers, so a kernel's in-place writes are read from the ``copy_`` nodes it runs in
    the post-grad graph: the MLP's batch norm (its running stats and step count, buffers of the model) and the
    global ``STEPS`` its forward adds to. Per kernel, the graph inputs it writes are the captured ones, and the
    sentence names them as the capture does (the capture says it per fused node, the import per kernel)."""
    captured, imported, _ = both

    def written(compile_):
        by_kernel: dict = {}
        for f in compile_.fused_nodes:
            if f.kernel and f.mutates:
                by_kernel.setdefault(f.kernel, set()).update(f.mutates)
        return by_kernel

    c, i = captured.compile("0/0 forward"), imported.compile("0/0 forward")
    assert written(i) == written(c) and len(set().union(*written(c).values())) == 4, (written(i), written(c))
    names = {n.name: n.display_name for n in c.graphs["post_grad"].nodes if n.op == "placeholder"}
    said = " ".join(f.in_place for f in i.fused_nodes)
    for name in ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked"):
        assert name in names.values() and name in said, said
    assert "Writes STEPS in place (graph input" in said and "a global of your code" in said, said
    assert "buffers of your model" in said
    for f in i.fused_nodes:  # one sentence per input written, in the graph's input order
        if f.mutates:
            places = [n for n in names if n in f.mutates]
            assert f.mutates == places, (f.mutates, places)
    for c, i in _pairs(both)[1:]:  # nothing else writes a graph input in place, either way
        graph_inputs = set(c.graph_inputs)
        inputs_written = {k: v & graph_inputs for k, v in written(c).items() if v & graph_inputs}
        assert written(i) == inputs_written == {}, c.id
    # what the log cannot show: the custom op writes a buffer made in its graph (buf0), which the capture sees
    assert any(written(c) for c, _ in _pairs(both)[1:])


def test_what_a_trace_cannot_hold_is_said(both):
    _, imported, _ = both
    for c in imported.compiles:
        assert c.fusion_decisions == []
        assert all(f.kernel for f in c.fused_nodes)  # one fused node per kernel launch
    text = "\n".join(map(str, imported.diagnostics))
    assert "before fusion" in text and "call stack" in text


def test_an_imported_kernels_merge_text_never_guesses_what_lowering_and_the_scheduler_did(both):
    """A TORCH_TRACE log holds no scheduler nodes before fusion, no lowering functions and no call stacks of Inductor:
    each imported compile says so (``Compile.unrecorded``, drawn in the panel's sections), and a fused node's merge
    text lists its ops and says where they were merged is not known, where it said "Inductor's lowering inlined
    them ... The scheduler fused nothing into it: one scheduler node" of a kernel the capture shows fused from
    several; an extern call's text is the capture's."""
    from inductor_lens.report.rules import TRACE_UNRECORDED

    checked = 0
    for c, i in _pairs(both):
        assert c.unrecorded == {} and i.unrecorded == TRACE_UNRECORDED, c.id
        captured = {f.kernel: f.merge_text for f in c.fused_nodes if f.kind == "extern"}
        for f in i.fused_nodes:
            if f.kind == "extern":  # (the custom op's call is another kind of node in the capture)
                assert f.merge_text == captured.get(f.kernel, f.merge_text), (c.id, f.name)
                assert f.merge_text.startswith("An extern call ("), (c.id, f.name)
            elif not f.is_glue:
                assert f.merge_text.endswith(TRACE_UNRECORDED["merge"]), (c.id, f.name, f.merge_text)
                assert "fused nothing" not in f.merge_text and "inlined them" not in f.merge_text
                checked += bool(f.ops)
    assert checked >= 3  # C++ kernels whose ops torch's provenance map gives


def test_import_trace_cli_writes_a_page(both, tmp_path):
    from inductor_lens.views.cli import main

    out = tmp_path / "trace.html"
    assert main(["import-trace", str(both[2]), "-o", str(out), "-q", "--json", str(tmp_path / "t.json")]) == 0
    assert out.stat().st_size > 100_000 and "<script" in out.read_text()
    assert inductor_lens.load(str(tmp_path / "t.json")).origin == "trace"


def test_one_log_per_rank_opens_as_a_job(both, tmp_path):
    (log,) = list(both[2].iterdir())
    for rank in (0, 1):
        shutil.copy(log, tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log")
    job = inductor_lens.load_trace(str(tmp_path))
    assert isinstance(job, inductor_lens.Job)
    assert sorted(job.reports) == [0, 1] and job.world_size == 2
    assert job.report(1).rank == 1 and job.report(1).origin == "trace"
    assert job.divergence == []  # the same log twice: the ranks agree


def test_bad_paths_say_what_was_expected(tmp_path):
    with pytest.raises(FileNotFoundError, match="no TORCH_TRACE log"):
        inductor_lens.load_trace(str(tmp_path / "nope"))
    (tmp_path / "x.log").write_text("hello\nworld\n")
    with pytest.raises(TraceError, match="no structured-trace record"):
        inductor_lens.load_trace(str(tmp_path / "x.log"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TraceError, match="no .log file"):
        inductor_lens.load_trace(str(empty))


@pytest.fixture(scope="module")
def gpt2(recorded):
    """(captured, imported) of a two-block GPT-2 training step, recorded both ways at once."""
    return recorded[1]


def test_a_gpt2_training_step_imports_with_exactly_the_captured_kernels(gpt2):
    captured, imported = gpt2
    assert [c.id for c in imported.compiles] == [c.id for c in captured.compiles] == ["0/0 forward", "0/0 backward"]
    for c, i in zip(captured.compiles, imported.compiles):
        assert [k.name for k in i.kernels] == [k.name for k in c.kernels], c.id
        for kc, ki in zip(c.kernels, i.kernels):
            assert (ki.language, ki.source) == (kc.language, kc.source), (c.id, kc.name)
        # every kernel is held by a fused node of the imported compile, as in the captured one
        assert {f.kernel for f in i.fused_nodes if f.kernel} == {k.name for k in i.kernels}
        assert {f.kernel for f in c.fused_nodes if f.kernel} == {k.name for k in c.kernels}
        # a kernel's kind is the same both ways: a reduction where any of the captured fused nodes reduces
        kinds = {}
        for f in c.fused_nodes:
            if f.kernel:
                kinds.setdefault(f.kernel, set()).add(f.kind)
        for f in i.fused_nodes:
            if f.kernel:
                want = "reduction" if "reduction" in kinds[f.kernel] else kinds[f.kernel]
                assert f.kind == want or f.kind in want, (c.id, f.kernel, f.kind, kinds[f.kernel])
    assert len(imported.kernels) == len(captured.kernels) > 20


def test_graph_inputs_are_named_as_captured(gpt2):
    """Dynamo's printed placeholders (``L_self_modules_h_modules_0_..._parameters_weight_``) name the inputs: each
    forward input has the role and name the capture gave it (``h.0.attn.qkv.weight``, ``idx``)."""
    captured, imported = gpt2
    roles = lambda c: [(n.name, n.role, n.display_name) for n in c.graphs["post_grad"].nodes if n.op == "placeholder"]  # noqa: E731
    assert roles(imported.compile("0/0 forward")) == roles(captured.compile("0/0 forward"))
    assert ("primals_6", "parameter", "h.0.attn.qkv.weight") in roles(imported.compile("0/0 forward"))


def test_inferred_module_paths_agree_with_the_captured_ones(gpt2):
    """The log prints no module paths; the import infers them (report/module_paths.py) from the parameters each op
    reads, the gradients it makes and the ops around it. Against the capture of the same step: no op's path is
    deeper than or beside the captured one, none where the capture has none, most are the same, and so are the
    kernels' modules. The LM head's weight is tied to ``wte``'s: its matmuls are ``lm_head``'s, as captured, not the
    embedding's (the parameter the log names), and the gradient summed from both is neither's; autograd's sums of
    the gradients of a value used twice (the residual stream) have no module, as captured."""
    from inductor_lens.report.module_paths import majority_stack

    captured, imported = gpt2
    for c, i in zip(captured.compiles, imported.compiles):
        assert i.modules_inferred and not c.modules_inferred, c.id
        truth = {n.name: n.module_stack for n in c.graphs["post_grad"].nodes}
        ops = [n for n in i.graphs["post_grad"].nodes if n.op == "call_function" and truth.get(n.name)]
        assert len(ops) > 150
        wrong = [
            (n.name, n.module_stack, truth[n.name])
            for n in ops
            if truth[n.name][: len(n.module_stack)] != n.module_stack
        ]
        assert not wrong, (c.id, wrong[:5])  # the captured path or a prefix of it, never another
        invented = [
            (n.name, n.module_stack)
            for n in i.graphs["post_grad"].nodes
            if n.op == "call_function" and n.name in truth and not truth[n.name] and n.module_stack
        ]
        assert not invented, (c.id, invented[:5])
        mm = "mm" if c.graph_kind == "forward" else "mm_2"  # the logits' matmul, its input's gradient
        assert truth[mm] == ["lm_head"] == {n.name: n for n in i.graphs["post_grad"].nodes}[mm].module_stack, c.id
        assert sum(truth[n.name] == n.module_stack for n in ops) >= 0.55 * len(ops), c.id
        # each kernel call's module: the majority of the captured fused nodes of that call
        by_name = {f.name: f for f in c.fused_nodes}
        called = {
            (k.name, j): majority_stack(by_name[f].module_stack for f in site if f in by_name)
            for k in c.kernels
            for j, site in enumerate(k.call_sites)
        }
        bare = {
            (k.name, j)
            for k in c.kernels
            for j, site in enumerate(k.call_sites)
            if not any(by_name[f].module_stack for f in site if f in by_name)
        }
        seen: dict = {}
        same = compared = 0
        for f in i.fused_nodes:
            if f.is_glue or not f.kernel:
                continue
            j = seen[f.kernel] = seen.get(f.kernel, -1) + 1
            want = called.get((f.kernel, j))
            if (f.kernel, j) in bare:  # none of the captured nodes of this call has a module: nor has the import's
                assert f.module_stack == [], (c.id, f.name, f.module_stack)
            if want:
                compared += 1
                same += f.module_stack == want
                assert want[: len(f.module_stack)] == f.module_stack, (c.id, f.name, f.module_stack, want)
        assert compared >= 25 and same >= 0.8 * compared, (c.id, same, compared)
    # the backward's two blocks, run last first, fold into one box as the forward's would
    backward = imported.compile("0/0 backward")
    assert [r.label for r in backward.module_view.repeats] == ["h.0-1"]
    assert any("were inferred" in d.message for d in imported.diagnostics)


def test_a_kernel_with_no_provenance_says_why_it_has_no_line(both):
    """A fused node of the import with no FX op says that the log has no provenance map for its kernel (not that
    its ops come from code inside torch); the live capture's nodes with ops but no recorded stack say the latter.
    Decided in Python (``FusedNode.no_line_reason``), drawn by the panel as it is."""
    from inductor_lens.report import rules

    captured, imported, _ = both
    for c in imported.compiles:
        for n in c.fused_nodes:
            if n.user_lines:
                assert n.no_line_reason == "", (c.id, n.name)
            elif not n.fx_nodes:
                assert n.no_line_reason == rules.NO_PROVENANCE, (c.id, n.name)
            else:
                assert n.no_line_reason == rules.INSIDE_TORCH, (c.id, n.name)
    for c in captured.compiles:
        for n in c.fused_nodes:
            assert n.no_line_reason == ("" if n.user_lines else rules.no_line_reason(False, n.fx_nodes)), n.name
            assert n.no_line_reason != rules.NO_PROVENANCE


def test_a_log_without_provenance_says_so_on_each_kernel_it_cannot_link(both, tmp_path):
    """The same log with torch's provenance records taken out (as without INDUCTOR_PROVENANCE=1): the kernels the
    output code's comments do not link either have no FX op, and each of their boxes says why."""
    from inductor_lens.report import rules

    (log,) = sorted(both[2].glob("*.log"))
    keep, skip = [], False
    for line in log.read_text(encoding="utf-8").split("\n"):
        if not line.startswith("\t"):  # a record's metadata line; its payload lines start with a tab
            skip = "inductor_provenance" in line[:400]
        if not skip:
            keep.append(line)
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / log.name).write_text("\n".join(keep), encoding="utf-8")
    imported = inductor_lens.load_trace(str(tmp_path / "log"))
    unlinked = [n for c in imported.compiles for n in c.fused_nodes if not n.fx_nodes]
    assert unlinked and all(n.no_line_reason == rules.NO_PROVENANCE for n in unlinked)
    assert "trace_unlinked" in [d.code for d in imported.diagnostics]


def test_an_imported_backwards_outputs_are_named_by_what_they_are_the_gradient_of_as_captured(both, gpt2):
    """The log prints the backward's return with its Nones (``return (None, view_51, mm_12, ...)``); the
    import keeps their positions (``GraphNode.returns``) and names each output by the forward input it is the
    gradient of, as the capture does (an MLP whose input ``x`` needs no gradient; GPT-2, whose ``idx`` cannot have
    one): each post-grad node returned has the same name both ways."""
    for captured, imported in (both[:2], gpt2):
        c, i = captured.compile("0/0 backward"), imported.compile("0/0 backward")
        want = {c.output_nodes[b]: shown for b, shown in c.output_names.items()}
        assert {b: shown for b, shown in i.output_names.items()} == want  # the import's buffers are its nodes
        assert want and all(shown.endswith(".grad") for shown in want.values()), want
        (out_c,) = [n for n in c.graphs["post_grad"].nodes if n.op == "output"]
        (out_i,) = [n for n in i.graphs["post_grad"].nodes if n.op == "output"]
        assert out_i.returns == out_c.returns and "" in out_i.returns
        assert i.forward_inputs == c.forward_inputs


def test_a_printed_graphs_return_keeps_its_positions():
    """The output node's ``inputs`` are the nodes it returns, each once; ``returns`` keeps every position, ``""``
    for a None (a backward's gradient of an input needing none), so the i-th is the i-th forward input's gradient."""
    from inductor_lens.capturing.trace_graph import parse_readable_graph

    text = """class GraphModule(torch.nn.Module):
    def forward(self, primals_2: "f32[4, 8]", tangents_1: "f32[4, 16]"):
        mm: "f32[16, 8]" = torch.ops.aten.mm.default(tangents_1, primals_2)
        sum_1: "f32[16]" = torch.ops.aten.sum.dim_IntList(tangents_1, [0])
        return (mm, None, sum_1, mm)
"""
    (out,) = [n for n in parse_readable_graph(text) if n["op"] == "output"]
    assert out["inputs"] == ["mm", "sum_1"] and out["returns"] == ["mm", "", "sum_1", "mm"]


def test_a_printed_graphs_line_comments_give_the_forward_line_whatever_torch_writes_before_it():
    """Torch 2.15 prints a backward's op under ``# Backward of forward node: File: ...`` (2.13: ``# File: ...``), and
    may write an annotation, a recompute tag or extra metadata before ``File:``: each op gets the forward's line, as the
    capture records it (its ``stack_trace`` is the forward op's); the TORCH_TRACE import's tied-weight rule reads it."""
    from inductor_lens.capturing.trace_graph import parse_readable_graph

    line = "File: /m/gpt.py:81 in forward, code: return self.lm_head(self.ln_f(x))"
    text = f"""class GraphModule(torch.nn.Module):
    def forward(self, primals_2: "f32[256, 64]", tangents_1: "f32[64, 256]"):
        # {line}
        permute_18: "f32[64, 256]" = torch.ops.aten.permute.default(primals_2, [1, 0])

        # Backward of forward node: {line}
        permute_21: "f32[256, 64]" = torch.ops.aten.permute.default(permute_18, [1, 0])

        # No stacktrace found for following nodes
        mm_1: "f32[64, 64]" = torch.ops.aten.mm.default(tangents_1, permute_21)

        # Annotation: {{'stage': 1}} recompute: MUST_SAVE Backward of forward node: {line}
        mm_2: "f32[64, 64]" = torch.ops.aten.mm.default(tangents_1, permute_21)

        # seq_nr: 3 # {line}
        mm_3: "f32[64, 64]" = torch.ops.aten.mm.default(mm_2, mm_1)
        return (mm_3,)
"""
    stacks = {n["name"]: n["stack_trace"] for n in parse_readable_graph(text) if n["op"] == "call_function"}
    want = '  File "/m/gpt.py", line 81, in forward\n    return self.lm_head(self.ln_f(x))\n'
    assert stacks == {"permute_18": want, "permute_21": want, "mm_1": "", "mm_2": want, "mm_3": want}


def test_dynamo_placeholder_names_give_their_source():
    """A log prints dynamo's graph inputs by name only: the name gives the source, so the role and display name."""
    from inductor_lens.report.rules import placeholder_source, source_role

    name = "L_self_modules_h_modules_0_modules_ln_1_parameters_weight_"
    assert source_role(placeholder_source(name)) == ("parameter", "h.0.ln_1.weight")
    assert source_role(placeholder_source("L_self_modules_rope_buffers_inv_freq_")) == ("buffer", "rope.inv_freq")
    assert source_role(placeholder_source("L_input_ids_")) == ("input", "input_ids")
    assert placeholder_source("primals_1") == "" and placeholder_source("L_self_modules__parameters_w_") == ""


def test_the_forwards_blocks_fold_into_one_repeat_though_block_0_fused_the_embeddings(gpt2):
    """A CPU training forward of GPT-2: block 0 fused the embeddings into its norms (more fused nodes than block 1),
    but both blocks ran the same sub-modules in the same order: they fold into one repeat that says so."""
    captured, _ = gpt2
    forward = captured.compile("0/0 forward")
    (r,) = forward.module_view.repeats
    assert r.modules == ["h.0", "h.1"] and r.same == "modules"
    boxes = [n for n in forward.fused_nodes if not n.is_glue]
    # independent of modules.py: each block's fused nodes, and the sub-modules they ran, in order
    own = {m: [n for n in boxes if m in n.module_stack] for m in r.modules}
    subs = {
        m: list(dict.fromkeys(n.module_stack[-1][len(m) + 1 :] for n in own[m] if n.module_stack[-1] != m)) for m in own
    }
    assert subs["h.0"] == subs["h.1"] and "attn.qkv" in subs["h.0"]
    low, high = sorted(len(v) for v in own.values())
    assert low < high
    assert r.summary.startswith(f"h.0-1 ×2: the same sub-modules, {low}-{high} fused nodes each")
    assert [r.label for r in captured.compile("0/0 backward").module_view.repeats] == ["h.0-1"]


def test_a_fallback_kernel_is_tied_to_its_node_without_provenance():
    """A log made without INDUCTOR_PROVENANCE names no node of a kernel: an extern or fallback call is tied to the
    first node of its op (``extern_kernels.mm`` -> ``aten.mm``; ``torch.ops.aten.convolution_backward.default`` ->
    ``aten.convolution_backward``), and dropout's seeds, which Inductor draws with ``aten.randint.low_out``, to the
    ``prims.inductor_seeds`` node the capture ties it to."""
    from inductor_lens.capturing.trace_graph import extern_op_nodes

    nodes = {
        "inductor_seeds_default": {"op": "call_function", "target": "prims.inductor_seeds.default"},
        "mm": {"op": "call_function", "target": "aten.mm.default"},
        "convolution_backward": {"op": "call_function", "target": "aten.convolution_backward.default"},
        "getitem": {"op": "call_function", "target": "_operator.getitem"},
    }
    assert extern_op_nodes("aten.randint.low_out", [], nodes, set()) == ["inductor_seeds_default"]
    assert extern_op_nodes("extern_kernels.mm", [], nodes, set()) == ["mm"]
    assert extern_op_nodes("extern_kernels.mm", [], nodes, {"mm"}) == []  # each node is one call's
    conv = "torch.ops.aten.convolution_backward.default"
    assert extern_op_nodes(conv, ["getitem", "convolution_backward"], nodes, set()) == ["convolution_backward"]


def test_the_launches_of_a_graph_split_into_cuda_graph_partitions_are_read_where_call_runs_them():
    """With CUDA graphs, Inductor splits a graph into partitions (``def partition_0(args)`` at the top level, run by
    ``Runner.call`` as ``self.partitions[0](...)``): an import read ``call()`` alone and found no kernel. Each
    partition's launches are read where ``call()`` runs it: the kernels of the H200's capture, in their order."""
    from inductor_lens.capturing.parse import parse_output_code_kernels
    from inductor_lens.capturing.trace_graph import call_launches

    fixture = pathlib.Path(ROOT, "tests", "fixtures", "gpu_metal_cudagraphs.json.gz")
    checked = 0
    for c in inductor_lens.load(str(fixture)).compiles:
        if "\ndef partition_0(" not in c.output_code:
            continue
        launches = call_launches(c.output_code, set(parse_output_code_kernels(c.output_code)))
        names = [f"{x['name']}[{x['buffer']}]" if x["extern"] and x["buffer"] else x["name"] for x in launches]
        assert names == [k.name for k in c.kernels], c.id
        checked += 1
    assert checked >= 2


def test_an_imported_compiles_memory_is_the_captured_ones(both, gpt2):
    """The Memory view of an imported compile is built from the log's output code (its allocations, reuses, dels and
    launches in order) and post-grad graph: its peak, the buffers alive there, what the forward saves and the net peak
    equal the capture's, which reads Inductor's scheduler (a new user's trial, nu20 D6: no Memory view at all)."""
    from inductor_lens.capturing import trace_memory

    for captured, imported in (both[:2], gpt2):
        assert "memory" in imported.views
        assert "trace_no_memory" not in {d.code for d in imported.diagnostics}
        for c, i in zip(captured.compiles, imported.compiles):
            cm, im = c.memory, i.memory
            assert im is not None and im.source.startswith(trace_memory.SOURCE), i.id
            assert "from the output code of the TORCH_TRACE log" in im.source
            # an extern call's result its output code drops (``buf1 = aten.sort.stable(buf0)``, only ``buf1[0]`` read:
            # the indices, i64[6]) is allocated by the call, which the capture counts (Inductor's MultiOutput it
            # dropped) and the log does not size (its graph never names the item): said in the import's source
            sort = [n for n in c.graphs["post_grad"].nodes if str(n.target).startswith("aten.sort")]
            dropped = sum(math.prod(n.shape[1]) * 8 for n in sort)  # the int64 indices of each sort's call
            if dropped:
                assert "an extern call's results its output code drops" in im.source, i.id
            assert im.peak_bytes + dropped == cm.peak_bytes, i.id
            assert cm.peak_buffer_count - im.peak_buffer_count in ((0, 1) if dropped else (0,)), i.id
            if not dropped:
                assert sorted(b.bytes for b in im.peak_buffers) == sorted(b.bytes for b in cm.peak_buffers), i.id
            assert (im.input_bytes, im.saved_bytes, im.saved_activation_bytes) == (
                cm.input_bytes,
                cm.saved_bytes,
                cm.saved_activation_bytes,
            ), i.id
            assert [p.live_bytes for p in im.timeline][-1] == [p.live_bytes for p in cm.timeline][-1], i.id
    fwd, bwd = gpt2[1].compiles
    assert fwd.memory.peak_bytes > 100_000 and bwd.memory.peak_bytes > 100_000
    assert fwd.memory.saved_by_module_folded  # the rows name the modules inferred for the import


def test_a_compile_whose_output_code_cannot_be_read_has_no_memory_and_says_why(both):
    """A C++ wrapper's output code (``cpp_wrapper=True``) has no Python ``call()`` to read, and a compile with no
    output code nothing: no memory, and the ``trace_no_memory`` diagnostic says which compile and why."""
    from inductor_lens.capturing import trace_memory
    from inductor_lens.capturing.trace_import import no_memory_text

    c = both[1].compiles[0]
    cpp = dataclasses.replace(
        c, output_code="#include <torch/csrc/inductor/cpp_wrapper/cpu.h>\nvoid inductor_entry_impl() {}"
    )
    made, why = trace_memory.with_memory(cpp, "cpu")
    assert made.memory is None and "C++ wrapper" in why
    made, why = trace_memory.with_memory(dataclasses.replace(c, output_code=""), "cpu")
    assert made.memory is None and "no output code" in why
    compiles, reasons = trace_memory.imported_memory([cpp], "cpu")
    assert compiles[0].memory is None and len(reasons) == 1 and "C++ wrapper" in reasons[0]
    text = no_memory_text(reasons)
    assert text.startswith(f"no Memory view for {c.id}: ") and "C++ wrapper" in text


DYNAMIC = pathlib.Path(ROOT, "tests", "fixtures", "trace-dynamic")


def test_an_imported_recompile_with_automatic_dynamic_shapes_counts_its_buffers_at_the_hints_the_log_holds():
    """nu30 D4: a recompile with automatic dynamic shapes (batch 16 after 8: sizes ``s77``, ``s17``, backed by a hint
    of 16) imported with a memory peak of 4 B and 0 B where the live capture says 4,100 B and 6,144 B, its buffers
    "data-dependent (nonzero, unique, a boolean mask)". The output code holds the hints (``get_args()``: ``arg0_1 =
    16``, bound by ``s17 = arg0_1``): counted at them, and said so, as the capture does. By hand, at 16 rows: 0/1's
    linear writes [16, 64] float32 (4,096 B) and the norm a 4-byte scalar; 2/1's attention writes [1, 16, 1, 64]
    (4,096 B), live while the linear writes [16, 32] (2,048 B); its inputs [16, 64], [32, 64] and [32] (12,416 B)."""
    imported = inductor_lens.load_trace(str(DYNAMIC))
    memory = {c.id: c.memory for c in imported.compiles}
    assert memory["0/1 inference"].peak_bytes == 4096 + 4 and memory["0/1 inference"].sizes_at == "at s77=16"
    two = memory["2/1 inference"]
    assert (two.peak_bytes, two.sizes_at, two.input_bytes) == (4096 + 2048, "at s17=16", 4096 + 8192 + 128)
    assert two.uncounted == [] and not two.at_least and "data-dependent" not in two.source
    assert two.peak_text.endswith("(at s17=16)")


def test_an_imported_buffer_of_a_backed_size_whose_hint_the_log_lacks_is_not_called_data_dependent():
    """nu30 D4: where the output code does not hold a backed size's hint, the buffers it sizes are not counted, and
    the reason is that one, never "data-dependent (nonzero, unique, a boolean mask)"."""
    from inductor_lens.capturing.trace_memory import with_memory

    c = inductor_lens.load_trace(str(DYNAMIC)).compile("2/1 inference")
    assert "\n    arg0_1 = 16\n" in c.output_code
    made, why = with_memory(
        dataclasses.replace(c, output_code=c.output_code.replace("\n    arg0_1 = 16\n", "\n")), "cpu"
    )
    m = made.memory
    assert why == "" and m.uncounted == ["buf1", "buf3", "buf4"] and m.at_least, m.uncounted
    assert "a backed dynamic size, s17, whose value at the compile the log does not hold" in m.source
    assert "data-dependent" not in m.source
