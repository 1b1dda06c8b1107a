"""What two reports of the same code say alike is not a difference (nu28 D3, D4): a profiled capture against a
TORCH_TRACE import of the same script, the same ops fused into more scheduler nodes of one kernel, a frozen linear
computed in two launches that a GEMM template computes in one. Unit tests on report data: the recorded CPU reports
of one frozen MLP compiled by default and with max-autotune (``cpu_frozen_mlp_*.json``), each changed the way the
trial's reports differ (what changes is said at each step); no compile, no torch."""

from __future__ import annotations

import dataclasses as dc
import json
import pathlib
import re

import inductor_lens
from inductor_lens.report.rules import without_kernel_profile
from inductor_lens.views.diff_views import slim_report

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _load(which: str):
    return inductor_lens.load(FIXTURES / f"cpu_frozen_mlp_{which}.json")


def _with_compile(r, **changes):
    (c,) = r.compiles
    return dc.replace(r, compiles=[dc.replace(c, **changes)])


def _profiled(source: str, name: str) -> str:
    """``source`` as a profiled capture writes it (``cpp.enable_kernel_profile``, as in the trial's ``tb.json``):
    the record-function header first, the handle after the error flag."""
    event = f"graph_0_{name}"
    source = source.replace(
        "#include <torch/csrc/inductor/cpp_prefix.h>",
        "#include <torch/csrc/inductor/aoti_runtime/utils.h>\n#include <torch/csrc/inductor/cpp_prefix.h>",
        1,
    )
    flag = "inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;\n"
    handle = f'    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_{event}_("{event}", nullptr);\n'
    assert flag in source
    return source.replace(flag, flag + handle, 1)


def _trace_import(r):
    """``r`` as a TORCH_TRACE import without provenance gives it (the trial's ``tb_trace.json``): one fused node
    per kernel, named after it, no FX op linked to a C++ kernel, and no shape for the multi-output op: here the
    MKL linear's post-grad node (the trial's SDPA: ``[[4, 4, 16, 16], [4, 4, 16]]`` in the capture, ``None`` in the
    import)."""
    (c,) = r.compiles
    nodes = []
    for k in c.kernels:
        name = k.name if k.language != "extern" else k.call_sites[0][0]
        fx = k.fx_nodes if k.language == "extern" else []
        nodes.append(dc.replace(c.fused_node(k.call_sites[0][0]), name=name, members=[name], fx_nodes=fx))
    kernels = [
        dc.replace(k, fx_nodes=k.fx_nodes if k.language == "extern" else [], call_sites=[[n.name]])
        for k, n in zip(c.kernels, nodes)
    ]
    g = c.graphs["post_grad"]
    post = dc.replace(g, nodes=[dc.replace(n, shape=None) if n.name == "_mkl_linear" else n for n in g.nodes])
    return dc.replace(
        _with_compile(r, fused_nodes=nodes, kernels=kernels, graphs={**c.graphs, "post_grad": post}), origin="trace"
    )


def test_a_profiled_capture_and_a_trace_import_of_the_same_code_are_the_same():
    """nu28 D3: ``diff tb.json tb_trace.json`` (the same script, live with ``--profile`` and imported from its
    TORCH_TRACE log) said 29 differences: every C++ kernel "removed" and "added" again (its ops not known in the
    import, and its source two instrumentation lines longer in the profiled capture), the SDPA rows "changed: shape
    [[4, 4, 16, 16], [4, 4, 16]] → None". The code is the same: every launch is ``same``, and the row says what the
    import does not know."""
    a = _load("default")
    (ca,) = a.compiles
    a = _with_compile(
        a,
        kernels=[dc.replace(k, source=_profiled(k.source, k.name)) if k.language == "cpp" else k for k in ca.kernels],
    )
    b = _trace_import(_load("default"))
    cpp = [k.name for k in a.kernels if k.language == "cpp"]
    assert len(cpp) == 2 and all(k.source != b.compiles[0].kernel(k.name).source for k in a.kernels if k.name in cpp)

    d = inductor_lens.diff(a, b)
    assert d.summary == {"same": 4, "changed": 0, "merged": 0, "split": 0, "only_a": 0, "only_b": 0}, d.text()
    rows = {k.a: k for k in d.kernels}
    assert all(k.a == k.b for k in d.kernels)
    for name in cpp:
        assert (rows[name].not_known_b, rows[name].what_changed) == (["ops"], "ops not known in B"), rows[name]
    mkl = "torch.ops.mkl._mkl_linear.default[buf2]"  # the node whose shape B lacks
    assert (rows[mkl].changes, rows[mkl].not_known_b, rows[mkl].what_changed) == ([], ["shape"], "shape not known in B")
    shipped_rows = {k["a"]: k for k in json.loads(d.to_json())["compiles"][0]["kernels"]}
    assert [shipped_rows[n]["not_known_b"] for n in cpp] == [["ops"], ["ops"]]
    # the other way round, A's side does not know
    r = inductor_lens.diff(b, a)
    assert r.summary["same"] == 4 and {k.what_changed for k in r.kernels} == {
        "ops not known in A",
        "shape not known in A",
        "",
    }, r.text()
    # the compare page shows the sources as the diff compared them: its source diff's line numbers are the page's
    shipped = {k["name"]: k["source"] for k in slim_report(a)["compiles"][0]["kernels"]}
    for name in cpp:
        assert "RAIIAtenRecordFunctionHandle" not in shipped[name]
        assert shipped[name] == without_kernel_profile(a.compiles[0].kernel(name).source)
        assert shipped[name] == b.compiles[0].kernel(name).source


def test_a_profiled_kernel_against_an_unprofiled_one_is_not_a_source_change():
    """Two captures of the same model, A with ``--profile``: the instrumentation is no change of the kernel."""
    a, b = _load("default"), _load("default")
    (ca,) = a.compiles
    a = _with_compile(
        a,
        kernels=[dc.replace(k, source=_profiled(k.source, k.name)) if k.language == "cpp" else k for k in ca.kernels],
    )
    d = inductor_lens.diff(a, b)
    assert d.summary["same"] == 4 and all(not k.changes for k in d.kernels), d.text()


def _unfused(r, kernel: str, split: list):
    """``r`` with the fused node of ``kernel`` cut into scheduler nodes of its own, ``split`` the FX ops each lists
    (a pointwise op inlined into two nodes is listed by both, as torch's unfused nodes list their origins): what
    ``config.max_fusion_size=1`` made of the trial's ``dm.py`` (``dm_nofuse.json``: six nodes in one C++ kernel)."""
    (c,) = r.compiles
    (site,) = c.kernel(kernel).call_sites
    (node,) = [c.fused_node(n) for n in site]
    parts = [
        dc.replace(node, name=f"{node.name}_{i}", members=[f"{node.name}_{i}"], fx_nodes=fx)
        for i, fx in enumerate(split)
    ]
    nodes = [x for n in c.fused_nodes for x in (parts if n.name == node.name else [n])]
    kernels = [dc.replace(k, call_sites=[[p.name for p in parts]]) if k.name == kernel else k for k in c.kernels]
    return _with_compile(r, fused_nodes=nodes, kernels=kernels)


def test_the_same_ops_in_more_scheduler_nodes_are_not_added_ops():
    """nu28 D4a: ``config.max_fusion_size=1`` against the default said "+ add ×3, erf ×3, mul ×12, sigmoid ×4,
    var_mean ×3" for a C++ kernel whose loops compute the same ops in both output codes: the ops each unfused node
    lists (its inlined origins, again in each) were counted against the one fused node's, each once. Counted alike,
    the ops are the same; the row says what changed: the scheduler fused fewer nodes into the kernel."""
    a = _load("default")
    kernel = "cpp_fused_add_addmm_mul_relu_1"
    assert a.compiles[0].kernel(kernel).fx_nodes == ["mul", "add"]
    b = _unfused(a, kernel, [["mul"], ["mul", "add"]])  # the mul computed again in the add's node
    d = inductor_lens.diff(a, b)
    (row,) = [k for k in d.kernels if k.status != "same"]
    assert (row.a, row.b, row.moved_ops_in, row.moved_ops_out) == (kernel, kernel, [], []), row
    assert row.changes == ["nodes"] and len(row.fused_a) == 1 and len(row.fused_b) == 2
    assert row.what_changed == "fused nodes 1 → 2 (the scheduler fused fewer; the same ops)"
    back = next(k for k in inductor_lens.diff(b, a).kernels if k.status != "same")
    assert back.what_changed == "fused nodes 2 → 1 (the scheduler fused more; the same ops)"
    # a TORCH_TRACE import has one fused node per kernel, not the scheduler's: no count to compare
    assert inductor_lens.diff(b, dc.replace(a, origin="trace")).summary["same"] == 4


def _bias_only(r, kernel: str, node: str):
    """``r`` where the second linear's kernel computes its bias add alone, which torch attributes to the linear
    itself (the trial's ``ma.py``: ``_mkl_linear`` is the FX op of both A's MKL call and its ``cpp_fused_addmm_relu_1``,
    and of B's GEMM template that computes both), and its script named ``ma.py`` (the trial ran one script twice;
    the two fixtures' scripts are named apart)."""
    (c,) = r.compiles
    nodes = [dc.replace(n, fx_nodes=["_mkl_linear"]) if n.name == node else n for n in c.fused_nodes]
    kernels = [dc.replace(k, fx_nodes=["_mkl_linear"]) if k.name == kernel else k for k in c.kernels]
    g = c.graphs["post_grad"]
    post = [dc.replace(n, user_stack=[dc.replace(f, file="/tmp/ma.py") for f in n.user_stack]) for n in g.nodes]
    graphs = {**c.graphs, "post_grad": dc.replace(g, nodes=post)}
    return _with_compile(r, fused_nodes=nodes, kernels=kernels, graphs=graphs)


def test_a_linear_in_two_launches_merged_into_a_gemm_template_reads_as_the_other_merge():
    """nu28 D4b: default vs max-autotune (freezing, ``ma_default.json`` vs ``ma_prof2.json``): the first GEMM read
    "merged into B's cpp_fused_addmm_relu_0", the second "removed": A's bias-add kernel, whose only FX op is the
    linear, has the description of B's template and paired with it first, so the merge found its B launch taken. Both
    GEMMs now read alike: A's linear pairs with B's template and A's other launch is merged into it; the converse
    is two splits."""
    kernel = "cpp_fused_add_addmm_mul_relu_1"
    a = _bias_only(_load("default"), kernel, "op3")
    b = _bias_only(_load("max_autotune"), kernel, "op2_op3")
    d = inductor_lens.diff(a, b)
    assert d.summary == {"same": 0, "changed": 2, "merged": 2, "split": 0, "only_a": 0, "only_b": 0}, d.text()
    got = [(k.status, k.a, k.b or k.merged_into) for k in d.kernels]
    assert got == [
        ("changed", "torch.ops.mkl._mkl_linear.default[buf0]", "cpp_fused_addmm_relu_0"),
        ("merged", "cpp_fused_addmm_relu_0", "cpp_fused_addmm_relu_0"),
        ("changed", "torch.ops.mkl._mkl_linear.default[buf2]", kernel),
        ("merged", kernel, kernel),
    ], d.text()
    second = d.kernels[2]
    assert second.merged_with == [kernel] and second.what_changed.startswith(f"merged with A's {kernel}; ")
    assert d.kernels[3].what_changed == f"merged into B's {kernel} (_mkl_linear)"
    assert "removed" not in d.text()
    r = inductor_lens.diff(b, a)
    assert r.summary == {"same": 0, "changed": 2, "merged": 0, "split": 2, "only_a": 0, "only_b": 0}, r.text()
    assert [(k.status, k.a or k.split_from, k.b) for k in r.kernels][2:] == [
        ("changed", kernel, "torch.ops.mkl._mkl_linear.default[buf2]"),
        ("split", kernel, kernel),
    ], r.text()
    assert re.search(rf"split from A's {kernel} \(_mkl_linear\)", r.text())
