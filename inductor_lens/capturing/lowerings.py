"""Which lowering function Inductor ran for each post-grad FX op (``GraphLowering.call_function``), read from torch's
``torch._inductor.lowering.lowerings`` table once a graph is lowered. Part of the capture layer; torch is imported
inside each function.

``GraphLowering.call_function(target, args, kwargs)`` calls, in this order of precedence: the target itself where a
pattern of Inductor's put a lowering function in the graph (``_inductor_lowering_function``); ``fallback_handler`` for
a node marked ``should_fallback``; a user's lowering (``user_lowerings``, torch 2.13+); else ``lowerings[target]``,
which holds the fallbacks made during the compile too (``make_fallback`` adds them). A ``getitem`` of a list of results
(a multi-output op) is Python's own, no lowering. Each table entry is a ``functools.wraps`` wrapper
(``_register_lowering``'s ``wrapped``): :func:`chain` unwraps it, and follows a registration wrapper
(``register_foreach_inplace.<locals>.fn``, ``register_inplace.<locals>.fn``) to the lowering its closure holds
(``make_foreach_pointwise.<locals>.inner``), outermost first, which is the path torch runs.
"""

from __future__ import annotations

import inspect
import linecache
import operator
import re
import types
from typing import Any, Optional

#: A wrapper made by one of lowering.py's ``register_*`` helpers around the lowering it registers (an in-place op by
#: its out-of-place lowering, a foreach op's in-place form): followed to the function its closure holds.
_REGISTRATION = re.compile(r"register_\w*\.<locals>\.fn$")


def _frame(fn: Any) -> Optional[tuple]:
    """``(file, line, qualified name, code)`` of a Python function: where it is defined."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    name = getattr(fn, "__qualname__", None) or code.co_name
    line = code.co_firstlineno  # a decorated function's starts at its first decorator: its ``def`` is below
    for at in range(line, line + 12):
        text = linecache.getline(code.co_filename, at).strip()
        if text.startswith(("def ", "async def ")):
            return (code.co_filename, at, name, text)
    return (code.co_filename, line, name, linecache.getline(code.co_filename, line).strip())


def chain(fn: Any) -> list[tuple]:
    """The lowering functions torch runs for a table entry ``fn``, outermost first (frames as ``_frame``): the
    unwrapped function, then, while it is a registration wrapper whose closure holds one Python function, that one."""
    out: list[tuple] = []
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen and len(out) < 4:
        seen.add(id(fn))
        try:
            fn = inspect.unwrap(fn)
        except ValueError:  # a cycle of __wrapped__
            pass
        frame = _frame(fn)
        if frame is None:  # a builtin, a C++ function: named, with no file
            name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
            out.append(("", 0, str(name), ""))
            break
        out.append(frame)
        if not _REGISTRATION.search(frame[2]):
            break
        held = [
            c.cell_contents
            for c in (getattr(fn, "__closure__", None) or ())
            if isinstance(getattr(c, "cell_contents", None), types.FunctionType)
        ]
        fn = held[0] if len(held) == 1 else None
    return out


def _list_of_results(node: Any) -> bool:
    """A ``getitem`` whose input is a list or tuple of results: lowered by Python's own ``getitem``."""
    args = getattr(node, "args", ())
    src = args[0] if args else None
    val = getattr(src, "meta", {}).get("val") if src is not None and hasattr(src, "meta") else None
    return isinstance(val, (list, tuple, dict))


def lowering_chains(gm: Any) -> dict[str, list[tuple]]:
    """Each ``call_function`` node of the post-grad graph ``gm`` -> the lowering chain torch ran for it (:func:`chain`),
    after the graph was lowered; nodes with no lowering (a getitem of a list of results) are left out."""
    from torch._inductor import lowering as L

    table = L.lowerings
    user = getattr(L, "user_lowerings", None) or {}
    handler = getattr(L, "fallback_handler", None)
    out: dict[str, list[tuple]] = {}
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if target is operator.getitem and _list_of_results(node):
            continue
        fn: Any = None
        meta = node.meta if isinstance(node.meta, dict) else {}
        if hasattr(target, "_inductor_lowering_function"):
            fn = target
        elif "should_fallback" in meta or (meta.get("custom") or {}).get("fallback_to_eager"):
            fn = handler
        elif target in user:
            fn = user[target]
        else:
            fn = table.get(target)
        if fn is not None:
            got = chain(fn)
            if got:
                out[node.name] = got
    return out


def entry_frame(fn: Any) -> list[tuple]:
    """The frame of ``fn`` as a stack's last one, where a hook that replaces ``fn`` reads the stack on entry to it
    (``GraphLowering.call_function``, ``Scheduler.fuse_nodes``): its definition line, its qualified name."""
    frame = _frame(fn)
    if frame is None:
        return []
    file, line, qualname, text = frame
    name = fn.__code__.co_name  # a stack's frame: named as the others (Frame.function), its qualified name apart
    return [(file, line, name, text, "" if qualname == name else qualname)]
