"""Call stacks as plain frames ``(file, line, function, code)``: which frames are the user's, and the path from
the user's call into torch."""

from __future__ import annotations

import os
import sysconfig
import traceback

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def non_user_prefixes() -> tuple[str, ...]:
    import torch

    paths = {os.path.dirname(os.path.abspath(torch.__file__)) + os.sep, _PKG_DIR + os.sep}
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):  # scripts: console launchers
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(os.path.abspath(p) + os.sep)
    return tuple(sorted(paths))


def frames_of(stack: traceback.StackSummary) -> list[tuple]:
    return [(f.filename, f.lineno or 0, f.name, (f.line or "").strip()) for f in stack]


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
