"""The user's source: notebook cells named as the user sees them, and the text of the user's files.

No torch here. IPython is only read when it is already running (``sys.modules``), never imported.
"""

from __future__ import annotations

import ast
import functools
import linecache
import re
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ..report.model import Frame, SourceFile

#: The most text kept of one file, and of all files of one report (characters).
MAX_FILE_CHARS = 256 * 1024
MAX_TOTAL_CHARS = 4 * 1024 * 1024

_MAGIC_LINE = re.compile(r"^\s*%%inductor_lens\b")
_MAGIC_CALL = re.compile(r"^\s*get_ipython\(\)\.run_cell_magic\(\s*['\"]inductor_lens['\"]")


@dataclass(frozen=True)
class Cell:
    """How one compiled cell file maps to what the user sees."""

    name: str  # "cell [N]"
    offset: int  # add to a line of the file to get the line in the cell as shown
    wrapper: bool  # IPython's call of the %%inductor_lens magic, not the user's code
    text: str  # the cell as the user typed it


def _shell():
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None) if ipython is not None else None
    try:
        return get() if get is not None else None
    except Exception:
        return None


def running_cell(shell: Any = None) -> Optional[int]:
    """The number of the cell running now (``In [N]``), as its lines are named (``cell [N]:3``): the newest of the
    numbers IPython's compiler keeps per cell file (``shell.compile._filename_map``). Not ``shell.execution_count``,
    which IPython 9 moves on to the next cell's before it runs this one. None outside IPython."""
    shell = shell if shell is not None else _shell()
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    numbers = [n for n in names.values() if isinstance(n, int)] if isinstance(names, dict) else []
    return max(numbers) if numbers else None


def _magic_call(compiled: str) -> Optional[tuple[str, str]]:
    """``(line, body)`` of IPython's ``get_ipython().run_cell_magic('inductor_lens', line, body)``."""
    if not _MAGIC_CALL.match(compiled):
        return None
    try:
        call = ast.parse(compiled.strip()).body[0].value
        line, body = (ast.literal_eval(a) for a in call.args[1:3])
    except Exception:
        return None
    return (line, body) if isinstance(line, str) and isinstance(body, str) else None


def cell_map(shell=None) -> dict[str, Cell]:
    """``{compiled filename: Cell}`` for every cell IPython has compiled in this session.

    IPython's compiler keeps ``filename -> execution count`` (``shell.compile._filename_map``); the cell's
    raw text is its input history. The ``%%inductor_lens`` magic compiles to a call of the magic (the
    wrapper, not the user's code), which runs the cell body under a file of its own: that file is found
    by its text, and its lines are shifted by the magic's line.
    """
    shell = shell if shell is not None else _shell()
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if not isinstance(names, dict):
        return {}
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []

    def transform(text: str) -> str:
        try:
            return str(shell.transform_cell(text)).strip()
        except Exception:
            return text.strip()

    def raw(number: int, compiled: str) -> Optional[str]:
        text = history[number] if 0 <= number < len(history) and isinstance(history[number], str) else None
        return text if text is not None and transform(text) == compiled.strip() else None

    compiled = {f: "".join(linecache.cache.get(f, (0, None, [], ""))[2]) for f in list(names)}
    out: dict[str, Cell] = {}
    bodies: dict[str, Cell] = {}  # the body's transformed text -> how to show its lines
    for filename, number in list(names.items()):
        call = _magic_call(compiled[filename]) if isinstance(number, int) else None
        if call is None:
            continue
        text = raw(number, compiled[filename]) or f"%%inductor_lens {call[0]}\n{call[1]}"
        lines = text.splitlines()
        magic = next((i for i, ln in enumerate(lines) if _MAGIC_LINE.match(ln)), 0)
        out[filename] = Cell(name=f"cell [{number}]", offset=magic, wrapper=True, text=text)
        bodies[transform(call[1])] = Cell(name=f"cell [{number}]", offset=magic + 1, wrapper=False, text=text)
    for filename, number in list(names.items()):
        if filename in out or not isinstance(number, int):
            continue
        body = bodies.get(compiled[filename].strip())
        out[filename] = body or Cell(
            name=f"cell [{number}]", offset=0, wrapper=False, text=raw(number, compiled[filename]) or compiled[filename]
        )
    return out


def localize(frame: Frame, cells: dict[str, Cell]) -> Frame:
    """``frame`` with a notebook cell's file named ``cell [N]`` and its line as shown in the cell; the
    magic's own call of the cell is marked as not the user's (stage ``other``)."""
    cell = cells.get(frame.file)
    if cell is None:
        return frame
    if cell.wrapper:
        lines = cell.text.splitlines()
        line = cell.offset + 1
        code = lines[cell.offset].strip() if cell.offset < len(lines) else frame.code
        return Frame(
            file=cell.name, line=line, function=frame.function, code=code, stage="other", qualname=frame.qualname
        )
    function = shift_resume(frame.function, cell.offset)
    return Frame(
        file=cell.name, line=frame.line + cell.offset, function=function, code=frame.code, qualname=frame.qualname
    )


_RESUME_AT = re.compile(r"torch_dynamo_resume_in_(\w+)_at_(\d+)")


def shift_resume(name: str, offset: int) -> str:
    """Dynamo's resume function ``name`` (``torch_dynamo_resume_in_train_step_at_34``: the code after the graph break
    at line 34 of the code dynamo traced) with its line(s) shifted by ``offset``, a cell's (``Cell.offset``: the
    ``%%inductor_lens`` line the magic strips), so that it names the break's line as the cell shows it; any other name
    as it is. One rule for a compile's frame (``Compile.frame``, "train_step() after line 35") and a stack frame's
    function (``Frame.function_label``, "train_step (after the graph break at line 35)"): the stack's said 34 where
    the compile picker, the timeline and the graph-break list said 35 (a new user's trial, nu24 D4).

    >>> shift_resume("torch_dynamo_resume_in_train_step_at_34", 1), shift_resume("forward", 1)
    ('torch_dynamo_resume_in_train_step_at_35', 'forward')
    >>> shift_resume("Block.torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_5_at_9 (via x)", 1)
    'Block.torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_6_at_10 (via x)'
    """
    if not offset or "torch_dynamo_resume_in_" not in name:
        return name
    return _RESUME_AT.sub(
        lambda m: f"torch_dynamo_resume_in_{shift_resume(m.group(1), offset)}_at_{int(m.group(2)) + offset}", name
    )


def method_class(file: str, line: int, name: str) -> str:
    """The class whose method ``name`` is defined at ``line`` of ``file`` (a code object's ``co_firstlineno``: its
    ``def`` or first decorator) or holds that line (dynamo's code after a graph break starts at the break's line),
    from the file's text as Python's ``linecache`` holds it (a notebook cell's too); ``""`` for a function that is
    no method, or where the text is not known."""
    lines = linecache.getlines(file)
    if not lines:
        return ""
    starts, spans = _methods("".join(lines))
    line = int(line)
    return starts.get((line, name)) or next((c for a, b, n, c in spans if n == name and a <= line <= b), "")


@functools.lru_cache(maxsize=64)
def _methods(text: str) -> tuple[dict[tuple[int, str], str], tuple[tuple[int, int, str, str], ...]]:
    """The methods of every class in ``text``: ``(line, name) -> class`` at each one's ``def`` line and decorators'
    lines, and ``(first line, last line, name, class)`` of each."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}, ()
    starts: dict[tuple[int, str], str] = {}
    spans = []
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            for fn in cls.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
                    for ln in [fn.lineno, *(d.lineno for d in fn.decorator_list)]:
                        starts[(ln, fn.name)] = cls.name
                    spans.append((first, getattr(fn, "end_lineno", None) or fn.lineno, fn.name, cls.name))
    return starts, tuple(spans)


def localize_text(text: str, cells: dict[str, Cell]) -> str:
    """``text`` (a diagnostic, a reason) with each place in a notebook cell's file named as :func:`localize` names
    a frame: ``/tmp/ipykernel_1/23.py:2``, ``File "/tmp/ipykernel_1/23.py", line 2`` and torch's
    ``(/tmp/ipykernel_1/23.py line 2)`` become ``cell [6]:3``, ``File "cell [6]", line 3`` and ``(cell [6]:3)``; the
    magic's own call keeps its file's line."""
    for file, cell in cells.items():
        if file not in text or cell.wrapper:
            continue
        here = re.escape(file)
        text = re.sub(here + r":(\d+)", lambda m, c=cell: f"{c.name}:{int(m.group(1)) + c.offset}", text)
        text = re.sub(
            r'File "' + here + r'", line (\d+)',
            lambda m, c=cell: f'File "{c.name}", line {int(m.group(1)) + c.offset}',
            text,
        )
        # torch's format_frame_info: "h (/tmp/ipykernel_1/23.py line 12)"
        text = re.sub(here + r" line (\d+)", lambda m, c=cell: f"{c.name}:{int(m.group(1)) + c.offset}", text)
    return text


def _generated_text(name: str) -> tuple[Optional[str], str]:
    """The text of code that has no file (``<eval_with_key>.15``, the forward torch.fx wrote for a GraphModule,
    such as PT2E's converted model) from Python's ``linecache``, where its writer left it, and a note saying
    what it is; ``(None, why)`` when nothing holds it."""
    lines = linecache.getlines(name)
    if not lines:  # a key Python's linecache will not hold ("... in <lambda>" ends in ">"): torch.fx's own cache
        gm = sys.modules.get("torch.fx.graph_module")
        loader = getattr(gm, "_loader", None)
        src = getattr(loader, "eval_cache", {}).get(name) if loader is not None else None
        lines = [src] if isinstance(src, str) and src else []
    if name.startswith("<eval_with_key>"):
        what = "code torch.fx generated for a GraphModule's forward (no file on disk; the text is torch.fx's)"
    else:
        what = f"code compiled from a string ({name}: no file on disk)"
    if not lines:
        return None, f"{what}: Python's linecache no longer holds its text"
    return "".join(lines), what


def read_sources(files: Iterable[str], cells: dict[str, Cell]) -> list[SourceFile]:
    """The text of each file (bounded; ``note`` says why text is missing or cut)."""
    by_name = {c.name: c.text for c in cells.values() if not c.wrapper}
    out: list[SourceFile] = []
    total = 0
    for name in dict.fromkeys(files):
        text: Optional[str] = by_name.get(name)
        note = ""
        if text is None:
            if name.startswith("cell ["):
                out.append(SourceFile(file=name, note="the cell's text is no longer in IPython's history"))
                continue
            if name.startswith("<"):
                text, note = _generated_text(name)
                if text is None:
                    out.append(SourceFile(file=name, note=note))
                    continue
            else:
                try:
                    with open(name, encoding="utf-8", errors="replace") as f:
                        text = f.read(MAX_FILE_CHARS + 1)
                except OSError as e:
                    out.append(SourceFile(file=name, note=f"could not be read ({type(e).__name__}: {e.strerror or e})"))
                    continue
        if total >= MAX_TOTAL_CHARS:
            out.append(
                SourceFile(
                    file=name, note=f"not stored: the report keeps at most {MAX_TOTAL_CHARS} characters of source"
                )
            )
            continue
        limit = min(MAX_FILE_CHARS, MAX_TOTAL_CHARS - total)
        if len(text) > limit:
            text = text[:limit]
            text = text[: text.rfind("\n") + 1] or text
            note = f"truncated to the first {len(text.splitlines())} lines ({len(text)} characters)"
        total += len(text)
        out.append(SourceFile(file=name, text=text, note=note))
    return out


#: A graph input dynamo took from the stack at a graph break: a slot of its resume function (``L['___stack0']``), or an
#: item of one (``L['___stack0'][0]``).
_STACK_SOURCE = re.compile(r"^L\[['\"](___stack\d+)['\"]\](?:\[(\d+)\])?$")
_STORES = ("STORE_FAST", "STORE_DEREF", "STORE_NAME", "STORE_GLOBAL")


def resume_stack_names(code) -> dict[str, str]:
    """What the user's code calls the values dynamo hands to its code after a graph break (a resume function,
    ``torch_dynamo_resume_in_step_at_8``, takes the values that were on the stack at the break as ``___stack0``,
    ``___stack1``...): ``{source: name}`` for the top of the stack (the result of the call that broke the graph), read
    from the resume function's own bytecode where the code it jumps to stores that value at once: ``x = x.f()``
    stores ``___stack0`` in ``x``; ``g, = torch.autograd.grad(...)`` unpacks it, ``L['___stack0'][0]`` is ``g``. Any
    other slot, or a value the code goes on computing with, is left out: no name of the user's holds it. ``{}`` for a
    code that is no resume function."""
    import dis

    if not str(getattr(code, "co_name", "")).startswith("torch_dynamo_resume_in_"):
        return {}
    args = code.co_varnames[: code.co_argcount]
    stack = [a for a in args if re.fullmatch(r"___stack\d+", a)]
    if not stack:
        return {}
    top = max(stack, key=lambda a: int(a[len("___stack") :]))
    try:
        ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG", "NOP")]
    except Exception:  # a code dis cannot read: its values stay unnamed
        return {}
    # the prologue loads the stack's values and jumps to where the original code resumes
    jump = next((i for i in ins if i.opname.startswith("JUMP")), None)
    if jump is None or not isinstance(jump.argval, int):
        return {}
    after = [i for i in ins if i.offset >= jump.argval]
    if not after:
        return {}
    first = after[0]
    if first.opname in _STORES:
        return {f"L['{top}']": str(first.argval)}
    if first.opname == "UNPACK_SEQUENCE" and isinstance(first.arg, int):
        names: list[str] = []
        for i in after[1:]:
            if len(names) >= first.arg:
                break
            if i.opname in _STORES:
                names.append(str(i.argval))
            elif i.opname == "STORE_FAST_STORE_FAST" and isinstance(i.argval, tuple):  # Python 3.13: two stores in one
                names.extend(str(a) for a in i.argval)
            else:
                break
        if len(names) == first.arg:
            return {f"L['{top}'][{k}]": n for k, n in enumerate(names)}
    return {}
