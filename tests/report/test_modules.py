"""Issue 25: repeated modules (report/modules.py) and the opening expansion, on the Llama-3-8B-shaped
forward recorded on an H200 and on small hand-made graphs (torch-free)."""

from __future__ import annotations

import pytest

from inductor_lens.report import modules
from inductor_lens.report.model import FusedNode
from inductor_lens.report.modules import find_repeats, module_view
from tests._recorded import recorded


@pytest.fixture(scope="module")
def llama_forward():
    report = recorded("gpu_llama8b_training.json.gz")
    return next(c for c in report.compiles if c.graph_kind == "forward")


def test_the_32_layers_are_one_repeat_and_the_layers_whose_kernels_differ_are_named(llama_forward):
    c = llama_forward
    (r,) = [r for r in c.module_view.repeats if r.parent == "model"]
    assert r.label == "model.layers.0-31" and r.modules == [f"model.layers.{i}" for i in range(32)]
    # independent expectation: the kernels each layer calls (extern calls by op), read from the fused nodes
    boxes = [n for n in c.fused_nodes if not n.is_glue]
    seqs = {m: [n.label if n.kind == "extern" else n.kernel for n in boxes if m in n.module_stack] for m in r.modules}
    assert r.nodes_each == len(seqs["model.layers.5"]) == 13
    common = seqs["model.layers.5"]
    assert r.same == "kernels"
    assert r.differs == [m for m in r.modules if seqs[m] != common] == ["model.layers.0", "model.layers.1"]
    assert r.summary.startswith(
        "model.layers.0-31 ×32: 13 fused nodes each, same kernels except in 2 of 32: layers.0 (other kernels), layers.1 (other kernels)"
    )
    # attached: the fused nodes of `model` itself run inside each layer (the rotary embedding applied to q, k)
    for m, att in zip(r.modules, r.attached):
        lo = min(i for i, n in enumerate(boxes) if m in n.module_stack)
        hi = max(i for i, n in enumerate(boxes) if m in n.module_stack)
        inside = [n.name for n in boxes[lo : hi + 1] if n.module_stack == ["model"]]
        assert set(inside) <= set(att), m
    assert [len(a) for a in r.attached[1:]] == [2] * 31
    # q/k/v_proj, gate/up_proj are no repeat: siblings of one module, not numbered layers
    assert not [x for x in c.module_view.repeats if "proj" in x.label]
    # every node of a layer (and every attached one) folds into the repeat first
    in_repeat = {n.name for n in boxes if r.key in n.group_path}
    assert in_repeat == {n.name for n in boxes if set(n.module_stack) & set(r.modules)} | {
        a for att in r.attached for a in att
    }


def test_the_forward_opens_with_more_than_one_box_at_every_screen_size(llama_forward):
    openings = llama_forward.module_view.openings
    assert openings[0].fit == 4 and [o.fit for o in openings] == sorted(o.fit for o in openings)
    at_9 = [o for o in openings if o.fit <= 9][-1]  # a 1000 x 700 page's pane: 9 boxes
    assert "model" in at_9.expanded and "repeat:model.layers.0-31" not in at_9.expanded
    assert 1 < at_9.boxes <= 9
    for o in openings:
        assert o.boxes <= max(o.fit, 60)


def _node(name, kind, stack, kernel=None):
    return FusedNode(name=name, kind=kind, module_stack=stack, kernel=kernel or f"k_{name}", label=kernel or name)


def test_siblings_whose_kinds_differ_repeat_and_are_named_and_a_run_stops_at_other_sub_modules():
    """Siblings repeat where the same sub-modules ran (in any order): one whose fused nodes differ (another
    kind, one more node) is in the run and named, with its count; one with other sub-modules stops the run."""

    def layer(i, kinds, subs=None):
        m = f"net.blocks.{i}"
        subs = subs or [f"sub{j}" for j in range(len(kinds))]
        return [
            _node(f"b{i}_{j}", k, ["net", m, f"{m}.{s}"], kernel=f"k{j}") for j, (k, s) in enumerate(zip(kinds, subs))
        ]

    pe = ["pointwise", "extern"]
    fused = (
        layer(0, pe)
        + layer(1, pe)
        + layer(2, ["reduction", "extern"])
        + layer(3, pe + ["pointwise"], ["sub0", "sub1", "sub1"])
    )
    (r,) = find_repeats(fused)
    assert r.modules == [f"net.blocks.{i}" for i in range(4)] and r.same == "kernels" and r.nodes_each == 2
    assert r.differs == ["net.blocks.2", "net.blocks.3"]
    assert (
        r.summary
        == "net.blocks.0-3 ×4: 2 fused nodes each, same kernels except in 2 of 4: blocks.2 (other kernel kinds), blocks.3 (3 fused nodes)"
    )
    fused = layer(0, pe) + layer(1, pe) + layer(2, pe, ["sub0", "other"])
    (r,) = find_repeats(fused)
    assert r.modules == ["net.blocks.0", "net.blocks.1"] and r.differs == []
    fused = layer(0, ["pointwise"]) + [_node("x", "pointwise", ["net", "net.other"])] + layer(1, ["pointwise"])
    assert find_repeats(fused) == []  # another module runs between them: no run


def test_two_siblings_a_backward_runs_last_first_read_up_and_longer_runs_read_down():
    """nu29 D6: a MoE's backward folded experts 2 and 1 (run in that order) as ``model.moe.experts.2-1``, which read
    like a typo or an empty range. Two read up, ``experts.1-2``, their order kept in ``modules``; three or more
    counted down keep the documented ``31-0``."""

    def layer(i):
        m = f"moe.experts.{i}"
        return [_node(f"e{i}_{j}", "extern", ["moe", m, f"{m}.{s}"], kernel=f"k{j}") for j, s in enumerate("ud")]

    (r,) = find_repeats(layer(2) + layer(1))
    assert (r.label, r.key, r.modules) == (
        "moe.experts.1-2",
        "repeat:moe.experts.1-2",
        ["moe.experts.2", "moe.experts.1"],
    )
    assert r.summary.startswith("moe.experts.1-2 ×2: ")
    (r,) = find_repeats(layer(3) + layer(2) + layer(1))
    assert r.label == "moe.experts.3-1"


def test_a_node_a_fusion_put_into_an_earlier_layers_span_runs_apart_and_the_layers_still_repeat():
    """A CPU training forward makes layer 2's causal mask in the graph's first kernel, inside layer 0's span: that
    node runs apart (left out of layer 2's span and shape, still in its group); where no shape is shared by more
    instances than any other, the run says only that the same sub-modules ran."""

    def layer(i, extra=()):
        m = f"net.blocks.{i}"
        return [
            _node(f"b{i}_{j}", k, ["net", m, f"{m}.{s}"])
            for j, (k, s) in enumerate([("reduction", "norm"), ("extern", "fc"), *extra])
        ]

    hoisted = _node("mask2", "pointwise", ["net", "net.blocks.2", "net.blocks.2.attn"])
    fused = layer(0)[:1] + [hoisted] + layer(0)[1:] + layer(1) + layer(2)
    (r,) = find_repeats(fused)
    assert r.modules == ["net.blocks.0", "net.blocks.1", "net.blocks.2"] and r.nodes_each == 2 and r.same == "kinds"
    assert r.summary.endswith("; + 1 fused node of blocks.2 runs apart from the rest")
    view, paths = module_view(fused, [])
    assert paths["mask2"] == ["net", "repeat:net.blocks.0-2", "net.blocks.2", "net.blocks.2.attn"]
    # two layers with the same sub-modules, one with a node more: no shape is the most common
    (r,) = find_repeats(layer(0) + layer(1, [("pointwise", "fc")]))
    assert r.same == "modules" and r.differs == []
    assert r.summary == "net.blocks.0-1 ×2: the same sub-modules, 2-3 fused nodes each (the fused nodes differ)"


def test_the_first_blocks_counters_updated_with_every_others_in_the_first_kernel_run_apart():
    """A CNN's training forward on a CPU: every BatchNorm's ``num_batches_tracked += 1`` is made in the graph's first
    kernel, before any convolution. The first block's counters opened its span, its sub-modules then ran in another
    order (bn1, bn2, conv1, conv2) than the second's (conv1, bn1, conv2, bn2), and the blocks did not repeat."""

    def stack(b, sub=None):
        m = f"layer1.{b}"
        return ["layer1", m] + ([f"{m}.{sub}"] if sub else [])

    counters = [
        _node(f"nbt{b}{j}", "pointwise", stack(b, f"bn{j}"), kernel="cpp_fused_add_0") for b in (0, 1) for j in (1, 2)
    ]
    block = [("conv1", "extern", "conv"), ("bn1", "reduction", "k_bn"), (None, "pointwise", "k_relu")]
    block += [("conv2", "extern", "conv"), ("bn2", "reduction", "k_bn"), (None, "pointwise", "k_add")]
    blocks = [
        _node(f"b{b}_{j}", kind, stack(b, sub), kernel=k) for b in (0, 1) for j, (sub, kind, k) in enumerate(block)
    ]
    (r,) = find_repeats([_node("stem", "extern", ["stem"]), *counters, *blocks])
    assert r.modules == ["layer1.0", "layer1.1"] and r.nodes_each == 6 and r.same == "kernels", r
    assert r.summary.endswith("; + 4 fused nodes of layer1.0, layer1.1 run apart from the rest"), r.summary


def test_a_checkpointed_backward_repeats_though_its_head_and_recomputation_run_among_the_blocks():
    """The backward of four checkpointed blocks (CPU, torch 2.13): every block's recomputed LayerNorm runs in the
    first kernel, so the first block's sub-modules begin with it (ln, fc1, fc2) where the others run fc2, fc1, ln;
    the head's weight gradient runs late, inside blocks.2's span; the weight gradients of all blocks at the end. Only
    blocks.1-0 folded: the head's span held blocks.3 and blocks.2, which left the sequence, and the first block's
    order differed. All four fold now, what a fusion moved counted apart."""

    def sub(b, name, j, kind="extern"):
        return _node(f"b{b}_{name}_{j}", kind, [f"blocks.{b}", f"blocks.{b}.{name}"], kernel=f"k_{name}_{j}")

    def block(b, names):
        return [sub(b, name, j, "reduction" if name == "ln" else "extern") for name in names for j in (0, 1)]

    recompute = [sub(b, "ln", 9, "reduction") for b in (3, 2, 1, 0)]
    late = _node("head_w", "extern", ["head"], kernel="k_head_w")
    blocks2 = block(2, ["fc2", "fc1", "ln"])
    fused = [
        *[_node(f"head{j}", "extern", ["head"], kernel=f"k_head{j}") for j in (0, 1)],
        *recompute,
        *block(3, ["fc1", "fc2", "ln"]),
        *blocks2[:1],
        late,
        *blocks2[1:],
        *block(1, ["fc2", "fc1", "ln"]),
        *block(0, ["fc2", "fc1", "ln"]),
        *[sub(b, name, 8) for b in (3, 2, 1, 0) for name in ("fc2", "fc1")],  # the weight gradients
    ]
    (r,) = find_repeats(fused)
    assert r.modules == ["blocks.3", "blocks.2", "blocks.1", "blocks.0"], r
    assert "run apart from the rest" in r.summary, r.summary


def test_an_instance_of_another_list_called_from_inside_the_layers_stays_out_of_their_sequence():
    """``m.shared.0``/``m.shared.1``, numbered children of another list, are called from inside each layer: they stay
    boxes of their own there, and the four layers still fold (keeping every numbered child in the sequence, as a
    checkpointed backward's blocks inside the head's span are, broke the run at the first shared call)."""
    fused = []
    for i in range(4):
        layer = f"m.layers.{i}"
        fused += [
            _node(f"a{i}", "pointwise", ["m", layer, f"{layer}.attn"], kernel="ka"),
            _node(f"s{i}", "pointwise", ["m", f"m.shared.{i % 2}"], kernel="ks"),
            _node(f"b{i}", "pointwise", ["m", layer, f"{layer}.mlp"], kernel="kb"),
        ]
    (r,) = find_repeats(fused)
    assert r.modules == [f"m.layers.{i}" for i in range(4)] and r.same == "kernels", r


def test_the_nodes_of_one_kernel_call_count_as_the_one_box_the_graph_draws():
    """A CNN's training forward on a CPU: Inductor copies 14 inputs to channels-last in one kernel before the
    stem, 14 fused nodes drawn as one box ("channels-last copy ×14": Kernel.call_sites). Counted as 14 boxes, the
    collapsed graph (the copies, stem, layer1-3, fc: 6 boxes) took 19, over two screens of 8, and the graph opened
    with every module expanded: 60 boxes in one column at 1000 x 700. Counted as the graph draws them, it opens
    collapsed; the members of a call in a module still fold into it."""
    copies = [_node(f"copy{i}", "pointwise", [], kernel="cpp_fused_copy_0") for i in range(14)]
    bn_count = [_node(f"nbt{i}", "pointwise", [f"layer{i}", f"layer{i}.bn"], kernel="cpp_fused_copy_0") for i in (1, 2)]
    mods = [
        _node(f"{m}_{j}", "pointwise", [m, f"{m}.conv{j}"])
        for m in ("stem", "layer1", "layer2", "layer3")
        for j in range(6)
    ]
    fused = [*copies, *bn_count, *mods, _node("fc", "extern", ["fc"])]
    runs = {n.name: "copy0" for n in copies + bn_count}

    def at(view, fit):
        return [o for o in view.openings if o.fit <= fit][-1]

    assert at(module_view(fused, [])[0], 8).boxes == len(fused)  # 14 boxes of copies: every module open
    view, paths = module_view(fused, [], runs)
    opening = at(view, 8)
    assert opening.boxes <= 8 and not {"stem", "layer1", "layer2", "layer3"} <= set(opening.expanded), opening
    assert paths == {}  # nothing repeats here: no group path other than the module stacks


def test_a_small_graph_opens_all_expanded():
    fused = [_node(f"n{i}", "pointwise", ["net", f"net.blocks.{i}"]) for i in range(6)]
    view, paths = module_view(fused, [])
    assert len(view.openings) == 1
    assert set(view.openings[0].expanded) == {"net", "repeat:net.blocks.0-5"} | {f"net.blocks.{i}" for i in range(6)}
    assert paths["n0"] == ["net", "repeat:net.blocks.0-5", "net.blocks.0"]


def test_a_backward_runs_its_layers_last_first_and_they_still_repeat():
    """A backward differentiates the layers in reverse (blocks.2, blocks.1, blocks.0): numbered siblings counted
    down repeat as those counted up do, labelled in the order they ran; numbers that skip are no run."""

    def layer(i):
        m = f"net.blocks.{i}"
        return [_node(f"b{i}_{j}", k, ["net", m], kernel=f"k{j}") for j, k in enumerate(["reduction", "extern"])]

    (r,) = find_repeats(layer(2) + layer(1) + layer(0))
    assert r.label == "net.blocks.2-0" and r.modules == ["net.blocks.2", "net.blocks.1", "net.blocks.0"]
    assert r.summary.startswith("net.blocks.2-0 ×3: 2 fused nodes each, same kernels")
    assert find_repeats(layer(3) + layer(1)) == []  # 3 then 1: not numbered one after another


def _greedy_from_scratch(paths, limit):
    """``modules._greedy`` as it was: every step counts the boxes again from nothing (the reference)."""
    from inductor_lens.report.modules import _shown

    expanded, opened = [], set()
    while True:
        count, groups = _shown(paths, opened)
        for g, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
            inner = {
                paths[i][list(paths[i]).index(g) + 1] if list(paths[i]).index(g) + 1 < len(paths[i]) else ("node", i)
                for i in members
            }
            if len(inner) == 1 or count + len(inner) - 1 <= limit:
                expanded.append(g)
                opened.add(g)
                break
        else:
            return expanded, count


def test_the_greedy_opening_kept_up_to_date_is_the_one_counted_from_scratch():
    import random

    from inductor_lens.report.modules import _greedy

    rng = random.Random(26)
    for _ in range(300):
        names = [f"m{i}" for i in range(rng.randint(1, 12))]
        paths = []
        for _ in range(rng.randint(1, 60)):
            depth = rng.randint(0, 5)
            p = []
            for _ in range(depth):  # a path names each module once, outermost first
                m = rng.choice(names)
                if m not in p:
                    p.append(m)
            paths.append(p)
        for limit in (1, 3, 8, 20, 60):
            assert _greedy(paths, limit) == _greedy_from_scratch(paths, limit), (paths, limit)


def test_one_greedy_run_answers_for_every_limit_up_to_the_one_it_says():
    """``openings`` runs the greedy opening once for each range of screen sizes that gives one opening
    (``_greedy_run``'s last limit): the same openings as a run for every size, and each size in a run's range
    is that run's opening."""
    import random

    from inductor_lens.report.modules import MIN_FIT, OPEN_LIMIT, _greedy, _greedy_run, openings

    def openings_one_by_one(paths):  # the reference: a greedy run for every fit
        every = list(dict.fromkeys(m for p in paths for m in p))
        out = []
        for fit in range(MIN_FIT, OPEN_LIMIT + 1):
            if len(paths) <= max(modules.ALWAYS_EXPANDED, 2 * fit):
                expanded, boxes = every, len(paths)
            else:
                expanded, boxes = _greedy(paths, fit)
                if boxes > 2 * fit:
                    expanded, boxes = _greedy(paths, OPEN_LIMIT)
            if not out or set(out[-1].expanded) != set(expanded):
                out.append(modules.ModuleOpening(fit=fit, expanded=sorted(expanded, key=every.index), boxes=boxes))
            if expanded is every:
                break
        return out

    rng = random.Random(2026)
    runs = 0
    for _ in range(200):
        names = [f"m{i}" for i in range(rng.randint(1, 14))]
        paths = []
        for _ in range(rng.randint(1, 160)):
            p = []
            for _ in range(rng.randint(0, 6)):
                m = rng.choice(names)
                if m not in p:
                    p.append(m)
            paths.append(p)
        assert openings(paths) == openings_one_by_one(paths), paths
        for limit in (1, 4, 9, 20, 45):
            expanded, boxes, until = _greedy_run(paths, limit)
            assert until >= limit
            top = min(until, 200)  # every limit up to it; its ends and middle checked (all of them: 9 CPU-s)
            for other in sorted({limit, limit + 1, (limit + top) // 2, top - 1, top} & set(range(limit, top + 1))):
                assert _greedy(paths, other) == (expanded, boxes), (paths, limit, other)
            runs += until < 200
    assert runs > 100  # most runs end at a limit where another group would fit


def test_a_screen_opens_with_what_its_rows_show_a_column_is_taller_than_boxes_side_by_side():
    """Eight modules of five nodes each, 40 boxes: read one after another (a chain), opening one of them makes a
    column of 12 rows; side by side (each module's nodes read only each other), it makes 5 rows. A screen of 12
    boxes shows 8 rows (``rows_for``): the chain keeps every module folded there, the side-by-side graph opens one."""
    from inductor_lens.report.modules import openings, rows, rows_for

    paths = [[f"m{k}"] for k in range(8) for _ in range(5)]
    chain = [(i, i + 1) for i in range(len(paths) - 1)]
    side = [(5 * k + j, 5 * k + j + 1) for k in range(8) for j in range(4)]
    assert rows(paths, chain, set()) == 8 and rows(paths, chain, {"m0"}) == 12 and rows(paths, side, {"m0"}) == 5
    assert (rows_for(12), rows_for(17)) == (8, 12)

    def at(found, fit):
        return [o for o in found if o.fit <= fit][-1]

    assert at(openings(paths), 12).expanded == ["m0"]  # by boxes alone: 12 boxes
    assert at(openings(paths, chain), 12).expanded == []  # 12 rows: a screen of 12 boxes shows 8
    assert at(openings(paths, side), 12).expanded == ["m0"]  # 5 rows
    assert at(openings(paths), 17).expanded == ["m0", "m1"]  # 16 boxes
    assert at(openings(paths, chain), 17).expanded == ["m0"]  # 16 rows do not fit 12; 12 do


def test_the_loss_after_the_head_is_no_part_of_the_last_layer_whose_statistics_run_at_the_end():
    """A CPU training forward computes each layer's saved norm statistics at the end of the graph, after the head and
    the loss (the user's own code, at the top level). The last layer's span ran to its statistics, so the loss was
    folded into the last layer. Now: the statistics after the head run apart (the last layer keeps its sub-modules),
    and the loss stays a box of the top level."""

    def layer(i):
        m = f"net.layers.{i}"
        return [_node(f"l{i}_{s}", k, ["net", m, f"{m}.{s}"]) for s, k in [("norm", "reduction"), ("fc", "extern")]]

    head = _node("head", "extern", ["net", "net.head"])
    loss = [_node(f"loss{j}", "reduction", ["net"]) for j in range(2)]
    late = [_node(f"stat{i}", "pointwise", ["net", f"net.layers.{i}", f"net.layers.{i}.norm"]) for i in (1, 0)]
    fused = layer(0) + layer(1) + [head, *loss, *late]
    (r,) = find_repeats(fused)
    assert r.modules == ["net.layers.0", "net.layers.1"] and r.nodes_each == 2 and r.attached == [[], []]
    assert r.summary.endswith("; + 2 fused nodes of layers.0, layers.1 run apart from the rest")
    _, paths = module_view(fused, [])
    assert "loss0" not in paths and "loss1" not in paths  # the top level's: no group
    assert paths["stat1"] == ["net", "repeat:net.layers.0-1", "net.layers.1", "net.layers.1.norm"]
