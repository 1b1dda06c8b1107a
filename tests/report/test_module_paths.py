"""Module paths inferred where a compile recorded none (report/module_paths.py), torch-free: hand-made graphs
whose answers are worked out here from the model's structure, and the H200 Llama fixture's backward, recorded
before the capture read ``fwd_nn_module_stack``."""

from __future__ import annotations

import dataclasses

import pytest

from inductor_lens.report.finish import derive_compile, infer_report_modules
from inductor_lens.report.model import Compile, FusedNode, Graph, GraphNode, Report, Trigger
from inductor_lens.report.module_paths import combine, fill_backward, infer_compile, missing, node_stack
from tests._recorded import recorded


def _param(name: str, path: str) -> GraphNode:
    return GraphNode(name=name, op="placeholder", target=name, role="parameter", display_name=path)


def _op(name: str, target: str, *inputs: str, module: list[str] | None = None) -> GraphNode:
    return GraphNode(name=name, op="call_function", target=target, inputs=list(inputs), module_stack=module or [])


def _block_forward(layers: int = 2) -> list[GraphNode]:
    """A pre-norm block per layer, as a post-grad graph prints it: ``h.N.ln`` (norm statistics, then its weight),
    ``h.N.mlp`` an ``nn.Sequential`` of Linear, GELU, Linear, and the residual add of ``h.N`` (Block.forward)."""
    nodes = [GraphNode(name="x", op="placeholder", target="x", role="input", display_name="x")]
    for i in range(layers):
        nodes += [_param(f"ln{i}_w", f"h.{i}.ln.weight"), _param(f"fc{i}_w", f"h.{i}.mlp.0.weight")]
        nodes += [_param(f"pr{i}_w", f"h.{i}.mlp.2.weight")]
    prev = "x"
    for i in range(layers):
        nodes += [
            _op(f"var_mean_{i}", "aten.var_mean.correction", prev),
            _op(f"rsqrt_{i}", "aten.rsqrt.default", f"var_mean_{i}"),
            _op(f"norm_{i}", "aten.mul.Tensor", prev, f"rsqrt_{i}"),
            _op(f"ln_{i}", "aten.mul.Tensor", f"norm_{i}", f"ln{i}_w"),
            _op(f"t_fc{i}", "aten.permute.default", f"fc{i}_w"),
            _op(f"fc_{i}", "aten.mm.default", f"ln_{i}", f"t_fc{i}"),
            _op(f"gelu_{i}", "aten.gelu.default", f"fc_{i}"),
            _op(f"t_pr{i}", "aten.permute.default", f"pr{i}_w"),
            _op(f"proj_{i}", "aten.mm.default", f"gelu_{i}", f"t_pr{i}"),
            _op(f"res_{i}", "aten.add.Tensor", prev, f"proj_{i}"),
        ]
        prev = f"res_{i}"
    return nodes + [GraphNode(name="output", op="output", target="output", inputs=[prev])]


def _compile(nodes: list[GraphNode], kind: str = "forward", fused: list[FusedNode] | None = None) -> Compile:
    return Compile(
        id=f"0/0 {kind}",
        compile_id="0/0",
        graph_kind=kind,
        trigger=Trigger(kind="first_call", reason=""),
        graphs={"post_grad": Graph(nodes=nodes)},
        fused_nodes=fused or [],
    )


def _stacks(c: Compile) -> dict[str, list[str]]:
    return {n.name: n.module_stack for n in c.graphs["post_grad"].nodes if n.op == "call_function"}


def test_each_op_gets_what_its_weights_and_neighbours_prove_and_nothing_deeper():
    got = _stacks(infer_compile(_compile(_block_forward())))
    mlp = ["h.0", "h.0.mlp"]
    # reading a weight (or its permute): the module that owns it; `h` (a ModuleList of blocks) is no stack entry,
    # `h.0.mlp` (a Sequential of leaves) is
    assert got["ln_0"] == ["h.0", "h.0.ln"] and got["t_fc0"] == got["fc_0"] == [*mlp, "h.0.mlp.0"]
    assert got["proj_0"] == [*mlp, "h.0.mlp.2"]
    assert got["gelu_0"] == mlp  # between h.0.mlp.0 and h.0.mlp.2: their common prefix, not the GELU's own module
    assert got["res_0"] == []  # between h.0.mlp.2 and h.1.ln: in h.0 (Block.forward), but nothing shows it
    assert got["var_mean_0"] == [] and got["rsqrt_0"] == []  # before the first weight: nothing is known
    assert got["var_mean_1"] == [] and got["norm_1"] == []  # between h.0.mlp.2 and h.1.ln: the top level


def test_the_residual_add_between_two_modules_of_a_block_is_the_block():
    nodes = _block_forward(1)
    # the residual add runs after the projection and before the next weight of the same block
    nodes.insert(-1, _param("ln2_w", "h.0.ln_2.weight"))
    nodes.insert(-1, _op("ln2", "aten.mul.Tensor", "res_0", "ln2_w"))
    got = _stacks(infer_compile(_compile(nodes)))
    assert got["res_0"] == ["h.0"] and got["ln2"] == ["h.0", "h.0.ln_2"]


def test_a_graph_with_recorded_modules_is_left_as_it_is():
    nodes = _block_forward()
    recorded = {"ln_0": ["h.0", "h.0.ln"], "fc_0": ["h.0", "h.0.mlp", "h.0.mlp.0"], "gelu_0": ["h.0", "h.0.mlp"]}
    ops = [n.name for n in nodes if n.op == "call_function"]
    recorded.update({name: ["h.0"] for name in ops[: len(ops) // 2 + 1] if name not in recorded})
    partial = [dataclasses.replace(n, module_stack=recorded.get(n.name, [])) for n in nodes]
    c = _compile(partial)
    assert not missing(c) and infer_compile(c) is c  # half of its ops have a module: nothing inferred
    # with fewer recorded, the others are inferred and the recorded ones kept exactly
    few = [dataclasses.replace(n, module_stack=["x.y"] if n.name == "gelu_1" else []) for n in nodes]
    out = infer_compile(_compile(few))
    assert out.modules_inferred and _stacks(out)["gelu_1"] == ["x.y"] and _stacks(out)["fc_1"][-1] == "h.1.mlp.0"


def test_a_backward_reads_gradients_saved_activations_and_skips_recomputed_ops():
    fwd_nodes = [_param("primals_1", "a.lin.weight"), _param("primals_2", "b.lin.weight")]
    fwd_nodes += [
        GraphNode(name="primals_3", op="placeholder", target="primals_3", role="input"),
        _op("mm", "aten.mm.default", "primals_3", "primals_1", module=["a", "a.lin"]),
        _op("act", "aten.relu.default", "mm", module=["a"]),
        _op("mm_1", "aten.mm.default", "act", "primals_2", module=["b", "b.lin"]),
        GraphNode(name="output", op="output", target="output", inputs=["mm_1", "act"]),
    ]
    forward = _compile(fwd_nodes)
    saved = GraphNode(name="act", op="placeholder", target="act", role="saved")
    bwd_nodes = [_param("primals_2", "b.lin.weight"), saved]
    bwd_nodes += [
        GraphNode(name="tangents_1", op="placeholder", target="tangents_1", role="tangent"),
        _op("mm_2", "aten.mm.default", "tangents_1", "act"),  # grad of b.lin.weight: an output
        _op("mm_3", "aten.mm.default", "tangents_1", "primals_2"),  # reads b.lin.weight
        _op("cos", "aten.cos.default", "act", module=["r"]),  # a forward op recomputed here (recorded)
        _op("thr", "aten.threshold_backward.default", "mm_3", "act"),  # relu's backward: reads the saved act
        _op("mm_4", "aten.mm.default", "thr", "primals_3"),  # grad of a.lin.weight: an output
        GraphNode(name="output", op="output", target="output", inputs=["mm_4", "mm_2"]),
    ]
    out = infer_compile(_compile(bwd_nodes, "backward"), forward)
    got = _stacks(out)
    assert got["mm_2"] == ["b", "b.lin"] and got["mm_3"] == ["b", "b.lin"] and got["mm_4"] == ["a", "a.lin"]
    assert got["cos"] == ["r"]  # recorded: kept, and no evidence for its neighbours
    # the saved `act` was made in `a` and used by `b.lin`: the common prefix is the top level; between b.lin and
    # a.lin nothing else is known either
    assert got["thr"] == []


def test_a_forward_op_recomputed_in_a_backward_runs_where_the_forward_ran_it():
    """SDPA's output transposed in ``attn`` (transformers' ``sdpa_attention_forward``), read by ``attn.c_proj``:
    the backward recomputes the transpose (same name, op and inputs) between two ops of ``c_proj``'s backward. The
    capture files it under ``attn``, the forward op's module (``fwd_nn_module_stack``), not ``attn.c_proj``."""
    fwd_nodes = [_param("primals_1", "attn.c_proj.weight")]
    fwd_nodes += [
        GraphNode(name="primals_2", op="placeholder", target="primals_2", role="input"),
        _op("sdpa", "aten.relu.default", "primals_2", module=["attn"]),
        _op("permute_3", "aten.permute.default", "sdpa", module=["attn"]),
        _op("mm", "aten.mm.default", "permute_3", "primals_1", module=["attn", "attn.c_proj"]),
        GraphNode(name="output", op="output", target="output", inputs=["mm", "sdpa"]),
    ]
    bwd_nodes = [_param("primals_1", "attn.c_proj.weight")]
    bwd_nodes += [
        GraphNode(name="sdpa", op="placeholder", target="sdpa", role="saved"),
        GraphNode(name="tangents_1", op="placeholder", target="tangents_1", role="tangent"),
        _op("mm_1", "aten.mm.default", "tangents_1", "primals_1"),  # c_proj's input gradient: reads its weight
        _op("permute_3", "aten.permute.default", "sdpa"),  # the forward's transpose, recomputed
        _op("mm_2", "aten.mm.default", "permute_3", "tangents_1"),  # c_proj's weight gradient: an output
        GraphNode(name="output", op="output", target="output", inputs=["mm_2"]),
    ]
    got = _stacks(infer_compile(_compile(bwd_nodes, "backward"), _compile(fwd_nodes)))
    assert got["mm_1"] == got["mm_2"] == ["attn", "attn.c_proj"]
    assert got["permute_3"] == ["attn"]


def test_a_live_backward_files_the_ops_torch_tied_to_no_forward_op_and_keeps_the_others():
    """A GRU cell's step, as a live capture records its backward (``fill_backward``): torch gave most ops the cell
    (``fwd_nn_module_stack``), none to a ``mul`` whose forward node carries the next sequence number, to the
    ``addmm`` a post-grad pattern made of a gradient's ``mm`` and its sum, to the sums of two gradients, and tied the
    ``select`` of ``torch.stack``'s backward to a forward op of no module."""
    cell = ["cell"]
    fwd_nodes = [_param("primals_3", "cell.weight_hh"), _param("primals_4", "cell.bias_hh")]
    fwd_nodes += [
        GraphNode(name="primals_1", op="placeholder", target="primals_1", role="input"),
        _op("sig", "aten.sigmoid.default", "primals_1", module=cell),
        _op("mm", "aten.addmm.default", "primals_4", "sig", "primals_3", module=cell),
        _op("stack", "aten.cat.default", "mm"),
        GraphNode(name="output", op="output", target="output", inputs=["stack", "sig"]),
    ]
    bwd_nodes = [
        _param("primals_3", "cell.weight_hh"),
        GraphNode(name="sig", op="placeholder", target="sig", role="saved"),
    ]
    bwd_nodes += [
        GraphNode(name="tangents_1", op="placeholder", target="tangents_1", role="tangent"),
        _op("select", "aten.select.int", "tangents_1"),  # torch: tied to the stack, of no module
        _op("mul", "aten.mul.Tensor", "select", "sig"),  # torch: tied to nothing; reads the cell's saved sigmoid
        _op("sub", "aten.sub.Tensor", "mul", module=cell),
        _op("acc", "aten.add.Tensor", "select", "sub"),  # autograd's sum of two gradients
        _op("t", "aten.permute.default", "primals_3", module=cell),
        _op("addmm_default", "aten.addmm.default", "acc", "sub", "t"),  # the pattern's: reads weight_hh
        _op("b1", "aten.sum.dim_IntList", "sub", module=cell),
        _op("b2", "aten.sum.dim_IntList", "mul", module=cell),
        _op("acc_1", "aten.add.Tensor", "b1", "b2"),  # sums two gradients and makes bias_hh's: the cell's
        # the gradients of the forward's parameters, in order (weight_hh's stands in for the h gradient here)
        GraphNode(name="output", op="output", target="output", inputs=["addmm_default", "acc_1"]),
    ]
    got = {n.name: n.module_stack for n in fill_backward(bwd_nodes, fwd_nodes, top={"select"}, sums={"acc", "acc_1"})}
    assert got["mul"] == got["addmm_default"] == got["acc_1"] == cell
    assert got["select"] == [] and got["acc"] == []  # what torch says: no module
    assert got["sub"] == got["t"] == cell  # recorded: kept
    recorded = [dataclasses.replace(n, module_stack=cell) if n.op == "call_function" else n for n in bwd_nodes]
    assert fill_backward(recorded, fwd_nodes) == recorded  # nothing missing: as it is


def test_facts_that_disagree_give_their_common_prefix():
    assert combine([("a",), ("a", "a.b"), ()]) == ("a", "a.b")
    assert combine([("a", "a.b"), ("a", "a.c")]) == ("a",)
    assert combine([(), ()]) == ()


def test_a_fused_node_is_the_module_of_what_its_members_write():
    """A CPU kernel of a 2-block GPT's forward, blocks.1's first layer norm: each statistics node recomputes the
    embedding and blocks.0's two residual adds (their ops: five of six) before its ``var_mean``. The ops' vote
    filed it under blocks.0; its result, the last op of each member, is blocks.1.ln1's."""
    stacks = {
        "add": [],  # the embedding + position, top level
        "view_7": ["blocks.0", "blocks.0.proj"],
        "add_3": ["blocks.0"],
        "view_11": ["blocks.0", "blocks.0.fc2"],
        "add_7": ["blocks.0"],
        "var_mean_2": ["blocks.1", "blocks.1.ln1"],
    }
    inputs = {"add_3": ["add", "view_7"], "add_7": ["add_3", "view_11"], "var_mean_2": ["add_7"]}
    member = ["add", "view_7", "add_3", "view_11", "add_7", "var_mean_2"]
    assert node_stack([member], stacks, inputs) == ["blocks.1", "blocks.1.ln1"]
    # two members, blocks.1.ln1's statistics and blocks.1's residual add: the block they share
    stacks["add_10"], inputs["add_10"] = ["blocks.1"], ["add_7"]
    assert node_stack([member, ["add_7", "add_10"]], stacks, inputs) == ["blocks.1"]
    # the same ops as one list (an imported trace logs no members): its results are the ops no other op reads
    assert node_stack([member + ["add_10"]], stacks, inputs) == ["blocks.1"]
    # one kernel making the causal masks of three layers: results of three modules, no majority, the top level
    # (though the ops it inlines are mostly layer 0's)
    masks = {f"mask{i}": [f"h.{i}", f"h.{i}.attn"] for i in range(3)}
    masks.update(arange=["h.0", "h.0.attn"], ne=["h.0", "h.0.attn"])
    masks_in = {f"mask{i}": ["ne"] for i in range(3)} | {"ne": ["arange"]}
    assert node_stack([["arange", "ne", "mask0"], ["mask1"], ["mask2"]], masks, masks_in) == []
    # a result with no module (a top-level op) lets the ops vote
    inputs["add_11"] = ["add_3"]
    stacks["add_11"] = []
    assert node_stack([["view_7", "add_3", "add_11"]], stacks, inputs) == ["blocks.0"]
    # ... unless it is known to run at the top level (a line of the user's code, no module): a KV cache's cat in the
    # model's own forward, inlining the view of the qkv linear's output it appends, is not qkv's
    kv = {"view_1": ["qkv"], "split": [], "cat": []}
    kv_in = {"split": ["view_1"], "cat": ["split"]}
    assert node_stack([["view_1", "split", "cat"]], kv, kv_in) == ["qkv"]
    assert node_stack([["view_1", "split", "cat"]], kv, kv_in, top={"split", "cat"}) == []
    # a top-level op fused with a module's results (the forward's own relu in a batch norm's backward): the module's
    stacks["add_12"], inputs["add_12"] = [], ["add_7"]
    assert node_stack([member, ["add_7", "add_10"], ["add_12"]], stacks, inputs, top={"add_12"}) == ["blocks.1"]


def test_a_fused_node_with_no_op_takes_the_weights_it_reads_and_its_neighbours():
    nodes = _block_forward(1)
    nodes.insert(1, _param("head_w", "head.weight"))
    fused = [
        FusedNode(name="k0", kind="reduction", kernel="k0", fx_nodes=["var_mean_0", "rsqrt_0", "norm_0", "ln_0"]),
        FusedNode(name="k1", kind="extern", kernel="mm", fx_nodes=["fc_0"]),
        FusedNode(name="k2", kind="pointwise", kernel="k2", fx_nodes=[]),  # no provenance
        FusedNode(name="k3", kind="extern", kernel="mm", fx_nodes=["proj_0"]),
        FusedNode(name="k4", kind="pointwise", kernel="k4", fx_nodes=[], reads=["head_w"]),
    ]
    out = derive_compile(infer_compile(_compile(nodes, fused=fused)))
    got = {n.name: n.module_stack for n in out.fused_nodes}
    assert got["k0"] == ["h.0", "h.0.ln"]  # the one op with a module among its ops is the majority of those
    assert got["k2"] == ["h.0", "h.0.mlp"]  # between h.0.mlp.0 and h.0.mlp.2
    assert got["k4"] == ["head"]  # reads head.weight
    assert out.modules_inferred


def test_a_report_with_recorded_modules_is_not_touched():
    c = _compile(
        [dataclasses.replace(n, module_stack=["m"]) if n.op == "call_function" else n for n in _block_forward()]
    )
    report = Report(torch_version="2.13", device="cpu", compiles=[c])
    assert infer_report_modules(report) is report


@pytest.mark.gpu_fixture
def test_the_llama_backward_opens_with_its_layers_as_one_repeated_block():
    """The H200 Llama-3-8B step's backward was recorded without module paths for its own ops (only forward ops
    recomputed there had one): 1,326 boxes at open, no grouping. Inferred on load, its layers repeat. (That
    recording is kept as ``gpu_llama8b_training_unrecorded_backward``; the fixture of today's capture records them.)"""
    report = recorded("gpu_llama8b_training_unrecorded_backward.json.gz")
    fwd, bwd = report.compiles
    assert not fwd.modules_inferred and bwd.modules_inferred
    (rep,) = bwd.module_view.repeats
    # layer 0 runs last and Inductor interleaves its weight gradients with the embedding's: its sub-modules run in
    # another order, one fused node fewer, and it repeats with the others, named as the one that differs (as in the
    # recording that has the module paths)
    assert rep.label == "model.layers.31-0" and len(rep.modules) == 32 and rep.same == "kernels"
    assert rep.differs == ["model.layers.0"] and "except in 1 of 32: layers.0 (24 fused nodes)" in rep.summary, (
        rep.summary
    )
    # on a screen of 36 boxes (1000 x 700) the 32 layers are one box
    opening = [o for o in bwd.module_view.openings if o.fit <= 36][-1]
    assert opening.boxes <= 36 and "model" in opening.expanded and rep.key not in opening.expanded
    assert all(o.boxes <= o.fit for o in bwd.module_view.openings)
    boxes = [n for n in bwd.fused_nodes if not n.is_glue]
    assert sum(1 for n in boxes if n.module_stack) >= len(boxes) - 1
    # a recorded op path is kept as it was (the recomputed rotary embedding)
    cos = next(n for n in bwd.graphs["post_grad"].nodes if n.name == "cos")
    assert cos.module_stack == ["model", "model.rotary_emb"]
