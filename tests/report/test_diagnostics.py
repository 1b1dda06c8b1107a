"""Typed diagnostics (issue 11 section 1): ``Diagnostic{code, message, detail}``, consumers switch on the code."""

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
