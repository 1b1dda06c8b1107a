"""A standalone script that runs one kernel of a report on its recorded arguments and times it.

``reproducer(report, kernel)`` writes the script as text (this module imports no torch): the script imports torch
(never inductor_lens), embeds the kernel's source, builds each argument with the shape, stride, dtype and storage
offset the output code gave it (random values; integer tensors in range), runs the kernel once and checks that it
wrote something (a line says what: the tensors it wrote, by the names the output code gives them), then times it
(median and spread over ``--runs`` runs after ``--warmup``) and prints one line::

    cpp_fused_relu_0: check passed: the kernel ran and wrote 1 of its 2 tensor arguments: buf0 (out_ptr0)
    cpp_fused_relu_0: median 1.52 us per call (p10 1.41 us, p90 1.80 us; 200 runs after 20 warm-up) on cpu, 2 threads; report: median 2.10 us per call of 20 runs (fastest 2.01 us, slowest 2.40 us)

Where the runs disagree (p90 over ``rules.NOISY_FACTOR`` times p10, the profile's noisy rule on the tenths) the line
says ``noisy`` and stderr says what it means and what to do (``rules.noisy_runs_text``). Where the median is over
``rules.FAR_FACTOR`` times the report's time per call, or under a tenth of it, stderr says so and why that may be
(``rules.FAR_FROM_REPORT``: the report's time from one cold run, a loaded machine, threads not recorded).

How each kind of kernel runs, as the output code runs it:

- C++ (``cpp``): compiled through ``CppPythonBindingsCodeCache.load_pybinding(arg_types, source)``, the call behind
  the output code's ``async_compile.cpp_pybinding([...], source)``, and called with the arguments. A profiled
  capture's kernel (``cpp.enable_kernel_profile``) runs without its two lines of instrumentation
  (``rules.without_kernel_profile``): as torch compiles it without profiling, its time its own.
- Triton: the source (its ``@triton_heuristics`` decorator and ``@triton.jit`` function) is the script's own code;
  the autotuner keeps only the config the report recorded (block sizes, ``num_warps``, ``num_stages``), so no
  benchmarking happens, and ``.run(*args, stream=...)`` launches it with Inductor's launcher, which works out the
  grid from the config (the recorded grid is printed beside it). Times are device times from the profiler, as
  ``inspect(..., profile=True)`` measures them. The L2 cache before each timed run is as the step left it
  (``--l2 step``, the default): flushed, then the launches before the kernel in the same output code replayed as
  far back as the L2 can hold them (``step_before``): a read or a rewrite of the kernel's own arguments where
  those launches read or wrote them, a scratch buffer of the same size for their other tensors. The kernel then
  finds what the step left: a buffer the kernel before it just wrote or read, wholly or in part, in L2; a weight or
  a long-ago activation in HBM; the dirty lines of what the launches before wrote, written back while it runs.
  ``--l2 cold`` only flushes, ``--l2 hot`` keeps the last run's data, ``--l2 all`` prints the three.
- Extern kernels: the aten op the output code calls (``extern_kernels.mm`` is ``torch.mm``), with the same
  arguments and keywords.

Integer tensors are filled in ``[0, bound)``: ``bound`` is the smallest bound of the source's index checks
(``index out of bounds: 0 <= tmp4 < 50257``) where it has some, else the smallest size of the call's other
tensors, so every index is in range.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Iterable, Optional, Union

from ..report.model import Compile, Kernel, KernelLaunch, LaunchArg, Report
from ..report.rules import (
    FAR_FACTOR,
    FAR_FROM_REPORT,
    NOISY_FACTOR,
    NOISY_RUNS,
    custom_namespace,
    kernel_profile_record,
    without_kernel_profile,
)
from .cost import DTYPE_BYTES
from .memory import reuses, storage_root

#: Warm-up and timed runs of a script unless ``--warmup`` / ``--runs`` say otherwise.
WARMUP, RUNS = 20, 200

_INT_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
_BOUND_RE = re.compile(r"index out of bounds: 0 <= \w+ < (\d+)")
#: The functions a recorded size expression may call (torch's sympy printing: ``Max(1, u0)``), as a script evaluates them.
_SIZE_FUNCS = ("Max", "Min", "max", "min")  # sympy's and torch's PythonPrinter's (``max(1, u0)``)
_NAME_RE = re.compile(r"\b[A-Za-z_]\w*\b")


class _Size:
    """A size the script works out when it runs (``size('64*u0')``), from ``SIZES``: a data-dependent size of which
    the report holds no value."""

    def __init__(self, expr: str) -> None:
        self.expr = expr

    def __repr__(self) -> str:
        return f"size({self.expr!r})"


def _symbols(expr: object) -> set[str]:
    """The size symbols a recorded size names (``64*u0 + u1`` -> ``{u0, u1}``); ``set()`` for a number."""
    if isinstance(expr, (int, float)):
        return set()
    return {n for n in _NAME_RE.findall(str(expr)) if n not in _SIZE_FUNCS}


def size_bounds(output_code: str, names: Iterable[str]) -> dict[str, int]:
    """The upper bound the output code checks for each of ``names`` (``if not (u0 <= 64): raise RuntimeError('u0 <=
    64')``, Inductor's runtime check of a data-dependent size's range), where it checks one."""
    out: dict[str, int] = {}
    for name in names:
        # the name alone on the left (``(u0 <= 64)``), not a term of a sum or product (``64*u0 <= 4096``)
        found = [int(n) for n in re.findall(rf"(?<![\w*+/.-])\s*\b{re.escape(name)} <= (\d+)\b", output_code or "")]
        if found:
            out[name] = min(found)
    return out


#: The dtype a C++ kernel's pointer parameter declares (Inductor's ``cpp_utils.DTYPE_TO_CPP``), by its element type.
_CPP_DTYPES = {
    "float": "float32",
    "double": "float64",
    "at::Half": "float16",
    "half": "float16",
    "at::BFloat16": "bfloat16",
    "bfloat16": "bfloat16",
    "bool": "bool",
    **{f"{t}_t": t for t in _INT_DTYPES},
}
#: The dtype a Triton kernel's pointer parameter declares (``triton_meta``'s signature: ``'in_ptr0': '*i64'``).
_TRITON_DTYPES = {
    "fp32": "float32",
    "fp64": "float64",
    "fp16": "float16",
    "bf16": "bfloat16",
    "i1": "bool",
    **{t[0] + t.split("int")[1]: t for t in _INT_DTYPES},  # i64, u8
}


class ReproducerError(ValueError):
    """A kernel whose script cannot be written (no launch recorded, a language with no runner)."""


def report_time_text(p) -> str:
    """The report's time of one call of a kernel as the reproducer's line sets it beside its own median, like with
    like: the report's statistic (the median of its runs; a report made before it kept the mean), how many runs, and
    their spread per call, with the noisy flag where its runs disagree; ``""`` without a profile.

    >>> from inductor_lens.report.model import KernelProfile as P
    >>> report_time_text(P(15336.9, iterations=3, statistic="median", min_us=15.4, max_us=56523.2, per_call_us=15336.9))
    'median 15336.90 us per call of 3 runs (fastest 15.40 us, slowest 56523.20 us; noisy: the machine was busy)'
    >>> report_time_text(P(14651.9, std_us=12781.0, iterations=3, per_call_us=14651.9))
    'mean 14651.90 us per call of 3 runs (std 12781.00 us; noisy: the machine was busy)'
    >>> report_time_text(P(98.184, iterations=1, statistic="median", min_us=98.184, max_us=98.184, per_call_us=98.184))
    'median 98.18 us per call of 1 run'
    """
    if p is None or not isinstance(p.per_call_us, (int, float)):
        return ""
    calls = p.calls if p.calls and p.calls > 0 else 1.0
    head = (
        f"{p.statistic} {p.per_call_us:.2f} us per call of {p.iterations or '?'} run{'' if p.iterations == 1 else 's'}"
    )
    if (p.iterations or 0) == 1:  # one run: no spread (its fastest and slowest are it)
        spread = ""
    elif p.min_us is not None and p.max_us is not None:
        spread = f"fastest {p.min_us / calls:.2f} us, slowest {p.max_us / calls:.2f} us"
    elif p.std_us:
        spread = f"std {p.std_us / calls:.2f} us"
    else:
        spread = ""
    if p.noisy:
        spread += ("; " if spread else "") + "noisy: the machine was busy"
    return f"{head} ({spread})" if spread else head


def find_kernel(report: Report, kernel: Union[str, Kernel]) -> tuple[Kernel, str]:
    """``(kernel, compile id)`` for a kernel or its name (``compile id:name`` picks one among compiles; else the
    first, :func:`kernel_matches` lists them all)."""
    if isinstance(kernel, Kernel):
        for c in report.compiles:
            if any(k is kernel for k in c.kernels):
                return kernel, c.id
        return kernel, ""
    found = kernel_matches(report, kernel)
    if not found:
        want_compile, name = split_compile(report, kernel)
        elsewhere = [cid for _, cid in kernel_matches(report, name)] if want_compile else []
        if elsewhere:
            raise KeyError(f"compile {want_compile} has no kernel {name!r}: it is in {', '.join(elsewhere)}")
        names = sorted({k.name for k in report.kernels})
        raise KeyError(f"no kernel {kernel!r} in the report (kernels: {names})")
    return found[0]


def split_compile(report: Report, kernel: str) -> tuple[str, str]:
    """``(compile, name)`` of a kernel as the user names it: ``"0/1 forward:extern_kernels.convolution[buf0]"`` is
    ``("0/1 forward", "extern_kernels.convolution[buf0]")``; ``("", kernel)`` where the text before the first ``:``
    is no compile of the report, by its ``id`` (``0/1 forward``, ``4/0 backward #2``) or ``compile_id`` (``0/1``,
    ``!0/1/0``, ``aot/0``): neither holds a ``:`` (torch's ``CompileId`` is ``[!CA/]FRAME/N[_ATTEMPT]``), whatever
    the kernel's name holds after it (an extern call's ``[buf0]``, a ``:``)."""
    head, sep, rest = kernel.partition(":")
    head = head.strip()
    if sep and any(head in (c.id, c.compile_id) for c in report.compiles):
        return head, rest.strip()
    return "", kernel


def kernel_matches(report: Report, kernel: str) -> list[tuple[Kernel, str]]:
    """Every ``(kernel, compile id)`` that the name ``kernel`` (or ``compile:name``, :func:`split_compile`) names,
    in report order: a forward and its backward, or a recompile, can each hold a kernel of one name
    (``extern_kernels.mm[buf0]``)."""
    want_compile, name = split_compile(report, kernel)
    return [
        (k, c.id)
        for c in report.compiles
        if not want_compile or want_compile in (c.id, c.compile_id)
        for k in c.kernels
        if k.name == name
    ]


def reproducer(
    report: Report,
    kernel: Union[str, Kernel],
    runs: int = RUNS,
    warmup: int = WARMUP,
    sizes: Optional[dict[str, int]] = None,
) -> str:
    """The text of a standalone Python script that runs ``kernel`` of ``report`` and prints its time.

    ``kernel`` is a :class:`Kernel` of the report or its name. Raises :class:`ReproducerError` when the kernel's
    launch was not recorded (reports from before launches were read) or its language has no runner here.
    ``sizes``: values of data-dependent sizes the report holds none of (``{"u0": 16}``); each one not given runs
    at the upper bound the compile's output code checks (a forward's ``u0 <= 64`` also bounds its backward), and the
    script's ``--size u0=N`` runs another.

    >>> script = reproducer(report, "cpp_fused_relu_0")          # doctest: +SKIP
    >>> open("kernel.py", "w").write(script)                       # then: python kernel.py
    """
    k, compile_id = find_kernel(report, kernel)
    compile_ = next((c for c in report.compiles if c.id == compile_id), None)
    if compile_ is not None and compile_.trigger.kind == "ahead_of_time" and not _tensor_layouts(k):
        # its C++ kernels have no launch; an extern call's launch is the C++ statement, which names no layout
        raise ReproducerError(
            f"kernel {k.name!r} is of {compile_id}, an AOTInductor compile: AOTInductor compiles use the C++ wrapper, "
            "whose launches are not read (no argument's shape, stride or dtype), so no script can be written for it"
        )
    return kernel_script(k, compile_id=compile_id, runs=runs, warmup=warmup, sizes=sizes, **_context(report, compile_))


def _context(report: Report, compile_: Optional[Compile]) -> dict:
    """What :func:`kernel_script` takes of ``report`` and of the kernel's compile (``compile_``; None: not found)."""
    info = report.device_info
    return dict(
        threads=getattr(info, "threads", None) if info is not None else None,
        order=launch_order(compile_.kernels, compile_.output_code) if compile_ else (),
        aliases=reuses(compile_.output_code) if compile_ else None,
        cpu_isa=(compile_.cpu_isa, compile_.cpu_isa_bits)
        if compile_ is not None and compile_.cpu_isa_bits is not None
        else None,
        device=report.device,
        torch_version=report.torch_version,
        title=report.title,
        bounds_code="\n".join(
            c.output_code for c in report.compiles if compile_ is not None and c.compile_id == compile_.compile_id
        ),
    )


def with_scripts(report: Report) -> Report:
    """``report`` with each kernel's ``reproducer`` (the panel's "Copy reproducer") written again as
    :func:`reproducer` writes it from the whole report: the capture writes it while it builds each compile, before
    its launches say what each argument holds (``LaunchArg.holds``), before the report's title and before a profile
    gives the time the script compares with (``REPORT_US``); the button's script and ``inductor-lens repro``'s were
    two (nu25 L3). A kernel whose script cannot be written again keeps the one it has."""
    compiles = []
    for c in report.compiles:
        if not any(k.reproducer for k in c.kernels):
            compiles.append(c)
            continue
        context = _context(report, c)
        kernels = []
        for k in c.kernels:
            if k.reproducer:
                try:
                    k = dataclasses.replace(k, reproducer=kernel_script(k, compile_id=c.id, **context))
                except Exception:  # the capture's script stays: a view's extra is never lost to a retry
                    pass
            kernels.append(k)
        compiles.append(dataclasses.replace(c, kernels=kernels))
    return dataclasses.replace(report, compiles=compiles)


def _tensor_layouts(k: Kernel) -> bool:
    """Whether ``k``'s recorded launch gives the layout of some argument (a tensor's shape)."""
    return k.launch is not None and any(a.shape is not None for a in k.launch.args)


def kernel_script(
    k: Kernel,
    *,
    compile_id: str = "",
    device: str = "cpu",
    torch_version: str = "",
    title: str = "",
    runs: int = RUNS,
    warmup: int = WARMUP,
    order: Union[list, tuple] = (),
    aliases: Optional[dict[str, str]] = None,
    threads: Optional[int] = None,
    cpu_isa: Optional[tuple[str, int]] = None,
    sizes: Optional[dict[str, int]] = None,
    bounds_code: str = "",
) -> str:
    """:func:`reproducer` for one kernel and the facts of its report it needs (``device``: the report's;
    ``order``: its compile's kernels as :func:`launch_order` gives them, ``aliases`` its ``# reuse`` lines, for
    :func:`step_before` on a GPU; ``threads``: on a CPU, the threads torch ran with when the report's times were
    measured, ``DeviceInfo.threads``, which the script sets; ``cpu_isa``: ``(name, bits)``, the vector instruction
    set its compile's C++ kernels were written for, ``Compile.cpu_isa``, for which the script compiles a C++ one;
    ``sizes``: values for data-dependent sizes the report holds none of (``{"u0": 16}``), else each takes the upper
    bound the output code ``bounds_code`` checks, :func:`size_bounds`)."""
    launch = k.launch
    if launch is None:
        raise ReproducerError(
            f"kernel {k.name!r} has no recorded launch: its report is older than launches (capture it again), its "
            "compile was written with the C++ wrapper (cpp_wrapper=True, whose launches are not read), or its launch "
            "could not be read (the report's diagnostics say which)"
        )
    if k.language not in ("cpp", "triton", "extern"):
        raise ReproducerError(f"kernel {k.name!r} is {k.language}: reproducers run cpp, triton and extern kernels")
    device = launch.device or ("cuda" if k.language == "triton" else device.split(",")[0] or "cpu")
    per_call = k.profile.per_call_us if k.profile is not None else None
    free, sizes_code = _free_sizes(launch, sizes or {}, bounds_code)
    bound = _index_bound(k, launch)
    where = [f"compile {compile_id}"] if compile_id else []
    where += [f"report {title!r}"] if title else []
    where += [f"torch {torch_version}"] if torch_version else []
    head = _HEAD.format(
        name=k.name,
        doc_name=_plain(k.name),
        where=" " + _plain("(" + ", ".join(where) + ")") if where else "",
        report_us=repr(float(per_call)) if isinstance(per_call, (int, float)) else "None",
        report_text=repr(report_time_text(k.profile)),
        device=repr(device),
        threads=repr(int(threads))
        if isinstance(threads, int) and threads > 0 and not device.startswith("cuda")
        else "None",
        runs=int(runs),
        warmup=int(warmup),
        noisy_factor=repr(float(NOISY_FACTOR)),
        noisy_runs=repr(NOISY_RUNS),
        far_factor=repr(float(FAR_FACTOR)),
        far_from_report=repr(FAR_FROM_REPORT),
        note=_PROFILED_NOTE if k.language == "cpp" and kernel_profile_record(k.source) else "",
        sizes=sizes_code,
    )
    before = step_before(list(order), k, aliases) if device.startswith("cuda") else []  # the L2 is the GPU's
    args = _args_code(launch, bound, _declared_dtypes(k, launch), free) + _step_code(before)
    if k.language == "cpp":
        body = _cpp(k, launch, cpu_isa)
    elif k.language == "triton":
        body = _triton(k, launch)
    else:
        body = _extern(k, launch)
    return head + body + args + _TAIL


def _free_sizes(launch: KernelLaunch, given: dict[str, int], bounds_code: str) -> tuple[dict[str, int], str]:
    """The data-dependent sizes of a launch's arguments that the report holds no value for (a symbol of a shape,
    stride, offset or size argument with no hint: ``u0`` of a nonzero's result), each with the value the script
    runs (``given``, else the upper bound the output code checks), and the script's ``SIZES = {...}`` line."""
    names: set[str] = set()
    for a in launch.args:
        if a.shape is not None:
            if not isinstance(a.hint, list):
                for s in [*a.shape, *(a.stride or [])]:
                    names |= _symbols(s)
            if isinstance(a.offset, str):
                names |= _symbols(a.offset)
        elif isinstance(a.value, str) and not isinstance(a.hint, int) and re.fullmatch(r"[\w\s*+\-()/,]+", a.value):
            try:
                ast.literal_eval(a.value)
            except (ValueError, SyntaxError):
                names |= _symbols(a.value)
    backed = _backed_sizes(launch)
    unknown = set(given) - names - set(backed)
    if unknown:
        kinds = [
            f"its {what} sizes: {', '.join(sorted(group))}"
            for what, group in (("data-dependent", names), ("dynamic", set(backed)))
            if group
        ]
        raise ReproducerError(
            f"the kernel's arguments have no size {', '.join(sorted(unknown))}"
            + (f" ({'; '.join(kinds)})" if kinds else "")
        )
    bounds = size_bounds(bounds_code, names - set(given))
    free = {n: int(v) for n, v in backed.items()}  # a dynamic size: at its value at capture, unless given
    free.update((n, int(given[n])) for n in set(names) | set(backed) if n in given)
    free.update(bounds)
    if not free:
        return free, "{}  # none: every size of this kernel's arguments is recorded"

    def how(n: str) -> str:
        if n in given:
            return "given"
        if n in bounds:
            return f"its upper bound (the output code checks {n} <= {bounds[n]})"
        return "its value at capture (a dynamic size)"

    said = [f"{n}: {how(n)}" for n in sorted(free)]
    return free, f"{dict(sorted(free.items()))!r}  # {'; '.join(said)}"


def _backed_sizes(launch: KernelLaunch) -> dict[str, int]:
    """The dynamic sizes of a launch's arguments that the report holds a value for (``s77`` of a shape ``[s77, 8]``
    seen as ``[4, 8]``; a size argument ``ks1`` passed as ``s77`` = 4): each symbol that stands alone in a shape or as
    an argument, at its value at capture. The script runs them at these values (``SIZES``), and ``--size s77=13``
    at another (nu25 M4: "give NAME=N for one of this kernel's sizes: none" for a kernel compiled for any size)."""
    out: dict[str, int] = {}
    for a in launch.args:
        if a.shape is not None and isinstance(a.hint, list):
            for s, h in zip(a.shape, a.hint):
                if isinstance(s, str) and _NAME_RE.fullmatch(s) and isinstance(h, int):
                    out.setdefault(s, h)
        elif isinstance(a.value, str) and _NAME_RE.fullmatch(a.value) and isinstance(a.hint, int):
            out.setdefault(a.value, a.hint)
    return out


def _plain(text: str) -> str:
    """``text`` safe inside the script's docstring or a comment: one line, no quotes or backslashes."""
    return " ".join(str(text).replace("\\", "/").replace('"', "'").split())


def _index_bound(k: Kernel, launch: KernelLaunch) -> int:
    bounds = [int(b) for b in _BOUND_RE.findall(k.source or "")]
    if bounds:
        return max(1, min(bounds))
    sizes = [
        h
        for a in launch.args
        if a.shape is not None and (a.dtype or "") not in _INT_DTYPES | {"bool"}
        for h in (a.hint if isinstance(a.hint, list) else a.shape)
        if isinstance(h, int) and h > 0
    ]
    return max(1, min(sizes)) if sizes else 1


def _literal(a: LaunchArg, free: Optional[dict[str, int]] = None) -> str:
    """Python text of a non-tensor argument: a number, a literal, a symbolic size's value at capture time, a
    data-dependent size from the script's ``SIZES`` (``size('u0')``)."""
    v = a.value
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(v)
    text = str(v)
    if _covered([text], free):  # a size of SIZES (a dynamic one at its value at capture, unless given)
        return repr(_Size(text))
    if isinstance(a.hint, int):
        return repr(a.hint)
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        pass
    if re.fullmatch(r"torch\.\w+", text):
        return text
    names = re.fullmatch(r"\[\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*,?\s*\]", text)
    listed = re.split(r"\s*,\s*", names.group(1)) if names else []
    if listed and not any(re.fullmatch(r"p?[su]\d+", n) for n in listed):  # tensors by name, no size symbols
        # ``aten.index.Tensor(buf0, [primals_6])``: the tensors of a list are no arguments of their own in the record
        raise ReproducerError(
            f"an argument is a list of tensors ({', '.join(listed)}), which this report's launch names without their "
            "shapes or dtypes (aten.index's indices: a boolean mask, say; a report made before inductor_lens recorded "
            "them): no script for it. Capture it again to get one"
        )
    said = repr(text) if a.name == text else f"{a.name!r} = {text!r}"
    raise ReproducerError(f"argument {said} is neither a number nor a literal: no script for it")


def _sizes(a: LaunchArg, what: str, free: Optional[dict[str, int]] = None) -> list:
    """``a``'s shape or stride as the script builds it: numbers (a symbolic size's value at capture time where the
    output code gives one), or :class:`_Size` entries for data-dependent sizes whose symbols ``free`` holds values
    for (the script's ``SIZES``)."""
    sizes = getattr(a, what)
    if _covered(sizes, free):  # every symbol of it has a value in SIZES: said by them, so --size changes it
        return [s if isinstance(s, int) else _Size(str(s)) for s in sizes]
    if what == "shape" and isinstance(a.hint, list):
        return list(a.hint)
    if what == "stride" and sizes is None and isinstance(a.shape, list):
        # strides the output code does not give (a torch.cond branch's input on torch 2.15): assumed contiguous
        sizes = None if any(not isinstance(s, int) for s in a.shape) else _contiguous(a.shape)
        if sizes is not None:
            return sizes
        if _covered(a.shape, free):
            return _symbolic_contiguous(a.shape)
    if any(not isinstance(s, int) for s in sizes or []):
        if what == "stride" and isinstance(a.hint, list):  # contiguous strides of the hinted sizes
            return _contiguous(a.hint)
        if _covered(sizes, free):
            return [s if isinstance(s, int) else _Size(str(s)) for s in sizes]
        missing = sorted(set().union(*(_symbols(s) for s in sizes)) - set(free or ()))
        raise ReproducerError(
            f"argument {a.name!r} has a symbolic {what} {sizes} and the report holds no value for "
            f"{', '.join(missing)} (a data-dependent size, and the output code checks no upper bound): give one, "
            f"reproducer(report, kernel, sizes={{{missing[0]!r}: N}}) or inductor-lens repro --size {missing[0]}=N"
        )
    return list(sizes or [])


def _covered(sizes: Optional[list], free: Optional[dict[str, int]]) -> bool:
    """Whether every symbol of ``sizes`` has a value in ``free``."""
    names = set().union(*(_symbols(s) for s in sizes or []))
    return bool(names) and names <= set(free or ())


def _symbolic_contiguous(shape: list) -> list:
    """The strides of a contiguous tensor of a symbolic ``shape``, as :class:`_Size` entries where they are."""
    out, acc = [], []
    for s in reversed(shape):
        text = "*".join(f"({p})" if not isinstance(p, int) else str(p) for p in acc)
        out.append(_Size(text) if any(not isinstance(p, int) for p in acc) else eval(text or "1"))
        acc.append(s)
    return list(reversed(out))


def _contiguous(shape: list) -> list:
    """The strides of a contiguous tensor of ``shape``."""
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return list(reversed(out))


def _declared_dtypes(k: Kernel, launch: KernelLaunch) -> list[Optional[str]]:
    """The dtype each argument's parameter declares (None where it declares none that is known): a C++ kernel's
    ``const int64_t* in_ptr2`` (``KernelLaunch.arg_types``), a Triton kernel's ``'in_ptr2': '*i64'``."""
    out: list[Optional[str]] = [None] * len(launch.args)
    if launch.arg_types is not None and len(launch.arg_types) == len(launch.args):
        for i, t in enumerate(launch.arg_types):
            t = t.replace("const ", "").strip()
            out[i] = _CPP_DTYPES.get(t[:-1].strip()) if t.endswith("*") else None
    elif k.language == "triton":
        sig = dict(re.findall(r"'(\w+)': '\*(\w+)'", k.source or ""))
        out = [_TRITON_DTYPES.get(sig.get(a.param, "")) if a.param else None for a in launch.args]
    return out


def _args_code(
    launch: KernelLaunch, bound: int, declared: Optional[list] = None, free: Optional[dict[str, int]] = None
) -> str:
    dtypes = [a.dtype for a in launch.args if a.shape is not None and a.dtype]
    fallback = dtypes[0] if dtypes else "float32"  # a buffer the output code gives no dtype (a getitem)
    declared = declared or [None] * len(launch.args)
    pos, kw = [], []
    made: dict[tuple, str] = {}  # a tensor's make(...) -> the name of the one made for it
    shared: list[str] = []  # the lines that make a tensor passed more than once
    makes = [_make_code(a, decl, fallback, bound, free) for a, decl in zip(launch.args, declared)]
    # a list of tensors (aten.index's indices): each tensor made as recorded, None as None, a boolean mask all True
    makes = [
        "[" + ", ".join(_make_code(t, None, fallback, bound, free, mask=True) or "None" for t in a.items) + "]"
        if a.items is not None
        else code
        for a, code in zip(launch.args, makes)
    ]
    for a, code in zip(launch.args, makes):
        # the same buffer passed twice (an in-place update's in_ptr0 and out_ptr0: the output code passes arg9_1
        # for both) is one tensor, as in the real call: two would hide the read after the write through one pointer
        if code and sum(1 for b, c in zip(launch.args, makes) if b.name == a.name and c == code) > 1:
            key = (a.name, code)
            if key not in made:
                made[key] = f"t{len(made)}"
                shared.append(
                    f"    {made[key]} = {code}  # {_plain(f'{a.name}, passed {_times(a, code, launch, makes)}')}"
                )
            code = made[key]
        (kw if a.keyword else pos).append((a.keyword, code or _literal(a, free), _arg_comment(a)))
    positional = [a for a in launch.args if not a.keyword]
    names = {i: _arg_label(a) for i, a in enumerate(positional) if a.shape is not None}
    names.update({a.keyword: _arg_label(a) for a in launch.args if a.keyword and a.shape is not None})
    lines = [
        "",
        "",
        "#: Each tensor argument as the output code passes it, by its position in args or its keyword (check() names",
        "#: those the kernel wrote)",
        f"NAMES = {names!r}",
        "",
        "",
        "def arguments():",
        '    """The kernel\'s arguments as the output code passes them (a buffer passed twice, one tensor)."""',
        *shared,
        "    args = [",
    ]
    lines += [f"        {code},  # {comment}" for _, code, comment in pos]
    lines += ["    ]", "    kwargs = {"]
    lines += [f"        {key!r}: {code},  # {comment}" for key, code, comment in kw]
    lines += ["    }", "    return args, kwargs"]
    return "\n".join(lines) + "\n"


def _arg_label(a: LaunchArg) -> str:
    """An argument as the check's line names it: the name the call passes and the kernel's parameter (``buf2
    (out_ptr0)``), or its keyword (``out=buf0``)."""
    if a.keyword:
        return f"{a.keyword}={a.name}"
    return a.name + (f" ({a.param})" if a.param and a.param != a.name else "")


def _arg_comment(a: LaunchArg) -> str:
    """What an argument is, beside its ``make(...)``: the name the call passes, the kernel's parameter, and what it
    holds as the launch table names it (``LaunchArg.holds``): a frozen graph's constant by the parameter it comes from
    (``constant6 (W): fc1.weight (packed for the C++ GEMM template)``, ``Compile.constant_names``), a graph input by the
    name the user knows, a buffer by the op that computes it."""
    text = a.name + (f" ({a.param})" if a.param and a.param != a.name else "")
    return _plain(text + (f": {a.holds}" if a.holds and a.holds != a.name else ""))


def _make_code(
    a: LaunchArg, declared: Optional[str], fallback: str, bound: int, free: Optional[dict] = None, mask: bool = False
) -> str:
    """The ``make(...)`` that builds a tensor argument as recorded; ``""`` for another argument. ``mask``: a boolean
    tensor of an index list is a mask, made all True: it selects as many elements as the data-dependent sizes of the
    other arguments count where the script runs them at their upper bound (``SIZES``: the mask's own size), where a
    random one made ``index_put_``'s values tensor of ``u0`` rows fit none."""
    if a.shape is None:
        return ""
    offset = a.offset if isinstance(a.offset, int) else _Size(str(a.offset)) if _covered([a.offset], free) else 0
    shape, stride = _sizes(a, "shape", free), _sizes(a, "stride", free)
    # the dtype recorded, else the one the kernel's parameter declares: the first tensor's would hand an int64
    # parameter a float32 tensor of half its bytes
    dtype = a.dtype or declared or fallback
    return (
        f"make({shape!r}, {stride!r}, {dtype!r}, {offset}, {bound}{', fill=True' if mask and dtype == 'bool' else ''})"
    )


def _times(a: LaunchArg, code: str, launch: KernelLaunch, makes: list[str]) -> str:
    """How often, and as which parameters, the launch passes the tensor ``a`` is: ``twice (in_ptr0, out_ptr0)``."""
    params = [b.param or b.name for b, c in zip(launch.args, makes) if b.name == a.name and c == code]
    n = len(params)
    return f"{'twice' if n == 2 else f'{n} times'} ({', '.join(params)})"


def _nbytes(a: LaunchArg) -> int:
    """Bytes a tensor argument spans (its extent times the item size); 0 where sizes are unknown."""
    try:
        shape, stride = _sizes(a, "shape"), _sizes(a, "stride")
    except ReproducerError:
        return 0
    if not shape:
        return DTYPE_BYTES.get(a.dtype or "", 4)
    if any(s <= 0 for s in shape):
        return 0
    return (1 + sum((s - 1) * st for s, st in zip(shape, stride))) * DTYPE_BYTES.get(a.dtype or "", 4)


def _writes(k: Kernel) -> list[LaunchArg]:
    """The tensor arguments a launch writes: a Triton kernel's ``out_ptr``/``in_out_ptr`` parameters, an extern
    call's ``out=``."""
    if k.launch is None:
        return []
    return [
        a
        for a in k.launch.args
        if a.shape is not None and (a.param.startswith(("out_ptr", "in_out_ptr")) or a.keyword == "out")
    ]


def launch_order(kernels: list[Kernel], output_code: str) -> list[Kernel]:
    """The kernels of one compile in the order its output code launches them (by their first call line); those
    whose call is not found in ``output_code`` are left out."""
    placed = []
    for other in kernels:
        if other.launch is not None and other.launch.call:
            at = output_code.find(other.launch.call)
            if at >= 0:
                placed.append((at, other))
    return [other for _, other in sorted(placed, key=lambda p: p[0])]


#: How far back :func:`step_before` reaches: launches until they touched this many bytes, twice the largest L2
#: cache of today's GPUs, and at most this many launches (a graph of thousands of small kernels); the script
#: replays only the part that its device's L2 can still hold.
_STEP_BYTES, _STEP_LAUNCHES = 512 << 20, 128


def step_before(
    order: list[Kernel], k: Kernel, aliases: Optional[dict[str, str]] = None
) -> list[tuple[str, list[tuple[str, str, Union[int, str, None], int]]]]:
    """What the launches before ``k`` in its output code did to memory, oldest first (``order``:
    :func:`launch_order`): ``(kernel name, touches)``, each touch ``(access, storage, where, bytes)``: ``"r"`` read
    or ``"w"`` written (reads first: a kernel's stores land after its loads), the storage's name in the output code,
    ``where`` the position or keyword of ``k``'s argument that is this storage (None when ``k`` does not take it),
    and the bytes the launch spans in it. ``aliases`` (``{new: old}``, the output code's ``# reuse`` lines,
    ``analysis.memory.reuses``): a buffer made in a dead one's storage is that storage.

    The reproducer's ``--l2 step`` replays these after flushing the L2 (a read or a rewrite of ``k``'s own
    arguments, a scratch buffer of the same size for the others), so that the kernel finds the L2 as the step left
    it: its inputs that the kernels just before wrote or read, partly or wholly, and the dirty lines of what they
    wrote, written back to HBM while the kernel runs."""
    at = next((i for i, other in enumerate(order) if other is k), None)
    if at is None or k.launch is None:
        return []
    aliases = aliases or {}
    mine: dict[str, Union[int, str]] = {}
    for i, a in enumerate(k.launch.args):
        if a.shape is not None:
            mine.setdefault(
                storage_root(a.name, aliases), a.keyword or sum(1 for b in k.launch.args[:i] if not b.keyword)
            )
    out, total = [], 0
    for other in reversed(order[max(0, at - _STEP_LAUNCHES) : at]):
        if total >= _STEP_BYTES:
            break
        if other.launch is None:
            continue
        written = {id(a) for a in _writes(other)}
        touched: dict[str, tuple[str, int]] = {}
        for a in other.launch.args:
            n = _nbytes(a) if a.shape is not None else 0
            if n:
                name = storage_root(a.name, aliases)
                was = touched.get(name, ("r", 0))
                touched[name] = ("w" if id(a) in written else was[0], max(n, was[1]))
        touches = sorted(
            ((access, name, mine.get(name), n) for name, (access, n) in touched.items()), key=lambda t: t[0] == "w"
        )
        out.append((other.name, touches))
        total += sum(t[3] for t in touches)
    return out[::-1]


def _step_code(before) -> str:
    lines = [
        "",
        "",
        "# The launches before this one in the step, oldest first: (kernel, [(access, storage, argument, bytes)]):",
        "# r read, w written; storage: the buffer that first held it (a buffer made in a dead one's storage, the",
        "# output code's '# reuse' lines, is named by that one); argument: this kernel's argument (position or",
        "# keyword) that is that storage, else None.",
        "# --l2 step replays them after the flush, as far back as the L2 can hold.",
        "STEP_BEFORE = [",
    ]
    for name, touches in before:
        lines.append(f"    ({name!r}, {[tuple(t) for t in touches]!r}),")
    return "\n".join(lines + ["]", ""])


#: The script's docstring on a profiled capture's C++ kernel (:func:`_cpp` leaves its instrumentation out).
_PROFILED_NOTE = (
    "\n\nThe kernel runs as torch compiles it without profiling: the report's source (a profiled capture's, compiled"
    "\nwith cpp.enable_kernel_profile) less its two lines of instrumentation, so that the time is the kernel's own."
)


def _cpp(k: Kernel, launch: KernelLaunch, cpu_isa: Optional[tuple[str, int]] = None) -> str:
    if launch.arg_types is None:
        raise ReproducerError(f"kernel {k.name!r}: the C++ argument types were not recorded")
    source = without_kernel_profile(k.source)
    if "'''" in source:
        raise ReproducerError(f"kernel {k.name!r}: its source holds ''' and cannot be embedded")
    record = kernel_profile_record(k.source)
    said = (
        "# The kernel as torch compiles it without profiling: the report's source less the two lines a profiled\n"
        "# capture adds (cpp.enable_kernel_profile: the include of torch/csrc/inductor/aoti_runtime/utils.h and the\n"
        "# RAIIAtenRecordFunctionHandle that records each call as the profiler event\n"
        f"# {record}), compiled as the output code compiles it: async_compile.cpp_pybinding(ARG_TYPES, SOURCE)\n"
        if record
        else "# The kernel, exactly as the output code compiles it: async_compile.cpp_pybinding(ARG_TYPES, SOURCE)\n"
    )
    name, bits = cpu_isa if cpu_isa is not None else (None, None)
    return (
        "\n\n" + said + f"ARG_TYPES = {list(launch.arg_types)!r}\n"
        f"SOURCE = r'''{source}'''\n"
        f"CPU_ISA = {name!r}  # the vector instruction set Inductor wrote SOURCE for (Compile.cpu_isa); None: not recorded\n"
        f"CPU_ISA_BITS = {bits!r}  # its vector width: SOURCE is compiled for it (torch's cpp.simdlen), never this CPU's widest\n"
        f"ISA_MISSING = {ISA_MISSING!r}\n"
        f"EXTENSIONS = {_EXTENSIONS!r}  # an ISA's extensions by the intrinsics of a source that needs them\n"
        f"ISA_UNKNOWN = {ISA_UNKNOWN!r}\n" + _CPP_LOAD
    )


#: Extensions of a vector width that a C++ source may need beyond it (Inductor's AMX and VNNI micro-GEMMs), by the
#: intrinsics that use them: a CPU of the width without them cannot compile such a source.
_EXTENSIONS = {
    "amx_tile": ("_tile_loadd", "_tile_stored", "_tile_dpb"),
    "avx512_vnni": ("_mm512_dpbusd", "_mm512_dpwssd"),
}
#: A C++ reproducer's exit where this CPU cannot run the vector width its source was written for.
ISA_MISSING = (
    "{kernel}: its source was written for {isa} ({bits}-bit vectors) and this CPU has no such instruction set (torch "
    "picks {here} here): compiled for another width, a kernel that steps {bits}-bit vectors reads and writes past its "
    "buffers. Run this script on a CPU with {isa}, or capture the kernel again on this one"
)
#: A C++ reproducer's note (stderr) where the report does not say which vector width its source was written for.
ISA_UNKNOWN = (
    "{kernel}: the report does not say which vector instruction set its C++ source was written for (a TORCH_TRACE "
    "import, or a report made before it recorded Compile.cpu_isa); it is compiled for this CPU's, {here}: if it was "
    "written for another width it writes past its buffers, and the check says so"
)
_CPP_LOAD = """

def load():
    import contextlib

    import torch._inductor.config as config
    from torch._inductor.codecache import CppPythonBindingsCodeCache
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    widest = pick_vec_isa()  # this CPU's, as torch picks it
    width = config.patch({"cpp.simdlen": CPU_ISA_BITS}) if CPU_ISA_BITS is not None else contextlib.nullcontext()
    with width:  # compiled for the width the source was written for, as the capture's compile was
        picked = pick_vec_isa()
        here = f"{widest}, {widest.bit_width()}-bit"
        if CPU_ISA_BITS is not None and picked.bit_width() != CPU_ISA_BITS:
            sys.exit(ISA_MISSING.format(kernel=KERNEL, isa=CPU_ISA, bits=CPU_ISA_BITS, here=here))
        # an extension of that width the source uses (AMX tiles, VNNI dot products) that this CPU lacks
        for feature, marks in EXTENSIONS.items():
            if feature in str(CPU_ISA).split() and feature not in str(picked).split() and any(m in SOURCE for m in marks):
                sys.exit(ISA_MISSING.format(kernel=KERNEL, isa=f"{CPU_ISA} ({feature})", bits=CPU_ISA_BITS, here=here))
        kernel = CppPythonBindingsCodeCache.load_pybinding(ARG_TYPES, SOURCE)
    if CPU_ISA_BITS is None:
        print(ISA_UNKNOWN.format(kernel=KERNEL, here=f"{widest}, {widest.bit_width()}-bit"), file=sys.stderr, flush=True)
    return lambda args, kwargs: kernel(*args)
"""


def _triton(k: Kernel, launch: KernelLaunch) -> str:
    fn = re.search(r"^def (\w+)\(", k.source, re.M)
    if not fn:
        raise ReproducerError(f"kernel {k.name!r}: no Triton function in its source")
    config = {"block": launch.block, "num_warps": launch.num_warps, "num_stages": launch.num_stages}
    return (
        "\n\n# ---- the kernel's source, as Inductor generated it (edit it here) ----\n"
        f"{k.source.strip()}\n"
        "# ---- end of the kernel's source ----\n\n"
        f"CONFIG = {config!r}  # the config autotuning picked\n"
        f"GRID = {launch.grid!r}  # the launch grid the capture recorded (None: not recorded)\n\n\n"
        "def load():\n"
        "    import triton\n\n"
        f"    tuner = {fn.group(1)}\n"
        '    block, warps, stages = CONFIG["block"], CONFIG["num_warps"], CONFIG["num_stages"]\n'
        '    params = set(getattr(getattr(tuner, "fn", None), "arg_names", None) or ())\n'
        "    if block is not None and params:  # a template's tile sizes (BLOCK_M...) are constants of its source\n"
        "        block = {key: v for key, v in block.items() if key in params}\n"
        "    if block is not None:  # keep only the recorded config: no autotuning, the config Inductor ran\n"
        "        keep = [\n"
        "            c\n"
        "            for c in tuner.configs\n"
        "            if c.kwargs == block and warps in (None, c.num_warps) and stages in (None, c.num_stages)\n"
        "        ]\n"
        "        tuner.configs = keep or [triton.Config(block, num_warps=warps or 4, num_stages=stages or 1)]\n"
        "    stream = torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())\n"
        "    return lambda args, kwargs: tuner.run(*args, stream=stream)\n"
    )


def _custom_op_help(ns: str, name: str) -> str:
    """What a reproducer of a custom op's call says where torch does not know the op: the code that defines it
    (``torch.library.custom_op``) is the user's, not torch's, and the script imports torch only."""
    return (
        f"this kernel calls the op {ns}::{name}, which Python code outside torch registers (yours, or a library's such "
        "as torchvision's, with torch.library): run the script "
        'with the module that registers it imported first, e.g. python -c "import your_module, runpy, sys; '
        "sys.argv = sys.argv[:1]; runpy.run_path('THIS_FILE.py', run_name='__main__')\""
    )


#: oneDNN's quantized calls of a frozen int8 graph (PT2E): they read weights oneDNN prepacked into its own layout,
#: which no tensor made from the recorded sizes and strides is (qlinear read past such a tensor's storage: a segfault)
_PREPACKED = re.compile(r"^torch\.ops\.onednn\.q(linear|conv)\w*")


#: An extern call's arguments its op's schema names ``philox_seed``/``philox_offset`` (the dropout state of
#: ``_scaled_dot_product_efficient_attention_backward`` and its kin): torch's attention ops make and take them as CPU
#: tensors outside CUDA-graph capture; made on the GPU like the other arguments, the call segfaulted (seen on an H200).
_PHILOX_CODE = (
    "    global PHILOX  # the arguments the op takes as CPU tensors (main() moves them there once)\n"
    "    schema = getattr(getattr(op, '_schema', None), 'arguments', None) or []\n"
    "    PHILOX = {i for i, a in enumerate(schema) if a.name in ('philox_seed', 'philox_offset')}\n"
    "    PHILOX |= {a.name for a in schema if a.name in ('philox_seed', 'philox_offset')}\n"
)


def _extern(k: Kernel, launch: KernelLaunch) -> str:
    callee = k.metadata.get("callee") or k.name.split("[")[0]
    if not re.fullmatch(r"[A-Za-z_][\w.]*", callee):
        raise ReproducerError(f"kernel {k.name!r}: cannot call {callee!r}")
    if _PREPACKED.match(callee):
        raise ReproducerError(
            f"kernel {k.name!r}: {callee} reads weights oneDNN prepacked into its own layout (a frozen int8 graph's "
            "quantized convolution or linear); a script cannot make them from the recorded sizes and strides, and a "
            "plain tensor in their place makes oneDNN read past its storage"
        )
    if callee.startswith("extern_kernels."):
        op = callee.split(".", 1)[1]
        resolve = (
            f"    op = getattr(torch, {op!r}, None)  # extern_kernels.{op} is the aten op torch.{op}\n"
            "    if op is None:\n"
            "        from torch._inductor.select_algorithm import extern_kernels\n\n"
            f"        op = getattr(extern_kernels, {op!r})\n"
        )
    elif custom_namespace(callee):  # a torch.library op: the user's Python code defines it, not torch
        ns, name = callee.replace("torch.ops.", "").split(".")[:2]
        resolve = (
            "    try:\n"
            f"        op = {callee}\n"
            "    except (AttributeError, RuntimeError):\n"
            f"        sys.exit({_custom_op_help(ns, name)!r})\n"
        )
    else:
        resolve = f"    aten = torch.ops.aten  # noqa: F841 (the output code's name for it)\n    op = {callee}\n"
    return (
        f"\n\n# An extern kernel: the output code calls {_plain(callee)}\n"
        f"CALL = {launch.call!r}\n\n\n"
        "def load():\n" + resolve + _PHILOX_CODE + "    return lambda args, kwargs: op(*args, **kwargs)\n"
    )


_HEAD = '''#!/usr/bin/env python3
"""Reproducer of kernel {doc_name}{where}.

Runs the kernel on arguments with the recorded shapes, strides and dtypes (random values), checks that it wrote
something and says what, times it and prints one line (and, on stderr, what to do where its runs disagree or its
time is far from the report's). It imports torch only.{note}

    python this_file.py [--runs N] [--warmup N] [--l2 step|cold|hot|all] [--size NAME=N]
"""

import argparse
import statistics
import sys
import time

import torch

KERNEL = {name!r}
DEVICE = {device}
REPORT_US = {report_us}  # the report's measured time per call (inspect(..., profile=True)); None if not profiled
REPORT_TEXT = {report_text}  # how the report took it: its statistic, runs and spread, per call
THREADS = {threads}  # the CPU threads torch ran with when the report's times were measured; None: torch's default
RUNS, WARMUP = {runs}, {warmup}
NOISY_FACTOR = {noisy_factor}  # runs disagree where p90 is over this many times p10 (the profile's noisy factor)
NOISY_RUNS = {noisy_runs}
FAR_FACTOR = {far_factor}  # the median this many times the report's, or the report's this many times the median: said
FAR_FROM_REPORT = {far_from_report}
#: Data-dependent sizes of the arguments (a nonzero's result, torch._dynamo.config.capture_dynamic_output_shape_ops)
#: that the report holds no value for, as this script runs them: --size NAME=N runs another
SIZES = {sizes}
PHILOX = set()  # an extern op's arguments it takes as CPU tensors (load() fills it from the op's schema)


#: Bytes after each argument's storage, set to GUARD_BYTE: the check finds them untouched, else the kernel wrote
#: past its buffer (a C++ source compiled for another vector width than it was written for, a size the report got
#: wrong) and the script says so instead of corrupting memory unseen.
GUARD_BYTES, GUARD_BYTE = 4096, 0xA5
GUARDS = {{}}  # storage's data_ptr -> its guard, as bytes


def make(shape, stride, dtype, offset=0, high=1, fill=None):
    """A tensor of these sizes, strides and storage offset: random normal floats, integers in [0, high), bools, or
    every element ``fill``; its storage followed by a guard (GUARD_BYTES)."""
    dtype = getattr(torch, dtype)
    extent = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if all(s > 0 for s in shape) else 0
    guard = -(-GUARD_BYTES // torch.empty(0, dtype=dtype).element_size())
    storage = torch.empty(offset + extent + guard, dtype=dtype, device=DEVICE)
    body = storage[: offset + extent]
    if fill is not None:
        body.fill_(fill)
    elif dtype.is_floating_point or dtype.is_complex:
        body.normal_()
    elif dtype == torch.bool:
        body.random_(0, 2)
    else:
        body.random_(0, max(int(high), 1))
    GUARDS[storage.data_ptr()] = storage[offset + extent :].view(torch.uint8).fill_(GUARD_BYTE)
    return torch.as_strided(storage, shape, stride, offset)
'''

_TAIL = '''

def size(expr):
    """A data-dependent size of an argument, from SIZES (the report's text for it: u0, 64*u0, Max(1, u0))."""
    return int(eval(expr, {"__builtins__": {}, "Max": max, "Min": min, "max": max, "min": min}, dict(SIZES)))


def _sync():
    if DEVICE.startswith("cuda"):
        torch.cuda.synchronize()


#: The written tensors the check's line names (a foreach kernel writes hundreds): the others counted
SHOWN = 8


def check(run, args, kwargs):
    """Run once; the kernel must return something or change one of its tensors (its outputs)."""
    tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
    before = [t.clone() for t in tensors]
    result = run(args, kwargs)
    _sync()
    keys = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    keys += [k for k, a in kwargs.items() if isinstance(a, torch.Tensor)]
    past = []
    for key, t in zip(keys, tensors):
        guard = GUARDS.get(t.untyped_storage().data_ptr())
        if guard is not None and not bool((guard == GUARD_BYTE).all()):
            past.append(NAMES.get(key, str(key)))
    if past:
        sys.exit(
            f"{KERNEL}: the kernel wrote past the end of {', '.join(dict.fromkeys(past))} (the bytes after its storage "
            "changed): its source was compiled for other sizes or another vector width than it was written for"
        )
    # a tensor passed more than once (an in-place update's in_ptr and out_ptr) is one tensor: counted once
    first = {}
    for i, t in enumerate(tensors):
        first.setdefault(id(t), i)
    passed = {i: sum(1 for t in tensors if t is tensors[i]) for i in first.values()}
    changed = [i for i in first.values() if not torch.equal(before[i], tensors[i])]
    what = f"{len(tensors)} tensor arguments"
    if len(first) < len(tensors):
        what = f"{len(first)} tensors ({len(tensors)} arguments: some passed more than once)"
    if result is None and not changed:
        sys.exit(f"{KERNEL}: the kernel ran but wrote none of its {what}")
    said = []
    if changed:
        names = [NAMES.get(keys[i], str(keys[i])) + (f" ({passed[i]} times)" if passed[i] > 1 else "") for i in changed]
        more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN + 1 else ""
        wrote = ", ".join(names[:SHOWN] if more else names) + more
        said.append(f"wrote {len(changed)} of its {what}: {wrote}")
    if any(result is t for t in tensors):  # an out= call returns the tensor it wrote
        pass
    elif isinstance(result, torch.Tensor):
        said.append(f"returned a {list(result.shape)} {str(result.dtype).replace('torch.', '')} tensor")
    elif result is not None:
        said.append(f"returned {type(result).__name__}")
    print(f"{KERNEL}: check passed: the kernel ran and {' and '.join(said)}", flush=True)


def timing(ts, warmup, mode=None):
    """One L2 mode's part of the line for the sorted per-run times ``ts``, and what to do where its runs disagree
    (p90 over ``NOISY_FACTOR`` times p10: ``NOISY_RUNS``), else ``""``."""
    q = statistics.quantiles(ts, n=10, method="inclusive") if len(ts) > 1 else [ts[0]] * 9
    p10, p90 = q[0], q[-1]
    noisy = ""
    if 0 < p10 * NOISY_FACTOR < p90:
        noisy = NOISY_RUNS.format(ratio=p90 / p10, p10=p10, p90=p90, more=10 * max(len(ts), 1))
    cache = f", {mode} L2" if mode else ""
    text = (
        f"median {statistics.median(ts):.2f} us per call (p10 {p10:.2f} us, p90 {p90:.2f} us; "
        f"{len(ts)} runs after {warmup} warm-up{cache}{'; noisy' if noisy else ''})"
    )
    return text, (f"{mode} L2: {noisy}" if mode and noisy else noisy)


#: Each replayed launch's touches are made in this many interleaved parts (1: one tensor after another).
CHUNKS = 8
#: The share of the L2 that the replay fills: half. The L2 of an A100, H100 or H200 is two partitions, each caching
#: the lines that the SMs beside it read, so a tensor that every SM reads is held twice.
L2_SHARE = 0.5


def _l2_bytes():
    return getattr(torch.cuda.get_device_properties(torch.device(DEVICE)), "L2_cache_size", 0) or 128 << 20


def _flush(buffer):
    """Reads a buffer twice the L2's size: every line the L2 held is evicted (the dirty ones written back to HBM
    now, not while the kernel runs) and it holds clean lines of no argument; the kernel then reads its inputs from
    HBM, as a kernel of a step does when the tensors it reads were touched long enough before."""
    buffer.sum()


def _tail(t, n):
    """The last ``n`` bytes of the storage under tensor ``t`` (flat; int32 where they divide)."""
    flat = torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())
    guard = GUARDS.get(t.untyped_storage().data_ptr())
    flat = flat[: flat.numel() - (guard.numel() if guard is not None else 0)]  # not the guard
    flat = flat[max(0, flat.numel() - n) :]
    return flat[: flat.numel() // 4 * 4].view(torch.int32) if flat.numel() >= 4 else flat


def _replay(args, kwargs, room):
    """The touches of ``STEP_BEFORE`` that the L2 can still hold (the newest launches, back to twice ``room``
    bytes), as callables, oldest first: a read (a sum) or a rewrite with its own bytes of this kernel's arguments, a
    read or a fill of a scratch buffer standing for the step's other tensors; of each, at most the last ``room``
    bytes. A launch reads and writes its tensors side by side, so each launch's touches are made in ``CHUNKS``
    interleaved parts: at its end each of them is partly in the L2, in proportion."""
    keep, total = [], 0
    for _, touches in reversed(STEP_BEFORE):
        if total >= 2 * room:
            break
        keep.append(touches)
        total += sum(t[3] for t in touches)
    sizes = {}
    for touches in keep:
        for _, storage, where, n in touches:
            if where is None:
                sizes[storage] = max(sizes.get(storage, 0), min(n, room))
    scratch = torch.empty(sum(-(-n // 256) * 256 for n in sizes.values()), dtype=torch.uint8, device=DEVICE)
    others, at = {}, 0
    for storage, n in sizes.items():
        others[storage] = scratch[at : at + n]
        at += -(-n // 256) * 256
    steps = []
    for touches in reversed(keep):
        parts = []
        for access, storage, where, n in touches:
            t = others.get(storage) if where is None else kwargs.get(where) if isinstance(where, str) else args[where]
            if not isinstance(t, torch.Tensor):
                continue
            t = _tail(t, min(n, room))
            pieces = t.tensor_split(CHUNKS) if t.numel() >= CHUNKS << 10 else [None] * (CHUNKS - 1) + [t]
            if access == "r":
                parts.append([p.sum if p is not None else None for p in pieces])
            elif where is None:  # a tensor of the step this kernel does not take: its bytes do not matter
                parts.append([p.zero_ if p is not None else None for p in pieces])
            else:  # this kernel's own argument: written again with the bytes it holds
                parts.append([(lambda p=p: p.mul_(1)) if p is not None else None for p in pieces])
        steps += [f for i in range(CHUNKS) for touch in parts for f in [touch[i]] if f is not None]
    return steps


def _prepare(mode, args, kwargs):
    """What runs before each timed run for an L2 ``mode``: nothing (hot), the flush (cold), or the flush then the
    launches before it in the step, replayed as far back as the L2 can hold (step: ``L2_SHARE`` of it)."""
    if mode == "hot":
        return None
    room = _l2_bytes()
    buffer = torch.zeros(2 * room // 4, dtype=torch.int32, device=DEVICE)
    steps = _replay(args, kwargs, int(room * L2_SHARE)) if mode == "step" else []

    def prepare():
        _flush(buffer)
        for step in steps:
            step()

    return prepare


def _device_events(prof):
    return sorted(
        (e for e in prof.events() if str(e.device_type).endswith("CUDA") and not getattr(e, "is_user_annotation", False)),
        key=lambda e: e.time_range.start,
    )


def times_us(run, args, kwargs, runs, l2="step"):
    """Per-run times in microseconds: device time from the profiler on a GPU (as the report measures it), with
    the L2 cache before each run as ``l2`` says (``_prepare``: step, cold, hot); wall time of the call on the
    CPU."""
    if not DEVICE.startswith("cuda"):
        out = []
        for _ in range(runs):
            t = time.perf_counter_ns()
            run(args, kwargs)
            out.append((time.perf_counter_ns() - t) / 1e3)
        return out
    from torch.profiler import ProfilerActivity, profile

    prepare = _prepare(l2, args, kwargs)
    skip = 0  # the device events of one preparation, dropped from each run's events
    if prepare is not None:
        _sync()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            prepare()
            _sync()
        skip = len(_device_events(prof))
    _sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            if prepare is not None:
                prepare()
            run(args, kwargs)
        _sync()
    events = _device_events(prof)
    if events and len(events) % runs == 0 and len(events) // runs > skip:
        per = len(events) // runs
        return [sum(e.time_range.elapsed_us() for e in events[i * per + skip : (i + 1) * per]) for i in range(runs)]
    out = []  # the profiler saw no device kernels (or not the same number each run): CUDA events
    for _ in range(runs):
        if prepare is not None:
            prepare()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run(args, kwargs)
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) * 1e3)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=RUNS)
    p.add_argument("--warmup", type=int, default=WARMUP)
    p.add_argument(
        "--l2", choices=("step", "cold", "hot", "all", "both"), default="step",
        help="GPU: the L2 cache before each run as in the step (step, the default: flushed, then the launches before "
        "it replayed), flushed (cold), holding the last run's data (hot); all: the three; both: cold and hot",
    )  # fmt: skip
    p.add_argument(
        "--size", action="append", default=[], metavar="NAME=N",
        help="a data-dependent size to run (repeatable): " + (", ".join(f"{k} (default {v})" for k, v in SIZES.items()) or "none in this kernel"),
    )  # fmt: skip
    opts = p.parse_args()
    for item in opts.size:
        name, _, value = item.partition("=")
        if name not in SIZES or not value.strip().isdigit():
            p.error(f"--size {item}: give NAME=N for one of this kernel's sizes: {', '.join(SIZES) or 'none'}")
        SIZES[name] = int(value)
    if THREADS and not DEVICE.startswith("cuda"):
        torch.set_num_threads(THREADS)  # as the report's times were measured
    torch.manual_seed(0)
    run = load()
    args, kwargs = arguments()
    if PHILOX:  # dropout's seed and offset of an attention op: CPU tensors, as torch makes them
        args = [a.cpu() if i in PHILOX and isinstance(a, torch.Tensor) else a for i, a in enumerate(args)]
        kwargs = {k: (a.cpu() if k in PHILOX and isinstance(a, torch.Tensor) else a) for k, a in kwargs.items()}
    check(run, args, kwargs)
    for _ in range(opts.warmup):
        run(args, kwargs)
    _sync()
    modes = {"all": ["step", "cold", "hot"], "both": ["cold", "hot"]}.get(opts.l2, [opts.l2])
    if not DEVICE.startswith("cuda"):
        modes = [None]
    lines, notes, medians = [], [], []
    for mode in modes:
        ts = sorted(times_us(run, args, kwargs, opts.runs, mode))
        text, noisy = timing(ts, opts.warmup, mode)
        lines.append(text)
        medians.append(statistics.median(ts))
        notes += [noisy] if noisy else []
    report = f"; report: {REPORT_TEXT}" if REPORT_TEXT else f"; report: {REPORT_US:.2f} us" if REPORT_US is not None else ""
    on = f"{DEVICE}, {torch.get_num_threads()} threads" if not DEVICE.startswith("cuda") else DEVICE
    print(f"{KERNEL}: {'; '.join(lines)} on {on}{report}", flush=True)
    far = far_from_report(medians[0])
    for note in notes + ([far] if far else []):
        print(f"{KERNEL}: {note}", file=sys.stderr, flush=True)


def far_from_report(here):
    """``FAR_FROM_REPORT`` where the median ``here`` (the first L2 mode's) is over ``FAR_FACTOR`` times the report's
    time per call or under its ``1 / FAR_FACTOR``; else, and with no report time, ``""``."""
    if not REPORT_US or not here or REPORT_US <= 0 or 1 / FAR_FACTOR <= here / REPORT_US <= FAR_FACTOR:
        return ""
    slower = here > REPORT_US
    threads = ""
    if not DEVICE.startswith("cuda") and not THREADS:
        threads = f", or the threads differ (the report's are not recorded; {torch.get_num_threads()} here)"
    return FAR_FROM_REPORT.format(
        here=here,
        report=REPORT_US,
        ratio=here / REPORT_US if slower else REPORT_US / here,
        way="slower" if slower else "faster",
        report_text=REPORT_TEXT or "as recorded",
        threads=threads,
    )


if __name__ == "__main__":
    main()
'''
