"""A distributed job: one report per rank, combined, and where the ranks differ.

Torch-free, like the model. ``load_job`` reads rank reports (``rank0.json``, ``rank1.json``, ... as
``inductor-lens torchrun`` writes them, or any set of reports that carry ``rank``) and returns a
:class:`Job`; ``Job.divergence`` says which ranks differ in compiles, recompiles, graphs, kernels,
guards, graph breaks and collective order, in sentences such as
``rank 1 recompiled 0/1 (tensor 'x' size mismatch at index 0. expected 16, actual 17); rank 0 did not``.

>>> job = inductor_lens.load_job("lens-ranks/")
>>> print(job.summary())
>>> job.save_html("job.html")           # one page, a rank selector and the divergence summary
"""

from __future__ import annotations

import dataclasses
import datetime
import glob
import json
import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional, Union

from ..report import hooks
from ..report.model import Report, ReportError, load
from ..report.rules import breaks_text, fmt_us, frames_met

__all__ = ["Job", "RankEntry", "Divergence", "load_job", "JOB_FORMAT"]

#: Version of the combined page's job payload (``{"job": {...}}``), read by js/src/job.js.
JOB_FORMAT = 1

_RANK_FILE = re.compile(r"rank(\d+)\.json$")


@dataclass
class RankEntry:
    """One rank of the job: its report, or why there is none (``missing``)."""

    rank: int
    report: Optional[Report] = None
    path: str = ""
    missing: str = ""


@dataclass
class Divergence:
    """One way in which the ranks differ. ``groups``: ranks that agree, with what they saw."""

    aspect: str  # compiles, recompiles, graphs, kernels, guards, graph_breaks, collectives, missing
    message: str
    groups: list[dict] = field(default_factory=list)  # [{"ranks": [0, 2], "value": "..."}]

    @property
    def ranks(self) -> list[int]:
        """The ranks that differ from the rest: all but the largest group (ties: the group of the lowest rank)."""
        if self.aspect == "missing":
            return sorted(r for g in self.groups for r in g["ranks"])
        if len(self.groups) < 2:
            return []
        ref = min(self.groups, key=lambda g: (-len(g["ranks"]), min(g["ranks"])))
        return sorted(r for g in self.groups if g is not ref for r in g["ranks"])


@dataclass
class Job:
    """The ranks of one distributed job, in rank order (missing ranks included)."""

    ranks: list[RankEntry]
    world_size: int
    title: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def reports(self) -> dict[int, Report]:
        return {e.rank: e.report for e in self.ranks if e.report is not None}

    @property
    def missing(self) -> list[int]:
        return [e.rank for e in self.ranks if e.report is None]

    def report(self, rank: int) -> Report:
        for e in self.ranks:
            if e.rank == rank:
                if e.report is None:
                    raise KeyError(f"rank {rank} has no report: {e.missing}")
                return e.report
        raise KeyError(f"no rank {rank} in this job (ranks: {[e.rank for e in self.ranks]})")

    @property
    def divergence(self) -> list[Divergence]:
        return divergence(self)

    @property
    def clock(self) -> tuple[dict[int, float], str]:
        """How the page aligns the ranks' times: each rank's shift in µs (``{}`` where they cannot be aligned), and
        the sentence that says what the times count from."""
        return clock(self.reports)

    def summary(self) -> str:
        lines = [f"inductor_lens job: {len(self.reports)} of {self.world_size} rank report(s)"]
        for e in self.ranks:
            if e.report is None:
                lines.append(f"  rank {e.rank}: MISSING ({e.missing})")
            else:
                r = e.report
                lines.append(
                    f"  rank {e.rank}: {len(r.compiles)} compile(s), {len(r.kernels)} kernel(s), "
                    f"{breaks_text(len(r.graph_breaks), [d.code for d in r.diagnostics], frames_met(r.graph_breaks))}"
                )
        div = self.divergence
        lines.append("  ranks agree" if not div else "  divergence:")
        lines += [f"  - {d.message}" for d in div]
        lines += [f"  ! {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<inductor_lens.Job: {len(self.reports)} of {self.world_size} rank(s), {len(self.divergence)} divergence(s)>"

    def to_dict(self) -> dict:
        """The combined page's payload: ``{"job": {...}}`` with every rank's report inline, its times shifted to
        count from the job's first capture start where the ranks can be aligned (``clock``: ``Job.clock``'s text)."""
        offsets, clock_text = self.clock
        return {
            "job": {
                "format": JOB_FORMAT,
                "title": self.title,
                "world_size": self.world_size,
                "notes": list(self.notes),
                "clock": clock_text,
                "ranks": [
                    {
                        "rank": e.rank,
                        "path": e.path,
                        "missing": e.missing,
                        "report": shift_times(e.report, offsets.get(e.rank, 0.0)).to_dict()
                        if e.report is not None
                        else None,
                    }
                    for e in self.ranks
                ],
                "divergence": [
                    {"aspect": d.aspect, "message": d.message, "ranks": d.ranks, "groups": d.groups}
                    for d in self.divergence
                ],
            }
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def save_html(self, path: Union[str, os.PathLike]) -> str:
        """One self-contained page: a rank selector, the divergence summary, and each rank's lens."""
        return hooks.call("save_job_html", self, path)

    def _repr_html_(self) -> str:
        import html

        return "<pre>" + html.escape(self.summary()) + "</pre>"


def diagnostic(code: str, message: str):
    """A report diagnostic: typed (``Diagnostic{code, message}``) where the model has the type, else the text."""
    from ..report import model

    cls = getattr(model, "Diagnostic", None)
    return cls(code=code, message=message) if cls is not None else message


# -- loading ------------------------------------------------------------------------------------


def _expand(paths_or_dir: Union[str, os.PathLike, Iterable]) -> tuple[list[str], list[str]]:
    """The report files named by ``paths_or_dir``, and the directories they are in."""
    items = [paths_or_dir] if isinstance(paths_or_dir, (str, os.PathLike)) else list(paths_or_dir)
    out: list[str] = []
    dirs: list[str] = []
    for item in items:
        p = os.fspath(item)
        if os.path.isdir(p):
            found = sorted(
                glob.glob(os.path.join(p, "rank*.json")),
                key=lambda f: int(_RANK_FILE.search(f).group(1)) if _RANK_FILE.search(f) else 1 << 30,
            )
            if not found and not os.path.exists(os.path.join(p, "job.json")):
                raise FileNotFoundError(
                    f"{p!r} is a directory with no rank*.json reports in it (inductor-lens "
                    "torchrun --json-dir writes them; show takes a report file or such a directory)"
                )
            out += found
            dirs.append(os.path.abspath(p))
        elif not os.path.exists(p):
            raise FileNotFoundError(f"no report at {p!r}")
        else:
            out.append(p)
            dirs.append(os.path.dirname(os.path.abspath(p)))
    return out, list(dict.fromkeys(dirs))


def _job_meta(dirs: list[str]) -> dict:
    """``job.json`` beside the rank reports (written by the launcher): world size, failures, title."""
    for d in dirs:
        f = os.path.join(d, "job.json")
        if os.path.exists(f):
            try:
                with open(f, encoding="utf-8") as fh:
                    data = json.load(fh)
                return data if isinstance(data, dict) else {}
            except (OSError, ValueError):
                pass
    return {}


def load_job(paths_or_dir: Union[str, os.PathLike, Iterable], world_size: Optional[int] = None) -> Job:
    """Combine rank reports into a :class:`Job`.

    Parameters
    ----------
    paths_or_dir : path, directory, or list of them
        A directory of ``rank{N}.json`` files (what ``inductor-lens torchrun --json-dir`` writes),
        or report files. Each report's ``rank`` is used; a report without one takes the number in
        its file name (``rank3.json``), else its position.
    world_size : int, optional
        How many ranks the job had; by default the reports' ``world_size`` (or the launcher's
        ``job.json``). Ranks below it without a report are listed as missing.
    """
    paths, dirs = _expand(paths_or_dir)
    meta = _job_meta(dirs)
    entries: dict[int, RankEntry] = {}
    notes: list[str] = []
    for i, p in enumerate(paths):
        try:
            report = load(p)
        except (ReportError, UnicodeDecodeError, OSError) as e:
            m = _RANK_FILE.search(os.path.basename(p))
            rank = int(m.group(1)) if m else i
            entries.setdefault(rank, RankEntry(rank=rank, path=p, missing=f"{os.path.basename(p)} is unreadable: {e}"))
            continue
        m = _RANK_FILE.search(os.path.basename(p))
        rank = report.rank if report.rank is not None else (int(m.group(1)) if m else i)
        if rank in entries and entries[rank].report is not None:
            notes.append(f"two reports for rank {rank}: {entries[rank].path} and {p}; the first is shown")
            continue
        entries[rank] = RankEntry(rank=rank, report=report, path=p)
    sizes = {e.report.world_size for e in entries.values() if e.report is not None and e.report.world_size}
    if len(sizes) > 1:
        notes.append(f"the reports disagree on the world size ({sorted(sizes)}): they may come from different jobs")
    size = world_size or meta.get("world_size") or (max(sizes) if sizes else 0)
    size = max(size, max(entries) + 1 if entries else 0)
    crashed = {int(k): v for k, v in (meta.get("failures") or {}).items()}
    for r in range(size):
        if r not in entries:
            why = (
                crashed.get(r)
                or "it crashed, hung or was killed before writing it, or its node's reports are elsewhere"
            )
            entries[r] = RankEntry(rank=r, missing=why)
    if meta.get("note"):
        notes.append(str(meta["note"]))
    title = meta.get("title") or next((e.report.title for e in entries.values() if e.report is not None), "")
    return Job(ranks=[entries[r] for r in sorted(entries)], world_size=size, title=title, notes=notes)


# -- one clock for the ranks ------------------------------------------------------------------------


def clock(reports: dict[int, Report]) -> tuple[dict[int, float], str]:
    """Each rank's times count from its own capture's start, which differ by seconds between ranks (each process
    imports torch and starts its capture on its own): events that happen at once on every rank, such as the first
    call after DDP's broadcast, read "4.50 s" on one rank and "31.4 ms" on another. Each report's ``start_wall_us``
    (the wall clock at that start) gives its shift from the earliest rank's start: ``({rank: µs}, text)``. Ranks on
    one host read one clock; across hosts, their clocks' agreement (NTP) bounds it. A report without it (made
    before it was recorded) leaves every rank on its own clock, and the text says so."""
    if not reports:
        return {}, ""
    starts = {r: rep.start_wall_us for r, rep in reports.items()}
    if len(reports) < 2:
        return {}, "Times count from the capture's start."
    if any(s is None for s in starts.values()):
        old = sorted(r for r, s in starts.items() if s is None)
        return {}, (
            f"Times count from each rank's own capture start: {_ranks_text(old)} recorded no wall-clock start (a "
            "report made before inductor_lens recorded it), so the ranks' times cannot be compared."
        )
    first = min(starts, key=lambda r: (starts[r], r))
    zero = starts[first]
    offsets = {r: round(s - zero, 1) for r, s in starts.items()}
    at = datetime.datetime.fromtimestamp(zero / 1e6, datetime.timezone.utc).strftime("%H:%M:%S UTC")
    later = [f"rank {r} {fmt_us(offsets[r])} later" for r in sorted(offsets) if r != first]
    return offsets, (
        f"Times on every rank count from the job's first capture start (rank {first}'s, at {at}; "
        + ", ".join(later)
        + "), read from each rank's wall clock: on one host, one clock; across hosts, as close as their clocks agree."
    )


def shift_times(report: Report, us: float) -> Report:
    """``report`` with every time that counts from its capture's start (triggers, phases, CUDA graph recordings,
    ``torch.compile`` calls, resets, frames with no graph) moved ``us`` later: counted from an earlier start. The
    derived texts that cite them (``Report.when``) are derived again. ``us`` 0: the report itself."""
    if not us:
        return report

    def later(t):
        return None if t is None else round(t + us, 1)

    def compile_(c):
        t = c.trigger
        changes = (
            {
                "trigger": dataclasses.replace(
                    t,
                    time_us=later(t.time_us),
                    inductor_start_us=later(t.inductor_start_us),
                    inductor_end_us=later(t.inductor_end_us),
                )
            }
            if t
            else {}
        )
        changes["phases"] = [dataclasses.replace(p, start_us=later(p.start_us)) for p in c.phases]
        if c.cudagraphs is not None:
            recs = [dataclasses.replace(r, time_us=later(r.time_us)) for r in c.cudagraphs.recordings]
            changes["cudagraphs"] = dataclasses.replace(c.cudagraphs, recordings=recs)
        return dataclasses.replace(c, **changes)

    return dataclasses.replace(
        report,
        start_wall_us=round(report.start_wall_us - us, 1)
        if report.start_wall_us is not None
        else None,  # the new origin
        compiles=[compile_(c) for c in report.compiles],
        compile_calls=[dataclasses.replace(c, time_us=later(c.time_us)) for c in report.compile_calls],
        resets=[dataclasses.replace(r, time_us=later(r.time_us)) for r in report.resets],
        empty_frames=[dataclasses.replace(f, time_us=later(f.time_us)) for f in report.empty_frames],
    )


# -- divergence ---------------------------------------------------------------------------------


def _ranks_text(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _group(values: dict[int, object]) -> list[tuple[list[int], object]]:
    """Ranks grouped by equal value, largest group first (the majority is "what most ranks did")."""
    groups: list[tuple[list[int], object]] = []
    for rank in sorted(values):
        for ranks, v in groups:
            if v == values[rank]:
                ranks.append(rank)
                break
        else:
            groups.append(([rank], values[rank]))
    groups.sort(key=lambda g: (-len(g[0]), g[0][0]))
    return groups


_ADDR = re.compile(r"\b\d{7,}\b|0x[0-9a-fA-F]{6,}")


_DEVICE = re.compile(r"(DeviceProperties\(type='\w+', index=|\bdevice=|\b(?:cuda|xpu|hpu):)\d+")


def _local(text: str) -> str:
    """``text`` without the rank's own device index: each rank runs the same code on its own GPU
    (``cuda:1``, ``index=1`` in Triton's metadata, ``device=1`` in a tensor guard), which is no divergence."""
    return _DEVICE.sub(lambda m: m.group(1) + "#", text or "")


def _norm(text: str) -> str:
    """Guard text without what differs between any two processes (object ids, addresses, timings, the
    local device index)."""
    lines = [ln for ln in (text or "").splitlines() if not ln.startswith("Guard latency")]
    return _local(_ADDR.sub("#", "\n".join(lines)))


_COLLECTIVE = re.compile(
    r"(_c10d_functional|c10d|_dtensor)\.|all_reduce|all_gather|reduce_scatter|all_to_all|"
    r"broadcast|wait_tensor"
)


def _collectives(report: Report) -> list[str]:
    out = []
    for c in report.compiles:
        g = c.graphs.get("post_grad")
        for n in g.nodes if g else []:
            if n.op == "call_function" and _COLLECTIVE.search(n.target or ""):
                out.append(f"{c.id}: {n.target.split('.default')[0]}")
    return out


def _graph_sig(report: Report) -> dict[str, tuple]:
    out = {}
    for c in report.compiles:
        g = c.graphs.get("post_grad")
        if g is not None:
            out[c.id] = tuple((n.op, n.target, json.dumps(n.shape), n.dtype) for n in g.nodes)
    return out


def _describe_groups(groups, show) -> list[dict]:
    return [{"ranks": ranks, "value": show(v)} for ranks, v in groups]


def _set_divergence(aspect: str, noun: str, values: dict[int, list[str]]) -> Optional[Divergence]:
    """Ranks that have different sets of items: "rank 1 has X, Y that ranks 0, 2 lack"."""
    groups = _group({r: tuple(v) for r, v in values.items()})
    if len(groups) < 2:
        return None
    everyone = set.intersection(*(set(v) for v in values.values()))
    parts = []
    for ranks, v in groups:
        extra = [x for x in v if x not in everyone]
        parts.append(f"{_ranks_text(ranks)}: {', '.join(extra) if extra else 'only the common ' + noun}")
    return Divergence(aspect, f"{noun} differ: " + "; ".join(parts), _describe_groups(groups, lambda v: list(v)))


def _recompiles(reports: dict[int, Report]) -> Optional[Divergence]:
    per = {
        r: tuple(
            sorted({(cid, _reason(reason)) for cid, reason in rep.recompiles()})  # a frame with no graph's too
        )
        for r, rep in reports.items()
    }
    groups = _group(per)
    if len(groups) < 2:
        return None
    groups.sort(key=lambda g: not g[1])  # "rank 1 recompiled 0/1 (...); rank 0 did not"
    parts = []
    for ranks, recs in groups:
        if recs:
            parts.append(
                f"{_ranks_text(ranks)} recompiled " + ", ".join(f"{cid} ({why})" if why else cid for cid, why in recs)
            )
        else:
            parts.append(f"{_ranks_text(ranks)} did not")
    return Divergence("recompiles", "; ".join(parts), _describe_groups(groups, lambda v: [f"{a}: {b}" for a, b in v]))


def _reason(text: str) -> str:
    """``recompile of f: 0/0: tensor 'x' size mismatch ...`` -> the guard that failed."""
    text = re.sub(r"^recompile of [^:]*:\s*", "", text or "")
    text = re.sub(r"^\d+/\d+:\s*", "", text)
    return text.split(" (the backward graph")[0].strip()


def divergence(job: Job) -> list[Divergence]:
    """Every way in which the job's ranks differ (empty when they all agree)."""
    out: list[Divergence] = []
    if job.missing:
        why = [(e.rank, e.missing) for e in job.ranks if e.report is None]
        detail = why[0][1] if len(why) == 1 else "; ".join(f"rank {r}: {m}" for r, m in why)
        out.append(
            Divergence(
                "missing",
                f"{_ranks_text(job.missing)} wrote no report ({detail})",
                [{"ranks": job.missing, "value": "missing"}],
            )
        )
    reports = job.reports
    if len(reports) < 2:
        return out
    found = [
        _set_divergence("compiles", "compiles", {r: [c.id for c in rep.compiles] for r, rep in reports.items()}),
        _recompiles(reports),
    ]
    graphs = {r: _graph_sig(rep) for r, rep in reports.items()}
    common = set.intersection(*(set(g) for g in graphs.values()))
    differing = [cid for cid in sorted(common) if len(_group({r: g[cid] for r, g in graphs.items()})) > 1]
    for cid in differing:
        groups = _group({r: g[cid] for r, g in graphs.items()})
        found.append(
            Divergence(
                "graphs",
                f"the post-grad graph of {cid} differs: "
                + " vs ".join(f"{_ranks_text(rs)} ({len(v)} nodes)" for rs, v in groups),
                _describe_groups(groups, lambda v: f"{len(v)} nodes"),
            )
        )
    kernels = {
        r: {c.id: tuple((k.name, _local(k.source)) for k in c.kernels) for c in rep.compiles}
        for r, rep in reports.items()
    }
    for cid in sorted(common):
        groups = _group({r: k.get(cid, ()) for r, k in kernels.items()})
        if len(groups) > 1:
            found.append(
                Divergence(
                    "kernels",
                    f"the kernels of {cid} differ: "
                    + " vs ".join(f"{_ranks_text(rs)} ({', '.join(n for n, _ in v) or 'none'})" for rs, v in groups),
                    _describe_groups(groups, lambda v: [n for n, _ in v]),
                )
            )
    guards = {r: {c.compile_id: _norm(c.guards) for c in rep.compiles} for r, rep in reports.items()}
    for cid in sorted(set.intersection(*(set(g) for g in guards.values()))):
        groups = _group({r: g[cid] for r, g in guards.items()})
        if len(groups) > 1:
            found.append(
                Divergence(
                    "guards",
                    f"the guards of {cid} differ between " + " and ".join(_ranks_text(rs) for rs, _ in groups),
                    _describe_groups(groups, lambda v: v),
                )
            )
    found.append(
        _set_divergence(
            "graph_breaks",
            "graph breaks",
            {
                r: [
                    f"{b.reason.splitlines()[0] if b.reason else '?'}"
                    + (f" at {b.user_stack[-1].file}:{b.user_stack[-1].line}" if b.user_stack else "")
                    for b in rep.graph_breaks
                ]
                for r, rep in reports.items()
            },
        )
    )
    coll = {r: tuple(_collectives(rep)) for r, rep in reports.items()}
    groups = _group(coll)
    if len(groups) > 1:
        found.append(
            Divergence(
                "collectives",
                "the order of collectives in the compiled graphs differs: "
                + " vs ".join(f"{_ranks_text(rs)} ({' -> '.join(v) or 'none'})" for rs, v in groups),
                _describe_groups(groups, lambda v: list(v)),
            )
        )
    return out + [d for d in found if d is not None]
