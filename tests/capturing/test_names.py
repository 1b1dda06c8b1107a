"""Names a user knows (issue 22, "Names"), each from a real CPU compile: a backward's saved inputs by the forward
op that made them, a CNN's weight layout copy by what it is and what it copies, an AOTInductor compile's name, kernels,
trigger and inputs (``aoti_pair``'s, shared with test_observer.py); and a report written before these names gets them when loaded."""

from __future__ import annotations

import copy
import dataclasses
import json
import re

import pytest
import torch
from torch import nn

import inductor_lens
from inductor_lens.analysis.reproducer import ReproducerError, reproducer
from inductor_lens.report import rules
from tests import _capture_fixtures


class SmallCNN(nn.Module):
    """Two conv + BatchNorm blocks and a head: on the CPU, Inductor lays convolutions out channels-last."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(x.mean((2, 3)))


#: The ``kernel:`` events of ``cnn_step``'s capture (its ``on_event``), in order.
CNN_EVENTS: list[str] = []


@pytest.fixture(scope="module")
def cnn_step():
    torch.manual_seed(0)
    CNN_EVENTS.clear()
    with inductor_lens.capture(
        strict=True, on_event=lambda m: m.startswith("kernel: ") and CNN_EVENTS.append(m)
    ) as cap:
        torch.compile(SmallCNN())(torch.randn(2, 3, 16, 16)).sum().backward()
    return cap.report


def _placeholders(c) -> dict:
    return {n.name: n for n in c.graphs["post_grad"].nodes if n.op == "placeholder"}


def _said_kernels(events: list[str]) -> list[tuple[str, str]]:
    """``(kernel, compile)`` of each kernel the progress lines of the CLI and the magic count (``views/progress.py``,
    fed ``events``)."""
    from inductor_lens.views.progress import Progress

    progress = Progress()
    said = []
    for m in events:
        if progress.update(m) == "kernel":
            said.append((progress.kernels[-1], progress.compile))
    return said


def test_the_progress_lines_count_and_name_the_kernels_the_report_counts(cnn_step):
    """The magic's line under a cell said "2 kernels generated" where the report said "3 kernel(s)", and the CLI's
    progress named ``extern_kernels.addmm`` once for two calls (a new user's trial, nu22): the events named an
    extern call by its callee, the report names it by the buffer it writes (``extern_kernels.convolution[buf0]``),
    one kernel per call. The events give the report's name, so the lines count what the report counts."""
    said = _said_kernels(CNN_EVENTS)
    assert sorted(said) == sorted((k.name, c.id) for c in cnn_step.compiles for k in c.kernels)
    # the case: one callee called twice in a compile (the forward's two convolutions) is two kernels
    calls = [k.metadata.get("callee") for c in cnn_step.compiles for k in c.kernels if k.language == "extern"]
    assert any(calls.count(callee) > 1 for callee in calls), calls


def test_a_fused_node_names_the_lines_its_own_ops_ran(cnn_step):
    """A kernel computes several fused nodes (bn2's statistics and the head's mean in one C++ kernel): each node's
    lines are its own ops' (the user's innermost frame of each), not its kernel's (every node of that kernel named
    the head's line too, and a loss kernel that counts BatchNorm's num_batches_tracked gave the loss BatchNorm's
    line, beside "FX ops absorbed" listing only the node's ops). The kernel keeps all of them (Kernel.user_lines),
    and the only fused node of a kernel has its kernel's. A constant read by several ops (the backward's one
    ``full_default``, the 0.0 of both ReLUs' ``threshold_backward``) is no op of a line of its own: torch's CSE gave it
    its first reader's stack (see the test below)."""
    shared = 0
    for c in cnn_step.compiles:
        fx = {g.name: g for g in c.graphs["post_grad"].nodes}
        kernels = {k.name: k for k in c.kernels}
        for n in c.fused_nodes:
            own = set()
            for f in n.fx_nodes:
                if f in fx and not fx[f].inputs and len(_readers(c, f)) > 1:
                    continue
                user = [fr for fr in fx[f].user_stack if fr.is_user] if f in fx else []
                own |= {user[-1].line} if user else set()
            k = kernels.get(n.kernel)
            if not own or k is None or len(k.fused_nodes) < 2:
                continue  # the only node of its kernel has its kernel's lines (one list for the kernel everywhere)
            assert {ln.line for ln in n.user_lines} == own, (c.id, n.name)
            shared += {ln.line for ln in k.user_lines} > own  # its kernel ran more lines than it did
    assert shared >= 1


def _readers(c, name: str) -> list:
    return [g for g in c.graphs["post_grad"].nodes if g.op == "call_function" and name in g.inputs]


def _ran(node) -> set:
    user = [fr for fr in node.user_stack if fr.is_user]
    return {user[-1].line} if user else set()


@pytest.mark.compile
def test_a_constant_several_ops_share_lends_no_line_to_the_kernels_that_inline_it(cnn_step):
    """The backward's one ``full_default`` (the 0.0 of both ReLUs' ``threshold_backward``, CSE'd into one node) has
    its first reader's stack: bn2's ReLU's line. bn1's BatchNorm backward kernel, which inlines it for bn1's ReLU's
    ``where``, named bn2's line too (and the Source view counted that kernel under it). Each kernel's and fused
    node's lines are those of the ops it computes, the constant's those of its readers there: checked against the
    post-grad graph."""
    (bwd,) = [c for c in cnn_step.compiles if c.graph_kind == "backward"]
    fx = {g.name: g for g in bwd.graphs["post_grad"].nodes}
    (const,) = [g for g in fx.values() if g.op == "call_function" and not g.inputs and len(_readers(bwd, g.name)) > 1]
    assert {r.target for r in _readers(bwd, const.name)} == {"aten.where.self"}
    lent = 0
    for k in bwd.kernels:
        if const.name not in k.fx_nodes:
            continue
        truth = set().union(*(_ran(fx[f]) for f in k.fx_nodes if f in fx and f != const.name))
        assert {f.line for f in k.user_lines if f.is_user} == truth, k.name
        for n in bwd.fused_nodes:
            if n.kernel == k.name and const.name in n.fx_nodes:
                mine = set().union(*(_ran(fx[f]) for f in n.fx_nodes if f in fx and f != const.name))
                assert {f.line for f in n.user_lines if f.is_user} == mine, n.name
                assert {f[-1].line for f in n.user_stack} == mine, n.name  # the panel's stacks
        lent += not _ran(const) <= truth
    assert lent == 1  # bn1's kernel: without the fix it named bn2's ReLU's line


K_CACHE, V_CACHE = torch.zeros(1, 4, 32, 16), torch.zeros(1, 4, 32, 16)


def attend(q):
    att = (q @ K_CACHE.transpose(-1, -2)) / 16**0.5
    return att.softmax(-1) @ V_CACHE


@pytest.mark.compile
def test_an_attention_inductor_rewrote_into_one_op_is_filed_under_the_users_line():
    """Inductor's pattern pass replaces a hand-written attention with one ``_scaled_dot_product_flash_attention_for_cpu``
    call, a node with no stack of its own (only its output's ``getitem`` keeps the replaced output's): its kernel said
    that its ops "come from code inside torch", and the Source view showed no kernel on the costliest line. It is now
    filed under the line of its output, ``return att.softmax(-1) @ V_CACHE``, as its kernel."""
    report = inductor_lens.inspect(attend, torch.randn(1, 4, 1, 16))
    (c,) = report.compiles
    (node,) = [n for n in c.fused_nodes if n.kernel and "scaled_dot_product" in n.kernel]
    fx = {g.name: g for g in c.graphs["post_grad"].nodes}
    (op,) = [fx[f] for f in node.fx_nodes]
    assert op.target.startswith("aten._scaled_dot_product") and op.user_stack  # the op itself, not only its getitem
    line = attend.__code__.co_firstlineno + 2
    assert [(fr.function, fr.line) for fr in node.user_lines] == [("attend", line)], node.user_lines
    assert node.no_line_reason == ""
    assert [fr.line for fr in c.kernel(node.kernel).user_lines] == [line]


class PreNorm(nn.Module):
    """``x + fc(norm(x))``: on a CPU, each later layer norm's kernel adds the residual chain again."""

    def __init__(self, d: int = 16) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc(self.norm(x))


@pytest.mark.compile
def test_a_fused_node_is_filed_under_the_module_of_what_it_writes_not_of_what_it_recomputes():
    """Three identical pre-norm blocks. Inductor inlines each residual add into the kernels that read it rather than
    keeping the sum: the last kernel, the model's output, adds blocks 1, 2 and 3's results again, one op of each.
    By a vote of all its ops no block had a majority and the node had no module at all (a top-level box after
    the last block); by the ops of blocks 1 and 2 it would be theirs. A node is filed where what it writes was
    made (module_paths.node_stack): the output is block 3's ``x + fc(...)``."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), *(PreNorm() for _ in range(3)))
    with inductor_lens.capture(strict=True) as cap, torch.no_grad():
        torch.compile(model)(torch.randn(4, 8))
    (c,) = cap.report.compiles
    post = {n.name: n for n in c.graphs["post_grad"].nodes}
    out = [n for n in c.fused_nodes if not n.is_glue][-1]  # the last kernel run: the model's output
    assert {tuple(post[x].module_stack) for x in out.fx_nodes} == {("1",), ("2",), ("3",)}, out
    assert out.module_stack == ["3"], (out.name, out.module_stack, out.fx_nodes)
    # each layer norm's node is its own block's, though it recomputes the adds of the blocks before it
    for block in "123":
        (norm,) = [n for n in c.fused_nodes if "var_mean" in {post[x].short_op for x in n.fx_nodes}
                   and any(post[x].module_stack == [block, f"{block}.norm"] for x in n.fx_nodes)]  # fmt: skip
        assert norm.module_stack == [block, f"{block}.norm"], (norm.name, norm.module_stack)


@pytest.mark.compile
def test_a_kernel_that_reduces_is_a_reduction_kernel_whatever_its_first_node(cnn_step):
    """The Kernels tab gave a kernel its first fused node's kind: BatchNorm's statistics kernel, whose first node is
    pointwise, read "pointwise". ``Kernel.kind`` is its nodes' kind, a reduction if any of them reduces."""
    differs = 0
    for c in cnn_step.compiles:
        for k in c.kernels:
            kinds = [n.kind for n in c.fused_nodes if n.kernel == k.name and not n.is_glue]
            if not kinds:
                continue
            assert k.kind == ("reduction" if "reduction" in kinds and k.language != "extern" else k.kind), k.name
            assert k.kind in kinds
            differs += k.kind != kinds[0]
    assert differs >= 1


@pytest.mark.compile
def test_the_op_a_fallback_kernel_runs_whole_is_its_own_not_the_kernel_that_readies_its_input(cnn_step):
    """Inductor calls ``convolution_backward`` whole (a fallback kernel), and gives the buffer a batch norm's backward
    kernel makes ready for it that op's origin: the kernel's name says ``convolution_backward``, and the batch norm's
    nodes listed it among their ops (with conv2's module, and unknown FLOPs where the op is a custom one). Each such op
    is the fallback's alone; the kernel that readies its input keeps its own ops."""
    bw = cnn_step.compiles[1]
    fx = {g.name: g for g in bw.graphs["post_grad"].nodes}
    whole = [n for n in bw.fused_nodes if n.kernel and n.kernel.startswith("torch.ops.aten.convolution_backward")]
    assert len(whole) == 2
    for n in whole:
        assert [fx[f].target for f in n.fx_nodes] == ["aten.convolution_backward.default"]
    theirs = {f for n in whole for f in n.fx_nodes}
    for n in bw.fused_nodes:
        if n.kind != "extern":
            assert not theirs & set(n.fx_nodes) and "convolution_backward" not in n.ops, (n.name, n.ops)
    # torch 2.13 names such a kernel after the convolution (cpp_fused_..._convolution_backward_...; 2.15 does not):
    # its module is what it writes, never conv2's (the fallback's op it listed): a batch norm's, or the top level's
    # for the gradient of forward()'s own relu and mean (test_a_node_writing_only_top_level_ops_is_the_top_levels)
    for n in bw.fused_nodes:
        if n.kind != "extern" and "convolution_backward" in (n.kernel or ""):
            assert not n.module_stack or n.module_stack[-1].startswith("bn"), (n.name, n.module_stack)
    for k in bw.kernels:
        if k.language != "extern":
            assert not theirs & set(k.fx_nodes), k.name


@pytest.mark.compile
def test_a_node_writing_only_top_level_ops_is_the_top_levels(cnn_step):
    """``torch.relu`` and ``x.mean((2, 3))`` run in ``SmallCNN.forward`` itself (the top level): a fused node that
    writes only such ops' results (the mean, fused with bn2's normalization it inlines; in the backward, the relu's
    and mean's gradients) was filed under ``bn2`` by a vote of the ops it inlines, as a KV cache's ``torch.cat``
    was under ``qkv``. Its module is what it writes: the top level. A node writing a module's results keeps it."""
    fwd, bwd = cnn_step.compiles
    post = {g.name: g for g in fwd.graphs["post_grad"].nodes}
    means = [n for n in fwd.fused_nodes if "mean" in n.ops]
    assert means and all(n.module_stack == [] for n in means), [(n.name, n.module_stack) for n in means]
    assert all(any(post[f].module_stack for f in n.fx_nodes) for n in means), "they inline bn2's ops"
    # the backward: the second relu's gradient (with the mean's, before bn2's backward) is the top level's; the first
    # relu's, fused with bn1's backward that it feeds, stays bn1's
    relus = [n for n in bwd.fused_nodes if "le" in n.ops]
    assert [n.module_stack for n in relus][:1] == [[]], [(n.name, n.module_stack) for n in relus]
    assert any(n.module_stack and n.module_stack[-1] == "bn2" for n in bwd.fused_nodes)
    assert any(n.module_stack and n.module_stack[-1] == "bn1" for n in relus)


@pytest.mark.compile
def test_a_backwards_saved_inputs_are_named_by_the_forward_op_and_module_that_made_them(cnn_step):
    fwd, bwd = cnn_step.compiles
    saved = {name: n.display_name for name, n in _placeholders(bwd).items() if n.role == "saved"}
    # the convolutions' outputs are saved for their backward, under the forward's FX names
    assert saved["convolution"] == "conv1 convolution (saved)"
    assert saved["convolution_1"] == "conv2 convolution (saved)"
    assert saved["relu"] == "relu (saved)"  # torch.relu of forward() itself: no module
    # a batch norm's statistics: the op the user called (FX's original_aten), not the rsqrt it decomposed into;
    # this rsqrt is none of its results (it returns a squeeze of it), so the name says what made it on the way
    assert saved["rsqrt_1"] == "bn2 batch_norm: rsqrt (saved)"
    made = {n.name: n for n in fwd.graphs["post_grad"].nodes}
    for name, display in saved.items():
        assert display.endswith(" (saved)") and name in made, (name, display)
        assert "saved by the forward" not in display
        # a view or tuple item (getitem_3, squeeze_1) is named by what it is a view of: its own FX name never shows
        if made[name].short_op in rules.GLUE_OPS:
            assert name not in display, (name, display)
            assert display.split()[0] in ("bn1", "bn2"), display  # the batch norms' statistics


@pytest.mark.compile
def test_a_backwards_outputs_are_named_by_the_forward_input_they_are_the_gradient_of(cnn_step):
    """A backward's outputs were named by the op that made them (``fc mm``, ``fc sum``: which gradient, it did
    not say; two ``[0] mm`` for a weight's and the input's). AOT autograd's backward returns the gradient of each
    forward input in its place, ``None`` for an input that needs none: the output node's inputs leave those out,
    so the capture keeps the positions (``GraphNode.returns``) and each output is named by its forward input."""
    fwd, bwd = cnn_step.compiles
    primals = [n for n in fwd.graphs["post_grad"].nodes if n.op == "placeholder"]
    # torch's printed backward: one result per forward input, in their order
    (ret,) = re.findall(r"^\s*return \((.*)\)$", bwd.graphs["post_grad"].code, re.M)
    printed = [e.strip() for e in ret.split(",") if e.strip()]
    assert len(printed) == len(primals) == 15
    # None exactly where the input needs no gradient: x (a plain tensor) and the batch norms' running statistics
    params = {name for name, _ in SmallCNN().named_parameters()}
    assert {p.display_name for p, e in zip(primals, printed) if e != "None"} == params
    (out,) = [n for n in bwd.graphs["post_grad"].nodes if n.op == "output"]
    assert out.returns == [e if e != "None" else "" for e in printed]
    fx = {n.name: n for n in bwd.graphs["post_grad"].nodes}
    of = {e: p for p, e in zip(primals, printed) if e != "None"}
    assert set(bwd.output_nodes.values()) == set(of)
    for buf, node in bwd.output_nodes.items():
        assert fx[node].shape == of[node].shape, (node, of[node].display_name)  # a gradient has its input's size
        assert bwd.output_names[buf] == f"{of[node].display_name}.grad", (buf, node)
    assert "fc.weight.grad" in bwd.output_names.values() and "x.grad" not in bwd.output_names.values()
    assert bwd.forward_inputs == [p.display_name for p in primals]
    # the launch table and the Memory view's rows name them as the ovals do (they said ``fc mm``, ``conv1 sum``)
    held = {a.name: a.holds for k in bwd.kernels if k.launch for a in k.launch.args if a.name in bwd.output_names}
    assert held and held == {b: bwd.output_names[b] for b in held}
    rows = {b.name: b.op for b in bwd.memory.peak_buffers if b.name in bwd.output_names}
    assert rows and rows == {b: bwd.output_names[b] for b in rows}


@pytest.mark.compile
def test_a_cnn_weight_layout_copy_says_what_it_is_and_what_it_copies(cnn_step):
    fwd = cnn_step.compiles[0]
    inputs = _placeholders(fwd)
    copies = [n for n in fwd.fused_nodes if n.fx_nodes and all(f in inputs for f in n.fx_nodes)]
    assert copies and {n.kernel for n in copies} == {copies[0].kernel}, "the copies are one kernel call"
    kernel = copies[0].kernel
    # torch's output code: the kernel reads graph inputs and writes buffers it allocated channels-last (NHWC)
    (call,) = re.findall(rf"^\s+{kernel}\(([^)]*)\)", fwd.output_code, re.M)
    args = [a.strip() for a in call.split(",")]
    read, written = [a for a in args if a in inputs], [a for a in args if a not in inputs]
    for buf in written:
        (shape, stride) = re.search(
            rf"^\s+{buf} = empty_strided_cpu\(\(([^)]*)\), \(([^)]*)\)", fwd.output_code, re.M
        ).groups()
        n, c, h, w = (int(d) for d in shape.split(","))
        assert [int(d) for d in stride.split(",")] == [c * h * w, 1, w * c, c], buf
    names = [inputs[a].display_name for a in read]
    assert sorted(names) == ["conv1.weight", "conv2.weight", "x"]
    for n in copies:
        assert n.label == "channels-last copy: " + ", ".join(names)
        assert n.ops == [] and n.no_line_reason == rules.INPUT_COPY
    # the panel's FX op list says no op: a placeholder is no op
    assert not any(op.startswith("primals_") for n in fwd.fused_nodes for op in n.ops)


@pytest.mark.compile
def test_an_input_copy_that_shares_its_kernel_with_other_ops_names_no_line_of_theirs(cnn_step):
    """With a dropout after the convolutions, Inductor puts the dropout's random mask in the same C++ kernel as the
    weights' channels-last copies, and the capture records the kernel's stacks for each node of it: the copy of
    ``conv1.weight`` said it came from the dropout's line. A copy runs no op of the user's; it says so instead.
    Here the recorded stacks of the copies are those of the kernel that shares one with another op of this step."""
    from inductor_lens.report.finish import derive_compile

    fwd = cnn_step.compiles[0]
    inputs = _placeholders(fwd)
    copies = {n.name for n in fwd.fused_nodes if n.fx_nodes and all(f in inputs for f in n.fx_nodes)}
    other = next(n for n in fwd.fused_nodes if n.name not in copies and n.user_lines)
    shared = dataclasses.replace(
        fwd,
        fused_nodes=[
            dataclasses.replace(n, user_stack=other.user_stack) if n.name in copies else n for n in fwd.fused_nodes
        ],
    )
    again = derive_compile(shared)
    for n in again.fused_nodes:
        if n.name in copies:
            assert (n.user_lines, n.no_line_reason) == ([], rules.INPUT_COPY), n.name
        else:
            assert n.user_lines == next(m for m in fwd.fused_nodes if m.name == n.name).user_lines


@pytest.mark.compile
def test_a_report_written_before_these_names_gets_them_on_load(cnn_step, tmp_path):
    data = cnn_step.to_dict()
    data["derived"] = 4
    for c in data["compiles"]:
        for n in c["graphs"]["post_grad"]["nodes"]:
            if n.get("role") == "saved":
                n["display_name"] = f"{n['name']} (saved by the forward)"  # what version 0.1 wrote
        for n in c["fused_nodes"]:
            if n["label"].startswith("channels-last copy"):
                n["label"], n["ops"] = n["kernel"], list(n["fx_nodes"])
                n["no_line_reason"] = rules.INSIDE_TORCH
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert inductor_lens.load(old) == cnn_step  # the line-by-line reader
    assert inductor_lens.report.model.Report.from_dict(data) == cnn_step  # a dict


class NormAttention(nn.Module):
    """A layer norm, SDPA and a batch norm: ops with several results, each keeping more than one for the backward."""

    def __init__(self, d: int = 32, heads: int = 2) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.bn = nn.BatchNorm1d(d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.bn(y.transpose(1, 2).reshape(b, t, d).transpose(1, 2)).transpose(1, 2)


@pytest.mark.compile
def test_the_saved_results_of_one_multi_output_op_are_named_apart_and_each_name_is_what_the_tensor_holds():
    """Issue 22: a layer norm keeps its output, mean and rstd for the backward, SDPA its output and logsumexp, a
    batch norm its mean and inverse std; each was named by the op and module alone (``h.0.ln layer_norm (saved)``
    three times). Each name now says which result it is, and the tensor the compiled forward really saved under
    that name (torch's saved-tensor hooks see them in the backward's input order) holds that result, as eager
    torch computes it."""
    torch.manual_seed(0)
    model, x = nn.Sequential(NormAttention(), NormAttention()), torch.randn(2, 8, 32)
    ins: dict[str, torch.Tensor] = {}  # what each norm and the attention got, from an eager copy of the model
    eager = copy.deepcopy(model)
    for name, mod in eager.named_modules():
        if isinstance(mod, (nn.LayerNorm, nn.BatchNorm1d)):
            mod.register_forward_hook(lambda m, a, out, name=name: ins.__setitem__(name, a[0].detach()))
    eager(x)
    packed: list[torch.Tensor] = []
    with inductor_lens.capture(strict=True) as cap:
        compiled = torch.compile(model)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t.detach().clone()) or t, lambda t: t):
            out = compiled(x)
        out.sum().backward()
    fwd, bwd = cap.report.compiles
    saved = [n for n in bwd.graphs["post_grad"].nodes if n.op == "placeholder" and not n.name.startswith("tangents_")]
    assert len(saved) == len(packed)
    value = dict(zip((n.display_name for n in saved), packed))
    expect: dict[str, torch.Tensor] = {}
    for i in ("0", "1"):
        h = ins[f"{i}.ln"]
        var, mean = torch.var_mean(h, -1, correction=0)
        expect[f"{i}.ln layer_norm: mean (saved)"] = mean
        expect[f"{i}.ln layer_norm: rstd (saved)"] = torch.rsqrt(var + 1e-5)
        ln_out = eager[int(i)].ln(h)
        q, k, v = eager[int(i)].qkv(ln_out).view(2, 8, 3, 2, 16).permute(2, 0, 3, 1, 4)
        attn = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=True)
        expect[f"[{i}] scaled_dot_product_flash_attention_for_cpu: output (saved)"] = attn[0]
        expect[f"[{i}] scaled_dot_product_flash_attention_for_cpu: logsumexp (saved)"] = attn[1]
        var, mean = torch.var_mean(ins[f"{i}.bn"], (0, 2), correction=0)
        for what, want in (("mean", mean), ("save_mean", mean), ("rsqrt", torch.rsqrt(var + 1e-5))):
            expect[f"{i}.bn batch_norm: {what} (saved)"] = want
        expect[f"{i}.bn batch_norm: save_invstd (saved)"] = torch.rsqrt(var + 1e-5)
        expect[f"{i}.ln layer_norm: output (saved)"] = ln_out
    results = [n.display_name for n in saved if ": " in n.display_name]
    assert len(results) == len(set(results)), results  # none of them shares a name
    for i in ("0", "1"):  # each module's statistics are named apart: every layer norm its mean and rstd
        assert {f"{i}.ln layer_norm: mean (saved)", f"{i}.ln layer_norm: rstd (saved)"} <= set(results)
        assert f"[{i}] scaled_dot_product_flash_attention_for_cpu: logsumexp (saved)" in results
        assert sum(r.startswith(f"{i}.bn batch_norm: ") for r in results) == 2
    for name in results:
        got, want = value[name], expect[name]
        assert got.numel() == want.numel(), name
        assert torch.allclose(got.flatten(), want.detach().flatten(), atol=1e-5), name


@pytest.mark.slow
def test_aoti_compile_is_named_and_has_its_wrapper_and_kernels(aoti_pair):
    """Named as what it is, its kernels' sources found in the C++ wrapper (issue 16 section 5; with the cpp_wrapper
    compile in test_aot_cpp.py). The compile: ``aoti_pair``'s under the capture, ``models.TwoInputs`` with a dynamic
    batch (test_observer.py runs the same package plain and lensed)."""
    report = aoti_pair.report
    (c,) = report.compiles
    assert c.compile_id == "aot/0" and c.frame.startswith("AOTInductor")
    assert "aoti_compile_and_package" in c.trigger.reason
    generated = [k for k in c.kernels if k.language == "cpp"]
    assert generated and all(k.source and k.source in c.output_code for k in generated)
    assert not [d for d in report.diagnostics if d.code == "source_missing"]
    # the CLI's progress said "aoti_torch_cpu_addmm_out (? inference)", once for two calls (nu22): each kernel, under
    # the report's name and compile id
    assert sorted(_said_kernels(aoti_pair.events)) == sorted((k.name, c.id) for k in c.kernels)
    # its kernels have no launch to reproduce (its C++ declarations, `void cpp_fused_0(const float* in_ptr0, ...)`,
    # were read as calls on torch 2.13: arguments 'float* out_ptr0'); said for what it is, not as three guesses (nu22 D5)
    assert all(k.launch is None for k in c.kernels if k.language == "cpp"), [
        k.launch.call for k in c.kernels if k.launch
    ]
    with pytest.raises(ReproducerError, match="an AOTInductor compile: AOTInductor compiles use the C[+][+] wrapper"):
        reproducer(report, generated[0])


@pytest.mark.slow
def test_aoti_a_parameter_a_kernel_writes_into_a_buffer_is_its_modules_on_its_readers_line(aoti_pair):
    """AOTInductor writes each linear's bias (a ``get_attr`` constant, its values inlined in the C++ code) into the
    buffer its ``addmm`` reads, in a kernel of its own or beside another node's (``fc2.bias`` in the kernel of
    ``fc1``'s ReLU). That node has no stack and no module of its own: it had its kernel's lines (the ReLU's) or
    none, and no module. It belongs to its reader: the module that owns the parameter (as the constant's name
    says, ``fc2`` for ``fc2.bias``), and the reader's line; its kernel names that line too."""
    (c,) = aoti_pair.report.compiles
    fx = {g.name: g for g in c.graphs["post_grad"].nodes}
    kernels = {k.name: k for k in c.kernels}
    held = [n for n in c.fused_nodes if n.fx_nodes and all(fx[f].op == "get_attr" for f in n.fx_nodes)]
    assert {str(fx[f].target) for n in held for f in n.fx_nodes} >= {"fc1.bias", "fc2.bias"}
    for n in held:
        (const,) = n.fx_nodes
        owner = str(fx[const].target).rpartition(".")[0]
        readers = _readers(c, const)
        assert readers and all(r.module_stack[-1:] == [owner] for r in readers)  # the addmm of its linear
        assert n.module_stack[-1:] == [owner], n.name
        lines = set().union(*(_ran(r) for r in readers))
        assert {f.line for f in n.user_lines if f.is_user} == lines, n.name
        assert lines <= {f.line for f in kernels[n.kernel].user_lines}, n.name


@pytest.mark.slow
def test_aoti_says_when_it_compiled_and_names_its_inputs_as_the_exported_program_does(aoti_pair):
    report, ep = aoti_pair.report, aoti_pair.ep
    (c,) = report.compiles
    t = c.trigger
    assert t.kind == "ahead_of_time" and t.summary == rules.trigger_summary("ahead_of_time")
    assert "when, is not known" not in t.summary and "aoti_compile_and_package() call" in t.reason
    call = t.user_stack[-1]  # the fixture's call (tests/_capture_fixtures.py: aoti_pair)
    assert call.file == _capture_fixtures.__file__ and "aoti_compile_and_package(ep" in call.code
    assert t.time_us is not None and t.time_us > 0
    # said once, in the words of its reason, which name the call made (nu22 D5: it said "ahead of time" twice)
    assert report.when.count("ahead of time") == 1 and "aoti_compile_and_package() call" in report.when
    # export's graph signature: its user inputs, in order, are what AOTInductor's placeholders stand for
    users = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    graph_inputs = [_placeholders(c)[name] for name in c.graph_inputs]
    assert (
        [(n.role, n.display_name) for n in graph_inputs]
        == [("input", u) for u in users]
        == [
            ("input", "x"),
            ("input", "y"),
        ]
    )
    consts = {n.target: (n.role, n.display_name) for n in c.graphs["post_grad"].nodes if n.op == "get_attr"}
    assert consts["fc1.weight"] == ("parameter", "fc1.weight") and consts["scale"] == ("buffer", "scale")
    # a report written before the kind existed said "unknown" for AOTInductor: it says ahead of time on load
    data = report.to_dict()
    data["derived"] = 4
    data["compiles"][0]["trigger"].update(kind="unknown", summary="")
    assert inductor_lens.report.model.Report.from_dict(data).compiles[0].trigger.summary == t.summary


@pytest.mark.compile
def test_batchnorms_running_statistics_are_named_as_written_in_place_and_the_panel_says_so(
    cnn_step, tmp_path, offline_page
):
    """A training-mode BatchNorm updates its running statistics and ``num_batches_tracked`` in place: Inductor
    writes those graph inputs (its buffers' mutations). The fused nodes that do it say so, by the buffers' names
    (``FusedNode.mutates``, ``in_place``); the graph marks their boxes (a folded corner, keyed in the legend, the
    sentence in the tooltip) and the panel of such a node reads the same sentence; the other nodes write nothing
    in place."""
    from tests.views.test_html_export import _assert_clean, _open

    (forward,) = [c for c in cnn_step.compiles if c.graph_kind == "forward"]
    inputs = _placeholders(forward)
    writers = [n for n in forward.fused_nodes if n.mutates]
    written = {inputs[b].display_name for n in writers for b in n.mutates}
    assert written == {f"bn{i}.{s}" for i in (1, 2) for s in ("running_mean", "running_var", "num_batches_tracked")}
    assert all(inputs[b].role == "buffer" for n in writers for b in n.mutates)
    for n in writers:
        assert n.in_place.startswith("Writes ") and (
            "a buffer of your model" in n.in_place or "buffers of" in n.in_place
        )
        assert all(inputs[b].display_name in n.in_place and b in n.in_place for b in n.mutates), n.in_place
    assert not [n.name for n in forward.fused_nodes if n.in_place and not n.mutates]
    (backward,) = [c for c in cnn_step.compiles if c.graph_kind == "backward"]
    assert not [n.name for n in backward.fused_nodes if n.mutates]  # a backward writes no input in place here

    path = tmp_path / "cnn.html"
    cnn_step.save_html(path)
    _open(offline_page, path)
    writer = writers[0]
    if len(cnn_step.compiles) > 1 and cnn_step.compiles[0].id != forward.id:
        offline_page.select_option(".il-compile", forward.id)
    # each box that writes in place has a folded corner, its tooltip says what it writes (a box of several
    # writers: the first one's sentence and how many more), and the legend keys it
    drawn = offline_page.evaluate(
        """() => [...document.querySelectorAll('[data-view="fusion"] g[data-node]')].map((g) => ({
             members: (g.dataset.nodes || g.dataset.node).split(' '), marked: g.dataset.inPlace === '1',
             corner: !!g.querySelector('path.il-corner'), title: g.querySelector('title').textContent }))"""
    )
    by_name = {n.name: n for n in forward.fused_nodes}
    assert any(b["marked"] for b in drawn) and all(b["marked"] == b["corner"] for b in drawn), drawn
    for b in drawn:
        said = [by_name[m].in_place for m in b["members"] if by_name[m].in_place]
        assert b["marked"] == bool(said), b
        if said:  # a box of several writers: the first one's sentence and how many more
            more = len(said) - 1
            assert said[0] in b["title"] and (f"and {more} more fused node" in b["title"]) == (more > 0), b
    assert offline_page.locator('[data-role="in-place-legend"]').inner_text() == "writes a tensor in place"
    offline_page.locator(f'[data-view="fusion"] [data-node="{writer.name}"]').first.click()
    assert offline_page.locator('[data-role="in-place"]').inner_text() == writer.in_place
    other = next(n for n in forward.fused_nodes if not n.mutates and not n.is_glue)
    offline_page.locator(f'[data-view="fusion"] [data-node="{other.name}"]').first.click()
    assert offline_page.locator('[data-role="in-place"]').count() == 0
    # at 1000 x 700 the graph does not fit: the overview (folded to its "map" button, or unfolded by the user) sits in
    # the pane's corner, and the legend, one key longer, wraps short of either (it ran under the overview)
    offline_page.set_viewport_size({"width": 1000, "height": 700})
    _open(offline_page, path)
    legend = offline_page.locator('[data-view="fusion"] .il-legend')
    # the overview opens folded or unfolded by the pane's room (a diagnostics banner, as when an earlier compile of
    # the process makes the capture reset dynamo, leaves less): both states are checked, folded first
    if offline_page.locator('[data-view="fusion"] [data-role="minimap"]').is_visible():
        offline_page.locator('[data-view="fusion"] [data-role="minimap-fold"]').click()
    for role in ("minimap-unfold", "minimap"):
        corner = offline_page.locator(f'[data-view="fusion"] [data-role="{role}"]')
        if role == "minimap" and not corner.is_visible():
            offline_page.locator('[data-view="fusion"] [data-role="minimap-unfold"]').click()
        assert corner.is_visible(), role
        m, lg = corner.bounding_box(), legend.bounding_box()
        assert lg["x"] + lg["width"] <= m["x"] + 0.5 or lg["y"] + lg["height"] <= m["y"] + 0.5, (role, lg, m)
    # nu24: the 12 tensors the forward saves for the backward stood in one row under the last box with the output it
    # returns, the graph 2,500 px wide for 7 boxes and its edges running far to the right; each stands below the
    # box that writes it now, the returned output alone in the last row
    offline_page.get_by_text("Expand all").click()
    ovals = offline_page.evaluate(
        """() => [...document.querySelectorAll('[data-view="fusion"] g.il-output:not(.il-stub)')].map((g) => {
             const b = g.getBBox(); return [g.querySelector('title').textContent, b.y + b.height / 2]; })"""
    )
    saved = [y for title, y in ovals if title.endswith(": saved for backward")]
    (returned,) = [y for title, y in ovals if title.endswith(": output · returned")]
    assert len(saved) >= 10 and len({round(y) for y in saved}) >= 3, ovals  # in the rows of their writers
    assert all(y < returned - 1 for y in saved), ovals  # none in the graph's last row
    # nu24 (a new user's trial): the panel of a fused node of a kernel of several said the node's kind and line under
    # the kernel's name, where the kernel table says the kernel's: each is said as whose where they differ
    by_name = {n.name: n for n in forward.fused_nodes}

    def line_apart(k, f):  # a node whose first line is not its kernel's
        return bool(by_name[f].user_lines) and by_name[f].user_lines[0].line != k.user_lines[0].line

    # bn2's statistics and the head's mean in one kernel: nodes of another kind, and of another line, than the kernel
    k = next(
        k
        for k in forward.kernels
        if k.user_lines
        and any(by_name[f].box_kind != k.kind for f in k.fused_nodes)
        and any(line_apart(k, f) for f in k.fused_nodes)
    )
    other_kind = next(f for f in k.fused_nodes if by_name[f].box_kind != k.kind)
    other_line = next(f for f in k.fused_nodes if line_apart(k, f))
    offline_page.locator(f'[data-view="fusion"] g[data-kernel="{k.name}"]').first.click()
    for name in filter(None, (other_kind, other_line)):
        sibling = offline_page.locator(f'.il-panel [data-sibling="{name}"]')
        if sibling.count():
            sibling.first.click()
        head = offline_page.locator(".il-panel-head")
        assert head.locator('[data-role="selected-name"]').inner_text() == k.name
        n = by_name[name]
        kinds = head.locator('[data-role="node-kind"], [data-role="kernel-kind"]').all_inner_texts()
        assert kinds == ([f"{n.box_kind} node", f"{k.kind} kernel"] if n.box_kind != k.kind else [n.box_kind]), kinds
        line = head.locator('[data-role="kernel-line"]')
        if n.user_lines and n.user_lines[0].line != k.user_lines[0].line:
            assert (
                line.inner_text()
                == f" · its kernel's: {k.user_lines[0].file.rsplit('/', 1)[-1]}:{k.user_lines[0].line}"
            )
        else:
            assert line.count() == 0
    # nu24: the kernel table's line cell of the channels-last copy, which no line of the user's ran, was blank: it
    # says why, as Python says it (Kernel.no_line_text, the whole reason its tooltip)
    (copy,) = [k for k in forward.kernels if k.no_line_text]
    assert copy.no_line_text == "Inductor's layout copy" and copy.no_line_reason == rules.INPUT_COPY
    offline_page.click('[data-tab="kernels"]')
    cell = offline_page.locator(f'[data-view="kernels"] [data-kernel="{copy.name}"] [data-role="no-line"]')
    assert cell.inner_text() == copy.no_line_text
    assert cell.locator("xpath=..").get_attribute("title") == copy.no_line_reason
    _assert_clean(offline_page)


@pytest.mark.compile
def test_a_compiled_adamw_step_is_named_by_its_class_and_its_state_by_key_and_parameter():
    """``AdamW`` inherits ``Adam.step``: the compile was labelled ``Adam.step()``, the code's class, where the user
    called ``opt.step()`` on an AdamW; it is named by the class of the object that ran it. Dynamo's sources name the
    optimizer's state by position (``self.state[list(dict.keys(self.state))[0]][list(dict.keys(...))[1]]``); each
    state tensor is named by its key and its parameter: the keys the optimizer's own state holds."""
    torch.manual_seed(0)
    w = nn.Parameter(torch.randn(8))
    w.grad = torch.randn(8)
    opt = torch.optim.AdamW([w], lr=0.1)
    with inductor_lens.capture(strict=True) as cap:
        torch.compile(opt.step)()
    (c,) = [c for c in cap.report.compiles if any(n.mutates for n in c.fused_nodes)]
    assert c.label.startswith("AdamW.step()"), c.label
    assert [call.target for call in cap.report.compile_calls] == ["AdamW.step"]  # torch.compile(opt.step) of it
    held = {n.name: n for n in c.graphs["post_grad"].nodes if n.op == "placeholder" and n.role == "attribute"}
    param = next(n.display_name for n in c.graphs["post_grad"].nodes if n.role == "parameter")
    assert sorted(n.display_name for n in held.values()) == sorted(f"{key} of {param}" for key in opt.state[w]), held
    assert {key for key in opt.state[w]} == {"step", "exp_avg", "exp_avg_sq"}
    said = " ".join(n.in_place for n in c.fused_nodes)
    assert f"exp_avg of {param}" in said and "dict.keys" not in said, said


@pytest.mark.compile
def test_a_functions_two_modules_and_the_values_a_graph_break_hands_over_are_named_as_the_user_knows_them():
    """``dec(enc(x))`` with two ``nn.Sequential`` a compiled function holds: each Linear is named by its module
    (``enc.0``, ``dec.0``: dynamo's ``L['enc']._modules['0']``), in the parameters' names and the nodes' module stacks
    alike; both were ``0``. After a graph break, the value the code before it hands over (dynamo's ``___stack0``,
    ``___stack0[0]``) is named by the name the user's code stores it in: ``y = eager(...)``, ``g, = pair(y)``."""
    torch.manual_seed(0)
    enc = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    dec = nn.Sequential(nn.Linear(8, 8), nn.Sigmoid())
    eager = torch._dynamo.disable(lambda t: t * 2)
    pair = torch._dynamo.disable(lambda t: (t - 1,))

    def f(x):
        y = eager(enc(x))
        y = y.cos()
        (g,) = pair(y)
        return dec(g)

    with torch.no_grad(), inductor_lens.capture(strict=True) as cap:
        torch.compile(f)(torch.randn(4, 8))
    first, middle, last = cap.report.compiles
    inputs = {c.id: {n.name: (n.role, n.display_name) for n in _placeholders(c).values()} for c in cap.report.compiles}
    assert sorted(inputs[first.id].values()) == [
        ("input", "x"),
        ("parameter", "enc.0.bias"),
        ("parameter", "enc.0.weight"),
    ], inputs
    assert sorted(inputs[middle.id].values()) == [("input", "y")], inputs
    assert sorted(inputs[last.id].values()) == [
        ("input", "g"),
        ("parameter", "dec.0.bias"),
        ("parameter", "dec.0.weight"),
    ], inputs
    for c, root in ((first, "enc"), (last, "dec")):
        fx = {n.name: n for n in c.graphs["post_grad"].nodes}
        (addmm,) = [n for n in fx.values() if n.target.startswith("aten.addmm")]
        assert addmm.module_stack == [root, f"{root}.0"], addmm.module_stack
        weight = fx[fx[addmm.inputs[2]].inputs[0]]  # addmm(bias, x, permute(weight))
        assert rules.owner_module(weight.display_name) == f"{root}.0", weight  # the module its addmm ran in
        (node,) = [n for n in c.fused_nodes if addmm.name in n.fx_nodes]
        assert node.module_stack == [root, f"{root}.0"], node.module_stack


class _NotSelf(nn.Module):
    """A module whose methods name their instance ``s``, not ``self``."""

    def __init__(s):
        super().__init__()
        s.l1, s.mid = nn.Linear(8, 8), nn.Sequential(nn.Linear(8, 8))

    def forward(s, x):
        return s.mid(torch.relu(s.l1(x))).sum()


@pytest.mark.compile
def test_a_module_whose_forward_names_its_instance_otherwise_is_named_as_with_self():
    """``def forward(s, x)``: dynamo's sources start at ``L['s']``, and every parameter and module was named with an
    ``s.`` ahead (``s.l1.weight``, ``s.mid``) where ``named_parameters()`` says ``l1.weight``. The frame's name for
    its instance (the method's first parameter, of the class its qualified name names) is its ``self``."""
    torch.manual_seed(0)
    model = _NotSelf()
    with inductor_lens.capture(strict=True) as cap:
        torch.compile(model)(torch.randn(4, 8)).backward()
    fwd = cap.report.compiles[0]
    params = {n.display_name for n in _placeholders(fwd).values() if n.role == "parameter"}
    assert params == {name for name, _ in model.named_parameters()}, params
    stacks = {p for c in cap.report.compiles for n in c.fused_nodes for p in n.module_stack}
    assert stacks and not any(p.startswith("s.") or p == "s" for p in stacks), stacks
    assert {"l1", "mid"} <= stacks, stacks
    bwd = cap.report.compiles[1]
    assert "l1.weight.grad" in bwd.output_names.values(), bwd.output_names
    assert fwd.frame == "_NotSelf.forward"


def _random_ops(x):
    a = torch.nn.functional.dropout(x, p=0.5, training=True)
    b = torch.rand_like(x)
    c = torch.randint(0, 10, x.shape)
    return a + b * c


@pytest.fixture(scope="module", params=[False, True], ids=["seeds", "fallback_random"])
def random_ops(request):
    """A dropout, rand_like and randint compiled as Inductor does by default (one kernel of seeds for all three) and
    with ``fallback_random`` (each op torch's own, ordered after the one before by ``control_deps``)."""
    torch._dynamo.reset()
    with torch._inductor.config.patch(fallback_random=request.param), inductor_lens.capture(strict=True) as cap:
        torch.compile(_random_ops)(torch.randn(8, 8))
    return request.param, cap.report.compiles[0]


def _random_lines():
    import inspect

    first = inspect.getsourcelines(_random_ops)[1]
    return [first + 1, first + 2, first + 3]  # the dropout's, rand_like's and randint's


@pytest.mark.compile
def test_inductors_random_seeds_say_what_made_them_and_for_which_lines(random_ops):
    """Inductor's RNG pass draws one seed per random op (``prims.inductor_seeds``, ``aten.randint.low_out``): its node
    said "they come from code inside torch (such as torch.nn modules)", untrue. It says Inductor made them, for the
    random ops of the user's lines, and its launch shows the seeds' bound exactly (not 9223372036854776000)."""
    fallback, c = random_ops
    seeds = [n for n in c.fused_nodes if n.ops == ["inductor_seeds"]]
    if fallback:
        assert seeds == []
        return
    (node,) = seeds
    if node.user_lines:  # torch 2.15 gives the seeds the first random op's stack: a line of the user's, shown
        assert node.no_line_reason == "" and node.user_lines[0].file.endswith("test_names.py")
    else:  # torch 2.13 records none
        where = "test_names.py:" + ", ".join(map(str, _random_lines()))
        assert node.no_line_reason.startswith("Inductor made these seeds"), node.no_line_reason
        assert f"(those of {where})" in node.no_line_reason and "inside torch" not in node.no_line_reason
    launch = next(k for k in c.kernels if k.name == node.kernel).launch
    assert "9223372036854775807" in [a.value_text for a in launch.args], launch.args


@pytest.mark.compile
def test_a_random_op_fallback_random_orders_is_named_by_its_op_and_its_ordering_is_no_data_edge(random_ops):
    """``fallback_random`` wraps each random op in ``control_deps((dropout,), subgraph_rand_like, x)``: the boxes read
    "control_deps" twice, and the ordering (Inductor's fake WeakDep: rand_like after the dropout, randint after
    rand_like) was drawn as data edges, the dropout's result even feeding randint. The boxes name the ops they run,
    and the edges are the data the kernels read: x into the dropout and rand_like, the three results into the sum."""
    fallback, c = random_ops
    if not fallback:
        return
    boxes = {n.name: n for n in c.fused_nodes if not n.is_glue}
    labels = sorted(n.label for n in boxes.values() if n.kernel and n.kind == "extern")
    assert labels == ["native_dropout", "rand_like", "randint"], labels
    assert all("control_deps" not in n.ops for n in c.fused_nodes), [n.ops for n in c.fused_nodes]
    post = {n.name: n for n in c.graphs["post_grad"].nodes}
    assert {post[n].short_op for n in post if post[n].target == "higher_order.control_deps"} == {"rand_like", "randint"}
    by_label = {n.label: n.name for n in boxes.values()}
    drop, rand, randint = by_label["native_dropout"], by_label["rand_like"], by_label["randint"]
    nodes = {(e.source, e.target) for e in c.edges if e.kind == "node"}
    assert (drop, rand) not in nodes and (drop, randint) not in nodes and (rand, randint) not in nodes, c.edges
    into_sum = {e.source for e in c.edges if e.kind == "node"}
    assert into_sum == {drop, rand, randint}, c.edges


def _aliasing(x, w):
    y = x @ w
    z = torch.relu(y)
    return (x, x.view(-1), x.t()), {"y": y, "z": z, "xv": x[1:]}, [z * 2, w]


def test_each_output_is_its_own_views_of_an_input_are_drawn_from_it_and_named_by_the_users_variable():
    """``Compile.outputs``, position by position (nu18 D4, O-h). The graph returns three views of ``x`` and three
    buffers; ``output_names`` is by buffer, so the views were one entry, drawn nowhere, and ``y``/``z`` were named
    ``mm``/``relu``. Each output is checked against torch's own output code (its ``return``) and dynamo's graph; on a
    report made before them the outputs are filled from that code, alike."""
    from inductor_lens.report.finish import derive_compile

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    with inductor_lens.capture(strict=True) as cap:
        torch.compile(_aliasing)(x, w)
    (c,) = cap.report.compiles
    items = rules.returned_items(c.output_code)
    # return (reinterpret_tensor(arg0_1, (128, ), ...), reinterpret_tensor(arg0_1, (16, 8), (1, 16), 0), buf0, ...)
    assert [o.buffer for o in c.outputs] == [rules.storage_name(i) for i in items] and len(items) == 6
    assert [o.view for o in c.outputs] == [i.startswith("reinterpret_tensor(arg0_1,") for i in items]
    assert [o.view for o in c.outputs] == [True, True, False, False, True, False]
    assert [(o.name, o.note) for o in c.outputs] == [
        ("view", "view of x (no copy)"),
        ("t", "view of x (no copy)"),
        ("y", "graph output"),  # y = x @ w: dynamo's graph names it after the user's variable, not mm
        ("z", "graph output"),
        ("slice", "view of x (no copy)"),
        ("mul", "graph output"),  # z * 2 is stored in no variable: its op
    ]
    assert all(o.drawn for o in c.outputs)
    drawn = sorted((e.kind, e.source, e.target) for e in c.edges if e.kind in ("alias", "output"))
    mm, pointwise = (n.name for n in c.fused_nodes)
    assert drawn == sorted(
        [("alias", "arg0_1", "0"), ("alias", "arg0_1", "1"), ("alias", "arg0_1", "4")]
        + [("output", mm, "2"), ("output", pointwise, "3"), ("output", pointwise, "5")]
    )
    assert c.memory.peak_bytes == 3 * 8 * 4 * 4  # the views cost nothing: y, z, z * 2
    # a report made before Compile.outputs: the output code's return and the output node's give the same
    old = derive_compile(dataclasses.replace(c, outputs=[]))
    assert [(o.buffer, o.node, o.view) for o in old.outputs] == [(o.buffer, o.node, o.view) for o in c.outputs]
    assert [o.name for o in old.outputs] == ["view", "t", "y", "z", "slice", "mul"]  # dynamo's graph is there


def test_a_training_forwards_outputs_each_say_their_role_and_the_inputs_it_saves_are_not_drawn(training_report):
    """A training forward's outputs by role, position by position (AOT autograd's layout): the user's output
    ``returned``, then what the backward needs ``saved``: the softmax both (two places of one buffer: two outputs,
    where ``returned_outputs`` / ``saved_outputs`` list it once each), and graph inputs saved as they are (``x``,
    ``fc2.weight``), which are not drawn (the Memory view lists the tensors saved)."""
    fwd = training_report.compiles[0]
    items = rules.returned_items(fwd.output_code)
    assert [o.buffer for o in fwd.outputs] == [rules.storage_name(i) for i in items]
    assert [o.role for o in fwd.outputs] == ["returned"] + ["saved"] * (len(items) - 1)
    assert [o.buffer for o in fwd.outputs if o.role == "returned"] == fwd.returned_outputs
    assert list(dict.fromkeys(o.buffer for o in fwd.outputs if o.role == "saved")) == fwd.saved_outputs
    inputs = [o for o in fwd.outputs if o.buffer in fwd.graph_inputs]
    assert {o.name for o in inputs} >= {"x", "fc2.weight"} and not [o for o in inputs if o.drawn or o.view]
    softmax = [(o.name, o.note) for o in fwd.outputs if o.buffer == fwd.returned_outputs[0]]
    assert softmax == [("softmax", "output · returned"), ("softmax", "saved for backward")]  # examples.MLP's end
    assert all(o.drawn for o in fwd.outputs if o.buffer not in fwd.graph_inputs)
