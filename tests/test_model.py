"""The report model: JSON contract, schema, loading errors, parsers. No torch compile here."""

import json
import pathlib
import subprocess
import sys

import pytest

import inductor_lens
from inductor_lens import model
from inductor_lens._capture import parse
from inductor_lens.model import Compile, Frame, FusedNode, Kernel, Report, Trigger

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tiny():
    k = Kernel(name="cpp_fused_add_0", language="cpp", source="x </script><!-- y", fused_nodes=["op0"],
               user_stack=[[Frame("m.py", 3, "f", "return a + b")]], metadata={"launch": {"num_warps": 4}})
    c = Compile(id="0/0 inference", compile_id="0/0", graph_kind="inference",
                trigger=Trigger(kind="first_call", reason="first call of f()"), kernels=[k],
                fused_nodes=[FusedNode(name="op0", kind="pointwise", kernel=k.name, writes=["buf0"])])
    return Report(torch_version="2.13.0", device="cpu", compiles=[c])


def test_round_trip_and_top_level_fields():
    r = _tiny()
    data = json.loads(r.to_json())
    assert {"schema_version", "torch_version", "device", "compiles", "graph_breaks", "diagnostics"} <= set(data)
    assert data["schema_version"] == model.SCHEMA_VERSION
    c = data["compiles"][0]
    assert {"id", "compile_id", "graph_kind", "trigger", "phases", "graphs", "fused_nodes", "kernels",
            "output_code", "fusion_decisions"} <= set(c)
    assert set(c["kernels"][0]) >= {"name", "language", "source", "fused_nodes", "user_stack", "compiler_stack"}
    assert set(c["kernels"][0]["user_stack"][0][0]) == {"file", "line", "function", "code"}
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


def test_committed_json_schema_is_current():
    committed = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    assert committed == model.json_schema(), "run: python -c \"import json, inductor_lens.model as m; " \
        "open('docs/report.schema.json','w').write(json.dumps(m.json_schema(), indent=1)+'\\n')\""


def test_model_and_package_import_without_torch():
    code = ("import sys, builtins; real = builtins.__import__\n"
            "def guard(name, *a, **k):\n"
            "    if name == 'torch' or name.startswith('torch.'): raise ImportError('torch is not allowed here')\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = guard\n"
            "import inductor_lens\n"
            "r = inductor_lens.load(open(sys.argv[1]).read()); print(len(r.kernels))")
    path = ROOT / "tests" / "fixtures" / "gpu_training.json"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 10


def test_parse_stack_trace_drops_carets_and_keeps_code():
    text = ('  File "/a/m.py", line 12, in forward\n    y = torch.sin(x)\n        ^^^^^^^^^^^^\n'
            '  File "/a/n.py", line 3, in g\n    return y\n')
    assert parse.parse_stack_trace(text) == [Frame("/a/m.py", 12, "forward", "y = torch.sin(x)"),
                                             Frame("/a/n.py", 3, "g", "return y")]
    assert parse.parse_stack_trace(None) == []


def test_parse_output_code_kernels_takes_exact_source():
    code = ("x = 1\ncpp_fused_a_0 = async_compile.cpp_pybinding(['float*'], r'''\nint k() { return 1; }\n''')\n"
            "triton_poi_b_1 = async_compile.triton('triton_poi_b_1', '''\n@triton.jit\ndef k(): pass\n''', "
            "device_str='cuda')\n")
    got = parse.parse_output_code_kernels(code)
    assert got == {"cpp_fused_a_0": ("cpp", "\nint k() { return 1; }\n"),
                   "triton_poi_b_1": ("triton", "\n@triton.jit\ndef k(): pass\n")}


def test_clean_module_path():
    assert parse.clean_module_path("L['self'].h[0]._modules['attn']") == "h.0.attn"
    assert parse.clean_module_path("L['self'].fc1") == "fc1"
    assert parse.clean_module_path("fc2") == "fc2"


def test_graph_break_text():
    text = ("Graph break in user code at /m.py:14\nGraph Break Reason: Call to print\n  Explanation: no\n\n"
            "User code traceback:\n  File \"/m.py\", line 20, in <module>\n    f(x)\n"
            "  File \"/m.py\", line 14, in f\n    print('x')\n\nTraceback (most recent call last):\n  junk")
    reason, stack = parse.parse_graph_break(text)
    assert reason.startswith("Call to print") and "Traceback" not in reason
    assert [f.line for f in stack] == [20, 14]


def test_fused_node_module_is_where_most_of_its_ops_come_from():
    from inductor_lens._capture.build import _majority_prefix

    block6 = ["h.6", "h.6.mlp"]
    assert _majority_prefix([block6, block6, ["h.7", "h.7.ln_1"]]) == ["h.6", "h.6.mlp"]
    assert _majority_prefix([["h.6", "h.6.mlp"], ["h.6", "h.6.attn"], []]) == ["h.6"]
    assert _majority_prefix([["a"], ["b"]]) == []  # a tie is no majority
    assert _majority_prefix([["a"], ["b"], ["c"]]) == []
    assert _majority_prefix([[], []]) == []
