"""How the fusion graph folds a compile's fused nodes by nn.Module (torch-free): repeated sibling modules
(a model's layers) and the opening expansion. Filled by :func:`inductor_lens.report.finish.derive_compile`.

What *repeated* means here, so that a box saying "×32" is true:

- The **instances** are children of one module (its direct sub-modules in ``FusedNode.module_stack``), in
  the order they first run. Each instance's **own** fused nodes are the boxes whose stack holds it.
- Consecutive numbered children (``layers.0``, ``layers.1``) repeat when the same sub-modules ran in each, in
  any order (their module paths below the instance: a backward's scheduling moves a layer's weight gradients
  and a checkpoint's recomputation; an instance without sub-modules: the same kinds of fused nodes in the same
  order). Between two instances only the parent's own fused nodes may run (else the run stops there). A
  numbered child stays in the sequence where another child's span holds it (a backward's head computes its
  weight's gradient late, among the last layers'); another child does not (``rotary_emb``, called from
  ``layers.0``).
- An instance's **span** is where its fused nodes run among its siblings'. A node of it that a fusion put into
  another instance's span (layer 3's causal mask, made in the graph's first kernel with layer 0's) runs
  **apart**: it stays in its module's group but is left out of the comparison and of the span, and the
  summary counts it.
- Every instance is compared further, by its **shape**, the sequence of (module path below the instance,
  kind) of its own fused nodes. The most common shape (shared by two instances at least, and by more than
  any other) decides ``nodes_each``; ``same="kernels"`` where, among the instances of that shape, one
  sequence of kernels is the most common in that sense (each position calls the same generated kernel, or
  the same extern op such as ``mm``), else ``"kinds"``; ``"modules"`` where no shape is the most common.
  Instances whose shape or kernels differ from the most common are named in ``differs`` (layer 0 fusing
  the embedding into its norms; a layer whose residual add a fusion left as a node of its own), with
  their count of fused nodes where it is another.
- The parent's own fused nodes run inside an instance's span, or between it and the next one (a rotary
  embedding applied inside each layer, whose module is the common prefix ``model``), are **attached** to
  that instance: folded into its box while it is collapsed, counted apart in the summary.

The **calls** of one module instance (a ``GRUCell`` run over the time steps of an unrolled loop) are no siblings:
their fused nodes share one module path, and dynamo numbers the calls (``GraphNode.module_calls``). A fused node's
call of each module of its stack is the one most of its ops of that module were made in (:func:`node_calls`). A
module whose fused nodes come from two calls or more is folded as a whole (its own box) and, inside, by call
(``ModuleCalls``: one box per call, ``cell · call 3 of 24``, numbered in call order among the calls of the compile).
"""

from __future__ import annotations

from collections import Counter
from typing import Optional, Sequence

from .model import FusedNode, FusionEdge, GraphNode, ModuleCalls, ModuleOpening, ModuleRepeat, ModuleView
from .rules import plural

#: Screens of fewer boxes than this are not planned for (the front end's boxesThatFit never says less).
MIN_FIT = 4
#: Never more boxes than this on an opening graph (the front end's MAX_OPENING: the layout stays interactive).
OPEN_LIMIT = 60
#: Pane pixels per box of a screen of ``fit`` boxes (the front end's ROW_PX: ``fit`` = the pane's height / 60), and
#: the height of one row of the graph's column: a three-line box of 59 px and the rank gap of 25 px. Side branches
#: share rows, so a screen holds more boxes than rows: ``fit`` boxes, and ``fit * 60 // 84`` rows.
BOX_PX = 60
ROW_PX = 84
#: Graphs of at most this many boxes (or two screens of them) open fully expanded: two screens of
#: scrolling beat a click per module.
ALWAYS_EXPANDED = 16
REPEAT_PREFIX = "repeat:"


def _range_label(modules: Sequence[str]) -> str:
    """``model.layers.0-31`` for numbered siblings counted up by one, ``model.layers.31-0`` for ones counted
    down (a backward runs the layers last first), else ``first…last``. Two counted down read up, ``experts.1-2``
    (the regions drawn under the label say their order): ``experts.2-1`` read like a typo or an empty range.

    >>> [_range_label(["layers.0", "layers.1", "layers.2"]), _range_label(["layers.2", "layers.1", "layers.0"])]
    ['layers.0-2', 'layers.2-0']
    >>> _range_label(["moe.experts.2", "moe.experts.1"])
    'moe.experts.1-2'
    >>> _range_label(["a.x", "a.y"])
    'a.x…y'
    """
    heads, tails = zip(*(m.rpartition(".")[::2] for m in modules))
    if len(set(heads)) == 1 and all(t.isdigit() for t in tails):
        nums = [int(t) for t in tails]
        step = -1 if len(nums) > 1 and nums[1] < nums[0] else 1
        if nums == list(range(nums[0], nums[0] + step * len(nums), step)):
            head = heads[0] + "." if heads[0] else ""
            first, last = sorted(nums) if len(nums) == 2 else (nums[0], nums[-1])
            return f"{head}{first}-{last}"
    return f"{modules[0]}…{modules[-1].rpartition('.')[2]}"


def some_instances_label(repeat: ModuleRepeat, heads: Sequence[str]) -> str:
    """The name of some instances ``heads`` of ``repeat``: its own label where they are all of them, else theirs
    (``blocks.0-1`` of ``blocks.0-2``, ``blocks.0,2`` where they skip one, ``blocks.2`` for one): a row of the
    Memory view that holds tensors of two blocks of three said ``blocks.0-2``.

    >>> r = ModuleRepeat(key="b", label="blocks.0-2", parent="", modules=["blocks.0", "blocks.1", "blocks.2"])
    >>> [some_instances_label(r, h) for h in (["blocks.1", "blocks.0"], ["blocks.0", "blocks.2"], ["blocks.2"])]
    ['blocks.0-1', 'blocks.0,2', 'blocks.2']
    >>> some_instances_label(r, ["blocks.2", "blocks.1", "blocks.0"])
    'blocks.0-2'
    """
    order = {m: i for i, m in enumerate(repeat.modules)}
    chosen = sorted(set(heads), key=lambda m: order.get(m, len(order)))
    if len(chosen) == len(repeat.modules) and set(chosen) == set(repeat.modules) or not chosen:
        return repeat.label
    if len(chosen) == 1:
        return chosen[0]
    if _numbered(chosen):
        return _range_label(chosen)
    head = chosen[0].rpartition(".")[0]
    tails = [m.rpartition(".")[2] for m in chosen]
    if all(m.rpartition(".")[0] == head for m in chosen):
        return f"{head + '.' if head else ''}{','.join(tails)}"
    return ", ".join(chosen)


def _numbered(modules: Sequence[str]) -> bool:
    """Siblings numbered one after another (``layers.0``, ``layers.1``: an ``nn.ModuleList`` or ``Sequential``)."""
    return "…" not in _range_label(modules)


def _short(module: str, label: str) -> str:
    """``layers.0`` for ``model.layers.0`` under ``model.layers.0-31``."""
    head = label.rpartition(".")[0]
    parent = head.rpartition(".")[0]
    return module[len(parent) + 1 :] if parent and module.startswith(parent + ".") else module


def _sig_key(n: FusedNode) -> str:
    """The kernel a fused node calls, by what it is: the extern op, else the generated kernel's name."""
    return n.label if n.kind == "extern" else (n.kernel or n.label)


def _median(xs: Sequence[int]) -> int:
    return xs[len(xs) // 2]


def _spans(kids: Sequence[str], own: dict[str, list[int]], subs=None) -> dict[str, list[int]]:
    """The fused nodes of each numbered sibling of ``kids`` that run in its own span (the rest run apart).

    Siblings are ordered by their median node; an instance's span starts after the span of the one before and
    ends before the median node of the next: a node of layer 3 made in the first kernel (hoisted there by a
    fusion) lies before layer 2's span and runs apart. The last one's span ends before the first node of another
    sibling run after its median, where that leaves it the same sub-modules (``subs(m, nodes)``): a layer's
    statistics that a fusion computes after the head, at the end of the graph, run apart. The first one's starts
    after the last node of another kid run before its median where its nodes before that alone order its
    sub-modules otherwise than the next one's: a CNN's first block's BatchNorm counters, updated in the graph's
    first kernel with every other block's, run apart (a later layer's mask hoisted into the first layer's first
    kernel cuts nothing off it). Siblings whose nodes do not overlap keep all of them."""
    heads: dict[str, list[str]] = {}
    for m in kids:
        head, _, tail = m.rpartition(".")
        if tail.isdigit():
            heads.setdefault(head, []).append(m)
    out: dict[str, list[int]] = {}
    for group in heads.values():
        if len(group) < 2:
            continue
        order = sorted(group, key=lambda m: _median(own[m]))
        before = -1
        others = sorted(i for m in kids if m not in group for i in own[m])
        for k, m in enumerate(order):
            stop = _median(own[order[k + 1]]) if k + 1 < len(order) else 1 << 62
            core = [i for i in own[m] if before < i < stop] or own[m]
            if k == 0 and subs is not None and len(order) > 1:
                # the first one's nodes made before another kid's by a fusion, where they alone order its
                # sub-modules otherwise than the next one's
                prior = [i for o in kids if o != m for i in own[o] if i < _median(own[m])]
                kept = [i for i in core if i > max(prior)] if prior else core
                nxt = order[1]
                later = [x[len(nxt) :] for x in subs(nxt, [i for i in own[nxt] if i > _median(own[m])])]
                if kept and subs(m, kept) != subs(m, core) and [x[len(m) :] for x in subs(m, kept)] == later:
                    core = kept
            cut = next((i for i in others if i > _median(own[m])), None) if k + 1 == len(order) else None
            if cut is not None and subs is not None:
                kept = [i for i in core if i < cut]
                if kept and subs(m, kept) == subs(m, core):
                    core = kept
            if len(core) < len(own[m]):
                out[m] = core
            before = core[-1]
    return out


def find_repeats(boxes: Sequence[FusedNode]) -> list[ModuleRepeat]:
    """The repeated modules of ``boxes`` (fused nodes drawn as boxes, in execution order), outermost first."""
    stacks = [tuple(n.module_stack) for n in boxes]
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    depth: dict[str, int] = {}
    for i, st in enumerate(stacks):
        for d, m in enumerate(st):
            if m not in first:
                first[m], depth[m] = i, d
            last[m] = i
    kids: dict[tuple, list[str]] = {}
    for m in sorted(first, key=lambda m: first[m]):
        d = depth[m]
        kids.setdefault(stacks[first[m]][:d], []).append(m)

    def every_own(m: str) -> list[int]:
        d = depth[m]
        return [i for i in range(first[m], last[m] + 1) if len(stacks[i]) > d and stacks[i][d] == m]

    spans: dict[str, list[int]] = {}  # instance -> its own nodes in its span, where some run apart
    apart: dict[str, int] = {}  # instance -> how many of its nodes run apart

    def subs(m: str, idx: list[int]) -> tuple:
        d = depth[m] + 1
        return tuple(dict.fromkeys(stacks[i][d] for i in idx if len(stacks[i]) > d))

    for every in kids.values():
        owns = {m: every_own(m) for m in every}
        for m, core in _spans(every, owns, subs).items():
            spans[m], apart[m] = core, len(owns[m]) - len(core)
            first[m], last[m] = core[0], core[-1]

    def own(m: str) -> list[int]:
        return spans[m] if m in spans else every_own(m)

    def shape(m: str, idx: list[int]) -> tuple:
        d = depth[m]
        return tuple(
            (tuple(x[len(m) :] if x.startswith(m) else x for x in stacks[i][d + 1 :]), boxes[i].kind) for i in idx
        )

    def structure(sh: tuple) -> tuple:
        """The sub-modules that ran, in any order (sorted: a backward's scheduling reorders them; the instance's own
        nodes left out); the shape itself for an instance without sub-modules."""
        ran = list(dict.fromkeys(path[0] for path, _ in sh if path))
        return ("modules", *sorted(ran)) if ran else ("shape", sh)

    out: list[ModuleRepeat] = []
    for parent, every in kids.items():
        # a child run wholly inside an earlier one's span (model.rotary_emb, called from layer 0) is no
        # sibling in the sequence: it stays a box of its own there. Not so a numbered instance inside the span of
        # children that are no instances of another list: a backward's head computes its weight's gradient late,
        # among the last layers' (its span holds them); an instance of model.shared, called from inside the
        # layers, still stays out of their sequence
        heads = Counter(m.rpartition(".")[0] for m in every if m.rpartition(".")[2].isdigit())

        def instance_of(m: str) -> str:
            head, _, tail = m.rpartition(".")
            return head if tail.isdigit() and heads[head] >= 2 else ""

        children: list[str] = []
        for m in sorted(every, key=lambda m: first[m]):
            holders = [c for c in children if last[c] >= first[m]]
            mine = instance_of(m)
            if not holders or (mine and not any(instance_of(c) not in ("", mine) for c in holders)):
                children.append(m)
        if len(children) < 2:
            continue
        info = [(m, own(m)) for m in children]
        shapes = [shape(m, idx) for m, idx in info]
        keys = [structure(sh) for sh in shapes]
        start = 0
        while start < len(children):
            end = start + 1
            while (
                end < len(children)
                and keys[end] == keys[start]
                and last[children[end - 1]] < first[children[end]]
                and all(stacks[i] == parent for i in range(last[children[end - 1]] + 1, first[children[end]]))
            ):
                end += 1
            if end - start >= 2 and shapes[start] and _numbered(children[start:end]):
                out.append(_repeat(boxes, stacks, parent, info[start:end], shapes[start:end], first, last, apart))
            start = end
    out.sort(key=lambda r: (len(r.parent.split(".")) if r.parent else 0, r.key))
    return out


def _most_common(values: list) -> tuple:
    """The most common of ``values`` and whether it is shared: by two at least, and by more than any other."""
    ranked = Counter(values).most_common(2)
    top, n = ranked[0]
    return top, n >= 2 and (len(ranked) == 1 or ranked[1][1] < n)


def _repeat(
    boxes, stacks, parent: tuple, info: list, shapes: list, first: dict, last: dict, apart: dict
) -> ModuleRepeat:
    modules = [m for m, _ in info]
    label = _range_label(modules)
    attached = []
    for j, m in enumerate(modules):
        if j + 1 < len(modules):
            stop = first[modules[j + 1]]
        else:  # the last one's: up to the first node of another module after its middle (the head after the layers,
            # whose loss, the parent's own, runs while a fusion computes the last layer's statistics)
            mid = _median(info[j][1])
            stop = next((i for i in range(mid, last[m] + 1) if stacks[i] != parent and m not in stacks[i]), last[m] + 1)
        attached.append([boxes[i].name for i in range(first[m], stop) if stacks[i] == parent])
    common_shape, shared = _most_common(shapes)
    counts = [len(idx) for _, idx in info]
    each = len(common_shape)
    kernels = [tuple(_sig_key(boxes[i]) for i in idx) for _, idx in info]
    if shared:
        common, same_kernels = _most_common([k for k, sh in zip(kernels, shapes) if sh == common_shape])
        same = "kernels" if same_kernels else "kinds"
        differs = [
            m for m, k, sh in zip(modules, kernels, shapes) if sh != common_shape or (same == "kernels" and k != common)
        ]
    else:
        same, differs = "modules", []
    typical = next(idx for (_, idx), sh in zip(info, shapes) if sh == common_shape)
    kinds = dict(Counter(boxes[i].kind for i in typical).most_common())
    if same == "modules":
        summary = f"{label} ×{len(modules)}: the same sub-modules, "
        summary += f"{min(counts)}-{max(counts)} fused nodes each (the fused nodes differ)"
    else:
        summary = f"{label} ×{len(modules)}: {plural(each, 'fused node')} each, same "
        summary += "kernels" if same == "kernels" else "modules and kernel kinds"
    if differs:  # each one named says how it differs: "h.1, h.2 (11 fused nodes)" read as both having 11
        n_of, shape_of = dict(zip(modules, counts)), dict(zip(modules, shapes))

        def how(m: str) -> str:
            if n_of[m] != each:
                return plural(n_of[m], "fused node")
            return "other kernels" if shape_of[m] == common_shape else "other kernel kinds"

        named = [f"{_short(m, label)} ({how(m)})" for m in differs]
        summary += f" except in {len(differs)} of {len(modules)}: " + ", ".join(named[:3])
        summary += ", …" if len(differs) > 3 else ""
    if same == "kinds":
        summary += "; the kernels differ"
    n_att = [len(a) for a in attached]
    if any(n_att):
        owner = parent[-1] if parent else "the top level"
        usual, shared = _most_common(n_att)
        usual = usual if shared else 0  # no count more common than another: say where they run
        odd = [(m, k) for m, k in zip(modules, n_att) if k != usual]
        more = ", …" if len(odd) > 3 else ""
        if usual:
            summary += f"; + {plural(usual, 'fused node')} of {owner} run in each"
            if odd:
                summary += " (" + ", ".join(f"{k} in {_short(m, label)}" for m, k in odd[:3]) + more + ")"
        else:
            where = ", ".join(_short(m, label) for m, _ in odd[:3]) + more
            runs = "runs" if sum(n_att) == 1 else "run"
            summary += f"; + {plural(sum(n_att), 'fused node')} of {owner} {runs} among them (in {where})"
    away = [(m, apart[m]) for m in modules if apart.get(m)]
    if away:
        n_away = sum(k for _, k in away)
        whose = ", ".join(_short(m, label) for m, _ in away[:3]) + (", …" if len(away) > 3 else "")
        # "+": not in the count of fused nodes each (layers.0 "14-16 fused nodes each" expanded shows its 16 and this 1)
        summary += (
            f"; + {plural(n_away, 'fused node')} of {whose} {'runs' if n_away == 1 else 'run'} apart from the rest"
        )
    return ModuleRepeat(
        key=REPEAT_PREFIX + label,
        label=label,
        parent=parent[-1] if parent else "",
        modules=modules,
        attached=attached,
        nodes_each=each,
        kinds=kinds,
        same=same,
        differs=differs,
        summary=summary,
    )


def group_paths(boxes: Sequence[FusedNode], repeats: Sequence[ModuleRepeat]) -> dict[str, list[str]]:
    """Fused node name -> the groups it folds into, outermost first, for the nodes where that is not
    its ``module_stack``: a repeat's key goes before its instance; an attached node gets the instance."""
    where: dict[str, tuple[str, str]] = {}  # instance -> (repeat key, parent)
    attached: dict[str, str] = {}
    for r in repeats:
        for m, att in zip(r.modules, r.attached):
            where[m] = (r.key, r.parent)
            for a in att:
                attached[a] = m
    out: dict[str, list[str]] = {}
    for n in boxes:
        st = list(n.module_stack)
        if n.name in attached:
            m = attached[n.name]
            # the instance's own path: the attached node's stack is its parent's
            st = st + [m]
        if not any(m in where for m in st):
            continue
        path = []
        for m in st:
            if m in where:
                path.append(where[m][0])
            path.append(m)
        out[n.name] = path
    return out


def _shown(paths: Sequence[Sequence[str]], expanded: set) -> tuple[int, dict[str, list[int]]]:
    """How many boxes the graph shows with ``expanded`` open, and the members of each group box."""
    groups: dict[str, list[int]] = {}
    loose = 0
    for i, p in enumerate(paths):
        g = next((m for m in p if m not in expanded), None)
        if g is None:
            loose += 1
        else:
            groups.setdefault(g, []).append(i)
    return loose + len(groups), groups


def rows_for(fit: int) -> int:
    """The rows of the graph's column a screen of ``fit`` boxes shows."""
    return fit * BOX_PX // ROW_PX


def box_edges(boxes: Sequence[FusedNode], edges: Sequence[FusionEdge]) -> list[tuple[int, int]]:
    """``(i, j)``: box ``j`` reads what box ``i`` (``i < j``, indexes into ``boxes``) writes: the compile's
    fused-node edges (``Compile.edges``, glue passed through as the graph draws them)."""
    at = {n.name: i for i, n in enumerate(boxes)}
    out = set()
    for e in edges:
        if e.kind == "node":
            i, j = at.get(e.source), at.get(e.target)
            if i is not None and j is not None and i < j:
                out.add((i, j))
    return sorted(out)


def rows(paths: Sequence[Sequence[str]], edges: Sequence[tuple[int, int]], expanded) -> int:
    """The rows the graph shows with ``expanded`` open: its longest chain of boxes, each shown box (a group or a
    loose node) placed below every box it reads from that runs before it (by its middle member: a node a fusion
    moved far from the rest of its group does not move the group), as Graphviz ranks a graph, the edges that run
    back up reversed."""
    opened = set(expanded)
    item: list = []
    members: dict = {}
    for i, p in enumerate(paths):
        g = next((m for m in p if m not in opened), None)
        item.append(i if g is None else g)
        members.setdefault(item[-1], []).append(i)
    at = {it: idx[len(idx) // 2] for it, idx in members.items()}
    preds: dict = {}
    for a, b in edges:
        ia, ib = item[a], item[b]
        if ia != ib and at[ia] != at[ib]:
            lo, hi = (ia, ib) if at[ia] < at[ib] else (ib, ia)
            preds.setdefault(hi, set()).add(lo)
    rank: dict = {}
    for it in sorted(at, key=at.__getitem__):
        rank[it] = 1 + max((rank[p] for p in preds.get(it, ())), default=0)
    return max(rank.values(), default=0)


def _greedy(paths: Sequence[Sequence[str]], limit: int) -> tuple[list[str], int]:
    """Expand the largest group (ties: the one run first) whose boxes still fit in ``limit`` (a group shown
    as one box either way always opens: its kernel says more than its module's name), until none does:
    the groups expanded, in that order, and the boxes shown."""
    expanded, count, _ = _greedy_run(paths, limit)
    return expanded, count


def _greedy_run(paths: Sequence[Sequence[str]], limit: int) -> tuple[list[str], int, int]:
    """:func:`_greedy`, and the largest limit for which it takes the same steps: each group passed over on the
    way did not fit, and would not fit in any limit below the boxes it needed (the group taken at each step
    fits in any larger limit), so every limit from ``limit`` to that one gives the same opening.

    What :func:`_shown` gives after each step is kept up to date instead of made again: opening a group moves
    only its members, each to the next unopened group of its path (or loose); a group's inner boxes are counted
    again only when its members changed. (A 12-layer GPT-2 compile: 1.6 s -> a few ms of an import.)"""
    expanded: list[str] = []
    opened: set[str] = set()
    count, groups = _shown(paths, opened)
    loose = count - len(groups)
    inner_of: dict[str, int] = {}  # group -> its inner boxes, while its members are unchanged
    until = 1 << 62  # no group passed over: the same opening for any larger limit
    while True:
        for g, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
            n_inner = inner_of.get(g)
            if n_inner is None:
                inner = set()
                for i in members:
                    p = paths[i]
                    k = list(p).index(g) + 1
                    inner.add(p[k] if k < len(p) else ("node", i))
                n_inner = inner_of[g] = len(inner)
            if n_inner == 1 or count + n_inner - 1 <= limit:  # a group of one box opens for free
                expanded.append(g)
                opened.add(g)
                del groups[g]
                touched = set()
                for i in members:  # each to the first group of its path not open (those before g are)
                    p = list(paths[i])
                    nxt = next((m for m in p[p.index(g) + 1 :] if m not in opened), None)
                    if nxt is None:
                        loose += 1
                    else:
                        groups.setdefault(nxt, []).append(i)
                        touched.add(nxt)
                for t in touched:
                    groups[t].sort()
                    inner_of.pop(t, None)
                count = loose + len(groups)
                break
            until = min(until, count + n_inner - 2)  # passed over: it fits from count + n_inner - 1 boxes
        else:
            return expanded, count, until


def openings(paths: Sequence[Sequence[str]], edges=None) -> list[ModuleOpening]:
    """The expansion a graph opens with on a screen of ``fit`` boxes, for every ``fit`` from MIN_FIT to
    OPEN_LIMIT where it changes. ``paths``: each box's groups, outermost first (``group_path`` or
    ``module_stack``). A graph of at most two screens (or ALWAYS_EXPANDED boxes) opens all expanded; else
    with the deepest expansion that fills one screen (the largest groups first); where none does, the
    fewest boxes if they fit two screens (GPT-2's embedding, first block, repeated blocks, head: 12 boxes
    for 9), else (too many boxes outside any module, where collapsing only hides them) at most
    OPEN_LIMIT boxes. With ``edges`` (:func:`box_edges`), the rows too: a screen opens with the last of those
    openings planned for it or a smaller one whose rows (:func:`rows`) it shows (:func:`rows_for`; the first
    where none does): boxes in one column are taller than boxes side by side."""
    every: list[str] = []
    seen: set[str] = set()
    for p in paths:
        for m in p:
            if m not in seen:
                seen.add(m)
                every.append(m)
    out: list[ModuleOpening] = []
    runs: list[tuple[int, int, tuple[list[str], int]]] = []  # (limit, the last limit it holds for, opening)

    def greedy(limit: int) -> tuple[list[str], int]:
        for lo, hi, found in runs:  # the fits go up: most are answered by the run of a smaller one
            if lo <= limit <= hi:
                return found
        expanded, boxes, until = _greedy_run(paths, limit)
        runs.append((limit, until, (expanded, boxes)))
        return expanded, boxes

    for fit in range(MIN_FIT, OPEN_LIMIT + 1):
        if len(paths) <= max(ALWAYS_EXPANDED, 2 * fit):
            expanded, boxes = every, len(paths)
        else:
            expanded, boxes = greedy(fit)
            if boxes > 2 * fit:  # more than two screens even collapsed: collapsing only hides boxes
                expanded, boxes = greedy(OPEN_LIMIT)
        if not out or set(out[-1].expanded) != set(expanded):
            order = {m: i for i, m in enumerate(every)}
            out.append(ModuleOpening(fit=fit, expanded=sorted(expanded, key=order.__getitem__), boxes=boxes))
        if expanded is every:
            break
    return out if edges is None else _by_rows(out, paths, edges)


def _by_rows(planned: list[ModuleOpening], paths: Sequence[Sequence[str]], edges) -> list[ModuleOpening]:
    """The openings by screen size where each screen shows the rows of its opening: for each ``fit``, the last
    of ``planned`` up to it whose rows fit ``rows_for(fit)`` (a graph small enough to open whole keeps that)."""
    tall = [rows(paths, edges, o.expanded) for o in planned]
    out: list[ModuleOpening] = []
    k = 0
    for fit in range(MIN_FIT, OPEN_LIMIT + 1):
        while k + 1 < len(planned) and planned[k + 1].fit <= fit:
            k += 1
        pick = k
        if len(paths) > max(ALWAYS_EXPANDED, 2 * fit):
            while pick > 0 and tall[pick] > rows_for(fit):
                pick -= 1
        o = planned[pick]
        if not out or out[-1].expanded != o.expanded:
            out.append(ModuleOpening(fit=fit, expanded=list(o.expanded), boxes=o.boxes))
    return out


def module_view(
    fused: Sequence[FusedNode],
    edges: Sequence[FusionEdge],
    runs: Optional[dict[str, str]] = None,
    calls: Optional[dict[str, list[Optional[int]]]] = None,
) -> tuple[ModuleView, dict[str, list[str]]]:
    """The ``ModuleView`` of a compile's fused nodes and the ``group_path`` of each node that has one; ``edges``:
    the compile's (``Compile.edges``), for the rows each opening shows; ``runs``: each fused node computed by a
    kernel call with others, the call's first node (``Kernel.call_sites``): the graph draws such nodes as one box
    where they are not folded into a group, and the openings count them so; ``calls``: each fused node's call of
    each module of its stack (:func:`node_calls`), for the modules called several times."""
    boxes = [n for n in fused if not n.is_glue]
    repeats = find_repeats(boxes)
    gp = group_paths(boxes, repeats)
    called = module_calls(boxes, calls or {})
    if called:
        gp = _with_calls(boxes, gp, calls or {}, called)
    paths = [gp.get(n.name) or n.module_stack for n in boxes]
    unit, shown = _units(boxes, paths, runs or {})
    unit_edges = sorted({(unit[i], unit[j]) for i, j in box_edges(boxes, edges) if unit[i] != unit[j]})
    return ModuleView(repeats=repeats, openings=openings(shown, unit_edges), calls=called), gp


def node_calls(fused: Sequence[FusedNode], ops: dict[str, GraphNode]) -> dict[str, list[Optional[int]]]:
    """Each fused node's call of each module of its ``module_stack`` (same length), where its ops say one: the call
    most of its results (its ``fx_nodes``, by name in ``ops``, that no other of them reads: what it writes, as
    ``module_paths.node_stack`` files it) in that module were made in (``GraphNode.module_calls``); ``None`` where no
    result with a recorded call is in that module (an op whose module the lens inferred: the sum of a bias's
    gradients over every call) or two calls tie. Nodes none of whose results record a call (every module called
    once, torch 2.11, a report made before calls were read) are left out."""
    out: dict[str, list[Optional[int]]] = {}
    for n in fused:
        mine = [g for g in (ops.get(x) for x in n.fx_nodes) if g is not None]
        read = {i for g in mine for i in g.inputs}
        results = [g for g in mine if g.name not in read and len(g.module_calls) == len(g.module_stack) > 0]
        if not n.module_stack or not results:
            continue
        row: list[Optional[int]] = []
        for d, m in enumerate(n.module_stack):
            votes = Counter(g.module_calls[d] for g in results if len(g.module_stack) > d and g.module_stack[d] == m)
            top = votes.most_common(2)
            row.append(top[0][0] if top and (len(top) == 1 or top[1][1] < top[0][1]) else None)
        out[n.name] = row
    return out


def call_key(module: str, call: int) -> str:
    """The group key of one call of ``module``: ``cell@2`` (dynamo's own ``<id>@2``; no module path holds an ``@``)."""
    return f"{module}@{call}"


def module_calls(boxes: Sequence[FusedNode], calls: dict[str, list[Optional[int]]]) -> list[ModuleCalls]:
    """The modules whose boxes (fused nodes drawn as boxes) come from two calls or more (``calls``: each box's call
    of each module of its stack, :func:`node_calls`), outermost first, each with its calls in call order.

    >>> b = [FusedNode(name=f"op{i}", kind="extern", module_stack=["cell"]) for i in range(3)]
    >>> [(c.summary, c.labels) for c in module_calls(b, {"op0": [0], "op1": [1], "op2": [2]})]
    [('cell · 3 calls', ['cell · call 1 of 3', 'cell · call 2 of 3', 'cell · call 3 of 3'])]
    >>> module_calls(b, {"op0": [0], "op1": [0]})
    []
    """
    seen: dict[str, set[int]] = {}
    depth: dict[str, int] = {}
    for n in boxes:
        for d, (m, c) in enumerate(zip(n.module_stack, calls.get(n.name) or ())):
            if c is not None:
                seen.setdefault(m, set()).add(c)
                depth.setdefault(m, d)
    out = []
    for m in sorted(seen, key=lambda m: depth[m]):
        every = sorted(seen[m])
        if len(every) < 2:
            continue
        out.append(
            ModuleCalls(
                module=m,
                keys=[call_key(m, c) for c in every],
                labels=[f"{m} · call {k} of {len(every)}" for k in range(1, len(every) + 1)],
                summary=f"{m} · {len(every)} calls",
            )
        )
    return out


def _with_calls(
    boxes: Sequence[FusedNode], gp: dict[str, list[str]], calls: dict[str, list[Optional[int]]], called: list
) -> dict[str, list[str]]:
    """``gp`` (group paths) with each box's call of each module of ``called`` after that module in its path."""
    several = {c.module for c in called}
    out = dict(gp)
    for n in boxes:
        mine = dict(zip(n.module_stack, calls.get(n.name) or ()))
        path = gp.get(n.name) or list(n.module_stack)
        if not any(m in several and mine.get(m) is not None for m in path):
            continue
        new: list[str] = []
        for m in path:
            new.append(m)
            if m in several and mine.get(m) is not None:
                new.append(call_key(m, mine[m]))
        out[n.name] = new
    return out


def _units(boxes: Sequence[FusedNode], paths: Sequence[Sequence[str]], runs: dict[str, str]):
    """The boxes as the openings count them: the fused nodes of one kernel call (``runs``) with the same groups
    are one box (14 input copies in one kernel: one box, as the graph draws them); each other fused node its own.
    Returns each fused node's unit index and each unit's groups, in order of first appearance. (Members of one call
    in different groups stay apart even once those groups are open: where the graph draws them as one box, the
    count is a little high.)"""
    at: dict = {}
    unit: list[int] = []
    shown: list[Sequence[str]] = []
    for n, p in zip(boxes, paths):
        key = (runs[n.name], tuple(p)) if n.name in runs else n.name
        if key not in at:
            at[key] = len(shown)
            shown.append(p)
        unit.append(at[key])
    return unit, shown
