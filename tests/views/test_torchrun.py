"""`inductor-lens torchrun` on CPU (gloo), for real: torch.distributed.run starts two ranks, each captures in
its own process and writes rankN.json, and the launcher combines them into one page.

tests/dist_scripts/ddp_tiny.py is a small DDP model whose rank 1 gets a batch one row longer, so rank 1
recompiles and rank 0 does not. A second run kills rank 1 at start: its report is missing, rank 0's is kept."""

import json
import os
import subprocess
import sys

import pytest

import inductor_lens

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tests", "dist_scripts", "ddp_tiny.py")


def _torchrun(tmp_path, *script_args, extra=()):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]), OMP_NUM_THREADS="1")
    cmd = [
        sys.executable,
        "-m",
        "inductor_lens",
        "torchrun",
        "-o",
        str(tmp_path / "job.html"),
        "--json-dir",
        str(tmp_path / "ranks"),
        *extra,
        "--standalone",
        "--nproc-per-node",
        "2",
        SCRIPT,
        *script_args,
    ]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)


@pytest.fixture(scope="module")
def ddp_job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ddp")
    proc = _torchrun(tmp)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return tmp, proc


def test_two_rank_reports_with_rank_and_world_size(ddp_job):
    tmp, _ = ddp_job
    for rank in (0, 1):
        data = json.loads((tmp / "ranks" / f"rank{rank}.json").read_text())
        assert (data["rank"], data["world_size"], data["origin"]) == (rank, 2, "capture")
    assert json.loads((tmp / "ranks" / "job.json").read_text())["world_size"] == 2


def test_the_recompile_of_rank_1_is_named(ddp_job):
    tmp, proc = ddp_job
    job = inductor_lens.load_job(tmp / "ranks")
    r0, r1 = job.report(0), job.report(1)
    assert [c.trigger.kind for c in r0.compiles] == ["first_call"]
    assert [c.trigger.kind for c in r1.compiles] == ["first_call", "recompile"]
    (d,) = [d for d in job.divergence if d.aspect == "recompiles"]
    recompiled = r1.compiles[1].compile_id
    assert d.message == (
        f"rank 1 recompiled {recompiled} (tensor 'x' size mismatch at index 0. expected 16, actual 17); rank 0 did not"
    )
    assert d.ranks == [1]
    # object ids in guards differ between processes; that is not a divergence
    assert {d.aspect for d in job.divergence} == {"compiles", "recompiles"}
    assert d.message in proc.stderr  # the launcher prints the summary


def test_one_page_for_the_job(ddp_job):
    tmp, _ = ddp_job
    page = (tmp / "job.html").read_text()
    assert page.count("<script") == 4 and "2 of 2 rank report(s)" in page


def test_a_crashed_rank_is_missing_and_the_other_report_is_kept(tmp_path):
    proc = _torchrun(tmp_path, "--crash-rank", "1", extra=("--timeout", "300"))
    assert proc.returncode != 0
    assert (tmp_path / "ranks" / "rank0.json").exists() and not (tmp_path / "ranks" / "rank1.json").exists()
    job = inductor_lens.load_job(tmp_path / "ranks")
    assert job.missing == [1] and job.report(0).rank == 0
    assert job.ranks[1].missing == "exited with code 3"  # from torchrun's failure summary
    assert any(d.aspect == "missing" and d.ranks == [1] for d in job.divergence)
    assert (tmp_path / "job.html").exists() and "missing: rank 1" in (tmp_path / "job.html").read_text()


def test_a_hung_rank_and_the_rank_waiting_for_it_both_write_their_reports(tmp_path):
    """Rank 1 sleeps; rank 0 waits for it inside a gloo collective (in C++, where no Python signal handler
    runs). --timeout stops the job: rank 1 unwinds on SIGTERM, rank 0's watcher thread writes for it."""
    # both ranks hang before any compile, ~6 s in on an idle machine; a loaded machine may not get them there
    # before a short timeout (their markers are then missing): the job runs again with a long one
    for timeout in (12, 45):
        out = tmp_path / f"t{timeout}"
        out.mkdir()
        proc = _torchrun(out, "--hang-rank", "1", extra=("--timeout", str(timeout)))
        assert proc.returncode == 124, proc.stderr[-2000:]
        if "rank 1 hangs" in proc.stdout and "rank 0 waits in a collective" in proc.stdout:
            break
    # both ranks were where this test wants them before the timeout
    assert "rank 1 hangs" in proc.stdout and "rank 0 waits in a collective" in proc.stdout, proc.stdout[-2000:]
    job = inductor_lens.load_job(out / "ranks")
    assert sorted(job.reports) == [0, 1] and job.missing == []
    for rank in (0, 1):
        notes = " ".join(str(d) for d in job.report(rank).diagnostics)
        assert f"rank {rank} was stopped by signal 15" in notes
    assert f"stopped after --timeout {timeout}s" in " ".join(job.notes)
