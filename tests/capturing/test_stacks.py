"""Stacks as the capture takes them (``capturing/stacks.py``): each frame with its code's qualified name."""

import sys

import pytest

from inductor_lens.capturing.build import _frames
from inductor_lens.capturing.stacks import frames_of


class _Outer:
    def method(self):
        def inner():
            return frames_of(sys._getframe())

        return inner()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="co_qualname is Python 3.11's")
def test_frames_of_records_each_frames_qualified_name_where_it_says_more_than_the_name():
    stack = _Outer().method()
    *_, caller, method, inner = stack
    assert caller[2:] == (
        "test_frames_of_records_each_frames_qualified_name_where_it_says_more_than_the_name",
        "stack = _Outer().method()",
        "",  # a module-level function: its qualname is its name, not stored
    )
    assert method[2] == "method" and method[4] == "_Outer.method"
    assert inner[2] == "inner" and inner[4] == "_Outer.method.<locals>.inner"
    assert inner[0] == __file__ and inner[3] == "return frames_of(sys._getframe())"
    frames = _frames(stack)
    assert [f.function_label for f in frames[-2:]] == ["_Outer.method", "_Outer.method.<locals>.inner"]
    assert frames[-1].file_label == "test_stacks.py"


def test_frames_of_pairs_names_from_the_innermost_frame_when_sys_tracebacklimit_cuts_the_stack(monkeypatch):
    monkeypatch.setattr(sys, "tracebacklimit", 2, raising=False)
    stack = _Outer().method()
    assert [f[2] for f in stack] == ["method", "inner"]
    if sys.version_info >= (3, 11):
        assert [f[4] for f in stack] == ["_Outer.method", "_Outer.method.<locals>.inner"]
