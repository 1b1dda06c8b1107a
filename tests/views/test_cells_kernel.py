"""Notebook cells in a report, in a REAL ipykernel: frames read ``cell [N]`` line L as the user sees the
cell, the magic's own call is not the user's frame, and the cells' text is in ``report.source_files``."""

from __future__ import annotations

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def kernel(ipython_kernel):
    """The session's kernel (tests/_kernel.py), shared with test_magic.py: the cells' numbers are read from its
    history, not assumed."""
    return ipython_kernel


def test_cells_are_named_by_execution_count(kernel):
    kernel.ok("def g(x):\n    return torch.sin(x) * 2\n")
    kernel.ok("%%inductor_lens -f g\nx = torch.randn(8)\ny = g(x)\n")
    n_def = kernel.value(
        "[i for i, s in enumerate(get_ipython().history_manager.input_hist_raw) if s.startswith('def g(x)')][-1]"
    )
    n_lens = kernel.value(
        "[i for i, s in enumerate(get_ipython().history_manager.input_hist_raw) if s.startswith('%%inductor_lens -f g')][-1]"
    )
    kernel.ok("rep = report_for(g)")
    # the kernel's ops come from line 2 of the cell that defines g
    last = kernel.value("[(f.file, f.line, f.code, f.is_user) for f in rep.kernels[0].user_stack[0]][-1]")
    assert last == (f"cell [{n_def}]", 2, "return torch.sin(x) * 2", True)
    # the call that compiled: line 3 of the lens cell as shown (its line 1 is %%inductor_lens)
    trig = kernel.value(
        "[(f.file, f.line, f.stage) for f in rep.compiles[0].trigger.user_stack if f.file.startswith('cell')]"
    )
    assert (f"cell [{n_lens}]", 3, "user") in trig
    assert all(stage != "user" for file, line, stage in trig if line == 1)
    assert not kernel.value(
        "[f.file for f in rep.compiles[0].trigger.user_stack if f.is_user "
        "and ('ipykernel' in f.file or f.file.endswith('.py'))]"
    )
    files = kernel.value("{s.file: s.text for s in rep.source_files}")
    assert files[f"cell [{n_def}]"].startswith("def g(x):")
    assert files[f"cell [{n_lens}]"].splitlines()[2] == "y = g(x)"


def test_a_frame_that_gave_inductor_no_graph_is_named_by_its_cell(kernel):
    """A frame dynamo traced with no tensor op in it (the code after a graph break that only prints) was placed in
    ipykernel's temporary file ("1/0 h() after line 3 · 1041618724.py:3") where every other place reads ``cell [N]``."""
    kernel.ok('def h(x):\n    y = torch.cos(x) + 1\n    print("a graph break")\n    return y\n')
    n_def = kernel.value(
        "[i for i, s in enumerate(get_ipython().history_manager.input_hist_raw) if s.startswith('def h(x)')][-1]"
    )
    kernel.ok("%%inductor_lens -f h --name rep_empty\nh(torch.randn(8))\n")
    frames = kernel.value("[(e.function, e.file, e.line) for e in rep_empty.empty_frames]")
    assert frames, "the frame after the break gave Inductor no graph"
    for function, file, line in frames:
        assert file == f"cell [{n_def}]" and 1 <= line <= 4, (function, file, line)
