"""The combined page of a distributed job: one self-contained HTML file for all ranks.

Same page machinery as :mod:`inductor_lens.html` (the inlined front end, no network, everything
from the reports shown as text). The payload is ``{"job": {...}}`` (see :meth:`Job.to_dict`); the
front end (``js/src/job.js``) draws the rank selector and the divergence summary above the lens of
the selected rank.
"""

from __future__ import annotations

import base64
import gzip
import html
import os
from typing import Union

from .html import _BOOT, _CSP, _bundle_b64, _script_data, _static
from .widget import engine_gz


def to_job_html(job) -> str:
    from . import __version__

    css = _static("lens.css").read_text(encoding="utf-8")
    if "</style" in css.lower():
        raise ValueError("lens.css must not contain '</style'")
    esc = html.escape
    title = job.title or "distributed torch.compile job"
    present = sorted(job.reports)
    facts = f"{len(present)} of {job.world_size} rank report(s)"
    if job.missing:
        facts += f" · missing: rank {', '.join(str(r) for r in job.missing)}"
    payload = base64.b64encode(gzip.compress(job.to_json().encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")
    engine_b64 = base64.b64encode(engine_gz()).decode("ascii")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="inductor_lens {esc(__version__)}">
<title>{esc(title)} · inductor_lens</title>
<style>
{css}
</style>
</head>
<body class="il-standalone il-host">
<header class="il-page-head">
<h1>{esc(title)}</h1>
<p class="il-page-facts">{esc(facts)}</p>
<p>What torch.compile's Inductor did on each rank of a distributed job, and where the ranks differ.
Made with inductor_lens {esc(__version__)}: <code>inductor-lens torchrun --nproc-per-node N script.py -o job.html</code>.</p>
</header>
<main class="il-page-main"><div id="il-app"><noscript>This page needs JavaScript to draw the report.</noscript></div></main>
{_script_data("il-report", payload)}
{_script_data("il-bundle", _bundle_b64())}
{_script_data("il-engine", engine_b64)}
<script type="module">{_BOOT}</script>
</body>
</html>
"""


def save_job_html(job, path: Union[str, os.PathLike]) -> str:
    """Write :func:`to_job_html` atomically (temp file + ``os.replace``); returns the path."""
    text = to_job_html(job)
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
