"""Hooks a compiled module gained or lost after torch compiled it, which torch does not see (diagnostic
``hook_not_run``).

Dynamo does not guard on ``nn.Module`` hooks (``torch._dynamo.config.skip_nnmodule_hook_guards``, True by
default): a hook registered on a module of ``torch.compile(model)`` after the compile, or removed after it, changes
nothing until something else recompiles: the compiled code runs as it was traced, and says nothing (a new user's
trial, nu19 item 9). The capture watches each call of a compiled module (``OptimizedModule.__call__``): it reads the
hook dicts of the module and its sub-modules before the call; a call that compiled keeps them as what the compile
traced; a call that compiled nothing, with other hooks than those, is said, once per hook.

Nothing here is traced by dynamo or adds a guard: the wrapper's own frames are never offered to dynamo
(``skip_code``), it reads the dicts only outside a compile (``torch.compiler.is_compiling``), and it reads them as
plain attributes of each module's ``__dict__``. A function compiled with ``torch.compile(f)`` that calls a global
model is not watched (no call of a compiled module to watch).
"""

from __future__ import annotations

import functools
import os
import sys
import weakref
from typing import Any, Callable

#: The hook dicts dynamo traces (and does not guard on), with what a user calls each: the forward ones, whose change
#: after a compile is seen to do nothing (backward hooks are not watched: not checked against torch).
KINDS = (
    ("_forward_pre_hooks", "forward pre-hook"),
    ("_forward_hooks", "forward hook"),
)
_WORDS = dict(KINDS)


def hook_keys(module: Any) -> dict[tuple[str, str], tuple]:
    """``{(module path, hook dict): its handles' ids}`` for the module and each sub-module with a hook."""
    out = {}
    for path, m in module.named_modules():
        own = m.__dict__
        for attr, _ in KINDS:
            d = own.get(attr)
            if d:
                out[(path, attr)] = tuple(d)
    return out


def describe(fn: Any) -> str:
    """A hook for people: its name and where it is defined (``<lambda> (s9_hook.py:10)``)."""
    fn = getattr(fn, "__func__", fn)
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    code = getattr(fn, "__code__", None)
    return f"{name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})" if code is not None else name


def _module_words(root: Any, path: str) -> str:
    cls = type(root.get_submodule(path)).__name__ if path else type(root).__name__
    return f"`{path}` ({cls})" if path else f"the compiled module ({cls})"


class _Watch:
    """One capture's record of each compiled module: the hooks its last compile traced (``(path, dict)`` -> ``{handle id:
    description}``), and the hooks already said."""

    def __init__(self) -> None:
        self.traced: dict[int, tuple[Any, dict]] = {}  # id(OptimizedModule) -> (a weak reference, the hooks)
        self.told: set[tuple] = set()

    def compiled(self, wrapper: Any, root: Any, keys: dict) -> None:
        hooks = {
            k: {h: describe(root.get_submodule(k[0]).__dict__[k[1]].get(h)) for h in handles}
            for k, handles in keys.items()
        }
        try:
            ref = weakref.ref(wrapper)
        except TypeError:
            return
        self.traced[id(wrapper)] = (ref, hooks)

    def ran(self, wrapper: Any, root: Any, keys: dict) -> list[str]:
        """What to say of a call of ``wrapper`` that compiled nothing, its hooks being ``keys``."""
        entry = self.traced.get(id(wrapper))
        if entry is None or entry[0]() is not wrapper:
            return []
        traced = entry[1]
        if {k: tuple(v) for k, v in traced.items()} == keys:
            return []
        out = []
        for k in sorted(set(traced) | set(keys)):
            path, attr = k
            was, now = traced.get(k, {}), keys.get(k, ())
            module = root.get_submodule(path).__dict__.get(attr, {})
            for h in now:
                if h not in was and (id(wrapper), k, h, "added") not in self.told:
                    self.told.add((id(wrapper), k, h, "added"))
                    out.append(
                        f"the {_WORDS[attr]} {describe(module.get(h))} registered on {_module_words(root, path)} "
                        f"after torch compiled it did not run"
                    )
            for h, what in was.items():
                if h not in now and (id(wrapper), k, h, "removed") not in self.told:
                    self.told.add((id(wrapper), k, h, "removed"))
                    out.append(
                        f"the {_WORDS[attr]} {what} removed from {_module_words(root, path)} after torch compiled it "
                        f"still ran (its ops are in the compiled code)"
                    )
        return out


HOW = (
    "dynamo does not guard on nn.Module hooks (torch._dynamo.config.skip_nnmodule_hook_guards is True), so a hook "
    "added or removed after the compile changes nothing until something else recompiles; set "
    "torch._dynamo.config.skip_nnmodule_hook_guards = False before compiling (a hook change then recompiles), or "
    "compile again (torch._dynamo.reset(), or register the hooks before the first call)"
)


def install(
    stack: Any,
    each: Callable,
    patch_attr: Callable,
    sinks: Callable,
    invisible: Callable,
    skip_code: Callable,
    user_frames: Callable,
    frames_of: Callable,
) -> None:
    """Wrap ``OptimizedModule.__call__`` until ``stack`` closes; ``each(what, fn, *args)`` calls ``fn(hooks, *args)``
    for the captures active on this thread, ``sinks()`` lists them."""
    import torch
    from torch._dynamo.eval_frame import OptimizedModule

    original = OptimizedModule.__call__

    @invisible
    def before(wrapper: Any) -> tuple:
        try:
            root = wrapper.__dict__.get("_modules", {}).get("_orig_mod")
            if root is not None:
                return root, hook_keys(root), {id(h): len(h.raw.windows) for h in sinks()}
        except Exception:  # never let the watch break the user's call: this call is not watched
            pass
        return None, {}, {}

    def after(hooks: Any, wrapper: Any, root: Any, keys: dict, windows: dict, caller: Any) -> None:
        watch = hooks.__dict__.setdefault("_module_hook_watch", _Watch())
        if len(hooks.raw.windows) > windows.get(id(hooks), len(hooks.raw.windows)):
            watch.compiled(wrapper, root, keys)  # this call compiled: what it traced are the hooks at its start
            return
        said = watch.ran(wrapper, root, keys)
        if not said:
            return
        import torch._dynamo.config as dynamo_config

        if not getattr(dynamo_config, "skip_nnmodule_hook_guards", True):
            return  # hooks guarded: a change recompiles, and a call that compiled nothing saw none
        user = user_frames(frames_of(caller), hooks._prefixes)  # only when said: a stack costs
        at = f" at the call at {os.path.basename(user[-1][0])}:{user[-1][1]}" if user else ""
        for line in said:
            hooks.raw.diag("hook_not_run", f"{line}{at}: {HOW}")

    @invisible
    def tell(wrapper: Any, root: Any, keys: dict, windows: dict, caller: Any) -> None:
        each("watching a compiled module's hooks", after, wrapper, root, keys, windows, caller)

    @invisible
    def watched() -> bool:  # dynamo's frame hook may be on here (compiled autograd): no frame of this is offered to it
        return bool(sinks()) and not torch.compiler.is_compiling()

    @functools.wraps(original)
    def __call__(self, *args, **kwargs):
        if not watched():
            return original(self, *args, **kwargs)
        root, keys, windows = before(self)
        out = original(self, *args, **kwargs)
        if root is not None:
            tell(self, root, keys, windows, sys._getframe(1))
        return out

    skip_code(__call__.__code__)
    patch_attr(stack, OptimizedModule, "__call__", __call__)
