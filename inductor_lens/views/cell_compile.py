"""What the magic knows about compiled objects, the ``-f`` rewrite of a cell, and which lens cell compiled
which object (no IPython, no torch import).

``-f NAME`` compiles NAME right after the cell binds it: :class:`_CompileAfterBinding` inserts a call of
``__inductor_lens_compile__("NAME")`` after each module-level statement that binds NAME.
"""

from __future__ import annotations

import ast
import types
import weakref
from typing import Any, Optional

MAGIC_NAME = "inductor_lens"
_HELPER = "__inductor_lens_compile__"  # bound in the user namespace only while a lens cell runs


# -- the -f rewrite ----------------------------------------------------------------------------


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Names a module-level statement binds in the global namespace."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    targets: list = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    names = set()
    for t in targets:
        for node in ast.walk(t):
            if isinstance(node, ast.Name):
                names.add(node.id)
    return names


class _CompileAfterBinding(ast.NodeTransformer):
    """After each module-level statement that binds one of ``names``, insert
    ``__inductor_lens_compile__("NAME")`` (with the statement's line number, so tracebacks stay right)."""

    _BLOCKS = ("body", "orelse", "finalbody")

    def __init__(self, names):
        self.names = tuple(names)
        self.bound: set[str] = set()

    def visit_Module(self, node: ast.Module) -> ast.Module:
        node.body = self._rewrite(node.body)
        return node

    def _rewrite(self, body: list) -> list:
        out = []
        for stmt in body:
            # blocks at module level (if/for/while/with/try) still bind globals
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for attr in self._BLOCKS:
                    block = getattr(stmt, attr, None)
                    if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                        setattr(stmt, attr, self._rewrite(block))
                for handler in getattr(stmt, "handlers", []) or []:
                    handler.body = self._rewrite(handler.body)
            out.append(stmt)
            for name in sorted(_bound_names(stmt) & set(self.names)):
                self.bound.add(name)
                call = ast.Expr(ast.Call(ast.Name(_HELPER, ast.Load()), [ast.Constant(name)], []))
                out.append(ast.fix_missing_locations(ast.copy_location(call, stmt)))
        return out


# -- compiled objects ----------------------------------------------------------------------------


def _original(obj):
    """The plain function/module under a torch.compile wrapper (so a re-run compiles it afresh)."""
    for _ in range(8):
        orig = getattr(obj, "_torchdynamo_orig_callable", None)
        if orig is None and _is_optimized_module(obj):
            orig = obj._orig_mod
        if orig is None:
            return obj
        obj = orig
    return obj


def _is_optimized_module(obj) -> bool:
    return type(obj).__name__ == "OptimizedModule" and hasattr(obj, "_orig_mod")


def _is_compiled(obj) -> bool:
    if isinstance(obj, types.FunctionType):
        return getattr(obj, "_torchdynamo_orig_callable", None) is not None
    return _is_optimized_module(obj)


def _frame_names(obj) -> set[str]:
    orig = _original(obj)
    names = {getattr(orig, "__name__", None), getattr(orig, "__qualname__", None)}
    if not isinstance(orig, types.FunctionType):
        names |= {"forward", "_call_impl", type(orig).__name__}
    return {n for n in names if n}


def _compile_id_for(report, obj) -> Optional[str]:
    names = _frame_names(obj)
    for c in report.compiles:
        if c.frame in names or c.frame.split(".")[-1] in names:
            return c.id
    return None


def _is_compiled_safe(value) -> bool:
    try:
        return _is_compiled(value)
    except Exception:
        return False


# -- which lens cell compiled what (``display(f)``) ---------------------------------------------------


class _Entry:
    __slots__ = ("report", "compile_id", "view", "how_to_save")

    def __init__(self, report, compile_id: Optional[str], view: Optional[str], how_to_save: Optional[str] = None):
        self.report = report
        self.compile_id = compile_id
        self.view = view
        self.how_to_save = how_to_save


# compiled wrapper (function or OptimizedModule) -> the report of the lens cell that compiled it.
_REGISTRY: "weakref.WeakKeyDictionary[Any, _Entry]" = weakref.WeakKeyDictionary()


def report_for(obj) -> Optional[Any]:
    """The :class:`~inductor_lens.Report` of the lens cell that compiled ``obj``, or ``None``."""
    entry = _lookup(obj)
    return entry.report if entry is not None else None


def _lookup(obj) -> Optional[_Entry]:
    try:
        return _REGISTRY.get(obj)
    except TypeError:  # not weak-referenceable / unhashable: never one of ours
        return None
