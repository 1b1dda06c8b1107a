"""Distributed jobs without torch: combining rank reports, the divergence summary, missing ranks, the
combined page (in Chromium), and `inductor-lens show DIR`. Rank reports are built by hand here; the real
torchrun run is tests/views/test_torchrun.py."""

import dataclasses
import json

import pytest

import inductor_lens
from inductor_lens.report.model import Compile, Frame, Graph, GraphBreak, GraphNode, Kernel, Report, Trigger
from inductor_lens.views.cli import main
from tests._synthetic_report import HOSTILE


def _compile(cid, kind="first_call", reason="", guards="G", kernels=("cpp_fused_relu_0",), ops=("aten.relu.default",)):
    nodes = [GraphNode(name="x", op="placeholder", target="x", shape=[16, 8])]
    nodes += [
        GraphNode(name=f"n{i}", op="call_function", target=t, inputs=["x"], shape=[16, 8]) for i, t in enumerate(ops)
    ]
    return Compile(
        id=f"{cid} inference",
        compile_id=cid,
        graph_kind="inference",
        trigger=Trigger(kind=kind, reason=reason),
        frame="forward",
        graphs={"post_grad": Graph(nodes=nodes)},
        guards=guards,
        kernels=[Kernel(name=k, language="cpp", source=f"// {k}") for k in kernels],
    )


def _rank(rank, world=2, compiles=None, breaks=()):
    return Report(
        torch_version="2.13.0",
        device="cpu",
        rank=rank,
        world_size=world,
        compiles=compiles if compiles is not None else [_compile("0/0")],
        graph_breaks=[GraphBreak(reason=b, user_stack=[Frame("t.py", 3, "f")]) for b in breaks],
    )


def _write(tmp_path, reports):
    for r in reports:
        r.save_json(tmp_path / f"rank{r.rank}.json")
    return tmp_path


def test_ranks_that_agree_have_no_divergence(tmp_path):
    job = inductor_lens.load_job(_write(tmp_path, [_rank(0), _rank(1)]))
    assert sorted(job.reports) == [0, 1] and job.missing == [] and job.world_size == 2
    assert job.divergence == []
    assert "ranks agree" in job.summary()


def test_a_recompile_on_one_rank_is_named_with_its_reason(tmp_path):
    reason = "recompile of forward: 0/0: tensor 'x' size mismatch at index 0. expected 16, actual 17"
    r1 = _rank(1, compiles=[_compile("0/0"), _compile("0/1", kind="recompile", reason=reason)])
    job = inductor_lens.load_job([_write(tmp_path, [_rank(0), r1]) / "rank0.json", tmp_path / "rank1.json"])
    msgs = {d.aspect: d.message for d in job.divergence}
    assert msgs["recompiles"] == (
        "rank 1 recompiled 0/1 (tensor 'x' size mismatch at index 0. expected 16, actual 17); rank 0 did not"
    )
    assert msgs["compiles"] == "compiles differ: rank 0: only the common compiles; rank 1: 0/1 inference"


def test_graphs_kernels_guards_breaks_and_collectives_that_differ_are_named():
    a = _compile(
        "0/0",
        guards="___check_obj_id(G['torch'], 140046095309760)\nGuard latency = 151.85 us",
        ops=("aten.relu.default", "_c10d_functional.all_reduce.default", "_c10d_functional.wait_tensor.default"),
    )
    b = _compile(
        "0/0",
        guards="___check_obj_id(G['torch'], 140606705359808)\nGuard latency = 149.60 us",
        ops=(
            "aten.relu.default",
            "_c10d_functional.all_gather_into_tensor.default",
            "_c10d_functional.wait_tensor.default",
        ),
    )
    c = dataclasses.replace(
        b, kernels=[Kernel(name="cpp_fused_relu_1", language="cpp", source="//")], guards="L['x'].size()[0] == 17"
    )
    job = inductor_lens.Job(
        ranks=[
            inductor_lens.analysis.job.RankEntry(r, rep)
            for r, rep in enumerate([_rank(0, 3, [a]), _rank(1, 3, [b], breaks=["print"]), _rank(2, 3, [c])])
        ],
        world_size=3,
    )
    msgs = {d.aspect: d.message for d in job.divergence}
    # object ids and guard latency differ between processes: not a divergence; the guard of rank 2 is
    assert msgs["guards"] == "the guards of 0/0 differ between ranks 0, 1 and rank 2"
    assert msgs["graphs"].startswith("the post-grad graph of 0/0 inference differs: ranks 1, 2 (4 nodes) vs rank 0")
    assert "rank 2 (cpp_fused_relu_1)" in msgs["kernels"]
    assert (
        msgs["graph_breaks"] == "graph breaks differ: ranks 0, 2: only the common graph breaks; rank 1: print at t.py:3"
    )
    assert "all_reduce" in msgs["collectives"] and "all_gather_into_tensor" in msgs["collectives"]


def test_a_missing_rank_is_named_and_the_others_kept(tmp_path):
    _write(tmp_path, [_rank(0, 3), _rank(2, 3)])
    (tmp_path / "job.json").write_text(
        json.dumps({"world_size": 3, "failures": {"1": "exit code 3"}, "note": "torchrun exited with status 1"})
    )
    job = inductor_lens.load_job(tmp_path)
    assert job.missing == [1] and sorted(job.reports) == [0, 2]
    (d,) = [d for d in job.divergence if d.aspect == "missing"]
    assert d.message == "rank 1 wrote no report (exit code 3)"
    assert "torchrun exited with status 1" in job.notes
    with pytest.raises(KeyError, match="rank 1 has no report: exit code 3"):
        job.report(1)


def test_an_unreadable_rank_report_is_a_missing_rank(tmp_path):
    _write(tmp_path, [_rank(0)])
    (tmp_path / "rank1.json").write_text("{ half a report")
    job = inductor_lens.load_job(tmp_path)
    assert job.missing == [1] and "unreadable" in job.ranks[1].missing


def test_load_job_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="no rank\\*.json reports"):
        inductor_lens.load_job(tmp_path)
    with pytest.raises(FileNotFoundError, match="no report at"):
        inductor_lens.load_job([tmp_path / "rank0.json"])


def test_show_dir_and_show_files_write_one_job_page(tmp_path, capsys):
    _write(tmp_path, [_rank(0), _rank(1, compiles=[_compile("0/0"), _compile("0/1", "recompile", "x")])])
    assert main(["show", str(tmp_path), "-o", str(tmp_path / "a.html")]) == 0
    assert (
        main(["show", str(tmp_path / "rank0.json"), str(tmp_path / "rank1.json"), "-o", str(tmp_path / "b.html")]) == 0
    )
    assert "rank 1 recompiled 0/1 (x); rank 0 did not" in capsys.readouterr().err
    for name in ("a.html", "b.html"):
        assert (tmp_path / name).read_text().count("<script") == 4


def test_job_page_has_a_rank_selector_and_the_divergence(tmp_path, offline_page):
    """The combined page in Chromium: the divergence summary as text (escaped), a selector with the missing
    rank disabled, and switching ranks switches the lens."""
    r1 = _rank(1, 3, compiles=[_compile("0/0"), _compile("0/1", "recompile", f"size {HOSTILE}")])
    _write(tmp_path, [_rank(0, 3), r1])
    job = inductor_lens.load_job(tmp_path, world_size=3)
    job.save_html(tmp_path / "job.html")
    page = offline_page
    page.goto((tmp_path / "job.html").as_uri())
    page.wait_for_selector('[data-role="divergence"]', timeout=60000)
    page.wait_for_selector(".il-compile", timeout=60000)
    text = page.locator('[data-role="divergence"]').inner_text()
    assert f"rank 1 recompiled 0/1 (size {HOSTILE}); rank 0 did not" in text
    assert "rank 2 wrote no report" in text
    # what the times count from (Job.clock): these reports recorded no wall-clock start, so each rank its own
    clock = page.locator('[data-role="job-clock"]').inner_text()
    assert clock == job.clock[1] and clock.startswith("Times count from each rank's own capture start")
    options = page.locator('[data-role="rank-select"] option')
    assert options.all_inner_texts() == ["rank 0 · 1 compile", "rank 1 · 2 compiles · differs", "rank 2 · missing"]
    assert {d.aspect: d.ranks for d in job.divergence} == {"missing": [2], "compiles": [1], "recompiles": [1]}
    assert options.nth(2).get_attribute("disabled") is not None
    assert page.locator(".il-compile option").count() == 1
    page.select_option('[data-role="rank-select"]', "1")
    page.wait_for_function("document.querySelectorAll('.il-compile option').length === 2")
    assert page.locator("#il-app").get_attribute("data-rank") == "1"
    assert page.evaluate("window.inductorJob.rank()") == 1
    # the lens of the rank fills the window below the rank bar and the summary, as a single report's page does
    size = page.viewport_size
    lens = page.locator(".il-rank-lens .il-root").bounding_box()
    assert page.evaluate("document.documentElement.scrollHeight") == size["height"]
    assert lens["height"] >= 360 and abs(lens["y"] + lens["height"] - (size["height"] - 16)) <= 2, (lens, size)
    assert page.watch.errors == [] and page.watch.requests == [] and page.watch.dialogs == []


def test_torchrun_command_line_is_split_between_us_torchrun_and_the_script():
    from inductor_lens.views.torchrun import TorchrunUsage, expected_world_size, split_args

    ours, torchrun, script, args = split_args(
        ["-o", "j.html", "--nproc-per-node", "2", "--standalone", "--json-dir=d", "train.py", "-o", "x", "--standalone"]
    )
    assert (ours["output"], ours["json_dir"]) == ("j.html", "d")
    assert torchrun == ["--nproc-per-node", "2", "--standalone"]
    assert (script, args) == ("train.py", ["-o", "x", "--standalone"])  # after SCRIPT: the script's
    assert expected_world_size(torchrun, script) == 2
    assert expected_world_size(["--nnodes", "1:2", "--nproc-per-node", "2"], script) is None
    with pytest.raises(TorchrunUsage, match="-m is not supported"):
        split_args(["-m", "pkg.train"])
    with pytest.raises(TorchrunUsage, match="no SCRIPT given"):
        split_args(["--nproc-per-node", "2"])
    with pytest.raises(TorchrunUsage, match="unknown option '--bogus'"):
        split_args(["--bogus", "train.py"])
    assert main(["torchrun", "--nproc-per-node", "2", "missing.py"]) == 2


def test_torchrun_failure_summary_names_each_failed_rank():
    from inductor_lens.views.torchrun import failures_of

    text = """Failures:
[1]:
  time      : 2026-11-30_17:25:40
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : 143 (pid: 10435)
Root Cause (first observed failure):
[0]:
  rank      : 1 (local_rank: 1)
  exitcode  : 3 (pid: 10436)
  rank      : 2 (local_rank: 0)
  exitcode  : -9 (pid: 7)"""
    got = failures_of(text)
    assert got == {"0": "stopped (exit code 143)", "1": "exited with code 3", "2": "killed by SIGKILL"}


def _timed(rank, start_wall_us, trigger_us):
    """A rank report whose first compile ran ``trigger_us`` into its capture, which started at ``start_wall_us``."""
    from inductor_lens.report.model import CompileCall, Phase

    c = dataclasses.replace(
        _compile("0/0"),
        trigger=Trigger(
            kind="first_call", reason="first call of f()", time_us=trigger_us, inductor_start_us=trigger_us + 10.0
        ),
        phases=[Phase("inductor", trigger_us + 10.0, 5.0)],
    )
    call = CompileCall(target="f", backend="inductor", time_us=1000.0)
    return dataclasses.replace(_rank(rank, compiles=[c]), compile_calls=[call], start_wall_us=start_wall_us)


def test_the_ranks_times_count_from_one_clock_on_the_job_page(tmp_path):
    """nu20 O-d: each rank counted from its own capture start, so one moment read 6.70 s on rank 0 and 2.45 s on
    rank 1. The page shifts each rank by its start's wall-clock time (Report.start_wall_us) from the earliest."""
    t0 = 1_764_919_250_000_000.0
    r0 = _timed(0, t0, 6_700_000.0)
    r1 = _timed(1, t0 + 4_250_000.0, 2_450_000.0)  # started 4.25 s later: the same moment, 6.70 s after rank 0's
    job = inductor_lens.load_job(_write(tmp_path, [r0, r1]))
    assert job.report(1).start_wall_us == t0 + 4_250_000.0  # written and read back
    offsets, text = job.clock
    assert offsets == {0: 0.0, 1: 4_250_000.0}
    assert text.startswith("Times on every rank count from the job's first capture start (rank 0's, at ")
    assert "rank 1 4.25 s later" in text
    page = job.to_dict()["job"]
    assert page["clock"] == text
    shown = {e["rank"]: e["report"] for e in page["ranks"]}
    assert shown[0]["compiles"][0]["trigger"]["time_us"] == shown[1]["compiles"][0]["trigger"]["time_us"] == 6_700_000.0
    assert shown[1]["compiles"][0]["phases"][0]["start_us"] == 6_700_010.0
    assert shown[1]["compile_calls"][0]["time_us"] == 4_251_000.0
    assert shown[1]["compiles"][0]["trigger"]["inductor_start_us"] == 6_700_010.0  # Inductor's call too
    assert "dynamo began at 6.70 s" in shown[1]["when"]  # the derived text is derived again
    assert shown[1]["start_wall_us"] == t0  # what its times now count from
    assert job.report(1).compiles[0].trigger.time_us == 2_450_000.0  # the rank's own report is left as it was


def test_ranks_without_a_wall_clock_start_are_not_aligned_and_the_page_says_so(tmp_path):
    """Reports made before start_wall_us: each rank keeps its own clock, and the page says they cannot be compared."""
    job = inductor_lens.load_job(_write(tmp_path, [_timed(0, None, 6_700_000.0), _timed(1, 1.0e15, 2_450_000.0)]))
    offsets, text = job.clock
    assert offsets == {}
    assert "rank 0 recorded no wall-clock start" in text and "cannot be compared" in text
    shown = {e["rank"]: e["report"] for e in job.to_dict()["job"]["ranks"]}
    assert shown[1]["compiles"][0]["trigger"]["time_us"] == 2_450_000.0
