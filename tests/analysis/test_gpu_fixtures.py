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
