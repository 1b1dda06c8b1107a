"""The combined page of a distributed job: one self-contained HTML file for all ranks.

Same page machinery as :mod:`inductor_lens.html` (the inlined front end, no network, everything
from the reports shown as text). The payload is ``{"mode": "job", "job": {...}}`` (see :meth:`Job.to_dict`); the
front end (``js/src/job.js``) draws the rank selector and the divergence summary above the lens of
the selected rank.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Union

from ..report.io import atomic_write


def to_job_html(job) -> str:
    """The combined page of ``job`` (see :func:`inductor_lens.html.page_html`)."""
    from .html import page_html

    present = sorted(job.reports)
    facts = f"{len(present)} of {job.world_size} rank report(s)"
    if job.missing:
        facts += f" · missing: rank {', '.join(str(r) for r in job.missing)}"
    data = {"mode": "job", **job.to_dict()}
    payload = gzip.compress(json.dumps(data, ensure_ascii=False).encode("utf-8"), compresslevel=6, mtime=0)
    return page_html(
        job.title or "distributed torch.compile job",
        facts,
        payload,
        "What torch.compile's Inductor did on each rank of a distributed job, and where the ranks differ.",
        "inductor-lens torchrun --nproc-per-node N script.py -o job.html",
        mode="job",
    )


def save_job_html(job, path: Union[str, os.PathLike]) -> str:
    """Write :func:`to_job_html` atomically (temp file + ``os.replace``); returns the path."""
    return atomic_write(path, to_job_html(job).encode("utf-8"))
