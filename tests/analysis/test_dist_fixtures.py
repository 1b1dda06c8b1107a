"""Recorded GPU jobs: DDP and FSDP2 training steps on 2 H200s over NCCL, captured with `inductor-lens torchrun`
(tests/fixtures/make_dist_fixtures.sh made them; tests/fixtures/dist/summary.txt says how and when).
Skipped, with the command to make them, until the fixtures are committed."""

import pathlib

import pytest

import inductor_lens

DIST = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "dist"
MAKE = "OUT=/tmp/out bash tests/fixtures/make_dist_fixtures.sh on a host with 2 GPUs, then copy /tmp/out/dist to tests/fixtures/dist"


def _job(name):
    d = DIST / name
    if not (d / "rank0.json").exists():
        pytest.skip(f"no recorded {name} job in {d} (make it: {MAKE})")
    return inductor_lens.load_job(d)


def test_ddp_job_on_two_gpus_names_the_recompile_of_rank_1():
    job = _job("ddp")
    assert sorted(job.reports) == [0, 1] and job.missing == []
    for rank, r in job.reports.items():
        assert r.rank == rank and r.world_size == 2 and "cuda" in r.device
        assert any(k.language == "triton" for k in r.kernels)
    (d,) = [d for d in job.divergence if d.aspect == "recompiles"]
    assert d.ranks == [1] and d.message.startswith("rank 1 recompiled") and d.message.endswith("rank 0 did not")
    assert "expected 64, actual 65" in d.message
    assert (DIST / "ddp-job.html").exists()


def test_fsdp2_job_on_two_gpus_agrees_across_ranks():
    job = _job("fsdp2")
    assert sorted(job.reports) == [0, 1]
    for r in job.reports.values():
        assert r.compiles and any(c.graph_kind == "backward" for c in r.compiles)
        assert any(k.language == "triton" for k in r.kernels)
    assert [d.aspect for d in job.divergence if d.aspect in ("compiles", "recompiles", "kernels", "graphs")] == []
    assert (DIST / "fsdp2-job.html").exists()


def test_ddp_trace_logs_open_as_the_same_job():
    """The DDP run also wrote TORCH_TRACE logs (one per rank): imported, every kernel of every rank has exactly
    the source the in-process capture recorded, and the same recompile diverges."""
    captured = _job("ddp")
    trace = DIST / "ddp-trace"
    if not trace.is_dir():
        pytest.skip(f"no TORCH_TRACE logs in {trace} (make them: {MAKE})")
    imported = inductor_lens.load_trace(trace)
    assert sorted(imported.reports) == [0, 1]
    for rank in (0, 1):
        # DDP splits a frame into several graphs under one compile id, each with its forward and its backward:
        # the log names each graph's kind from the AOT graph logged before it, as the capture does, so the
        # reports agree graph by graph (ids "4/0 forward #2" included), in the same order
        want = [(c.id, [(k.name, k.source) for k in c.kernels]) for c in captured.report(rank).compiles]
        got = [(c.id, [(k.name, k.source) for k in c.kernels]) for c in imported.report(rank).compiles]
        assert [i for i, _ in got] == [i for i, _ in want], rank
        assert got == want, rank
        assert any(i.endswith("forward #2") for i, _ in want)
        # torch 2.11 logs no torch_version record: the version of its compilation metrics, as the capture has it
        assert imported.report(rank).torch_version == captured.report(rank).torch_version == "2.11.0"
    assert any(d.aspect == "recompiles" and d.ranks == [1] for d in imported.divergence)
