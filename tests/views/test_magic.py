"""``%%inductor_lens`` in a REAL IPython kernel (jupyter_client + ipykernel), not by calling the function.

One kernel is shared by the module and test_cells_kernel.py (starting one and importing torch takes seconds); every compile is
a tiny pointwise function or a 4x4 Linear, so the C++ build is small.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

SIN_COS_CELL = """\
def f(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2
print("printed in the cell")
y = f(torch.randn(8))
print("after the call")
kept = 41 + 1
y.shape
"""


@pytest.fixture
def kernel(ipython_kernel):
    """The session's kernel (tests/_kernel.py), shared with test_cells_kernel.py."""
    return ipython_kernel


def _plain(ex) -> str:
    """The text form of the one widget a cell showed (what nbconvert or GitHub shows in its place): a display of its
    own, or the progress line's, updated to it, where the cell showed nothing after that line."""
    (shown,) = [
        m
        for m in ex.outputs
        if m["msg_type"] in ("display_data", "update_display_data") and WIDGET_MIME in m["content"]["data"]
    ]
    return shown["content"]["data"]["text/plain"]


def _comm_states(ex):
    return [m["content"]["data"]["state"] for m in ex.of_type("comm_open") if "state" in m["content"].get("data", {})]


def _lens_states(ex):
    return [s for s in _comm_states(ex) if s.get("_model_name") == "AnyModel" or "compile" in s]


# -- registration and help --------------------------------------------------------------------------


def test_help_documents_every_option(kernel):
    ex = kernel.ok("%%inductor_lens?\n")
    page = "".join(p.get("data", {}).get("text/plain", "") for p in ex.reply.get("payload", []))
    for option in (
        "--function",
        "--mode",
        "--dynamic",
        "--option",
        "--backward",
        "--export",
        "--json",
        "--name",
        "--view",
        "--profile",
        "--no-reset",
        "fusion,fx,timeline",
    ):
        assert option in page, f"{option} missing from %%inductor_lens? help:\n{page}"
    assert "Inductor runs at the first call" in page.replace("\n", " ")


# -- the main path: -f, cell semantics, progress, widget, display(f) ------------------------------------


def test_function_cell_behaves_as_without_the_magic_and_shows_widget(kernel):
    ex = kernel.ok("%%inductor_lens -f f --name rep\n" + SIN_COS_CELL)
    # the cell's own output: its print and its last-expression value
    assert "printed in the cell" in ex.stdout
    results = ex.of_type("execute_result")
    assert len(results) == 1 and results[0]["content"]["data"]["text/plain"] == "torch.Size([8])"
    # live progress: one display with a display_id, updated while compiling, replaced by the widget
    progress = [m for m in ex.of_type("display_data") if "display_id" in m["content"].get("transient", {})]
    assert progress, "no progress display under the cell"
    display_id = progress[0]["content"]["transient"]["display_id"]
    first = progress[0]["content"]["data"]["text/plain"]
    assert first.startswith("inductor_lens: [") and "torch.compile: " in first, first
    updates = [m for m in ex.of_type("update_display_data") if m["content"]["transient"]["display_id"] == display_id]
    texts = [m["content"]["data"].get("text/plain", "") for m in updates]
    assert any("1 kernel(s) generated: cpp_fused_add_cos_pow_sin_0" in t for t in texts), (
        f"progress never named a kernel it built: {texts}"
    )
    # the user's words, never torch's internal phase names
    assert not any(re.search(r"compile_fx|_recursive|Scheduler\.|pass\.", t) for t in texts), texts
    # the cell printed after the compile began: the widget comes after everything the cell printed (in the progress
    # line's place it went above the prints), and the line, never left empty (a saved notebook kept an empty output),
    # says where Inductor started and where the lens is
    last = updates[-1]["content"]["data"]["text/plain"]
    assert last.startswith("inductor_lens: Inductor compiled from here, 1 kernel(s) generated;"), last
    assert "the lens is below" in last and WIDGET_MIME not in updates[-1]["content"]["data"]
    assert "a copy of the notebook as HTML shows none; %%inductor_lens --export FILE.html" in last  # nu27 D5
    # the progress appears after what the cell printed before the call
    kinds = [m["msg_type"] for m in ex.outputs if m["msg_type"] != "stream" or m["content"]["name"] == "stdout"]
    assert kinds.index("stream") < kinds.index("display_data")
    shown = [m for m in ex.outputs if m["msg_type"] == "display_data" and WIDGET_MIME in m["content"]["data"]]
    assert len(shown) == 1, "one widget"
    # where the widget cannot be drawn (its kernel gone, nbconvert, GitHub), its text says how to see it again
    plain = shown[0]["content"]["data"]["text/plain"]
    assert plain.startswith("inductor_lens: 1 compile(s), 1 kernel(s).") and "re-run the cell" in plain, plain
    assert "rep.save_html(path)" in plain and "graph break" not in plain, plain  # the variable --name bound
    assert ex.outputs.index(shown[0]) > max(
        i for i, m in enumerate(ex.outputs) if m["msg_type"] == "stream" and "after the call" in m["content"]["text"]
    ), "the widget came before what the cell printed after the compile"
    # variables exist, the name is bound to the compiled function, the report to --name
    assert kernel.value("kept") == 42
    assert kernel.value("[k.name for k in rep.kernels]") == ["cpp_fused_add_cos_pow_sin_0"]
    assert kernel.value("rep.compiles[0].frame") == "f"
    assert kernel.value("f._torchdynamo_orig_callable.__name__") == "f"
    assert kernel.value("report_for(f) is rep")


def test_display_of_compiled_function_shows_its_widget(kernel):
    kernel.ok("%%inductor_lens -f f\n" + SIN_COS_CELL)
    ex = kernel.ok("display(f)")
    views = ex.widget_views()
    assert len(views) == 1
    states = _comm_states(ex)
    assert states and states[-1]["compile"] == "0/0 inference"
    # a plain function is untouched by the formatter
    ex = kernel.ok("def plain(x):\n    return x\ndisplay(plain)")
    assert not ex.widget_views()
    assert "function" in ex.texts() and "plain" in ex.texts()


def test_rerun_recompiles(kernel):
    first = kernel.ok("%%inductor_lens -f f --name rep1\n" + SIN_COS_CELL)
    second = kernel.ok("%%inductor_lens -f f --name rep2\n" + SIN_COS_CELL)
    assert first.widget_views() and second.widget_views()
    assert kernel.value("len(rep1.compiles), len(rep2.compiles)") == (1, 1)
    assert kernel.value("rep2.compiles[0].trigger.kind") == "first_call"
    assert kernel.value("report_for(f) is rep2")


def test_a_cell_says_that_its_reset_makes_other_cells_functions_compile_again_and_no_reset_keeps_them(kernel):
    """Every lens cell reset dynamo for the whole session without a word: a function compiled in a plain cell compiled
    again at its next call (unique_graphs 6 -> 8 where a plain cell gives 6 -> 7), and the magic had no way to keep
    dynamo's state (a new user's trial, nu24 D3). The reset is said, naming those functions, in the widget's
    diagnostics and under the cell; --no-reset keeps dynamo's state, and says what it then cannot see."""
    kernel.ok(
        "from torch._dynamo.utils import counters\n"
        "def plain_h(x):\n    return torch.tanh(x) - 1\n"
        "plain_ch = torch.compile(plain_h)\n_ = plain_ch(torch.randn(8))\n"
    )
    n_def = kernel.value(
        "[i for i, s in enumerate(get_ipython().history_manager.input_hist_raw) if s.startswith('from torch._dynamo.utils import counters')][-1]"
    )
    graphs = kernel.value("counters['stats']['unique_graphs']")
    # --no-reset: plain_h keeps its compile (no new graph for it), the cell's own function compiles, the lens says so
    ex = kernel.ok(
        "%%inductor_lens --no-reset --name rep_kept\n_ = plain_ch(torch.randn(8))\n"
        "_ = torch.compile(lambda x: x.sin() * 3)(torch.randn(8))\n"
    )
    assert kernel.value("counters['stats']['unique_graphs']") == graphs + 1
    assert kernel.value("[c.frame for c in rep_kept.compiles]") == ["<lambda>"]
    kept = kernel.value("[d.message for d in rep_kept.diagnostics if d.code == 'no_reset']")
    assert len(kept) == 1 and f"plain_h() (cell [{n_def}]:2)" in kept[0] and "not in this report" in kept[0], kept
    assert kept[0] in ex.texts()  # under the cell, as in the widget's diagnostics
    # the default resets, and says so where it happens: plain_h compiles again at its next call
    ex = kernel.ok("%%inductor_lens --name rep_reset\n_ = torch.compile(lambda x: x.cos() * 3)(torch.randn(8))\n")
    said = kernel.value("[d.message for d in rep_reset.diagnostics if d.code == 'dynamo_reset']")
    assert len(said) == 1 and said[0] in ex.texts(), said
    assert f"plain_h() (cell [{n_def}]:2)" in said[0] and "compile again at their next call" in said[0], said
    assert "compile ids start again at 0/0" in said[0] and "--no-reset" in said[0], said
    graphs = kernel.value("counters['stats']['unique_graphs']")
    kernel.ok("_ = plain_ch(torch.randn(8))")
    assert kernel.value("counters['stats']['unique_graphs']") == graphs + 1  # as the lens said


def test_f_names_a_function_from_an_earlier_cell(kernel):
    kernel.ok("def g(x):\n    return torch.sin(x) ** 2 + torch.cos(x) ** 2")
    kernel.ok("%%inductor_lens -f g --name rep_g\ng(torch.randn(8))")
    assert kernel.value("rep_g.compiles[0].frame") == "g"
    # g is the compiled wrapper now; -f g again compiles the original afresh (not a wrapper of a wrapper)
    kernel.ok("%%inductor_lens -f g --name rep_g2\ng(torch.randn(8))")
    assert (
        kernel.value(
            "g._torchdynamo_orig_callable._torchdynamo_orig_callable "
            "if hasattr(g._torchdynamo_orig_callable, '_torchdynamo_orig_callable') else None"
        )
        is None
    )
    assert kernel.value("len(rep_g2.compiles)") == 1


def test_user_own_torch_compile_is_captured_and_displayable(kernel):
    ex = kernel.ok(
        "%%inductor_lens --name rep_own\n"
        "own = torch.compile(lambda x: torch.sin(x) ** 2 + torch.cos(x) ** 2)\nown(torch.randn(8))"
    )
    assert ex.widget_views()
    assert kernel.value("len(rep_own.kernels)") == 1
    assert kernel.ok("display(own)").widget_views()
    # a cell that names no function is titled by its number, and its exported page named after it (nu24 D8: every
    # cell's page was inductor_lens-cell.html)
    number = ex.reply["execution_count"]
    assert kernel.value("rep_own.title") == f"%%inductor_lens cell [{number}]"
    assert kernel.value("__import__('inductor_lens.views.widget').views.widget._filename(rep_own)") == (
        f"inductor_lens-cell-{number}.html"
    )


# -- compile options ------------------------------------------------------------------------------------

SPY = """\
import torch
_calls = []
_real_compile = torch.compile
def _spy(*a, **k):
    _calls.append({key: v for key, v in k.items()})
    return _real_compile(*a, **k)
torch.compile = _spy
"""


@pytest.fixture
def compile_spy(kernel):
    kernel.ok(SPY)
    yield
    kernel.ok("torch.compile = _real_compile")


def test_mode_dynamic_and_options_reach_torch_compile(kernel, compile_spy):
    kernel.ok("%%inductor_lens -f f --dynamic -O max_autotune=False -O 'epilogue_fusion=True'\n" + SIN_COS_CELL)
    kernel.ok("%%inductor_lens -f f --mode default\n" + SIN_COS_CELL)
    calls = kernel.value("_calls")
    assert calls[0] == {
        "backend": "inductor",
        "dynamic": True,
        "options": {"max_autotune": False, "epilogue_fusion": True},
    }
    assert calls[1] == {"backend": "inductor", "mode": "default"}


def test_dynamic_compiles_a_symbolic_kernel(kernel):
    kernel.ok("%%inductor_lens -f f --dynamic --name rep_dyn\n" + SIN_COS_CELL)
    code = kernel.value("rep_dyn.compiles[0].output_code")
    assert re.search(r"\bk?s\d+\b", code), "dynamic=True should give a kernel over a symbolic size"
    kernel.ok("%%inductor_lens -f f --name rep_static\n" + SIN_COS_CELL)
    assert not re.search(r"\bk?s\d+\b", kernel.value("rep_static.compiles[0].output_code"))


def test_a_cell_compiling_dynamic_true_over_two_batch_sizes_compiles_once_as_without_the_lens(kernel):
    """Issue 10's magic scenario: the user's own torch.compile(m, dynamic=True) on batch 4 then 8 compiled
    twice under the lens (a size was specialized). Torch's graph count, plain and in a lensed cell, must match."""
    cell = """\
import torch._dynamo
from torch._dynamo.utils import counters
torch._dynamo.reset(); counters.clear()
m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
cm = torch.compile(m, dynamic=True)
outs = [cm(torch.randn(n, 16)).shape[0] for n in (4, 8)]
graphs = counters["stats"]["unique_graphs"]
"""
    kernel.ok(cell)
    assert kernel.value("[graphs, outs]") == [1, [4, 8]]
    kernel.ok("%%inductor_lens --name rep_dyn_cell\n" + cell)
    assert kernel.value("[graphs, outs]") == [1, [4, 8]]
    # one dynamo graph (its forward and, the weights requiring grad, its backward): no recompile
    assert kernel.value("sorted({c.compile_id for c in rep_dyn_cell.compiles})") == ["0/0"]
    # the input's batch stays a symbol (the weight is [16, 16]; a specialized input would read [4, 16])
    shapes = kernel.value(
        "[n.shape for c in rep_dyn_cell.compiles for g in c.graphs.values() for n in g.nodes "
        "if n.op == 'placeholder' and n.shape and len(n.shape) == 2 and n.shape[0] != 16]"
    )
    assert shapes and all(isinstance(s[0], str) and s[1] == 16 for s in shapes), shapes


@pytest.mark.parametrize(
    "line, message",
    [
        ("--mode max-autotune", "add -f NAME"),
        ("-O max_autotune=True", "add -f NAME"),
        ("--backward", "add -f NAME"),
        ("--profile", "add -f NAME"),
        ("-f f --mode default -O max_autotune=True", "not both"),
        ("-f f --mode default --profile", "not both"),
        ("-f f -O nokeyvalue", "key=value"),
        ("--view graph", "fusion"),
        ("-f does_not_exist", "does not define 'does_not_exist'"),
        ("--name 1bad", "identifier"),
        ("--no-such-option", "unrecognized arguments"),
        # checked before the cell runs, as `inductor-lens run` checks them: a long cell ran, its report then lost
        ("--json /tmp", "--json /tmp: cannot write it: it is a directory (nothing ran)"),
        ("--export /nonexistent/x.html", "--export /nonexistent/x.html: cannot write it: the folder /nonexistent does"),
    ],
)
def test_usage_errors_name_the_problem(kernel, line, message):
    ex = kernel.execute(f"%%inductor_lens {line}\nran_anyway = True")
    assert ex.status == "error" and ex.reply["ename"] == "UsageError", ex.texts()
    assert message in ex.reply["evalue"]
    assert kernel.value("'ran_anyway' in globals()") is False


def test_a_cell_is_refused_before_it_runs_where_the_front_end_is_not_built(kernel, tmp_path):
    """The widget (and an --export page) embed the built front end: without it (a clean clone before `make bundle`)
    a cell ran its whole capture and failed only when the lens was shown (nu22); it is refused first, as a bad
    --json path is, and runs once the bundle is there."""
    kernel.ok(
        "import inductor_lens.views.frontend as _fe, pathlib as _pl\n"
        f"_fe_before = _fe.__dict__.get('STATIC')\n_fe.STATIC = _pl.Path({str(tmp_path)!r})"
    )
    try:
        ex = kernel.execute("%%inductor_lens\nran_unbuilt = True")
        assert ex.status == "error" and ex.reply["ename"] == "UsageError", ex.texts()
        assert "make bundle" in ex.reply["evalue"] and "(nothing ran)" in ex.reply["evalue"], ex.reply["evalue"]
        assert kernel.value("'ran_unbuilt' in globals()") is False
    finally:
        kernel.ok("_fe.STATIC = _fe_before\nif _fe_before is None: del _fe.STATIC")
    kernel.ok("%%inductor_lens\nran_unbuilt = True")
    assert kernel.value("'ran_unbuilt' in globals()") is True


def test_f_on_a_class_says_to_compile_an_instance(kernel):
    ex = kernel.execute("%%inductor_lens -f Lin\nclass Lin(torch.nn.Linear):\n    pass\n")
    assert ex.status == "error"
    assert "is a class; compile an instance" in ex.texts()


# -- backward, export, json, view, profile ---------------------------------------------------------------


def test_backward_compiles_the_backward_graph_of_a_module(kernel):
    ex = kernel.ok(
        "%%inductor_lens -f model --backward --name rep_bw\n"
        "torch.manual_seed(0)\nmodel = torch.nn.Linear(4, 4)\nout = model(torch.randn(2, 4))"
    )
    kinds = kernel.value("[c.graph_kind for c in rep_bw.compiles]")
    assert kinds == ["forward", "backward"], ex.texts()
    # the lens's own backward leaves no gradient behind: the cell's next training step starts from what it had
    assert kernel.value("model.weight.grad is None and model.bias.grad is None")
    assert kernel.value("type(model).__name__") == "OptimizedModule"
    assert kernel.value("len(model._forward_hooks)") == 0, "the --backward hook stayed on the module"


def test_backward_on_a_function_without_grad_says_why(kernel):
    ex = kernel.ok("%%inductor_lens -f f --backward --name rep_nb\n" + SIN_COS_CELL)
    assert "does not require grad" in ex.texts()
    assert kernel.value("[c.graph_kind for c in rep_nb.compiles]") == ["inference"]


def test_export_and_json_write_files(kernel):
    html_path, json_path = kernel.cwd / "lens.html", kernel.cwd / "lens.json"
    ex = kernel.ok(f"%%inductor_lens -f f --export {html_path} --json {json_path}\n" + SIN_COS_CELL)
    assert f"wrote {json_path}" in ex.texts() and f"wrote {html_path}" in ex.texts()
    data = json.loads(json_path.read_text())
    assert data["compiles"][0]["kernels"][0]["name"] == "cpp_fused_add_cos_pow_sin_0"
    page = html_path.read_text()
    assert page.lstrip().lower().startswith("<!doctype html") and len(page) > 1000
    assert f"or open {html_path}, the page --export saved" in _plain(ex), _plain(ex)


def test_an_output_that_cannot_be_written_after_the_cell_is_one_line_and_the_widget_still_shows(kernel, tmp_path):
    """A folder that goes away while the cell runs: the report is still shown, the failure one line."""
    folder = tmp_path / "gone"
    folder.mkdir()
    cell = f"import shutil\nshutil.rmtree({str(folder)!r})\n" + SIN_COS_CELL
    ex = kernel.execute(f"%%inductor_lens -f f --export {folder / 'x.html'}\n" + cell)
    assert ex.status == "ok" and not ex.errors, ex.errors
    assert f"error: --export {folder / 'x.html'}: cannot write it: the folder {folder} does not exist" in ex.texts()
    assert "Traceback" not in ex.texts() and "Error:" not in ex.texts()
    assert ex.widget_views(), "the widget must still be shown when an export fails"
    assert "x.html" not in _plain(ex) and "add --export page.html" in _plain(ex), _plain(ex)


def test_the_widgets_text_form_says_how_to_save_a_page_in_this_cell_and_its_graph_breaks(kernel):
    """Where the widget cannot be drawn (nbconvert, GitHub), its text said "save a page ... with
    report.save_html(path)": after a cell without --name no ``report`` exists (NameError). It names the cell's own
    options, and the graph breaks where there are some."""
    ex = kernel.ok(
        "%%inductor_lens -f brk\ndef brk(x):\n    x = x + 1\n    torch._dynamo.graph_break()\n    return x * 2\n"
        "y = brk(torch.randn(4))\n"
    )
    plain = _plain(ex)
    assert plain.startswith("inductor_lens: 2 compile(s), 2 kernel(s), 1 graph break(s).") and "report." not in plain
    assert (
        "add --export page.html to the cell's %%inductor_lens line (or --name VAR, then VAR.save_html(path))" in plain
    )


def test_the_code_after_a_break_in_a_cell_is_labelled_by_the_cells_line(kernel):
    """Dynamo names the code after a graph break by the line in the code it traced (``..._resume_in_brk2_at_3``),
    the cell less its %%inductor_lens line: the label said "after line 3" where the cell breaks at line 4, the line
    its stacks and Source view give (nu20 D5)."""
    kernel.ok(
        "%%inductor_lens -f brk2 --name rep_brk\ndef brk2(x):\n    x = x + 1\n    torch._dynamo.graph_break()\n"
        "    return x * 2\ny = brk2(torch.randn(4))\n"
    )
    labels = kernel.value("[c.frame_label for c in rep_brk.compiles]")
    assert "brk2() after line 4" in labels, labels
    assert kernel.value("[f.line for b in rep_brk.graph_breaks for f in b.user_stack[-1:]]") == [4]
    # the stacks of the code after the break name it by the same line: the panel's "called from cell [N]:5 brk2 (after
    # the graph break at line 3)" was one line low, where the compile picker, the timeline and the graph-break list
    # say 4 (nu24 D4)
    resumed = kernel.value(
        "sorted({f.function_label for c in rep_brk.compiles for n in c.fused_nodes for s in n.user_stack for f in s "
        "if 'resume' in f.function})"
    )
    assert resumed == ["brk2 (after the graph break at line 4)"], resumed


def test_f_called_in_the_cell_is_not_said_never_called(kernel):
    ex = kernel.ok(
        "%%inductor_lens -f g --name rep_g\ndef g(x):\n    return torch.relu(x) * 2\ny = g(torch.randn(8))\n"
    )
    assert "never called" not in ex.texts(), ex.texts()
    assert kernel.value("len(rep_g.kernels)") >= 1


def test_view_option_opens_the_widget_on_that_view(kernel):
    ex = kernel.ok("%%inductor_lens -f f --view timeline\n" + SIN_COS_CELL)
    states = [s for s in _comm_states(ex) if "view" in s]
    assert states and states[-1]["view"] == "timeline"


def test_profile_times_each_kernel_of_f(kernel):
    ex = kernel.ok("%%inductor_lens -f f --profile --name rep_prof\n" + SIN_COS_CELL)
    assert ex.widget_views()
    profile = kernel.value("(lambda p: {'calls': p.calls, 'total_us': p.total_us})(rep_prof.kernels[0].profile)")
    assert profile["calls"] > 0 and profile["total_us"] > 0, profile
    assert kernel.value("report_for(f) is rep_prof")


def test_profile_says_when_f_was_not_called(kernel):
    ex = kernel.ok("%%inductor_lens -f f --profile\ndef f(x):\n    return x + 1\n")
    assert "--profile: f was not called" in ex.texts()


# -- plain-language messages and error paths ---------------------------------------------------------------


def test_compiled_but_never_called_says_inductor_runs_at_first_call(kernel):
    ex = kernel.ok("%%inductor_lens --name rep_nc\nh = torch.compile(lambda x: x + 1)\n")
    text = ex.texts()
    assert "torch.compile() only wraps the function" in text and "first call" in text
    assert kernel.value("len(rep_nc.compiles)") == 0


def test_f_defined_but_never_called_says_so_in_the_users_terms(kernel):
    ex = kernel.ok("%%inductor_lens -f g2\ndef g2(x):\n    return x * 3\n")
    text = ex.texts()
    assert "-f compiled g2 but the cell never called it" in text and "first call" in text
    assert "torch.compile() was called" not in text


def test_non_inductor_backend_says_there_are_no_kernels(kernel):
    ex = kernel.ok("%%inductor_lens\ne = torch.compile(lambda x: x + 1, backend='eager')\ne(torch.randn(3))\n")
    assert "backend 'eager'" in ex.texts() and "only the inductor backend generates kernels" in ex.texts()
    assert "never ran" not in ex.texts()


def test_nothing_compiled_at_all(kernel):
    ex = kernel.ok("%%inductor_lens --name rep_none\nz = 1 + 1\n")
    assert "nothing compiled: the cell never called torch.compile()" in ex.texts()
    kernel.ok("from inductor_lens.report.outcome import code_of, message_of")
    diags = kernel.value("[(code_of(d), message_of(d)) for d in rep_none.diagnostics]")
    ours = [(c, m) for c, m in diags if "nothing compiled: the cell never called torch.compile()" in m]
    assert len(ours) == 1, diags
    if kernel.value("hasattr(inductor_lens.report.model, 'Diagnostic')"):  # typed diagnostics (schema v2)
        assert ours[0][0] == "nothing_compiled"


def test_the_line_under_a_cell_whose_compile_dynamo_failed_says_nothing_compiled_and_why(kernel):
    """A shape error dynamo meets while tracing (raised to the cell): torch's error log comes after the progress line,
    which then said "Inductor compiled from here, 0 kernel(s) generated; the lens is below" above a widget saying
    "Nothing was compiled: dynamo could not compile the frame" (a new user's trial, nu24 D6). It says what the widget
    says (``Report.nothing``)."""
    ex = kernel.execute(
        "%%inductor_lens --name rep_bad\n@torch.compile\ndef bad(x):\n    return x @ torch.ones(3, 3)\n"
        "bad(torch.randn(4, 4))\n"
    )
    assert ex.status == "error"
    progress = [m for m in ex.of_type("display_data") if "display_id" in m["content"].get("transient", {})]
    assert progress, "no progress line under the cell"
    display_id = progress[0]["content"]["transient"]["display_id"]
    updates = [m for m in ex.of_type("update_display_data") if m["content"]["transient"]["display_id"] == display_id]
    last = updates[-1]["content"]["data"]["text/plain"]
    nothing = kernel.value("rep_bad.nothing")
    assert nothing.startswith("Nothing was compiled: dynamo could not compile the frame"), nothing
    assert "compiled from here" not in last and nothing.rstrip(".") in last and "the lens is below" in last, last


def test_cell_raising_shows_traceback_and_what_compiled_before(kernel):
    ex = kernel.execute("%%inductor_lens -f f --name rep_err\n" + SIN_COS_CELL + "1 / 0\nafter = True\n")
    assert ex.status == "error"
    # reported once, as ONE error output (a saved notebook had two, the second with an empty traceback: nbval,
    # papermill and CI counted the error twice): IPython's traceback of the user's error, the cell's last output
    assert [e["ename"] for e in ex.errors] == ["ZeroDivisionError"], ex.errors
    assert [m["msg_type"] for m in ex.outputs][-1] == "error"
    # and the kernel's reply names the cell's own error and carries its traceback (nbclient and papermill report it)
    assert (ex.reply["ename"], ex.reply["evalue"]) == ("ZeroDivisionError", "division by zero"), ex.reply
    assert ex.reply["traceback"] == ex.errors[0]["traceback"]
    tb = ANSI.sub("", "\n".join(ex.errors[0]["traceback"]))
    assert "1 / 0" in tb and "magic.py" not in tb and "cell_run.py" not in tb, tb
    assert "Traceback" in tb and "ZeroDivisionError: division by zero" in tb, tb
    # the widget is shown before it, and holds the compile that happened before the error
    assert any(WIDGET_MIME in m["content"].get("data", {}) for m in ex.outputs[:-1])
    assert kernel.value("len(rep_err.kernels)") == 1
    assert kernel.value("'after' in globals()") is False
    # the last error is the cell's own, not the lens's: %debug and %tb go to the user's frame
    assert kernel.value("type(__import__('sys').last_value).__name__") == "ZeroDivisionError"
    assert kernel.value("(lambda s: s.last_traceback is s.last_value.__traceback__)(__import__('sys'))") is True
    assert any(
        code == "user_code_raised" and "the cell raised ZeroDivisionError" in message
        for code, message in kernel.value("[(d.code, d.message) for d in rep_err.diagnostics]")
    )


@pytest.mark.kernel
def test_a_saved_notebook_has_one_error_output_and_no_empty_one(tmp_path, monkeypatch):
    """What nbclient saves (papermill, nbval and CI read that file): a lens cell that raised had two error outputs (the
    user's, and the magic's own with an empty traceback), and each compiling cell kept the emptied progress line as an
    output whose data are all empty strings (a new user's trial, nu19 O-f)."""
    import os

    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    cells = [
        "%load_ext inductor_lens\nimport torch",
        "%%inductor_lens\nf = torch.compile(lambda x: torch.sin(x) + 1)\ny = f(torch.randn(8))\n1 / 0",
        "y.shape[0] - 1",
        "%%inductor_lens\ng = torch.compile(lambda x: torch.cos(x) * 2)\n"
        "for i in range(2):\n    g(torch.randn(8))\n    print('step', i)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outs = [c.outputs for c in nb.cells]
    errors = [o for cell in outs for o in cell if o.output_type == "error"]
    assert [e.ename for e in errors] == ["ZeroDivisionError"], errors
    assert "1 / 0" in ANSI.sub("", "\n".join(errors[0].traceback)), errors[0].traceback
    # the raising cell: the lens (in the progress line's place: nothing came after it), then the traceback, last
    assert outs[1][-1].output_type == "error" and any(WIDGET_MIME in o.get("data", {}) for o in outs[1])
    # the session goes on as without the magic: the next cell's value, and y bound before the raise
    assert outs[2][-1].data["text/plain"] == "7"
    empty = [o for cell in outs for o in cell if "data" in o and not any(str(v).strip() for v in o.data.values())]
    assert not empty, empty
    # the cell that printed after the compile: the line says where Inductor started, the lens comes after the prints
    kinds = [("widget" if WIDGET_MIME in o.get("data", {}) else o.get("name") or o.output_type) for o in outs[3]]
    assert kinds.index("widget") > kinds.index("stdout"), kinds
    assert "Inductor compiled from here" in outs[3][0].data["text/plain"], outs[3][0]


def test_output_paths_expand_the_home_folder_as_a_shell_would():
    """The magic's line goes through no shell: --json ~/r.json was a folder named ~ in the notebook's folder (and,
    checked before the cell since, a refusal)."""
    import os

    from inductor_lens.views.magic import _parse

    args = _parse("--json ~/r.json --export ~/r.html")
    assert (args.json_path, args.export) == (os.path.expanduser("~/r.json"), os.path.expanduser("~/r.html"))
    assert not args.json_path.startswith("~")


def test_the_cells_failing_exception_pickles_as_the_users_error_it_names():
    """The exception that fails a cell is of a class made at run time, named as the user's: pickle (a job runner,
    a multiprocessing pool) could not find it by that name and failed."""
    import pickle

    from inductor_lens.views.cell_run import CellRaised, cell_raised

    for original in (ZeroDivisionError("division by zero"), KeyboardInterrupt()):
        raised = cell_raised(original)  # named as the user's Exception; a KeyboardInterrupt's is a CellRaised
        back = pickle.loads(pickle.dumps(raised))
        assert isinstance(back, CellRaised) and type(back).__name__ == type(raised).__name__
        assert type(back.original) is type(original) and str(back) == str(cell_raised(original))


def test_syntax_error_is_reported_by_ipython(kernel):
    kernel.ok("f = lambda x: x")  # bound (as by the tests before it): -f f passes the magic's own check
    ex = kernel.execute("%%inductor_lens -f f\ndef f(x):\n    return x +\n")
    assert ex.status == "error"
    assert [e["ename"] for e in ex.errors] == ["SyntaxError"], ex.errors  # one error output, IPython's own
    assert "return x +" in ANSI.sub("", "\n".join(ex.errors[0]["traceback"]))


def test_a_traceback_the_cell_shows_itself_stays_in_its_place(kernel):
    """Only the error that ends the cell is held back (to be its one error output, last); a traceback the cell's code
    shows itself is sent where it happens, before what the cell printed next."""
    ex = kernel.execute(
        "%%inductor_lens\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    get_ipython().showtraceback()\n"
        "print('went on')\nraise KeyError('k')\n"
    )
    assert [e["ename"] for e in ex.errors] == ["ZeroDivisionError", "KeyError"], ex.errors
    kinds = [m["msg_type"] for m in ex.outputs if m["msg_type"] != "stream" or "went on" in m["content"]["text"]]
    assert kinds.index("error") < kinds.index("stream") and kinds[-1] == "error", kinds
    assert all(e["traceback"] for e in ex.errors), ex.errors


def test_error_in_progress_callback_is_shown(kernel):
    kernel.ok(
        "import inductor_lens.views.magic as _m\n_orig_show = _m._Progress._show\n"
        "def _boom(self):\n    raise RuntimeError('progress display broke')\n_m._Progress._show = _boom"
    )
    try:
        ex = kernel.ok("%%inductor_lens -f f\n" + SIN_COS_CELL)
    finally:
        kernel.ok("_m._Progress._show = _orig_show")
    assert "progress display broke" in ex.texts()
    assert ex.widget_views(), "the result must still be shown"


def test_error_in_display_formatter_is_shown(kernel):
    kernel.ok("%%inductor_lens -f f\n" + SIN_COS_CELL)
    kernel.ok(
        "import inductor_lens.views.magic as _m\n_orig_w = _m._widget_or_text\n"
        "def _bad(*a, **k):\n    raise RuntimeError('formatter broke')\n_m._widget_or_text = _bad"
    )
    try:
        ex = kernel.execute("display(f)")
    finally:
        kernel.ok("_m._widget_or_text = _orig_w")
    assert "formatter broke" in ex.texts()


# -- unload (last: it removes the magic from the shared kernel) ---------------------------------------------


def test_unload_removes_magic_and_formatter_and_load_restores_them(kernel):
    kernel.ok("%%inductor_lens -f f\n" + SIN_COS_CELL)
    kernel.ok("%unload_ext inductor_lens")
    ex = kernel.execute("%%inductor_lens\nx = 1")
    assert ex.status == "error" and "inductor_lens" in ex.reply["evalue"]
    assert not kernel.ok("display(f)").widget_views()
    kernel.ok("import types\n_fmt = get_ipython().display_formatter.mimebundle_formatter")
    assert kernel.value("types.FunctionType in _fmt.type_printers") is False
    assert kernel.value("any(getattr(t, '__name__', '') == 'OptimizedModule' for t in _fmt.type_printers)") is False
    assert kernel.value("('torch._dynamo.eval_frame', 'OptimizedModule') in _fmt.deferred_printers") is False
    kernel.ok("%load_ext inductor_lens")
    assert kernel.ok("%%inductor_lens -f f\n" + SIN_COS_CELL).widget_views()
