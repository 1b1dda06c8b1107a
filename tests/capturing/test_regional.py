"""Regional compilation (``torch.compiler.nested_compile_region``, nu30 D1): Inductor lowers the repeated block once
as a subgraph (``repeated_subgraph0``) and the main graph calls it through ``invoke_subgraph`` once per layer. One
small capture, shared by the tests of this file."""

from __future__ import annotations

import collections
import contextlib
import logging
import re

import pytest
import torch
import torch.nn.functional as F

import inductor_lens


class _Layer(torch.nn.Module):
    def __init__(self, d: int = 8):
        super().__init__()
        self.up = torch.nn.Linear(d, 2 * d)
        self.down = torch.nn.Linear(d, d)

    @torch.compiler.nested_compile_region
    def forward(self, x):
        a, b = self.up(x).chunk(2, -1)
        return x + self.down(F.silu(a) * b)


class _Stack(torch.nn.Module):
    def __init__(self, n: int = 2):
        super().__init__()
        self.layers = torch.nn.ModuleList([_Layer() for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x.sum(-1)


@contextlib.contextmanager
def _torch_trace(folder):
    """A TORCH_TRACE log of what compiles inside, in ``folder``, written by torch's own trace formatter (as
    ``TORCH_TRACE`` with ``INDUCTOR_PROVENANCE=1``)."""
    from torch._logging._internal import TorchLogsFormatter

    handler = logging.FileHandler(folder / "dedicated_log_torch_trace_0.log")
    handler.setFormatter(TorchLogsFormatter(trace=True))
    trace = logging.getLogger("torch.__trace")
    level, propagate = trace.level, trace.propagate
    trace.addHandler(handler)
    trace.setLevel(logging.DEBUG)
    trace.propagate = False
    try:
        with torch._inductor.config.patch({"trace.provenance_tracking_level": 1}):
            yield
    finally:
        trace.removeHandler(handler)
        handler.close()
        trace.setLevel(level)
        trace.propagate = propagate


@pytest.fixture(scope="module")
def regional(tmp_path_factory):
    """(captured report, its main compile, the region's compile, the report imported from the TORCH_TRACE log of the
    same compile)."""
    torch.manual_seed(0)
    m, x = _Stack(), torch.randn(2, 3, 8)
    logs = tmp_path_factory.mktemp("regional_trace")
    with torch.no_grad(), _torch_trace(logs):
        expected = m(x)
        with inductor_lens.capture() as cap:
            out = torch.compile(m)(x)
    torch.testing.assert_close(out, expected)
    report = cap.report
    main = next(c for c in report.compiles if not c.subgraph)
    (region,) = [c for c in report.compiles if c.subgraph]
    return report, main, region, inductor_lens.load_trace(str(logs))


def test_each_call_of_a_repeated_region_is_a_box_of_its_layer_linked_to_the_regions_compile(regional):
    """Each call was glue ("a no-op, a view, or a buffer reuse"), with no link to the region's compile, and the second
    call's module was the top level's (its origins held the first call's get_attr, in layers.0)."""
    report, main, region, _ = regional
    assert region.subgraph == "repeated_subgraph0" and len(region.kernels) == 4  # 2 addmm, 2 C++ kernels
    calls = [n for n in main.fused_nodes if "invoke_subgraph" in n.ops]
    assert [n.module_stack[-1:] for n in calls] == [["layers.0"], ["layers.1"]]
    assert main.contents == "3 fused nodes (2 invoke_subgraph, 1 reduction) in 1 kernel"  # not "2 extern"
    for n in calls:
        assert not n.is_glue and n.kernel is None, n
        assert [(b.name, b.compile) for b in n.branch_compiles] == [("repeated_subgraph0", region.id)]
        assert n.label == "repeated_subgraph0 (4 kernels)"
        assert n.no_kernel_reason.startswith("Calls repeated_subgraph0 here, which launches its 4 kernels"), n
        assert "no-op" not in n.no_kernel_reason
        assert n.merge_text.startswith("A call of invoke_subgraph's subgraphs"), n.merge_text  # "a library kernel"


def test_a_region_calls_box_is_a_call_of_one_op_not_an_extern_kernel_of_two(regional):
    """nu30 (seen again in nu24's trial): a call's box said ``#0 · extern · 2 ops`` where the compile's contents line
    says ``invoke_subgraph``: Inductor's scheduler holds the call as an extern node, and its FX nodes are the call and
    the ``get_attr`` of the region. Every view draws, counts and colours it by FusedNode.box_kind, one op."""
    _, main, _, _ = regional
    calls = [n for n in main.fused_nodes if "invoke_subgraph" in n.ops]
    post = {n.name: n for n in main.graphs["post_grad"].nodes}
    for n in calls:
        assert n.kind == "extern" and n.box_kind == "invoke_subgraph", n  # the scheduler's kind is kept as recorded
        assert sorted(post[f].op for f in n.fx_nodes) == ["call_function", "get_attr"] and n.op_count == 1, n
    boxes = [n for n in main.fused_nodes if not n.is_glue]
    assert all(n.box_kind == n.kind for n in boxes if n not in calls)
    counts = collections.Counter(n.box_kind for n in boxes)
    assert main.contents.startswith(
        f"{len(boxes)} fused nodes (" + ", ".join(f"{v} {k}" for k, v in counts.most_common())
    )


def test_the_repeated_regions_compile_says_who_calls_it_and_how_often(regional):
    """Its note called it "a torch.cond branch or a loop body" that runs when the graph "takes this branch"."""
    report, main, region, _ = regional
    note = region.graph_note
    assert note.startswith("A repeated region (repeated_subgraph0)"), note
    assert f"{main.id} calls it 2 times, from layers.0, layers.1: every time, unconditionally" in note, note
    assert "(8 in all)" in note and "torch.cond" not in note
    assert "named after one call's (in layers.0)" in note, note  # the module its boxes are in


def test_the_main_graphs_memory_follows_the_frees_of_its_output_code(regional):
    """Each layer's output was charged to the final sum's kernel and all were alive at its peak, though the output
    code frees each after the next layer's call (``buf1 = buf0[0]; del buf0; ... del buf1``)."""
    report, main, region, _ = regional
    code = main.output_code[main.output_code.index("def call(") :]
    # torch's own output code: the first layer's result is freed before the sum's kernel is called
    assert code.index("del buf1") < code.index("cpp_fused_sum")
    points = {p.node: p for p in main.memory.timeline}
    first, second = [n.name for n in main.fused_nodes if "invoke_subgraph" in n.ops]
    (total,) = [n.name for n in main.fused_nodes if n.kernel and "sum" in n.ops]
    layer_out = 2 * 3 * 8 * 4  # a float32 (2, 3, 8)
    # what the region holds while each call runs (the next test)
    assert [b.name for b in points[first].allocates] == [f"repeated_subgraph0 at {first}: its own buffers", "buf1"]
    assert [b.name for b in points[second].frees] == [f"repeated_subgraph0 at {second}: its own buffers", "buf1"]
    extra = points[first].allocates[0].bytes
    assert main.memory.peak_bytes == 2 * layer_out + extra  # the second call's input and output, and its inside
    assert points[total].live_bytes == layer_out + 2 * 3 * 4  # the last layer's output, and the (2, 3) sum
    assert re.search(r"buf\d+ = repeated_subgraph0\(", code)


def test_each_call_of_a_region_holds_what_the_region_allocates_inside_at_its_peak(regional):
    """The calling graph's curve did not add the region's own buffers during each call: ``up``'s (2, 3, 16) output
    and ``silu(a) * b`` live inside ``repeated_subgraph0`` were in no point of it, its peak said 384 B where 768 B are
    alive during the second call. Each call's point holds the region's peak less what it returns (the call's own
    buffer, counted already), named by the region, and the peak's table and text say it."""
    report, main, region, imported = regional
    layer_out = 2 * 3 * 8 * 4
    extra = region.memory.peak_bytes - layer_out  # the region returns one (2, 3, 8) float32
    assert extra == 2 * 3 * 16 * 4 and extra > 0  # up's output and silu(a) * b (half its size) at once, less the output
    calls = [n.name for n in main.fused_nodes if "invoke_subgraph" in n.ops]
    points = {p.node: p for p in main.memory.timeline}
    for name in calls:
        (own,) = [b for b in points[name].allocates if b.name == f"repeated_subgraph0 at {name}: its own buffers"]
        assert own.bytes == extra and own in points[name].frees  # alive at its call only
    (held,) = [b for b in main.memory.peak_buffers if b.name == f"repeated_subgraph0 at {calls[1]}: its own buffers"]
    assert (held.bytes, held.node, held.op, held.module) == (extra, calls[1], "invoke_subgraph", "layers.1")
    assert main.memory.peak_text.endswith(f"{layer_out * 2 + extra} B") and "repeated region" in main.memory.source
    # the import reads the same: each call's results sized by the region's return (no assertion follows a call in
    # call(): they were "of a size known only when the graph runs"), held by the list the call takes until it runs
    imain = next(c for c in imported.compiles if not c.subgraph)
    assert imain.memory.uncounted == [] and "known only when" not in imain.memory.peak_text
    assert [p.live_bytes for p in imain.memory.timeline] == [p.live_bytes for p in main.memory.timeline]


def test_an_imported_log_reads_the_region_as_a_compile_of_its_own_called_by_each_layer(regional):
    """nu30 D2: the import dropped the region's compile and its 2 addmm launches, put its C++ kernels in the main
    compile ("in the output code but Inductor did not say which nodes it implements"), and drew no call of it."""
    report, main, region, imported = regional
    assert [(c.id, c.subgraph) for c in imported.compiles] == [(c.id, c.subgraph) for c in report.compiles]
    imain = next(c for c in imported.compiles if not c.subgraph)
    (iregion,) = [c for c in imported.compiles if c.subgraph]
    # the same kernels in the same compiles as the capture: the region's 2 addmm calls among them
    assert [k.name for k in imain.kernels] == [k.name for k in main.kernels]
    assert [k.name for k in iregion.kernels] == [k.name for k in region.kernels]
    assert sum(k.name.startswith("extern_kernels.addmm") for k in iregion.kernels) == 2
    assert [d for d in imported.diagnostics if d.code == "source_missing"] == []
    # each layer's call is a box linked to the region's compile, in its layer (inferred from the weights it reads)
    calls = [n for n in imain.fused_nodes if "invoke_subgraph" in n.ops]
    assert [(n.label, [b.compile for b in n.branch_compiles]) for n in calls] == [
        ("repeated_subgraph0 (4 kernels)", [iregion.id])
    ] * 2
    assert [n.module_stack[-1:] for n in calls] == [["layers.0"], ["layers.1"]]
    assert iregion.graph_note == region.graph_note


def test_an_imported_regions_kernels_read_its_inputs_as_the_captured_ones_do(regional):
    """Its kernels read ``arg2_1`` where its inputs are named ``repeated_subgraph0_arg2_1`` (as its code names them):
    the region's graph was drawn with no input."""
    report, main, region, imported = regional
    (iregion,) = [c for c in imported.compiles if c.subgraph]

    def inputs_read(c):
        return {r for n in c.fused_nodes for r in n.reads if r in c.graph_inputs}

    # (a read through a view no kernel computes, the addmm's of ``permute(arg3_1)``, is not seen in a log: a subset)
    assert len(inputs_read(region)) == 5 and inputs_read(iregion) and inputs_read(iregion) <= inputs_read(region)


def test_the_regions_compile_says_which_vector_instruction_set_its_cpp_kernels_were_written_for(regional):
    """nu30 D6: its ``cpu_isa`` was empty (its kernels are in its parent's output code, which the ISA is read from),
    so a reproducer of its kernel said the report "does not say which vector instruction set" it was for."""
    report, main, region, _ = regional
    if not main.cpu_isa:
        pytest.skip("this CPU's vector ISA was not read for the main compile either")
    assert (region.cpu_isa, region.cpu_isa_bits) == (main.cpu_isa, main.cpu_isa_bits)


def test_an_imported_torch_cond_has_its_branches_compiles_as_captured_and_its_memory(tmp_path):
    """Reading the output code's subgraph functions reads a torch.cond's branches too (``def true_graph_0(args)``,
    called in an if): each a compile as captured. Its calls are no node of the import (no invoke_subgraph): the
    memory reading counted them as launches and gave up ("launches 3 kernels where the import made 1 fused nodes")."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 4)

    def f(x):
        p = x.mean(0)
        return torch.cond(p.sum() > 0, lambda p: lin(p).relu(), lambda p: -lin(p), (p,))

    with torch.no_grad(), _torch_trace(tmp_path):
        with inductor_lens.capture() as cap:
            torch.compile(f)(torch.randn(4, 8))
    imported = inductor_lens.load_trace(str(tmp_path))
    assert [(c.subgraph, [k.name for k in c.kernels]) for c in imported.compiles] == [
        (c.subgraph, [k.name for k in c.kernels]) for c in cap.report.compiles
    ]
    assert [d.message for d in imported.diagnostics if d.code in ("trace_no_memory", "source_missing")] == []


@pytest.fixture(scope="module")
def regional_training():
    """One training step of the same stack, three layers (torch 2.13 inlines the region of a two-layer stack in a
    training step): the region compiled as forward and backward subgraphs, two pairs (the first layer, whose input
    needs no gradient, is a partition of its own)."""
    torch.manual_seed(0)
    m, x = _Stack(3), torch.randn(2, 3, 8)
    with inductor_lens.capture() as cap:
        torch.compile(m)(x).sum().backward()
    return cap.report


def test_a_regions_saved_tensors_are_named_by_the_forward_regions_ops(regional_training):
    """nu25 H3: the region's forward listed what its backward takes under the backward's own names
    (``partitioned_bw_subgraph_0_0_rsqrt``) with no op, module or line ("(no module) 612 KiB", "(no line of yours)"),
    and counted the backward's tangent as a saved tensor. Each is joined with the forward region's node by the name
    torch gives it there (the backward placeholder's target), a placeholder of the region by its prefixed name."""
    subs = [c for c in regional_training.compiles if c.subgraph]
    if not subs:
        pytest.skip(f"torch {torch.__version__} inlines the region in a training step")
    fwd = next(c for c in subs if c.graph_kind == "forward")
    bwd = next(c for c in subs if c.subgraph == fwd.subgraph.replace("_fw_", "_bw_"))
    saved = fwd.memory.saved_for_backward
    taken = [n for n in bwd.graphs["post_grad"].nodes if n.op == "placeholder" and not n.target.startswith("tangents_")]
    assert saved and len(saved) == len([n for n in taken if n.shape is not None and n.dtype is not None])
    assert all(s.fx_node for s in saved), [s.name for s in saved if not s.fx_node]
    acts = [s for s in saved if s.kind == "activation"]
    assert acts and all(s.module.startswith("layers.") and s.user_line is not None for s in acts), acts
    assert any(s.display.endswith(".up.weight") for s in saved if s.kind == "input"), saved
    assert not any("(no module)" in b.module or not b.module for b in fwd.memory.saved_by_module)


def test_a_region_calls_panel_is_titled_by_the_call_and_its_box_names_its_layer(regional, tmp_path, offline_page):
    """nu25 M5: each call's panel was titled ``op1`` (the scheduler's name of the node), and the three calls' boxes read
    alike (their second line said ``invoke_subgraph`` again): the panel says the call, the box its layer."""
    from tests.views.test_html_export import _assert_clean, _open

    report, main, region, _ = regional
    path = tmp_path / "regional.html"
    report.save_html(path)
    page = offline_page
    _open(page, path)
    calls = [n for n in main.fused_nodes if "invoke_subgraph" in n.ops]
    for n in calls:
        page.evaluate("(name) => window.inductorLens.select(name)", n.name)
        assert page.locator('[data-role="selected-name"]').inner_text() == n.label
        box = page.locator(f'[data-view="fusion"] g.il-item[data-node="{n.name}"]')
        said = box.evaluate("(g) => g.textContent")
        assert n.module_stack[-1] in said, said
    # the Kernels view: the graph's own kernel, and beside it the region's calls (nu25: "1 kernel" where 9 launches run)
    page.click('[data-tab="kernels"]')
    assert (
        main.kernels_note
        == f"+ 2 calls of repeated_subgraph0 (its 4 kernel launches each: 8 in all; its kernels are listed in {region.id})"
    )
    assert page.locator('[data-role="kernels-note"]').inner_text() == main.kernels_note
    _assert_clean(page)
