"""``Kernel.launch``: how the output code calls each kernel, read from the output code's text (the call line,
the layouts of its buffers) and from what the Triton autotuner held after the run (config, grid).

Torch-free: the capture's hooks hand over the autotuner's facts as plain data (``torchread.launch_metadata``).
Sizes stay as the output code spells them (``s0`` where symbolic), with the concrete value as a hint.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ..report.model import KernelLaunch, LaunchArg
from .parse import INT_RE, OutputCodeLayouts, kernel_params, lines_naming

_NAME_RE = re.compile(r"[A-Za-z_]\w*")
_FLOAT_RE = re.compile(r"-?\d+\.\d*(e-?\d+)?")


def _hints(layouts: OutputCodeLayouts, sizes: Optional[list]) -> Optional[list]:
    """Concrete values of ``sizes`` when one is symbolic (None when all are ints or one is unknown)."""
    if not sizes or all(isinstance(s, int) for s in sizes):
        return None
    out = [layouts.hint(s) for s in sizes]
    return out if all(v is not None for v in out) else None


def _items(layouts: OutputCodeLayouts, a: dict) -> Optional[list[LaunchArg]]:
    """``LaunchArg.items`` of a list argument: each tensor of it with its layout, a ``None`` as ``None``; null where
    the argument is no list, or an element is neither (a size, another expression)."""
    items = a.get("items")
    if not items:
        return None
    out = []
    for e in items:
        if e["expr"] == "None":
            out.append(LaunchArg(name="None", value="None"))
        elif e["tensor"] is not None and e["tensor"].get("shape") is not None:
            out.append(_arg(layouts, {**e, "keyword": ""}, ""))
        else:
            return None
    return out


def _arg(layouts: OutputCodeLayouts, a: dict, param: str) -> LaunchArg:
    expr, t = a["expr"], a["tensor"]
    if t is not None and t.get("shape") is not None:
        base = expr if _NAME_RE.fullmatch(expr) else t.get("base") or expr
        hint = _hints(layouts, t["shape"])
        if hint is None and t.get("hint_shape") and t["hint_shape"] != t["shape"]:
            hint = t["hint_shape"]
        return LaunchArg(
            name=base,
            shape=list(t["shape"]),
            stride=list(t["stride"]) if t.get("stride") is not None else None,
            dtype=t.get("dtype"),
            offset=t.get("offset", 0),
            hint=hint,
            param=param,
            keyword=a["keyword"],
        )
    if (items := _items(layouts, a)) is not None:
        return LaunchArg(name=param or a["keyword"] or expr, value=expr, param=param, keyword=a["keyword"], items=items)
    value: Any = expr
    if INT_RE.fullmatch(expr):
        value = int(expr)
    elif _FLOAT_RE.fullmatch(expr):
        value = float(expr)
    hint = None if isinstance(value, (int, float)) else layouts.hint(expr)
    return LaunchArg(name=param or a["keyword"] or expr, value=value, hint=hint, param=param, keyword=a["keyword"])


def _eval_grid(grid: Optional[list], prefix: list, args: list[LaunchArg]) -> Optional[list]:
    """The grid as numbers where every size it depends on is known; its expressions otherwise."""
    if grid is None:
        return None
    scope: dict = {}
    for a in args:
        v = a.value if isinstance(a.value, int) else a.hint if isinstance(a.hint, int) else None
        if a.param and v is not None:
            scope[a.param] = v
    out = []
    try:
        env = {"__builtins__": {}, "max": max, "min": min}
        for line in prefix:
            exec(line, env, scope)  # noqa: S102 - Inductor's own grid arithmetic (GridExpr.prefix)
        for g in grid:
            out.append(g if isinstance(g, int) else int(eval(str(g), env, scope)))  # noqa: S307
        return out
    except Exception:
        return [g if isinstance(g, int) else str(g) for g in grid]


def kernel_launch(
    layouts: OutputCodeLayouts,
    callee: str,
    language: str,
    source: str,
    buffer: Optional[str] = None,
    runtime: Optional[dict] = None,
    arg_types: Optional[list[str]] = None,
) -> Optional[KernelLaunch]:
    """The first call of ``callee`` in the output code as a ``KernelLaunch`` (None when no call is found).

    ``buffer``: for an extern kernel, the buffer it writes (picks its call among several of the same op);
    ``runtime``: the autotuner's facts (``num_warps``, ``num_stages``, ``block``, ``grid``, ``grid_prefix``)."""
    lines = layouts.call_lines(callee)
    if buffer:
        lines = lines_naming(lines, buffer, layouts.words) or lines
    if not lines:
        return None
    call = layouts.call(lines[0], callee)
    if call is None:
        return None
    params = kernel_params(language, source, callee)
    args = []
    for i, a in enumerate(call["args"]):
        param = params[i] if i < len(params) and not a["keyword"] else ""
        args.append(_arg(layouts, a, param))
    runtime = runtime or {}
    devices = {t["tensor"].get("device") for t in call["args"] if t["tensor"] is not None} - {None}
    block = runtime.get("block")
    return KernelLaunch(
        grid=_eval_grid(runtime.get("grid"), runtime.get("grid_prefix") or [], args),
        num_warps=runtime.get("num_warps"),
        num_stages=runtime.get("num_stages"),
        args=args,
        block=dict(block) if isinstance(block, dict) else None,
        call=call["call"],
        arg_types=list(arg_types) if arg_types is not None else None,
        device=sorted(devices)[0] if devices else None,
    )
