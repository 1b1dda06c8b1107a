"""Issue 22: each row of the Memory view's tables names "your line", decided once in Python (``user_line``, a
``RowLine``: report/lines.py) by the rule of the roll-ups by line. The view used to work it out in JS from each row's
stack (the innermost user frame), so a model made only of torch's modules (tests/sequential_models.py: no op has a
line of its own) showed no line on any row while its roll-ups named the line that built each module. Real CPU
captures; the expected lines are written by hand (``NESTED_BUILT``) or read from the rows' own stacks."""

from __future__ import annotations

import json

import inductor_lens
from tests.capturing.test_built_lines import MODELS, NESTED_BUILT, _line


def _built(fx, fx_node: str) -> int:
    """The line of tests/sequential_models.py that built the innermost module of ``fx_node``, from the table."""
    path = fx[fx_node].module_stack[-1]
    return _line(NESTED_BUILT.get(path) or NESTED_BUILT[path.rsplit(".", 1)[-1]])


def test_every_memory_row_of_a_sequential_training_step_names_the_line_that_built_its_module(
    nested_sequential_training_report,
):
    fwd = nested_sequential_training_report.compiles[0]
    m, fx = fwd.memory, {n.name: n for n in fwd.graphs["post_grad"].nodes}
    acts = [s for s in m.saved_for_backward if s.kind == "activation"]
    assert acts and not any(f.is_user for s in acts for f in s.user_stack), "the issue: no line of the user's ran"
    for s in acts:
        assert s.user_line is not None, s.name
        assert (s.user_line.file, s.user_line.line, s.user_line.built) == (str(MODELS), _built(fx, s.fx_node), True)
        assert s.user_line.code == MODELS.read_text(encoding="utf-8").splitlines()[s.user_line.line - 1].strip()
    by_name = {s.name: s for s in m.saved_for_backward}
    assert m.saved_groups, "three Blocks: their saved tensors fold"
    for g in m.saved_groups:  # a group's line is its first tensor's
        assert g.user_line == by_name[g.names[0]].user_line, g.what
    assert m.recomputed
    for r in m.recomputed:
        assert (r.user_line.file, r.user_line.line, r.user_line.built) == (str(MODELS), _built(fx, r.fx_node), True)
    for c in nested_sequential_training_report.compiles:  # the buffers alive at the peak, forward and backward
        post = {n.name: n for n in c.graphs["post_grad"].nodes}
        rows = [b for b in c.memory.peak_buffers if b.fx_node in post and post[b.fx_node].module_stack]
        assert rows, c.id
        for b in rows:
            assert (b.user_line.line, b.user_line.built) == (_built(post, b.fx_node), True), (c.id, b.name)


def test_memory_rows_of_a_model_with_its_own_forward_name_the_line_that_ran(stack_training_report):
    """A line that ran always wins: the innermost user frame of the row's stack, never marked built."""
    m = stack_training_report.compiles[0].memory
    rows = [*m.saved_for_backward, *m.saved_groups, *m.recomputed, *m.peak_buffers]
    ran = [r for r in rows if any(f.is_user for f in r.user_stack)]
    assert ran
    for r in ran:
        f = [f for f in r.user_stack if f.is_user][-1]
        assert (r.user_line.file, r.user_line.line, r.user_line.built) == (f.file, f.line, False)
    assert all(r.user_line is None for r in rows if not r.user_stack)


def test_a_report_written_before_row_lines_gets_them_on_load(nested_sequential_training_report, tmp_path):
    data = json.loads(nested_sequential_training_report.to_json())
    data["derived"] = 8
    for c in data["compiles"]:
        m = c.get("memory") or {}
        for key in ("saved_for_backward", "saved_groups", "recomputed", "peak_buffers"):
            for row in m.get(key) or []:
                row.pop("user_line", None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert inductor_lens.load(old) == nested_sequential_training_report
