"""What a compiled backward holds at its peak, from torch's own allocator history (run on a GPU machine).

    python3 benchmarks/memory_history.py OUTDIR [--layers 4]

Issue 23/25: on the 4-layer Llama-3-8B-shaped training step the lens's estimate of the backward's peak was 0.82
of the measured one (3,636.5 vs 4,446.5 MiB). This compiles the same model (``benchmarks/llama8b.py``), runs one
step to compile, then a second with ``torch.cuda.memory._record_memory_history`` on. Each call of a compiled graph
is bracketed as the capture measures it (``capturing/memory.measure_peaks``: bytes allocated beyond those allocated
when the call began); the allocator's events inside the call are replayed to find the moment of the peak and the
blocks allocated during the call that are live then, each named by the output code's line that allocated it.
Writes OUTDIR/memory_history.json and prints a summary: the peak, and the live bytes by allocating line.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _site(frames: list) -> dict:
    """The output code's frame of an allocation (a file under Inductor's cache, ``call``), else the innermost."""
    for f in frames:
        name = f.get("filename", "")
        if "torchinductor" in name or "/tmp/" in name and name.endswith(".py") and "site-packages" not in name:
            return {
                "file": os.path.basename(name),
                "line": f.get("line"),
                "text": linecache.getline(name, f.get("line") or 0).strip()[:200],
            }
    f = frames[0] if frames else {}
    return {"file": f.get("filename", "?"), "line": f.get("line"), "text": f.get("name", "")}


def main(out: str, layers: int) -> None:
    import llama8b
    from torch._inductor.output_code import CompiledFxGraph

    model, ids = llama8b.model_and_ids(layers)
    compiled = torch.compile(model)
    t = time.perf_counter()
    compiled(input_ids=ids, labels=ids).loss.backward()
    torch.cuda.synchronize()
    print(f"compile + first step: {time.perf_counter() - t:.1f}s", flush=True)
    model.zero_grad(set_to_none=True)

    calls = []  # (kind, allocated before, peak beyond it, trace index at start, at end)
    original = CompiledFxGraph.__call__

    def __call__(self, inputs):
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        start = len(torch.cuda.memory._snapshot()["device_traces"][0])
        try:
            return original(self, inputs)
        finally:
            torch.cuda.synchronize()
            end = len(torch.cuda.memory._snapshot()["device_traces"][0])
            code = str(getattr(self, "source_code", "") or "")
            calls.append((code, before, torch.cuda.max_memory_allocated() - before, start, end))

    torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks="python")
    CompiledFxGraph.__call__ = __call__
    try:
        compiled(input_ids=ids, labels=ids).loss.backward()
        torch.cuda.synchronize()
    finally:
        CompiledFxGraph.__call__ = original
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    trace = snap["device_traces"][0]
    result = {"layers": layers, "torch": torch.__version__, "calls": []}
    for code, before, peak, start, end in calls:
        kind = "backward" if "tangents_" in code else "forward"
        live, cur, best, best_live = {}, 0, 0, {}
        for e in trace[start:end]:
            action, addr, size = e["action"], e["addr"], e["size"]
            if action == "alloc":
                live[addr] = e
                cur += size
            elif action == "free_completed":
                cur -= size
                live.pop(addr, None)
            if cur > best:
                best, best_live = cur, dict(live)
        by_line: dict = {}
        for e in best_live.values():
            s = _site(e.get("frames", []))
            key = f"{s['file']}:{s['line']} {s['text']}"
            row = by_line.setdefault(key, {"site": s, "bytes": 0, "blocks": 0, "sizes": []})
            row["bytes"] += e["size"]
            row["blocks"] += 1
            row["sizes"].append(e["size"])
        rows = sorted(by_line.values(), key=lambda r: -r["bytes"])
        made = {x["addr"] for x in trace[start:end] if x["action"] == "alloc"}
        freed_before = [
            e["size"] for e in trace[start:end] if e["action"] == "free_completed" and e["addr"] not in made
        ]
        result["calls"].append(
            {
                "kind": kind,
                "allocated_before_mib": round(before / 2**20, 1),
                "measured_peak_mib": round(peak / 2**20, 1),
                "replayed_peak_mib": round(best / 2**20, 1),
                "live_at_peak_mib": round(sum(r["bytes"] for r in rows) / 2**20, 1),
                "inputs_freed_mib": round(sum(freed_before) / 2**20, 1),
                "events": end - start,
                "live_by_line": [
                    {**r["site"], "mib": round(r["bytes"] / 2**20, 2), "blocks": r["blocks"], "sizes": r["sizes"][:6]}
                    for r in rows[:60]
                ],
            }
        )
    with open(os.path.join(out, "memory_history.json"), "w") as f:
        json.dump(result, f, indent=1)
    for c in result["calls"]:
        print(
            f"{c['kind']}: measured {c['measured_peak_mib']} MiB, replayed {c['replayed_peak_mib']}, live allocated in "
            f"the call at its peak {c['live_at_peak_mib']}, inputs freed {c['inputs_freed_mib']} ({c['events']} events)"
        )
        for r in c["live_by_line"][:25]:
            print(f"   {r['mib']:10.2f} MiB x{r['blocks']:<3} {r['file']}:{r['line']}  {r['text'][:120]}")


if __name__ == "__main__":
    args = sys.argv[1:]
    layers = int(args[args.index("--layers") + 1]) if "--layers" in args else 4
    os.makedirs(args[0], exist_ok=True)
    main(args[0], layers)
