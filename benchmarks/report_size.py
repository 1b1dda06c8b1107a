"""Size and load time of a report, before (schema 1, as written by main) and after (schema 2, compact).

    PYTHONPATH=. python benchmarks/report_size.py [--raw PATH] [--before-tree /work/main]

The report: a 2-layer GPT-2 (``examples.GPT2``, d=64, blocks that read their layer index as Hugging Face's do)
compiled in one capture: each block on its own (regional compilation: two identical compiles), then the whole model at three sequence lengths with
``dynamic=False`` (two recompiles). The raw capture is saved (``--raw``, default
``benchmarks/.report_size_raw.json``) and reused on later runs, so only the first run compiles.
``--before-tree`` is a checkout whose ``build_report`` writes the old report from the same raw capture.
"""

import argparse
import gzip
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEFORE = r"""
import importlib.util, json, sys, time
sys.path.insert(0, sys.argv[1])
import inductor_lens
spec = importlib.util.spec_from_file_location("raw_fixture", sys.argv[2] + "/tests/_raw.py")
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); load_raw = mod.load_raw
from inductor_lens.capturing.build import build_report
assert inductor_lens.__file__.startswith(sys.argv[1]), inductor_lens.__file__
report = build_report(load_raw(sys.argv[3]), "2.13.0", title="report_size")
text = report.to_json()
open(sys.argv[4], "w").write(text)
times = []
for _ in range(5):
    t = time.perf_counter(); inductor_lens.load(text); times.append(time.perf_counter() - t)
print(json.dumps({"load_s": sorted(times)[2]}))
"""

NODE = r"""
import { expandReport } from %s;
import { readFileSync } from 'node:fs';
const text = readFileSync(process.argv[2], 'utf8');
const times = [];
for (let i = 0; i < 7; i++) { const t = performance.now(); expandReport(JSON.parse(text)); times.push(performance.now() - t); }
times.sort((a, b) => a - b);
console.log(JSON.stringify({ parse_expand_ms: times[3] }));
"""


def capture(raw_path: pathlib.Path) -> None:
    import torch

    import inductor_lens
    from inductor_lens.examples import GPT2, Block, gpt2_inputs
    from tests._raw import dump_raw

    class IndexedBlock(Block):
        """A block that reads its layer index, as Hugging Face's blocks do (a KV-cache slot): dynamo guards on
        it, so compiling each block on its own gives one compile per block, all of the same graph."""

        def __init__(self, d: int, heads: int, layer_idx: int):
            super().__init__(d, heads)
            self.layer_idx = layer_idx

        def forward(self, x):
            return super().forward(x) if self.layer_idx >= 0 else x

    torch.manual_seed(0)
    model = GPT2(layers=2).eval()
    model.h = torch.nn.ModuleList(IndexedBlock(64, 4, i) for i in range(len(model.h)))
    t = time.perf_counter()
    with torch.no_grad(), inductor_lens.capture(title="gpt2 regional + recompiles") as cap:
        for block in model.h:  # regional compilation: each block compiled on its own
            block.compile()
        model(gpt2_inputs(seq=16))
        for block in model.h:
            block._compiled_call_impl = None  # back to eager blocks
        whole = torch.compile(model, dynamic=False)
        for seq in (16, 24, 32):
            whole(gpt2_inputs(seq=seq))
    print(f"captured {len(cap.report.compiles)} compiles in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    dump_raw(cap._raw, raw_path)


def median_load(text: str) -> float:
    import inductor_lens

    times = []
    for _ in range(5):
        t = time.perf_counter()
        inductor_lens.load(text)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def node_time(path: pathlib.Path, tmp: pathlib.Path) -> float:
    script = tmp / "expand_bench.mjs"
    script.write_text(NODE % json.dumps((ROOT / "js" / "src" / "intern.js").as_uri()))
    out = subprocess.run(["node", str(script), str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["parse_expand_ms"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", default=str(ROOT / "benchmarks" / ".report_size_raw.json"))
    ap.add_argument("--before-tree", default="/work/main")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / ".report_size"))
    args = ap.parse_args()
    raw_path, out = pathlib.Path(args.raw), pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not raw_path.exists():
        capture(raw_path)
    from inductor_lens.capturing.build import build_report
    from tests._raw import load_raw

    report = build_report(load_raw(raw_path), "2.13.0", title="report_size", cells={})
    after = report.to_json()
    expanded = report.to_json(compact=False)
    (out / "after.json").write_text(after)
    (out / "expanded.json").write_text(expanded)
    rows = [
        ("schema 2, expanded (no interning)", len(expanded.encode()), median_load(expanded), None),
        (
            "schema 2, compact (written form)",
            len(after.encode()),
            median_load(after),
            node_time(out / "after.json", out),
        ),
    ]
    if os.path.isdir(args.before_tree):
        res = subprocess.run(
            [sys.executable, "-c", BEFORE, args.before_tree, str(ROOT), str(raw_path), str(out / "before.json")],
            capture_output=True,
            text=True,
        )
        if res.returncode == 0:
            load_s = json.loads(res.stdout)["load_s"]
            rows.insert(
                0,
                (
                    "schema 1 (before)",
                    (out / "before.json").stat().st_size,
                    load_s,
                    node_time(out / "before.json", out),
                ),
            )
        else:
            print("before: could not build with", args.before_tree, res.stderr[-800:], file=sys.stderr)
    print(
        f"report: {len(report.compiles)} compiles, {len(report.kernels)} kernels, "
        f"{sum(len(c.fused_nodes) for c in report.compiles)} fused nodes; "
        f"same graph: {[(c.id, c.same_graph_as) for c in report.compiles if c.same_graph_as]}"
    )
    gz = {
        "schema 1 (before)": out / "before.json",
        "schema 2, expanded (no interning)": out / "expanded.json",
        "schema 2, compact (written form)": out / "after.json",
    }
    print("| form | JSON bytes | gzip bytes (as in the page) | Python load() s | JS parse+expand ms |")
    print("|---|---|---|---|---|")
    for name, size, load_s, js_ms in rows:
        packed = len(gzip.compress(gz[name].read_bytes(), compresslevel=6, mtime=0))
        print(f"| {name} | {size:,} | {packed:,} | {load_s:.3f} | {'' if js_ms is None else f'{js_ms:.1f}'} |")
    base = rows[0][1]
    print(f"compact is {base / len(after.encode()):.2f}x smaller than {rows[0][0]}")


if __name__ == "__main__":
    main()
