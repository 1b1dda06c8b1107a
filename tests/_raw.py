"""Recorded raw captures (``raw.Raw``) as JSON, so ``build.py`` is tested without compiling.

``tests/fixtures/make_raw_fixtures.py`` writes them; :func:`load_raw` reads one back.
"""

import dataclasses
import json
import pathlib

from inductor_lens.capturing.raw import Raw, RawGraph, RawKernel, RawSchedNode, RawWindow

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


def dump_raw(raw: Raw, path) -> None:
    data = dataclasses.asdict(raw)
    data["trace"] = [[md, payload] for md, payload in raw.trace]
    pathlib.Path(path).write_text(json.dumps(data, default=str, separators=(",", ":")) + "\n")


def load_raw(name_or_path) -> Raw:
    path = pathlib.Path(name_or_path)
    if not path.exists():
        path = FIXTURES / f"raw_{name_or_path}.json"
    data = json.loads(path.read_text())
    graphs = []
    for g in data.pop("graphs"):
        g["kernels"] = [RawKernel(**k) for k in g["kernels"]]
        g["pre_fusion"] = [RawSchedNode(**n) for n in g["pre_fusion"]]
        g["post_fusion"] = [RawSchedNode(**n) for n in g["post_fusion"]]
        g["fusion_refusals"] = [tuple(x) for x in g["fusion_refusals"]]
        graphs.append(RawGraph(**g))
    windows = [RawWindow(**w) for w in data.pop("windows")]
    trace = [(md, payload) for md, payload in data.pop("trace")]
    return Raw(graphs=graphs, windows=windows, trace=trace, **data)
