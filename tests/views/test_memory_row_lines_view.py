"""Issue 22: the Memory view's tables draw each row's "your line" as Python decided it (``user_line``,
report/lines.py), marked "built here" where the line built the module of an op that ran inside torch. The view
used to work the line out from the row's stack in JS: a model made only of torch's modules (a nested
Sequential, tests/sequential_models.py) showed an empty "your line" on every row. Headless Chromium, offline page."""

from __future__ import annotations

import pytest

from tests.capturing.test_built_lines import MODELS
from tests.views.test_html_export import _assert_clean, _open

pytestmark = pytest.mark.browser


def _cells(view, role):
    """Each row's "your line" cell: (data-how, its text, the row's data-line)."""
    out = []
    for row in view.locator(f'[data-role="{role}"]').all():
        cell = row.locator('[data-role="row-line"]')
        how = cell.get_attribute("data-how") if cell.count() else None
        out.append((how, cell.inner_text().strip() if cell.count() else "", row.get_attribute("data-line")))
    return out


def _want(line):
    return ("built", f"sequential_models.py:{line.line} built here", f"{line.file}:{line.line}")


def test_memory_rows_of_a_sequential_training_step_show_the_built_line_at_1000x700(
    tmp_path, offline_page, nested_sequential_training_report
):
    page = offline_page
    page.set_viewport_size({"width": 1000, "height": 700})
    fwd = nested_sequential_training_report.compiles[0]
    m = fwd.memory
    path = tmp_path / "seq.html"
    nested_sequential_training_report.save_html(path)
    _open(page, path)
    page.click('[data-tab="memory"]')
    view = page.locator('[data-view="memory"]')
    acts = [g for g in m.saved_groups if g.kind == "activation"]
    assert acts and all(g.user_line.built and g.user_line.file == str(MODELS) for g in acts)
    groups = _cells(view, "saved-group-row")
    assert sorted(c for c in groups if c[0]) == sorted(_want(g.user_line) for g in m.saved_groups if g.user_line)
    assert len(groups) == len(m.saved_groups)
    view.locator('[data-role="saved-mode"]').click()  # one row per tensor
    tensors = _cells(view, "saved-row")
    assert sorted(c for c in tensors if c[0]) == sorted(_want(s.user_line) for s in m.saved_for_backward if s.user_line)
    assert all(not c[1] for c in tensors if not c[0])  # an input: no line, nothing drawn
    assert len(tensors) == len(m.saved_for_backward)
    peak = [b for b in m.peak_buffers if b.user_line]
    assert peak
    assert sorted(c for c in _cells(view, "memory-buffer-row") if c[0]) == sorted(_want(b.user_line) for b in peak)
    # the module column is Python's LiveBuffer.module (the op's innermost module, the one peak_by_module counts)
    rows = view.locator('[data-role="memory-buffer-row"]')
    drawn = [rows.nth(i).locator("td").nth(2).inner_text().strip() for i in range(rows.count())]
    assert drawn == [b.module for b in m.peak_buffers] and any(drawn)
    _assert_clean(page)
