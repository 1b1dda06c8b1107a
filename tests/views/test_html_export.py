"""The standalone page: one file, no network, the same front end and DOM hooks as the widget."""

import base64
import dataclasses
import gzip
import hashlib
import html
import json
import pathlib
import re
import shutil
import subprocess

import pytest

import inductor_lens
from inductor_lens.report.model import Report
from inductor_lens.report.rules import fmt_us as _fmt_us
from inductor_lens.views.html import to_html
from tests._browser_fixtures import CHROMIUM_ARGS, source_text
from tests._synthetic_report import HOSTILE, hostile_report, layered_report


def _first_kernel_node(report):
    """(compile, fused node, kernel) of the first fused node whose kernel has source."""
    for c in report.compiles:
        kernels = {k.name: k for k in c.kernels}
        for n in c.fused_nodes:
            k = kernels.get(n.kernel)
            if k is not None and k.source.strip():
                return c, n, k
    raise AssertionError(f"no fused node with a kernel in the report: {report.summary()}")


def _open(page, path):
    page.goto(path.as_uri())
    page.wait_for_selector('[data-view="fusion"] .il-graph[data-ready="1"]', timeout=60000)


def _assert_clean(page):
    w = page.watch
    assert w.requests == [], f"the page made network requests: {w.requests}"
    assert w.errors == [], f"the page logged errors: {w.errors}"
    assert w.dialogs == [], f"the page opened dialogs (script ran from report content): {w.dialogs}"


# ---- the file itself (no browser) ---------------------------------------------------------------


def test_page_is_one_self_contained_file(sin_cos_report):
    page = to_html(sin_cos_report)
    assert page.startswith("<!doctype html>")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page, re.I), "external resource in the page"
    assert "Content-Security-Policy" in page and "connect-src 'none'" in html.unescape(page)
    # the report round-trips through the embedded blob
    blob = re.search(r'<script type="application/octet-stream" id="il-report">([^<]*)</script>', page).group(1)
    data = json.loads(gzip.decompress(base64.b64decode(blob)))
    assert inductor_lens.load(data) == sin_cos_report


def test_header_says_what_the_page_is(sin_cos_report):
    page = to_html(sin_cos_report)
    head = page[: page.index("<main")]
    assert sin_cos_report.title in head and sin_cos_report.torch_version in head and sin_cos_report.device in head
    assert "inductor-lens run" in head and "save_html" in head


def test_fixed_cost_is_small():
    """The page is the report plus a fixed cost (front end + Graphviz WASM); keep it under 1 MB."""
    empty = Report(torch_version="2.13.0", device="cpu")
    assert len(to_html(empty).encode()) < 1_000_000


def test_hostile_text_is_escaped_in_the_file():
    page = to_html(hostile_report())
    # the only <script> blocks are ours: 3 data blocks and the boot module
    assert page.count("<script") == 4 and page.count("</script>") == 4
    assert "<img" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")


def test_save_html_writes_the_file(tmp_path, sin_cos_report):
    out = sin_cos_report.save_html(tmp_path / "r.html")
    assert out == str(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == to_html(sin_cos_report)


# ---- in Chromium, offline ----------------------------------------------------------------------


@pytest.mark.browser
def test_compiler_stack_shows_qualified_names_torch_paths_and_the_frame_notes(tmp_path, offline_page, sin_cos_report):
    """nu25 D5/D6: the panel's call path names each frame as Python decided (``Frame.function_label``,
    ``Frame.file_label``), its group headers read the classes' ``__call__``, and the frames' notes are shown, with
    their count on the folded group's header."""
    page = offline_page
    c, node, kernel = _first_kernel_node(sin_cos_report)
    path = tmp_path / "r.html"
    sin_cos_report.save_html(path)
    _open(page, path)
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    box = page.locator('[data-role="compiler-stack"]')
    heads = box.locator(".il-stagegroup > summary").all_inner_texts()
    aot = next(t for t in heads if t.startswith("AOT Autograd"))
    assert aot.endswith("AotAutograd.__call__ … SerializableAOTDispatchCompiler.__call__"), aot
    handoff = next(t for t in heads if "_TorchCompileInductorWrapper.__call__ …" in t)
    assert handoff.startswith("Inductor") and handoff.endswith("1 note"), handoff
    groups = box.locator(".il-stagegroup")
    for i in range(groups.count()):  # open the folded ones: their frames are built when opened
        if groups.nth(i).get_attribute("open") is None:
            groups.nth(i).locator("> summary").click()
    assert box.locator(".il-stagegroup:not([open])").count() == 0
    text = box.inner_text()
    assert "torch/_dynamo/convert_frame.py:" in text and " in CatchErrorsWrapper.__call__" in text, text
    assert "torch/__init__.py:" in text and " in _TorchCompileInductorWrapper.__call__" in text
    notes = box.locator('[data-role="frame-note"]').all_inner_texts()
    assert notes == [f.note for f in kernel.compiler_stack if f.note] and len(notes) == 3, notes
    # the stages' shared path said in Python's words (Kernel.stage_note), its frames drawn once
    said = box.locator('[data-role="stage-paths"] > p.il-note').first.inner_text()
    assert kernel.stage_shared and said == kernel.stage_note, (said, kernel.stage_note)
    _assert_clean(page)


@pytest.mark.browser
def test_offline_page_click_box_shows_source_and_backtraces(tmp_path, offline_page, training_report):
    page = offline_page
    c, node, kernel = _first_kernel_node(training_report)
    path = tmp_path / "train.html"
    training_report.save_html(path)
    # the page is the window's height at two sizes (the header wraps differently): it was 9 px taller, so the
    # page scrolled when a view took the focus
    for size in ({"width": 1000, "height": 700}, {"width": 1400, "height": 900}):  # the page's own size last
        page.set_viewport_size(size)
        _open(page, path)
        assert page.evaluate("document.documentElement.scrollHeight") == size["height"]
        root = page.locator(".il-root").bounding_box()
        assert root["height"] >= 360 and root["y"] + root["height"] <= size["height"] - 8, root
    if c.id != training_report.compiles[0].id:
        page.select_option(".il-compile", c.id)
    box = page.locator(f'[data-view="fusion"] [data-node="{node.name}"]')
    assert box.get_attribute("data-kernel") == kernel.name
    box.click()
    src = page.locator('[data-role="kernel-source"]')
    assert source_text(src).strip() == kernel.source.strip()
    assert src.locator(".il-line").count() == len(kernel.source.split("\n"))
    fx = page.locator('[data-role="fx-nodes"]').inner_text()
    for f in node.fx_nodes:
        assert f in fx
    user = page.locator('[data-role="user-stack"]').inner_text()
    assert kernel.user_stack, f"capture recorded no user stack for {kernel.name}"
    last = kernel.user_stack[0][-1]
    assert f"{last.file.rsplit('/', 1)[-1]}:{last.line}" in user and last.code.strip() in user, user
    compiler = page.locator('[data-role="compiler-stack"]').inner_text()
    if kernel.compiler_stack:
        assert "Inductor" in compiler and any(f.function in compiler for f in kernel.compiler_stack)
    # a C++ kernel of this compile: painted plain at once, highlighted after the paint (same text and lines,
    # the source's own C++ keywords marked)
    kernels = {k.name: k for k in c.kernels}
    cpp_node, cpp = next(
        (n, kernels[n.kernel])
        for n in c.fused_nodes
        if n.kernel in kernels and kernels[n.kernel].language == "cpp" and kernels[n.kernel].source.strip()
    )
    page.locator(f'[data-view="fusion"] [data-node="{cpp_node.name}"]').click()
    assert src.inner_text().strip() == cpp.source.strip()
    page.locator('[data-role="kernel-source"][data-highlighted-source="done"]').wait_for()
    assert src.inner_text().strip() == cpp.source.strip()
    assert src.locator(".il-line").count() == len(cpp.source.split("\n"))
    words = {w for w in ("for", "if", "return", "auto", "const", "extern") if re.search(rf"\b{w}\b", cpp.source)}
    assert words and words <= set(src.locator(".hljs-keyword").all_inner_texts()), words
    _assert_clean(page)


@pytest.mark.browser
def test_each_source_line_of_your_code_is_the_line_that_ran_with_the_calls_that_led_to_it(
    tmp_path, offline_page, stack_training_report
):
    """A fused node's "Your code" section: one entry per source line (FusedNode.user_stack), each the innermost
    frame of the user's (the line that ran), then the user's calls that led to it on one line, outermost first (a
    block's line, called from the model's loop over its layers)."""
    page = offline_page
    c = stack_training_report.compiles[0]
    node = next(n for n in c.fused_nodes if any(len([f for f in st if f.is_user]) > 1 for st in n.user_stack))
    path = tmp_path / "stack.html"
    stack_training_report.save_html(path)
    _open(page, path)
    page.fill(".il-search-input", node.name)
    page.keyboard.press("Enter")
    assert page.locator(".il-root").get_attribute("data-selected") == node.name
    stacks = page.locator('[data-role="user-stack"] > .il-stack')
    assert stacks.count() == len(node.user_stack)
    n = len(node.user_stack)
    assert f"Your code ({n} source line{'s' if n > 1 else ''})" in page.locator(".il-panel").text_content()
    for i, st in enumerate(node.user_stack):
        user = [f for f in st if f.is_user]
        shown = stacks.nth(i)
        ran = shown.locator(":scope > ol > li")
        assert ran.count() == 1 and ran.inner_text().startswith(f"{user[-1].file.rsplit('/', 1)[-1]}:{user[-1].line}")
        callers = " › ".join(f"{f.file.rsplit('/', 1)[-1]}:{f.line} {f.function}" for f in user[:-1])
        said = shown.locator('[data-role="callers"]')
        assert (said.text_content() if callers else said.count()) == (f"called from {callers}" if callers else 0)


@pytest.mark.browser
def _call_near(report):
    """``report`` with its torch.compile() calls 1 ms before its first compile began: the Timeline draws such a call
    on the compile's own span, one further before it than the compile lasts only as a note (timeline.js); how far
    the capture's call is depends on the worker (the first compile in a process waits ~0.6 s for dynamo's import)."""
    import dataclasses

    t = report.compiles[0].trigger.time_us
    calls = [dataclasses.replace(c, time_us=t - 1000.0) for c in report.compile_calls]
    return dataclasses.replace(report, compile_calls=calls)


def test_offline_page_views_search_and_keyboard(tmp_path, offline_page, training_report):
    page = offline_page
    training_report = _call_near(training_report)  # the timeline's label below says the call's time
    path = tmp_path / "train.html"
    training_report.save_html(path)
    _open(page, path)
    first = training_report.compiles[0]
    # a training forward's outputs say where they go (Compile.returned_outputs / saved_outputs), and its panel why
    # it is a training forward (Compile.graph_note)
    outs = page.locator('[data-view="fusion"] .il-output:not(.il-stub)')
    said = [(o.locator("text").nth(0).text_content(), o.locator("text").nth(1).text_content()) for o in outs.all()]
    (ret,) = first.returned_outputs
    name = first.output_names  # each box by what holds its buffer (softmax, not buf10)
    # one oval per place in the graph's return (Compile.outputs): the softmax returned and saved is two
    assert said.count((name[ret], "output · returned")) == 1 and ret in first.saved_outputs
    saved = [s for s in said if s != (name[ret], "output · returned")]
    assert saved and all(v == "saved for backward" for _, v in saved)
    assert {n for n, _ in saved} <= {name.get(b, b) for b in first.saved_outputs}
    made = [b for b in first.saved_outputs if b not in first.graph_inputs]  # the inputs it saves (x) are not drawn
    assert len(said) == len([o for o in first.outputs if o.drawn]) == 1 + len(made)
    assert page.locator('[data-role="graph-note"]').text_content() == first.graph_note
    # every option of the compile selector names its function, forward() too (a graph kind's name: it was left
    # out), a method with its class
    assert page.locator(".il-compile option").first.text_content().startswith(f"{first.id} · MLP.forward() · ")
    # keyboard: focus the lens, ArrowDown selects the first fused node in execution order
    page.locator(".il-root").focus()
    page.keyboard.press("ArrowDown")
    assert page.locator(".il-root").get_attribute("data-selected") == first.fused_nodes[0].name
    assert page.locator(f'[data-node="{first.fused_nodes[0].name}"]').get_attribute("class").count("il-selected") == 1
    # FX view: clicking an op selects the fused node that computes it, and its cluster lights up
    page.click('[data-tab="fx"]')
    page.wait_for_selector('[data-view="fx"] .il-graph[data-ready="1"]')
    target = first.fused_nodes[-1]
    fx_name = target.fx_nodes[0]
    page.locator(f'[data-view="fx"] [data-fx="{fx_name}"]').click()
    assert page.locator(".il-root").get_attribute("data-selected") == target.name
    assert "il-selected" in page.locator(f'[data-view="fx"] [data-fx="{fx_name}"]').get_attribute("class")
    # only the post-grad graph is grouped by kernel, and its hint says so; the dynamo graph's says it is not (a new
    # user read "grouped by the kernel" over a flat chain of 177 dynamo nodes)
    hint = page.locator('[data-view="fx"] [data-role="fx-hint"]')
    assert "grouped by the kernel" in hint.inner_text()
    assert "dynamo" in first.graphs
    page.select_option('[data-view="fx"] .il-fxgraph', "dynamo")
    page.wait_for_function("() => document.querySelector('.il-fxgraph').value === 'dynamo'")
    assert "not grouped by kernel" in hint.inner_text()
    page.select_option('[data-view="fx"] .il-fxgraph', "post_grad")
    # search by op name -> Enter selects
    page.click('[data-tab="fusion"]')
    other = first.fused_nodes[0]
    page.fill(".il-search-input", other.fx_nodes[0])
    page.keyboard.press("Enter")
    assert page.locator(".il-root").get_attribute("data-selected") == other.name
    # timeline: torch.compile() call and each compile's trigger
    page.click('[data-tab="timeline"]')
    tl = page.locator('[data-view="timeline"]').inner_text()
    # the answer in words is Python's (Report.when), drawn as it is
    assert page.locator('[data-view="timeline"] .il-tl-words').inner_text() == training_report.when
    assert "and only wrapped " in training_report.when
    # each call is cited by Python's words too (Trigger.line; CompileCall.line on the whole capture's axis)
    assert training_report.compiles[0].trigger.line and training_report.compiles[0].trigger.line in tl
    # the span said in words is the compile's own, from its trigger to its last phase's end (it said the axis's,
    # with the margin drawn around it: "6.94 s to 89.51 s" for a compile that began at 8.53 s)
    first = training_report.compiles[0]
    ends = [first.trigger.time_us] + [p.start_us + p.duration_us for p in first.phases]
    starts = [first.trigger.time_us] + [p.start_us for p in first.phases]
    said = page.locator('[data-view="timeline"] .il-tl-passes').first.inner_text()
    # (said as what the unticked box shows: "the axis now spans" read as what ticking it would do, nu27)
    assert f"(unticked, the axis spans compile {first.id} only: {_fmt_us(min(starts))} to {_fmt_us(max(ends))}" in said
    # and the torch.compile() call that only wrapped it, drawn beside it (Report.wrapped_by), said apart
    call = training_report.compile_calls[0]
    # (its time as the page formats it, which Python's fmt_us writes alike, ties included: 374.5 µs is "375 µs")
    assert said.endswith(f", and the torch.compile() call that wrapped it at {_fmt_us(call.time_us)})"), said
    page.click('[data-view="timeline"] [data-role="timeline-all"]')
    whole = page.locator('[data-view="timeline"]').inner_text()
    assert f"wraps only · {training_report.compile_calls[0].line}" in whole
    page.click('[data-view="timeline"] [data-role="timeline-all"]')
    for c in training_report.compiles:
        assert c.id in tl
    # each phase says what it is (Phase.gloss beside its name where it fits, never cut; Phase.what in its tooltip)
    named = page.evaluate(
        """() => [...document.querySelectorAll('[data-view="timeline"] .il-tl-named')].map((n) => {
          const box = n.getBoundingClientRect(), g = n.querySelector('.il-tl-gloss'), r = g && g.getBoundingClientRect();
          return {title: n.title, name: n.querySelector('.il-tl-name').textContent,
                  shown: !!r && r.top < box.bottom - 0.5, whole: !!r && r.right <= box.right + 0.5};
        })"""
    )
    fusion = next(n for n in named if n["name"] == "Scheduler.__init__")
    assert fusion["title"].startswith("Scheduler.__init__: the scheduler orders the IR nodes and fuses them"), fusion
    assert fusion["shown"] and any(n["shown"] for n in named if n["name"] != "Scheduler.__init__")
    assert all(n["whole"] for n in named if n["shown"]), [n for n in named if n["shown"] and not n["whole"]]
    # phases of the selected (first) compile; Inductor's many small pass.* phases only on request
    passes = [p.name for p in first.phases if p.name.startswith("pass.")]
    assert passes and "GraphLowering.run" in tl and passes[0] not in tl
    page.check('[data-role="show-passes"]')
    assert passes[0] in page.locator('[data-view="timeline"]').inner_text()
    _assert_clean(page)


@pytest.mark.browser
def test_hostile_report_renders_literally_and_runs_nothing(tmp_path, offline_page):
    page = offline_page
    report = hostile_report()
    path = tmp_path / "hostile.html"
    report.save_html(path)
    _open(page, path)
    n = report.compiles[0].fused_nodes[0]
    page.locator('[data-view="fusion"] [data-node]').first.wait_for()
    assert page.locator('[data-view="fusion"] [data-node]').first.get_attribute("data-node") == n.name
    page.locator('[data-view="fusion"] [data-node]').first.click()
    assert HOSTILE in source_text(page.locator('[data-role="kernel-source"]'))
    assert HOSTILE in page.locator('[data-role="user-stack"]').inner_text()
    assert HOSTILE in page.locator('[data-role="fx-nodes"]').inner_text()
    assert page.locator('[data-role="launch"]').inner_text().count(HOSTILE) >= 4  # metadata keys and values
    assert HOSTILE in page.locator('[data-role="autotune"]').inner_text()
    assert HOSTILE in page.locator('[data-role="profile"]').locator("xpath=..").inner_text()  # device, in its heading
    page.keyboard.press("Escape")
    assert HOSTILE in page.locator('[data-role="top-kernels"]').inner_text()
    assert f"title {HOSTILE}" == page.locator("h1").inner_text()
    for view in ("fx", "timeline"):
        page.click(f'[data-tab="{view}"]')
        page.wait_for_timeout(100) if view == "timeline" else page.wait_for_selector(
            '[data-view="fx"] .il-graph[data-ready="1"]'
        )
    assert HOSTILE in page.locator('[data-view="timeline"]').inner_text()
    # nothing from the report became markup
    assert page.locator("#il-app img, #il-app script, #il-app iframe, #il-app svg svg").count() == 0
    assert page.evaluate("() => document.querySelectorAll('img').length") == 0
    _assert_clean(page)


@pytest.mark.browser
def test_large_graph_collapses_by_module_and_expands_on_click(tmp_path, offline_page):
    page = offline_page
    report = layered_report(layers=12, per_layer=16)  # 192 fused nodes, like a 12-layer GPT-2 forward
    path = tmp_path / "big.html"
    report.save_html(path)
    _open(page, path)
    groups = page.locator('[data-view="fusion"] [data-module]')
    assert groups.count() > 0, "a 192-node graph should start collapsed by module"
    shown = page.locator('[data-view="fusion"] [data-node]').count()
    assert shown + groups.count() <= 60
    module = groups.last.get_attribute("data-module")
    count = int(groups.last.get_attribute("data-count"))
    page.click('button:has-text("Fit")')
    groups.last.click()
    page.wait_for_selector(f'[data-view="fusion"] [data-module="{module}"]', state="detached")
    assert (
        page.locator('[data-view="fusion"] [data-node]').count()
        + page.locator('[data-view="fusion"] [data-module]').count()
        > shown + groups.count() - 1
    )
    # selecting a node hidden in a collapsed module expands it
    hidden = report.compiles[0].fused_nodes[-1].name
    page.evaluate("(n) => window.inductorLens.select(n)", hidden)
    page.wait_for_selector(f'[data-node="{hidden}"].il-selected')
    assert count > 1
    _assert_clean(page)


@pytest.mark.browser
@pytest.mark.parametrize("offline_page", ["dark"], indirect=True)
def test_dark_scheme_uses_dark_background(tmp_path, offline_page, sin_cos_report):
    page = offline_page
    path = tmp_path / "r.html"
    sin_cos_report.save_html(path)
    _open(page, path)
    bg = page.evaluate("() => getComputedStyle(document.querySelector('.il-root')).backgroundColor")
    rgb = [int(x) for x in re.findall(r"\d+", bg)[:3]]
    assert sum(rgb) < 3 * 80, bg
    _assert_clean(page)


@pytest.mark.browser
def test_ops_without_a_user_line_say_why_and_show_module_and_call_site(tmp_path, offline_page, training_report):
    """torch.nn containers (nn.Sequential of nn.Linear) leave dynamo no user line: the panel explains."""
    import dataclasses

    c = training_report.compiles[0]
    graphs = {
        name: dataclasses.replace(g, nodes=[dataclasses.replace(n, user_stack=[]) for n in g.nodes])
        for name, g in c.graphs.items()
    }
    from inductor_lens.report.finish import finish_compile

    # as a capture of such code records it: no stack anywhere, and the derived fields worked out from that
    bare = finish_compile(
        dataclasses.replace(
            c,
            graphs=graphs,
            kernels=[dataclasses.replace(k, user_stack=[], user_lines=[]) for k in c.kernels],
            fused_nodes=[dataclasses.replace(n, user_stack=[], user_lines=[]) for n in c.fused_nodes],
        )
    )
    report = dataclasses.replace(training_report, compiles=[bare])
    path = tmp_path / "bare.html"
    report.save_html(path)
    page = offline_page
    _open(page, path)
    node = next(n for n in bare.fused_nodes if n.kind == "extern")
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    user = page.locator('[data-role="user-stack"]').inner_text()
    owner = [fx for fx in bare.graphs["post_grad"].nodes if fx.name in node.fx_nodes and fx.module_stack][-1]
    module = f"{owner.module_stack[-1]} ({owner.module_types[-1]})"  # e.g. "fc2 (Linear)"
    call = bare.trigger.user_stack[-1]
    assert "no source line" in user and module in user and f"{call.line}" in user and call.code.strip() in user
    # why it is a call, not generated code (Kernel.extern_why), at the head of its panel
    kernel = next(k for k in bare.kernels if k.name == node.kernel)
    assert kernel.extern_why.startswith("A library call: Inductor calls an existing kernel for ")
    assert page.locator('.il-panel [data-role="extern-why"]').inner_text() == kernel.extern_why
    _assert_clean(page)


@pytest.mark.browser
def test_an_imported_kernels_panel_says_what_a_torch_trace_log_cannot_hold(tmp_path, offline_page):
    """An imported C++ kernel's panel dropped "Lowered by" and "Where its ops were merged" without a word, and its
    call path said "No compiler backtrace recorded." (read as a glitch): each section says, in Python's words
    (``Compile.unrecorded``, ``FusedNode.merge_text``), that a TORCH_TRACE log holds none and how to see it. An
    extern call keeps its own merge text. (nu28's transformer block, imported: tests/fixtures/trace-block.)"""
    from inductor_lens.report.rules import TRACE_UNRECORDED

    report = inductor_lens.load_trace(str(pathlib.Path(__file__).parents[1] / "fixtures" / "trace-block"))
    c = report.compiles[0]
    kernels = {k.name: k for k in c.kernels}
    cpp = next(n for n in c.fused_nodes if n.kernel in kernels and kernels[n.kernel].language == "cpp")
    mm = next(n for n in c.fused_nodes if n.kind == "extern")
    path = tmp_path / "imported.html"
    report.save_html(path)
    page = offline_page
    _open(page, path)
    page.locator(f'[data-view="fusion"] [data-node="{cpp.name}"]').click()
    panel = page.locator(".il-panel")
    said = {role: panel.locator(f'[data-role="{role}"]').inner_text() for role in ("merge", "lowered-by")}
    assert said == {"merge": TRACE_UNRECORDED["merge"], "lowered-by": TRACE_UNRECORDED["lowered_by"]}
    assert cpp.merge_text == TRACE_UNRECORDED["merge"]  # no op of it known (no provenance): not even a count
    compiler = panel.locator('[data-role="compiler-stack"]').inner_text()
    assert compiler == TRACE_UNRECORDED["compiler_stack"] and "inductor-lens run" in compiler
    page.locator(f'[data-view="fusion"] [data-node="{mm.name}"]').click()
    assert panel.locator('[data-role="merge"]').inner_text() == mm.merge_text
    assert mm.merge_text.startswith("An extern call (mm:")
    _assert_clean(page)


@pytest.mark.browser
def test_a_profiled_cpp_kernels_panel_says_its_source_is_instrumented(tmp_path, offline_page):
    """nu28 D5: the recorded profiled C++ GEMM template (``--profile``, ``cpp.enable_kernel_profile``): its panel says,
    above the source, that it is instrumented (``Kernel.source_note``, Python's words), as a report made before the
    note gets it on loading once its derived fields are made again."""
    from inductor_lens.report.finish import derive_compile

    fixtures = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
    report = inductor_lens.load(fixtures / "cpu_profiled_mlp_max_autotune.json")
    report = dataclasses.replace(report, compiles=[derive_compile(c) for c in report.compiles])
    kernel = report.kernels[1]
    assert "record_graph_0_gemm_m32n64k256_kernel_" in kernel.source
    assert "profiler event graph_0_gemm_m32n64k256_kernel." in kernel.source_note
    path = tmp_path / "profiled.html"
    report.save_html(path)
    page = offline_page
    _open(page, path)
    node = next(n for n in report.compiles[0].fused_nodes if n.kernel == kernel.name)
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    assert page.locator('.il-panel [data-role="source-note"]').inner_text() == kernel.source_note
    _assert_clean(page)


@pytest.mark.browser
def test_a_profile_of_one_run_is_said_above_the_top_kernels_and_the_roofline(tmp_path, offline_page):
    """nu28 D6: the recorded frozen MLP profiled in one run (``run --profile``, its graph called twice): the top-kernels
    table and the roofline rank single timings; above each, Python's words say so (``StepProfile.few_runs``)."""
    fixtures = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
    report = inductor_lens.load(fixtures / "cpu_profiled_mlp_default.json")
    assert report.profile.few_runs.startswith("One run: each kernel's time is a single timing, not a ranking to trust")
    path = tmp_path / "one_run.html"
    report.save_html(path)
    page = offline_page
    _open(page, path)
    top = page.locator('aside.il-panel [data-role="top-kernels"]').locator("..")
    assert top.locator('[data-role="few-runs"]').inner_text() == report.profile.few_runs
    page.click('[data-tab="roofline"]')
    roof = page.locator('[data-view="roofline"] [data-role="perf-summary"] [data-role="few-runs"]')
    assert roof.inner_text() == report.profile.few_runs
    assert "· 1 run after 1 warm-up run" in page.locator('[data-role="perf-summary"]').inner_text()
    _assert_clean(page)


# ---- the CSP pins the inline script: injected markup cannot run ------------------------------------


def test_csp_pins_the_boot_script_by_hash_not_unsafe_inline():
    from inductor_lens.views.html import _BOOT, _CSP

    assert "'unsafe-inline'" not in _CSP.split("script-src", 1)[1].split(";", 1)[0]
    digest = base64.b64encode(hashlib.sha256(_BOOT.encode()).digest()).decode()
    page = to_html(Report(torch_version="2", device="cpu"))
    assert f"'sha256-{digest}'" in html.unescape(page)
    assert f'<script type="module">{_BOOT}</script>' in page  # the hashed text is exactly the script's


@pytest.mark.browser
def test_injected_inline_script_is_blocked_and_the_page_still_starts(tmp_path, offline_page):
    page = offline_page
    page.watch.allow_console = ["Content Security Policy", "Content-Security-Policy"]
    report = hostile_report()
    k = report.compiles[0].kernels[0]  # a bad value: written as null, the page starts
    k = dataclasses.replace(k, profile=dataclasses.replace(k.profile, share=float("nan")))
    report = dataclasses.replace(report, compiles=[dataclasses.replace(report.compiles[0], kernels=[k])])
    path = tmp_path / "injected.html"
    report.save_html(path)
    text = path.read_text(encoding="utf-8")
    # as if escaping had failed: markup from a report lands in the page as HTML
    evil = (
        '<script>window.__injected = 1; alert("inline ran")</script>'
        '<img src="data:," onerror="window.__injected2 = 1; alert(2)">'
    )
    path.write_text(text.replace("<main ", evil + "<main ", 1), encoding="utf-8")
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    _open(page, path)
    assert page.evaluate("window.__injected === undefined && window.__injected2 === undefined")
    assert page.watch.dialogs == []
    assert violations, "Chromium reported no CSP violation for the injected script"
    assert page.locator('[data-view="fusion"] [data-node]').count() >= 1


@pytest.mark.browser
def test_a_huge_kernel_source_is_drawn_in_pieces_with_a_show_more_control(tmp_path, offline_page):
    # a 6 MB C++ kernel (120,000 lines): the click draws only its first piece, the rest on demand
    import dataclasses

    from inductor_lens.report.model import Report

    base = layered_report(layers=1, per_layer=4)
    c = base.compiles[0]
    big = "\n".join(f"    out_ptr0[{i}] = in_ptr0[{i}] * 2.0f; // line {i + 1}" for i in range(120_000))
    kernels = [dataclasses.replace(k, source=big) if k.language == "cpp" else k for k in c.kernels]
    report = dataclasses.replace(base, compiles=[dataclasses.replace(c, kernels=kernels)])
    assert isinstance(report, Report)
    node = next(n for n in c.fused_nodes if n.kernel.startswith("cpp_"))
    path = tmp_path / "huge.html"
    report.save_html(path)
    page = offline_page
    _open(page, path)
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    src = page.locator('[data-role="kernel-source"]')
    src.wait_for()
    assert src.get_attribute("data-lines") == "120000"
    shown = int(src.get_attribute("data-shown-lines"))
    assert 0 < shown <= 2000 and src.locator(".il-line").count() == shown
    assert src.locator(".il-line").first.inner_text() == "    out_ptr0[0] = in_ptr0[0] * 2.0f; // line 1"
    more = src.locator('[data-role="show-more"]')
    assert "more of 118000 lines" in more.inner_text()
    page.locator('[data-role="kernel-source"][data-highlighted-source="done"]').wait_for()
    assert src.locator(".hljs-comment").count() == shown  # the drawn piece is highlighted
    # the click alone, where the control is: a real click scrolls it into view first, which draws a piece by
    # itself (the scroll path, below), so one click would race two pieces
    more.dispatch_event("click")
    page.wait_for_function(
        "() => document.querySelector('[data-role=kernel-source]').dataset.shownLines === String(2 * 2000)"
    )
    assert src.locator(".il-line").count() == 4000
    assert src.locator(".il-line").nth(2000).inner_text() == "    out_ptr0[2000] = in_ptr0[2000] * 2.0f; // line 2001"
    page.locator('[data-role="kernel-source"][data-highlighted-source="done"]').wait_for()
    assert src.locator(".hljs-comment").count() == 4000
    assert "more of 116000 lines" in more.inner_text()
    # scrolling the control into view draws the next piece with no click
    more.scroll_into_view_if_needed()
    page.wait_for_function("() => +document.querySelector('[data-role=kernel-source]').dataset.shownLines >= 6000")
    assert src.locator(".il-line").nth(4000).inner_text() == "    out_ptr0[4000] = in_ptr0[4000] * 2.0f; // line 4001"
    _assert_clean(page)


def _chromium_cli(tmp_path, *args) -> str:
    """``chromium --headless ARGS`` as a user runs it (its own profile folder); its stdout."""
    exe = shutil.which("chromium")
    if not exe:
        pytest.fail("chromium is not on PATH (apt-get install chromium); browser tests need it", pytrace=False)
    cmd = [exe, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=True).stdout.decode("utf-8")


@pytest.mark.browser
def test_a_headless_capture_with_virtual_time_shows_the_graph(tmp_path):
    """``chromium --headless --virtual-time-budget=15000 --screenshot`` (or ``--print-to-pdf``) of a page: virtual time
    runs ahead while the page waits and never waits for the layout worker, so the capture showed "laying out 3
    boxes…" (nu19 O-g). The page lays such a graph out on its own thread. Without a budget the capture is taken at
    the load event, before the page is drawn: the page says so, and what to pass."""
    report = layered_report(layers=1, per_layer=3, title="three boxes")
    path = tmp_path / "r.html"
    report.save_html(path)
    dom = _chromium_cli(tmp_path, "--virtual-time-budget=15000", "--dump-dom", path.as_uri())
    fusion = dom[dom.index('data-view="fusion"') :]
    assert re.search(r'class="il-graph"[^>]*data-ready="1"', fusion), "the graph was not drawn"
    for n in report.compiles[0].fused_nodes:
        assert f'data-node="{n.name}"' in fusion, n.name
    assert "laying out" not in dom and "Drawing the report" not in dom
    early = _chromium_cli(tmp_path, "--dump-dom", path.as_uri())
    assert "Drawing the report" in early and "--virtual-time-budget=" in early


@pytest.mark.browser
def test_the_boot_note_stays_while_the_report_is_unpacked(tmp_path, offline_page):
    """The note that says how to get a drawing from a headless capture (``--virtual-time-budget``) was removed as the
    front end started, before the report was unpacked: ``chromium --headless --screenshot`` taken in that window was
    a blank page with no note. It stays until the report is read (here the unpacking never ends)."""
    page = offline_page
    # the first gunzip (the bundle, by the page's boot script) is real; the report's and the engine's never end
    page.add_init_script(
        """const Real = window.DecompressionStream; let n = 0;
           window.DecompressionStream = function (f) {
             return n++ === 0 ? new Real(f)
               : new TransformStream({ transform() {}, flush() { return new Promise(() => {}); } }); };"""
    )
    report = layered_report(layers=1, per_layer=3)
    path = tmp_path / "r.html"
    report.save_html(path)
    page.goto(path.as_uri())
    page.wait_for_function("() => performance.getEntriesByName('il:mount').length > 0")
    page.wait_for_timeout(200)
    note = page.locator(".il-boot")
    assert note.is_visible() and "--virtual-time-budget=" in note.inner_text()


@pytest.mark.browser
@pytest.mark.parametrize("offline_page", ["dark"], indirect=True)
def test_a_printed_page_shows_the_whole_graph_and_the_panel_in_light_colours(tmp_path, offline_page):
    """Printed (the browser's Print, ``--print-to-pdf``), even from the dark scheme: the whole graph at the page's
    width without the pan and zoom, the selected kernel's panel below it, whole, no on-screen controls; the screen
    view back afterwards."""
    page = offline_page
    report = layered_report(layers=1, per_layer=3)
    path = tmp_path / "r.html"
    report.save_html(path)
    _open(page, path)
    node = report.compiles[0].fused_nodes[1]
    page.locator(f'[data-view="fusion"] [data-node="{node.name}"]').click()
    page.wait_for_selector('[data-role="kernel-source"]')
    viewport = page.locator('[data-view="fusion"] .il-viewport')
    on_screen = viewport.get_attribute("transform")
    page.emulate_media(media="print")
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    svg = page.locator('[data-view="fusion"] .il-svg')
    assert svg.get_attribute("viewBox") and viewport.get_attribute("transform") is None
    frame = svg.bounding_box()
    assert 0 < frame["width"] <= page.viewport_size["width"]
    for n in report.compiles[0].fused_nodes:
        b = page.locator(f'[data-view="fusion"] [data-node="{n.name}"]').bounding_box()
        assert frame["x"] - 1 <= b["x"] and b["x"] + b["width"] <= frame["x"] + frame["width"] + 1, n.name
        assert frame["y"] - 1 <= b["y"] and b["y"] + b["height"] <= frame["y"] + frame["height"] + 1, n.name
    for control in (".il-tabs", ".il-search", ".il-zoom", '[data-action="expand-all"]', ".il-splitter"):
        assert page.evaluate(f"() => getComputedStyle(document.querySelector('{control}')).display") == "none"
    panel = page.locator(".il-panel")
    assert panel.bounding_box()["y"] >= frame["y"] + frame["height"]
    assert panel.evaluate("(e) => e.scrollHeight <= e.clientHeight + 1"), "the panel is cut"
    assert node.kernel in panel.inner_text()
    bg = page.evaluate("() => getComputedStyle(document.querySelector('.il-root')).backgroundColor")
    assert sum(int(x) for x in re.findall(r"\d+", bg)[:3]) > 3 * 240, bg
    page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    assert svg.get_attribute("viewBox") is None and viewport.get_attribute("transform") == on_screen
    _assert_clean(page)


# the layout worker gets its requests but never answers one: the page's graph layout stays pending
_WORKER_NEVER_ANSWERS = """
const W = window.Worker;
window.Worker = class extends W { postMessage(m, ...a) { if (m && m.dot) return; return super.postMessage(m, ...a); } };
"""

# what a print shows, read in a beforeprint listener added after the page's own (they run in that order)
_AT_PRINT = """() => {
  window.__printed = [];
  addEventListener("beforeprint", () => {
    const pane = document.querySelector('[data-view="fusion"] .il-graph');
    window.__printed.push({
      text: pane.innerText,
      nodes: [...pane.querySelectorAll("[data-node]")].map((g) => g.dataset.node),
      viewBox: pane.querySelector(".il-svg").getAttribute("viewBox"),
      ready: pane.dataset.ready || null,
    });
  });
}"""


@pytest.mark.browser
def test_a_page_printed_while_its_first_layout_is_pending_prints_the_graph(tmp_path, offline_page):
    """A print cannot wait for the layout worker (the page is printed once beforeprint's listeners return): printed
    while the first layout was pending, the page printed "laying out 3 boxes…" in place of the graph. Once a layout is
    late, the page makes Graphviz on its own thread too, and a print lays the graph out there and draws it, whole, with
    the panel below (Chromium's own print: ``page.pdf()``, which fires beforeprint); after the print the screen shows
    the graph as it opens, and the worker's answer, if it came, would draw nothing more."""
    page = offline_page
    page.add_init_script(_WORKER_NEVER_ANSWERS)
    report = layered_report(layers=1, per_layer=3)
    path = tmp_path / "r.html"
    report.save_html(path)
    page.goto(path.as_uri())
    pane = page.locator('[data-view="fusion"] .il-graph')
    page.wait_for_function("() => performance.getEntriesByName('il:layout-here').length > 0", timeout=30000)
    assert "laying out 3 boxes" in pane.inner_text() and pane.get_attribute("data-ready") is None
    page.evaluate(_AT_PRINT)
    pdf = page.pdf()
    assert pdf.startswith(b"%PDF")
    (printed,) = page.evaluate("window.__printed")
    names = [n.name for n in report.compiles[0].fused_nodes]
    assert printed["ready"] == "1" and "laying out" not in printed["text"], printed
    assert sorted(printed["nodes"]) == sorted(names), printed
    assert printed["viewBox"], "the graph was not drawn whole for the paper"
    # afterprint: the graph on screen, at its opening view, and nothing left waiting
    svg = page.locator('[data-view="fusion"] .il-svg')
    assert svg.get_attribute("viewBox") is None
    assert page.locator('[data-view="fusion"] .il-viewport').get_attribute("transform")
    assert page.evaluate("() => inductorLens.store.get().compileId") == report.compiles[0].id
    _assert_clean(page)


@pytest.mark.browser
def test_a_compare_page_printed_while_its_layout_is_pending_prints_the_graph(tmp_path, offline_page):
    """The compare page's graph is laid out like the lens's (graphview.js layoutAwaited): printed while its layout was
    pending, it printed "laying out 3 boxes…" (compare.js laid it out apart, where printGraphs could not reach it)."""
    page = offline_page
    page.add_init_script(_WORKER_NEVER_ANSWERS)
    report = layered_report(layers=1, per_layer=3)
    path = inductor_lens.diff(report, report).save_html(tmp_path / "d.html")
    page.goto(pathlib.Path(path).as_uri())
    pane = page.locator('[data-view="compare"] .il-graph')
    page.wait_for_function("() => performance.getEntriesByName('il:layout-here').length > 0", timeout=30000)
    assert "laying out 3 boxes" in pane.inner_text() and pane.get_attribute("data-ready") is None
    page.evaluate(_AT_PRINT.replace('[data-view="fusion"]', '[data-view="compare"]'))
    assert page.pdf().startswith(b"%PDF")
    (printed,) = page.evaluate("window.__printed")
    names = [n.name for n in report.compiles[0].fused_nodes]
    assert printed["ready"] == "1" and "laying out" not in printed["text"], printed
    assert sorted(printed["nodes"]) == sorted(names), printed
    assert printed["viewBox"], "the graph was not drawn whole for the paper"
    assert page.locator('[data-view="compare"] .il-svg').get_attribute("viewBox") is None  # afterprint: as on screen
    _assert_clean(page)


def test_the_layout_engine_is_gzipped_once_at_build_time_and_matches_the_worker():
    """Every page embeds the layout worker gzip'd; ``hatch_build.py`` compresses it with the bundle (no cache of the
    user's home, no level-9 gzip of 1.5 MB per page), and what the page embeds is the worker itself."""
    import gzip

    from inductor_lens.views.frontend import STATIC, engine_gz, static

    assert (STATIC / "layout-worker.js.gz").is_file()
    assert engine_gz() == (STATIC / "layout-worker.js.gz").read_bytes()
    assert gzip.decompress(engine_gz()) == static("layout-worker.js").read_bytes()


def test_the_bundle_is_gzipped_at_build_time_and_a_stale_copy_is_never_embedded(tmp_path, monkeypatch):
    """Every page embeds ``lens.js`` gzip'd: ``hatch_build.py`` writes ``lens.js.gz`` with the bundle; a copy older
    than ``lens.js`` (the bundle rebuilt by npm alone) or none at all is not used: the page compresses it."""
    import os
    import shutil

    from inductor_lens.views import frontend

    assert (frontend.STATIC / "lens.js.gz").is_file()
    bundle = frontend.static("lens.js").read_bytes()
    assert gzip.decompress(base64.b64decode(frontend.bundle_b64())) == bundle

    for f in ("lens.js", "lens.js.gz"):
        shutil.copy(frontend.STATIC / f, tmp_path / f)
    (tmp_path / "lens.js.gz").write_bytes(gzip.compress(b"an old bundle", mtime=0))
    os.utime(tmp_path / "lens.js.gz", ns=(1, 1))
    monkeypatch.setattr(frontend, "STATIC", tmp_path)
    monkeypatch.setattr(frontend, "_bundle_cache", {})
    assert gzip.decompress(base64.b64decode(frontend.bundle_b64())) == bundle  # the stale copy was not used
    os.utime(tmp_path / "lens.js.gz")  # now newer than lens.js: used as it is
    frontend._bundle_cache.clear()
    assert gzip.decompress(base64.b64decode(frontend.bundle_b64())) == b"an old bundle"


@pytest.mark.browser
def test_show_of_a_report_written_before_the_derived_fields_opens(tmp_path, offline_page):
    """``inductor-lens show`` embedded a file of the current schema as it was, its derived fields those of an older
    lens (none here): the page, which reads them, stopped with "Cannot read properties of undefined (reading
    'map')" (a GPU reviewer's trial, nu21 D1). Such a file goes through the model, which derives them."""
    from inductor_lens.views import cli

    src = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_perf_pointwise.json"
    assert json.loads(src.read_text()).get("derived") is None  # written before them
    page_path = tmp_path / "shown.html"
    assert cli.main(["show", str(src), "-o", str(page_path)]) == 0
    _open(offline_page, page_path)
    assert offline_page.locator(".il-graph[data-ready='1']").count() >= 1
    assert "could not start" not in offline_page.locator("body").inner_text()
    _assert_clean(offline_page)
