"""Issue 24 in the exported page: a kernel's launch arguments and its "Copy reproducer" button (the script
the report holds, copied byte for byte), and Triton's IR stages as tabs with the compiled kernel's resources.
The IR view runs on the H200 fixture when it is recorded (tests/fixtures/make_metal_fixtures.py) and on a
kernel given IR by hand otherwise."""

import dataclasses
import pathlib

import pytest

import inductor_lens
from inductor_lens.report.model import KernelIR

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
SPY = "window.__copied = []; navigator.clipboard.writeText = async (t) => { window.__copied.push(t); };"


def _open(page, path):
    page.add_init_script(SPY)
    page.goto(path.as_uri())
    page.wait_for_selector('[data-view="fusion"] .il-graph[data-ready="1"]', timeout=60000)


def _node_of(compile_, pred):
    kernels = {k.name: k for k in compile_.kernels}
    return next((n, kernels[n.kernel]) for n in compile_.fused_nodes if n.kernel in kernels and pred(kernels[n.kernel]))


@pytest.mark.browser
def test_copy_reproducer_copies_the_reports_script(tmp_path, offline_page, training_report):
    page = offline_page
    c = training_report.compiles[0]
    node, kernel = _node_of(c, lambda k: k.language == "cpp")
    assert kernel.reproducer.startswith("#!/usr/bin/env python3") and kernel.source in kernel.reproducer
    path = tmp_path / "train.html"
    training_report.save_html(path)
    _open(page, path)
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    launch = page.locator('[data-role="launch-args"]')
    rows = launch.locator("tbody tr").all_inner_texts()
    assert len(rows) == len(kernel.launch.args)
    for a, row in zip(kernel.launch.args, rows):
        assert a.name in row and str(a.shape).replace(" ", "") in row.replace(" ", ""), row
    assert launch.locator('[data-role="launch-call"]').inner_text() == kernel.launch.call
    button = launch.locator('[data-role="copy-reproducer"]')
    button.click()
    page.wait_for_function("window.__copied.length === 1")
    assert page.evaluate("window.__copied[0]") == kernel.reproducer
    assert button.inner_text().startswith("Copied")
    assert page.locator('[data-role="ir-tabs"]').count() == 0  # a C++ kernel: no Triton IR
    assert page.locator('[data-role="no-reproducer"]').count() == 0
    # a kernel the capture could write no script for says why where the button would be (nu29 D2: it only vanished)
    note = "argument 'buf29' has a symbolic shape ['u0', 64] and the report holds no value for u0 (...)"
    k = dataclasses.replace(kernel, reproducer="", reproducer_note=note)
    c = dataclasses.replace(c, kernels=[k if x is kernel else x for x in c.kernels])
    dataclasses.replace(training_report, compiles=[c, *training_report.compiles[1:]]).save_html(path)
    _open(page, path)
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    assert launch.locator('[data-role="copy-reproducer"]').count() == 0
    assert launch.locator('[data-role="no-reproducer"]').inner_text() == f"No reproducer: {note}"
    assert page.watch.requests == [] and page.watch.errors == []


def _ir_report(sin_cos_report):
    path = FIXTURES / "gpu_metal_gpt2_ir.json.gz"
    if path.exists():
        report = inductor_lens.load(path)
        with_text = [k for k in report.kernels if k.language == "triton" and k.ir and k.ir.ttir]
        if with_text:  # the H200 recording of 2026-12-01 has resources but no IR texts (see test_metal_fixtures)
            return report, with_text[0], True
    k = sin_cos_report.kernels[0]
    ir = KernelIR(
        ttir="module {\n  tt.func @k() { tt.return }\n}",
        ptx=".version 8.4\n.target sm_90",
        registers=16,
        spills=0,
        source_lines={"ttir": [None, 2, None]},
    )
    k = dataclasses.replace(k, ir=ir)
    c = dataclasses.replace(sin_cos_report.compiles[0], kernels=[k])
    return dataclasses.replace(sin_cos_report, compiles=[c]), k, False


@pytest.mark.browser
def test_ir_tabs_show_each_stage_and_the_resources(tmp_path, offline_page, sin_cos_report):
    page = offline_page
    report, kernel, recorded = _ir_report(sin_cos_report)
    compile_ = next(c for c in report.compiles if any(k is kernel for k in c.kernels))
    path = tmp_path / "ir.html"
    report.save_html(path)
    _open(page, path)
    if compile_.id != report.compiles[0].id:
        page.select_option(".il-compile", compile_.id)
    node = next(n for n in compile_.fused_nodes if n.kernel == kernel.name)
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    tabs = page.locator('[data-role="ir-tabs"]')
    stages = [(s, getattr(kernel.ir, s)) for s in ("ttir", "ttgir", "llir", "ptx", "sass") if getattr(kernel.ir, s)]
    if recorded:
        assert {"ttir", "ttgir", "llir", "ptx"} <= {s for s, _ in stages}
    assert tabs.locator("[data-stage]").evaluate_all("bs => bs.map(b => b.dataset.stage)") == ["source"] + [
        s for s, _ in stages
    ]
    text = tabs.locator('[data-role="ir-text"]')
    for stage, body in stages:
        tabs.locator(f'[data-stage="{stage}"]').click()
        assert text.inner_text().strip() == body.strip()
        assert tabs.locator(f'[data-stage="{stage}"]').get_attribute("aria-pressed") == "true"
        marks = [v for v in kernel.ir.source_lines.get(stage, []) if v is not None]
        shown = text.locator(".il-line[data-src]").evaluate_all("ls => ls.map(l => Number(l.dataset.src))")
        assert shown == marks, stage
    res = tabs.locator('[data-role="ir-resources"]').inner_text()
    assert f"{kernel.ir.registers} registers" in res and f"{kernel.ir.spills} spills" in res
    assert page.watch.requests == [] and page.watch.errors == []


@pytest.mark.browser
def test_compile_panel_says_whether_cuda_graphs_ran(tmp_path, offline_page, sin_cos_report):
    """The compile's summary (the panel before a box is picked) draws ``Compile.cudagraphs``: used with each
    recording and its time, or skipped with torch's reason; nothing outside reduce-overhead."""
    from inductor_lens.report.model import CudaGraphRecording, CudaGraphs

    page = offline_page
    c = sin_cos_report.compiles[0]
    rec = [
        CudaGraphRecording("first run of the graph", 2500.0),
        CudaGraphRecording("re-recorded (recording 2)", 1800.0),
    ]
    for graphs, status, items in (
        (
            CudaGraphs(used=True, recordings=rec),
            "used",
            ["first run of the graph (2.50 ms)", "re-recorded (recording 2) (1.80 ms)"],
        ),
        (
            CudaGraphs(used=False, skip_reason="mutated inputs (1 instances)"),
            "skipped: mutated inputs (1 instances)",
            [],
        ),
    ):
        report = dataclasses.replace(sin_cos_report, compiles=[dataclasses.replace(c, cudagraphs=graphs)])
        path = tmp_path / f"cg_{graphs.used}.html"
        report.save_html(path)
        _open(page, path)
        box = page.locator('[data-role="cudagraphs"]')
        assert box.locator('[data-role="cudagraphs-status"]').inner_text() == status
        assert box.locator("li").all_inner_texts() == items
    path = tmp_path / "plain.html"
    sin_cos_report.save_html(path)
    _open(page, path)
    assert page.locator('[data-role="cudagraphs"]').count() == 0
    assert page.watch.requests == [] and page.watch.errors == []


@pytest.mark.browser
def test_the_kernels_table_lists_each_triton_kernels_resources(tmp_path, offline_page):
    """With ``ir=True`` the kernels table gains registers, shared bytes and spills per kernel, as the compiled kernel
    reported them (H200 fixture); a report without IR shows no such columns (the same page, the C++ compile)."""
    path = FIXTURES / "gpu_metal_gpt2_ir.json.gz"
    report = inductor_lens.load(path)
    compile_ = report.compiles[0]
    html = tmp_path / "ir.html"
    report.save_html(html)
    page = offline_page
    _open(page, html)
    page.locator('[data-tab="kernels"]').click()
    table = page.locator('[data-view="kernels"] table')
    heads = table.locator("th").all_inner_texts()
    assert [t.rstrip(" \u00a0▴▾") for t in heads[-3:]] == ["registers", "shared B", "spills"], heads
    rows = table.locator('tr[data-role="kernel-row"]')
    want = {k.name: k.ir for k in compile_.kernels if k.ir is not None}
    assert rows.count() >= len(want) > 10
    for i in range(rows.count()):
        row = rows.nth(i)
        name = row.get_attribute("data-kernel")
        cells = row.locator('[data-role="kernel-resource"]').all_inner_texts()
        ir = want.get(name)
        expected = [ir.registers, ir.shared_bytes, ir.spills] if ir else [None, None, None]
        assert cells == ["" if v is None else str(v) for v in expected], (name, cells)


@pytest.mark.browser
def test_the_timeline_lists_each_cuda_graph_recording_and_a_skip(tmp_path, offline_page):
    """The timeline of a reduce-overhead compile (H200 fixture) lists each CUDA-graph recording with its reason
    and time under the compile's phases; the compile whose graph mutates an input says why CUDA graphs were
    skipped, naming the input."""

    report = inductor_lens.load(FIXTURES / "gpu_metal_cudagraphs.json.gz")
    used = next(c for c in report.compiles if c.cudagraphs and c.cudagraphs.used and c.cudagraphs.recordings)
    skipped = next(c for c in report.compiles if c.cudagraphs and not c.cudagraphs.used)
    html = tmp_path / "cg.html"
    report.save_html(html)
    page = offline_page
    _open(page, html)
    page.locator('[data-tab="timeline"]').click()
    page.locator(f'[data-view="timeline"] [data-compile="{used.id}"]').click()
    rows = page.locator('[data-view="timeline"] [data-role="timeline-cudagraph"]')
    assert rows.count() == len(used.cudagraphs.recordings)
    for i, r in enumerate(used.cudagraphs.recordings):
        assert f"CUDA graph recorded: {r.reason}" in rows.nth(i).inner_text()
    page.locator(f'[data-view="timeline"] [data-compile="{skipped.id}"]').click()
    text = page.locator('[data-view="timeline"] .il-tl-cudagraph').first.inner_text()
    # the skip as Python says it, the mutated input named (skip_note, derived on load)
    assert skipped.cudagraphs.skip_note.startswith(skipped.cudagraphs.skip_reason + ": acc is written in place")
    assert text == f"CUDA graphs skipped: {skipped.cudagraphs.skip_note}"
    assert page.watch.requests == [] and page.watch.errors == []


_LAUNCH_FITS = """(name) => { const root = document.querySelector('.il-root');
  const t = document.querySelector('.il-panel [data-role="launch-args"] table');
  const src = document.querySelector('.il-panel [data-role="kernel-source"]');
  if (root.dataset.selected !== name || !t || t.offsetParent === null || !src || src.offsetParent === null) return null;
  const panel = t.closest('.il-panel'), scroller = t.parentElement, call = panel.querySelector('[data-role="launch-call"]');
  const right = (e) => e.getBoundingClientRect().right;
  const head = panel.querySelector('[data-role="kernel-source"]').previousElementSibling, copy = head.querySelector('.il-copy');
  return {table: right(t), scroller: right(scroller), panel: panel.getBoundingClientRect().right - 12,
          copy: right(copy), head: head.getBoundingClientRect().height - copy.getBoundingClientRect().height,
          scrolls: [scroller.scrollWidth - scroller.clientWidth, call ? call.scrollWidth - call.clientWidth : 0,
                    panel.scrollWidth - panel.clientWidth]}; }"""


# each (compile, fused node) of ``wanted`` selected in turn, its _LAUNCH_FITS read once it is not null (frames later)
_EACH_FIT = """async ({fits, wanted}) => { const fit = eval(fits), out = [];
  for (const [c, n] of wanted) {
    window.inductorLens.selectIn(c, n);
    let got = fit(n);
    const t0 = performance.now();  // a panel that never shows it: null, after 30 s
    while (got === null && performance.now() - t0 < 30000) { await new Promise((r) => requestAnimationFrame(r)); got = fit(n); }
    out.push(got);
    if (got === null) break;
  }
  return out; }"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [850, 1000])
def test_the_launch_table_and_call_fit_the_panel(tmp_path, offline_context, training_report, width):
    """In JupyterLab at 1280 px the panel is 320-420 px wide: the launch table's stride and dtype columns were cut at
    its edge ("float3"), their scrollbar out of sight below the table, the call line cut too, and a compiler frame's
    long name widened the whole panel. Every kernel's table fits its panel (a name breaks inside itself, sizes between
    their numbers), the call wraps, and nothing scrolls sideways: the recorded GPT-2 (H200) and the CPU MLP step.
    The KERNEL SOURCE heading keeps one line with its Copy button whole (a long name wrapped it and cut Copy)."""
    reports = [training_report]
    gpt2 = FIXTURES / "gpu_metal_gpt2_ir.json.gz"
    if gpt2.exists():
        reports.append(inductor_lens.load(gpt2))
    page = offline_context.new_page(viewport={"width": width, "height": 800})
    try:
        for i, report in enumerate(reports):
            path = tmp_path / f"r{i}.html"
            report.save_html(path)
            _open(page, path)
            wanted = []  # (compile, fused node, kernel): each kernel once, by the first node it runs
            for c in report.compiles:
                kernels = {k.name: k for k in c.kernels if k.launch and k.launch.args}
                wanted += [(c.id, n.name, n.kernel) for n in c.fused_nodes if kernels.pop(n.kernel, None) is not None]
            # selected in turn in one call, each one's fit measured once the panel shows it (a round trip from here
            # per kernel was a quarter of the test's time)
            fits = page.evaluate(_EACH_FIT, {"fits": _LAUNCH_FITS, "wanted": [w[:2] for w in wanted]})
            for (_, _, kernel), fit in zip(wanted, fits):
                assert fit is not None, f"the panel never showed {kernel}'s launch table and source"
                assert fit["table"] <= fit["scroller"] + 0.5 and fit["scroller"] <= fit["panel"] + 0.5, (kernel, fit)
                assert fit["scrolls"] == [0, 0, 0], (kernel, fit)
                # KERNEL SOURCE, the name cut with an ellipsis, Copy whole: one line, the button inside the panel
                assert fit["copy"] <= fit["panel"] + 0.5 and fit["head"] <= 4, (kernel, fit)
            assert len(fits) == len(wanted) >= 2, (i, len(fits), len(wanted))
        assert page.watch.requests == [] and page.watch.errors == []
    finally:
        page.close()


@pytest.mark.browser
def test_a_launch_scalar_is_shown_exactly_under_a_head_that_says_value(tmp_path, offline_page, training_report):
    """Inductor's random seeds are drawn by ``aten.randint.low_out(-9223372036854775808, 9223372036854775807, ...)``:
    the page read the JSON's int as a double and showed 9223372036854776000, under the head "shape". A scalar shows
    the value Python wrote (``LaunchArg.value_text``), and the head of that column says it holds values too."""
    from inductor_lens.report.model import LaunchArg

    c = training_report.compiles[0]
    node, kernel = _node_of(c, lambda k: k.language == "cpp")
    big = LaunchArg(name="high", value=2**63 - 1)
    launch = dataclasses.replace(kernel.launch, args=[*kernel.launch.args, big])
    kernels = [dataclasses.replace(k, launch=launch) if k is kernel else k for k in c.kernels]
    report = dataclasses.replace(
        training_report, compiles=[dataclasses.replace(c, kernels=kernels), *training_report.compiles[1:]]
    )
    assert big.value_text == "9223372036854775807"
    path = tmp_path / "big.html"
    report.save_html(path)
    _open(offline_page, path)
    offline_page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    table = offline_page.locator('[data-role="launch-args"] table')
    heads = table.locator("thead th").all_inner_texts()
    assert "shape / value" in heads and "shape" not in heads, heads
    last = table.locator("tbody tr").last.locator("td").all_inner_texts()
    assert last[0] == "high" and last[-1] == "9223372036854775807", last
    assert offline_page.watch.requests == [] and offline_page.watch.errors == []


@pytest.mark.browser
def test_a_kernel_of_many_fused_nodes_lists_a_dozen_and_folds_the_rest(tmp_path, offline_page):
    """One C++ kernel computing a chain of many fused nodes (151 in a 150-step ``x = sin(x) * (i + 1) + x.mean()``)
    wrote a link to every other node, and its Memory section every buffer, above the kernel source: a dozen are
    said inline, "and N more", the rest in a fold under the sentence, each still a link that selects its node."""
    from inductor_lens.report.model import Kernel
    from tests._synthetic_report import layered_report

    report = layered_report(layers=1, per_layer=20, title="one long kernel")
    c = report.compiles[0]
    name = "cpp_fused_chain_0"
    fused = [dataclasses.replace(n, kind="pointwise", kernel=name) for n in c.fused_nodes]
    kernel = Kernel(
        name=name,
        language="cpp",
        source="// one kernel\n",
        fused_nodes=[n.name for n in fused],
        fx_nodes=[f for n in fused for f in n.fx_nodes],
        call_sites=[[n.name for n in fused]],  # one call computes them all
    )
    report = dataclasses.replace(report, compiles=[dataclasses.replace(c, fused_nodes=fused, kernels=[kernel])])
    path = tmp_path / "chain.html"
    report.save_html(path)
    _open(offline_page, path)
    offline_page.locator('[data-view="fusion"] [data-node="op0"]').first.click()
    note = offline_page.locator('[data-role="shared-kernel"]')
    assert "and 7 more. The kernel source below is shared." in note.inner_text()
    more = note.locator('[data-role="list-more"]')
    assert more.locator("[data-sibling]").count() == 7
    assert note.locator("[data-sibling]").count() == 19  # all the others, 12 inline and 7 folded
    more.locator("summary").click()
    more.locator('[data-sibling="op19"]').click()
    assert "#19, the 20th of 20" in offline_page.locator(".il-panel").first.inner_text()
    assert offline_page.watch.errors == []


@pytest.mark.browser
def test_the_fx_view_folds_many_graph_inputs_into_one_oval(tmp_path, offline_page, training_report):
    """A compiled AdamW step over a BERT takes 205 graph inputs (parameters, gradients, states): the FX view drew
    each as a box, all in one row (a layout 68,406 px wide, unreadable even after Fit). More than a dozen are one
    oval, as the Fusion view folds them; the ops keep their boxes."""
    from inductor_lens.report.model import GraphNode

    c = training_report.compiles[0]
    post = c.graphs["post_grad"]
    extra = [
        GraphNode(name=f"arg{i}_9", op="placeholder", target=f"arg{i}_9", display_name=f"state{i}") for i in range(20)
    ]
    nodes = [*extra, *post.nodes]
    graphs = {**c.graphs, "post_grad": dataclasses.replace(post, nodes=nodes)}
    report = dataclasses.replace(training_report, compiles=[dataclasses.replace(c, graphs=graphs)])
    path = tmp_path / "inputs.html"
    report.save_html(path)
    _open(offline_page, path)
    offline_page.click('[data-tab="fx"]')
    offline_page.wait_for_selector('[data-view="fx"] .il-graph[data-ready="1"]')
    count = sum(1 for n in nodes if n.op == "placeholder")
    oval = offline_page.locator('[data-view="fx"] [data-item="fxin"]')
    assert oval.count() == 1 and oval.text_content().startswith(f"{count} graph inputs")
    assert offline_page.locator('[data-view="fx"] [data-fx^="arg"]').count() == 0
    op = next(n.name for n in nodes if n.op == "call_function")
    assert offline_page.locator(f'[data-view="fx"] [data-fx="{op}"]').count() == 1
    assert offline_page.watch.errors == []


@pytest.mark.browser
def test_why_not_fused_tells_apart_two_nodes_of_one_kernel(tmp_path, offline_page, training_report):
    """nu29 D7: "Why not fused" listed one row per refused neighbour, each named by its kernel: two fused nodes of one
    C++ kernel read as the same row twice. Rows named alike say which node each is."""
    from inductor_lens.report.finish import derive_compile
    from inductor_lens.report.model import FusionDecision

    page = offline_page
    c = next(c for c in training_report.compiles if any(len(k.fused_nodes) > 1 for k in c.kernels))
    k = next(k for k in c.kernels if len(k.fused_nodes) > 1)
    a, b = k.fused_nodes[:2]
    node = next(n for n in c.fused_nodes if n.kernel and n.kernel != k.name and not n.is_glue)
    refusals = [
        FusionDecision(node1=f"{node.name}_x", node2=f"{other}_x", reason="intermediate nodes between node1 & node2",
                       fused1=node.name, fused2=other)
        for other in (a, b)
    ]  # fmt: skip
    c2 = derive_compile(dataclasses.replace(c, fusion_decisions=refusals))  # the rows: FusedNode.refusals
    report = dataclasses.replace(training_report, compiles=[c2 if x is c else x for x in training_report.compiles])
    path = tmp_path / "why.html"
    report.save_html(path)
    _open(page, path)
    if c is not training_report.compiles[0]:
        page.select_option(".il-compile", c.id)
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    # (the node's name is a flex item of its own beside the kernel's, never cut: its own line in innerText)
    rows = [" ".join(t.split()) for t in page.locator('[data-role="why-not-fused"] li button').all_inner_texts()]
    label = lambda n: next(f for f in c.fused_nodes if f.name == n).label or k.name  # noqa: E731
    assert rows == [f"{label(a)} · {a}", f"{label(b)} · {b}"], rows
    # the node's name is whole and inside its row's button in a panel too narrow for the kernel's name
    page.set_viewport_size({"width": 900, "height": 800})
    fits = page.eval_on_selector_all(
        '[data-role="why-not-fused"] li button',
        """bs => bs.map(b => { const t = b.querySelector('.il-why-tell'), r = t.getBoundingClientRect();
                     return [t.scrollWidth <= Math.ceil(r.width), r.right <= b.getBoundingClientRect().right + 1,
                             b.querySelector('.il-why-name').scrollWidth > b.querySelector('.il-why-name').clientWidth]; })""",
    )
    assert fits == [[True, True, True], [True, True, True]], fits  # the kernel's name cut, the node's whole
    # each row as Python made it (FusedNode.refusals): its key, its pair and Inductor's reason
    first = page.locator('[data-role="why-not-fused"] li').first
    assert first.get_attribute("data-other") == a
    assert " ".join(first.inner_text().split()) == (
        f"{label(a)} · {a} ({node.name}_x + {a}_x) intermediate nodes between node1 & node2"
    )
    assert page.watch.errors == []
