"""Call stacks as plain frames ``(file, line, function, code, qualname)``: which frames are the user's, and the path from
the user's call into torch."""

from __future__ import annotations

import itertools
import linecache
import os
import sysconfig
from typing import TYPE_CHECKING

from ..report.rules import frame_stage, resumed

if TYPE_CHECKING:  # traceback (and textwrap with it) is not loaded by an import-trace that reads a log's stacks
    import types

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def non_user_prefixes() -> tuple[str, ...]:
    import torch

    paths = {os.path.dirname(os.path.abspath(torch.__file__)) + os.sep, _PKG_DIR + os.sep}
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):  # scripts: console launchers
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(os.path.abspath(p) + os.sep)
    return tuple(sorted(paths))


def frames_of(frame: types.FrameType) -> list[tuple]:
    """The stack that ends at ``frame`` (outermost first) as plain frames ``(file, line, function, code, qualname)``:
    ``traceback.extract_stack``'s, with each code's qualified name (``co_qualname``, Python 3.11+:
    ``ConvertFrame.__call__`` where ``function`` is ``__call__``), ``""`` where it is the name or Python has none."""
    import traceback

    stack = traceback.extract_stack(frame)
    # extract_stack keeps the innermost frames when sys.tracebacklimit cuts it: pair them from the innermost
    codes = [f.f_code for f, _ in itertools.islice(traceback.walk_stack(frame), len(stack))][::-1]
    out = []
    for f, code in zip(stack, codes):
        qualname = getattr(code, "co_qualname", "")
        out.append((f.filename, f.lineno or 0, f.name, (f.line or "").strip(), "" if qualname == f.name else qualname))
    return out


def torch_dir() -> str:
    import torch

    return os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


_EXAMPLES = os.path.join(_PKG_DIR, "examples.py")  # example models are user code, though shipped with us


def _ours(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PKG_DIR + os.sep) and path != _EXAMPLES


def trim_to_user_call(frames: list[tuple], torch_dir: str) -> list[tuple]:
    """Frames from the user's call into torch (the last frame before torch is first entered) to the
    end, without inductor_lens's own wrappers: the path through torch that produced a kernel."""
    frames = [f for f in frames if not _ours(f[0])]
    first = next((i for i, f in enumerate(frames) if os.path.abspath(f[0]).startswith(torch_dir)), None)
    if first is None:
        return frames
    return frames[max(0, first - 1) :]


#: Where the capture's hook runs (``debug.set_kernel_post_grad_provenance_tracing``, called as Inductor writes a
#: kernel's provenance comment beside its call): the lens's point of view, not a step of the path. Dropped from the end.
HOOK_CALLERS = ("codegen_comment",)


def trim_hook_callers(frames: list[tuple]) -> list[tuple]:
    """``frames`` without the frames at its end that only call the capture's kernel hook (``HOOK_CALLERS``): the
    path then ends where Inductor generates the kernel or writes its call (``codegen_node``, ``ExternKernel.codegen``)."""
    end = len(frames)
    while end > 1 and frames[end - 1][2] in HOOK_CALLERS:
        end -= 1
    return frames[:end]


def user_frames(frames: list[tuple], prefixes: tuple[str, ...]) -> list[tuple]:
    """The frames that are the user's code: not torch, not inductor_lens, not stdlib/site-packages."""
    out = []
    for fr in frames:
        fn = fr[0]
        if fn.startswith("<frozen"):
            continue
        if not fn.startswith("<") and os.path.abspath(fn).startswith(prefixes) and os.path.abspath(fn) != _EXAMPLES:
            continue
        out.append(fr)
    return out


def logged_user_frames(frames: list[tuple]) -> list[tuple]:
    """The user's frames of the stack torch logs where dynamo starts on a frame (``dynamo_start`` in a TORCH_TRACE
    log), as :func:`user_frames` takes them from the live stack where the capture sees dynamo start, so that an import
    names the call the capture names. Torch's stack ends with the frame dynamo is about to trace (its first line, no
    code: ``modeling_gpt2.py:647``, the decorator line of a ``forward``), which is not yet on the live stack: dropped;
    but a resume function (``torch_dynamo_resume_in_head_at_49``: the rest of ``head`` after its graph break at line
    49) is called by ``head`` at that line, a frame of the live stack that torch's leaves out: it stands for that frame
    (its code read from the file, where it is there). Which frames are the user's is :func:`rules.frame_stage`'s rule:
    :func:`user_frames`' (not torch, not inductor_lens, not the standard library or an installed package) named
    without this machine's paths, since the log may come from another; a frame of code with no file
    (``<string>``, ``<stdin>``) is kept, as :func:`user_frames` keeps it.

    >>> logged_user_frames([("/w/train.py", 31, "<module>", "out = model(x)"),
    ...     ("/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1789, "_call_impl", "return f()"),
    ...     ("/venv/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py", 647, "forward", "")])
    [('/w/train.py', 31, '<module>', 'out = model(x)')]
    >>> logged_user_frames([("/w/t.py", 99, "<module>", "f(x)"), ("/w/t.py", 49, "torch_dynamo_resume_in_head_at_49", "")])
    [('/w/t.py', 99, '<module>', 'f(x)'), ('/w/t.py', 49, 'head', '')]
    """
    if not frames:
        return []
    *out, (file, _, function, _) = frames
    if resumed(function) is not None:  # the function it resumes (itself a resume function after a second break)
        cut = function.rfind("_at_")
        caller, line = function[len("torch_dynamo_resume_in_") : cut], int(function[cut + 4 :])
        out.append((file, line, caller, linecache.getline(file, line).strip() if os.path.isfile(file) else ""))
    return [
        fr
        for fr in out
        if frame_stage(fr[0], fr[2]) == "user" or (str(fr[0]).startswith("<") and not str(fr[0]).startswith("<frozen"))
    ]
