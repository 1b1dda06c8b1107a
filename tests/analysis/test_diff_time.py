"""What a diff says about time (``analysis/diff_time.py``): each side's measured kernel time and the verdict, how each
side was timed, and B's autotuning against A's measurement. On the two recorded H200 reports of one MLP(512, 1024,
256) on a 256x512 input, compiled by default (``gpu_mlp_wide_default.json``) and with max-autotune
(``gpu_max_autotune.json``); no compile, no torch."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import pytest

import inductor_lens
from inductor_lens.analysis.diff_time import kernel_time

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="module")
def default_and_autotune():
    return (
        inductor_lens.load(FIXTURES / "gpu_mlp_wide_default.json"),
        inductor_lens.load(FIXTURES / "gpu_max_autotune.json"),
    )


def _unprofiled(r, keep=lambda k: False):
    """``r`` with the measured times of its kernels dropped (those ``keep`` keeps stay), and no step profile."""
    compiles = [
        dataclasses.replace(c, kernels=[k if keep(k) else dataclasses.replace(k, profile=None) for k in c.kernels])
        for c in r.compiles
    ]
    return dataclasses.replace(r, compiles=compiles, profile=None if not any(map(keep, r.kernels)) else r.profile)


def test_default_vs_max_autotune_says_b_is_slower_in_measured_kernel_time(default_and_autotune):
    """nu21 D5: the compare gave each pair's delta and no total: max-autotune made the graph 2.2x slower and nothing
    said so. By hand, from the reports' kernels: A 13.562 (mm) + 1.402 (bias + relu) + 23.552 (addmm) + 1.958 (layer
    norm + softmax) = 40.474 µs; B 41.92 + 42.347 (the two templates) + 4.651 = 88.918 µs."""
    a, b = default_and_autotune
    d = inductor_lens.diff(a, b)
    verdict = "B is 2.2× slower in measured kernel time: 88.9 µs against 40.5 µs in A"
    for t in (d.kernel_time_us, d.compiles[0].kernel_time_us):
        assert (t["a"], t["b"], t["delta"]) == (40.474, 88.918, 48.444), t
        assert t["ratio"] == pytest.approx(88.918 / 40.474, abs=1e-3)
        assert t["verdict"] == verdict and t["why"] == "", t
    data = json.loads(d.to_json())
    assert data["kernel_time_us"]["verdict"] == data["compiles"][0]["kernel_time_us"]["verdict"] == verdict
    assert f"\n  {verdict}\n" in d.text()
    # the other way round, B faster; and A against itself, the same
    assert inductor_lens.diff(b, a).kernel_time_us["verdict"] == (
        "B is 2.2× faster in measured kernel time: 40.5 µs against 88.9 µs in A"
    )
    assert inductor_lens.diff(a, a).kernel_time_us["verdict"].startswith("B takes the same measured kernel time as A")


def test_kernel_time_says_why_it_is_not_compared_and_what_it_left_out(default_and_autotune):
    a, b = default_and_autotune
    d = inductor_lens.diff(a, _unprofiled(b))
    assert (
        d.kernel_time_us["verdict"] == "" and d.kernel_time_us["why"] == "kernel time not compared: B was not profiled"
    )
    assert d.compiles[0].kernel_time_us["why"] == "kernel time not compared: B was not profiled"
    assert (d.kernel_time_us["a"], d.kernel_time_us["b"]) == (40.474, None)
    assert inductor_lens.diff(_unprofiled(a), _unprofiled(b)).kernel_time_us["why"] == (
        "kernel time not compared: neither report was profiled"
    )
    # B's reduction not measured: left out of B's total, and the verdict says so
    part = _unprofiled(b, keep=lambda k: k.name.startswith("triton_tem"))
    t = inductor_lens.diff(a, part).kernel_time_us
    assert t["b"] == round(41.92 + 42.347, 3) and t["unmeasured_b"] == 1, t
    assert t["verdict"].endswith(" (not counted, no measured time: 1 kernel of B)"), t
    # a compile pair with one side only
    assert kernel_time(a.kernels, None, True, True)["why"] == "kernel time not compared: only A has this compile"


def test_a_profiled_report_whose_kernels_were_not_timed_is_not_called_unprofiled():
    """nu28 D2: default vs max-autotune on the CPU, both run with ``--profile``; B's profile tied no event to its two
    C++ GEMM templates (their events bear their inner function's name: fixed in the capture since), so none of B's
    kernels has a time. The compare said "B was not profiled"; B was, its kernels were not measured."""
    a = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_default.json")
    b = inductor_lens.load(FIXTURES / "cpu_profiled_mlp_max_autotune.json")
    assert b.profile is not None and b.profile.attributed_us == 0 and all(k.profile is None for k in b.kernels)
    d = inductor_lens.diff(a, b)
    assert d.kernel_time_us["why"] == "kernel time not compared: no kernel of B was measured"
    assert d.compiles[0].kernel_time_us["why"] == (
        "kernel time not compared: no kernel of B was measured in this compile pair"
    )
    assert (d.kernel_time_us["a"], d.kernel_time_us["b"]) == (144.581, None)


def test_b_autotuning_timed_the_library_kernels_a_measured_several_times_slower(default_and_autotune):
    """nu21 D5: B's autotuning benchmarked ATen mm at 60.96 µs and addmm at 53.312 µs (its choices' ``time_ms``)
    where A measured the same ops with the same shapes (mm [256, 512] x [512, 1024], addmm [256] + [256, 1024] x
    [1024, 256], float32, in the post-grad graphs) at 13.562 and 23.552 µs: that is why the slower Triton templates
    won. Each row says it, and a note says it for the whole diff."""
    a, b = default_and_autotune
    d = inductor_lens.diff(a, b)
    rows = {k.a: k for k in d.kernels if k.autotune_vs_a}
    assert set(rows) == {"extern_kernels.mm[buf0]", "extern_kernels.addmm[buf2]"}, d.text()
    mm, addmm = rows["extern_kernels.mm[buf0]"].autotune_vs_a, rows["extern_kernels.addmm[buf2]"].autotune_vs_a
    assert (mm["op"], mm["a_us"], mm["autotuned_us"], mm["chosen"], mm["chosen_us"], mm["b_us"]) == (
        "mm",
        13.562,
        60.96,
        "triton_mm_4",
        44.512,
        41.92,
    )
    # A's bias + relu kernel merged into B's template: its time is A's part of the same work
    assert mm["a_merged_us"] == 1.402 and addmm["a_merged_us"] == 0.0
    assert mm["note"] == "A measured mm at 13.6 µs; B's autotuning timed it at 61.0 µs (4.5×)"
    assert mm["detail"] == mm["note"] + " and chose triton_mm_4 (44.5 µs), which B's profile measured at 41.9 µs"
    assert (addmm["op"], addmm["a_us"], addmm["autotuned_us"], addmm["chosen"]) == (
        "addmm",
        23.552,
        53.312,
        "triton_mm_21",
    )
    assert addmm["note"] == "A measured addmm at 23.6 µs; B's autotuning timed it at 53.3 µs (2.3×)"
    (note,) = [n for n in d.notes if n.code == "autotune_vs_measured"]
    assert note.message == (
        "B's autotuning timed the library kernels it replaced 2.3–4.5× slower than A measured them: mm at 61.0 µs "
        "(A measured 13.6 µs), addmm at 53.3 µs (A measured 23.6 µs). Its choices, measured in B's profile: "
        "triton_mm_4 41.9 µs, triton_mm_21 42.3 µs, slower than A's kernels for the same ops."
    )
    assert f"autotune: {mm['detail']}\n" in d.changes_text() + "\n"
    # the smaller MLP(256, 512, 128) of gpu_mlp.json: the same ops with other shapes, no comparison
    small = inductor_lens.diff(inductor_lens.load(FIXTURES / "gpu_mlp.json"), b)
    assert not any(k.autotune_vs_a for k in small.kernels) and "autotune_vs_measured" not in {
        n.code for n in small.notes
    }


def test_two_profiles_timed_differently_are_flagged(default_and_autotune):
    """nu21 D5: A is the mean of 5 runs after 1 warm-up run on an H200 with the step profile's method; B, recorded
    before those were kept, 3 runs and nothing else. The diff says so (``timing``, a note); alike, it says nothing."""
    a, b = default_and_autotune
    d = inductor_lens.diff(a, b)
    t = d.timing
    assert (t["a"]["statistic"], t["a"]["runs"], t["a"]["warmup"]) == ("mean", 5, 1)
    assert t["a"]["device"] == a.device_info.name and t["a"]["method"] == a.profile.method
    assert t["b"] == {"statistic": "mean", "runs": 3, "warmup": None, "device": None, "method": None}
    assert [x["what"] for x in t["differs"]] == ["runs", "warm-up runs", "device", "profiling method"]
    assert t["warning"] == (
        "A and B were timed differently (runs: A 5, B 3; warm-up runs: A 1, B not recorded; device: A NVIDIA H200 "
        "(table: NVIDIA H200 SXM), B not recorded; profiling method recorded for A only): part of a time delta may "
        "be how it was measured."
    )
    assert [n.message for n in d.notes if n.code == "timed_differently"] == [t["warning"]]
    assert d.to_dict()["timing"]["warning"] == t["warning"]
    alike = inductor_lens.diff(a, a)
    assert alike.timing["differs"] == [] and alike.timing["warning"] == "" and alike.notes == []
    # one side not profiled: no times to compare, no warning
    assert inductor_lens.diff(a, _unprofiled(b)).timing["warning"] == ""


def test_the_cli_says_the_verdict_the_notes_and_each_rows_autotune_timing(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    a, b = FIXTURES / "gpu_mlp_wide_default.json", FIXTURES / "gpu_max_autotune.json"
    r = subprocess.run(
        [sys.executable, "-m", "inductor_lens", "diff", str(a), str(b), "-o", str(tmp_path / "d.html")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    d = inductor_lens.diff(inductor_lens.load(a), inductor_lens.load(b))
    assert "B is 2.2× slower in measured kernel time: 88.9 µs against 40.5 µs in A\n" in r.stderr
    for n in d.notes:
        assert f"note: {n.message}\n" in r.stderr
    assert r.stdout.strip() == d.changes_text().strip()
    assert "autotune: A measured mm at 13.6 µs; B's autotuning timed it at 61.0 µs (4.5×)" in r.stdout


@pytest.mark.browser
def test_compare_page_shows_the_verdict_and_warns_beside_the_delta(tmp_path, offline_page, default_and_autotune):
    """The page draws what Python said: the verdict in its header, the timing warning as a banner note and beside
    the "Δ time" head, and each row's autotune timing under its "what changed"."""
    d = inductor_lens.diff(*default_and_autotune)
    path = d.save_html(tmp_path / "diff.html")
    page = offline_page
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
    assert page.locator('[data-role="diff-verdict"]').inner_text() == d.kernel_time_us["verdict"]
    assert (
        page.locator('[data-role="diff-notes"] [data-code="timed_differently"]').inner_text() == (d.timing["warning"])
    )
    warn = page.locator('[data-role="diff-table"] th [data-role="diff-timing-warning"]')
    assert warn.count() == 1 and warn.locator("xpath=..").get_attribute("title") == d.timing["warning"]
    notes = page.locator('[data-role="diff-autotune-note"]').all_inner_texts()
    assert sorted(notes) == sorted(k.autotune_vs_a["note"] for k in d.kernels if k.autotune_vs_a)
    assert page.watch.requests == [] and page.watch.errors == []


@pytest.fixture(scope="module")
def resnet():
    """nu31's small ResNet training step on a busy 2-core CPU, the forward compile: float32, channels_last, bf16."""
    return {m: inductor_lens.load(FIXTURES / f"cpu_resnet_{m}.json.gz") for m in ("fp32", "cl", "bf16")}


def test_times_that_cannot_carry_a_verdict_are_said_to_be_none(resnet):
    """nu31 D1: "B is 33× faster in measured kernel time" was said as a fact, though 11 of A's 14 forward kernels
    were noisy (78% of its kernel time: by hand, the noisy kernels' medians over all medians), the CPU's ceilings
    measured at each profile were 1.7× (14.52 against 24.72 GB/s) and 1.8× (0.0445 against 0.0791 TFLOP/s) apart, and
    each side was timed in 2 runs. The numbers stay; the verdict says they are none, why, and what to do."""
    a, b = resnet["fp32"], resnet["cl"]
    d = inductor_lens.diff(a, b)
    t = d.kernel_time_us
    assert (t["a"], t["b"]) == (217417.607, 6659.311), t
    assert t["tone"] == "unsure"
    assert [x["code"] for x in t["doubts"]] == ["noisy", "ceilings", "few_runs"]
    assert t["verdict"] == (
        "B measured 33× faster in kernel time: 6.66 ms against 217.4 ms in A; but these times cannot carry a verdict: "
        "A's runs disagree (11 of 14 kernels noisy, 78% of its kernel time); the machine's measured ceilings differ "
        "1.8× between the two profiles; 2 runs each. Profile both on an idle machine, with more runs, and compare again."
    )
    assert not t["verdict"].startswith("B is")
    (note,) = [n for n in d.notes if n.code == "times_uncertain"]
    assert d.notes[0] is note
    for part in (
        "A: 11 of 14 kernels are noisy",
        "GB/s: A 14.52, B 24.72 (1.7×)",
        "TFLOP/s: A 0.0445, B 0.0791 (1.8×)",
        "each timed in 2 runs",
        "inspect(..., profile=True) takes 5 runs",
    ):
        assert part in note.message, (part, note.message)
    # nu24: the note, under the verdict, said the verdict's words again at three times their length; it says only what
    # the verdict does not: each doubt in full and how to take more runs
    assert note.message.startswith("Why the measured times are no verdict, in full: A: 11 of 14 kernels"), note.message
    assert "cannot carry a verdict" not in note.message and "Profile both on an idle machine" not in note.message
    # the compile pair's verdict says it too, without the advice (the whole reports' says it)
    assert d.compiles[0].kernel_time_us["verdict"].endswith("; 2 runs each")
    assert f"\n  {t['verdict']}\n" in d.text()
    # fp32 against bf16: both sides noisy (B's 13 of 30... here 7 of its forward's kernels)
    shorts = [x["short"] for x in inductor_lens.diff(a, resnet["bf16"]).kernel_time_us["doubts"]]
    assert shorts[0].startswith("A's runs disagree") and shorts[1].startswith("B's runs disagree"), shorts


def test_each_doubt_alone_and_clean_profiles_keep_their_verdict(default_and_autotune):
    """The clean H200 pair keeps its verdict; each doubt alone, by its stated threshold, turns it into none."""
    a, b = default_and_autotune
    assert inductor_lens.diff(a, b).kernel_time_us["tone"] == "slower"
    info = a.device_info

    def peaks(r, f):
        return dataclasses.replace(r, device_info=dataclasses.replace(info, peak_gbps=info.peak_gbps * f))

    from inductor_lens.analysis.diff_time import CEILING_FACTOR, doubts

    assert doubts(a, peaks(a, CEILING_FACTOR * 0.99)) == []
    (ceil,) = doubts(a, peaks(a, CEILING_FACTOR * 1.01))
    assert ceil["code"] == "ceilings" and "GB/s: A 4800, B 6060 (1.3×)" in ceil["text"], ceil
    # another device is another comparison (timed_differently says it), not a machine in another state
    other = dataclasses.replace(a, device_info=dataclasses.replace(info, name="NVIDIA H100", peak_gbps=3350.0))
    assert doubts(a, other) == []
    few = dataclasses.replace(a, profile=dataclasses.replace(a.profile, runs=2))
    assert [x["short"] for x in doubts(a, few)] == ["B timed in 2 runs"]
    assert inductor_lens.diff(a, few).kernel_time_us["verdict"].startswith("B measured the same kernel time as A")


def test_the_cli_first_line_says_the_times_cannot_carry_a_verdict(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    a, b = FIXTURES / "cpu_resnet_fp32.json.gz", FIXTURES / "cpu_resnet_cl.json.gz"
    r = subprocess.run(
        [sys.executable, "-m", "inductor_lens", "diff", str(a), str(b), "-o", str(tmp_path / "d.html")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    first = r.stderr.splitlines()[0]
    assert "B measured 33× faster in kernel time: 6.66 ms against 217.4 ms in A; but these times cannot carry" in first
    assert "note: Why the measured times are no verdict, in full: " in r.stderr


def test_a_rows_delta_is_in_the_unit_of_its_times(resnet):
    """nu31 D5: A and B said "33.6 ms", the Δ "−33611 µs" (cut to "−3361…"). Now the Δ is in the unit of the larger
    of its row's two times, decided in Python (``time_delta_text``)."""
    d = inductor_lens.diff(resnet["fp32"], resnet["cl"])
    rows = {k.a: k for k in d.compiles[0].kernels}
    copy = rows["cpp_fused_0"]  # removed: A's time, no B
    assert (
        copy.time_a_text.endswith(" ms")
        and copy.time_delta_text.startswith("−")
        and copy.time_delta_text.endswith(" ms")
    )
    conv = rows["extern_kernels.convolution[buf6]"]
    assert (conv.time_a_us, conv.time_b_us) == (12180.72, 327.907), conv
    assert (conv.time_a_text, conv.time_b_text, conv.time_delta_text) == ("12.2 ms", "328 µs", "−11.9 ms")
    assert json.loads(d.to_json())["compiles"][0]["kernels"][0]["time_delta_text"]


@pytest.mark.browser
def test_compare_page_says_the_times_are_no_verdict_and_shows_each_delta_whole(tmp_path, offline_page, resnet):
    """nu31 D1, D2, D5, D6 on the page: the verdict in the header as Python says it, drawn as unsure; the note; the
    graph inputs' layout and the saved bytes made by the forward in the facts bar; each Δ cell as Python wrote it, whole (not cut) at 1400 and 1920 px wide."""
    d = inductor_lens.diff(resnet["fp32"], resnet["cl"])
    path = d.save_html(tmp_path / "diff.html")
    page = offline_page
    for width in (1400, 1920):
        page.set_viewport_size({"width": width, "height": 950})
        page.goto(pathlib.Path(path).as_uri())
        page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
        verdict = page.locator('[data-role="diff-verdict"]')
        assert verdict.inner_text() == d.kernel_time_us["verdict"]
        assert "il-unsure" in verdict.locator("xpath=..").get_attribute("class")
        assert page.locator('[data-role="diff-notes"] [data-code="times_uncertain"]').count() == 1
        assert page.locator('[data-role="diff-inputs"]').inner_text() == d.compiles[0].inputs_text
        # nu31 D6: the equal saved total's part made by the forward, as Python says it
        forward = page.locator('[data-role="diff-memory-saved-forward"]').inner_text()
        assert forward == d.compiles[0].memory["saved_by_forward_text"]
        cells = page.locator('[data-role="diff-row"] td.il-ddelta')
        got = cells.evaluate_all("els => els.map(e => [e.textContent, e.scrollWidth <= e.clientWidth])")
        want = sorted(k.time_delta_text for k in d.compiles[0].kernels)
        assert sorted(t for t, _ in got) == want
        assert all(whole for _, whole in got), (width, got)
    assert page.watch.requests == [] and page.watch.errors == []
