"""Where the user's code built each module: the map of a model made of torch's own modules (torch-free).

An op of ``nn.Sequential(nn.Linear(16, 32), nn.GELU())`` runs in ``Sequential.forward`` calling
``Linear.forward``, both inside torch: its stack holds no line of the user's, and the Source view had nothing
to annotate. Its module path does say where it belongs (``GraphNode.module_stack``: ``0``, ``features.3``), and
the user's file that BUILT the model is in the report (``Report.source_files``: the trigger's stack always
reaches the user's call). This module reads those files with :mod:`ast` (nothing is imported or run) and finds
where each module path was constructed:

- ``nn.Sequential(a, b, c)``: the children ``0``, ``1``, ``2`` (``*layers`` expanded where ``layers`` is a list
  literal, a comprehension, ``[X] * n``, an ``nn.ModuleList`` or a list filled by ``append``/``extend``);
  ``nn.Sequential(OrderedDict(...))`` and ``nn.ModuleDict({...})``: the named children;
- ``nn.ModuleList([...])``, and a comprehension ``[Block() for _ in range(n)]`` (every index is its element);
- ``self.name = nn.Linear(...)`` (and ``add_module``) in the ``__init__`` of a class defined in those files, its
  user base classes' too, and ``super().__init__(a, b)`` of a class derived from ``nn.Sequential``;
- a call of a function or method of those files (``self._make_layer(...)``): what it returns.

:func:`mark_built` picks, for each compile, the construction its module paths and classes
(``GraphNode.module_types``) fit best (every path it spells out must exist, and the most paths must build the
recorded class; ties go to the one nearest before the user's call that compiled it), and gives each fused node
with no line of its own (``FusedNode.user_lines`` empty) the line that built the innermost module of each of its
ops that has one, whose class is the class recorded: ``FusedNode.built_lines``. A line that ran always wins.
A model a library built (``T.GPT2LMHeadModel(cfg)``, ``timm.create_model(...)``) is the user's call that made what
the compiled call ran (:meth:`Reader.compiled_at`): of the class ``torch.compile`` was given or the compiled frame's,
the one such call every assignment that can reach the use leaves (a flag's branches: the one of that class), else none.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Optional, Union

from .lines import kernel_built_lines, mark_rollups
from .model import BuiltLine, Compile, CompileCall, FusedNode, Report, SourceFile
from .rules import NOT_OPS

#: Module classes whose children the call's arguments give.
SEQUENCE, LIST, DICT = "Sequential", "ModuleList", "ModuleDict"
CONTAINERS = frozenset({SEQUENCE, LIST, DICT})

#: How deep one evaluation may follow names, calls and classes (a bound against cycles).
MAX_DEPTH = 24

#: An IPython line or cell magic, or a shell escape: blanked (line numbers kept) so a cell parses.
_MAGIC = re.compile(r"^\s*(%|!)")


@dataclass(eq=False)
class Site:
    """Where one module is built: the call's ``file``/``line``, the enclosing ``function``, the class it calls
    (``ctor``, import aliases resolved) and its children as far as they are known. ``children``: each name's
    candidates (an ``if`` may assign ``self.norm`` twice: the one of the recorded class is taken); ``every``: the
    one site of every numbered child not in ``children`` (a comprehension, a list filled in a loop); ``closed``:
    no other child can exist (the call's arguments are all read), so a path through a name it lacks is not it.
    ``factory``: a call of a function none of the user's files defines (``timm.create_model(...)``: lower case, where a
    class is CapWords): it built a module of any class and everything under it, which the files do not spell out."""

    file: str
    line: int
    function: str
    ctor: str
    children: dict[str, list["Site"]] = field(default_factory=dict)
    every: Optional["Site"] = None
    closed: bool = False
    factory: bool = False


@dataclass
class _Items:
    """The modules a list-like expression holds: the known ones in order, then ``every`` for any further index."""

    known: list[Optional[Site]] = field(default_factory=list)
    every: Optional[Site] = None
    closed: bool = True

    def add(self, more: "_Items") -> None:
        if self.every is not None or not self.closed:  # an unknown count before: no later index is known
            self.closed = False
            return
        self.known += more.known
        self.every, self.closed = more.every, more.closed


def _open() -> _Items:
    """Items of which nothing is known (a list the files do not spell out)."""
    return _Items(closed=False)


def _each(s: Optional[Site]) -> _Items:
    """Any number of items, each ``s`` (a comprehension's element); nothing known where ``s`` is not."""
    return _Items(every=s) if s is not None else _open()


def _key(node: ast.AST) -> str:
    """``layers`` for a name, ``self.layers`` for an attribute of a name; ``""`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return ""


def _str(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Scope:
    """One function's body (or a file's top level): what each name is assigned, and what is added to it
    (``append``/``extend``/``+=``), in order, with whether that happened in a loop or under a condition."""

    def __init__(self, file: str, function: str, body: list[ast.stmt], parent: Optional["_Scope"] = None) -> None:
        self.file, self.function, self.parent = file, function, parent
        self.assigns: dict[str, list[tuple[int, ast.expr]]] = defaultdict(list)
        self.adds: dict[str, list[tuple[int, str, ast.expr, bool, bool]]] = defaultdict(list)
        #: The block each statement is in, as the branches and bodies around it (``(id(if), "orelse")``, ...): an
        #: assignment whose block holds a line ran before it, where one in another block may not have.
        self.blocks: dict[int, tuple] = {}
        self._spans: list[tuple[int, int, tuple]] = []
        self._walk(body, loop=False, cond=False, block=())

    def _walk(self, body: list[ast.stmt], loop: bool, cond: bool, block: tuple) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            self.blocks[id(st)] = block
            self._spans.append((st.lineno, st.end_lineno or st.lineno, block))
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    if _key(t):
                        self.assigns[_key(t)].append((st.lineno, st.value))
                        self.blocks[id(st.value)] = block
            elif isinstance(st, ast.AnnAssign) and st.value is not None and _key(st.target):
                self.assigns[_key(st.target)].append((st.lineno, st.value))
                self.blocks[id(st.value)] = block
            elif isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add) and _key(st.target):
                self.adds[_key(st.target)].append((st.lineno, "many", st.value, loop, cond))
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                self._call(st.value, loop, cond)
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(st, name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    looping = isinstance(st, (ast.For, ast.AsyncFor, ast.While)) and name == "body"
                    branch = isinstance(st, ast.If) or name == "orelse"
                    self._walk(inner, loop or looping, cond or branch, (*block, (id(st), name)))
            for handler in getattr(st, "handlers", None) or []:
                self._walk(handler.body, loop, True, (*block, (id(handler), "body")))

    def _call(self, call: ast.Call, loop: bool, cond: bool) -> None:
        f = call.func
        if not isinstance(f, ast.Attribute):
            return
        owner = _key(f.value)
        if f.attr in ("append", "extend") and owner and len(call.args) == 1:
            self.adds[owner].append((call.lineno, "one" if f.attr == "append" else "many", call.args[0], loop, cond))
        elif f.attr in ("add_module", "register_module") and owner and len(call.args) == 2:
            name = _str(call.args[0])
            if name is not None:
                self.assigns[f"{owner}.{name}"].append((call.lineno, call.args[1]))

    def value(self, key: str, before: int) -> Optional[tuple[int, ast.expr]]:
        """The last assignment of ``key`` on a line before ``before``."""
        found = [a for a in self.assigns.get(key, []) if a[0] < before]
        return found[-1] if found else None

    def block_at(self, line: int) -> tuple:
        """The block of the innermost statement of this scope on ``line`` (the top level where none is)."""
        return max((b for first, last, b in self._spans if first <= line <= last), key=len, default=())

    def reaching(self, key: str, before: int) -> list[tuple[int, ast.expr]]:
        """Every assignment of ``key`` that can be the one a read on line ``before`` sees: the last one in a block
        that holds the read (it ran, and hid the ones before it), and those after it in branches, loops or ``try``
        bodies that may have run (``if gpt2: model = A() else: model = B()``: both); all before it where none is
        sure to have run."""
        found = [a for a in self.assigns.get(key, []) if a[0] < before]
        at = self.block_at(before) if before < 1 << 30 else ()
        for i in range(len(found) - 1, -1, -1):
            block = self.blocks.get(id(found[i][1]), ())
            if at[: len(block)] == block:
                return found[i:]
        return found

    def reach(self, key: str, before: int) -> list[tuple[int, ast.expr, "_Scope"]]:
        """:meth:`reaching` here, else a name of the file's top level (all of it has run when a function does),
        with the scope each was assigned in."""
        got = self.reaching(key, before)
        if got or self.parent is None or "." in key:
            return [(*a, self) for a in got]
        return [(*a, self.parent) for a in self.parent.reaching(key, 1 << 30)]

    def lookup(self, key: str, before: int) -> Optional[tuple[int, ast.expr, "_Scope"]]:
        """:meth:`value` here, else a name of the file's top level (its last assignment there: a function may
        run after all of it), with the scope it was assigned in."""
        got = self.value(key, before)
        if got is not None:
            return (*got, self)
        if self.parent is not None and "." not in key:
            got = self.parent.value(key, 1 << 30)
            return (*got, self.parent) if got is not None else None
        return None


class Reader:
    """The user's files, parsed once: the classes and functions they define, each function's scope, and every
    call that builds a module tree (a root candidate for :meth:`roots`)."""

    def __init__(self, files: Iterable[SourceFile], calls: Iterable[CompileCall] = ()) -> None:
        #: The classes ``torch.compile`` was given, by the user's line that called it (``CompileCall.target``).
        self.compiled: dict[tuple[str, int], set[str]] = defaultdict(set)
        for cc in calls:
            at = next((f for f in reversed(cc.user_stack) if f.is_user), None)
            if at is not None and cc.target and "." not in cc.target:
                self.compiled[(at.file, at.line)].add(cc.target)
        self.lines: dict[str, list[str]] = {}
        self.aliases: dict[str, dict[str, str]] = {}
        self.classes: dict[str, list[tuple[str, ast.ClassDef]]] = defaultdict(list)
        self.functions: dict[str, list[tuple[str, ast.FunctionDef]]] = defaultdict(list)
        self._scopes: dict[int, _Scope] = {}
        self._calls: list[tuple[ast.Call, _Scope]] = []
        self._sites: dict[tuple[int, int], Optional[Site]] = {}
        self._class_kids: dict[int, tuple[dict, _Items]] = {}
        self._tops: dict[str, _Scope] = {}
        self._trees: dict[str, ast.Module] = {}
        trees = []
        for sf in files:
            if not sf.text:
                continue
            lines = sf.text.split("\n")
            try:
                tree = ast.parse("\n".join("" if _MAGIC.match(ln) else ln for ln in lines))
            except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or nested past the parser
                continue
            self.lines[sf.file] = lines
            self.aliases[sf.file] = {
                a.asname: a.name.rsplit(".", 1)[-1]
                for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom)
                for a in n.names
                if a.asname
            }
            for n in ast.walk(tree):
                if isinstance(n, ast.ClassDef):
                    self.classes[n.name].append((sf.file, n))
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions[n.name].append((sf.file, n))
            trees.append((sf.file, tree))
        self._trees = dict(trees)
        self._tops = {file: self._scope(file, "<module>", tree) for file, tree in trees}
        for file, tree in trees:
            self._gather(file, tree, self._tops[file])

    def _scope(self, file: str, function: str, node: Union[ast.Module, ast.FunctionDef]) -> _Scope:
        s = self._scopes.get(id(node))
        if s is None:
            top = self._tops.get(file) if not isinstance(node, ast.Module) else None
            s = self._scopes[id(node)] = _Scope(file, function, node.body, top)
        return s

    def _gather(self, file: str, tree: ast.Module, scope: _Scope) -> None:
        """Every call of a container or of a class of these files, with the scope it is evaluated in (functions
        named by their class, ``Block.__init__``), in the file's order."""
        todo: list[tuple[ast.AST, _Scope, str]] = [(tree, scope, "")]
        while todo:
            node, scope, prefix = todo.pop()
            inner = []
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inner.append((child, self._scope(file, prefix + child.name, child), prefix))
                    continue
                if isinstance(child, ast.ClassDef):
                    inner.append((child, scope, f"{prefix}{child.name}."))
                    continue
                if isinstance(child, ast.Call):
                    name = self.callee(child.func, file)
                    if name in CONTAINERS or name in self.classes:
                        self._calls.append((child, scope))
                inner.append((child, scope, prefix))
            todo.extend(reversed(inner))

    def callee(self, func: ast.AST, file: str) -> str:
        """The class or function a call names: ``nn.Linear`` -> ``Linear``, an import alias resolved."""
        if isinstance(func, ast.Name):
            return self.aliases.get(file, {}).get(func.id, func.id)
        if isinstance(func, ast.Attribute):
            return func.attr
        return ""

    def code(self, file: str, line: int) -> str:
        lines = self.lines.get(file, [])
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def roots(self) -> list[Site]:
        """Every module tree the files build (each container or user-class call), in file and line order."""
        out = []
        for call, scope in self._calls:
            try:
                s = self.site(call, scope)
            except RecursionError:  # an expression nested deeper than Python follows: not read
                s = None
            if s is not None:
                out.append(s)
        out.sort(key=lambda s: (s.file, s.line))
        return out

    # -- one expression ------------------------------------------------------------------------------

    def site(self, expr: ast.expr, scope: _Scope, depth: int = 0) -> Optional[Site]:
        """The module ``expr`` builds, evaluated in ``scope``; None where it is not known to build one."""
        if depth > MAX_DEPTH:
            return None
        memo = (id(expr), id(scope))
        if memo in self._sites:
            return self._sites[memo]
        self._sites[memo] = None  # a cycle reads as unknown
        out = self._site(expr, scope, depth + 1)
        self._sites[memo] = out
        return out

    def _site(self, expr: ast.expr, scope: _Scope, depth: int) -> Optional[Site]:
        key = _key(expr)
        if key:
            return self._named(key, expr.lineno, scope, depth)
        if not isinstance(expr, ast.Call):
            return None
        name = self.callee(expr.func, scope.file)
        at = Site(scope.file, expr.lineno, scope.function, name)
        arg = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "modules"), None)
        if name == SEQUENCE:
            named = self._dict(expr.args[0], scope, depth) if len(expr.args) == 1 else None
            if named is None:
                _number(at, self._args(expr.args, scope, depth))
            else:
                at.children, at.closed = named
        elif name == LIST:
            _number(at, self._items(arg, scope, depth) if arg is not None else _Items())
        elif name == DICT:
            at.children, at.closed = (self._dict(arg, scope, depth) or ({}, False)) if arg is not None else ({}, True)
        elif name in self.classes:
            return self._instance(name, at, depth)
        elif name in self.functions:
            return self._returned(expr, name, at, scope, depth)
        at.factory = name[:1].islower()  # a library's function (create_model), not one of its classes (Linear)
        return at  # a module of torch's or a library's: its children are not in the user's files

    def compiled_at(self, near: list[tuple[str, int]], classes: Iterable[str] = ()) -> Optional[Site]:
        """The call of a library's factory or class that built the model the user ran at one of ``near`` (the
        trigger's user frames, innermost first): at the first of those lines that names one, the thing called
        (``model(x)``, ``compiled(x)``) or else the call's first argument (``inspect(model, x)``,
        ``train_step(model, batch)``), followed through its assignments and ``torch.compile(...)`` to the call that
        made it, where that is no construction of the user's files (those are :func:`fit`'s).

        It must have built a module of the class recorded: the class ``torch.compile`` was given on that line
        (``calls``, the capture's ``CompileCall.target``), else ``classes`` (the compiled frame's, ``Compile.frame``
        ``GPT2LMHeadModel.forward``). Where several assignments can have made the name (``if gpt2: model =
        GPT2LMHeadModel(cfg) else: model = LlamaForCausalLM(cfg)``), the one of that class is taken; one of
        another class never is; a factory (``create_model``: its class is not written) only where no other call
        can have made it; none where several still can (:func:`one_maker`)."""
        for file, line in near:
            tree = self._trees.get(file)
            stmt = (
                next((n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno == line), None)
                if tree
                else None
            )
            call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), None) if stmt is not None else None
            if call is None:
                continue
            scope = self._scope_at(file, tree, line)
            for expr in [call.func, *call.args[:1]]:
                found = self._models(expr, scope, 0, frozenset())
                if found:
                    return one_maker(found, classes)
        return None

    def _scope_at(self, file: str, tree: ast.Module, line: int) -> _Scope:
        """The scope of the innermost function of ``file`` around ``line`` (its top level outside any)."""
        fns = [
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= line <= (n.end_lineno or n.lineno)
        ]
        if not fns:
            return self._tops[file]
        fn = max(fns, key=lambda n: n.lineno)
        return self._scope(file, fn.name, fn)

    def _models(self, expr: ast.expr, scope: _Scope, depth: int, given: frozenset) -> list[tuple[Site, frozenset]]:
        """Each call of a library's factory or class that ``expr`` can hold, through names (every assignment that
        can reach it, :meth:`_Scope.reach`) and ``torch.compile(...)``, as a factory's site (it built everything
        under it), with the classes the capture saw ``torch.compile`` given on the way (``given``); empty where
        none is known (a construction of the files' own is :func:`fit`'s)."""
        if depth > MAX_DEPTH:
            return []
        key = _key(expr)
        if key:
            return [
                found
                for _, value, where in scope.reach(key, expr.lineno)
                for found in self._models(value, where, depth + 1, given)
            ]
        if not isinstance(expr, ast.Call):
            return []
        if self.callee(expr.func, scope.file) == "compile" and expr.args:
            seen = {
                target
                for line in range(expr.lineno, (expr.end_lineno or expr.lineno) + 1)
                for target in self.compiled.get((scope.file, line), ())
            }
            return self._models(expr.args[0], scope, depth + 1, given or frozenset(seen))
        if _torch_function(expr.func):
            return []  # torch.randint(...): a tensor (model.generate(ids) reads its first argument), no module
        at = self.site(expr, scope, depth)
        if at is None or at.ctor in CONTAINERS or at.ctor in self.classes or at.ctor in self.functions:
            return []  # the files' own constructions: fit() reads them, and one that did not fit is not it
        # a library's factory, or its class (transformers' GPT2LMHeadModel(config)): it built the whole model
        return [(at if at.factory else dataclasses.replace(at, factory=True), given)]

    def _named(self, key: str, line: int, scope: _Scope, depth: int, until: Optional[int] = None) -> Optional[Site]:
        """What ``key`` (``layers``, ``self.blocks``) holds at ``line``: its last assignment before it, then, for a
        container, what was appended to it from there until ``until`` (default ``line``)."""
        got = scope.lookup(key, line)
        if got is None:
            return None
        since, value, where = got
        at = self.site(value, where, depth)
        if at is None or at.ctor not in (SEQUENCE, LIST) or not where.adds.get(key):
            return at
        end = (line if until is None else until) if where is scope else 1 << 30
        kids = self._added(_children(at), key, since, end, where, depth)
        at = dataclasses.replace(at, children={})
        _number(at, kids)
        return at

    def _added(self, items: _Items, key: str, since: int, until: int, scope: _Scope, depth: int) -> _Items:
        """``items`` with what was appended to ``key`` between two lines: a loop's one append gives every later
        index; an append under a condition ends what is known."""
        for line, how, expr, loop, cond in scope.adds.get(key, []):
            if not since < line < until:
                continue
            if cond:
                items.add(_open())
                break
            more = self._items(expr, scope, depth) if how == "many" else _Items([self.site(expr, scope, depth)])
            if loop:
                more = _each(more.known[0]) if how == "one" and more.known else _open()
            items.add(more)
        return items

    def _items(self, expr: ast.expr, scope: _Scope, depth: int) -> _Items:
        """The modules a list-like expression holds, in order."""
        if isinstance(expr, (ast.List, ast.Tuple)):
            return self._args(expr.elts, scope, depth)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
            return _each(self.site(expr.elt, scope, depth))
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            lst = expr.left if isinstance(expr.left, ast.List) else expr.right
            if isinstance(lst, ast.List) and len(lst.elts) == 1:
                return _each(self.site(lst.elts[0], scope, depth))
            return _open()
        if isinstance(expr, ast.Call) and self.callee(expr.func, scope.file) in ("list", "tuple") and expr.args:
            return self._items(expr.args[0], scope, depth)
        key = _key(expr)
        if key:
            got = scope.lookup(key, expr.lineno)
            if got is None:
                return _open()
            since, value, where = got
            until = expr.lineno if where is scope else 1 << 30
            return self._added(self._items(value, where, depth), key, since, until, where, depth)
        at = self.site(expr, scope, depth)  # a ModuleList or Sequential: its children, in order
        return _children(at) if at is not None and at.ctor in (SEQUENCE, LIST) else _open()

    def _args(self, args: list[ast.expr], scope: _Scope, depth: int) -> _Items:
        items = _Items()
        for a in args:
            items.add(
                self._items(a.value, scope, depth)
                if isinstance(a, ast.Starred)
                else _Items([self.site(a, scope, depth)])
            )
        return items

    def _dict(self, expr: ast.expr, scope: _Scope, depth: int) -> Optional[tuple[dict, bool]]:
        """The named children of ``OrderedDict([("a", X)])``, ``OrderedDict(a=X)``, ``dict(a=X)`` or ``{"a": X}``."""
        pairs: list[tuple[Optional[str], ast.expr]] = []
        if isinstance(expr, ast.Dict):
            pairs = [(_str(k) if k is not None else None, v) for k, v in zip(expr.keys, expr.values)]
        elif isinstance(expr, ast.Call) and self.callee(expr.func, scope.file) in ("OrderedDict", "dict"):
            if expr.args:
                lst = expr.args[0]
                if not isinstance(lst, (ast.List, ast.Tuple)):
                    return {}, False
                for e in lst.elts:
                    if not (isinstance(e, ast.Tuple) and len(e.elts) == 2):
                        return {}, False
                    pairs.append((_str(e.elts[0]), e.elts[1]))
            pairs += [(k.arg, k.value) for k in expr.keywords]
        else:
            return None
        out: dict[str, list[Site]] = {}
        for name, value in pairs:
            s = self.site(value, scope, depth) if name is not None else None
            if s is not None:
                out.setdefault(name, []).append(s)
        return out, all(name is not None for name, _ in pairs)

    # -- classes and functions of the user's files ----------------------------------------------------

    def _instance(self, name: str, at: Site, depth: int) -> Site:
        """An instance of a class of the user's files built at ``at``: its ``__init__``'s children."""
        file, cls = next(((f, c) for f, c in self.classes[name] if f == at.file), self.classes[name][0])
        named, numbered = self._class_children(file, cls, depth)
        at.children = {k: list(v) for k, v in named.items()}
        _number(at, numbered)
        at.closed = False  # a class may make children in ways not read here (setattr, a loop of add_module)
        return at

    def _class_children(self, file: str, cls: ast.ClassDef, depth: int) -> tuple[dict, _Items]:
        got = self._class_kids.get(id(cls))
        if got is not None:
            return got
        self._class_kids[id(cls)] = ({}, _Items())  # a class that builds itself: nothing more
        named: dict[str, list[Site]] = {}
        numbered = _Items()
        bases = [self.callee(b, file) for b in cls.bases]
        for b in bases:  # a base class of the user's files builds its children first
            if b in self.classes and depth < MAX_DEPTH:
                bfile, bcls = next(((f, c) for f, c in self.classes[b] if f == file), self.classes[b][0])
                bnamed, bnumbered = self._class_children(bfile, bcls, depth + 1)
                for k, v in bnamed.items():
                    named.setdefault(k, []).extend(v)
                numbered.add(bnumbered)
        init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is not None:
            scope = self._scope(file, f"{cls.name}.__init__", init)
            for key in list(scope.assigns):
                if not key.startswith("self.") or "." in key[5:]:
                    continue
                sites = []
                lines = [line for line, _ in scope.assigns[key]] + [init.end_lineno or init.lineno]
                for line, until in zip(lines, lines[1:]):
                    s = self._named(key, line + 1, scope, depth, until + 1)
                    if s is not None:
                        sites.append(s)
                if sites:
                    named[key[5:]] = sites + named.get(key[5:], [])  # its own assignment before the base's
            parent = next((b for b in bases if b in (SEQUENCE, LIST)), "")
            for call in ast.walk(init) if parent else ():
                if isinstance(call, ast.Call) and _is_super_init(call):
                    args = (
                        call.args if isinstance(call.func.value, ast.Call) else call.args[1:]
                    )  # X.__init__(self, ...)
                    numbered = (
                        self._args(args, scope, depth)
                        if parent == SEQUENCE
                        else (self._items(args[0], scope, depth) if args else _Items())
                    )
        self._class_kids[id(cls)] = (named, numbered)
        return named, numbered

    def _returned(self, call: ast.Call, name: str, at: Site, scope: _Scope, depth: int) -> Optional[Site]:
        """A call of a function of the user's files: the module its last ``return`` builds, built at the call."""
        file, fn = next(((f, n) for f, n in self.functions[name] if f == scope.file), self.functions[name][0])
        inner = self._scope(file, fn.name, fn)
        rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if not rets:
            return None
        got = self.site(rets[-1].value, inner, depth)
        if got is None:
            return None
        return dataclasses.replace(at, ctor=got.ctor, children=got.children, every=got.every, closed=got.closed)


def one_maker(found: list[tuple[Site, frozenset]], classes: Iterable[str] = ()) -> Optional[Site]:
    """The one call of ``found`` (each with the classes ``torch.compile`` was seen given on the way to it) that can
    have built the module the user ran, of the class recorded (those seen, else ``classes``): a call of another
    class cannot (the branch not taken), a factory's can (the file does not write its class); None where no call or
    more than one still can (two branches building the same class, or a factory beside it: which ran is not known)."""
    known = frozenset(classes)
    can: dict[tuple[str, int], Site] = {}
    for s, given in found:
        want = given or known
        if s.ctor[:1].islower() or not want or s.ctor in want:
            can.setdefault((s.file, s.line), s)
    return next(iter(can.values())) if len(can) == 1 else None


def _torch_function(func: ast.expr) -> bool:
    """``torch.randint``, ``torch.nn.functional.pad``: a function of torch (lower case), which makes no module."""
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    return (
        isinstance(func, ast.Attribute)
        and func.attr[:1].islower()
        and isinstance(root, ast.Name)
        and root.id == "torch"
    )


def frame_class(frame: str) -> str:
    """The class of a compiled method ``GPT2LMHeadModel.forward`` (``Compile.frame``, dynamo's qualname of the
    frame it traced); ``""`` for a function, a resume function or torch's wrapper."""
    parts = frame.split(".")
    return parts[-2] if len(parts) >= 2 and parts[-1] == "forward" and parts[-2].isidentifier() else ""


def _is_super_init(call: ast.Call) -> bool:
    """``super().__init__(...)`` or ``nn.Sequential.__init__(self, ...)``."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "__init__"):
        return False
    v = f.value
    return (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super") or isinstance(
        v, (ast.Name, ast.Attribute)
    )


def _children(at: Site) -> _Items:
    """A container's numbered children ``0``, ``1``, ... as items (what ``*layers`` of it spells out)."""
    known = []
    while str(len(known)) in at.children:
        known.append(at.children[str(len(known))][0])
    return _Items(known, at.every, at.closed and len(known) == len(at.children))


def _number(at: Site, items: _Items) -> None:
    """``at``'s children numbered from ``items``: ``0``, ``1``, ...; an unknown one leaves its index out."""
    for i, s in enumerate(items.known):
        if s is not None:
            at.children.setdefault(str(i), []).append(s)
    at.every = items.every
    at.closed = items.closed and all(s is not None for s in items.known)


# -- fitting a construction to a compile's module paths ---------------------------------------------------

_MISSING = object()  # a path through a child the construction says does not exist


def resolve(root: Site, path: str, types: dict[str, str], through: bool = False) -> object:
    """The site of module ``path`` in the tree built at ``root``: a :class:`Site`, :data:`_MISSING` where a
    closed container lacks a step, or None where the user's files do not say; with ``through``, a factory's site
    (``Site.factory``) for a path under it, which it built. ``types``: each path's recorded class, to choose among a
    name's candidates."""
    at, prefix = root, ""
    for seg in path.split("."):
        prefix = f"{prefix}.{seg}" if prefix else seg
        alts = at.children.get(seg) or ([at.every] if at.every is not None and seg.isdigit() else [])
        if not alts:
            if through and at.factory:
                return at
            return _MISSING if at.closed else None
        want = types.get(prefix)
        at = next((a for a in alts if a.ctor == want), alts[0])
    return at


def observed(c: Compile) -> dict[str, str]:
    """Every module path of a compile's ops and its class (the last dotted part of ``module_types``)."""
    out: dict[str, str] = {}
    for g in c.graphs.values():
        for n in g.nodes:
            for path, tp in zip(n.module_stack, n.module_types):
                out.setdefault(path, str(tp).rsplit(".", 1)[-1])
    return out


def fit(roots: list[Site], types: dict[str, str], near: list[tuple[str, int]]) -> Optional[Site]:
    """The construction that built a compile's root module: it spells out every child of the root the paths
    name (``features`` of ``features.3``), has no recorded path through a child it lacks, and has the most paths
    that build their recorded class (at least one), then the fewest that build another, then it is the one
    nearest before the user's call (``near``: the trigger's user frames, innermost first)."""
    tops = {path.split(".", 1)[0] for path in types}

    def nearness(s: Site) -> tuple:
        for i, (file, line) in enumerate(near):
            if file == s.file and s.line <= line:
                return (i, line - s.line)
        return (len(near), 0)

    best, best_key = None, None
    for s in roots:
        if not all(isinstance(resolve(s, top, types), Site) for top in tops):
            continue  # a model the file does not (wholly) build: another one was compiled
        good = bad = 0
        for path, tp in types.items():
            r = resolve(s, path, types)
            if r is _MISSING:
                break
            if isinstance(r, Site):
                good, bad = (good + 1, bad) if r.ctor == tp else (good, bad + 1)
        else:
            if good:
                key = (-good, bad, nearness(s))
                if best_key is None or key < best_key:
                    best, best_key = s, key
    return best


def built_lines(node: FusedNode, fx: dict, root: Site, types: dict[str, str], reader: Reader) -> list[BuiltLine]:
    """The lines that built the innermost module (with a line, of the recorded class) of each of ``node``'s ops."""
    lines: dict[tuple[str, int], BuiltLine] = {}
    for name in node.fx_nodes:
        gn = fx.get(name)
        if gn is None or gn.op in NOT_OPS:
            continue
        for path, tp in reversed(list(zip(gn.module_stack, gn.module_types))):
            s = resolve(root, path, types, through=True)
            cls = str(tp).rsplit(".", 1)[-1]
            if isinstance(s, Site) and (s.ctor == cls or s.factory):
                b = lines.get((s.file, s.line))
                if b is None:
                    b = lines[(s.file, s.line)] = BuiltLine(s.file, s.line, reader.code(s.file, s.line), s.function)
                if path not in b.modules:
                    b.modules.append(path)
                    b.module_types.append(cls)
                break
    return list(lines.values())


def mark_built(report: Report) -> Report:
    """``report`` with ``FusedNode.built_lines`` filled in every compile (cleared where a line ran: a line that
    ran wins, and a node of a compile no construction fits gets none), each kernel's ``Kernel.built_lines`` from
    its fused nodes', and the roll-ups by line made again with them (``lines.mark_rollups``)."""
    marker = BuiltMarker(report.source_files, report.compile_calls)
    return mark_rollups(dataclasses.replace(report, compiles=[marker.mark(c) for c in report.compiles]))


class BuiltMarker:
    """:func:`mark_built` one compile at a time, the user's files parsed once (when a compile first needs
    them): what a report built compile by compile (a streamed TORCH_TRACE import) uses. :attr:`read` says
    whether any compile needed the files."""

    def __init__(self, source_files: list[SourceFile], compile_calls: Iterable[CompileCall] = ()) -> None:
        self.source_files = source_files
        self.compile_calls = list(compile_calls)
        self.read = False
        self._reader: Optional[Reader] = None
        self._roots: list[Site] = []
        # the last factory call found, and the frame it was found for: a backward compiles the model its forward did
        self._made: tuple[Optional[Site], str] = (None, "")

    def mark(self, c: Compile) -> Compile:
        """``c`` with its fused nodes' and kernels' ``built_lines`` (the roll-ups are the report's)."""
        need = {n.name for n in c.fused_nodes if not any(f.is_user for f in n.user_lines) and not n.is_glue}
        types = observed(c) if need else {}
        root = None
        reader = self._reader
        if types:
            self.read = True
            if reader is None:
                reader = self._reader = Reader(self.source_files, self.compile_calls)
                self._roots = reader.roots()
            near = [(f.file, f.line) for f in reversed(c.trigger.user_stack) if f.is_user]
            root = fit(self._roots, types, near) if self._roots else None
            if root is None:  # a model a library built (timm's create_model): the user's call of its factory
                cls = frame_class(c.frame)
                root = reader.compiled_at(near, [cls] if cls else [])
                made, frame = self._made
                if (
                    root is None
                    and made is not None
                    and (frame == c.frame or not cls or made.ctor[:1].islower() or made.ctor == cls)
                ):
                    root = made  # a backward: the model its forward ran (of the class its frame records)
            self._made = (root, c.frame) if root is not None and root.factory else self._made
        if root is None and not any(n.built_lines for n in c.fused_nodes) and not any(k.built_lines for k in c.kernels):
            return c
        fx = {n.name: n for g in c.graphs.values() for n in g.nodes}
        if "post_grad" in c.graphs:
            fx.update({n.name: n for n in c.graphs["post_grad"].nodes})
        fused = [
            dataclasses.replace(n, built_lines=built_lines(n, fx, root, types, reader))
            if root is not None and reader is not None and n.name in need
            else (dataclasses.replace(n, built_lines=[]) if n.built_lines else n)
            for n in c.fused_nodes
        ]
        of = {n.name: n.built_lines for n in fused}
        kernels = [dataclasses.replace(k, built_lines=kernel_built_lines(k, of)) for k in c.kernels]
        return dataclasses.replace(c, fused_nodes=fused, kernels=kernels)
