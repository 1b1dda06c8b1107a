"""What a diff (``analysis/diff.py``) says about time: the measured kernel time of each side and its verdict, how
each side was timed and whether alike, and what B's autotuning timed a library kernel at beside A's measurement.

Torch-free: it reads :class:`~inductor_lens.model.Report` objects only. Python decides, the compare page and the CLI
say it: every sentence here is shipped in the diff's JSON.

>>> kernel_time([a_kernels], [b_kernels], True, True)["verdict"]        # doctest: +SKIP
'B is 2.2× slower in measured kernel time: 88.9 µs against 40.5 µs in A'
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Optional, Sequence

from ..report.model import Compile, Kernel, Report
from ..report.rules import NOISY_FACTOR, fmt_us, short_op

#: Two totals closer than this share of A's are "the same" in the verdict: a few percent is the spread of one run
#: of a small graph against another (the recorded H200 MLPs' kernels' ± is up to 0.7% of their mean, and a step's
#: kernels run in another order or beside other work on another day).
SAME_WITHIN = 0.03
#: B's autotuning timed a library kernel this many times what A measured it at, or more: the diff notes it
#: (``autotune_vs_measured``): the autotuner compared its templates with a figure that is not the library's time.
AUTOTUNE_OFF = 1.5
#: A side whose noisy kernels (``KernelProfile.noisy``: their runs disagree by more than ``rules.NOISY_FACTOR``) take
#: this share of its measured kernel time or more: its total is the busy machine's as much as the kernels', and the
#: verdict is not one (nu31 D1: A 21 of 28 kernels noisy, 78% of its time; a clean CPU or GPU profile has none).
NOISY_SHARE = 0.25
#: The two profiles' measured ceilings of one device (``DeviceInfo.peak_gbps``, ``peak_tflops`` of a dtype both have:
#: what the machine reached when each was profiled) this many times apart or more: the machine was in another state
#: for each (busy, another clock), and so were the kernels' times (nu31 D1: 1.7×, 1.8× on one 2-core CPU).
CEILING_FACTOR = 1.25
#: Fewer profiled runs than this on a side: its median is one or two timings, which one stall moves (nu31 D1: 2 runs).
MIN_RUNS = 3
#: What to do where the times cannot carry a verdict (:func:`doubts`): the whole reports' verdict says it, the note
#: ``times_uncertain`` how to take more runs (:data:`MORE_RUNS`).
REPROFILE = "Profile both on an idle machine, with more runs, and compare again"
MORE_RUNS = (
    "inductor-lens run --profile times every call of a compiled graph after its first, so call it more times in the "
    "script; inspect(..., profile=True) takes 5 runs after a warm-up"
)


def measured_us(k: Kernel) -> Optional[float]:
    """The measured time of ``k`` per run of the step (all its launches), ``None`` where it was not measured."""
    t = k.profile.total_us if k.profile is not None else None
    return float(t) if isinstance(t, (int, float)) else None


def _per_call_us(k: Kernel) -> Optional[float]:
    """The measured time of one launch of ``k``."""
    t = measured_us(k)
    if t is None:
        return None
    calls = k.profile.calls if isinstance(k.profile.calls, (int, float)) and k.profile.calls > 0 else 1.0
    return t / calls


def times_text(f: float) -> str:
    """``2.2×``, ``12×``; below 1.1×, the percent (``4%``): a ratio for people."""
    if f < 1.1:
        return f"{(f - 1) * 100:.0f}%"
    return f"{f:.1f}×" if f < 10 else f"{f:.0f}×"


def _verdict(a: float, b: float, doubts: Sequence[dict] = (), left: str = "", advice: bool = True) -> str:
    """The verdict on two measured totals (``left``: the kernels not counted, said after the numbers); where ``doubts``
    (:func:`doubts`) say the times cannot carry one, the same numbers said as measured, not as a fact, with why and
    (``advice``) what to do."""
    both = f"{fmt_us(b)} against {fmt_us(a)} in A" + (f" (not counted, no measured time: {left})" if left else "")
    if (a <= 0 or b <= 0) and a != b:  # nothing to divide by: no factor
        how = "slower" if b > a else "faster"
    elif abs(b - a) <= SAME_WITHIN * a:
        how = ""
    else:
        how = f"{times_text(b / a if b > a else a / b)} {'slower' if b > a else 'faster'}"
    if not doubts:
        if not how:
            return f"B takes the same measured kernel time as A, within {SAME_WITHIN:.0%}: {both}"
        return f"B is {how} in measured kernel time: {both}"
    said = (
        f"B measured {how} in kernel time" if how else f"B measured the same kernel time as A, within {SAME_WITHIN:.0%}"
    )
    why = "; ".join(d["short"] for d in doubts)
    return f"{said}: {both}; but these times cannot carry a verdict: {why}" + (f". {REPROFILE}." if advice else "")


def kernel_time(
    ka: Optional[Sequence[Kernel]],
    kb: Optional[Sequence[Kernel]],
    profiled_a: bool,
    profiled_b: bool,
    what: str = "",
    doubts: Sequence[dict] = (),
) -> dict:
    """The measured kernel time of each side (the sum of its kernels' measured times per run of the step, each kernel
    all its launches) and the verdict: ``{a, b, delta, ratio, unmeasured_a, unmeasured_b, verdict, why, doubts,
    tone}``.

    ``ka``/``kb``: the kernels of each side (a compile's, or a whole report's), ``None`` where the side has no compile
    (a compile pair with one side only); ``profiled_a``/``profiled_b``: whether each report was profiled; ``what``:
    where the kernels are, in ``why`` (``"this compile pair"``: ``"no kernel of B was measured in this compile pair"``;
    a compile pair's verdict leaves what to do to the whole reports'). Totals and a verdict only where both sides have
    measured kernels; else ``a``/``b`` where known and ``why`` says why not (``"B was not profiled"``).
    ``unmeasured_*``: kernels of a side with no measured time, left out of its total (the verdict says so).
    ``doubts``: why the two sides' times cannot carry a verdict (:func:`doubts`); where there are any, the verdict
    gives the numbers as measured, says why they are no verdict and what to do, and they are kept (``doubts``:
    ``[{code, short, text}]``). ``tone``: how the page draws the verdict, ``slower``, ``faster``, ``same``, ``unsure``
    (doubts), ``""`` (no verdict)."""
    out: dict = {"a": None, "b": None, "delta": None, "ratio": None, "unmeasured_a": 0, "unmeasured_b": 0}
    for side, ks in (("a", ka), ("b", kb)):
        if ks is None:
            continue
        ts = [measured_us(k) for k in ks]
        got = [t for t in ts if t is not None]
        out[side] = round(sum(got), 3) if got else None
        out[f"unmeasured_{side}"] = len(ts) - len(got) if got else 0
    why = ""
    if not profiled_a and not profiled_b:
        why = "neither report was profiled"
    elif not profiled_a or not profiled_b:
        why = f"{'A' if not profiled_a else 'B'} was not profiled"
    elif ka is None or kb is None:
        why = f"only {'A' if kb is None else 'B'} has this compile"
    else:
        none = [s.upper() for s in ("a", "b") if out[s] is None]
        if none:
            where = f" in {what}" if what else ""
            why = f"no kernel of {' or '.join(none)} was measured{where}"
    if why:
        return {**out, "verdict": "", "why": f"kernel time not compared: {why}", "doubts": [], "tone": ""}
    a, b = out["a"], out["b"]
    out["delta"] = round(b - a, 3)
    out["ratio"] = round(b / a, 3) if a else None
    left = [f"{n} kernel{'' if n == 1 else 's'} of {s.upper()}" for s in ("a", "b") if (n := out[f"unmeasured_{s}"])]
    verdict = _verdict(a, b, doubts, " and ".join(left), advice=not what)
    tone = "unsure" if doubts else "same" if abs(b - a) <= SAME_WITHIN * a else "slower" if b > a else "faster"
    return {**out, "verdict": verdict, "why": "", "doubts": [dict(d) for d in doubts], "tone": tone}


def _side_noise(ks: Optional[Sequence[Kernel]]) -> tuple:
    """``(noisy kernels, measured kernels, share of the measured time the noisy ones take)`` of one side."""
    timed = [(k, measured_us(k)) for k in ks or () if measured_us(k) is not None]
    total = sum(t for _, t in timed)
    noisy = [(k, t) for k, t in timed if k.profile.noisy]
    return len(noisy), len(timed), (sum(t for _, t in noisy) / total if total > 0 else 0.0)


def _ceilings(r: Report) -> dict:
    """The device's ceilings of ``r``'s profile by what they measure: ``{"GB/s": 14.52, "fp32 TFLOP/s": 0.0445}``."""
    info = r.device_info
    if info is None:
        return {}
    out = {"GB/s": info.peak_gbps} if isinstance(info.peak_gbps, (int, float)) and info.peak_gbps > 0 else {}
    out.update(
        (f"{dt} TFLOP/s", v) for dt, v in (info.peak_tflops or {}).items() if isinstance(v, (int, float)) and v > 0
    )
    return out


def doubts(a: Report, b: Report, ka: Optional[Sequence[Kernel]] = None, kb: Optional[Sequence[Kernel]] = None) -> list:
    """Why the measured times of ``a`` and ``b`` (of their kernels ``ka``/``kb``: a compile pair's; the whole reports'
    by default) cannot carry a verdict, ``[{code, short, text}]`` (``short``: in the verdict, ``text``: in the note
    ``times_uncertain``), ``[]`` where they can: ``noisy`` (a side's noisy kernels take :data:`NOISY_SHARE` of its
    measured time or more), ``ceilings`` (the machine's ceilings, measured when each was profiled on a device of one
    name, :data:`CEILING_FACTOR` apart or more), ``few_runs`` (a side timed in fewer than :data:`MIN_RUNS` runs)."""
    out = []
    for side, ks in (("A", a.kernels if ka is None else ka), ("B", b.kernels if kb is None else kb)):
        n, of, share = _side_noise(ks)
        if n and share >= NOISY_SHARE:
            out.append(
                {
                    "code": "noisy",
                    "short": f"{side}'s runs disagree ({n} of {of} kernels noisy, {share:.0%} of its kernel time)",
                    "text": f"{side}: {n} of {of} kernels are noisy, {share:.0%} of {side}'s measured kernel time "
                    f"(the slowest of their runs took more than {NOISY_FACTOR:g}× the fastest: the machine was busy)",
                }
            )
    ca, cb = _ceilings(a), _ceilings(b)
    same_device = a.device_info is not None and b.device_info is not None and a.device_info.name == b.device_info.name
    apart = {w: max(ca[w], cb[w]) / min(ca[w], cb[w]) for w in ca if w in cb} if same_device else {}
    if apart and max(apart.values()) >= CEILING_FACTOR:
        f = max(apart.values())
        each = "; ".join(f"{w}: A {ca[w]:g}, B {cb[w]:g} ({apart[w]:.1f}×)" for w in apart)
        out.append(
            {
                "code": "ceilings",
                "short": f"the machine's measured ceilings differ {f:.1f}× between the two profiles",
                "text": f"the ceilings of {a.device_info.name}, measured when each report was profiled, differ up to "
                f"{f:.1f}× ({each}): the machine was in another state for each (busy, another clock), and so were "
                "the kernels' times",
            }
        )
    ra, rb = timing_facts(a)["runs"], timing_facts(b)["runs"]
    few = [(s, n) for s, n in (("A", ra), ("B", rb)) if isinstance(n, int) and 0 < n < MIN_RUNS]
    if few:
        if len(few) == 2 and ra == rb:
            said = f"{ra} run{'' if ra == 1 else 's'} each"
            text = f"A and B were each timed in {said[:-5]}"
        else:
            said = " and ".join(f"{s} timed in {n} run{'' if n == 1 else 's'}" for s, n in few)
            text = said.replace(" timed", " was timed")
        out.append(
            {
                "code": "few_runs",
                "short": said,
                "text": f"{text}: a median of so few is one or two timings, which one stall moves",
            }
        )
    return out


def doubts_note(ds: Sequence[dict]) -> str:
    """The diff's note ``times_uncertain``: what the verdict does not say of its doubts (it gives each one short, and
    :data:`REPROFILE`), each in full and how to take more runs (:data:`MORE_RUNS`); ``""`` where there is none. The
    note stands under the verdict in the page and the text: it said the verdict's words again at three times their
    length."""
    if not ds:
        return ""
    why = "; ".join(d["text"] for d in ds)
    return f"Why the measured times are no verdict, in full: {why}. More runs: {MORE_RUNS}."


# -- how each side was timed ------------------------------------------------------------------------------------


def _most(values: list) -> Any:
    c = Counter(v for v in values if v not in (None, "", 0))
    return c.most_common(1)[0][0] if c else None


def timing_facts(r: Report) -> dict:
    """How ``r``'s times were taken: ``{statistic, runs, warmup, device, method}``, each ``None`` where the report
    does not say (a report made before it: no step profile, no device). ``statistic``/``runs``: the step profile's
    (``Report.profile``), else those of most kernels (``KernelProfile``); ``device``: the GPU or CPU by name
    (``Report.device_info``), else ``None``; ``warmup``/``method``: the step profile's (the profiler's way of tying
    device kernels to the calls)."""
    p = r.profile
    kps = [k.profile for k in r.kernels if k.profile is not None]
    return {
        "statistic": (p.statistic if p is not None else None) or _most([k.statistic for k in kps]),
        "runs": (p.runs if p is not None and p.runs else None) or _most([k.iterations for k in kps]),
        "warmup": p.warmup if p is not None else None,
        "device": r.device_info.name if r.device_info is not None else None,
        "method": (p.method or None) if p is not None else None,
    }


#: The facts of :func:`timing_facts` that the warning compares, in its order, with what it calls each.
_FACETS = (
    ("statistic", "statistic"),
    ("runs", "runs"),
    ("warmup", "warm-up runs"),
    ("device", "device"),
    ("method", "profiling method"),
)


def timing(a: Report, b: Report, timed: bool) -> dict:
    """How each side was timed and whether alike: ``{a, b, differs, warning}``; ``a``/``b`` as
    :func:`timing_facts` gives them; ``differs``: ``[{what, a, b}]``, the facts that differ (one side's not recorded
    and the other's known is a difference: the method may be another), ``what`` as the warning names it;
    ``warning``: one sentence, ``""`` where nothing differs or either report was not profiled (``timed``: both
    were)."""
    fa, fb = timing_facts(a), timing_facts(b)
    if fa["device"] is None and fb["device"] is None and a.device != b.device:  # no names: at least the kind
        fa["device"], fb["device"] = a.device or None, b.device or None
    differs = []
    for key, what in _FACETS:
        x, y = fa[key], fb[key]
        if (x is not None or y is not None) and x != y:
            differs.append({"what": what, "a": x, "b": y})
    warning = timing_warning(differs) if timed else ""
    return {"a": fa, "b": fb, "differs": differs if timed else [], "warning": warning}


def _clause(d: dict) -> str:
    """One fact of the warning: ``"runs: A 5, B 3"``, ``"device: A NVIDIA H200, B not recorded"``."""
    x, y = ("not recorded" if v is None else str(v) for v in (d["a"], d["b"]))
    if d["what"] == "profiling method":  # a paragraph each: which side has one, else both
        if d["a"] is None or d["b"] is None:
            return f"profiling method recorded for {'A' if d['b'] is None else 'B'} only"
        return f"profiling method: A “{x}”, B “{y}”"
    return f"{d['what']}: A {x}, B {y}"


def timing_warning(differs: list) -> str:
    """``"A and B were timed differently (runs: A 5, B 3; device: A NVIDIA H200, B not recorded): part of a time
    delta may be how it was measured."``; ``""`` where nothing differs."""
    if not differs:
        return ""
    parts = "; ".join(_clause(d) for d in differs)
    return f"A and B were timed differently ({parts}): part of a time delta may be how it was measured."


# -- B's autotuning against A's measurement ---------------------------------------------------------------------


def _library_choice(at: dict) -> tuple:
    """``(name, µs)`` of the library kernel (ATen) among the autotune choices of ``at`` for its op (the choice named
    as the op: ``mm``, ``addmm``), ``(None, None)`` where there is none or it has no time."""
    op = at.get("op")
    for c in at.get("choices") or []:
        if isinstance(c, dict) and c.get("name") == op and isinstance(c.get("time_ms"), (int, float)):
            return op, float(c["time_ms"]) * 1000.0
    return None, None


def _signature(c: Compile, names: Sequence[str], op: str) -> list:
    """``(target, input shapes, shape, dtype)`` of each FX node of ``c`` among ``names`` whose op is ``op``."""
    graph = c.graphs.get("post_grad") or next(iter(c.graphs.values()), None)
    if graph is None:
        return []
    nodes = {n.name: n for n in graph.nodes}
    out = []
    for name in names:
        n = nodes.get(name)
        if n is not None and short_op(n.wraps or n.target) == op:
            ins = tuple(repr(nodes[i].shape) if i in nodes else "?" for i in n.inputs)
            out.append((n.wraps or n.target, ins, repr(n.shape), n.dtype))
    return out


def autotune_vs_measured(
    kb: Kernel, cb: Compile, ca: Compile, prefer: Optional[str] = None, merged: Sequence[str] = ()
) -> dict:
    """Where B's kernel ``kb`` is what B's autotuning chose over the library kernel of its op (``mm``, ``addmm``), and
    A called that library kernel for the same op with the same input and output shapes and dtype (A's compile ``ca``;
    ``prefer``: the A kernel of the row, tried first) and measured it: ``{op, a, a_us, a_merged_us, autotuned_us,
    ratio, chosen, chosen_us, b_us, note, detail}``; ``a_us``: A's measured time of one launch, ``a_merged_us``: that of A's
    other kernels whose ops ``kb`` computes too (``merged``, by name: the epilogue's kernel merged into B's template;
    0.0 where none), ``autotuned_us``: what B's autotuning timed the library kernel at (alone, as the templates it
    was weighed against), ``ratio`` the second over ``a_us``, ``chosen``/``chosen_us``: B's choice and its autotune
    time, ``b_us``: B's measured time of one launch of ``kb``, epilogue included (``None`` where B was not
    profiled), ``note``: the row's sentence (``"A measured mm at 13.6 µs; B's autotuning timed it at 61.0 µs
    (4.5×)"``), ``detail``: with B's choice (``"... and chose triton_mm_4 (44.5 µs), which B's profile measured at
    41.9 µs"``: the CLI, the selected row's head). ``{}`` otherwise."""
    at = kb.metadata.get("autotune")
    if not isinstance(at, dict) or kb.language == "extern":
        return {}
    op, lib_us = _library_choice(at)
    chosen = at.get("chosen") or at.get("fastest")
    if op is None or not chosen or chosen == op:
        return {}
    sig = _signature(cb, kb.fx_nodes, op)
    if not sig:
        return {}
    externs = sorted(
        (k for k in ca.kernels if k.language == "extern" and _per_call_us(k) is not None),
        key=lambda k: k.name != prefer,
    )
    ka = next((k for k in externs if set(sig) <= set(_signature(ca, k.fx_nodes, op))), None)
    if ka is None:
        return {}
    a_us = _per_call_us(ka)
    chosen_us = next(
        (
            float(c["time_ms"]) * 1000.0
            for c in at.get("choices") or []
            if isinstance(c, dict) and c.get("name") == chosen and isinstance(c.get("time_ms"), (int, float))
        ),
        None,
    )
    b_us = _per_call_us(kb)
    others = [k for k in ca.kernels if k.name in set(merged)]
    a_merged_us = sum(t for t in (_per_call_us(k) for k in others) if t is not None)
    ratio = lib_us / a_us if a_us else None
    note = f"A measured {op} at {fmt_us(a_us)}; B's autotuning timed it at {fmt_us(lib_us)}"
    if ratio is not None:
        note += f" ({ratio:.1f}×)"
    detail = note + f" and chose {chosen}" + (f" ({fmt_us(chosen_us)})" if chosen_us is not None else "")
    if b_us is not None:
        detail += f", which B's profile measured at {fmt_us(b_us)}"
    return {
        "op": op,
        "a": ka.name,
        "a_us": round(a_us, 3),
        "a_merged_us": round(float(a_merged_us), 3),
        "autotuned_us": round(lib_us, 3),
        "ratio": round(ratio, 3) if ratio is not None else None,
        "chosen": chosen,
        "chosen_us": round(chosen_us, 3) if chosen_us is not None else None,
        "b_us": round(b_us, 3) if b_us is not None else None,
        "note": note,
        "detail": detail,
    }


def autotune_summary(checks: Sequence[dict]) -> str:
    """The diff's note (``autotune_vs_measured``) where B's autotuning timed a library kernel at least
    :data:`AUTOTUNE_OFF` times what A measured it at: ``"B's autotuning timed the library kernels it replaced 2.3–4.5×
    slower than A measured them: mm 61.0 µs (A measured 13.6 µs), ...; so it chose Triton templates, which B's
    profile measured slower than A's library kernels: ..."``; ``""`` where none did."""
    off = [c for c in checks if c.get("ratio") is not None and c["ratio"] >= AUTOTUNE_OFF]
    if not off:
        return ""
    rs = sorted(c["ratio"] for c in off)
    span = f"{rs[0]:.1f}×" if f"{rs[0]:.1f}" == f"{rs[-1]:.1f}" else f"{rs[0]:.1f}–{rs[-1]:.1f}×"
    many = len(off) > 1
    timed = ", ".join(f"{c['op']} at {fmt_us(c['autotuned_us'])} (A measured {fmt_us(c['a_us'])})" for c in off)
    text = (
        f"B's autotuning timed the library kernel{'s' if many else ''} it replaced {span} slower than A measured "
        f"{'them' if many else 'it'}: {timed}"
    )
    if all(c["b_us"] is not None for c in off):
        chosen = ", ".join(f"{c['chosen']} {fmt_us(c['b_us'])}" for c in off)
        # B's kernel computes its epilogue too: against A's library kernel and the kernels A ran that epilogue in
        worse = all(c["b_us"] > c["a_us"] + c["a_merged_us"] for c in off)
        text += f". Its choice{'s' if many else ''}, measured in B's profile: {chosen}" + (
            ", slower than A's kernels for the same ops" if worse else ""
        )
    return text + "."
