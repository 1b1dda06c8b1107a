"""Calls Inductor writes for a fallback op without reporting them to its kernel hook: Inductor's scatter
(``ScatterFallback``) writes ``aten.scatter_reduce_.two(buf5, ...)`` into ``call()``, a library call that writes its
input and names no buffer of its own. The report showed it as glue ("no kernel of its own: a no-op, a view, or a
buffer reuse"), with the ``zeros`` and ``view`` of its inputs as its ops, and left it out of the kernels."""

import inspect

import torch

import inductor_lens
from inductor_lens.capturing.parse import parse_output_code_kernels
from inductor_lens.capturing.trace_graph import call_launches


def counts_and_top(x, idx):
    counts = torch.zeros(4).scatter_add_(0, idx, torch.ones(idx.numel()))
    v, _ = x.topk(2, dim=-1)
    return counts * 2, v.relu()


def _graphs(fn, *args):
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    out = fn(*args)
    return out, counters["stats"]["unique_graphs"] - before


def test_inductors_scatter_call_is_a_kernel_of_its_own_with_its_op_and_line():
    x, idx = torch.randn(6, 8), torch.tensor([0, 1, 1, 3, 3, 3])
    want, plain = _graphs(torch.compile(counts_and_top), x, idx)
    with inductor_lens.capture() as cap:
        got, lensed = _graphs(torch.compile(counts_and_top), x, idx)
    torch.testing.assert_close(got, want)
    assert lensed == plain == 1
    (c,) = cap.report.compiles
    # every call of call() is a kernel of the report, in the order call() makes them (the import's reading of it)
    launches = call_launches(c.output_code, set(parse_output_code_kernels(c.output_code)))
    assert [x["name"] for x in launches] == [k.name.split("[")[0] for k in c.kernels], c.output_code
    (scatter,) = [k for k in c.kernels if k.name.startswith("aten.scatter_reduce_.two[")]
    assert scatter.kind == "extern" and scatter.source.startswith("aten.scatter_reduce_.two("), scatter.source
    (node,) = [n for n in c.fused_nodes if n.kernel == scatter.name]
    assert (node.ops, node.label, node.is_glue) == (["scatter_add"], "scatter_add", False)
    first = inspect.getsourcelines(counts_and_top)[1]
    assert [f.line for f in node.user_lines] == [first + 1]
    # and it is that call's alone: the kernel filling its input with zeros listed it too (its origin)
    assert [n.name for n in c.fused_nodes if "scatter_add" in n.ops] == [node.name]
