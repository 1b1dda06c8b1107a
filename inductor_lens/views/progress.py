"""Progress while Inductor compiles, in the user's words; shared by the CLI and the magic.

``capture(on_event=...)`` reports torch's own phase names (``_recursive_joint_graph_passes``,
``compile_fx.<locals>.fw_compiler_base``, ~50 per compile) and each kernel as it is built.
:func:`user_phase` maps them onto the few steps a PyTorch user knows; the full detail stays in
the report's timeline. :class:`Progress` keeps the state; :class:`TerminalProgress` draws it on
stderr: one updating line on a terminal, plain lines (one per step and per kernel) otherwise.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Optional, TextIO

from ..report.rules import kernels_text

#: torch phase name (prefix) -> the step a user knows. First match wins; names not listed keep the last step.
PHASE_WORDS: tuple[tuple[str, str], ...] = (
    ("dynamo", "dynamo tracing"),
    ("entire_frame_compile", "dynamo tracing"),
    ("compile_attempt", "dynamo tracing"),
    ("bytecode_tracing", "dynamo tracing"),
    ("build_guards", "dynamo tracing"),
    ("backend_compile", "AOT autograd"),
    ("_recursive_pre_grad_passes", "AOT autograd"),
    ("pass.pre_grad_passes", "AOT autograd"),
    ("create_aot_dispatcher_function", "AOT autograd"),
    ("aot_", "AOT autograd"),
    ("_recursive_joint_graph_passes", "graph passes"),
    ("pass.joint_graph_passes", "graph passes"),
    ("min_cut_rematerialization_partition", "AOT autograd"),
    ("entire_backward_compile", "graph passes"),
    ("compile_fx", "graph passes"),
    ("inductor_compile", "graph passes"),
    ("fx_codegen_and_compile", "graph passes"),
    ("additional_fake_tensor_prop", "graph passes"),
    ("_recursive_post_grad_passes", "graph passes"),
    ("pass.post_grad_passes", "graph passes"),
    ("GraphLowering.run", "lowering"),
    ("Scheduler.__init__", "scheduler fusion"),
    ("Scheduler.fused_nodes", "scheduler fusion"),
    ("GraphLowering.compile_to_fn", "lowering"),  # these three wrap the scheduler: fusion comes next
    ("GraphLowering.codegen", "lowering"),
    ("code_gen", "lowering"),
    ("Scheduler.codegen", "code generation"),
    ("compile_file", "kernel build"),
    ("async_compile", "kernel build"),
    ("PyCodeCache", "kernel build"),
    ("triton", "kernel build"),
    ("autotune", "autotuning"),
    ("benchmark", "autotuning"),
)


#: Phases that say nothing to a user (they keep the step shown): checked before PHASE_WORDS.
SILENT = ("gc", "insert_deferred_runtime_asserts", "PythonWrapperCodegen")


#: The steps of one compile, in the order they happen: within a compile the line only moves forward, so that
#: torch's phases that come back to an earlier step (``build_guards`` after the backend, ``aot_*`` passes
#: inside lowering) do not show a step twice. ``autotuning`` may come in any step and leaves the order.
STEP_ORDER = (
    "dynamo tracing",
    "AOT autograd",
    "graph passes",  # Inductor's passes on the FX graphs (joint, post-grad): before lowering, often the longest
    "lowering",
    "scheduler fusion",
    "code generation",
    "kernel build",
)
#: Phases that begin a compile (a frame, a retry, a lazily compiled backward): the order starts again.
COMPILE_STARTS = ("entire_frame_compile", "compile_attempt", "entire_backward_compile")


def _starts_a_compile(torch_phase: str) -> bool:
    return torch_phase == "dynamo" or torch_phase.startswith(COMPILE_STARTS)


def user_phase(torch_phase: str) -> Optional[str]:
    """The user's word for a torch phase name, or ``None`` for one that says nothing to a user (``gc``)."""
    if torch_phase.startswith(SILENT):
        return None
    for prefix, word in PHASE_WORDS:
        if torch_phase.startswith(prefix):
            return word
    return None


class Progress:
    """What is happening now: the step, the compile, the kernels generated. Thread-safe; call with capture's events."""

    def __init__(self):
        self.t0 = time.monotonic()
        self.step = ""
        self.compile = ""
        self.kernels: list[str] = []
        self._seen: set[tuple[str, str]] = set()  # (kernel, its compile) said
        self._built: dict[str, str] = {}  # a compile -> the language its kernels are built in (C++, Triton)
        self._rank = 0  # where the compile is in STEP_ORDER
        self._lock = threading.Lock()

    def update(self, message: str) -> Optional[str]:
        """Take one event; return ``"step"`` or ``"kernel"`` when what a user sees changed, else ``None``."""
        kind, _, text = message.partition(": ")
        with self._lock:
            if kind == "clock":  # the capture's clock: its seconds so far (the report's times count from it)
                try:
                    self.t0 = time.monotonic() - float(text)
                except ValueError:
                    pass
                return None
            if kind == "phase":
                word = user_phase(text)
                if word is None or word == self.step:
                    return None
                if word in STEP_ORDER:
                    rank = STEP_ORDER.index(word)
                    if rank < self._rank and not _starts_a_compile(text):
                        return None  # a step this compile has passed: the line does not go back
                    self._rank = rank
                self.step = word
                return "step"
            if kind == "kernel":
                name, _, where = text.partition(" (")
                if (name, where) in self._seen:  # one kernel that several fused nodes call: generated once
                    return None
                self._seen.add((name, where))
                self.kernels.append(name)
                self.compile = where.rstrip(")") or self.compile
                lang = "C++" if name.startswith("cpp") else "Triton" if name.startswith("triton") else ""
                if lang:  # an extern call (mm) builds nothing: its compile's step keeps the language of its others
                    self._built[self.compile] = lang
                return "kernel"
        return None

    def step_text(self) -> str:
        """The step, with the language of the kernels its compile builds (``C++ build``): the compile's, not the last
        kernel's (a backward whose last kernel was an extern call said "kernel build" where another said "C++ build",
        nu25 L4); ``kernel build`` where it generated none of either."""
        lang = self._built.get(self.compile, "") if self.step == "kernel build" else ""
        return f"{lang} build" if lang else self.step

    def line(self, width: int = 0) -> str:
        """One line: elapsed time, step, kernels generated so far (the last few named; a kernel's source is generated,
        then built in the ``kernel build`` step)."""
        k = self.kernels
        s = f"[{time.monotonic() - self.t0:5.1f}s] torch.compile: {self.step_text() or 'starting'}"
        s += f" · {kernels_text(len(k))} generated"
        if k:
            s += ": " + ", ".join(k[-3:]) + (" ..." if len(k) > 3 else "")
        if width and len(s) > width:
            s = s[: max(width - 1, 10)] + "…"
        return s


class TerminalProgress(Progress):
    """``on_event`` for the CLI: one updating line on a terminal, plain lines when stderr is a file or pipe."""

    def __init__(self, stream: Optional[TextIO] = None, quiet: bool = False, prefix: str = "inductor-lens: "):
        super().__init__()
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.prefix = prefix
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._drawn = False

    def __call__(self, message: str) -> None:
        change = self.update(message)
        if self.quiet or change is None:
            return
        if self.tty:
            import shutil

            width = shutil.get_terminal_size((100, 20)).columns - len(self.prefix) - 1
            self.stream.write("\r\x1b[K" + self.prefix + self.line(width))
            self._drawn = True
        elif change == "kernel":
            self.stream.write(
                f"{self.prefix}[{time.monotonic() - self.t0:5.1f}s] kernel generated: {self.kernels[-1]}"
                f"{f' ({self.compile})' if self.compile else ''}\n"
            )
        else:
            self.stream.write(f"{self.prefix}[{time.monotonic() - self.t0:5.1f}s] {self.step_text()}\n")
        self.stream.flush()

    def done(self) -> None:
        """End the updating line (so the next message starts on a line of its own)."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False

    def say(self, text: str) -> None:
        """A message of its own line, after the progress line if one is drawn."""
        self.done()
        self.stream.write(f"{self.prefix}{text}\n")
        self.stream.flush()
