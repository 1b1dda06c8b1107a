"""Module paths inferred where a graph recorded none (torch-free): a TORCH_TRACE import, whose printed graphs hold
no nn.Module stack, or the backward of a report recorded before the capture read ``fwd_nn_module_stack``, and
(:func:`fill_backward`) the ops of a live backward that torch tied to no forward op.

Every piece of evidence says a *prefix* of an op's true module stack, and the op gets no deeper path than the
evidence gives:

- an op that reads a parameter or buffer, or a value made from one module's parameters alone (its view, its
  cast), runs in the module that owns it (``h.0.attn.qkv.weight``: ``h.0.attn.qkv``);
- in a backward, the op that makes a parameter's gradient runs in that parameter's module (a backward's outputs
  are the gradients of its forward's inputs, in order; compiled autograd's, the new ``.grad`` of the parameters its
  ``forward_inputs`` name); an op that reads an activation its forward saved is the backward (or the recomputation)
  of the forward op that made it or of one that used it: it runs in the common prefix of their modules (not under
  compiled autograd, whose graph holds no forward of its own);
- a tied parameter (``lm_head.weight`` is ``transformer.wte.weight``: the graph names it by its first owner
  only) runs where its line calls it: an op that reads it on a line that calls ``self.lm_head(...)``, a module
  that is none of the owner's path, runs in ``lm_head`` (under the module its neighbours share), and the
  parameter's gradient, summed over the modules that use it, in their common prefix;
- in a backward, a forward op recomputed (the partitioner keeps its name, op and inputs) runs where the forward
  ran it; an ``add`` of two gradients (autograd's sum of the gradients of a value used twice) runs in no
  module: torch records none for it, and its neighbours say nothing about it;
- an op with a recorded module path keeps it, and is evidence for its neighbours;
- an op between two ops with evidence, in the graph's order, runs in the common prefix of theirs: a module's call
  is contiguous in the order its graph runs. The GELU between ``h.0.mlp.0`` and ``h.0.mlp.2`` is in ``h.0.mlp``,
  the residual add between ``h.0.attn.proj`` and ``h.0.ln_2`` in ``h.0``.

Facts about one op that form a chain (each a prefix of the next) give the deepest; facts that disagree (a weight
shared by two modules) give their common prefix. A path becomes a stack of the modules whose forward ran: its
dotted prefixes, less a numbered container of modules with modules of their own (``h`` of ``h.0.attn``: an
``nn.ModuleList`` is never called); a path that a recorded stack holds takes that stack.

A fused node gets the module of what it writes (:func:`node_stack`, the capture's rule); one linked to
no op with a module (a TORCH_TRACE backward: torch logs no provenance map for it) gets one from the parameters it
reads and its neighbours in run order, by the same rules. :func:`infer_modules` fills a compile where fewer than
``MISSING_SHARE`` of its post-grad ops have a recorded module, never changing a recorded path, and sets
``Compile.modules_inferred`` where it inferred any.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from typing import Any, Container, Iterable, Mapping, Optional, Sequence

from .model import Compile, FusedNode, Graph, GraphNode
from .rules import GLUE_OPS

Stack = tuple[str, ...]

#: A compile whose post-grad ops have a recorded module path for fewer than this share of them gets the
#: others inferred (a live capture records one for nearly all; the ops of its top-level function have none).
MISSING_SHARE = 0.5
#: Roles of graph inputs owned by a module.
OWNED = ("parameter", "buffer")


def common_prefix(a: Sequence[str], b: Sequence[str]) -> Stack:
    """The longest stack both ``a`` and ``b`` start with."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return tuple(a[:n])


def combine(facts: Iterable[Sequence[str]]) -> Stack:
    """What several prefixes of one stack say together: the deepest where they form a chain, else (they
    disagree) their common prefix."""
    known = [tuple(f) for f in facts if f]
    if not known:
        return ()
    deepest = max(known, key=len)
    if all(deepest[: len(f)] == f for f in known):
        return deepest
    out = known[0]
    for f in known[1:]:
        out = common_prefix(out, f)
    return out


def majority_stack(stacks: Iterable[Optional[Sequence[str]]]) -> list[str]:
    """The deepest module path that more than half of the ops (those with a module) sit in.

    A fused node often takes an op or two from a neighbouring module (a residual add fused into the next
    block's layer norm); the strict common prefix would then be empty and the node could not be grouped
    with the module that produced most of it."""
    known = [list(s) for s in stacks if s]
    if not known:
        return []
    prefix: list[str] = []
    while True:
        depth = len(prefix)
        counts: dict[str, int] = {}
        for s in known:
            if len(s) > depth and s[:depth] == prefix:
                counts[s[depth]] = counts.get(s[depth], 0) + 1
        if not counts:
            return prefix
        best, n = max(counts.items(), key=lambda kv: (kv[1], -len(kv[0])))
        if 2 * n <= len(known):
            return prefix
        prefix = prefix + [best]


def node_stack(
    members: Sequence[Sequence[str]],
    stacks: Mapping[str, Any],
    inputs: Mapping[str, Sequence[str]],
    top: Container[str] = (),
) -> list[str]:
    """The module a fused node runs in: the one most of its results were made in (:func:`majority_stack`).

    ``members``: each pre-fusion node's post-grad ops (one list where torch logged no pre-fusion nodes: a
    TORCH_TRACE import); ``inputs``: each op's inputs. A member's results are its ops that no other op of it
    reads: what it writes. A kernel recomputes what it inlines: on a CPU, each layer norm's kernel adds the
    residual chain again (the embedding and every earlier block's ``x + f(x)``), so most of a late block's
    statistics node's ops are the earlier blocks'; by a vote of all ops, blocks.1's layer norm was filed under
    blocks.0. Results of several modules and no majority (one kernel making the causal masks of three layers) give
    the top level. ``top``: the ops known to run at the top level (a line of the user's code, no module): a node
    whose results are all among them is the top level's, so a KV cache's ``torch.cat`` in the model's own forward,
    which inlines the view of the ``qkv`` linear's output it appends, is not ``qkv``'s (a top-level op fused with a
    module's, a ``torch.relu`` of the forward's own in a batch norm's backward kernel, leaves the module's vote as it
    is). Where no result has a module or is known to be the top level's (an op of an imported trace), all ops vote."""
    results = []
    for ops in members:
        mine = set(ops)
        read = {i for x in ops for i in inputs.get(x, ()) if i in mine}
        results += [x for x in ops if x not in read]
    if any(stacks.get(x) for x in results):
        return majority_stack(stacks.get(x) for x in results)
    if results and all(x in top for x in results):
        return []
    return majority_stack(stacks.get(x) for m in members for x in m)


def missing(c: Compile) -> bool:
    """Whether ``c`` lacks module paths: fewer than ``MISSING_SHARE`` of its post-grad ops have one."""
    post = c.graphs.get("post_grad")
    ops = [n for n in post.nodes if n.op == "call_function"] if post is not None else []
    return bool(ops) and sum(1 for n in ops if n.module_stack) < MISSING_SHARE * len(ops)


def owner(node: GraphNode) -> str:
    """The module that owns a parameter or buffer input (``h.0.attn.qkv`` for ``h.0.attn.qkv.weight``), ``""``
    for another node or one owned by the root module."""
    if node.op != "placeholder" or node.role not in OWNED:
        return ""
    return node.display_name.rpartition(".")[0]


class _Paths:
    """Module path -> the stack of modules whose forward ran around it (see the module's docstring)."""

    def __init__(self, paths: Iterable[str], recorded: Iterable[Sequence[str]]):
        self.known: dict[str, Stack] = {}
        for st in recorded:
            for i, m in enumerate(st):
                self.known.setdefault(m, tuple(st[: i + 1]))
        self.kids: dict[str, set] = defaultdict(set)
        for p in [*paths, *self.known]:
            parts = p.split(".")
            for i in range(1, len(parts)):
                self.kids[".".join(parts[:i])].add(parts[i])
        self.cache: dict[str, Stack] = {}

    def _container(self, path: str) -> bool:
        kids = self.kids.get(path)
        return bool(kids) and all(k.isdigit() and f"{path}.{k}" in self.kids for k in kids)

    def stack(self, path: str) -> Stack:
        if not path:
            return ()
        if path in self.known:
            return self.known[path]
        if path not in self.cache:
            head = path.rpartition(".")[0]
            base = self.stack(head)
            self.cache[path] = base if self._container(path) else (*base, path)
        return self.cache[path]


def _between(order: Sequence[str], own: dict[str, Stack]) -> dict[str, Stack]:
    """Each item of ``order`` -> the common prefix of the nearest items before and after it that have evidence
    of their own (``own``); none before the first or after the last."""
    before: list[Optional[Stack]] = []
    last: Optional[Stack] = None
    for name in order:
        before.append(last)
        if name in own:
            last = own[name]
    out: dict[str, Stack] = {}
    after: Optional[Stack] = None
    for i in range(len(order) - 1, -1, -1):
        name = order[i]
        prev = before[i]
        if prev is not None and after is not None:
            cp = common_prefix(prev, after)
            if cp:
                out[name] = cp
        if name in own:
            after = own[name]
    return out


def _displaced(order: Sequence[str], own: dict[str, Stack]) -> set:
    """Items whose evidence breaks the contiguity of module calls: a run of items with the same evidence whose
    neighbours on both sides share a deeper module with each other than with it (a forward op recomputed in the
    middle of another layer's backward, ``model.rotary_emb`` between two ops of ``model.layers.31.self_attn``).
    Their evidence is their own, and none for the items around them."""
    runs: list[tuple[Stack, list[str]]] = []
    for name in order:
        if name in own:
            if runs and runs[-1][0] == own[name]:
                runs[-1][1].append(name)
            else:
                runs.append((own[name], [name]))
    out: set = set()
    for (prev, _), (st, names), (nxt, _) in zip(runs, runs[1:], runs[2:]):
        deep = len(common_prefix(prev, nxt))
        if deep > len(common_prefix(prev, st)) and deep > len(common_prefix(st, nxt)):
            out.update(names)
    return out


def _fill(order: Sequence[str], own: dict[str, Stack]) -> dict[str, Stack]:
    """``own`` evidence of each item combined with what its neighbours say (:func:`_between`, leaving out the
    :func:`_displaced` ones)."""
    off = _displaced(order, own)
    around = _between(order, {k: v for k, v in own.items() if k not in off})
    out = {}
    for name in order:
        st = combine([own.get(name, ()), around.get(name, ())])
        if st:
            out[name] = st
    return out


def _made_from_weights(graph: Graph, paths: _Paths) -> dict[str, Stack]:
    """Node name -> the module of the parameters and buffers it is made from alone: the inputs themselves, and
    ops (a view, a permute, a cast) whose every input is made from one module's."""
    out: dict[str, Stack] = {}
    for n in graph.nodes:
        if n.op == "placeholder":
            st = paths.stack(owner(n))
            if st:
                out[n.name] = st
        elif n.op == "call_function" and n.inputs and all(i in out for i in n.inputs):
            found = {out[i] for i in n.inputs}
            if len(found) == 1:
                out[n.name] = found.pop()
    return out


_CALL = re.compile(r"\bself\.(\w+)\s*\(")


def _called(n: GraphNode) -> set:
    """The attributes of ``self`` that ``n``'s line calls (``lm_head`` of ``logits = self.lm_head(x)``: torch prints
    the caller's line for an op of a module whose ``forward`` is torch's own)."""
    return set(_CALL.findall(n.user_stack[-1].code)) if n.user_stack else set()


def _tied(graph: Graph, weights: dict[str, Stack]) -> dict[str, str]:
    """Op name -> the module it calls, for an op made from a parameter (or reading one) on a line that calls a
    module none of the parameter owner's path names (``self.lm_head(x)`` reading ``transformer.wte.weight``): a
    tied parameter, which the graph names by its first owner only, used by another module. Where the line calls
    several (``self.lm_head(self.ln_f(x))``), the one no module of the graph's parameters is named as: the others
    run ops of their own. An op whose line calls its parameter's owner (``self.ln_1`` of ``x + self.attn(self.ln_1(x))``)
    is the owner's."""
    known = {p.rpartition(".")[2] for st in weights.values() for p in st}
    out: dict[str, str] = {}
    for n in graph.nodes:
        owners = [weights[i][-1] for i in n.inputs if i in weights] if n.op == "call_function" else []
        names = _called(n) if owners else set()
        if any(c in o.split(".") for c in names for o in owners):
            continue  # the owner's own call (``self.ln_1`` of ``x + self.attn(self.ln_1(x))``)
        if len(names) > 1:
            names -= known
        if len(names) == 1:
            out[n.name] = names.pop()
    return out


def _shared(forward: Graph, paths: _Paths) -> dict[str, Stack]:
    """A forward's parameter used by modules besides its owner (:func:`_tied`, on the forward already inferred) ->
    the common prefix of its owner and those modules: where its gradient, their sum, is made."""
    weights = _made_from_weights(forward, paths)
    made: dict[str, set] = {}  # node -> the parameters it is made from alone
    for n in forward.nodes:
        if n.op == "placeholder" and n.name in weights:
            made[n.name] = {n.name}
        elif n.name in weights:
            made[n.name] = set().union(*(made.get(i, set()) for i in n.inputs))
    by_name = {n.name: n for n in forward.nodes}
    out: dict[str, Stack] = {}
    for name in _tied(forward, weights):
        for p in set().union(*(made.get(i, set()) for i in by_name[name].inputs)):
            out[p] = common_prefix(out.get(p, weights[p]), by_name[name].module_stack)
    return out


def _recomputed(backward: Graph, forward: Graph) -> dict[str, Stack]:
    """A backward's op that recomputes a forward op (the partitioner keeps the joint graph's name, the op and its
    inputs) -> the module the forward ran it in, which the capture records for it (``fwd_nn_module_stack``)."""
    fwd = {n.name: n for n in forward.nodes if n.op == "call_function"}
    out: dict[str, Stack] = {}
    for n in backward.nodes:
        f = fwd.get(n.name) if n.op == "call_function" else None
        if f is not None and (f.target, f.inputs) == (n.target, n.inputs):
            out[n.name] = tuple(f.module_stack)
    return out


def _gradient_sums(backward: Graph) -> set:
    """A backward's ``add`` ops of two gradients (values made from its tangents): autograd's sum of the gradients
    of a value used twice, which torch ties to no forward op, so the capture records no module for it."""
    grad = {n.name for n in backward.nodes if n.op == "placeholder" and n.role == "tangent"}
    out = set()
    for n in backward.nodes:
        if n.op != "call_function" or not any(i in grad for i in n.inputs):
            continue
        grad.add(n.name)
        if n.short_op == "add" and len(n.inputs) == 2 and all(i in grad for i in n.inputs):
            out.add(n.name)
    return out


def _gradients(
    backward: Graph,
    forward: Optional[Graph],
    paths: _Paths,
    of: Sequence[str] = (),
    shared: Mapping[str, Stack] = {},
) -> dict[str, Stack]:
    """Backward node name -> the module of the parameter it is the gradient of: the backward's outputs, without
    its ``None`` ones, are the gradients of the forward's parameters in order (nothing when the counts differ:
    a frozen parameter, an input that needs a gradient); a view's input used by nothing else is it too. ``of``
    (compiled autograd's backward, ``forward`` None): the parameter whose gradient each place of its return holds
    (``Compile.forward_inputs``), ``""`` where none. ``shared``: a forward parameter used by several modules -> where
    its gradient is made (:func:`_shared`)."""
    out_node = next((n for n in backward.nodes if n.op == "output"), None)
    if forward is None:
        returns = out_node.returns if out_node is not None else []
        if len(returns) != len(of):
            return {}
        pairs = [(name, p.rpartition(".")[0]) for name, p in zip(returns, of) if name and p]
    else:
        params = [n for n in forward.nodes if n.op == "placeholder" and n.role == "parameter"]
        outs = out_node.inputs if out_node is not None else []
        if not params or len(outs) != len(params):
            return {}
        pairs = [(o, shared[p.name] if p.name in shared else owner(p)) for o, p in zip(outs, params)]
    by_name = {n.name: n for n in backward.nodes}
    uses: dict[str, int] = defaultdict(int)
    for n in backward.nodes:
        for i in n.inputs:
            uses[i] += 1
    out: dict[str, Stack] = {}
    for name, path in pairs:
        st = path if isinstance(path, tuple) else paths.stack(path)
        seen = set()
        while st and name not in seen:
            seen.add(name)
            out[name] = combine([out.get(name, ()), st]) if name in out else st
            n = by_name.get(name)
            if n is None or n.op != "call_function" or n.short_op not in GLUE_OPS or len(n.inputs) != 1:
                break
            if uses[n.inputs[0]] != 1:
                break
            name = n.inputs[0]
    return out


def _saved(backward: Graph, forward: Graph) -> dict[str, Stack]:
    """A backward's saved input -> the common prefix of the modules of the forward op that made it and of those
    that used it (through views): the ops whose backward or recomputation reads it."""
    fwd = {n.name: n for n in forward.nodes}
    users: dict[str, list[GraphNode]] = defaultdict(list)
    for n in forward.nodes:
        for i in dict.fromkeys(n.inputs):
            users[i].append(n)
    out: dict[str, Stack] = {}
    for n in backward.nodes:
        made = fwd.get(n.name) if n.op == "placeholder" and n.role == "saved" else None
        if made is None or made.op != "call_function":
            continue
        found, todo, seen = [made], [made.name], {made.name}
        while todo:
            for u in users[todo.pop()]:
                if u.op != "call_function" or u.name in seen:
                    continue
                seen.add(u.name)
                found.append(u)
                if u.short_op in GLUE_OPS:
                    todo.append(u.name)
        st: Optional[Stack] = None
        for f in found:
            st = tuple(f.module_stack) if st is None else common_prefix(st, f.module_stack)
        if st:
            out[n.name] = st
    return out


def _op_stacks(
    graph: Graph,
    weights: dict[str, Stack],
    grads: dict[str, Stack],
    saved: dict[str, Stack],
    backward: bool,
    fixed: Mapping[str, Stack] = {},
) -> dict[str, Stack]:
    """Post-grad op name -> its stack: the recorded one, else the inferred one (where any evidence says one). In a
    backward, a recorded path is no evidence for the ops around it: the ops that have one there are forward ops
    recomputed where the backward needs them (a rotary embedding's ``cos``, recorded in ``model.rotary_emb``, in
    the middle of ``model.layers.31``'s backward). ``fixed``: ops whose stack is known otherwise (a recomputed
    forward op, a sum of gradients), no evidence for their neighbours either. An op of a tied parameter
    (:func:`_tied`) reads no evidence from it: it runs in the module its line calls, under the one its neighbours
    share."""
    ops = [n for n in graph.nodes if n.op == "call_function"]
    tied = _tied(graph, weights)
    own: dict[str, Stack] = {}
    for n in ops:
        if n.name in fixed:
            continue
        facts = [() if backward else tuple(n.module_stack), grads.get(n.name, ())]
        facts += [() if n.name in tied else weights.get(i, ()) for i in n.inputs]
        facts += [saved.get(i, ()) for i in n.inputs]
        st = combine(facts)
        if st:
            own[n.name] = st
    filled = _fill([n.name for n in ops], own)
    for name, attr in tied.items():
        if name not in fixed:
            base = filled.get(name, ())
            filled[name] = (*base, f"{base[-1]}.{attr}" if base else attr)
    filled.update(fixed)
    return {n.name: tuple(n.module_stack) if n.module_stack else filled.get(n.name, ()) for n in ops}


def _fused_stacks(
    fused: Sequence[FusedNode],
    ops: dict[str, Stack],
    inputs: dict[str, list[str]],
    weights: dict[str, Stack],
    saved: dict[str, Stack],
) -> dict[str, Stack]:
    """Fused node name -> its stack: the module of what it writes (:func:`node_stack`, the capture's rule, on its
    ops' paths, recorded or inferred: a stack the capture derived from the few ops that had one is derived
    again), else the stack it had, else (linked to no op with a module) from the parameters and saved activations
    it reads and its neighbours in run order."""
    own: dict[str, Stack] = {}
    settled: set = set()  # from its ops, or as it was: kept as it is
    for n in fused:
        # the embedding and the residual adds Inductor inlines into each later layer norm are recomputed there:
        # what a node makes is its results (an imported node's ops are one list: torch logs no pre-fusion nodes)
        st = tuple(node_stack([n.fx_nodes], ops, inputs)) or tuple(n.module_stack)
        if st:
            settled.add(n.name)
        elif not n.is_glue:
            st = combine([weights.get(r, ()) for r in n.reads] + [saved.get(r, ()) for r in n.reads])
        if st:
            own[n.name] = st
    filled = _fill([n.name for n in fused if not n.is_glue], own)
    return {n.name: own[n.name] if n.name in settled else filled.get(n.name, ()) for n in fused}


def infer_compile(c: Compile, forward: Optional[Compile] = None) -> Compile:
    """``c`` with module paths inferred for its post-grad ops and fused nodes that have none (``forward``: for a
    backward, its forward compile, already inferred where it needed it); ``c`` itself where it does not lack
    them (:func:`missing`) or nothing could be inferred. Recorded paths are kept as they are. Compiled autograd's
    backward has no forward of its own: its ``forward_inputs`` name the parameter each gradient it returns is of,
    and the saved activations it reads are no evidence (its ops recompute the forward's where the backward needs
    them, a loss's ``log_softmax`` of a linear's output reads that output: not the linear's backward)."""
    post = c.graphs.get("post_grad")
    if post is None or not missing(c):
        return c
    fwd = forward.graphs.get("post_grad") if forward is not None else None
    graphs = [post, fwd] if fwd is not None else [post]
    names = [owner(n) for g in graphs for n in g.nodes]
    paths = _Paths([p for p in names if p], [n.module_stack for g in graphs for n in g.nodes if n.module_stack])
    weights = _made_from_weights(post, paths)
    ca = c.trigger is not None and c.trigger.kind == "compiled_autograd"
    grads = (
        _gradients(post, fwd, paths, shared=_shared(fwd, paths))
        if fwd is not None and c.graph_kind == "backward"
        else _gradients(post, None, paths, c.forward_inputs)
        if ca and c.forward_inputs
        else {}
    )
    pair = fwd is not None and c.graph_kind == "backward"
    saved = _saved(post, fwd) if pair else {}
    fixed = {**_recomputed(post, fwd), **dict.fromkeys(_gradient_sums(post), ())} if pair else {}
    ops = _op_stacks(post, weights, grads, saved, c.graph_kind == "backward", fixed)
    fused = _fused_stacks(c.fused_nodes, ops, {n.name: n.inputs for n in post.nodes}, weights, saved)
    nodes = [
        dataclasses.replace(n, module_stack=list(ops[n.name]))
        if n.op == "call_function" and not n.module_stack and ops[n.name]
        else n
        for n in post.nodes
    ]
    fused_nodes = [
        dataclasses.replace(n, module_stack=list(fused[n.name])) if list(fused[n.name]) != n.module_stack else n
        for n in c.fused_nodes
    ]
    if all(a is b for a, b in zip(nodes, post.nodes)) and all(a is b for a, b in zip(fused_nodes, c.fused_nodes)):
        return c
    graph = dataclasses.replace(post, nodes=nodes)
    return dataclasses.replace(
        c, graphs=dict(c.graphs, post_grad=graph), fused_nodes=fused_nodes, modules_inferred=True
    )


def fill_backward(
    nodes: Sequence[GraphNode],
    forward: Sequence[GraphNode],
    top: Container[str] = (),
    sums: Container[str] = (),
) -> list[GraphNode]:
    """A live capture's backward post-grad ``nodes`` with a module path for the ops torch recorded none for, where
    the evidence above gives one (``forward``: its forward's post-grad nodes); the others as they are.

    AOT autograd gives a backward op the module of the forward op it differentiates (``fwd_nn_module_stack``),
    tying the two by the autograd sequence number both carry, and misses some: a forward op whose FX node carries
    the next number (a GRU cell's ``(h - n) * z``, traced after a ``clone`` that made an autograd node of its own: its
    backward ``mul`` ties to nothing), and a node a post-grad pattern put in place of others (``addmm`` for the ``mm``
    of a gradient and the sum it is added to: it copies the sum's meta, which has none). Such an op is filed by what
    it reads, as :func:`infer_compile` files an op of a graph with no paths: the parameter it reads (the ``addmm``
    reads ``weight_hh``), the gradient it makes, the saved activation it reads, its neighbours; without it a GRU
    unrolled 24 times had 69 of its backward's 145 fused nodes in no module, though all its ops are the cell's.
    ``top``: the ops torch tied to a forward op of no module (``torch.stack``'s backward ``select``): they stay at
    the top level; ``sums``: autograd's sums of two gradients (``is_gradient_acc``), in no module unless they make a
    parameter's gradient (a bias used by 24 calls: its module)."""
    ops = [n for n in nodes if n.op == "call_function"]
    if all(n.module_stack or n.name in top for n in ops):
        return list(nodes)
    post, fwd = Graph(nodes=list(nodes)), Graph(nodes=list(forward))
    names = [owner(n) for g in (post, fwd) for n in g.nodes]
    paths = _Paths([p for p in names if p], [n.module_stack for g in (post, fwd) for n in g.nodes if n.module_stack])
    grads = _gradients(post, fwd, paths, shared=_shared(fwd, paths))
    fixed = {**_recomputed(post, fwd), **{n.name: () for n in ops if n.name in top}}
    fixed.update({n.name: () for n in ops if n.name in sums and n.name not in grads})
    weights = _made_from_weights(post, paths)
    stacks = _op_stacks(post, weights, grads, _saved(post, fwd), True, fixed)
    types = {tuple(n.module_stack): n.module_types for g in (post, fwd) for n in g.nodes if n.module_types}
    filled = {n.name for n in ops if not n.module_stack and stacks.get(n.name)}
    calls = _filled_calls(nodes, stacks, filled, set(grads) | set(weights) | _across_calls(forward))
    return [
        dataclasses.replace(
            n,
            module_stack=list(stacks[n.name]),
            module_types=list(types.get(stacks[n.name], [])),
            module_calls=list(calls.get(n.name, ())),
        )
        if n.name in filled
        else n
        for n in nodes
    ]


def _across_calls(forward: Sequence[GraphNode]) -> set:
    """The forward's values that one call of a module makes and another reads (an unrolled cell's hidden state
    ``h1``, made by call 1, read by call 2): a backward op that reads them saved is no more one call's than the
    other's."""
    made = {n.name: tuple(n.module_calls) for n in forward if n.module_calls}
    out = set()
    for n in forward:
        for i in n.inputs:  # (a use in no call, the graph's output, says nothing of which call)
            if i in made and n.module_calls and tuple(n.module_calls) != made[i]:
                out.add(i)
    return out


def _filled_calls(
    nodes: Sequence[GraphNode], stacks: Mapping[str, Stack], filled: Container[str], shared: Container[str]
) -> dict[str, tuple[int, ...]]:
    """Op name -> its calls of its modules (``GraphNode.module_calls``), for the backward ops :func:`fill_backward`
    filed in a module (``filled``), where the evidence gives one call: the calls of the inputs torch ties to the
    forward (a saved activation, an op AOT autograd tied to its forward op) where they all agree, else those of
    the filed ops before it that it reads, where they all agree. An input of another module, one of no call, and
    ``shared`` ones are no evidence: a weight and its views (read by every call), a value one call makes and another
    reads (:func:`_across_calls`), and a parameter's gradient, summed over every call, which stays in no call. A GRU cell unrolled 3 times: the ``mul`` of ``(h - n) * z``'s backward
    reads call 2's saved ``sub_2`` (call 2); the ``addmm`` of the hidden state's gradient reads call 2's ``cat`` and
    the weight (call 2); the ``addmm`` that adds call 1's part of ``W_ih``'s gradient to call 2's reads both: no call.
    An op that reads call 1's saved gate and the gradient call 2's backward passed it is call 1's: the saved tensor
    says which call's backward it is; the gradient comes from the call after it."""
    by_name = {n.name: n for n in nodes}
    out: dict[str, tuple[int, ...]] = {}

    def call_of(name: str, st: Stack) -> Optional[tuple[int, ...]]:
        n = by_name.get(name)
        if n is None or name in shared or tuple(n.module_stack[: len(st)]) != st:
            return None
        have = tuple(n.module_calls) if name not in out else out[name]
        return have[: len(st)] if len(have) >= len(st) else None

    for n in nodes:
        st = tuple(stacks.get(n.name, ()))
        if n.name not in filled or n.name in shared or not st:
            continue
        tied = {call_of(i, st) for i in n.inputs if i not in out and i not in filled}
        found = {c for c in tied if c is not None}
        if not found:
            found = {c for c in (call_of(i, st) for i in n.inputs if i in out) if c is not None}
        if len(found) == 1:
            out[n.name] = found.pop()
    return out


def infer_modules(compiles: Sequence[Compile], forward_of: dict[str, str]) -> list[Compile]:
    """``compiles`` with :func:`infer_compile` run on each, forwards first: a backward reads its forward's module
    paths (``forward_of``: backward id -> its forward's id, as ``finish.pair_backward`` pairs them)."""
    done: dict[str, Compile] = {}
    for c in compiles:
        if c.graph_kind != "backward":
            done[c.id] = infer_compile(c)
    for c in compiles:
        if c.graph_kind == "backward":
            f = forward_of.get(c.id)
            done[c.id] = infer_compile(c, done.get(f) if f is not None else None)
    return [done[c.id] for c in compiles]
