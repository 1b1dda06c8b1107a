"""Typed diagnostics (issue 11 section 1): ``Diagnostic{code, message, detail}``, consumers switch on the code."""

import dataclasses
import json

import inductor_lens
from inductor_lens.report.model import DIAGNOSTIC_CODES, Diagnostic, Report, load


def test_a_version_1_string_diagnostic_loads_as_code_legacy():
    data = Report(torch_version="2.13", device="cpu").to_dict()
    data["schema_version"] = 1
    data["diagnostics"] = ["capture: something old"]
    report = load(json.dumps(data))
    assert report.diagnostics == [Diagnostic(code="legacy", message="capture: something old")]
    assert "capture: something old" in report.summary()


def test_typed_diagnostics_round_trip_through_json():
    d = Diagnostic(code="recompile_limit", message="hit it", detail="Limit type: recompile_limit")
    report = Report(torch_version="2.13", device="cpu", diagnostics=[d])
    assert json.loads(report.to_json())["diagnostics"] == [
        {"code": "recompile_limit", "message": "hit it", "detail": "Limit type: recompile_limit"}
    ]
    assert load(report.to_json()) == report


def test_every_code_the_package_emits_is_documented():
    import pathlib
    import re

    root = pathlib.Path(inductor_lens.__file__).parent
    emitted = set()
    for path in root.rglob("*.py"):
        text = path.read_text()
        emitted |= set(re.findall(r'Diagnostic\(\s*"(\w+)"', text))
        emitted |= set(re.findall(r'\.diag\(\s*"(\w+)"', text))
    assert emitted and emitted <= set(DIAGNOSTIC_CODES), emitted - set(DIAGNOSTIC_CODES)
    doc = (root.parent / "docs" / "report-schema.md").read_text()
    assert all(f"`{code}`" in doc for code in DIAGNOSTIC_CODES)


def test_an_unreadable_trace_record_is_counted_once_per_kind_and_reported():
    from inductor_lens.capturing.artifacts import wanted
    from inductor_lens.capturing.build import build_report
    from inductor_lens.capturing.raw import Raw

    bad = (
        {"artifact": {"name": "triton_kernel_info", "encoding": "json"}, "frame_id": 0, "frame_compile_id": 0},
        "{not json",
    )
    ignored = ({"artifact": {"name": "fx_graph_runnable", "encoding": "string"}, "frame_id": 0}, "x")
    assert wanted(bad[0]) and not wanted(ignored[0])
    raw = Raw(t0_us=0.0, trace=[bad, bad, ignored])
    report = build_report(raw, "2.13")
    failed = [d for d in report.diagnostics if d.code == "hook_failed"]
    assert len(failed) == 1 and "2 structured-trace record(s)" in failed[0].message
    assert "triton_kernel_info" in failed[0].message


def test_a_fullgraph_failure_is_said_where_the_totals_say_the_graph_breaks():
    """A ``fullgraph=True`` compile that failed at a graph break records no break (dynamo raised it: the
    ``compile_raised`` diagnostic): the totals said "0 graph break(s)", read as "nothing broke". Each place that
    writes them (the summary, the repr, the page's header from the report and from its plain data, a job's rank
    line, why nothing compiled) says the failed frame instead, by one rule."""
    from inductor_lens.analysis.job import Job, RankEntry
    from inductor_lens.report.model import CompileCall, GraphBreak
    from inductor_lens.report.outcome import why_nothing_compiled
    from inductor_lens.views.html import facts_of, to_html

    raised = Diagnostic(code="compile_raised", message="compile 0/0: dynamo could not compile f() and raised")
    failed = Report(torch_version="2.13", device="cpu", diagnostics=[raised])
    said = "1 frame(s) dynamo could not compile (it raised to your code)"
    head = to_html(failed)
    head = head[: head.index("<main")]
    job = Job(ranks=[RankEntry(0, failed)], world_size=1)
    for text in (failed.summary().splitlines()[0], repr(failed), head, job.summary()):
        assert said in text and "0 graph break" not in text, text
    assert facts_of(failed.to_dict())["codes"] == ["compile_raised"]
    # beside recorded breaks, both; without a failed frame, the count alone
    broke = Report(torch_version="2.13", device="cpu", graph_breaks=[GraphBreak(reason="print")], diagnostics=[raised])
    assert f"1 graph break(s), {said}" in broke.summary()
    plain = Report(torch_version="2.13", device="cpu", graph_breaks=[GraphBreak(reason="print")])
    assert "1 graph break(s); torch" in plain.summary() and "1 graph break(s), torch" in repr(plain)
    assert "dynamo could not compile" not in to_html(plain)[: to_html(plain).index("<main")]
    calls = [CompileCall(target="f", backend="inductor")]
    assert "(every frame broke or fell back to eager; 1 graph break(s))" in why_nothing_compiled(
        Report(torch_version="2.13", device="cpu", graph_breaks=[GraphBreak(reason="print")], compile_calls=calls)
    )


def test_a_break_met_in_two_frames_is_one_break_and_the_totals_give_torchs_count_too():
    """A print inside ``inner()``, called from the compiled ``outer()`` (a new user's trial, nu22: s4_breaks.py, torch
    2.15): torch's ``counters["graph_break"]`` counts it twice, once while tracing outer (frame 0/0 breaks at the call)
    and once in inner's own frame (1/0); the lens keeps one break "in 0/0, 1/0". The header said "3 graph break(s)"
    where the counters total 4. The merge stays; each place that writes the totals (the summary, the repr, the
    page's header from the report and from its plain data, a job's rank line, why nothing compiled) says torch's
    count and why, by one rule."""
    from inductor_lens.analysis.job import Job, RankEntry
    from inductor_lens.report.model import CompileCall, GraphBreak
    from inductor_lens.report.outcome import why_nothing_compiled
    from inductor_lens.views.html import _facts_line, facts_of, to_html

    breaks = [
        GraphBreak(reason="print", compile_ids=["0/0", "1/0"]),  # outer:18 -> inner:14
        GraphBreak(reason="print", compile_ids=["3/0"]),  # outer:19 -> inner:14 (inner's frame already compiled)
        GraphBreak(reason="disable", compile_ids=["4/0"]),
    ]
    report = Report(torch_version="2.15", device="cpu", graph_breaks=breaks)
    said = "3 graph break(s) (4 as torch counts them: one break met in 2 frames)"
    head = to_html(report)
    head = head[: head.index("<main")]
    job = Job(ranks=[RankEntry(0, report)], world_size=1)
    for text in (report.summary().splitlines()[0], repr(report), head, job.summary()):
        assert said in text, text
    assert said in _facts_line(facts_of(report.to_dict()))
    calls = [CompileCall(target="outer", backend="inductor")]
    assert said in why_nothing_compiled(dataclasses.replace(report, compile_calls=calls))
    # shipped to the page as it is said (Report.breaks): the panel's "Graph breaks in this capture" heading draws it
    assert report.breaks == said and Report.from_dict(json.loads(report.to_json())).breaks == said
    # a break met in one frame each: the count alone, as torch's
    once = Report(torch_version="2.15", device="cpu", graph_breaks=breaks[1:])
    assert "2 graph break(s); torch" in once.summary() and "as torch counts" not in repr(once)
