"""Derived fields of a compile, filled from its own recorded data (torch-free).

The builder calls :func:`finish_compile` on every compile it makes and :func:`mark_same_graphs` on the
list; :func:`upgrade_v1` does the same to a version-1 report, so both get the same answers.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import defaultdict
from typing import Optional

from .built import mark_built
from .lines import gradient_buffers, gradients_of, lent_lines, line_ops, output_pairs, rollups_noisy

try:  # CPython's own SHA-1: hashlib would load OpenSSL's libcrypto (3.6 MB of the import's memory) for one digest
    from _sha1 import sha1 as _sha1
except ImportError:  # an interpreter built without it
    from hashlib import sha1 as _sha1
from .model import (
    DERIVED_VERSION,
    SCHEMA_VERSION,
    BranchCompile,
    Compile,
    CudaGraphs,
    FusedNode,
    FusionDecision,
    FusionEdge,
    GraphNode,
    GraphOutput,
    Kernel,
    KernelLaunch,
    LaunchArg,
    Memory,
    ModuleView,
    Refusal,
    Report,
)
from .module_paths import infer_modules
from .modules import module_view, node_calls
from .rules import (
    INCOMPLETE_NOTE,
    NOT_OPS,
    OLD_RECORDING,
    TRACE_UNRECORDED,
    TUNABLE_OPS,
    autotune_chosen,
    autotune_fusion_note,
    autotune_heading,
    autotune_note,
    autotune_timed_note,
    branches_text,
    call_in_place_text,
    choice_config,
    choice_what,
    compile_label,
    contents_text,
    control_flow,
    copy_name,
    cudagraph_skip_message,
    cudagraph_skip_text,
    custom_pass_note,
    epilogue_ops,
    extern_why,
    extra_launcher_args,
    frame_label,
    fused_label,
    fusion_edges,
    graph_note,
    in_place_text,
    input_copy_label,
    is_channels_last,
    is_glue,
    is_input_copy,
    is_mutating_op,
    kernel_kind,
    kernel_runs,
    kernel_source_note,
    launch_config_text,
    launch_grid_text,
    lead_line,
    line_frame,
    made_by_text,
    merge_text,
    no_kernel_reason,
    no_line_reason,
    no_line_text,
    node_ops,
    output_note,
    parse_size_hints,
    readable_reasons,
    recording_reason,
    refusal_pairs_text,
    region_call_label,
    region_call_text,
    region_kernels_note,
    region_note,
    returned_items,
    saved_name,
    short_op,
    size_guards,
    source_template_block,
    stage_paths,
    storage_name,
    trigger_kind,
    trigger_summary,
    unique_stacks,
    unrecorded_merge_text,
    user_lines,
    welford_holds,
    welford_part,
)


def _kernel(k: Kernel) -> Kernel:
    md = dict(k.metadata)
    if "size_hints" in md:
        hints = parse_size_hints(md["size_hints"])
        if hints is not None:
            md["size_hints"] = hints
    tune = md.get("autotune")
    if isinstance(tune, dict):
        choices = [c for c in tune.get("choices") or [] if isinstance(c, dict)]
        tune = dict(tune, emitted=k.name, chosen=autotune_chosen(k.name, k.language, k.source, md, choices))
        md["autotune"] = tune
    return dataclasses.replace(k, metadata=md)


def _fixed_grid(launch: KernelLaunch, source: str) -> KernelLaunch:
    """A template's launch whose grid the capture could not evaluate (reports made before it read the launcher's
    extra arguments, ``rules.extra_launcher_args``): its grid is ``_grid_0, _grid_1, _grid_2``, the numbers the
    call passes after the kernel's own arguments; those arguments get their parameter's name."""
    names = extra_launcher_args(source)
    if not names or launch.grid is None or all(isinstance(g, int) for g in launch.grid):
        return launch
    positional = [i for i, a in enumerate(launch.args) if not a.keyword]
    if len(positional) < len(names):
        return launch
    args, values = list(launch.args), {}
    for name, i in zip(names, positional[-len(names) :]):
        a = args[i]
        if a.shape is not None or (a.param and a.param != name):
            return launch
        args[i] = dataclasses.replace(a, param=name)
        v = a.value if isinstance(a.value, int) else a.hint if isinstance(a.hint, int) else None
        if v is not None:
            values[name] = v
    grid = [values.get(g, g) if isinstance(g, str) else g for g in launch.grid]
    return dataclasses.replace(launch, args=args, grid=grid)


def launch_facts(k: Kernel) -> Kernel:
    """``k`` with its launch's derived facts: a Triton template's tile sizes where its config held none (the capture
    reads them since the nineteenth session; before, from the ``config_args`` of its source's decorator:
    ``rules.source_template_block``), in ``metadata["launch"]["block"]`` and ``launch.block``; a template's grid
    the call passes as numbers (:func:`_fixed_grid`); and ``launch.grid_text``/``config_text``."""
    md = k.metadata
    runtime = md.get("launch") if isinstance(md.get("launch"), dict) else None
    tiles = source_template_block(k.source) if k.language == "triton" and md.get("heuristic") == "template" else {}
    if tiles and runtime is not None and not runtime.get("block"):
        md = dict(md, launch=dict(runtime, block=dict(tiles)))
    launch = k.launch
    if launch is None:
        return k if md is k.metadata else dataclasses.replace(k, metadata=md)
    if tiles and not launch.block:
        launch = dataclasses.replace(launch, block=dict(tiles))
    launch = _fixed_grid(launch, k.source)
    expr = runtime.get("grid") if runtime is not None and isinstance(runtime.get("grid"), list) else None
    grid = launch_grid_text(launch.grid, expr, launch.args)
    config = launch_config_text(grid, launch.num_warps, launch.num_stages, launch.block)
    return dataclasses.replace(k, metadata=md, launch=dataclasses.replace(launch, grid_text=grid, config_text=config))


def post_lent(c: Compile) -> dict[str, list[str]]:
    """``lines.lent_lines`` of ``c``'s post-grad graph: the nodes whose lines and modules are their readers'."""
    post = c.graphs.get("post_grad")
    nodes = post.nodes if post is not None else []
    return lent_lines((n.name, n.op, n.inputs, n.shape, bool(n.user_stack)) for n in nodes)


def _fused(n: FusedNode, kernels: dict[str, Kernel], fx: dict, lent: Optional[dict] = None) -> FusedNode:
    k = kernels.get(n.kernel) if n.kernel else None
    ops = [
        short_op(fx[name].wraps or fx[name].target) for name in n.fx_nodes if name in fx and fx[name].op not in NOT_OPS
    ]
    callee = str((k.metadata if k else {}).get("callee") or "")
    label = fused_label(n.kind, n.kernel, k.language if k else "", ops, callee, n.name)
    # a kernel's stack is all its fused nodes' (a loss kernel that also counts BatchNorm's num_batches_tracked would
    # give the loss's nodes BatchNorm's line): a node that shares its kernel gets its own ops' lines (the kernel's
    # where they have none); the only node of a kernel, the kernel's (the same lines in the same order everywhere).
    # A node that lends its line (a CSE'd full, a constant: lines.lent_lines) has its readers' (lines.line_ops)
    own = not k or len(k.fused_nodes) > 1 or not k.user_stack
    stacks = n.user_stack or (
        (unique_stacks(fx[name].user_stack for name in line_ops(n.fx_nodes, lent or {}) if name in fx) if own else [])
        or (k.user_stack if k else [])
    )
    return dataclasses.replace(n, label=label, is_glue=is_glue(n.kind, n.kernel, ops), user_stack=list(stacks))


def _fx_of(c: Compile) -> dict:
    """FX node name -> node, over every graph of ``c``; the post-grad graph's node where names repeat."""
    post = c.graphs.get("post_grad")
    fx = {n.name: n for g in c.graphs.values() for n in g.nodes}
    if post is not None:
        fx.update({n.name: n for n in post.nodes})
    return fx


def _op_lines(fx_nodes: list[str], fx: dict) -> list[tuple[str, Optional[tuple]]]:
    """Each FX op of ``fx_nodes`` in graph order as ``(short op, (file, line) of the line that ran it)``, the line
    ``None`` where it has none; graph inputs and constants (``NOT_OPS``) left out."""
    out = []
    for name in fx_nodes:
        node = fx.get(name)
        if node is None or node.op in NOT_OPS:
            continue
        ran = user_lines([node.user_stack]) if node.user_stack else []
        out.append((node.short_op or short_op(node.wraps or node.target), (ran[0].file, ran[0].line) if ran else None))
    return out


def _in_graph_order(lines: list, fx_nodes: list[str], fx: dict) -> list:
    """A kernel's user lines in the order of its FX ops in the post-grad graph (``fx_nodes``), each where its first
    op is; a line no op of the kernel names keeps its place after them. (The capture records a kernel's stacks in
    the order Inductor met them: the Kernels table named a kernel's last line first.) Then the line that defines it
    first (``rules.lead_line``: its matmul's, its reduction's, else the line of most of its ops): the line the views
    name it by."""
    ops = _op_lines(fx_nodes, fx)
    first: dict = {}
    for i, (_, key) in enumerate(ops):
        if key is not None:
            first.setdefault(key, i)
    return lead_line(sorted(lines, key=lambda f: first.get((f.file, f.line), len(ops))), ops)


#: Inductor's random seeds for the graph's random ops (its RNG pass, ``fallback_random`` off): one op, no user line.
SEEDS_OP = "prims.inductor_seeds.default"


def _seeded_lines(c: Compile, fx_nodes: list[str], fx: dict) -> Optional[list]:
    """The user lines of the random ops that read a fused node's seeds (Inductor's ``inductor_lookup_seed`` of them,
    each on its random op's line), in graph order; ``None`` for a node that makes no seeds."""
    seeds = {name for name in fx_nodes if name in fx and fx[name].target == SEEDS_OP}
    if not seeds:
        return None
    post = c.graphs.get("post_grad")
    readers = [n for n in (post.nodes if post is not None else fx.values()) if seeds & set(n.inputs)]
    return user_lines(n.user_stack for n in readers)


def _branches(c: Compile, n: FusedNode, fx: dict) -> list[str]:
    """The subgraphs a fused node's control flow (torch.cond) calls, by the names of their compiles: Inductor names
    a subgraph of a subgraph after both (``true_graph_0_true_graph_0``). Every get_attr of the node, by the
    attribute it reads (the second call of a repeated region reads ``repeated_subgraph0`` through its own node
    ``repeated_subgraph0_1``): for a node with no control flow the caller ignores them."""
    return list(
        dict.fromkeys(
            f"{c.subgraph}_{attr}" if c.subgraph else attr
            for name in n.fx_nodes
            if name in fx and fx[name].op == "get_attr"
            for attr in [fx[name].target or name]
        )
    )


def link_branches(compiles: list[Compile]) -> list[Compile]:
    """``compiles`` with each call of control flow's ``branch_compiles``: the ids of the compiles of its subgraphs
    (those of its compile id whose ``subgraph`` is a branch it names), what its panel links to. A compile with no
    such call is returned as it is. A call of a repeated region (``invoke_subgraph``) also says how many kernel
    launches it runs there (``FusedNode.no_kernel_reason``, ``label``), and the region's compile how often and by
    which modules it is called (``Compile.graph_note``, ``rules.region_note``)."""
    by_name = {(c.compile_id, c.subgraph): c.id for c in compiles if c.subgraph}
    by_id = {c.id: c for c in compiles}
    calls: dict[str, list[tuple[str, FusedNode]]] = {}  # a repeated region's compile id -> (caller id, call node)
    out = []
    for c in compiles:
        if not by_name or not any(n.no_kernel_reason and not n.kernel for n in c.fused_nodes):
            out.append(c)
            continue
        fx = _fx_of(c)
        fused = []
        for n in c.fused_nodes:
            flow = "" if n.kernel else control_flow(n.ops)
            ids = _links(c, n, fx, by_name) if flow else []
            if flow == "invoke_subgraph" and len(ids) == 1:
                region = by_id[ids[0].compile]
                calls.setdefault(region.id, []).append((c.id, n))
                launches = region_launches(region)
                n = dataclasses.replace(
                    n,
                    no_kernel_reason=region_call_text(ids[0].name, launches, region.id),
                    label=region_call_label(ids[0].name, launches),
                )
            fused.append(dataclasses.replace(n, branch_compiles=ids) if ids != n.branch_compiles else n)
        mine = [
            (b.compile, b.name) for n in fused if control_flow(n.ops) == "invoke_subgraph" for b in n.branch_compiles
        ]
        note = region_kernels_note(
            [(name, rid, mine.count((rid, name)), region_launches(by_id[rid])) for rid, name in dict.fromkeys(mine)]
        )
        out.append(dataclasses.replace(c, fused_nodes=fused, kernels_note=note))
    if calls:
        out = [
            dataclasses.replace(
                c,
                graph_note=region_note(
                    c.subgraph,
                    sorted({caller for caller, _ in calls[c.id]}),
                    [".".join(n.module_stack[-1:]) for _, n in calls[c.id]],
                    region_launches(c),
                    named_in(c, [".".join(n.module_stack[-1:]) for _, n in calls[c.id]]),
                ),
            )
            if c.id in calls and c.complete
            else c
            for c in out
        ]
    return out


def region_calls(compiles: list[Compile]) -> dict[tuple[str, str], str]:
    """Each call of a repeated region (``invoke_subgraph``, ``torch.compiler.nested_compile_region``) by ``(its
    compile's id, its fused node's name)``: the id of the region's compile, as :func:`link_branches` links them (the
    capture's memory pass counts the region's own buffers at each call: ``capturing/build._with_memory``)."""
    by_name = {(c.compile_id, c.subgraph): c.id for c in compiles if c.subgraph}
    out: dict[tuple[str, str], str] = {}
    if not by_name:
        return out
    for c in compiles:
        fx = None
        for n in c.fused_nodes:
            if n.kernel or control_flow(n.ops) != "invoke_subgraph":
                continue
            fx = _fx_of(c) if fx is None else fx
            ids = _links(c, n, fx, by_name)
            if len(ids) == 1:
                out[(c.id, n.name)] = ids[0].compile
    return out


def _links(c: Compile, n: FusedNode, fx: dict, by_name: dict[tuple[str, str], str]) -> list[BranchCompile]:
    """The compiles of the subgraphs call ``n`` of ``c`` names (``by_name``: ``(compile id, subgraph) -> id``)."""
    return [BranchCompile(b, by_name[key]) for b in _branches(c, n, fx) if (key := (c.compile_id, b)) in by_name]


def named_in(region: Compile, modules: list[str]) -> str:
    """The module of ``modules`` (a repeated region's calls') whose call the region's ops are named after: the one
    its fused nodes' module paths are in (the forward's first call, also in a backward, which calls it last layer
    first); ``""`` where none is."""
    paths = {m for n in region.fused_nodes for m in n.module_stack}
    return next((m for m in dict.fromkeys(modules) if m and m in paths), "")


def region_launches(c: Compile) -> int:
    """The kernel launches one run of a compile's graph makes: one per call site of each kernel
    (``Kernel.call_sites``), one for a kernel whose call sites are not recorded."""
    return sum(max(1, len(k.call_sites)) for k in c.kernels)


def _kernel_mates(c: Compile, n: FusedNode) -> list[str]:
    """The other fused nodes of ``n``'s C++ kernel: on a CPU, Inductor's C++ code generation writes consecutive fused
    nodes into one kernel (``CppScheduling``'s kernel group, until ``Scheduler.flush``), after the scheduler's
    fusion; ``[]`` for other kernels (a Triton kernel holds one fused node, a foreach kernel its own group). Only
    those of its own call: a kernel whose source is reused (each of 12 layers calls it) holds the fused nodes of every
    call, which were not written together (its call sites, ``Kernel.call_sites``, else runs of consecutive nodes)."""
    k = next((k for k in c.kernels if k.name == n.kernel), None) if n.kernel else None
    if k is None or k.language != "cpp":
        return []
    sites = k.call_sites or kernel_runs(k.name, [f for f in c.fused_nodes if not f.is_glue])
    site = next((s for s in sites if n.name in s), [])
    return [f for f in site if f != n.name]


def kept_refusals(decisions: list[FusionDecision], kernels: list[Kernel]) -> list[FusionDecision]:
    """``decisions`` less those a later round of fusion undid: both ends in one fused node, or in one call of one
    kernel (``Kernel.call_sites``; two launches of one kernel, a Triton kernel reused by every layer, stay refused)."""
    site_of: dict[str, tuple[str, int]] = {}
    for k in kernels:
        for i, site in enumerate(k.call_sites):
            for f in site:
                site_of.setdefault(f, (k.name, i))
    return [
        d
        for d in decisions
        if not (
            d.fused1 is not None
            and (d.fused1 == d.fused2 or (d.fused1 in site_of and site_of.get(d.fused1) == site_of.get(d.fused2)))
        )
    ]


def refusal_rows(fused: list[FusedNode], decisions: list[FusionDecision]) -> dict[str, list[Refusal]]:
    """Each fused node's "Why not fused" rows (``FusedNode.refusals``) from ``decisions`` (:func:`kept_refusals`):
    one row per neighbour, its member pairs and distinct reasons in the decisions' order. A row names the
    neighbour by its box's label (or kernel); where two rows of one node, or a row and the node itself, would read
    alike (fused nodes of one C++ kernel call, two launches of one kernel), its node's name tells it apart (``tell``)."""
    by_name = {n.name: n for n in fused}
    groups: dict[str, dict[str, dict]] = {}
    for d in decisions:
        for mine in dict.fromkeys((d.fused1, d.fused2)):  # each end once
            if mine is None:
                continue
            other = d.fused2 if mine == d.fused1 else d.fused1
            key = other or f"{d.node1} / {d.node2}"
            g = groups.setdefault(mine, {}).setdefault(key, {"other": other, "reasons": [], "pairs": []})
            if d.reason not in g["reasons"]:
                g["reasons"].append(d.reason)
            g["pairs"].append(f"{d.node1} + {d.node2}")
    shown = lambda name: by_name[name].label or by_name[name].kernel or name  # noqa: E731
    out: dict[str, list[Refusal]] = {}
    for mine, rows in groups.items():
        texts = {key: shown(g["other"]) if g["other"] in by_name else key for key, g in rows.items()}
        count = defaultdict(int)
        for text in texts.values():
            count[text] += 1
        own = shown(mine) if mine in by_name else mine
        out[mine] = [
            Refusal(
                other=g["other"] if g["other"] in by_name else None,
                name=key,
                text=texts[key],
                tell=key if g["other"] in by_name and (count[texts[key]] > 1 or texts[key] == own) else "",
                reasons=g["reasons"],
                pairs=g["pairs"],
                pairs_text=refusal_pairs_text(g["pairs"]),
            )
            for key, g in rows.items()
        ]
    return out


def derive_compile(c: Compile, fx: Optional[dict] = None, view: bool = True) -> Compile:
    """``c`` with the fields the views show and no recorded fact gives as it is, decided here once:
    ``FusedNode.user_lines``, ``ops``, ``no_line_reason``, ``no_kernel_reason`` and ``in_place``, ``Kernel.user_lines`` and
    ``call_sites`` (each in execution order; where the capture recorded none, runs of consecutive fused nodes), the
    autotune ``epilogue`` and each choice's ``config``, ``Compile.edges`` (``rules.fusion_edges``),
    ``Compile.graph_note`` (``rules.graph_note``), ``Compile.contents`` (``rules.contents_text``) and ``box_count``,
    ``Compile.module_view`` and ``FusedNode.group_path``
    (``report/modules.py``). Idempotent; run by :func:`finish_compile` and on loading a report written before
    these fields. ``view=False``: without the last two (:func:`with_module_view`), for a compile whose module paths
    are inferred after."""
    fx = _fx_of(c) if fx is None else fx
    fused, copies, inputs = [], set(), set(c.graph_inputs)
    made_into: dict[str, list[str]] = {}  # a post-grad op -> the scheduler nodes of it alone that its lowering made
    for n in c.fused_nodes:
        for m, ops in zip(n.members, n.member_ops):
            if len(ops) == 1:
                made_into.setdefault(ops[0], []).append(m)
    for n in c.fused_nodes:
        copy = is_input_copy(n.kernel, (fx[name].op if name in fx else "" for name in n.fx_nodes))
        # an input copy runs no op of the user's: the stacks recorded for it are its kernel's, whose other nodes (a
        # dropout's mask that Inductor put in the same kernel as the weights' layout copies) ran those lines. Another
        # node's lines in the order of its ops, as its kernel's (Inductor's origins can name first the line of an op
        # the node does not hold: the custom op that reads its result, whose name its kernel's carries)
        lines = [] if copy else _in_graph_order(user_lines(n.user_stack), n.fx_nodes, fx)
        if copy:
            copies.add(n.name)
        ops = node_ops(
            fx[name].wraps or fx[name].target for name in n.fx_nodes if name in fx and fx[name].op not in NOT_OPS
        )
        # a call of control flow's subgraphs (torch.cond) by the names of their compiles: Inductor names a subgraph of
        # a subgraph after both (true_graph_0_true_graph_0)
        branches = _branches(c, n, fx)
        flow = "" if n.kernel else control_flow(ops)
        extra = (
            {"is_glue": False, "label": f"{' · '.join(dict.fromkeys(ops))} → {branches_text(flow, branches)}"}
            if flow and branches
            else {}
        )
        fused.append(
            dataclasses.replace(
                n,
                user_lines=lines,
                ops=ops,
                no_line_reason=no_line_reason(
                    bool(lines),
                    n.fx_nodes,
                    n.no_line_reason,
                    copy,
                    _seeded_lines(c, n.fx_nodes, fx),
                    c.trigger is not None and c.trigger.kind == "compiled_autograd",
                ),
                no_kernel_reason=no_kernel_reason(n.kernel, ops, branches),
                box_kind=flow or n.kind,
                op_count=sum(1 for name in n.fx_nodes if name not in fx or fx[name].op != "get_attr"),
                in_place=in_place_text(_in_place_targets(n.mutates, fx, inputs)),
                merge_text=""
                if n.is_glue
                else unrecorded_merge_text(n.kind, _op_names([n.fx_nodes], fx)[0], c.unrecorded["merge"])
                if c.unrecorded.get("merge")
                else merge_text(
                    n.kind,
                    n.members,
                    _op_names(n.member_ops, fx),
                    *_op_names([n.fx_nodes], fx),
                    made_into.get(n.fx_nodes[0], []) if len(n.fx_nodes) == 1 else [],
                    _kernel_mates(c, n),
                    *_op_names([n.read_ops], fx),
                ),
                **extra,
            )
        )
    boxes = [n for n in fused if not n.is_glue]
    order = {n.name: i for i, n in enumerate(fused)}
    by_name = {n.name: n for n in fused}
    lines_of: dict[str, list] = {}
    kinds_of: dict[str, list[str]] = {}
    for n in boxes:
        if n.kernel:
            lines_of.setdefault(n.kernel, []).append(n.user_lines)
            kinds_of.setdefault(n.kernel, []).append(n.kind)
    holds = dict(_buffer_holds(fused, fx, c.output_nodes), **gradient_buffers(c, fx))  # a gradient as its oval names it
    # a frozen graph's constant by the parameters it comes from (a C++ GEMM template's packed weight has no get_attr)
    holds.update((name, shown) for name, shown in c.constant_names.items() if name not in holds)
    kernels = []
    low, fus = c.lowering_stack, c.fusion_stack  # the compile's stage paths (rules.stage_paths)
    launched = [launch_facts(k) for k in c.kernels]
    # a Welford reduction's result no op of the graph names (a batch norm's m2), in the kernel that writes it and in
    # those that read it
    for k in launched:
        holds.update((b, shown) for b, shown in _welford_holds(k, by_name, fx, holds).items() if b not in holds)
    for k in launched:
        if k.launch is not None and k.launch.args:
            args = [dataclasses.replace(a, holds=holds.get(a.name, "")) for a in k.launch.args]
            k = dataclasses.replace(k, launch=dataclasses.replace(k.launch, args=args))
        md = k.metadata
        tune = md.get("autotune")
        if isinstance(tune, dict):
            choices = [
                dict(ch, config=choice_config(str(ch.get("description") or "")), what=choice_what(ch.get("name")))
                if isinstance(ch, dict)
                else ch
                for ch in tune.get("choices") or []
            ]
            # its ops: not the frozen parameters (get_attr) Inductor's origins of a template can hold
            ops = [
                fx[name].short_op or short_op(fx[name].target)
                for name in k.fx_nodes
                if name in fx and fx[name].op not in NOT_OPS
            ]
            epilogue = epilogue_ops(ops)
            op, timed = str(tune.get("op") or ""), tune.get("timed")
            notes = {
                "heading": autotune_heading(op, len(choices), timed),
                "timed_note": autotune_timed_note(op, timed),
                "fusion_note": autotune_fusion_note(op, tune.get("chosen"), tune.get("fastest"), epilogue, choices),
            }
            md = dict(md, autotune=dict(tune, choices=choices, epilogue=epilogue, **notes))
        lines = user_lines(k.user_stack) or user_lines([f] for ls in lines_of.get(k.name, []) for f in ls)
        lines = _in_graph_order(lines, k.fx_nodes, fx)
        sites = k.call_sites or kernel_runs(k.name, boxes) or ([list(k.fused_nodes)] if k.fused_nodes else [])
        sites = [sorted(site, key=lambda f: order.get(f, len(order))) for site in sites]  # execution order
        kind = kernel_kind(kinds_of.get(k.name, []))
        why = ""
        if k.language == "extern":  # the dtypes of its ops and of what they read: complex tensors have no codegen
            ops = [fx[f] for f in k.fx_nodes if f in fx]
            why = extern_why(k.name, [n.dtype for n in ops] + [fx[i].dtype for n in ops for i in n.inputs if i in fx])
        # what each call of several fused nodes writes in place, all of them together (the box is the call)
        writes = [
            call_in_place_text(
                t for f in site if f in by_name for t in _in_place_targets(by_name[f].mutates, fx, inputs)
            )
            if len(site) > 1
            else ""
            for site in sites
        ]
        kernels.append(
            dataclasses.replace(
                k,
                metadata=md,
                user_lines=lines,
                call_sites=sites,
                kind=kind,
                extern_why=why,
                in_place=writes if any(writes) else [],
                source_note=kernel_source_note(k.language, k.source),
                **_no_line(lines, k, by_name),
                **dict(zip(("stage_shared", "stage_note"), stage_paths([low, fus, k.compiler_stack]))),
            )
        )
    fused = _copy_labels(fused, copies, kernels, fx)
    decisions = kept_refusals(c.fusion_decisions, kernels)
    rows = refusal_rows(fused, decisions)
    fused = [dataclasses.replace(n, refusals=rows.get(n.name, [])) for n in fused]
    kind = trigger_kind(c.trigger.kind, c.frame)
    trigger = dataclasses.replace(c.trigger, kind=kind, summary=trigger_summary(kind))
    c = dataclasses.replace(c, output_names=output_names(c, fx))
    c = dataclasses.replace(c, outputs=graph_outputs(c, fx))
    drawn = [(str(i), o.buffer) for i, o in enumerate(c.outputs) if o.drawn]
    edges = [FusionEdge(*e) for e in fusion_edges(fused, c.graph_inputs, drawn)]
    note = compile_note(c, fx)
    # a call of control flow's subgraphs by its op (``4 invoke_subgraph``): no extern call, no kernel of its own
    kinds = [n.box_kind for n in fused if not n.is_glue]
    c = dataclasses.replace(
        c,
        fused_nodes=fused,
        kernels=kernels,
        fusion_decisions=decisions,
        trigger=trigger,
        edges=edges,
        graph_note=note,
        contents=contents_text(kinds, len(kernels)),
        box_count=len(kinds),
        **dict(zip(("stage_shared", "stage_note"), stage_paths([low, fus, []]))),
        size_guards=size_guards(c.guards),
        cudagraphs=_skip_said(_recordings_said(c.cudagraphs), c),
    )
    return with_module_view(c) if view else c


def _no_line(lines: list, k: Kernel, by_name: dict[str, FusedNode]) -> dict[str, str]:
    """``Kernel.no_line_reason`` and ``no_line_text`` of ``k`` (its ``user_lines`` ``lines``): its first fused node's
    reason where none of its nodes has a line of the user's."""
    if lines:
        return {"no_line_reason": "", "no_line_text": ""}
    reason = next((by_name[f].no_line_reason for f in k.fused_nodes if f in by_name and by_name[f].no_line_reason), "")
    return {"no_line_reason": reason, "no_line_text": no_line_text(reason)}


def _recordings_said(graphs: Optional[CudaGraphs]) -> Optional[CudaGraphs]:
    """``graphs`` with each recording an older lens called "first run of the graph" or "re-recorded (recording N of
    this graph)", from its place alone, said as :func:`rules.recording_reason` says it."""
    if graphs is None or not any(OLD_RECORDING.match(r.reason or "") for r in graphs.recordings):
        return graphs
    said = []
    for r in graphs.recordings:
        m = OLD_RECORDING.match(r.reason or "")
        number = re.search(r"recording (\d+)", r.reason) if m else None
        said.append(
            dataclasses.replace(r, reason=recording_reason(int(number.group(1)) - 1 if number else 0)) if m else r
        )
    return dataclasses.replace(graphs, recordings=said)


def mutated_inputs(c: Compile) -> list[tuple[str, str, str, Optional[int]]]:
    """The graph inputs ``c``'s post-grad graph writes in place, as ``rules.cudagraph_skip_text`` takes them: the
    name shown, and the code, file and line of the user's line that writes each. Torch's evidence, read as its
    ``cudagraph_utils.get_mutating_use_stack_trace_from_node`` reads it: a mutating op (``copy_`` back into the
    input, or the in-place op that replaced it) whose first argument is a placeholder. Parameters and buffers are
    left out where other inputs are written, as torch's count leaves out static inputs under CUDA-graph trees."""
    post = c.graphs.get("post_grad")
    if post is None:
        return []
    fx = {n.name: n for n in post.nodes}
    found: dict[str, tuple] = {}
    for n in post.nodes:
        if n.op != "call_function" or not n.inputs or not is_mutating_op(n.target):
            continue
        target = fx.get(n.inputs[0])
        if target is None or target.op != "placeholder" or target.name in found:
            continue
        line = line_frame(n.user_stack) if n.user_stack else None
        found[target.name] = (
            target.role,
            (
                target.display_name or target.name,
                (line.code or "") if line is not None else "",
                (line.file or "") if line is not None else "",
                line.line if line is not None else None,
            ),
        )
    mine = [m for role, m in found.values() if role not in ("parameter", "buffer")]
    return mine or [m for _, m in found.values()]


def _skip_said(graphs: Optional[CudaGraphs], c: Compile) -> Optional[CudaGraphs]:
    """``graphs`` with ``skip_note`` (``rules.cudagraph_skip_text``): a skip for mutated inputs names them."""
    if graphs is None or not graphs.skip_reason:
        return graphs
    note = cudagraph_skip_text(graphs.skip_reason, mutated_inputs(c))
    return graphs if note == graphs.skip_note else dataclasses.replace(graphs, skip_note=note)


def compile_note(c: Compile, fx: Optional[dict] = None) -> str:
    """``Compile.graph_note`` of ``c`` (``rules.graph_note``): its outputs by the names their boxes show, and, once
    its ``memory`` is worked out, whether the tensors it saves are known (the capture works out memory after the
    compiles: ``capturing/build.py`` asks again then)."""
    fx = _fx_of(c) if fx is None else fx
    inputs = [n for n in fx.values() if n.op == "placeholder"]
    # each output by the name its box shows: a graph input's (x, fc2.weight), else what computes it (lm_head mm)
    shown = {n: fx[n].display_name for n in c.saved_outputs + c.returned_outputs if n in fx and fx[n].display_name}
    shown.update(c.output_names)
    # as the ovals name them (Compile.outputs), a view of an input as that: the first of each buffer in its role
    for o in reversed(c.outputs):
        if o.buffer and o.role:
            shown[(o.role, o.buffer)] = f"view of {o.input}" if o.view else o.name
    note = graph_note(
        c.graph_kind,
        *(
            [shown.get((role, b)) or shown.get(b, b) for b in bs]
            for role, bs in (("returned", c.returned_outputs), ("saved", c.saved_outputs))
        ),
        subgraph=c.subgraph,
        backward_compiled=c.backward_compiled,
        saved_known=c.memory is None or c.memory.saved_bytes is not None,
        # a graph of plain tensors (a loss function): no parameter to say requires grad; roles not recorded (an
        # import): as ever
        parameters=any(n.role == "parameter" for n in inputs) or not any(n.role for n in inputs),
        # the parameters it writes in place (FusedNode.mutates of a parameter placeholder: an optimizer's step)
        writes_parameters=len(
            {
                b
                for n in c.fused_nodes
                for b in n.mutates
                if b in fx and fx[b].op == "placeholder" and fx[b].role == "parameter"
            }
        ),
    )
    return note if c.complete else f"{INCOMPLETE_NOTE} {note}".strip()


def output_names(c: Compile, fx: dict) -> dict[str, str]:
    """``Compile.output_names``: each graph output buffer by what its post-grad graph returns in its place
    (``lines.output_pairs``): the op that computes it with its module (``rules.made_by_text``: ``lm_head mm``), a
    graph input by its name; only where that differs from the buffer's name. A backward's output is named by the
    forward input it is the gradient of (``lines.gradients_of``), where its forward is known. ``{}`` where the two,
    each name taken once, do not match one to one."""
    pairs, out = output_pairs(c, fx)
    grads = gradients_of(c, out)
    names: dict[str, str] = {}
    for buf, name in pairs:
        if name not in fx:
            continue
        node = fx[name]
        if name in grads:
            shown = grads[name]
        # a buffer of its own for a graph input is Inductor's copy of it (a convolution's weight, channels-last)
        elif node.op == "placeholder" and buf != name:
            shown = copy_name(node)
        else:
            shown = made_by_text(name, fx)
        if shown and shown != buf:
            names[buf] = shown
    return names


def graph_outputs(c: Compile, fx: dict) -> list[GraphOutput]:
    """``Compile.outputs``, position by position, with what each oval says (``name``, ``note``, ``input``,
    ``drawn``): a view of a graph input by that input (``view of x (no copy)``), named by the user's variable that
    holds it where dynamo's graph says (:func:`user_variables`: ``y``) else by its view op (``permute``); a backward's
    gradient (``fc1.weight.grad``); else by the user's variable, else as ``output_names`` (``lm_head mm``, ``x``).
    A graph input only saved for the backward, as it is or as a view, is not drawn (every linear layer saves its
    weight's transpose), nor one a training forward returns as it is and not to the user's code, nor a constant. The recorded fields come from :func:`_recorded_outputs` in a report made
    before them."""
    outs = list(c.outputs) or _recorded_outputs(c, fx)
    inputs = set(c.graph_inputs)
    grads = gradients_of(c, output_pairs(c, fx)[1])
    variables = user_variables(c, outs)
    result = []
    for i, o in enumerate(outs):
        node = fx.get(o.node)
        placeholder = fx.get(o.buffer) if o.buffer in inputs else None
        given = (placeholder.display_name or placeholder.name) if placeholder is not None else o.buffer
        given = given if o.buffer in inputs else ""
        if not o.buffer:
            name = ""
        elif o.node in grads:
            name = grads[o.node]
        elif i in variables:
            name = variables[i]
        elif o.view:
            name = (node.original_op or node.short_op) if node is not None and node.op == "call_function" else o.node
        elif o.buffer in inputs:
            name = given
        elif node is not None and node.op == "placeholder":  # a buffer of its own for an input: Inductor's copy
            name = copy_name(node)
        elif node is not None:
            name = made_by_text(o.node, fx)
        else:
            name = c.output_names.get(o.buffer, "")
        # an input: a view of it unless saved; as it is where the user's code gets it (AOT autograd returns it from a
        # training forward only to save it: dynamo hands an input the user returns back itself)
        drawn = bool(o.buffer) and (
            o.buffer not in inputs
            or (o.view and o.role != "saved")
            or o.role == "returned"
            or c.graph_kind == "inference"
        )
        note = output_note(o.role, given if o.view else "") if o.buffer else ""
        result.append(dataclasses.replace(o, input=given, name=name or o.buffer, note=note, drawn=drawn))
    return result


def user_variables(c: Compile, outs: list[GraphOutput]) -> dict[int, str]:
    """Each position of ``outs`` (``Compile.outputs``) that holds a value the user's code stored in a local variable,
    by that variable (``GraphNode.variable`` of dynamo's graph: ``y`` for ``y = x @ w``). Inductor's graph returns
    the values dynamo's returns in the same order: all its outputs in an inference graph (``compile_fx``: "For
    inference len(orig_model_outputs) == len(model_outputs)"), its ``returned`` ones in a training forward (the
    rest are saved for the backward). ``{}`` for other graphs, without dynamo's graph, and where the two are not as
    many (AOT autograd returned a mutated input first)."""
    dynamo = c.graphs.get("dynamo")
    if dynamo is None or c.graph_kind not in ("inference", "forward") or c.subgraph:
        return {}
    ends = [n for n in dynamo.nodes if n.op == "output"]
    returns = ends[0].returns if ends else []
    mine = (
        list(range(len(outs)))
        if c.graph_kind == "inference"
        else [i for i, o in enumerate(outs) if o.role == "returned"]
    )
    if not returns or len(mine) != len(returns):
        return {}
    named = {n.name: n.variable for n in dynamo.nodes if n.variable}
    return {i: named[r] for i, r in zip(mine, returns) if r in named}


def _recorded_outputs(c: Compile, fx: dict) -> list[GraphOutput]:
    """What the capture records of each graph output (``buffer``, ``node``, ``view``, ``role``), from a report made
    before it: the output code's ``return`` where its items are ``graph_outputs`` (a view of an input is
    ``reinterpret_tensor(arg0_1, ...)``; ``None`` and sizes no buffer), each against the output node's ``returns``
    where as many, else ``graph_outputs`` with ``output_nodes``; a training forward's ``role`` by
    ``returned_outputs`` / ``saved_outputs`` (a buffer in both: returned first, saved after); none where
    ``graph_outputs`` is empty (not recorded)."""
    if not c.graph_outputs:  # not recorded (a report of an early version): none known
        return []
    items = returned_items(str(c.output_code or ""))
    known = set(c.graph_outputs)
    if [storage_name(t) for t in items if storage_name(t) in known] == c.graph_outputs:
        buffers = [storage_name(t) if storage_name(t) in known else "" for t in items]
        views = [t.startswith("reinterpret_tensor(") for t in items]
    else:
        buffers, views = list(c.graph_outputs), [False] * len(c.graph_outputs)
    end = fx.get("output")
    returns = end.returns if end is not None and end.op == "output" else []
    nodes = returns if len(returns) == len(buffers) else [c.output_nodes.get(b, "") for b in buffers]
    inputs, returned, saved = set(c.graph_inputs), set(c.returned_outputs), set(c.saved_outputs)
    out, seen = [], set()
    for b, node, view in zip(buffers, nodes, views):
        role = ""
        if c.graph_kind == "forward" and b:
            role = "returned" if b in returned and (b not in saved or b not in seen) else "saved" if b in saved else ""
        seen.add(b)
        out.append(GraphOutput(buffer=b, node=node or "", view=view and b in inputs, role=role))
    return out


def _op_names(groups: list[list[str]], fx: dict) -> list[list[str]]:
    """Each group of post-grad node names as the short names of its ops (``GraphNode.short_op``), op for op, graph
    inputs, constants and tuple unpacking left out (``rules.NOT_OPS``), for ``rules.merge_text``."""
    return [
        [fx[f].short_op for f in g if f in fx and fx[f].op not in NOT_OPS and fx[f].short_op not in ("", "getitem")]
        for g in groups
    ]


def _in_place_targets(mutates: list[str], fx: dict, inputs: set) -> list:
    """What ``rules.in_place_text`` needs of each buffer a fused node writes in place: for a graph input (a
    placeholder) or a tensor the graph holds (a ``get_attr``: AOTInductor's parameters and buffers) its name shown
    and role, from its FX node; else a buffer made in the graph."""
    out = []
    for b in mutates:
        node = fx.get(b)
        if b in inputs or (node is not None and node.op == "placeholder"):
            out.append(
                (b, node.display_name if node is not None else "", node.role if node is not None else "", "input")
            )
        elif node is not None and node.op == "get_attr":
            out.append((b, node.display_name or b, node.role, "constant"))
        else:
            out.append((b, "", "", "made"))
    return out


def with_module_view(c: Compile) -> Compile:
    """``c`` with ``Compile.module_view`` and each fused node's ``group_path`` (``report/modules.py``), from its fused
    nodes' module paths."""
    runs = {f: site[0] for k in c.kernels for site in k.call_sites if len(site) > 1 for f in site}
    post = c.graphs.get("post_grad")
    calls = node_calls(c.fused_nodes, {n.name: n for n in post.nodes}) if post is not None else {}
    view, paths = module_view(c.fused_nodes, c.edges, runs, calls)
    fused = [dataclasses.replace(n, group_path=paths.get(n.name, [])) for n in c.fused_nodes]
    return dataclasses.replace(c, fused_nodes=fused, module_view=view, memory=_memory_labels(c.memory, view))


def _memory_labels(memory: Optional[Memory], view: Optional[ModuleView]) -> Optional[Memory]:
    """``memory`` with the repeats its rows and axis name (``MemoryRegion.repeat``, the folded roll-ups' ``module``:
    worked out at capture from the module view of then) named as ``view`` names them now: a report made before
    derived 39 read ``experts.2-1`` for two experts a backward ran last first, where its view now reads
    ``experts.1-2``."""
    if memory is None or view is None:
        return memory
    now = {m: r.label for r in view.repeats for m in r.modules}
    renamed = {g.repeat: now[g.module] for g in memory.regions if g.repeat and now.get(g.module, g.repeat) != g.repeat}
    if not renamed:
        return memory

    def name(module: str) -> str:
        head = next((old for old in renamed if module == old or module.startswith(old + ".")), None)
        return renamed[head] + module[len(head) :] if head is not None else module

    def rows(items: list) -> list:
        return [dataclasses.replace(x, module=name(x.module)) if name(x.module) != x.module else x for x in items]

    return dataclasses.replace(
        memory,
        regions=[dataclasses.replace(g, repeat=renamed.get(g.repeat, g.repeat)) for g in memory.regions],
        peak_by_module=rows(memory.peak_by_module),
        saved_by_module_folded=rows(memory.saved_by_module_folded),
        saved_groups=rows(memory.saved_groups),
    )


def _copy_labels(fused: list[FusedNode], copies: set[str], kernels: list[Kernel], fx: dict) -> list[FusedNode]:
    """``fused`` with each input copy (``copies``, ``rules.is_input_copy``) labelled by what it is and the inputs
    it copies: every copy of one kernel call gets the call's whole list (they are one box, its first node a copy;
    Inductor may fuse other small ops into that kernel, as a BatchNorm's ``num_batches_tracked += 1``, which keep
    the kernel's name). Channels-last where the kernel's launch shows each copy's buffer so laid out (the launch
    is its first call's)."""
    by_name = {n.name: n for n in fused}
    labels: dict[str, str] = {}
    for k in kernels:
        for i, site in enumerate(k.call_sites):
            nodes = [by_name[f] for f in site if f in by_name and f in copies]
            if not nodes:
                continue
            names = [fx[f].display_name or f for n in nodes for f in n.fx_nodes if f in fx]
            args = {a.name: a for a in k.launch.args} if k.launch is not None and i == 0 else {}
            outs = [args.get(b) for n in nodes for b in n.writes]
            last = bool(outs) and all(a is not None and is_channels_last(a.shape, a.stride) for a in outs)
            labels.update((n.name, input_copy_label(names, last)) for n in nodes)
    return [dataclasses.replace(n, label=labels[n.name]) if n.name in labels else n for n in fused]


def pair_backward(compiles: list[Compile]) -> dict[str, Compile]:
    """For each forward compile's ``id``, the backward compile of the same compile id (the same how-manieth one
    when a compile id has several graphs)."""
    backs: dict[str, list[Compile]] = defaultdict(list)
    for c in compiles:
        if c.graph_kind == "backward":
            backs[c.compile_id].append(c)
    seen: dict[str, int] = defaultdict(int)
    out = {}
    for c in compiles:
        if c.graph_kind != "forward":
            continue
        i = seen[c.compile_id]
        seen[c.compile_id] += 1
        if i < len(backs[c.compile_id]):
            out[c.id] = backs[c.compile_id][i]
    return out


def forward_inputs(forward: dict[str, GraphNode]) -> list[str]:
    """``Compile.forward_inputs`` of the backward of the forward whose post-grad nodes are ``forward`` (by name):
    its placeholders in order, each by its ``display_name``, else its name."""
    return [n.display_name or n.name for n in forward.values() if n.op == "placeholder"]


def saved_names(backward: Compile, forward: Compile) -> Compile:
    """``backward`` with each input its forward saved for it (role ``saved``) named by what made it
    (``rules.saved_name``), and its forward's inputs (``Compile.forward_inputs``), which name its outputs."""
    post, fwd = backward.graphs.get("post_grad"), forward.graphs.get("post_grad")
    if post is None or fwd is None:
        return backward
    made = {n.name: n for n in fwd.nodes}
    nodes = [
        dataclasses.replace(n, display_name=saved_name(n.name, made))
        if n.op == "placeholder" and n.role == "saved"
        else n
        for n in post.nodes
    ]
    graphs = dict(backward.graphs, post_grad=dataclasses.replace(post, nodes=nodes))
    inputs = forward_inputs(made) if not backward.subgraph else []
    return dataclasses.replace(backward, graphs=graphs, forward_inputs=inputs)


def name_saved(compiles: list[Compile]) -> list[Compile]:
    """``compiles`` with every backward's saved inputs named (:func:`saved_names`), each from its forward
    (:func:`pair_backward`); for a report written before they were."""
    by_id = {c.id: c for c in compiles}
    fwd = {b.id: by_id[f] for f, b in pair_backward(compiles).items()}
    return [saved_names(c, fwd[c.id]) if c.id in fwd else c for c in compiles]


def with_modules(compiles: list[Compile]) -> list[Compile]:
    """``compiles`` with module paths inferred where they lack them (``module_paths.infer_modules``), each
    backward from its forward (:func:`pair_backward`)."""
    return infer_modules(compiles, {b.id: f for f, b in pair_backward(compiles).items()})


def rederive(compiles: list[Compile], origin: str = "capture") -> list[Compile]:
    """What a report written before the derived fields of ``DERIVED_VERSION`` gets on loading: module paths
    inferred where missing (:func:`with_modules`), its backwards' saved inputs named (:func:`name_saved`), then
    :func:`derive_compile` on every compile. ``origin``: the report's (``Report.origin``): a TORCH_TRACE import
    made before ``Compile.unrecorded`` says what its log cannot hold (``rules.TRACE_UNRECORDED``)."""
    if origin == "trace":
        compiles = [c if c.unrecorded else dataclasses.replace(c, unrecorded=dict(TRACE_UNRECORDED)) for c in compiles]
    return link_branches([derive_compile(c) for c in name_saved(with_modules(compiles))])


def derive_report(report: Report) -> Report:
    """``report`` with :func:`rederive` run on its compiles (a report written before the derived fields of
    ``DERIVED_VERSION``), and the lines that built the modules of ops with no line of their own
    (``report/built.py``)."""
    report = dataclasses.replace(report, compiles=rederive(report.compiles, report.origin), derived=DERIVED_VERSION)
    return rollups_noisy(mark_built(skips_said(report)))


def skips_said(report: Report) -> Report:
    """``report`` with each ``cudagraph_skipped`` diagnostic a lens wrote with torch's reason alone said with its
    compile's ``CudaGraphs.skip_note`` (a report written before it, once derived: the skip names the mutated input)."""
    said = {}
    for c in report.compiles:
        g = c.cudagraphs
        if g is not None and g.skip_reason and g.skip_note:
            said[cudagraph_skip_message(c.id, g.skip_reason)] = cudagraph_skip_message(c.id, g.skip_note)
    if not any(d.code == "cudagraph_skipped" and d.message in said for d in report.diagnostics):
        return report
    notes = [
        dataclasses.replace(d, message=said[d.message]) if d.code == "cudagraph_skipped" and d.message in said else d
        for d in report.diagnostics
    ]
    return dataclasses.replace(report, diagnostics=notes)


def infer_report_modules(report: Report) -> Report:
    """``report`` with module paths inferred for the compiles that lack them (:func:`with_modules`), and what
    follows from them derived again: the fused nodes' grouping (``module_view``) and the backwards' saved inputs'
    names, and the lines that built their modules (``report/built.py``). ``report`` itself when none lacks them.
    A TORCH_TRACE import gets this once it is built."""
    compiles = with_modules(report.compiles)
    changed = {c.id for c, was in zip(compiles, report.compiles) if c is not was}
    if not changed:
        return report
    by_id = {c.id: c for c in compiles}
    for f, b in pair_backward(compiles).items():
        if f in changed:  # its saved inputs are named by the forward's ops, with their modules
            by_id[b.id] = saved_names(by_id[b.id], by_id[f])
            changed.add(b.id)
    compiles = [derive_compile(by_id[c.id]) if c.id in changed else c for c in compiles]
    return mark_built(dataclasses.replace(report, compiles=compiles))


def _several_writes(fused: list[FusedNode], fx: dict, outputs: dict[str, str]) -> dict[str, str]:
    """What a buffer of a fused node that writes several holds, by the FX op whose result it is: a buffer the graph
    returns by its output node (``Compile.output_nodes``), else the one buffer of the node another node reads by the
    one op of the node whose result an op outside it reads. Inductor fuses a backward's chain of pointwise ops into one
    node of several members, whose last buffer takes over the storage of the one before (``buf5 = buf4; del buf4  #
    reuse``, the kernel's ``in_out_ptr0``): nu23's ``op4_op5``, whose ``buf5`` (the gradient ``fc1``'s ``mm`` and
    ``sum`` read) its launch named by no more than that."""
    read_by: dict[str, set] = {}
    for m in fused:
        for b in m.reads:
            read_by.setdefault(b, set()).add(m.name)
    users: dict[str, set] = {}
    for g in fx.values():
        for i in g.inputs:
            users.setdefault(i, set()).add(g.name)
    out: dict[str, str] = {}
    for n in fused:
        if len(n.writes) < 2:
            continue
        own = set(n.fx_nodes)
        for b in n.writes:
            if outputs.get(b) in fx:
                out[b] = made_by_text(outputs[b], fx)
        left = [b for b in n.writes if b not in out and read_by.get(b, set()) - {n.name}]
        results = [f for f in n.fx_nodes if f in fx and fx[f].op == "call_function" and users.get(f, set()) - own]
        results = [f for f in results if f not in outputs.values()]
        if len(left) == 1 and len(results) == 1:
            out[left[0]] = made_by_text(results[0], fx)
    return out


def _welford_holds(k: Kernel, fused: dict[str, FusedNode], fx: dict, holds: dict[str, str]) -> dict[str, str]:
    """``LaunchArg.holds`` of the buffers kernel ``k`` fills with a Welford reduction's results that nothing else
    names (a batch norm's m2 beside its ``save_mean`` and ``save_invstd``): by the pointer its C++ source stores the
    accumulator's ``.m2`` through (``rules.welford_part``), after the reduction op of the fused node that writes
    it (the member of the buffer's number, ``op26`` for ``buf26``, else the node's one ``var_mean``)."""
    out: dict[str, str] = {}
    for a in k.launch.args if k.launch is not None else []:
        part = "" if a.name in holds else welford_part(k.source or "", a.param)
        writer = next((fused[f] for f in k.fused_nodes if f in fused and a.name in fused[f].writes), None)
        if not part or writer is None:
            continue
        member = "op" + a.name[3:] if a.name.startswith("buf") else ""
        aligned = len(writer.member_ops) == len(writer.members) and member in writer.members
        ops = [f for f in writer.member_ops[writer.members.index(member)] if f in fx] if aligned else []
        if len(ops) != 1:
            ops = [f for f in writer.fx_nodes if f in fx and short_op(str(fx[f].target)) == "var_mean"]
        out[a.name] = welford_holds(made_by_text(ops[0], fx) if len(ops) == 1 else "", part)
    return out


def _buffer_holds(fused: list[FusedNode], fx: dict, outputs: Optional[dict[str, str]] = None) -> dict[str, str]:
    """``LaunchArg.holds`` by buffer or graph input name: a graph input by the name the user knows
    (``transformer.h.0.ln_1.weight`` for ``primals_4``, ``gradient of output 1`` for ``tangents_1``), a buffer that one
    fused node alone writes by what computes it (``rules.made_by_text`` of its last op: ``layer1.0.conv1 convolution``)
    or by what it copies (``copy of stem.weight``, ``rules.copy_name``), or by the graph constant it makes (a frozen
    conv's 8 bias values, folded with its BatchNorm, which Inductor writes into a kernel's code: ``conv1.bias folded
    with bn1``, ``GraphNode.display_name``); nothing for a buffer a node writes in place
    after (it holds both in turn) and where that says no more than the name."""
    out = {n.name: n.display_name for n in fx.values() if n.op == "placeholder" and n.display_name}
    # a tensor the graph holds (a frozen graph's parameter ``arg1_1``), which the output code calls by its target
    out.update((str(n.target), n.display_name) for n in fx.values() if n.op == "get_attr" and n.display_name)
    # a buffer a later node writes in place holds what that node makes of it (index_add_ into zeros: not zeros)
    mutated = {b for n in fused for b in n.mutates}
    for n in fused:
        if len(n.writes) != 1 or n.writes[0] in out or n.writes[0] in mutated:
            continue
        ops = [f for f in n.fx_nodes if f in fx and fx[f].op == "call_function"]
        inputs = [f for f in n.fx_nodes if f in fx and fx[f].op == "placeholder"]
        held = [f for f in n.fx_nodes if f in fx and fx[f].op == "get_attr"]
        if ops:
            out[n.writes[0]] = made_by_text(ops[-1], fx)
        elif len(inputs) == 1:  # an input copy (channels-last) runs no op: what it copies
            out[n.writes[0]] = copy_name(fx[inputs[0]])
        elif len(held) == 1 and not inputs:  # a small constant Inductor wrote into a kernel's code, which makes it
            out[n.writes[0]] = fx[held[0]].display_name
    more = _several_writes(fused, fx, outputs or {})
    out.update((b, shown) for b, shown in more.items() if b not in out and b not in mutated)
    return {b: shown for b, shown in out.items() if shown and shown != b}


def _writer_dtypes(kernels: list[Kernel], fused: list[FusedNode], fx: dict) -> list[Kernel]:
    """``kernels`` with each launch argument the output code gives no dtype (an extern kernel's result, as
    ``buf4 = extern_kernels.convolution(...)``: no allocation line names it) given its writer's: the dtype of the FX
    ops of the fused node that writes that buffer, where they agree (a multi-output op's results may differ: none)."""
    dtype_of: dict[str, str] = {}
    for n in fused:
        dtypes = {fx[f].dtype for f in n.fx_nodes if f in fx and fx[f].dtype}
        if len(dtypes) == 1:
            (dtype,) = dtypes
            dtype_of.update((b, dtype) for b in n.writes)

    def typed(a: LaunchArg) -> LaunchArg:
        return (
            dataclasses.replace(a, dtype=dtype_of[a.name])
            if a.shape is not None and not a.dtype and a.name in dtype_of
            else a
        )

    out = []
    for k in kernels:
        if k.launch is not None:
            args = [typed(a) for a in k.launch.args]
            if any(new is not old for new, old in zip(args, k.launch.args)):
                k = dataclasses.replace(k, launch=dataclasses.replace(k.launch, args=args))
        out.append(k)
    return out


def finish_compile(c: Compile, view: bool = True) -> Compile:
    """``c`` with its derived fields filled: labels, glue, stacks of fused nodes, the chosen autotune
    choice, size hints as a mapping, and no refusal between nodes that ended up in one kernel call (``view``: as
    :func:`derive_compile`'s)."""
    fx = _fx_of(c)
    kernels = _writer_dtypes([_kernel(k) for k in c.kernels], c.fused_nodes, fx)
    by_name = {k.name: k for k in kernels}
    lent = post_lent(c)
    fused = [_fused(n, by_name, fx, lent) for n in c.fused_nodes]
    c = derive_compile(dataclasses.replace(c, kernels=kernels, fused_nodes=fused), fx, view)
    kernels, fused = c.kernels, c.fused_nodes
    flabel = f"{c.subgraph} (a subgraph)" if c.subgraph else frame_label(c.frame)
    return dataclasses.replace(
        c,
        kernels=kernels,
        fused_nodes=fused,
        frame_label=flabel,
        label=_label(c, flabel),
        autotune_note=_autotune_note(c, kernels, fused),
        custom_pass_note=custom_pass_note(c.custom_passes),
    )


def _label(c: Compile, flabel: str) -> str:
    suffix = c.id[len(f"{c.compile_id} {c.graph_kind}") :] if c.id.startswith(f"{c.compile_id} {c.graph_kind}") else ""
    return compile_label(c.compile_id, c.graph_kind, flabel, suffix, complete=c.complete)


def incomplete(c: Compile) -> Compile:
    """``c`` marked as a compile that did not finish (its code never ran), with the label and note that say so."""
    c = dataclasses.replace(c, complete=False)
    return dataclasses.replace(c, label=_label(c, c.frame_label), graph_note=compile_note(c))


def _autotune_note(c: Compile, kernels: list[Kernel], fused: list[FusedNode]) -> str:
    """``rules.autotune_note`` of a compile whose settings were recorded and none of whose kernels was tuned."""
    m = c.autotune_mode
    if m is None or any(isinstance(k.metadata.get("autotune"), dict) for k in kernels):
        return ""
    extern = {k.name for k in kernels if k.language == "extern"}
    calls = [n.label for n in fused if n.kernel in extern and n.label in TUNABLE_OPS]
    cpu = any(k.language == "cpp" for k in kernels) or "empty_strided_cpu(" in str(c.output_code or "")
    return autotune_note(m.max_autotune, m.gemm_backends, m.freezing, calls, cpu)


def graph_signature(c: Compile) -> str:
    """A digest of what a compile made: its post-grad ops, fused nodes and kernel sources (not names or ids)."""
    post = c.graphs.get("post_grad")
    parts = [
        c.graph_kind,
        [(n.op, n.target, n.shape, n.dtype) for n in (post.nodes if post else [])],
        [(n.kind, n.label, len(n.fx_nodes)) for n in c.fused_nodes],
        [(k.language, k.source) for k in c.kernels],
    ]
    return _sha1(json.dumps(parts, default=str).encode()).hexdigest()


def mark_same_graphs(compiles: list[Compile]) -> list[Compile]:
    """Each compile identical to an earlier one gets ``same_graph_as`` = the first such compile's id."""
    first: dict[str, str] = {}
    out = []
    for c in compiles:
        if not c.kernels:
            out.append(c)
            continue
        sig = graph_signature(c)
        same: Optional[str] = first.setdefault(sig, c.id)
        out.append(dataclasses.replace(c, same_graph_as=same if same != c.id else None))
    return out


def upgrade_v1(report: Report, data: dict) -> Report:
    """A version-1 report loaded into the version-2 model, with the fields version 1 did not have filled
    from what it recorded (``pre_fusion_nodes``, which version 2 dropped, is left behind)."""
    compiles = []
    for c in name_saved(with_modules(report.compiles)):
        reason = ""
        if c.trigger.kind == "recompile":
            text = c.trigger.reason
            head = f"recompile of {c.frame or 'the frame'}: "
            reason = readable_reasons(text[len(head) :] if text.startswith(head) else text)
        compiles.append(finish_compile(dataclasses.replace(c, recompile_reason=reason)))
    return mark_built(
        dataclasses.replace(
            report, compiles=mark_same_graphs(compiles), schema_version=SCHEMA_VERSION, derived=DERIVED_VERSION
        )
    )
