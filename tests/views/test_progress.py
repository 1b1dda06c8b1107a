"""Progress in the user's words (no torch): torch's phase names -> steps, terminal vs log output."""

import io

from inductor_lens.views.progress import Progress, TerminalProgress, user_phase

# the chromium_event phases torch 2.13 reports for a forward + backward compile of a Linear + ReLU, in order
TORCH_PHASES = """dynamo entire_frame_compile compile_attempt_0 bytecode_tracing insert_deferred_runtime_asserts
backend_compile _recursive_pre_grad_passes pass.pre_grad_passes.group_batch_fusion_passes
create_aot_dispatcher_function aot_collect_metadata aot_trace_joint_graph _recursive_joint_graph_passes
pass.joint_graph_passes.remove_noop_ops min_cut_rematerialization_partition compile_fx.<locals>.fw_compiler_base
inductor_compile fx_codegen_and_compile additional_fake_tensor_prop _recursive_post_grad_passes
pass.post_grad_passes.remove_noop_ops GraphLowering.run GraphLowering.compile_to_fn code_gen GraphLowering.codegen
Scheduler.__init__ Scheduler.fused_nodes Scheduler.codegen compile_file PythonWrapperCodegen.generate
PyCodeCache.load_by_key_path async_compile.wait build_guards gc entire_backward_compile
compile_fx.<locals>.bw_compiler""".split()


def test_every_torch_phase_maps_to_a_users_step_or_is_silent():
    steps = {p: user_phase(p) for p in TORCH_PHASES}
    assert set(steps.values()) == {
        "dynamo tracing",
        "AOT autograd",
        "graph passes",
        "lowering",
        "scheduler fusion",
        "code generation",
        "kernel build",
        None,
    }
    assert [p for p, s in steps.items() if s is None] == [
        "insert_deferred_runtime_asserts",
        "PythonWrapperCodegen.generate",
        "gc",
    ]
    assert (
        steps["Scheduler.fused_nodes"] == "scheduler fusion"
        and steps["_recursive_joint_graph_passes"] == "graph passes"
        and steps["GraphLowering.run"] == "lowering"
    )


def _events():
    yield from (f"phase: {p}" for p in TORCH_PHASES[:29])
    yield "kernel: cpp_fused_relu_0 (0/0 forward)"
    yield "phase: compile_file"


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_log_output_is_one_plain_line_per_step_and_per_kernel():
    out = io.StringIO()
    p = TerminalProgress(out, prefix="x: ")
    for e in _events():
        p(e)
    lines = out.getvalue().splitlines()
    steps = [ln.split("] ", 1)[1] for ln in lines]
    # lowering where GraphLowering.run begins: Inductor's graph passes before it were said to be lowering (nu27 D7:
    # "[0.2s] lowering" where GraphLowering.run began at 0.835 s, after the joint and post-grad passes)
    assert steps == [
        "dynamo tracing",
        "AOT autograd",
        "graph passes",
        "lowering",
        "scheduler fusion",
        "code generation",
        "kernel build",
        "kernel generated: cpp_fused_relu_0 (0/0 forward)",
    ]
    assert "\r" not in out.getvalue() and not any("pass." in s or "compile_fx" in s for s in steps)


def test_terminal_output_is_one_updating_line():
    out = _Tty()
    p = TerminalProgress(out, prefix="x: ")
    for e in _events():
        p(e)
    p.say("done")
    text = out.getvalue()
    assert text.count("\n") == 2, repr(text)  # the updating line ends once, then the message
    assert text.count("\r\x1b[K") >= 5
    last = text.split("\r\x1b[K")[-1]
    assert "C++ build · 1 kernel(s) generated: cpp_fused_relu_0" in last and last.endswith("x: done\n")


def test_each_step_of_a_compile_shows_once_and_the_backward_starts_again():
    """Torch comes back to earlier steps within a compile: ``aot_*`` passes inside lowering, the wrapper's
    ``GraphLowering.codegen`` after fusion, ``build_guards`` after the kernels are built (it showed a stray
    "tracing" at the end). Each step shows once per compile, in order; the lazily compiled backward (or the
    next frame) starts again."""
    out = io.StringIO()
    p = TerminalProgress(out, prefix="x: ")
    forward = (
        "dynamo bytecode_tracing backend_compile aot_collect_metadata compile_fx.<locals>.fw_compiler_base "
        "aot_dispatch_subclass GraphLowering.run Scheduler.__init__ GraphLowering.codegen Scheduler.codegen "
        "compile_file build_guards gc"
    ).split()
    backward = "entire_backward_compile inductor_compile Scheduler.__init__ compile_file".split()
    for phase in forward + backward + ["dynamo"]:
        p(f"phase: {phase}")
    steps = [ln.split("] ", 1)[1] for ln in out.getvalue().splitlines()]
    assert steps == [
        "dynamo tracing",
        "AOT autograd",
        "graph passes",
        "lowering",
        "scheduler fusion",
        "code generation",
        "kernel build",
        "graph passes",
        "scheduler fusion",
        "kernel build",
        "dynamo tracing",
    ]


def test_the_clock_is_the_captures():
    """The report's times count from the capture's start ("Inductor first ran at 2.75 s into the capture"); the
    progress lines counted from their own start, before torch was imported ("[4.3s] tracing" beside it). The
    capture's first event gives its clock, and the lines count from it."""
    out = io.StringIO()
    p = TerminalProgress(out, prefix="x: ")
    p("clock: 100.0")  # the capture began 100 s ago
    p("phase: dynamo")
    (line,) = out.getvalue().splitlines()
    assert line.startswith("x: [100.") and line.endswith("] dynamo tracing"), line


def test_a_kernel_that_several_fused_nodes_call_is_generated_once():
    """A kernel reused by two fused nodes of a graph (the same C++ function called twice) was said twice: the CLI
    wrote 7 "kernel generated" lines for a report of 6 kernels. Each kernel of a compile is said once; the same name
    in another compile is another kernel."""
    out = io.StringIO()
    p = TerminalProgress(out, prefix="x: ")
    for e in ("kernel: cpp_fused_relu_0 (0/0 forward)", "kernel: cpp_fused_relu_0 (0/0 forward)",
              "kernel: cpp_fused_relu_0 (0/0 backward)"):  # fmt: skip
        p(e)
    lines = [ln.split("] ", 1)[1] for ln in out.getvalue().splitlines()]
    assert lines == [
        "kernel generated: cpp_fused_relu_0 (0/0 forward)",
        "kernel generated: cpp_fused_relu_0 (0/0 backward)",
    ]
    assert len(p.kernels) == 2


def test_the_build_step_says_the_language_of_its_compiles_kernels_not_of_the_last_one():
    """nu25 L4: a backward whose last kernel generated was an extern call (a convolution's backward) said "kernel
    build" where the forward said "C++ build": the language was the last kernel's. It is the compile's; a compile of
    extern calls alone builds no kernel and says "kernel build"."""
    p = Progress()
    for e in ("phase: Scheduler.codegen", "kernel: cpp_fused_relu_0 (0/0 backward)",
              "kernel: torch.ops.aten.convolution_backward.default[buf3] (0/0 backward)", "phase: compile_file"):  # fmt: skip
        p.update(e)
    assert p.step_text() == "C++ build"
    for e in ("phase: entire_frame_compile", "kernel: extern_kernels.mm[buf0] (1/0 inference)", "phase: compile_file"):
        p.update(e)
    assert p.step_text() == "kernel build"


def test_the_lines_under_a_cell_count_kernels_as_the_report_does():
    """The magic's line under a cell said "Inductor compiled from here, 2 kernels generated" above a widget (and a
    report summary) saying "2 kernel(s)": one wording, ``rules.kernels_text``, for the progress line, the cell's
    last line, the widget's text and the report's totals."""
    from inductor_lens.report.model import Report
    from inductor_lens.report.rules import kernels_text
    from inductor_lens.views.cell_display import _Progress

    line = _Progress()
    for e in _events():
        line.state.update(e)
    assert f"· {kernels_text(1)} generated: cpp_fused_relu_0" in line.state.line()
    said = line.last_line()._repr_mimebundle_()["text/plain"]
    assert f"Inductor compiled from here, {kernels_text(1)} generated;" in said
    assert Report("2.11", "cpu").summary().startswith(f"inductor_lens report: 0 compile(s), {kernels_text(0)}, ")
