"""Triton reports recorded on a real GPU (tests/fixtures/README.md) load and hold what a user needs."""

import pathlib

import pytest

import inductor_lens
from inductor_lens.capturing.parse import parse_output_code_kernels

pytestmark = pytest.mark.gpu_fixture

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
NAMES = ["sin_cos", "mlp", "gpt2_block", "training", "max_autotune"]


@pytest.fixture(scope="module", params=NAMES)
def gpu_report(request):
    return inductor_lens.load(FIXTURES / f"gpu_{request.param}.json")


def test_every_triton_kernel_is_linked_with_exact_source_and_launch_config(gpu_report):
    assert gpu_report.device == "cuda"
    for c in gpu_report.compiles:
        in_code = parse_output_code_kernels(c.output_code)
        triton = [k for k in c.kernels if k.language == "triton"]
        assert triton and {k.name for k in triton} == {n for n, (lang, _) in in_code.items() if lang == "triton"}
        for k in triton:
            assert k.source == in_code[k.name][1] and "@triton.jit" in k.source
            assert k.fused_nodes and k.fx_nodes and k.compiler_stack and k.user_stack
            launch = k.metadata["launch"]
            assert launch["num_warps"] in (1, 2, 4, 8, 16, 32) and launch["num_stages"] >= 1
            assert k.metadata["heuristic"] in (
                "pointwise",
                "reduction",
                "persistent_reduction",
                "template",
                "foreach",
                "split_scan",
                "cooperative_reduction",
            )
            assert any("codegen/triton.py" in f.file or "codegen/simd.py" in f.file for f in k.compiler_stack)


def test_profile_attributes_device_time_to_every_kernel(gpu_report):
    kernels = gpu_report.kernels
    assert all(k.profile and k.profile.device == "cuda" and k.profile.total_us > 0 for k in kernels)
    assert sum(k.profile.share for k in kernels) == pytest.approx(1.0, abs=0.01)


def test_sin_cos_on_gpu_is_one_triton_kernel_over_all_five_ops():
    r = inductor_lens.load(FIXTURES / "gpu_sin_cos.json")
    (k,) = r.kernels
    assert k.language == "triton" and k.name.startswith("triton_poi_fused")
    assert len(k.fx_nodes) == 5


def test_training_has_forward_and_lazy_backward_on_gpu():
    r = inductor_lens.load(FIXTURES / "gpu_training.json")
    assert [c.graph_kind for c in r.compiles] == ["forward", "backward"]
    assert r.compiles[1].trigger.kind == "lazy_backward"


def test_max_autotune_records_the_choices_and_their_times():
    r = inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    tuned = [k for k in r.kernels if "autotune" in k.metadata]
    assert len(tuned) == 2
    template = next(k for k in tuned if k.language == "triton")
    assert template.metadata["heuristic"] == "template"
    for k in tuned:
        a = k.metadata["autotune"]
        times = [c["time_ms"] for c in a["choices"] if c["time_ms"] is not None]
        assert len(a["choices"]) > 10 and times == sorted(times)
        assert a["fastest"] == a["choices"][0]["name"] and a["emitted"] == k.name
        assert a["chosen"] in [c["name"] for c in a["choices"]]


def test_a_templates_launch_configuration_has_its_tile_sizes():
    """nu21 a: a Triton template's config holds only warps and stages, so the launch configuration of
    ``triton_tem_*`` showed no block sizes (``block`` ``{}``) though its source declares them ``tl.constexpr``. The
    report made before the capture read them gets them from its source's ``config_args``: the BLOCK_M/N/K and
    GROUP_M of the autotune choice the kernel came from (its benchmarked description, an independent record)."""
    from inductor_lens.report.rules import choice_config

    r = inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    templates = [k for k in r.kernels if k.name.startswith("triton_tem")]
    assert len(templates) == 2
    for k in templates:
        tune = k.metadata["autotune"]
        chosen = next(c for c in tune["choices"] if c["name"] == tune["chosen"])
        want = {key: int(v) for key, v in choice_config(chosen["description"]).items() if key.startswith("BLOCK_")}
        want["GROUP_M"] = int(choice_config(chosen["description"])["GROUP_M"])
        assert k.metadata["launch"]["block"] == want, k.name
        assert set(want) == {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"}


@pytest.fixture(scope="module")
def stages_report():
    """sin(x)**2 + cos(x)**2, (x.relu() * 2).sum(1) + 1 and a ``torch._foreach_add_`` of three tensors, captured on an
    H200 (torch 2.11: tests/fixtures/check_gpu_session21.py)."""
    return inductor_lens.load(FIXTURES / "gpu_stages.json.gz")


def test_a_triton_compiles_ops_name_their_lowering_and_where_they_were_merged(stages_report):
    """On the GPU, as on the CPU (tests/capturing/test_stages.py): each op names the lowering function Inductor ran
    (``GraphNode.lowered_by``), a fused node says whether lowering inlined its ops or the scheduler fused them; a
    foreach op's loops, one per tensor, are grouped by the scheduler into one Triton foreach kernel, not fused by
    ``fuse_nodes`` (the CPU runs each as a loop of its own)."""
    sincos, fused, foreach = stages_report.compiles
    post = {n.name: n for n in sincos.graphs["post_grad"].nodes}
    assert [f.function_label for f in post["sin"].lowered_by] == ["make_pointwise.<locals>.inner"]
    (node,) = sincos.fused_nodes
    assert node.merge_text.startswith("5 ops in one loop: Inductor's lowering inlined them") and node.kernel.startswith(
        "triton_poi_"
    )
    (node,) = fused.fused_nodes
    assert node.merge_text.startswith("2 scheduler nodes fused by the scheduler (Scheduler.fuse_nodes)")
    (node,) = foreach.fused_nodes
    assert node.kind == "foreach" and node.kernel.startswith("triton_for_")
    assert "grouped by the scheduler into one foreach kernel (Scheduler.create_foreach_nodes" in node.merge_text
    chain = {n.name: n for n in foreach.graphs["post_grad"].nodes}["_foreach_add"].lowered_by
    assert [f.function_label for f in chain] == [
        "register_foreach_inplace.<locals>.fn",
        "make_foreach_pointwise.<locals>.inner",
    ]


def test_a_triton_compiles_three_paths_share_their_start_and_the_codegen_path_says_where_it_jumps(stages_report):
    """The lowering and fusion paths (recorded once per graph) end at ``GraphLowering.call_function`` and
    ``Scheduler.fuse_nodes`` and share the codegen path's frames down to ``codegen_and_compile``; the codegen path
    names its frames by qualified name and torch path, and notes dynamo's C hop, the hand-off to Inductor and the
    cache-bypass branch the capture takes (torch 2.11's lines: found by function, not line)."""
    for c in stages_report.compiles:
        low, fus, code = c.lowering_stack, c.fusion_stack, c.kernels[0].compiler_stack
        assert low[-1].function_label == "GraphLowering.call_function"
        assert fus[-1].function_label == "Scheduler.fuse_nodes"
        key = [(f.file, f.line) for f in code]
        assert [(f.file, f.line) for f in low[:3]] == key[:3] == [(f.file, f.line) for f in fus[:3]]
        assert any(f.function_label == "_InProcessFxCompile.codegen_and_compile" for f in low)
        assert c.kernels[0].stage_shared == 41 and "They share 41 frames, down to fx_codegen_and_compile" in (
            c.kernels[0].stage_note
        )
        labels = {f.function_label: f for f in code}
        assert labels["_TorchCompileInductorWrapper.__call__"].stage == "inductor"
        assert labels["_TorchCompileInductorWrapper.__call__"].file_label == "torch/__init__.py"
        assert "frame-evaluation callback" in labels["CatchErrorsWrapper.__call__"].note
        assert "cache-bypass branch" in labels["_compile_fx_inner"].note


def test_a_checkpointed_attention_with_dropout_is_recomputed_on_the_gpu_and_its_forward_peak_is_the_measured():
    """Two checkpointed attention blocks with dropout, trained on an H200 (torch 2.11): the backward runs each SDPA
    again as ``graphsafe_run_with_rng_state`` (CUDA's RNG-state op; the CPU's is ``run_with_rng_state``), counted as
    recomputed on its line; the forward's estimated peak is torch.cuda's measured one to 16 bytes."""
    r = inductor_lens.load(FIXTURES / "gpu_checkpoint_attention.json.gz")
    fwd, bwd = r.compiles
    by_line = {x.line: x for x in bwd.memory.recomputed_by_line}
    attention = [x for x in by_line.values() if "_scaled_dot_product_efficient_attention" in x.ops]
    assert len(attention) == 1 and attention[0].count == 2 and "checkpoint(...) wraps" in attention[0].reason
    assert fwd.memory.measured_peak_bytes and abs(fwd.memory.peak_bytes - fwd.memory.measured_peak_bytes) <= 16
