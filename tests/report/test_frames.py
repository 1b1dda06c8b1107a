"""A frame as the views name it (nu25 D5/D6): its qualified name, its file by its path inside torch or
site-packages, the dynamo -> Inductor hand-off in Inductor's stage, and the notes on the compiler stack's
frames that a newcomer cannot read from the code alone. Unit tests on report data; the real compile's stack is
checked in tests/capturing/test_capture.py."""

import dataclasses
import json
import shutil

import pytest

import inductor_lens
from inductor_lens.model import Frame
from inductor_lens.report.rules import (
    CACHE_BYPASS_NOTE,
    EVAL_FRAME_NOTE,
    HANDOFF_NOTE,
    compiler_stack_notes,
    file_label,
    frame_stage,
)
from tests.report.test_model import _expand_in_node, _tiny

SITE = "/home/me/torch/.venv/lib/python3.11/site-packages"  # an environment made in a folder named torch


@pytest.mark.parametrize(
    "path, label",
    [
        (f"{SITE}/torch/__init__.py", "torch/__init__.py"),
        (f"{SITE}/torch/_dynamo/convert_frame.py", "torch/_dynamo/convert_frame.py"),
        (f"{SITE}/torch/_dynamo/backends/common.py", "torch/_dynamo/backends/common.py"),
        (f"{SITE}/torch/_functorch/_aot_autograd/schemas.py", "torch/_functorch/_aot_autograd/schemas.py"),
        ("C:\\venv\\Lib\\site-packages\\torch\\_inductor\\compile_fx.py", "torch/_inductor/compile_fx.py"),
        (
            "/usr/lib/python3/dist-packages/transformers/models/gpt2/modeling_gpt2.py",
            "transformers/models/gpt2/modeling_gpt2.py",
        ),
        # a source build of torch (an editable install): from the package's folder
        ("/home/me/src/pytorch/torch/_inductor/scheduler.py", "torch/_inductor/scheduler.py"),
        # the standard library: its path inside the library
        ("/usr/lib/python3.11/contextlib.py", "contextlib.py"),
        ("/usr/lib/python3.11/importlib/__init__.py", "importlib/__init__.py"),
        # the user's files keep their short names: in a folder named torch, in a clone named inductor_lens
        ("/home/me/torch/train.py", "train.py"),
        ("/home/me/inductor_lens/tests/capturing/test_capture.py", "test_capture.py"),
        ("/home/me/inductor_lens/inductor_lens/examples.py", "examples.py"),
        # inductor_lens's own (the magic's call of a cell): from its package's folder, in any clone
        ("/home/me/inductor_lens/inductor_lens/magic.py", "inductor_lens/magic.py"),
        ("cell [3]", "cell [3]"),
        ("<string>", "<string>"),
        ("<frozen runpy>", "<frozen runpy>"),
    ],
)
def test_file_label_is_the_path_inside_torch_or_site_packages_and_the_users_name(path, label):
    assert file_label(path) == label
    assert Frame(path, 1, "f").file_label == label


def test_function_label_is_the_qualified_name_and_qualname_is_kept_only_where_it_says_more():
    call = Frame(f"{SITE}/torch/_dynamo/convert_frame.py", 2628, "__call__", qualname="CatchErrorsWrapper.__call__")
    assert call.function_label == "CatchErrorsWrapper.__call__" and call.function == "__call__"
    plain = Frame("/w/train.py", 3, "main", qualname="main")
    assert plain.qualname == "" and plain.function_label == "main"  # stored only where it differs
    logged = Frame(f"{SITE}/torch/_dynamo/convert_frame.py", 2628, "__call__")  # a log's stack: names only
    assert logged.function_label == "__call__"
    # a resume function after a graph break is still named as the user's function and the break
    resume = Frame("/w/t.py", 9, "torch_dynamo_resume_in_f_at_5", qualname="torch_dynamo_resume_in_f_at_5")
    assert resume.function_label == "f (after the graph break at line 5)"


def test_the_inductor_backend_torch_compile_built_is_in_inductors_stage():
    init = f"{SITE}/torch/__init__.py"
    assert frame_stage(init, "__call__", "_TorchCompileInductorWrapper.__call__") == "inductor"
    assert frame_stage(init, "__call__", "_TorchCompileAOTInductorWrapper.__call__") == "inductor"
    assert frame_stage(init, "__call__") == "inductor"  # a report of before qualified names
    assert frame_stage(init, "__call__", "_TorchCompileWrapper.__call__") == "torch"  # another backend's
    assert frame_stage(init, "compile") == "torch"
    assert frame_stage("/home/me/proj/__init__.py", "__call__") == "user"  # the user's own __call__


def _stack(*rows):
    return [(f"{SITE}/torch/{f}", fn, q, code) for f, fn, q, code in rows]


def test_compiler_stack_notes_mark_the_c_hop_the_hand_off_and_the_cache_bypass_branch_by_function_not_line():
    stack = _stack(
        ("_dynamo/eval_frame.py", "compile_wrapper", "", "result = fn(*args, **kwargs)"),
        (
            "_dynamo/convert_frame.py",
            "__call__",
            "CatchErrorsWrapper.__call__",
            "result = self._torchdynamo_orig_backend(",
        ),
        ("_dynamo/convert_frame.py", "__call__", "ConvertFrame.__call__", "result = self._inner_convert("),
        ("_dynamo/repro/after_dynamo.py", "__call__", "WrapBackendDebug.__call__", "compiled_gm = compiler_fn(gm, ex)"),
        ("__init__.py", "__call__", "_TorchCompileInductorWrapper.__call__", "return compile_fx("),
        ("_inductor/compile_fx.py", "compile_fx_inner", "", "return wrap_compiler_debug(_compile_fx_inner)("),
        ("_inductor/compile_fx.py", "_compile_fx_inner", "", "mb_compiled_graph = fx_codegen_and_compile("),
        ("_inductor/compile_fx.py", "fx_codegen_and_compile", "", "return scheme.codegen_and_compile("),
    )
    notes = compiler_stack_notes(stack, True)
    assert notes == ["", EVAL_FRAME_NOTE, "", "", HANDOFF_NOTE, "", CACHE_BYPASS_NOTE, ""]
    assert "cache-bypass branch" in CACHE_BYPASS_NOTE and "cache-miss branch" in CACHE_BYPASS_NOTE
    # where the capture did not turn the cache off, the path is not said to be the bypass branch
    assert CACHE_BYPASS_NOTE not in compiler_stack_notes(stack, False)
    # another backend's wrapper hands nothing to Inductor
    other = _stack(
        ("__init__.py", "__call__", "_TorchCompileWrapper.__call__", "return self.compiler_fn(model_, inputs_)")
    )
    assert compiler_stack_notes(other, True) == [""]


def _with_stack(stack):
    r = _tiny()
    k = dataclasses.replace(r.compiles[0].kernels[0], compiler_stack=stack)
    return dataclasses.replace(r, compiles=[dataclasses.replace(r.compiles[0], kernels=[k])])


def _compiler_stack():
    return [
        Frame("/w/train.py", 12, "<module>", "out = f(x)"),
        Frame(
            f"{SITE}/torch/_dynamo/convert_frame.py",
            2628,
            "__call__",
            "x",
            qualname="CatchErrorsWrapper.__call__",
            note=EVAL_FRAME_NOTE,
        ),
        Frame(f"{SITE}/torch/_dynamo/convert_frame.py", 2319, "__call__", "y", qualname="ConvertFrame.__call__"),
        Frame(
            f"{SITE}/torch/__init__.py",
            2489,
            "__call__",
            "z",
            qualname="_TorchCompileInductorWrapper.__call__",
            note=HANDOFF_NOTE,
        ),
    ]


def test_qualnames_notes_and_file_labels_survive_both_written_forms_and_old_reports_load(tmp_path):
    stack = _compiler_stack()
    assert [f.stage for f in stack] == ["user", "dynamo", "dynamo", "inductor"]
    r = _with_stack(stack)
    small = json.loads(r.to_json())
    assert inductor_lens.load(small) == r == inductor_lens.load(r.to_json(compact=False))
    t = small["interned"]
    rows = {tuple(row[2:]) for row in t["frames"]}
    # qualname stored only where it is not the name, the note after it where there is one
    assert ("__call__", "y", "dynamo", "ConvertFrame.__call__") in rows
    assert ("__call__", "x", "dynamo", "CatchErrorsWrapper.__call__", EVAL_FRAME_NOTE) in rows
    assert ("<module>", "out = f(x)", "user") in rows
    assert t["file_labels"][f"{SITE}/torch/__init__.py"] == "torch/__init__.py"
    # a report written before these fields: no qualname, no note, file labels derived on load
    old = json.loads(r.to_json())
    del old["interned"]["file_labels"]
    old["interned"]["frames"] = [row[:5] for row in old["interned"]["frames"]]
    back = inductor_lens.load(old).compiles[0].kernels[0].compiler_stack
    assert [f.function_label for f in back] == ["<module>", "__call__", "__call__", "__call__"]
    assert [f.file_label for f in back] == ["train.py", *["torch/_dynamo/convert_frame.py"] * 2, "torch/__init__.py"]
    assert not any(f.note for f in back)
    if shutil.which("node") is None:
        pytest.skip("needs Node.js for the front end's half")
    out = _expand_in_node(
        tmp_path,
        r,
        "const s = expandReport(small).compiles[0].kernels[0].compiler_stack;"
        "console.log(JSON.stringify(s.map((f) => [f.file_label, f.function_label, f.note.slice(0, 14)])));",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == [
        ["train.py", "<module>", ""],
        ["torch/_dynamo/convert_frame.py", "CatchErrorsWrapper.__call__", EVAL_FRAME_NOTE[:14]],
        ["torch/_dynamo/convert_frame.py", "ConvertFrame.__call__", ""],
        ["torch/__init__.py", "_TorchCompileInductorWrapper.__call__", HANDOFF_NOTE[:14]],
    ]
