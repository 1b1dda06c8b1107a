"""Where the user's code built each module (report/built.py), read from the text of the user's files with ``ast``
(no torch): each construction form a model of torch's modules is written in, the choice of the construction that
fits a compile's module paths, and the rule that a line that ran wins. The real captures are in
tests/capturing/test_built_lines.py."""

from __future__ import annotations

import textwrap

from inductor_lens.report.built import Reader, Site, fit, mark_built, resolve
from inductor_lens.report.finish import finish_compile
from inductor_lens.report.model import Compile, Frame, FusedNode, Graph, GraphNode, Report, SourceFile, Trigger

FILE = "/home/me/train.py"


def _text(src: str) -> str:
    return textwrap.dedent(src).lstrip("\n")


def _line(text: str, code: str) -> int:
    """The 1-based line of ``text`` that holds ``code`` (an independent expectation: found by its text)."""
    (n,) = [i for i, ln in enumerate(text.split("\n"), 1) if code in ln]
    return n


def _built(text: str, types: dict[str, str], call: str = "") -> dict[str, int]:
    """Each module path of ``types`` -> the line its site is on, in the construction that fits ``types``."""
    reader = Reader([SourceFile(FILE, text)])
    near = [(FILE, _line(text, call))] if call else []
    root = fit(reader.roots(), types, near)
    assert root is not None, "no construction fits"
    out = {}
    for path, tp in types.items():
        s = resolve(root, path, types)
        if isinstance(s, Site) and s.ctor == tp:
            out[path] = s.line
    return out


def test_sequential_children_are_numbered_by_position_one_line_each():
    text = _text("""
        import torch
        from torch import nn

        model = nn.Sequential(
            nn.Linear(16, 32),
            nn.GELU(),
            nn.Linear(32, 4),
        )
        compiled = torch.compile(model)
    """)
    got = _built(text, {"0": "Linear", "1": "GELU", "2": "Linear"})
    assert got == {"0": _line(text, "nn.Linear(16, 32)"), "1": _line(text, "nn.GELU()"), "2": _line(text, "(32, 4)")}


def test_ordered_dict_keywords_module_dict_and_an_import_alias_name_the_children():
    text = _text("""
        from collections import OrderedDict
        from torch import nn
        from torch.nn import Linear as L

        model = nn.Sequential(OrderedDict([
            ("features", nn.Sequential(OrderedDict(conv=L(8, 16), act=nn.ReLU()))),
            ("heads", nn.ModuleDict({"cls": nn.Linear(16, 2)})),
        ]))
    """)
    types = {"features": "Sequential", "features.conv": "Linear", "features.act": "ReLU", "heads.cls": "Linear"}
    got = _built(text, types)
    assert got["features.conv"] == got["features.act"] == _line(text, "conv=L(8, 16)")
    assert got["heads.cls"] == _line(text, '{"cls"')


def test_a_comprehension_maps_every_index_and_init_assignments_name_a_class_children():
    text = _text("""
        from torch import nn

        class Block(nn.Sequential):
            def __init__(self, d):
                super().__init__()
                if d > 8:
                    self.norm = nn.LayerNorm(d)
                else:
                    self.norm = nn.Identity()
                self.fc = nn.Linear(d, d)

        class Net(nn.Sequential):
            def __init__(self):
                super().__init__(nn.Linear(4, 16), *[Block(16) for _ in range(12)])

        model = Net()
    """)
    types = {"0": "Linear", "1": "Block", "1.norm": "LayerNorm", "11.norm": "Identity", "7.fc": "Linear"}
    got = _built(text, types)
    assert got["0"] == got["1"] == _line(text, "super().__init__(nn.Linear")
    assert got["1.norm"] == _line(text, "nn.LayerNorm(d)")  # the branch that builds the recorded class
    assert got["11.norm"] == _line(text, "nn.Identity()")
    assert got["7.fc"] == _line(text, "self.fc = ")


def test_lists_filled_by_append_in_a_function_and_module_lists_spread_into_a_sequential():
    """torchvision's ``_make_layer``: the first block appended alone, the rest in a loop."""
    text = _text("""
        from torch import nn

        def make_layer(n):
            layers = []
            layers.append(nn.Conv2d(3, 8, 3))
            for _ in range(1, n):
                layers.append(nn.Conv2d(8, 8, 3))
            return nn.Sequential(*layers)

        def build():
            blocks = nn.ModuleList()
            blocks.append(nn.BatchNorm2d(8))
            blocks += [nn.ReLU()]
            return nn.Sequential(OrderedDict(layer1=make_layer(3), tail=nn.Sequential(*blocks)))
    """)
    types = {
        "layer1": "Sequential",
        "layer1.0": "Conv2d",
        "layer1.2": "Conv2d",
        "tail.0": "BatchNorm2d",
        "tail.1": "ReLU",
    }
    got = _built(text, types)
    assert got["layer1"] == _line(text, "layer1=make_layer(3)")
    assert got["layer1.0"] == _line(text, "nn.Conv2d(3, 8, 3)")
    assert got["layer1.2"] == _line(text, "nn.Conv2d(8, 8, 3)")
    assert got["tail.0"] == _line(text, "BatchNorm2d")
    assert got["tail.1"] == _line(text, "[nn.ReLU()]")


def test_the_construction_that_fits_is_chosen_and_ties_go_to_the_nearest_before_the_call():
    text = _text("""
        from torch import nn

        small = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        other = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        again = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        out = compiled(x)
        later = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    """)
    types = {"0": "Linear", "1": "Tanh"}
    assert _built(text, types) == {"0": _line(text, "other = "), "1": _line(text, "other = ")}
    got = _built(text, {"0": "Linear", "1": "ReLU"}, call="compiled(x)")
    assert got == {"0": _line(text, "again = "), "1": _line(text, "again = ")}
    # a path the construction cannot have (a closed Sequential of two children has no "2"): not that one
    reader = Reader([SourceFile(FILE, text)])
    assert fit(reader.roots(), {"0": "Linear", "2": "ReLU"}, []) is None


def test_a_class_of_the_file_that_builds_only_some_of_the_compiled_model_children_is_not_taken_for_it():
    """A torchvision ResNet compiled in a file that also builds a small net of its own with a ``conv1``: the
    ResNet's ``layer1`` is nowhere in the file, so no line claims its ``conv1`` either."""
    text = _text("""
        from torch import nn
        import torchvision

        class Small(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 8, 3)

        small = Small()
        model = torchvision.models.resnet18()
    """)
    reader = Reader([SourceFile(FILE, text)])
    types = {"conv1": "Conv2d", "layer1": "Sequential", "layer1.0": "BasicBlock", "layer1.0.conv1": "Conv2d"}
    assert fit(reader.roots(), types, []) is None
    assert fit(reader.roots(), {"conv1": "Conv2d"}, []) is not None


def test_a_notebook_cell_with_magics_is_read_and_text_that_does_not_parse_is_left_alone():
    cell = "%%inductor_lens\n!nvidia-smi\nmodel = nn.Sequential(nn.Linear(2, 2))\n"
    assert _built(cell, {"0": "Linear"}) == {"0": 3}
    assert Reader([SourceFile(FILE, "def broken(:\n")]).roots() == []


def _compile(nodes, fused) -> Compile:
    return finish_compile(
        Compile(
            id="0/0 forward",
            compile_id="0/0",
            graph_kind="forward",
            trigger=Trigger("first_call", "", user_stack=[Frame(FILE, 9, "<module>", "compiled(x)")]),
            graphs={"post_grad": Graph(nodes=nodes)},
            fused_nodes=fused,
        )
    )


def test_ops_that_ran_inside_torch_get_the_line_that_built_their_innermost_module_and_a_line_that_ran_wins():
    text = _text("""
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), make_act())
                self.head = nn.Linear(4, 2)

        model = Net()
        compiled(x)
    """)
    ran = Frame(FILE, 12, "forward", "return self.head(x)")
    nodes = [
        GraphNode(
            "addmm",
            "call_function",
            "aten.addmm.default",
            module_stack=["body", "body.0"],
            module_types=["Sequential", "Linear"],
        ),
        # built by a call of a function the file does not define (a factory: it built whatever the path says)
        GraphNode(
            "gelu",
            "call_function",
            "aten.gelu.default",
            module_stack=["body", "body.1"],
            module_types=["Sequential", "GELU"],
        ),
        GraphNode(
            "head",
            "call_function",
            "aten.addmm.default",
            user_stack=[ran],
            module_stack=["head"],
            module_types=["Linear"],
        ),
    ]
    fused = [
        FusedNode("op0", "extern", ["addmm"], "extern_kernels.addmm"),
        FusedNode("op1", "pointwise", ["gelu"], "cpp_fused_gelu_0"),
        FusedNode("op2", "extern", ["head"], "extern_kernels.addmm"),
    ]
    report = mark_built(Report("2.13", "cpu", compiles=[_compile(nodes, fused)], source_files=[SourceFile(FILE, text)]))
    op0, op1, op2 = report.compiles[0].fused_nodes
    body = _line(text, "self.body = ")
    assert [(b.line, b.modules, b.module_types, b.function) for b in op0.built_lines] == [
        (body, ["body.0"], ["Linear"], "Net.__init__")
    ]
    assert [(b.line, b.modules, b.module_types, b.code) for b in op1.built_lines] == [
        (body, ["body.1"], ["GELU"], text.split("\n")[body - 1].strip())  # make_act() on the Sequential's line
    ]
    assert op0.user_lines == [] and op0.no_line_reason  # still no line that ran: built is said apart
    assert op2.built_lines == [] and op2.user_lines == [ran]  # the line that ran wins
    # without the file's text there is no map, and nothing is claimed
    bare = mark_built(Report("2.13", "cpu", compiles=[_compile(nodes, fused)]))
    assert all(n.built_lines == [] for n in bare.compiles[0].fused_nodes)


def test_a_function_reads_a_name_of_the_file_top_level_and_an_unknown_element_says_nothing():
    text = _text("""
        from torch import nn

        stem = nn.Linear(8, 16)
        blocks = nn.ModuleList()
        for _ in range(4):
            blocks.append(nn.ReLU())

        def build(parts):
            return nn.Sequential(stem, *blocks, *[p for p in parts], nn.Linear(16, 2))
    """)
    got = _built(text, {"0": "Linear", "1": "ReLU", "4": "ReLU"})
    assert got == {"0": _line(text, "stem = "), "1": _line(text, "blocks.append"), "4": _line(text, "blocks.append")}
