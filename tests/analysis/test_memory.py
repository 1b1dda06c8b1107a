"""The pure memory computations (torch-free): live bytes from buffer lifetimes, reuses in the output code,
kernel-internal buffers, the peak, and the memory deltas of ``diff``."""

import dataclasses
import pathlib

import pytest

import inductor_lens
from inductor_lens.analysis.diff import memory_delta
from inductor_lens.analysis.memory import (
    allocated,
    fold_module,
    fold_rollup,
    freed_inputs,
    freed_unsized,
    net_floor,
    net_peak,
    recomputed_by_line,
    region_call,
    regions,
    renames,
    reuses,
    rollups,
    saved_groups,
    timeline,
)
from inductor_lens.report import model
from inductor_lens.report.lines import saved_by_line

ORDER = ["op0", "op1", "op2", "op3"]


def _buf(name, node, size, users=(), out=False, internal=False):
    return {"name": name, "node": node, "bytes": size, "users": list(users), "is_output": out, "internal": internal}


def test_lifetimes_from_writer_to_last_reader_and_outputs_to_the_end():
    bufs = [
        _buf("buf0", "op0", 100, ["op1", "op2"]),  # freed after op2
        _buf("buf1", "op1", 10, ["op3"]),
        _buf("buf2", "op2", 1000, []),  # read by nobody after its writer (an extern's unused output)
        _buf("buf3", "op3", 7, out=True),
    ]
    points, peak, node, alive = timeline(ORDER, bufs)
    assert [p.live_bytes for p in points] == [100, 110, 1110, 17]
    assert (peak, node) == (1110, "op2")
    assert [b.name for b in alive] == ["buf2", "buf0", "buf1"]  # largest first
    assert [b.name for b in points[2].frees] == ["buf2", "buf0"]
    assert [b.name for b in points[3].allocates] == ["buf3"] and [b.name for b in points[3].frees] == ["buf1"]


def test_peak_node_is_the_first_of_equal_maxima():
    bufs = [_buf("a", "op0", 5, ["op1"]), _buf("b", "op2", 5, ["op3"])]
    points, peak, node, _ = timeline(ORDER, bufs)
    assert [p.live_bytes for p in points] == [5, 5, 5, 5] and (peak, node) == (5, "op0")


CODE = """
def call(self, args):
    primals_1, relu = args
    buf0 = empty_strided_cpu((4, 32), (32, 1), torch.float32)
    buf1 = buf0; del buf0  # reuse
    buf2 = empty_strided_cuda((8,), (1,), torch.float32)
    buf3 = reinterpret_tensor(buf2, (2, 4), (4, 1), 0); del buf2  # reuse
    buf5 = relu; del relu  # reuse
"""


def test_output_code_reuses_and_allocations():
    assert reuses(CODE) == {"buf1": "buf0", "buf3": "buf2", "buf5": "relu"}
    assert allocated(CODE) == {"buf0", "buf2"}
    assert allocated("") is None


def test_a_reused_storage_counts_once_and_an_input_reuse_costs_nothing():
    bufs = [
        _buf("buf0", "op0", 512, ["op1"]),
        _buf("buf1", "op1", 512, ["op2"]),  # written into buf0's storage
        _buf("buf5", "op2", 64, ["op3"]),  # written into the input relu's storage
    ]
    points, peak, _, _ = timeline(ORDER, bufs, aliases=reuses(CODE))
    assert [p.live_bytes for p in points] == [512, 512, 512, 0]
    assert peak == 512
    points, _, _, _ = timeline(ORDER, bufs)  # without the output code's reuses: two storages
    assert [p.live_bytes for p in points] == [512, 1024, 576, 64]


def test_kernel_internal_buffers_cost_only_when_the_output_code_allocates_them():
    bufs = [_buf("buf0", "op0", 16, internal=True), _buf("buf9", "op0", 32, internal=True)]
    assert [p.live_bytes for p in timeline(ORDER, bufs, made={"buf0"})[0]] == [16, 0, 0, 0]
    assert [p.live_bytes for p in timeline(ORDER, bufs)[0]] == [0, 0, 0, 0]


def test_a_kernel_call_of_several_fused_nodes_holds_what_it_takes_from_its_first_node_to_its_last():
    """op1 and op2 are one kernel call (a C++ kernel group): the output code allocates every buffer the call takes
    before it and frees none until it returns. buf0, read last by op1, lives to op2; buf2, written by op2, from op1;
    buf3, written by op1 and read by nobody after, to op2. Their own lifetimes freed buf0 inside the call and
    allocated buf2 after part of it had run: 22 B live at the call, where they said 16 at most."""
    bufs = [
        _buf("buf0", "op0", 10, ["op1"]),
        _buf("buf1", "op1", 4, ["op2"]),
        _buf("buf2", "op2", 6, ["op3"]),
        _buf("buf3", "op1", 2, []),
        _buf("buf4", "op3", 1, out=True),
    ]
    points, peak, node, alive = timeline(ORDER, bufs, sites=[["op1", "op2"]])
    assert [p.live_bytes for p in points] == [10, 22, 22, 7]
    assert (peak, node) == (22, "op1")  # the call's first node: where the call starts
    assert [b.name for b in points[1].allocates] == ["buf2", "buf1", "buf3"] and points[1].frees == []
    assert points[2].allocates == [] and [b.name for b in points[2].frees] == ["buf0", "buf1", "buf3"]
    assert [(b.name, b.node) for b in alive] == [("buf0", "op0"), ("buf2", "op2"), ("buf1", "op1"), ("buf3", "op1")]
    # each node on its own (a Triton kernel per fused node): the lifetimes as they were
    assert [p.live_bytes for p in timeline(ORDER, bufs)[0]] == [10, 16, 10, 7]


def test_a_saved_input_read_inside_a_kernel_call_is_freed_once_the_call_returns():
    """A backward's saved ``mul`` (64 B), read by op0 only, which a C++ kernel group runs with op1: the output code
    ``del``s it after the group's call, so after op1, not after op0."""
    post = model.Graph(
        nodes=[
            model.GraphNode("mul", "placeholder", "mul", shape=[16], dtype="float32", role="saved"),
            model.GraphNode("sin", "call_function", "aten.sin.default", inputs=["mul"], shape=[16], dtype="float32"),
            model.GraphNode("cos", "call_function", "aten.cos.default", inputs=["sin"], shape=[16], dtype="float32"),
        ]
    )
    fused = [
        model.FusedNode("op0", "pointwise", ["sin"], "cpp_fused_cos_sin_0", reads=["mul"], writes=["buf0"]),
        model.FusedNode("op1", "pointwise", ["cos"], "cpp_fused_cos_sin_0", reads=["buf0"], writes=["buf1"]),
        model.FusedNode("op2", "extern", [], "extern_kernels.mm[buf2]", reads=["buf1"], writes=["buf2"]),
    ]
    code = "def call(self, args):\n    cpp_fused_cos_sin_0(mul, buf0, buf1)\n    del mul\n    return (buf2, )\n"

    def compile_(sites):
        kernel = model.Kernel("cpp_fused_cos_sin_0", "cpp", "", fused_nodes=["op0", "op1"], call_sites=sites)
        return model.Compile(
            id="0/0",
            compile_id="0/0",
            graph_kind="backward",
            trigger=model.Trigger(kind="lazy_backward", reason=""),
            graphs={"post_grad": post},
            fused_nodes=fused,
            kernels=[kernel],
            output_code=code,
        )

    assert freed_inputs(compile_([["op0", "op1"]])) == [0, 64, 0]
    assert freed_inputs(compile_([["op0"], ["op1"]])) == [64, 0, 0]  # two calls: after its reader's
    # the C++ wrapper (cpp_wrapper=True) frees a handle with .reset(): read as a del (nu19 O-d: it freed nothing)
    code = code.replace("    del mul\n", "    mul.reset();\n")
    assert freed_inputs(compile_([["op0", "op1"]])) == [0, 64, 0]


def _mem(peak, saved, lines):
    return model.Memory(
        peak_bytes=peak,
        saved_bytes=saved,
        saved_by_line=[model.BytesBy(b, file="t.py", line=ln) for ln, b in lines],
    )


def test_memory_delta_of_two_compiles():
    d = memory_delta(_mem(1000, 300, [(3, 200), (4, 100)]), _mem(700, 100, [(3, 100), (4, 100)]))
    assert d["peak_bytes"] == {"a": 1000, "b": 700, "delta": -300}
    assert d["saved_bytes"] == {"a": 300, "b": 100, "delta": -200}
    assert d["measured_peak_bytes"] == {"a": None, "b": None, "delta": None}
    assert d["saved_by_line"] == [{"file": "t.py", "line": 3, "a": 200, "b": 100, "delta": -100}]
    assert memory_delta(None, None) == {}
    assert memory_delta(None, _mem(5, 0, []))["peak_bytes"] == {"a": None, "b": 5, "delta": None}
    assert "sizes_at" not in d  # static sizes on both sides
    dyn = dataclasses.replace(_mem(5, 0, []), sizes_at="at s77=4")
    assert memory_delta(_mem(5, 0, []), dyn)["sizes_at"] == {"a": "", "b": "at s77=4"}


def test_diff_carries_the_memory_deltas_into_json_and_text():
    path = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_training.json"
    a = inductor_lens.load(path)

    def put(report, mem):
        return dataclasses.replace(report, compiles=[dataclasses.replace(c, memory=mem) for c in report.compiles])

    d = inductor_lens.diff(put(a, _mem(1000, 300, [])), put(a, _mem(1500, 300, [])))
    assert all(c.memory["peak_bytes"]["delta"] == 500 for c in d.compiles)
    assert "memory peak_bytes: 1000 -> 1500 (+500 bytes)" in d.text()
    assert "memory saved_bytes" not in d.text()  # unchanged
    assert d.to_dict()["compiles"][0]["memory"]["saved_bytes"]["delta"] == 0


# ---- folding repeated layers (Memory.regions, saved_groups, the folded roll-ups) --------------------------

REPEAT = model.ModuleRepeat(
    key="repeat:layers.1-3", label="layers.1-3", parent="", modules=["layers.1", "layers.2", "layers.3"]
)
INSTANCES = {m: REPEAT for m in REPEAT.modules}


def test_fold_module_puts_the_repeats_label_in_place_of_its_instance():
    assert fold_module("layers.2.mlp.gate", INSTANCES) == ("layers.1-3.mlp.gate", "layers.2")
    assert fold_module("layers.3", INSTANCES) == ("layers.1-3", "layers.3")
    assert fold_module("layers.0.mlp", INSTANCES) == ("layers.0.mlp", "")  # layer 0 is no instance
    assert fold_module("layers.30.mlp", INSTANCES) == ("layers.30.mlp", "")  # a prefix by name only
    assert fold_module("", INSTANCES) == ("", "")


def _node(name, stack, group_path=()):
    return model.FusedNode(name=name, kind="pointwise", module_stack=list(stack), group_path=list(group_path))


def test_regions_cut_the_timeline_by_instance_and_top_level_module():
    fused = [
        _node("n0", ["embed"]),
        _node("n1", ["layers.0", "layers.0.mlp"]),
        _node("n2", ["layers.1", "layers.1.mlp"], ["repeat:layers.1-3", "layers.1"]),
        _node("n3", []),  # a reshape of the top level between two ops of layer 1: layer 1's
        _node("n4", ["layers.1", "layers.1.attn"], ["repeat:layers.1-3", "layers.1"]),
        _node("n5", [], ["repeat:layers.1-3", "layers.2"]),  # attached to layer 2 by its group path
        _node("n6", ["layers.3", "layers.3.mlp"]),  # a glue node: no group path, its stack says layer 3
        _node("n7", []),  # the top level's own op at the end: a region of its own
        _node("n8", ["head"]),
    ]
    got = [(r.module, r.label, r.first, r.last, r.repeat) for r in regions(fused, INSTANCES)]
    assert got == [
        ("embed", "embed", 0, 0, ""),
        ("layers.0", "layers.0", 1, 1, ""),  # no instance: its whole name (a ResNet's layer2-4 read "0 1 0 1")
        ("layers.1", "1", 2, 4, "layers.1-3"),
        ("layers.2", "2", 5, 5, "layers.1-3"),
        ("layers.3", "3", 6, 6, "layers.1-3"),
        ("", "", 7, 7, ""),
        ("head", "head", 8, 8, ""),
    ]
    # without repeats: the top-level modules (the reshape inside layer 1 still joins it), labelled by their whole
    # names (no repeat's name under the axis says what a bare "0" is: a ViT's axis read "patch_embed | 0 | 1 | norm")
    plain = regions(fused, {})
    assert [r.module for r in plain] == ["embed", "layers.0", "layers.1", "", "layers.3", "", "head"]
    assert [r.label for r in plain] == ["embed", "layers.0", "layers.1", "", "layers.3", "", "head"]


def test_a_module_resumed_after_another_is_labelled_once():
    """Llama-8B's forward (recorded on an H200): layer 0's first fused nodes, the rotary embedding's one, then the
    rest of layer 0: the axis said "0 0"."""
    fused = [
        _node("n0", ["layers.0", "layers.0.norm"]),
        _node("n1", ["rotary_emb"]),
        _node("n2", ["layers.0", "layers.0.attn"]),
        _node("n3", ["layers.1", "layers.1.attn"], ["repeat:layers.1-3", "layers.1"]),
    ]
    got = [(r.module, r.label, r.first, r.last) for r in regions(fused, INSTANCES)]
    assert got == [
        ("layers.0", "layers.0", 0, 0),
        ("rotary_emb", "rotary_emb", 1, 1),
        ("layers.0", "", 2, 2),
        ("layers.1", "1", 3, 3),
    ]


def test_a_module_in_several_runs_is_labelled_under_its_longest():
    """nu26 D7 (a checkpointed 4-layer stack, CPU): the backward recomputes layer 3 and runs the final norm's backward
    in between (regions layers.3 0-1, lnf 2, layers.3 3-7, lnf 8-9, layers.3 10-30): "3" sat under nodes 0-1, where
    it overlapped the repeat's name, and layer 3's main run (21 of its 28 nodes) had no label."""
    l3 = ["layers.3", "layers.3.attn"]
    gp = ["repeat:layers.1-3", "layers.3"]
    stacks = [l3] * 2 + [["lnf"]] + [l3] * 5 + [["lnf"]] * 2 + [l3] * 21 + [["layers.2", "layers.2.mlp"]]
    fused = [_node(f"n{i}", st, gp if st[0] == "layers.3" else ()) for i, st in enumerate(stacks)]
    got = [(r.module, r.label, r.first, r.last) for r in regions(fused, INSTANCES)]
    assert got == [
        ("layers.3", "", 0, 1),
        ("lnf", "", 2, 2),
        ("layers.3", "", 3, 7),
        ("lnf", "lnf", 8, 9),
        ("layers.3", "3", 10, 30),
        ("layers.2", "2", 31, 31),
    ]


def _saved(name, module, kind="activation", size=64, line=5, fx=""):
    frame = model.Frame(file="m.py", line=line, function="forward", code="", stage="user")
    return model.SavedTensor(name, [4, 4], "float32", size, kind, fx or name, [frame], module)


def test_saved_groups_fold_one_tensor_per_instance_into_one_row():
    fx = {f"mm_{i}": model.GraphNode(name=f"mm_{i}", op="call_function", target="aten.mm.default") for i in range(4)}
    fx.update(
        {
            f"primals_{i}": model.GraphNode(
                name=f"primals_{i}", op="placeholder", target=f"primals_{i}", display_name=f"layers.{i}.fc.weight"
            )
            for i in range(4)
        }
    )
    saved = [_saved(f"mm_{i}", f"layers.{i}.fc") for i in range(4)] + [
        _saved(f"primals_{i}", f"layers.{i}.fc", kind="input", size=256, line=3) for i in range(4)
    ]
    groups = saved_groups(saved, fx, INSTANCES)
    got = [(g.kind, g.module, g.what, g.count, g.bytes, g.each, g.names) for g in groups]
    assert got == [
        ("activation", "layers.1-3.fc", "mm", 3, 192, 64, ["mm_1", "mm_2", "mm_3"]),  # activations first
        ("activation", "layers.0.fc", "mm", 1, 64, 64, ["mm_0"]),
        ("input", "layers.1-3.fc", "weight", 3, 768, 256, ["primals_1", "primals_2", "primals_3"]),
        ("input", "layers.0.fc", "weight", 1, 256, 256, ["primals_0"]),
    ]
    # another line is another row: mm_1 and an mm of layer 2 from line 9 do not fold, and where nothing folds
    # together there are no groups (the plain list says it all)
    assert saved_groups(saved[:2] + [_saved("mm_2", "layers.2.fc", line=9)], fx, INSTANCES) == []
    assert [g.count for g in saved_groups(saved[:3], fx, INSTANCES)] == [2, 1]
    # a row is named by the instances it holds: two layers of three by theirs, as a range or one by one
    assert [g.module for g in saved_groups(saved[:3], fx, INSTANCES)] == ["layers.1-2.fc", "layers.0.fc"]
    skip = [_saved("mm_1", "layers.1.fc"), _saved("mm_3", "layers.3.fc")]
    assert [g.module for g in saved_groups(skip, fx, INSTANCES)] == ["layers.1,3.fc"]


def test_folded_rollups_and_recomputed_by_line():
    rows = fold_rollup([("layers.1.fc", 10), ("layers.2.fc", 10), ("layers.2.fc", 5), ("head", 40), ("", 1)], INSTANCES)
    assert [(r.module, r.bytes, r.count, r.instances) for r in rows] == [
        ("head", 40, 1, 1),
        ("layers.1-2.fc", 25, 3, 2),  # the two layers of three that fill it (it said layers.1-3: all three)
        ("(no module)", 1, 1, 1),
    ]
    f = lambda ln: [model.Frame(file="m.py", line=ln, function="f", code="", stage="user")]  # noqa: E731
    fx = {
        n: model.GraphNode(name=n, op="call_function", target=t)
        for n, t in [
            ("neg_1", "aten.neg.default"),
            ("exp_1", "aten.exp.default"),
            ("neg_2", "aten.neg.default"),
            ("mul_1", "aten.mul.Tensor"),
        ]
    }
    redo = [
        model.Recomputed("neg_1", f(64)),
        model.Recomputed("exp_1", f(64)),
        model.Recomputed("neg_2", f(64)),
        model.Recomputed("mul_1", f(28)),
        model.Recomputed("mul_1", []),
    ]
    got = [(r.file, r.line, r.count, r.ops) for r in recomputed_by_line(redo, fx)]
    assert got == [("m.py", 64, 3, ["neg", "exp"]), ("m.py", 28, 1, ["mul"]), ("", 0, 1, ["mul"])]


def test_a_saved_groups_op_is_the_op_it_was_decomposed_from():
    """A GELU's saved ``mul`` reads as ``gelu`` (``GraphNode.original_op``), its copies in each layer folded."""
    fx = {
        f"mul_{i}": model.GraphNode(name=f"mul_{i}", op="call_function", target="aten.mul.Tensor", original_op="gelu")
        for i in range(1, 4)
    }
    groups = saved_groups([_saved(f"mul_{i}", f"layers.{i}.mlp") for i in range(1, 4)], fx, INSTANCES)
    assert [(g.module, g.what, g.count) for g in groups] == [("layers.1-3.mlp", "gelu", 3)]


def test_a_saved_groups_op_says_which_result_of_a_multi_output_op_it_is():
    """Issue 22: a layer norm's mean and rstd have one shape; each layer's two were one row, ``native_layer_norm
    ×2``. The result each is (``GraphNode.output``) keeps them apart, folded over the layers."""
    fx = {}
    for i in range(1, 4):
        for name, target, out in (
            (f"getitem_{i}", "_operator.getitem", "mean"),
            (f"rsqrt_{i}", "aten.rsqrt.default", "rstd"),
        ):
            fx[name] = model.GraphNode(
                name=name, op="call_function", target=target, original_op="native_layer_norm", output=out
            )
    saved = [_saved(n, f"layers.{n[-1]}.ln") for n in fx]
    groups = saved_groups(saved, fx, INSTANCES)
    assert [(g.module, g.what, g.count) for g in groups] == [
        ("layers.1-3.ln", "native_layer_norm: mean", 3),
        ("layers.1-3.ln", "native_layer_norm: rstd", 3),
    ]


def test_a_point_names_its_buffers_as_the_output_code_does_there():
    """nu17 (a checkpointed MLP's forward): ``buf2 = empty_strided_cpu(...)`` (op2's addmm), ``buf3 = buf2; del buf2
    # reuse`` (op3 writes gelu-sin into it), ... ``del buf3`` after op4: the panel said op4 "then frees buf2", a
    name the output code had dropped two lines before. A custom op's result: ``buf1 =
    torch.ops.nu17.scaled_tanh.default(buf0, 2.0)``, then ``buf2 = buf1; del buf1`` (its MultiOutput, which the
    capture sizes; the op's own buffer has none): the panel said op1 "allocates buf2" where the call writes buf1."""
    code = """
        buf2 = empty_strided_cpu((16, 64), (64, 1), torch.float32)
        buf3 = buf2; del buf2  # reuse
        del buf3
        buf1 = torch.ops.nu17.scaled_tanh.default(buf0, 2.0)
        buf5 = buf1
        del buf1
"""
    assert renames(code) == {"buf5": "buf1"}
    bufs = [
        _buf("buf2", "op0", 4096, ["op1"]),
        _buf("buf3", "op1", 4096, ["op3"]),  # written into buf2's storage
        _buf("buf1", "op1", 0, ["op2"]),  # the fallback's own buffer: no size of its own
        _buf("buf5", "op2", 512, ["op3"]),  # its MultiOutput (glue, in op1's box), written with it
    ]
    order = ["op0", "op1", "op3"]
    points, _, _, _ = timeline(order, bufs, aliases=reuses(code), named=renames(code), home={"op2": "op1"})
    assert [(b.name, b.bytes) for b in points[0].allocates] == [("buf2", 4096)]
    assert [b.name for b in points[1].allocates] == ["buf1"]  # the name the call writes
    assert [(b.name, b.bytes) for b in points[2].frees] == [("buf3", 4096), ("buf5", 512)]  # the names ``del`` uses


def test_a_recomputed_op_is_in_the_checkpoint_call_whose_stack_its_own_continues():
    """``region_call``: the innermost frame of the call whose stack is the longest that the op's stack starts with
    (two nested ``checkpoint(...)`` calls: the inner one's region), the same stack where the region's function is
    torch's own; an op no call's stack leads to has none."""
    F = model.Frame
    outer, inner = F("m.py", 18, "forward"), F("m.py", 40, "block")
    calls = [[outer], [outer, F("m.py", 30, "forward"), inner]]
    assert region_call([outer, F("m.py", 30, "forward")], calls) == outer
    assert region_call([outer, F("m.py", 30, "forward"), inner, F("m.py", 50, "mlp")], calls) == inner
    assert region_call([outer], calls) == outer  # an nn.Sequential of torch's layers: no frame of its own
    assert region_call([F("m.py", 19, "forward")], calls) is None


@pytest.mark.parametrize(
    "assertion",
    [
        "assert_size_stride(expand_1, (2, 32), (0, 1), 'input')",
        # torch 2.15 checks the inputs a kernel reads first together (nu22 D1: this read nothing there)
        "assert_size_stride_grouped((expand_1, tangents_1), ((2, 32), (2, 32)), ((0, 1), (32, 1)), 'input')",
    ],
)
def test_a_saved_expanded_view_counts_the_storage_it_spans_not_its_logical_size(assertion):
    """nu20 D8: BERT saves ``expand_1 [2, 32] int64``, an expanded (stride-0) view of a ``(1, 32)`` buffer; the
    backward's output code asserts its strides ``(0, 1)``: 256 bytes of storage, not 512. A saved tensor without an
    asserted stride keeps numel x element size (``stride`` None: an upper bound). Torch 2.15 writes the assertion
    grouped with the other inputs the same kernel reads first."""
    from inductor_lens.analysis.memory import saved_for_backward

    trig = model.Trigger(kind="lazy_backward", reason="")
    fwd = model.Graph(
        nodes=[
            model.GraphNode("expand_1", "call_function", "aten.expand.default", shape=[2, 32], dtype="int64"),
            model.GraphNode("relu", "call_function", "aten.relu.default", shape=[2, 32], dtype="float32"),
        ]
    )
    bwd = model.Graph(
        nodes=[
            model.GraphNode("expand_1", "placeholder", "expand_1", shape=[2, 32], dtype="int64", role="saved"),
            model.GraphNode("relu", "placeholder", "relu", shape=[2, 32], dtype="float32", role="saved"),
            model.GraphNode("tangents_1", "placeholder", "tangents_1", shape=[2, 32], dtype="float32", role="tangent"),
        ]
    )
    code = f"def call(self, args):\n    expand_1, relu, tangents_1 = args\n    {assertion}\n"
    forward = model.Compile(id="0/0", compile_id="0/0", graph_kind="forward", trigger=trig, graphs={"post_grad": fwd})
    backward = model.Compile(
        id="0/0b", compile_id="0/0", graph_kind="backward", trigger=trig, graphs={"post_grad": bwd}, output_code=code
    )
    saved = {s.name: s for s in saved_for_backward(forward, backward)}
    assert (saved["expand_1"].bytes, saved["expand_1"].stride) == (256, [0, 1])
    assert (saved["relu"].bytes, saved["relu"].stride) == (256, None)


def _gpt2_mlp_step():
    """A GPT-2 MLP's forward and backward as report data (nu20 O-a): ``mul_15`` (the GELU, ``mlp.act``) is saved
    as ``permute_14``, a transposed view of its buffer (``c_proj``'s weight gradient takes it), and as ``view_9``,
    a second view of the same buffer (``buf40``), next to ``addmm`` (``c_fc``)."""
    trig = model.Trigger(kind="lazy_backward", reason="")
    line = lambda n: [model.Frame(file="m.py", line=n, function="forward", code="", stage="user")]  # noqa: E731
    fwd = model.Graph(
        nodes=[
            model.GraphNode("primals_1", "placeholder", "primals_1", shape=[64, 64], dtype="float32"),
            model.GraphNode(
                "addmm", "call_function", "aten.addmm.default", shape=[64, 256], dtype="float32",
                inputs=["primals_1"], module_stack=["h.0", "h.0.mlp.c_fc"], user_stack=line(10),
            ),
            model.GraphNode(
                "mul_15", "call_function", "aten.mul.Tensor", shape=[64, 256], dtype="float32", inputs=["addmm"],
                module_stack=["h.0", "h.0.mlp.act"], user_stack=line(11),
            ),
            model.GraphNode(
                "permute_14", "call_function", "aten.permute.default", shape=[256, 64], dtype="float32",
                inputs=["mul_15"], module_stack=["h.0", "h.0.mlp.c_proj"], user_stack=line(12), original_op="t",
            ),
            model.GraphNode(
                "view_9", "call_function", "aten.view.default", shape=[2, 32, 256], dtype="float32",
                inputs=["mul_15"], module_stack=["h.0", "h.0.mlp.c_proj"], user_stack=line(12),
            ),
        ]
    )  # fmt: skip
    bwd = model.Graph(
        nodes=[
            model.GraphNode("addmm", "placeholder", "addmm", shape=[64, 256], dtype="float32", role="saved"),
            model.GraphNode("permute_14", "placeholder", "permute_14", shape=[256, 64], dtype="float32", role="saved"),
            model.GraphNode("view_9", "placeholder", "view_9", shape=[2, 32, 256], dtype="float32", role="saved"),
            model.GraphNode("tangents_1", "placeholder", "tangents_1", shape=[64, 64], dtype="float32", role="tangent"),
        ]
    )
    fcode = (
        "def call(args):\n    primals_1, = args\n    buf0 = empty_strided_cpu((64, 256), (256, 1), torch.float32)\n"
        "    buf40 = empty_strided_cpu((64, 256), (256, 1), torch.float32)\n"
        "    return (buf41, buf0, reinterpret_tensor(buf40, (256, 64), (1, 256), 0), "
        "reinterpret_tensor(buf40, (2, 32, 256), (8192, 256, 1), 0), )\n"
    )
    forward = model.Compile(
        id="0/0", compile_id="0/0", graph_kind="forward", trigger=trig, graphs={"post_grad": fwd}, output_code=fcode
    )
    backward = model.Compile(
        id="0/0b", compile_id="0/0", graph_kind="backward", trigger=trig, graphs={"post_grad": bwd}
    )
    return forward, backward, {n.name: n for n in fwd.nodes}


def test_a_saved_view_is_the_op_that_made_the_storage_it_views():
    """nu20 O-a: GPT-2's "kept for the backward, by module" showed ``mlp.c_proj · t · 128 KiB``, read as "c_proj
    keeps a transposed copy of its weight": the tensor is a view of the GELU's output, made by ``mlp.act``. Its row
    names that op (module, line, node), says it is a view and which view the backward takes."""
    from inductor_lens.analysis.memory import rollups, saved_for_backward

    forward, backward, fx = _gpt2_mlp_step()
    saved = {s.name: s for s in saved_for_backward(forward, backward)}
    t = saved["permute_14"]
    assert (t.module, t.fx_node, t.user_stack[-1].line, t.view_op) == ("h.0.mlp.act", "mul_15", 11, "t")
    assert t.note == "t: a view of h.0.mlp.act's output (mul)"
    assert (saved["addmm"].module, saved["addmm"].view_op, saved["addmm"].note) == ("h.0.mlp.c_fc", "", "")
    twice = [t, dataclasses.replace(t, name="permute_15")]  # a row of the groups: the op, and the view taken
    assert [(g.module, g.what, g.count) for g in saved_groups(twice, fx, {})] == [("h.0.mlp.act", "mul (t view)", 2)]
    _, by_module = rollups(list(saved.values()), fx)
    assert "h.0.mlp.c_proj" not in [r.module for r in by_module]


def test_a_saved_view_of_an_autocast_weight_copy_is_named_as_that_copy():
    """nu31 D7: under ``torch.autocast("cpu", bfloat16)`` the backward of ``model.fc`` takes ``permute_1``, the
    transposed bf16 copy of ``fc.weight`` (``convert_element_type_32`` of ``primals_38``). Its note said
    "t: a view of model.fc's output (_to_copy)": it is a view of the weight's copy, not of fc's output."""
    from inductor_lens.analysis.memory import saved_for_backward

    trig = model.Trigger(kind="lazy_backward", reason="")
    fwd = model.Graph(
        nodes=[
            model.GraphNode(
                "primals_38", "placeholder", "primals_38", shape=[10, 32], dtype="float32",
                display_name="model.fc.weight", role="parameter",
            ),
            model.GraphNode(
                "convert_element_type_32", "call_function", "prims.convert_element_type.default", shape=[10, 32],
                dtype="bfloat16", inputs=["primals_38"], module_stack=["model", "model.fc"], original_op="_to_copy",
            ),
            model.GraphNode(
                "permute", "call_function", "aten.permute.default", shape=[32, 10], dtype="bfloat16",
                inputs=["convert_element_type_32"], module_stack=["model", "model.fc"], original_op="t",
            ),
            model.GraphNode(
                "permute_1", "call_function", "aten.permute.default", shape=[10, 32], dtype="bfloat16",
                inputs=["permute"], module_stack=["model", "model.fc"], original_op="t",
            ),
        ]
    )  # fmt: skip
    bwd = model.Graph(
        nodes=[
            model.GraphNode("permute_1", "placeholder", "permute_1", shape=[10, 32], dtype="bfloat16", role="saved"),
            model.GraphNode("tangents_1", "placeholder", "tangents_1", shape=[8, 10], dtype="float32", role="tangent"),
        ]
    )
    forward = model.Compile(id="0/0", compile_id="0/0", graph_kind="forward", trigger=trig, graphs={"post_grad": fwd})
    backward = model.Compile(
        id="0/0b", compile_id="0/0", graph_kind="backward", trigger=trig, graphs={"post_grad": bwd}
    )
    (t,) = saved_for_backward(forward, backward)
    assert (t.module, t.fx_node, t.view_op) == ("model.fc", "convert_element_type_32", "t")
    assert t.note == "t: a view of the bfloat16 copy of model.fc.weight"


def test_two_saved_views_of_one_storage_count_it_once():
    """nu20 (task 2): two saved views of one buffer (``reinterpret_tensor(buf40, ...)`` twice in the forward's
    return) are one storage held once: counted in the first row, the second says it shares it; the totals, the
    roll-ups by module and by line and the groups count 64 KiB, not 128."""
    from inductor_lens.analysis.memory import rollups, saved_for_backward
    from inductor_lens.report.rules import counted_bytes

    forward, backward, fx = _gpt2_mlp_step()
    saved = saved_for_backward(forward, backward)
    assert [(s.name, s.storage, s.shares) for s in saved] == [
        ("addmm", "buf0", ""),
        ("permute_14", "buf40", ""),
        ("view_9", "buf40", "permute_14"),
    ]
    assert saved[2].note.endswith("shares its storage buf40 with permute_14: counted once, there")
    assert counted_bytes(saved) == [65536, 65536, 0]
    by_line, by_module = rollups(saved, fx)
    assert [(r.module, r.bytes, r.count) for r in by_module] == [("h.0.mlp.act", 65536, 1), ("h.0.mlp.c_fc", 65536, 1)]
    assert sum(r.bytes for r in by_line) == 2 * 65536
    one = [saved[1], dataclasses.replace(saved[2], shape=saved[1].shape, view_op="t")]  # one row of the groups
    assert [(g.count, g.bytes, g.each, g.shared) for g in saved_groups(one, fx, {})] == [(2, 65536, 65536, 1)]


def test_saved_tensors_of_a_data_dependent_size_are_unknown_in_their_rows_and_lower_bounds_in_the_rollups():
    """nu29 D1: an MoE's expert activations ``[u0, 64]`` (bytes None: a size known only when the graph runs) were
    "0 B" in the saved table's grouped rows, and left out of the roll-ups by module and by line (and so of the Source
    view's "keeps" badges) with no word: the experts seemed to keep nothing for the backward. Their rows say "?", a
    row that holds some besides counted ones says "≥", and each roll-up row counts them in ``uncounted``."""
    fx = {f"mm_{i}": model.GraphNode(name=f"mm_{i}", op="call_function", target="aten.mm.default") for i in range(4)}
    unknown = lambda name, module: dataclasses.replace(_saved(name, module, size=None, line=7), shape=["u0", 4])  # noqa: E731
    saved = [_saved("mm_0", "layers.0.fc"), _saved("mm_1", "layers.1.fc"), unknown("mm_2", "layers.2.fc")]
    saved.append(unknown("mm_3", "layers.3.fc"))
    groups = saved_groups(saved, fx, INSTANCES)
    assert [(g.module, g.count, g.bytes) for g in groups] == [
        ("layers.0.fc", 1, 64),
        ("layers.1.fc", 1, 64),
        ("layers.2-3.fc", 2, None),  # not known: not 0 B
    ]
    _, by_module = rollups(saved)
    assert [(r.module, r.bytes, r.count, r.uncounted, r.bytes_text) for r in by_module] == [
        ("layers.0.fc", 64, 1, 0, ""),
        ("layers.1.fc", 64, 1, 0, ""),
        ("layers.2.fc", 0, 1, 1, "?"),  # kept, of a size not known: was no row at all
        ("layers.3.fc", 0, 1, 1, "?"),
    ]
    by_line = saved_by_line(saved, fx, {})
    assert [(r.line, r.bytes, r.count, r.uncounted, r.bytes_text) for r in by_line] == [
        (5, 128, 2, 0, ""),
        (7, 0, 2, 2, "?"),  # the experts' line: kept, of a size not known (the Source view's badge: "keeps ?")
    ]
    folded = fold_rollup([("layers.1.fc", 64), ("layers.2.fc", None), ("layers.3.fc", None)], INSTANCES)
    assert [(r.module, r.bytes, r.count, r.uncounted, r.bytes_text) for r in folded] == [
        ("layers.1-3.fc", 64, 3, 2, "≥ 64 B")
    ]
    m = model.Memory(saved_for_backward=saved, saved_bytes=128, saved_activation_bytes=128, saved_groups=groups)
    assert m.saved_table_text == (
        "saved for backward (≥ 128 B, not counting 2 tensors of a size known only when the graph runs)"
    )
    assert m.saved_rollup_note.startswith("not counting the bytes of 2 tensors of a size known only when the graph")
    # a report made before it (its rows said 0): the row of such tensors is not known on loading either
    old = dataclasses.replace(groups[2], bytes=0)
    again = model.Memory(saved_for_backward=saved, saved_bytes=128, saved_groups=[*groups[:2], old])
    assert [g.bytes for g in again.saved_groups] == [64, 64, None]


def _unsized_backward():
    """A backward that takes ``mul`` (64 B) and ``addmm`` (``[u0, 4]``: a size known only when it runs) from its
    forward and frees both (``del``) after op0, which reads them: op1 then allocates 32 B."""
    post = model.Graph(
        nodes=[
            model.GraphNode("mul", "placeholder", "mul", shape=[16], dtype="float32", role="saved"),
            model.GraphNode("addmm", "placeholder", "addmm", shape=["u0", 4], dtype="float32", role="saved"),
            model.GraphNode("sin", "call_function", "aten.sin.default", inputs=["mul"], shape=[16], dtype="float32"),
            model.GraphNode("cos", "call_function", "aten.cos.default", inputs=["sin"], shape=[8], dtype="float32"),
        ]
    )
    fused = [
        model.FusedNode("op0", "pointwise", ["sin"], "cpp_fused_sin_0", reads=["mul", "addmm"], writes=["buf0"]),
        model.FusedNode("op1", "pointwise", ["cos"], "cpp_fused_cos_1", reads=["buf0"], writes=["buf1"]),
    ]
    code = (
        "def call(self, args):\n    cpp_fused_sin_0(mul, addmm, buf0)\n    del mul\n    del addmm\n"
        "    cpp_fused_cos_1(buf0, buf1)\n    return (buf1, )\n"
    )
    return model.Compile(
        id="0/1",
        compile_id="0/1",
        graph_kind="backward",
        trigger=model.Trigger(kind="lazy_backward", reason=""),
        graphs={"post_grad": post},
        fused_nodes=fused,
        output_code=code,
    )


def test_a_backward_that_frees_inputs_of_a_data_dependent_size_says_no_lower_bound_past_the_first():
    """nu29 D3: the backward's "device high-water ≥ 76.9 KiB" was the live bytes less the freed inputs of a known
    size: the 28 saved tensors of a size known only when it runs, freed before that point, were not subtracted, so
    it was an upper bound there, not a "≥". The inputs of such a size it frees are named (``freed_unsized``), and
    the lower bound is taken only up to the point after which the first is freed (``net_floor``)."""
    c = _unsized_backward()
    assert freed_inputs(c) == [64, 0]  # addmm's bytes are not known: not counted, and not 0 B either
    assert freed_unsized(c) == [(0, "addmm")]
    points = [
        model.MemoryPoint(node="op0", live_bytes=100, allocates=[], frees=[]),
        model.MemoryPoint(node="op1", live_bytes=150, allocates=[], frees=[]),
    ]
    assert net_peak(points, freed_inputs(c), c.fused_nodes) == (100, "op0")  # at op1: 150 - 64 - (addmm) <= 86
    floor = net_floor(points, [0, 0], c.fused_nodes, freed_unsized(c))
    assert floor == (100, "op0")  # op0 runs before any such input is freed: live less freed is exact there
    late = net_floor(points, [0, 0], c.fused_nodes, [(1, "addmm")])
    assert late == (150, "op1")
