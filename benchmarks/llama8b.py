"""Issue 25: a Llama-3-8B-shaped training step on one H200, end to end (run on the device, torch 2.11).

    python3 benchmarks/llama8b.py plain OUTDIR      # compile + one step, no lens: the baseline compile time
    python3 benchmarks/llama8b.py lens OUTDIR       # inspect(..., backward=True, profile=True) under the lens
    # options of both: --checkpoint (torch.utils.checkpoint around each layer), --autotune
    # (mode="max-autotune-no-cudagraphs"); plain: --steps N (N steps, for `inductor-lens run --profile`);
    # --layers 4,32 (lens: the depths captured, each written as a report; plain: the deepest of them)
    python3 -m inductor_lens run --profile --json OUT/run.json -o OUT/run.html benchmarks/llama8b.py plain OUTDIR --steps 3

Each mode in a fresh process with fresh Inductor and Triton caches (the caller sets TORCHINDUCTOR_CACHE_DIR and
TRITON_CACHE_DIR). The model is transformers' LlamaForCausalLM at Llama-3-8B's shape (32 layers, hidden 4096,
32 query / 8 KV heads, MLP 14336, vocab 128256, RMSNorm, rotary), random init in bf16, batch 1 x 2048 tokens;
nothing is downloaded. Prints one JSON line of figures; ``lens`` also writes ``llama8b.json.gz`` (the report)
and ``llama8b-4layers.json.gz`` (the same capture of a 4-layer model: the reduced test fixture).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

import torch

OPTS = {"checkpoint": False, "autotune": False, "steps": 1, "layers": (4, 32)}


def model_and_ids(layers: int = 32):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=layers,
        num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192, rope_theta=500000.0,
        rms_norm_eps=1e-5, tie_word_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaForCausalLM._from_config(cfg, attn_implementation="sdpa").train()
    torch.set_default_dtype(torch.float32)
    if OPTS["checkpoint"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    ids = torch.randint(0, cfg.vocab_size, (1, 2048), device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    return model, ids


def _compile(model):
    return torch.compile(model, mode="max-autotune-no-cudagraphs" if OPTS["autotune"] else None)


def _variant() -> str:
    return ", ".join(k for k in ("checkpoint", "autotune") if OPTS[k]) or "default"


def plain(out: str) -> dict:
    model, ids = model_and_ids(max(OPTS["layers"]))  # 32 unless --layers says
    compiled = _compile(model)
    torch.cuda.reset_peak_memory_stats()
    steps = []
    for _ in range(OPTS["steps"]):
        t = time.perf_counter()
        loss = compiled(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.cuda.synchronize()
        steps.append(round(time.perf_counter() - t, 3))
        model.zero_grad(set_to_none=True)
    return {
        "mode": "plain",
        "variant": _variant(),
        "layers": max(OPTS["layers"]),
        "first_step_s": round(steps[0], 1),
        "later_steps_s": steps[1:],
        "cuda_peak_bytes": torch.cuda.max_memory_allocated(),
    }


def lens(out: str) -> dict:
    import inductor_lens

    figures: dict = {"mode": "lens", "variant": _variant()}
    suffix = "".join(f"-{k}" for k in ("checkpoint", "autotune") if OPTS[k])
    for layers in OPTS["layers"]:
        name = ("llama8b" if layers == 32 else f"llama8b-{layers}layers") + suffix
        model, ids = model_and_ids(layers)
        torch.cuda.reset_peak_memory_stats()
        t = time.perf_counter()
        report = inductor_lens.inspect(
            model,
            ids,
            labels=ids,
            backward=True,
            profile=True,
            title=f"Llama-3-8B shape, {layers} layers, training step, bf16, 1 x 2048"
            + (f" ({_variant()})" if suffix else ""),
            compile_options={"mode": "max-autotune-no-cudagraphs"} if OPTS["autotune"] else None,
        )
        dt = time.perf_counter() - t
        path = os.path.join(out, f"{name}.json.gz")
        report.save_json(path)
        kernels = [k for c in report.compiles for k in c.kernels]
        timed = [k for k in kernels if k.profile]
        p = report.profile or {}
        f = {
            "layers": layers,
            "inspect_s": round(dt, 1),
            "compile_phases_s": round(
                sum(
                    max((ph.start_us + ph.duration_us for ph in c.phases), default=0)
                    - min((ph.start_us for ph in c.phases), default=0)
                    for c in report.compiles
                )
                / 1e6,
                1,
            ),
            "compiles": len(report.compiles),
            "kernels": len(kernels),
            "kernels_timed": len(timed),
            "fused_nodes": sum(len(c.fused_nodes) for c in report.compiles),
            "report_gz_bytes": os.path.getsize(path),
            "unattributed_share": p.get("unattributed_share")
            if isinstance(p, dict)
            else getattr(p, "unattributed_share", None),
            "step_device_us": p.get("device_total_us") if isinstance(p, dict) else getattr(p, "device_total_us", None),
            "cuda_peak_bytes": torch.cuda.max_memory_allocated(),
            "diagnostics": sorted({d.code for d in report.diagnostics}),
            "memory": [
                {
                    "compile": c.id,
                    "estimated_net_peak_mib": _mib(c.memory.net_peak_bytes),
                    "measured_peak_mib": _mib(c.memory.measured_peak_bytes),
                    "saved_for_backward_mib": _mib(getattr(c.memory, "saved_bytes", None)),
                }
                for c in report.compiles
                if c.memory is not None
            ],
        }
        print(json.dumps(f), flush=True)  # the figures first: a page that cannot be written loses none of them
        t = time.perf_counter()
        page = os.path.join(out, f"{name}.html")
        report.save_html(page)
        f["save_html_s"] = round(time.perf_counter() - t, 1)
        f["page_bytes"] = os.path.getsize(page)
        figures[name] = f
        print(json.dumps(f), flush=True)
        del model, report
        torch.cuda.empty_cache()
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return figures


def _mib(b):
    return round(b / 2**20, 1) if isinstance(b, (int, float)) else None


if __name__ == "__main__":
    mode, out = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    OPTS["checkpoint"] = "--checkpoint" in rest
    OPTS["autotune"] = "--autotune" in rest
    if "--steps" in rest:
        OPTS["steps"] = int(rest[rest.index("--steps") + 1])
    if "--layers" in rest:
        OPTS["layers"] = tuple(int(n) for n in rest[rest.index("--layers") + 1].split(","))
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    result = {"plain": plain, "lens": lens}[mode](out)
    result["process_s"] = round(time.perf_counter() - t0, 1)
    result["torch"] = torch.__version__
    print(json.dumps(result), flush=True)
    with open(os.path.join(out, f"{mode}-{_variant().replace(', ', '-')}.json"), "w") as fh:
        json.dump(result, fh)
