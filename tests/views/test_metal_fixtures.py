"""Issue 24 on the H200 fixtures (tests/fixtures/make_metal_fixtures.py): IR stages and resources on every
Triton kernel of a GPT-2 block training step captured with ``ir=True``, their launches and reproducers, and CUDA
graphs used by one ``reduce-overhead`` compile and skipped by one whose graph mutates an input. Each test skips,
saying why, while its fixture is not recorded."""

import ast
import pathlib

import pytest

import inductor_lens

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
HOW = "PYTHONPATH=. python3 tests/fixtures/make_metal_fixtures.py OUTDIR on a GPU, then copy OUTDIR/*.gz to tests/fixtures/"


def _load(name):
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{name} not recorded yet: run {HOW}")
    return inductor_lens.load(path)


def test_every_triton_kernel_has_its_ir_stages_and_resources():
    """TTIR, TTGIR, LLIR and PTX of every Triton kernel, with the registers, shared memory and spills the compiled
    kernel reports (recorded on the H200, torch 2.11)."""
    report = _load("gpu_metal_gpt2_ir.json.gz")
    triton = [k for k in report.kernels if k.language == "triton"]
    assert len(triton) >= 10
    for k in triton:
        ir = k.ir
        assert ir is not None, k.name
        assert ir.ttir.lstrip().startswith(("module", "#loc")) and "tt.func" in ir.ttir, k.name
        assert "ttg." in ir.ttgir or "triton_gpu" in ir.ttgir, k.name
        assert "define" in ir.llir and ".entry" in ir.ptx and ".target sm_90" in ir.ptx, k.name
        # the PTX names the kernel's own function
        assert k.source.split("def ", 1)[1].split("(", 1)[0] in ir.ptx, k.name
        assert isinstance(ir.registers, int) and 0 < ir.registers <= 255, k.name
        assert isinstance(ir.shared_bytes, int) and ir.shared_bytes >= 0 and isinstance(ir.spills, int)
        assert ir.sass and "Function :" in ir.sass or ir.sass is None, k.name  # cuobjdump, where it was on the PATH
    assert [d for d in report.diagnostics if d.code == "ir_missing"] == []
    # torch 2.11's static CUDA launcher keeps no asm: the stages came from the files beside its cubin


def test_triton_launches_have_grids_and_reproducers():
    report = _load("gpu_metal_gpt2_ir.json.gz")
    for k in report.kernels:
        if k.language != "triton":
            continue
        launch = k.launch
        assert launch.device == "cuda" and launch.num_warps in (1, 2, 4, 8, 16, 32), k.name
        assert launch.grid and all(isinstance(g, int) and g >= 1 for g in launch.grid), (k.name, launch.grid)
        numels = [a.value for a in launch.args if a.param == "xnumel"]
        xblock = (launch.block or {}).get("XBLOCK")
        if numels and xblock and launch.grid[1:] == [1, 1]:  # Grid1D: cdiv(xnumel, XBLOCK)
            assert launch.grid[0] == -(-numels[0] // xblock), k.name
        ast.parse(k.reproducer)
        assert k.source.strip() in k.reproducer


def test_cuda_graphs_used_once_and_skipped_for_a_mutated_input():
    report = _load("gpu_metal_cudagraphs.json.gz")
    graphs = [c.cudagraphs for c in report.compiles]
    assert all(g is not None for g in graphs)
    used = [g for g in graphs if g.used]
    skipped = [g for g in graphs if not g.used]
    assert used and all(g.recordings and g.skip_reason is None for g in used)
    assert all(r.time_us and r.time_us > 0 for g in used for r in g.recordings)
    assert any("mutated inputs" in (g.skip_reason or "") for g in skipped), [g.skip_reason for g in skipped]


def test_the_launch_grid_is_said_once_evaluated():
    """nu21 b: the launch configuration showed Inductor's unevaluated grid expression (``-((xnumel) // -(256)),
    -((ynumel) // -(16)), 1``) beside the evaluated ``[2, 384, 1]``, and "1 stages". Python says the grid once,
    evaluated at the sizes the call passes (512 and 6144 are literals of the call and of the source), with the
    CTAs it launches; the grammar of one stage."""
    report = _load("gpu_metal_gpt2_ir.json.gz")
    k = next(k for k in report.kernels if k.name == "triton_poi_fused_addmm_clone_split_transpose_view_4")
    numel = {a.param: a.value for a in k.launch.args if a.param in ("xnumel", "ynumel")}
    assert numel == {"xnumel": 512, "ynumel": 6144} and "xnumel = 512" in k.source
    block = k.launch.block
    x, y = -(-512 // block["XBLOCK"]), -(-6144 // block["YBLOCK"])
    assert (x, y) == (2, 384)
    assert k.launch.grid_text == f"{x} × {y} × 1 = {x * y:,} CTAs"
    assert k.launch.config_text == f"grid {x} × {y} × 1 = 768 CTAs · 8 warps · 1 stage · XBLOCK=256 YBLOCK=16"
    for k in report.kernels:
        if k.language == "triton":
            assert "//" not in k.launch.grid_text and "CTA" in k.launch.grid_text, (k.name, k.launch.grid_text)


def test_the_skip_for_a_mutated_input_names_it():
    """nu21 f: the skip read "mutated inputs (1 instances)", torch's words; the report holds which input: the
    post-grad graph's ``copy_`` back into the placeholder shown as ``acc``, with the line that wrote it. Derived on
    load for this fixture, recorded before ``CudaGraphs.skip_note``; the diagnostic says it too."""
    report = _load("gpu_metal_cudagraphs.json.gz")
    (c,) = [c for c in report.compiles if c.cudagraphs and not c.cudagraphs.used]
    post = {n.name: n for n in c.graphs["post_grad"].nodes}
    (copy,) = [n for n in post.values() if n.target == "aten.copy_.default"]
    assert post[copy.inputs[0]].display_name == "acc" and copy.user_stack[-1].code == "acc.add_(1)"
    line = copy.user_stack[-1].line
    note = f"mutated inputs (1 instances): acc is written in place, by acc.add_(1) at make_metal_fixtures.py:{line}"
    assert c.cudagraphs.skip_reason == "mutated inputs (1 instances)" and c.cudagraphs.skip_note == note
    (d,) = [d for d in report.diagnostics if d.code == "cudagraph_skipped"]
    assert d.message == f'{c.id}: mode="reduce-overhead" but CUDA graphs skipped: {note}'
