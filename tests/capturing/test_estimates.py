"""Inductor's estimated run time of a node, in the unit it claims (ms), on every torch (nu21 D2).

torch 2.11's ``get_device_tflops`` gave the H200's peaks in PFLOP/s (float32 0.0335): the FLOP branch of its
estimate, ``max(flops / (peak * 1e12) * 1e9, bytes / GB/s) / 1e6``, came out 1000x too long for every matmul (the
recorded GPT-2 step's 349 us ``addmm`` "estimated at 433 ms"). No GPU here: the scheduler node and torch's peak
functions are stand-ins with the numbers of that recording; the formula is torch's own."""

import pytest

torch = pytest.importorskip("torch")

from inductor_lens.capturing import torchread  # noqa: E402

FLOPS = 14_495_514_624  # the recorded addmm (tests/fixtures/gpu_perf_gpt2_training.json, op11): 2 x 4096 x 768 x 2304
MOVED = 57_418_752  # its bytes read and written there


class _Node:
    """What ``estimated_ms`` reads of a scheduler node: Inductor's cached FLOP count, the dtype, the bytes."""

    def __init__(self, flops):
        if flops is not None:
            object.__setattr__(self, "__estimate_flops_cache", flops)

    def get_nodes(self):
        return [self]

    def get_outputs(self):
        return [self]

    @property
    def node(self):
        return self

    def get_dtype(self):
        return torch.float32

    def get_read_write_buffers_sizes(self):
        return MOVED


def _peaks(monkeypatch, tflops, gbps=4800.0):
    import torch._inductor.utils as u

    monkeypatch.setattr(u, "get_device_tflops", lambda dtype: tflops)
    monkeypatch.setattr(u, "get_gpu_dram_gbps", lambda: gbps)


def _as_torch(flops, tflops, gbps=4800.0):
    return max(flops / (tflops * 1e12) * 1e9, MOVED / gbps) / 1e6


def test_a_peak_given_in_pflops_makes_the_matmul_estimate_1000x_too_long_and_it_is_worked_out_again(monkeypatch):
    _peaks(monkeypatch, 0.03345)  # torch 2.11: PFLOP/s
    said = _as_torch(FLOPS, 0.03345)
    assert said == pytest.approx(433.28, rel=1e-3)  # ms: what the recorded report held (433,295.868 us)
    got = torchread.estimated_ms(_Node(FLOPS), said)
    assert got == pytest.approx(FLOPS / 33.45e12 * 1e3, rel=1e-9)  # 0.433 ms: the peak read in TFLOP/s
    assert got == pytest.approx(said / 1000, rel=1e-9)


def test_an_estimate_in_the_claimed_unit_or_of_another_path_is_kept(monkeypatch):
    _peaks(monkeypatch, 33.45)  # torch 2.13 on the same GPU: TFLOP/s, the estimate right as it is
    ok = _as_torch(FLOPS, 33.45)
    assert torchread.estimated_ms(_Node(FLOPS), ok) == ok
    _peaks(monkeypatch, 0.03345)
    assert torchread.estimated_ms(_Node(None), 0.0073) == 0.0073  # no FLOP count: the bytes branch, in ms
    assert torchread.estimated_ms(_Node(FLOPS), 0.29) == 0.29  # not the formula's value: a benchmarked estimate
    # a node whose bytes dominate even with the wrong peak: the same value either way
    small = 1000.0
    said = _as_torch(small, 0.03345)
    assert said == pytest.approx(MOVED / 4800.0 / 1e6)
    assert torchread.estimated_ms(_Node(small), said) == pytest.approx(said)


@pytest.mark.compile
def test_reading_a_gpu_estimate_leaves_torchs_counters_as_a_plain_compile_leaves_them(monkeypatch):
    """A GPU's runtime estimate runs Inductor's ``estimate_flops``, which adds to ``counters["inductor"]["flop_count"]``
    and caches on the node; a plain compile runs it only for metrics logs, so a capture added a counter the same compile
    without the lens does not have (the nineteenth session's probe on the H200). No GPU here: torch's FLOP branch of
    ``_get_estimated_runtime`` runs without its device check (the peak in PFLOP/s, as torch 2.11 gives it), under its
    own ``cache_on_self``; the FLOP count and the counter are torch's. The estimate is still read, in its unit."""
    import torch._inductor.scheduler as S
    import torch._inductor.utils as u
    from torch._dynamo.utils import counters

    import inductor_lens

    def flop_branch(self):
        flops, moved = self.estimate_flops(), self.get_read_write_buffers_sizes() or 0
        return max((flops or 0) / (0.03345e12) * 1e9, moved / 4800.0) / 1e6

    monkeypatch.setattr(S.BaseSchedulerNode, "_get_estimated_runtime", u.cache_on_self(flop_branch))
    _peaks(monkeypatch, 0.03345)
    m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 8))
    x = torch.randn(64, 256)
    seen = {}
    for mode in ("plain", "lens"):
        torch._dynamo.reset()
        counters.clear()
        with (
            torch._inductor.config.patch(fx_graph_cache=False),
            torch._functorch.config.patch(enable_autograd_cache=False),
        ):
            if mode == "lens":
                with inductor_lens.capture() as cap:
                    torch.compile(m)(x)
            else:
                torch.compile(m)(x)
        seen[mode] = {k: dict(v) for k, v in counters.items()}
    torch._dynamo.reset()
    assert "flop_count" not in seen["plain"]["inductor"]
    assert seen["lens"] == seen["plain"]
    (c,) = cap.report.compiles
    first = next(n for n in c.fused_nodes if n.kind == "extern")
    # the first addmm: 2 x 64 x 256 x 512 FLOPs at 33.45 TFLOP/s (its bytes take less): torch said 1000x that
    assert first.estimated_runtime_us == pytest.approx(2 * 64 * 256 * 512 / 33.45e12 * 1e6, rel=1e-3)
