"""Pure text parsers for what torch prints: stack traces, output code, graph-break messages.

No torch import here: these run on strings, so they are tested without compiling anything.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Optional

from ..report.model import Frame
from ..report.rules import (
    asserted_layouts,
    extra_launcher_args,
    module_relative,
    parse_size_hints,
    returned_items,
    size_tuple,
    split_args,
)

_FRAME_RE = re.compile(r'^\s*File "(?P<file>.+?)", line (?P<line>\d+), in (?P<func>.+?)\s*$')


def parse_stack_trace(text: Optional[str]) -> list[Frame]:
    """Frames of a formatted Python traceback (``File "x.py", line 3, in f`` + the code line).

    Caret lines (``^^^^``) are dropped; frames keep the order of the text (outermost first). The same text
    gives the same (frozen) frames: a graph's nodes share a few stacks, and a long log repeats them."""
    if not text:
        return []
    return list(_stack_frames(text))


@functools.lru_cache(maxsize=1 << 14)
def _stack_frames(text: str) -> tuple[Frame, ...]:
    frames: list[Frame] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FRAME_RE.match(lines[i])
        if not m:
            i += 1
            continue
        code = ""
        j = i + 1
        if j < len(lines) and not _FRAME_RE.match(lines[j]):
            candidate = lines[j].strip()
            if candidate and set(candidate) - set("^~ "):
                code = candidate
                j += 1
        while j < len(lines) and lines[j].strip() and set(lines[j].strip()) <= set("^~ "):
            j += 1
        frames.append(Frame(file=m["file"], line=int(m["line"]), function=m["func"], code=code))
        i = j
    return tuple(frames)


# -- output code ------------------------------------------------------------------------------

_KERNEL_DEF_RE = re.compile(r"^(?P<name>[A-Za-z_]\w*) = async_compile\.(?P<kind>\w+)\(", re.M)
_LANG_BY_KIND = {
    "triton": "triton",
    "cpp": "cpp",
    "cpp_pybinding": "cpp",
    "cuda": "cuda",
    "rocm": "rocm",
    "halide": "halide",
    "mps": "mps",
    "xpu": "xpu",
    "cutedsl": "cutedsl",
}


def _string_literal_at(code: str, pos: int) -> Optional[tuple[str, int]]:
    """The body of the first triple-quoted string literal at or after ``pos``, and where it ends."""
    m = re.compile(r"[rRbBuU]{0,2}('''|\"\"\")").search(code, pos)
    if not m:
        return None
    quote = m.group(1)
    start = m.end()
    end = code.find(quote, start)
    if end < 0:
        return None
    return code[start:end], end + len(quote)


def parse_output_code_kernels(code: str) -> dict[str, tuple[str, str]]:
    """``{kernel name: (language, source)}`` for each kernel defined in Inductor's output code.

    Kernels appear as ``name = async_compile.triton('name', '''...''')`` or
    ``name = async_compile.cpp_pybinding([...], r'''...''')``; the source is the text between the
    quotes, exactly as in the output code.
    """
    kernels: dict[str, tuple[str, str]] = {}
    pos = 0
    while True:
        m = _KERNEL_DEF_RE.search(code, pos)
        if not m:
            break
        lit = _string_literal_at(code, m.end())
        if lit is None:
            pos = m.end()
            continue
        source, end = lit
        kernels[m["name"]] = (_LANG_BY_KIND.get(m["kind"], "other"), source)
        pos = end
    if not kernels:  # cpp_wrapper / AOTInductor: the kernels are C++ functions of the C++ code itself (in
        # Python output code, each cpp_pybinding source also defines `extern "C" void kernel(...)`: not a kernel)
        for name, source in _extern_c_definitions(code):
            kernels.setdefault(name, ("cpp", source))
    return kernels


def cpp_wrapper_code(code: str) -> bool:
    """Whether ``code`` is output code written with the C++ wrapper (``cpp_wrapper=True``): a Python module that
    holds the C++ source of the wrapper, which launches the kernels (``cpp_wrapper_src = (r\"\"\"...``)."""
    return "cpp_wrapper_src" in code and "CppWrapperCodeCache" in code


_EXTERN_C_RE = re.compile(r'^extern "C"\s+[\w:<>*\s]*?\b(?P<name>[A-Za-z_]\w*)\s*\(', re.M)


def _extern_c_definitions(code: str) -> list[tuple[str, str]]:
    """``extern "C"`` function definitions (not declarations) in C++ output code: with ``cpp_wrapper`` (and in
    AOTInductor's wrapper) Inductor's C++ kernels are emitted this way. The source runs from ``extern "C"``
    to the brace that closes the body."""
    out = []
    for m in _EXTERN_C_RE.finditer(code):
        close = _matching(code, m.end() - 1, "(", ")")
        if close < 0:
            continue
        rest = code[close + 1 :].lstrip()
        if not rest.startswith("{"):
            continue  # a declaration
        body = code.index("{", close + 1)
        end = _matching(code, body, "{", "}")
        if end > 0:
            out.append((m["name"], code[m.start() : end + 1]))
    return out


_BRACKETS = {pair: re.compile("[" + re.escape(pair[0] + pair[1]) + "]") for pair in ("()", "{}", "[]")}


def _matching(code: str, start: int, open_: str, close: str) -> int:
    """Index of the bracket that closes the one at ``start`` (-1 if none)."""
    depth = 0
    for m in _BRACKETS[open_ + close].finditer(code, start):  # only the brackets, found in C
        if m.group() == open_:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def find_call_lines(
    code: str,
    callee: str,
    buffer: Optional[str] = None,
    lines: Optional[list[str]] = None,
    cache: Optional[dict[str, list[str]]] = None,
    words: Optional[dict[str, frozenset]] = None,
) -> list[str]:
    """Lines of the output code that call ``callee`` (e.g. ``extern_kernels.mm``), preferring the
    ones that mention ``buffer`` (the buffer the call writes) when one is given. ``lines``: the code's
    ``splitlines()``, when the caller asks for many kernels of one output code; ``cache``: a dict the caller
    keeps for that code (callee -> its call lines), so that the code is scanned once per callee, not once per
    kernel (a model has hundreds of ``extern_kernels.mm`` calls), and ``words`` one for :func:`lines_naming`."""
    pattern = re.compile(re.escape(callee) + r"\s*\(")
    found = cache.get(callee) if cache is not None else None
    if found is None:
        found = [
            ln.strip() for ln in (code.splitlines() if lines is None else lines) if callee in ln and pattern.search(ln)
        ]
        if cache is not None:
            cache[callee] = found
    lines = found
    if buffer:
        mine = lines_naming(lines, buffer, words)
        if mine:
            return mine
    return lines


_WORD_RUN = re.compile(r"\w+")


def lines_naming(lines: list[str], name: str, words: Optional[dict] = None) -> list[str]:
    """The lines that hold ``name`` as a whole word (``\\bname\\b``), in order. ``words``: a dict the caller
    keeps (line -> its words), when it asks about many names of the same lines."""
    if not _WORD_RUN.fullmatch(name):
        word = re.compile(r"\b" + re.escape(name) + r"\b")
        return [ln for ln in lines if word.search(ln)]
    # a name of word characters only is a whole word of a line exactly when it is one of the line's runs of
    # word characters
    words = {} if words is None else words
    out = []
    for ln in lines:
        w = words.get(ln)
        if w is None:
            w = words[ln] = frozenset(_WORD_RUN.findall(ln))
        if name in w:
            out.append(ln)
    return out


# -- graph breaks -----------------------------------------------------------------------------


def parse_graph_break(text: str) -> tuple[str, list[Frame]]:
    """``(reason, user stack)`` from dynamo's ``dynamo_graph_break_reason`` text."""
    reason = text
    m = re.search(r"Graph Break Reason:\s*(.*?)(?:\n\s*User code traceback:|\Z)", text, re.S)
    if m:
        reason = m.group(1).strip()
    stack: list[Frame] = []
    m2 = re.search(r"User code traceback:\n(.*?)(?:\n\S|\Z)", text, re.S)
    if m2:
        stack = parse_stack_trace(m2.group(1))
    # drop dynamo's own "Traceback (most recent call last)" part if it leaked into the reason
    reason = reason.split("\nTraceback (most recent call last):")[0].strip()
    return reason, stack


_MODULE_KEY_RE = re.compile(r"""\._modules\[['"]([^'"]+)['"]\]|\[['"]([^'"]+)['"]\]|\[(\d+)\]""")


def _getattr_path(path: str, wrapped: bool = False, own: str = "self") -> Optional[str]:
    """The module path of dynamo's ``getattr(L.self, 'ü name')`` (a module registered under a name that is no
    identifier, reached by ``getattr``), read as Python reads it: ``ü name``, a name with quotes or dots kept as it is.
    Its root is left out where it is the compiled module and kept where it is another (:func:`clean_module_path`).
    ``None`` where ``path`` is no such expression."""
    import ast

    try:
        tree = ast.parse(path, mode="eval").body
    except (SyntaxError, ValueError):
        return None

    def root(name: str) -> list[str]:
        """The compiled module (the frame's ``self``, torch's wrapper's ``fn``) is no part of the path; another is."""
        return [] if name == own or (wrapped and name == "fn") else [name]

    def parts(n: ast.expr) -> list[str]:
        """The path's names after its root (the local or global dynamo read: ``L['self']``, ``L['args'][0]``)."""
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr" and len(n.args) == 2:
            name = n.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                return [*parts(n.args[0]), name.value]
        if isinstance(n, ast.Attribute):
            if isinstance(n.value, ast.Name) and n.value.id in ("L", "G"):
                return root(n.attr)  # L.self
            return [*parts(n.value), *([] if n.attr in ("_modules", "__dict__") else [n.attr])]
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant):
            if isinstance(n.value, ast.Name) and n.value.id in ("L", "G"):
                return root(str(n.slice.value))  # L['self']
            if n.slice.value == 0 and isinstance(n.value, ast.Subscript) and isinstance(n.value.value, ast.Name):
                if n.value.value.id == "L" and getattr(n.value.slice, "value", None) == "args":
                    return []  # L['args'][0]: a decorator wrapper's module (MODULE_ROOT_ARG)
            if n.slice.value == "_modules" and isinstance(n.value, ast.Attribute) and n.value.attr == "__dict__":
                return parts(n.value)  # .__dict__['_modules']: a module that sets an attribute in its forward
            return [*parts(n.value), str(n.slice.value)]
        if isinstance(n, ast.Name) and n.id == "self":
            return []
        raise ValueError(n)

    try:
        return ".".join(parts(tree))
    except ValueError:
        return None


def clean_module_path(path: str, wrapped: bool = False, own: str = "self") -> str:
    """``L['self'].layers[0]._modules['mlp']`` -> ``layers.0.mlp`` (the nn.Module's qualified name); ``getattr(L.self,
    'ü name')`` -> ``ü name`` (:func:`_getattr_path`). The path is the module's from the compiled module: the root
    that is the compiled module is left out (the frame's ``self``; a decorator wrapper's ``L['args'][0]``; where
    ``wrapped``, torch's ``inner`` wrapper's ``L['fn']``), any other is kept: ``G['enc']._modules['0']`` (a global
    module a compiled function calls) -> ``enc.0``. Read through ``__dict__`` (a module whose forward sets an
    attribute of its own), ``L['self'].__dict__['_modules']['lin'].0`` -> ``lin.0``. ``own``: the frame's name for
    its ``self`` (``def forward(s, x)``: ``s``; ``rules.module_relative``).

    >>> clean_module_path("L['self'].__dict__['_modules']['lin'].0"), clean_module_path("G['enc']._modules['0']")
    ('lin.0', 'enc.0')
    """
    if "getattr(" in path:
        read = _getattr_path(path.strip(), wrapped, own)
        if read is not None:
            return read
    path = module_relative(path, wrapped, own)
    path = re.sub(r"^self\.", "", path)

    def repl(m: re.Match) -> str:
        return "." + next(g for g in m.groups() if g is not None)

    path = _MODULE_KEY_RE.sub(repl, path)
    return path.strip(".")


def model_modules(
    stack: list[str], types: list[str], wrapped: bool = False, own: str = "self"
) -> list[tuple[str, str]]:
    """``(path, class)`` of each module of a node's ``nn_module_stack`` (``stack``, dynamo's sources, outermost first;
    ``types`` their classes) as :func:`clean_module_path` names them, the compiled module itself left out. A global
    module called inside one of the model's (not its child: ``G[...]``, a path that does not extend the one before)
    is left out too, and its ops stay in the module that called it: transformers' Llama turns its function
    ``apply_rotary_pos_emb`` into a ``kernels`` ``Func`` module, a global, read as
    ``G['__import_transformers_dot_models_dot_llama_dot_modeling_llama'].apply_rotary_pos_emb`` in every layer's
    attention (nu20 D4: one pseudo-module that merged the layers). A global module a compiled function calls first
    (``G['enc']``) is the outermost, and kept.

    >>> model_modules(["L['self'].layers[0]", "L['self'].layers[0].attn", "G['__import_m'].rope"], ["B", "A", "Func"])
    [('layers.0', 'B'), ('layers.0.attn', 'A')]
    """
    return [(path, tp) for _, path, tp in kept_modules(stack, types, wrapped, own)]


def kept_modules(stack: list[str], types: list[str], wrapped: bool = False, own: str = "self") -> list[tuple]:
    """:func:`model_modules` with each module's index in ``stack``: ``(index, path, class)`` (what else is aligned
    with the stack, dynamo's call numbers, follows its modules).

    >>> kept_modules(["L['self']", "L['self'].cell"], ["M", "GRUCell"])
    [(1, 'cell', 'GRUCell')]
    """
    out: list[tuple[int, str, str]] = []
    for i, (raw, tp) in enumerate(zip(stack, types)):
        path = clean_module_path(raw, wrapped, own)
        if not path:
            continue
        if out and raw.lstrip().startswith("G[") and not path.startswith(out[-1][1] + "."):
            continue  # a global module, no child of the one that called it
        out.append((i, path, tp))
    return out


_DECORATOR_RE = re.compile(r"@triton_heuristics\.(?P<kind>\w+)\((?P<args>.*?)\)\s*\n\s*@triton\.jit", re.S)


def triton_source_metadata(source: str) -> dict:
    """What a Triton kernel's own decorator says: heuristic kind, size hints, and for templates the
    num_warps / num_stages it was generated with."""
    m = _DECORATOR_RE.search(source)
    if not m:
        return {}
    meta: dict = {"heuristic": m["kind"]}
    args = m["args"]
    hints = re.search(r"size_hints=(\{[^}]*\}|\[[^\]]*\])", args)
    if hints:
        parsed = parse_size_hints(hints.group(1))
        meta["size_hints"] = parsed if parsed is not None else hints.group(1)
    for key in ("num_warps", "num_stages"):
        v = re.search(key + r"=(\d+)", args)
        if v:
            meta[key] = int(v.group(1))
    return meta


# -- kernel launches in the output code's call() ------------------------------------------------

_EMPTY_RE = re.compile(r"^\s*(?P<name>\w+) = empty_strided(?:_(?P<dev>\w+))?\((?P<args>.*)\)\s*(?:#.*)?$")
_RAND_RE = re.compile(r"^\s*(?P<name>\w+) = rand_strided\((?P<args>.*)\)\s*$")
_ALIAS_RE = re.compile(r"^\s*(?P<name>\w+) = (?P<src>\w+); del \w+\s*# reuse")
_VIEW_ALIAS_RE = re.compile(r"^\s*(?P<name>\w+) = (?P<expr>reinterpret_tensor\(.*\)); del \w+\s*# reuse")
# a view of a live buffer under a name of its own (a cat writing its parts straight into slices of its output)
_VIEW_OF_RE = re.compile(r"^\s*(?P<name>\w+) = (?P<expr>reinterpret_tensor\(.*\))\s*# alias$")
_SCALAR_INPUT_RE = re.compile(r"^\s*(?P<name>\w+) = (?P<value>-?\d+)\s*$")
_SYM_BIND_RE = re.compile(r"^\s*(?P<sym>[a-z]+\d+) = (?P<src>\w+)\s*$")


def without_triple_quoted(code: str) -> str:
    r"""Each triple-quoted string (the kernels' sources) replaced by ``''``, exactly as ``_TRIPLE.sub("''", code)``
    with ``_TRIPLE = re.compile(r"('''|\"{3}).*?\1", re.S)`` (``tests/capturing/test_text_scans.py``), but
    found with ``str.find`` instead of trying a pattern at every character: the leftmost opening quote, closed by
    the next same quote; one that is never closed is passed over."""
    out: list[str] = []
    done = start = 0  # copied up to ``done``; looking for an opening quote from ``start``
    while True:
        single, double = code.find("'''", start), code.find('"""', start)
        i = single if double < 0 or 0 <= single < double else double
        if i < 0:
            break
        close = code.find(code[i : i + 3], i + 3)
        if close < 0:  # never closed: the pattern fails here and tries the next character
            start = i + 1
            continue
        out += (code[done:i], "''")
        done = start = close + 3
    if not out:
        return code
    out.append(code[done:])
    return "".join(out)


INT_RE = re.compile(r"-?\d+")
_DTYPE_RE = re.compile(r"torch\.(\w+)")


_sizes = size_tuple  # ``(4, 32)`` / ``(s0, 32)`` / ``()`` -> ``[4, 32]`` / ``["s0", 32]`` / ``[]``


def _dtype(text: str) -> Optional[str]:
    m = _DTYPE_RE.search(text)
    return m.group(1) if m else None


def _call_paren(line: str, callee: str) -> int:
    """Where the parenthesis of the first ``callee(`` or ``callee.run(`` in ``line`` is (-1 if none): what
    ``re.search(re.escape(callee) + r"(?:\\.run)?\\(", line)`` finds, without a pattern compiled per kernel."""
    at, n = line.find(callee), len(callee)
    while at >= 0:
        if line.startswith("(", at + n):
            return at + n
        if line.startswith(".run(", at + n):
            return at + n + 4
        at = line.find(callee, at + 1)
    return -1


def _call_args(line: str, start: int) -> Optional[tuple[str, int]]:
    """The text between the parenthesis at ``start`` and its match."""
    end = _matching(line, start, "(", ")")
    return (line[start + 1 : end], end) if end > 0 else None


_CALLEE_RE = re.compile(r"[\w.]+")
_KEYWORD_RE = re.compile(r"^([A-Za-z_]\w*)=(?!=)(.*)$", re.S)
# A name called on a line: a whole run of word characters and dots (nothing of the kind just before it) followed
# by "(". A callee `k` is called on a line exactly when that line calls `k` or `k.run` in this sense.
_CALL_TOKEN_RE = re.compile(r"(?<![\w.])([\w.]+)\(")


#: A subgraph's function in an output code (``def repeated_subgraph0(args):``, a repeated region's or a torch.cond
#: branch's, written into its parent's code); ``trace_graph.subgraph_defs`` finds them with it too.
SUBGRAPH_DEF = re.compile(r"^def (?P<name>\w+)\(args\):$", re.M)
_REGION_CALL_RE = re.compile(r"^\s*(?P<name>\w+) = (?P<fn>\w+)\((?P=fn)_args\)$")
_ITEM_RE = re.compile(r"^\s*(?P<name>\w+) = (?P<tuple>\w+)\[(?P<i>\d+)\]$")


def _call_index(lines: list[str]) -> dict[str, list[int]]:
    """``{name: indices of the lines that call it (name(...) or name.run(...))}``, in one pass over the code
    instead of one per kernel."""
    index: dict[str, list[int]] = {}
    for i, ln in enumerate(lines):
        if "(" not in ln:
            continue
        for tok in _CALL_TOKEN_RE.findall(ln):
            for name in (tok, tok[:-4]) if tok.endswith(".run") else (tok,):
                at = index.setdefault(name, [])
                if not at or at[-1] != i:
                    at.append(i)
    return index


class OutputCodeLayouts:
    """What the output code says about its buffers and its kernels' calls, read from the text alone.

    ``layouts``: buffer or graph-input name -> ``{shape, stride, dtype, offset, base, device}`` (from
    ``empty_strided_*``, the size assertions (``report.rules.asserted_layouts``: ``assert_size_stride``, and torch
    2.15's ``assert_tensor_metadata`` and ``assert_size_stride_grouped``), ``rand_strided`` in ``get_args``, the
    ``# reuse`` lines that rename or re-view a buffer, and the ``# alias`` lines that name a view of one); ``hints``:
    symbol or scalar input -> its value at capture time (from ``get_args`` and the ``s0 = arg0_1`` lines of
    ``call()``); ``calls(name)``: the lines that call a kernel.
    """

    def __init__(self, code: str) -> None:
        self.code = without_triple_quoted(code or "")
        self.lines = [ln.rstrip() for ln in self.code.splitlines()]
        self._calls: Optional[dict[str, list[int]]] = None
        self._outside: frozenset = frozenset()  # lines not searched for calls (scope_calls)
        self.words: dict[str, frozenset] = {}  # line -> its words (lines_naming)
        self.layouts: dict[str, dict] = {}
        self.hints: dict[str, int] = {}
        inputs: dict[str, dict] = {}
        # each pattern is tried only on the lines holding its fixed text (the test is in C, the match is not)
        for ln in self.lines:
            if " = " not in ln:
                continue
            m = _RAND_RE.match(ln) if " = rand_strided(" in ln else None
            if m:
                parts = split_args(m["args"])
                if len(parts) >= 2:
                    kw = {p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip() for p in parts[2:] if "=" in p}
                    inputs[m["name"]] = {
                        "shape": _sizes(parts[0]),
                        "stride": _sizes(parts[1]),
                        "dtype": _dtype(kw.get("dtype", "")),
                        "device": kw.get("device", "").strip("'\"") or None,
                    }
                continue
            m = _SCALAR_INPUT_RE.match(ln)
            if m and m["name"].startswith(("arg", "primals", "tangents")):
                self.hints[m["name"]] = int(m["value"])
        # get_args() holds concrete sizes: they are the hints of the symbolic ones in call()
        for ln in self.lines if self.hints else ():
            m = _SYM_BIND_RE.match(ln) if " = " in ln else None
            if m and m["src"] in self.hints:
                self.hints[m["sym"]] = self.hints[m["src"]]
        called: dict[str, str] = {}  # a subgraph call's result (``buf57 = region(region_args)``) -> the subgraph
        returns: dict[str, list[str]] = {}  # a subgraph -> the items of its function's return
        for ln in self.lines:
            if "_args)" in ln and (m := _REGION_CALL_RE.match(ln)):
                called[m["name"]] = m["fn"]
                if m["fn"] not in returns:
                    returns[m["fn"]] = returned_items(self.code, m["fn"])
                continue
            if called and (m := _ITEM_RE.match(ln)) and m["tuple"] in called:
                # an item of a subgraph's result (``buf58 = buf57[0]``): its layout is what the subgraph returns there
                items = returns[called[m["tuple"]]]
                view = self.tensor_arg(items[int(m["i"])]) if int(m["i"]) < len(items) else None
                if view is not None:
                    self.layouts[m["name"]] = {k: v for k, v in view.items() if k != "base"}
                continue
            asserted = asserted_layouts(ln) if "assert_" in ln else None
            if asserted:
                for name, shape, stride, dtype in asserted:
                    if name in self.layouts:
                        continue
                    concrete = inputs.get(name, {})
                    self.layouts[name] = {
                        "shape": shape,
                        "stride": stride,
                        "dtype": dtype or concrete.get("dtype"),
                        "device": concrete.get("device"),
                        "offset": 0,
                        "hint_shape": concrete.get("shape"),
                        "hint_stride": concrete.get("stride"),
                    }
                continue
            m = _EMPTY_RE.match(ln) if " = empty_strided" in ln else None
            if m:
                parts = split_args(m["args"])
                kw = {p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip() for p in parts[2:] if "=" in p}
                dtype = _dtype(parts[2]) if len(parts) > 2 and "=" not in parts[2] else _dtype(kw.get("dtype", ""))
                self.layouts[m["name"]] = {
                    "shape": _sizes(parts[0]) if parts else None,
                    "stride": _sizes(parts[1]) if len(parts) > 1 else None,
                    "dtype": dtype,
                    "device": m["dev"] or kw.get("device", "").strip("'\"") or None,
                    "offset": 0,
                }
                continue
            if "# alias" in ln:
                m = _VIEW_OF_RE.match(ln)
                view = self.tensor_arg(m["expr"]) if m else None
                if view is not None:
                    self.layouts[m["name"]] = view
                continue
            if "# reuse" not in ln:
                continue
            m = _VIEW_ALIAS_RE.match(ln)
            if m:
                view = self.tensor_arg(m["expr"])
                if view is not None:
                    self.layouts[m["name"]] = view
                continue
            m = _ALIAS_RE.match(ln)
            if m and m["src"] in self.layouts:
                self.layouts[m["name"]] = dict(self.layouts[m["src"]])
        for name, lay in inputs.items():  # inputs that call() never asserts
            self.layouts.setdefault(name, {**lay, "offset": 0})

    def tensor_arg(self, expr: str) -> Optional[dict]:
        """The layout an argument expression has: a known buffer, or ``reinterpret_tensor(buf, size, stride, off)``
        of one (the view's sizes, the buffer's dtype)."""
        expr = expr.strip()
        if expr in self.layouts:
            return self.layouts[expr]
        m = re.match(r"reinterpret_tensor\(", expr)
        if m:
            inner = _call_args(expr, m.end() - 1)
            if inner:
                parts = split_args(inner[0])
                if len(parts) >= 3:
                    base = self.layouts.get(parts[0], {})
                    offset = parts[3] if len(parts) > 3 else "0"
                    return {
                        "shape": _sizes(parts[1]),
                        "stride": _sizes(parts[2]),
                        "dtype": base.get("dtype"),
                        "device": base.get("device"),
                        "offset": int(offset) if INT_RE.fullmatch(offset) else offset,
                        "base": parts[0],
                    }
        return None

    def scope_calls(self, subgraph: str = "") -> None:
        """Look for kernel calls (:meth:`call_lines`) in one graph's lines only: the function of ``subgraph`` (``def
        repeated_subgraph0(args):``, a repeated region's or a torch.cond branch's, which Inductor writes into its
        parent's output code), or, for the parent (``""``), every line but those functions'. Inductor gives a kernel
        of the same code one name in both (a layer's RMSNorm and the model's final norm), and the parent's launch was
        read from the region's call (nu25 H1: model.norm's kernel called with layer 0's tensors)."""
        spans = {}  # a subgraph's function -> its lines
        for i, ln in enumerate(self.lines):
            m = SUBGRAPH_DEF.match(ln)
            if m and m["name"] != "call" and not m["name"].startswith("partition_"):
                end = next(
                    (j for j in range(i + 1, len(self.lines)) if self.lines[j] and not self.lines[j][0].isspace()),
                    len(self.lines),
                )
                spans[m["name"]] = range(i, end)
        if subgraph and subgraph not in spans:
            return  # its function not found: every line, as before
        keep = (
            set(spans[subgraph]) if subgraph else set(range(len(self.lines))) - {i for r in spans.values() for i in r}
        )
        self._outside = frozenset(range(len(self.lines))) - keep if spans else frozenset()

    def call_lines(self, callee: str) -> list[str]:
        """Lines that call ``callee`` (``name(`` or ``name.run(``), in order (in the scope :meth:`scope_calls` set)."""
        out = self._outside
        if _CALLEE_RE.fullmatch(callee):  # a dotted name: the index of the calls answers
            if self._calls is None:
                self._calls = _call_index(self.lines)
            return [self.lines[i].strip() for i in self._calls.get(callee, ()) if i not in out]
        pat = re.compile(r"(?:^|[^\w.])" + re.escape(callee) + r"(?:\.run)?\(")
        return [  # `in` first: 20x faster
            ln.strip() for i, ln in enumerate(self.lines) if callee in ln and i not in out and pat.search(ln)
        ]

    def call(self, line: str, callee: str) -> Optional[dict]:
        """``{call, args: [...]}`` of one call line: each argument's text and what is known of it."""
        paren = _call_paren(line, callee)
        if paren < 0:
            return None
        inner = _call_args(line, paren)
        if inner is None:
            return None
        args = []
        for part in split_args(inner[0]):
            kw, expr = "", part
            km = _KEYWORD_RE.match(part)
            if km:
                kw, expr = km.group(1), km.group(2).strip()
            if kw == "stream":
                continue  # the launcher's stream, not a kernel argument
            arg = {"expr": expr, "keyword": kw, "tensor": self.tensor_arg(expr)}
            if expr.startswith("[") and expr.endswith("]"):  # a list of tensors (aten.index's indices: [None, buf3])
                arg["items"] = [{"expr": e, "tensor": self.tensor_arg(e)} for e in split_args(expr[1:-1])]
            args.append(arg)
        return {"call": line, "args": args}

    def hint(self, expr: Any) -> Optional[int]:
        """The value of a size at capture time: an int, a known symbol, or an expression over known symbols."""
        if isinstance(expr, int):
            return expr
        if not isinstance(expr, str):
            return None
        if INT_RE.fullmatch(expr):
            return int(expr)
        if expr in self.hints:
            return self.hints[expr]
        names = set(re.findall(r"[A-Za-z_]\w*", expr))
        if names and names <= set(self.hints) and re.fullmatch(r"[\w\s+\-*/()%]+", expr):
            try:
                return int(eval(expr, {"__builtins__": {}}, dict(self.hints)))  # noqa: S307 - arithmetic of sizes
            except Exception:
                return None
        return None


_CPP_ARGTYPES_RE = re.compile(r"^(?P<name>[A-Za-z_]\w*) = async_compile\.cpp_pybinding\(\[(?P<types>[^\]]*)\]", re.M)


def cpp_arg_types(code: str) -> dict[str, list[str]]:
    """``{kernel: [C++ argument types]}`` of each ``async_compile.cpp_pybinding([...], source)`` in the output code."""
    return {
        m["name"]: [t.strip().strip("'\"") for t in split_args(m["types"])] for m in _CPP_ARGTYPES_RE.finditer(code)
    }


def kernel_params(language: str, source: str, name: str) -> list[str]:
    """The parameter names of a generated kernel, in order: a Triton ``def name(in_ptr0, xnumel, XBLOCK : tl.constexpr)``
    (constexprs left out; then the launcher's extra arguments its ``inductor_meta`` names) or a C++
    ``extern "C" void kernel(float* in_out_ptr0, const int64_t ks0)``."""
    if language == "triton":
        m = re.search(r"^def \w+\((?P<params>[^)]*)\)", source, re.M)
        if not m:
            return []
        out = []
        for p in split_args(m["params"]):
            if "constexpr" in p:
                continue
            out.append(p.split(":")[0].split("=")[0].strip())
        # the launcher's own arguments after the kernel's (torch's ``CachingAutotuner``: ``def_args`` then
        # ``inductor_meta["extra_launcher_args"]``): a template's grid, ``_grid_0, _grid_1, _grid_2`` (``FixedGrid``)
        return out + extra_launcher_args(source)
    if language == "cpp":
        m = re.search(r'extern "C"[^(]*\((?P<params>[^)]*)\)', source)
        if not m:
            return []
        return [re.split(r"[\s*&]+", p.strip())[-1] for p in split_args(m["params"]) if p.strip()]
    return []


# -- Triton IR: the kernel-source line of each IR line -------------------------------------------------

_MLIR_LOCDEF_RE = re.compile(r'^#(?P<id>loc\d*) = loc\("[^"]*":(?P<line>\d+):\d+\)', re.M)
_MLIR_LOCALIAS_RE = re.compile(r"^#(?P<id>loc\d*) = loc\((?:\"[^\"]*\"\()?#(?P<to>loc\d*)\)?\)", re.M)
_MLIR_INLINE_RE = re.compile(r'loc\("[^"]*":(?P<line>\d+):\d+\)')
_MLIR_REF_RE = re.compile(r"loc\(#(?P<id>loc\d*)\)")
_LLVM_DILOC_RE = re.compile(r"^!(?P<id>\d+) = !DILocation\(line: (?P<line>\d+)", re.M)
_LLVM_DBG_RE = re.compile(r"!dbg !(?P<id>\d+)")
_PTX_LOC_RE = re.compile(r"^\s*\.loc\s+\d+\s+(?P<line>\d+)\s+\d+")


def ir_source_lines(stage: str, text: Optional[str]) -> Optional[list]:
    """For each line of an IR stage, the kernel-source line Triton recorded for it (1-based, in the file Inductor
    compiled, which is ``Kernel.source``), or None. TTIR/TTGIR: ``loc(#loc3)`` and ``#loc3 = loc("f.py":23:4)``;
    LLIR: ``!dbg !12`` and ``!12 = !DILocation(line: 23, ...)``; PTX: the ``.loc 1 23 4`` before an instruction
    (it holds until the next ``.loc``). Returns None when the text records no location at all."""
    if not text:
        return None
    lines = text.split("\n")
    out: list = [None] * len(lines)
    if stage in ("ttir", "ttgir"):
        defs = {m["id"]: int(m["line"]) for m in _MLIR_LOCDEF_RE.finditer(text)}
        for _ in range(4):  # aliases (#loc7 = loc("x"(#loc3))) resolve through a few hops at most
            for m in _MLIR_LOCALIAS_RE.finditer(text):
                if m["to"] in defs and m["id"] not in defs:
                    defs[m["id"]] = defs[m["to"]]
        for i, ln in enumerate(lines):
            if ln.startswith("#loc"):
                continue
            m = _MLIR_INLINE_RE.search(ln)
            if m:
                out[i] = int(m["line"])
                continue
            refs = _MLIR_REF_RE.findall(ln)
            if refs and refs[-1] in defs:
                out[i] = defs[refs[-1]]
    elif stage == "llir":
        defs = {m["id"]: int(m["line"]) for m in _LLVM_DILOC_RE.finditer(text)}
        for i, ln in enumerate(lines):
            m = _LLVM_DBG_RE.search(ln)
            if m and m["id"] in defs and not ln.startswith("!"):
                out[i] = defs[m["id"]]
    elif stage == "ptx":
        current = None
        for i, ln in enumerate(lines):
            m = _PTX_LOC_RE.match(ln)
            if m:
                current = int(m["line"]) or None
                continue
            s = ln.strip()
            if current is not None and s and not s.startswith(("//", ".", "$", "}", "{")):
                out[i] = current
            if s.startswith("}"):
                current = None
    else:
        return None
    return out if any(v is not None for v in out) else None
