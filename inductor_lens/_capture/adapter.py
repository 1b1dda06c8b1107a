"""The one place in inductor_lens that touches ``torch._*``.

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
- ``torch._inductor.scheduler.WhyNoFuse.__call__``: "cannot fuse X with Y: reason";
- ``GraphLowering.save_output_code``: the generated module;
- ``torch._inductor.compile_fx.compile_fx``: the FX graph dynamo hands to Inductor;
- dynamo's compile start/end callbacks: when (and why) a compile ran;
- ``torch.compile`` itself, to show that it only wraps the function.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import sys
import sysconfig
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from packaging.version import Version

from .artifacts import wanted

MIN_TORCH = Version("2.11")
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def now_us() -> float:
    """Wall clock in microseconds since the epoch: the clock of torch's chromium events."""
    return time.time_ns() / 1000.0


def torch_version() -> Version:
    import torch

    return Version(torch.__version__.split("+")[0])


# -- raw records (plain Python; turned into model objects by build.py) ---------------------------

@dataclass
class RawKernel:
    name: str
    is_extern: bool
    scheduler_nodes: list[str]          # pre-fusion scheduler node names (op0, op1, ...)
    fx_nodes: list[str]                 # post-grad node names
    buffer: Optional[str] = None        # for extern kernels: the buffer the call writes
    compiler_stack: list[tuple] = field(default_factory=list)  # (file, line, function, code)
    stack_traces: list[str] = field(default_factory=list)


@dataclass
class RawSchedNode:
    name: str
    kind: str
    members: list[str]
    fx_nodes: list[str]
    reads: list[str]
    writes: list[str]
    outputs: list[str]
    # Inductor's own view of the bytes the node moves, per buffer (post-fusion nodes only): see _costs
    read_bytes: Optional[dict[str, int]] = None
    write_bytes: Optional[dict[str, int]] = None
    estimated_runtime_ms: Optional[float] = None


@dataclass
class RawGraph:
    """One Inductor graph compilation (one GraphLowering)."""

    key: int
    compile_id: str
    graph_kind: str
    start_us: float
    post_grad_nodes: list[dict] = field(default_factory=list)
    pre_fusion: list[RawSchedNode] = field(default_factory=list)
    post_fusion: list[RawSchedNode] = field(default_factory=list)
    kernels: list[RawKernel] = field(default_factory=list)
    fusion_refusals: list[tuple[str, str, str]] = field(default_factory=list)
    output_code: str = ""
    graph_inputs: list[str] = field(default_factory=list)
    graph_outputs: list[str] = field(default_factory=list)
    autotune: list[dict] = field(default_factory=list)        # {op, inputs, choices: [{name, time_ms}]}
    runtime: dict[str, dict] = field(default_factory=dict)    # kernel name -> launch metadata after running
    aot: bool = False                                          # an AOTInductor compile (aot_mode)


@dataclass
class RawWindow:
    """A span during which dynamo (or a lazy backward) compiled: from the callbacks."""

    trigger: str                         # "DYNAMO" | "LAZY_BACKWARD" | ...
    compile_id: str
    start_us: float
    end_us: Optional[float] = None
    user_stack: list[tuple] = field(default_factory=list)


@dataclass
class Raw:
    t0_us: float
    diagnostics: list[tuple[str, str, str]] = field(default_factory=list)   # (code, message, detail)
    graphs: list[RawGraph] = field(default_factory=list)
    windows: list[RawWindow] = field(default_factory=list)
    trace: list[tuple[dict, Any]] = field(default_factory=list)   # (metadata, payload) in order
    dynamo_graphs: dict[str, list[dict]] = field(default_factory=dict)   # compile id -> nodes
    compile_calls: list[dict] = field(default_factory=list)
    device: str = "cpu"

    def diag(self, code: str, message: str, detail: str = "") -> None:
        """Note a diagnostic (see ``model.DIAGNOSTIC_CODES``); the same one twice is kept once."""
        entry = (code, message, detail)
        if entry not in self.diagnostics:
            self.diagnostics.append(entry)


# -- stack helpers ----------------------------------------------------------------------------

def _non_user_prefixes() -> tuple[str, ...]:
    import torch

    paths = {os.path.dirname(os.path.abspath(torch.__file__)) + os.sep, _PKG_DIR + os.sep}
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):  # scripts: console launchers
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(os.path.abspath(p) + os.sep)
    return tuple(sorted(paths))


def frames_of(stack: traceback.StackSummary) -> list[tuple]:
    return [(f.filename, f.lineno or 0, f.name, (f.line or "").strip()) for f in stack]


def _torch_dir() -> str:
    import torch

    return os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


_EXAMPLES = os.path.join(_PKG_DIR, "examples.py")  # example models are user code, though shipped with us


def _ours(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PKG_DIR + os.sep) and path != _EXAMPLES


def trim_to_user_call(frames: list[tuple], torch_dir: str) -> list[tuple]:
    """Frames from the user's call into torch (the last frame before torch is first entered) to the
    end, without inductor_lens's own wrappers: the path through torch that produced a kernel."""
    frames = [f for f in frames if not _ours(f[0])]
    first = next((i for i, f in enumerate(frames) if os.path.abspath(f[0]).startswith(torch_dir)), None)
    if first is None:
        return frames
    return frames[max(0, first - 1):]


def user_frames(frames: list[tuple], prefixes: tuple[str, ...]) -> list[tuple]:
    """The frames that are the user's code: not torch, not inductor_lens, not stdlib/site-packages."""
    out = []
    for fr in frames:
        fn = fr[0]
        if fn.startswith("<frozen"):
            continue
        if not fn.startswith("<") and os.path.abspath(fn).startswith(prefixes) and os.path.abspath(fn) != _EXAMPLES:
            continue
        out.append(fr)
    return out


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
        self.caches_prior: dict[int, Any] = {}   # thread -> its cache flags before its first capture

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
            if before is not False:
                setattr(module, flag, False)
                prior.append((module, flag, before))
        except Exception as e:
            hooks.raw.diag("hook_missing", f"could not turn off {module_name}.{flag} ({type(e).__name__}: {e}): "
                           "a cache hit would hide fusion and kernels")
    return prior


def _caches_restore(prior: Any) -> None:
    for module, flag, before in reversed(prior or ()):
        if getattr(module, flag) is False:  # still ours
            setattr(module, flag, before)


def _each(what: str, fn: Callable, *args: Any) -> None:
    """Call ``fn(hooks, *args)`` for every capture active on this thread, each one guarded."""
    for hooks in _REGISTRY.sinks():
        hooks._guarded(what, fn, hooks, *args)


def _node_kind(snode: Any) -> str:
    from torch._inductor import scheduler as S

    if isinstance(snode, S.ExternKernelSchedulerNode):
        return "extern"
    if isinstance(snode, S.NopKernelSchedulerNode):
        return "nop"
    foreach = getattr(S, "ForeachKernelSchedulerNode", None)
    if foreach is not None and isinstance(snode, foreach):
        return "foreach"
    try:
        if snode.is_template():
            return "template"
    except (AttributeError, NotImplementedError):  # not every node kind has it
        pass
    try:
        if snode.is_reduction():
            return "reduction"
    except (AttributeError, NotImplementedError):  # not every node kind has it
        pass
    if isinstance(snode, (S.SchedulerNode, S.FusedSchedulerNode)):
        return "pointwise"
    return "other"


def _ir_fx_nodes(ir_node: Any, is_extern: bool) -> list[str]:
    """Post-grad node names of an IR node: ``origin_node`` for extern kernels (``origins``
    over-approximates there, pytorch issue 100096), else ``origins``."""
    if ir_node is None:
        return []
    origins = list(getattr(ir_node, "origins", ()) or ())
    if is_extern:
        origin = getattr(ir_node, "origin_node", None)
        if origin is not None:
            return [origin.name]
        # a fallback kernel (e.g. SDPA) without origin_node: keep the origins that call the kernel's own op
        op = getattr(ir_node, "op_overload", None) or getattr(ir_node, "python_kernel_name", None)
        if op is not None:
            base = str(op).split("::")[-1].replace("torch.ops.", "").split(".")
            base = base[1] if len(base) > 1 and base[0] == "aten" else base[0]
            exact = [o for o in origins if base and base in str(getattr(o, "target", ""))]
            if exact:
                origins = exact
    return sorted({o.name for o in origins})


def _snode_fx_nodes(snode: Any) -> list[str]:
    out: list[str] = []
    for sub in snode.get_nodes():
        is_extern = _node_kind(sub) == "extern"
        for n in _ir_fx_nodes(getattr(sub, "node", None), is_extern):
            if n not in out:
                out.append(n)
    return out


def _raw_sched_node(snode: Any, costs: bool = False) -> RawSchedNode:
    rw = snode.read_writes
    outputs: list[str] = []
    try:
        outputs = [b.get_name() for b in snode.get_outputs()]
    except (AttributeError, NotImplementedError):  # not every node kind has it
        pass
    raw = RawSchedNode(
        name=snode.get_name(),
        kind=_node_kind(snode),
        members=[s.get_name() for s in snode.get_nodes()],
        fx_nodes=_snode_fx_nodes(snode),
        reads=sorted({d.name for d in rw.reads}),
        writes=sorted({d.name for d in rw.writes}),
        outputs=outputs,
    )
    if costs:
        _costs(snode, raw)
    return raw


def _costs(snode: Any, raw: RawSchedNode) -> None:
    """What Inductor itself estimates for a scheduler node: the bytes of each buffer it reads and writes
    (``get_read_write_buffer_accesses``: buffer numel x element size, buffers made and consumed inside a fused
    node left out) and its estimated runtime (GPU only; Inductor returns 0 on CPU). Both read sizes through
    ``sizevars.optimization_hint``, which never adds a guard; nothing here calls ``int()`` on a symbolic size.
    The private method is gated by name: when it is missing the cost falls back to shapes (model side)."""
    accesses = getattr(snode, "get_read_write_buffer_accesses", None)
    if accesses is not None:
        try:
            raw.read_bytes = {str(k): int(v) for k, v in accesses(include_reads=True, include_writes=False).items()}
            raw.write_bytes = {str(k): int(v) for k, v in accesses(include_reads=False, include_writes=True).items()}
        except Exception:
            raw.read_bytes = raw.write_bytes = None
    try:
        ms = float(snode.get_estimated_runtime())
        raw.estimated_runtime_ms = ms if ms > 0 else None
    except Exception:
        pass


def _dim(size: Any) -> tuple[Any, Optional[int]]:
    """One size as ``(value, hint)`` WITHOUT guarding: an ``int`` stays an int (hint None); a SymInt
    whose expression is a number gives that number; a symbolic one gives its expression as text
    (``"s0"``, ``"2*s0 + 1"``) and the concrete value torch used for it, read from the node's hint or
    the shape environment's ``size_hint`` (neither adds a guard). ``int()``, ``bool()``, ``==`` or
    hashing of a SymInt would install a guard and specialize the user's compile: never do that here."""
    import torch

    if type(size) is int:
        return size, None
    if isinstance(size, torch.SymInt):
        node = size.node
        const = node.maybe_as_int()  # reads the sympy expression: no guard
        if const is not None:
            return const, None
        hint = node.hint if node.has_hint() else None
        if hint is None and getattr(node, "shape_env", None) is not None:
            try:
                hint = node.shape_env.size_hint(node.expr, allow_none=True)
            except Exception:
                hint = None
        try:  # a sympy Integer or a python int; never a SymInt here (int() of those guards)
            hint = int(hint) if hint is not None and not isinstance(hint, torch.SymInt) else None
        except Exception:
            hint = None
        return node.str(), hint
    return str(size), None


def _shape_dtype(val: Any) -> tuple[Optional[list], Optional[list], Optional[str]]:
    """``(shape, shape_hint, dtype)`` of a node's example value; ``shape_hint`` is None unless a dim is
    symbolic. Never guards (see :func:`_dim`)."""
    import torch

    if isinstance(val, torch.Tensor):
        dims = [_dim(s) for s in val.shape]
        symbolic = any(isinstance(d, str) for d, _ in dims)
        return [d for d, _ in dims], [h if h is not None else d for d, h in dims] if symbolic else None, \
            str(val.dtype).replace("torch.", "")
    if isinstance(val, (list, tuple)) and len(val) > 0 and all(isinstance(v, torch.Tensor) for v in val):
        parts = [_shape_dtype(v) for v in val]
        hints = [h if h is not None else s for s, h, _ in parts] if any(h is not None for _, h, _ in parts) else None
        return [s for s, _, _ in parts], hints, parts[0][2]
    return None, None, None


def _target_name(node: Any) -> str:
    t = node.target
    if isinstance(t, str):
        return t
    try:
        from torch.fx.node import _get_qualified_name

        name = _get_qualified_name(t)
    except Exception:
        name = getattr(t, "__name__", None) or str(t)
    return name.replace("torch.ops.", "")


def fx_graph_nodes(gm: Any) -> list[dict]:
    """Plain dicts for the nodes of an FX GraphModule (see ``model.GraphNode``)."""
    out = []
    for n in gm.graph.nodes:
        val = n.meta.get("val", n.meta.get("example_value"))
        shape, shape_hint, dtype = _shape_dtype(val)
        mstack, mtypes = [], []
        for v in (n.meta.get("nn_module_stack") or {}).values():
            path = v[0] if isinstance(v, (tuple, list)) else str(v)
            mstack.append(str(path))
            cls = v[1] if isinstance(v, (tuple, list)) and len(v) > 1 else None
            name = getattr(cls, "__name__", None) or (str(cls).rsplit(".", 1)[-1].strip("'>") if cls else "")
            mtypes.append(name)
        out.append({
            "name": n.name, "op": n.op, "target": _target_name(n),
            "inputs": [a.name for a in n.all_input_nodes],
            "shape": shape, "shape_hint": shape_hint, "dtype": dtype,
            "stack_trace": n.meta.get("stack_trace") or "",
            "module_stack": mstack,
            "module_types": mtypes,
            "source": _input_source(n),
        })
    return out


def _input_source(node: Any) -> str:
    """Where dynamo got a graph input from (``L['self']._modules['fc1']._parameters['weight']``), or ``""``."""
    if node.op != "placeholder":
        return ""
    try:
        source = getattr(node.meta.get("grapharg"), "source", None)
        name = getattr(source, "name", None)  # a method before torch 2.12, a cached property since
        return str(name() if callable(name) else name) if name is not None else ""
    except Exception:  # an input whose source cannot be named is shown by its graph name
        return ""


# -- the hooks --------------------------------------------------------------------------------

class Hooks:
    """One capture's view of the process-wide hooks: what they see on this capture's thread while it is
    active is written into ``raw``. ``start()`` joins the shared hooks (installing them if this is the
    first active capture), ``stop()`` leaves them (removing them if this was the last)."""

    def __init__(self, raw: Raw, reset_dynamo: bool = True, on_event: Optional[Callable[[str], None]] = None):
        self.raw = raw
        self.on_event = on_event
        self._key_attr = f"_inductor_lens_key_{id(self)}"
        self.reset_dynamo = reset_dynamo
        self._lock = threading.RLock()
        self._next_key = 0
        self._prefixes = _non_user_prefixes()
        self._torch_dir = _torch_dir()
        self._seen_dynamo_gms: set[int] = set()
        self._modules: dict[int, Any] = {}
        self.thread = threading.get_ident()

    # guard: nothing raised in a hook reaches torch
    def _guarded(self, what: str, fn: Callable, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as e:  # pragma: no cover - exercised by fault-injection tests
            self.raw.diag("hook_failed", f"{what} failed ({type(e).__name__}: {e}); that part of the report is missing",
                          "".join(traceback.format_exception(type(e), e, e.__traceback__))[-2000:])

    def install(self, stack: contextlib.ExitStack) -> None:
        """Join the shared hooks until ``stack`` closes."""
        version = torch_version()
        if version < MIN_TORCH:
            self.raw.diag("torch_too_old", f"torch {version} is older than {MIN_TORCH}, the oldest inductor_lens "
                          "supports: the capture may be incomplete")
        if os.environ.get("TORCHINDUCTOR_FX_COMPILE_MODE", "").lower().startswith("subprocess"):
            self.raw.diag("subprocess_mode", "TORCHINDUCTOR_FX_COMPILE_MODE=subprocess runs Inductor in another "
                          "process, where no in-process hook fires: unset it to see fusion and kernels")
        if self.reset_dynamo:
            _reset_dynamo()
        _REGISTRY.acquire(self)
        stack.callback(_REGISTRY.release, self)
        stack.callback(self._guarded, "reading Triton launch metadata", self._collect_runtime)

    def _emit(self, message: str) -> None:
        if self.on_event is not None:
            try:
                self.on_event(message)
            except Exception as e:
                self.on_event = None
                self.raw.diag("hook_failed", f"the progress callback failed ({type(e).__name__}: {e}); "
                              "progress is off")

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
                    return rec
        with self._lock:
            key = self._next_key
            self._next_key += 1
        self._guarded("tagging a graph", setattr, g, self._key_attr, key)
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
        kind = "backward" if getattr(g, "is_backward", False) else (
            "inference" if getattr(g, "is_inference", False) else "forward")
        rec = RawGraph(key=key, compile_id=str(cid) if cid is not None else "?", graph_kind=kind, start_us=now_us(),
                       aot=bool(getattr(g, "aot_mode", False)))
        try:
            rec.post_grad_nodes = fx_graph_nodes(g.module)
        except Exception as e:
            self.raw.diag("hook_failed", f"the post-grad graph of {rec.compile_id} could not be read "
                                         f"({type(e).__name__}: {e})")
        rec.graph_inputs = [str(n) for n in getattr(g, "graph_input_names", None) or list(g.graph_inputs)]

        def outputs() -> None:
            for o in g.graph_outputs:
                try:
                    rec.graph_outputs.append(o.get_name())
                except (AttributeError, NotImplementedError):
                    continue  # a constant output (NoneAsConstantBuffer...) names no buffer
        self._guarded(f"reading the outputs of graph {rec.compile_id}", outputs)
        device = getattr(g, "device_types", None)
        if device:
            self.raw.device = ",".join(sorted(d for d in device if d != "meta")) or self.raw.device
        self.raw.graphs.append(rec)
        return rec

    def _collect_runtime(self) -> None:
        """After the block ran: the launch config each Triton kernel's autotuner picked."""
        for rec in self.raw.graphs:
            mod = self._modules.get(rec.key)
            if mod is None:
                continue
            for rk in rec.kernels:
                meta = _launch_metadata(getattr(mod, rk.name, None))
                if meta:
                    rec.runtime[rk.name] = meta
        self._modules.clear()


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
        ("kernel provenance hook", _install_kernel_hooks),
        ("fusion decision hook", _install_fusion_decisions),
        ("output code hook", _install_output_code),
        ("dynamo graph hook", _install_compile_fx),
        ("compile callbacks", _install_callbacks),
        ("torch.compile hook", _install_torch_compile),
        ("autotuning hook", _install_autotune),
        ("compiled module hook", _install_module_hook),
    ):
        try:
            installer(stack)
        except Exception as e:
            diagnostics.append(("hook_missing", f"could not install the {name} on torch {version} "
                                f"({type(e).__name__}: {e}); that part of the report is missing", ""))


# structured trace ----------------------------------------------------------------------------


def _trace_record(hooks: Hooks, md: dict, payload: Any) -> None:
    hooks.raw.trace.append((md, payload))
    if "chromium_event" in md and hooks.on_event is not None:
        ev = loads_payload(payload)
        if isinstance(ev, dict) and ev.get("ph") == "B":
            hooks._emit(f"phase: {ev.get('name')}")


class _TraceHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        sinks = _REGISTRY.sinks()
        if not sinks:
            return
        try:
            md = getattr(record, "metadata", None)
            if not isinstance(md, dict):
                return
            if not wanted(md):  # the artifact table (artifacts.py) lists what the builder reads
                return
            payload = getattr(record, "payload", None)
        except Exception as e:  # never let a log record break the compile
            for hooks in sinks:
                hooks.raw.diag("hook_failed", f"a structured-trace record could not be read ({type(e).__name__}: {e})")
            return
        _each("reading a structured-trace record", _trace_record, md, payload)


def _install_trace(stack: contextlib.ExitStack) -> None:
    logger = logging.getLogger("torch.__trace")
    handler = _TraceHandler(level=logging.DEBUG)
    old_propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # the records are ours: they must not reach the user's root handlers

    def restore() -> None:
        logger.removeHandler(handler)
        if logger.propagate is False:
            logger.propagate = old_propagate

    stack.callback(restore)


# scheduler -----------------------------------------------------------------------------------
def _on_nodes(hooks: Hooks, which: str, nodes: Any) -> None:
    rec = hooks._graph_record()
    if rec is None:
        return
    snodes = [_raw_sched_node(n, costs=which == "post") for n in nodes]
    if which == "pre":
        rec.pre_fusion = snodes
    else:
        rec.post_fusion = snodes


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


def _on_kernel(hooks: Hooks, node_schedule: Any, kernel_name: str, is_extern: bool) -> None:
    rec = hooks._graph_record()
    if rec is None or not kernel_name:
        return
    hooks._emit(f"kernel: {kernel_name} ({rec.compile_id} {rec.graph_kind})")
    frames = frames_of(traceback.extract_stack(sys._getframe(4)))
    frames = trim_to_user_call(frames, hooks._torch_dir)
    if is_extern:
        buf = _attempt(hooks, "naming an extern kernel's buffer", node_schedule.get_name)
        sched = []

        def defining_op() -> None:
            from torch._inductor.virtualized import V

            sched.append(V.graph.scheduler.name_to_buf[buf].defining_op.get_name())
        if buf is not None:
            _attempt(hooks, "finding an extern kernel's scheduler node", defining_op)
        traces = list(getattr(node_schedule, "get_stack_traces", lambda: [])() or [])
        rec.kernels.append(RawKernel(name=kernel_name, is_extern=True, scheduler_nodes=sched,
                                     fx_nodes=_ir_fx_nodes(node_schedule, True), buffer=buf,
                                     compiler_stack=frames, stack_traces=traces))
        return
    sched, fx, traces = [], [], []
    for snode in node_schedule:
        if not hasattr(snode, "get_name") or getattr(snode, "node", None) is None:
            continue  # EnableReduction / DisableReduction markers
        sched.append(snode.get_name())
        for n in _ir_fx_nodes(snode.node, False):
            if n not in fx:
                fx.append(n)
        for t in _attempt(hooks, "reading a kernel's stack traces", snode.node.get_stack_traces) or []:
            if t not in traces:
                traces.append(t)
    rec.kernels.append(RawKernel(name=kernel_name, is_extern=False, scheduler_nodes=sched, fx_nodes=fx,
                                 compiler_stack=frames, stack_traces=traces))


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

    def save_output_code(code: str) -> None:
        _each("keeping the output code", keep, code)
        if previous is not None:
            previous(code)

    patch_attr(stack, GraphLowering, "save_output_code", staticmethod(save_output_code))


def _install_compile_fx(stack: contextlib.ExitStack) -> None:
    import torch._inductor.compile_fx as cfx

    original = cfx.compile_fx

    def keep(hooks: Hooks, model: Any) -> None:
        from torch._guards import CompileContext

        if id(model) in hooks._seen_dynamo_gms or not hasattr(model, "graph"):
            return
        hooks._seen_dynamo_gms.add(id(model))
        cid = str(CompileContext.current_compile_id())
        hooks.raw.dynamo_graphs.setdefault(cid, fx_graph_nodes(model))

    @functools.wraps(original)
    def compile_fx(model_, *args, **kwargs):
        _each("reading the dynamo graph", keep, model_)
        return original(model_, *args, **kwargs)

    patch_attr(stack, cfx, "compile_fx", compile_fx)


def _install_callbacks(stack: contextlib.ExitStack) -> None:
    from torch._dynamo.callback import callback_handler

    def on_start(hooks: Hooks, args: Any, frames: list) -> None:
        trig = getattr(args.callback_trigger, "name", str(args.callback_trigger))
        hooks.raw.windows.append(RawWindow(trigger=trig, compile_id=str(args.compile_id), start_us=now_us(),
                                           user_stack=user_frames(frames, hooks._prefixes)))

    def on_end(hooks: Hooks, args: Any) -> None:
        for w in reversed(hooks.raw.windows):
            if w.end_us is None:
                w.end_us = now_us()
                break

    def start(args: Any) -> None:
        if _REGISTRY.sinks():
            frames = frames_of(traceback.extract_stack(sys._getframe(1)))
            _each("timing a compile", on_start, args, frames)

    def end(args: Any) -> None:
        _each("timing a compile", on_end, args)

    callback_handler.register_start_callback(start)
    stack.callback(_remove_callback, callback_handler.start_callbacks, start)
    callback_handler.register_end_callback(end)
    stack.callback(_remove_callback, callback_handler.end_callbacks, end)


def _remove_callback(callbacks: list, cb: Callable) -> None:
    if cb in callbacks:  # dynamo.reset() without our restore (the user's) may have removed it already
        callbacks.remove(cb)


def _install_autotune(stack: contextlib.ExitStack) -> None:
    from torch._inductor import select_algorithm

    cache = select_algorithm.get_algorithm_selector_cache()

    def keep(hooks: Hooks, timings: Any, name: str, input_nodes: Any) -> None:
        rec = hooks._graph_record()
        if rec is None:
            return
        ranked = sorted(((float(t), c) for c, t in dict(timings).items()), key=lambda x: x[0])
        rec.autotune.append({
            "op": str(name),
            "inputs": [n.get_name() for n in input_nodes if hasattr(n, "get_name")],
            "choices": [{"name": str(getattr(c, "name", c)),
                         "description": str(getattr(c, "description", "") or ""),
                         "time_ms": round(t, 6) if t == t and t != float("inf") else None}
                        for t, c in ranked],
        })

    def feedback(timings: Any, name: str, input_nodes: Any, choices: Any, *rest: Any) -> None:
        _each("reading autotuning results", keep, timings, name, input_nodes)

    cache.add_feedback_saver(feedback)
    stack.callback(_remove_callback, cache.feedback_saver_fns, feedback)


def _install_module_hook(stack: contextlib.ExitStack) -> None:
    from torch._inductor.graph import GraphLowering

    original = GraphLowering.compile_to_module

    def keep(hooks: Hooks, graph: Any, mod: Any) -> None:
        key = getattr(graph, hooks._key_attr, None)
        if key is not None:
            hooks._modules[key] = mod

    @functools.wraps(original)
    def compile_to_module(graph, *args, **kwargs):
        mod = original(graph, *args, **kwargs)
        _each("keeping the compiled module", keep, graph, mod)
        return mod

    patch_attr(stack, GraphLowering, "compile_to_module", compile_to_module)


def _install_torch_compile(stack: contextlib.ExitStack) -> None:
    import torch

    original = torch.compile

    def note(hooks: Hooks, model: Any, kwargs: dict, frames: list) -> None:
        name = getattr(model, "__qualname__", None) or type(model).__name__ if model is not None else "?"
        backend = kwargs.get("backend", "inductor")
        backend = backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))
        # transformers' models: torch.compile(model).generate() runs the ORIGINAL model's generate
        has_generate = model is not None and callable(getattr(model, "generate", None))
        hooks.raw.compile_calls.append({"target": name, "backend": backend, "time_us": now_us(),
                                        "user_stack": user_frames(frames, hooks._prefixes),
                                        "has_generate": has_generate})

    @functools.wraps(original)
    def compile(model=None, *args, **kwargs):
        if _REGISTRY.sinks():
            frames = frames_of(traceback.extract_stack(sys._getframe(1)))
            _each("noting a torch.compile call", note, model, kwargs, frames)
        return original(model, *args, **kwargs)

    patch_attr(stack, torch, "compile", compile)


#: (module, class) of what ``torch.compile(module)`` returns, for IPython's lazy by-name formatters
COMPILED_MODULE_TYPE = ("torch._dynamo.eval_frame", "OptimizedModule")


def kernel_profiling() -> Any:
    """A context in which Inductor compiles C++ kernels with profiling on (the profiler sees them)."""
    import torch._inductor.config as inductor_config

    return inductor_config.patch({"cpp.enable_kernel_profile": True})


def _launch_metadata(kernel: Any) -> Optional[dict]:
    """Launch facts of a Triton ``CachingAutotuner`` after it ran: the config autotuning picked."""
    launchers = getattr(kernel, "launchers", None)
    configs = getattr(kernel, "configs", None)
    if launchers is None and configs is None:
        return None
    meta: dict = {}
    if configs is not None:
        meta["candidate_configs"] = len(configs)
    if launchers:
        cfg = getattr(launchers[0], "config", None)
        if cfg is not None:
            meta["num_warps"] = getattr(cfg, "num_warps", None)
            meta["num_stages"] = getattr(cfg, "num_stages", None)
            meta["block"] = {k: v for k, v in dict(getattr(cfg, "kwargs", {}) or {}).items()
                             if isinstance(v, (int, float, str, bool))}
        shared = getattr(launchers[0], "shared", None)
        if isinstance(shared, int):
            meta["shared_mem_bytes"] = shared
        n_regs = getattr(launchers[0], "n_regs", None)
        if isinstance(n_regs, int):
            meta["registers"] = n_regs
    heuristics = getattr(kernel, "heuristic_type", None)
    if heuristics is not None:
        meta["heuristic"] = str(getattr(heuristics, "name", heuristics)).lower()
    return {k: v for k, v in meta.items() if v is not None}


_CODEGEN_MODULES = ("torch._inductor.codegen.cpp", "torch._inductor.codegen.triton", "torch._inductor.codegen.simd",
                    "torch._inductor.codegen.cuda_combined_scheduling")



def loads_payload(payload: Any) -> Any:
    if isinstance(payload, str):
        try:
            return json.loads(payload)
        except ValueError:
            return payload
    return payload
