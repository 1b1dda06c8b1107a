"""Issue 24: every kernel's reproducer. The launch each kernel records (read from the output code's ``call()``)
agrees with torch's own record of the graph; the script of every kernel of a real MLP training step runs in a
fresh process, exits 0, prints its time and never imports inductor_lens; Triton scripts are built from the H200
fixture's output code (run on the GPU by tests/fixtures/make_metal_fixtures.py)."""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import inductor_lens
from inductor_lens.analysis.reproducer import ReproducerError, reproducer
from inductor_lens.capturing.launch import kernel_launch
from inductor_lens.capturing.parse import OutputCodeLayouts, cpp_arg_types, split_args
from inductor_lens.views import cli

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
LINE = re.compile(r"^(?P<name>\S+): median (?P<us>[\d.]+) us per call \(p10 [\d.]+ us, p90 [\d.]+ us; 5 runs")

CALL = """
def call(self, args):
    primals_1, primals_2, arg2_1 = args
    s0 = arg2_1
    assert_size_stride(primals_1, (s0, 16), (16, 1), 'input')
    assert_size_stride(primals_2, (32, 16), (16, 1), 'input')
    buf0 = empty_strided_cpu((s0, 32), (32, 1), torch.float32)
    extern_kernels.mm(primals_1, reinterpret_tensor(primals_2, (16, 32), (1, 16), 0), out=buf0)
    buf1 = buf0; del buf0  # reuse
    buf2 = reinterpret_tensor(buf1, (32, s0), (1, 32), 8); del buf1  # reuse
    cpp_fused_relu_0(buf2, s0)
    buf3 = empty_strided_cpu((s0, 48), (48, 1), torch.float32)
    buf4 = reinterpret_tensor(buf3, (s0, 16), (48, 1), 32)  # alias
    cpp_fused_cat_1(primals_1, buf4)
    return (buf2, buf3, )

def get_args():
    from torch._dynamo.testing import rand_strided
    primals_1 = rand_strided((8, 16), (16, 1), device='cpu', dtype=torch.float32)
    primals_2 = rand_strided((32, 16), (16, 1), device='cpu', dtype=torch.float32)
    arg2_1 = 8
    return [primals_1, primals_2, arg2_1]
"""


def test_a_list_argument_of_tensors_and_nones_records_each_and_anything_else_none():
    """``aten.index.Tensor(x, [None, idx])`` (``x[:, idx]`` where Inductor falls back): the list's tensors are recorded
    with their layouts, a ``None`` as ``None`` (``LaunchArg.items``), and the script makes the list so; a list with
    anything else (a size) records no items."""
    from inductor_lens.analysis.reproducer import _args_code

    code = CALL.replace(
        "    return (buf2, buf3, )",
        "    buf5 = torch.ops.aten.index.Tensor(primals_2, [None, reinterpret_tensor(buf3, (4, ), (1, ), 0)])\n"
        "    buf6 = torch.ops.aten.index.Tensor(primals_2, [s0, primals_1])\n"
        "    return (buf2, buf3, )",
    )
    layouts = OutputCodeLayouts(code)
    x, listed = kernel_launch(layouts, "torch.ops.aten.index.Tensor", "extern", "", buffer="buf5").args
    none, idx = listed.items
    assert (x.name, listed.value, none.name, none.value) == ("primals_2", listed.name, "None", "None")
    assert (idx.name, idx.shape, idx.stride, idx.dtype) == ("buf3", [4], [1], "float32")
    _, other = kernel_launch(layouts, "torch.ops.aten.index.Tensor", "extern", "", buffer="buf6").args
    assert other.items is None
    launch = kernel_launch(layouts, "torch.ops.aten.index.Tensor", "extern", "", buffer="buf5")
    assert "        [None, make([4], [1], 'float32', 0, 1)],  # [None, reinterpret_tensor(" in _args_code(launch, 1)


def test_call_lines_give_layouts_views_and_symbolic_hints():
    """Hand-written output code: the reuse of a buffer keeps its layout, a reinterpret_tensor view has its own
    sizes, strides and offset and the base's dtype; symbolic sizes stay text with get_args' values as hints."""
    layouts = OutputCodeLayouts(CALL)
    mm = kernel_launch(layouts, "extern_kernels.mm", "extern", "", buffer="buf0")
    a, b, out = mm.args
    assert (a.name, a.shape, a.stride, a.dtype, a.hint) == ("primals_1", ["s0", 16], [16, 1], "float32", [8, 16])
    assert (b.name, b.shape, b.stride, b.offset, b.dtype) == ("primals_2", [16, 32], [1, 16], 0, "float32")
    assert (out.keyword, out.shape, out.hint) == ("out", ["s0", 32], [8, 32])
    source = 'extern "C" void kernel(float* in_out_ptr0, const int64_t ks0)\n{}'
    relu = kernel_launch(layouts, "cpp_fused_relu_0", "cpp", source)
    view, size = relu.args
    assert (view.name, view.param, view.shape, view.stride, view.offset, view.dtype) == (
        "buf2",
        "in_out_ptr0",
        [32, "s0"],
        [1, 32],
        8,
        "float32",
    )
    assert (size.param, size.value, size.hint) == ("ks0", "s0", 8)
    assert relu.call == "cpp_fused_relu_0(buf2, s0)"
    # a cat writes its parts straight into slices of its output: a view named by an "# alias" line
    source = 'extern "C" void kernel(const float* in_ptr0, float* out_ptr0)\n{}'
    _, part = kernel_launch(layouts, "cpp_fused_cat_1", "cpp", source).args
    assert (part.name, part.param, part.shape, part.stride, part.offset, part.dtype) == (
        "buf4",
        "out_ptr0",
        ["s0", 16],
        [48, 1],
        32,
        "float32",
    )
    assert split_args("a, (1, 2), f(x, [3, 4]), 'p,q'") == ["a", "(1, 2)", "f(x, [3, 4])", "'p,q'"]


def test_launches_agree_with_torchs_graph(training_report):
    """Each graph input a kernel takes has the shape and dtype of the post-grad graph's placeholder (torch's own
    record, not the output code); each C++ kernel has one argument per type of its binding; an extern kernel's
    ``out`` buffer has the shape of the FX node it computes."""
    checked = 0
    for c in training_report.compiles:
        nodes = {n.name: n for n in c.graphs["post_grad"].nodes}
        for k in c.kernels:
            assert k.launch is not None, f"{c.id}: {k.name} has no launch"
            if k.language == "cpp":
                assert len(k.launch.args) == len(k.launch.arg_types), k.name
                assert all(a.shape is not None for a in k.launch.args), k.name
            for a in k.launch.args:
                n = nodes.get(a.name)
                if n is not None and n.op == "placeholder" and a.offset == 0 and a.stride == sorted(a.stride)[::-1]:
                    assert (a.shape, a.dtype) == (n.shape, n.dtype), f"{k.name}: {a}"
                    checked += 1
            if k.language == "extern":
                (out,) = [a for a in k.launch.args if a.keyword == "out"]
                (fx,) = k.fx_nodes
                assert out.shape == nodes[fx].shape, k.name
    assert checked >= 5


def _run(path: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-X", "importtime", str(path), "--runs", "5", "--warmup", "2"],
        capture_output=True,
        text=True,
        cwd=path.parent,
        timeout=600,
    )


#: Runs each script given as if started alone (``python SCRIPT --runs 5 --warmup 2``, ``__name__ == "__main__"``,
#: its own globals), one after the other in this one process, and says how each ended: what a fresh process per
#: script would show, less a torch import per kernel (the costliest part of the suite otherwise).
DRIVER = """
import runpy, sys, traceback
failed = 0
for path in sys.argv[1:]:
    sys.argv = [path, "--runs", "5", "--warmup", "2"]
    try:
        runpy.run_path(path, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            print(f"{path}: exit {e.code}", file=sys.stderr)
    except BaseException:
        code = 1
        traceback.print_exc()
    print(f"EXIT {path} {code}", flush=True)
    failed += code != 0
sys.exit(1 if failed else 0)
"""


def _emptied(script: str) -> str:
    """``script`` with its C++ kernel's body emptied: a kernel that writes nothing."""
    body = re.search(r'(extern "C"\s+void\s+kernel\([^)]*\)\s*)\{.*\}(?=\s*' + "'''" + ")", script, re.S)
    return script[: body.start()] + body.group(1) + "{}\n" + script[body.end() :]


@pytest.fixture(scope="module")
def ran(training_report, tmp_path_factory):
    """The script of every kernel of the training step, and one more whose C++ kernel writes nothing (``empty.py``),
    run in fresh processes: a C++ kernel's alone (``python -X importtime SCRIPT``), and all of them, ``empty.py``
    last, by the DRIVER in one more (``-X importtime`` too). The two tests below read the same runs (a torch import
    and a kernel load per process are the cost here: a process per language and one for ``empty.py`` cost 7 CPU-s
    more and told nothing the driver does not)."""
    tmp = tmp_path_factory.mktemp("repro")
    kernels = training_report.kernels
    paths = []
    for i, k in enumerate(kernels):
        path = tmp / f"kernel_{i}.py"
        path.write_text(reproducer(training_report, k))
        paths.append(path)
    cpp = next(k for k in kernels if k.language == "cpp")
    empty = tmp / "empty.py"
    empty.write_text(_emptied(reproducer(training_report, cpp)))
    first = {"cpp": next((k, p) for k, p in zip(kernels, paths) if k.language == "cpp")}
    (tmp / "driver.py").write_text(DRIVER)
    every = [sys.executable, "-X", "importtime", str(tmp / "driver.py"), *map(str, paths), str(empty)]
    with ThreadPoolExecutor(2) as pool:
        alone = pool.submit(_run, first["cpp"][1])
        together = pool.submit(subprocess.run, every, capture_output=True, text=True, cwd=tmp, timeout=600).result()
        alone = [alone.result()]
    return {"kernels": kernels, "paths": paths, "first": first, "alone": alone, "together": together, "empty": empty}


def _imported(stderr: str) -> list[str]:
    """The modules a ``-X importtime`` process imported, from its stderr."""
    return [ln.rsplit("|", 1)[-1].strip() for ln in stderr.splitlines() if ln.startswith("import time:")]


def test_every_kernel_of_a_training_step_runs_alone(ran):
    """The script of each kernel (C++ and extern) runs, exits 0 and prints one line with its time. A C++ kernel's
    runs in a fresh Python of its own; every kernel's script then runs as ``__main__`` in one more fresh Python
    (each with its own globals: the scripts share nothing but the torch import). Neither process imports a module
    of inductor_lens (``-X importtime`` lists every module a process imported)."""
    kernels, paths, first, together = ran["kernels"], ran["paths"], ran["first"], ran["together"]
    assert {k.language for k in kernels} == {"cpp", "extern"}
    for (k, _), p in zip(first.values(), ran["alone"]):
        assert p.returncode == 0, f"{k.name}: {p.stderr[-2000:]}"
        check, line = p.stdout.splitlines()
        assert check.startswith(f"{k.name}: check passed: the kernel ran and wrote 1 of its "), check
        m = LINE.match(line)
        assert m and m["name"] == k.name and float(m["us"]) > 0, line
    for p in [*ran["alone"], together]:
        imported = _imported(p.stderr)
        assert "torch" in imported and not [n for n in imported if n.split(".")[0] == "inductor_lens"]
    out = together.stdout.splitlines()
    # every kernel's three lines, then empty.py's EXIT line (it prints no time: test below)
    assert len(out) == 3 * len(kernels) + 1, together.stdout[-2000:]
    for i, (k, path) in enumerate(zip(kernels, paths)):
        check, line, end = out[3 * i : 3 * i + 3]
        # what the check found, in one line: the tensors the kernel wrote, by the names the output code gives them
        assert check.startswith(f"{k.name}: check passed: the kernel ran and wrote "), check
        if k.language == "extern":
            assert check.endswith(f"tensor arguments: out={k.metadata.get('buffer') or k.name.split('[')[1][:-1]}")
        m = LINE.match(line)
        assert m and m["name"] == k.name and float(m["us"]) > 0, line
        assert end == f"EXIT {path} 0", (end, together.stderr[-3000:])


def test_a_cpu_reproducer_runs_with_the_threads_the_report_was_timed_with(training_report):
    """A profile taken under ``torch.set_num_threads(1)`` timed a convolution at 1072 us; its reproducer ran on
    every core (its median 14913 us on a loaded 2-core machine, 1127 us with OMP_NUM_THREADS=1). The report keeps
    the threads (``DeviceInfo.threads``) and the script sets them, and says how many it ran with."""
    import dataclasses

    from inductor_lens.report.model import DeviceInfo

    cpp = next(k for k in training_report.kernels if k.language == "cpp")
    timed = dataclasses.replace(training_report, device_info=DeviceInfo(name="CPU (x86_64, 1 threads)", threads=1))
    script = reproducer(timed, cpp)
    compile(script, "kernel.py", "exec")
    assert "\nTHREADS = 1  #" in script and "torch.set_num_threads(THREADS)" in script
    assert "\nTHREADS = None  #" in reproducer(training_report, cpp)  # not profiled: torch's default


def test_a_kernel_that_writes_nothing_fails_its_check(ran):
    """The check is real: a C++ kernel whose body is emptied (it writes nothing) makes the script exit non-zero,
    as the driver that runs every script in one process says: the kernels before it exited 0 (test above), so
    its exit status 1 is this script's."""
    empty = ran["empty"]
    d = ran["together"]
    assert d.returncode == 1 and d.stdout.splitlines()[-1] == f"EXIT {empty} 1", (d.stdout[-1000:], d.stderr[-1000:])
    assert "wrote none of its" in d.stderr, d.stderr[-1000:]


def test_a_noisy_timing_says_so_and_what_to_do(training_report, monkeypatch, capsys):
    """nu22: on a shared machine a script printed "median 7994 us (p10 7.5 us, p90 8008 us)" and nothing about a
    spread of 1000x. Where p90 is over ``NOISY_FACTOR`` times p10 (the profile's noisy factor, on the tenths: of
    hundreds of runs one always stalls) the line says "noisy", and stderr says what it means and what to do
    (``rules.noisy_runs_text``: the same rule and words, which the script applies itself). An extern kernel's
    script runs here, in this process, its timer replaced by those times."""
    from inductor_lens.report.rules import noisy_runs_text

    ext = next(k for k in training_report.kernels if k.language == "extern")
    g = _script_globals(training_report, ext.name)
    busy = [7.5] * 30 + [7994.0] * 140 + [8008.0] * 30  # bimodal: a tenth fast, the rest stalled
    calm = [1.41] * 30 + [1.52] * 140 + [1.80] * 30
    text, note = g["timing"](busy, 20)
    assert text == "median 7994.00 us per call (p10 7.50 us, p90 8008.00 us; 200 runs after 20 warm-up; noisy)"
    assert note == noisy_runs_text(7.5, 8008.0, 200) and note.startswith("noisy: the slowest tenth of the runs")
    assert note.endswith("rerun on an idle machine or with more runs (--runs 2000)")
    assert g["timing"](calm, 20) == (
        "median 1.52 us per call (p10 1.41 us, p90 1.80 us; 200 runs after 20 warm-up)",
        noisy_runs_text(1.41, 1.80, 200),
    )
    assert noisy_runs_text(1.41, 1.80, 200) == ""
    assert g["timing"](busy, 20, "step")[1] == "step L2: " + note  # a GPU's L2 mode says which
    monkeypatch.setattr(sys, "argv", ["kernel.py", "--warmup", "1"])
    g["times_us"] = lambda run, args, kwargs, runs, l2="step": list(busy)
    g["main"]()
    out, err = capsys.readouterr()
    check, line = out.splitlines()
    assert check.startswith(f"{ext.name}: check passed: the kernel ran and wrote 1 of its ")
    assert line.startswith(f"{ext.name}: median 7994.00 us per call (p10 7.50 us, p90 8008.00 us; 200 runs after 1 ")
    assert "warm-up; noisy) on cpu" in line and err == f"{ext.name}: {note}\n"


def test_a_profiled_cpp_kernels_script_runs_it_without_the_instrumentation(tmp_path):
    """nu28 D5: a profiled capture (``--profile``) compiles C++ kernels with ``cpp.enable_kernel_profile``, two lines
    more in each (an include and a ``RAIIAtenRecordFunctionHandle`` that records every call): the script said it ran
    the kernel "exactly as the output code compiles it" and timed the instrumented build. On the recorded C++ GEMM
    template of a profiled max-autotune run: the script's source has neither line (``rules.without_kernel_profile``),
    its header and the comment above the source say so, and it compiles and runs on this CPU."""
    report = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_max_autotune.json")
    k = report.kernels[1]
    assert "RAIIAtenRecordFunctionHandle" in k.source and "aoti_runtime/utils.h" in k.source  # as recorded
    script = reproducer(report, k)
    source = ast.literal_eval(re.search(r"^SOURCE = (r'''.*?''')$", script, re.S | re.M).group(1))
    assert "RAIIAtenRecordFunctionHandle" not in source and "aoti_runtime/utils.h" not in source
    assert "void kernel(const float* X, const float* W, const float* in_ptr2, float* Y)" in source
    assert "The kernel runs as torch compiles it without profiling" in ast.get_docstring(ast.parse(script))
    assert "exactly as the output code compiles it" not in script
    assert "records each call as the profiler event\n# graph_0_gemm_m32n64k256_kernel)" in script
    path = tmp_path / "template.py"
    path.write_text(script)
    p = subprocess.run(
        [sys.executable, str(path), "--runs", "5", "--warmup", "2"], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr[-2000:]
    check, line = p.stdout.splitlines()
    assert check == f"{k.name}: check passed: the kernel ran and wrote 1 of its 4 tensor arguments: buf3 (Y)"
    assert LINE.match(line)["name"] == k.name
    # the source steps 8 floats: it was written for AVX2 on the capturing machine; compiled for this CPU's widest
    # (AVX-512 here) its unmasked stores of 16 floats wrote 32 bytes past Y, a double free at exit one run in two
    assert "\nCPU_ISA = 'avx2'  #" in script and "\nCPU_ISA_BITS = 256  #" in script
    # nothing said of the vector width or of a write past a buffer (a loaded machine's "noisy" line may come, and
    # torch's own warnings: a CUDA build on a CPU says it has no CUDA runtime)
    assert not [line for line in _ours(p.stderr, k) if "instruction set" in line or "past the end" in line], p.stderr


def _ours(stderr: str, k) -> list[str]:
    """The lines a script wrote on stderr (each begins with its kernel's name), not torch's warnings."""
    return [line for line in stderr.splitlines() if line.startswith(f"{k.name}: ")]


def _script_run(tmp_path, report, k, *args):
    path = tmp_path / f"{k.name}.py"
    path.write_text(reproducer(report, k))
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=600)


def test_a_cpp_script_stops_where_this_cpu_lacks_the_vector_width_its_source_was_written_for(tmp_path):
    """A C++ source written for a width this CPU has not (1024 bits: none has) is not compiled: compiled for another
    width it reads and writes past its buffers. The script exits before compiling and says what to do."""
    import dataclasses

    report = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_max_autotune.json")
    c = report.compiles[0]
    report = dataclasses.replace(report, compiles=[dataclasses.replace(c, cpu_isa="avx1024", cpu_isa_bits=1024)])
    k = report.kernels[1]
    p = _script_run(tmp_path, report, k, "--runs", "2", "--warmup", "0")
    assert p.returncode == 1 and p.stdout == ""
    (said,) = _ours(p.stderr, k)
    assert said.startswith(
        f"{k.name}: its source was written for avx1024 (1024-bit vectors) and this CPU has no such instruction set "
        "(torch picks "
    ), p.stderr
    assert said.endswith("Run this script on a CPU with avx1024, or capture the kernel again on this one")


def test_a_kernel_that_writes_past_its_buffer_is_named_and_an_unrecorded_isa_said(tmp_path):
    """Every argument's storage is followed by guard bytes the check finds untouched: a kernel that writes past its
    buffer (here its output recorded one row short, so its last row lands in the guard; also a source compiled for a
    wider vector than it was written for) is named, and the script exits 1 instead of corrupting memory unseen. A
    report that does not say which vector width its C++ sources were written for (a TORCH_TRACE import, an older
    report) compiles for this CPU's and says so on stderr."""
    import dataclasses

    report = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_max_autotune.json")
    c = report.compiles[0]
    k = c.kernels[1]
    y = k.launch.args[3]
    assert (y.name, y.shape, y.stride) == ("buf3", [32, 64], [64, 1])
    short = dataclasses.replace(y, shape=[31, 64])
    k = dataclasses.replace(k, launch=dataclasses.replace(k.launch, args=[*k.launch.args[:3], short]))
    kernels = [c.kernels[0], k]
    report = dataclasses.replace(
        report, compiles=[dataclasses.replace(c, kernels=kernels, cpu_isa="", cpu_isa_bits=None)]
    )
    p = _script_run(tmp_path, report, report.compiles[0].kernels[1], "--runs", "2", "--warmup", "0")
    assert p.returncode == 1 and p.stdout == "", p.stdout + p.stderr
    note, past = _ours(p.stderr, k)
    assert note.startswith(
        f"{k.name}: the report does not say which vector instruction set its C++ source was written for"
    )
    assert past == (
        f"{k.name}: the kernel wrote past the end of buf3 (Y) (the bytes after its storage changed): its source was "
        "compiled for other sizes or another vector width than it was written for"
    )


def test_a_time_far_from_the_reports_says_so_and_why_it_may_be(monkeypatch, capsys):
    """nu28 D6: a script's median of 15,997 us beside the report's 94.27 us (one run) was printed with no word. Over
    ``FAR_FACTOR`` (10x) either way, stderr says the two disagree and why that may be (the report's single or cold
    run, a loaded machine; the threads where the report's are not recorded); within it, nothing. The recorded frozen
    MLP's first ``_mkl_linear``, timed at 98.18 us in one run; the script runs here, its timer replaced."""
    import torch

    from inductor_lens.report.rules import FAR_FACTOR

    report = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_default.json")
    k = report.kernels[0]
    assert k.profile.per_call_us == 98.184 and k.profile.iterations == 1 and FAR_FACTOR == 10.0
    g = _script_globals(report, k.name)

    def run(times):
        monkeypatch.setattr(sys, "argv", ["kernel.py", "--warmup", "1"])
        g["times_us"] = lambda run, args, kwargs, runs, l2="step": list(times)
        g["main"]()
        return capsys.readouterr().err

    err = run([1600.0] * 200)  # 16x the report's
    assert err == (
        f"{k.name}: far from the report: the median here, 1600.00 us per call, is 16x slower than the report's "
        "98.18 us (median 98.18 us per call of 1 run); one of the two is not the "
        "kernel's own time: the report's may be a cold run (a graph's first call) or a single one, or the machine was "
        "loaded then or is now; profile again on an idle machine, with more runs, and run this again\n"
    )
    assert "is 20x faster than the report's 98.18 us" in run([4.9] * 200)
    assert run([900.0] * 200) == "" and run([10.0] * 200) == ""  # 9.2x and 9.8x: within
    g["THREADS"] = None  # a report that did not record its threads
    assert f"or the threads differ (the report's are not recorded; {torch.get_num_threads()} here);" in run([2e3] * 9)
    g["REPORT_US"] = None  # not profiled: nothing to compare
    assert run([2e3] * 9) == ""


def _gpu_report():
    path = FIXTURES / "gpu_perf_gpt2_training.json"
    if not path.exists():
        pytest.skip(f"{path.name} not recorded (tests/fixtures/make_perf_fixtures.py on a GPU)")
    return inductor_lens.load(path)


def test_triton_scripts_from_the_h200_output_code():
    """From the H200 report's output code (torch 2.11): each Triton kernel's launch names its parameters from
    the kernel's signature and the numels its call passes; its script embeds the source verbatim, keeps the
    recorded config, and is valid Python."""
    import dataclasses

    report = _gpu_report()
    c = report.compiles[0]
    layouts, types = OutputCodeLayouts(c.output_code), cpp_arg_types(c.output_code)
    kernels = []
    for k in c.kernels:
        callee = k.metadata.get("callee", k.name)
        launch = kernel_launch(
            layouts, callee, k.language, k.source, k.metadata.get("buffer"), k.metadata.get("launch"), types.get(k.name)
        )
        kernels.append(dataclasses.replace(k, launch=launch))
    report = dataclasses.replace(report, compiles=[dataclasses.replace(c, kernels=kernels)])
    first = next(k for k in kernels if k.name == "triton_poi_fused_add_arange_0")
    # the output code: triton_poi_fused_add_arange_0.run(buf1, 512, stream=stream0), buf1 = empty_strided_cuda((512, ), (1, ), torch.int64)
    assert [(a.name, a.param, a.shape, a.dtype, a.value) for a in first.launch.args] == [
        ("buf1", "out_ptr0", [512], "int64", None),
        ("xnumel", "xnumel", None, None, 512),
    ]
    assert (first.launch.num_warps, first.launch.block, first.launch.device) == (4, {"XBLOCK": 128}, "cuda")
    for k in kernels:
        if k.language not in ("triton", "extern"):
            continue
        script = reproducer(report, k)
        ast.parse(script)
        if k.language == "triton":
            assert k.source.strip() in script and f"'block': {k.launch.block!r}" in script
            assert f"REPORT_US = {k.profile.per_call_us!r}" in script


def test_step_l2_replays_what_the_launches_before_read_and_wrote():
    """``--l2 step`` (the scripts' default): after the flush, the launches before the kernel in its output code are
    replayed, reads and writes. In the H200 GPT-2 block's backward, ``triton_red_fused_sum_view_3`` reads ``buf4``:
    the layer norm's backward wrote it, then two matmuls read it (``extern_kernels.mm[buf9]``, ``mm[buf10]``), and
    in the step the kernel found most of it in the L2 (report 4.49 us; the script flushed only: 4.90 us; with the
    replay: 4.42 us, ``tests/fixtures/metal_repro_summary.txt``). Its ``out_ptr0`` is ``buf11``, made in ``buf7``'s
    storage (``# reuse``), which a reduction before wrote."""
    from inductor_lens.analysis.memory import reuses
    from inductor_lens.analysis.reproducer import launch_order, step_before

    report = inductor_lens.load(FIXTURES / "gpu_metal_gpt2_ir.json.gz")
    bwd = next(c for c in report.compiles if c.graph_kind == "backward")
    order, aliases = launch_order(bwd.kernels, bwd.output_code), reuses(bwd.output_code)
    assert len(order) == len(bwd.kernels) and order[0].name == "extern_kernels.mm[buf0]"
    k = next(k for k in bwd.kernels if k.name == "triton_red_fused_sum_view_3")
    before = step_before(order, k, aliases)
    assert [name for name, _ in before] == [o.name for o in order[: order.index(k)]]  # oldest first, all of them
    mm9, mm10 = before[-2][1], before[-1][1]
    mib12, mib48, mib9 = 4096 * 768 * 4, 4096 * 3072 * 4, 768 * 3072 * 4
    assert mm10 == [("r", "buf4", 0, mib12), ("r", "view_16", None, mib48), ("w", "buf10", None, mib9)]
    assert mm9[0] == ("r", "buf4", 0, mib12) and mm9[-1][0] == "w"  # reads first, then what it writes
    ln = next(t for name, t in before if name == "triton_per_fused_native_layer_norm_backward_view_0")
    assert ("w", "buf4", 0, mib12) in ln  # the launch that wrote it
    assert ("w", "buf7", 1, 768 * 32 * 4) in next(t for name, t in before if name.startswith("triton_red_fused_native"))
    assert ("w", "buf7", None, 768 * 32 * 4) in step_before(order, k)[3][1]  # without the # reuse lines: apart
    assert step_before(order, order[0], aliases) == []  # nothing ran before the first launch
    script = reproducer(report, k)
    assert "STEP_BEFORE = [" in script and "('r', 'buf4', 0, 12582912)" in script
    assert 'default="step"' in script and "L2_SHARE = 0.5" in script
    ast.parse(script)


def _script_globals(report, kernel_name: str) -> dict:
    """A reproducer's functions, run here on the CPU (an extern kernel's script: no Triton import)."""
    script = reproducer(report, kernel_name)
    g = {"__name__": "reproducer"}
    exec(compile(script, kernel_name, "exec"), g)
    g["DEVICE"] = "cpu"
    return g


def test_the_replay_touches_the_kernels_own_arguments_keeps_their_values_and_stops_where_the_l2_would():
    """The script's ``_replay``, run on the CPU: a read (a sum) or a rewrite with its own bytes of the kernel's own
    arguments (their values unchanged), a scratch buffer for the step's other tensors, each launch's tensors
    interleaved in ``CHUNKS`` parts, and only as far back as twice the room it is given (the newest launches)."""
    import torch

    report = inductor_lens.load(FIXTURES / "gpu_metal_gpt2_ir.json.gz")
    g = _script_globals(report, "extern_kernels.mm[buf10]")  # its argument 0 is buf4
    args, kwargs = g["arguments"]()
    kept = [a.clone() for a in args]
    steps = g["_replay"](args, kwargs, 64 << 20)  # replays back to 128 MiB: mm[buf9], ..., the writer of buf4

    def touch(f):  # (what, storage, where in it): a bound sum / zero_ of a tensor, or the rewrite (a lambda over it)
        t = f.__self__ if hasattr(f, "__self__") else f.__defaults__[0]
        what = {"sum": "read", "zero_": "fill"}.get(getattr(f, "__name__", ""), "rewrite")
        return what, t.untyped_storage().data_ptr(), t.data_ptr()

    touches = [touch(f) for f in steps]
    buf4 = args[0].untyped_storage().data_ptr()
    mine = {a.untyped_storage().data_ptr() for a in args}
    assert {("rewrite", buf4), ("read", buf4)} <= {t[:2] for t in touches}  # the layer norm wrote it, mm[buf9] read it
    assert {p for what, p, _ in touches if what == "rewrite"} == {buf4}  # only its own arguments are rewritten
    assert all(p not in mine for what, p, _ in touches if what == "fill")  # the step's other outputs: scratch
    for f in steps:
        f()
    assert all(torch.equal(a, b) for a, b in zip(args, kept))  # reads and rewrites leave the arguments as they were
    chunks = g["CHUNKS"]
    newest = touches[-3 * chunks :]  # mm[buf9]: reads buf4 and primals_14, writes buf9, side by side
    assert [t[0] for t in newest] == ["read", "read", "fill"] * chunks
    assert newest[0][1] == buf4 and len({t[2] for t in newest[:3]}) == 3 and len({t[2] for t in newest}) == 3 * chunks
    assert len(g["_replay"](args, kwargs, 8 << 20)) < len(steps)  # a smaller L2: fewer launches replayed
    assert g["_replay"](args, kwargs, 0) == []


def test_old_reports_and_unknown_kernels_say_why(training_report, sin_cos_report, tmp_path, capsys):
    import dataclasses

    k = training_report.kernels[0]
    old = dataclasses.replace(
        training_report,
        compiles=[dataclasses.replace(training_report.compiles[0], kernels=[dataclasses.replace(k, launch=None)])],
    )
    with pytest.raises(ReproducerError, match="no recorded launch"):
        reproducer(old, k.name)
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        reproducer(training_report, "nope")
    # oneDNN's quantized linear of a frozen int8 graph (PT2E) reads a prepacked weight: its script segfaulted
    ext = next(k for k in training_report.kernels if k.language == "extern" and k.launch)
    q = dataclasses.replace(ext, name="torch.ops.onednn.qlinear_pointwise.tensor[buf6]", metadata={})
    int8 = dataclasses.replace(
        training_report, compiles=[dataclasses.replace(training_report.compiles[0], kernels=[q])]
    )
    with pytest.raises(ReproducerError, match="prepacked into its own layout"):
        reproducer(int8, q.name)
    path = tmp_path / "r.json"
    sin_cos_report.save_json(path)
    name = sin_cos_report.kernels[0].name
    assert cli.main(["repro", str(path), name, "-o", str(tmp_path / "k.py")]) == 0
    assert (tmp_path / "k.py").read_text() == reproducer(sin_cos_report, name)
    assert cli.main(["repro", str(path), "nope"]) == 2
    assert f"no kernel 'nope' in the report (kernels: ['{name}'])" in capsys.readouterr().err


def test_a_name_that_a_forward_and_its_backward_share_is_said_and_each_can_be_picked(tmp_path, capsys):
    """The H200 GPT-2 block's forward and backward each hold a ``triton_poi_fused_clone_transpose_view_8`` (their
    scripts differ in what the step ran before them). ``repro`` writes the first and says how to name the other."""
    from inductor_lens.analysis.reproducer import kernel_matches

    path = FIXTURES / "gpu_metal_gpt2_ir.json.gz"
    report = inductor_lens.load(path)
    name = "triton_poi_fused_clone_transpose_view_8"
    assert [cid for _, cid in kernel_matches(report, name)] == ["0/0 forward", "0/0 backward"]
    fwd, bwd = reproducer(report, name), reproducer(report, f"0/0 backward:{name}")
    assert "kernel triton_poi_fused_clone_transpose_view_8 (compile 0/0 backward, report" in bwd
    assert "('w', 'buf1', 0," in bwd  # buf25, its argument 0, is made in buf1's storage; mm[buf25] wrote it
    assert "('w', 'buf17', 0," in fwd  # the forward's: bmm[buf17] wrote its argument just before
    assert cli.main(["repro", str(path), name, "-o", str(tmp_path / "k.py")]) == 0
    err = capsys.readouterr().err
    assert f"2 kernels are named {name} (0/0 forward, 0/0 backward)" in err and f"'0/0 backward:{name}'" in err
    assert (tmp_path / "k.py").read_text() == fwd
    assert cli.main(["repro", str(path), f"0/0 backward:{name}", "-o", str(tmp_path / "b.py")]) == 0
    assert (tmp_path / "b.py").read_text() == bwd and "kernels are named" not in capsys.readouterr().err


def _hint(err: str) -> str:
    """The name ``repro``'s hint says to give for another kernel of the name (``e.g. '0/1 forward:NAME'``)."""
    m = re.search(r"e\.g\. '(.+)'$", err.strip().splitlines()[-1])
    assert m, err
    return m.group(1)


def test_every_compile_prefixed_name_the_hint_suggests_picks_that_kernel(training_report, tmp_path, capsys):
    """nu22 D2: a recompile (0/0 inference, then 0/1 forward of a training step) holds an extern kernel of the same
    name, ``extern_kernels.convolution[buf0]``; ``repro`` said to name the second as
    ``'0/1 forward:extern_kernels.convolution[buf0]'``, and that gave "no kernel ... in the report" (rc 2): a ``[``
    in the name turned the compile prefix off. The text before the first ``:`` is a compile where it is one of the
    report's ids or compile ids (neither holds a ``:``), whatever the name holds. Here the MLP's forward compiled
    again as 0/1 (its kernels keep their names, as a recompile's do): each suggested name round-trips through the
    CLI, by ``id`` and by ``compile_id``; a DDP rank's report gives ids with ``#2`` (a compile id's second graph)."""
    import dataclasses

    from inductor_lens.analysis.reproducer import kernel_matches

    fwd = training_report.compiles[0]
    again = dataclasses.replace(fwd, id="0/1 forward", compile_id="0/1")
    twice = dataclasses.replace(fwd, id="0/1 forward #2", compile_id="0/1")  # a compile id's second graph
    report = dataclasses.replace(training_report, compiles=[*training_report.compiles, again, twice])
    path = tmp_path / "r.json"
    report.save_json(path)
    externs = [k.name for k in fwd.kernels if k.language == "extern"]
    assert externs and all("[" in n for n in externs)
    for name in externs:
        found = kernel_matches(report, name)
        assert [cid for _, cid in found] == ["0/0 forward", "0/1 forward", "0/1 forward #2"]
        assert cli.main(["repro", str(path), name, "-o", str(tmp_path / "a.py")]) == 0
        suggested = _hint(capsys.readouterr().err)
        assert suggested == f"0/1 forward:{name}"
        for picked, i in ((suggested, 1), (f" 0/1 forward : {name}", 1), (f"0/1 forward #2:{name}", 2)):
            assert kernel_matches(report, picked) == [found[i]], picked
            assert cli.main(["repro", str(path), picked, "-o", str(tmp_path / "b.py")]) == 0, capsys.readouterr()
            assert "kernels are named" not in capsys.readouterr().err
            script = (tmp_path / "b.py").read_text()
            assert f"Reproducer of kernel {name} (compile {found[i][1]}," in script
            assert script == reproducer(report, picked)
        assert kernel_matches(report, f"0/0 forward:{name}") == kernel_matches(report, f"0/0:{name}") == [found[0]]
        # by compile id: 0/1's two graphs hold it; the hint names the kernel, not 'COMPILE:0/1:NAME'
        assert cli.main(["repro", str(path), f"0/1:{name}", "-o", str(tmp_path / "c.py")]) == 0
        err = capsys.readouterr().err
        assert f"2 kernels are named {name} (0/1 forward, 0/1 forward #2)" in err
        assert _hint(err) == f"0/1 forward #2:{name}"
    assert cli.main(["repro", str(path), "0/9:nope"]) == 2
    assert "no kernel '0/9:nope' in the report" in capsys.readouterr().err
    assert cli.main(["repro", str(path), f"0/0 backward:{externs[0]}"]) == 2
    assert f"compile 0/0 backward has no kernel '{externs[0]}': it is in 0/0 forward, 0/1 forward" in (
        capsys.readouterr().err
    )
    ddp = inductor_lens.load(FIXTURES / "dist" / "ddp" / "rank1.json")
    name = "extern_kernels.mm[buf2]"
    found = kernel_matches(ddp, name)
    assert [cid for _, cid in found] == ["4/0 backward", "4/0 backward #2", "4/1 backward", "4/1 backward #2"]
    for k, cid in found:
        assert kernel_matches(ddp, f"{cid}:{name}") == [(k, cid)]
    assert [cid for _, cid in kernel_matches(ddp, f"4/1:{name}")] == ["4/1 backward", "4/1 backward #2"]


def test_an_aotinductor_kernel_says_its_compile_uses_the_cpp_wrapper(training_report):
    """nu22 D5: ``repro`` of an AOTInductor kernel listed three possible causes (a report older than launches,
    cpp_wrapper=True, an unread launch), though the compile is ``ahead_of_time``. AOTInductor's package launches
    its kernels from C++: a C++ kernel has no launch, and an extern call's launch is the C++ statement, whose
    arguments carry no layout (nu22's s3_cli.json, torch 2.15: ``AOTI_TORCH_ERROR_CODE_CHECK(
    aoti_torch_cpu_addmm_out(buf0, fc1_bias, arg4_1, ...))``). Both say just that; a compile of torch.compile
    keeps the three causes."""
    import dataclasses

    from inductor_lens.report.model import KernelLaunch, LaunchArg

    c = training_report.compiles[0]
    cpp = next(k for k in c.kernels if k.language == "cpp")
    ext = next(k for k in c.kernels if k.language == "extern")
    call = "AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cpu_addmm_out(buf0, fc1_bias, arg4_1, fc1_weight, 1L, 1L));"
    names = ["buf0", "fc1_bias", "arg4_1", "fc1_weight", "1L", "1L"]
    cxx = KernelLaunch(call=call, args=[LaunchArg(name=n, value=n, value_text=n) for n in names])
    aot_kernels = [
        dataclasses.replace(cpp, launch=None),
        dataclasses.replace(ext, name="aoti_torch_cpu_addmm_out[buf0]", launch=cxx, metadata={"callee": "aoti"}),
    ]
    aot = dataclasses.replace(
        c, id="aot/0 inference", compile_id="aot/0", trigger=dataclasses.replace(c.trigger, kind="ahead_of_time")
    )
    report = dataclasses.replace(training_report, compiles=[dataclasses.replace(aot, kernels=aot_kernels)])
    for k in aot_kernels:
        with pytest.raises(ReproducerError) as e:
            reproducer(report, k.name)
        assert str(e.value) == (
            f"kernel {k.name!r} is of aot/0 inference, an AOTInductor compile: AOTInductor compiles use the C++ "
            "wrapper, whose launches are not read (no argument's shape, stride or dtype), so no script can be "
            "written for it"
        )
    jit = dataclasses.replace(training_report, compiles=[dataclasses.replace(c, kernels=aot_kernels[:1])])
    with pytest.raises(ReproducerError, match="older than launches.*cpp_wrapper=True.*could not be read"):
        reproducer(jit, cpp.name)


def test_hostile_names_stay_inside_comments_and_strings(sin_cos_report):
    """A report's names and title go into the script's docstring and comments: quotes and new lines in them
    cannot end the docstring or start a line of code."""
    import dataclasses

    k = sin_cos_report.kernels[0]
    bad = 'x"""\nimport os; os.system("echo pwned")\n#'
    args = [dataclasses.replace(a, name=bad) for a in k.launch.args]
    k = dataclasses.replace(k, launch=dataclasses.replace(k.launch, args=args))
    report = dataclasses.replace(
        sin_cos_report,
        title=bad,
        compiles=[dataclasses.replace(sin_cos_report.compiles[0], kernels=[k])],
    )
    tree = ast.parse(reproducer(report, k))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "system"]
    assert calls == [] and ast.get_docstring(tree).startswith(f"Reproducer of kernel {k.name}")


def test_a_custom_ops_script_says_what_to_import_where_torch_does_not_know_the_op(training_report):
    """An extern kernel that calls a ``torch.library`` custom op: the script imports torch only, and the op is defined
    by the user's code. It died in an AttributeError of torch's (``'_OpNamespace' 'nu2' object has no attribute
    'mysin'``); it says which op it is and how to run the script with its module imported."""
    import dataclasses

    import torch

    c = next(c for c in training_report.compiles if any(k.language == "extern" for k in c.kernels))
    k = next(k for k in c.kernels if k.language == "extern")
    k = dataclasses.replace(
        k,
        name="torch.ops.nolens_trial.mysin.default[buf9]",
        metadata=dict(k.metadata, callee="torch.ops.nolens_trial.mysin.default"),
    )
    report = dataclasses.replace(training_report, compiles=[dataclasses.replace(c, kernels=[k])])
    script = reproducer(report, k)
    space = {"__name__": "reproducer_under_test"}
    exec(compile(script, "k.py", "exec"), space)
    with pytest.raises(SystemExit) as stop:
        space["load"]()
    assert "the op nolens_trial::mysin" in str(stop.value) and "runpy.run_path" in str(stop.value)
    assert not hasattr(torch.ops.nolens_trial, "mysin")


def test_the_grid_is_torchs_grid_expression_at_the_calls_sizes():
    """The grid comes from Inductor's own ``GridExpr`` for the chosen config (here a stand-in for triton.Config:
    CPU torch has no Triton), evaluated at the numels the output code passes: 512 elements, XBLOCK 128 -> 4."""
    from types import SimpleNamespace

    from inductor_lens.capturing.torchread import launch_grid

    report = _gpu_report()
    k = next(k for k in report.compiles[0].kernels if k.name == "triton_poi_fused_add_arange_0")
    meta = k.metadata["launch"]
    try:  # Triton's own config where Triton is installed (a CUDA build of torch: GridExpr converts only that)
        from triton import Config

        config = Config(dict(meta["block"]), num_warps=meta["num_warps"], num_stages=meta["num_stages"])
    except ImportError:
        config = SimpleNamespace(kwargs=meta["block"], num_warps=meta["num_warps"], num_stages=meta["num_stages"])
    tuner = SimpleNamespace(launchers=[SimpleNamespace(config=config)], inductor_meta={"grid_type": "Grid1D"})
    grid = launch_grid(tuner)
    assert grid["grid"][1:] == [1, 1] and "xnumel" in grid["grid"][0]
    layouts = OutputCodeLayouts(report.compiles[0].output_code)
    launch = kernel_launch(layouts, k.name, "triton", k.source, runtime={**meta, **grid})
    assert launch.grid == [4, 1, 1]
    assert (
        launch_grid(SimpleNamespace(launchers=[SimpleNamespace(config=config)], inductor_meta={"grid_type": "No"}))
        is None
    )


def test_a_templates_grid_is_the_numbers_its_call_passes_and_its_block_its_tile_sizes():
    """nu21 a, b: a Triton template launches on a ``FixedGrid``: its grid is ``_grid_0, _grid_1, _grid_2``, the
    launcher's extra arguments (``inductor_meta["extra_launcher_args"]``), which the output code passes as numbers
    after the kernel's own (``.run(primals_3, primals_1, primals_2, buf1, 128, 1, 1, ...)``). They had no parameter
    name, so the grid stayed unevaluated; and the template's config holds no block sizes (``block`` ``{}``): its
    tiles are the ``config_args`` Inductor keeps in ``inductor_meta``. Here from the H200 max-autotune report's
    output code: M=256, N=1024 in tiles of 64 x 32 are 4 x 32 = 128 programs."""
    import dataclasses
    from types import SimpleNamespace

    from inductor_lens.capturing.torchread import launch_metadata
    from inductor_lens.report.finish import launch_facts

    path = FIXTURES / "gpu_max_autotune.json"
    report = inductor_lens.load(path)
    c = report.compiles[0]
    k = c.kernel("triton_tem_fused_addmm_relu_t_0")
    assert "M = 256" in k.source and "N = 1024" in k.source
    meta = {"config_args": {"EVEN_K": True, "ACC_TYPE": "tl.float32", "BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 128}}
    meta["config_args"].update(GROUP_M=8, ALLOW_TF32=False)
    config = SimpleNamespace(kwargs={}, num_warps=4, num_stages=5)  # triton.template's Config({}, ...)
    tuner = SimpleNamespace(launchers=[SimpleNamespace(config=config)], configs=[config], inductor_meta=meta)
    runtime = launch_metadata(tuner)
    assert runtime["block"] == {"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 128, "GROUP_M": 8}
    runtime.update(grid=["_grid_0", "_grid_1", "_grid_2"], grid_prefix=[])  # GridExpr.from_meta of a FixedGrid
    launch = kernel_launch(OutputCodeLayouts(c.output_code), k.name, "triton", k.source, runtime=runtime)
    tiles = (256 // 64) * (1024 // 32)
    assert launch.grid == [tiles, 1, 1]
    assert [(a.param, a.value) for a in launch.args[-3:]] == [("_grid_0", tiles), ("_grid_1", 1), ("_grid_2", 1)]
    assert launch.block == runtime["block"]
    # a report made before: the grid left as text, the numbers with no parameter, no block; derived on loading
    old = dataclasses.replace(
        launch,
        grid=["_grid_0", "_grid_1", "_grid_2"],
        block={},
        args=[dataclasses.replace(a, param="" if a.param.startswith("_grid") else a.param) for a in launch.args],
    )
    done = launch_facts(dataclasses.replace(k, launch=old)).launch
    assert done.grid == [tiles, 1, 1] and done.block == runtime["block"]
    assert done.grid_text == "128 × 1 × 1 = 128 CTAs"
    assert (
        done.config_text
        == "grid 128 × 1 × 1 = 128 CTAs · 4 warps · 5 stages · BLOCK_M=64 BLOCK_N=32 BLOCK_K=128 GROUP_M=8"
    )


def test_a_templates_script_runs_the_config_inductor_ran_without_passing_its_tile_sizes(monkeypatch):
    """The H200 run of the twentieth session's device check: a max-autotune template's reproducer died in Triton,
    ``ValueError: 'BLOCK_M' is not in list``. A template's tile sizes are constants of its source (``BLOCK_M : tl.constexpr
    = 64``), not parameters: its one config has no kwargs (``Config({}, ...)``), so the script, matching configs by the
    recorded block, kept none and made a ``Config`` that passed BLOCK_M as an argument. The script keeps only the block
    sizes the kernel takes as parameters. Its ``load()`` is run here with Triton's pieces stood in for (no GPU)."""
    import sys
    from types import ModuleType, SimpleNamespace

    import torch

    report = inductor_lens.load(FIXTURES / "gpu_template_launch.json.gz")  # tests/fixtures/check_gpu_session20.py
    k = report.compiles[0].kernel("triton_tem_fused_mm_0")
    script = reproducer(report, k)
    tail = script.split("# ---- end of the kernel's source ----", 1)[1]
    made = []
    triton = ModuleType("triton")
    triton.Config = lambda kwargs, **kw: made.append(kwargs) or SimpleNamespace(kwargs=kwargs, **kw)
    monkeypatch.setitem(sys.modules, "triton", triton)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 0, raising=False)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    ran = SimpleNamespace(kwargs={}, num_warps=k.launch.num_warps, num_stages=k.launch.num_stages)
    params = re.search(r"^def \w+\(([^)]*)\)", k.source, re.M).group(1)
    fn = SimpleNamespace(arg_names=[p.split(":")[0].strip() for p in params.split(",")])  # no BLOCK_M among them
    assert "BLOCK_M" not in fn.arg_names and "BLOCK_M : tl.constexpr = 64" in k.source
    tuner = SimpleNamespace(fn=fn, configs=[ran])
    space = {"__name__": "reproducer_under_test", "torch": torch, k.source.split("def ", 1)[1].split("(")[0]: tuner}
    exec(compile(tail, "k.py", "exec"), space)
    assert k.launch.block.get("BLOCK_M")  # the recorded config has tile sizes ...
    space["load"]()
    assert tuner.configs == [ran] and made == []  # ... and the script runs the template's own config


def test_an_argument_without_a_recorded_dtype_gets_the_one_its_parameter_declares():
    """A report written before subgraph inputs had dtypes (a while_loop body's counter ``arg0_1``: the output code
    only asserts its size) left the argument without one, and the script built it as the first tensor's float32
    for a kernel that reads ``const int64_t*``. The kernel's own parameter types say what it reads (C++:
    ``arg_types``; Triton: its signature)."""
    from inductor_lens.analysis.reproducer import kernel_script
    from inductor_lens.report.model import Kernel

    code = """
def body(args):
    body_arg0_1, body_arg1_1 = args
    assert_size_stride(body_arg1_1, (8, 16), (16, 1), 'input')
    assert_size_stride(body_arg0_1, (), (), 'input')
    body_buf0 = empty_strided_cpu((8, 16), (16, 1), torch.float32)
    cpp_fused_add_0(body_arg1_1, body_arg0_1, body_buf0)
"""
    source = (
        'extern "C" void kernel(const float* in_ptr0, const int64_t* in_ptr1, float* out_ptr0)\n'
        "{ for (long i = 0; i < 128; i++) out_ptr0[i] = in_ptr0[i] + in_ptr1[0]; }"
    )
    types = ["const float*", "const int64_t*", "float*"]
    launch = kernel_launch(OutputCodeLayouts(code), "cpp_fused_add_0", "cpp", source, arg_types=types)
    assert [a.dtype for a in launch.args] == [None, None, "float32"]
    text = kernel_script(Kernel(name="cpp_fused_add_0", language="cpp", source=source, launch=launch))
    made = [ln.split("make(", 1)[1].split(")")[0] for ln in text.splitlines() if ln.strip().startswith("make(")]
    assert made == ["[8, 16], [16, 1], 'float32', 0, 8", "[], [], 'int64', 0, 8", "[8, 16], [16, 1], 'float32', 0, 8"]
    # a Triton kernel's signature says the same
    import dataclasses

    from inductor_lens.analysis.reproducer import _declared_dtypes

    triton = "@triton_heuristics.pointwise(triton_meta={'signature': {'in_ptr0': '*fp32', 'in_ptr1': '*i64'}})"
    args = [dataclasses.replace(a, param=p) for a, p in zip(launch.args, ["in_ptr0", "in_ptr1", "out_ptr0"])]
    launch = dataclasses.replace(launch, args=args, arg_types=None)
    k = Kernel(name="triton_poi_fused_add_0", language="triton", source=triton, launch=launch)
    assert _declared_dtypes(k, launch) == ["float32", "int64", None]


def test_a_frozen_graphs_constants_are_named_by_the_parameters_they_come_from():
    """nu18 s1: the frozen MLP's GEMM template reads ``constant6`` (fc1's weight, packed for the template) and
    ``_frozen_param1`` (fc1.bias); the script's comments said only Inductor's names, where the views say the user's
    (``Compile.constant_names``, the launch table's ``LaunchArg.holds``). Each argument's comment names what it holds."""
    from inductor_lens.analysis.reproducer import kernel_script
    from inductor_lens.report.model import Kernel, KernelLaunch, LaunchArg

    def arg(name, param, holds, shape=(4, 16)):
        return LaunchArg(
            name=name, shape=list(shape), stride=[16, 1], dtype="float32", offset=0, param=param, holds=holds
        )

    launch = KernelLaunch(
        arg_types=["const float*", "const float*", "const float*", "float*"],
        args=[
            arg("arg4_1", "X", "x"),
            arg("constant6", "W", "fc1.weight (packed for the C++ GEMM template)", (8, 16, 16)),
            arg("_frozen_param1", "in_ptr2", "fc1.bias", (64,)),
            arg("buf1", "Y", "buf1"),
        ],
    )
    text = kernel_script(Kernel(name="cpp_fused_addmm_relu_0", language="cpp", source="", launch=launch))
    assert "  # constant6 (W): fc1.weight (packed for the C++ GEMM template)\n" in text, text
    assert "  # _frozen_param1 (in_ptr2): fc1.bias\n" in text and "  # arg4_1 (X): x\n" in text
    assert "  # buf1 (Y)\n" in text  # what holds only its own name says nothing more


def test_a_buffer_passed_twice_is_one_tensor_as_in_the_real_call():
    """An in-place update's kernel (a compiled optimizer step's foreach: ``kernel(arg9_1, ..., arg9_1, ...)``, the
    parameter its ``in_ptr0`` and ``out_ptr0``) got two tensors, one read and one written: the script moved twice the
    bytes and never read through the pointer it wrote (nu19 O-i). The same buffer at the same layout is one tensor;
    one at another layout (a view) is its own."""
    from inductor_lens.analysis.reproducer import kernel_script
    from inductor_lens.report.model import Kernel, KernelLaunch, LaunchArg

    def arg(name, param, shape=(4,), stride=(1,)):
        return LaunchArg(name=name, shape=list(shape), stride=list(stride), dtype="float32", offset=0, param=param)

    launch = KernelLaunch(
        arg_types=["const float*", "const float*", "float*", "float*"],
        args=[
            arg("arg9_1", "in_ptr0"),
            arg("arg4_1", "in_ptr1"),
            arg("arg9_1", "out_ptr0"),
            arg("arg4_1", "out_ptr1", (2,), (2,)),
        ],
    )
    text = kernel_script(Kernel(name="cpp_fused__foreach_add_0", language="cpp", source="", launch=launch))
    body = text[text.index("def arguments():") :]
    body = body[: body.index("    return args, kwargs")] + "    return args, kwargs\n"
    made = []
    scope = {"make": lambda *a: made.append(a) or object()}
    exec(body, scope)
    args, _ = scope["arguments"]()
    assert args[0] is args[2] and args[1] is not args[3] and len(made) == 3, body
    assert "t0 = make([4], [1], 'float32', 0" in body and "arg9_1, passed twice (in_ptr0, out_ptr0)" in body


def test_the_check_counts_a_tensor_passed_twice_once_and_names_a_few(tmp_path, capsys):
    """nu30 D9: an AdamW foreach kernel's check said "wrote 216 of its 243 tensor arguments: arg0_1 (in_ptr0), ...,
    arg0_1 (out_ptr3), ..." on one line of thousands of characters: each in-place tensor counted and named as both of
    its parameters. A tensor passed more than once is one tensor (said so, with how often), and the line names the
    first few."""
    import runpy

    import torch

    report = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_default.json")
    path = tmp_path / "k.py"
    path.write_text(reproducer(report, report.kernels[1]))
    ns = runpy.run_path(str(path), run_name="not_main")
    shared = torch.zeros(4)
    args = [shared, shared, *[torch.zeros(2) for _ in range(11)]]
    ns["NAMES"].clear()
    ns["NAMES"].update({0: "p (in_ptr0)", 1: "p (out_ptr0)", **{i: f"w{i} (out_ptr{i})" for i in range(2, 13)}})

    def run(args, kwargs):
        for t in args:
            t.add_(1)

    capsys.readouterr()
    ns["check"](run, args, {})
    line = capsys.readouterr().out.strip()
    assert line == (
        f"{report.kernels[1].name}: check passed: the kernel ran and wrote 12 of its 12 tensors (13 arguments: some "
        "passed more than once): p (in_ptr0) (2 times), w2 (out_ptr2), w3 (out_ptr3), w4 (out_ptr4), w5 (out_ptr5), "
        "w6 (out_ptr6), w7 (out_ptr7), w8 (out_ptr8) and 4 more"
    )


def test_a_cpp_script_stops_where_this_cpu_lacks_an_extension_its_source_uses(tmp_path):
    """A report captured on a CPU with AMX (torch picks "avx512 amx_tile", 512 bits) run on one of 512 bits without
    AMX passed the width check and died compiling an AMX micro-GEMM's ``_tile_loadd``: the script now stops with the
    instruction set it lacks, where the source uses that extension's intrinsics."""
    import dataclasses

    from torch._inductor.cpu_vec_isa import pick_vec_isa

    if "amx_tile" in str(pick_vec_isa()).split():
        pytest.skip("this CPU has AMX: the extension is not missing here")
    report = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_max_autotune.json")
    c = report.compiles[0]
    k = dataclasses.replace(c.kernels[1], source=c.kernels[1].source + "\n// _tile_loadd(0, A, lda);\n")
    c = dataclasses.replace(c, kernels=[c.kernels[0], k], cpu_isa="avx512 amx_tile", cpu_isa_bits=512)
    report = dataclasses.replace(report, compiles=[c])
    p = _script_run(tmp_path, report, report.compiles[0].kernels[1], "--runs", "2", "--warmup", "0")
    assert p.returncode == 1 and p.stdout == "", p.stdout + p.stderr
    (said,) = _ours(p.stderr, k)
    assert said.startswith(f"{k.name}: its source was written for avx512 amx_tile"), said
    assert "Run this script on a CPU with avx512 amx_tile" in said


def test_a_data_dependent_size_is_bounded_by_its_own_check_only_and_max_is_no_size():
    """``64*u0 <= 4096`` bounds a product, not ``u0`` (it read as ``u0 <= 4096``, 64 times the size); torch's printer
    writes ``max(1, u0)``, whose ``max`` is no size to give."""
    from inductor_lens.analysis.reproducer import _symbols, size_bounds

    assert size_bounds("if not (64*u0 <= 4096):\n    raise", ["u0"]) == {}
    assert size_bounds("if not (64*u0 <= 4096):\n    raise\nif not (u0 <= 64):\n    raise", ["u0"]) == {"u0": 64}
    assert _symbols("max(1, u0)") == {"u0"} and _symbols("Max(1, 64*u1)") == {"u1"}


def test_an_attention_backwards_dropout_seed_and_offset_are_made_on_the_cpu():
    """The reproducer of a checkpointed attention's ``_scaled_dot_product_efficient_attention_backward`` (the H200
    fixture) segfaulted: its philox seed and offset, which torch's attention ops make and take as CPU tensors outside
    CUDA-graph capture, were made on the GPU like its other arguments (with them on the CPU it ran, 56 us against the
    report's 53 us, on the H200). The script finds them by the op's schema and moves them once, before the check."""
    import runpy

    report = inductor_lens.load(FIXTURES / "gpu_checkpoint_attention.json.gz")
    k = next(k for k in report.kernels if k.name.startswith("torch.ops.aten._scaled_dot_product_efficient_attention_b"))
    ns = runpy.run_path(_written(reproducer(report, k)), run_name="not_main")
    ns["load"]()
    assert ns["load"].__globals__["PHILOX"] == {7, 8, "philox_seed", "philox_offset"}
    mm = next(x for x in report.kernels if x.name.startswith("extern_kernels.mm") and x.launch is not None)
    ns = runpy.run_path(_written(reproducer(report, mm)), run_name="not_main")
    ns["load"]()
    assert ns["load"].__globals__["PHILOX"] == set()


def _written(script: str) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(script)
    return fh.name


def test_a_list_of_tensors_argument_says_what_it_is_and_a_garbled_name_is_said_once():
    """nu24 (a new user's trial): ``aten.index.Tensor(buf0, [primals_6])`` of a boolean-mask index said "argument
    '[primals_6]' = '[primals_6]' is neither a number nor a literal": the recorded launch names the list's tensors
    only. It says what the argument is; a list of size symbols, or any other text, keeps the plain message, once."""
    from inductor_lens.analysis.reproducer import _literal
    from inductor_lens.report.model import LaunchArg

    with pytest.raises(ReproducerError) as e:
        _literal(LaunchArg(name="[primals_6]", value="[primals_6]"))
    assert str(e.value).startswith("an argument is a list of tensors (primals_6), which this report's launch names")
    assert str(e.value).endswith("Capture it again to get one")
    with pytest.raises(ReproducerError, match=r"^argument '\[s0, u1\]' is neither a number nor a literal"):
        _literal(LaunchArg(name="[s0, u1]", value="[s0, u1]"))
    with pytest.raises(ReproducerError, match=r"^argument 'x' = 'foo bar' is neither"):
        _literal(LaunchArg(name="x", value="foo bar"))
    assert _literal(LaunchArg(name="[1, 2]", value="[1, 2]")) == "[1, 2]"
