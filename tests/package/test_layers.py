"""The package's structure: layers by folder, imports pointing one way, no import circle.

Every import of every module is read from its source, those inside functions too (a lazy import is still an
arrow). The layers, lowest first: ``report`` (torch-free data), ``analysis`` (work on reports), ``capturing``
(the only code that touches ``torch._*``), ``views``. A module may import its own layer and the layers below;
the package root (``inductor_lens/__init__.py``, the public API) may import anything and nothing imports it.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[2] / "inductor_lens"
RANK = {"report": 0, "analysis": 1, "capturing": 2, "views": 3}
# top-level modules besides the root: their rank (``_version`` is a leaf; ``examples`` runs the demo capture)
TOP = {"_version": 0, "_compat": 4, "__main__": 3, "examples": 3}


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        rel = p.relative_to(PKG).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p  # "" is the package root
    return out


def _imports(name: str, path: pathlib.Path, modules: dict) -> list[tuple[str, int, str]]:
    """(imported module, line, what) for each import of one of our modules in ``path``."""
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if name else []
    pkg = here if is_pkg else here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and (node.module == "inductor_lens" or node.module.startswith("inductor_lens.")):
                target = node.module.split(".")[1:]
            else:
                continue
            target_name = ".".join(target)
            for alias in node.names:
                sub = ".".join(target + [alias.name])
                found.append(
                    (
                        sub if sub in modules else target_name,
                        node.lineno,
                        f"from {'.' * node.level}{node.module or ''} import {alias.name}",
                    )
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "inductor_lens" or alias.name.startswith("inductor_lens."):
                    found.append((".".join(alias.name.split(".")[1:]), node.lineno, f"import {alias.name}"))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "import_module"
            and any(s in ast.unparse(node) for s in ("inductor_lens", "__package__", "__name__", "__spec__"))
        ):
            found.append(("<importlib>", node.lineno, ast.unparse(node)))  # one of ours, named by a string
    return [f for f in found if f[0] != name]


def _rank(name: str) -> int:
    if name == "":
        return 99
    head = name.split(".")[0]
    return RANK[head] if head in RANK else TOP[head]


def _circles(adj: dict) -> list:
    """The import circles of a module graph: each set of modules that reach one another."""

    def reachable(start: str) -> set:
        seen, todo = set(), list(adj[start])
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(adj[m])
        return seen

    reach = {m: reachable(m) for m in adj}
    return sorted({tuple(sorted(n for n in reach[m] if m in reach[n])) for m in adj if m in reach[m]})


@pytest.fixture(scope="module")
def graph():
    modules = _modules()
    return modules, {m: _imports(m, p, modules) for m, p in modules.items()}


def test_every_module_lives_in_a_layer(graph):
    modules, _ = graph
    stray = sorted(m for m in modules if m and m.split(".")[0] not in RANK and m not in TOP)
    assert not stray, f"modules outside the layer packages {sorted(RANK)}: {stray}"


def test_imports_never_point_up_a_layer(graph):
    modules, edges = graph
    wrong = []
    for m, imports in edges.items():
        if m in ("", "_compat"):  # the public API and the old-path aliases wire every layer
            continue
        for target, line, text in imports:
            if target == "<importlib>":
                wrong.append(f"{m}:{line}: {text} (a module named by a string hides an arrow)")
            elif target == "" or _rank(target) > _rank(m):
                wrong.append(f"{m}:{line}: {text} ({m or 'root'} is below {target or 'the package root'})")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_no_import_circle_lazy_imports_included(graph):
    modules, edges = graph
    adj = {m: sorted({t for t, _, _ in edges[m] if t in modules and t != ""}) for m in modules}
    comps = _circles(adj)
    assert not comps, f"import circles: {comps}"


def test_only_the_capture_layer_touches_torch_internals(graph):
    modules, _ = graph
    wrong = []
    for m, p in modules.items():
        if m.split(".")[0] == "capturing":
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            wrong += [f"{m}:{node.lineno}: {n}" for n in names if n.startswith("torch._")]
    assert not wrong, "torch internals outside inductor_lens/capturing: " + ", ".join(wrong)


def test_the_report_layer_imports_neither_torch_nor_the_widget_machinery(graph):
    modules, _ = graph
    wrong = []
    for m, p in modules.items():
        if m.split(".")[0] not in ("report", "analysis"):
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            wrong += [
                f"{m}:{node.lineno}: {n}"
                for n in names
                if n.split(".")[0] in ("torch", "anywidget", "ipywidgets", "traitlets", "IPython")
            ]
    assert not wrong, "report/analysis import torch or the widget machinery: " + ", ".join(wrong)


def test_the_checks_above_can_fail(tmp_path):
    """The walker sees a lazy import inside a function and a circle (a test that cannot fail is a defect)."""
    (tmp_path / "a.py").write_text("def f():\n    from .b import x\n")
    (tmp_path / "b.py").write_text("from .a import f\n")
    mods = {"report.a": tmp_path / "a.py", "report.b": tmp_path / "b.py"}
    assert _imports("report.a", tmp_path / "a.py", mods)[0][0] == "report.b"
    assert _imports("report.b", tmp_path / "b.py", mods)[0][0] == "report.a"
    assert _circles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [("a", "b", "c")]
    assert _circles({"a": ["b"], "b": []}) == []


def test_old_module_paths_still_import_the_moved_modules():
    import importlib
    import warnings

    import inductor_lens
    from inductor_lens._compat import MOVED

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for old in ("model", "report_io", "_capture.session", "cost", "_derive"):
            assert importlib.import_module(f"inductor_lens.{old}") is importlib.import_module(
                f"inductor_lens.{MOVED[old]}"
            )
        import inductor_lens.diff  # noqa: F401  must not turn the function into a module
    assert callable(inductor_lens.diff) and not isinstance(inductor_lens.diff, type(inductor_lens))
