"""Roll-ups by the user's line (torch-free): the line that ran a thing, else the line that built its module.

A model made only of torch's modules (``nn.Sequential(nn.Linear, ...)``) runs no op on a line of the user's: every
stack ends inside torch, and a roll-up by line had one row, "(no line)". ``report/built.py`` finds where the user's
file BUILT each module (``FusedNode.built_lines``); here that line stands for the things of its modules that no
line ran, marked ``built`` (a line that built, never one that ran), in the Roofline's time by line
(``StepProfile.by_line``, ``LineTime``) and the Memory view's activations kept by line (``Memory.saved_by_line``)
and recomputed ops by line (``Memory.recomputed_by_line``), and so in each row of the Memory view's tables, its
"your line" (``user_line``, a ``RowLine``, :func:`memory_lines`): the views draw it, never work it out from stacks.
A line that ran always wins.

The analysis layer makes these roll-ups with the functions here when it measures a step or a compile's memory;
:func:`mark_rollups` makes them again once the built lines are known (a capture finds them after its memory is
estimated; an older report on load).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Iterator, Optional, Sequence

from .model import (
    HELD_KINDS,
    BuiltLine,
    BytesBy,
    Compile,
    Frame,
    FusedNode,
    GraphNode,
    Kernel,
    LineTime,
    LiveBuffer,
    Memory,
    ModuleTime,
    NodeTime,
    Recomputed,
    RecomputedBy,
    Report,
    RowLine,
)
from .model import SavedTensor as _Saved
from .rules import (
    copy_name,
    counted_bytes,
    gradient_text,
    line_time_text,
    made_by,
    no_file_reason,
    node_time_text,
    owner_module,
    recomputed_reason,
    short_op,
)

#: A roll-up's key: ``(file, line, code, built)``; ``("", 0, "", False)`` for things with no line at all.
Key = tuple[str, int, str, bool]
NO_LINE: Key = ("", 0, "", False)
#: How :func:`rules.no_file_reason` begins, whatever the file it names.
NO_FILE_START = no_file_reason("")[: no_file_reason("").index("(")]


def user_line(stack: Iterable[Frame]) -> Optional[Frame]:
    """The innermost frame of the user's code in ``stack``, or None."""
    return next((f for f in reversed(list(stack)) if f.is_user), None)


#: A graph node as :func:`lent_lines` reads it: ``(name, op, inputs, shape, has a stack of its own)``.
LineNode = tuple[str, str, Sequence[str], Any, bool]


def lent_lines(nodes: Iterable[LineNode]) -> dict[str, list[str]]:
    """Each post-grad node whose own stack is not the line of the work it goes into -> the ops that read it, in
    graph order: a node that reads no tensor (``full``, ``scalar_tensor``, ``arange``; a ``get_attr`` constant)
    that several ops read, or that has no stack of its own. Inductor's CSE keeps one such node for all its readers,
    with one reader's stack: a backward's one ``full_default``, the 0.0 of every ReLU's ``threshold_backward``,
    carries the line of the last ReLU of the forward, and every BatchNorm backward that inlines it named that line;
    AOTInductor's ``fc2_bias``, written by the kernel of ``fc1``'s ReLU into the buffer ``fc2``'s ``addmm`` reads,
    has no line at all and took the kernel's. Such a node has the lines (and modules) of its readers
    (:func:`line_ops`). ``nodes``: ``(name, op, inputs, shape, has a stack)`` (a tensor has a shape, a size symbol
    none)."""
    nodes = list(nodes)
    tensors = {name for name, op, _, shape, _ in nodes if shape is not None}
    readers: dict[str, list[str]] = {}
    for name, op, inputs, _, _ in nodes:
        if op == "call_function":
            for i in dict.fromkeys(inputs):
                readers.setdefault(i, []).append(name)
    return {
        name: readers[name]
        for name, op, inputs, _, stacked in nodes
        if op in ("call_function", "get_attr")
        and name in readers
        and not any(i in tensors for i in inputs)
        and (len(readers[name]) > 1 or not stacked)
    }


def line_ops(names: Iterable[str], lent: dict[str, list[str]]) -> list[str]:
    """The ops whose lines (and modules) are those of the ops ``names`` (a kernel's, a fused node's): each of them,
    but a node that lends its line (:func:`lent_lines`) replaced by its readers among ``names``, else (it is made
    for ops elsewhere: a constant written into a buffer) by all its readers; once each, in order."""
    names = list(names)
    mine = set(names)
    out: list[str] = []
    for n in names:
        if n in lent:
            inside = [r for r in lent[n] if r in mine]
            out += inside or lent[n]
        else:
            out.append(n)
    return list(dict.fromkeys(out))


def built_by_module(compile: Compile) -> dict[str, BuiltLine]:
    """Each module path of ``compile`` that a line of the user's built (``FusedNode.built_lines``) -> that line."""
    out: dict[str, BuiltLine] = {}
    for n in compile.fused_nodes:
        for b in n.built_lines:
            for m in b.modules:
                out.setdefault(m, b)
    return out


def built_line(node: Optional[GraphNode], built: dict[str, BuiltLine]) -> Optional[BuiltLine]:
    """The line that built the innermost module of ``node`` that has one (:func:`built_by_module`), or None."""
    for path in reversed(node.module_stack if node is not None else []):
        if path in built:
            return built[path]
    return None


def op_key(stack: Iterable[Frame], node: Optional[GraphNode], built: dict[str, BuiltLine]) -> Key:
    """The line a thing of ``node`` (with ``stack``, the user stack it recorded) rolls up under: its innermost user
    frame, else the line that built its module (marked built), else :data:`NO_LINE`."""
    f = user_line(stack)
    if f is not None:
        return (f.file, f.line, (f.code or "").strip(), False)
    b = built_line(node, built)
    return (b.file, b.line, (b.code or "").strip(), True) if b is not None else NO_LINE


def row_line(stack: Iterable[Frame], node: Optional[GraphNode], built: dict[str, BuiltLine]) -> Optional[RowLine]:
    """The line a row of the Memory view's tables names (``user_line``, "your line"): :func:`op_key`, the rule of
    the roll-ups by line, as a :class:`RowLine`; None where a thing has no line at all."""
    file, line, code, bt = op_key(stack, node, built)
    return RowLine(file, line, code, bt) if file else None


def _input_copy(buffer: LiveBuffer, fx: dict[str, GraphNode]) -> Optional[GraphNode]:
    """The graph input a buffer is a copy of (its post-grad node is a placeholder: Inductor laid the input out anew,
    a convolution's weight channels-last on a CPU), else None."""
    node = fx.get(buffer.fx_node)
    return node if node is not None and node.op == "placeholder" else None


def buffer_module(buffer: LiveBuffer, fx: dict[str, GraphNode], fused: dict[str, FusedNode]) -> str:
    """The innermost module of the op that computes a buffer (its post-grad node; ``""`` for an op the user's own
    code ran outside any module, such as a ``torch.cat`` in ``forward``), else (an op with neither: a pass made it)
    of its fused node; for a copy of a graph input, the module that owns the input (``layer4.1.conv1`` for
    ``layer4.1.conv1.weight``, ``""`` for an argument), as the saved tensors' table says."""
    node = fx.get(buffer.fx_node)
    if node is not None and node.op == "placeholder":
        return owner_module(node.display_name)
    if node is not None and (node.module_stack or node.user_stack):
        return node.module_stack[-1] if node.module_stack else ""
    f = fused.get(buffer.node)
    return f.module_stack[-1] if f is not None and f.module_stack else ""


def output_pairs(c: Compile, fx: dict[str, GraphNode]) -> tuple[list[tuple[str, str]], Optional[GraphNode]]:
    """``(buffer, post-grad node)`` of each graph output of ``c``, and its post-grad output node (None where its
    graph has none): the pairs recorded at capture (``Compile.output_nodes``), else, in a report without them,
    ``graph_outputs`` in the output code's order against the output node's inputs, each taken once (a node returned
    and saved is one input, its buffer twice in the return); none where those are not as many."""
    out = fx.get("output")  # FX names its output node so (a node of the user's named so is output_1)
    if out is not None and out.op != "output":
        out = None
    if c.output_nodes:
        return list(c.output_nodes.items()), out
    buffers = list(dict.fromkeys(c.graph_outputs))
    if out is None or len(out.inputs) != len(buffers):
        return [], out
    return list(zip(buffers, out.inputs)), out


def gradients_of(c: Compile, out: Optional[GraphNode]) -> dict[str, str]:
    """Each node backward ``c`` returns (``out``: its post-grad output node) -> ``rules.gradient_text`` of the
    forward inputs it is the gradient of: by AOT autograd's layout the i-th position of the return holds the
    gradient of the forward's i-th input (``Compile.forward_inputs``), ``None`` where that needs none
    (``GraphNode.returns`` keeps those positions); compiled autograd's names the parameter whose ``.grad`` each
    place holds, ``""`` where none is known. ``{}`` for other graphs, where the forward is not known (a report made
    before it) or its inputs and the positions are not as many."""
    if c.graph_kind != "backward" or not c.forward_inputs or out is None:
        return {}
    if len(out.returns) != len(c.forward_inputs):
        return {}
    of: dict[str, list[str]] = {}
    for node, shown in zip(out.returns, c.forward_inputs):
        if node and shown:  # (compiled autograd's: "" where no parameter's gradient is known there)
            of.setdefault(node, []).append(shown)
    return {node: gradient_text(shown) for node, shown in of.items()}


def gradient_buffers(c: Compile, fx: dict[str, GraphNode]) -> dict[str, str]:
    """Each output buffer of backward ``c`` that is a gradient -> which (``fc1.weight.grad``): the one rule that
    names it in the output ovals (``Compile.output_names``), the launch table (``LaunchArg.holds``) and the Memory
    view's rows (``LiveBuffer.op``). ``{}`` where :func:`gradients_of` knows none."""
    pairs, out = output_pairs(c, fx)
    grads = gradients_of(c, out)
    return {buf: grads[node] for buf, node in pairs if node in grads}


def buffer_op(buffer: LiveBuffer, fx: dict[str, GraphNode], grads: Optional[dict[str, str]] = None) -> str:
    """``LiveBuffer.op``: what a buffer holds, the op that computes it as the saved tensors are named
    (``rules.made_by``: ``convolution_backward: grad_weight``, not ``getitem_43``), ``copy of`` the input it copies;
    its post-grad node's name where the graph has no such node. A backward's output buffer is named by the gradient
    it is (``grads``: :func:`gradient_buffers`), as its oval is."""
    if grads and buffer.name in grads:
        return grads[buffer.name]
    copied = _input_copy(buffer, fx)
    if copied is not None:
        return copy_name(copied)
    return made_by(buffer.fx_node, fx)[1] if buffer.fx_node else ""


def buffer_stack(buffer: LiveBuffer, fused: Optional[dict[str, FusedNode]], fx: Optional[dict] = None) -> list[Frame]:
    """The user stack a buffer's row rolls up under: its op's, else (an op a pass of Inductor made, such as the
    ``slice_scatter`` of an in-place op on a view, which has no stack) its fused node's first, the line the
    kernel's panel names; none for a copy of a graph input (its kernel's first line is another op's: the stem's
    for the copies of every convolution's weight)."""
    if fx is not None and _input_copy(buffer, fx) is not None:
        return []
    if user_line(buffer.user_stack) is not None or fused is None:
        return buffer.user_stack
    f = fused.get(buffer.node)
    return f.user_stack[0] if f is not None and f.user_stack else buffer.user_stack


def saved_display(s: _Saved, fx: dict[str, GraphNode]) -> str:
    """``SavedTensor.display`` of a saved tensor: the name the user knows an input or a copy by, as it is; an
    activation's op as the graph's ovals, the launch table and the peak's buffers name it (``rules.made_by``: ``silu``
    for the backward's ``div``, SiLU's decomposition), where that is not its name: the saved-for-backward table named
    one tensor ``div`` where the rest of the page said ``model silu``."""
    if s.display or s.kind != "activation" or s.fx_node not in fx:
        return s.display
    what = made_by(s.fx_node, fx)[1]
    return what if what != s.name else ""


def memory_lines(
    m: Memory,
    fx: dict[str, GraphNode],
    built: dict[str, BuiltLine],
    fused: Optional[dict[str, FusedNode]] = None,
    grads: Optional[dict[str, str]] = None,
) -> Memory:
    """``m`` with the line of every row of its tables (``user_line`` of its saved tensors, saved groups, buffers
    alive at the peak and recomputed ops) and its roll-ups by line (``saved_by_line``, ``recomputed_by_line``), all
    by :func:`op_key`: ``fx`` the compile's post-grad nodes (a recomputed op is the forward's, under its forward
    name), ``built`` :func:`built_by_module`. A saved group's line is its first tensor's. With ``fused`` (the
    compile's fused nodes by name), each buffer alive at the peak also gets its ``module`` (:func:`buffer_module`);
    ``grads`` (:func:`gradient_buffers`) names a backward's output buffers by the gradients they are."""
    saved = [
        dataclasses.replace(s, user_line=row_line(s.user_stack, fx.get(s.fx_node), built), display=saved_display(s, fx))
        for s in m.saved_for_backward
    ]
    redo = [
        dataclasses.replace(
            r, user_line=row_line(r.user_stack, fx.get(r.fx_node), built), reason=recomputed_reason(r.by, r.checkpoint)
        )
        for r in m.recomputed
    ]
    return dataclasses.replace(
        m,
        saved_for_backward=saved,
        recomputed=redo,
        peak_buffers=[
            dataclasses.replace(
                b,
                user_line=row_line(buffer_stack(b, fused, fx), fx.get(b.fx_node), built),
                module=buffer_module(b, fx, fused) if fused is not None else b.module,
                op=buffer_op(b, fx, grads),
            )
            for b in m.peak_buffers
        ],
        saved_groups=[
            dataclasses.replace(g, user_line=row_line(g.user_stack, fx.get(g.fx_node), built)) for g in m.saved_groups
        ],
        saved_by_line=saved_by_line(saved, fx, built),
        recomputed_by_line=recomputed_by_line(redo, fx, built),
    )


def kernel_keys(k: Kernel, no_file: bool = False) -> list[Key]:
    """The lines a kernel's time is split between: its user lines of the user's code (``Kernel.user_lines``, the same
    the Source view and the panel name), else the lines that built its modules (``Kernel.built_lines``) but for a
    kernel whose ops ran in code with no file (``no_file``, :func:`no_file_kernels`: where they ran is not known,
    and the line that built their module did not run them), else the lines of a library's code that ran it, else
    :data:`NO_LINE`."""
    ran = [(f.file, f.line, f.code, False) for f in k.user_lines if f.is_user]
    built = [] if no_file else [(b.file, b.line, b.code, True) for b in k.built_lines]
    return ran or built or [(f.file, f.line, f.code, False) for f in k.user_lines] or [NO_LINE]


def no_file_kernels(compiles: Iterable[Compile]) -> set[int]:
    """The kernels (by ``id``) of ``compiles`` with no line of the user's whose fused nodes ran in code with no file
    (their ``no_line_reason`` is ``rules.no_file_reason``'s: a model class defined through ``exec()``)."""
    out: set[int] = set()
    for c in compiles:
        fused = {n.name: n for n in c.fused_nodes}
        for k in c.kernels:
            nodes = [fused[name] for name in k.fused_nodes if name in fused]
            if any(n.no_line_reason.startswith(NO_FILE_START) for n in nodes):
                out.add(id(k))
    return out


def _share(us: float, total: float) -> Optional[float]:
    return round(us / total, 4) if total else None


def launch_sites(k: Kernel) -> list[list[str]]:
    """The launches of kernel ``k`` in one call of its graph: its call sites (``Kernel.call_sites``), each the fused
    nodes that call computes; one of all its fused nodes where none was read."""
    return [s for s in k.call_sites if s] or [list(k.fused_nodes)]


def lead_node(site: list[str], fused: dict[str, FusedNode]) -> Optional[FusedNode]:
    """The fused node a launch's time and module go to: the first of ``site`` with a module, else its first."""
    nodes = [fused[n] for n in site if n in fused]
    return next((n for n in nodes if n.module_stack), nodes[0] if nodes else None)


def launch_keys(k: Kernel, site: list[str], fused: dict[str, FusedNode], no_file: bool = False) -> list[Key]:
    """The lines one launch of ``k`` (``site``, its fused nodes) is split between: for a kernel called at several
    sites, the lines of the user's code its own fused nodes ran (``FusedNode.user_lines``), else those that built
    their modules, in order; else, and for a kernel called once, the kernel's (:func:`kernel_keys`)."""
    if len(launch_sites(k)) > 1:
        nodes = [fused[n] for n in site if n in fused]
        ran = [(f.file, f.line, f.code, False) for n in nodes for f in n.user_lines if f.is_user]
        built = [] if no_file else [(b.file, b.line, b.code, True) for n in nodes for b in n.built_lines]
        keys = list(dict.fromkeys(ran or built))
        if keys:
            return keys
    return kernel_keys(k, no_file)


def _measured(compiles: Iterable[Compile]) -> float:
    return sum(k.profile.total_us for c in compiles for k in c.kernels if k.profile is not None)


def _launches(compiles: Iterable[Compile]) -> Iterator[tuple[Kernel, list[str], dict[str, FusedNode], float]]:
    """Each launch of a measured kernel of ``compiles`` (:func:`launch_sites`): ``(kernel, site, the compile's fused
    nodes by name, its time)``, an even share of the kernel's ``total_us`` (its launches are timed together)."""
    for c in compiles:
        fused = {n.name: n for n in c.fused_nodes}
        for k in c.kernels:
            if k.profile is None:
                continue
            sites = launch_sites(k)
            for site in sites:
                yield k, site, fused, k.profile.total_us / len(sites)


def _line_rows(compiles: Iterable[Compile], no_file: set[int], total: float) -> list[LineTime]:
    """The measured time of the kernels of ``compiles`` by line: each launch's time (:func:`launch_sites`, an even
    share of its kernel's ``total_us``) split evenly between its lines (:func:`launch_keys`), longest first."""
    rows: dict[Key, dict] = {}
    for k, site, fused, us in _launches(compiles):
        keys = launch_keys(k, site, fused, id(k) in no_file)
        for key in keys:
            got = rows.setdefault(key, {})  # kernel -> (kernel, the time of it this line got)
            had = got.get(k.name, (k, 0.0))[1]
            got[k.name] = (k, had + us / len(keys))
    out = []
    for (file, line, code, built), got in rows.items():
        kernels = [k for k, _ in got.values()]
        us = sum(part for _, part in got.values())
        whole = sum(k.profile.total_us for k in kernels)
        shared = [k for k, part in got.values() if part < k.profile.total_us * (1 - 1e-9)]  # the rest on other lines
        out.append(
            LineTime(
                file,
                line,
                code,
                round(us, 3),
                _share(us, total),
                [k.name for k in kernels],
                built,
                noisy=[k.name for k in kernels if k.profile.noisy],
                whole_us=round(whole, 3),
                text=line_time_text(us, whole, len(kernels), len(shared)),
            )
        )
    return sorted(out, key=lambda r: -r.us)


def time_by_line(compiles: Iterable[Compile], no_file: Iterable[int] = ()) -> list[LineTime]:
    """``StepProfile.by_line``: the measured time of the kernels of ``compiles`` (those with a ``profile``) by line:
    each launch of a kernel (a call site: a kernel called for two layers is two launches, an even share of its time
    each) split evenly between its lines (:func:`launch_keys`; ``no_file``: :func:`no_file_kernels`), longest first,
    shares of their total. The Source view's per-line time is the same rule, one compile at a time
    (``Compile.time_by_line``)."""
    compiles = list(compiles)
    return _line_rows(compiles, set(no_file), _measured(compiles))


def node_times(c: Compile, total: float) -> dict[str, NodeTime]:
    """Each fused node of ``c`` that leads a measured launch (:func:`lead_node`) -> the time of its launches
    (``FusedNode.time``): its kernel's ``total_us`` split evenly between the kernel's call sites; ``total``: all
    kernels' measured time, which ``share`` is of."""
    fused = {n.name: n for n in c.fused_nodes}
    out: dict[str, NodeTime] = {}
    for k in c.kernels:
        p = k.profile
        if p is None:
            continue
        sites = launch_sites(k)
        led: dict[str, list[int]] = {}  # lead node -> the call sites it leads (1-based)
        for i, site in enumerate(sites, 1):
            lead = lead_node(site, fused)
            if lead is not None:
                led.setdefault(lead.name, []).append(i)
        for name, mine in led.items():
            us = p.total_us * len(mine) / len(sites)
            out[name] = NodeTime(
                round(us, 3),
                _share(us, total),
                launches=round(p.calls * len(mine) / len(sites), 2),
                text=node_time_text(mine[0], len(sites), k.name, us, p.total_us) if len(mine) == 1 else "",
            )
    return out


def time_by_module(compiles: Iterable[Compile]) -> list[ModuleTime]:
    """``StepProfile.by_module``: the measured time of the kernels of ``compiles`` by the innermost module of each
    launch's lead node (:func:`lead_node`, the node its box's time is on; ``""``: none), longest first."""
    compiles = list(compiles)
    total = _measured(compiles)
    rows: dict[str, list] = {}
    for k, site, fused, us in _launches(compiles):
        lead = lead_node(site, fused)
        module = lead.module_stack[-1] if lead is not None and lead.module_stack else ""
        row = rows.setdefault(module, [0.0, {}])
        row[0] += us
        row[1][k.name] = k
    out = [
        ModuleTime(
            m,
            round(us, 3),
            _share(us, total),
            list(ks),
            noisy=[name for name, k in ks.items() if k.profile.noisy],
        )
        for m, (us, ks) in rows.items()
    ]
    return sorted(out, key=lambda r: -r.us)


def mark_times(report: Report) -> Report:
    """``report`` with its measured time attributed launch by launch (a kernel's call sites): each fused node's
    ``time`` (:func:`node_times`), each compile's ``time_by_line`` and the report's (every compile's, which is the
    profile's ``by_line``), and the profile's ``by_module``, all by the same launches (the profile's roll-ups where
    the report has one: kernels timed alone have none); ``report`` itself where no kernel was measured."""
    total = _measured(report.compiles)
    if not total and report.profile is None:
        return report
    no_file = no_file_kernels(report.compiles)
    compiles = []
    for c in report.compiles:
        times = node_times(c, total)
        fused = [dataclasses.replace(n, time=times.get(n.name)) for n in c.fused_nodes]
        rows = _line_rows([c], no_file, total) if any(k.profile is not None for k in c.kernels) else []
        compiles.append(dataclasses.replace(c, fused_nodes=fused, time_by_line=rows))
    every = _line_rows(report.compiles, no_file, total)  # every compile's, launch by launch
    profile = report.profile
    if profile is not None:
        profile = dataclasses.replace(profile, by_line=every, by_module=time_by_module(report.compiles))
    return dataclasses.replace(report, compiles=compiles, profile=profile, time_by_line=every)


def rollups_noisy(report: Report) -> Report:
    """``report`` with each roll-up row of its profile (by line, module, kind) naming its kernels whose runs disagree
    (``noisy``): a report profiled before the rows held them, by the kernels' names (``analysis/perf.py`` fills them
    at profile time)."""
    profile = report.profile
    if profile is None:
        return report
    noisy = {k.name for c in report.compiles for k in c.kernels if k.profile is not None and k.profile.noisy}

    def said(rows: list) -> list:
        return [dataclasses.replace(r, noisy=[n for n in r.kernels if n in noisy]) for r in rows]

    profile = dataclasses.replace(
        profile, by_line=said(profile.by_line), by_module=said(profile.by_module), by_kind=said(profile.by_kind)
    )
    return dataclasses.replace(report, profile=profile)


def saved_by_line(saved: Iterable[_Saved], fx: dict[str, GraphNode], built: dict[str, BuiltLine]) -> list[BytesBy]:
    """``Memory.saved_by_line``: the saved activations' (and input copies') bytes by line (:func:`op_key` of the
    node that made each, ``fx`` the forward's post-grad nodes), largest first; those of no line in one row of
    ``file`` ``""`` (a copy of a weight), so that the rows add up to what the roll-up by module counts."""
    rows: dict[tuple[str, int, bool], list] = {}
    saved = list(saved)
    for s, size in zip(saved, counted_bytes(saved)):  # a storage two rows share, once (SavedTensor.shares)
        if s.kind not in HELD_KINDS or size == 0:
            continue
        file, line, code, bt = op_key(s.user_stack, fx.get(s.fx_node), built)
        row = rows.setdefault((file, line, bt), [0, 0, "", 0])
        row[0] += size or 0
        row[1] += 1
        row[2] = row[2] or code
        row[3] += size is None  # of a size known only when the graph runs: in the row, not in its bytes (nu29 D1)
    lines = [
        BytesBy(bytes=b, file=f, line=ln, count=n, code=code, built=bt, uncounted=u)
        for (f, ln, bt), (b, n, code, u) in rows.items()
    ]
    return sorted(lines, key=lambda x: (-x.bytes, x.file, x.line))


def recomputed_by_line(
    redo: Iterable[Recomputed], fx: dict[str, GraphNode], built: Optional[dict[str, BuiltLine]] = None
) -> list[RecomputedBy]:
    """``Memory.recomputed_by_line``: ``redo`` rolled up by line (:func:`op_key`; ``file`` ``""`` for ops with
    none): how many ops and their distinct short names, most ops first, then in the order first recomputed."""
    rows: dict[tuple, list] = {}
    for r in redo:
        node = fx.get(r.fx_node)
        file, line, _, bt = op_key(r.user_stack, node, built or {})
        why = r.reason or recomputed_reason(r.by, r.checkpoint)  # a line's ops in two regions: a row each
        row = rows.setdefault((file, line, bt, why), [0, []])
        row[0] += 1
        op = (node.short_op or short_op(node.target)) if node is not None else r.fx_node
        if op not in row[1]:
            row[1].append(op)
    out = [
        RecomputedBy(count=n, file=f, line=ln, ops=ops, built=bt, reason=why)
        for (f, ln, bt, why), (n, ops) in rows.items()
    ]
    order = {id(x): i for i, x in enumerate(out)}
    return sorted(out, key=lambda x: (-x.count, order[id(x)]))


def kernel_built_lines(k: Kernel, built: dict[str, list[BuiltLine]]) -> list[BuiltLine]:
    """``Kernel.built_lines``: for a kernel with no line of the user's code, the lines that built the modules of its fused nodes'
    ops (``built``: each fused node's ``built_lines``), one per line in execution order, their modules merged."""
    if any(f.is_user for f in k.user_lines):
        return []
    lines: dict[tuple[str, int], BuiltLine] = {}
    for name in k.fused_nodes:
        for b in built.get(name, []):
            have = lines.get((b.file, b.line))
            if have is None:
                lines[(b.file, b.line)] = dataclasses.replace(
                    b, modules=list(b.modules), module_types=list(b.module_types)
                )
                continue
            for m, t in zip(b.modules, b.module_types):
                if m not in have.modules:
                    have.modules.append(m)
                    have.module_types.append(t)
    return list(lines.values())


def mark_rollups(report: Report) -> Report:
    """``report`` with its lines by the user's code made again now that its built lines are known: each compile's
    Memory rows and roll-ups by line (:func:`memory_lines`), and its measured time by launch, line and module
    (:func:`mark_times`). Run on every capture and on loading a report written before them."""
    compiles = []
    for c in report.compiles:
        if c.memory is None:
            compiles.append(c)
            continue
        post = c.graphs.get("post_grad")
        fx = {n.name: n for n in post.nodes} if post is not None else {}
        fused = {n.name: n for n in c.fused_nodes}
        memory = memory_lines(c.memory, fx, built_by_module(c), fused, gradient_buffers(c, fx))
        compiles.append(dataclasses.replace(c, memory=memory))
    # the roll-ups of measured time again, with the built lines (and each launch's fused nodes: mark_times)
    return mark_times(dataclasses.replace(report, compiles=compiles))
