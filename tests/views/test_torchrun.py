"""`inductor-lens torchrun` on CPU (gloo), for real: torch.distributed.run starts two ranks, each captures in
its own process and writes rankN.json, and the launcher combines them into one page.

tests/dist_scripts/ddp_tiny.py is a small DDP model whose rank 1 gets a batch one row longer, so rank 1
recompiles and rank 0 does not. A second run kills rank 1 at start: its report is missing, rank 0's is kept."""

import json
import os
import subprocess
import sys
import time
import types

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
    # DDP's own forward, a frame with no graph of its own, was traced again for the longer batch too: a recompile
    (frame,) = [f for f in r1.empty_frames if f.recompiled]
    assert not [f for f in r0.empty_frames if f.recompiled]
    assert d.message == (
        f"rank 1 recompiled {frame.compile_id} (tensor 'args[0]' size mismatch at index 0. expected 16, actual 17), "
        f"{recompiled} (tensor 'x' size mismatch at index 0. expected 16, actual 17); rank 0 did not"
    )
    assert d.ranks == [1]
    # object ids in guards differ between processes; that is not a divergence
    assert {d.aspect for d in job.divergence} == {"compiles", "recompiles"}
    assert d.message in proc.stderr  # the launcher prints the summary


def test_the_ranks_times_are_aligned_on_their_wall_clock_starts(ddp_job):
    """nu20 O-d: each rank's times counted from its own capture start, so the first compiled call, which follows
    DDP's synchronising broadcast on both ranks, read seconds apart. Each report records its start's wall-clock time;
    the job's page shifts the ranks onto the earliest start, where that call is at about the same time on both."""
    tmp, _ = ddp_job
    job = inductor_lens.load_job(tmp / "ranks")
    starts = {r: job.report(r).start_wall_us for r in (0, 1)}
    assert all(abs(s / 1e6 - time.time()) < 3600 for s in starts.values()), starts  # the epoch, this run
    offsets, text = job.clock
    assert offsets == {r: round(s - min(starts.values()), 1) for r, s in starts.items()}
    assert text.startswith("Times on every rank count from the job's first capture start")
    shown = {e["rank"]: e["report"] for e in job.to_dict()["job"]["ranks"]}
    first = {r: shown[r]["compiles"][0]["trigger"]["time_us"] for r in (0, 1)}
    # each rank's times moved by its start's offset, exactly: on the job's clock the same call after the broadcast is
    # where the wall clock put it on each rank (how far apart the ranks then ran is the machine's load, not asserted:
    # a loaded 2-core machine ran one rank's call 2.4 s after the other's)
    own = {r: job.report(r).compiles[0].trigger.time_us for r in (0, 1)}
    assert first == {r: pytest.approx(own[r] + offsets[r], abs=0.2) for r in (0, 1)}, (first, own, offsets)
    assert any(offsets.values()), offsets  # two processes never start in the same microsecond


def test_one_page_for_the_job(ddp_job):
    tmp, _ = ddp_job
    page = (tmp / "job.html").read_text()
    assert page.count("<script") == 4 and "2 of 2 rank report(s)" in page


def _launch_in_process(out, monkeypatch, *script_args, timeout, ready_dir=None):
    """``inductor-lens torchrun`` through ``cli.main`` in the test's own process (one torch process fewer than
    the console script, whose real process ``ddp_job`` runs): the launcher still starts torch.distributed.run
    and its ranks as real processes. With ``ready_dir``, the launcher's --timeout clock starts when both ranks
    have touched their file there (the script's ``--ready-dir``) instead of at the launch: the ranks take
    seconds to start, more on a loaded machine, and a clock that ran meanwhile could stop them before they
    were where the test wants them. The wait itself, its TimeoutExpired and the stop that follows are the
    launcher's own."""
    from inductor_lens.views import cli
    from inductor_lens.views import torchrun as launcher

    if ready_dir is not None:
        script_args = (*script_args, "--ready-dir", str(ready_dir))

        class ClockFromReady(subprocess.Popen):
            def wait(self, timeout=None):
                give_up = time.monotonic() + 600  # ranks that never get there: the timeout runs, the test fails
                while timeout is not None and len(os.listdir(ready_dir)) < 2 and self.poll() is None:
                    if time.monotonic() > give_up:
                        break
                    time.sleep(0.2)
                return super().wait(timeout)

        monkeypatch.setattr(
            launcher, "subprocess", types.SimpleNamespace(**{**vars(subprocess), "Popen": ClockFromReady})
        )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.chdir(out)
    args = ["torchrun", "-o", str(out / "job.html"), "--json-dir", str(out / "ranks"), "--timeout", str(timeout)]
    return cli.main([*args, "--standalone", "--nproc-per-node", "2", SCRIPT, *script_args])


def test_a_crashed_rank_is_missing_and_the_other_report_is_kept(tmp_path, monkeypatch):
    code = _launch_in_process(tmp_path, monkeypatch, "--crash-rank", "1", timeout=300)
    assert code != 0
    assert (tmp_path / "ranks" / "rank0.json").exists() and not (tmp_path / "ranks" / "rank1.json").exists()
    job = inductor_lens.load_job(tmp_path / "ranks")
    assert job.missing == [1] and job.report(0).rank == 0
    assert job.ranks[1].missing == "exited with code 3"  # from torchrun's failure summary
    assert any(d.aspect == "missing" and d.ranks == [1] for d in job.divergence)
    assert (tmp_path / "job.html").exists() and "missing: rank 1" in (tmp_path / "job.html").read_text()


def test_a_hung_rank_and_the_rank_waiting_for_it_both_write_their_reports(tmp_path, monkeypatch, capfd):
    """Rank 1 sleeps; rank 0 waits for it inside a gloo collective (in C++, where no Python signal handler
    runs). --timeout stops the job: rank 1 unwinds on SIGTERM, rank 0's watcher thread writes for it."""
    # both ranks hang before any compile; the --timeout clock starts once both are there (_launch_in_process), so 2 s
    # is no race: rank 0 enters the collective a few ms after its file (5 s here idled a worker for 3 s more; it passed
    # at 2 s with three busy loops on the 2 cores)
    ready = tmp_path / "ready"
    ready.mkdir()
    code = _launch_in_process(tmp_path, monkeypatch, "--hang-rank", "1", timeout=2, ready_dir=ready)
    out, err = capfd.readouterr()
    assert code == 124, err[-2000:]
    # both ranks were where this test wants them before the timeout
    assert sorted(os.listdir(ready)) == ["rank0", "rank1"]
    assert "rank 1 hangs" in out and "rank 0 waits in a collective" in out, out[-2000:]
    job = inductor_lens.load_job(tmp_path / "ranks")
    assert sorted(job.reports) == [0, 1] and job.missing == []
    for rank in (0, 1):
        notes = " ".join(str(d) for d in job.report(rank).diagnostics)
        assert f"rank {rank} was stopped by signal 15" in notes
    assert "stopped after --timeout 2s" in " ".join(job.notes)
