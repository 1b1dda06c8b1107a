"""Python decides, JS draws: the same report fed to Python and to the front end's data functions (run under
node by ``tests/views/show_report.mjs``) shows the same user line for each kernel and fused node, the same
kernel runs and fusion-graph edges, and the source view counts what its label says (kernels in this compile,
*compiles* elsewhere). And the derivations that moved to Python stay out of ``js/src`` (a grep)."""

from __future__ import annotations

import inspect
import json
import pathlib
import re
import shutil
import subprocess

import pytest

import inductor_lens
from inductor_lens.report.lines import kernel_keys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def _shown(report, tmp_path) -> dict:
    node = shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH; the front end's data functions need it", pytrace=False)
    path = tmp_path / "report.json"
    path.write_text(report.to_json(), encoding="utf-8")  # the compact written form, as the page gets it
    r = subprocess.run(
        [node, str(ROOT / "tests" / "views" / "show_report.mjs"), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def _key(frame) -> str:
    return f"{frame.file}:{frame.line}"


def _kernel_line(k) -> dict:
    """The kernel table's line of a kernel: its user line (ran), else the line that built its modules (built)."""
    if k.user_lines:
        return {"line": _key(k.user_lines[0]), "how": "ran"}
    return {"line": _key(k.built_lines[0]), "how": "built"} if k.built_lines else {"line": "", "how": ""}


#: How the drawing keys an edge's ends, by ``FusionEdge.kind``.
_END = {"node": ("node:", "node:"), "input": ("in:", "node:"), "output": ("node:", "out:")}


def _python_view(report) -> dict:
    """What the report's Python fields say the views show."""
    compiles, lines = {}, {}
    for c in report.compiles:
        boxes = [n for n in c.fused_nodes if not n.is_glue]
        by_kernel = {k.name: k for k in c.kernels}
        compiles[c.id] = {
            "kernels": {k: _kernel_line(by_kernel[k]) for k in dict.fromkeys(n.kernel for n in boxes if n.kernel)},
            "boxes": {
                n.name: {
                    "line": _key(n.user_lines[0]) if n.user_lines else "",
                    "ops": n.ops,
                    "run": next((s for s in by_kernel[n.kernel].call_sites if n.name in s), [n.name])
                    if n.kernel in by_kernel
                    else [n.name],
                }
                for n in boxes
            },
            "edges": [
                f"{_END[e.kind][0]}{e.source}>{_END[e.kind][1]}{e.target} {','.join(e.buffers)}" for e in c.edges
            ],
            "trigger": [f.function_label for f in c.trigger.user_stack] if c.trigger else [],
            "stacks": {n.name: [[f.function_label for f in s] for s in n.user_stack] for n in boxes},
        }
        for n in boxes:
            for how, frames in (("ran", n.user_lines), ("built", n.built_lines)):
                for f in frames:
                    per = lines.setdefault(_key(f), {}).setdefault(c.id, {"ran": set(), "built": set()})
                    if n.kernel:
                        per[how].add(n.kernel)
    shown_lines = {
        key: {
            cid: {
                "kernels": sorted(ks["ran"]),
                "built": sorted(ks["built"]),
                "otherCompiles": sum(1 for o, oks in per.items() if o != cid and (oks["ran"] or oks["built"])),
            }
            for cid, ks in per.items()
        }
        for key, per in lines.items()
    }
    return {"compiles": compiles, "lines": shown_lines}


@pytest.fixture(scope="module")
def recorded():
    return [inductor_lens.load(FIXTURES / f"{name}.json") for name in ("gpu_training", "gpu_gpt2_block")]


def test_python_and_js_show_the_same_lines_runs_and_counts(training_report, break_recompile_report, recorded, tmp_path):
    for i, report in enumerate([training_report, break_recompile_report, *recorded]):
        (tmp_path / str(i)).mkdir()
        shown = _shown(report, tmp_path / str(i))
        assert shown == _python_view(report), report.title
        assert any(b["line"] for c in shown["compiles"].values() for b in c["boxes"].values()), report.title


def test_a_resume_function_in_a_stack_reads_as_its_function_after_the_break(break_recompile_report, tmp_path):
    """nu19 O-h: a stack through the code after a graph break read `s7_ca.py:38 in
    torch_dynamo_resume_in_train_step_at_36 loss.backward()` below line 36 of `train_step`, as if line 36 had called
    line 38: the page names dynamo's resume function as the user's function after the break, as Python says it
    (``Frame.function_label``); every other frame keeps its name."""
    from tests import models

    src, first = inspect.getsourcelines(models.with_graph_break)
    at = first + next(i for i, s in enumerate(src) if "print(" in s)
    c = break_recompile_report.compile("1/0")
    box = next(n for n in c.fused_nodes if not n.is_glue)
    raw = [f.function for s in box.user_stack for f in s]
    assert f"torch_dynamo_resume_in_with_graph_break_at_{at}" in raw, raw
    shown = _shown(break_recompile_report, tmp_path)["compiles"][c.id]
    names = [f for s in shown["stacks"][box.name] for f in s]
    assert f"with_graph_break (after the graph break at line {at})" in names, names
    assert not any(f.startswith("torch_dynamo_resume_in_") for f in names + shown["trigger"]), names
    assert [f for f in names if "(after" not in f] == [f for f in raw if not f.startswith("torch_dynamo_resume_in_")]


def test_python_and_js_show_the_same_built_lines(nested_sequential_training_report, tmp_path):
    """A model of torch's modules: no line ran its ops, and each line that built one of its modules shows the
    kernels ``FusedNode.built_lines`` gives it (forward and backward), as built, none as ran."""
    shown = _shown(nested_sequential_training_report, tmp_path)
    assert shown == _python_view(nested_sequential_training_report)
    per = [v for cids in shown["lines"].values() for v in cids.values()]
    assert per and all(v["built"] and not v["kernels"] for v in per)
    # the kernel table names each kernel's built line, as built (Kernel.built_lines)
    rows = [r for c in shown["compiles"].values() for r in c["kernels"].values()]
    assert rows and all(r["how"] == "built" and r["line"] for r in rows)


def test_the_roofline_ties_each_kernel_to_the_line_the_kernel_table_shows(recorded, tmp_path):
    """``Report.profile.by_line`` (``report/lines.py``) splits a kernel's time over the lines the views name."""
    report = recorded[0]
    shown = _shown(report, tmp_path)
    for c in report.compiles:
        for k in c.kernels:
            if k.name in shown["compiles"][c.id]["kernels"]:
                file, line, _, built = kernel_keys(k)[0]
                row = shown["compiles"][c.id]["kernels"][k.name]
                assert row == {
                    "line": f"{file}:{line}" if file else "",
                    "how": ("built" if built else "ran") if file else "",
                }


def test_source_view_counts_other_compiles_not_kernels(break_recompile_report, tmp_path):
    """``with_graph_break`` compiled twice (a shape change): the line ``y = torch.sin(x) * 2`` made one kernel
    in the first frame's compile and one in its recompile; the gutter of each says "1 other compile"."""
    shown = _shown(break_recompile_report, tmp_path)
    (key,) = [k for k in shown["lines"] if k.endswith(f"models.py:{_line_of('y = torch.sin(x) * 2')}")]
    per = shown["lines"][key]
    assert len(per) == 2, per
    assert all(len(v["kernels"]) == 1 and v["otherCompiles"] == 1 for v in per.values()), per


def _line_of(code: str) -> int:
    text = (ROOT / "tests" / "models.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(text, 1) if line.strip() == code)


#: Derivations that moved to Python (report/rules.py, report/finish.py, analysis/diff.py): their JS names and
#: the code shapes they had. None may come back in js/src.
REMOVED = {
    r"\bshortOp\b": "short op names: GraphNode.short_op, FusedNode.ops",
    r"\bparseChoiceConfig\b": "autotune choice configs: choices[].config",
    r"\bisProfile\b": "has a profile: data.js profileOf",
    r"\buserStacks\(\{ n, k": "the panel's user stacks: FusedNode.user_stack",
    r"list\[a - 1\]\.kernel": "kernel runs: Kernel.call_sites",
    r"mm\|addmm\|bmm\|baddbmm": "the epilogue's op list: autotune.epilogue",
    r"innermost\(\(k\.user_stack": "a kernel's user line: Kernel.user_lines",
    r"innermost\(gn\.user_stack\)": "a fused node's user lines: FusedNode.user_lines",
    r"replace\(/\^aten\\\.\/": "the compare page's short op: KernelDiff.what_changed",
    r"\bSTATUS_TEXT\b": "the compare page's status words: ReportDiff.to_dict()['status_words']",
    r"k\.status === s\)\.length": "the compare legend's counts: CompileDiff.summary",
    r"plural\(\(p\.kernels": "the compare pair selector's count: CompileDiff.label",
    r"\$\{other\} other": "the source view's count of other compiles: lineSummary().otherCompiles",
    r"unattributed_share \* 100": "the step's unattributed share in words: StepProfile.unattributed_text",
    r"\bunattributedText\b": "the step's unattributed share in words: StepProfile.unattributed_text",
    r"\.some\(\(c\) => c\.memory\)": "whether the memory view opens: Report.views",
    r"\bhasRooflineCache\b": "whether the roofline opens: Report.views",
    r"\bwriter\.get\(|is_glue \|\| seen": "the fusion graph's edges past glue: Compile.edges (rules.fusion_edges)",
    r"\bavailable: \(report\)": "which views a report opens: Report.views",
    r"\bcompileReason\b": "why a compile happened: Compile.why (rules.compile_why)",
    r"\breadableReason\b|JSON\.parse\(s\)": "reasons one per line: rules.readable_reasons, on construction",
    r"kinds\[n\.kind\]": "the compile's count of fused nodes by kind: Compile.contents (rules.contents_text)",
    r"filter\(\(n\) => !n\.is_glue\)\.length": "the compile picker's count of boxes: Compile.box_count",
    r"[Nn]othing was compiled while": "why a report has no compile: Report.nothing (rules.nothing_text)",
    r"Graph breaks in this capture \(\$\{": "the panel's count of graph breaks: Report.breaks (rules.breaks_text)",
    r"\bnoisyKernels\b|kernels\)\.filter\(\(k\) => noisy\.has": "a roll-up row's noisy kernels: LineTime/ModuleTime/KindTime.noisy",
}


#: "has a profile" tested by the shape of the dict: nowhere in js/src (a kernel's is data.js's profileOf, the
#: report's is Report.profiled, decided in Python).
PROFILE_SHAPE = r"typeof [\w.]*total_us|profile\??\.total_us != null"


def test_removed_derivations_stay_out_of_js_src():
    found = []
    src = ROOT / "js" / "src"
    for path in sorted(src.rglob("*.js")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(src).as_posix()
        if re.search(PROFILE_SHAPE, text):
            found.append(f"js/src/{rel}: {PROFILE_SHAPE} (has a profile: data.js profileOf)")
        for rx, what in REMOVED.items():
            if re.search(rx, text):
                found.append(f"{path.relative_to(ROOT)}: {rx} ({what})")
    assert not found, "derived in JS again:\n" + "\n".join(found)


def test_the_view_list_is_one_list():
    """``views.frontend.VIEWS`` (the widget's ``view`` trait, the magic's ``--view``) names the views the front
    end registers, in their order (the number keys pick them in this order), and the README's ``--view`` says the same."""
    from inductor_lens.views.frontend import VIEWS

    node = shutil.which("node")
    assert node, "node is not on PATH"
    code = (
        'import("./src/views/index.js").then((m) => console.log(JSON.stringify(m.registeredViews().map((v) => v.id))))'
    )
    r = subprocess.run([node, "-e", code], cwd=ROOT / "js", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert tuple(json.loads(r.stdout)) == VIEWS
    assert f"`--view {'|'.join(VIEWS)}`" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_python_writes_a_byte_count_as_the_front_end_does():
    """The Memory view's header words are Python's (``Memory.peak_text``, ``high_water_text``) beside byte counts the
    front end formats (``fmtBytes``): both say a count alike, ties (1.125 MiB) rounded up as ``toFixed`` does."""
    from inductor_lens.report.rules import bytes_text

    node = shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH; the front end's data functions need it", pytrace=False)
    values = [0, 1023, 1024, 1536, 1048575, 1048576, 1179648, 1184890, 5947596800, 18161860526, 2**40 + 5 * 2**17]
    script = (
        f"import('{(ROOT / 'js' / 'src' / 'data.js').as_uri()}')"
        f".then((m) => console.log(JSON.stringify({json.dumps(values)}.map(m.fmtBytes))))"
    )
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout) == [bytes_text(v) for v in values]


def test_python_writes_a_time_as_the_front_end_does():
    """A time both sides format (the Timeline's label of a torch.compile() call is the front end's ``fmtUs``, the
    sentence beside it Python's ``fmt_us``) reads alike: ties rounded away from zero from the float's exact value, as
    ``toFixed`` does (374.5 µs was "375 µs" in the page and "374 µs" in Python, which rounds a tie to even)."""
    from inductor_lens.report.rules import fmt_us

    node = shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH; the front end's data functions need it", pytrace=False)
    values = [0, 0.125, 1.005, 2.675, 9.995, 12.25, 99.95, 374.5, 375.5, -2.5, 1234.5, 12_345, 12_350, 2_500_000,
              2_675_000, 0.0005, -0.001]  # fmt: skip
    script = (
        f"import('{(ROOT / 'js' / 'src' / 'data.js').as_uri()}')"
        f".then((m) => console.log(JSON.stringify({json.dumps(values)}.map(m.fmtUs))))"
    )
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout) == [fmt_us(v) for v in values]
    assert fmt_us(374.5) == "375 µs" and fmt_us(0.125) == "0.13 µs"
