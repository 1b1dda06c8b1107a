"""Pure text parsers for what torch prints: stack traces, output code, graph-break messages.

No torch import here: these run on strings, so they are tested without compiling anything.
"""

from __future__ import annotations

import re
from typing import Optional

from ..report.model import Frame
from ..report.rules import MODULE_ROOT_ARG, parse_size_hints

_FRAME_RE = re.compile(r'^\s*File "(?P<file>.+?)", line (?P<line>\d+), in (?P<func>.+?)\s*$')


def parse_stack_trace(text: Optional[str]) -> list[Frame]:
    """Frames of a formatted Python traceback (``File "x.py", line 3, in f`` + the code line).

    Caret lines (``^^^^``) are dropped; frames keep the order of the text (outermost first).
    """
    if not text:
        return []
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
    return frames


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


def _matching(code: str, start: int, open_: str, close: str) -> int:
    """Index of the bracket that closes the one at ``start`` (-1 if none)."""
    depth = 0
    for i in range(start, len(code)):
        c = code[i]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
    return -1


def find_call_lines(code: str, callee: str, buffer: Optional[str] = None) -> list[str]:
    """Lines of the output code that call ``callee`` (e.g. ``extern_kernels.mm``), preferring the
    ones that mention ``buffer`` (the buffer the call writes) when one is given."""
    pattern = re.compile(re.escape(callee) + r"\s*\(")
    lines = [ln.strip() for ln in code.splitlines() if pattern.search(ln)]
    if buffer:
        word = re.compile(r"\b" + re.escape(buffer) + r"\b")
        mine = [ln for ln in lines if word.search(ln)]
        if mine:
            return mine
    return lines


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


def clean_module_path(path: str) -> str:
    """``L['self'].layers[0]._modules['mlp']`` -> ``layers.0.mlp`` (the nn.Module's qualified name)."""
    path = MODULE_ROOT_ARG.sub("", path.strip())  # ``L['args'][0]._modules[...]``: a decorator wrapper's module
    path = re.sub(r"^(L|G)\[['\"][^'\"]+['\"]\]\.?", "", path)
    path = re.sub(r"^self\.", "", path)

    def repl(m: re.Match) -> str:
        return "." + next(g for g in m.groups() if g is not None)

    path = _MODULE_KEY_RE.sub(repl, path)
    return path.strip(".")


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
