"""Comparing two reports (``inductor_lens.diff``): real CPU compiles of tiny models, recorded GPU
reports, the CLI, the magic in a real IPython kernel, and the compare page in Chromium."""

from __future__ import annotations

import dataclasses
import inspect as pyinspect
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
import torch
from torch import nn

import inductor_lens
from inductor_lens.analysis.diff import SHARED_LITTLE, ReportDiff, normalise_source
from inductor_lens.examples import MLP, Attention
from tests import models
from tests._synthetic_report import HOSTILE, hostile_report

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


class Three(nn.Module):
    """Three Linear layers; the middle one's activation and an extra op are switchable."""

    def __init__(self, act2: str = "relu", extra: bool = False):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 8)
        self.act2, self.extra = act2, extra

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = self.fc2(x)
        x = torch.relu(x) if self.act2 == "relu" else nn.functional.gelu(x)  # LINE_ACT2
        if self.extra:
            x = x * 2.0  # LINE_EXTRA
        return torch.relu(self.fc3(x))


def _line(marker: str) -> int:
    lines, start = pyinspect.getsourcelines(Three.forward)
    return start + next(i for i, s in enumerate(lines) if marker in s)


def _capture(model, x, **kw):
    torch.manual_seed(0)
    with torch.no_grad():
        return inductor_lens.inspect(model, x, title=kw.pop("title", type(model).__name__), **kw)


@pytest.fixture(scope="module")
def reports():
    """Each variant compiled once: relu twice, gelu in layer 2, an extra mul after layer 2, and
    the relu model with mode="max-autotune"."""
    x = torch.randn(4, 16)
    return {
        "relu": _capture(Three(), x, title="relu"),
        "relu_again": _capture(Three(), x, title="relu again"),
        "gelu": _capture(Three("gelu"), x, title="gelu"),
        "extra": _capture(Three(extra=True), x, title="extra mul"),
        "autotune": _capture(Three(), x, title="max-autotune", compile_options={"mode": "max-autotune"}),
    }


def _launches(report):
    """(compile id, kernel, fused nodes) for every kernel launch: each place the output code calls a kernel
    (``Kernel.call_sites``, read from the output code at capture)."""
    return [(c.id, k.name, tuple(site)) for c in report.compiles for k in c.kernels for site in k.call_sites]


# ---- the JSON contract and the pairing --------------------------------------------------------------


def test_same_model_twice_is_all_same(reports):
    a, b = reports["relu"], reports["relu_again"]
    d = inductor_lens.diff(a, b)
    data = json.loads(d.to_json())
    assert set(data["summary"]) == {"same", "changed", "merged", "split", "only_a", "only_b"}
    n = len(_launches(a))
    assert n == len(_launches(b)) >= 5  # 3 matmuls, 2+ relu launches
    assert data["summary"] == {"same": n, "changed": 0, "merged": 0, "split": 0, "only_a": 0, "only_b": 0}
    (pair,) = data["compiles"]
    assert (pair["a"], pair["b"]) == (a.compiles[0].id, b.compiles[0].id)
    for k in pair["kernels"]:
        assert set(k) >= {"status", "a", "b", "moved_ops_in", "moved_ops_out", "time_delta_us"}
        assert k["status"] == "same" and k["a"] == k["b"] and k["time_delta_us"] is None
    assert a.diff(b).summary == d.summary and isinstance(d, ReportDiff)


def test_relu_to_gelu_changes_exactly_that_layers_kernel(reports):
    a, b = reports["relu"], reports["gelu"]
    d = inductor_lens.diff(a, b)
    changed = [k for k in d.kernels if k.status == "changed"]
    assert len(changed) == 1, d.text()
    k = changed[0]
    # independently: B's kernel whose ops come from the gelu line of Three.forward
    post = {n.name: n for n in b.compiles[0].graphs["post_grad"].nodes}
    gelu_line = _line("LINE_ACT2")
    from_line = {
        n.kernel
        for n in b.compiles[0].fused_nodes
        if n.kernel and any(post[f].user_stack and post[f].user_stack[-1].line == gelu_line for f in n.fx_nodes)
    }
    assert from_line == {k.b}, (from_line, k.b)
    assert k.moved_ops_out == ["aten.relu.default"]
    assert "aten.erf.default" in k.moved_ops_in  # gelu's exact form
    assert "relu" in k.a and "source" in k.changes
    others = [x for x in d.kernels if x is not k]
    assert {x.status for x in others} == {"same"} and len(others) == len(_launches(a)) - 1


def test_an_op_fused_into_an_existing_kernel_is_listed_as_moved_in(reports):
    d = inductor_lens.diff(reports["relu"], reports["extra"])
    changed = [k for k in d.kernels if k.status == "changed"]
    assert len(changed) == 1, d.text()
    k = changed[0]
    assert k.moved_ops_in == ["aten.mul.Tensor"] and k.moved_ops_out == []
    assert "fusion" in k.changes
    # the kernel that absorbed the mul is B's kernel of the mul's line, and it still holds the relu
    b = reports["extra"]
    post = {n.name: n for n in b.compiles[0].graphs["post_grad"].nodes}
    (fused,) = k.fused_b
    node = b.compiles[0].fused_node(fused)
    targets = sorted(post[f].target for f in node.fx_nodes)
    assert targets == ["aten.mul.Tensor", "aten.relu.default"]
    assert any(post[f].user_stack[-1].line == _line("LINE_EXTRA") for f in node.fx_nodes if post[f].user_stack)
    assert sum(k.status == "same" for k in d.kernels) == len(_launches(reports["relu"])) - 1


def test_max_autotune_on_cpu_changes_no_kernel(reports):
    """On CPU (fp32, this torch) max-autotune keeps the ATen matmuls: Inductor emits the same kernels,
    so every pair is `same`; the guards differ (the mode is guarded on). The GPU case is below."""
    a, b = reports["relu"], reports["autotune"]
    assert [k.name for k in a.kernels] == [k.name for k in b.kernels]
    d = inductor_lens.diff(a, b)
    assert d.summary["changed"] == d.summary["only_a"] == d.summary["only_b"] == 0, d.text()


def test_max_autotune_on_gpu_marks_the_matmul_kernels():
    """Recorded on an H200: MLP default (gpu_mlp.json) vs mode="max-autotune-no-cudagraphs"
    (gpu_max_autotune.json, a wider MLP of the same code). The Triton matmul templates replace the
    extern mm/addmm calls: those pairs are changed with an autotune choice, the mm moved into the template."""
    a = inductor_lens.load(FIXTURES / "gpu_mlp.json")
    b = inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    d = inductor_lens.diff(a, b)
    templates = {k.name for k in b.kernels if "autotune" in k.metadata}
    assert len(templates) == 2
    marked = {k.b: k for k in d.kernels if k.b in templates}
    assert set(marked) == templates
    for k in marked.values():
        assert k.status == "changed" and "autotune" in k.changes, k
        assert k.time_delta_us is not None  # both reports were profiled
    # fc1: A's extern mm and A's bias + relu kernel both moved into B's template with that epilogue (the post-grad
    # graphs: B's template computes mm_default, add_tensor and relu, A's two launches those same nodes). The first of
    # the two, the mm, pairs with the template; the other is "merged" into it, never "removed" (nu18 D5: the
    # GPU template's absorbed mm was an only_a row, "removed")
    relu = next(k for k in marked.values() if "relu" in k.b)
    assert relu.a == "extern_kernels.mm[buf0]" and {"aten.add.Tensor", "aten.relu.default"} <= set(relu.moved_ops_in)
    assert relu.merged_with == ["triton_poi_fused_addmm_relu_0"], relu
    (merged,) = [k for k in d.kernels if k.status == "merged"]
    assert (merged.a, merged.b, merged.merged_into) == ("triton_poi_fused_addmm_relu_0", None, relu.b)
    assert merged.what_changed == f"merged into B's {relu.b} (add, relu)"
    fc2 = next(k for k in marked.values() if "relu" not in k.b)
    assert fc2.a == "extern_kernels.addmm[buf2]"
    assert d.summary["only_a"] == d.summary["only_b"] == 0 and d.notes == [], d.text()


def test_gpu_report_pairs_with_cpu_report_by_ops():
    """The same MLP(256, 512, 128) on 64x256: Triton on the H200 (recorded) and C++ here."""
    gpu = inductor_lens.load(FIXTURES / "gpu_mlp.json")
    torch.manual_seed(0)
    cpu = inductor_lens.inspect(MLP(256, 512, 128), torch.randn(64, 256), title="cpu mlp")
    d = inductor_lens.diff(gpu, cpu)
    (pair,) = d.compiles
    assert d.summary["only_a"] == d.summary["only_b"] == 0, d.text()
    # by hand: fc1's matmul (mm on GPU, addmm with the bias on CPU), fc1's relu (with the bias add on GPU),
    # fc2's addmm, and the layer norm + softmax reduction
    cpu_names = [k.name for k in cpu.kernels]
    assert cpu_names[0].startswith("extern_kernels.addmm") and "relu" in cpu_names[1], cpu_names
    expected = [
        ("extern_kernels.mm[buf0]", cpu_names[0]),
        ("triton_poi_fused_addmm_relu_0", cpu_names[1]),
        ("extern_kernels.addmm[buf2]", cpu_names[2]),
        ("triton_per_fused__softmax_exp_native_layer_norm_prepare_softmax_online_sub_1", cpu_names[3]),
    ]
    assert sorted((k.a, k.b) for k in pair.kernels) == sorted(expected), d.text()
    langs = {(gpu.compiles[0].kernel(k.a).language, cpu.compiles[0].kernel(k.b).language) for k in pair.kernels}
    assert langs == {("triton", "cpp"), ("extern", "extern")}
    norm = next(k for k in pair.kernels if k.a.startswith("triton_per"))
    assert norm.b.startswith("cpp_fused") and "layer_norm" in norm.b


def test_pairs_override_and_bad_pairs(reports):
    a, b = reports["relu"], reports["gelu"]
    cid_a, cid_b = a.compiles[0].id, b.compiles[0].id
    d = inductor_lens.diff(a, b, pairs=[(cid_a, cid_b)])
    assert d.compiles[0].paired_by == "chosen"
    with pytest.raises(ValueError, match=r"no compile 'nope' in a \(compiles: \["):
        inductor_lens.diff(a, b, pairs=[("nope", cid_b)])
    with pytest.raises(TypeError, match="two inductor_lens.Report"):
        inductor_lens.diff(a, "b.json")


def test_source_normalisation_ignores_names_and_buffers():
    s1 = "def triton_poi_fused_add_0(in_ptr0):\n    buf3 = empty()\n    # kernel path: /tmp/torchinductor_x/ab/c.py\n"
    s2 = "def triton_poi_fused_add_7(in_ptr0):\n    buf12 = empty()\n    # kernel path: /tmp/torchinductor_y/zz/d.py\n"
    assert normalise_source(s1, "triton_poi_fused_add_0") == normalise_source(s2, "triton_poi_fused_add_7")
    assert normalise_source(s1, "") != normalise_source(s1.replace("add", "mul").replace("empty", "zeros"), "")


# ---- views: page, CLI, widget, magic ---------------------------------------------------------------


def test_page_is_self_contained_escaped_and_written_atomically(tmp_path):
    from inductor_lens.views.diff_views import to_diff_html

    h = hostile_report()
    page = to_diff_html(inductor_lens.diff(h, h))
    head = page[: page.index("<main")]
    assert HOSTILE not in page and "<img src=x" not in page
    assert "&lt;/script&gt;" in head  # the title is shown, as text
    out = tmp_path / "d.html"
    out.write_text("old")
    inductor_lens.diff(h, h).save_html(out)
    assert out.read_text().startswith("<!doctype html>")
    assert [p.name for p in tmp_path.iterdir()] == ["d.html"]  # no temp file left


def test_cli_diff_writes_page_and_json(tmp_path, reports, sin_cos_report):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    reports["relu"].save_json(a)
    reports["gelu"].save_json(b)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "inductor_lens",
            "diff",
            str(a),
            str(b),
            "-o",
            str(tmp_path / "d.html"),
            "--json",
            str(tmp_path / "d.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "kernel launches: " in r.stderr and "1 changed" in r.stderr and str(tmp_path / "d.html") in r.stderr
    assert "note:" not in r.stderr
    data = json.loads((tmp_path / "d.json").read_text())
    assert data["summary"]["changed"] == 1
    assert (tmp_path / "d.html").read_text().startswith("<!doctype html>")
    bad = subprocess.run(
        [sys.executable, "-m", "inductor_lens", "diff", str(a), str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "no such report" in bad.stderr
    # two unrelated programs: the different_models note is said, on a line of its own
    sin_cos_report.save_json(tmp_path / "s.json")
    other = subprocess.run(
        [
            sys.executable,
            "-m",
            "inductor_lens",
            "diff",
            str(a),
            str(tmp_path / "s.json"),
            "-o",
            str(tmp_path / "o.html"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert other.returncode == 0, other.stderr
    (note,) = inductor_lens.diff(reports["relu"], sin_cos_report).notes
    assert note.code == "different_models" and f"note: {note.message}\n" in other.stderr


def test_widget_and_display(reports):
    d = inductor_lens.diff(reports["relu"], reports["gelu"])
    w = d.widget()
    import gzip

    payload = json.loads(gzip.decompress(w._report))
    assert payload["kind"] == "diff" and payload["diff"]["summary"] == d.summary
    assert payload["b"]["title"] == "gelu"
    bundle = d._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "1 changed" in repr(d) and len(repr(w)) < 300


def test_magic_compare_shows_the_compare_view(ipython_kernel, tmp_path):
    """In the session's kernel (tests/_kernel.py: the extension loaded, torch imported), shared with the magic's tests.
    ``--export`` writes the page the cell shows, the comparison (it wrote the cell's report alone: nu19 D3); ``--json``
    the cell's report."""
    k = ipython_kernel
    ex = k.execute("%%inductor_lens --compare nothing_here\nset_by_the_compare_cell = 1")
    assert ex.status == "error" and "nothing is bound to 'nothing_here'" in ex.reply["evalue"]
    assert k.value("'set_by_the_compare_cell' in globals()") is False  # the cell did not run
    k.ok("%%inductor_lens -f f --name base\ndef f(x):\n    return torch.relu(x) + 1\nf(torch.randn(8))")
    page, data = tmp_path / "cmp.html", tmp_path / "new.json"
    ex = k.ok(
        f"%%inductor_lens -f f --compare base --name new --export {page} --json {data}\n"
        "def f(x):\n    return torch.sigmoid(x) + 1\nf(torch.randn(8))"
    )
    assert "· inductor_lens compare</title>" in page.read_text()
    assert [x.name for x in inductor_lens.load(data).kernels] == k.value("[x.name for x in new.kernels]")
    states = [m["content"]["data"]["state"] for m in ex.of_type("comm_open") if "state" in m["content"].get("data", {})]
    assert any("compile_pair" in s for s in states), "no compare widget was shown"
    summary = {"same": 0, "changed": 1, "merged": 0, "split": 0, "only_a": 0, "only_b": 0}
    assert k.value("base.diff(new).summary") == summary


def test_compare_page_in_chromium(tmp_path, offline_page, reports):
    a, b = reports["relu"], reports["gelu"]
    d = inductor_lens.diff(a, b)
    path = d.save_html(tmp_path / "diff.html")
    page = offline_page
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
    rows = page.locator('[data-view="compare"] [data-role="diff-row"]')
    assert rows.count() == len(_launches(b))
    statuses = [rows.nth(i).get_attribute("data-status") for i in range(rows.count())]
    assert sorted(statuses) == sorted(["changed"] + ["same"] * (len(statuses) - 1))
    changed = next(k for k in d.kernels if k.status == "changed")
    row = page.locator(f'[data-role="diff-row"][data-status="changed"][data-kernel="{changed.b}"]')
    assert row.count() == 1
    # B's graph marks the changed box
    box = page.locator(f'[data-view="compare"] [data-node="{changed.fused_b[0]}"]')
    assert box.get_attribute("data-diff") == "changed"
    row.click()
    src = page.locator('[data-role="diff-source"]')
    col_a, col_b = src.locator('[data-side="a"]'), src.locator('[data-side="b"]')
    assert changed.a in col_a.locator(".il-dhead").inner_text() and changed.b in col_b.locator(".il-dhead").inner_text()
    # every line of both sources is there, and the gelu's erf is on a highlighted line of B only
    kb = b.compiles[0].kernel(changed.b)
    assert col_b.locator(".il-dline:not(.il-d-gap)").count() == len(kb.source.splitlines())
    hl_b = col_b.locator(".il-dline.il-d-replace, .il-dline.il-d-insert").all_inner_texts()
    assert any("erf" in t for t in hl_b), hl_b
    assert not any("erf" in t for t in col_a.locator(".il-dline").all_inner_texts())
    assert col_a.locator(".il-dline.il-d-replace, .il-dline.il-d-delete").count() >= 1
    assert page.watch.requests == [] and page.watch.errors == [] and page.watch.dialogs == []


_GRAPH_JS = """(sel) => ({
  edges: document.querySelectorAll(sel + ' .il-edge').length,
  stubs: [...document.querySelectorAll(sel + ' .il-input, ' + sel + ' .il-output')].map((g) => g.textContent).sort(),
  boxes: [...document.querySelectorAll(sel + ' .il-node')].map((g) => g.dataset.node).sort(),
})"""


def test_the_compare_graph_is_the_lens_graph_of_b_with_its_edges_and_stubs(tmp_path, offline_page, reports):
    """B's graph on the compare page is drawn by the lens's fusion graph (js/src/dot.js) from what the page ships
    of B (``diff_views.slim_report``): the same boxes, data edges and input / output stubs, named alike, as the lens
    page of B shows for that compile. The edges and what the outputs hold are decided in Python (``Compile.edges``,
    ``output_names``): a compare payload without them drew boxes with no edge and no stub."""
    a, b = reports["relu"], reports["gelu"]
    page = offline_page
    b.save_html(tmp_path / "b.html")
    page.goto((tmp_path / "b.html").as_uri())
    page.wait_for_selector('[data-view="fusion"] .il-graph[data-ready="1"]', timeout=60000)
    lens = page.evaluate(_GRAPH_JS, '[data-view="fusion"] .il-graph')
    path = inductor_lens.diff(a, b).save_html(tmp_path / "diff.html")
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
    compare = page.evaluate(_GRAPH_JS, '[data-view="compare"] .il-graph')
    assert lens["edges"] and lens["stubs"] and lens["boxes"], lens
    assert compare == lens
    assert page.watch.errors == []


def test_diff_widget_answers_requests():
    from inductor_lens.views.diff_widget import DiffWidget

    d = inductor_lens.diff(
        inductor_lens.load(FIXTURES / "gpu_mlp.json"), inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    )
    w = DiffWidget(d)
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    w._on_msg(w, {"type": "engine", "id": "e1"}, [])
    w._on_msg(w, {"type": "export", "id": "x1"}, [])
    (c1, b1), (c2, b2) = sent
    assert c1 == {"type": "engine", "id": "e1"} and b1[0][:2] == b"\x1f\x8b"
    assert c2["id"] == "x1" and b2[0].startswith(b"<!doctype html>") and b"data-view" not in b2[0][:200]
    with pytest.raises(TypeError, match="ReportDiff"):
        DiffWidget(d.a)


@pytest.mark.browser
def test_compare_widget_in_jupyterlab(jupyter_lab, lab_page):
    """display(diff) of two recorded GPU reports (no compile needed) in a real JupyterLab."""
    from tests._browser_fixtures import PageWatch, close_notebook, lab_errors, open_notebook, run_all, write_notebook

    base, root = jupyter_lab
    a = inductor_lens.load(FIXTURES / "gpu_mlp.json")
    b = inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    d = inductor_lens.diff(a, b)
    write_notebook(
        root / "compare.ipynb",
        [
            f"import inductor_lens\nd = inductor_lens.diff(inductor_lens.load({str(FIXTURES / 'gpu_mlp.json')!r}), "
            f"inductor_lens.load({str(FIXTURES / 'gpu_max_autotune.json')!r}))\nd",
        ],
    )
    page = lab_page
    watch = PageWatch(page, allow_console=("favicon",))
    try:
        open_notebook(page, base, "compare.ipynb")
        run_all(page)
        view = page.locator('.jp-NotebookPanel:visible [data-view="compare"]').first
        view.locator('.il-graph[data-ready="1"]').wait_for(timeout=60000)
        rows = view.locator('[data-role="diff-row"]')
        assert rows.count() == len(d.kernels)
        # profiled on both sides: rows are sorted by |time delta|, largest first
        deltas = [abs(k.time_delta_us) for k in d.kernels]
        first = rows.first.get_attribute("data-kernel")
        top = max(d.kernels, key=lambda k: abs(k.time_delta_us))
        assert first == (top.b or top.a) and abs(top.time_delta_us) == max(deltas)
        tem = next(k for k in d.kernels if k.b and k.b.startswith("triton_tem") and "relu" in k.b)
        view.locator(f'[data-role="diff-row"][data-kernel="{tem.b}"]').click()
        src = view.locator('[data-role="diff-source"]')
        assert "tl.dot" in src.locator('[data-side="b"]').inner_text()
        # fc1's matmul template pairs with A's mm; A's bias + relu kernel merged into it: its row shows both sources
        assert "extern_kernels.mm[buf0]" in src.locator('[data-side="a"] .il-dhead').inner_text()
        view.locator('[data-role="diff-row"][data-status="merged"]').click()
        assert "triton_poi_fused_addmm_relu_0" in src.locator('[data-side="a"] .il-dhead').inner_text()
        assert tem.b in src.locator('[data-side="b"] .il-dhead').inner_text()
        assert not lab_errors(watch, root), watch.errors
    finally:
        watch.stop()
        close_notebook(page)


def test_training_step_relu_to_gelu_changes_only_that_layers_kernels():
    """Forward and lazily compiled backward: only the kernels of the changed layer differ. Their names
    come from the ops Inductor fused (independent of the pairing): exactly B's kernels named for gelu."""
    x = torch.randn(4, 16)
    torch.manual_seed(0)
    a = inductor_lens.inspect(Three(), x, backward=True, title="relu training")
    torch.manual_seed(0)
    b = inductor_lens.inspect(Three("gelu"), x, backward=True, title="gelu training")
    d = inductor_lens.diff(a, b)
    assert [(c.a, c.b) for c in d.compiles] == [("0/0 forward", "0/0 forward"), ("0/0 backward", "0/0 backward")]
    changed = {k.b for k in d.kernels if k.status == "changed"}
    assert changed == {k.name for k in b.kernels if "gelu" in k.name}, d.text()
    assert d.summary["only_a"] == d.summary["only_b"] == 0
    # the fc3 weight-gradient matmul reads the saved activation under another name (relu_1 vs mul_2): same
    assert all(k.status == "same" for k in d.kernels if k.b and k.b.startswith("extern_kernels")), d.text()


@pytest.mark.skipif(
    not (FIXTURES / "gpu_mlp_wide_default.json").exists(),
    reason="needs tests/fixtures/gpu_mlp_wide_default.json (make_gpu_diff_fixture.py on a GPU)",
)
def test_default_vs_max_autotune_same_gpu_model():
    """The same MLP(512, 1024, 256) on the GPU, default vs max-autotune: every pair with a Triton template in B
    is changed with an autotune choice, and nothing is unpaired but A's extern matmuls the templates absorbed."""
    a = inductor_lens.load(FIXTURES / "gpu_mlp_wide_default.json")
    b = inductor_lens.load(FIXTURES / "gpu_max_autotune.json")
    d = inductor_lens.diff(a, b)
    templates = {k.name for k in b.kernels if "autotune" in k.metadata}
    for k in d.kernels:
        if k.b in templates:
            assert k.status == "changed" and "autotune" in k.changes, k
    assert {k.b for k in d.kernels if k.status == "changed"} >= templates
    # A's extern matmuls pair with the templates; the pointwise kernel fc1's template absorbed merged into it
    assert {k.a for k in d.kernels if k.b in templates} == {"extern_kernels.mm[buf0]", "extern_kernels.addmm[buf2]"}
    assert [k.merged_into for k in d.kernels if k.status == "merged"] == [next(t for t in templates if "relu" in t)], (
        d.text()
    )
    assert d.summary["only_a"] == d.summary["only_b"] == 0


def test_a_change_of_cuda_graph_status_is_shown(sin_cos_report):
    """Issue 24: one side ran the graph through CUDA graphs, the other skipped them (a mutated input): the compile
    pair says so, in the JSON and the text; equal status is no change."""
    import dataclasses

    from inductor_lens.report.model import CudaGraphRecording, CudaGraphs

    def with_graphs(g):
        return dataclasses.replace(
            sin_cos_report, compiles=[dataclasses.replace(sin_cos_report.compiles[0], cudagraphs=g)]
        )

    used = with_graphs(CudaGraphs(used=True, recordings=[CudaGraphRecording("first run of the graph", 900.0)]))
    skipped = with_graphs(CudaGraphs(used=False, skip_reason="mutated inputs (1 instances)"))
    (c,) = inductor_lens.diff(used, skipped).compiles
    assert c.cudagraphs == {"a": "used", "b": "skipped: mutated inputs (1 instances)", "changed": True}
    d = inductor_lens.diff(used, skipped)
    assert "CUDA graphs: used -> skipped: mutated inputs (1 instances)" in d.text()
    assert d.to_dict()["compiles"][0]["cudagraphs"]["changed"] is True
    (same,) = inductor_lens.diff(used, used).compiles
    assert same.cudagraphs["changed"] is False and "CUDA graphs" not in inductor_lens.diff(used, used).text()
    (off,) = inductor_lens.diff(sin_cos_report, sin_cos_report).compiles
    assert off.cudagraphs == {"a": None, "b": None, "changed": False}


@pytest.mark.browser
def test_compare_page_opens_at_a_readable_zoom_in_a_1000_by_700_window(tmp_path, offline_context, reports):
    # issue 22: the compare graph opened fitted, shrunk to unreadable text; it opens like the lens (one rule,
    # graphview.js openingView): labels >= 8.8 px, at the start of B's graph, nothing cut on the left or top
    from tests.views.test_front_views import _OPENING_JS, assert_readable

    d = inductor_lens.diff(reports["relu"], reports["extra"])
    path = d.save_html(tmp_path / "diff.html")
    page = offline_context.new_page(viewport={"width": 1000, "height": 700})
    try:
        page.goto(pathlib.Path(path).as_uri())
        page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
        geo = page.evaluate(_OPENING_JS, '[data-view="compare"] .il-graph')
        assert_readable(geo)
        x0, y0, x1, y1 = geo["pane"]
        shown = [b for b in geo["boxes"] if b["y1"] > y0 and b["y0"] < y1 and b["x1"] > x0 and b["x0"] < x1]
        assert shown and all(b["x0"] >= x0 - 0.5 and b["y0"] >= y0 - 0.5 for b in shown), geo
        first = reports["extra"].compiles[0].fused_nodes[0].name
        assert any(b["node"] == first for b in shown), (first, shown)
        # the table's every column is inside its pane: none cut at the right (the time delta was off screen)
        wrap = page.locator('[data-role="diff-table"]').evaluate(
            "t => { const w = t.parentElement.getBoundingClientRect();"
            " return {right: w.right, cols: [...t.querySelectorAll('th')].map(th => th.getBoundingClientRect().right)}; }"
        )
        assert len(wrap["cols"]) == (7 if d.to_dict()["timed"] else 4) and max(wrap["cols"]) <= wrap["right"] + 0.5, (
            wrap
        )
    finally:
        page.close()


def test_compare_page_says_the_memory_and_cuda_graph_changes(tmp_path, offline_page, reports):
    """The facts bar of the compare page draws ``CompileDiff.memory`` (peak, saved for backward) and
    ``CompileDiff.cudagraphs`` as Python computed them: here B's compile peaks 1 MiB higher and its CUDA graphs
    were skipped where A's ran."""
    import dataclasses

    from inductor_lens.report.model import CudaGraphs

    a = reports["relu"]
    ca = a.compiles[0]
    assert ca.memory is not None
    cb = dataclasses.replace(
        ca,
        memory=dataclasses.replace(ca.memory, peak_bytes=ca.memory.peak_bytes + (1 << 20), sizes_at="at s77=8"),
        cudagraphs=CudaGraphs(used=False, skip_reason="mutated inputs (1 instances)"),
    )
    # A dynamic graph's bytes at the sizes seen: the page says them beside the bytes, as the Memory view does
    ca = dataclasses.replace(ca, memory=dataclasses.replace(ca.memory, sizes_at="at s77=4"))
    a = dataclasses.replace(a, compiles=[dataclasses.replace(ca, cudagraphs=CudaGraphs(used=True))])
    b = dataclasses.replace(a, compiles=[cb])
    d = inductor_lens.diff(a, b)
    pair = d.compiles[0]
    assert pair.cudagraphs == {"a": "used", "b": "skipped: mutated inputs (1 instances)", "changed": True}
    assert pair.memory["peak_bytes"]["delta"] == 1 << 20
    path = d.save_html(tmp_path / "diff.html")
    page = offline_page
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
    cg = page.locator('[data-role="diff-cudagraphs"]')
    assert cg.inner_text() == "CUDA graphs used → skipped: mutated inputs (1 instances)"
    assert "il-changed" in (cg.get_attribute("class") or "")
    peak = page.locator('[data-role="diff-memory-peak"]').inner_text()
    assert peak.startswith("peak memory ") and peak.endswith("(at s77=8) (+1 MiB)") and "(at s77=4) → " in peak, peak
    assert page.locator('[data-role="diff-memory-saved"]').count() == 1
    assert page.watch.requests == [] and page.watch.errors == []


# ---- issue 22: one unit (a kernel launch), launches paired by what they compute, reports that share little ----------


class GeluBlock(models.StackBlock):
    """``models.StackBlock`` with its activation edited to a GELU: the user's change between A and B."""

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(x)))  # LINE_GELU_BLOCK


@pytest.fixture(scope="module")
def stack_gelu_report():
    """The session's ``stack_training_report`` captured the same way, with ``layers.1`` a :class:`GeluBlock`."""
    torch.manual_seed(0)
    model = models.Stack()
    model.layers[1] = GeluBlock(16)
    with inductor_lens.capture(strict=True, title="stack training step, layers.1 gelu") as cap:
        compiled = torch.compile(model)
        compiled(torch.randn(4, 8)).pow(2).sum().backward()
    return cap.report


@pytest.fixture(scope="module")
def attention_report():
    """A small attention block (``examples.Attention``): softmax, bmm, no layer norm; unrelated to the MLP."""
    torch.manual_seed(0)
    with torch.no_grad():
        return inductor_lens.inspect(Attention(32, 4), torch.randn(2, 16, 32), title="attention")


def _calls_in_output_code(c, kernel: str) -> int:
    """How many times the output code calls generated kernel ``kernel`` (its definition is not a call)."""
    return len(re.findall(rf"^\s*{re.escape(kernel)}\(", c.output_code, flags=re.M))


def _targets(report, compile_id, fused) -> set:
    """The ATen targets of the fused nodes ``fused`` of ``report``'s compile, from its post-grad graph."""
    c = report.compile(compile_id)
    post = {n.name: n.target for n in c.graphs["post_grad"].nodes}
    return {post[f] for n in fused for f in c.fused_node(n).fx_nodes if f in post} - {"output", "placeholder"}


def _from_line(report, compile_id, fused, path, line) -> bool:
    c = report.compile(compile_id)
    post = {n.name: n for n in c.graphs["post_grad"].nodes}
    frames = [
        post[f].user_stack[-1] for n in fused for f in c.fused_node(n).fx_nodes if f in post and post[f].user_stack
    ]
    return any(fr.line == line and fr.file.endswith(path) for fr in frames)


def test_one_row_per_kernel_launch_and_a_kernel_called_four_times_says_which_call(stack_training_report):
    """Issue 22: the compare page counted fused nodes in its badges and showed one kernel in several rows. The unit
    is a kernel launch: one row per call in the output code. models.Stack's relu kernel runs once per block (4
    rows, each saying which call); a backward kernel that computes two fused nodes in one call is one row."""
    r = stack_training_report
    d = inductor_lens.diff(r, r)
    for c, pair in zip(r.compiles, d.compiles):
        for k in c.kernels:
            rows = [x for x in pair.kernels if x.a == k.name]
            if k.language == "cpp":  # independently: the calls in the output code
                assert len(rows) == _calls_in_output_code(c, k.name) >= 1, (k.name, len(rows))
            named = [n.name for n in c.fused_nodes if n.kernel == k.name]
            assert sorted(f for x in rows for f in x.fused_a) == sorted(named)  # each fused node in one row
        n = len(pair.kernels)
        same = {"same": n, "changed": 0, "merged": 0, "split": 0, "only_a": 0, "only_b": 0}
        assert pair.summary == same and pair.launches == {"a": n, "b": n}
        assert pair.label == f"{c.id} ↔ {c.id} · {n} → {n} kernel launches"
    fwd, bwd = d.compiles
    relu = [x for x in fwd.kernels if x.a and "relu" in x.a]
    assert [x.launch_a for x in relu] == [f"launch {i} of 4" for i in (1, 2, 3, 4)] == [x.launch_b for x in relu]
    assert all(x.fused_a == x.fused_b and len(x.fused_a) == 1 for x in relu)
    thr = [x for x in bwd.kernels if x.a and "threshold_backward" in x.a]
    assert len(thr) == 4 and all(len(x.fused_a) == 2 for x in thr), [(x.a, x.fused_a) for x in thr]
    # the rows count neither kernels nor fused nodes
    assert len({x.a for x in bwd.kernels}) < len(bwd.kernels) < len(r.compiles[1].fused_nodes)
    data = d.to_dict()
    assert data["unit"] == "kernel launches" and data["version"] == 9  # (9: what made a read argument)
    assert [c["summary"] for c in data["compiles"]] == [c.summary for c in d.compiles]


def test_a_changed_activation_pairs_that_layers_launches_and_nothing_else(stack_training_report, stack_gelu_report):
    """Issue 22: after a model change, rows paired by shifted FX names (A ``cpp_fused_sum_1`` with B's kernel of
    the changed layer). Here layers.1's relu becomes a GELU: exactly B's launches of the kernels Inductor named for
    the gelu (its names come from the ops it fused, not from the pairing) are changed, each from the GELU line and
    paired with A's launch of layers.1's relu; nothing is added or removed, everything else is the same."""
    a, b = stack_training_report, stack_gelu_report
    d = inductor_lens.diff(a, b)
    assert d.summary["only_a"] == d.summary["only_b"] == 0, d.text()
    assert d.notes == [] and d.shared["share"] > SHARED_LITTLE
    relu_line = next(i for i, s in enumerate(pyinspect.getsource(models).splitlines(), 1) if "torch.relu(self.up" in s)
    gelu_line = next(
        i for i, s in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1) if s.endswith("# LINE_GELU_BLOCK")
    )
    for c in d.compiles:
        expected = {(k.name, tuple(site)) for k in b.compile(c.b).kernels if "gelu" in k.name for site in k.call_sites}
        assert len(expected) == 1 and all(_from_line(b, c.b, site, "test_diff.py", gelu_line) for _, site in expected)
        changed = [k for k in c.kernels if k.status == "changed"]
        assert {(k.b, tuple(k.fused_b)) for k in changed} == expected, (c.a, d.text())
        for k in changed:
            assert _from_line(a, c.a, k.fused_a, "models.py", relu_line), (k.a, k.fused_a)
            assert {"aten.relu.default", "aten.le.Scalar", "aten.threshold_backward.default"} & _targets(
                a, c.a, k.fused_a
            )
            assert not [n for n in k.fused_a if "layers.1" not in " ".join(a.compile(c.a).fused_node(n).group_path)]
        assert all(k.status == "same" for k in c.kernels if k not in changed)
    fwd = next(k for k in d.compiles[0].kernels if k.status == "changed")
    assert fwd.launch_a == "launch 2 of 4" and fwd.launch_b == ""  # A's relu kernel, its call in layers.1
    assert "erf" in fwd.what_changed and "− relu" in fwd.what_changed


def test_unrelated_models_say_so_and_pair_no_kernels_that_share_no_op(training_report, attention_report, reports):
    """Issue 22: a diff of two unrelated models paired a softmax kernel with a layer norm as "changed" and said
    nothing. An MLP's training step vs an attention block: a ``different_models`` note (data, with a code), and
    every pair it still makes is of two launches with an ATen op in common (from the post-grad graphs)."""
    a, b = training_report, attention_report
    d = inductor_lens.diff(a, b)
    assert [n.code for n in d.notes] == ["different_models"], d.shared
    na = sum(len(k.call_sites) for k in a.kernels)
    nb = sum(len(k.call_sites) for k in b.kernels)
    assert (d.shared["launches_a"], d.shared["launches_b"]) == (na, nb)
    assert d.shared["share"] < SHARED_LITTLE
    for c in d.compiles:
        for k in c.kernels:
            if k.a and k.b:
                common = _targets(a, c.a, k.fused_a) & _targets(b, c.b, k.fused_b)
                assert common, (k.a, k.b, k.similarity)
    norm = next(k for k in d.kernels if k.a and "layer_norm" in k.a and k.status != "same")
    assert norm.b is None or "softmax" not in norm.b, (norm.a, norm.b)
    data = json.loads(d.to_json())
    assert data["notes"] == [{"code": "different_models", "message": d.notes[0].message}]
    assert f"{min(na, nb)} kernel launches" in d.notes[0].message
    assert "note [different_models]" in d.text()
    # related reports have no note: the same model, a changed activation
    assert inductor_lens.diff(reports["relu"], reports["gelu"]).notes == []
    assert inductor_lens.diff(reports["relu"], reports["relu"]).to_dict()["notes"] == []


@pytest.mark.browser
def test_compare_page_counts_kernel_launches_alike_everywhere_at_1000_by_700(
    tmp_path, offline_context, stack_training_report, stack_gelu_report, training_report, attention_report
):
    """Issue 22: badges, table and legend counted three different things. For each compile pair of a training step,
    the badges, the legend and the table's rows all count the pair's kernel launches (CompileDiff.summary); the
    pair selector says CompileDiff.label; a kernel called four times says which call. Two unrelated models: the
    different_models note is a banner in view."""
    d = inductor_lens.diff(stack_training_report, stack_gelu_report)
    words = d.to_dict()["status_words"]
    page = offline_context.new_page(viewport={"width": 1000, "height": 700})
    watch = []
    page.on("pageerror", lambda e: watch.append(str(e)))
    try:
        page.goto(pathlib.Path(d.save_html(tmp_path / "related.html")).as_uri())
        page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
        assert page.locator('[data-role="diff-notes"]').count() == 0
        options = page.locator('[data-role="compile-pair"] option').all_inner_texts()
        assert options == [c.label for c in d.compiles]
        for i, c in enumerate(d.compiles):
            page.select_option('[data-role="compile-pair"]', str(i))
            page.wait_for_function(f"() => document.querySelector('.il-compare-root').dataset.pair === '{i}'")
            page.wait_for_function(  # the pair's graph drawn: its legend names it
                "b => (document.querySelector('.il-compare-root .il-legend') || {}).textContent.includes(`(${b})`)",
                arg=c.b,
                timeout=60000,
            )
            chips = page.locator('[data-role="diff-summary"] [data-status]')
            assert chips.all_inner_texts() == [
                f"{c.summary[s]} {words[s]}" for s in ("same", "changed", "only_a", "only_b")
            ]
            legend = " ".join(page.locator(".il-legend-item").all_inner_texts())
            for s in ("only_b", "changed", "only_a"):
                assert f"{words[s]} {c.summary[s]}" in legend, legend
            assert page.locator('[data-role="diff-row"]').count() == sum(c.summary.values()) == len(c.kernels)
        page.select_option('[data-role="compile-pair"]', "0")
        page.wait_for_function("() => document.querySelector('.il-compare-root').dataset.pair === '0'")
        launches = page.locator('[data-role="diff-row"] [data-role="diff-launch"]').all_inner_texts()
        assert sorted(set(launches)) == [
            "launch 1 of 3",
            "launch 1 of 4",
            "launch 2 of 3",
            "launch 2 of 4",
            "launch 3 of 3",
            "launch 3 of 4",
            "launch 4 of 4",
        ], launches

        u = inductor_lens.diff(training_report, attention_report)
        page.goto(pathlib.Path(u.save_html(tmp_path / "unrelated.html")).as_uri())
        page.wait_for_selector('[data-view="compare"] .il-graph[data-ready="1"]', timeout=60000)
        banner = page.locator('[data-role="diff-notes"] [data-code="different_models"]')
        assert banner.inner_text() == u.notes[0].message
        box = banner.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 700 and box["width"] > 500, box
        assert watch == []
    finally:
        page.close()


def test_frames_named_with_their_class_pair_with_a_report_made_before_and_never_across_classes():
    """Captures name a method's frame with its class (``Head.forward``) since 0.2.0, and reports made before say
    ``forward``: those pair by the function's name; two frames of different classes do not pair by order."""
    from inductor_lens.analysis.diff import pair_compiles
    from inductor_lens.report.model import Compile, Report, Trigger

    def report(*frames):
        cs = [
            Compile(f"{i}/0 forward", f"{i}/0", "forward", Trigger("first_call", ""), frame=f)
            for i, f in enumerate(frames)
        ]
        return Report(torch_version="2.13.0", device="cpu", compiles=cs)

    def paired(a, b):
        return [(x.frame if x else None, y.frame if y else None, how) for x, y, how in pair_compiles(a, b)]

    old, new = report("forward", "loss"), report("MLP.forward", "loss")
    assert paired(old, new) == [
        ("forward", "MLP.forward", "function, graph kind and order"),
        ("loss", "loss", "frame, graph kind and order"),
    ]
    assert paired(report("Head.forward"), report("Loss.forward")) == [
        ("Head.forward", None, "no match"),
        (None, "Loss.forward", "no match"),
    ]


def test_a_shape_change_says_which_shapes(reports):
    """The same model at another batch size: a row said "shape" changed, not from what to what (a new user compared
    GPT-2 at sequence lengths 16 and 32). It says the shapes: ``shape [4, 32] → [8, 32]``, in the JSON too."""
    import dataclasses

    a = reports["relu"]

    def bigger(node):
        shape = node.shape
        if shape and shape[0] == 4:  # the batch
            return dataclasses.replace(node, shape=[8, *shape[1:]])
        return node

    compiles = []
    for c in a.compiles:
        post = c.graphs["post_grad"]
        graphs = {**c.graphs, "post_grad": dataclasses.replace(post, nodes=[bigger(n) for n in post.nodes])}
        compiles.append(dataclasses.replace(c, graphs=graphs))
    b = dataclasses.replace(a, compiles=compiles, title="batch 8")
    d = inductor_lens.diff(a, b)
    rows = [k for c in d.compiles for k in c.kernels if "shape" in k.changes]
    assert rows, [k.what_changed for c in d.compiles for k in c.kernels]
    for k in rows:
        assert k.shape_a.startswith("[4, ") and k.shape_b == "[8, " + k.shape_a[4:], (k.shape_a, k.shape_b)
        assert f"shape {k.shape_a} → {k.shape_b}" in k.what_changed, k.what_changed
    data = json.loads(d.to_json())
    assert any(r.get("shape_b", "").startswith("[8, ") for c in data["compiles"] for r in c["kernels"])


# ---- nu17 D2: a launch whose inputs changed shape is "changed", and the row says which -------------------------


def _mm_sum(x, w):
    return torch.relu(x @ w) * 2, x.sum(1)


def _mm_sum_reports(dynamic: bool, sizes) -> list:
    out = []
    for rows, inner in sizes:
        torch.manual_seed(0)
        out.append(
            inductor_lens.inspect(
                _mm_sum, torch.randn(rows, inner), torch.randn(inner, 8), compile_options={"dynamic": dynamic}
            )
        )
    return out


def test_a_matmul_whose_inputs_changed_shape_is_changed_and_says_which_args_and_flops():
    """A new user compared a script at --n 16 and --n 32: ``mm(x[4, 16], w[16, 8])`` against ``mm(x[4, 32], w[32, 8])``
    was called "same" (the output [4, 8] and the call text are the same; FLOPs doubled). Truth from the reports' own
    launches and costs: the mm and the C++ kernel of relu*2 and the sum over x (x's sizes baked into its source; its
    ops write [4, 8] and [4] on both sides) changed, in their inputs' shapes and cost. With dynamic shapes a generated
    kernel's source is the same and the sizes are its arguments: their hints say [4, 8] → [6, 8]."""
    a, b = _mm_sum_reports(False, [(4, 16), (4, 32)])
    rows = {k.a: k for k in inductor_lens.diff(a, b).kernels}
    ka = {k.name: k for k in a.kernels}
    mm = next(k for name, k in rows.items() if name.startswith("extern_kernels.mm"))
    assert [x.shape for x in ka[mm.a].launch.args] == [[4, 16], [16, 8], [4, 8]]  # torch's launch, independent of diff
    assert mm.status == "changed" and "shape" in mm.changes and "cost" in mm.changes, mm
    assert mm.arg_shapes == [{"arg": "x", "a": "[4, 16]", "b": "[4, 32]"}, {"arg": "w", "a": "[16, 8]", "b": "[32, 8]"}]
    assert (mm.flops_a, mm.flops_b) == (2 * 4 * 16 * 8, 2 * 4 * 32 * 8)
    assert "shape of x [4, 16] → [4, 32], w [16, 8] → [32, 8]" in mm.what_changed, mm.what_changed
    assert "FLOPs 1,024 → 2,048" in mm.what_changed, mm.what_changed
    (summed,) = [k for k in rows.values() if "sum" in k.a]
    assert summed.status == "changed" and summed.shape_a == "", summed  # its ops' shapes are the same
    assert "shape of x [4, 16] → [4, 32]" in summed.what_changed, summed.what_changed
    data = json.loads(inductor_lens.diff(a, b).to_json())
    assert {"arg": "w", "a": "[16, 8]", "b": "[32, 8]"} in [
        s for c in data["compiles"] for r in c["kernels"] for s in r["arg_shapes"]
    ]

    a, b = _mm_sum_reports(True, [(4, 16), (6, 16)])
    rows = inductor_lens.diff(a, b).kernels
    (pointwise,) = [k for k in rows if "relu" in k.a]
    assert pointwise.shape_a == "", pointwise  # the ops' shapes are symbolic, alike
    assert a.compiles[0].kernel(pointwise.a).source == b.compiles[0].kernel(pointwise.b).source  # sizes as arguments
    assert pointwise.status == "changed" and "[4, 8] → [6, 8]" in pointwise.what_changed, pointwise
    assert all(k.status == "changed" for k in rows), [(k.a, k.what_changed) for k in rows]


# ---- nu18 D5: epilogue fusion is a merge, not a removal; the share is counted over ops ------------------------------


def _frozen_mlp_reports():
    """A 2-layer MLP (``h = torch.relu(self.fc1(x))``, ``return self.fc2(h) * 2.0 + 1.0``) under ``freezing`` on the
    CPU, from two scripts (other file names): by default 4 launches (MKL's linear, a C++ relu, MKL's linear, a C++
    mul + add), with max-autotune-no-cudagraphs 2 C++ GEMM templates with those epilogues (tests/fixtures/README.md)."""
    return (
        inductor_lens.load(FIXTURES / "cpu_frozen_mlp_default.json"),
        inductor_lens.load(FIXTURES / "cpu_frozen_mlp_max_autotune.json"),
    )


def _covered(c, kernel) -> set:
    """The post-grad FX nodes a kernel computes, by name: the two graphs are the same graph (checked)."""
    return set(c.kernel(kernel).fx_nodes)


def test_epilogue_fusion_into_a_gemm_template_is_two_merges_not_removals_nor_different_models():
    """nu18 D5: default vs max-autotune on the CPU, the README's headline use, said "A and B share little ... They may be
    different models" and listed fc2's matmul as "removed", pairing the two merges inconsistently (fc1's linear kept
    and its relu removed, fc2's epilogue kept and its linear removed). Truth from the post-grad graphs: they are the
    same graph, and each B template computes exactly the FX nodes of two A launches (fc1's linear + relu; fc2's
    linear + mul + add). Each merge reads alike: A's linear pairs with B's template, A's epilogue kernel is "merged
    into" it; nothing is removed, and every op is on both sides (no different_models note)."""
    a, b = _frozen_mlp_reports()
    (ca,), (cb,) = a.compiles, b.compiles
    nodes = lambda c: [(n.name, n.target) for n in c.graphs["post_grad"].nodes]  # noqa: E731
    assert nodes(ca) == nodes(cb)
    expected = []  # (A's first launch, A's other launch, B's template), from the FX nodes each computes
    for t in cb.kernels:
        inside = [k.name for k in ca.kernels if _covered(ca, k.name) <= _covered(cb, t.name)]
        assert set().union(*(_covered(ca, k) for k in inside)) == _covered(cb, t.name), (t.name, inside)
        assert len(inside) == 2 and ca.kernel(inside[0]).language == "extern", inside  # the linear, then its epilogue
        expected.append((inside[0], inside[1], t.name))
    assert len(expected) == 2

    d = inductor_lens.diff(a, b)
    assert d.summary == {"same": 0, "changed": 2, "merged": 2, "split": 0, "only_a": 0, "only_b": 0}, d.text()
    rows = d.compiles[0].kernels
    assert [(k.status, k.a, k.b or k.merged_into) for k in rows] == [
        x for first, other, t in expected for x in (("changed", first, t), ("merged", other, t))
    ]
    for first, other, t in expected:
        pair = next(k for k in rows if k.a == first)
        merged = next(k for k in rows if k.a == other)
        assert pair.merged_with == [other] and "fusion" in pair.changes and "autotune" in pair.changes
        assert f"merged with A's {other}" in pair.what_changed
        assert merged.b is None and merged.fused_b == pair.fused_b and merged.fused_a == ca.kernel(other).call_sites[0]
        assert merged.what_changed.startswith(f"merged into B's {t} (")
        assert merged.source_diff  # the page shows A's epilogue beside B's template
    assert d.compiles[0].launches == {"a": 4, "b": 2}
    # the share is over the ops the launches cover: all 5 on both sides, whatever launch holds them
    assert d.notes == [] and (d.shared["ops_a"], d.shared["ops_b"], d.shared["share"]) == (5, 5, 1.0), d.shared
    assert "removed" not in d.text() and "only_a" not in json.dumps(d.to_dict()["compiles"][0]["kernels"])

    # the converse, B's template split back into a linear and its epilogue: "split", not "added"
    r = inductor_lens.diff(b, a)
    assert r.summary == {"same": 0, "changed": 2, "merged": 0, "split": 2, "only_a": 0, "only_b": 0}, r.text()
    for _, other, t in expected:
        split = next(k for k in r.kernels if k.b == other)
        assert (split.status, split.a, split.split_from) == ("split", None, t), split
        assert split.what_changed.startswith(f"split from A's {t} (")
        assert next(k for k in r.kernels if k.a == t).split_with == [other]
    assert r.notes == []


def test_the_cli_and_the_text_say_what_changed_as_the_page_does(tmp_path):
    """From an earlier trial: the CLI printed the counts only and ``text()`` the kinds of change (``fusion, source``),
    not what changed. Both print each row's ``what_changed``, the words of the page's cell (one writer:
    ``diff.change_text``)."""
    a, b = _frozen_mlp_reports()
    d = inductor_lens.diff(a, b)
    text = d.text()
    for k in d.kernels:
        assert f"{k.a} -> {k.b or '-'}: {k.what_changed}\n" in text + "\n", text
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    a.save_json(pa)
    b.save_json(pb)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run(
        [sys.executable, "-m", "inductor_lens", "diff", str(pa), str(pb), "-o", str(tmp_path / "d.html")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == d.changes_text().strip()
    assert "merged into B's cpp_fused_addmm_relu_0 (relu)" in r.stdout and "+ relu; merged with A's" in r.stdout
    assert "2 changed, 2 merged, 0 only in A, 0 only in B" in r.stderr and "note:" not in r.stderr


def _lowered_conv_report(wraps: str, title: str):
    """One frozen graph whose conv + relu (+ add) a oneDNN pattern of Inductor's replaced by a call of
    ``torch._inductor.fx_passes.mkldnn_fusion.fn`` (``GraphNode.wraps``: the op it lowers to; recorded as
    tests/capturing/test_settings.py's frozen conv checks), run by one extern kernel."""
    from inductor_lens.report.model import Compile, Frame, FusedNode, Graph, GraphNode, Kernel, Report, Trigger

    line = Frame("net.py", 7, "forward", "h = torch.relu(self.conv1(x) + x)")
    node = GraphNode(
        "fn", "call_function", "torch._inductor.fx_passes.mkldnn_fusion.fn", shape=[1, 8, 8, 8],
        user_stack=[line], module_stack=["conv1"], wraps=wraps,
    )  # fmt: skip
    name = f"torch.ops.{wraps}[buf0]"
    c = Compile(
        "0/0 inference", "0/0", "inference", Trigger("first_call", ""), frame="Net.forward",
        graphs={"post_grad": Graph(nodes=[node])},
        fused_nodes=[FusedNode("op0", "extern", fx_nodes=["fn"], kernel=name)],
        kernels=[Kernel(name, "extern", f"buf0 = torch.ops.{wraps}(arg0_1, ...)", fx_nodes=["fn"], call_sites=[["op0"]])],
    )  # fmt: skip
    return Report(torch_version="2.13.0", device="cpu", compiles=[c], title=title)


def test_a_lowering_patterns_node_is_compared_by_the_op_it_wraps():
    """From an earlier trial: the diff read a lowering pattern's node by its ``target``, the Python function
    ``mkldnn_fusion.fn`` that every oneDNN pattern calls: two frozen reports' conv + relu and conv + add + relu read as
    the same op (a pair ``same`` where only the source could tell), and a moved one read "_inductor". It reads the op
    the node ``wraps``, as every other view names it (``GraphNode.short_op``)."""
    a = _lowered_conv_report("mkldnn._convolution_pointwise.default", "conv + relu")
    b = _lowered_conv_report("mkldnn._convolution_pointwise.binary", "conv + add + relu")
    (k,) = inductor_lens.diff(a, b).kernels
    assert k.status == "changed" and "fusion" in k.changes, k
    assert (k.moved_ops_in, k.moved_ops_out) == (
        ["mkldnn._convolution_pointwise.binary"],
        ["mkldnn._convolution_pointwise.default"],
    )
    assert k.ops == ["mkldnn._convolution_pointwise.binary"] and "_inductor" not in k.what_changed
    (same,) = inductor_lens.diff(a, a).kernels
    assert same.status == "same" and same.ops == ["mkldnn._convolution_pointwise.default"]


def _mm_int8(report, int8=True):
    """``report`` with its matmuls' costs counted as int8 ops (``Cost.integer_ops``), as a quantized model's are."""
    compiles = [
        dataclasses.replace(
            c,
            kernels=[
                dataclasses.replace(k, cost=dataclasses.replace(k.cost, integer_ops="int8" if int8 else ""))
                if k.name.startswith("extern_kernels.mm") and k.cost is not None
                else k
                for k in c.kernels
            ],
        )
        for c in report.compiles
    ]
    return dataclasses.replace(report, compiles=compiles)


def test_a_quantized_matmuls_changed_cost_is_said_in_int8_ops_not_flops():
    """nu22: the compare of two int8 models said "FLOPs 1,024 → 2,048" for a quantized matmul, whose multiply-adds are
    integer ops (the roofline says kOP and judges them against the int8 peak). The row names what its counts count:
    int8 ops where both sides count them, "ops" where one side does (a quantized model against its float one)."""
    a, b = _mm_sum_reports(False, [(4, 16), (4, 32)])

    def mm_row(x, y):
        return next(k for k in inductor_lens.diff(x, y).kernels if (k.a or "").startswith("extern_kernels.mm"))

    row = mm_row(_mm_int8(a), _mm_int8(b))
    assert row.ops_word == "int8 ops" and "int8 ops 1,024 → 2,048" in row.what_changed, row.what_changed
    assert "FLOPs" not in row.what_changed
    mixed = mm_row(a, _mm_int8(b))
    assert mixed.ops_word == "ops" and "ops 1,024 → 2,048" in mixed.what_changed and "FLOPs" not in mixed.what_changed
    assert mm_row(a, b).ops_word == "FLOPs"
    data = json.loads(inductor_lens.diff(_mm_int8(a), _mm_int8(b)).to_json())
    assert "int8 ops" in {r["ops_word"] for c in data["compiles"] for r in c["kernels"]}
