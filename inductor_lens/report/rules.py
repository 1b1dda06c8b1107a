"""Rules that turn recorded facts into the answers the views show, written once, in Python.

Torch-free and view-free: the capture's builder (``capturing/build.py``) calls these while building
a report, and the model calls them when it upgrades a version-1 report. The front end only reads
their results (``Frame.stage``, ``Compile.frame_label``, ``FusedNode.label``...), it never re-derives them.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from typing import Any, Iterable, Optional, Sequence

#: Where a frame comes from, in the order a compile runs through them.
STAGES = (
    "user",
    "dynamo",
    "aot",
    "inductor",
    "lowering",
    "scheduler",
    "codegen",
    "runtime",
    "torch",
    "library",
    "other",
)

# the public folders and files at the top of torch's package (2.11-2.15); its private ones all start with "_"
_TORCH_DIRS = (
    "accelerator|amp|ao|autograd|backends|bin|compiler|contrib|cpu|csrc|cuda|distributed|distributions|export|fft"
    "|func|futures|fx|headeronly|include|jit|lib|linalg|masked|monitor|mps|mtia|multiprocessing|nativert|nested|nn"
    "|numa|onnx|optim|package|profiler|quantization|share|signal|sparse|special|testing|utils|xpu"
)
_TORCH_FILES = (
    "functional|hub|library|overrides|quasirandom|random|return_types|serialization|storage|torch_version|types|version"
)

_STAGE_RULES: tuple[tuple[str, Any], ...] = (
    # dynamo's aot_autograd backend wrapper belongs to AOT Autograd; its repro wrapper to Inductor
    (r"/torch/_dynamo/backends/common\.py$", "aot"),
    (r"/torch/_dynamo/repro/after_aot\.py$", "inductor"),
    (r"/torch/_dynamo/", "dynamo"),
    (r"/torch/_functorch/", "aot"),
    (r"/torch/_inductor/codegen/", "codegen"),
    (
        r"/torch/_inductor/scheduler\.py$",
        lambda fn: "codegen" if re.match(r"^_?codegen|^flush$|^generate_kernel", fn) else "scheduler",
    ),
    # GraphLowering: run/call_function lower; compile_to_module and codegen drive what follows (they make the
    # Scheduler, which fuses, then ask it for code): Inductor's own; _update_scheduler makes the Scheduler
    (
        r"/torch/_inductor/graph\.py$",
        lambda fn: (
            "scheduler"
            if fn == "_update_scheduler"
            else "inductor"
            if re.fullmatch(r"_?compile_to_(module|fn)|codegen(_with_cpp_wrapper)?", fn)
            else "codegen"
            if "codegen" in fn
            else "lowering"
        ),
    ),
    # an IR node writing its own call into the output code (ExternKernel.codegen, codegen_comment) is codegen
    (r"/torch/_inductor/ir\.py$", lambda fn: "codegen" if fn.startswith("codegen") else "lowering"),
    (r"/torch/_inductor/(lowering|ir|decomposition|fx_passes/|pattern_matcher|select_algorithm|kernel/)", "lowering"),
    (r"/torch/_inductor/runtime/|/torchinductor_[^/]+/", "runtime"),
    (r"/torch/_inductor/", "inductor"),
    # torch's other files: all of them in an installed torch (after its site-packages/), else (a source build, an
    # editable install) only under a name torch's package has, so that a user's own folder named torch
    # (/home/me/torch/train.py) holds the user's code
    (
        rf"^/(site|dist)-packages/torch/|^(?!/(site|dist)-packages/).*/torch/(_[^/]+|({_TORCH_DIRS})/|({_TORCH_FILES})\.pyi?$)",
        "torch",
    ),
    # inductor_lens's own frames (the magic, the capture) are never the user's; its examples are. Only the
    # package's own files: a clone in a folder named inductor_lens holds the user's code (tests/, notebooks/)
    (
        r"/inductor_lens/(capturing|report|analysis|views|_capture)/[^/]+\.py$"
        r"|/inductor_lens/(__init__|__main__|_compat|_version|magic|cli|widget|html|model)\.py$",
        "other",
    ),
    (r"(site-packages|dist-packages)/|/lib/python3[^/]*/|^<frozen|^<string>", "library"),
    # console-script launchers (pip writes one per entry point into an environment's bin/ or Scripts/, a file with no
    # .py of its own; on Windows an .exe whose frames are its __main__.py): `inductor-lens` is ours, torchrun,
    # ipython, jupyter... are libraries'. A user's script in a bin/ folder has its .py and stays the user's
    (r"/(bin|Scripts)/inductor-lens(\.exe/__main__\.py)?$", "other"),
    (r"/(bin|Scripts)/[^/.]+(\.exe/__main__\.py)?$", "library"),
)
_STAGE_RES = tuple((re.compile(p), s) for p, s in _STAGE_RULES)


#: The backend ``torch.compile(backend="inductor")`` builds (``torch/__init__.py``): dynamo calls it with its FX graph
#: and it calls Inductor's ``compile_fx``: the hand-off from dynamo to Inductor, shown in Inductor's stage.
INDUCTOR_BACKEND = "_TorchCompileInductorWrapper.__call__"


def _handoff(f: str, function: str, qualname: str) -> bool:
    """Whether the frame (``f`` its path, site-packages cut) is the Inductor backend's ``__call__`` in
    ``torch/__init__.py``; a frame recorded without its qualified name (older reports) is taken for it, since the
    other backends' wrapper (``_TorchCompileWrapper``) makes no kernel to show a path for."""
    if function != "__call__" or not re.search(r"(^|/)torch/__init__\.py$", f):
        return False
    return not qualname or qualname.endswith("InductorWrapper.__call__")  # the AOTInductor one too


def frame_stage(file: str, function: str = "", qualname: str = "") -> str:
    """The stage of one frame: ``user`` for the user's own code, else the compiler stage or library.
    ``qualname`` (the code's qualified name, ``Frame.qualname``) tells the Inductor backend's ``__call__`` in
    ``torch/__init__.py`` (:data:`INDUCTOR_BACKEND`, stage ``inductor``) from the other wrappers there.

    >>> frame_stage("/site-packages/torch/_inductor/scheduler.py", "fuse_nodes")
    'scheduler'
    >>> frame_stage("cell [3]")
    'user'
    >>> frame_stage("/opt/torch/.venv/lib/python3.12/site-packages/transformers/modeling_utils.py")
    'library'
    >>> frame_stage("/venv/site-packages/torch/__init__.py", "__call__", INDUCTOR_BACKEND)
    'inductor'
    >>> frame_stage("/venv/site-packages/torch/__init__.py", "__call__", "_TorchCompileWrapper.__call__")
    'torch'
    """
    f = str(file or "").replace("\\", "/")
    # an installed package's frame is what follows the last site-packages/: an environment made in a folder named
    # torch (/opt/torch/.venv/.../site-packages/transformers/...) holds libraries, not torch
    cut = max(f.rfind("/site-packages/"), f.rfind("/dist-packages/"))
    if cut >= 0:
        f = f[cut:]
    for rx, stage in _STAGE_RES:
        if rx.search(f):
            if callable(stage):
                return stage(str(function or ""))
            if stage == "torch" and _handoff(f, str(function or ""), str(qualname or "")):
                return "inductor"
            return stage
    return "user"


@functools.lru_cache(maxsize=4096)
def file_label(file: str) -> str:
    """A frame's file as the views name it (``Frame.file_label``): an installed package's file by its path inside
    site-packages (``torch/_dynamo/convert_frame.py``, ``transformers/models/gpt2/modeling_gpt2.py``: the module it
    is, where a bare ``__init__.py`` or ``common.py`` says nothing), torch's files elsewhere (a source build) and
    inductor_lens's own likewise from their package's folder, the standard library's by its path inside the library
    (``contextlib.py``, ``importlib/__init__.py``); the user's files, and anything else, by their name (``train.py``);
    a notebook cell (``cell [3]``) or code with no file (``<string>``) as it is.

    >>> file_label("/opt/torch/.venv/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py")
    'torch/_dynamo/convert_frame.py'
    >>> file_label("/home/me/pytorch/torch/__init__.py"), file_label("/usr/lib/python3.11/contextlib.py")
    ('torch/__init__.py', 'contextlib.py')
    >>> file_label("/home/me/inductor_lens/tests/train.py"), file_label("cell [3]")
    ('train.py', 'cell [3]')
    """
    f = str(file or "").replace("\\", "/")
    if f.startswith("<") or "/" not in f:
        return f
    cut = max(f.rfind("/site-packages/"), f.rfind("/dist-packages/"))
    if cut >= 0:
        return f[cut + len("/site-packages/") :]  # both names are as long
    stage = frame_stage(f)
    if stage not in ("user", "library"):  # torch's (a source build) or inductor_lens's own: from the package's folder
        top = "/inductor_lens/" if stage == "other" and "/inductor_lens/" in f else "/torch/"
        at = f.rfind(top)
        if at >= 0:
            return f[at + 1 :]
    lib = re.search(r"/lib/python3[^/]*/", f)
    if lib and stage == "library":
        return f[lib.end() :]
    return f[f.rfind("/") + 1 :]


_PIPELINE = ("aot", "inductor", "lowering", "scheduler", "codegen")


def stack_stages(stages: list[str]) -> list[str]:
    """The stages of a compiler call stack's frames (outermost first, each from :func:`frame_stage`) with a dynamo
    frame below AOT Autograd or Inductor given the stage it runs in: there it is a wrapper, not dynamo tracing (the
    lazy backward's compiler is wrapped in ``torch._dynamo.disable``, ``eval_frame.py``'s ``_fn``, so that dynamo
    never traces it).

    >>> stack_stages(["user", "aot", "dynamo", "torch", "inductor"])
    ['user', 'aot', 'aot', 'torch', 'inductor']
    """
    out: list[str] = []
    inside = ""
    for stage in stages:
        if stage == "dynamo" and inside:
            stage = inside
        elif stage in _PIPELINE:
            inside = stage
        out.append(stage)
    return out


#: The note on the frame where Dynamo hands its graph to Inductor (:data:`INDUCTOR_BACKEND`).
HANDOFF_NOTE = (
    "Dynamo hands its FX graph to the backend here: the object your torch.compile() call built for "
    "backend=\"inductor\" (torch/__init__.py's _TorchCompileInductorWrapper), which calls Inductor's compile_fx. "
    "Above is Dynamo; from here on Inductor, which calls AOT Autograd and is called back by it."
)
#: The note on the first frame of dynamo's frame-evaluation callback, entered from C, not from the line above it.
#: The note on dynamo's first frame where the line above it is not eval_frame's (:func:`compiler_stack_notes`).
CALLED_FRAME_NOTE = (
    "CPython called this, not the line above: that line called a function whose frame dynamo compiles (one your "
    "compiled function reaches, or the code after a graph break), and as that frame started CPython handed it to "
    "dynamo's frame-evaluation callback (C code, no Python frame of its own), which traces and compiles it before it "
    "runs."
)

EVAL_FRAME_NOTE = (
    "CPython called this, not the line above: that line (eval_frame.py) called your function with dynamo's "
    "frame-evaluation callback set, and as your function's frame started CPython handed it to the callback (C code, "
    "no Python frame of its own), which traces and compiles it before it runs."
)


#: The note on ``_compile_fx_inner``'s call of ``fx_codegen_and_compile`` in a compiler stack captured with the FX
#: graph cache turned off by the capture: the path passes the cache-bypass branch there, where a run with the cache on
#: passes the cache-miss branch (a few lines below, the same code) or, on a hit, none of lowering, fusion and codegen.
CACHE_BYPASS_NOTE = (
    "The lens turned Inductor's FX graph cache off so that Inductor really compiles: this line is the cache-bypass "
    "branch of _compile_fx_inner. With the cache on (a run without the lens), a first compile calls "
    "fx_codegen_and_compile from the cache-miss branch a few lines below instead, and a cache hit skips lowering, "
    "fusion and codegen altogether: nothing below this frame runs."
)


def compiler_stack_notes(stack: Sequence[tuple[str, str, str, str]], cache_turned_off: bool) -> list[str]:
    """A note for each frame of a compiler call stack (``(file, function, qualname, code)`` of each, outermost
    first), ``""`` where none: :data:`EVAL_FRAME_NOTE` on dynamo's first frame after ``eval_frame.py`` (the C hop),
    :data:`HANDOFF_NOTE` on the Inductor backend's ``__call__`` (its stage ``inductor``), and
    :data:`CACHE_BYPASS_NOTE` on ``_compile_fx_inner``'s call of ``fx_codegen_and_compile`` where the capture turned
    the FX graph cache off (``cache_turned_off``). Frames are told by file and
    function, never by line number, which moves from one torch to the next.

    >>> tp = "/sp/torch/"
    >>> compiler_stack_notes([(tp + "_dynamo/eval_frame.py", "compile_wrapper", "", "result = fn(*args, **kwargs)"),
    ...     (tp + "_dynamo/convert_frame.py", "__call__", "", "")], True)[1] == EVAL_FRAME_NOTE
    True
    >>> notes = compiler_stack_notes([(tp + "optim/optimizer.py", "_use_grad", "", "ret = func(*args, **kwargs)"),
    ...     (tp + "_dynamo/convert_frame.py", "__call__", "", ""), (tp + "_dynamo/convert_frame.py", "__call__", "", "")], True)
    >>> notes[1] == CALLED_FRAME_NOTE and notes[2] == ""
    True
    """
    out = []
    prev = ""
    seen: list[str] = []  # the files of the frames above: the hop is into dynamo's first frame only
    for file, function, qualname, code in stack:
        f = str(file or "").replace("\\", "/")
        note = ""
        if f.endswith("/torch/_dynamo/convert_frame.py") and prev.endswith("/torch/_dynamo/eval_frame.py"):
            note = EVAL_FRAME_NOTE
        elif (
            f.endswith("/torch/_dynamo/convert_frame.py")
            and prev
            and "/torch/_dynamo/" not in prev
            and not any(o.endswith("/torch/_dynamo/convert_frame.py") for o in seen)
        ):
            # a frame dynamo compiles that the compiled function calls (a compiled optimizer step's ``_use_grad`` calling
            # ``step``), or the code after a graph break: the same hop, from a line that is not eval_frame's
            note = CALLED_FRAME_NOTE
        elif (
            function == "__call__"
            and frame_stage(f, function, qualname) == "inductor"
            and f.endswith("/torch/__init__.py")
        ):
            note = HANDOFF_NOTE
        elif (
            cache_turned_off
            and f.endswith("/torch/_inductor/compile_fx.py")
            and function == "_compile_fx_inner"
            and "fx_codegen_and_compile(" in str(code or "")
        ):
            note = CACHE_BYPASS_NOTE
        out.append(note)
        prev = f
        seen.append(f)
    return out


#: torch's compile events (the timeline's phases) for people: name -> (a few words shown beside it, a sentence)
PHASES: dict[str, tuple[str, str]] = {
    "bytecode_tracing": (
        "dynamo tracing",
        "dynamo runs your Python bytecode symbolically and records the tensor ops as an FX graph",
    ),
    "insert_deferred_runtime_asserts": ("size checks", "dynamo adds the runtime checks its symbolic sizes rely on"),
    "build_guards": ("guards", "dynamo builds the guards that decide when this compiled code may be reused"),
    "backend_compile": ("backend", "dynamo hands the FX graph to the backend: AOT Autograd, then Inductor"),
    "_recursive_pre_grad_passes": ("pre-grad passes", "Inductor's passes on dynamo's FX graph, before autograd"),
    "create_aot_dispatcher_function": (
        "AOT Autograd",
        "AOT Autograd traces the graph down to ATen ops, forward and backward, and hands them to Inductor",
    ),
    "aot_collect_metadata": (
        "AOT metadata",
        "AOT Autograd runs the graph on fake tensors to learn its outputs, mutations and aliases",
    ),
    "aot_trace_joint_graph": ("joint graph", "AOT Autograd traces forward and backward together as one joint graph"),
    "_recursive_joint_graph_passes": ("joint passes", "Inductor's passes on the joint forward-backward graph"),
    "min_cut_rematerialization_partition": (
        "forward/backward split",
        "the joint graph is cut into forward and backward: what the forward saves, what the backward recomputes",
    ),
    "compile_fx.<locals>.fw_compiler_base": ("Inductor: forward", "Inductor compiles the forward graph"),
    "compile_fx.<locals>.bw_compiler": (
        "Inductor: backward",
        "Inductor compiles the backward graph (at the first .backward())",
    ),
    "inductor_compile": ("Inductor", "Inductor: from the post-grad FX graph to a loaded module of kernels"),
    "fx_codegen_and_compile": ("Inductor", "lowering, fusion and code generation of one graph"),
    "additional_fake_tensor_prop": ("fake tensors", "Inductor propagates fake tensors through the graph again"),
    "_recursive_post_grad_passes": (
        "post-grad passes",
        "Inductor's passes on the ATen graph: pattern matching, re-inplacing, ...",
    ),
    "pass.post_grad_passes.post_grad_custom_post_pass": (
        "your post-grad pass",
        "the pass set as torch._inductor.config.post_grad_custom_post_pass, run after Inductor's post-grad passes",
    ),
    "pass.joint_graph_passes.joint_custom_pre_pass": (
        "your joint-graph pass",
        "the pass set as torch._inductor.config.joint_custom_pre_pass, run before Inductor's joint-graph passes",
    ),
    "pass.joint_graph_passes.joint_custom_post_pass": (
        "your joint-graph pass",
        "the pass set as torch._inductor.config.joint_custom_post_pass, run after Inductor's joint-graph passes",
    ),
    "GraphLowering.run": (
        "lowering",
        "lowering: each FX op becomes Inductor IR (loops over buffers, or an extern call); a pointwise result "
        "that is not stored is inlined here into the loop that reads it, before any fusion",
    ),
    "GraphLowering.compile_to_fn": ("code generation", "code generation, then the compiled module loaded"),
    "code_gen": (
        "code generation",
        "the scheduler's fusion, the kernels' source and the wrapper, then the module loaded",
    ),
    "GraphLowering.codegen": (
        "fusion + codegen",
        "the scheduler fuses the IR nodes, then writes each kernel's source and the wrapper that calls them",
    ),
    "Scheduler.__init__": (
        "fusion",  # (beside its name, which says it is the scheduler's; short, to fit the timeline's bar)
        "the scheduler orders the IR nodes and fuses them into kernels (Scheduler.fuse_nodes): the fusion graph's "
        "boxes; ops that lowering inlined into one loop (GraphLowering.run) are one IR node already",
    ),
    "Scheduler.fused_nodes": ("fusion passes", "the fusion passes proper: which nodes share a kernel"),
    "Scheduler.codegen": ("kernel source", "each fused node's kernel source (C++ or Triton), in execution order"),
    "PythonWrapperCodegen.generate": (
        "wrapper",
        "the wrapper's source: call(), which runs the kernels in order (the output code)",
    ),
    "PyCodeCache.load_by_key_path": ("load", "the output code loaded as a Python module; C++ kernels are built here"),
    "compile_file": ("C++ build", "the C++ compiler builds the kernels"),
    "async_compile.wait": ("kernel builds", "waits for the kernels built in parallel (C++ or Triton)"),
}
_ATTEMPT_RE = re.compile(r"compile_attempt_(\d+)$")


#: dynamo's restarts that torch records by their exception class alone, in words
RESTARTS = {
    "TensorifyScalarRestartAnalysis": "a Python float that dynamo traced as a tensor had to be specialized to its "
    "value (TensorifyScalarRestartAnalysis)",
    "SpeculationRestartAnalysis": "a guess dynamo made while tracing turned out wrong (SpeculationRestartAnalysis)",
}
#: The same, in the few words beside the timeline's phase name (``compile_attempt_1 · guess failed``: the name and
#: its words fit the row's 38 characters, or the words are not shown).
RESTARTS_SHORT = {
    "TensorifyScalarRestartAnalysis": "float specialized",
    "SpeculationRestartAnalysis": "guess failed",
}
_CLASS_RE = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")


def restart_gloss(reason: str) -> str:
    """The few words beside the timeline's ``compile_attempt_N`` (N >= 1): why dynamo's tracing started again, ``up to
    the break`` where it met a graph break (it traces the frame again and compiles the part before it; the break's
    telling line is the phase's sentence), a restart torch records by its class alone by what it was
    (:data:`RESTARTS_SHORT`); ``dynamo, again`` where the reason is not known. The name and its words fit the row (the
    trial's ViT read "compile_attempt_1 · dynamo, again", which said not why; longer words are hidden; "after a
    break" read as the compile of the code after the break, which is another frame's, nu25 M3).

    >>> restart_gloss("Unsupported Tensor.backward() call"), restart_gloss("<class 'x.SpeculationRestartAnalysis'>")
    ('up to the break', 'guess failed')
    """
    m = _CLASS_RE.fullmatch(reason.strip())
    if m:
        return RESTARTS_SHORT.get(m.group(1), "dynamo, again")
    return "up to the break" if reason.strip() else "dynamo, again"


def restart_words(reason: str) -> str:
    """Why dynamo's tracing of a frame started again (one of ``compilation_metrics``' ``restart_reasons``), for
    people: a graph break's telling line (:func:`break_summary`), or a restart torch records by its class alone.

    >>> restart_words("<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>")[:40]
    'a Python float that dynamo traced as a t'
    """
    m = _CLASS_RE.fullmatch(reason.strip())
    if m:
        return RESTARTS.get(m.group(1), m.group(1))
    return break_summary(reason)


def phase_words(name: str, restarts: Sequence[str] = ()) -> tuple[str, str]:
    """A timeline phase (a torch compile event) for people: (a few words, a sentence); ``("", "")`` when not known.
    ``restarts``: why each attempt of the frame's tracing had to start again (``compilation_metrics``'
    ``restart_reasons``, in order), said on the attempt that followed.

    >>> phase_words("Scheduler.__init__")[0]
    'fusion'
    >>> phase_words("compile_attempt_1", ["Unsupported Tensor.item() call"])[1].rsplit(": ", 1)[-1]
    'Unsupported Tensor.item() call'
    """
    m = _ATTEMPT_RE.match(name)
    if m:
        n = int(m.group(1))
        why = restart_words(restarts[n - 1]) if 0 < n <= len(restarts) and restarts[n - 1] else ""
        again = (
            f"; attempt {n} ran because attempt {n - 1} had to start again" + (f": {why}" if why else "") if n else ""
        )
        reason = restarts[n - 1] if 0 < n <= len(restarts) and restarts[n - 1] else ""
        return (
            "dynamo" if not n else restart_gloss(reason),
            f"dynamo's attempt {n + 1} to trace and compile the frame (tracing starts again, as the next attempt, when it "
            f"must: a graph break found inside, a guess that failed){again}",
        )
    if name.startswith("pass.") and name not in PHASES:  # (a pass of the user's is not Inductor's)
        return ("", "one of Inductor's small passes on the FX graph")
    return PHASES.get(name, ("", ""))


# -- kernels -----------------------------------------------------------------------------------


def parse_size_hints(value: Any) -> Optional[dict]:
    """A Triton kernel's ``size_hints`` as a mapping: ``"{'x': 256, 'r0_': 128}"`` -> ``{"x": 256, "r0_": 128}``.
    The older list form ``[256, 128]`` is keyed by position. ``None`` when it is neither."""
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return {str(i): v for i, v in enumerate(value)}
    return None


_CONSTEXPR_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*:\s*tl\.constexpr\s*=\s*(.+?)\s*$", re.M)
_CONFIG_RE = re.compile(r"([A-Za-z_]\w*)=('[^']*'|\"[^\"]*\"|[^,\s]+)")


def choice_config(description: str) -> dict[str, str]:
    """Key=value pairs of an autotune choice's description (``"BLOCK_K=32, num_warps=8"``)."""
    return {m[1]: m[2].strip("'\"") for m in _CONFIG_RE.finditer(str(description or ""))}


_EXTRA_ARGS_RE = re.compile(r"['\"]extra_launcher_args['\"]\s*:\s*\[(?P<args>[^\]]*)\]")
_CONFIG_ARGS_RE = re.compile(r"['\"]config_args['\"]\s*:\s*(?P<dict>\{[^{}]*\})")
#: The constants of a Triton template's config that size its tiles: ``BLOCK_M``/``BLOCK_N``/``BLOCK_K`` (a matmul,
#: a convolution), ``BLOCK_M1``... (flex attention's backward), and ``GROUP_M`` (the tiles one group of programs
#: walks along M, for L2 reuse).
_TILE_RE = re.compile(r"BLOCK_[A-Z0-9_]+|GROUP_M")


def extra_launcher_args(source: str) -> list[str]:
    """The arguments Inductor's launcher takes after a Triton kernel's own (``inductor_meta["extra_launcher_args"]``
    in the kernel's decorator: a template's grid, whose launch the output code passes as numbers).

    >>> extra_launcher_args("inductor_meta={'grid_type': 'FixedGrid', 'extra_launcher_args': ['_grid_0', '_grid_1']}")
    ['_grid_0', '_grid_1']
    """
    m = _EXTRA_ARGS_RE.search(source or "")
    return [a.strip().strip("'\"") for a in m["args"].split(",") if a.strip()] if m else []


def template_block(config_args: Any) -> dict:
    """A Triton template's tile sizes (``KernelLaunch.block``) from its config's constants (``inductor_meta``'s
    ``config_args``, the constants the template's source declares ``tl.constexpr``): the ints named ``BLOCK_*`` and
    ``GROUP_M``, in the config's order; a dict's text (the decorator's) is read as a literal.

    >>> template_block("{'EVEN_K': True, 'ACC_TYPE': 'tl.float32', 'BLOCK_M': 64, 'BLOCK_N': 32, 'GROUP_M': 8}")
    {'BLOCK_M': 64, 'BLOCK_N': 32, 'GROUP_M': 8}
    """
    if isinstance(config_args, str):
        try:
            config_args = ast.literal_eval(config_args)
        except (ValueError, SyntaxError):
            return {}
    if not isinstance(config_args, dict):
        return {}
    return {
        str(k): v
        for k, v in config_args.items()
        if _TILE_RE.fullmatch(str(k)) and isinstance(v, int) and not isinstance(v, bool)
    }


def source_template_block(source: str) -> dict:
    """:func:`template_block` of the ``config_args`` a Triton template's decorator holds (``{}`` where it holds
    none: a kernel of another heuristic, a torch that did not write them)."""
    m = _CONFIG_ARGS_RE.search(source or "")
    return template_block(m["dict"]) if m else {}


_CEIL_DIV_RE = re.compile(r"-\(\(([\w.]+)\) // -\(([\w.]+)\)\)")


def grid_expr_text(expr: Any) -> str:
    """Inductor's grid expression as people read it: its ceiling division ``-((xnumel) // -(256))`` as
    ``ceil(xnumel / 256)``.

    >>> grid_expr_text("-((xnumel) // -(256))"), grid_expr_text(1)
    ('ceil(xnumel / 256)', '1')
    """
    return _CEIL_DIV_RE.sub(r"ceil(\1 / \2)", str(expr))


def launch_grid_text(grid: Optional[list], expr: Optional[list] = None, args: Sequence[Any] = ()) -> str:
    """A Triton launch's grid as the panel says it (``KernelLaunch.grid_text``): its size on each axis and the
    programs (CTAs) it launches; where a size it depends on is symbolic (an argument of the call whose value is an
    expression: ``xnumel`` passed as ``s0``), Inductor's expression and the sizes it was evaluated at; where it could
    not be evaluated, the expression alone. ``expr``: the grid as Inductor's ``GridExpr`` wrote it for the chosen
    config (``Kernel.metadata["launch"]["grid"]``); ``args``: the launch's ``LaunchArg`` list. ``""`` without a grid.

    >>> launch_grid_text([2048, 1, 1], ["xnumel", 1, 1])
    '2048 × 1 × 1 = 2,048 CTAs'
    >>> from types import SimpleNamespace as A
    >>> launch_grid_text([4, 1, 1], ["-((xnumel) // -(256))", 1, 1], [A(param="xnumel", value="s0", value_text="s0 = 1000")])
    '4 × 1 × 1 = 4 CTAs, ceil(xnumel / 256) × 1 × 1 at xnumel = s0 = 1000'
    >>> launch_grid_text(["-((xnumel) // -(256))", 1, 1])
    'ceil(xnumel / 256) × 1 × 1 (not evaluated)'
    """
    if not grid:
        return ""
    if not all(isinstance(g, int) and not isinstance(g, bool) for g in grid):
        return " × ".join(grid_expr_text(g) for g in grid) + " (not evaluated)"
    n = math.prod(grid)
    text = f"{' × '.join(str(g) for g in grid)} = {n:,} CTA{'' if n == 1 else 's'}"
    words = set(re.findall(r"[A-Za-z_]\w*", " ".join(str(e) for e in expr or [])))
    symbolic = [
        f"{a.param} = {a.value_text}"
        for a in args
        if getattr(a, "param", "") in words and isinstance(getattr(a, "value", None), str)
    ]
    if symbolic and expr:
        text += f", {' × '.join(grid_expr_text(e) for e in expr)} at {', '.join(symbolic)}"
    return text


def launch_config_text(grid_text: str, num_warps: Optional[int], num_stages: Optional[int], block: Any) -> str:
    """A launch's configuration in one line (``KernelLaunch.config_text``): grid, warps, stages and tile sizes.

    >>> launch_config_text("2 × 384 × 1 = 768 CTAs", 8, 1, {"XBLOCK": 256, "YBLOCK": 16})
    'grid 2 × 384 × 1 = 768 CTAs · 8 warps · 1 stage · XBLOCK=256 YBLOCK=16'
    """
    facts = [f"grid {grid_text}"] if grid_text else []
    if num_warps is not None:
        facts.append(f"{num_warps} warp{'' if num_warps == 1 else 's'}")
    if num_stages is not None:
        facts.append(f"{num_stages} stage{'' if num_stages == 1 else 's'}")
    if isinstance(block, dict) and block:
        facts.append(" ".join(f"{k}={v}" for k, v in block.items()))
    return " · ".join(facts)


def choice_what(name: str) -> str:
    """What an autotune choice is, in words, for its row where torch gave no description of it: ``""`` for a Triton
    template (its config says it); Inductor's C++ GEMM template for ``cpp_...`` (``cpp_CppMicroGemmFP32Vec_0``);
    MKL for ``_mkl_linear``; else a library kernel that ATen calls (cuBLAS on a GPU, MKL or oneDNN on a CPU).

    >>> choice_what("cpp_CppMicroGemmFP32Vec_0"), choice_what("_mkl_linear"), choice_what("mm")
    ("Inductor's C++ GEMM template", 'library kernel (MKL)', 'library kernel (ATen)')
    >>> choice_what("triton_mm_3")
    ''
    """
    name = str(name or "")
    if name.startswith("triton_"):
        return ""
    if name.startswith("cpp_"):
        return "Inductor's C++ GEMM template"
    if "mkl" in name.lower():
        return "library kernel (MKL)"
    return "library kernel (ATen)"


def autotune_chosen(name: str, language: str, source: str, metadata: dict, choices: list[dict]) -> Optional[str]:
    """The benchmarked choice that the emitted kernel came from, or ``None`` when that is not known.

    It is the choice named like the kernel (an extern kernel: its callee); for a C++ kernel of Inductor's C++ GEMM
    template (its source calls the template's ``kernel_micro_gemm``), the one such choice (``cpp_CppMicroGemm...``)
    where one was offered; for a Triton template, the choice whose every parameter matches the kernel's
    ``tl.constexpr`` constants and launch config.

    >>> tuned = [{"name": "cpp_CppMicroGemmFP32Vec_0"}, {"name": "_mkl_linear"}]
    >>> autotune_chosen("cpp_fused_addmm_relu_0", "cpp", "kernel_micro_gemm<false>(...);", {}, tuned)
    'cpp_CppMicroGemmFP32Vec_0'
    >>> autotune_chosen("cpp_fused_relu_0", "cpp", "out_ptr0[x0] = tmp1;", {}, tuned) is None
    True
    """
    callee = str(metadata.get("callee") or "")
    for c in choices:
        cname = str(c.get("name"))
        if cname == name or (callee and (cname == callee or "extern_kernels." + cname == callee)):
            return cname
    if language == "cpp" and "kernel_micro_gemm" in (source or ""):
        templates = [str(c.get("name")) for c in choices if str(c.get("name")).startswith("cpp_")]
        return templates[0] if len(templates) == 1 else None
    if language != "triton":
        return None
    have = {m[1]: m[2].strip("'\"") for m in _CONSTEXPR_RE.finditer(source or "")}
    launch = metadata.get("launch") if isinstance(metadata.get("launch"), dict) else {}
    for key in ("num_warps", "num_stages"):
        v = launch.get(key, metadata.get(key))
        if v is not None:
            have[key] = str(v)
    for c in choices:
        want = choice_config(str(c.get("description") or ""))
        if want and all(have.get(k) == v for k, v in want.items()):
            return str(c.get("name"))
    return None


#: What ``autotune.timed`` says of an autotuning's times (the capture's ``adapter._install_autotune``).
TIMED_TEXT = {
    "cache": "from torch's autotune cache (timed by an earlier run, not in this one)",
    "cache_this_capture": "from torch's autotune cache (timed earlier in this run, for an op of the same shapes)",
}


def autotune_heading(op: str, n: int, timed: Optional[str]) -> str:
    """The autotuning panel's heading: the op and how many choices, benchmarked or read from torch's autotune
    cache (``timed``: ``"benchmarked"``, ``"cache"``, ``"cache_this_capture"``; ``None``: not recorded, a report
    made before the capture told them apart, whose times were taken as benchmarked).

    >>> autotune_heading("packed_linear", 2, "benchmarked")
    'packed_linear · 2 choices benchmarked'
    >>> autotune_heading("packed_linear", 2, "cache")
    'packed_linear · 2 choices, cached times'
    """
    what = f"{op or 'op'} · {n} choice{'s' if n != 1 else ''}"
    return f"{what}, cached times" if timed in TIMED_TEXT else f"{what} benchmarked"


def autotune_timed_note(op: str, timed: Optional[str]) -> str:
    """What the panel says of times that were not measured by this compile: torch found every choice of the op at
    these input layouts in its autotune cache (``config.autotune_local_cache``) and benchmarked none. ``""`` for
    times benchmarked here or not recorded.

    >>> autotune_timed_note("mm", "benchmarked")
    ''
    """
    text = TIMED_TEXT.get(str(timed))
    if not text:
        return ""
    return f"{text[0].upper()}{text[1:]}: this compile benchmarked none of its choices."


def _is_template(choice: str) -> bool:
    return str(choice or "").startswith(("triton_", "cpp_"))


def autotune_fusion_note(op: str, chosen: Optional[str], fastest: Optional[str], epilogue: list, choices: list) -> str:
    """What the chosen template gained by fusing: the epilogue (``autotune.epilogue``) it computes in the matmul's
    kernel, where a library call would need a kernel of its own after it. Said whether or not the template was the
    fastest choice alone; ``""`` where a library call was chosen, or which choice is not known.

    >>> tuned = [{"name": "cpp_CppMicroGemmFP32Vec_0"}, {"name": "_mkl_linear"}]
    >>> autotune_fusion_note("packed_linear", "cpp_CppMicroGemmFP32Vec_0", "cpp_CppMicroGemmFP32Vec_0", ["relu"], tuned)
    'The template fused the epilogue relu: one kernel, where the library call (_mkl_linear) needs two (the call, then a kernel for relu).'
    >>> autotune_fusion_note("mm", "mm", "mm", ["relu"], [{"name": "mm"}])
    ''
    """
    if not chosen or not _is_template(chosen):
        return ""
    ops = ", ".join(str(o) for o in epilogue)
    library = [str(c.get("name")) for c in choices if isinstance(c, dict) and not _is_template(str(c.get("name")))]
    call = f"the library call ({library[0]})" if library else "a library call"
    if chosen == fastest:
        if not epilogue:
            return ""
        return f"The template fused the epilogue {ops}: one kernel, where {call} needs two (the call, then a kernel for {ops})."
    if epilogue:
        return (
            f"It wins overall because the template fuses the epilogue ({ops}) into the {op or 'matmul'}: one kernel "
            f"instead of {call} plus a separate pointwise kernel and its round trip through memory."
        )
    return (
        "It wins overall because, as a template, it can fuse neighbouring ops into the same kernel (epilogue fusion)."
    )


# -- compiles ----------------------------------------------------------------------------------


_RESUME = re.compile(r"torch_dynamo_resume_in_(\w+?)_at_(\d+)")


def resumed(function: str) -> Optional[tuple[str, int]]:
    """For dynamo's resume function (``torch_dynamo_resume_in_train_step_at_36``: the rest of ``train_step`` after
    its graph break at line 36, a function dynamo made), the function it resumes and the line of that graph break;
    a resume of a resume is its function's, after the later break. ``None`` for any other name.

    >>> resumed("torch_dynamo_resume_in_train_step_at_36"), resumed("train_step")
    (('train_step', 36), None)
    >>> resumed("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_5_at_9")
    ('f', 9)
    """
    m = _RESUME.fullmatch(function) if "torch_dynamo_resume_in_" in function else None
    if m is None:
        return None
    inner = resumed(m.group(1))
    return (inner[0] if inner else m.group(1), int(m.group(2)))


def function_label(function: str, qualname: str = "") -> str:
    """A frame's function as the views name it (``Frame.function_label``): its qualified name where one was recorded
    (``qualname``: ``ConvertFrame.__call__``, ``make_foreach_pointwise.<locals>.inner``, where seven frames of
    dynamo's, AOT Autograd's and the backend's all read ``__call__``), else its name; but dynamo's resume function,
    which runs the rest of the user's function after a graph break, as that function and the break: a stack
    ``train_step`` (line 36: ``opt.zero_grad()``) then ``torch_dynamo_resume_in_train_step_at_36`` (line 38:
    ``loss.backward()``) read as if line 36 called line 38.

    >>> function_label("torch_dynamo_resume_in_train_step_at_36")
    'train_step (after the graph break at line 36)'
    >>> function_label("forward"), function_label("__call__", "ConvertFrame.__call__")
    ('forward', 'ConvertFrame.__call__')
    """
    r = resumed(function)
    return f"{r[0]} (after the graph break at line {r[1]})" if r else (qualname or function)


def frame_label(frame: str) -> str:
    """The traced frame for people: ``"forward"`` -> ``"forward()"``, ``"Block.forward"`` -> ``"Block.forward()"``;
    ``"forward (via torch's inner wrapper)"`` keeps its note; dynamo's ``torch_dynamo_resume_in_f_at_13`` ->
    ``"f() after line 13"`` (:func:`resumed`).

    >>> frame_label("Block.torch_dynamo_resume_in_forward_at_13")
    'Block.forward() after line 13'
    """
    f = str(frame or "")
    if not f:
        return ""
    cls, _, name = f.rpartition(".")
    r = resumed(name)
    if r:
        return f"{cls}{'.' if cls else ''}{r[0]}() after line {r[1]}"
    head, sep, rest = f.partition(" (")
    return f"{head}(){sep}{rest}" if sep else f"{f}()"


def compile_label(compile_id: str, graph_kind: str, frame_lbl: str, suffix: str = "", complete: bool = True) -> str:
    """One label, the same shape for every compile: ``"forward(): backward graph · 0/0"``; a compile that did not
    finish (``Compile.complete`` False) says so.

    >>> compile_label("0/0", "inference", "f()", complete=False)
    'f(): inference graph · 0/0 (did not finish)'
    """
    who = frame_lbl.split(" (")[0] if frame_lbl else "compiled code"
    return f"{who}: {graph_kind} graph · {compile_id}{suffix}{'' if complete else ' (did not finish)'}"


#: When a training forward's backward compiles, by ``Compile.backward_compiled``.
_BACKWARD_WHEN = {
    "first_backward": "the backward compiles at the first .backward()",
    "with_forward": (
        "the backward compiled at once, with this forward, not at the first .backward(): AOT autograd does so when "
        "the forward saves symbolic sizes for it (dynamic shapes)"
    ),
    "": (
        "the backward compiles at the first .backward() (at once, with the forward, where the forward saves "
        "symbolic sizes for it)"
    ),
}


#: What the panel of a compile that never finished says first (``Compile.complete`` False).
INCOMPLETE_NOTE = (
    "This graph never ran compiled: Inductor generated its kernels, but the compile did not finish (it was "
    "interrupted, or dynamo raised after Inductor had compiled it: a ConstraintViolationError while building its "
    "guards), so its code was thrown away."
)


def graph_note(
    graph_kind: str,
    returned: list[str],
    saved: list[str],
    subgraph: str = "",
    backward_compiled: str = "",
    saved_known: bool = True,
    parameters: bool = True,
    writes_parameters: int = 0,
) -> str:
    """What a compile's panel says about its kind of graph: a ``forward`` is a training forward, compiled because
    grad mode was on and an input requires grad (an ``.eval()`` model's parameters still do: said where the graph
    has ``parameters``, not for a loss function of plain tensors), which also returns
    what the backward needs (``saved``, where known), and whose backward compiled when ``backward_compiled`` says
    (``Compile.backward_compiled``); ``saved_known=False``: its backward is not in the report (no ``.backward()``
    ran while the lens captured), so the Memory view cannot list the tensors saved (``Memory.saved_bytes`` is
    None). A ``subgraph`` (``true_graph_0``) is a branch Inductor lowered inside another graph. An ``inference`` graph
    that writes ``writes_parameters`` of the model's parameters in place is an update (an optimizer's step under
    ``no_grad``: "inference" read as a model's forward, nu25 L2). ``""`` for other inference and backward graphs.

    >>> graph_note("inference", [], [], writes_parameters=10)[:80]
    "An update of your model's parameters, not a forward: it writes 10 of them in pla"
    """
    if subgraph:
        return (
            f"A subgraph ({subgraph}): a torch.cond branch or a loop body that Inductor lowers as a graph of its own "
            "while it lowers the graph that calls it; its code is written into that graph's output code (the first "
            "graph of this compile id), and its kernels run when that graph runs and takes this branch."
        )
    if graph_kind == "inference" and writes_parameters:
        return (
            f"An update of your model's parameters, not a forward: it writes {plural(writes_parameters, 'of them', 'of them')} "
            "in place, as an optimizer's step does. Torch calls its graph an inference graph: it runs under torch.no_grad(), "
            "so nothing in it needs a gradient and no backward is compiled for it."
        )
    if graph_kind != "forward":
        return ""

    def bufs(names: list[str], noun: str = "buffer") -> str:  # buffers (storages): the tensors saved may be
        # several views of one; what it returns, outputs (views of an input among them, no buffer of their own)
        # up to 8 named (a model returning its KV cache before the loss and logits named those "2 more": nu20 O-f)
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        return f"{plural(len(names), noun)} ({shown})"

    when = _BACKWARD_WHEN[""]  # not recorded (an older report, a TORCH_TRACE import): both cases said
    listed = (
        "the Memory view lists the tensors saved, several views of one buffer apart"
        if saved_known
        else "its backward did not compile while the lens captured, so the Memory view cannot list the tensors saved"
    )
    what = (
        f" It returns {bufs(returned, 'output')} to your code and saves {bufs(saved)} for the backward ({listed})."
        if returned and saved
        else f" It returns {bufs(returned, 'output')} to your code and saves no output for the backward."
        if returned
        else ""
    )
    why = " (a model's parameters do, even after .eval())" if parameters else ""
    return (
        f"A training forward: grad mode was on and an input requires grad{why}, so AOT autograd split forward from "
        f"backward; {_BACKWARD_WHEN.get(backward_compiled, when)}."
        f"{what} Under torch.no_grad() or torch.inference_mode() it would compile as one inference graph that "
        "saves nothing."
    )


#: Extern calls max-autotune can offer other implementations of (Inductor's GEMM and convolution templates).
TUNABLE_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "convolution", "_int_mm", "scaled_mm", "_scaled_mm"})


def autotune_note(max_autotune: bool, gemm_backends: str, freezing: bool, calls: list[str], cpu: bool) -> str:
    """What a compile's panel says when max-autotune was on and nothing was tuned (no choice was benchmarked:
    Inductor benchmarks only where it has more than one implementation of an op). ``calls``: the short ops of its
    extern calls max-autotune could tune (``TUNABLE_OPS``); ``cpu``: it compiled for the CPU, where Inductor offers
    its C++ GEMM template only for a weight it can treat as a constant (``use_cpp_gemm_template``)."""
    if not max_autotune:
        return ""
    if not calls:
        return (
            "max-autotune was on, but this graph has no matmul or convolution for it to tune: its kernels are "
            "Inductor's own (their launch configurations are tuned where they run on a GPU)."
        )
    ops = ", ".join(dict.fromkeys(calls))
    n = len(calls)
    text = (
        f"max-autotune was on, but Inductor had no implementation of {'this' if n == 1 else 'these'} {n} "
        f"call{'s' if n != 1 else ''} ({ops}) but ATen's to choose from, so it benchmarked nothing and kept "
        f"{'it' if n == 1 else 'them'}."
    )
    if cpu and "CPP" not in [b.strip() for b in gemm_backends.upper().split(",")]:
        text += (
            f" On the CPU, its C++ GEMM template is a choice only when max_autotune_gemm_backends names CPP "
            f"(here: {gemm_backends or 'empty'})."
        )
    elif cpu and not freezing:
        text += (
            " On the CPU, Inductor offers its C++ GEMM template only for a weight it can treat as a constant: "
            "torch._inductor.config.freezing = True, for inference under torch.no_grad()."
        )
    return text


#: Where Inductor runs the pass each of its config's custom-pass settings takes (``torch/_inductor/fx_passes``)
CUSTOM_PASS_WHERE = {
    "pre_grad_custom_pass": "on dynamo's graph, before autograd (Inductor's pre-grad passes)",
    "joint_custom_pre_pass": "on the joint graph, before Inductor's joint-graph passes",
    "joint_custom_post_pass": "on the joint graph, after Inductor's joint-graph passes",
    "post_grad_custom_pre_pass": "on the post-grad graph, before Inductor's post-grad passes",
    "post_grad_custom_post_pass": "on the post-grad graph, after Inductor's post-grad passes",
}


def custom_pass_note(passes: Sequence[Any]) -> str:
    """What a compile's panel says of the user's graph passes set in Inductor's config as it compiled
    (``Compile.custom_passes``): which pass, where it runs, and that the graphs after it are not Inductor's alone;
    ``""`` for none.

    >>> from types import SimpleNamespace as P
    >>> custom_pass_note([P(setting="post_grad_custom_post_pass", name="s4_pass.run.<locals>.P")])[:120]
    'A graph pass of yours ran in this compile: s4_pass.run.<locals>.P (torch._inductor.config.post_grad_custom_post_pass), o'
    """
    if not passes:
        return ""
    each = [
        f"{p.name} (torch._inductor.config.{p.setting}), {CUSTOM_PASS_WHERE.get(p.setting, 'in Inductor')}"
        for p in passes
    ]
    one = len(each) == 1
    return (
        f"{'A graph pass' if one else 'Graph passes'} of yours ran in this compile: {'; '.join(each)}. The graphs "
        f"after {'it' if one else 'them'}, and the kernels made from them, are not Inductor's alone: an op that "
        "differs from your code's may be your pass's."
    )


def readable_reasons(payload: Any) -> str:
    """Recompile reasons as lines of text; the structured trace gives a JSON list (or its repr)."""
    if isinstance(payload, str):
        text = payload.strip()
        if not text.startswith(("[", "(")):
            return text
        for parse in (_json_loads, ast.literal_eval):
            try:
                value = parse(text)
            except Exception:
                continue
            if isinstance(value, (list, tuple)):
                return "\n".join(str(v).strip() for v in value if str(v).strip())
            break
        return text
    if isinstance(payload, (list, tuple)):
        return "\n".join(str(v).strip() for v in payload if str(v).strip())
    return "" if payload is None else str(payload)


def compile_why(recompile_reason: str, trigger_reason: str) -> str:
    """Why a compile happened, as the views say it: the failed guards of a recompile, else the trigger's reason;
    a JSON list of reasons (as the structured trace gives them) becomes one per line.

    >>> compile_why("", '["size mismatch at index 0", "x changed"]').splitlines()
    ['size mismatch at index 0', 'x changed']

    A guard on ``___stackN`` (dynamo's name for a value the code before a graph break hands to the code after it,
    such as the number ``.item()`` returned) says what that is:

    >>> compile_why("2/0: ___stack0 == 18.05", "").splitlines()[1]  # doctest: +ELLIPSIS
    "___stack0: a value the code before the graph break handed to the code after it (dynamo's name for it; ..."

    Two ``torch.compile`` calls of the same code (``mode="reduce-overhead"``, then ``mode="max-autotune"``) fail
    dynamo's backend guard; torch's words advise ``functools.partial``, which is for a backend function, not this:

    >>> torch_says = ("0/0: BACKEND_MATCH failure: Cached backend: _TorchCompileInductorWrapper (id=0x1). New "
    ...               "backend: _TorchCompileInductorWrapper (id=0x2). wrap your backend in functools.partial")
    >>> compile_why(torch_says, "").splitlines()[-1]  # doctest: +ELLIPSIS
    'The same code compiled by a second torch.compile call (each call makes its own Inductor backend, ...'
    """
    text = guard_lines(readable_reasons(recompile_reason or trigger_reason or "")).strip()
    if "BACKEND_MATCH failure" in text and text.count("_TorchCompileInductorWrapper") >= 2:
        # torch's advice (functools.partial) is for a backend function made anew each time; two Inductor wrappers
        # are two torch.compile calls of the same code, each with its own settings
        text += (
            "\nThe same code compiled by a second torch.compile call (each call makes its own Inductor backend, with "
            "its own mode and options): a compile of one does not serve the other"
        )
    stacks = sorted(set(_STACK_NAME.findall(text)))
    if stacks:
        text += (
            f"\n{', '.join(stacks)}: {'a value' if len(stacks) == 1 else 'values'} the code before the graph break "
            "handed to the code after it (dynamo's name for it; a Python number such as .item() returns is compiled "
            "in as the value it had, so another value compiles again)"
        )
    return text


_STACK_NAME = re.compile(r"\b___stack\d+\b")


_GUARD_AT = re.compile(
    r"^(?P<guard>.*?\S)\s{2,}# (?P<code>.*?)\s{2,}# (?P<at>\S+:\d+)(?: in (?P<fn>\S+))?"
    r"(?:\s+\(HINT: (?P<hint>.*)\))?\s*$"  # torch's advice on some guards (an int attribute of a module)
)
# a guard torch made in its own code: no user line, only ``  # (file:line in function)``
_GUARD_IN_TORCH = re.compile(r"^(?P<guard>.*?\S)\s+# \((?P<at>[^()\s]+:\d+)(?: in (?P<fn>\w+))?\)\s*$")
# a guard torch could not place (``# (unknown source ..., please file a bug)``), and the tensor it made of a float
_GUARD_UNKNOWN = re.compile(r"^(?P<guard>.*?\S)\s+# \(unknown source .*\)\s*$")
_AS_TENSOR = re.compile(r"___as_tensor\((\w+)\)\.item\(\)")
_STACK_FILE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<fn>\S+))?')


def guard_lines(text: str) -> str:
    """Failed guards as people read them: torch pads each guard to a column and follows it with where it was made
    (``  # code  # file:line in function``, the file cut short by torch) and then that place again as a "User stack
    trace:"; one line each, the place taken from the stack (its innermost ``File``: the whole path, as a notebook
    cell is named), else from the comment. A line that does not read so is kept as it is.

    >>> guard_lines("1/0: i == 0            # x = torch.sin(x) + i  # mp/m.py:5 in step\\nUser stack trace:\\n"
    ...             '  File "/tmp/m.py", line 5, in step\\n    x = torch.sin(x) + i')
    '1/0: i == 0 (made at m.py:5 in step: x = torch.sin(x) + i)'
    >>> guard_lines("0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4")
    "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4"
    >>> guard_lines("0/0: s == 'a # b'  # if s == 'a # b':  # m.py:3 in f")
    "0/0: s == 'a # b' (made at m.py:3 in f: if s == 'a # b':)"

    torch's hint on a guard follows it on a line of its own; the user's own comment on the line is kept, not its
    padding:

    >>> print(guard_lines("0/0: self.steps == 0     # self.steps += 1        # n    # mp/m.py:12 in update (HINT: "
    ...                   "make it a tensor.)\\nUser stack trace:\\n" '  File "/tmp/m.py", line 12, in update'))
    0/0: self.steps == 0 (made at m.py:12 in update: self.steps += 1  # n)
    torch's hint: make it a tensor.

    A guard torch made itself names the place inside torch, or says what it means (a float argument that AOT's
    tensorify pass could not keep symbolic is specialized, and the frame traced again):

    >>> guard_lines("0/1: theta == 3.0  # (_dynamo/output_graph.py:3375 in remove_tensorify_specialized_graphargs)")
    '0/1: theta == 3.0 (made by torch: it could not keep this float argument symbolic, so it compiled its value in)'
    >>> guard_lines("0/0: n == 2  # (_dynamo/variables/builder.py:10 in wrap_symint)")
    '0/0: n == 2 (made inside torch, at _dynamo/variables/builder.py:10 in wrap_symint)'

    torch 2.11 names the same float guard by the tensor it made of the float, with no place:

    >>> guard_lines("0/1: ___as_tensor(theta).item() == 3.0  # (unknown source ___as_tensor(theta).item(), please file a bug)")
    '0/1: theta == 3.0 (made by torch: it could not keep this float argument symbolic, so it compiled its value in)'
    """
    out: list = []  # lines, or [guard, code, place] of a guard whose place the stack after it may give
    in_stack = False
    for line in text.splitlines():
        if line.strip() == "User stack trace:":
            in_stack = True
            continue
        if in_stack:
            m = _STACK_FILE.match(line)
            last = next((x for x in reversed(out) if isinstance(x, list)), None) if out else None
            if m and last is not None and (isinstance(out[-1], list) or out[-1].startswith("torch's hint: ")):
                last[2] = f"{_base(m['file'])}:{m['line']}" + (f" in {m['fn']}" if m["fn"] else "")
            if not line.strip() or line.startswith(" "):
                continue
            in_stack = False
        m = _GUARD_AT.match(line)
        t = None if m else _GUARD_IN_TORCH.match(line)
        u = None if m or t else _GUARD_UNKNOWN.match(line)  # only torch 2.11's float guard is read; others kept
        if m:
            code = re.sub(r"\s{2,}#", "  #", m["code"].strip())  # the user's own comment, not torch's padding
            out.append([m["guard"], code, m["at"] + (f" in {m['fn']}" if m["fn"] else "")])
            if m["hint"]:
                out.append(f"torch's hint: {m['hint']}")
        elif u and _AS_TENSOR.search(u["guard"]):  # torch 2.11's tensorify guard
            guard = _AS_TENSOR.sub(r"\1", u["guard"])
            out.append(
                f"{guard} (made by torch: it could not keep this float argument symbolic, so it compiled its value in)"
            )
        elif t and t["fn"] == "remove_tensorify_specialized_graphargs":
            out.append(
                f"{t['guard']} (made by torch: it could not keep this float argument symbolic, so it compiled its value in)"
            )
        elif t:
            out.append(f"{t['guard']} (made inside torch, at {t['at']}" + (f" in {t['fn']})" if t["fn"] else ")"))
        else:
            out.append(line)
    return "\n".join(f"{x[0]} (made at {x[2]}: {x[1]})" if isinstance(x, list) else x for x in out)


def contents_text(kinds: Iterable[str], kernels: int) -> str:
    """What a compile holds, as its panel says it: the fused nodes drawn as boxes by kind (in the order they first
    come; a call of control flow's subgraphs by its op, not ``extern``) and the kernels they run in.

    >>> contents_text(["pointwise", "reduction", "pointwise", "extern"], 3)
    '4 fused nodes (2 pointwise, 1 reduction, 1 extern) in 3 kernels'
    >>> contents_text(["invoke_subgraph", "invoke_subgraph", "reduction"], 1)  # two calls of a repeated region
    '3 fused nodes (2 invoke_subgraph, 1 reduction) in 1 kernel'
    """
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    n = sum(counts.values())
    by_kind = f" ({', '.join(f'{v} {k}' for k, v in counts.items())})" if counts else ""
    return f"{plural(n, 'fused node')}{by_kind} in {plural(kernels, 'kernel')}"


def kernels_text(n: int) -> str:
    """How many kernels, as every line that counts them says it: a report's totals (``Report.summary``, the widget's
    text), the magic's line under a cell ("Inductor compiled from here, ...") and the progress lines of the magic and
    the CLI. The magic's line said "2 kernels generated" above a widget that said "2 kernel(s)".

    >>> kernels_text(1), kernels_text(3)
    ('1 kernel(s)', '3 kernel(s)')
    """
    return f"{n} kernel(s)"


def plural(n: int, one: str, many: str = "") -> str:
    """``n`` and the word for it: ``1 kernel``, ``3 kernels``, ``2 repeats`` (``many`` where not ``one + "s"``)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _json_loads(text: str) -> Any:
    import json

    return json.loads(text)


# -- fused nodes -------------------------------------------------------------------------------


def refusal_pairs_text(pairs: list[str]) -> str:
    """What a "Why not fused" row says of the member pairs Inductor tried (``Refusal.pairs_text``): the one pair,
    ``(op3 + op7)``, or how many, ``(3 node pairs)``."""
    return f"({plural(len(pairs), 'node pair')})" if len(pairs) > 1 else f"({pairs[0]})" if pairs else ""


@functools.lru_cache(maxsize=4096)
def short_op(target: str) -> str:
    """``"aten.mm.default"`` -> ``"mm"``; ``"_operator.getitem"`` -> ``"getitem"``; a custom op
    ``"trial.softclip.default"`` -> ``"softclip"``. The one short op name:
    ``GraphNode.short_op``, ``FusedNode.ops``, boxes, the compare page's moved ops all read it."""
    t = str(target or "").replace("torch.ops.", "")
    t = re.sub(r"^aten\.", "", t)
    parts = [p for p in t.split(".") if p]
    if not parts:
        return t
    if len(parts) >= 2 and parts[0] in (
        "_operator", "operator", "builtins", "torch", "prims", "quantized", "math", "higher_order"
    ):  # fmt: skip
        return parts[1]  # "higher_order.cond" -> "cond"
    if len(parts) >= 3:  # another namespace's op (``ns.op.overload``: a custom op, torchvision, collectives)
        return parts[1]
    if len(parts) == 2 and parts[0] in TORCH_NAMESPACES:  # an op of torch's without its overload: mkl._mkl_linear
        return parts[1]
    return parts[0]


#: Op namespaces of torch itself (and Python's): an op of any other is a custom op (``custom_namespace``).
TORCH_NAMESPACES = frozenset(
    {
        "aten", "prims", "_prims", "rngprims", "_operator", "operator", "builtins", "torch", "math", "higher_order",
        "_c10d_functional", "c10d_functional", "c10d", "_dtensor", "mkldnn", "onednn", "quantized",
        "quantized_decomposed", "_quantized", "inductor", "_inductor", "profiler", "mkl",
    }
)  # fmt: skip


def custom_namespace(target: str) -> str:
    """The namespace of a custom op (``trial.softclip.default`` -> ``trial``: a ``torch.library`` op, opaque to a
    count from shapes); ``""`` for an op of torch's own namespaces (``TORCH_NAMESPACES``) or Python's."""
    parts = str(target or "").replace("torch.ops.", "").split(".")
    return parts[0] if len(parts) >= 3 and parts[0] not in TORCH_NAMESPACES else ""


#: Ops that move no data of their own: a fused node made only of these, with no kernel, is glue.
GLUE_OPS = frozenset(
    {
        "getitem",
        "view",
        "_unsafe_view",
        "reshape",
        "as_strided",
        "reinterpret_tensor",
        "expand",
        "permute",
        "t",
        "transpose",
        "squeeze",
        "unsqueeze",
        "alias",
        "slice",
        "select",
        # Inductor's own: the graph's output given the strides torch promised (a copy where they differ, a kernel
        # then, never glue); the value is its input's (a frozen graph's last linear: `head _mkl_linear`)
        "inductor_force_stride_order",
    }
)


#: Control flow whose branches or body Inductor lowers as subgraphs (``Compile.subgraph``): the node that calls
#: them has no kernel of its own but runs theirs, so it is a box, never glue. ``invoke_subgraph``: a call of a
#: repeated region (``torch.compiler.nested_compile_region``), lowered once and run at each call.
CONTROL_FLOW_OPS = frozenset(
    {"cond", "while_loop", "while_loop_stack_output", "scan", "associative_scan", "map_impl", "invoke_subgraph"}
)


def control_flow(ops: Iterable[str]) -> str:
    """The control-flow op among a fused node's ops (:data:`CONTROL_FLOW_OPS`: ``cond``), or ``""``."""
    return next((o for o in ops if o in CONTROL_FLOW_OPS), "")


def branches_text(flow: str, branches: Sequence[str]) -> str:
    """The subgraphs a control-flow call runs, as its box lists them: alternatives for a ``cond``
    (``true_graph_0 | false_graph_0``), all of them for the others (a ``while_loop``'s condition and body)."""
    return (" | " if flow == "cond" else ", ").join(branches)


def no_kernel_reason(kernel: Optional[str], ops: Iterable[str], branches: Sequence[str]) -> str:
    """``FusedNode.no_kernel_reason``: why a fused node has no kernel, as the panel says it. ``branches``: the
    subgraphs a control-flow call runs, by the names of their compiles (``Compile.subgraph``).

    >>> no_kernel_reason(None, ["cond"], ["true_graph_0", "false_graph_0"])  # doctest: +NORMALIZE_WHITESPACE
    'torch.cond runs one of true_graph_0, false_graph_0 here, the one its predicate picks: Inductor lowered each as
    a graph of its own, and their kernels are compiles of their own (pick "true_graph_0 (a subgraph)" in the compile
    menu).'
    >>> no_kernel_reason(None, ["while_loop"], ["while_loop_cond_graph_0", "while_loop_body_graph_0"])[:85]
    'torch.while_loop runs while_loop_cond_graph_0 and while_loop_body_graph_0 here, again'
    >>> no_kernel_reason(None, ["_assert_scalar"], [])[:37]
    'A runtime check, not a kernel: the co'
    """
    if kernel:
        return ""
    flow = control_flow(ops)
    if flow == "invoke_subgraph" and len(branches) == 1:
        return region_call_text(branches[0])
    if flow and branches:
        if flow == "cond":
            runs = f"runs one of {', '.join(branches)} here, the one its predicate picks"
        elif flow.startswith("while_loop") and len(branches) == 2:
            runs = f"runs {branches[0]} and {branches[1]} here, again and again while the first says so"
        else:
            runs = f"runs {', '.join(branches)} here"
        return (
            f"torch.{flow} {runs}: Inductor lowered each as a graph of its own, and their kernels are compiles of "
            f'their own (pick "{branches[0]} (a subgraph)" in the compile menu).'
        )
    ops = set(ops)
    if "_assert_scalar" in ops:
        return CHECK_TEXT
    if "_local_scalar_dense" in ops:
        return ITEM_TEXT
    return "This node generated no kernel of its own (a no-op, a view, or a buffer reuse)."


def region_call_text(region: str, launches: Optional[int] = None, compile_id: str = "") -> str:
    """``FusedNode.no_kernel_reason`` of a call of a repeated region (``invoke_subgraph``, from
    ``torch.compiler.nested_compile_region``): it has no kernel of its own, but runs the region's, every time.

    >>> region_call_text("repeated_subgraph0", 5, "0/0 inference #2")[:60]
    'Calls repeated_subgraph0 here, which launches its 5 kernels:'
    """
    runs = f", which launches its {plural(launches, 'kernel')}" if launches is not None else ""
    where = f"{compile_id}: pick" if compile_id else "pick"
    return (
        f"Calls {region} here{runs}: a region marked with torch.compiler.nested_compile_region, which Inductor "
        "lowered once as a graph of its own and runs at each of its calls, with that call's inputs and weights. Its "
        f'kernels are in its own compile ({where} "{region} (a subgraph)" in the compile menu).'
    )


def region_call_label(region: str, launches: int) -> str:
    """``FusedNode.label`` of a call of a repeated region: what it runs, and how many launches that is (its box's
    second line says ``invoke_subgraph``, its op; a longer label was cut short on the box).

    >>> region_call_label("repeated_subgraph0", 5)
    'repeated_subgraph0 (5 kernels)'
    """
    return f"{region} ({plural(launches, 'kernel')})"


def region_kernels_note(calls: Sequence[tuple[str, str, int, int]]) -> str:
    """``Compile.kernels_note``: what the Kernels view says beside a graph's own kernels where it calls repeated
    regions (``calls``: each region's name, compile id, how often this graph calls it and its launches per call): their
    kernels are in the region's compile, launched at every call (nu25 M5: "4 kernels" where 46 launches run).

    >>> region_kernels_note([("partitioned_fw_subgraph_0_0", "0/0 forward #2", 3, 14)])
    '+ 3 calls of partitioned_fw_subgraph_0_0 (its 14 kernel launches each: 42 in all; its kernels are listed in 0/0 forward #2)'
    """
    return "; ".join(
        f"+ {plural(n, 'call')} of {name} (its {plural(launches, 'kernel launch', 'kernel launches')} each: "
        f"{n * launches} in all; its kernels are listed in {rid})"
        for name, rid, n, launches in calls
    )


def region_note(region: str, callers: Sequence[str], modules: Sequence[str], launches: int, named_in: str = "") -> str:
    """``Compile.graph_note`` of a repeated region's compile: the graph(s) that call it (``callers``), once per call
    (``modules``: each call's module, ``""`` at the top level), what that is in kernel launches, and the module whose
    call its ops are named after (``named_in``: the one of ``modules`` its fused nodes' module paths are in; a
    backward's region is called last layer first, its ops named after the forward's first call).

    >>> region_note("repeated_subgraph0", ["0/0 inference"], ["layers.0", "layers.1"], 5).split("code. ")[1][:77]
    '0/0 inference calls it 2 times, from layers.0, layers.1: every time, uncondit'
    >>> "from" in region_note("repeated_subgraph0", ["0/0 inference"], ["layers.0", "", ""], 5)  # not only layers.0
    False
    """
    n = len(modules)
    # each call by its module, where every call has one (a report made before derived 36 filed later calls in none)
    named = list(dict.fromkeys(modules)) if all(modules) else []
    by = f", from {', '.join(named[:8])}{f' and {len(named) - 8} more' if len(named) > 8 else ''}" if named else ""
    return (
        f"A repeated region ({region}): a block marked with torch.compiler.nested_compile_region, which Inductor "
        f"lowers once as a graph of its own while it lowers the graph that calls it, and writes into that graph's "
        f"output code. {' and '.join(callers)} calls it {plural(n, 'time')}{by}: every time, unconditionally, "
        f"so its {plural(launches, 'kernel launch', 'kernel launches')} run {plural(n, 'time')}"
        f" ({launches * n} in all). Its ops are named after one call's{f' (in {named_in})' if named_in else ''}: "
        "every call runs the same code on its own inputs and weights."
    )


#: ``no_kernel_reason`` of an ``AssertScalar`` node (its op ``_assert_scalar``), a runtime check in the wrapper.
CHECK_TEXT = (
    "A runtime check, not a kernel: the compiled code raises a RuntimeError here when a value known only at run "
    "time breaks what the graph was compiled for (a data-dependent size, from nonzero, unique or a mask, within "
    "its bounds; a torch._check of yours). Its condition is the if-line in the output code."
)

#: ``no_kernel_reason`` of a ``DynamicScalar`` node (``.item()``: ``_local_scalar_dense``).
ITEM_TEXT = (
    "Reads one value of a tensor into a Python number (.item(), a data-dependent value), in the wrapper, not in a "
    "kernel: on a GPU the host waits here for the device to finish what came before."
)


#: How many op names a merge sentence lists for one scheduler node before it says how many more there are.
MERGE_OPS_SHOWN = 6


def _ops_listed(ops: Sequence[str]) -> str:
    shown = ", ".join(ops[:MERGE_OPS_SHOWN])
    return shown + (f" and {len(ops) - MERGE_OPS_SHOWN} more" if len(ops) > MERGE_OPS_SHOWN else "")


#: The lines ``cpp.enable_kernel_profile`` (turned on by a profiled capture on a CPU) adds to each generated C++ kernel:
#: the header of the record-function handle, and the handle that names the kernel's profiler event
_KERNEL_PROFILE_LINE = re.compile(
    r"^#include <torch/csrc/inductor/aoti_runtime/utils\.h>\n|^[ \t]*torch::aot_inductor::RAIIAtenRecordFunctionHandle "
    r"record_\w+\(.*\);[ \t]*\n",
    re.M,
)


def without_kernel_profile(source: str) -> str:
    r"""A C++ kernel's source without the two lines a profiled capture's ``cpp.enable_kernel_profile`` adds (its
    ``#include <torch/csrc/inductor/aoti_runtime/utils.h>`` and its ``RAIIAtenRecordFunctionHandle record_...``): the
    source torch writes without profiling. Any other source as it is.

    >>> src = (
    ...     "\n#include <torch/csrc/inductor/aoti_runtime/utils.h>\n#include <torch/csrc/inductor/cpp_prefix.h>\n"
    ...     'extern "C" void kernel(float* out_ptr0)\n{\n    torch::aot_inductor::RAIIAtenRecordFunctionHandle '
    ...     'record_graph_0_cpp_fused_relu_0_("graph_0_cpp_fused_relu_0", nullptr);\n    out_ptr0[0] = 0;\n}\n'
    ... )
    >>> print(without_kernel_profile(src))
    <BLANKLINE>
    #include <torch/csrc/inductor/cpp_prefix.h>
    extern "C" void kernel(float* out_ptr0)
    {
        out_ptr0[0] = 0;
    }
    <BLANKLINE>
    """
    return _KERNEL_PROFILE_LINE.sub("", source) if "RAIIAtenRecordFunctionHandle" in source else source


def kernel_profile_record(source: str) -> str:
    """The profiler event a profiled C++ kernel records itself under: the name its ``RAIIAtenRecordFunctionHandle``
    gives (``graph_0_cpp_fused_relu_0``; a C++ GEMM template's is its inner function's,
    ``graph_0_gemm_m32n64k256_kernel``), ``""`` for a source without one.

    >>> kernel_profile_record('  torch::aot_inductor::RAIIAtenRecordFunctionHandle record_g_("graph_0_k", nullptr);')
    'graph_0_k'
    """
    m = re.search(r'RAIIAtenRecordFunctionHandle\s+record_\w+\(\s*"([^"]+)"', source or "")
    return m.group(1) if m else ""


def kernel_source_note(language: str, source: str) -> str:
    """``Kernel.source_note``: for a C++ kernel compiled with ``cpp.enable_kernel_profile`` (a profiled capture turns
    it on: ``inductor-lens run --profile``, ``inspect(..., profile=True)``), that its source is instrumented, and how;
    ``""`` for any other kernel.

    >>> print(kernel_source_note("cpp", '  torch::aot_inductor::RAIIAtenRecordFunctionHandle record_g_("graph_0_k", nullptr);'))
    Instrumented for profiling: the profiled capture compiled this kernel with cpp.enable_kernel_profile, which adds two lines that torch does not write otherwise: #include <torch/csrc/inductor/aoti_runtime/utils.h> and a RAIIAtenRecordFunctionHandle that records each call as the profiler event graph_0_k. Its reproducer runs it without them.
    >>> kernel_source_note("cpp", 'extern "C" void kernel(float* out_ptr0) {}')
    ''
    """
    record = kernel_profile_record(source) if language == "cpp" else ""
    if not record:
        return ""
    return (
        "Instrumented for profiling: the profiled capture compiled this kernel with cpp.enable_kernel_profile, which "
        "adds two lines that torch does not write otherwise: #include <torch/csrc/inductor/aoti_runtime/utils.h> and "
        f"a RAIIAtenRecordFunctionHandle that records each call as the profiler event {record}. Its reproducer runs "
        "it without them."
    )


def stage_paths(paths: Sequence[Sequence[Any]]) -> tuple[int, str]:
    """How many frames the paths of a compile's stages share from the user's call (lowering's, fusion's and a kernel's
    code generation's: ``Compile.lowering_stack``, ``fusion_stack``, ``Kernel.compiler_stack``; frames the same by file
    and line), and the panel's sentence of it (``Kernel.stage_shared``, ``stage_note``); ``(0, "")`` where no stage's
    path but code generation's was recorded.

    >>> from types import SimpleNamespace as F
    >>> a, b = F(file="/p/torch/_inductor/compile_fx.py", line=9, function="fx_codegen_and_compile", function_label=""), F(file="x.py", line=3)
    >>> stage_paths([[a, b], [a], [a, F(file="y.py", line=1)]])
    (1, "The three stages of this graph's compile, each from your call (top) to the function that does it. They share 1 frame, down to fx_codegen_and_compile (compile_fx.py:9); then each branches off.")
    >>> stage_paths([[], [], [a]])
    (0, '')
    """
    if not any(paths[:2]):
        return 0, ""
    live = [p for p in paths if p]
    shared = 0
    while shared < len(live[0]) and all(
        shared < len(p) and (p[shared].file, p[shared].line) == (live[0][shared].file, live[0][shared].line)
        for p in live
    ):
        shared += 1
    at = live[0][shared - 1] if shared else None
    where = (
        f", down to {getattr(at, 'function_label', '') or at.function} ({_base(at.file)}:{at.line}); then each "
        "branches off."
        if at is not None
        else "."
    )
    return shared, (
        "The three stages of this graph's compile, each from your call (top) to the function that does it. They share "
        f"{shared} frame{'' if shared == 1 else 's'}{where}"
    )


def merge_text(
    kind: str,
    members: Sequence[str],
    member_ops: Sequence[Sequence[str]],
    ops: Sequence[str],
    split: Sequence[str] = (),
    mates: Sequence[str] = (),
    read: Sequence[str] = (),
) -> str:
    """``FusedNode.merge_text``: where the ops of a fused node were merged into one loop. ``members``: its pre-fusion
    scheduler nodes; ``member_ops``: the short op names of each one's post-grad ops (``FusedNode.member_ops``, op
    for op, graph inputs and tuple unpacking left out), ``[]`` where not recorded; ``ops``: the node's own, op for
    op, for then. The ops of one scheduler node were computed in one loop by Inductor's lowering, before any fusion
    (``GraphLowering.run``: a pointwise result that is not stored is computed inside the loop that reads it, torch's
    ir_pre_fusion.txt already has one node); several scheduler nodes in one were fused by the scheduler
    (``Scheduler.fuse_nodes``, in ``Scheduler.__init__``). ``split``: for a node of one op, the scheduler nodes of
    the compile its op's lowering made, where it made several (a foreach op: one loop per tensor). ``""`` for glue
    (``kind`` ``nop``) and a node with no op.

    >>> merge_text("pointwise", ["op0"], [["sin", "pow", "cos", "pow", "add"]], [])  # sin(x)**2 + cos(x)**2
    "5 ops in one loop: Inductor's lowering inlined them (GraphLowering.run), before the scheduler: sin, pow, cos, pow, add. The scheduler fused nothing into it (Scheduler.fuse_nodes): one scheduler node."
    >>> merge_text("reduction", ["op0", "op1"], [["relu", "mul"], ["sum"]], [])
    '2 scheduler nodes fused by the scheduler (Scheduler.fuse_nodes): op0 (2 ops inlined at lowering: relu, mul), op1 (sum).'
    >>> merge_text("pointwise", ["op1"], [["_foreach_add_"]], [])
    'One op (_foreach_add_) in a loop of its own: nothing was inlined into it at lowering (GraphLowering.run) nor fused by the scheduler (Scheduler.fuse_nodes).'
    >>> merge_text("pointwise", ["op1"], [["_foreach_add_"]], [], ["op0", "op1", "op2"])
    'One op (_foreach_add_), which lowering made into 3 scheduler nodes, one loop each (op0, op1, op2): nothing was inlined into this one at lowering (GraphLowering.run) nor fused by the scheduler (Scheduler.fuse_nodes).'
    >>> merge_text("foreach", ["op0", "op1", "op2"], [["_foreach_add_"]] * 3, [])  # on a GPU: one Triton kernel
    '3 scheduler nodes, one loop per tensor of _foreach_add_ (its lowering makes one for each), grouped by the scheduler into one foreach kernel (Scheduler.create_foreach_nodes, before Scheduler.fuse_nodes): op0, op1, op2.'
    >>> merge_text("extern", ["op2"], [["mm"]], [])
    'An extern call (mm: a library or fallback kernel, not generated code): nothing is inlined or fused into it.'
    >>> merge_text("extern", ["op0"], [["invoke_subgraph"]], [])  # a call of a nested_compile_region: no library
    "A call of invoke_subgraph's subgraphs, no kernel of its own: nothing is inlined or fused into it, and the subgraphs' kernels are in their own compiles."
    >>> merge_text("pointwise", ["op0", "op3"], [], ["add", "mul"])  # a report made before member_ops
    '2 scheduler nodes fused by the scheduler (Scheduler.fuse_nodes): op0, op3.'
    >>> merge_text("nop", ["op4"], [], [])
    ''
    >>> merge_text("pointwise", ["op0", "op3"], [["clone"], ["_foreach_add_"]], [], [], ["op1_op4", "op2_op5"]).split(". ")[1]
    "Its C++ kernel also runs 2 other fused nodes (named above, the panel's first section): Inductor's C++ code generation writes consecutive fused nodes into one kernel (CppScheduling's group, until Scheduler.flush)."

    ``mates``: the other fused nodes of its C++ kernel (``finish._kernel_mates``), grouped at code generation.
    ``read``: the short op names of ``FusedNode.read_ops``, which Inductor's origins name but whose result the node
    loads from another node's buffer:

    >>> merge_text("pointwise", ["op4"], [["reshape", "index"]], [], read=["add", "var_mean", "sub", "mul"]).split(". ")[2]
    "Inductor's origins (which its kernel is named after) also name 4 ops it does not compute: it loads their result from a buffer another node writes (add, var_mean, sub, mul)."
    """
    text = _merge_text(kind, members, member_ops, ops, split)
    if text and read:
        text += (
            f" Inductor's origins (which its kernel is named after) also name {len(read)} "
            f"{'op' if len(read) == 1 else 'ops'} it does not compute: it loads their result from a buffer another "
            f"node writes ({_ops_listed(read)})."
        )
    if not text or not mates or kind == "extern":
        return text
    return (
        f"{text} Its C++ kernel also runs {len(mates)} other fused {'node' if len(mates) == 1 else 'nodes'} (named "
        "above, the panel's first section): Inductor's C++ code generation writes consecutive fused nodes into one "
        "kernel (CppScheduling's group, until Scheduler.flush)."
    )


def _merge_text(
    kind: str,
    members: Sequence[str],
    member_ops: Sequence[Sequence[str]],
    ops: Sequence[str],
    split: Sequence[str] = (),
) -> str:
    """:func:`merge_text` but for a node's kernel mates."""
    if kind == "nop":
        return ""
    if kind == "extern" and (flow := control_flow(ops or [o for m in member_ops for o in m])):
        return (
            f"A call of {flow}'s subgraphs, no kernel of its own: nothing is inlined or fused into it, and the "
            "subgraphs' kernels are in their own compiles."
        )
    if kind == "extern":
        named = _ops_listed(list(dict.fromkeys(ops or [o for m in member_ops for o in m])))
        return f"An extern call ({named + ': ' if named else ''}a library or fallback kernel, not generated code): " + (
            "nothing is inlined or fused into it."
        )
    if kind == "foreach" and len(members) > 1:  # a foreach op's loops, one per tensor, launched as one kernel
        each = {tuple(m) for m in member_ops} if len(member_ops) == len(members) else set()
        one = next(iter(each))[0] if len(each) == 1 and len(next(iter(each))) == 1 else ""
        return (
            f"{len(members)} scheduler nodes"
            + (f", one loop per tensor of {one} (its lowering makes one for each)," if one else "")
            + " grouped by the scheduler into one foreach kernel (Scheduler.create_foreach_nodes, before "
            f"Scheduler.fuse_nodes): {_ops_listed(list(members))}."
        )
    if len(members) > 1:
        parts = []
        for m, mops in zip(members, member_ops) if len(member_ops) == len(members) else ((m, None) for m in members):
            if not mops:
                parts.append(m)
            elif len(mops) == 1:
                parts.append(f"{m} ({mops[0]})")
            else:
                parts.append(f"{m} ({len(mops)} ops inlined at lowering: {_ops_listed(mops)})")
        return f"{len(members)} scheduler nodes fused by the scheduler (Scheduler.fuse_nodes): {', '.join(parts)}."
    mine = list(member_ops[0]) if len(member_ops) == 1 else list(ops)
    if not mine:
        return ""
    if len(mine) == 1 and len(split) > 1:
        return (
            f"One op ({mine[0]}), which lowering made into {len(split)} scheduler nodes, one loop each "
            f"({_ops_listed(list(split))}): nothing was inlined into this one at lowering (GraphLowering.run) nor "
            "fused by the scheduler (Scheduler.fuse_nodes)."
        )
    if len(mine) == 1:
        return (
            f"One op ({mine[0]}) in a loop of its own: nothing was inlined into it at lowering (GraphLowering.run) "
            "nor fused by the scheduler (Scheduler.fuse_nodes)."
        )
    return (
        f"{len(mine)} ops in one loop: Inductor's lowering inlined them (GraphLowering.run), before the scheduler: "
        f"{_ops_listed(mine)}. The scheduler fused nothing into it (Scheduler.fuse_nodes): one scheduler node."
    )


def in_place_text(targets: Iterable[tuple[str, str, str, str]]) -> str:
    """``FusedNode.in_place``: what a fused node writes in place, as the panel says it. ``targets``: for each buffer
    of ``FusedNode.mutates``, ``(buffer, name shown, role, where)``: ``where`` is ``input`` for a graph input (the
    name shown its ``GraphNode.display_name``, ``role`` its role: ``input``, ``global``, ``buffer``...),
    ``constant`` for a tensor the compiled graph holds (AOTInductor's parameters and buffers, ``get_attr``), ``made``
    for a buffer an earlier node made.

    >>> in_place_text([("arg0_1", "x", "input", "input")])
    'Writes x in place (graph input arg0_1): the tensor your code passed in is changed.'
    >>> in_place_text([("primals_5", "bn.running_mean", "buffer", "input"), ("primals_6", "bn.running_var", "buffer", "input")])
    'Writes bn.running_mean, bn.running_var in place (graph inputs primals_5, primals_6, buffers of your model).'
    >>> in_place_text([("arg2_1", "", "", "input"), ("buf4", "", "", "made")])  # doctest: +NORMALIZE_WHITESPACE
    'Writes arg2_1 in place (a graph input). Writes buf4 in place (a buffer made earlier in this graph).'
    >>> in_place_text([("arg0_1", "cache", "global", "input")])
    'Writes cache in place (graph input arg0_1, a global of your code).'
    >>> in_place_text([("arg4_1", "self.state[list(dict.keys(self.state))[0]]['exp_avg']", "attribute", "input")])
    "Writes self.state[list(dict.keys(self.state))[0]]['exp_avg'] in place (graph input arg4_1)."
    >>> in_place_text([("arg0_1", "fc.weight.grad", "parameter", "input")])  # clip_grad_norm_, a compiled step
    'Writes fc.weight.grad in place (graph input arg0_1, the gradient of a parameter of your model).'
    >>> in_place_text([("count", "count", "buffer", "constant")])
    'Writes count in place (a buffer of your model, which the compiled graph holds).'
    >>> in_place_text([])
    ''
    """
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for buffer, shown, role, where in targets:
        groups.setdefault(_in_place_kind(buffer, shown, role, where), []).append((shown or buffer, buffer))
    of_model = {"buffer": ("a buffer of your model", "buffers of your model")}
    of_model["parameter"] = ("a parameter of your model", "parameters of your model")
    of_model["gradient"] = ("the gradient of a parameter of your model", "gradients of parameters of your model")
    out = []
    for (where, kind), members in groups.items():
        one = len(members) == 1
        names = ", ".join(shown for shown, _ in members)
        which = ", ".join(b for _, b in members)
        inputs = f"graph {'input' if one else 'inputs'} {which}"
        if where == "input" and kind == "input":
            are = "tensor your code passed in is" if one else "tensors your code passed in are"
            out.append(f"Writes {names} in place ({inputs}): the {are} changed.")
        elif where == "input" and kind == "global":
            out.append(f"Writes {names} in place ({inputs}, {'a global' if one else 'globals'} of your code).")
        elif where == "input" and kind in of_model:
            out.append(f"Writes {names} in place ({inputs}, {of_model[kind][0 if one else 1]}).")
        elif where == "input" and kind == "named":
            out.append(f"Writes {names} in place ({inputs}).")
        elif where == "input":
            out.append(f"Writes {which} in place ({'a graph input' if one else 'graph inputs'}).")
        elif where == "constant":
            what = of_model[kind][0 if one else 1] if kind in of_model else ("a tensor" if one else "tensors")
            out.append(f"Writes {names} in place ({what}, which the compiled graph holds).")
        else:
            out.append(f"Writes {which} in place ({'a buffer' if one else 'buffers'} made earlier in this graph).")
    return " ".join(out)


def _in_place_kind(buffer: str, shown: str, role: str, where: str) -> tuple[str, str]:
    """``(where, kind)`` of one target of :func:`in_place_text`: what sentence it goes in."""
    if where == "input":
        kind = (
            role if role in ("input", "global", "buffer", "parameter") else "named" if shown and shown != buffer else ""
        )
    elif where == "constant":
        kind = role if role in ("buffer", "parameter") else ""
    else:
        where, kind = "made", ""
    if kind == "parameter" and shown.endswith(".grad"):  # a parameter's .grad (dynamo's source role)
        kind = "gradient"
    return where, kind


#: Up to how many tensors a kernel call writes in place :func:`call_in_place_text` names one by one, as a fused
#: node's ``in_place`` does; past it, counted by kind, a few named.
CALL_IN_PLACE_NAMED = 4
#: How many names a counted kind lists before "and N more".
CALL_IN_PLACE_SHOWN = 3

#: A kind of :func:`_in_place_kind`, counted: (one, several).
_IN_PLACE_NOUNS = {
    ("input", "input"): ("tensor your code passed in", "tensors your code passed in"),
    ("input", "global"): ("global of your code", "globals of your code"),
    ("input", "buffer"): ("buffer of your model", "buffers of your model"),
    ("input", "parameter"): ("parameter of your model", "parameters of your model"),
    ("input", "gradient"): ("gradient of a parameter of your model", "gradients of parameters of your model"),
    ("input", "named"): ("graph input", "graph inputs"),
    ("input", ""): ("graph input", "graph inputs"),
    ("constant", "buffer"): (
        "buffer of your model the compiled graph holds",
        "buffers of your model the compiled graph holds",
    ),
    ("constant", "parameter"): (
        "parameter of your model the compiled graph holds",
        "parameters of your model the compiled graph holds",
    ),
    ("constant", ""): ("tensor the compiled graph holds", "tensors the compiled graph holds"),
    ("made", ""): ("buffer made earlier in this graph", "buffers made earlier in this graph"),
}

_OF = re.compile(r"^(?P<what>\S+) of (?P<owner>.+)$")


def call_in_place_text(targets: Iterable[tuple[str, str, str, str]]) -> str:
    """What one call of a kernel of several fused nodes writes in place, all its nodes together (``Kernel.in_place``:
    the panel's head of its box), ``targets`` as :func:`in_place_text`'s, of every node of the call in turn. Up to
    :data:`CALL_IN_PLACE_NAMED` tensors: each named, as :func:`in_place_text` says them; more (an optimizer's one
    kernel updates every parameter and its state): counted by kind, the first few named, and the state of the
    tensors it writes (``exp_avg of cls``: a name ``<what> of <owner>``, the owner written too) said once, as theirs.

    >>> ps = [(f"arg{i}_1", n, "parameter", "input") for i, n in enumerate(["cls", "pos", "w", "b"])]
    >>> st = [(f"arg{9 + i}_1", f"{w} of {n}", "attribute", "input") for i, (n, w) in enumerate(
    ...     (n, w) for n in ["cls", "pos", "w", "b"] for w in ("exp_avg", "step"))]
    >>> call_in_place_text(ps + st)
    'Writes 4 parameters of your model in place (cls, pos, w and 1 more), and their exp_avg and step.'
    >>> call_in_place_text(ps[:1] + st[:2])
    'Writes cls in place (graph input arg0_1, a parameter of your model). Writes exp_avg of cls, step of cls in place (graph inputs arg9_1, arg10_1).'
    >>> call_in_place_text([(f"buf{i}", "", "", "made") for i in range(6)] + [("arg0_1", "x", "input", "input")])
    'Writes 6 buffers made earlier in this graph in place (buf0, buf1, buf2 and 3 more), and x (a tensor your code passed in).'
    """
    targets = list(dict.fromkeys(targets))  # a tensor two nodes of the call write is written once
    if len(targets) <= CALL_IN_PLACE_NAMED:
        return in_place_text(targets)
    groups: dict[tuple[str, str], list[str]] = {}
    for buffer, shown, role, where in targets:
        groups.setdefault(_in_place_kind(buffer, shown, role, where), []).append(shown or buffer)
    # the state of a tensor written here (exp_avg of cls): said as theirs, with the group its owners are in
    owner_group = {name: key for key, names in groups.items() for name in names}
    state: dict[tuple[str, str], dict[str, int]] = {}
    for key, names in list(groups.items()):
        kept = []
        for name in names:
            m = _OF.match(name)
            home = owner_group.get(m["owner"]) if m else None
            if home is not None and home != key:
                whats = state.setdefault(home, {})
                whats[m["what"]] = whats.get(m["what"], 0) + 1
            else:
                kept.append(name)
        groups[key] = kept
    parts = []
    for key, names in groups.items():
        if not names:
            continue
        one, several = _IN_PLACE_NOUNS.get(key, ("tensor", "tensors"))
        if len(names) == 1:
            subject, paren = names[0], f"a {one}"
        else:
            shown = names[:CALL_IN_PLACE_SHOWN]
            more = len(names) - len(shown)
            subject, paren = f"{len(names)} {several}", ", ".join(shown) + (f" and {more} more" if more else "")
        theirs = [w if n == len(names) else f"{w} (of {n} of them)" for w, n in state.get(key, {}).items()]
        if theirs:
            theirs = [
                ", and their " + (theirs[0] if len(theirs) == 1 else ", ".join(theirs[:-1]) + " and " + theirs[-1])
            ]
        parts.append((subject, paren, "".join(theirs)))
    (subject, paren, theirs), rest = parts[0], parts[1:]
    return f"Writes {subject} in place ({paren}){theirs}" + "".join(f", and {s} ({p}){t}" for s, p, t in rest) + "."


def is_glue(kind: str, kernel: Optional[str], ops: Iterable[str]) -> bool:
    """No kernel of its own: a nop node, a ``getitem`` of a multi-output call, a view; never a call of control
    flow's subgraphs (:data:`CONTROL_FLOW_OPS`: ``cond``).

    >>> is_glue("extern", None, ["getitem"]), is_glue("extern", None, ["cond"])
    (True, False)
    """
    if kernel:
        return False
    ops = list(ops)
    if control_flow(ops):
        return False
    return kind in ("nop", "extern") or (bool(ops) and all(o in GLUE_OPS for o in ops))


#: Which kind names a kernel whose fused nodes are of several: the first of these among them.
_KERNEL_KINDS = ("template", "extern", "foreach", "reduction", "pointwise", "nop", "other")


def kernel_kind(kinds: Iterable[str]) -> str:
    """A kernel's kind from its fused nodes' (``Kernel.kind``): a kernel that reduces is a reduction kernel
    though its first node is pointwise.

    >>> kernel_kind(["pointwise", "reduction", "pointwise"])
    'reduction'
    """
    ks = set(kinds)
    return next((k for k in _KERNEL_KINDS if k in ks), next(iter(sorted(ks)), ""))


#: Namespaces of ``torch.ops`` whose ops are torch's (or its libraries'), not a user's custom op.
TORCH_OP_NAMESPACES = frozenset({"aten", "prims", "mkldnn", "mkl", "quantized", "onednn", "_c10d_functional", "c10d"})
_LIBRARIES = {"mkldnn": "oneDNN", "onednn": "oneDNN", "mkl": "MKL"}


def extern_why(name: str, dtypes: Iterable[str]) -> str:
    """``Kernel.extern_why``: why an extern kernel is a call and no code Inductor generated, from its name (the call the
    output code makes) and the dtypes of its ops and their inputs; ``""`` for a generated kernel.

    >>> extern_why("extern_kernels.mm[buf0]", ["float32"])
    'A library call: Inductor calls an existing kernel for mm (extern_kernels.mm) instead of generating code for it.'
    >>> extern_why("torch.ops.aten.mul.Tensor[buf2]", ["complex64"])
    "torch's own mul, called as it is: Inductor generates no code for complex tensors (complex64)."
    >>> extern_why("torch.ops.aten.sort.default[buf1]", ["float32", "int64"])
    "torch's own sort, called as it is (a fallback): Inductor has no code generation of its own for this op."
    >>> extern_why("torch.ops.mylib.scaled_tanh.default[buf3]", ["float32"])
    'Your custom op mylib::scaled_tanh, called as it is: Inductor does not look inside custom ops.'
    >>> extern_why("cpp_fused_add_0", ["float32"])
    ''
    """
    call = re.sub(r"\[[^\]]*\]$", "", name or "")
    if call.startswith("extern_kernels."):
        op = call.split(".", 1)[1]
        return f"A library call: Inductor calls an existing kernel for {op} ({call}) instead of generating code for it."
    m = re.match(r"^torch\.ops\.(\w+)\.(\w+)", call)
    if not m:
        return ""
    ns, op = m.groups()
    complex_ = sorted({d for d in dtypes if d and d.startswith("complex")})
    if complex_:
        return f"torch's own {op}, called as it is: Inductor generates no code for complex tensors ({', '.join(complex_)})."
    if ns in _LIBRARIES:
        return f"A library call: Inductor calls {_LIBRARIES[ns]}'s {op} ({ns}.{op}) instead of generating code for it."
    if ns not in TORCH_OP_NAMESPACES:
        return f"Your custom op {ns}::{op}, called as it is: Inductor does not look inside custom ops."
    return f"torch's own {op}, called as it is (a fallback): Inductor has no code generation of its own for this op."


def fused_label(kind: str, kernel: Optional[str], kernel_language: str, ops: list[str], callee: str, name: str) -> str:
    """What a box says first: the op of an extern call (``mm``), the kernel's name, or the glue op."""
    if kernel_language == "extern" or (kind == "extern" and kernel):
        if ops:
            return ops[0]
        return short_op(callee.replace("extern_kernels.", "")) if callee else (kernel or name)
    if kernel:
        return kernel
    if ops:
        return " · ".join(dict.fromkeys(ops))
    return name


#: Ops that only unpack a tuple: left out of ``FusedNode.ops`` (what a box lists).
UNPACK_OPS = frozenset({"getitem"})

#: Ops of a template kernel that are not its epilogue: the matmul or convolution itself and layout ops.
NOT_EPILOGUE = frozenset(
    {"mm", "addmm", "bmm", "baddbmm", "convolution", "permute", "t", "view", "reinterpret_tensor", "_to_copy", "clone"}
    # the matmul and convolution of a frozen CPU graph (oneDNN's, MKL's), what a C++ GEMM template computes
    | {"_mkl_linear", "_linear_pointwise", "_convolution_pointwise", "qlinear_pointwise"}
)


def node_ops(targets: Iterable[str]) -> list[str]:
    """The distinct short op names of a fused node's FX op targets, in order, tuple unpacking left out."""
    return [o for o in dict.fromkeys(short_op(t) for t in targets) if o not in UNPACK_OPS]


def epilogue_ops(ops: Iterable[str]) -> list[str]:
    """What a template kernel fused around its matmul: its ops but the matmul and layout ops."""
    return [o for o in dict.fromkeys(ops) if o not in NOT_EPILOGUE and o not in UNPACK_OPS]


#: The stages of frames whose lines are code someone wrote to be run: the user's and a library's (transformers'
#: modelling code), not torch's own (:func:`frame_stage`).
CODE_STAGES = ("user", "library")


def line_frame(stack: Sequence[Any]) -> Any:
    """The frame of ``stack`` (outermost first) that names the line that ran: the innermost one in the user's or a
    library's code. Dynamo records the frames it traced through, torch's own Python included
    (``flex_attention``'s wrapper, ``torch.func``'s transforms, a compiled call of ``optimizer.step()``): the
    user's call of it is the line, and torch's frame only where the stack has no other. ``None`` for no frame.

    >>> from types import SimpleNamespace as F
    >>> line_frame([F(line=16, stage="user"), F(line=2462, stage="torch")]).line
    16
    >>> line_frame([F(line=80, stage="torch")]).line
    80
    """
    return next((f for f in reversed(stack) if getattr(f, "stage", "") in CODE_STAGES), stack[-1] if stack else None)


def user_lines(stacks: Iterable[list]) -> list:
    """The user's lines of some stacks: the line that ran in each (:func:`line_frame`), distinct by
    ``(file, line)``, in order. The first is *the* user line a view names. A line of torch's own (a stack with
    no other: ``torch.func.grad``'s ``grad_and_value_impl`` for the ops it adds) only where no stack has a line of
    the user's or a library's: beside those it is none of "your lines".

    >>> from types import SimpleNamespace as F
    >>> [f.line for f in user_lines([[F(file="a.py", line=6, stage="user")], [F(file="t.py", line=1515, stage="torch")]])]
    [6]
    >>> [f.line for f in user_lines([[F(file="t.py", line=1515, stage="torch")]])]
    [1515]
    """
    seen, out = set(), []
    for s in stacks:  # unique_stacks without copying each stack
        if s:
            last = line_frame(s)
            key = (last.file, last.line)
            if key not in seen:
                seen.add(key)
                out.append(last)
    code = [f for f in out if getattr(f, "stage", "") in CODE_STAGES]
    return code or out


#: Ops a kernel is built around when it holds one: a matmul or convolution (a template's, whose epilogue is fused
#: after it) and flex_attention's call (its ``score_mod``'s lines are inlined into it).
ANCHOR_OPS = frozenset(
    {"mm", "addmm", "bmm", "baddbmm", "convolution", "_scaled_mm", "flex_attention", "flex_attention_backward"}
    | {"_mkl_linear", "_linear_pointwise", "_convolution_pointwise", "qlinear_pointwise"}
)

#: Ops that reduce over a range, as the post-grad graph names them: a kernel holding one loops over what it
#: reduces, the pointwise ops before it fused into its loads and those after it into its stores.
REDUCTION_OPS = frozenset(
    {"sum", "mean", "amax", "amin", "max", "min", "prod", "var_mean", "var", "std", "argmax", "argmin"}
    | {"logsumexp", "any", "all"}
)


#: Ops that compute no value of their own beside a kernel's others: views (:data:`GLUE_OPS`), constants, dtype casts
#: and copies. A kernel's line is that of most of its other ops (:func:`lead_line`); these count where it has none.
NO_COMPUTE_OPS = GLUE_OPS | frozenset(
    {"full", "scalar_tensor", "empty", "empty_strided", "zeros", "ones", "iota", "convert_element_type", "_to_copy"}
    | {"clone", "copy", "copy_"}
)


def lead_line(lines: Sequence[Any], ops: Sequence[tuple[str, Any]]) -> list:
    """``lines`` (a kernel's or a fused node's user lines, in the order its ops run) with the line that defines it
    first, the others in their order: the line of its first matmul, convolution or attention (:data:`ANCHOR_OPS`),
    else the line with the most of its reductions (:data:`REDUCTION_OPS`), else with the most of its ops that
    compute (:data:`NO_COMPUTE_OPS` count none), else with the most of its ops but views; the earliest on a tie.
    ``ops``: each op of it in graph order, as ``(short op, (file, line) of its line or None)``. A BatchNorm whose
    input a forward pre-hook doubled is the batch norm's line, not the hook's ``mul`` that runs first.

    >>> from types import SimpleNamespace as F
    >>> hook, bn = F(file="a.py", line=30), F(file="a.py", line=23)
    >>> [f.line for f in lead_line([hook, bn], [("mul", ("a.py", 30)), ("var_mean", ("a.py", 23))])]
    [23, 30]
    >>> [f.line for f in lead_line([bn, hook], [("mean", ("a.py", 23)), ("sum", ("a.py", 30)), ("amax", ("a.py", 30))])]
    [30, 23]
    >>> [f.line for f in lead_line([hook, bn], [("mul", ("a.py", 30)), ("add", ("a.py", 23)), ("mul", ("a.py", 23))])]
    [23, 30]
    >>> [f.line for f in lead_line([hook, bn], [("mul", ("a.py", 30)), ("clone", ("a.py", 23))])]
    [30, 23]
    >>> [f.line for f in lead_line([hook, bn], [("view", ("a.py", 30)), ("clone", ("a.py", 23))])]
    [23, 30]
    """
    keys = [(f.file, f.line) for f in lines]
    known = [(op, key) for op, key in ops if key in keys]
    head = next((key for op, key in known if op in ANCHOR_OPS), None)
    for counted in (REDUCTION_OPS.__contains__, lambda op: op not in NO_COMPUTE_OPS, lambda op: op not in GLUE_OPS):
        if head is None:
            counts: dict = {}
            for op, key in known:
                if counted(op):
                    counts[key] = counts.get(key, 0) + 1
            head = max(keys, key=lambda k: counts.get(k, 0)) if counts else None  # max keeps the first of a tie
    if head is None or head == keys[0]:
        return list(lines)
    i = keys.index(head)
    return [lines[i], *lines[:i], *lines[i + 1 :]]


def kernel_runs(kernel: str, boxes: list) -> list[list[str]]:
    """Call sites of ``kernel`` where the capture recorded none: its fused nodes (``boxes``, execution
    order, glue left out) in runs of consecutive nodes of that kernel. A kernel whose source is reused
    later is two runs: one kernel called twice, not one fusion."""
    runs: list[list[str]] = []
    prev = None
    for n in boxes:
        if n.kernel == kernel:
            if prev == kernel and runs:
                runs[-1].append(n.name)
            else:
                runs.append([n.name])
        prev = n.kernel
    return runs


def fusion_edges(fused: Sequence, graph_inputs: Iterable[str], graph_outputs: Iterable) -> list[tuple]:
    """The fusion graph's data edges, as ``(kind, source, target, buffers)`` in the order it draws them: ``node``
    from the fused node that writes a buffer to the fused node that reads it, ``input`` from a graph input to a fused
    node that reads it, ``output`` from the fused node that writes a graph output to that output, ``alias`` from a
    graph input to an output that is it or a view of it (no copy). ``graph_outputs``: the outputs drawn, each a
    ``(key, buffer)`` (``key``: its position in ``Compile.outputs``, as text), or, as reports before those keyed them,
    a buffer (its own key). ``buffers``: the buffers the reader names (an output, the output). A buffer written by glue (``FusedNode.is_glue``: a getitem, a
    view: no box of its own) stands for what the glue reads, so the edge runs from the real producers, or the graph
    input, past it.

    >>> from types import SimpleNamespace as N
    >>> mm = N(name="op0", reads=["x", "w"], writes=["buf0"], is_glue=False)
    >>> view = N(name="op1", reads=["buf0"], writes=["buf1"], is_glue=True)
    >>> relu = N(name="op2", reads=["buf1", "x"], writes=["buf2"], is_glue=False)
    >>> for e in fusion_edges([mm, view, relu], ["x", "w"], [("0", "buf2"), ("1", "buf1"), ("2", "x")]):
    ...     print(e)
    ('input', 'x', 'op0', ['x'])
    ('input', 'w', 'op0', ['w'])
    ('node', 'op0', 'op2', ['buf1'])
    ('input', 'x', 'op2', ['x'])
    ('output', 'op2', '0', ['buf2'])
    ('output', 'op0', '1', ['buf1'])
    ('alias', 'x', '2', ['x'])
    """
    inputs = set(graph_inputs)
    nodes = {n.name: n for n in fused}
    writer = {b: n.name for n in fused for b in n.writes or ()}
    pairs: dict[tuple, list[str]] = {}

    def add(kind: str, source: str, target: str, buf: str) -> None:
        if kind != "node" or source != target:  # an input or output may share a fused node's name
            bufs = pairs.setdefault((kind, source, target), [])
            if buf not in bufs:
                bufs.append(buf)

    def sources(b: str, seen: set) -> list[tuple[str, Optional[str]]]:
        """``(buffer, writer)``: who made ``b``, through glue (a writer of None: a graph input or nothing known)."""
        w = writer.get(b)
        if w is None or not nodes[w].is_glue:
            return [(b, w)]
        if b in seen:  # reached again through other glue: drawn on the first visit
            return []
        seen.add(b)
        return [s for r in nodes[w].reads or () for s in sources(r, seen)] or [(b, None)]

    for n in fused:
        if n.is_glue:
            continue
        for b0 in n.reads or ():
            for b, w in sources(b0, set()):
                if w is not None:
                    add("node", w, n.name, b0)
                elif b in inputs:
                    add("input", b, n.name, b)
    for out in graph_outputs:
        key, b = (out, out) if isinstance(out, str) else out
        if b in inputs and b not in writer:  # the input itself or a view of it: its storage, nothing wrote it
            add("alias", b, key, b)
        for _, w in sources(b, set()):
            if w is not None:
                add("output", w, key, b)
    return [(kind, s, t, bufs) for (kind, s, t), bufs in pairs.items()]


def unique_stacks(stacks: Iterable[list]) -> list[list]:
    """Stacks deduplicated by their innermost frame (the user's line), in order."""
    seen, out = set(), []
    for s in stacks:
        if not s:
            continue
        last = s[-1]
        key = (last.file, last.line)
        if key not in seen:
            seen.add(key)
            out.append(list(s))
    return out


#: ``L['args'][0]`` where it holds the module: a decorator's ``wrapped_func(*args, **kwargs)`` around ``forward``
#: (transformers 5 wraps every model's forward so) passes the module as its first positional argument.
#: Apply it only to what is known to be a module or to hang off one (a parameter's source, a module path).
MODULE_ROOT_ARG = re.compile(r"^L\[['\"]args['\"]\]\[0\](?=\.|$)")

#: ``L['fn']`` in ``inner``, torch's wrapper (torch/_dynamo/external_utils.py) that torch.compile traces for a
#: module of torch's own (``torch.compile(nn.Sequential(...))``): the wrapped module. The root only in that frame
#: (``wrapped`` below): elsewhere a local named ``fn`` is the user's.
WRAPPED_ROOT = re.compile(r"^L\[['\"]fn['\"]\](?=\.|\[|$)")


def wraps_module(co_name: str, co_filename: str) -> bool:
    """Whether the frame dynamo traced (its code's name and file) is torch's ``inner`` wrapper around a module, whose
    local ``fn`` is the compiled module (``WRAPPED_ROOT``)."""
    return co_name == "inner" and bool(re.search(r"/torch/_dynamo/external_utils\.py$", co_filename.replace("\\", "/")))


#: An instance attribute read through the object's ``__dict__``: dynamo's source for a module whose forward sets an
#: attribute of its own (``self.calls += 1``): ``L['self'].__dict__['_modules']['lin']``, which is ``._modules['lin']``.
_DICT_ITEM = re.compile(r"\.__dict__\[['\"]([A-Za-z_]\w*)['\"]\]")

#: A value that was on the stack at a graph break (a resume function's argument ``___stack0``), or an item of it.
_STACK_SLOT = re.compile(r"^L\[['\"]___stack(\d+)['\"]\](?:\[(\d+)\])?(.*)$")

#: The root of a source: the frame's local or global it starts from.
_ROOT = re.compile(r"^(?:L|G)\[['\"]([^'\"]+)['\"]\]")


def module_relative(source: str, wrapped: bool = False, own: str = "self") -> str:
    """``source`` (a module path or a parameter's source) from the module that was compiled: without its root where
    that root is the compiled module (the frame's ``self``; the module a decorator wrapper takes first,
    ``MODULE_ROOT_ARG``; torch's ``inner`` wrapper's ``fn`` where ``wrapped``), with the root's name where it is any
    other module the compiled code calls (a global ``G['enc']``, a local ``L['mha']``: ``enc...``, ``mha...``);
    attributes read through ``__dict__`` read as attributes. ``own``: the frame's name for its ``self``, the first
    parameter of the method dynamo traced (``def forward(s, x)``: ``s``), recorded at capture.

    >>> module_relative("L['self'].__dict__['_modules']['lin']"), module_relative("G['enc']._modules['0']")
    ("._modules['lin']", "enc._modules['0']")
    >>> module_relative("L['s']._modules['mid']", own="s")
    "._modules['mid']"
    """
    s = _DICT_ITEM.sub(r".\1", str(source or "").strip())
    s = MODULE_ROOT_ARG.sub("", s)
    if wrapped:
        s = WRAPPED_ROOT.sub("", s)
    return _ROOT.sub(lambda m: "" if m.group(1) == own else m.group(1), s)


def source_role(source: str, wrapped: bool = False, own: str = "self") -> tuple[str, str]:
    """``(role, display_name)`` of a dynamo graph input from its source:
    ``L['self']._modules['fc1']._parameters['weight']`` -> ``("parameter", "fc1.weight")``, ``L['x']`` ->
    ``("input", "x")``, a global tensor of the user's code ``G['cache']`` -> ``("global", "cache")``. A parameter or
    buffer is named by its path from the compiled module (the frame's ``self``): one of another module the compiled
    code calls keeps that module's name (:func:`module_relative`; ``wrapped``: the frame is torch's ``inner``
    wrapper, whose ``fn`` is the compiled module; ``own``: the frame's name for its ``self``).

    >>> source_role("G['cache']"), source_role("G['model']._modules['fc']._parameters['weight']")
    (('global', 'cache'), ('parameter', 'model.fc.weight'))
    >>> source_role("L['self'].__dict__['_buffers']['avg']")  # a module that sets an attribute in its forward
    ('buffer', 'avg')
    >>> source_role("L['___stack0'][0]")  # a value on the stack at a graph break, that no name of the user's holds
    ('input', 'item 0 of value 0 handed over at the graph break')
    >>> source_role("L['self'].state[list(dict.keys(L['self'].state))[1]]['exp_avg']")
    ('input', "self.state[list(dict.keys(self.state))[1]]['exp_avg']")
    """
    s = str(source or "")
    if not s:
        return "", ""
    s = _DICT_ITEM.sub(r".\1", s)
    role = "parameter" if "_parameters[" in s else "buffer" if "_buffers[" in s else "input"
    m = re.match(r"^G\[['\"]([^'\"]+)['\"]\](.*)$", s) if role == "input" else None
    if m:
        return "global", m.group(1) + m.group(2)
    if role == "input":
        m = re.match(r"^L\[['\"]kwargs['\"]\]\[['\"]([^'\"]+)['\"]\](.*)$", s)  # a keyword argument: its name
        if m:
            return role, m.group(1) + m.group(2)
        m = _STACK_SLOT.match(s)
        if m:  # dynamo's name for it; the capture names it where the user's code stores it (sources.resume_stack_names)
            value = f"value {m.group(1)} handed over at the graph break"
            return role, (f"item {m.group(2)} of {value}" if m.group(2) else value) + m.group(3)
        m = re.match(r"^L\[['\"]([^'\"]+)['\"]\](.*)$", s)
        shown = (m.group(1) + m.group(2)) if m else s
        # a local inside (an optimizer's state, keyed by its parameters: self.state[list(dict.keys(L['self'].state))[0]])
        return role, re.sub(r"\bL\[['\"]([A-Za-z_]\w*)['\"]\]", r"\1", shown)
    path = module_relative(s, wrapped, own)
    path = re.sub(r"\._(modules|parameters|buffers)\[['\"]([^'\"]+)['\"]\]", r".\2", path)
    path = re.sub(r"\[['\"]([^'\"]+)['\"]\]|\[(\d+)\]", lambda m: "." + (m.group(1) or m.group(2)), path)
    return role, re.sub(r"^self\.", "", path.strip("."))


_MANGLED_PART = re.compile(r"_(modules|parameters|buffers)_")


def placeholder_source(name: str) -> str:
    """The source of a dynamo graph input from its placeholder's name, where the name is all there is (a graph
    printed in a TORCH_TRACE log): ``L_self_modules_h_modules_0_parameters_weight_`` ->
    ``L['self']._modules['h']._modules['0']._parameters['weight']``, ``L_x_`` -> ``L['x']``, a global ``G_cache_``
    -> ``G['cache']``; ``""`` for a name of another form. Dynamo joins the parts with ``_``, so a module or parameter
    whose own name holds ``_modules_`` (or ``_parameters_``, ``_buffers_``) is read wrongly.

    >>> placeholder_source("L_self_modules_fc_parameters_weight_"), placeholder_source("G_cache_")
    ("L['self']._modules['fc']._parameters['weight']", "G['cache']")
    >>> source_role(placeholder_source("G_model_modules_bn_buffers_running_mean_"))
    ('buffer', 'model.bn.running_mean')

    A module whose forward sets an attribute of its own is read through its ``__dict__`` (``L_self_dict_...``; a
    local of the user's named ``self_dict`` is read so too):

    >>> placeholder_source("L_self_dict_modules_lin_parameters_weight_")
    "L['self'].__dict__['_modules']['lin']._parameters['weight']"
    """
    m = re.fullmatch(r"([LG])_(\w+)_", name or "")
    if not m:
        return ""
    scope, parts = m.group(1), _MANGLED_PART.split(m.group(2))
    root, rest = parts[0], parts[1:]
    if not root or any(not p for p in rest):
        return ""
    parts = [f"._{kind}['{key}']" for kind, key in zip(rest[::2], rest[1::2])]
    if scope == "L" and root == "self_dict" and parts:  # L['self'].__dict__['_modules']['lin']
        return "L['self'].__dict__" + re.sub(r"^\.(_\w+)\[", r"['\1'][", parts[0]) + "".join(parts[1:])
    root = "L['args'][0]" if scope == "L" and root == "args_0" and rest else f"{scope}['{root}']"
    return root + "".join(parts)


_TRIGGER_SUMMARY = {
    "first_call": "at the first call of the compiled function",
    "recompile": "at a recompile (a guard of an earlier compile failed)",
    "lazy_backward": "at the first .backward() through the compiled forward",
    "compiled_autograd": "at a .backward() call (compiled autograd)",
    "ahead_of_time": "ahead of time, at the AOTInductor compile call (aoti_compile_and_package)",
    "after_reset": "again, at the first call of the compiled function after torch._dynamo.reset()",
}


def after_reset_reason(frame: str, reset: Sequence[Any], earlier: str, earlier_call: Sequence[Any]) -> str:
    """Why a function compiled again (``Trigger.kind`` ``after_reset``): the user's ``torch._dynamo.reset()``
    (``reset``: its user stack) made dynamo forget its compile ``earlier`` (the id) of the same code, made at
    ``earlier_call`` (that compile's trigger's stack); dynamo's own words, "first call", are true only for dynamo.

    >>> from types import SimpleNamespace as N
    >>> after_reset_reason("f", [N(file="/w/s.py", line=8, code="torch._dynamo.reset()")], "0/0 inference",
    ...                    [N(file="/w/s.py", line=7, code="cf(x)")])  # doctest: +NORMALIZE_WHITESPACE
    'compiled again after torch._dynamo.reset() at s.py:8: the reset made dynamo forget its compile of f()
    (0/0 inference, at s.py:7 cf(x)), so this call traced f() again and handed the graph to Inductor'
    """
    at = f" at {_base(reset[-1].file)}:{reset[-1].line}" if reset else ""
    before = stack_line_text(earlier_call)
    where = f"{earlier}, at {before}" if before else earlier
    who = frame_label(frame) or "the function"
    return (
        f"compiled again after torch._dynamo.reset(){at}: the reset made dynamo forget its compile of {who} "
        f"({where}), so this call traced {who} again and handed the graph to Inductor"
    )


#: ``Compile.frame`` of an AOTInductor compile: no dynamo frame, an exported program compiled ahead of time.
AOT_FRAME = "AOTInductor (aoti_compile_and_package)"


def trigger_kind(kind: str, frame: str) -> str:
    """``Trigger.kind``, as reports made before ``ahead_of_time`` existed get it on load: their AOTInductor compiles
    said ``unknown``."""
    return "ahead_of_time" if kind == "unknown" and frame == AOT_FRAME else kind


def trigger_summary(kind: str) -> str:
    """What made Inductor compile, in words, from ``Trigger.kind``.

    >>> trigger_summary("first_call")
    'at the first call of the compiled function'
    """
    return _TRIGGER_SUMMARY.get(str(kind or ""), "when, is not known (ahead of time, or not recorded)")


#: The views a lens can open, in the order of its tabs (``views/frontend.VIEWS``, the widget's ``view`` trait,
#: the magic's ``--view``). ``Report.views`` is the part of it a given report has something to show in.
VIEWS = ("fusion", "fx", "timeline", "source", "kernels", "roofline", "memory")


def view_facts(c: Any) -> tuple[bool, bool, bool]:
    """``(profiled, roofline, memory)`` of one compile: a kernel with a measured time; one with a measured time
    and achieved bandwidth (a cost to place on the roofline); a memory timeline (``Compile.memory``; none in
    reports made before it). ``report/lazy.py`` answers the same from a compile's line while it is not built."""
    kernels = c.kernels
    return (
        any(k.profile is not None for k in kernels),
        any(k.profile is not None and k.profile.achieved_gbps is not None for k in kernels),
        c.memory is not None,
    )


def available_views(facts: Iterable[tuple[bool, bool, bool]]) -> tuple[str, ...]:
    """The views of ``VIEWS`` that a report has something to show in (``Report.views``), from the
    :func:`view_facts` of its compiles: the roofline needs a kernel with a measured cost, the memory view a
    compile with its memory timeline; the others always open."""
    facts = list(facts)
    roofline = any(f[1] for f in facts)
    memory = any(f[2] for f in facts)
    return tuple(v for v in VIEWS if (v != "roofline" or roofline) and (v != "memory" or memory))


def break_summary(reason: str) -> str:
    r"""The telling line of a graph break's reason: torch 2.6+ opens it with a header that names only the
    bytecode ("Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):"), the
    resumption ("Encountered graph break that we cannot resume from. ... Graph break encountered:") or the
    fallback ("Failed to handle graph break gracefully. ... Graph break encountered:"); the reason proper is the
    first line after it.

    >>> break_summary("Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
    ...               "Unsupported Tensor.item() call with capture_scalar_outputs=False\n  Explanation: ...")
    'Unsupported Tensor.item() call with capture_scalar_outputs=False'
    >>> break_summary("call_function BuiltinVariable(print) [] {}")
    'call_function BuiltinVariable(print) [] {}'

    A frame dynamo gave up on whole opens with its own header; the summary says that the frame ran eagerly (no graph
    before the break and none after it, unlike a break dynamo resumes from):

    >>> break_summary("Failed to handle graph break gracefully. Skipping the function and falling back to eager. "
    ...               "Graph break encountered:\n\nAttempted to wrap RNN, GRU, or LSTM\n  Explanation: ...")
    'Attempted to wrap RNN, GRU, or LSTM (dynamo skipped the whole frame: it ran eagerly)'

    A break dynamo cannot resume from (no resumable state after it: a GRU call) compiles the code before it and
    runs the rest of the function eagerly, where a break it resumes from compiles that rest as another frame:

    >>> break_summary("Encountered graph break that we cannot resume from. Compiling up to the previous resumable "
    ...               "state, then skipping the rest of the function. Graph break encountered:\n\n"
    ...               "Attempted to wrap RNN, GRU, or LSTM\n  Explanation: ...")
    'Attempted to wrap RNN, GRU, or LSTM (not resumable: the rest ran eagerly)'

    Where the first break led to another that made dynamo give up (a break in a loop), both are said:

    >>> break_summary("Failed to handle graph break gracefully. Skipping the function and falling back to eager. "
    ...               "Graph break encountered:\n\nUnsupported Tensor.item() call\n  Explanation: ...\n\n"
    ...               "*** While handling this graph break, another graph break occurred: ***\n\n"
    ...               "graph break in loop\n  Explanation: ...")
    'Unsupported Tensor.item() call; then: graph break in loop (dynamo skipped the whole frame: it ran eagerly)'
    """
    lines = [ln.strip() for ln in readable_reasons(reason).splitlines()]  # a JSON list of lines too
    first = next((i for i, ln in enumerate(lines) if ln), None)
    if first is None:
        return ""
    head = lines[first]
    if head.endswith(":") and (head.startswith("Encountered graph break") or head.endswith("Graph break encountered:")):
        at = next((i for i in range(first + 1, len(lines)) if lines[i]), None)
        if at is not None:
            after = _named(lines[at], lines[at + 1 :])
            if head.startswith("Encountered graph break that we cannot resume from"):
                return f"{after} (not resumable: the rest ran eagerly)"
            if "falling back to eager" not in head:
                return after
            # the break that made dynamo give up on the frame: torch adds it after the first ("graph break in loop")
            cause = next((i for i, ln in enumerate(lines) if ln.startswith(_ANOTHER_BREAK)), None)
            again = next((ln for ln in lines[cause + 1 :] if ln), "") if cause is not None else ""
            then = f"; then: {again}" if again else ""
            return f"{after}{then} (dynamo skipped the whole frame: it ran eagerly)"
    return _named(lines[first], lines[first + 1 :])


_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred"
_TICKED = re.compile(r"`([^`]+)`")


def break_inside(stage: str) -> str:
    """``GraphBreak.broke_inside`` from the stage of the innermost frame, where that is not the line shown:
    ``torch`` for torch's own code, else ``library``."""
    return "torch" if stage not in ("user", "library", "other") else "library"


def break_inside_text(inside: str, file: str, line: int, function: str) -> str:
    """``GraphBreak.inside_text``: where a graph break happened when that is beyond the line the views show (its
    innermost frame, in torch's code or a library's), so that a reason written for code that calls
    ``torch._dynamo.graph_break()`` ("Hint: Remove the ... call") is not read as the user's own. Site-packages
    paths are cut to the package.

    >>> break_inside_text("torch", "/v/lib/python3.11/site-packages/torch/optim/optimizer.py", 97, "_use_grad")
    'Not in your code: inside torch, torch/optim/optimizer.py:97 in _use_grad'
    >>> break_inside_text("library", "/opt/env/site-packages/transformers/modeling_utils.py", 4635, "warning_once")
    'Not in your code: inside a library, transformers/modeling_utils.py:4635 in warning_once'
    >>> break_inside_text("", "train.py", 3, "f")
    ''
    """
    if not inside:
        return ""
    where = re.sub(r"^.*[/\\](?:site|dist)-packages[/\\]", "", file or "")
    return f"Not in your code: inside {'torch' if inside == 'torch' else 'a library'}, {where}:{line} in {function}"


def _named(summary: str, rest: Sequence[str]) -> str:
    r"""``summary`` with what torch's explanation names in backticks where it does not say it itself: "Failed to
    trace builtin operator" names no operator, its explanation does.

    >>> _named("Failed to trace builtin operator", ["Explanation: Dynamo does not know how to trace builtin "
    ...        "operator `print` with argument types ['str']"])
    'Failed to trace builtin operator `print`'
    >>> _named("Unsupported Tensor.item() call", ["Explanation: Dynamo does not support tracing `Tensor.item()`"])
    'Unsupported Tensor.item() call'

    A function named by its repr is named by its qualified name, also after a summary that quotes something else:

    >>> _named("Skip calling `torch.compiler.disable()`d function", ["Explanation: Skip calling function "
    ...        "`<function Noisy.forward at 0x7f9adc0a8040>` since it was wrapped with `torch.compiler.disable`"])
    'Skip calling `torch.compiler.disable()`d function `Noisy.forward`'
    """
    explanation = next((ln for ln in rest[:3] if ln.startswith("Explanation:")), "")
    m = _TICKED.search(explanation)
    if m is None:
        return summary
    named = _FUNCTION_REPR.sub(r"\1", m.group(1))
    if named in summary or ("`" in summary and named == m.group(1)):
        return summary
    return f"{summary} `{named}`"


#: A function's repr, as torch's explanations quote one: ``<function Noisy.forward at 0x7f9adc0a8040>``.
_FUNCTION_REPR = re.compile(r"^<function (\S+) at 0x[0-9a-fA-F]+>$")


def module_call_glue(file: str, function: str) -> bool:
    """Whether a frame is torch's call of a module (``Module.__call__``: ``_wrapped_call_impl``, ``_call_impl``,
    torch/nn/modules/module.py): the user's line that calls the module, not a place of torch's own where a graph
    break happened (the break at a ``torch.compiler.disable``'d forward is the user's call of it).

    >>> module_call_glue("/v/site-packages/torch/nn/modules/module.py", "_call_impl")
    True
    """
    return function in ("_call_impl", "_wrapped_call_impl", "__call__") and bool(
        re.search(r"torch[/\\]nn[/\\]modules[/\\]module\.py$", file or "")
    )


def empty_frame_words(ops: Optional[int], fail: str = "") -> str:
    """Why a frame dynamo traced gave Inductor no graph (``EmptyFrame.what``), from where dynamo gave up on it
    (``fail``) or its graph's op count.

    >>> empty_frame_words(None, "Attempted to wrap RNN, GRU, or LSTM")
    'dynamo could not trace it and ran it eagerly (uncompiled): Attempted to wrap RNN, GRU, or LSTM'
    """
    if fail:
        return f"dynamo could not trace it and ran it eagerly (uncompiled): {fail}"
    if ops == 0:
        return "dynamo traced it and found no tensor op: nothing for Inductor to compile"
    return "dynamo made no graph of it: nothing for Inductor to compile"


def fmt_us(us: Optional[float]) -> str:
    """Microseconds for people, as the views write times (a kernel's time is often below 10 µs: its digits kept).

    >>> fmt_us(2_500_000), fmt_us(12_345), fmt_us(1_234), fmt_us(250), fmt_us(12.34), fmt_us(1.234), fmt_us(None)
    ('2.50 s', '12.3 ms', '1.23 ms', '250 µs', '12.3 µs', '1.23 µs', '?')
    """
    if us is None or us != us:
        return "?"
    a = abs(us)
    if a >= 1e6:
        return f"{to_fixed(us / 1e6, 2)} s"
    if a >= 1e4:
        return f"{to_fixed(us / 1e3, 1)} ms"
    if a >= 1e3:
        return f"{to_fixed(us / 1e3, 2)} ms"
    if a >= 100 or a == 0:
        return f"{to_fixed(us, 0)} µs"
    return f"{to_fixed(us, 1)} µs" if a >= 10 else f"{to_fixed(us, 2)} µs"


def delta_us_text(delta: Optional[float], a: Optional[float] = None, b: Optional[float] = None) -> str:
    """A signed time difference in the unit of the larger of the two times it is the difference of (``a``, ``b``, as
    :func:`fmt_us` writes them: s, ms, µs), so that a table's Δ reads in its row's unit: ``"−33.3 ms"`` beside
    ``33.6 ms`` and ``318 µs``, never ``"−33306 µs"``; ``""`` where ``delta`` is unknown.

    >>> delta_us_text(-33306.0, 33624.0, 318.0), delta_us_text(7.5, 40.5, 48.0), delta_us_text(0.0, 5.0, 5.0)
    ('−33.3 ms', '+7.50 µs', '±0 µs')
    >>> delta_us_text(1_250_000.0, 2_000_000.0, 3_250_000.0), delta_us_text(-120.0, 1500.0, 1380.0)
    ('+1.25 s', '−0.12 ms')
    """
    if delta is None or delta != delta:
        return ""
    big = max((abs(t) for t in (a, b, delta) if isinstance(t, (int, float))), default=0.0)
    scale, unit = (1e6, "s") if big >= 1e6 else (1e3, "ms") if big >= 1e3 else (1.0, "µs")
    v = abs(delta) / scale
    text = to_fixed(v, 0 if v >= 100 else 1 if v >= 10 else 2) if delta else "0"
    return f"{'+' if delta > 0 else '−' if delta < 0 else '±'}{text} {unit}"


def to_fixed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals as JavaScript's ``Number.prototype.toFixed`` writes it, so that a number both
    sides format reads alike: from the float's exact value, a tie away from zero (374.5 -> "375", 0.125 -> "0.13",
    -2.5 -> "-3"), where Python's format rounds a tie to even ("374"); a negative sign kept ("-0.00"), but not zero's.

    >>> to_fixed(374.5, 0), to_fixed(0.125, 2), to_fixed(-2.5, 0), to_fixed(1.005, 2), to_fixed(-0.001, 2), to_fixed(-0.0, 2)
    ('375', '0.13', '-3', '1.00', '-0.00', '0.00')
    >>> to_fixed(float("inf"), 2), fmt_us(float("inf"))
    ('inf', 'inf s')
    """
    if not math.isfinite(x):
        return f"{x:.{digits}f}"
    n, d = abs(x).as_integer_ratio()  # the float's exact value: 1.005 is 1.00499999999999989...
    q, r = divmod(n * 10**digits, d)
    q += 2 * r >= d  # a tie away from zero, as toFixed (integers: no decimal module, a megabyte to import)
    text = str(q).rjust(digits + 1, "0")
    return ("-" if x < 0 else "") + (f"{text[:-digits]}.{text[-digits:]}" if digits else text)


def recording_reason(i: int) -> str:
    """What a compile's ``i``-th CUDA graph recording (``CUDAGraphNode.record``, in order) is, as far as the span
    says: the first follows torch's warm-up run of the same sizes; a later one is a graph at other input sizes (one per
    size under dynamic shapes) or one torch recorded again, which the span does not tell apart (it was called
    "re-recorded", sending a reader after a changed input that was not there: a GPU reviewer's trial, nu21 D4).

    >>> recording_reason(0)
    'recording 1: after the warm-up run torch makes of each new graph'
    >>> recording_reason(1)[:44]
    'recording 2: a graph at other input sizes (o'
    """
    if i == 0:
        return "recording 1: after the warm-up run torch makes of each new graph"
    return (
        f"recording {i + 1}: a graph at other input sizes (one per size under dynamic shapes) or one recorded again "
        "(torch's cudagraph_unexpected_rerecord); the recording does not say which"
    )


#: The words inductor_lens gave a CUDA graph recording before :func:`recording_reason` (made again on load).
OLD_RECORDING = re.compile(r"^(first run of the graph|re-recorded \(recording \d+ of this graph\))$")


#: How torch begins a skip for mutated graph inputs (``cudagraph_utils.get_mutation_stack_trace``).
MUTATED_INPUTS_SKIP = "mutated inputs"


def is_mutating_op(target: str) -> bool:
    """Whether an FX call (its target as the report keeps it: ``aten.copy_.default``, ``aten.add_.Tensor``)
    writes its first argument in place: ATen's in-place and ``out=`` free mutating ops end in ``_``.

    >>> [is_mutating_op(t) for t in ("aten.copy_.default", "aten.index_put_.default", "aten.add.Tensor", "aten._foo.default")]
    [True, True, False, False]
    """
    parts = str(target).split(".")
    op = parts[1] if len(parts) > 2 and parts[0] in ("aten", "prims", "torch.ops.aten") else parts[-1]
    return op.endswith("_") and not op.startswith("_")


def cudagraph_skip_message(cid: str, said: str) -> str:
    """The ``cudagraph_skipped`` diagnostic of compile ``cid`` whose CUDA graphs torch skipped, ``said`` its
    ``CudaGraphs.skip_note`` (else torch's ``skip_reason``).

    >>> cudagraph_skip_message("1/0 inference", "mutated inputs (1 instances)")
    '1/0 inference: mode="reduce-overhead" but CUDA graphs skipped: mutated inputs (1 instances)'
    """
    return f'{cid}: mode="reduce-overhead" but CUDA graphs skipped: {said}'


def cudagraph_skip_text(reason: str, mutated: Sequence[tuple[str, str, str, Optional[int]]]) -> str:
    """``CudaGraphs.skip_note``: torch's reason for skipping CUDA graphs, said with what the graph shows of it. For
    ``mutated inputs (N instances)`` the inputs the compiled graph writes in place, each ``(name shown, code, file,
    line)`` of the user's line that writes it (the post-grad graph's ``copy_`` back into the input, or the in-place
    op that replaced it); torch names none (its message's "Found from" trace gives one line, no name). ``""`` where
    there is nothing to add (the views then show ``skip_reason``).

    >>> cudagraph_skip_text("mutated inputs (1 instances)", [("acc", "acc.add_(1)", "/w/make_metal_fixtures.py", 95)])
    'mutated inputs (1 instances): acc is written in place, by acc.add_(1) at make_metal_fixtures.py:95'
    >>> cudagraph_skip_text("mutated inputs (2 instances)", [("a", "a.add_(1)", "/w/f.py", 3), ("arg1_1", "", "", None)])
    'mutated inputs (2 instances): a (a.add_(1) at f.py:3), arg1_1 are written in place'
    >>> cudagraph_skip_text("cpu device (cpu_node)", [])
    ''
    """
    if not reason.startswith(MUTATED_INPUTS_SKIP) or not mutated:
        return ""

    def where(code: str, file: str, line: Optional[int]) -> str:
        at = f"{file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}" if file and line else ""
        return " at ".join(s for s in (code.strip(), at) if s)

    if len(mutated) == 1:
        name, code, file, line = mutated[0]
        said = where(code, file, line)
        return f"{reason}: {name} is written in place" + (f", by {said}" if said else "")
    names = [f"{n} ({where(c, f, ln)})" if where(c, f, ln) else n for n, c, f, ln in mutated]
    return f"{reason}: {', '.join(names)} are written in place"


def recomputed_reason(by: str, call: Any = None) -> str:
    """Why the backward computes ops again (``RecomputedBy.reason``), from ``Recomputed.by`` and its ``checkpoint``
    call (a ``Frame``); ``""`` where not known (a report made before it).

    >>> from types import SimpleNamespace as F
    >>> recomputed_reason("checkpoint", F(file="/w/train.py", line=18, code="h = checkpoint(s.mid, h)"))
    'in the region checkpoint(...) wraps at train.py:18: activation checkpointing keeps only its inputs and runs it again in the backward'
    >>> recomputed_reason("partitioner")[:62]
    "no checkpoint: AOT autograd's partitioner found them cheaper t"
    """
    if by == "checkpoint":
        where = f" at {_base(call.file)}:{call.line}" if call else ""
        return (
            f"in the region checkpoint(...) wraps{where}: activation checkpointing keeps only its inputs and runs it "
            "again in the backward"
        )
    if by == "partitioner":
        return "no checkpoint: AOT autograd's partitioner found them cheaper to compute again than to keep"
    return ""


def _base(path: str) -> str:
    return re.split(r"[/\\]", path or "")[-1]


def stack_line_text(stack: Sequence[Any]) -> str:
    """``"train.py:12 y = model(x)"``: the innermost frame of a user stack, as the views cite a call; empty
    without one."""
    if not stack:
        return ""
    f = stack[-1]
    return f"{_base(f.file)}:{f.line} {str(f.code or '').strip()}".rstrip()


def compile_when_line(c: Any) -> str:
    """One compile's when, in one line (``inductor-lens run`` prints one per compile under ``Report.when``, which tells
    the first compile's story: a lazy backward, an optimizer step and a recompile were in no line of it, nu25 M2): its
    id and frame, what started it and when, the call (``Trigger.line``), when Inductor ran where the trace says it, and
    for a recompile the first guard that failed.

    >>> from types import SimpleNamespace as N
    >>> t = N(kind="recompile", summary="at a recompile (a guard failed)", time_us=14.08e6, line="cnn.py:39 opt.step()",
    ...       inductor_start_us=14.1e6, inductor_end_us=15.2e6)
    >>> compile_when_line(N(id="4/1 inference", frame_label="step()", trigger=t, why="len(self.state) != 0"))
    '4/1 inference step(): at a recompile (a guard failed), 14.08 s (cnn.py:39 opt.step()); Inductor 14.10 s to 15.20 s; len(self.state) != 0'
    """
    t = c.trigger
    at = f", {fmt_us(t.time_us)}" if t.time_us is not None else ""
    line = f" ({t.line})" if t.line else ""
    ran = (
        f"; Inductor {fmt_us(t.inductor_start_us)} to {fmt_us(t.inductor_end_us)}"
        if t.inductor_start_us is not None and t.inductor_end_us is not None
        else ""
    )
    why = str(c.why or "").splitlines()[0] if t.kind == "recompile" and c.why else ""
    what = t.summary or trigger_summary(t.kind)
    return f"{c.id} {c.frame_label}: {what}{at}{line}{ran}" + (f"; {why}" if why else "")


def when_text(calls: Sequence[Any], compiles: Sequence[Any], frames: Sequence[Any], start: Any = None) -> str:
    """The answer to "when does Inductor run?" for one capture, in words (``Report.when``, the timeline's first
    line; ``inductor-lens run`` prints it above its last): where ``torch.compile`` was called (``CompileCall``: it
    only wraps), how long it took, and why so little where the capture's start had imported Inductor
    (``CaptureStart``: a plain run's first ``torch.compile()`` with the inductor backend imports it); then what
    started the first compile whose ``Trigger`` has a time, when dynamo handed its graph to Inductor and when
    Inductor was done (:func:`compile_start_text`); where nothing compiled, the frame dynamo began and ran eagerly
    (``EmptyFrame.fail``).

    >>> from types import SimpleNamespace as N
    >>> call = N(target="f", backend="inductor", time_us=120.0, duration_us=6000.0, user_stack=[
    ...     N(file="/home/me/train.py", line=9, code="g = torch.compile(f)")])
    >>> trig = N(kind="first_call", time_us=4_060_000.0, reason="first call of f()", user_stack=[
    ...     N(file="/home/me/train.py", line=12, code="  y = g(x)\\n")], inductor_start_us=4_140_000.0,
    ...     inductor_end_us=9_200_000.0)
    >>> when_text([call], [N(trigger=trig, frame="f")], [], N(imported_inductor=True, duration_us=3_840_000.0))
    ... # doctest: +NORMALIZE_WHITESPACE
    "torch.compile(f) at train.py:9 ran at 120 µs, took 6.00 ms and only wrapped f: nothing compiled there. It took
    only 6.00 ms because the capture's start (3.84 s, before the report's clock began) had imported Inductor: in a
    plain run the first torch.compile() with the inductor backend imports it, and lowering.py registers Inductor's
    lowerings then, but nothing is compiled until the first call. The first call of f() (train.py:12) started the
    compile: dynamo began at 4.06 s and traced its bytecode until 4.14 s, then handed the graph to Inductor
    (compile_fx), which lowered, fused and generated code until 9.20 s."
    >>> when_text([], [], [])
    'No timing was recorded.'
    """
    words = []
    first = next((c for c in compiles if c.trigger is not None and c.trigger.time_us is not None), None)
    call = _wrapping_call(calls, first)
    if call is not None:
        took = getattr(call, "duration_us", None)
        words.append(
            f"torch.compile({call.target}){_at_line(getattr(call, 'user_stack', None), ' at ')} ran at "
            f"{fmt_us(call.time_us)}{f', took {fmt_us(took)}' if took is not None else ''} and only wrapped "
            f"{call.target}: nothing compiled there."
        )
        if start is not None and start.imported_inductor and any(c.backend == "inductor" for c in calls):
            words.append(
                (f"It took only {fmt_us(took)} because" if took is not None else "Inductor was not imported by it:")
                + f" the capture's start ({fmt_us(start.duration_us)}, before the report's clock began) had imported "
                "Inductor: in a plain run the first torch.compile() with the inductor backend imports it, and "
                "lowering.py registers Inductor's lowerings then, but nothing is compiled until the first call."
            )
    if first is not None:
        words.append(compile_start_text(first.trigger, str(getattr(first, "frame", "") or "")))
    else:
        eager = next((f for f in frames if f.fail and f.time_us is not None), None)
        if eager is not None:
            at = f" ({_base(eager.file)}:{eager.line})" if eager.file else ""
            words.append(f"Dynamo began {eager.label} at {fmt_us(eager.time_us)}{at}; {eager.what}.")
    return " ".join(words) or "No timing was recorded."


def _at_line(stack: Any, lead: str = "") -> str:
    """``lead`` and ``"train.py:12"``, the innermost frame of a user stack, as :func:`when_text` cites a call (the
    line's code is the panel's to show: a long one filled three lines of the sentence); ``""`` without one."""
    if not stack:
        return ""
    f = stack[-1]
    return f"{lead}{_base(f.file)}:{f.line}"


#: The trigger kinds whose compile dynamo started (it traces, then calls the backend: Inductor's ``compile_fx``).
DYNAMO_KINDS = ("first_call", "recompile", "after_reset", "compiled_autograd")


def compile_start_text(t: Any, frame: str = "") -> str:
    """What started the first compile and when (``t``: its ``Trigger``; ``frame``: its ``Compile.frame``), and, for a compile
    dynamo started, when dynamo handed its graph to Inductor and when Inductor was done (``Trigger.inductor_start_us``
    and ``inductor_end_us``, torch's ``backend_compile`` phase): the trigger's time is when dynamo began, not when
    Inductor did (nu25 D4: "Inductor first ran at 11.1 ms" was dynamo's start; Inductor was called at 97.7 ms).

    >>> from types import SimpleNamespace as N
    >>> compile_start_text(N(kind="recompile", time_us=2e6, reason="recompile of f: x.size()[0] changed",
    ...     user_stack=[]))
    'A call failed a guard of an earlier compile and started a recompile: dynamo began at 2.00 s and traced it first, then handed the graph to Inductor. Recompile of f: x.size()[0] changed.'
    >>> compile_start_text(N(kind="lazy_backward", time_us=3e6, reason="the backward graph is compiled lazily",
    ...     user_stack=[]))
    'Inductor first ran at 3.00 s, at the first .backward() through the compiled forward: the backward graph is compiled lazily.'
    """
    where = _at_line(t.user_stack)
    where = f" ({where})" if where else ""
    at = fmt_us(t.time_us)
    reason = str(t.reason or "").strip().rstrip(".")
    if t.kind not in DYNAMO_KINDS:  # Inductor was called directly: a lazy backward by AOT autograd, AOTInductor
        # an AOTInductor compile's reason says when itself, naming the call the user made (build._aot_trigger)
        said = "" if t.kind == "ahead_of_time" and reason else f", {trigger_summary(t.kind)}"
        return f"Inductor first ran at {at}{said}{where}" + (f": {reason}." if reason else ".")
    fn = frame_label(frame) if frame else "the compiled function"
    # the trigger's time is when dynamo's compile began (its compile_attempt), a few ms after the call itself
    head = {
        "first_call": f"The first call of {fn}{where} started the compile",
        "recompile": f"A call{where} failed a guard of an earlier compile and started a recompile",
        "after_reset": f"The first call of {fn} after torch._dynamo.reset(){where} started the compile again",
        "compiled_autograd": f"A .backward() call{where} started compiled autograd's compile",
    }[t.kind]
    s, e = getattr(t, "inductor_start_us", None), getattr(t, "inductor_end_us", None)
    traced = "the autograd graph" if t.kind == "compiled_autograd" else "its bytecode"
    if s is not None:
        tail = (
            f": dynamo began at {at} and traced {traced} until {fmt_us(s)}, then handed the graph to Inductor "
            "(compile_fx), which lowered, fused and generated code" + (f" until {fmt_us(e)}." if e is not None else ".")
        )
    else:  # not recorded (a report made before it): the order, without its times
        tail = f": dynamo began at {at} and traced it first, then handed the graph to Inductor."
    # dynamo's own words add nothing to a first call's sentence but where they say more (a resume function's break)
    plain = t.kind == "first_call" and not resumed(frame.rpartition(".")[2]) and reason.startswith("first call of ")
    return head + tail + ("" if plain or not reason else f" {reason[:1].upper()}{reason[1:]}.")


def wrapped_by(calls: Sequence[Any], compiles: Sequence[Any]) -> dict[str, tuple[int, str]]:
    """Each compile dynamo started (``Trigger.kind`` in :data:`DYNAMO_KINDS`, with a time) whose function a recorded
    ``torch.compile()`` call wrapped (:func:`_wrapping_call`, that function's call only) -> the call's index in
    ``calls`` and, in words, how long after it the compile began (``Report.wrapped_by``, the panel's "When it
    compiled"): what ``torch.compile()`` did not do, said beside what did.

    >>> from types import SimpleNamespace as N
    >>> call = N(target="f", backend="inductor", time_us=100.0, user_stack=[N(file="/w/spot.py", line=9)])
    >>> trig = N(kind="first_call", time_us=11_100.0, user_stack=[N(file="/w/spot.py", line=13)])
    >>> wrapped_by([call], [N(id="0/0 inference", frame="f", trigger=trig)])
    {'0/0 inference': (0, 'torch.compile(f) at spot.py:9 only wrapped f; this compile began 11.0 ms later, at the first call of the compiled function (spot.py:13).')}
    """
    out: dict[str, tuple[int, str]] = {}
    if not calls:
        return out
    for c in compiles:
        t = c.trigger
        if t is None or t.time_us is None or t.kind not in DYNAMO_KINDS:
            continue
        call = _wrapping_call(calls, c, strict=True)
        if call is None or call.time_us is None:
            continue
        where = _at_line(t.user_stack)
        out[c.id] = (
            next(i for i, x in enumerate(calls) if x is call),
            f"torch.compile({call.target}){_at_line(call.user_stack, ' at ')} only wrapped {call.target}; this "
            f"compile began {fmt_us(t.time_us - call.time_us)} later, {trigger_summary(t.kind)}"
            + (f" ({where})." if where else "."),
        )
    return out


def source_marks(calls: Sequence[Any], compiles: Sequence[Any]) -> list[tuple[str, int, str, str]]:
    """The lines of the user's code where the two spots of "when does Inductor run?" are (``Report.source_marks``,
    the Source view's gutter): each ``torch.compile()`` call (``kind`` ``wraps``: it only wrapped the function) and
    each call that started a compile (``compiles``: the compile ids it started, dynamo's kinds only), as ``(file,
    line, kind, text)`` in file order, one per line and kind (a loop's line that started several compiles says them
    all). A stack's line is its innermost frame (:func:`line_frame`).

    >>> from types import SimpleNamespace as N
    >>> call = N(target="f", time_us=100.0, duration_us=5800.0, user_stack=[N(file="/w/spot.py", line=9, stage="user")])
    >>> trig = N(kind="first_call", time_us=11_100.0, inductor_end_us=4_100_000.0,
    ...     user_stack=[N(file="/w/spot.py", line=13, stage="user")])
    >>> for m in source_marks([call], [N(id="0/0 inference", trigger=trig)]): print(m)
    ('/w/spot.py', 9, 'wraps', 'torch.compile(f) here took 5.80 ms and only wrapped f: nothing compiled in it')
    ('/w/spot.py', 13, 'compiles', 'compile 0/0 inference began here, at 11.1 ms, at the first call of the compiled function; Inductor was done at 4.10 s')
    """
    marks: dict[tuple[str, int, str], list[str]] = {}
    for call in calls:
        f = line_frame(call.user_stack or [])
        if f is None:
            continue
        took = f" took {fmt_us(call.duration_us)} and" if getattr(call, "duration_us", None) is not None else ""
        marks.setdefault((f.file, f.line, "wraps"), []).append(
            f"torch.compile({call.target}) here{took} only wrapped {call.target}: nothing compiled in it"
        )
    for c in compiles:
        t = c.trigger
        if t is None or t.kind not in DYNAMO_KINDS:
            continue
        f = line_frame(t.user_stack or [])
        if f is None:
            continue
        at = f", at {fmt_us(t.time_us)}" if t.time_us is not None else ""
        done = getattr(t, "inductor_end_us", None)
        marks.setdefault((f.file, f.line, "compiles"), []).append(
            f"compile {c.id} began here{at}, {trigger_summary(t.kind)}"
            + (f"; Inductor was done at {fmt_us(done)}" if done is not None else "")
        )
    order = {"wraps": 0, "compiles": 1}  # on one line (``torch.compile(g)(x)``) the wrapping comes first
    ranked = sorted(marks.items(), key=lambda kv: (kv[0][0], kv[0][1], order[kv[0][2]]))
    return [(file, line, kind, "\n".join(texts)) for (file, line, kind), texts in ranked]


def _wrapping_call(calls: Sequence[Any], first: Any, strict: bool = False) -> Any:
    """The ``torch.compile`` call :func:`when_text` names beside the first compile (``first``): one made before it,
    with the inductor backend where there is one, that wrapped the function it compiled (its frame: ``fb``; the code
    after a graph break in ``outer``, ``outer``; ``Net.forward``, ``Net`` or ``forward``; a module's ``forward``, a
    module's class), the last such; else (not ``strict``) the last of those calls (a function compiled by no call the
    capture saw). None without calls (or, ``strict``, without such a call). The first call alone named
    ``torch.compile(fa)``, wrapped and never called, beside the compile of ``fb``."""
    if not calls or first is None:
        return calls[0] if calls and not strict else None
    # the frame as the capture names it: ``f``, ``Net.forward``, ``Block.torch_dynamo_resume_in_forward_at_13``,
    # ``forward (via torch's _call_impl wrapper)``
    frame = str(getattr(first, "frame", "") or "")
    via = " (via " in frame
    cls, _, name = frame.split(" (via ")[0].rpartition(".")
    m = re.fullmatch(r"torch_dynamo_resume_in_(\w+?)_at_\d+", name)
    name = m.group(1) if m else name
    t = first.trigger.time_us
    before = [c for c in calls if c.time_us is None or c.time_us <= t] or ([] if strict else list(calls))
    ours = [c for c in before if c.backend == "inductor"] or before
    last = [str(c.target).rsplit(".", 1)[-1] for c in ours]
    same = [c for c, n in zip(ours, last) if n == name or (cls and n == cls)]
    if not same and (name == "forward" or via):  # a module's: torch.compile(model) names its class
        same = [c for c, n in zip(ours, last) if n[:1].isupper()]
    return same[-1] if same else None if strict else ours[-1]


_SIZE_GUARD = re.compile(r"^\+- LAMBDA_GUARD: (.+?)(?:\s+#.*)?$", re.M)
_LOCAL = re.compile(r"\bL\[['\"]([^'\"]+)['\"]\]")
_SIZE_TERM = re.compile(r"\.(size|stride|storage_offset|numel)\(")


def size_guards(guards: str) -> list[str]:
    """The guards on sizes of a compile's guard text (torch's ``TREE_GUARD_MANAGER`` print, ``Compile.guards``):
    its root ``LAMBDA_GUARD`` expressions, the relations a later call's symbolic sizes must keep to reuse the
    compile (``17 <= x.size()[0]``: the other branch of the user's ``if x.shape[0] > 16``), a local ``L['x']`` by its
    name. What a user asks of a recompile's guards, beside the failed one its reason names.

    >>> size_guards("+- LAMBDA_GUARD: 17 <= L['x'].size()[0]  # if x.shape[0] > 16: # m.py:5 in f")
    ['17 <= x.size()[0]']
    >>> size_guards("| +- LAMBDA_GUARD: torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None")
    []
    >>> size_guards("+- LAMBDA_GUARD: L['input_ids'] is L['labels']  # model(ids, labels=ids)")
    []
    """
    out = [_LOCAL.sub(r"\1", m.group(1).strip()) for m in _SIZE_GUARD.finditer(guards or "")]
    # the root's other lambda guards are no relation of sizes: two inputs that are one object (``x is y``), a module's
    # tied weights, a global's function (``G['...'].F is G['...'].F``)
    return [g for g in out if _SIZE_TERM.search(g) and " is " not in g]


def breaks_text(breaks: int, codes: Iterable[Optional[str]], met_in: Iterable[Any] = ()) -> str:
    """The graph breaks as a report's totals say them (its summary and repr, the page's header, a job's rank lines),
    ``breaks`` recorded and its diagnostics' ``codes``. A frame dynamo could not compile and raised to the user's
    code (``compile_raised``: under ``fullgraph=True`` a graph break is that error, and no break is recorded) is said
    too, and instead of the count where no break was recorded: "0 graph break(s)" read as "nothing broke".

    ``met_in``: of each break, the compile ids it broke in (``GraphBreak.compile_ids``; a count stands for that many
    frames). Torch's ``counters["graph_break"]`` counts a break once in every compile that traced it: a break inside
    a function the compiled code calls, once while tracing the caller (which breaks at the call) and once in the
    function's own frame (``0/0``, ``1/0``: 2 frames); a recompile of the frame traces it again (``0/0``, ``0/1``: one
    frame, compiled twice). The report keeps one break per cause and place (as torch's log does, which calls the
    others duplicates), with its compiles; where the two counts differ, the text gives torch's too, and why, so that a
    user who compares with ``counters`` reads it.

    >>> breaks_text(2, [])
    '2 graph break(s)'
    >>> breaks_text(3, [], [["0/0", "1/0"], ["2/0"], ["3/0"]])
    '3 graph break(s) (4 as torch counts them: one break met in 2 frames)'
    >>> breaks_text(3, [], [["0/0", "0/1"], ["1/0", "2/0"], ["5/0"]])
    '3 graph break(s) (5 as torch counts them: one break met in 2 frames; one met again as its frame recompiled)'
    >>> breaks_text(2, [], [2, 3])
    '2 graph break(s) (5 as torch counts them: 2 breaks met in 2 and 3 frames)'
    >>> breaks_text(0, ["compile_raised", "user_code_raised"])
    '1 frame(s) dynamo could not compile (it raised to your code)'
    >>> breaks_text(1, ["compile_raised"])
    '1 graph break(s), 1 frame(s) dynamo could not compile (it raised to your code)'
    """
    text = f"{breaks} graph break(s)"
    counted, frames, again = 0, [], 0  # torch's count less ours; frames of the breaks met in several; met again
    for ids in met_in:
        ids = [f"{i}/0" for i in range(ids)] if isinstance(ids, int) else list(ids)
        counted += max(len(ids) - 1, 0)  # more than once
        distinct = len({str(i).split("/")[0] for i in ids})
        if distinct > 1:
            frames.append(distinct)
        again += len(ids) > distinct
    if (frames or again) and breaks:
        where = []
        if frames:
            n = len(frames)
            where.append(
                f"one break met in {frames[0]} frames" if n == 1 else f"{n} breaks met in {_and(frames)} frames"
            )
        if again:
            who = "one" if again == 1 else str(again)
            if not frames:
                who += " break" if again == 1 else " breaks"
            where.append(f"{who} met again as {'its frame' if again == 1 else 'their frames'} recompiled")
        text += f" ({breaks + counted} as torch counts them: {'; '.join(where)})"
    raised = sum(1 for c in codes if c == "compile_raised")
    if not raised:
        return text
    failed = f"{raised} frame(s) dynamo could not compile (it raised to your code)"
    return f"{text}, {failed}" if breaks else failed


def frames_met(graph_breaks: Iterable[Any]) -> list[list[str]]:
    """Of each graph break (a ``GraphBreak`` or its plain dict), the compile ids it broke in: ``breaks_text``'s
    ``met_in``."""
    return [
        list((b.get("compile_ids") if isinstance(b, dict) else getattr(b, "compile_ids", None)) or ())
        for b in graph_breaks
    ]


def _and(items: Iterable) -> str:
    """``2, 3 and 4``."""
    words = [str(i) for i in items]
    return " and ".join(words) if len(words) < 3 else f"{', '.join(words[:-1])} and {words[-1]}"


def _some(functions: Sequence[str], most: int = 5) -> str:
    """``f(), g() and h()``; past ``most``, the first ones and how many more."""
    items = list(functions)
    if len(items) > most:
        return f"{', '.join(items[:most])} and {len(items) - most} more"
    return _and(items)


def dynamo_state_text(state: str, functions: Sequence[str]) -> str:
    """What the capture's start did to what dynamo had compiled before it (``functions``: each as ``"h() (file:3)"``):
    ``state`` ``reset`` (diagnostic ``dynamo_reset``: ``torch._dynamo.reset()``, for the whole process: they compile
    again at their next call, also after the capture, and compile ids start again at 0/0) or ``kept``
    (``no_reset``: a call that finds one of their compiles compiles nothing, and is not in the report). A cell under
    ``%%inductor_lens`` reset dynamo without a word, and the functions of the notebook's other cells compiled again
    (a new user's trial, nu24 D3).

    >>> dynamo_state_text("reset", ["h() (cell [2]:1)"])[:92]
    "dynamo was reset at the capture's start (torch._dynamo.reset(), for the whole process): h() "
    >>> dynamo_state_text("kept", ["h() (cell [2]:1)", "g() (cell [2]:5)"])[:73]
    "dynamo's state was kept (no reset): h() (cell [2]:1) and g() (cell [2]:5)"
    """
    one = len(functions) == 1
    names = _some(functions)
    if state == "reset":
        return (
            f"dynamo was reset at the capture's start (torch._dynamo.reset(), for the whole process): {names}, "
            f"compiled before it, {'compiles' if one else 'compile'} again at {'its' if one else 'their'} next call, "
            "in the capture or after it, as in a new process; compile ids start again at 0/0 (a TORCH_LOGS run of "
            "the same session numbers on). %%inductor_lens --no-reset (capture(reset=False)) keeps dynamo's state"
        )
    return (
        f"dynamo's state was kept (no reset): {names}, compiled before the capture, "
        f"{'keeps its' if one else 'keep their'} compiles: a call that finds one compiles nothing and is not in this "
        "report (one that needs a new compile, a recompile, is); compile ids go on from the earlier ones"
    )


#: What a report with no compile says of it (``Report.nothing``), by the first of its diagnostics' codes that tells why.
_NOTHING = (
    ("call_skipped", "Nothing was compiled: dynamo skipped the compiled call, which ran eagerly (the diagnostic above "
     "says where and why)."),
    ("other_backend", "Inductor compiled nothing: torch.compile used another backend (the diagnostic above names it), "
     "which makes no kernels."),
    ("never_ran", "Nothing was compiled: the torch.compile'd function never ran inside the capture."),
    ("compile_raised", "Nothing was compiled: dynamo could not compile the frame and raised the error to your code."),
    ("recompile_limit", "Nothing was compiled: dynamo hit its recompile limit and ran the frame eagerly."),
    ("eager_fallback", "Nothing was compiled: dynamo could not compile the frame and ran it eagerly."),
    ("compile_error", "Nothing was compiled: the compile failed and torch ran the frame eagerly."),
    ("compile_unsupported", "Nothing was compiled: dynamo could not compile the frame (the diagnostic above says why)."),
    ("user_code_raised", "Nothing was compiled before your code raised."),
)  # fmt: skip


def nothing_text(compiled: bool, codes: Iterable[str]) -> str:
    """What a report with no compile says instead of a graph (``Report.nothing``; ``""`` where something compiled):
    why, by its diagnostics (``codes``), else that nothing compiled.

    >>> nothing_text(False, ["other_backend"])[:40]
    'Inductor compiled nothing: torch.compile'
    >>> nothing_text(False, [])
    'Nothing was compiled while this report was captured.'
    """
    if compiled:
        return ""
    have = set(codes)
    return next(
        (text for code, text in _NOTHING if code in have), "Nothing was compiled while this report was captured."
    )


def runs_text(runs: int, warmup: int, statistic: str = "mean") -> str:
    """How a profile's times were taken, as the roofline says it (``StepProfile.runs_text``).

    >>> runs_text(20, 3, "median")
    'median of 20 runs after 3 warm-up runs'
    >>> runs_text(20, 3)
    'mean of 20 runs after 3 warm-up runs'
    >>> runs_text(1, 1, "median")
    '1 run after 1 warm-up run'
    >>> runs_text(1, 0)
    '1 run, no warm-up run: a graph called once is timed on its first call (cold)'
    """
    if warmup and runs == 1:  # the median of one run is that run
        return f"1 run after {warmup} warm-up run{'' if warmup == 1 else 's'}"
    if warmup:
        return f"{statistic} of {runs} runs after {warmup} warm-up run{'' if warmup == 1 else 's'}"
    return (
        f"{runs} run{'' if runs == 1 else 's'}, no warm-up run: a graph called once is timed on its first call (cold)"
    )


#: A profile of fewer runs than this cannot tell a kernel's time from noise (one run has no spread to flag ``noisy``):
#: its views say so (``StepProfile.few_runs``, :func:`few_runs_text`), and so do its kernels' verdicts
#: (:func:`few_runs_verdict`).
FEW_RUNS = 2
#: The first words of a script-mode profile's ``StepProfile.method`` (``inductor-lens run --profile``, where every call
#: of a compiled graph after its first is a run).
SCRIPT_METHOD = "script mode:"


def few_runs_text(runs: int, method: str = "") -> str:
    """``StepProfile.few_runs``: where a profile has fewer than ``FEW_RUNS`` runs, what its times are worth and how to
    take more (``method``: the profile's, which says whether it was a script's, ``inductor-lens run --profile``);
    ``""`` otherwise. A report without runs (0) is one made before it counted them: nothing said.

    >>> print(few_runs_text(1, "script mode: every call of a compiled graph is a run"))
    One run: each kernel's time is a single timing, not a ranking to trust (a stall, a cold cache or another job on the machine looks the same as a slow kernel). Profile with more runs: inductor-lens run --profile times every call of a compiled graph after its first, so call the compiled model more times in the script (in a loop of 10 calls: 9 runs).
    >>> few_runs_text(5, "script mode: ...")
    ''
    """
    if not 0 < runs < FEW_RUNS:
        return ""
    how = (
        "inductor-lens run --profile times every call of a compiled graph after its first, so call the compiled model "
        "more times in the script (in a loop of 10 calls: 9 runs)"
        if method.startswith(SCRIPT_METHOD)
        else "inspect(..., profile=True), %%inductor_lens --profile and inductor_lens.time_kernels time 5 runs after a "
        "warm-up"
    )
    return (
        "One run: each kernel's time is a single timing, not a ranking to trust (a stall, a cold cache or another "
        f"job on the machine looks the same as a slow kernel). Profile with more runs: {how}."
    )


def few_runs_verdict(verdict: str) -> str:
    """The verdict of a kernel timed in fewer than ``FEW_RUNS`` runs (``KernelProfile.verdict``), said to rest on one.

    >>> print(few_runs_verdict("0% of fp32 compute peak (measured mm); compute-bound"))
    0% of fp32 compute peak (measured mm); compute-bound, from one run (a single timing: not told from noise)
    """
    return f"{verdict}, from one run (a single timing: not told from noise)" if verdict else verdict


#: A kernel whose slowest profiled run took more than this many times its fastest is flagged noisy
#: (``KernelProfile.noisy``): the runs disagree, and no single figure is the kernel's time.
NOISY_FACTOR = 3.0
#: What to do about a time whose runs disagree (the profile's ``profile_noisy`` diagnostic, a reproducer's runs).
NOISY_RERUN = "rerun on an idle machine or with more runs"
#: A reproducer's timing whose runs disagree (:func:`noisy_runs_text`): the script formats it itself (it imports
#: torch only), with ``ratio``, ``p10``, ``p90`` and ``more`` (runs to ask for).
NOISY_RUNS = (
    "noisy: the slowest tenth of the runs took at least {ratio:,.0f}x the fastest tenth (p10 {p10:.2f} us, p90 "
    "{p90:.2f} us): the machine was busy; the median is not the kernel's own time, p10 is the closest: "
    + NOISY_RERUN
    + " (--runs {more})"
)
#: A reproducer's median this many times the report's time per call, or the report's this many times the median: the
#: script says the two disagree and why that may be (:data:`FAR_FROM_REPORT`). Within it, a kernel alone on other
#: data and a kernel in its step differ by caches and neighbours, not by what they are.
FAR_FACTOR = 10.0
#: A reproducer's median far from the report's (:data:`FAR_FACTOR`): the script formats it itself, with ``here``,
#: ``report`` (us per call), ``ratio``, ``way`` (slower or faster), ``report_text`` (how the report timed it) and
#: ``threads`` (``""``, or where the report's thread count is not recorded, a clause saying so).
FAR_FROM_REPORT = (
    "far from the report: the median here, {here:.2f} us per call, is {ratio:,.0f}x {way} than the report's "
    "{report:.2f} us ({report_text}); one of the two is not the kernel's own time: the report's may be a cold run "
    "(a graph's first call) or a single one, or the machine was loaded then or is now{threads}; profile again on an "
    "idle machine, with more runs, and run this again"
)


_MIB = 1 << 20


def _decimal(units: int, places: int) -> str:
    """``units`` hundredths (``places`` 2) or tenths (1) as a decimal without trailing zeros: 1712, 2 -> ``17.12``."""
    whole, part = divmod(units, 10**places)
    return f"{whole}.{part:0{places}d}".rstrip("0").rstrip(".")


def bytes_text(n: Optional[int]) -> str:
    """A byte count as the views write one (``js/src/data.js`` ``fmtBytes``): bytes, KiB to one place, MiB to two,
    rounded half up as JavaScript's ``toFixed`` rounds (exactly: integer arithmetic, no float), trailing zeros cut.

    >>> bytes_text(512), bytes_text(1536), bytes_text(1179648), bytes_text(5947596800), bytes_text(3 * 2**20)
    ('512 B', '1.5 KiB', '1.13 MiB', '5672.07 MiB', '3 MiB')
    """
    if n is None:
        return "?"
    n = int(n)
    if n < 1024:
        return f"{n} B"
    if n < _MIB:
        return f"{_decimal((n * 20 + 1024) // 2048, 1)} KiB"
    return f"{_decimal((n * 200 + _MIB) // (2 * _MIB), 2)} MiB"


def recompile_limit_advice(limit: str, guard: str) -> str:
    """What the recompile-limit diagnostic advises, by the kind of the guard that failed last (``guard``, torch's
    words): a size can be made dynamic; a dtype, a device or ``requires_grad`` cannot (each value needs a compile of
    its own: pass one); a Python number the code reads (``G['SCALE'] == 3.0``) can be passed as a tensor; else only the
    limit (``limit``: ``recompile_limit``) can be raised.

    >>> recompile_limit_advice("recompile_limit", "tensor 'x' size mismatch at index 0. expected 4, actual 8")
    'raise torch._dynamo.config.recompile_limit or make the changing size dynamic (torch._dynamo.mark_dynamic, or torch.compile(dynamic=True))'
    >>> recompile_limit_advice("recompile_limit", "tensor 'w' dtype mismatch. expected Double, actual Half")
    'a dtype cannot be made dynamic: each one needs a compile of its own; cast the inputs to one dtype before the call, or raise torch._dynamo.config.recompile_limit'
    >>> recompile_limit_advice("recompile_limit", "G['SCALE'] == 3.0")
    'pass the changing number as a tensor (a Python number is compiled in as a constant), or raise torch._dynamo.config.recompile_limit'
    >>> recompile_limit_advice("recompile_limit", "")
    'raise torch._dynamo.config.recompile_limit'
    """
    raise_it = f"raise torch._dynamo.config.{limit}"
    m = re.search(r"\b(size|stride|dtype|device|requires_grad) mismatch", guard)
    if m and m.group(1) in ("size", "stride"):
        return (
            f"{raise_it} or make the changing size dynamic (torch._dynamo.mark_dynamic, or torch.compile(dynamic=True))"
        )
    if m:
        what = {"dtype": "a dtype", "device": "a device", "requires_grad": "requires_grad"}[m.group(1)]
        one = {"dtype": "cast the inputs to one dtype", "device": "move the inputs to one device"}.get(
            m.group(1), "call it with requires_grad set one way"
        )
        return (
            f"{what} cannot be made dynamic: each one needs a compile of its own; {one} before the call, or {raise_it}"
        )
    if re.search(r"==\s*-?\d[\w.+-]*\s*$", guard):
        return f"pass the changing number as a tensor (a Python number is compiled in as a constant), or {raise_it}"
    return raise_it


def recompile_limit_text(function: str, limit: str, value: Optional[int], guard: str = "", of: str = "") -> str:
    """What a recompile limit dynamo hit says (``RecompileLimit.text``, the timeline's row): torch stopped compiling
    the frame (``function``, as people say it: ``f()``), so a later call of it whose inputs fit none of its compiles
    runs eagerly; with the guard that failed last (``guard``, torch's words) and the compile it belongs to (``of``).
    The consequence first: a row cuts the rest.

    >>> recompile_limit_text("f()", "recompile_limit", 3, "tensor 'w' dtype mismatch. expected Double, actual Half", "0/2")
    "torch stopped compiling f() at config.recompile_limit (3): later calls of f() whose inputs fit none of its compiles run eagerly (uncompiled). The guard that failed last: tensor 'w' dtype mismatch. expected Double, actual Half (of compile 0/2)"
    >>> recompile_limit_text("", "accumulated_recompile_limit", None)
    'torch stopped compiling the frame at config.accumulated_recompile_limit: later calls of it whose inputs fit none of its compiles run eagerly (uncompiled)'
    """
    said = f"config.{limit}" + (f" ({value})" if value is not None else "")
    name, call = (function, function) if function else ("the frame", "it")
    text = (
        f"torch stopped compiling {name} at {said}: later calls of {call} whose inputs fit none of its compiles run "
        "eagerly (uncompiled)"
    )
    if guard:
        text += f". The guard that failed last: {guard}" + (f" (of compile {of})" if of else "")
    return text


def memory_peak_text(peak_bytes: int, sizes_at: str = "", uncounted: int = 0) -> str:
    """What the Memory view's first fact says of ``Memory.peak_bytes`` (``Memory.peak_text``): the peak of the
    graph's own buffers, which leaves its inputs out (the view then says where it is); "≥" where ``uncounted``
    buffers of a data-dependent size are left out (``Memory.uncounted``): the peak is at least that.

    >>> memory_peak_text(5947596800), memory_peak_text(4096, "at s77=4")
    ("peak of the graph's buffers 5672.07 MiB", "peak of the graph's buffers 4 KiB (at s77=4)")
    >>> memory_peak_text(2560, "", 16)
    "peak of the graph's buffers ≥ 2.5 KiB (not counting 16 buffers of a size known only when the graph runs)"
    """
    notes = [sizes_at] if sizes_at else []
    if uncounted:
        notes.append(f"not counting {uncounted_words(uncounted)}")
    return f"peak of the graph's buffers {'≥ ' if uncounted else ''}{bytes_text(peak_bytes)}" + (
        f" ({'; '.join(notes)})" if notes else ""
    )


def uncounted_words(n: int) -> str:
    """``n`` buffers (or tensors) whose size is data-dependent, as the Memory view says them.

    >>> uncounted_words(1), uncounted_words(3)
    ('1 buffer of a size known only when the graph runs', '3 buffers of a size known only when the graph runs')
    """
    return f"{n} buffer{'' if n == 1 else 's'} of a size known only when the graph runs"


def memory_saved_text(
    saved_bytes: int,
    count: int,
    activation_bytes: Optional[int],
    sizes_at: str = "",
    unsized: int = 0,
    unsized_held: bool = False,
) -> str:
    """What the Memory view says of the tensors a forward saves for its backward (``Memory.saved_text``): their bytes
    (each storage once) in ``count`` tensors, and the part the forward made (held until the backward); "≥" where
    ``unsized`` of them are of a data-dependent size, not counted (``unsized_held``: one of those the forward made).

    >>> memory_saved_text(6144, 3, 4096)
    'saved for backward 6 KiB in 3 tensors, 4 KiB of it made by the forward (held until the backward)'
    >>> memory_saved_text(2560, 23, 512, "", 20, True)
    'saved for backward ≥ 2.5 KiB in 23 tensors (not counting the bytes of 20, of a size known only when the graph runs), ≥ 512 B of it made by the forward (held until the backward)'
    """
    at = f" ({sizes_at})" if sizes_at else ""
    least = "≥ " if unsized else ""
    held = "≥ " if unsized_held else ""
    tensors = f"{count} tensor{'' if count == 1 else 's'}"
    unknown = f" (not counting the bytes of {unsized}, of a size known only when the graph runs)" if unsized else ""
    return (
        f"saved for backward {least}{bytes_text(saved_bytes)}{at} in {tensors}{unknown}, "
        f"{held}{bytes_text(activation_bytes or 0)} of it made by the forward (held until the backward)"
    )


def least_bytes_text(nbytes: int, uncounted: int) -> str:
    """A roll-up row's bytes where ``uncounted`` of its tensors are of a size known only when the graph runs
    (``BytesBy.bytes_text``): ``?`` where it holds only such, else its bytes as a lower bound; ``""`` where none are
    (the view writes ``bytes``).

    >>> least_bytes_text(0, 3), least_bytes_text(5376, 1), least_bytes_text(5376, 0)
    ('?', '≥ 5.3 KiB', '')
    """
    if not uncounted:
        return ""
    return f"≥ {bytes_text(nbytes)}" if nbytes else "?"


def memory_saved_table_text(saved_bytes: Optional[int], unsized: int = 0) -> str:
    """The title of the Memory view's table of the tensors saved for the backward (``Memory.saved_table_text``): their
    bytes, "≥" where ``unsized`` of them are of a size known only when the graph runs, and how many; ``""`` where
    what is saved is not known.

    >>> memory_saved_table_text(125850), memory_saved_table_text(125850, 28)
    ('saved for backward (122.9 KiB)', 'saved for backward (≥ 122.9 KiB, not counting 28 tensors of a size known only when the graph runs)')
    """
    if saved_bytes is None:
        return ""
    if not unsized:
        return f"saved for backward ({bytes_text(saved_bytes)})"
    tensors = f"{unsized} tensor{'' if unsized == 1 else 's'}"
    return (
        f"saved for backward (≥ {bytes_text(saved_bytes)}, not counting {tensors} of a size known only when the "
        "graph runs)"
    )


def saved_rollup_note(unsized: int) -> str:
    """What the Memory view says under the titles of its roll-ups of what is kept for the backward
    (``Memory.saved_rollup_note``) where ``unsized`` kept tensors are of a size known only when the graph runs: the
    rows' bytes leave them out; ``""`` where none are.

    >>> saved_rollup_note(28)
    'not counting the bytes of 28 tensors of a size known only when the graph runs: a row that holds some says ≥, one that holds only such says ?'
    """
    if not unsized:
        return ""
    return (
        f"not counting the bytes of {unsized} tensor{'' if unsized == 1 else 's'} of a size known only when the graph "
        "runs: a row that holds some says ≥, one that holds only such says ?"
    )


def uncounted_in_source(source: str) -> list[str]:
    """The buffers ``Memory.source`` of a report made before ``Memory.uncounted`` says it did not count (the note
    ``analysis/memory.unsized_note`` wrote there, the only record of them then).

    >>> uncounted_in_source("estimated ...; not counted: buf8, buf16, of a size known only when the graph runs (data-dependent: ...)")
    ['buf8', 'buf16']
    >>> uncounted_in_source("estimated from Inductor's scheduler")
    []
    """
    m = re.search(r"not counted: (.*?), of a size known only when the graph runs", source or "")
    return [b.strip() for b in m.group(1).split(",") if b.strip()] if m else []


def memory_peak_note(freed_input_bytes: int, freed_unsized: Optional[int] = 0) -> str:
    """What ``Memory.peak_bytes`` counts, as the tooltip of the view's peak says it (``Memory.peak_note``); where the
    graph frees inputs on the way (a backward drops the saved activations), that it is not the device's high-water
    mark; ``freed_unsized`` of those inputs of a size known only when the graph runs (:func:`freed_words`).

    >>> memory_peak_note(2048, 3)[-155:]
    'frees ≥ 2 KiB of them on the way (not counting 3 of a size known only when the graph runs), so the device never holds this much above its level at the call'
    """
    what = (
        "the buffers the graph allocates (its intermediate results and outputs) that are live at once, where they "
        "add up to most; its inputs are not counted"
    )
    if not freed_input_bytes and not freed_unsized:
        return what + " (they were allocated before the call)"
    if freed_unsized or freed_unsized is None:  # the high-water mark beside it bounds it only so far: not said
        return f"{what}, and the graph {freed_words(freed_input_bytes, freed_unsized)}, so the device never holds this much above its level at the call"
    return (
        f"{what}, and the graph frees {bytes_text(freed_input_bytes)} of them on the way, so the device never holds "
        "this much above its level at the call: that is the high-water mark beside it"
    )


def freed_words(freed_input_bytes: int, freed_unsized: Optional[int]) -> str:
    """How much of its inputs a graph frees on the way, where ``freed_unsized`` of them are of a size known only when
    it runs (not in ``freed_input_bytes``; None: not known whether any is, a report made before
    ``Memory.freed_uncounted`` with such inputs): "≥".

    >>> freed_words(39168, 28), freed_words(512, 0)
    ('frees ≥ 38.3 KiB of them on the way (not counting 28 of a size known only when the graph runs)', 'frees 512 B of them on the way')
    """
    least = "≥ " if freed_unsized or freed_unsized is None else ""
    unknown = f" (not counting {freed_unsized} of a size known only when the graph runs)" if freed_unsized else ""
    return f"frees {least}{bytes_text(freed_input_bytes)} of them on the way{unknown}"


def memory_held_text(
    input_bytes: int,
    unsized_inputs: int = 0,
    constant_bytes: int = 0,
    freed_input_bytes: int = 0,
    freed_unsized: Optional[int] = 0,
) -> str:
    """What the Memory view says the graph holds apart from its curve (``Memory.held_text``): its inputs (``≥``
    where ``unsized_inputs`` of them are of a size known only when it runs), under freezing the graph constants its
    kernels read, and the inputs it frees on the way (``≥`` where such inputs are among them: :func:`freed_words`).

    >>> memory_held_text(4096, 0, 49792)
    'inputs 4 KiB, weights 48.6 KiB held as graph constants (not in the curve)'
    >>> memory_held_text(125850, 28, 0, 39168, 28)
    'inputs ≥ 122.9 KiB (not in the curve), ≥ 38.3 KiB of the inputs freed on the way (not counting 28 of a size known only when the graph runs)'
    """
    text = f"inputs {'≥ ' if unsized_inputs else ''}{bytes_text(input_bytes)}"
    if constant_bytes:
        text += f", weights {bytes_text(constant_bytes)} held as graph constants"
    text += " (not in the curve)"
    if freed_input_bytes or freed_unsized:
        least = "≥ " if freed_unsized or (freed_unsized is None and unsized_inputs) else ""
        unknown = f" (not counting {freed_unsized} of a size known only when the graph runs)" if freed_unsized else ""
        text += f", {least}{bytes_text(freed_input_bytes)} of the inputs freed on the way{unknown}"
    return text


def high_water_bounds(
    net: Optional[int], at_least: bool = False, freed_unsized: Optional[int] = 0, floor: Optional[int] = None
) -> tuple[Optional[int], Optional[int]]:
    """``(low, high)``: what can be said of the device's high-water mark above the level at the call from the
    estimate ``net`` (``Memory.net_peak_bytes``: the graph's buffers less the inputs it freed by then, at its maximum).
    Buffers of a size known only when the graph runs live at some point (``at_least``) make the live bytes a lower
    bound there: no upper bound. Inputs of such a size freed (``freed_unsized``; None: not known whether any is)
    are not subtracted, which makes "live less freed" an upper bound after the first is freed: the lower bound is
    then only ``floor`` (``Memory.net_floor_bytes``: the estimate up to the first such free; nu29 D3).

    >>> high_water_bounds(100), high_water_bounds(100, True), high_water_bounds(100, False, 2, 30)
    ((100, 100), (100, None), (30, 100))
    >>> high_water_bounds(100, True, 2, 30), high_water_bounds(100, True, None)
    ((30, None), (None, None))
    """
    if net is None:
        return None, None
    high = None if at_least else net
    if not freed_unsized and freed_unsized is not None:
        return net, high
    return floor, high


def bounds_text(low: Optional[int], high: Optional[int]) -> str:
    """``(low, high)`` bytes (:func:`high_water_bounds`) said: one figure where they agree, ``≥``, ``≤``, or between.

    >>> bounds_text(1024, 1024), bounds_text(1024, None), bounds_text(None, 2048), bounds_text(1024, 2048)
    ('1 KiB', '≥ 1 KiB', '≤ 2 KiB', 'between 1 KiB and 2 KiB')
    """
    if low is not None and high is not None:
        return bytes_text(low) if low == high else f"between {bytes_text(low)} and {bytes_text(high)}"
    if low is not None:
        return f"≥ {bytes_text(low)}"
    return f"≤ {bytes_text(high)}" if high is not None else ""


def memory_curve_texts(
    peak_bytes: int,
    at_least: bool = False,
    freed_input_bytes: int = 0,
    net_peak_bytes: Optional[int] = None,
    measured: Optional[int] = None,
    uncounted: int = 0,
    freed_unsized: Optional[int] = 0,
    floor: Optional[int] = None,
    floor_node: str = "",
) -> tuple[str, str, str]:
    """What the Memory view's curve writes on itself (``Memory.curve_peak_text``, ``curve_high_water_text``,
    ``curve_least_text``): the label of its peak, "≥" where buffers of a data-dependent size are left out (``at_least``),
    and which peak it is where the graph frees inputs on the way (a backward: the curve's peak is its buffers', not the
    device's); there, the device's high-water mark, drawn as a line (measured where it was, else ``net_peak_bytes``);
    and, where ``uncounted`` buffers are left out, what the points drawn as lower bounds (hollow, over a dashed line) are.

    >>> memory_curve_texts(788992)
    ('peak 770.5 KiB', '', '')
    >>> memory_curve_texts(98308, True, uncounted=1)[0::2]
    ('peak ≥ 96 KiB', 'dashed line, hollow points: at least this much live, not counting 1 buffer of a size known only when the graph runs')
    >>> memory_curve_texts(5554216, False, 786432, 4767784)[:2]
    ("peak of the graph's buffers 5.3 MiB", 'device high-water 4.55 MiB, estimated: less the inputs freed by then')

    Inputs of a size known only when the graph runs freed on the way (``freed_unsized``; :func:`high_water_bounds`):
    the bound that holds, up to where it holds (nu29 D3).

    >>> memory_curve_texts(105088, True, 39168, 78720, None, 20, 28, 30720, "op12")[1]
    'device high-water ≥ 30 KiB, estimated up to op12: less the inputs freed by then (after it, not bounded)'
    """
    least = "≥ " if at_least else ""
    frees = freed_input_bytes or freed_unsized
    peak = (
        f"peak of the graph's buffers {least}{bytes_text(peak_bytes)}"
        if frees
        else (f"peak {least}{bytes_text(peak_bytes)}")
    )
    high = ""
    low_b, high_b = high_water_bounds(net_peak_bytes, at_least, freed_unsized, floor)
    est = bounds_text(low_b, high_b)
    if frees and measured is not None:
        high = f"device high-water {bytes_text(measured)}, measured"
    elif frees and est:
        upto = f" up to {floor_node}" if (freed_unsized and high_b is None and floor_node) else ""
        after = " (after it, not bounded)" if upto else ""
        high = f"device high-water {est}, estimated{upto}: less the inputs freed by then{after}"
    said = (
        f"dashed line, hollow points: at least this much live, not counting {uncounted_words(uncounted)}"
        if uncounted
        else ""
    )
    return peak, high, said


def memory_net_text(measured: bool = False, marked: bool = True, cut_at: str = "", below: bool = False) -> str:
    """What the Memory view's legend says of the curve's second line (``Memory.curve_net_text``), drawn where the graph
    frees inputs on the way (``MemoryPoint.net_bytes``): the live bytes less the inputs freed by then, what the device
    holds above its level at the call; its top is the high-water mark the curve marks (``marked``: estimated), or
    estimates the one ``measured`` (the flat line); ``cut_at``: the point after which the graph frees an input of a
    size known only when it runs, where the line stops; ``below``: it holds less than at the call somewhere (the line
    is drawn at 0 there).

    >>> memory_net_text()
    'dashed line: the same less the inputs the graph has freed by then (a backward drops the saved tensors it is done with), what the device holds above its level at the call; its top, marked, is the high-water mark'
    >>> memory_net_text(True, False, "op12").split("call; ")[1]
    'its top estimates the high-water mark, measured (the flat line); drawn up to op12, where it frees an input of a size known only when it runs'
    """
    top = (
        "its top estimates the high-water mark, measured (the flat line)"
        if measured
        else "its top, marked, is the high-water mark"
        if marked
        else "the high-water mark is the flat line"
    )
    cut = f"; drawn up to {cut_at}, where it frees an input of a size known only when it runs" if cut_at else ""
    under = "; on the axis where the device holds less than at the call" if below else ""
    return (
        "dashed line: the same less the inputs the graph has freed by then (a backward drops the saved tensors it is "
        f"done with), what the device holds above its level at the call; {top}{under}{cut}"
    )


def memory_high_water_text(
    measured: Optional[int],
    net: Optional[int],
    ratio: Optional[float],
    freed_input_bytes: int = 0,
    sizes_at: str = "",
    at_least: bool = False,
    freed_unsized: Optional[int] = 0,
    floor: Optional[int] = None,
    floor_node: str = "",
    unsized_inputs: int = 0,
) -> str:
    """The device's high-water mark during one call of the graph, above the allocator's level when it was called
    (``Memory.high_water_text``): ``measured_peak_bytes`` where measured, with the estimate of the same quantity
    (``net_peak_bytes``: the graph's buffers less the inputs it freed by then) and their ratio.

    >>> memory_high_water_text(4662455296, 4662460340, 1.0, 1285136460)
    "device high-water mark 4446.46 MiB above the level at the call, measured (estimated 4446.47 MiB, 1.00×): the graph's buffers less the inputs it has freed by then"
    >>> memory_high_water_text(None, 1024, None, 0)
    'device high-water mark: not measured'
    >>> memory_high_water_text(None, 2048, None, 512, "at s0=4")
    "device high-water mark: not measured; estimated 2 KiB (at s0=4) above the level at the call: the graph's buffers less the inputs it has freed by then"

    Where ``freed_unsized`` inputs of a size known only when the graph runs are freed on the way, their bytes are not
    subtracted: the estimate is a lower bound only up to the first of them (``floor``, ``floor_node``), an upper one
    only where no buffer of such a size is live (:func:`high_water_bounds`; nu29 D3). None: a report made before
    ``Memory.freed_uncounted`` with ``unsized_inputs`` such inputs, which it may free.

    >>> print(memory_high_water_text(None, 78720, None, 39168, "", True, 28, 30720, "op12"))
    device high-water mark: not measured; estimated ≥ 30 KiB above the level at the call: the graph's buffers less the inputs it has freed by then, up to op12, after which it frees the first of 28 inputs of a size known only when the graph runs; after that not bounded (the bytes of those are not known, and buffers of such a size are live)
    >>> print(memory_high_water_text(None, 78720, None, 39168, "", False, 28, 30720, "op12"))
    device high-water mark: not measured; estimated between 30 KiB and 76.9 KiB above the level at the call: the graph's buffers less the inputs it has freed by then (at most: it frees 28 inputs of a size known only when the graph runs, not subtracted; at least what it holds up to op12, after which it frees the first of them)
    >>> print(memory_high_water_text(None, 78720, None, 39168, "", True, None, unsized_inputs=28))
    device high-water mark: not measured; not estimated: 28 inputs of a size known only when the graph runs may be freed on the way (their bytes are not known), and buffers of such a size are live
    """
    frees = freed_input_bytes or freed_unsized or (freed_unsized is None and unsized_inputs)
    less = ": the graph's buffers less the inputs it has freed by then" if frees else ""
    low, high = high_water_bounds(net, at_least, freed_unsized, floor)
    est = bounds_text(low, high)
    n = freed_unsized if freed_unsized is not None else unsized_inputs
    inputs = f"{n} input{'' if n == 1 else 's'} of a size known only when the graph runs"
    note = ""
    if freed_unsized and low is not None and high is None:
        note = (
            f", up to {floor_node}, after which it frees the first of {inputs}; after that not bounded (the bytes of "
            "those are not known, and buffers of such a size are live)"
        )
    elif freed_unsized and low is not None:
        note = (
            f" (at most: it frees {inputs}, not subtracted; at least what it holds up to {floor_node}, after which it "
            "frees the first of them)"
        )
    elif freed_unsized is None and unsized_inputs and high is not None:
        note = f" (at most: {inputs} may be freed on the way, not subtracted)"
    if measured is not None:
        text = f"device high-water mark {bytes_text(measured)} above the level at the call, measured"
        if ratio is not None and net is not None and est:
            at = f" {sizes_at}" if sizes_at else ""
            text += f" (estimated {est}{at}, {ratio:.2f}×)"
        return text + less
    if net is not None and frees and not est:
        live = ", and buffers of such a size are live" if at_least else ""
        how = "may be freed on the way (their bytes are not known)" if freed_unsized is None else "are freed first"
        return f"device high-water mark: not measured; not estimated: {inputs} {how}{live}"
    if net is not None and frees:
        at = f" ({sizes_at})" if sizes_at else ""
        return f"device high-water mark: not measured; estimated {est}{at} above the level at the call{less}{note}"
    return "device high-water mark: not measured"


def timing_text(
    statistic: str, iterations: int, min_us: Optional[float], max_us: Optional[float], std_us: float
) -> str:
    """How a kernel's time was taken and how far its runs spread (``KernelProfile.timing_text``): the statistic,
    how many runs, and the fastest and slowest where known, else the standard deviation (a report made before it
    kept only the mean and its spread).

    >>> timing_text("median", 3, 15.4, 56523.2, 30000.0)
    'median of 3 runs (fastest 15.4 µs, slowest 56.5 ms)'
    >>> timing_text("mean", 3, None, None, 12781.0)
    'mean of 3 runs (± 12.8 ms)'
    >>> timing_text("mean", 0, None, None, 0.0)
    'mean of ? runs'
    """
    head = f"{statistic} of {iterations or '?'} run{'' if iterations == 1 else 's'}"
    if isinstance(min_us, (int, float)) and isinstance(max_us, (int, float)) and (iterations or 0) > 1:
        return f"{head} (fastest {fmt_us(min_us)}, slowest {fmt_us(max_us)})"
    if isinstance(std_us, (int, float)) and std_us and (iterations or 0) > 1:
        return f"{head} (± {fmt_us(std_us)})"
    return head


def node_time_text(site: int, sites: int, kernel: str, us: float, total_us: float) -> str:
    """What a fused node's box says of its time (``NodeTime.text``) where its kernel has several call sites: which
    call it leads and that its time is the mean of the kernel's launches, which the profiler times together; ``""``
    for a kernel called once.

    >>> node_time_text(2, 2, "cpp_fused_relu_1", 19021.5, 38043.1)
    "call 2 of 2 of cpp_fused_relu_1: 19.0 ms per run, its share of the kernel's 38.0 ms (the profiler times a kernel's launches together: each call is given their mean)"
    >>> node_time_text(1, 1, "k", 5.0, 5.0)
    ''
    """
    if sites < 2:
        return ""
    return (
        f"call {site} of {sites} of {kernel}: {fmt_us(us)} per run, its share of the kernel's {fmt_us(total_us)} "
        "(the profiler times a kernel's launches together: each call is given their mean)"
    )


def line_time_text(us: float, whole_us: float, kernels: int, shared: int) -> str:
    """What a line's time is (``LineTime.text``), as the Source view's tooltip says it: a kernel that also ran
    other lines (or a launch of several lines) is split evenly among them, so the lines add up to the kernels' time.

    >>> line_time_text(3930.8, 15723.0, 1, 1)
    "3.93 ms measured per run: this line's share of its kernel's 15.7 ms, which it shares with other lines (a launch's time is split evenly among its lines)"
    >>> line_time_text(12180.7, 12180.7, 1, 0)
    '12.2 ms measured per run'
    """
    head = f"{fmt_us(us)} measured per run"
    if not shared:
        return head
    whose = "its kernel's" if kernels == 1 else f"its {kernels} kernels'"
    which = "which it shares" if kernels == 1 else f"{shared} of them shared" if shared < kernels else "all shared"
    return (
        f"{head}: this line's share of {whose} {fmt_us(whole_us)}, {which} with other lines "
        "(a launch's time is split evenly among its lines)"
    )


def noisy_text(total_us: float, min_us: Optional[float], max_us: Optional[float], std_us: float = 0.0) -> str:
    """A kernel whose profiled runs disagree (``KernelProfile.noisy``): the slowest more than ``NOISY_FACTOR`` times
    the fastest, or, in a report that kept only the mean and its standard deviation, a deviation above half the
    mean; ``""`` otherwise. One stall (a busy machine, threads waking) in a few runs is enough.

    >>> print(noisy_text(15336.9, 15.4, 56523.2))
    noisy: the slowest run took 3,670x the fastest (15.4 µs to 56.5 ms): the machine was busy; the fastest run is the closest to the kernel's own time
    >>> print(noisy_text(14651.9, None, None, 12781.0))
    noisy: the runs spread by ± 12.8 ms around a mean of 14.7 ms: the machine was busy; the mean is not the kernel's own time
    >>> noisy_text(7.6, 7.4, 7.9)
    ''
    """
    if min_us is not None and max_us is not None:
        if isinstance(min_us, (int, float)) and isinstance(max_us, (int, float)) and 0 < min_us * NOISY_FACTOR < max_us:
            return (
                f"noisy: the slowest run took {max_us / min_us:,.0f}x the fastest ({fmt_us(min_us)} to {fmt_us(max_us)}): "
                "the machine was busy; the fastest run is the closest to the kernel's own time"
            )
        return ""
    if isinstance(total_us, (int, float)) and isinstance(std_us, (int, float)) and 0 < total_us < 2 * std_us:
        return (
            f"noisy: the runs spread by ± {fmt_us(std_us)} around a mean of {fmt_us(total_us)}: the machine was busy; "
            "the mean is not the kernel's own time"
        )
    return ""


def peak_fraction_text(fraction: float, at_most: bool = False) -> str:
    """A fraction of a peak as a verdict says it: ``"67%"``, or ``"at most 67%"`` where the count it rests on is an
    upper bound (``KernelProfile.at_most``: the bytes a gather's indices may repeat, counted as if they did not).

    >>> print(peak_fraction_text(0.6688), peak_fraction_text(0.6688, at_most=True))
    67% at most 67%
    """
    return f"at most {fraction:.0%}" if at_most else f"{fraction:.0%}"


def noisy_verdict(verdict: str, fastest_fraction: Optional[float], at_most: bool = False) -> str:
    """A noisy kernel's ``KernelProfile.verdict``: the verdict of its median, said to rest on runs that disagree,
    with the fraction of the peak its fastest run reached (the closest to the kernel's own time), where known.

    >>> print(noisy_verdict("0% of memory bandwidth (measured copy); memory-bound", 0.27))
    0% of memory bandwidth (measured copy); memory-bound, from a noisy time (its runs disagree by more than 3x): 27% at its fastest run
    >>> print(noisy_verdict("3% of fp32 compute peak; compute-bound", None))
    3% of fp32 compute peak; compute-bound, from a noisy time (its runs disagree by more than 3x)
    """
    if not verdict:
        return verdict
    head = f"{verdict}, from a noisy time (its runs disagree by more than {NOISY_FACTOR:g}x)"
    if fastest_fraction is None:
        return head
    return f"{head}: {peak_fraction_text(fastest_fraction, at_most)} at its fastest run"


def noisy_runs_text(p10_us: float, p90_us: float, runs: int) -> str:
    """A reproducer's timing of ``runs`` runs whose p90 is over ``NOISY_FACTOR`` times its p10, the profile's rule
    (``KernelProfile.noisy``) on the tenths, not the extremes: of hundreds of runs, one always stalls. ``""``
    otherwise. The script applies it to its own times (``NOISY_RUNS``, ``NOISY_FACTOR``).

    >>> print(noisy_runs_text(7.5, 8008.0, 200))
    noisy: the slowest tenth of the runs took at least 1,068x the fastest tenth (p10 7.50 us, p90 8008.00 us): the machine was busy; the median is not the kernel's own time, p10 is the closest: rerun on an idle machine or with more runs (--runs 2000)
    >>> noisy_runs_text(1.41, 1.80, 200)
    ''
    """
    if not 0 < p10_us * NOISY_FACTOR < p90_us:
        return ""
    return NOISY_RUNS.format(ratio=p90_us / p10_us, p10=p10_us, p90=p90_us, more=10 * max(runs, 1))


def noisy_profile_text(noisy: int, timed: int) -> str:
    """The report's diagnostic (``profile_noisy``) where most of the timed kernels are noisy
    (``KernelProfile.noisy``): the machine was busy while profiling, and the times and verdicts rest on it.

    >>> print(noisy_profile_text(17, 19))
    the machine was busy while profiling: 17 of 19 kernels' runs disagree by more than 3x (the slowest over 3x the fastest); their times are medians, their shares and fractions of peak rest on them: rerun on an idle machine or with more runs
    """
    return (
        f"the machine was busy while profiling: {noisy} of {timed} kernels' runs disagree by more than "
        f"{NOISY_FACTOR:g}x (the slowest over {NOISY_FACTOR:g}x the fastest); their times are medians, their shares "
        f"and fractions of peak rest on them: {NOISY_RERUN}"
    )


def launch_value_text(value: Any, hint: Any = None) -> str:
    """A launch argument's value as the launch table shows it (``LaunchArg.value_text``): the number or text the
    call passes, exactly (a page's JSON reader holds numbers as doubles, which round an int past 2**53: the seeds
    bound 9223372036854775807 read 9223372036854776000), with a symbolic value's concrete one after ``=``; ``""``
    for a tensor (no value).

    >>> launch_value_text(9223372036854775807), launch_value_text("s0", 8), launch_value_text(1e-05)
    ('9223372036854775807', 's0 = 8', '1e-05')
    >>> launch_value_text(None)
    ''
    """
    if value is None:
        return ""
    text = repr(value) if isinstance(value, float) else str(value)
    return f"{text} = {hint}" if hint is not None and not isinstance(hint, list) else text


def unattributed_text(share: Optional[float]) -> str:
    """``"unattributed: 3%"`` for the step's unattributed share (``StepProfile.unattributed_text``), rounded half
    up; empty without a share.

    >>> unattributed_text(0.125), unattributed_text(0.005), unattributed_text(None)
    ('unattributed: 13%', 'unattributed: 1%', '')
    """
    if share is None:
        return ""
    return f"unattributed: {math.floor(share * 100 + 0.5)}%"


#: ``FusedNode.no_line_reason``, in the three cases a fused node has no line of the user's.
INSIDE_TORCH = (
    "Dynamo recorded no source line for these ops: they come from code inside torch (such as torch.nn modules), "
    "not from a line of yours."
)
NO_FX_OPS = "No FX op of the graph is linked to this node, so no line of yours is known for it."


def fileless(file: str) -> bool:
    """Whether ``file`` names code with no file (``<string>``, ``<stdin>``: run through ``exec()``, ``eval()`` or
    ``compile()`` from a string), not Python's own frozen modules, nor the code FX generates for a GraphModule
    (``<eval_with_key>.3``: an exported or PT2E-quantized model, whose nodes keep the user's stack traces).

    >>> fileless("<string>"), fileless("<frozen runpy>"), fileless("/w/train.py"), fileless("<eval_with_key>.3")
    (True, False, False, False)
    """
    f = str(file or "")
    return f.startswith("<") and not f.startswith(("<frozen", "<eval_with_key>"))


#: How :func:`no_file_reason` begins, whatever the file: :func:`no_line_text` tells that reason by it.
NO_FILE_HEAD = "These ops ran in code with no file"


def no_file_reason(file: str) -> str:
    """``FusedNode.no_line_reason`` of ops that ran in code with no file (:func:`fileless`): torch records no
    source line for such code (its stack traces are empty), so no line of the user's is known; the line that built
    their module (``FusedNode.built_lines``) is where the module was made, not where these ops ran.

    >>> no_file_reason("<string>")[:60]
    'These ops ran in code with no file (<string>: code run throu'
    """
    return (
        f"{NO_FILE_HEAD} ({file}: code run through exec(), eval() or compile() from a string, "
        "such as a model class defined that way): torch records no source line for such code, so no line of yours "
        "is known. A line that built their module is where the module was made, not where these ops ran: their "
        "time by line is counted under no line."
    )


COMPILED_AUTOGRAD = (
    "Compiled autograd traced this backward from autograd's own graph of the .backward() call, and AOT autograd's "
    "retrace of it, the graph Inductor compiles, keeps no source line for its ops (its output code says Source "
    "Nodes: []): they are gradients of your forward's lines, which the forward's compile names."
)
#: ``Trigger.reason``'s words for a graph read from torch's caches (``Compile.from_cache``), what it adds.
FROM_CACHE = {
    "fx_graph": "read from torch's FX-graph cache: Inductor did not lower or fuse it in this run; the kernels are "
    "the cached ones",
    "aot_autograd": "read from torch's AOT-autograd and FX-graph caches: neither AOT autograd nor Inductor compiled "
    "it in this run; the kernels are the cached ones",
}
NO_PROVENANCE_CACHED = (
    "This graph was read from torch's caches, not compiled in this run: torch logs no provenance map for a cached "
    "graph, so this kernel's FX ops and your lines are not known (TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 "
    "INDUCTOR_PROVENANCE=1 makes torch compile it and log one)."
)
NO_PROVENANCE = (
    "The TORCH_TRACE log holds no provenance map for this kernel, so its FX ops and your lines are not known: "
    "torch logs one with INDUCTOR_PROVENANCE=1, and never for a lazily compiled backward."
)


_CAPTURE_LIVE = "capture it live to see it: inductor-lens run SCRIPT, or inductor_lens.capture() in Python."

#: ``Compile.unrecorded`` of a compile imported from a TORCH_TRACE log: what the log holds none of, by the panel's
#: section that would show it.
TRACE_UNRECORDED = {
    "lowered_by": "Not known for a report imported from a TORCH_TRACE log: the log holds no lowering functions (the "
    "lowering GraphLowering.call_function ran for each op); " + _CAPTURE_LIVE,
    "merge": "A TORCH_TRACE log holds no scheduler nodes before fusion, so which of its ops Inductor's lowering "
    "inlined into one loop (GraphLowering.run) and which loops the scheduler fused (Scheduler.fuse_nodes) is not "
    "known; " + _CAPTURE_LIVE,
    "compiler_stack": "Not known for a report imported from a TORCH_TRACE log: the log holds no call stacks of "
    "Inductor (the path from your call to where Inductor generated this kernel); " + _CAPTURE_LIVE,
}


def unrecorded_merge_text(kind: str, ops: Sequence[str], why: str) -> str:
    """``FusedNode.merge_text`` where the scheduler nodes before fusion are not known (``why``:
    ``Compile.unrecorded["merge"]``): the ops it runs, and that where they were merged is not known; an extern
    call's text (:func:`merge_text`: nothing is merged into one), ``""`` for glue. Never a guess of one scheduler
    node: a TORCH_TRACE import's C++ kernel of 9 ops was 5 scheduler nodes in the capture.

    >>> unrecorded_merge_text("reduction", ["var_mean", "add", "rsqrt"], "A log holds none; capture it live.")
    '3 ops in this kernel: var_mean, add, rsqrt. A log holds none; capture it live.'
    >>> unrecorded_merge_text("pointwise", [], "A log holds none; capture it live.")
    'A log holds none; capture it live.'
    >>> unrecorded_merge_text("extern", ["mm"], "A log holds none.")
    'An extern call (mm: a library or fallback kernel, not generated code): nothing is inlined or fused into it.'
    """
    if kind in ("extern", "nop"):
        return merge_text(kind, [], [], ops)
    head = f"{len(ops)} ops in this kernel: {_ops_listed(list(ops))}. " if len(ops) > 1 else ""
    head = f"One op in this kernel: {ops[0]}. " if len(ops) == 1 else head
    return head + why


INPUT_COPY = (
    "Inductor added this copy itself, no line of yours did: the kernel that reads these graph inputs wants them in "
    "another memory layout (for a convolution, channels-last: Inductor's layout optimization, "
    "torch._inductor.config.layout_optimization), so it copies them into new buffers first."
)


#: How :func:`seeds_reason` begins, whatever the lines it names: :func:`no_line_text` tells that reason by it.
SEEDS_HEAD = "Inductor made these seeds"


def seeds_reason(seeded: Sequence[Any]) -> str:
    """``FusedNode.no_line_reason`` of Inductor's random seeds (``prims.inductor_seeds``): what made them, and the
    lines of the random ops that take their seeds from them (``seeded``: their frames, ``user_lines``), where known.

    >>> from types import SimpleNamespace as F
    >>> seeds_reason([F(file="/a/s9.py", line=7), F(file="/a/s9.py", line=8), F(file="/a/m.py", line=3)]).split("(")[1]
    'those of s9.py:7, 8 and m.py:3), and the kernel of each op '
    """
    by_file: dict[str, list[str]] = {}
    for f in seeded:
        by_file.setdefault(_base(f.file), []).append(str(f.line))
    where = " and ".join(f"{file}:{', '.join(lines)}" for file, lines in by_file.items())
    return (
        f"{SEEDS_HEAD}, no line of yours did: on each call of the compiled graph its random-number pass "
        "draws one seed for each random op of the graph" + (f" (those of {where})" if where else "") + ", and the "
        "kernel of each op (a dropout, rand_like, randint...) makes its random numbers from its seed."
    )


def no_line_reason(
    has_user_lines: bool,
    fx_nodes: Iterable[str],
    given: str = "",
    copy: bool = False,
    seeded: Optional[list] = None,
    compiled_autograd: bool = False,
) -> str:
    """``FusedNode.no_line_reason``: empty when a user line is known; else :data:`INPUT_COPY` for a copy of graph
    inputs (``copy``), :func:`seeds_reason` for Inductor's random seeds (``seeded``: the lines of the random ops
    they seed, ``None`` for another node), ``given`` (the TORCH_TRACE importer's :data:`NO_PROVENANCE`),
    :data:`COMPILED_AUTOGRAD` for the ops of compiled autograd's backward (``compiled_autograd``: torch records no
    stack for them), :data:`INSIDE_TORCH` for other ops with no recorded stack, :data:`NO_FX_OPS` for none."""
    if has_user_lines:
        return ""
    if copy:
        return INPUT_COPY
    if seeded is not None:
        return seeds_reason(seeded)
    if given and given not in (INSIDE_TORCH, COMPILED_AUTOGRAD, NO_FX_OPS):  # those made here, made again
        return given
    if not any(True for _ in fx_nodes):
        return NO_FX_OPS
    return COMPILED_AUTOGRAD if compiled_autograd else INSIDE_TORCH


def no_line_text(reason: str) -> str:
    """What the kernel table's line cell says of a kernel no line of the user's ran nor built (``Kernel.no_line_text``),
    by its fused nodes' :func:`no_line_reason` (the whole reason is the cell's tooltip): ``Inductor's layout copy``,
    ``inside torch``, ``Inductor's random seeds``...; ``""`` for no reason.

    >>> no_line_text(INPUT_COPY), no_line_text(INSIDE_TORCH), no_line_text("")
    ("Inductor's layout copy", 'inside torch', '')
    """
    if not reason:
        return ""
    fixed = {
        INPUT_COPY: "Inductor's layout copy",
        INSIDE_TORCH: "inside torch",
        NO_FX_OPS: "no FX op linked",
        COMPILED_AUTOGRAD: "compiled autograd's",
        NO_PROVENANCE: "not in the log",
        NO_PROVENANCE_CACHED: "cached: not known",
    }
    if reason in fixed:
        return fixed[reason]
    if reason.startswith(SEEDS_HEAD):
        return "Inductor's random seeds"
    if reason.startswith(NO_FILE_HEAD):
        return "code with no file"
    return "no line known"


#: FX node kinds that name a tensor rather than compute one (a graph input, a constant): never in ``FusedNode.ops``.
NOT_OPS = frozenset({"placeholder", "get_attr"})


def is_input_copy(kernel: Optional[str], fx_ops: Iterable[str]) -> bool:
    """A fused node whose kernel computes nothing: each of its FX nodes is a graph input (``fx_ops``: their
    ``GraphNode.op``). Inductor made it to copy those inputs into the layout a kernel that reads them wants
    (``ExternKernel.require_stride_order``): no op of the graph asked for it."""
    ops = list(fx_ops)
    return bool(kernel) and bool(ops) and all(o == "placeholder" for o in ops)


def is_channels_last(shape: Any, stride: Any) -> bool:
    """Whether a 4-d tensor of ``shape``/``stride`` (ints) is laid out channels-last (NHWC: channels innermost).

    >>> is_channels_last([8, 3, 3, 3], [27, 1, 9, 3]), is_channels_last([8, 3, 3, 3], [27, 9, 3, 1])
    (True, False)
    """
    if not (isinstance(shape, list) and isinstance(stride, list) and len(shape) == len(stride) == 4):
        return False
    if not all(isinstance(d, int) for d in shape + stride):
        return False
    n, c, h, w = shape
    return c > 1 and stride[1] == 1 and stride[3] == c and stride[2] == c * w and (n == 1 or stride[0] == c * h * w)


def layout_name(shape: Any, stride: Any) -> str:
    """The memory format a tensor of ``shape``/``stride`` (ints) is laid out in, as torch names it: ``contiguous``
    (row-major; a dimension of size 1 has any stride, as in torch's own ``is_contiguous``: a 1x1 convolution's
    weight is both, and contiguous first), ``channels_last`` (a 4-d tensor, channels innermost:
    :func:`is_channels_last`); ``""`` for any other layout or a symbolic size or stride.

    >>> layout_name([8, 3, 64, 64], [12288, 4096, 64, 1]), layout_name([8, 3, 64, 64], [12288, 1, 192, 3])
    ('contiguous', 'channels_last')
    >>> layout_name([64, 32], [1, 64])
    ''
    """
    if not (isinstance(shape, list) and isinstance(stride, list) and len(shape) == len(stride)):
        return ""
    if not all(isinstance(d, int) for d in shape + stride):
        return ""
    expected, contiguous = 1, True
    for size, st in zip(reversed(shape), reversed(stride)):
        if size != 1 and st != expected:
            contiguous = False
            break
        expected *= size
    return "contiguous" if contiguous else "channels_last" if is_channels_last(shape, stride) else ""


def input_copy_label(names: Iterable[str], channels_last: bool) -> str:
    """``FusedNode.label`` of an input copy (:func:`is_input_copy`): what it is and the inputs it copies, as the
    user knows them.

    >>> input_copy_label(["conv1.weight", "x"], True)
    'channels-last copy: conv1.weight, x'
    """
    return f"{'channels-last copy' if channels_last else 'layout copy'}: {', '.join(dict.fromkeys(names))}"


def original_op(target: str, original: str) -> str:
    """``GraphNode.original_op``: the short name of the op a node was decomposed from (its FX ``original_aten``),
    when that is another op than its own.

    >>> original_op("aten.mul.Tensor", "aten.gelu.default"), original_op("aten.addmm.default", "aten.addmm.default")
    ('gelu', '')
    """
    op = short_op(original) if original else ""
    return op if op != short_op(target) else ""


def _readable_op(op: str) -> str:
    """An aten op name without torch's internal spelling: ``_native_batch_norm_legit_functional`` -> ``batch_norm``."""
    op = re.sub(r"^native_", "", op.lstrip("_"))
    return re.sub(r"_legit(_functional|_no_training)?$|_functional$", "", op) or op


#: The results of the multi-output ops whose schema names none of them (``native_layer_norm(...) -> (Tensor,
#: Tensor, Tensor)``), as torch's derivative formulas call them (``tools/autograd/derivatives.yaml``), by short
#: op name: ``GraphNode.output`` of the nodes an op's decomposition returned, or of a ``getitem`` of its call.
#: Ops whose schema names its results (SDPA's ``output, logsumexp``, ``topk``'s ``values, indices``) need none.
OUTPUT_NAMES: dict[str, tuple[str, ...]] = {
    "native_layer_norm": ("output", "mean", "rstd"),
    "native_group_norm": ("output", "mean", "rstd"),
    "native_batch_norm": ("output", "save_mean", "save_invstd"),
    "_native_batch_norm_legit": ("output", "save_mean", "save_invstd"),
    "_native_batch_norm_legit_no_training": ("output", "save_mean", "save_invstd"),
    "_native_batch_norm_legit_functional": ("output", "save_mean", "save_invstd", "running_mean", "running_var"),
    "_fused_rms_norm": ("output", "rstd"),
    "var_mean": ("var", "mean"),
    # (the RNG state it ran the op on, the op's results): a random op of a checkpointed region (SDPA, dropout)
    "run_and_save_rng_state": ("RNG state",),
    "std_mean": ("std", "mean"),
    "native_dropout": ("output", "mask"),
    "max_pool2d_with_indices": ("output", "indices"),
    "max_pool3d_with_indices": ("output", "indices"),
    "_embedding_bag": ("output", "offset2bag", "bag_size", "max_indices"),
    "native_layer_norm_backward": ("grad_input", "grad_weight", "grad_bias"),
    "native_group_norm_backward": ("grad_input", "grad_weight", "grad_bias"),
    "native_batch_norm_backward": ("grad_input", "grad_weight", "grad_bias"),
    "convolution_backward": ("grad_input", "grad_weight", "grad_bias"),
}


def output_name(op: str, index: int, named: str = "") -> str:
    """``GraphNode.output``: the name of result ``index`` of ``op`` (its target, ``aten.native_layer_norm.default``):
    :data:`OUTPUT_NAMES`' where it has the op, else torch's own name for that return (``named``, from the op's
    schema), else its position.

    >>> output_name("aten.native_layer_norm.default", 1), output_name("aten.topk.default", 1, "indices")
    ('mean', 'indices')
    >>> output_name("aten.some_op.default", 2)
    'output 2'
    """
    names = OUTPUT_NAMES.get(short_op(op), ())
    return names[index] if 0 <= index < len(names) else named or f"output {index}"


def with_part(op: str, part: str) -> str:
    """An op and which of its results (``GraphNode.output``): ``layer_norm: mean``; an index is written as Python
    indexes, ``addmm[1]`` (the part of the op's result a ``select``/``slice`` took, ``qkv[1]``).

    >>> with_part("layer_norm", "mean"), with_part("addmm", "[:, 16:32]"), with_part("gelu", "")
    ('layer_norm: mean', 'addmm[:, 16:32]', 'gelu')
    """
    if not part:
        return op
    return f"{op}{part}" if part.startswith("[") else f"{op}: {part}"


def saved_origin(name: str, forward: Any) -> tuple[Any, str]:
    """``(node, part)``: the forward's post-grad node (by name, ``forward``) that made tensor ``name``, after views and
    tuple unpacking (:data:`GLUE_OPS`), and which of its results or which part of it the tensor is, the first
    ``GraphNode.output`` on the way (``mean``, ``[1]``; ``""`` if none); ``(None, "")`` where the forward has no
    such node."""
    node = forward.get(name)
    part = node.output if node is not None else ""
    seen: set = set()
    while node is not None and node.op == "call_function" and node.short_op in GLUE_OPS and node.name not in seen:
        seen.add(node.name)
        parent = forward.get(node.inputs[0]) if node.inputs else None
        if parent is None:
            break
        node = parent
        part = part or node.output
    return node, part


def counted_bytes(saved: Any) -> list:
    """The bytes each of ``saved`` (``SavedTensor`` rows) counts in a total: a storage once (``SavedTensor.shares``),
    in the first row that holds it, at the storage's bytes as the forward allocated it (``storage_bytes``: held whole,
    whatever part each row views), else at the sum of its rows' ``bytes`` (an upper bound: two views may overlap);
    0 in the rows that share it; None where a row's bytes are not known.

    >>> from types import SimpleNamespace as T
    >>> q = T(name="select", bytes=16, shares="", storage_bytes=48)
    >>> counted_bytes([q, T(name="select_1", bytes=16, shares="select"), T(name="select_2", bytes=16, shares="select")])
    [48, 0, 0]
    >>> counted_bytes([T(name="mul_2", bytes=16, shares="", storage_bytes=None), T(name="t", bytes=16, shares="mul_2")])
    [32, 0]
    """
    rest: dict = {}
    for s in saved:
        if s.shares and s.bytes is not None:
            rest[s.shares] = rest.get(s.shares, 0) + s.bytes
    out = []
    for s in saved:
        whole = getattr(s, "storage_bytes", None)
        if s.shares:
            out.append(0)
        elif s.bytes is None:
            out.append(None)
        else:
            out.append(whole if whole is not None and s.name in rest else s.bytes + rest.get(s.name, 0))
    return out


def saved_group_notes(groups: Any, saved: Any) -> list:
    """What the Memory view says under each row of ``Memory.saved_groups`` (``SavedGroup.note``) whose tensors share
    their storage with others (``SavedTensor.shares``), so that its total reads right: a row whose tensors hold a
    storage others view counts it whole, once (``rules.counted_bytes``: q, k and v of one projection's buffer, the
    buffer in q's row), so its total is not its tensors times each; a row whose tensors view a storage another row
    counts holds no byte of its own (0 B), which is not "free". Each row's other rows named by their op (``what``).
    ``""`` for a row of no shared storage.

    >>> from types import SimpleNamespace as T
    >>> t = lambda name, shares="", whole=None: T(name=name, bytes=131072, shares=shares, storage_bytes=whole)
    >>> saved = [t("q0", "", 393216), t("k0", "q0"), t("v0", "q0"), t("q1", "", 393216), t("k1", "q1"), t("v1", "q1")]
    >>> g = lambda what, names: T(what=what, names=names)
    >>> notes = saved_group_notes([g("split: output 0", ["q0", "q1"]), g("split: output 1", ["k0", "k1"]),
    ...                            g("split: output 2", ["v0", "v1"])], saved)
    >>> print(*notes, sep="\\n")
    each shares its storage of 384 KiB with split: output 1, split: output 2: the storage counted once, here (2 × 384 KiB)
    each a view of a storage split: output 0 counts: 0 B here
    each a view of a storage split: output 0 counts: 0 B here
    """
    counted = dict(zip((s.name for s in saved), counted_bytes(saved)))
    by_name = {s.name: s for s in saved}
    row_of = {n: i for i, g in enumerate(groups) for n in g.names}
    sharers: dict = {}  # a holder's name -> the rows of the tensors that share its storage
    for s in saved:
        if s.shares:
            sharers.setdefault(s.shares, []).append(row_of.get(s.name))

    def rows(idx: Iterable, own: int) -> str:
        seen = list(dict.fromkeys(j for j in idx if j is not None))
        said = [groups[j].what or ", ".join(groups[j].names[:3]) for j in seen if j != own]
        return ", ".join(said + (["another tensor of this row"] if own in seen else []))

    out = []
    for i, g in enumerate(groups):
        members = [by_name[n] for n in g.names if n in by_name]
        held = [m for m in members if m.name in sharers]
        views = [m for m in members if m.shares]
        each = "each " if len(members) > 1 else ""
        said = []
        if held:
            sizes = {counted.get(m.name) for m in held}
            size = sizes.pop() if len(sizes) == 1 else None
            of = f" of {bytes_text(size)}" if size is not None else ""
            times = f" ({len(held)} × {bytes_text(size)})" if size is not None and len(held) > 1 else ""
            whom = rows((j for m in held for j in sharers[m.name]), i)
            some = each if len(held) == len(members) else f"{len(held)} of them "
            said.append(f"{some}shares its storage{of} with {whom}: the storage counted once, here{times}")
        if views:
            whom = rows((row_of.get(m.shares) for m in views), i)
            some = each if len(views) == len(members) else f"{len(views)} of them "
            elsewhere = all(row_of.get(m.shares) != i for m in views)
            zero = ": 0 B here" if elsewhere and len(views) == len(members) else ", not again here"
            said.append(f"{some}a view of a storage {whom} counts{zero}")
        out.append("; ".join(said))
    return out


def saved_note(
    view_op: str, module: str, op: str, storage: str = "", shares: str = "", copy_of: str = "", dtype: str = ""
) -> str:
    """What the Memory view says of a saved tensor that is a view of another op's output (``view_op``, the view the
    backward takes; ``module`` and ``op``, what made the storage it views) and of one whose storage an earlier row
    holds (``shares``: its bytes are counted once, there). Where the op that made the storage is a cast of a graph
    input (``copy_of``, the parameter or input as the user names it; ``dtype``, the cast's: a Linear's weight under
    ``torch.autocast``), the view is of that copy, not of the module's output.

    >>> saved_note("t", "h.1.mlp.act", "gelu")
    "t: a view of h.1.mlp.act's output (gelu)"
    >>> saved_note("t", "model.fc", "_to_copy", copy_of="model.fc.weight", dtype="bfloat16")
    't: a view of the bfloat16 copy of model.fc.weight'
    >>> saved_note("", "", "", "buf4", "mul_2")
    'shares its storage buf4 with mul_2: counted once, there'
    """
    said = []
    if view_op and copy_of:
        said.append(f"{view_op}: a view of the {dtype + ' ' if dtype else ''}copy of {copy_of}")
    elif view_op:
        said.append(f"{view_op}: a view of {module + chr(39) + 's' if module else 'the'} output ({op})")
    if shares:
        said.append(f"shares its storage {storage} with {shares}: counted once, there".replace("storage  ", "storage "))
    return "; ".join(said)


def rng_state_note(op: str) -> str:
    """What the Memory view says of a saved RNG state (``SavedTensor.note``): the state of the random number generator
    the forward ran ``op`` on (a random op in a region ``torch.utils.checkpoint`` wraps: SDPA, dropout, under
    ``run_and_save_rng_state``), which the backward restores to run it again alike (``run_with_rng_state``); its
    length is the generator's, no size of the model.

    >>> rng_state_note("_scaled_dot_product_flash_attention_for_cpu")[:78]
    'the RNG state _scaled_dot_product_flash_attention_for_cpu ran on (a random op '
    """
    return (
        f"the RNG state {op} ran on (a random op of a checkpointed region), kept so that the backward runs it again "
        "alike; its length is the generator's state, no size of the model"
    )


def saved_name(name: str, forward: Any) -> str:
    """``GraphNode.display_name`` of a backward graph's input that the forward saved for it (role ``saved``), from
    the forward's post-grad nodes by name (``forward``): the forward op that made it, after views and tuple
    unpacking (:data:`GLUE_OPS`), as the user wrote it (the op it was decomposed from: ``gelu``, not its ``mul``),
    with that op's innermost nn.Module: ``h.0.mlp gelu (saved)``; where the op has several results, which one
    (``GraphNode.output``, the first on the way from the input to the op): ``h.0.ln layer_norm: mean (saved)``, or
    which part a ``select``/``slice`` on the way took: ``attn.qkv addmm[1] (saved)`` for the ``k`` of
    ``qkv[0], qkv[1], qkv[2]`` (:func:`with_part`),
    or, for a tensor that op's decomposition made on the way and did not return, the op that made it there
    (``h.0.bn batch_norm: rsqrt (saved)``, the ``rsqrt`` before the squeeze it returns); a graph input of the
    forward (or a view of one) by its own name: ``fc1.weight (saved)``; ``view_58 (saved)`` when the forward has no
    such node."""
    return f"{made_by_text(name, forward)} (saved)"


def made_by_text(name: str, forward: Any) -> str:
    """:func:`made_by` in one text, the module before the op (``h.0.mlp gelu``); a module that is only an index of
    a top-level ``nn.Sequential`` (``1``, ``0.2``) as Python indexes it (``[1] relu``, ``[0][2] addmm``): ``1 relu``
    read as a count.

    >>> from types import SimpleNamespace as N
    >>> made_by_text("relu", {"relu": N(name="relu", op="call_function", short_op="relu", original_op="", output="",
    ...                                 module_stack=["1"], inputs=[])})
    '[1] relu'
    """
    module, what = made_by(name, forward)
    if re.fullmatch(r"\d+(\.\d+)*", module):
        module = "".join(f"[{i}]" for i in module.split("."))
    return " ".join(filter(None, [module, what]))


#: What a Welford reduction's results hold (Inductor's ``var_mean``: the mean, m2, and the count, which the C++
#: accumulator keeps as ``.mean``, ``.m2`` and ``.weight``): the launch table's name of a buffer that holds one.
WELFORD_PARTS = {
    "mean": "Welford mean",
    "m2": "Welford m2: the sum of squares about the mean",
    "weight": "Welford weight: the count",
}


def welford_part(source: str, param: str) -> str:
    """Which result of a Welford reduction (:data:`WELFORD_PARTS`) a C++ kernel's ``source`` stores through its
    pointer ``param``, ``""`` where it stores none: ``tmp_acc0_vec.m2.store(out_ptr1 + ...)`` or
    ``out_ptr1[x0] = tmp_acc0.m2;``.

    >>> welford_part("    tmp_acc0_vec.m2.store(out_ptr1 + static_cast<int64_t>(x0));", "out_ptr1")
    'm2'
    >>> welford_part("    out_ptr0[static_cast<int64_t>(x0)] = tmp_acc0.mean;", "out_ptr0")
    'mean'
    >>> welford_part("    tmp_acc0_vec.m2.store(out_ptr1 + static_cast<int64_t>(x0));", "out_ptr10")
    ''
    """
    if not param or param not in (source or "") or not any(f".{w}" in source for w in ("m2", "mean", "weight")):
        return ""  # no store of a Welford accumulator's field: no search (the import's time on a small log)
    p = re.escape(param)
    m = re.search(rf"\b\w+\.(m2|mean|weight)\.store\(\s*{p}\b", source) or re.search(
        rf"\b{p}\[[^\]\n]*\]\s*=\s*\w+\.(m2|mean|weight)\s*;", source
    )
    return m.group(1) if m else ""


def welford_holds(made: str, part: str) -> str:
    """``LaunchArg.holds`` of a buffer a Welford reduction's result ``part`` fills, after what made it (``made``,
    :func:`made_by_text` of the reduction's op): a batch norm's m2, which its launch table left unnamed between its
    ``save_mean`` and ``save_invstd``.

    >>> welford_holds("model.block2.bn1 batch_norm: var_mean", "m2")
    'model.block2.bn1 batch_norm: var_mean (Welford m2: the sum of squares about the mean)'
    """
    return f"{made} ({WELFORD_PARTS[part]})" if made else WELFORD_PARTS[part]


def owner_module(display_name: str) -> str:
    """The module that owns a graph input, by its name: ``fc1.weight`` -> ``fc1``; a user argument (``x``) has none."""
    return display_name.rsplit(".", 1)[0] if "." in display_name else ""


def gradient_text(inputs: list[str]) -> str:
    """What a backward's output holds: the gradient of the forward inputs ``inputs`` (by their names: one, or
    several where the backward returns one tensor for them), as PyTorch names a tensor's gradient and as an
    optimizer step's graph names the same tensor, ``fc1.weight.grad``: short for the output's box, and its stub,
    clipped at the start, keeps ``.grad``. For an input that is no leaf (a value handed over at a graph break) it
    is the gradient flowing back into the graph that made it, which no ``.grad`` keeps.

    >>> gradient_text(["fc1.weight"])
    'fc1.weight.grad'
    >>> gradient_text(["x", "y"])
    'x.grad, y.grad'
    """
    return ", ".join(f"{name}.grad" for name in inputs)


def copy_name(node: Any) -> str:
    """What a buffer holds that is Inductor's copy of graph input ``node`` (a convolution's weight laid out
    channels-last): ``copy of layer4.1.conv1.weight``; the one wording of the launch table, the outputs and the
    Memory view."""
    return f"copy of {node.display_name or node.name}"


def made_by(name: str, forward: Any) -> tuple[str, str]:
    """``(module, what)``: what made tensor ``name`` of a graph whose post-grad nodes are ``forward`` (by name), as
    :func:`saved_name` says it: the op after views and tuple unpacking, as the user wrote it, with which of its
    results or which part (``layer_norm: mean``, ``addmm[1]``), and that op's innermost nn.Module (``h.0.ln``); a
    graph input by its own name (``fc1.weight``) and no module; ``name`` itself where the graph has no such node."""
    node, part = saved_origin(name, forward)
    if node is None:
        return "", name
    if node.op == "placeholder":
        return "", node.display_name or node.name
    module = node.module_stack[-1] if node.module_stack else ""
    op = _readable_op(node.original_op or node.short_op) if node.op == "call_function" else node.name
    if not part and node.op == "call_function" and node.original_op in OUTPUT_NAMES:
        part = node.short_op  # made on the way by a multi-output op's decomposition, not one of its results
    op = with_part(op or node.name, part) if part else op
    return module, op or node.name


_NESTING = re.compile(r"""[()\[\]{}'"]""")
_SPLIT_MARKS = re.compile(r"""[()\[\]{}'",]""")


_RETURN = re.compile(r"^[ \t]+return \((.*)\)[ \t]*$", re.M)


def returned_items(code: str, function: str = "call") -> list[str]:
    """The items of the ``return (...)`` of the output code's ``call`` (or of another of its functions: a repeated
    region's ``repeated_subgraph0``), as text, in order (``[]`` when not found: a C++ wrapper's code).

    >>> returned_items("def call(args):\\n    return (reinterpret_tensor(arg0_1, (16, 8), (1, 16), 0), buf0, None, )")
    ['reinterpret_tensor(arg0_1, (16, 8), (1, 16), 0)', 'buf0', 'None']
    """
    at = code.find(f"def {function}(")
    if at < 0 and function != "call":
        return []
    m = _RETURN.search(code, at if at >= 0 else 0)
    return split_args(m.group(1)) if m else []


def storage_name(item: str) -> str:
    """The buffer an item of a ``return`` stands for (``reinterpret_tensor(buf8, ...)`` is ``buf8``)."""
    m = re.match(r"(?:reinterpret_tensor\()?\s*([A-Za-z_]\w*)", item)
    return m.group(1) if m else item


def output_note(role: str, view_of: str = "") -> str:
    """What an output's oval says under its name (``GraphOutput.note``): ``graph output``; a training forward's
    ``output · returned`` to the user's code or ``saved for backward``; for a view of graph input ``view_of``, that it
    is one and copies nothing (the output code returns ``reinterpret_tensor`` of the input's storage).

    >>> output_note("", "x")
    'view of x (no copy)'
    >>> output_note("saved")
    'saved for backward'
    """
    if view_of:
        said = {"returned": " · returned", "saved": " · saved for backward"}.get(role, "")
        return f"view of {view_of} (no copy){said}"
    return {"returned": "output · returned", "saved": "saved for backward"}.get(role, "graph output")


def split_args(text: str) -> list[str]:
    """Top-level comma-separated parts of an argument list (brackets and quotes respected); each part
    stripped, an empty last part left out."""
    if not _NESTING.search(text):  # most lists (sizes, strides) nest nothing: split in C
        parts = [p.strip() for p in text.split(",")]
        if not parts[-1]:
            parts.pop()
        return parts
    parts, depth, quote, start = [], 0, "", 0
    for m in _SPLIT_MARKS.finditer(text):  # only the characters that matter, found in C
        ch = m.group()
        if quote:
            if ch == quote:
                quote = ""
        elif ch == "'" or ch == '"':
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:  # a comma
            parts.append(text[start : m.start()].strip())
            start = m.end()
    last = text[start:].strip()
    if last:
        parts.append(last)
    return parts


_INT = re.compile(r"-?\d+")


def size_tuple(text: str) -> Optional[list]:
    """A size or stride tuple of the output code as a list: ``(4, 32)`` / ``(s0, 32)`` / ``(8, )`` / ``()`` ->
    ``[4, 32]`` / ``["s0", 32]`` / ``[8]`` / ``[]``; None where ``text`` is no tuple or list.

    >>> size_tuple("(64*s27, 64, 1)")
    ['64*s27', 64, 1]
    """
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")) and not (text.startswith("[") and text.endswith("]")):
        return None
    is_int = _INT.fullmatch
    return [int(p) if is_int(p) else p for p in split_args(text[1:-1])]


#: The calls by which the output code checks a tensor's layout, on a line of their own: ``assert_size_stride(name,
#: sizes, strides, op)`` (every torch), and torch 2.15's ``assert_tensor_metadata(name, sizes, strides, dtype, op)``
#: (an extern kernel's new result, its dtype beside) and ``assert_size_stride_grouped((names), (sizes), (strides),
#: op)`` (the graph inputs a kernel is the first to read, checked together just before it).
_SIZE_ASSERT = re.compile(r"^\s*(?P<fn>assert_size_stride(?:_grouped)?|assert_tensor_metadata)\((?P<args>.*)\)\s*$")
_TORCH_DTYPE = re.compile(r"torch\.(\w+)")


def asserted_layouts(line: str) -> list[tuple[str, Optional[list], Optional[list], Optional[str]]]:
    """``[(name, sizes, strides, dtype)]`` of each tensor one line of output code asserts the layout of (sizes and
    strides as :func:`size_tuple` reads them, symbolic ones as text; dtype only where the line gives it); ``[]`` for
    any other line. The one reader of these assertions, for the launches, the memory of an import and the strides of
    saved tensors.

    >>> asserted_layouts("    assert_tensor_metadata(buf0, (4, 16), (16, 1), torch.float32, 'aten.mm')")
    [('buf0', [4, 16], [16, 1], 'float32')]
    >>> asserted_layouts("assert_size_stride_grouped((a, b), ((s77, 64), (64, )), ((64, 1), (1, )), 'input')")
    [('a', ['s77', 64], [64, 1], None), ('b', [64], [1], None)]
    """
    m = _SIZE_ASSERT.match(line) if "assert_" in line else None
    if m is None:
        return []
    parts = split_args(m["args"])
    if len(parts) < 3:
        return []
    if m["fn"] == "assert_size_stride_grouped":
        names, sizes, strides = (size_tuple(p) or [] for p in parts[:3])
        if not len(names) == len(sizes) == len(strides):
            return []
        return [(str(n), size_tuple(str(s)), size_tuple(str(t)), None) for n, s, t in zip(names, sizes, strides)]
    dtype = None
    if m["fn"] == "assert_tensor_metadata" and len(parts) > 3:
        d = _TORCH_DTYPE.fullmatch(parts[3])
        dtype = d.group(1) if d else None
    return [(parts[0], size_tuple(parts[1]), size_tuple(parts[2]), dtype)]
