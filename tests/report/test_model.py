"""The report model: JSON contract, schema, loading errors, parsers. No torch compile here."""

import dataclasses
import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import inductor_lens
from inductor_lens.capturing import build, parse
from inductor_lens.report import model
from inductor_lens.report.model import Compile, Frame, FusedNode, Kernel, Report, Trigger
from inductor_lens.report.plain import from_plain, to_plain
from inductor_lens.report.schema import json_schema

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tiny():
    k = Kernel(
        name="cpp_fused_add_0",
        language="cpp",
        source="x </script><!-- y",
        fused_nodes=["op0"],
        user_stack=[[Frame("m.py", 3, "f", "return a + b")]],
        metadata={"launch": {"num_warps": 4}},
    )
    c = Compile(
        id="0/0 inference",
        compile_id="0/0",
        graph_kind="inference",
        trigger=Trigger(kind="first_call", reason="first call of f()"),
        kernels=[k],
        fused_nodes=[FusedNode(name="op0", kind="pointwise", kernel=k.name, writes=["buf0"])],
    )
    return Report(torch_version="2.13.0", device="cpu", compiles=[c])


def test_round_trip_and_top_level_fields():
    r = _tiny()
    data = json.loads(r.to_json(compact=False))
    assert {"schema_version", "torch_version", "device", "compiles", "graph_breaks", "diagnostics"} <= set(data)
    assert data["schema_version"] == model.SCHEMA_VERSION
    c = data["compiles"][0]
    assert {
        "id",
        "compile_id",
        "graph_kind",
        "trigger",
        "phases",
        "graphs",
        "fused_nodes",
        "kernels",
        "output_code",
        "fusion_decisions",
    } <= set(c)
    assert set(c["kernels"][0]) >= {"name", "language", "source", "fused_nodes", "user_stack", "compiler_stack"}
    frame = {"file", "line", "function", "code", "stage", "is_user", "function_label", "qualname", "note", "file_label"}
    assert set(c["kernels"][0]["user_stack"][0][0]) == frame
    assert inductor_lens.load(r.to_json()) == r
    assert inductor_lens.load(data) == r


def test_load_from_path_and_errors(tmp_path):
    p = tmp_path / "r.json"
    _tiny().save_json(p)
    assert inductor_lens.load(p) == _tiny()
    assert inductor_lens.load(str(p)) == _tiny()
    with pytest.raises(FileNotFoundError, match="no report at"):
        inductor_lens.load(tmp_path / "missing.json")
    with pytest.raises(inductor_lens.ReportError, match="not valid JSON"):
        inductor_lens.load("{nope")
    with pytest.raises(inductor_lens.ReportError, match="newer than this inductor_lens"):
        inductor_lens.load({"schema_version": model.SCHEMA_VERSION + 1, "torch_version": "x", "device": "cpu"})
    with pytest.raises(inductor_lens.ReportError, match="missing field 'torch_version'"):
        inductor_lens.load({"schema_version": 1, "device": "cpu"})
    with pytest.raises(inductor_lens.ReportError, match=r"compiles\[0\]: expected an object"):
        inductor_lens.load({"schema_version": 1, "torch_version": "x", "device": "cpu", "compiles": [3]})


def test_lookup_errors_name_the_choices():
    r = _tiny()
    assert r.compile("0/0").kernel("cpp_fused_add_0").language == "cpp"
    with pytest.raises(KeyError, match=r"compiles: \['0/0 inference'\]"):
        r.compile("9/9")
    with pytest.raises(KeyError, match=r"kernels: \['cpp_fused_add_0'\]"):
        r.compiles[0].kernel("nope")


def test_repr_is_cheap_and_summary_lists_kernels():
    r = _tiny()
    assert "</script>" not in repr(r) and "1 kernel(s)" in repr(r)
    assert "cpp_fused_add_0" in r.summary()
    # fused nodes counted as the page counts them: a glue node (a getitem of a multi-output call) is no box
    c = r.compiles[0]
    glue = FusedNode(name="op1", kind="nop", is_glue=True, reads=["buf0"], writes=["buf1"])
    r = dataclasses.replace(r, compiles=[dataclasses.replace(c, fused_nodes=[*c.fused_nodes, glue])])
    assert "1 fused node(s) (+1 glue: drawn as edges), 1 kernel(s)" in r.summary()


def test_committed_json_schema_is_current():
    committed = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    assert committed == json_schema(), (
        'run: python -c "import json, inductor_lens.report.schema as m; '
        "open('docs/report.schema.json','w').write(json.dumps(m.json_schema(), indent=1)+'\\n')\""
    )


def test_model_and_package_import_without_torch():
    code = (
        "import sys, builtins; real = builtins.__import__\n"
        "def guard(name, *a, **k):\n"
        "    if name == 'torch' or name.startswith('torch.'): raise ImportError('torch is not allowed here')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = guard\n"
        "import inductor_lens\n"
        "r = inductor_lens.load(open(sys.argv[1]).read()); print(len(r.kernels))"
    )
    path = ROOT / "tests" / "fixtures" / "gpu_training.json"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 10


def test_parse_stack_trace_drops_carets_and_keeps_code():
    text = (
        '  File "/a/m.py", line 12, in forward\n    y = torch.sin(x)\n        ^^^^^^^^^^^^\n'
        '  File "/a/n.py", line 3, in g\n    return y\n'
    )
    assert parse.parse_stack_trace(text) == [
        Frame("/a/m.py", 12, "forward", "y = torch.sin(x)"),
        Frame("/a/n.py", 3, "g", "return y"),
    ]
    assert parse.parse_stack_trace(None) == []


def test_parse_output_code_kernels_takes_exact_source():
    code = (
        "x = 1\ncpp_fused_a_0 = async_compile.cpp_pybinding(['float*'], r'''\nint k() { return 1; }\n''')\n"
        "triton_poi_b_1 = async_compile.triton('triton_poi_b_1', '''\n@triton.jit\ndef k(): pass\n''', "
        "device_str='cuda')\n"
    )
    got = parse.parse_output_code_kernels(code)
    assert got == {
        "cpp_fused_a_0": ("cpp", "\nint k() { return 1; }\n"),
        "triton_poi_b_1": ("triton", "\n@triton.jit\ndef k(): pass\n"),
    }


def test_a_global_module_called_inside_a_layer_leaves_its_ops_in_that_layer():
    """nu20 D4: transformers' Llama wraps ``apply_rotary_pos_emb`` as a global ``kernels`` ``Func`` module; dynamo's
    stack of each layer's rotary ops ends in it, and the op was filed under one pseudo-module for every layer."""
    rope = "G['__import_transformers_dot_models_dot_llama_dot_modeling_llama'].apply_rotary_pos_emb"
    stack = ["L['self'].model", "L['self'].model.layers[0]", "L['self'].model.layers[0].self_attn", rope]
    types = ["LlamaModel", "LlamaDecoderLayer", "LlamaAttention", "Func"]
    node = {"name": "add_2", "op": "call_function", "target": "aten.add.Tensor", "inputs": [], "module_stack": stack}
    (gn,) = build._graph_nodes([dict(node, module_types=types)])  # the capture's node, as a report keeps it
    assert gn.module_stack[-1] == "model.layers.0.self_attn" and gn.module_types[-1] == "LlamaAttention"
    assert parse.model_modules(stack, types) == [
        ("model", "LlamaModel"),
        ("model.layers.0", "LlamaDecoderLayer"),
        ("model.layers.0.self_attn", "LlamaAttention"),
    ]
    # a global module a compiled function calls first is the outermost, kept; its children too
    assert parse.model_modules(["G['enc']", "G['enc']._modules['0']"], ["Sequential", "Linear"]) == [
        ("enc", "Sequential"),
        ("enc.0", "Linear"),
    ]
    # a module of the model's that is no child of its caller (passed as an argument) is where its op ran: kept
    assert parse.model_modules(["L['self'].block", "L['self'].norm"], ["Block", "LayerNorm"])[-1] == (
        "norm",
        "LayerNorm",
    )


def test_clean_module_path():
    assert parse.clean_module_path("L['self'].h[0]._modules['attn']") == "h.0.attn"
    assert parse.clean_module_path("L['self'].fc1") == "fc1"
    assert parse.clean_module_path("fc2") == "fc2"
    # a module registered under a name that is no identifier (add_module("ü</script>(1)", ...)), reached by getattr:
    # dynamo writes getattr(L.self, '...'), and the box said so where the module's parameters were named right
    assert parse.clean_module_path("getattr(L.self, 'ü</script>(1)')") == "ü</script>(1)"
    assert parse.clean_module_path("getattr(getattr(L['self'], 'a b'), 'c').fc") == "a b.c.fc"
    assert parse.clean_module_path("getattr(L['args'][0], 'x y')") == "x y"
    assert parse.clean_module_path('getattr(L.self, "it\'s").lin') == "it's.lin"  # read as Python reads it
    assert parse.clean_module_path("getattr(L['self'].h[0]._modules['attn'], 'q k')") == "h.0.attn.q k"


def test_graph_break_text():
    text = (
        "Graph break in user code at /m.py:14\nGraph Break Reason: Call to print\n  Explanation: no\n\n"
        'User code traceback:\n  File "/m.py", line 20, in <module>\n    f(x)\n'
        "  File \"/m.py\", line 14, in f\n    print('x')\n\nTraceback (most recent call last):\n  junk"
    )
    reason, stack = parse.parse_graph_break(text)
    assert reason.startswith("Call to print") and "Traceback" not in reason
    assert [f.line for f in stack] == [20, 14]


def test_fused_node_module_is_where_most_of_its_ops_come_from():
    from inductor_lens.report.module_paths import majority_stack as _majority_prefix

    block6 = ["h.6", "h.6.mlp"]
    assert _majority_prefix([block6, block6, ["h.7", "h.7.ln_1"]]) == ["h.6", "h.6.mlp"]
    assert _majority_prefix([["h.6", "h.6.mlp"], ["h.6", "h.6.attn"], []]) == ["h.6"]
    assert _majority_prefix([["a"], ["b"]]) == []  # a tie is no majority
    assert _majority_prefix([["a"], ["b"], ["c"]]) == []
    assert _majority_prefix([[], []]) == []


# -- schema version 2: derived fields, the version-1 converter, the compact written form --------------

V1 = ROOT / "tests" / "fixtures" / "gpu_training.json"


def test_frame_stage_is_worked_out_once_in_python():
    site = "/venv/lib/python3.12/site-packages"
    cases = {
        (f"{site}/torch/_dynamo/convert_frame.py", "_compile"): "dynamo",
        (f"{site}/torch/_dynamo/backends/common.py", "__call__"): "aot",
        (f"{site}/torch/_functorch/aot_autograd.py", "aot_module"): "aot",
        (f"{site}/torch/_inductor/scheduler.py", "fuse_nodes"): "scheduler",
        (f"{site}/torch/_inductor/scheduler.py", "_codegen"): "codegen",
        (f"{site}/torch/_inductor/graph.py", "run_node"): "lowering",
        (f"{site}/torch/_inductor/graph.py", "codegen"): "inductor",  # it makes the Scheduler, then asks for code
        (f"{site}/torch/_inductor/graph.py", "_update_scheduler"): "scheduler",
        (f"{site}/torch/_inductor/graph.py", "compile_to_module"): "inductor",
        (f"{site}/torch/_inductor/graph.py", "run"): "lowering",
        (f"{site}/torch/_inductor/codegen/cpp.py", "codegen_node"): "codegen",
        (f"{site}/torch/_inductor/ir.py", "codegen_comment"): "codegen",
        (f"{site}/torch/_inductor/ir.py", "codegen"): "codegen",
        (f"{site}/torch/_inductor/ir.py", "realize"): "lowering",
        (f"{site}/torch/_inductor/compile_fx.py", "compile_fx_inner"): "inductor",
        (f"{site}/torch/_inductor/runtime/triton_heuristics.py", "run"): "runtime",
        ("/tmp/torchinductor_root/ab/cabc.py", "call"): "runtime",
        (f"{site}/torch/nn/modules/module.py", "_call_impl"): "torch",
        (f"{site}/IPython/core/interactiveshell.py", "run_code"): "library",
        ("/usr/lib/python3.12/runpy.py", "_run_code"): "library",
        ("<frozen runpy>", "_run_module_as_main"): "library",
        ("/home/u/src/inductor_lens/views/magic.py", "_run"): "other",
        ("/home/u/src/inductor_lens/examples.py", "forward"): "user",
        ("/home/u/train.py", "main"): "user",
        ("cell [4]", "<module>"): "user",
        ("C:\\Users\\u\\site-packages\\torch\\_dynamo\\eval_frame.py", "f"): "dynamo",
    }
    for (file, fn), stage in cases.items():
        fr = Frame(file, 1, fn)
        assert (fr.stage, fr.is_user) == (stage, stage == "user"), (file, fn)
    # an explicit stage is kept (the magic's own call of a cell), and is_user always follows it
    assert Frame("cell [3]", 1, "<module>", stage="other").is_user is False
    assert Frame("/x.py", 1, "f", stage="nonsense", is_user=True) == Frame("/x.py", 1, "f")


def test_v1_report_converts_to_v2():
    raw = json.loads(V1.read_text())
    assert raw["schema_version"] == 1 and "pre_fusion_nodes" in raw["compiles"][0]
    r = inductor_lens.load(V1)
    assert r.schema_version == model.SCHEMA_VERSION == 2
    fwd, bwd = r.compiles
    # labels: one shape for every compile, so "backward" and "forward()" never contradict each other
    assert (fwd.frame_label, fwd.label) == ("forward()", "forward(): forward graph · 0/0")
    assert bwd.label == "forward(): backward graph · 0/0"
    # size hints as a mapping, parsed from the v1 repr string
    raw_hints = {k["name"]: k["metadata"].get("size_hints") for k in raw["compiles"][0]["kernels"]}
    for k in fwd.kernels:
        if isinstance(raw_hints.get(k.name), str):
            assert k.metadata["size_hints"] == eval(raw_hints[k.name])  # the v1 text is a dict literal
    assert any(isinstance(k.metadata.get("size_hints"), dict) for k in fwd.kernels)
    # every stack frame typed; the fixture's own script and the example model are user code, torch is not
    frames = [f for k in r.kernels for f in k.compiler_stack]
    assert {f.stage for f in frames} >= {"user", "dynamo", "aot", "inductor", "codegen"}
    assert all(f.is_user == ("/torch/" not in f.file) for f in frames)
    # every fused node has a label and, where its ops have user lines, stacks
    for c in r.compiles:
        for n in c.fused_nodes:
            assert n.label
            k = c.kernel(n.kernel) if n.kernel else None
            assert n.is_glue == (k is None)
            if k is not None and k.language == "extern":
                assert n.label in ("mm", "addmm", "bmm") or not n.label.startswith("extern_kernels"), n.label
            if k is not None and k.language != "extern":
                assert n.label == k.name
    assert any(n.user_stack for c in r.compiles for n in c.fused_nodes)


def test_v1_extern_and_glue_nodes_are_named_by_their_op():
    r = inductor_lens.load(ROOT / "tests" / "fixtures" / "gpu_gpt2_block.json")
    c = r.compiles[0]
    raw = json.loads((ROOT / "tests" / "fixtures" / "gpu_gpt2_block.json").read_text())["compiles"][0]
    fx = {n["name"]: n["target"] for n in raw["graphs"]["post_grad"]["nodes"]}
    kernels = {k["name"]: k for k in raw["kernels"]}
    for n, rn in zip(c.fused_nodes, raw["fused_nodes"]):
        k = kernels.get(rn["kernel"])
        if k and k["language"] == "extern":
            # independent expectation: the aten op name of the node's post-grad target
            assert n.label == fx[rn["fx_nodes"][0]].split(".")[1], (n.name, n.label)
        if rn["kernel"] is None:
            assert n.is_glue
    assert "mm" in {n.label for n in c.fused_nodes}


def test_v1_autotune_chosen_is_the_matching_choice():
    r = inductor_lens.load(ROOT / "tests" / "fixtures" / "gpu_max_autotune.json")
    tuned = [k for k in r.kernels if "autotune" in k.metadata]
    assert tuned
    for k in tuned:
        a = k.metadata["autotune"]
        assert a["emitted"] == k.name
        chosen = next(c for c in a["choices"] if c["name"] == a["chosen"])
        # independent check: the chosen template's BLOCK sizes are the kernel source's constants
        for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
            want = re.search(key + r"=(\d+)", chosen["description"]).group(1)
            assert re.search(rf"{key} : tl.constexpr = {want}\b", k.source), (k.name, key)


def test_compact_form_is_lossless_and_smaller():
    r = inductor_lens.load(V1)
    full = r.to_json(compact=False)
    small = r.to_json()
    assert inductor_lens.load(small) == r == inductor_lens.load(full)
    data = json.loads(small)
    assert set(data["interned"]) == {"files", "frames", "stacks", "lines", "file_labels"}
    # each distinct stack and guard line once
    stacks = data["interned"]["stacks"]
    assert len({tuple(s) for s in stacks}) == len(stacks)
    assert data["compiles"][0]["guards"]["@g"] and data["compiles"][0]["kernels"][0]["name"]
    lines = data["interned"]["lines"]
    assert len(set(lines)) == len(lines)
    # forward and backward share the frame's guards: stored once, referred to twice
    assert data["compiles"][0]["guards"] == data["compiles"][1]["guards"]
    # a kernel's source lines are the output code's lines
    k = data["compiles"][0]["kernels"][0]
    assert set(k["source"]["@g"]) <= set(data["compiles"][0]["output_code"]["@g"])
    assert len(small) * 2 < len(full)
    # fields other code reads stay where they are
    assert [k["name"] for k in data["compiles"][1]["kernels"]] == [k.name for k in r.compiles[1].kernels]


def test_compact_form_rejects_damaged_tables():
    data = json.loads(_tiny().to_json())
    data["interned"]["stacks"] = []
    with pytest.raises(inductor_lens.ReportError, match="interned tables are damaged"):
        inductor_lens.load(data)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (CI has it: it builds the bundle with npm)")
def test_js_expand_report_gives_the_python_expanded_form(tmp_path):
    out = _expand_in_node(
        tmp_path, inductor_lens.load(V1), "deepStrictEqual(expandReport(full), full); console.log('same');"
    )
    assert out.returncode == 0 and out.stdout.strip() == "same", out.stderr[-2000:]


def _expand_in_node(tmp_path, report, then: str):
    """The front end's ``expandReport`` of ``report``'s compact form in Node.js, checked equal to its expanded form,
    then the JavaScript ``then`` (which may print); the finished process."""
    (tmp_path / "small.json").write_text(report.to_json())
    (tmp_path / "full.json").write_text(report.to_json(compact=False))
    script = (
        "import { expandReport } from " + json.dumps((ROOT / "js" / "src" / "intern.js").as_uri()) + ";\n"
        "import { readFileSync } from 'node:fs'; import { deepStrictEqual } from 'node:assert';\n"
        "const [small, full] = process.argv.slice(2).map((p) => JSON.parse(readFileSync(p, 'utf8')));\n"
        "deepStrictEqual(expandReport(small), full);\n" + then + "\n"
    )
    (tmp_path / "check.mjs").write_text(script)
    return subprocess.run(
        ["node", str(tmp_path / "check.mjs"), str(tmp_path / "small.json"), str(tmp_path / "full.json")],
        capture_output=True,
        text=True,
    )


def test_a_resume_function_is_named_as_its_function_after_the_break_in_both_written_forms(tmp_path):
    """nu19 O-h: dynamo's resume function after a graph break is the user's function after it
    (``Frame.function_label``, ``rules.function_label``): derived on construction, written once per function in
    the compact form (``interned.function_labels``, only where it differs) and expanded alike by Python and the
    front end; a report written before the field gets it on load."""
    resume = Frame("m.py", 38, "torch_dynamo_resume_in_train_step_at_36", "loss.backward()")
    assert resume.function_label == "train_step (after the graph break at line 36)"
    assert Frame("m.py", 36, "train_step").function_label == "train_step"
    r = _tiny()
    k = dataclasses.replace(r.compiles[0].kernels[0], user_stack=[[Frame("m.py", 36, "train_step"), resume]])
    r = dataclasses.replace(r, compiles=[dataclasses.replace(r.compiles[0], kernels=[k])])
    small = json.loads(r.to_json())
    assert small["interned"]["function_labels"] == {resume.function: resume.function_label}
    assert inductor_lens.load(small) == r
    assert set(json.loads(_tiny().to_json())["interned"]) == {"files", "frames", "stacks", "lines", "file_labels"}
    old = json.loads(r.to_json())
    del old["interned"]["function_labels"]  # written before the field: derived again
    assert inductor_lens.load(old).compiles[0].kernels[0].user_stack[0][1].function_label == resume.function_label
    if shutil.which("node") is None:
        pytest.skip("needs Node.js for the front end's half")
    out = _expand_in_node(
        tmp_path, r, "console.log(expandReport(small).compiles[0].kernels[0].user_stack[0][1].function_label);"
    )
    assert out.returncode == 0 and out.stdout.strip() == resume.function_label, out.stderr[-2000:]


def test_summary_lists_one_kernel_per_line():
    r = inductor_lens.load(V1)
    lines = r.summary().splitlines()
    for k in r.kernels:
        assert sum(1 for ln in lines if ln.strip().startswith(k.name + " (")) >= 1
    assert max(len(ln) for ln in lines) < 200


def test_derive_helpers():
    from inductor_lens.report import rules as d

    assert d.parse_size_hints("{'x': 256, 'r0_': 128}") == {"x": 256, "r0_": 128}
    assert d.parse_size_hints("[64, 32]") == {"0": 64, "1": 32}
    assert d.parse_size_hints("nonsense(") is None
    assert d.frame_label("torch_dynamo_resume_in_with_graph_break_at_13") == "with_graph_break() after line 13"
    assert d.frame_label("forward (via torch's inner wrapper)") == "forward() (via torch's inner wrapper)"
    assert (
        d.readable_reasons('["0/0: tensor \'x\' size mismatch", "0/0: other"]')
        == "0/0: tensor 'x' size mismatch\n0/0: other"
    )
    assert d.source_role("L['self']._modules['layer1']._modules['0']._parameters['weight']") == (
        "parameter",
        "layer1.0.weight",
    )
    assert d.source_role("L['self']._modules['bn']._buffers['running_mean']") == ("buffer", "bn.running_mean")
    assert d.source_role("L['x']") == ("input", "x")
    assert d.source_role("L['kwargs']['cache']") == ("input", "cache")  # a keyword argument: its name
    assert (
        d.short_op("aten._scaled_dot_product_efficient_attention.default") == "_scaled_dot_product_efficient_attention"
    )
    assert d.short_op("_operator.getitem") == "getitem"
    assert d.short_op("aten.convolution.default") == "convolution"
    assert d.is_glue("extern", None, ["getitem"]) and not d.is_glue("pointwise", "k0", ["add"])


def test_console_script_launchers_are_never_the_users_code():
    """``inductor-lens run script.py`` from a venv: the launcher pip wrote (``.venv/bin/inductor-lens``, its
    ``sys.exit(main())`` frame under every stack a graph break records) is ours, other launchers are libraries',
    and neither is listed among the user's source files; a user's own script in a bin/ folder stays the user's."""
    from inductor_lens.report.rules import frame_stage

    assert frame_stage("/home/me/proj/.venv/bin/inductor-lens", "<module>") == "other"
    assert frame_stage("C:/proj/.venv/Scripts/inductor-lens.exe/__main__.py", "<module>") == "other"
    assert frame_stage("/usr/local/bin/torchrun", "<module>") == "library"
    assert frame_stage("/opt/conda/bin/ipython", "<module>") == "library"
    assert frame_stage("/home/me/bin/train.py", "<module>") == "user"
    assert frame_stage("/home/me/proj/mlp_train.py", "<module>") == "user"
    frame = model.Frame("/home/me/proj/.venv/bin/inductor-lens", 6, "<module>", "sys.exit(main())")
    assert not frame.is_user and frame.stage == "other"


def test_a_clone_in_a_folder_named_inductor_lens_keeps_the_users_frames_the_users():
    from inductor_lens.report.rules import frame_stage

    clone = "/home/me/inductor_lens"
    assert frame_stage(f"{clone}/tests/models.py", "forward") == "user"
    assert frame_stage(f"{clone}/notebooks/train.py") == "user"
    assert frame_stage(f"{clone}/inductor_lens/examples.py", "sin_cos") == "user"
    assert frame_stage(f"{clone}/inductor_lens/capturing/adapter.py", "_post_fusion") == "other"
    assert frame_stage(f"{clone}/inductor_lens/views/magic.py", "inductor_lens") == "other"
    assert (
        frame_stage(f"{clone}/.venv/lib/python3.11/site-packages/torch/_inductor/scheduler.py", "fuse_nodes")
        == "scheduler"
    )


def test_an_environment_in_a_folder_named_torch_holds_libraries_not_torch():
    """The H200's environment is /opt/torch/.venv: every library frame there (transformers' GPT-2) was staged "torch"
    by the path's "/torch/", so a graph break inside transformers said "it broke inside torch". What follows the
    last site-packages/ decides; torch's own files there keep their stages."""
    from inductor_lens.report.rules import frame_stage

    env = "/opt/torch/.venv/lib/python3.12/site-packages"
    assert frame_stage(f"{env}/transformers/models/gpt2/modeling_gpt2.py", "forward") == "library"
    assert frame_stage(f"{env}/torch/nn/modules/module.py", "_call_impl") == "torch"
    assert frame_stage(f"{env}/torch/_inductor/scheduler.py", "fuse_nodes") == "scheduler"
    assert frame_stage(f"{env}/inductor_lens/capturing/adapter.py", "_post_fusion") == "other"
    assert frame_stage("/usr/lib/python3/dist-packages/numpy/core/numeric.py") == "library"


def test_a_users_own_folder_named_torch_holds_the_users_code():
    """A project in a folder named torch (/home/me/torch/train.py) was staged "torch" by its path's "/torch/": the
    user's lines vanished from the Source view and a graph break there said "inside torch". Outside an installed
    package, torch is a file under one of the names torch's package has; a source build of torch keeps its stages."""
    from inductor_lens.report.rules import frame_stage

    assert frame_stage("/home/me/torch/train.py", "<module>") == "user"
    assert frame_stage("/home/me/torch/experiments/model.py", "forward") == "user"
    build = "/home/me/pytorch/torch"  # a source build (pip install -e .): no site-packages in its paths
    assert frame_stage(f"{build}/nn/modules/module.py", "_call_impl") == "torch"
    assert frame_stage(f"{build}/_tensor.py", "backward") == "torch"
    assert frame_stage(f"{build}/functional.py", "split") == "torch"
    assert frame_stage(f"{build}/__init__.py", "compile") == "torch"
    assert frame_stage(f"{build}/_inductor/scheduler.py", "fuse_nodes") == "scheduler"
    env = "/home/me/torch/.venv/lib/python3.11/site-packages"
    assert frame_stage(f"{env}/torch/some_new_module/x.py", "f") == "torch"  # installed: every file of it
    # a file torch has no file of that name for (torch/utils is a folder); another library's folder named torch
    assert frame_stage("/home/me/torch/utils.py", "helper") == "user"
    assert frame_stage(f"{env}/keras/src/backend/torch/nn.py", "conv") == "library"


def test_a_graph_break_says_its_telling_line_and_the_users_line_where_it_broke():
    """torch 2.6+ opens a break's reason with a header that names only the bytecode: the summary is the line after
    it. The line shown is the user's innermost; it broke inside the library beyond it. Derived on every load: a
    stored value is ignored."""
    reason = (
        "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
        "logging.Logger method not supported for non-export cases\n  Explanation: ...\n"
    )
    env = "/opt/torch/.venv/lib/python3.12/site-packages"
    stack = [
        model.Frame("/home/me/train.py", 40, "<module>", "loss = model(x)"),
        model.Frame(f"{env}/torch/nn/modules/module.py", 1779, "_call_impl"),
        model.Frame("/home/me/net.py", 12, "forward", "y = self.hf(x)"),
        model.Frame(f"{env}/transformers/modeling_utils.py", 4635, "warning_once"),
    ]
    b = model.GraphBreak(reason, stack)
    assert (b.summary, b.shown_frame, b.broke_inside) == (
        "logging.Logger method not supported for non-export cases",
        2,
        "library",
    )
    assert b.inside_text == ("Not in your code: inside a library, transformers/modeling_utils.py:4635 in warning_once")
    # a frame recorded where the environment sits under a folder named torch kept the stage "torch": the file decides
    staged = [*stack[:3], model.Frame(stack[3].file, 4635, "warning_once", stage="torch")]
    assert staged[3].stage == "torch" and model.GraphBreak(reason, staged).broke_inside == "library"
    optim = [*stack[:3], model.Frame(f"{env}/torch/optim/optimizer.py", 97, "_use_grad")]
    assert model.GraphBreak(reason, optim).inside_text.startswith(
        "Not in your code: inside torch, torch/optim/optimizer.py:97 in _use_grad"
    )
    stale = dict(to_plain(b), summary="stale", shown_frame=0, broke_inside="")
    again = from_plain(model.GraphBreak, stale, "graph_breaks[0]")
    assert (again.summary, again.shown_frame, again.broke_inside) == (b.summary, 2, "library")
    on_its_line = model.GraphBreak("call_function BuiltinVariable(print) [] {}", stack[:3])
    assert (on_its_line.summary, on_its_line.shown_frame, on_its_line.broke_inside, on_its_line.inside_text) == (
        "call_function BuiltinVariable(print) [] {}",
        2,
        "",
        "",
    )
    assert model.GraphBreak("", []).shown_frame == -1


def test_a_break_at_a_disabled_modules_call_is_the_users_line_and_names_the_function():
    """``self.noisy.forward = torch.compiler.disable(...)``, then ``h = self.noisy(h)``: dynamo broke in torch's call of
    the module (``Module._call_impl``), and the views said "Not in your code: inside torch, module.py in _call_impl"
    of the user's own call; the summary named no function (torch's explanation names it by its repr)."""
    reason = (
        "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
        "Skip calling `torch.compiler.disable()`d function\n"
        "  Explanation: Skip calling function `<function Noisy.forward at 0x7f9adc0a8040>` since it was wrapped "
        "with `torch.compiler.disable` (reason: None)\n  Hint: Remove the `torch.compiler.disable` call\n"
    )
    env = "/opt/venv/lib/python3.12/site-packages"
    stack = [
        model.Frame("/home/me/net.py", 19, "forward", "h = self.noisy(h)"),
        model.Frame(f"{env}/torch/nn/modules/module.py", 1779, "_wrapped_call_impl"),
        model.Frame(f"{env}/torch/nn/modules/module.py", 1789, "_call_impl"),
    ]
    b = model.GraphBreak(reason, stack)
    assert (b.shown_frame, b.broke_inside, b.inside_text) == (0, "", "")
    assert b.summary == "Skip calling `torch.compiler.disable()`d function `Noisy.forward`"
    # beyond torch's call of a module, torch's own code is still where it broke
    deeper = [*stack, model.Frame(f"{env}/torch/optim/optimizer.py", 97, "_use_grad")]
    assert model.GraphBreak(reason, deeper).inside_text.startswith("Not in your code: inside torch, torch/optim/")


def test_names_read_through_a_decorator_wrapper_that_passes_the_module_in_args():
    """transformers 5 wraps forward in ``wrapped_func(*args, **kwargs)``: the module is ``args[0]``."""
    from inductor_lens.report.rules import source_role

    assert source_role("L['args'][0]._modules['model']._parameters['weight']") == ("parameter", "model.weight")
    assert source_role("L['kwargs']['labels']") == ("input", "labels")
    assert source_role("L['args'][1]") == ("input", "args[1]")  # named from forward's signature by the capture
    assert source_role("L['args'][0]") == ("input", "args[0]")  # a plain f(*args): a tensor, not a module
    assert parse.clean_module_path("L['args'][0].model.layers[0]") == "model.layers.0"
    assert parse.clean_module_path("L['args'][0]._modules['model']") == "model"
    assert parse.clean_module_path("L['self'].layers[0]._modules['mlp']") == "layers.0.mlp"


def test_a_module_other_than_the_compiled_one_keeps_its_name_in_paths():
    """Only the root that is the compiled module (the frame's ``self``; a decorator wrapper's ``args[0]``; torch's
    ``inner`` wrapper's ``fn``) leaves module paths: a compiled function's global or local modules keep their names.
    Each root was dropped, so ``dec(enc(x))`` with ``enc``, ``dec`` two ``nn.Sequential`` named both Linears ``0`` and
    both weights ``0.weight``, and a global ``mha`` had no module at all. The strings are torch 2.13's."""
    from inductor_lens.report.rules import source_role

    assert source_role("G['enc']._modules['0']._parameters['weight']") == ("parameter", "enc.0.weight")
    assert source_role("L['dec']._modules['0']._parameters['bias']") == ("parameter", "dec.0.bias")  # a closure's
    assert source_role("G['mha']._parameters['in_proj_weight']") == ("parameter", "mha.in_proj_weight")
    assert source_role("G['model']._modules['bn']._buffers['running_mean']") == ("buffer", "model.bn.running_mean")
    assert parse.clean_module_path("G['enc']") == "enc"
    assert parse.clean_module_path("G['enc'].0") == "enc.0"
    assert parse.clean_module_path("G['layer'].self_attn") == "layer.self_attn"
    assert parse.clean_module_path("L['mha']") == "mha"
    assert parse.clean_module_path("getattr(G['m'], 'a b')") == "m.a b"
    # torch.compile(nn.Sequential(...)) traces torch's wrapper inner(*args), whose fn is the module: its root
    assert parse.clean_module_path("L['fn'].0", wrapped=True) == "0"
    assert source_role("L['fn']._modules['0']._parameters['weight']", wrapped=True) == ("parameter", "0.weight")
    assert parse.clean_module_path("L['fn'].0") == "fn.0"  # elsewhere a local named fn is the user's
    assert parse.clean_module_path("L['self'].fc1") == "fc1"


def test_a_module_that_sets_an_attribute_in_forward_keeps_its_names():
    """A forward that sets an attribute of its module (``self.calls += 1``) makes dynamo read the module through its
    ``__dict__``: the parameters were named ``__dict__._modules.lin.weight`` and the buffer
    ``self.__dict__['_buffers']['avg']``, an input "your code passed in". The strings are torch 2.13's."""
    from inductor_lens.report.rules import source_role

    assert source_role("L['self'].__dict__['_modules']['lin']._parameters['weight']") == ("parameter", "lin.weight")
    assert source_role("L['self'].__dict__['_modules']['lin']._modules['0']._parameters['bias']") == (
        "parameter",
        "lin.0.bias",
    )
    assert source_role("L['self'].__dict__['_buffers']['avg']") == ("buffer", "avg")
    assert source_role("L['self'].__dict__['_parameters']['scale']") == ("parameter", "scale")
    assert parse.clean_module_path("L['self'].__dict__['_modules']['lin'].0") == "lin.0"
    assert parse.clean_module_path("getattr(L['self'].__dict__['_modules']['lin'], 'a b')") == "lin.a b"


def test_a_value_handed_over_at_a_graph_break_is_not_named_by_dynamos_stack_slot():
    """A resume function's ``___stack0`` is dynamo's name; where the capture cannot tell the user's name for it
    (``sources.resume_stack_names``), it says what it is."""
    from inductor_lens.report.rules import source_role

    assert source_role("L['___stack1']") == ("input", "value 1 handed over at the graph break")
    assert source_role("L['___stack0'][0]") == ("input", "item 0 of value 0 handed over at the graph break")


def _twin(cls: type) -> type:
    """``cls`` as plain ``@dataclass(frozen=True, slots=True)`` makes it: the same fields, generated methods."""
    import dataclasses

    ns = {"__annotations__": {f.name: f.type for f in dataclasses.fields(cls)}, "__qualname__": cls.__qualname__}
    return dataclasses.dataclass(frozen=True, slots=True)(type(cls.__name__, (), ns))


def _as_twin(obj, twins: dict):
    """``obj`` (a model object, and every model object inside it) copied into the twin classes, field by field."""
    import dataclasses

    if isinstance(obj, list):
        return [_as_twin(x, twins) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_as_twin(x, twins) for x in obj)
    if isinstance(obj, dict):
        return {k: _as_twin(v, twins) for k, v in obj.items()}
    if not dataclasses.is_dataclass(obj) or type(obj).__module__ != model.__name__:
        return obj
    twin = twins.setdefault(type(obj), _twin(type(obj)))
    copy = object.__new__(twin)
    for f in dataclasses.fields(obj):
        object.__setattr__(copy, f.name, _as_twin(getattr(obj, f.name), twins))
    return copy


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as e:
        return type(e), str(e)


def test_the_models_equality_hash_and_repr_are_what_dataclass_generates():
    """``model._Record`` writes ``__eq__``, ``__hash__`` and ``__repr__`` once for every class: on a recorded GPU
    report (every kind of object, NaN and nesting included) they give what the stdlib's generated ones give."""
    import dataclasses
    import math

    report = inductor_lens.load(ROOT / "tests" / "fixtures" / "gpu_perf_pointwise.json")
    twins: dict = {}
    seen = set()
    objects = []

    def walk(v):
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif dataclasses.is_dataclass(v) and type(v) not in seen:
            seen.add(type(v))
            objects.append(v)
            for f in dataclasses.fields(v):
                walk(getattr(v, f.name))

    walk(report)
    objects = [o for o in objects if type(o) is not Report]  # its own cheap __repr__, in its class body
    assert len(objects) >= 15 and {Frame, Kernel, Compile, FusedNode, Trigger} <= {type(o) for o in objects}
    odd = dataclasses.replace(report.compiles[0].kernels[0], metadata={"x": math.nan})
    for obj in [*objects, odd]:
        twin = _as_twin(obj, twins)
        assert type(obj).__eq__ is model._Record.__eq__ and type(twin).__eq__ is not model._Record.__eq__
        assert repr(obj) == repr(twin)
        assert _outcome(hash, obj) == _outcome(hash, twin)  # a list field: TypeError from both
        same = dataclasses.replace(obj)
        assert (obj == same) is (twin == _as_twin(same, twins)) is True
        f = dataclasses.fields(obj)[0]
        changed = dataclasses.replace(obj, **{f.name: None})
        assert (obj == changed) is (twin == _as_twin(changed, twins))
        assert (obj == 1, obj != 1, obj.__eq__(twin)) == (False, True, NotImplemented)
    c = report.compiles[0]
    assert Report(torch_version="2", device="cpu", compiles=[c]) == Report(
        torch_version="2", device="cpu", compiles=[c]
    )


def test_when_is_said_once_in_python_for_each_way_inductor_can_run(tmp_path):
    """``Report.when``: the answer to "when did Inductor run?", derived on every construction (a stored value is
    ignored) from the light fields alone, so a lazily loaded report says it without building a compile."""
    from inductor_lens.report import lazy
    from inductor_lens.report.model import CompileCall, EmptyFrame

    user = Frame("/home/u/train.py", 12, "<module>", "  y = step(x)  ")
    call = CompileCall("step", "inductor", [Frame("/home/u/train.py", 9, "<module>", "step = torch.compile(f)")], 2e5)

    def compile_(kind, reason, time_us, cid="0/0"):
        return Compile(id=cid, compile_id=cid, graph_kind="inference", trigger=Trigger(kind, reason, [user], time_us))

    r = Report("2.13.0", "cpu", compiles=[compile_(kind="first_call", reason="first call of f()", time_us=4.06e6)])
    r = dataclasses.replace(r, compile_calls=[call])
    # a report made before the hand-off was recorded: the order, no time said to be Inductor's (the call's time was
    # dynamo's start: "Inductor first ran at 4.06 s" was said, nu25 D4)
    assert r.when == (
        "torch.compile(step) at train.py:9 ran at 200.0 ms and only wrapped step: nothing compiled there. The first "
        "call of the compiled function (train.py:12) started the compile: dynamo began at 4.06 s and traced it first, "
        "then handed the graph to Inductor."
    )
    # the times dynamo handed the graph to Inductor and Inductor gave the code back (Trigger.inductor_start_us and
    # inductor_end_us, torch's backend_compile phase), the call's duration, and the capture's start that imported
    # Inductor, which a plain run's first torch.compile() does (nu25 D1, D4: the user's print in lowering.py fired
    # at torch.compile() in a plain run; under the lens torch.compile() took 6 ms, and nothing said why)
    timed = dataclasses.replace(
        r.compiles[0],
        frame="step",
        trigger=Trigger("first_call", "first call of step()", [user], 11_100.0, inductor_start_us=97_700.0,
                        inductor_end_us=5_168_500.0),
    )  # fmt: skip
    quick = dataclasses.replace(call, time_us=100.0, duration_us=6_000.0)
    lens = model.CaptureStart(duration_us=3_840_000.0, imported_inductor=True)
    r2 = dataclasses.replace(r, compiles=[timed], compile_calls=[quick], capture_start=lens)
    assert r2.when == (
        "torch.compile(step) at train.py:9 ran at 100 µs, took 6.00 ms and only wrapped step: nothing compiled there. "
        "It took only 6.00 ms because the capture's start (3.84 s, before the report's clock began) had imported "
        "Inductor: in a plain run the first torch.compile() with the inductor backend imports it, and lowering.py "
        "registers Inductor's lowerings then, but nothing is compiled until the first call. The first call of step() "
        "(train.py:12) started the compile: dynamo began at 11.1 ms and traced its bytecode until 97.7 ms, then "
        "handed the graph to Inductor (compile_fx), which lowered, fused and generated code until 5.17 s."
    )
    # a start that imported nothing (Inductor was imported before it) says nothing of it; neither does one before an
    # eager-backend call alone, which imports no Inductor in a plain run either
    kept = dataclasses.replace(r2, capture_start=model.CaptureStart(duration_us=2_000.0))
    assert kept.when == r2.when.replace(r2.when[r2.when.index(" It took only") : r2.when.index(" The first call")], "")
    eager_call = dataclasses.replace(quick, backend="eager")
    assert "capture's start" not in dataclasses.replace(r2, compile_calls=[eager_call]).when
    # the panel's "When it compiled": the call that wrapped f, said beside the compile it did not make
    assert r2.wrapped_by == {
        "0/0": model.WrappedBy(
            0,
            "torch.compile(step) at train.py:9 only wrapped step; this compile began 11.0 ms later, at the first "
            "call of the compiled function (train.py:12).",
        )
    }
    # a function no recorded call wrapped: no call named beside it (when_text names the last call before it)
    assert dataclasses.replace(r2, compiles=[dataclasses.replace(timed, frame="g")]).wrapped_by == {}
    assert model.Report.from_dict(json.loads(r2.to_json())) == r2  # written and read back
    # the call that wrapped the function that compiled, not the first call: torch.compile(fa), wrapped and never
    # called, was named beside the compile of fb; an aot_eager call, and a call made after the compile, are not it
    made = [("fa", "inductor", 1e5), ("fb", "aot_eager", 1.5e5), ("fb", "inductor", 2e5), ("fb", "inductor", 5e6)]
    calls = [CompileCall(t, b, [], at) for t, b, at in made]
    fb = dataclasses.replace(r.compiles[0], frame="fb")
    assert dataclasses.replace(r, compiles=[fb], compile_calls=calls).when.startswith(
        "torch.compile(fb) ran at 200.0 ms"
    )
    # the code after a graph break in outer() is outer's; a module's forward is its class's, named as the capture
    # names the frames (build._qualified, _frame_name), a class's method with its class
    calls = [CompileCall("fa", "inductor", [], 1e5), CompileCall("outer", "inductor", [], 2e5)]
    for frame in ("torch_dynamo_resume_in_outer_at_8", "Runner.torch_dynamo_resume_in_outer_at_8"):
        resumed = dataclasses.replace(fb, frame=frame)
        assert dataclasses.replace(r, compiles=[resumed], compile_calls=calls).when.startswith("torch.compile(outer) ")
    calls = [CompileCall("Net", "inductor", [], 1e5), CompileCall("helper", "inductor", [], 2e5)]
    for frame in ("Net.forward", "Net.torch_dynamo_resume_in_forward_at_13", "forward (via torch's inner wrapper)"):
        module = dataclasses.replace(fb, frame=frame)
        assert dataclasses.replace(r, compiles=[module], compile_calls=calls).when.startswith("torch.compile(Net) ")
    # a function no call the capture saw wrapped: the last call made before it
    other = dataclasses.replace(fb, frame="g")
    assert dataclasses.replace(r, compiles=[other], compile_calls=calls).when.startswith("torch.compile(helper) ")
    # the first compile with a time, whatever its kind: an AOTInductor compile is not a call of a compiled function
    aot = Report(
        "2.13.0", "cpu", compiles=[compile_("ahead_of_time", "", None, "0/0"), compile_("ahead_of_time", "", 5e5)]
    )
    assert aot.when == (
        "Inductor first ran at 500.0 ms, ahead of time, at the AOTInductor compile call (aoti_compile_and_package) "
        "(train.py:12)."
    )
    # its reason says when, naming the call the user made: said once (nu22 D5: "ahead of time, at the AOTInductor
    # compile call (aoti_compile_and_package) (...): AOTInductor compiled an exported program ahead of time, at ...")
    said = (
        "AOTInductor compiled an exported program ahead of time, at the torch._inductor.aoti_compile_and_package() "
        "call: no dynamo frame and no guards; the package runs these kernels from its C++ wrapper"
    )
    aot = Report("2.15.0", "cpu", compiles=[compile_("ahead_of_time", said, 5e5, "aot/0")])
    assert aot.when == f"Inductor first ran at 500.0 ms (train.py:12): {said}."
    # nothing compiled: the frame dynamo began and ran eagerly; a frame without a time is not a time
    fail = "Attempted to wrap RNN, GRU, or LSTM"
    frames = [
        EmptyFrame("0/0", "forward", "/home/u/gru.py", 6, None, fail=fail),
        EmptyFrame("1/0", "forward", "/home/u/gru.py", 6, None, fail=fail, time_us=3e6),
    ]
    eager = Report("2.13.0", "cpu", empty_frames=frames)
    assert eager.when == f"Dynamo began forward() at 3.00 s (gru.py:6); {frames[1].what}."
    assert Report("2.13.0", "cpu").when == "No timing was recorded."
    # each call as the views cite it, derived from its stack (a stored value is ignored)
    assert (call.line, r.compiles[0].trigger.line) == ("train.py:9 step = torch.compile(f)", "train.py:12 y = step(x)")
    assert dataclasses.replace(call, line="elsewhere").line == call.line
    # stored words are not trusted: the report's own facts decide
    data = json.loads(r.to_json())
    assert data["when"] == r.when
    data["when"] = "at torch.compile()"
    assert model.Report.from_dict(data).when == r.when
    # loaded lazily: said without building any compile
    r.save_json(tmp_path / "r.json")
    loaded = inductor_lens.load(tmp_path / "r.json")
    assert all(lazy.pending(c) for c in loaded.compiles) and loaded.when == r.when
    assert all(lazy.pending(c) for c in loaded.compiles)
    assert f"  when: {r.when[:60]}" in r.summary()


def test_the_summary_gives_a_graph_breaks_cause_not_torchs_header():
    from inductor_lens.report.model import GraphBreak

    reason = (
        "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
        "Unsupported Tensor.item() call with capture_scalar_outputs=False\n  Explanation: ..."
    )
    at = Frame("/home/u/dyn.py", 7, "forward", "n = x.sum().item()")
    r = Report("2.13.0", "cpu", graph_breaks=[GraphBreak(reason=reason, user_stack=[at])])
    (line,) = [ln for ln in r.summary().splitlines() if "graph break at" in ln]
    assert line == "  graph break at /home/u/dyn.py:7: Unsupported Tensor.item() call with capture_scalar_outputs=False"


def test_a_report_written_before_backward_compiled_says_both_cases_not_the_lazy_one_alone():
    """A forward of an older report (no ``backward_compiled``: not known) gets its note again on load, which no
    longer claims the backward compiles at the first .backward(): under dynamic shapes it compiled at once."""
    r = inductor_lens.load(ROOT / "tests" / "fixtures" / "gpu_training.json")
    fwd = next(c for c in r.compiles if c.graph_kind == "forward")
    assert fwd.backward_compiled == ""
    assert (
        "the backward compiles at the first .backward() (at once, with the forward, where the forward saves symbolic "
        "sizes for it)." in fwd.graph_note
    ), fwd.graph_note


def test_a_control_flow_call_is_a_box_named_by_its_branches_compiles_also_in_a_branch_and_in_an_older_report():
    """``finish.derive_compile`` (at capture and on loading an older report): a ``torch.cond`` call is never glue and
    names its branches as their compiles are named; a cond inside a branch names ``true_graph_0_true_graph_0``
    (Inductor's ``qualify_name``); a ``while_loop`` runs both its graphs, never "one of" them."""
    from inductor_lens.report.finish import derive_compile
    from inductor_lens.report.model import Graph, GraphNode

    def call(op, subgraph=""):
        names = (
            ["true_graph_0", "false_graph_0"]
            if op == "cond"
            else ["while_loop_cond_graph_0", "while_loop_body_graph_0"]
        )
        nodes = [GraphNode(b, "get_attr", b) for b in names] + [GraphNode(op, "call_function", f"higher_order.{op}")]
        node = FusedNode(
            name="op1", kind="extern", fx_nodes=[*names, op], kernel=None, is_glue=True, label="higher_order"
        )
        c = Compile(id="0/0 forward", compile_id="0/0", graph_kind="forward", trigger=Trigger("first_call", ""),
                    subgraph=subgraph, graphs={"post_grad": Graph(nodes=nodes)}, fused_nodes=[node])  # fmt: skip
        return derive_compile(c).fused_nodes[0]

    cond = call("cond")
    assert (cond.is_glue, cond.label, cond.ops) == (False, "cond → true_graph_0 | false_graph_0", ["cond"])
    assert cond.no_kernel_reason.startswith("torch.cond runs one of true_graph_0, false_graph_0 here")
    inner = call("cond", subgraph="true_graph_0")
    assert inner.label == "cond → true_graph_0_true_graph_0 | true_graph_0_false_graph_0"
    assert '(pick "true_graph_0_true_graph_0 (a subgraph)"' in inner.no_kernel_reason
    loop = call("while_loop")
    assert loop.label == "while_loop → while_loop_cond_graph_0, while_loop_body_graph_0" and not loop.is_glue
    assert "one of" not in loop.no_kernel_reason and "again and again" in loop.no_kernel_reason


def test_a_control_flow_call_links_to_its_branches_compiles_of_the_same_compile_id():
    """``finish.link_branches``: each branch a call names, by the ``Compile.id`` of the subgraph compile of the same
    compile id (a branch of another compile id, or one not in the report, gets no link); a cond inside a branch links
    to ``true_graph_0_true_graph_0``."""
    from inductor_lens.report.finish import derive_compile, link_branches
    from inductor_lens.report.model import BranchCompile, Graph, GraphNode

    def compile_(id_, cid, subgraph="", cond=True):
        names = ["true_graph_0", "false_graph_0"]
        nodes = [GraphNode(b, "get_attr", b) for b in names] + [GraphNode("cond", "call_function", "higher_order.cond")]
        fused = [FusedNode(name="op1", kind="extern", fx_nodes=[*names, "cond"], kernel=None)] if cond else []
        return derive_compile(
            Compile(id=id_, compile_id=cid, graph_kind="inference", trigger=Trigger("first_call", ""),
                    subgraph=subgraph, graphs={"post_grad": Graph(nodes=nodes if cond else [])}, fused_nodes=fused)
        )  # fmt: skip

    compiles = [
        compile_("0/0 inference", "0/0"),
        compile_("0/0 inference #2", "0/0", "true_graph_0"),  # itself calls a cond: true_graph_0_true_graph_0
        compile_("0/0 inference #3", "0/0", "true_graph_0_true_graph_0", cond=False),
        compile_("1/0 inference", "1/0", "false_graph_0", cond=False),  # another compile id's
    ]
    out = link_branches(compiles)
    assert out[0].fused_nodes[0].branch_compiles == [BranchCompile("true_graph_0", "0/0 inference #2")]
    assert out[1].fused_nodes[0].branch_compiles == [BranchCompile("true_graph_0_true_graph_0", "0/0 inference #3")]
    assert out[2] is compiles[2] and out[3] is compiles[3]  # nothing to link: the same object


def test_a_frame_traced_again_is_a_recompile_in_older_reports_too():
    """A report made before ``EmptyFrame.recompile_reason`` has none: a frame's second trace (``1/1``) is still a
    recompile (dynamo numbers a frame's traces), said so with torch's words where it recorded them."""
    from inductor_lens.report.model import EmptyFrame

    frames = [
        EmptyFrame("1/0", "torch_dynamo_resume_in_smooth_at_9", "s.py", 9, 0),
        EmptyFrame("1/1", "torch_dynamo_resume_in_smooth_at_9", "s.py", 9, 0),
        EmptyFrame("3/1", "g", "s.py", 20, 0, recompile_reason="3/0: ___stack0 == 2.5"),
    ]
    r = Report("2.13.0", "cpu", empty_frames=frames)
    assert [f.recompiled for f in r.empty_frames] == [False, True, True]
    assert r.empty_frames[0].why == "" and r.empty_frames[1].why == "a guard of an earlier compile failed"
    assert r.empty_frames[2].why.startswith("3/0: ___stack0 == 2.5\n___stack0: a value the code before the graph")
    assert r.recompiles() == [
        ("1/1", "recompile of torch_dynamo_resume_in_smooth_at_9: a guard of an earlier compile failed"),
        ("3/1", "recompile of g: 3/0: ___stack0 == 2.5"),
    ]
    # stored words are not trusted, and the field round-trips
    data = json.loads(r.to_json())
    data["empty_frames"][1]["why"] = "nothing"
    back = model.Report.from_dict(data)
    assert back.empty_frames == r.empty_frames and back.empty_frames[2].recompile_reason == "3/0: ___stack0 == 2.5"
