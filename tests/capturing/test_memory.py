"""Compile.memory from real CPU compiles, checked against torch's own record: the backward graph AOT autograd
logs (its inputs other than tangents are exactly what the forward saved), hand-computed bytes, and the
allocations of Inductor's output code."""

import logging
import math
import re
import sys

import pytest

import inductor_lens

_SIG = re.compile(r'^\s+(\w+): "(\w+)\[([^\]]*)\]', re.M)
_DTYPES = {
    "f32": ("float32", 4),
    "bf16": ("bfloat16", 2),
    "f16": ("float16", 2),
    "i64": ("int64", 8),
    "b8": ("bool", 1),
}


class _AOTGraphs(logging.Handler):
    """torch's structured-trace records of the AOT forward and backward graphs (the readable printout)."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.graphs = {}

    def emit(self, record):
        md = getattr(record, "metadata", None) or {}
        for kind in ("aot_forward_graph", "aot_backward_graph"):
            if kind in md:
                self.graphs.setdefault(kind, str(record.payload))


def _captured(model_fn, x_shape, **compile_kwargs):
    import torch

    handler = _AOTGraphs()
    logger = logging.getLogger("torch.__trace")
    logger.addHandler(handler)
    try:
        torch.manual_seed(0)
        model = model_fn()
        with inductor_lens.capture(strict=True) as cap:
            compiled = torch.compile(model, **compile_kwargs)
            compiled(torch.randn(*x_shape)).pow(2).sum().backward()
    finally:
        logger.removeHandler(handler)
    return cap.report, handler.graphs


def _split(printout):
    """A logged graph's ``forward(...)`` signature and its body."""
    start = printout.index("def forward(")
    end = printout.index("):", start)
    return printout[start:end], printout[end:]


def _inputs(printout):
    """``[(name, dtype, shape)]`` of a logged graph's ``forward(...)`` signature (its tensors: a SymInt input,
    ``"Sym(s77)"``, is none; a symbolic size stays text, ``s77``)."""
    head = _split(printout)[0]
    dims = lambda text: [int(d) if d.strip().isdigit() else d.strip() for d in text.split(",") if d.strip()]  # noqa: E731
    return [(m.group(1), m.group(2), dims(m.group(3))) for m in _SIG.finditer(head)]


def _ops(printout):
    """``{name: op}`` of a logged graph's body."""
    body = _split(printout)[1]
    return dict(re.findall(r"^\s+(\w+)(?:: \"[^\"]*\")? = torch\.ops\.(\w+\.\w+)", body, re.M))


class LNGELU:
    """A LayerNorm/GELU block (built lazily: torch is imported inside the fixtures only)."""

    def __new__(cls):
        from torch import nn

        return nn.Sequential(nn.Linear(16, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 16))


@pytest.fixture(scope="module")
def mlp_step():
    from tests import models

    return _captured(models.MLP, (4, 16))


@pytest.fixture(scope="module")
def block_step():
    return _captured(LNGELU, (8, 16))


class SiLUMLP:
    """``softmax(fc2(silu(fc1(x))))``, 32 -> 64 -> 8 (a new user's trial, nu17 s6b)."""

    def __new__(cls):
        from torch import nn

        return nn.Sequential(nn.Linear(32, 64), nn.SiLU(), nn.Linear(64, 8), nn.Softmax(-1))


class Checkpointed:
    """``l3(checkpoint(mid, relu(l1(x))))``: activation checkpointing around a Linear/GELU (a new user's trial, nu17
    s1: the recomputed ops did not say that ``checkpoint(...)`` asked for them)."""

    def __new__(cls):
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1, self.mid, self.l3 = (
                    nn.Linear(16, 32),
                    nn.Sequential(nn.Linear(32, 32), nn.GELU()),
                    nn.Linear(32, 8),
                )

            def forward(self, x):
                h = torch.relu(self.l1(x))
                h = checkpoint(self.mid, h, use_reentrant=False)  # the region
                return self.l3(h)

        return Net()


@pytest.fixture(scope="module")
def checkpoint_step():
    return _captured(Checkpointed, (4, 16))


def test_recomputed_ops_say_whether_checkpoint_asked_for_them(checkpoint_step, mlp_step):
    """The ops of a ``checkpoint(...)`` region are recomputed because it asks (``Recomputed.by``, FX meta
    ``recompute`` read at capture), with its call's line; the partitioner's own recomputes say so."""
    import inspect

    fwd, bwd = _pair(checkpoint_step[0])
    src, first = inspect.getsourcelines(Checkpointed)
    line = first + next(i for i, t in enumerate(src) if "# the region" in t)
    redo = bwd.memory.recomputed
    ckpt = [r for r in redo if r.by == "checkpoint"]
    assert ckpt and {r.checkpoint.line for r in ckpt} == {line}, [(r.fx_node, r.by, r.checkpoint) for r in redo]
    assert {r.checkpoint.function for r in ckpt} == {"forward"} and "addmm" in {r.fx_node[:5] for r in ckpt}
    assert all(f"wraps at test_memory.py:{line}: activation checkpointing" in r.reason for r in ckpt)
    rows = [r for r in bwd.memory.recomputed_by_line if r.reason.startswith("in the region checkpoint(...)")]
    assert sum(r.count for r in rows) == len(ckpt)
    # the same facts on the forward's Memory view
    assert [(r.fx_node, r.by, r.reason) for r in fwd.memory.recomputed] == [(r.fx_node, r.by, r.reason) for r in redo]
    plain = _pair(mlp_step[0])[1].memory.recomputed
    assert plain and {r.by for r in plain} == {"partitioner"} and all("no checkpoint" in r.reason for r in plain)


class CheckpointedAttention:
    """``checkpoint(attn, x)`` around SDPA, a random op: the forward runs it under ``run_and_save_rng_state`` and
    saves the RNG state, the backward runs it again under ``run_with_rng_state`` (a new user's trial, nu26 D1/D4/D8);
    then a ``nonzero`` whose value is dead, read only for its size (nu26 D3)."""

    def __new__(cls):
        import torch
        import torch.nn.functional as F
        from torch import nn
        from torch.utils.checkpoint import checkpoint

        class Attn(nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = nn.Linear(16, 48)

            def forward(self, x):
                q, k, v = self.qkv(x).unflatten(-1, (3, 2, 8)).permute(2, 0, 3, 1, 4)
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)  # the attention

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = Attn()

            def forward(self, x):
                a = checkpoint(self.attn, x, use_reentrant=False)
                n = torch.nonzero(a > 0.5)  # read only for its size
                return a.sum() + n.float().sum() * 0

        return Net()


@pytest.fixture(scope="module")
def attention_checkpoint_step():
    """One training step of :class:`CheckpointedAttention` on x of 2 x 4 x 16 (q, k, v: 2 x 2 heads x 4 x 8)."""
    import torch

    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        return _captured(CheckpointedAttention, (2, 4, 16))


def _attention_line():
    import inspect

    src, first = inspect.getsourcelines(CheckpointedAttention)
    return first + next(i for i, t in enumerate(src) if "# the attention" in t)


def test_a_checkpointed_random_op_the_backward_runs_again_on_its_rng_state_is_recomputed(attention_checkpoint_step):
    """nu26 D1: under ``checkpoint(use_reentrant=False)`` the backward runs SDPA again through
    ``run_with_rng_state(rng_state, sdpa, ...)`` where the forward ran ``run_and_save_rng_state(sdpa, ...)``: other
    names, other targets, so the recomputed list left out the costliest op it recomputes, and its line. Each call the
    backward's output code makes is one recomputed op of the checkpoint, on the attention's line, named by the op."""
    fwd, bwd = _pair(attention_checkpoint_step[0])
    _rng_states_or_skip(fwd)
    calls = re.findall(r"torch\.ops\.higher_order\.run_with_rng_state\(\w+, torch\.ops\.aten\.(\w+)\.", bwd.output_code)
    assert calls == ["_scaled_dot_product_flash_attention_for_cpu"], bwd.output_code
    post = {n.name: n for n in bwd.graphs["post_grad"].nodes}
    again = [r for r in bwd.memory.recomputed if post[r.fx_node].target == "higher_order.run_with_rng_state"]
    assert len(again) == len(calls) and {r.by for r in again} == {"checkpoint"}, bwd.memory.recomputed
    line = _attention_line()
    assert [r.user_line.line for r in again] == [line] and again[0].checkpoint is not None
    (row,) = [r for r in bwd.memory.recomputed_by_line if r.line == line]
    assert row.ops == ["_scaled_dot_product_flash_attention_for_cpu"] and row.count == 1
    # the forward's Memory view names the same ops by the forward's nodes (the op it ran under run_and_save_rng_state)
    fpost = {n.name: n for n in fwd.graphs["post_grad"].nodes}
    assert len(fwd.memory.recomputed) == len(bwd.memory.recomputed)
    assert all(r.fx_node in fpost for r in fwd.memory.recomputed)
    assert [r for r in fwd.memory.recomputed_by_line if r.line == line] == [row]


def test_a_saved_rng_state_is_named_by_the_op_that_ran_on_it_and_its_length_is_no_model_size(
    attention_checkpoint_step,
):
    """nu26 D4: the RNG state the forward saves for the backward was a row with no module, op or line, shaped
    ``[s12] = [5056]``, and the backward's figures said "(at s12=5056)" on a model with no dynamic shape: ``s12`` is
    only the state's length in the backward's graph (``s12 = rng_state_output_0_size[0]``). The row is named by the
    op that ran on it, its module and line, at the length the forward's output code asserts for it."""
    fwd, bwd = _pair(attention_checkpoint_step[0])
    _rng_states_or_skip(fwd)
    # torch's own record: the forward's ``bufN = bufM[0]`` of its run_and_save_rng_state, asserted (L, ), returned
    (state,) = re.findall(r"^\s+(buf\d+) = buf\d+\[0\]\n\s+assert_size_stride\(\1, \((\d+), \)", fwd.output_code, re.M)
    assert re.search(r"^\s+(s\d+) = rng_state_output_0_size\[0\]", bwd.output_code, re.M), bwd.output_code
    (row,) = [s for s in fwd.memory.saved_for_backward if s.dtype == "uint8"]
    assert row.name.startswith("rng_state_output") and row.storage == state[0]
    assert (row.shape, row.shape_hint, row.bytes) == ([int(state[1])], None, int(state[1]))
    assert (row.module, row.user_line.line, row.kind) == ("attn", _attention_line(), "activation")
    assert row.note.startswith("the RNG state _scaled_dot_product_flash_attention_for_cpu ran on"), row.note
    assert bwd.memory.sizes_at == "" and "s12" not in bwd.memory.peak_text + bwd.memory.high_water_text


def test_an_extern_calls_results_no_buffer_takes_are_allocated_until_its_del(attention_checkpoint_step):
    """nu26 D8/D3: a fallback op's call allocates every result it returns, also those no buffer takes, until the
    output code ``del``s the call's result: the checkpointed SDPA's logsumexp (``buf5 = run_and_save_rng_state(...)``
    unpacks only ``buf5[0]`` and ``buf5[1][0]``), and a ``nonzero`` read only for its size (``buf7 =
    aten.nonzero.default(buf6)``: its size is data-dependent, so it is left out and said, not silently dropped).
    ``Memory.source`` says what stays uncounted: the scratch memory an extern kernel allocates inside itself."""
    fwd, _ = _pair(attention_checkpoint_step[0])
    code = fwd.output_code
    allocs = {a.name: a.bytes for p in fwd.memory.timeline for a in p.allocates}
    frees = {a.name: a.bytes for p in fwd.memory.timeline for a in p.frees}
    rng = re.findall(r"^\s+(buf\d+) = torch\.ops\.higher_order\.run_and_save_rng_state\(", code, re.M)
    if rng:  # torch 2.13: the checkpointed SDPA under run_and_save_rng_state (torch 2.15 saves its results instead)
        (call,) = rng
        taken = re.findall(rf"^\s+buf\d+ = {call}(\[\d+\](?:\[\d+\])?)$", code, re.M)
        assert sorted(taken) == ["[0]", "[1][0]"], taken  # the RNG state, the attention's output: not its logsumexp
        assert re.search(rf"^\s+del {call}$", code, re.M)
        logsumexp = 2 * 2 * 4 * 4  # float32 [batch 2, heads 2, 4 queries]
        assert allocs[call] == logsumexp and frees[call] == logsumexp, (allocs, frees)
    (nonzero,) = re.findall(r"^\s+(buf\d+) = torch\.ops\.aten\.nonzero\.default\(", code, re.M)
    assert not re.search(rf"\b{nonzero}\[", code)  # no buffer takes its result
    assert nonzero in fwd.memory.uncounted and nonzero not in allocs, fwd.memory.uncounted
    assert f"not counting {len(fwd.memory.uncounted)} buffer" in fwd.memory.peak_text
    assert "scratch memory an extern kernel allocates and frees inside itself" in fwd.memory.source


def _rng_states_or_skip(fwd) -> None:
    """Skip where this torch runs the checkpointed attention under no RNG-state op (torch 2.15 saves the attention's
    results for the backward instead of recomputing it: no ``run_and_save_rng_state`` in the forward's output code);
    torch 2.13 on a CPU and 2.11 on a GPU do (tests/analysis/test_gpu_fixtures.py checks the GPU's)."""
    if "torch.ops.higher_order.run_and_save_rng_state(" not in fwd.output_code:
        import torch

        pytest.skip(f"torch {torch.__version__} recomputes no random op of this checkpointed region")


@pytest.fixture(scope="module")
def dynamic_step():
    """A training step under ``torch.compile(dynamic=True)``: the batch size is a symbol (hint 4), which the forward
    saves for the backward."""
    return _captured(SiLUMLP, (4, 32), dynamic=True)


def _pair(report):
    fwd = next(c for c in report.compiles if c.graph_kind == "forward")
    bwd = next(c for c in report.compiles if c.graph_kind == "backward")
    return fwd, bwd


@pytest.mark.parametrize("step", ["mlp_step", "block_step"])
def test_saved_set_is_exactly_the_logged_backward_graphs_inputs(step, request):
    report, logged = request.getfixturevalue(step)
    fwd, bwd = _pair(report)
    expected = [(n, _DTYPES[d][0], shape) for n, d, shape in _inputs(logged["aot_backward_graph"])]
    expected = [e for e in expected if not e[0].startswith("tangents_")]
    saved = fwd.memory.saved_for_backward
    assert [(s.name, s.dtype, s.shape) for s in saved] == expected
    for s, (_, _dtype, shape) in zip(saved, expected):
        assert s.bytes == math.prod(shape) * 4  # every tensor here is float32
    assert fwd.memory.saved_bytes == sum(math.prod(shape) * 4 for _, _, shape in expected)
    # a forward input (primals_N) is an input, anything the forward computed an activation
    fwd_inputs = {n for n, _, _ in _inputs(logged["aot_forward_graph"])}
    assert {s.name for s in saved if s.kind == "input"} == {n for n, _, _ in expected if n in fwd_inputs}
    assert bwd.memory.saved_for_backward == [] and bwd.memory.saved_bytes == 0


def test_mlp_saved_bytes_by_hand(mlp_step):
    """MLP(16, 32, 8) on x of 4 x 16, float32: x, fc2's weight, the norm's weight; relu(fc1(x)), fc2's output,
    the softmax."""
    fwd, _ = _pair(mlp_step[0])
    got = {s.name: (s.bytes, s.kind) for s in fwd.memory.saved_for_backward}
    assert got == {
        "primals_3": (4 * 16 * 4, "input"),
        "primals_4": (8 * 32 * 4, "input"),
        "primals_6": (8 * 4, "input"),
        "relu": (4 * 32 * 4, "activation"),
        "addmm_1": (4 * 8 * 4, "activation"),
        "div": (4 * 8 * 4, "activation"),
    }
    assert fwd.memory.saved_activation_bytes == 512 + 128 + 128
    by = {s.name: s for s in fwd.memory.saved_for_backward}
    assert by["primals_4"].module == "fc2" and by["addmm_1"].module == "fc2"
    # an input by the name the user knows (the Memory view showed primals_3 where the panel said x); an activation
    # has its op's name only
    assert {n: by[n].display for n in ("primals_3", "primals_4", "relu")} == {
        "primals_3": "x",
        "primals_4": "fc2.weight",
        "relu": "",
    }
    assert by["relu"].user_stack[-1].code.strip() == "h = torch.relu(self.fc1(x))"
    # relu and the softmax run in MLP.forward itself (no submodule); fc2's output in fc2
    assert [(r.module, r.bytes) for r in fwd.memory.saved_by_module] == [("(no module)", 640), ("fc2", 128)]
    assert [(r.line, r.bytes) for r in fwd.memory.saved_by_line] == [
        (by["relu"].user_stack[-1].line, 512),
        (by["relu"].user_stack[-1].line + 1, 256),
    ]


def test_mlp_timeline_matches_the_output_codes_allocations(mlp_step):
    """Read off Inductor's output code (torch 2.13, CPU): forward: addmm -> buf0 (512 B); relu in place
    (``buf1 = buf0  # reuse``); addmm -> buf2 (128 B); the layer-norm/softmax kernel allocates buf3 (reused as
    buf4), buf5, buf7, buf9 (16 B each) and buf6 (128 B, reused as buf8 and buf10, returned)."""
    fwd, bwd = _pair(mlp_step[0])
    assert [p.node for p in fwd.memory.timeline] == [n.name for n in fwd.fused_nodes if not n.is_glue]
    assert [p.live_bytes for p in fwd.memory.timeline] == [512, 512, 640, 832]
    # backward: the first kernel's call (two fused nodes, one C++ function) takes its five 16 B temporaries, buf6
    # (128 B) and the two 32 B grads, all allocated before it and the temporaries freed only once it returns: 272 B
    # at both its nodes (the nodes' own lifetimes said 208 then 240); then the mm outputs (512 B, 1024 B), buf11
    # (32 B), buf12 written into the saved relu's storage (no new bytes), buf13 (2048 B), buf14 into buf6's storage
    assert [p.live_bytes for p in bwd.memory.timeline] == [272, 272, 704, 1728, 1760, 1760, 3296, 3296]


def test_the_net_peak_leaves_out_the_inputs_a_backward_frees_on_the_way(mlp_step):
    """The MLP's backward output code ``del``s its saved ``addmm_1``, ``div`` and ``tangents_1`` (128 B each):
    ``addmm_1`` is freed after ``op7_op8``, its last reader; ``div`` is also the model's output, which the caller
    holds; ``tangents_1`` is held by the autograd function for the call. ``relu``'s storage is reused
    (``buf12 = relu; del relu  # reuse``) and freed with ``buf12`` after ``op14``; the parameters and the user's
    input stay with their callers. So the allocator's peak above its level at the call is 3296 - 128 = 3168 B at
    op13 (the rule measured on the H200: tests/analysis/test_llama8b_fixture.py); the forward frees none of its
    inputs."""
    fwd, bwd = _pair(mlp_step[0])
    assert (bwd.memory.freed_input_bytes, bwd.memory.net_peak_bytes, bwd.memory.net_peak_node) == (640, 3168, "op13")
    assert (fwd.memory.freed_input_bytes, fwd.memory.net_peak_bytes) == (0, fwd.memory.peak_bytes)
    assert bwd.memory.estimate_ratio is None  # nothing measured on a CPU


def test_the_curves_second_line_is_the_live_bytes_less_the_inputs_freed_before_each_point(mlp_step):
    """The trial's ViT backward drew its high-water mark as a flat line at 420.6 KiB under a curve peaking at
    1.36 MiB: two bases on one axis, nothing showing where the two part. Each point of a graph that frees inputs
    carries its live bytes less the inputs freed before it (``MemoryPoint.net_bytes``), the line the high-water mark
    is the top of: the MLP's backward frees ``addmm_1`` (128 B) after ``op7_op8`` and ``relu`` (512 B) after
    ``op14``."""
    fwd, bwd = _pair(mlp_step[0])
    order = [p.node for p in bwd.memory.timeline]
    gone = {n: 0 for n in order}
    for i, n in enumerate(order):
        gone[n] = (128 if i > order.index("op7_op8") else 0) + (512 if i > order.index("op14") else 0)
    assert [p.net_bytes for p in bwd.memory.timeline] == [p.live_bytes - gone[p.node] for p in bwd.memory.timeline]
    top = max(bwd.memory.timeline, key=lambda p: p.net_bytes)
    assert (top.net_bytes, top.node) == (bwd.memory.net_peak_bytes, bwd.memory.net_peak_node)
    assert bwd.memory.high_water_node == "op13" and bwd.memory.curve_net_text.startswith("dashed line: the same less")
    assert all(p.net_bytes is None for p in fwd.memory.timeline) and fwd.memory.curve_net_text == ""


_ALLOC = re.compile(r"^\s*(\w+) = empty_strided_cpu\(\(([^()]*)\), \([^()]*\), torch\.(\w+)\)")
_REUSE = re.compile(r"^\s*(\w+) = (?:reinterpret_tensor\()?(\w+)\b[^\n]*; del \2\s*# reuse")
_CALL = re.compile(r"^\s*(?:\w+ = )?(cpp_\w+|extern_kernels\.\w+)\(")


def _live_at_calls(code):
    """The bytes the output code's ``call()`` holds allocated at each of its kernel calls, in order, read off its
    lines alone: ``empty_strided_cpu`` adds, ``del`` takes away, a ``# reuse`` renames (graph inputs not counted)."""
    body = code[code.index("def call(") :]
    body = body[: body.index("\n        return (")]
    live, out = {}, []
    for line in body.splitlines():
        if m := _ALLOC.match(line):
            dims = [int(d) for d in m.group(2).split(",") if d.strip()]
            live[m.group(1)] = math.prod(dims) * {"float32": 4, "int64": 8, "bool": 1}[m.group(3)]
        elif m := _REUSE.match(line):
            if m.group(2) in live:
                live[m.group(1)] = live.pop(m.group(2))
        elif m := re.match(r"^\s*del (\w+)\s*$", line):
            live.pop(m.group(1), None)
        elif m := _CALL.match(line):
            out.append((m.group(1), sum(live.values())))
    return out


@pytest.fixture(scope="module")
def chain():
    """``x = sin(x) * (i + 1) + x.mean()`` 20 times on 64 floats: one C++ kernel group (its 21 fused nodes in one
    function, one call), taking 20 scalar means and one (64,) buffer that each step writes into in turn."""
    import torch

    def f(x):
        for i in range(20):
            x = torch.sin(x) * (i + 1) + x.mean()
        return x

    with inductor_lens.capture(strict=True) as cap:
        torch.compile(f)(torch.randn(64))
    (c,) = cap.report.compiles
    return c


@pytest.mark.parametrize("step", ["mlp_step", "block_step", "chain"])
def test_the_live_bytes_at_each_kernel_call_are_what_the_output_code_holds_there(step, request):
    """Each kernel call of the output code (a C++ kernel group of several fused nodes is one call) against the
    timeline's points of the fused nodes it computes: every one of them says what ``call()`` holds allocated at
    that line. The timeline freed a buffer between two nodes of one call, and allocated the call's later outputs
    after its first nodes (the chain's peak: 276 B at its fifth node, where the call holds 336 B)."""
    got = request.getfixturevalue(step)
    for c in [got] if step == "chain" else got[0].compiles:
        boxes = {n.name: i for i, n in enumerate(n for n in c.fused_nodes if not n.is_glue)}
        sites = sorted(
            (site for k in c.kernels for site in k.call_sites if site and site[0] in boxes), key=lambda s: boxes[s[0]]
        )
        live = {p.node: p.live_bytes for p in c.memory.timeline}
        want = _live_at_calls(c.output_code)
        assert len(sites) == len(want), (c.id, sites, want)
        assert [sorted({live[f] for f in site if f in live}) for site in sites] == [[b] for _, b in want], c.id
        assert c.memory.peak_bytes == max(b for _, b in want)


def test_a_kernel_call_of_many_fused_nodes_holds_every_buffer_it_takes_at_once(chain):
    """The chain's one call takes its 20 scalar means (4 B each) and the (64,) buffer (256 B, written into by each
    step in turn: ``buf9 = buf4; del buf4  # reuse``...), all allocated before it and none freed before it returns:
    336 B live at every one of its nodes, the peak at its first, which the Memory view names by its kernel."""
    c = chain
    code = c.output_code[c.output_code.index("def call(") :]
    (kernel,) = c.kernels
    (site,) = kernel.call_sites
    boxes = [n.name for n in c.fused_nodes if not n.is_glue]
    assert site == boxes and len(site) == 21
    assert len(re.findall(r"empty_strided_cpu\(\(\), \(\), torch\.float32\)", code)) == 20
    assert len(re.findall(r"empty_strided_cpu\(\(64, \), \(1, \), torch\.float32\)", code)) == 1
    m = c.memory
    assert [p.live_bytes for p in m.timeline] == [20 * 4 + 64 * 4] * 21
    assert (m.peak_bytes, m.peak_node) == (336, site[0])
    peak = next(n for n in c.fused_nodes if n.name == m.peak_node)
    assert peak.label == kernel.name  # the view's "peak 336 B at cpp_fused_..." names the kernel call
    # allocated at the call's first node, freed after its last (the means; the (64,) buffer is returned)
    assert len(m.timeline[0].allocates) == 21 and all(not p.allocates for p in m.timeline[1:])
    assert all(not p.frees for p in m.timeline[:-1]) and len(m.timeline[-1].frees) == 20
    assert m.peak_buffer_count == 21 and sum(r.bytes for r in m.peak_by_module) == 336


@pytest.mark.parametrize("step", ["mlp_step", "block_step"])
def test_timeline_one_point_per_box_and_the_peak_is_its_maximum(step, request):
    report, _ = request.getfixturevalue(step)
    for c in report.compiles:
        m = c.memory
        boxes = [n.name for n in c.fused_nodes if not n.is_glue]
        assert [p.node for p in m.timeline] == boxes
        live = [p.live_bytes for p in m.timeline]
        assert m.peak_bytes == max(live) > 0
        assert m.peak_node == boxes[live.index(max(live))]
        assert sum(b.bytes for b in m.peak_buffers) <= m.peak_bytes
        assert "not measured on CPU" in m.source and m.measured_peak_bytes is None
    fwd, _ = _pair(report)
    activations = sum(s.bytes for s in fwd.memory.saved_for_backward if s.kind == "activation")
    assert activations > 0 and fwd.memory.peak_bytes >= activations


@pytest.mark.parametrize("step", ["mlp_step", "block_step"])
def test_recomputed_ops_are_the_logged_backwards_copies_of_forward_ops(step, request):
    report, logged = request.getfixturevalue(step)
    fwd, bwd = _pair(report)
    # the backward, where they run, lists them too (its Memory view and the panel of the nodes that recompute)
    assert [r.fx_node for r in bwd.memory.recomputed] == [r.fx_node for r in fwd.memory.recomputed]
    f_ops, b_ops = _ops(logged["aot_forward_graph"]), _ops(logged["aot_backward_graph"])
    free = ("aten.view", "aten.permute", "aten.t", "aten.transpose", "aten.expand", "aten.unsqueeze", "aten.squeeze")
    expected = {n for n, op in b_ops.items() if f_ops.get(n) == op and not op.startswith(free)}
    got = {r.fx_node for r in fwd.memory.recomputed}
    # the post-grad graphs keep the AOT names; getitem lines carry no torch.ops call and are not listed
    assert got == expected
    if step == "mlp_step":  # the partitioner recomputes the layer norm's statistics rather than saving them
        assert "var_mean" in got


def test_input_bytes_are_the_graph_inputs(mlp_step):
    fwd, bwd = _pair(mlp_step[0])
    params = 32 * 16 + 32 + 8 * 32 + 8 + 8 + 8
    assert fwd.memory.input_bytes == (params + 4 * 16) * 4
    saved = sum(s.bytes for s in fwd.memory.saved_for_backward)
    assert bwd.memory.input_bytes == saved + 4 * 8 * 4  # + the tangent


def test_a_failing_buffer_reader_is_a_diagnostic_not_a_broken_compile(monkeypatch):
    import torch

    from inductor_lens.capturing import memory as capture_memory
    from tests import models

    def broken(nodes):
        raise RuntimeError("injected")

    monkeypatch.setattr(capture_memory, "read_buffers", broken)
    with inductor_lens.capture() as cap:
        out = torch.compile(models.sin_cos)(torch.ones(8))
    assert torch.allclose(out, torch.ones(8))
    assert [c.memory for c in cap.report.compiles] == [None]
    assert any(d.code == "hook_failed" and "injected" in d.message for d in cap.report.diagnostics)


def test_a_write_into_a_graph_inputs_storage_allocates_nothing():
    """An in-place update of a module's buffer (a KV cache's ``index_copy_``, 1 MiB) and of an optimizer's parameters
    and momentum (SGD's ``copy_``s) are written into the inputs' storage: the output code allocates nothing for them
    (no ``empty_strided``), so the timeline counts none of it (it counted the cache twice, once as a new buffer, and an
    SGD step's every parameter)."""
    import torch

    class Cache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("k", torch.zeros(1, 4, 1024, 64))  # 1 MiB

        def forward(self, knew, pos):
            self.k.index_copy_(2, pos, knew)
            return (self.k * 2).sum(-1)

    params = [torch.nn.Parameter(torch.randn(256)) for _ in range(3)]
    for q in params:
        q.grad = torch.randn(256)
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    opt.step()  # the momentum buffers exist: the compiled step updates them in place too
    with inductor_lens.capture(strict=True) as cap:
        with torch.no_grad():
            out = torch.compile(Cache())(torch.randn(1, 4, 1, 64), torch.tensor([3]))
        torch.compile(opt.step)()
    assert out.shape == (1, 4, 1024)
    cache, step = cap.report.compiles[0], cap.report.compiles[-1]
    assert cache.memory.peak_bytes == 4 * 1024 * 4  # the output, (1, 4, 1024) float32: the only allocation
    assert [b.bytes for b in cache.memory.peak_buffers] == [16384]
    assert "empty_strided" not in step.output_code[step.output_code.find("def call(") :]
    assert step.memory.peak_bytes == 0, [(b.name, b.bytes) for b in step.memory.peak_buffers]
    # nu25 L2: the step's panel said only "inference graph": it says it updates the parameters (a cache's write into
    # a module buffer is no such update)
    assert step.graph_note.startswith("An update of your model's parameters, not a forward: it writes 3 of them")
    assert cache.graph_note == ""


def test_the_slices_of_a_cat_are_its_buffer_not_buffers_of_their_own():
    """``torch.cat([relu(a), sin(b)])`` then ``@ w``: the kernels write the cat's two halves straight into its buffer,
    which the output code names as views of it (``buf0 = reinterpret_tensor(buf2, ...)  # alias``). The peak is the
    output code's two allocations (the cat, then the matmul's output), each once: the halves cost nothing of their
    own (they were counted beside the cat: twice its bytes), and the cat's buffer is live from the first half's
    kernel on. The peak's buffers roll up under no module: the cat is the user's own line."""
    import torch

    def f(a, b, w):
        c = torch.cat([torch.relu(a), torch.sin(b)], dim=1)
        return c @ w

    with inductor_lens.capture(strict=True) as cap:
        with torch.no_grad():
            torch.compile(f)(torch.randn(64, 32), torch.randn(64, 32), torch.randn(64, 16))
    (c,) = cap.report.compiles
    code = c.output_code[c.output_code.find("def call(") :]
    views = re.findall(r"^\s*(\w+) = reinterpret_tensor\((\w+),[^\n]*# alias$", code, re.M)
    allocated = re.findall(r"^\s*(\w+) = empty_strided_cpu\(\(([\d, ]+)\),", code, re.M)
    assert len(views) == 2 and len({base for _, base in views}) == 1, code
    sizes = {name: 4 * math.prod(int(d) for d in dims.split(",") if d.strip()) for name, dims in allocated}
    assert sorted(sizes.values()) == [64 * 16 * 4, 64 * 64 * 4]
    m = c.memory
    assert m.peak_bytes == sum(sizes.values()), [(b.name, b.bytes) for b in m.peak_buffers]
    assert sorted(b.name for b in m.peak_buffers) == sorted(sizes)  # no view of the cat among them
    cat = views[0][1]
    first = next(i for i, p in enumerate(m.timeline) for a in p.allocates if a.name == cat)
    assert first == 0, [p.allocates for p in m.timeline]  # from the first half's kernel on
    assert [b.module for b in m.peak_by_module] == ["(no module)"]


def test_the_views_a_fallback_op_returns_allocate_nothing():
    """``view_as_complex`` and ``view_as_real`` are fallback calls whose results are views of their input
    (``buf0 = torch.ops.aten.view_as_complex.default(reinterpret_tensor(arg0_1, ...))``, then ``buf1 = buf0``): each
    was counted as a new buffer of its size, twice the peak of the output code's own allocations (a rotary
    embedding's ``view_as_complex(q)`` the same). The peak is what ``call()`` allocates and what its fallbacks that
    are no views return (``polar``, the complex ``mul``), live together at the ``mul``."""
    import torch

    def rotate(y):
        z = torch.view_as_complex(y.reshape(y.shape[0], -1, 2).contiguous())
        rot = torch.polar(torch.ones_like(z.real), z.real * 0.1)
        return torch.view_as_real(z * rot).flatten(1)

    with inductor_lens.capture(strict=True) as cap:
        torch.compile(rotate)(torch.randn(6, 12))
    (c,) = cap.report.compiles
    code = c.output_code[c.output_code.find("def call(") :]
    views = re.findall(r"^\s*(\w+) = torch\.ops\.aten\.view_as_(?:complex|real)\.default\(", code, re.M)
    assert len(views) == 3, code
    complex_bytes = 6 * 6 * 8  # polar's result and the product: complex64 [6, 6]
    m = c.memory
    assert m.peak_bytes == 2 * complex_bytes, [(b.name, b.bytes) for b in m.peak_buffers]
    # the views' buffers: a MultiOutput's (torch 2.13: ``buf1 = buf0``), or the op's own (2.15: ``buf0 = ...``)
    results = [new for new, old in re.findall(r"^\s*(\w+) = (\w+)$", code, re.M) if old in views] or views
    assert len(results) == 3 and all(a.bytes == 0 for p in m.timeline for a in p.allocates if a.name in results)
    assert m.timeline[-1].live_bytes == complex_bytes  # the product, returned through its real view


@pytest.fixture(scope="module")
def data_dependent():
    """One compile with sizes and a value known only when the graph runs (unbacked ``u0``, ``zuf0``): ``nonzero``, a
    boolean mask, ``.item()`` and a ``torch._check`` of it. Returns the capture's compile, the line numbers of this
    function's body by what they hold, whether the results and graph count match a run without the lens, and the
    report."""
    import inspect

    import torch

    def select(x):
        nz = torch.nonzero(x > 0.5)
        m = x[x > 0]
        s = x.sum().item()
        torch._check(s > -1e9)
        return nz.float().sum() + s, m.exp() * 2

    lines, first = inspect.getsourcelines(select)
    at = {
        word: first + i
        for i, text in enumerate(lines)
        for word in ("nonzero", "x[x > 0]", "item", "_check")
        if word in text
    }
    x = torch.randn(64)
    from torch._dynamo.utils import counters

    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True):
        torch._dynamo.reset()
        want = torch.compile(select)(x)
        graphs = counters["stats"]["unique_graphs"]
        with inductor_lens.capture(strict=True) as cap:
            got = torch.compile(select)(x)
        same = counters["stats"]["unique_graphs"] - graphs == 1
    torch.testing.assert_close(got, want)
    (c,) = cap.report.compiles
    return c, at, same, cap.report


def test_a_buffer_of_a_data_dependent_size_is_said_not_counted_and_its_kernels_cost_unknown(data_dependent):
    """``nonzero`` and a boolean mask have sizes known only when the graph runs (unbacked ``u0``): their buffers
    were counted as 0 bytes with no word (the peak said 388 B while they were alive), and their kernels' costs
    "writes 0 B" (Inductor counts such a size as 0). They are said not counted, and the costs are unknown."""
    c, _, same, _ = data_dependent
    assert same
    post = {n.name: n for n in c.graphs["post_grad"].nodes}
    assert any(isinstance(d, str) and d.startswith("u") for n in post.values() for d in (n.shape or [])), post
    unsized = re.search(r"not counted: ([\w, ]+), of a size known only when the graph runs", c.memory.source)
    assert unsized, c.memory.source
    counted = {a.name for p in c.memory.timeline for a in p.allocates}
    assert not counted & set(unsized.group(1).split(", ")), (counted, unsized.group(1))
    (nonzero,) = [k for k in c.kernels if "nonzero" in k.name]
    assert nonzero.cost.bytes_written is None and nonzero.cost.bytes_read is None, nonzero.cost
    assert re.search(r"data-dependent sizes \(u\d+\)", nonzero.cost.source), nonzero.cost.source
    assert nonzero.cost.arithmetic_intensity is None


@pytest.mark.browser
def test_every_byte_count_that_leaves_a_data_dependent_buffer_out_says_it_is_a_lower_bound(
    data_dependent, tmp_path, offline_page
):
    """nu23 D4: with buffers of a size known only when the graph runs (``nonzero``, a mask: ``u0``) left out, the peak
    read "peak of the graph's buffers 388 B" and each panel "N B live while it runs (peak ...)" as if exact; only the
    folded "how these numbers were obtained" said the peak is at least that. The buffers are a fact of the report
    (``Memory.uncounted``, the points where one is live ``uncounted_at``), and every figure that leaves one out says
    "≥": the Memory view's peak, the panel of a node where one is live and its peak, the curve's tooltip; a node
    where none is live says its bytes as they are. A report made before the fields gets them from its ``source``."""
    from tests.views.test_html_export import _assert_clean, _open

    c, _, _, report = data_dependent
    m = c.memory
    # torch's own sizes: the post-grad nodes of an unbacked size (u0) are what the capture could not count
    post = {n.name: n for n in c.graphs["post_grad"].nodes}
    unbacked = [n for n in post.values() if any(isinstance(d, str) and d.startswith("u") for d in (n.shape or []))]
    assert unbacked and m.uncounted and m.at_least, (unbacked, m.uncounted)
    assert m.uncounted == re.search(r"not counted: ([\w, ]+), of a size", m.source).group(1).split(", ")
    assert m.peak_text.startswith("peak of the graph's buffers ≥ "), m.peak_text
    assert f"not counting {len(m.uncounted)} buffer" in m.peak_text, m.peak_text
    order = [p.node for p in m.timeline]
    assert m.uncounted_at and set(m.uncounted_at) <= set(order)
    exact = [p for p in order if p not in m.uncounted_at]
    # an older report: the facts from its source, every point a lower bound (where each was live was not kept)
    data = report.to_dict()
    for key in ("uncounted", "uncounted_at", "at_least", "peak_text", "uncounted_text"):
        data["compiles"][0]["memory"].pop(key)
    old = inductor_lens.Report.from_dict(data).compiles[0].memory
    assert old.uncounted == m.uncounted and old.uncounted_at == order and old.peak_text == m.peak_text

    path = tmp_path / "dd.html"
    report.save_html(path)
    _open(offline_page, path)
    offline_page.click('[data-tab="memory"]')
    fact = offline_page.locator('[data-role="memory-peak-fact"]').inner_text()
    assert fact.startswith(m.peak_text), fact
    for node, bound in [(m.uncounted_at[0], True)] + [(n, False) for n in exact[:1]]:
        offline_page.locator(f'[data-view="memory"] [data-role="memory-point"][data-node="{node}"]').click()
        said = offline_page.locator('[data-role="node-memory"]').inner_text()
        assert said.startswith("≥ ") == bound, (node, said)
        assert (m.uncounted_text in said) == bound, (node, said)
        assert node == m.peak_node or "(peak ≥ " in said, (node, said)
    _assert_clean(offline_page)


def test_the_runtime_checks_of_data_dependent_values_are_named_and_tied_to_their_lines(data_dependent):
    """The wrapper's ``if not (u0 >= 0): raise RuntimeError(...)`` lines (Inductor's ``AssertScalar``: a size from
    ``nonzero`` or a mask within its bounds, a ``torch._check``) were fused nodes named ``op3`` with no op and no
    line, said to be "a no-op, a view, or a buffer reuse"; ``.item()`` was said to be one too. Each check is tied to
    the graph's ``_assert_scalar`` of its expression, so to the line that made it, and says what it is."""
    from inductor_lens.report.rules import CHECK_TEXT, ITEM_TEXT

    c, at, _, _ = data_dependent
    checks = re.findall(r"^\s*if not \((.+)\):\n\s*raise RuntimeError", c.output_code, re.M)
    assert len(checks) >= 5, c.output_code  # u0 and u1 each in [0, 64], and the torch._check
    glue = [n for n in c.fused_nodes if n.kernel is None]
    assert all(n.ops for n in glue), [(n.name, n.label) for n in glue if not n.ops]
    asserts = [n for n in c.fused_nodes if "_assert_scalar" in n.ops]
    assert len(asserts) == len(checks), ([n.name for n in asserts], checks)
    assert {n.no_kernel_reason for n in asserts} == {CHECK_TEXT}
    # the bounds of a size are checked where the op that made it ran; the torch._check's where its value was made
    # or checked (torch records the simplified check at the .item())
    lines = {n.user_lines[0].line for n in asserts}
    assert {at["nonzero"], at["x[x > 0]"]} <= lines <= {at["nonzero"], at["x[x > 0]"], at["item"], at["_check"]}
    assert lines & {at["item"], at["_check"]}, (lines, at)
    (item,) = [n for n in c.fused_nodes if "_local_scalar_dense" in n.ops]
    assert item.no_kernel_reason == ITEM_TEXT and item.user_lines[0].line == at["item"]


def test_an_input_the_forward_copies_into_another_layout_and_saves_is_held_memory():
    """A conv net's training step on a CPU: Inductor copies the input and the convolutions' weights into channels-
    last layout and saves the copies (the forward's output code returns new buffers where its FX graph returns the
    inputs). They were listed as inputs, "kept alive anyway", and left out of what the step holds; they are
    ``copy`` rows now, counted in ``saved_activation_bytes``, and the rest stay what they were."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return self.c2(torch.relu(self.c1(x))).mean()

    torch.manual_seed(0)
    with inductor_lens.capture(strict=True) as cap:
        torch.compile(Net())(torch.randn(2, 3, 16, 16)).backward()
    fwd, bwd = cap.report.compiles
    code = fwd.output_code[fwd.output_code.find("def call(") :]
    # independent of memory.py: the saved tensors are the last items of the return, in the backward's order
    (ret,) = re.findall(r"^\s+return \((.*)\)\s*$", code, re.M)
    items = [i.strip() for i in ret.split(",") if i.strip()]
    saved = [g.name for g in bwd.graphs["post_grad"].nodes if g.op == "placeholder" and g.role != "tangent"]
    allocated = set(re.findall(r"^\s*(\w+) = empty_strided_cpu\(", code, re.M))
    copied = {
        g for g, item in zip(saved, items[len(items) - len(saved) :]) if g.startswith("primals_") and item in allocated
    }
    assert len(copied) >= 2, (saved, items)  # the two weights at least
    m = fwd.memory
    kinds = {s.name: s.kind for s in m.saved_for_backward}
    assert {n for n, k in kinds.items() if k == "copy"} == copied
    assert {n for n, k in kinds.items() if k == "input"} == {g for g in saved if g.startswith("primals_")} - copied
    held = sum(s.bytes for s in m.saved_for_backward if s.name in copied or kinds[s.name] == "activation")
    assert (
        m.saved_activation_bytes == held > sum(s.bytes for s in m.saved_for_backward if kinds[s.name] == "activation")
    )
    weights = {s.module for s in m.saved_for_backward if s.kind == "copy" and s.module}
    assert weights == {"c1", "c2"}
    # the roll-up by line adds up to what is held, the copies (of no line of the user's) in a row of their own
    assert sum(r.bytes for r in m.saved_by_line) == m.saved_activation_bytes
    assert [r.file for r in m.saved_by_line].count("") == 1
    # alive at the peak, a copy is named as one, under its weight's module, with no line: its kernel's first line
    # was another op's (the copies of every weight in one kernel), and the op column said primals_4
    fx = {n.name: n for n in fwd.graphs["post_grad"].nodes}
    copies = [b for b in m.peak_buffers if fx[b.fx_node].op == "placeholder"]
    assert {b.op for b in copies} >= {"copy of c1.weight", "copy of c2.weight"}, [(b.name, b.op) for b in copies]
    assert all(b.module == b.op[len("copy of ") :].rpartition(".")[0] and b.user_line is None for b in copies)
    by_module = {r.module: r.bytes for r in m.peak_by_module}  # the roll-up counts them under the same modules
    assert all(by_module.get(b.module, 0) >= b.bytes for b in copies if b.module), (by_module, copies)
    others = [b for b in m.peak_buffers if b not in copies]
    assert others and all(b.op and not b.op.startswith(("copy", "buf")) for b in others), [b.op for b in others]


def test_an_attention_calls_outputs_are_live_with_its_inputs_at_its_own_box():
    """SDPA on CPU is one extern call returning a tuple, unpacked after it by ``getitem`` nodes (glue, no box of
    their own). The output code calls it on the qkv projection (12 KiB) and deletes that only once the call has
    returned its 4 KiB output: 16 KiB are live at the attention box, the graph's peak. The timeline credited the
    output to the ``getitem`` after the call, once the input was freed (peak 12 KiB, the attention box
    "allocates nothing"), and gave each glue node a point the graph never draws."""
    import torch
    import torch.nn.functional as F

    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.o = torch.nn.Linear(32, 96), torch.nn.Linear(32, 32)

        def forward(self, x):
            q, k, v = self.qkv(x).view(2, 16, 3, 2, 16).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o(y.transpose(1, 2).reshape(2, 16, 32)).relu()

    with torch.no_grad():
        (c,) = inductor_lens.inspect(Attention(), torch.randn(2, 16, 32)).compiles
    attention = next(n for n in c.fused_nodes if "scaled_dot_product" in n.label)
    glue = [n.name for n in c.fused_nodes if n.is_glue]
    assert glue and not {p.node for p in c.memory.timeline} & set(glue)
    (qkv,) = attention.reads
    call = c.output_code[c.output_code.index("def call(") :]
    assert call.index("scaled_dot_product") < call.index(f"del {qkv}\n")  # input and output live together
    point = next(p for p in c.memory.timeline if p.node == attention.name)
    # the call returns (output, logsumexp, ...): ``buf1 = ..._scaled_dot_product_flash_attention_for_cpu(...)`` holds
    # the logsumexp (2 x 2 x 16 float32, 256 B), which no buffer takes (``buf2 = buf1[0]`` only), until ``del buf1``
    # (nu26 D8: before, the timeline left it out, and this test said so)
    (call_buf,) = re.findall(r"^\s+(buf\d+) = torch\.ops\.aten\._scaled_dot_product\w*\.default\(", call, re.M)
    (out,) = re.findall(rf"^\s+(buf\d+) = {call_buf}\[0\]$", call, re.M)
    assert len(re.findall(rf"^\s+buf\d+ = {call_buf}\[", call, re.M)) == 1
    lse = 2 * 2 * 16 * 4
    assert [(b.name, b.bytes) for b in point.allocates] == [(out, 2 * 2 * 16 * 16 * 4), (call_buf, lse)]
    assert [(b.name, b.bytes) for b in point.frees] == [(qkv, 32 * 96 * 4), (call_buf, lse)]
    assert (c.memory.peak_bytes, c.memory.peak_node) == (32 * 96 * 4 + 2 * 2 * 16 * 16 * 4 + lse, attention.name)


def test_profile_on_cpu_says_the_peak_is_not_measured():
    import torch

    from tests import models

    report = inductor_lens.inspect(models.sin_cos, torch.randn(64), profile=True)
    (c,) = report.compiles
    assert c.memory.measured_peak_bytes is None
    assert c.memory.source.endswith("peak not measured on CPU (torch.cuda memory statistics exist only on a GPU)")


def test_a_measured_peak_is_tied_to_its_compile_by_the_output_code(mlp_step):
    """The GPU path's bookkeeping (capturing/memory.py): each call seen is matched to the compile whose output
    code it ran; a compile with no call seen says so."""
    from inductor_lens.capturing.memory import _key, _with_measured

    report = mlp_step[0]
    fwd, bwd = _pair(report)
    out = _with_measured(report, {_key(str(fwd.output_code) + "\n\n"): 4096}, "")
    f2, b2 = _pair(out)
    assert (
        f2.memory.measured_peak_bytes == 4096 and "peak measured: torch.cuda.max_memory_allocated()" in f2.memory.source
    )
    assert b2.memory.measured_peak_bytes is None and "no call of this graph was seen" in b2.memory.source
    assert f2.memory.source.count("; peak ") == 1  # the CPU note was replaced, not appended to


# ---- repeated layers (models.Stack: four identical blocks) -------------------------------------------------


def test_regions_follow_the_models_modules_in_both_graphs(stack_training_report):
    """The timeline is cut by what ran: models.Stack's input layer, its four blocks, its output layer, in that
    order in the forward and the other way in the backward; the regions cover every point once, in order."""
    want = {"forward": ["inp", "layers.0", "layers.1", "layers.2", "layers.3", "out"]}
    want["backward"] = want["forward"][::-1]
    for c in stack_training_report.compiles:
        regions = c.memory.regions
        assert [r.module for r in regions] == want[c.graph_kind]
        assert [(r.first, r.last) for r in regions] == [
            (a.last + 1 if a else 0, r.last) for a, r in zip([None, *regions], regions)
        ]
        assert regions[-1].last == len(c.memory.timeline) - 1
        assert {r.repeat for r in regions if r.module.startswith("layers.")} == {c.module_view.repeats[0].label}


def test_everything_alive_at_the_peak_adds_up_to_the_peak(stack_training_report):
    """``peak_by_module`` rolls up every buffer alive at the peak, not only the 20 largest: its bytes add up to
    ``peak_bytes`` (what the curve says is live there) and its counts to ``peak_buffer_count``."""
    for c in stack_training_report.compiles:
        m = c.memory
        assert sum(r.bytes for r in m.peak_by_module) == m.peak_bytes
        assert sum(r.count for r in m.peak_by_module) == m.peak_buffer_count >= len(m.peak_buffers)
        blocks = [r for r in m.peak_by_module if r.instances > 1]
        assert blocks and all(r.module.startswith(c.module_view.repeats[0].label) for r in blocks)


def test_a_reused_storage_at_the_peak_is_named_by_the_buffer_it_holds_there(stack_training_report):
    """The output code writes buffers into dead ones' storage (``buf13 = buf6; del buf6  # reuse``): the timeline
    counts a chain once, and the peak table named it by the first buffer it held (a checkpointed layer's activation,
    long dead). Each row names the last buffer of its chain whose writer ran by the peak; no later one has."""
    from inductor_lens.analysis.memory import reuses

    checked = 0
    for c in stack_training_report.compiles:
        step = {}
        boxes = [n for n in c.fused_nodes if not n.is_glue]
        for i, n in enumerate(boxes):
            step.update((b, i) for b in n.writes)
        for n in c.fused_nodes:  # a glue node's buffer is its box's (the one before it)
            step.setdefault(n.name, 0)
        at = [n.name for n in boxes].index(c.memory.peak_node)
        later, aliases = {}, reuses(c.output_code)  # a buffer -> the buffers written into its storage after it
        for new, old in aliases.items():
            later.setdefault(old, []).append(new)
        for row in c.memory.peak_buffers:
            todo, after = list(later.get(row.name, [])), []
            while todo:
                x = todo.pop()
                after.append(x)
                todo += later.get(x, [])
            written = [x for x in after if step.get(x, len(boxes)) <= at]
            assert not written, (c.id, row.name, written)
            checked += row.name in aliases  # the row names a buffer written into an earlier one's storage
    assert checked


def test_saved_groups_hold_every_saved_tensor_once_four_to_a_block_row(stack_training_report):
    fwd = next(c for c in stack_training_report.compiles if c.graph_kind == "forward")
    m = fwd.memory
    names = [n for g in m.saved_groups for n in g.names]
    assert sorted(names) == sorted(s.name for s in m.saved_for_backward)
    assert sum(g.bytes for g in m.saved_groups) == m.saved_bytes
    blocks = [g for g in m.saved_groups if g.module.startswith("layers.0-3")]
    # the backward takes each block's two weight matrices (to pass the gradient back through them), four each
    assert {(g.module, g.what) for g in blocks if g.kind == "input"} == {
        ("layers.0-3.up", "weight"),
        ("layers.0-3.down", "weight"),
    }
    assert blocks and all(g.count == 4 and g.bytes == 4 * g.each for g in blocks)
    kinds = [g.kind for g in m.saved_groups]
    assert kinds == sorted(kinds)  # activations first ("activation" < "input")


def test_the_line_rollup_quotes_each_line(stack_training_report):
    """``saved_by_line`` says each line's code, as it stands in the file (models.Stack's ``relu`` line among them)."""
    import linecache

    fwd = next(c for c in stack_training_report.compiles if c.graph_kind == "forward")
    rows = fwd.memory.saved_by_line
    assert rows and all(r.code == linecache.getline(r.file, r.line).strip() for r in rows)
    assert "return x + self.down(torch.relu(self.up(x)))" in {r.code for r in rows}


def _call_lines(code):
    """The output code's ``call()``: the names it unpacks from ``args`` and the items of its ``return``."""
    body = code[code.index("def call(") :]
    (args,) = re.findall(r"^\s+(.*) = args$", body, re.M)
    (ret,) = re.findall(r"^\s+return \((.*)\)\s*$", body, re.M)
    return [a.strip() for a in args.split(",") if a.strip()], [i.strip() for i in ret.split(",") if i.strip()]


def test_a_dynamic_steps_saved_size_does_not_shift_the_saved_tensors(dynamic_step):
    """torch.compile(dynamic=True): the forward saves the batch size (a SymInt) for the backward. AOT autograd puts
    it LAST in the forward's return (``return (buf6, primals_3, primals_4, ..., s77, )``) and FIRST among the
    backward's inputs (``primals_1, primals_3, ...``). Paired by position, every saved tensor took its neighbour's
    return item: fc2's weight, returned as it is, was a "copy" of it (paired with an allocated buffer), and the
    bytes "made by the forward" counted it; the backward's net peak freed the model's output (also returned to the
    caller, who holds it) and kept an activation it frees."""
    report, logged = dynamic_step
    fwd, bwd = _pair(report)
    f_args, f_ret = _call_lines(fwd.output_code)
    b_args, _ = _call_lines(bwd.output_code)
    sym = [g.name for g in bwd.graphs["post_grad"].nodes if g.op == "placeholder" and g.shape is None]
    assert sym and b_args[0] in sym and not f_ret[-1].startswith(("buf", "primals_")), (b_args, f_ret)  # the layout
    m = fwd.memory
    kinds = {s.name: s.kind for s in m.saved_for_backward}
    # by torch's own logged backward graph: its tensor inputs other than the tangents, in order, no SymInt
    logged_saved = [n for n, _, _ in _inputs(logged["aot_backward_graph"]) if not n.startswith("tangents_")]
    assert list(kinds) == logged_saved
    # every forward input the backward takes is returned by the forward's output code as it is: no copy
    assert all(n in f_ret for n in kinds if n in f_args), (kinds, f_ret)
    assert {n for n, k in kinds.items() if k == "input"} == {n for n in kinds if n in f_args}
    assert "copy" not in kinds.values()
    assert m.saved_activation_bytes == sum(s.bytes for s in m.saved_for_backward if s.name not in f_args)
    # by hand from the output code, at s77 = 4: the forward made fc1's addmm (buf0, 1024 B), the silu (buf1,
    # 1024 B) and the softmax (buf6, 128 B); the backward frees (``del``) addmm and the silu; the softmax is also
    # the model's output (buf6 is returned first and among the saved), which the caller holds
    assert m.saved_activation_bytes == 1024 + 1024 + 128
    assert bwd.memory.freed_input_bytes == 2048


def test_a_dynamic_steps_saved_shapes_are_the_graphs_and_the_bytes_say_their_sizes(dynamic_step, mlp_step):
    """The saved tensors showed the sizes at capture ([4, 32]) where torch's graph has [s77, 32], and nothing said
    that the peak and the saved bytes were counted at s77 = 4. A row keeps the graph's shape and the sizes its bytes
    are taken at (``shape_hint``); ``Memory.sizes_at`` says them for the figures; a static step says nothing."""
    report, logged = dynamic_step
    fwd, bwd = _pair(report)
    got = {s.name: (s.shape, s.shape_hint) for s in fwd.memory.saved_for_backward}
    # torch's own logged backward graph: its tensor inputs and their (symbolic) shapes
    expected = {n: shape for n, _, shape in _inputs(logged["aot_backward_graph"]) if not n.startswith("tangents_")}
    assert {n: shape for n, (shape, _) in got.items()} == expected
    sym = got["primals_4"][0][0]  # the batch size's symbol, as torch names it (s77 in the trial, s33 here)
    assert re.fullmatch(r"s\d+", sym)
    assert got["primals_4"] == ([sym, 32], [4, 32]) and got["primals_5"] == ([8, 64], None)
    assert fwd.memory.sizes_at == bwd.memory.sizes_at == f"at {sym}=4"
    assert _pair(mlp_step[0])[0].memory.sizes_at == ""


def test_a_saved_activation_is_named_by_its_op_as_the_rest_of_the_page_names_it(dynamic_step):
    """nu24 (a new user's trial): SiLU's output, which the backward takes as ``div`` (SiLU's decomposition), was "model
    silu" in the graph's ovals and the table of buffers alive at the peak, and ``div`` alone in the saved-for-backward
    table. Its row shows the op (``SavedTensor.display``: ``silu``, torch's name beside it); an activation whose op is
    its name shows nothing more."""
    from inductor_lens.report.rules import made_by

    fwd, _ = _pair(dynamic_step[0])
    fx = {n.name: n for n in fwd.graphs["post_grad"].nodes}
    acts = [s for s in fwd.memory.saved_for_backward if s.kind == "activation"]
    (silu,) = [s for s in acts if made_by(s.fx_node, fx)[1] == "silu"]
    assert silu.name != "silu" and silu.display == "silu"
    out = next(o for o in fwd.outputs if o.node == silu.fx_node)
    assert out.name.endswith(" silu") and out.role == "saved"
    assert all(s.display == "" for s in acts if made_by(s.fx_node, fx)[1] == s.name)


def test_a_dynamic_kernels_script_runs_it_at_another_size(dynamic_step, tmp_path, monkeypatch, capsys):
    """nu25 M4: a kernel compiled for any batch size (``dynamic=True``) had a script of the sizes seen at capture
    alone: ``--size s77=13`` said "give NAME=N for one of this kernel's sizes: none". Its dynamic sizes are the
    script's SIZES, at their values at capture, every shape and size argument said by them; another runs as given."""
    import runpy

    from inductor_lens.analysis.reproducer import reproducer

    report = dynamic_step[0]
    fwd, _ = _pair(report)
    k = next(k for k in fwd.kernels if k.language == "cpp" and k.reproducer and "size('s" in k.reproducer)
    sizes = re.search(r"^SIZES = (\{[^}]*\})", k.reproducer, re.M).group(1)
    batch = next(n for n, v in eval(sizes).items() if v == 4)  # the batch of 4 the step ran at
    assert f"{batch}: its value at capture (a dynamic size)" in k.reproducer
    path = tmp_path / "dyn.py"
    path.write_text(reproducer(report, k, sizes={batch: 13}))
    assert f"'{batch}': 13" in path.read_text()
    monkeypatch.setattr(sys, "argv", [str(path), "--runs", "2", "--warmup", "0"])
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as e:
        assert not e.code, capsys.readouterr()
    assert f"{k.name}: check passed" in capsys.readouterr().out


def test_a_size_input_is_no_tensor_left_out_of_the_input_bytes(dynamic_step):
    """nu26 D2: under dynamic shapes the graphs take sizes (``primals_1: "Sym(s77)"``), which hold no tensor bytes;
    ``Memory.uncounted_inputs`` listed them, so the view said "inputs ≥ ..." where every tensor input was counted."""
    report, logged = dynamic_step
    for c, kind in zip(_pair(report), ("aot_forward_graph", "aot_backward_graph")):
        sizes = re.findall(r'^\s+(\w+): "Sym\(', _split(logged[kind])[0], re.M)  # torch's own signature
        assert sizes, logged[kind]
        assert c.memory.uncounted_inputs == [] and not c.memory.at_least, (c.graph_kind, c.memory.uncounted_inputs)


def test_a_boolean_mask_index_has_its_tensors_recorded_and_a_script_that_runs_it(
    data_dependent, tmp_path, monkeypatch, capsys
):
    """nu24 (a new user's trial): ``aten.index.Tensor(arg0_1, [buf5])`` (``x[x > 0]``) had no reproducer: the launch
    named the list's tensors without shape or dtype. Each is recorded (``LaunchArg.items``) and the script makes it,
    a boolean mask all True (it selects as many rows as a data-dependent size at its upper bound counts: a random one
    made ``index_put_``'s values of ``u0`` rows fit none). Run here as ``python script.py`` would run it."""
    import runpy

    c, _, _, _ = data_dependent
    (k,) = [k for k in c.kernels if k.launch and any(a.items is not None for a in k.launch.args)]
    (listed,) = [a for a in k.launch.args if a.items is not None]
    (mask,) = listed.items
    assert (listed.value, mask.name, mask.shape, mask.stride, mask.dtype) == ("[buf5]", "buf5", [64], [1], "bool")
    assert (
        k.reproducer and "[make([64], [1], 'bool', 0, " in k.reproducer and ", fill=True)],  # [buf5]" in k.reproducer
    )
    path = tmp_path / "index.py"
    path.write_text(k.reproducer)
    monkeypatch.setattr(sys, "argv", [str(path), "--runs", "2", "--warmup", "0"])
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as e:
        assert not e.code, capsys.readouterr()
    out = capsys.readouterr().out
    assert out.startswith(f"{k.name}: check passed: the kernel ran and returned a [64] float32 tensor"), out


def test_a_kernel_of_data_dependent_sizes_has_a_reproducer_that_runs_them_at_their_bound(data_dependent, tmp_path):
    """nu29 D2: every kernel touching a data-dependent size (a nonzero's ``u0``) was refused a reproducer ("symbolic
    shape ['u0', 64] and no hint"): 36 of 60 kernels of a mixture-of-experts step. The report holds no value for such
    a size, but the output code checks its range (``u0 <= 64``): the script runs each at that bound, its ``SIZES``
    say so, ``--size u0=N`` (the script's, the CLI's, ``reproducer(..., sizes=)``) runs another, and a size neither
    bounded nor given is refused with what to pass."""
    import dataclasses
    import subprocess
    import sys

    from inductor_lens.analysis.reproducer import ReproducerError, kernel_script, reproducer

    c, _, _, report = data_dependent
    (k,) = [k for k in c.kernels if k.launch and any(a.value == "u0" for a in k.launch.args)]
    # a kernel refused a script says why (its panel shows it where the button would be)
    refused = [x for x in c.kernels if x.launch and not x.reproducer]
    assert all(x.reproducer_note for x in refused), [(x.name, x.reproducer_note) for x in refused]
    sizes = re.search(r"^SIZES = (.*)$", k.reproducer, re.M).group(1)
    assert sizes.startswith("{'u0': 64, 'u1': 64}  # u0: its upper bound (the output code checks u0 <= 64); u1: ")
    assert "make([size('u1')], [1], 'float32', 0, " in k.reproducer and "        size('u0'),  # ks0" in k.reproducer
    path = tmp_path / "dd.py"
    path.write_text(k.reproducer)
    p = subprocess.run(
        [sys.executable, str(path), "--runs", "3", "--warmup", "0", "--size", "u1=5"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith(f"{k.name}: check passed: the kernel ran and wrote "), p.stdout
    given = reproducer(report, k, sizes={"u0": 3})
    assert "SIZES = {'u0': 3, 'u1': 64}  # u0: given; u1: its upper bound" in given
    with pytest.raises(ReproducerError, match=r"no size v9 \(its data-dependent sizes: u0, u1\)"):
        reproducer(report, k, sizes={"v9": 1})
    # no bound in the output code it is given, none given: refused, saying what to pass
    with pytest.raises(ReproducerError, match=r"holds no value for u\d .*--size u\d=N"):
        kernel_script(dataclasses.replace(k, reproducer=""), compile_id=c.id)
    # the CLI's --size
    from inductor_lens.report.io import save_json
    from inductor_lens.views import cli

    saved = save_json(report, tmp_path / "dd.json")
    assert cli.main(["repro", saved, f"{c.id}:{k.name}", "--size", "u1=7", "-o", str(tmp_path / "cli.py")]) == 0
    assert "SIZES = {'u0': 64, 'u1': 7}  # u0: its upper bound" in (tmp_path / "cli.py").read_text()
    assert cli.main(["repro", saved, f"{c.id}:{k.name}", "--size", "u1", "-o", "-"]) == 2
