"""The calls of one module in a compile (report/modules.py: node_calls, module_calls, module_view's call groups), on
report data: a cell unrolled over time steps, a report that records no call, a node whose results tie."""

from inductor_lens.report.model import FusedNode, GraphNode
from inductor_lens.report.modules import module_view, node_calls


def _graph(rows):
    """Post-grad nodes ``(name, inputs, module_calls)``, all in module ``cell``."""
    return {
        name: GraphNode(
            name=name, op="call_function", target="t", inputs=ins, module_stack=["cell"], module_calls=calls
        )
        for name, ins, calls in rows
    }


def _cell_steps(steps, calls=True):
    fused, rows = [], []
    for t in range(steps):
        rows += [(f"mm{t}", [], [t] if calls else []), (f"pw{t}", [f"mm{t}"], [t] if calls else [])]
        fused += [
            FusedNode(name=f"op{2 * t}", kind="extern", fx_nodes=[f"mm{t}"], module_stack=["cell"], label="addmm"),
            FusedNode(name=f"op{2 * t + 1}", kind="pointwise", fx_nodes=[f"pw{t}"], module_stack=["cell"]),
        ]
    return fused, _graph(rows)


def test_each_call_of_a_cell_is_a_group_of_its_own_named_by_its_number():
    fused, ops = _cell_steps(24)
    view, paths = module_view(fused, [], None, node_calls(fused, ops))
    (calls,) = view.calls
    assert calls.module == "cell" and calls.summary == "cell · 24 calls"
    assert calls.keys[:2] == ["cell@0", "cell@1"] and calls.labels[2] == "cell · call 3 of 24"
    assert paths["op4"] == paths["op5"] == ["cell", "cell@2"]
    # a small screen opens the cell folded (one box; a click shows its 24 calls, one box each), a screen of 24 boxes
    # the whole graph: the cell and each call open
    assert [(o.fit, o.boxes, len(o.expanded)) for o in view.openings] == [(4, 1, 0), (24, 48, 25)]


def test_a_report_without_call_numbers_keeps_one_group_per_module():
    # torch 2.11 numbers no call, and reports made before calls were read have none: no call groups, no labels
    fused, ops = _cell_steps(3, calls=False)
    assert node_calls(fused, ops) == {}
    view, paths = module_view(fused, [], None, node_calls(fused, ops))
    assert view.calls == [] and paths == {}


def test_a_node_made_of_several_calls_belongs_to_none_of_them():
    # the sum of a bias's gradients over every call: its result (the last add) has no call, its inputs tie
    fused, ops = _cell_steps(2)
    ops.update(_graph([("s0", [], [0]), ("s1", [], [1]), ("acc", ["s0", "s1"], [])]))
    fused.append(FusedNode(name="op9", kind="pointwise", fx_nodes=["s0", "s1", "acc"], module_stack=["cell"]))
    ops["acc"] = GraphNode(name="acc", op="call_function", target="t", inputs=["s0", "s1"], module_stack=["cell"])
    calls = node_calls(fused, ops)
    assert "op9" not in calls  # its one result has no recorded call
    ops["acc"] = GraphNode(name="acc", op="call_function", target="t", inputs=[], module_stack=["cell"])
    ops["s0"] = GraphNode(name="s0", op="call_function", target="t", inputs=[], module_stack=["cell"], module_calls=[0])
    assert node_calls(fused, ops)["op9"] == [None]  # results of call 0 and call 1, one each: a tie
    view, paths = module_view(fused, [], None, node_calls(fused, ops))
    assert "op9" not in paths and paths["op3"] == ["cell", "cell@1"]
