"""Reports built by hand from the model's dataclasses, for view tests that need content a real
compile cannot produce: hostile names and sources, and large graphs of a chosen size."""

from inductor_lens.report.model import (
    Compile,
    CompileCall,
    Diagnostic,
    Frame,
    FusedNode,
    FusionDecision,
    Graph,
    GraphNode,
    Kernel,
    Phase,
    Report,
    Trigger,
)

#: Strings that would run or inject markup if any view inserted report text as HTML.
HOSTILE = "</script><!-- <img src=x onerror=alert(1)> \"'&amp; <svg onload=alert(2)>"


def hostile_report() -> Report:
    """Every name, source, stack and reason contains :data:`HOSTILE`."""
    evil_frame = Frame(file=f"/home/u/{HOSTILE}.py", line=7, function=f"f{HOSTILE}", code=f"y = x  # {HOSTILE}")
    torch_frame = Frame(
        file="/site-packages/torch/_inductor/codegen/cpp.py", line=1, function="codegen_kernel", code=HOSTILE
    )
    nodes = [
        GraphNode(name="x", op="placeholder", target="x", shape=[4]),
        GraphNode(
            name=f"sin{HOSTILE}",
            op="call_function",
            target=f"aten.sin.default{HOSTILE}",
            inputs=["x"],
            shape=[4],
            dtype="float32",
            user_stack=[evil_frame],
            module_stack=[f"mod{HOSTILE}"],
        ),
        GraphNode(
            name="mm", op="call_function", target="aten.mm.default", inputs=[f"sin{HOSTILE}"], user_stack=[evil_frame]
        ),
        GraphNode(name="output", op="output", target="output", inputs=["mm"]),
    ]
    fused = [
        FusedNode(
            name=f"op0{HOSTILE}",
            kind="pointwise",
            fx_nodes=[f"sin{HOSTILE}"],
            kernel=f"cpp_fused{HOSTILE}",
            reads=["x"],
            writes=["buf0"],
            members=[f"op0{HOSTILE}"],
            module_stack=[f"mod{HOSTILE}"],
        ),
        FusedNode(
            name="op1",
            kind="extern",
            fx_nodes=["mm"],
            kernel="extern_kernels.mm",
            reads=["buf0"],
            writes=["buf1"],
            members=["op1"],
        ),
    ]
    kernels = [
        Kernel(
            name=f"cpp_fused{HOSTILE}",
            language="cpp",
            source=f'extern "C" void kernel() {{ /* {HOSTILE} */ }}',
            fused_nodes=[f"op0{HOSTILE}"],
            fx_nodes=[f"sin{HOSTILE}"],
            user_stack=[[evil_frame]],
            compiler_stack=[evil_frame, torch_frame],
            metadata={
                "note": HOSTILE,
                "heuristic": HOSTILE,
                "size_hints": HOSTILE,
                "launch": {"num_warps": 4, "block": {HOSTILE: 8}, HOSTILE: HOSTILE},
                "compile_info": {HOSTILE: [[HOSTILE, 1]]},
                "autotune": {
                    "op": HOSTILE,
                    "fastest": HOSTILE,
                    "chosen": f"cpp_fused{HOSTILE}",
                    "choices": [
                        {"name": HOSTILE, "description": HOSTILE, "time_ms": 0.01},
                        {"name": f"2{HOSTILE}", "description": "", "time_ms": None},
                    ],
                },
            },
            profile={
                "total_us": 3.0,
                "calls": 1.0,
                "per_call_us": 3.0,
                "share": 1.0,
                "device": HOSTILE,
                "iterations": 3,
            },
        ),
        Kernel(
            name="extern_kernels.mm",
            language="extern",
            source=f"extern_kernels.mm(buf0, {HOSTILE!r})",
            fused_nodes=["op1"],
            fx_nodes=["mm"],
        ),
    ]
    c = Compile(
        id=f"0/0 {HOSTILE}",
        compile_id="0/0",
        graph_kind="inference",
        trigger=Trigger(kind="first_call", reason=HOSTILE, user_stack=[evil_frame], time_us=100.0),
        frame=f"fn{HOSTILE}",
        phases=[Phase(name=f"phase{HOSTILE}", start_us=100.0, duration_us=500.0)],
        graphs={"post_grad": Graph(nodes=nodes, code=HOSTILE), f"g{HOSTILE}": Graph(nodes=nodes[:2])},
        fused_nodes=fused,
        kernels=kernels,
        output_code=HOSTILE,
        fusion_decisions=[
            FusionDecision(
                node1=f"op0{HOSTILE}", node2="op1", reason=f"no: {HOSTILE}", fused1=f"op0{HOSTILE}", fused2="op1"
            )
        ],
        graph_inputs=["x"],
        graph_outputs=["buf1"],
        guards=HOSTILE,
    )
    return Report(
        torch_version=f"2.13{HOSTILE}",
        device=f"cpu{HOSTILE}",
        compiles=[c],
        diagnostics=[Diagnostic(code="legacy", message=HOSTILE, detail=HOSTILE)],
        compile_calls=[CompileCall(target=f"fn{HOSTILE}", backend="inductor", user_stack=[evil_frame], time_us=10.0)],
        title=f"title {HOSTILE}",
        created=f"2026 {HOSTILE}",
    )


def layered_report(layers: int = 12, per_layer: int = 16, title: str = "synthetic transformer") -> Report:
    """A GPT-2-like forward: ``layers`` blocks of ``per_layer`` fused nodes, each with a module
    stack, chained through buffers (plus residual edges), for scale and collapse tests."""
    fused, kernels, gnodes = [], [], [GraphNode(name="x", op="placeholder", target="x", shape=[8, 64])]
    prev, resid = "x", "x"
    i = 0
    for layer in range(layers):
        for j in range(per_layer):
            sub = "attn" if j < per_layer // 2 else "mlp"
            kind = "extern" if j % 4 == 0 else ("reduction" if j % 4 == 1 else "pointwise")
            name, buf = f"op{i}", f"buf{i}"
            kname = f"extern_kernels.mm[{buf}]" if kind == "extern" else f"cpp_fused_{kind}_{i}"
            reads = [prev] + ([resid] if j == per_layer - 1 else [])
            fx = f"node{i}"
            frame = Frame(file="/home/u/model.py", line=100 + j, function="forward", code=f"h = layer{j}(h)")
            gnodes.append(
                GraphNode(
                    name=fx,
                    op="call_function",
                    target="aten.mm.default" if kind == "extern" else "aten.add.Tensor",
                    inputs=[gnodes[-1].name],
                    shape=[8, 64],
                    dtype="float32",
                    user_stack=[frame],
                    module_stack=[f"h.{layer}", f"h.{layer}.{sub}"],
                )
            )
            fused.append(
                FusedNode(
                    name=name,
                    kind=kind,
                    fx_nodes=[fx],
                    kernel=kname,
                    reads=reads,
                    writes=[buf],
                    members=[name],
                    module_stack=[f"h.{layer}", f"h.{layer}.{sub}"],
                )
            )
            kernels.append(
                Kernel(
                    name=kname,
                    language="extern" if kind == "extern" else "cpp",
                    source=f"// kernel {kname}\nvoid kernel(float* out) {{ out[0] = {i}; }}",
                    fused_nodes=[name],
                    fx_nodes=[fx],
                    user_stack=[[frame]],
                )
            )
            prev = buf
            i += 1
        resid = prev
    gnodes.append(GraphNode(name="output", op="output", target="output", inputs=[gnodes[-1].name]))
    c = Compile(
        id="0/0 forward",
        compile_id="0/0",
        graph_kind="inference",
        trigger=Trigger(kind="first_call", reason="first call", time_us=0.0),
        frame="forward",
        phases=[Phase("inductor_compile", 0.0, 1e6)],
        graphs={"post_grad": Graph(nodes=gnodes)},
        fused_nodes=fused,
        kernels=kernels,
        graph_inputs=["x"],
        graph_outputs=[prev],
    )
    return Report(torch_version="2.13.0", device="cpu", compiles=[c], title=title, created="2026-11-30")


def memory_report(layers: int = 12, per_layer: int = 16, saved: int = 0) -> Report:
    """:func:`layered_report` with ``Compile.memory`` worked out by ``analysis.memory`` from made-up buffers:
    fused node ``op{i}`` writes ``buf{i}`` of ``1 KiB x (1 + i % per_layer)`` read by the next node, and each
    layer's last buffer is a graph output (alive to the end). ``saved``: that many made-up tensors saved for
    a backward (``t{i}``, ``i + 1`` bytes each, all different: nothing folds), for the one-row-per-tensor table."""
    import dataclasses

    from inductor_lens.analysis.memory import memory
    from inductor_lens.report.finish import derive_compile
    from inductor_lens.report.model import SavedTensor

    report = layered_report(layers, per_layer, title="synthetic memory")
    c = derive_compile(report.compiles[0])
    n = len(c.fused_nodes)
    buffers = [
        {
            "name": f"buf{i}",
            "node": f"op{i}",
            "bytes": 1024 * (1 + i % per_layer),
            "users": [f"op{i + 1}"] if i + 1 < n else [],
            "is_output": i % per_layer == per_layer - 1,
            "internal": False,
        }
        for i in range(n)
    ]
    mem = memory(c, buffers, {"x": 2048})
    if saved:
        tensors = [SavedTensor(f"t{i}", [i + 1], "uint8", i + 1, "activation", f"node{i % n}") for i in range(saved)]
        mem = dataclasses.replace(
            mem,
            saved_for_backward=tensors,
            saved_bytes=sum(t.bytes for t in tensors),
            saved_activation_bytes=sum(t.bytes for t in tensors),
        )
    return dataclasses.replace(report, compiles=[dataclasses.replace(c, memory=mem)])
