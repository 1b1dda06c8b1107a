"""The hooks: with ``torchread.py`` (which reads torch's objects into plain data), the only code in inductor_lens
that touches ``torch._*``.

Every hook is installed through an :class:`contextlib.ExitStack` so that it is removed, and the
original restored, whatever happens. Each hook body is guarded: an exception inside inductor_lens
becomes a diagnostic on the report and never reaches the user's compile (like
``torch/_inductor/debug.py`` does for its own formatters).

Hooks (verified on torch 2.11 and 2.13; each one that is missing is reported, not skipped silently):

- ``torch.__trace`` structured-trace records (dynamo starts, graphs, guards, recompile reasons,
  graph breaks, output code, phase events), read in process through a logging handler;
- ``torch._inductor.debug.log_ir_pre_fusion`` / ``log_ir_post_fusion``: scheduler nodes before
  and after fusion;
- ``set_kernel_post_grad_provenance_tracing`` (in ``debug``, ``codegen.cpp``, ``codegen.triton``):
  the exact join of a generated kernel with the scheduler nodes it implements, and the compiler
  call stack at that moment;
- ``GraphLowering.call_function`` and ``Scheduler.fuse_nodes``: the path to each graph's lowering and fusion (its
  first call of each); after lowering, ``torch._inductor.lowering.lowerings``: which lowering ran for each op;
- ``torch._inductor.scheduler.WhyNoFuse.__call__``: "cannot fuse X with Y: reason";
- ``GraphLowering.save_output_code``: the generated module;
- ``torch._inductor.compile_fx.compile_fx``: the FX graph dynamo hands to Inductor;
- ``torch.fx.experimental.proxy_tensor.maybe_handle_decomp``: which node holds which result of an op with several
  that AOT autograd decomposed (a layer norm's mean, its rstd), marked in the node's meta;
- ``torch._inductor.compile_fx.aot_export_module``: how AOTInductor names an exported program's inputs, and the
  user's call that compiled it;
- dynamo's compile start/end callbacks: when (and why) a compile ran;
- ``torch._inductor.constant_folding.replace_node_with_constant`` (also as ``freezing`` imported it) and the C++ GEMM
  template's ``prep_weight`` and ``prune_tensors``: where each graph constant of a frozen graph comes from
  (``constants.py``);
- ``torch.compile`` itself, to show that it only wraps the function;
- ``torch._dynamo.convert_frame.CatchErrorsWrapper._handle_skip`` (torch 2.13+; 2.11 has none): a compiled call
  whose own frame dynamo skipped (its code is in dynamo's skip files: ``Module.compile()`` of a module whose
  forward is torch's own), which torch says only in a debug log line.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
import time
import traceback
import types
import weakref
from typing import Any, Callable, Optional

from packaging.version import Version

from . import cudagraphs, module_hooks
from .artifacts import wanted
from .lowerings import entry_frame, lowering_chains
from .raw import RESETS, Raw, RawGraph, RawKernel, RawWindow, aot_lowered, loads_payload, now_us
from .stacks import frames_of, non_user_prefixes, torch_dir, trim_hook_callers, trim_to_user_call, user_frames
from .torchread import (
    aot_input_names,
    cpu_vec_isa,
    forward_outputs,
    frame_code,
    frame_self_name,
    frame_self_types,
    fx_graph_nodes,
    graph_outputs,
    ir_fx_nodes,
    kernel_ir,
    launch_grid,
    launch_metadata,
    mark_compiled_autograd,
    mark_gradients,
    mark_lifted,
    mark_results,
    mark_stack_values,
    model_tensors,
    output_nodes,
    raw_sched_node,
)

MIN_TORCH = Version("2.11")


def torch_version() -> Version:
    import torch

    return Version(torch.__version__.split("+")[0])


# -- patching ---------------------------------------------------------------------------------


def patch_attr(stack: contextlib.ExitStack, obj: Any, name: str, new: Any) -> Any:
    """Set ``obj.name = new`` until ``stack`` closes; returns the original. Missing -> AttributeError.

    On close the original comes back only if the attribute is still ours: a later patch on top of ours
    (another tool's, the user's) is left in place rather than silently undone."""
    original = getattr(obj, name)  # raises if missing: callers turn that into a diagnostic
    raw_original = obj.__dict__.get(name, original) if isinstance(obj, type) else original
    try:
        (new.__func__ if isinstance(new, staticmethod) else new)._inductor_lens_hook = True  # for leak checks
    except AttributeError:
        pass
    setattr(obj, name, new)

    def restore() -> None:
        current = obj.__dict__.get(name) if isinstance(obj, type) else getattr(obj, name, None)
        if current is new:
            setattr(obj, name, raw_original)

    stack.callback(restore)
    return original


class _Registry:
    """The process-wide hooks, shared by every active capture (reference-counted).

    The first capture to start installs the hooks; the last one to end removes them (each attribute only
    if it is still ours). A hook that fires delivers its record to the captures active on the thread that
    compiles (dynamo compiles on the calling thread), so nested captures on one thread all get it and a
    capture on another thread does not. A record on a thread that no capture entered (on a GPU, the lazily
    compiled backward runs in the autograd engine's device thread) goes to every active capture."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.stack: Optional[contextlib.ExitStack] = None
        self.active: dict[int, list["Hooks"]] = {}
        self.install_diagnostics: list[tuple[str, str, str]] = []
        self.caches_prior: dict[int, Any] = {}  # thread -> its cache flags before its first capture
        self.foreign: dict[int, list] = {}  # thread with no capture -> [compiles in progress, its flags]

    def sinks(self) -> list["Hooks"]:
        """The captures a record seen on this thread belongs to: those active on this thread; on a thread
        with none of its own, every active capture. torch compiles some graphs on threads of its own: on a
        GPU the lazily compiled backward runs in the autograd engine's device thread, which no capture
        entered, and its kernels belong to the capture whose code called ``.backward()``."""
        with self.lock:
            mine = self.active.get(threading.get_ident())
            if mine:
                return list(mine)
            return [h for hooks in self.active.values() for h in hooks]

    def any_active(self) -> bool:
        """Whether a capture is active, on any thread."""
        with self.lock:
            return any(self.active.values())

    def acquire(self, hooks: "Hooks") -> None:
        with self.lock:
            if self.stack is None:
                stack = contextlib.ExitStack()
                self.install_diagnostics = []
                try:
                    _install_all(stack, self.install_diagnostics)
                except BaseException:
                    stack.close()
                    raise
                self.stack = stack
            for d in self.install_diagnostics:
                hooks.raw.diag(*d)
            if hooks.thread not in self.active:
                self.caches_prior[hooks.thread] = _caches_off(hooks)
            self.active.setdefault(hooks.thread, []).append(hooks)

    def foreign_compile(self, starting: bool) -> None:
        """A compile starting (or ending) on a thread that no capture entered while captures are active: on a
        GPU the autograd engine's device thread compiles the lazy backward. torch's config is per thread, so
        that thread's caches are still on and an FX-graph cache hit would hide the backward's fusion: turn
        them off there for the compile (dynamo's compile callbacks bracket it), and back on after."""
        tid = threading.get_ident()
        with self.lock:
            if tid in self.active:
                return
            entry = self.foreign.get(tid)
            if starting and self.active:
                if entry is None:
                    any_hooks = next(h for hooks in self.active.values() for h in hooks)
                    self.foreign[tid] = [1, _caches_off(any_hooks)]
                else:
                    entry[0] += 1
            elif not starting and entry is not None:
                entry[0] -= 1
                if entry[0] <= 0:
                    del self.foreign[tid]
                    _caches_restore(entry[1])

    def release(self, hooks: "Hooks") -> None:
        with self.lock:
            mine = self.active.get(hooks.thread, [])
            if hooks in mine:
                mine.remove(hooks)
            if not mine and self.active.pop(hooks.thread, None) is not None:
                _caches_restore(self.caches_prior.pop(hooks.thread, None))
            if not self.active and self.stack is not None:
                stack, self.stack = self.stack, None
                stack.close()


_REGISTRY = _Registry()


# The caches whose hit skips the Scheduler (no fusion, no codegen to see): (config module, flag). Only these
# are turned off during a capture. Not ``force_disable_caches``: that also compiles every C++ kernel afresh in
# a new temporary folder that it never deletes (gcc for every kernel of every compile, gigabytes left in the
# cache folder), turns PGO off when the user set a job id (which changes what dynamo compiles), and writes
# itself into every Triton kernel's source. The C++/Triton binary caches stay on: they are keyed by the
# kernel's source, so a hit changes nothing that is recorded; the autotuning cache stays on too (on a hit,
# torch still hands the cached timings to the feedback hook that records the choices).
_CACHE_SWITCHES = (
    ("torch._inductor.config", "fx_graph_cache"),
    ("torch._inductor.config", "fx_graph_remote_cache"),
    ("torch._functorch.config", "enable_autograd_cache"),
    ("torch._functorch.config", "enable_remote_autograd_cache"),
)


def _caches_off(hooks: "Hooks") -> Any:
    """Turn off, on this thread, the caches whose hit would hide the compile (see ``_CACHE_SWITCHES``);
    returns the values before, for ``_caches_restore``. torch's config values are per thread/context
    (ContextVars), so this is done on each capturing thread, reference-counted per thread, and undone there."""
    import importlib

    prior: list[tuple[Any, str, Any]] = []
    for module_name, flag in _CACHE_SWITCHES:
        try:
            module = importlib.import_module(module_name)
            if not hasattr(module, flag):
                continue  # not in this torch version
            before = getattr(module, flag)
            if before is None and "remote" in flag and not _fbcode():
                continue  # unset outside Meta's build: off already (turned off anyway, torch asks is_fbcode no more)
            if before is not False:
                setattr(module, flag, False)
                prior.append((module, flag, before))
                if flag not in hooks.raw.caches_off:
                    hooks.raw.caches_off.append(flag)
        except Exception as e:
            hooks.raw.diag(
                "hook_missing",
                f"could not turn off {module_name}.{flag} ({type(e).__name__}: {e}): "
                "a cache hit would hide fusion and kernels",
            )
    return prior


def _fbcode() -> bool:
    """Whether torch runs in Meta's own build, where a remote cache left unset (None) may be on."""
    try:
        from torch._environment import is_fbcode
    except ImportError:  # not known on this torch: as if it were, the remote caches turned off
        return True
    return bool(is_fbcode())


def _caches_restore(prior: Any) -> None:
    for module, flag, before in reversed(prior or ()):
        if getattr(module, flag) is False:  # still ours
            setattr(module, flag, before)


#: The modules of Inductor whose import a plain run's first ``torch.compile()`` with the inductor backend pays for
#: (``lowering`` registers every lowering as it is imported), and which the capture's hooks import where they are not
#: yet (checked on torch 2.13 and 2.15: ``torch.compile(f)`` imports both, ``backend="eager"`` neither).
INDUCTOR_MODULES = ("torch._inductor.compile_fx", "torch._inductor.lowering")


def inductor_loaded(modules: Any = None) -> bool:
    """Whether Inductor is imported (every module of :data:`INDUCTOR_MODULES` in ``modules``, ``sys.modules``)."""
    modules = sys.modules if modules is None else modules
    return all(m in modules for m in INDUCTOR_MODULES)


def capture_start(began_us: float, ended_us: float, loaded_before: bool, loaded_after: bool) -> dict:
    """What a capture's start did (``Raw.start``, ``CaptureStart`` in the report): how long it took, from ``began_us``
    to ``ended_us``, and whether it imported Inductor (not loaded before it, loaded after: the hooks of a first capture
    import it; a capture started after the user's code, an earlier ``torch.compile()`` or capture had, does not).

    >>> capture_start(0.0, 3_840_000.0, False, True)
    {'duration_us': 3840000.0, 'imported_inductor': True}
    >>> capture_start(0.0, 2_000.0, True, True)["imported_inductor"]
    False
    """
    return {"duration_us": round(ended_us - began_us, 1), "imported_inductor": not loaded_before and loaded_after}


def _each(what: str, fn: Callable, *args: Any) -> None:
    """Call ``fn(hooks, *args)`` for every capture active on this thread, each one guarded."""
    for hooks in _REGISTRY.sinks():
        hooks._guarded(what, fn, hooks, *args)


# -- the hooks --------------------------------------------------------------------------------


class Hooks:
    """One capture's view of the process-wide hooks: what they see on this capture's thread while it is
    active is written into ``raw``. ``start()`` joins the shared hooks (installing them if this is the
    first active capture), ``stop()`` leaves them (removing them if this was the last)."""

    def __init__(
        self,
        raw: Raw,
        reset_dynamo: bool = True,
        on_event: Optional[Callable[[str], None]] = None,
        ir: bool = False,
    ):
        self.raw = raw
        self.ir = ir
        self.on_event = on_event
        self._key_attr = f"_inductor_lens_key_{id(self)}"
        self.reset_dynamo = reset_dynamo
        self._lock = threading.RLock()
        self._next_key = 0
        self._prefixes = non_user_prefixes()
        self._torch_dir = torch_dir()
        self._seen_dynamo_gms: set[tuple] = set()  # (id of a graph module, compile id, attempt)
        self._dynamo_attempts: dict[str, int] = {}  # compile id -> the attempt its dynamo graph is of
        self._resets_seen = 0  # torch._dynamo.reset() calls while this capture was active (not its own, made before)
        self._dynamo_resets: dict[str, int] = {}  # compile id -> _resets_seen when its dynamo graph was kept
        # the user's parameters and buffers seen as graph inputs: id -> (a weak reference, the name), never a strong one
        self._model_tensors: dict[int, tuple[Any, str]] = {}
        self._modules: dict[int, Any] = {}
        self._autotuned: set[tuple] = set()  # (op, precision, input layouts) torch benchmarked in this capture
        # a frozen graph module -> where its constants come from (constants.fold_origin), until it is lowered
        self._constant_origins: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # a weight a C++ GEMM template packed: id -> (a weak reference to it, the constant it was packed from)
        self._packed_from: dict[int, tuple[Any, str]] = {}
        self.thread = threading.get_ident()

    # guard: nothing raised in a hook reaches torch
    def _guarded(self, what: str, fn: Callable, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as e:  # pragma: no cover - exercised by fault-injection tests
            self.raw.diag(
                "hook_failed",
                f"{what} failed ({type(e).__name__}: {e}); that part of the report is missing",
                "".join(traceback.format_exception(type(e), e, e.__traceback__))[-2000:],
            )

    def install(self, stack: contextlib.ExitStack) -> None:
        """Join the shared hooks until ``stack`` closes."""
        began, loaded = now_us(), inductor_loaded()  # what the start does before the clock begins (CaptureStart)
        version = torch_version()
        if version < MIN_TORCH:
            self.raw.diag(
                "torch_too_old",
                f"torch {version} is older than {MIN_TORCH}, the oldest inductor_lens "
                "supports: the capture may be incomplete",
            )
        if os.environ.get("TORCHINDUCTOR_FX_COMPILE_MODE", "").lower().startswith("subprocess"):
            self.raw.diag(
                "subprocess_mode",
                "TORCHINDUCTOR_FX_COMPILE_MODE=subprocess runs Inductor in another "
                "process, where no in-process hook fires: unset it to see fusion and kernels",
            )
        outer = _REGISTRY.any_active()
        if not outer:  # what dynamo holds compiled now, which the reset makes it forget (or which stays, without one)
            before: list = []
            self._guarded("reading what dynamo had compiled", lambda: before.extend(_compiled_before(self._torch_dir)))
            self.raw.dynamo_before = {"state": "reset" if self.reset_dynamo else "kept", "functions": before}
        if self.reset_dynamo:
            if outer:  # a reset now would make every function the enclosing capture compiled compile again in it
                self.raw.diag(
                    "reset_skipped",
                    "dynamo was not reset at this capture's start: another capture was active, and a reset would "
                    "have made what that one compiled compile again under it; functions compiled before this "
                    "capture are not recorded here (call them after a torch._dynamo.reset() of your own, or "
                    "capture them in the enclosing capture)",
                )
            else:
                _reset_dynamo()
        _REGISTRY.acquire(self)
        stack.callback(_REGISTRY.release, self)
        stack.callback(self._guarded, "reading Triton launch metadata", self._collect_runtime)
        # the capture's clock, which the report's times count from ("0.02 s into the capture"), starts here, where
        # the user's code starts: not before the hooks were joined (a first capture imports torch's compiler for
        # them, 3-5 s that a script's "torch.compile ran at 4.9 s" counted as its own). A progress display counts
        # from it too (it counted from its own start, before torch was imported: "[4.3s] tracing" beside it)
        self.raw.t0_us = now_us()
        self.raw.start = capture_start(began, self.raw.t0_us, loaded, inductor_loaded())
        self._emit("clock: 0.000000")

    def _emit(self, message: str) -> None:
        if self.on_event is not None:
            try:
                self.on_event(message)
            except Exception as e:
                self.on_event = None
                self.raw.diag("hook_failed", f"the progress callback failed ({type(e).__name__}: {e}); progress is off")

    def _graph_record(self) -> Optional[RawGraph]:
        from torch._inductor.graph import GraphLowering
        from torch._inductor.virtualized import V

        g = V.graph
        if not isinstance(g, GraphLowering):
            return None
        key = getattr(g, self._key_attr, None)
        if key is not None:
            for rec in reversed(self.raw.graphs):
                if rec.key == key:
                    if not rec.outputs_read:
                        self._read_outputs(rec, g)
                    return rec
        else:  # (a graph tagged but not recorded yet: the parent of a subgraph recorded first keeps its key)
            key = self._tag(g)
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
        kind = (
            "backward"
            # compiled autograd's graph (id "!A/F/N") is the whole backward, which AOT compiles as inference
            if getattr(g, "is_backward", False) or str(cid).startswith("!")
            else ("inference" if getattr(g, "is_inference", False) else "forward")
        )
        rec = RawGraph(
            key=key,
            compile_id=str(cid) if cid is not None else "?",
            graph_kind=kind,
            start_us=now_us(),
            aot=bool(getattr(g, "aot_mode", False)),
            loaded=False,
            resets=self._resets_seen,
        )
        self._guarded("reading the CUDA-graph mode", lambda: setattr(rec, "cudagraphs", cudagraphs.mode_on()))
        self._guarded("reading the autotune settings", lambda: setattr(rec, "autotune_mode", _autotune_mode()))
        self._guarded("reading the custom graph passes", lambda: setattr(rec, "custom_passes", _custom_passes()))
        parent = getattr(g, "parent", None)  # SubgraphLowering: a torch.cond branch, lowered inside its parent
        if isinstance(parent, GraphLowering):
            rec.subgraph = str(getattr(g, "name", "") or "subgraph")
            rec.parent_key = getattr(parent, self._key_attr, None)
            if rec.parent_key is None:
                rec.parent_key = self._tag(parent)
        try:
            rec.post_grad_nodes = fx_graph_nodes(g.module)
        except Exception as e:
            self.raw.diag(
                "hook_failed", f"the post-grad graph of {rec.compile_id} could not be read ({type(e).__name__}: {e})"
            )
        rec.graph_inputs = [str(n) for n in getattr(g, "graph_input_names", None) or list(g.graph_inputs)]
        with contextlib.suppress(TypeError):  # (a module that takes no weak reference was never recorded)
            rec.constant_origins.update(self._constant_origins.get(g.module) or {})

        self._read_outputs(rec, g)
        device = getattr(g, "device_types", None)
        if device:
            rec.device = ",".join(sorted(d for d in device if d != "meta"))
            self.raw.device = rec.device or self.raw.device
        self.raw.graphs.append(rec)
        return rec

    def _tag(self, g: Any) -> int:
        """A new key for graph ``g``, set on it (an attribute of ours on the GraphLowering)."""
        with self._lock:
            key = self._next_key
            self._next_key += 1
        self._guarded("tagging a graph", setattr, g, self._key_attr, key)
        return key

    def _read_outputs(self, rec: RawGraph, g: Any) -> None:
        """The graph's output buffers, once lowering has made them: a hook can see a graph earlier (autotuning
        during lowering, under freezing or max-autotune), and then the next hook reads them."""
        if not hasattr(g, "graph_outputs"):
            return

        forward = rec.graph_kind == "forward"

        def outputs() -> None:
            names: list = []
            for o in g.graph_outputs:
                try:
                    names.append(o.get_name())
                except (AttributeError, NotImplementedError):
                    names.append(None)  # a constant output (NoneAsConstantBuffer...) names no buffer
            rec.graph_outputs[:] = [n for n in names if n is not None]
            rec.output_nodes.clear()
            rec.output_nodes.update(output_nodes(g.module, names))
            rec.outputs[:] = graph_outputs(g.module, list(g.graph_outputs), set(rec.graph_inputs), forward)
            if rec.graph_kind == "forward":
                rec.returned_outputs[:], rec.saved_outputs[:] = forward_outputs(g.module, names)

        rec.outputs_read = True
        self._guarded(f"reading the outputs of graph {rec.compile_id}", outputs)

    def _read_ir(self, rec: RawGraph, name: str, tuner: Any) -> None:
        """``ir=True``: the IR stages and resources of one Triton kernel (``torchread.kernel_ir``); a miss is a
        diagnostic, never an error."""
        ir, why = kernel_ir(tuner)
        if ir is not None:
            rec.runtime.setdefault(name, {})["ir"] = ir
        if why:
            self.raw.diag("ir_missing", f"{rec.compile_id} {rec.graph_kind}: {name}: {why}")

    def _collect_runtime(self) -> None:
        """After the block ran: the launch config each Triton kernel's autotuner picked."""
        for rec in self.raw.graphs:
            mod = self._modules.get(rec.key)
            if mod is None:
                continue
            for rk in rec.kernels:
                tuner = getattr(mod, rk.name, None)
                meta = launch_metadata(tuner)
                if meta:
                    self._guarded(
                        f"reading the launch grid of {rk.name}", lambda: meta.update(launch_grid(tuner) or {})
                    )
                    rec.runtime[rk.name] = meta
                if self.ir and meta is not None:
                    self._guarded(f"reading the IR of {rk.name}", self._read_ir, rec, rk.name, tuner)
        self._modules.clear()


def _autotune_mode() -> dict:
    """Inductor's autotuning settings for the graph compiling now (``mode="max-autotune"`` patches them for its
    compile): plain values read from ``torch._inductor.config``, nothing called."""
    import torch._inductor.config as config

    return {
        "max_autotune": bool(getattr(config, "max_autotune", False) or getattr(config, "max_autotune_gemm", False)),
        "gemm_backends": str(getattr(config, "max_autotune_gemm_backends", "") or ""),
        "freezing": bool(getattr(config, "freezing", False)),
    }


#: Inductor's config settings that take a pass of the user's (``CustomGraphPass``, a callable, or a list of them)
CUSTOM_PASS_SETTINGS = (
    "pre_grad_custom_pass",
    "joint_custom_pre_pass",
    "joint_custom_post_pass",
    "post_grad_custom_pre_pass",
    "post_grad_custom_post_pass",
)


def _custom_passes() -> list[dict]:
    """The user's graph passes set in ``torch._inductor.config`` for the graph compiling now: ``[{setting, name}]``,
    ``name`` the pass's class (or function) as ``module.QualName``; plain values read, nothing called."""
    import torch._inductor.config as config

    found = []
    for setting in CUSTOM_PASS_SETTINGS:
        value = getattr(config, setting, None)
        for p in value if isinstance(value, (list, tuple)) else [value] if value is not None else []:
            what = p if isinstance(p, (types.FunctionType, functools.partial)) else type(p)
            what = getattr(what, "func", what)  # a functools.partial: the function it calls
            name = getattr(what, "__qualname__", None) or type(p).__name__
            module = getattr(what, "__module__", "") or ""
            found.append({"setting": setting, "name": f"{module}.{name}" if module else name})
    return found


def _compiled_before(torch_root: str) -> list[tuple[str, str, int]]:
    """The functions dynamo holds compiled code for (a cache entry on their code object), ``(function, file, first
    line)``, in the order dynamo first compiled them: the code after a graph break (dynamo's resume function) as
    the function it resumes; torch's own frames (an optimizer's ``step`` wrapper) after the user's."""
    from torch._dynamo import convert_frame
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    from ..report.rules import resumed

    seen: dict[tuple[str, str], int] = {}
    for ref in list(convert_frame.input_codes.seen):
        code = ref()
        if code is None or not _debug_get_cache_entry_list(code):
            continue
        r = resumed(code.co_name)
        key = (r[0] if r else code.co_name, code.co_filename)
        line = code.co_firstlineno
        seen[key] = min(seen.get(key, line), line)
    ours = [(n, f, ln) for (n, f), ln in seen.items() if not f.startswith(torch_root)]
    return ours + [(n, f, ln) for (n, f), ln in seen.items() if f.startswith(torch_root)]


def _reset_dynamo() -> None:
    """``torch._dynamo.reset()``: compiled frames from before the capture would hide the compile, and
    compile ids restart at 0/0. Reset also clears dynamo's compile callbacks, which belong to the user
    (or to the shared hooks of an enclosing capture): they are put back."""
    import torch

    try:
        from torch._dynamo.callback import callback_handler

        saved = (list(callback_handler.start_callbacks), list(callback_handler.end_callbacks))
    except Exception:
        callback_handler, saved = None, ([], [])
    torch._dynamo.reset()
    if callback_handler is not None:
        for current, before in zip((callback_handler.start_callbacks, callback_handler.end_callbacks), saved):
            current.extend(cb for cb in before if cb not in current)


def _install_all(stack: contextlib.ExitStack, diagnostics: list) -> None:
    """Install every process-wide hook into ``stack``; one that cannot be installed is a diagnostic."""
    version = torch_version()
    # (caches are turned off per thread, by _Registry.acquire: torch's config values are context-local)
    for name, installer in (
        ("structured trace", _install_trace),
        ("scheduler fusion hooks", _install_fusion_hooks),
        ("lowering and fusion path hooks", _install_stage_hooks),
        ("kernel provenance hook", _install_kernel_hooks),
        ("fusion decision hook", _install_fusion_decisions),
        ("output code hook", _install_output_code),
        ("dynamo graph hook", _install_compile_fx),
        ("decomposition results hook", _install_decomposition_results),
        ("AOTInductor export hook", _install_aot_export),
        ("compile callbacks", _install_callbacks),
        ("torch.compile hook", _install_torch_compile),
        ("skipped-frame hook", _install_skip_hook),
        ("autotuning hook", _install_autotune),
        ("compiled module hook", _install_module_hook),
        ("graph constant hooks", _install_constant_origins),
        ("CUDA-graph hooks", lambda stack: cudagraphs.install(stack, _each, patch_attr)),
        ("compiled-module hook watch", _install_module_hook_watch),
    ):
        try:
            installer(stack)
        except Exception as e:
            diagnostics.append(
                (
                    "hook_missing",
                    f"could not install the {name} on torch {version} "
                    f"({type(e).__name__}: {e}); that part of the report is missing",
                    "",
                )
            )


# structured trace ----------------------------------------------------------------------------


def _trace_record(hooks: Hooks, md: dict, payload: Any) -> None:
    if hooks._resets_seen:  # a copy: the record is torch's, and other handlers (TORCH_TRACE) write it
        md = {**md, RESETS: hooks._resets_seen}
    hooks.raw.trace.append((md, payload))
    if "chromium_event" in md and hooks.on_event is not None:
        ev = loads_payload(payload)
        if isinstance(ev, dict) and ev.get("ph") == "B":
            hooks._emit(f"phase: {ev.get('name')}")


def invisible(fn: Callable) -> Callable:
    """``fn``, run with dynamo's frame hook off: nothing it calls is ever offered to dynamo.

    The lens's callbacks can run while dynamo's frame-evaluation hook is on (compiled autograd compiles its
    graph inside ``.backward()``, and the structured trace is emitted there); every Python frame started then
    is examined by dynamo, and frames it does not skip are traced. Turning the hook off for the duration of a
    callback (what ``torch.compiler.disable`` does, without its wrapper frames) keeps the lens out of sight.
    """
    try:
        from torch._C._dynamo.eval_frame import set_eval_frame
    except ImportError:  # no such switch on this torch: the callback runs as it is
        return fn

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        prior = set_eval_frame(None)
        try:
            return fn(*args, **kwargs)
        finally:
            set_eval_frame(prior)

    _skip_code(run.__code__)
    return run


# the code of invisible's wrapper, which every wrapper shares (a constant of invisible's own code)
_INVISIBLE_CODE = next(c for c in invisible.__code__.co_consts if getattr(c, "co_name", "") == "run")


def _outside_invisible(frame: Any) -> Any:
    """``frame``, or the first frame below it that is not :func:`invisible`'s wrapper (whose caller is the one a
    callback's stack starts from; on a torch without the switch there is no wrapper)."""
    while frame is not None and frame.f_code is _INVISIBLE_CODE:
        frame = frame.f_back
    return frame


def _skip_code(code: Any) -> None:
    """Tell dynamo never to look at frames of ``code`` (the wrapper above starts while the hook is still on)."""
    try:
        from torch._dynamo.eval_frame import skip_code
    except ImportError:
        return
    with contextlib.suppress(Exception):
        skip_code(code)


def _take_record(md: Any, payload: Any) -> None:
    sinks = _REGISTRY.sinks()
    if not sinks:
        return
    try:
        if not isinstance(md, dict) or not wanted(md):  # the artifact table (artifacts.py) lists what we read
            return
    except Exception as e:  # never let a log record break the compile
        for hooks in sinks:
            hooks.raw.diag("hook_failed", f"a structured-trace record could not be read ({type(e).__name__}: {e})")
        return
    _each("reading a structured-trace record", _trace_record, md, payload)


class _TraceHandler(logging.Handler):
    """Makes torch emit its structured trace (it does only while ``torch.__trace`` has a handler). The records
    reach the lens through ``_trace_debug``; this handler sees only those that take another path."""

    def emit(self, record: logging.LogRecord) -> None:
        _take_record(getattr(record, "metadata", None), getattr(record, "payload", None))


def _install_trace(stack: contextlib.ExitStack) -> None:
    logger = logging.getLogger("torch.__trace")
    handler = _TraceHandler(level=logging.DEBUG)
    handler.handle = invisible(handler.handle)  # logging calls it in sight of dynamo: filter and emit are hidden
    old_propagate = logger.propagate
    had_debug = "debug" in vars(logger)
    old_debug = logger.debug
    take = invisible(_take_record)

    def trace_debug(msg: Any, *args: Any, **kwargs: Any) -> None:
        """``trace_log.debug`` as torch's ``trace_structured`` calls it: the record comes straight to the lens
        (no logging frames, no LogRecord), out of dynamo's sight. Where another handler listens (the user's
        TORCH_TRACE), logging runs as it does without the lens, in the same sight, the lens's handler among the
        others (its work hidden). No generator here: its frame would be offered to dynamo."""
        for h in logger.handlers:
            if h is not handler:
                kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 1
                old_debug(msg, *args, **kwargs)  # every handler, ours included, as logging does it
                return
        extra = kwargs.get("extra") or {}
        take(extra.get("metadata"), extra.get("payload"))

    _skip_code(trace_debug.__code__)
    logger.addHandler(handler)
    logger.propagate = False  # the records are ours: they must not reach the user's root handlers
    logger.debug = trace_debug

    def restore() -> None:
        logger.removeHandler(handler)
        if logger.propagate is False:
            logger.propagate = old_propagate
        if had_debug:
            logger.debug = old_debug
        else:
            vars(logger).pop("debug", None)

    stack.callback(restore)
    _hide_trace_structured(stack, logger, handler)


def _hide_trace_structured(stack: contextlib.ExitStack, logger: logging.Logger, ours: logging.Handler) -> None:
    """Run torch's ``trace_structured`` with dynamo's frame hook off while the lens listens (:func:`invisible`).

    With a handler on ``torch.__trace`` it does work it skips otherwise: it calls each record's metadata function
    (``dataclasses.asdict``), asks ``torch.distributed`` for the rank, encodes the payload's JSON. A backward that
    compiles lazily inside ``.backward()`` in the eager part of a compiled frame (after a graph break), or compiled
    autograd's graph, does so while dynamo's hook is on: every frame of that work was offered to dynamo, which
    counted it (``counters["frames"]``: 61/66 against 56/57) and tried to trace JSON's generators. Modules bind the
    function by name (``from torch._logging import trace_structured``): each torch module's binding is replaced,
    and, when the capture ends, each binding to the wrapper, those of modules imported meanwhile included. Where
    ``torch.__trace`` has another handler (the user's TORCH_TRACE; torch's own ``LazyTraceHandler`` with no folder,
    until it takes itself off at its first record), torch does that work anyway: it is left in sight."""
    try:
        import torch._logging._internal as internal
    except ImportError:
        return
    original = getattr(internal, "trace_structured", None)
    if not callable(original):
        return
    unseen = invisible(original)
    if unseen is original:  # no switch on this torch
        return

    @functools.wraps(original)
    def hidden(*args: Any, **kwargs: Any) -> Any:
        for h in logger.handlers:  # a loop, not a generator: its frame would be offered to dynamo
            if h is not ours:  # torch does the work anyway (even for its own LazyTraceHandler's first record)
                return original(*args, **kwargs)
        return unseen(*args, **kwargs)

    _skip_code(hidden.__code__)
    hidden._inductor_lens_hook = True  # type: ignore[attr-defined]  # for leak checks, as patch_attr marks its own

    def rebind(old: Any, new: Any) -> None:
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith("torch"):
                continue
            space = getattr(module, "__dict__", None)
            for attr, value in list(space.items()) if isinstance(space, dict) else ():
                if value is old:
                    space[attr] = new

    rebind(original, hidden)
    stack.callback(rebind, hidden, original)


# scheduler -----------------------------------------------------------------------------------
def _on_nodes(hooks: Hooks, which: str, nodes: Any) -> None:
    rec = hooks._graph_record()
    if rec is None:
        return
    snodes = [raw_sched_node(n, costs=which == "post") for n in nodes]
    if which == "pre":
        rec.pre_fusion = snodes
        hooks._guarded(f"reading the lowerings of graph {rec.compile_id}", _on_lowered, hooks, rec)
    else:
        rec.post_fusion = snodes
        hooks._guarded(f"reading the buffers of graph {rec.compile_id}", _on_buffers, rec, nodes)


#: The attribute of a GraphLowering where :func:`_install_stage_hooks` keeps the stack at its lowering's start.
_LOWERING_STACK = "_inductor_lens_lowering_stack"


def _on_lowered(hooks: Hooks, rec: RawGraph) -> None:
    """Once the graph is lowered (the scheduler is given its nodes): the lowering function torch ran for each post-grad
    op (``lowerings.lowering_chains``, on its node's dict as ``"lowered_by"``), and the stack at the lowering's start."""
    from torch._inductor.virtualized import V

    g = V.graph
    chains = lowering_chains(g.module)
    for n in rec.post_grad_nodes:
        if n.get("name") in chains:
            n["lowered_by"] = chains[n["name"]]
    frames = getattr(g, _LOWERING_STACK, None)
    if frames and not rec.lowering_stack:
        rec.lowering_stack = trim_to_user_call(frames, hooks._torch_dir)


def _on_buffers(rec: RawGraph, nodes: Any) -> None:
    from .memory import read_buffers

    rec.memory = read_buffers(nodes)


def _install_fusion_hooks(stack: contextlib.ExitStack) -> None:
    import torch._inductor.debug as debug

    def wrap(original: Callable, which: str) -> Callable:
        @functools.wraps(original)
        def hooked(nodes, *args, **kwargs):
            _each(f"reading the {which}-fusion scheduler nodes", _on_nodes, which, nodes)
            return original(nodes, *args, **kwargs)

        return hooked

    patch_attr(stack, debug, "log_ir_pre_fusion", wrap(debug.log_ir_pre_fusion, "pre"))
    patch_attr(stack, debug, "log_ir_post_fusion", wrap(debug.log_ir_post_fusion, "post"))


def _install_stage_hooks(stack: contextlib.ExitStack) -> None:
    """The path to each stage of a graph's compile, once per graph: the stack on entering its first
    ``GraphLowering.call_function`` (kept on the graph until the scheduler starts: a graph is recorded no earlier) and
    its first ``Scheduler.fuse_nodes``. One stack each per graph (about 0.1 ms); every other call only checks a flag."""
    from torch._inductor.graph import GraphLowering
    from torch._inductor.scheduler import Scheduler

    call_function = GraphLowering.call_function
    lowering_entry = entry_frame(call_function)

    def keep_lowering_stack(graph: Any, caller: Any) -> None:
        try:
            setattr(graph, _LOWERING_STACK, frames_of(caller) + lowering_entry)
        except Exception:  # never in the user's way: the report just lacks this path
            pass

    keep_unseen = invisible(keep_lowering_stack)

    @functools.wraps(call_function)
    def hooked_call_function(self, *args, **kwargs):
        if _LOWERING_STACK not in vars(self) and _REGISTRY.sinks():
            keep_unseen(self, sys._getframe(1))
        return call_function(self, *args, **kwargs)

    fuse_nodes = Scheduler.fuse_nodes
    fusion_entry = entry_frame(fuse_nodes)

    def on_fusion(hooks: Hooks, frames: list) -> None:
        rec = hooks._graph_record()
        if rec is not None and not rec.fusion_stack:
            rec.fusion_stack = trim_to_user_call(frames, hooks._torch_dir)

    def read_fusion_stack(caller: Any) -> None:
        frames = frames_of(caller) + fusion_entry
        _each("reading the path to fusion", on_fusion, frames)

    read_unseen = invisible(read_fusion_stack)

    @functools.wraps(fuse_nodes)
    def hooked_fuse_nodes(self, *args, **kwargs):
        if _LOWERING_STACK not in vars(self) and _REGISTRY.sinks():  # (the scheduler's first fusion: marked)
            with contextlib.suppress(Exception):  # never in the user's way: the report just lacks this path
                setattr(self, _LOWERING_STACK, True)
                read_unseen(sys._getframe(1))
        return fuse_nodes(self, *args, **kwargs)

    for hooked in (hooked_call_function, hooked_fuse_nodes):
        _skip_code(hooked.__code__)
    patch_attr(stack, GraphLowering, "call_function", hooked_call_function)
    patch_attr(stack, Scheduler, "fuse_nodes", hooked_fuse_nodes)


def _on_kernel(hooks: Hooks, node_schedule: Any, kernel_name: str, is_extern: bool) -> None:
    rec = hooks._graph_record()
    if rec is None or not kernel_name:
        return
    frames = frames_of(sys._getframe(4))
    frames = trim_hook_callers(trim_to_user_call(frames, hooks._torch_dir))
    if is_extern:
        _extern_kernel(hooks, rec, node_schedule, kernel_name, frames)
        return
    sched, fx, traces = [], [], []
    for snode in node_schedule:
        if not hasattr(snode, "get_name") or getattr(snode, "node", None) is None:
            continue  # EnableReduction / DisableReduction markers
        sched.append(snode.get_name())
        for n in ir_fx_nodes(snode.node, False):
            if n not in fx:
                fx.append(n)
        for t in _attempt(hooks, "reading a kernel's stack traces", snode.node.get_stack_traces) or []:
            if t not in traces:
                traces.append(t)
    rec.kernels.append(
        RawKernel(
            name=kernel_name,
            is_extern=False,
            scheduler_nodes=sched,
            fx_nodes=fx,
            compiler_stack=frames,
            stack_traces=traces,
        )
    )
    _said(hooks, rec)


def _said(hooks: Hooks, rec: RawGraph) -> None:
    """The ``kernel:`` event of the kernel just recorded, by its name in the report (``RawKernel.report_name``:
    ``extern_kernels.addmm[buf0]``), so that what the progress lines count is what the report counts."""
    cid = rec.compile_id
    if cid == "?" and aot_lowered(rec):  # AOTInductor's: the report's aot/N
        graphs = hooks.raw.graphs
        before = graphs[: next((i for i, g in enumerate(graphs) if g is rec), len(graphs))]
        cid = f"aot/{sum(1 for g in before if aot_lowered(g))}"
    hooks._emit(f"kernel: {rec.kernels[-1].report_name} ({cid} {rec.graph_kind})")


def _extern_kernel(hooks: Hooks, rec: Any, ir_node: Any, kernel_name: str, frames: list) -> None:
    """Record the call Inductor writes for the extern (library, fallback) IR node ``ir_node``."""
    buf = _attempt(hooks, "naming an extern kernel's buffer", ir_node.get_name)
    sched = []

    def defining_op() -> None:
        from torch._inductor.virtualized import V

        sched.append(V.graph.scheduler.name_to_buf[buf].defining_op.get_name())

    if buf is not None:
        _attempt(hooks, "finding an extern kernel's scheduler node", defining_op)
    traces = list(getattr(ir_node, "get_stack_traces", lambda: [])() or [])
    rec.kernels.append(
        RawKernel(
            name=kernel_name,
            is_extern=True,
            scheduler_nodes=sched,
            fx_nodes=ir_fx_nodes(ir_node, True),
            buffer=buf,
            compiler_stack=frames,
            stack_traces=traces,
        )
    )
    _said(hooks, rec)


#: The IR classes of extern nodes that call an op (a library kernel, a fallback to ATen): a call of one that torch does
#: not report to its kernel hook is recorded by :func:`_on_extern_call`; the others (``Conditional``, ``WhileLoop``,
#: ``InvokeSubgraph``, ``DynamicScalar``, ``AssertScalar``, ``MultiOutput``) call no kernel of their own.
_OP_CALL_IR = (
    "FallbackKernel",
    "ExternKernelOut",
    "ScatterFallback",
    "IndexPutFallback",
    "InplaceBernoulliFallback",
    "InplaceCopyFallback",
    "MutatingFirstArgExternKernel",
)


def _on_extern_call(hooks: Hooks, snode: Any, before: int, calls: tuple) -> None:
    """After Inductor wrote an extern scheduler node's call: a call that torch did not report through its
    provenance hook (``ScatterFallback``: ``aten.scatter_reduce_.two(buf23, ...)``, which writes its input and
    names no buffer of its own) is recorded as the others are, under the name its call has. Nodes that call
    nothing (``MultiOutput``'s ``buf4 = buf3[0]``, ``AssertScalar``) have no kernel name and stay glue."""
    rec = hooks._graph_record()
    node = getattr(snode, "node", None)
    if rec is None or node is None:
        return
    if not isinstance(node, calls):
        return  # control flow (its branches' kernels are its own), a scalar, an assertion, a subgraph
    name = node.get_name()
    if any(k.is_extern and k.buffer == name for k in rec.kernels[before:]):
        return  # torch reported it (ExternKernel.codegen_comment)
    kernel_name = node.try_get_kernel_name() if hasattr(node, "try_get_kernel_name") else None
    if not kernel_name:
        return
    frames = trim_hook_callers(trim_to_user_call(frames_of(sys._getframe(3)), hooks._torch_dir))
    _extern_kernel(hooks, rec, node, kernel_name, frames)


def _attempt(hooks: Hooks, what: str, fn: Callable, *args: Any) -> Any:
    """``fn(*args)``, or None with a ``hook_failed`` diagnostic if it raises."""
    out: list = []
    hooks._guarded(what, lambda: out.append(fn(*args)))
    return out[0] if out else None


def _install_kernel_hooks(stack: contextlib.ExitStack) -> None:
    import importlib

    import torch._inductor.debug as debug

    # import the codegen modules first: one imported while debug's attribute is patched would bind
    # our wrapper by name and keep it after the capture
    modules = []
    for modname in _CODEGEN_MODULES:
        try:
            modules.append(importlib.import_module(modname))
        except ImportError:
            continue  # e.g. no triton on this machine: that backend cannot run either
    original = debug.set_kernel_post_grad_provenance_tracing

    @functools.wraps(original)
    def hooked(node_schedule, kernel_name, is_extern=False, *args, **kwargs):
        _each(f"linking kernel {kernel_name} to its nodes", _on_kernel, node_schedule, kernel_name, is_extern)
        return original(node_schedule, kernel_name, is_extern, *args, **kwargs)

    patch_attr(stack, debug, "set_kernel_post_grad_provenance_tracing", hooked)
    from torch._inductor import ir, scheduler

    extern_call = getattr(scheduler.Scheduler, "codegen_extern_call", None)
    if extern_call is None:
        return  # a torch without it: the calls torch reports are all there is
    calls = tuple(c for c in (getattr(ir, n, None) for n in _OP_CALL_IR) if isinstance(c, type))

    @functools.wraps(extern_call)
    def hooked_extern_call(self, scheduler_node, *args, **kwargs):
        counts: dict = {}

        def count(h: Hooks) -> None:
            rec = h._graph_record()
            if rec is not None:
                counts[id(h)] = len(rec.kernels)

        for h in _REGISTRY.sinks():
            h._guarded("counting kernels", count, h)
        out = extern_call(self, scheduler_node, *args, **kwargs)
        for h in _REGISTRY.sinks():
            if id(h) in counts:
                h._guarded("recording an extern call", _on_extern_call, h, scheduler_node, counts[id(h)], calls)
        return out

    patch_attr(stack, scheduler.Scheduler, "codegen_extern_call", hooked_extern_call)
    # codegen modules import it by name: patch each module that holds a reference
    for mod in modules:
        if getattr(mod, "set_kernel_post_grad_provenance_tracing", None) is original:
            patch_attr(stack, mod, "set_kernel_post_grad_provenance_tracing", hooked)


def _on_refusal(hooks: Hooks, node: Any, reason: str, args: tuple) -> None:
    rec = hooks._graph_record()
    if rec is not None:
        text = reason % args if args else reason
        rec.fusion_refusals.append((node.name1, node.name2, str(text)))


def _install_fusion_decisions(stack: contextlib.ExitStack) -> None:
    """Refused fusions. Inductor states each one as ``WhyNoFuse(node1, node2)(reason, *args)``: we wrap that
    call rather than turn on the ``fusion`` debug log, whose other messages format every candidate node
    (measured: about 3% of a 12-layer GPT-2 compile)."""
    from torch._inductor import scheduler

    why = scheduler.WhyNoFuse
    original = why.__call__

    @functools.wraps(original)
    def __call__(self, reason, *args):
        _each("reading a fusion decision", _on_refusal, self, reason, args)
        return original(self, reason, *args)

    patch_attr(stack, why, "__call__", __call__)


def _install_output_code(stack: contextlib.ExitStack) -> None:
    from torch._inductor.graph import GraphLowering

    previous = GraphLowering.save_output_code

    def keep(hooks: Hooks, code: str) -> None:
        rec = hooks._graph_record()
        if rec is not None:
            rec.output_code = code
            # still inside the compile, under its config (``cpp.simdlen``): the ISA its C++ kernels were written for
            hooks._guarded("reading the CPU's vector ISA", lambda: setattr(rec, "cpu_isa", cpu_vec_isa(code)))

    def save_output_code(code: str) -> None:
        _each("keeping the output code", keep, code)
        if previous is not None:
            previous(code)

    patch_attr(stack, GraphLowering, "save_output_code", staticmethod(save_output_code))


def _install_compile_fx(stack: contextlib.ExitStack) -> None:
    import torch._inductor.compile_fx as cfx

    original = cfx.compile_fx

    def keep(hooks: Hooks, model: Any, example_inputs: Any) -> None:
        import weakref

        from torch._guards import CompileContext

        if not hasattr(model, "graph"):
            return
        cid = str(CompileContext.current_compile_id())
        # the first graph of each attempt at a compile id: a restart (a float input that AOT's tensorify pass
        # specialized: ``TensorifyScalarRestartAnalysis``) traces the frame again, and the graph compiled is the
        # last attempt's (the first still had the float's placeholder); compile_fx's inner calls are the same attempt
        trace_id = CompileContext.current_trace_id()
        attempt = getattr(trace_id, "attempt", 0) or 0
        seen = (id(model), cid, attempt)  # an id alone may be a freed graph's, taken again by a later one
        if seen in hooks._seen_dynamo_gms:
            return
        hooks._seen_dynamo_gms.add(seen)
        restart = cid in hooks.raw.dynamo_graphs and attempt > hooks._dynamo_attempts.get(cid, 0)
        # the same compile id after a torch._dynamo.reset() (ids start again at 0/0): another compile's graph
        again = cid in hooks.raw.dynamo_graphs and hooks._dynamo_resets.get(cid) != hooks._resets_seen
        if cid not in hooks.raw.dynamo_graphs or restart or again:
            hooks._dynamo_attempts[cid] = attempt
            hooks._dynamo_resets[cid] = hooks._resets_seen
            nodes = hooks.raw.dynamo_graphs[cid] = fx_graph_nodes(model, variables=True)
            log = hooks.raw.dynamo_graph_log
            if restart and log and any(c == cid for _, c, _ in log):
                at = max(i for i, (_, c, _) in enumerate(log) if c == cid)
                log[at] = (log[at][0], cid, nodes)  # the last attempt's graph is the one compiled
            else:
                log.append((now_us(), cid, nodes))
            code = frame_code()
            mark_stack_values(nodes, code)
            for t, name in model_tensors(nodes, example_inputs, code):
                with contextlib.suppress(TypeError):  # a tensor that takes no weak reference stays unnamed
                    hooks._model_tensors.setdefault(id(t), (weakref.ref(t), name))

            def known(t: Any) -> Optional[str]:
                ref, name = hooks._model_tensors.get(id(t), (None, None))
                return name if ref is not None and ref() is t else None

            self_types = frame_self_types()
            if self_types:
                from .build import _trace_key

                key = _trace_key(cid, hooks._resets_seen)
                hooks.raw.self_types[key] = self_types
                own = frame_self_name()
                if own != "self":  # def forward(s, x): dynamo's sources start at L['s']
                    hooks.raw.self_names[key] = own
            mark_lifted(model, nodes, known)  # names only: the graph is kept whatever befalls them
            alive = [(ref(), name) for ref, name in hooks._model_tensors.values()]
            mark_gradients(nodes, example_inputs, [(t, name) for t, name in alive if t is not None])
            if cid.startswith("!"):  # compiled autograd's graph: what each item of its one list input is
                mark_compiled_autograd(model, nodes, example_inputs, known)

    @functools.wraps(original)
    def compile_fx(model_, *args, **kwargs):
        _each("reading the dynamo graph", keep, model_, args[0] if args else kwargs.get("example_inputs_"))
        return original(model_, *args, **kwargs)

    patch_attr(stack, cfx, "compile_fx", compile_fx)


def _install_decomposition_results(stack: contextlib.ExitStack) -> None:
    import torch.fx.experimental.proxy_tensor as proxy_tensor

    try:  # binds the function by name: imported first, it keeps torch's own after the capture (torch imports it)
        import torch._higher_order_ops.out_dtype  # noqa: F401
    except ImportError:
        pass
    original = proxy_tensor.maybe_handle_decomp

    @functools.wraps(original)
    def maybe_handle_decomp(proxy_mode, op, args, kwargs):
        tracer = getattr(proxy_mode, "tracer", None)
        before = len(tracer.graph.nodes) if tracer is not None else 0
        out = original(proxy_mode, op, args, kwargs)
        if tracer is not None and isinstance(out, (tuple, list)) and len(out) > 1:
            done: list = []  # once, whatever the number of captures: the marks are on torch's nodes

            def mark(hooks: Hooks) -> None:
                if not done:
                    mark_results(tracer, op, out, before)
                    done.append(True)

            _each(f"marking the results of {op}'s decomposition", mark)
        return out

    patch_attr(stack, proxy_tensor, "maybe_handle_decomp", maybe_handle_decomp)


def _install_aot_export(stack: contextlib.ExitStack) -> None:
    """``compile_fx.aot_export_module``, which AOTInductor (``aoti_compile_and_package``) runs on an exported
    program: its graph signature names the lowered graph's inputs (``arg6_1`` is the user's ``x``), and the stack
    then holds the user's call that compiled ahead of time."""
    import torch._inductor.compile_fx as cfx

    original = cfx.aot_export_module

    def note(hooks: Hooks, mod: Any, out: Any, frames: list, start_us: float) -> None:
        user = user_frames(frames, hooks._prefixes)
        hooks.raw.aot_calls.append(
            {
                "start_us": start_us,
                "user_stack": user,
                "entry": _entry(frames, user, hooks._torch_dir),
                "inputs": aot_input_names(mod, out[1]),
            }
        )

    @functools.wraps(original)
    def aot_export_module(mod, *args, **kwargs):
        if not _REGISTRY.sinks():
            return original(mod, *args, **kwargs)
        start_us = now_us()
        frames = frames_of(sys._getframe(1))
        out = original(mod, *args, **kwargs)
        _each("reading AOTInductor's input names", note, mod, out, frames, start_us)
        return out

    patch_attr(stack, cfx, "aot_export_module", aot_export_module)


def _entry(frames: list, user: list, torch_dir: str) -> str:
    """The torch function the user's innermost line called (``aoti_compile_and_package``): the first frame inside
    torch after the last of ``user`` (the user's frames of ``frames``); ``""`` when there is none."""
    start = max((i for i, f in enumerate(frames) if f in user), default=-1) + 1
    first = next((f for f in frames[start:] if os.path.abspath(f[0]).startswith(torch_dir)), None)
    return str(first[2]) if first else ""


def _install_callbacks(stack: contextlib.ExitStack) -> None:
    from torch._dynamo.callback import callback_handler

    def on_start(hooks: Hooks, args: Any, frames: list) -> None:
        trig = getattr(args.callback_trigger, "name", str(args.callback_trigger))
        hooks.raw.windows.append(
            RawWindow(
                trigger=trig,
                compile_id=str(args.compile_id),
                start_us=now_us(),
                user_stack=user_frames(frames, hooks._prefixes),
            )
        )

    def on_end(hooks: Hooks, args: Any) -> None:
        for w in reversed(hooks.raw.windows):
            if w.end_us is None:
                w.end_us = now_us()
                break

    # invisible: a lazy backward compiled under a compiled call (``loss.backward()`` inside a torch.compile'd
    # step, after its graph break) runs these while dynamo's frame hook is on, before torch's own compile turns it off
    @invisible
    def start(args: Any) -> None:
        _REGISTRY.foreign_compile(starting=True)
        if _REGISTRY.sinks():
            frames = frames_of(_outside_invisible(sys._getframe(1)))
            _each("timing a compile", on_start, args, frames)
            _each("marking a call that compiled", _mark_compiled)

    @invisible
    def end(args: Any) -> None:
        _each("timing a compile", on_end, args)
        _REGISTRY.foreign_compile(starting=False)

    callback_handler.register_start_callback(start)
    stack.callback(_remove_callback, callback_handler.start_callbacks, start)
    callback_handler.register_end_callback(end)
    stack.callback(_remove_callback, callback_handler.end_callbacks, end)

    # torch._dynamo.reset() clears every compile callback: a user's reset inside a capture (common in notebook
    # cells) would cut the timing and the trigger of every later compile. Ours are put back; the user's own
    # callbacks are cleared, as reset means.
    import torch._dynamo as dynamo

    original_reset = dynamo.reset

    def note_reset(hooks: Hooks, frames: list) -> None:
        hooks._resets_seen += 1
        stack = user_frames(frames, hooks._prefixes)
        if stack:  # the user's (torch.compiler.reset() in a cell), not a capture's own at its start
            hooks.raw.resets.append({"time_us": now_us(), "user_stack": stack})

    @functools.wraps(original_reset)
    def reset(*args: Any, **kwargs: Any) -> Any:
        out = original_reset(*args, **kwargs)
        if start not in callback_handler.start_callbacks:
            callback_handler.register_start_callback(start)
        if end not in callback_handler.end_callbacks:
            callback_handler.register_end_callback(end)
        if _REGISTRY.sinks():  # when: dynamo forgot every compile, and the next call compiles again from 0/0
            _each("noting a dynamo reset", note_reset, frames_of(sys._getframe(1)))
        return out

    patch_attr(stack, dynamo, "reset", reset)


def _remove_callback(callbacks: list, cb: Callable) -> None:
    if cb in callbacks:  # dynamo.reset() without our restore (the user's) may have removed it already
        callbacks.remove(cb)


def _install_autotune(stack: contextlib.ExitStack) -> None:
    """Keep each autotuning's results (torch's feedback savers are told every one), and whether torch benchmarked
    its choices in this process or read every time from its autotune cache (``PersistentCache.lookup`` returns a
    local-cache hit without calling ``AlgorithmSelectorCache.benchmark``: the times are an earlier run's)."""
    import torch
    from torch._inductor import select_algorithm

    cache = select_algorithm.get_algorithm_selector_cache()
    selector = select_algorithm.AlgorithmSelectorCache
    benchmarked = [0]  # AlgorithmSelectorCache.benchmark calls since the last feedback; None: not counted here
    original = selector.__dict__.get("benchmark")
    if isinstance(original, types.FunctionType):

        @functools.wraps(original)
        def benchmark(self: Any, *args: Any, **kwargs: Any) -> Any:
            benchmarked[0] += 1
            return original(self, *args, **kwargs)

        patch_attr(stack, selector, "benchmark", benchmark)
    else:  # another torch: which timings were measured here is not known
        benchmarked[0] = None

    def cache_key(name: Any, input_nodes: Any) -> Optional[tuple]:
        """The key torch's autotune cache files the timings under, less the choices: op, precision, input layouts."""
        try:
            layouts = repr([selector.key_of(n) for n in input_nodes])
        except Exception:
            return None
        return (str(name), torch.get_float32_matmul_precision(), layouts)

    def keep(hooks: Hooks, timings: Any, name: str, input_nodes: Any, ran: Optional[int]) -> None:
        rec = hooks._graph_record()
        if rec is None:
            return
        ranked = sorted(((float(t), c) for c, t in dict(timings).items()), key=lambda x: x[0])
        key = cache_key(name, input_nodes)
        if ran is None:
            timed = None
        elif ran:
            timed = "benchmarked"
            hooks._autotuned.add(key)
        else:  # no benchmark ran: every time came from torch's autotune cache
            timed = "cache_this_capture" if key is not None and key in hooks._autotuned else "cache"
        rec.autotune.append(
            {
                "op": str(name),
                "inputs": [n.get_name() for n in input_nodes if hasattr(n, "get_name")],
                "timed": timed,
                "choices": [
                    {
                        "name": str(getattr(c, "name", c)),
                        "description": str(getattr(c, "description", "") or ""),
                        "time_ms": round(t, 6) if t == t and t != float("inf") else None,
                    }
                    for t, c in ranked
                ],
            }
        )

    def feedback(timings: Any, name: str, input_nodes: Any, choices: Any, *rest: Any) -> None:
        ran = benchmarked[0]
        if ran is not None:
            benchmarked[0] = 0
        _each("reading autotuning results", keep, timings, name, input_nodes, ran)

    cache.add_feedback_saver(feedback)
    stack.callback(_remove_callback, cache.feedback_saver_fns, feedback)


def _install_constant_origins(stack: contextlib.ExitStack) -> None:
    """Where each graph constant comes from (``constants.py``): freezing's and constant folding's
    ``replace_node_with_constant`` (``freezing`` imported it by name: patched there too), before the graph is
    lowered, kept by graph module; a C++ GEMM template's packed weight (``prune_tensors``, which its module and the
    grouped template's call by name), while it is lowered, on the graph's record."""
    import torch._inductor.constant_folding as folding
    import torch._inductor.freezing as freezing

    from .constants import fold_origin, made_constants, packed_origin, storage_owner

    original = folding.replace_node_with_constant
    what = "reading where a graph constant comes from"

    def keep(hooks: Hooks, gm: Any, name: str, origin: dict) -> None:
        hooks._constant_origins.setdefault(gm, {})[name] = origin

    @functools.wraps(original)
    def replace_node_with_constant(gm, node, constant=None, name=None, *args, **kwargs):
        sinks = _REGISTRY.sinks()
        before = node.prev
        origins = [(h, _attempt(h, what, fold_origin, node, constant)) for h in sinks]
        out = original(gm, node, constant, name, *args, **kwargs)
        made = before.next
        if made.op == "get_attr" and made.name == node.name:  # the constant put in its place, as torch names it
            for hooks, origin in origins:
                if origin is not None:
                    hooks._guarded(what, keep, hooks, gm, str(made.target), origin)
        return out

    for mod in (folding, freezing):
        if getattr(mod, "replace_node_with_constant", None) is original:
            patch_attr(stack, mod, "replace_node_with_constant", replace_node_with_constant)

    # a C++ GEMM template's packed weight: prep_weight packs a view of the weight constant (its result, kept by
    # identity until prune_tensors sees which constant holds it)
    import torch._inductor.graph  # noqa: F401  (the templates' modules import the lowerings, which import them)
    from torch._inductor.codegen import cpp_gemm_template as gemm

    def prepared(hooks: Hooks, weight: Any, packed: Any) -> None:
        from torch._inductor.virtualized import V

        base = storage_owner(weight, getattr(V.graph, "constants", None) or {})
        if base:
            hooks._packed_from[id(packed)] = (weakref.ref(packed), base)

    prep = gemm.CppGemmTemplate.prep_weight.__func__

    @functools.wraps(prep)
    def prep_weight(cls, inputs, *args, **kwargs):
        out = prep(cls, inputs, *args, **kwargs)
        try:
            weight, packed = inputs[1], out[0][1]
        except (TypeError, IndexError, KeyError):
            return out
        if hasattr(packed, "untyped_storage") and weight is not packed:
            _each("reading a C++ GEMM template's packed weight", prepared, weight, packed)
        return out

    patch_attr(stack, gemm.CppGemmTemplate, "prep_weight", classmethod(prep_weight))

    def pruned(hooks: Hooks, input_nodes: Any, new_input_nodes: Any) -> None:
        from torch._inductor.virtualized import V

        constants = V.graph.constants
        for name in made_constants(list(input_nodes), list(new_input_nodes), constants):
            ref, base = hooks._packed_from.get(id(constants[name]), (None, ""))
            rec = hooks._graph_record() if ref is not None and ref() is constants[name] else None
            if rec is not None:
                rec.constant_origins[name] = packed_origin(base, constants[name])

    def hook_prune(prune: Callable) -> Callable:
        @functools.wraps(prune)
        def prune_tensors(input_nodes, new_input_nodes, *args, **kwargs):
            _each("reading a C++ GEMM template's packed weight", pruned, input_nodes, new_input_nodes)
            return prune(input_nodes, new_input_nodes, *args, **kwargs)

        return prune_tensors

    import importlib

    for name in ("cpp_gemm_template", "cpp_grouped_gemm_template"):
        try:
            mod = importlib.import_module(f"torch._inductor.codegen.{name}")
        except ImportError:  # (a torch without it has no such template to pack for)
            continue
        if hasattr(mod, "prune_tensors"):
            patch_attr(stack, mod, "prune_tensors", hook_prune(mod.prune_tensors))


def _install_module_hook(stack: contextlib.ExitStack) -> None:
    from torch._inductor.graph import GraphLowering

    original = GraphLowering.compile_to_module

    def keep(hooks: Hooks, graph: Any, mod: Any) -> None:
        key = getattr(graph, hooks._key_attr, None)
        if key is not None:
            hooks._modules[key] = mod
            for rec in hooks.raw.graphs:
                if rec.key == key or (rec.parent_key is not None and rec.parent_key == key):
                    rec.loaded = True  # a subgraph's code is in its parent's module: loaded with it

    @functools.wraps(original)
    def compile_to_module(graph, *args, **kwargs):
        mod = original(graph, *args, **kwargs)
        _each("keeping the compiled module", keep, graph, mod)
        return mod

    patch_attr(stack, GraphLowering, "compile_to_module", compile_to_module)


def _install_module_hook_watch(stack: contextlib.ExitStack) -> None:
    """Hooks added to (or removed from) a compiled module after its compile, which torch does not run (or still
    runs): ``module_hooks.py``."""
    module_hooks.install(stack, _each, patch_attr, _REGISTRY.sinks, invisible, _skip_code, user_frames, frames_of)


def _install_torch_compile(stack: contextlib.ExitStack) -> None:
    import torch

    original = torch.compile

    def note(hooks: Hooks, model: Any, kwargs: dict, frames: list, at: float) -> None:
        if model is None:
            return  # torch.compile(mode=...) without a function: the decorator it returns makes the call noted here
        caller = os.path.abspath(frames[-1][0]) if frames else ""
        owner = getattr(model, "__self__", None)
        if getattr(model, "__name__", "") == "_call_impl" and isinstance(owner, torch.nn.Module):
            model = owner  # Module.compile() compiles the module's Module._call_impl: the user compiled the module
        elif caller.startswith(hooks._torch_dir) and caller != os.path.join(hooks._torch_dir, "__init__.py"):
            # torch's own call, not the user's: torch.cond & co. trace a branch with torch.compile(backend="eager"),
            # flex_attention run eagerly compiles its higher-order op the same way. (torch/__init__.py's is the
            # decorator torch.compile(mode=...) returned, calling torch.compile with the user's function.)
            return
        name = getattr(model, "__qualname__", None) or type(model).__name__ if model is not None else "?"
        owner = getattr(model, "__self__", None)  # a bound method: its object's class, which may inherit it
        if owner is not None and not isinstance(owner, type) and "." in name:
            name = f"{type(owner).__qualname__}.{name.rsplit('.', 1)[1]}"  # opt.step of an AdamW: AdamW.step
        backend = kwargs.get("backend", "inductor")
        backend = backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))
        # transformers' models: torch.compile(model).generate() runs the ORIGINAL model's generate
        has_generate = model is not None and callable(getattr(model, "generate", None))
        hooks.raw.compile_calls.append(
            {
                "target": name,
                "backend": backend,
                "time_us": at,
                "user_stack": user_frames(frames, hooks._prefixes),
                "has_generate": has_generate,
                "arg_names": _arg_names(model),
                "module": isinstance(model, torch.nn.Module),
                "fullgraph": bool(kwargs.get("fullgraph", False)),
            }
        )

    def took(hooks: Hooks, at: float, duration_us: float) -> None:
        for call in reversed(hooks.raw.compile_calls):  # the one noted at ``at`` (none: torch's own call, not noted)
            if call["time_us"] == at:
                call["duration_us"] = round(duration_us, 1)
                return

    @functools.wraps(original)
    def compile(model=None, *args, **kwargs):
        if not _REGISTRY.sinks():
            return original(model, *args, **kwargs)
        frames = frames_of(sys._getframe(1))
        at = now_us()
        _each("noting a torch.compile call", note, model, kwargs, frames, at)
        began = time.perf_counter()  # the call's own time, not the noting's (CompileCall.duration_us)
        out = original(model, *args, **kwargs)
        _each("timing a torch.compile call", took, at, (time.perf_counter() - began) * 1e6)
        return out

    patch_attr(stack, torch, "compile", compile)


def _install_skip_hook(stack: contextlib.ExitStack) -> None:
    """Note each call of a torch.compile'd function of which dynamo compiled nothing because it skipped the call's
    own frame as code of its skip files (torch's own modules), which torch says only in a debug log line.

    Dynamo offers every frame that starts under a compiled call to its callback, and never offers a skipped code
    again. A skip whose caller is torch.compile's wrapper (``compile_wrapper`` in ``eval_frame.py``) opens an entry
    for that call (:func:`_call_key`); later skips under the same call name what it would not trace (the first that
    is not a module-call wrapper: ``Sequential.forward`` after ``Module._call_impl``); a compile that starts while the
    call is on the stack marks it compiled (:func:`_mark_compiled`: ``torch.compile(model)`` skips torch's
    ``Module._wrapped_call_impl`` and traces the user's forward). Only skip-file skips count: a recompile limit, a
    frame with no op or an error are told by the structured trace.

    Torch 2.13+ decides the skip in ``CatchErrorsWrapper._handle_skip``, wrapped here. Torch 2.11 decides it inside
    ``CatchErrorsWrapper.__call__`` and says it only in that debug line: there no skipped call is told. (Reading the
    line means letting convert_frame's logger through DEBUG, and on 2.11 the records it then makes run code that
    dynamo is offered under compiled autograd: the lens would be seen.)"""
    from torch._dynamo import convert_frame

    wrapper = convert_frame.CatchErrorsWrapper
    convert_file = os.path.abspath(convert_frame.__file__)

    def note(hooks: Hooks, info: dict, caller: Any) -> None:
        if "skipfiles" not in info["reason"]:  # "frame is in the Dynamo skipfiles list" (2.13+), "in skipfiles" (2.11)
            return
        # the call's own frame: only dynamo's frames, or torch's module-call wrappers (themselves skipped, maybe in
        # an earlier call, and so not offered again), lie between it and torch.compile's wrapper
        own, via_module, f = True, info["function"].rsplit(".", 1)[-1] == "_call_impl", caller
        while f is not None and not _is_compile_wrapper(f):
            file = os.path.abspath(f.f_code.co_filename)
            if f.f_code.co_name in _CALLS and file.replace("\\", "/").endswith("torch/nn/modules/module.py"):
                via_module = True
            elif file != convert_file:
                own = False
            f = f.f_back
        if f is None:
            return
        key = _call_key(f)
        entry = next((e for e in reversed(hooks.raw.skipped_calls) if e["call"] == key), None)
        if entry is not None or not own:
            if entry is not None and entry["forward"] is None and info["function"].rsplit(".", 1)[-1] not in _CALLS:
                entry["forward"] = info  # what the call runs, skipped too: Sequential.forward after _call_impl
            return
        frames = frames_of(f)
        user = user_frames(frames, hooks._prefixes)
        same = (info["function"], info["file"], info["line"], [list(u) for u in user])
        if any((e["function"], e["file"], e["line"], [list(u) for u in e["user_stack"]]) == same for e in
               hooks.raw.skipped_calls):  # fmt: skip
            return  # a skip dynamo makes on every call (under a dispatch mode): told once
        # what the call runs: this frame, unless it is a module-call wrapper (then the next skip under the call)
        runs = None if info["function"].rsplit(".", 1)[-1] in _CALLS else info
        hooks.raw.skipped_calls.append(
            dict(info, time_us=now_us(), user_stack=user, forward=runs, call=key, compiled=False, module=via_module)
        )

    original = getattr(wrapper, "_handle_skip", None)
    if original is None:
        return  # torch 2.11: the skip is said only in a debug log line (see the docstring)

    def handle_skip(self: Any, result: Any, frame: Any) -> Any:
        out = original(self, result, frame)
        if getattr(result, "skip_reason", None) is not None and getattr(result, "guarded_code", None) is None:
            if _REGISTRY.sinks():
                code = frame.f_code
                info = {
                    "function": getattr(code, "co_qualname", code.co_name),  # Sequential.forward (3.11+)
                    "file": code.co_filename,
                    "line": code.co_firstlineno,
                    "reason": str(result.skip_reason),
                }
                _each("noting a skipped frame", note, info, sys._getframe(1))
        return out

    patch_attr(stack, wrapper, "_handle_skip", handle_skip)


#: torch's module-call wrappers: a skip of one of them says nothing of what the call runs (the module's forward).
_CALLS = frozenset({"_call_impl", "_wrapped_call_impl", "inner"})


def _is_compile_wrapper(f: Any) -> bool:
    """Whether frame ``f`` is torch.compile's wrapper of a compiled function (``compile_wrapper``, ``eval_frame.py``)."""
    return f.f_code.co_name == "compile_wrapper" and f.f_code.co_filename.replace("\\", "/").endswith(
        "torch/_dynamo/eval_frame.py"
    )


def _call_key(f: Any) -> tuple:
    """One compiled call, while it runs: its wrapper frame's id and where the three frames above it stand (an id
    alone may be a later frame's, once this one is gone)."""
    key: list = [id(f)]
    up = f.f_back
    for _ in range(3):
        if up is None:
            break
        key.append((id(up.f_code), up.f_lineno))
        up = up.f_back
    return tuple(key)


def _mark_compiled(hooks: Hooks) -> None:
    """A compile starts: each skipped call still on the stack compiled something after all."""
    if not any(not e["compiled"] for e in hooks.raw.skipped_calls):
        return
    f, keys = sys._getframe(1), set()
    while f is not None:
        if _is_compile_wrapper(f):
            keys.add(_call_key(f))
        f = f.f_back
    for e in hooks.raw.skipped_calls:
        if e["call"] in keys:
            e["compiled"] = True


def _arg_names(model: Any) -> list[str]:
    """The names of the positional parameters of what ``torch.compile`` wraps (a module's ``forward`` without
    ``self``), so that a graph input read from a wrapper's ``*args`` can be called by the user's name."""
    import inspect as pyinspect

    target = getattr(model, "forward", model) if model is not None else None
    try:
        params = pyinspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (pyinspect.Parameter.POSITIONAL_ONLY, pyinspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


#: (module, class) of what ``torch.compile(module)`` returns, for IPython's lazy by-name formatters
COMPILED_MODULE_TYPE = ("torch._dynamo.eval_frame", "OptimizedModule")


_CODEGEN_MODULES = (
    "torch._inductor.codegen.cpp",
    "torch._inductor.codegen.triton",
    "torch._inductor.codegen.simd",
    "torch._inductor.codegen.cuda_combined_scheduling",
)
