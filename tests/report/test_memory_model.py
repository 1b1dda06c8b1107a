"""Compile.memory in the model (torch-free): older reports load with it null, a report with it round-trips
through JSON, and the schema and the docs name every field of the contract."""

import dataclasses
import json
import pathlib

import pytest

import inductor_lens
from inductor_lens.report import model
from inductor_lens.report.schema import json_schema

REPO = pathlib.Path(__file__).resolve().parents[2]
CONTRACT = [
    "peak_bytes",
    "peak_node",
    "timeline",
    "saved_for_backward",
    "saved_bytes",
    "recomputed",
    "measured_peak_bytes",
    "source",
]


@pytest.mark.parametrize("name", ["gpu_training.json", "gpu_mlp.json", "gpu_perf_gpt2_training.json"])
def test_reports_recorded_before_memory_load_with_it_null(name):
    path = REPO / "tests" / "fixtures" / name
    report = inductor_lens.load(path)
    assert report.compiles and all(c.memory is None for c in report.compiles)


def _with_memory(report):
    c = report.compiles[0]
    frame = model.Frame(file="train.py", line=7, function="forward", code="h = relu(x)", stage="user")
    mem = model.Memory(
        peak_bytes=1024,
        peak_node=c.fused_nodes[0].name,
        timeline=[
            model.MemoryPoint(
                node=n.name, live_bytes=1024 if i == 0 else 512, allocates=[model.BufferBytes("buf0", 512)]
            )
            for i, n in enumerate(c.fused_nodes)
        ],
        saved_for_backward=[
            model.SavedTensor("relu", [4, 32], "float32", 512, "activation", "relu", [frame], "fc1"),
            model.SavedTensor("primals_3", [4, 16], "float32", 256, "input", "primals_3", [], ""),
        ],
        saved_bytes=768,
        saved_activation_bytes=512,
        recomputed=[model.Recomputed("var_mean", [frame])],
        measured_peak_bytes=None,
        source="test",
        saved_by_line=[model.BytesBy(512, file="train.py", line=7)],
        saved_by_module=[model.BytesBy(512, module="fc1")],
    )
    return dataclasses.replace(report, compiles=[dataclasses.replace(c, memory=mem), *report.compiles[1:]])


def test_memory_round_trips_through_json():
    report = _with_memory(inductor_lens.load(REPO / "tests" / "fixtures" / "gpu_training.json"))
    back = inductor_lens.load(report.to_json())
    assert back.compiles[0].memory == report.compiles[0].memory
    plain = json.loads(report.to_json(compact=False))["compiles"][0]["memory"]
    assert list(plain)[: len(CONTRACT)] == CONTRACT
    assert list(plain["timeline"][0])[:2] == ["node", "live_bytes"]
    assert list(plain["saved_for_backward"][0]) == [
        "name",
        "shape",
        "dtype",
        "bytes",
        "kind",
        "fx_node",
        "user_stack",
        "module",
        "user_line",
        "display",
        "shape_hint",
        "stride",
        "storage",
        "shares",
        "view_op",
        "note",
        "storage_bytes",
    ]
    assert list(plain["recomputed"][0]) == ["fx_node", "user_stack", "user_line", "by", "checkpoint", "reason"]


def test_schema_file_and_docs_name_the_contract():
    schema = json_schema()
    assert json.loads((REPO / "docs" / "report.schema.json").read_text()) == schema
    props = schema["$defs"]["Memory"]["properties"]
    assert all(k in props for k in CONTRACT)
    assert schema["$defs"]["Compile"]["properties"]["memory"]["anyOf"][1] == {"type": "null"}
    docs = (REPO / "docs" / "report-schema.md").read_text()
    for k in CONTRACT + [f.name for f in dataclasses.fields(model.Memory)]:
        assert f"`{k}`" in docs, k


def test_a_buffer_whose_op_has_no_line_takes_its_kernels_line():
    """An in-place op on a view becomes a ``slice_scatter`` that a pass of Inductor made: no user stack. Its buffer
    alive at the peak named no line (and the kernel's panel named dyn.py:11); it takes its fused node's first line."""
    from inductor_lens.report.lines import memory_lines

    line = model.Frame(file="dyn.py", line=11, function="forward", code="v = h[:, :8]", is_user=True)
    fx = {"slice_scatter_default": model.GraphNode(name="slice_scatter_default", op="call_function", target="x")}
    fused = {"op1": model.FusedNode(name="op1", kind="pointwise", user_stack=[[line]], writes=["buf1"])}
    buf = model.LiveBuffer(name="buf1", bytes=64, node="op1", fx_node="slice_scatter_default")
    m = memory_lines(model.Memory(peak_bytes=64, peak_node="op1", peak_buffers=[buf]), fx, {}, fused)
    (row,) = m.peak_buffers
    assert (row.user_line.file, row.user_line.line, row.user_line.built) == ("dyn.py", 11, False)
    # an op with a line of its own keeps it
    own = model.Frame(file="dyn.py", line=12, function="forward", code="v.mul_(2.0)", is_user=True)
    m = memory_lines(model.Memory(peak_buffers=[dataclasses.replace(buf, user_stack=[own])]), fx, {}, fused)
    assert m.peak_buffers[0].user_line.line == 12


def test_a_folded_row_that_one_instance_fills_is_named_by_it():
    """Alive at the peak in a 2-block backward: both blocks' attention (one row, ``blocks.0-1.attn`` ×2) and only
    block 0's norm1. The norm1 row read ``blocks.0-1.norm1``, saying it was both blocks'; it is ``blocks.0.norm1``."""
    from inductor_lens.analysis.memory import fold_rollup

    rep = model.ModuleRepeat(key="repeat:blocks.0-1", label="blocks.0-1", parent="", modules=["blocks.1", "blocks.0"])
    rows = fold_rollup(
        [("blocks.1.attn", 40), ("blocks.0.attn", 41), ("blocks.0.norm1", 2), ("head", 1)],
        {"blocks.1": rep, "blocks.0": rep},
    )
    assert [(r.module, r.bytes, r.instances) for r in rows] == [
        ("blocks.0-1.attn", 81, 2),
        ("blocks.0.norm1", 2, 1),
        ("head", 1, 1),
    ]


def test_saved_for_backward_says_at_least_where_a_saved_tensors_size_is_data_dependent():
    """nu23 D4: a MoE's forward saves 23 tensors, 20 of a size known only when the graph runs (``[u0, 32]``: no
    bytes); the view said "saved for backward 2.5 KiB in 23 tensors" as if exact. ``Memory.saved_text`` says it is at
    least that, derived from the saved tensors on loading too (an older report has them)."""
    saved = [
        model.SavedTensor("primals_3", [16, 32], "float32", 2048, kind="input"),
        model.SavedTensor("div", [16, 4], "float32", 256),
        model.SavedTensor("getitem_1", [16, 2], "int64", 256),
        model.SavedTensor("index", ["u0", 32], "float32", None),
        model.SavedTensor("addmm_1", ["u0", 32], "float32", None),
    ]
    m = model.Memory(saved_for_backward=saved, saved_bytes=2560, saved_activation_bytes=512)
    assert m.saved_text == (
        "saved for backward ≥ 2.5 KiB in 5 tensors (not counting the bytes of 2, of a size known only when the graph "
        "runs), ≥ 512 B of it made by the forward (held until the backward)"
    )
    exact = model.Memory(saved_for_backward=saved[:3], saved_bytes=2560, saved_activation_bytes=512)
    assert exact.saved_text == (
        "saved for backward 2.5 KiB in 3 tensors, 512 B of it made by the forward (held until the backward)"
    )
    assert model.Memory(saved_for_backward=saved, saved_bytes=None).saved_text == ""  # not known: the view says so
    # a report made before the field: derived on loading, a stored value ignored
    from inductor_lens.report.plain import from_plain_fields, to_plain

    plain = dict(to_plain(m), saved_text="stale")
    assert from_plain_fields(model.Memory, plain, "memory").saved_text == m.saved_text


def _qkv_memory(**kw):
    """nu26 amp (two layers, bf16): q, k and v of each layer saved for the backward, three views of one 384 KiB qkv
    buffer (the forward's output code returns them as reinterpret_tensor(buf7, ...)), counted once, in q's row."""
    t = (
        lambda name, shares="": model.SavedTensor(  # noqa: E731
            name, [8, 4, 64, 32], "bfloat16", 131072, storage=name[:-1], shares=shares
        )
    )
    saved = [t("q0"), t("k0", "q0"), t("v0", "q0"), t("q1"), t("k1", "q1"), t("v1", "q1")]
    g = lambda what, names, nbytes, shared: model.SavedGroup(  # noqa: E731
        "layers.0-1", what, "activation", 2, nbytes, 131072, names=names, shared=shared
    )
    groups = [
        g("split: output 0", ["q0", "q1"], 786432, 0),
        g("split: output 1", ["k0", "k1"], 0, 2),
        g("split: output 2", ["v0", "v1"], 0, 2),
    ]
    return model.Memory(peak_bytes=1024, saved_for_backward=saved, saved_bytes=786432, saved_groups=groups, **kw)


def test_a_grouped_row_of_shared_storages_says_why_its_total_is_not_tensors_times_each():
    """nu26 D5: "split: output 0 · 2 tensors · total 768 KiB · each 128 KiB" and "split: output 1 · 2 · 0 B" read as
    wrong arithmetic and as free tensors; each row now says where the storage is counted."""
    m = _qkv_memory()
    notes = [g.note for g in m.saved_groups]
    assert notes[0] == (
        "each shares its storage of 384 KiB with split: output 1, split: output 2: the storage counted once, here "
        "(2 × 384 KiB)"
    )
    assert notes[1] == notes[2] == "each a view of a storage split: output 0 counts: 0 B here"
    # derived on loading: a stored note is ignored, a report made before it gets it
    back = inductor_lens.load(_with_memory_obj(m).to_json())
    assert [g.note for g in back.compiles[0].memory.saved_groups] == notes


def _with_memory_obj(m):
    report = inductor_lens.load(REPO / "tests" / "fixtures" / "gpu_training.json")
    return dataclasses.replace(report, compiles=[dataclasses.replace(report.compiles[0], memory=m)])


def test_the_curve_labels_its_peak_as_the_header_counts_it():
    """nu26 D3 and the backward's peak: the chart said "peak 96 KiB" over a lower bound, and a backward's "peak 5.3
    MiB" (its buffers') with the device's high-water mark (4.55 MiB) only in the header."""
    least = model.Memory(peak_bytes=98308, uncounted=["buf3"], uncounted_at=["op2"])
    assert least.curve_peak_text == "peak ≥ 96 KiB"
    assert least.curve_least_text.endswith("not counting 1 buffer of a size known only when the graph runs")
    assert least.curve_high_water_text == ""
    bwd = model.Memory(peak_bytes=5554216, net_peak_bytes=4767784, freed_input_bytes=786432)
    assert bwd.curve_peak_text == "peak of the graph's buffers 5.3 MiB"
    assert bwd.curve_high_water_text.startswith("device high-water 4.55 MiB, estimated")
    assert bwd.curve_least_text == ""
    fwd = model.Memory(peak_bytes=788992)
    assert (fwd.curve_peak_text, fwd.curve_high_water_text) == ("peak 770.5 KiB", "")


def _backward_memory(**kw):
    """nu29's backward (0/0 of its MoE step): 78720 B of live buffers less the freed inputs at op68, 38.3 KiB of
    inputs of a known size freed, 28 of a size known only when the graph runs freed too, the first after op67 (up
    to which the estimate is at most 18 KiB), and such buffers live at other points."""
    names = [f"addmm_{i}" for i in range(28)]
    base = dict(
        peak_bytes=105088,
        net_peak_bytes=78720,
        net_peak_node="op68",
        freed_input_bytes=39168,
        input_bytes=125850,
        uncounted=["buf3"],
        uncounted_at=["op2"],
        uncounted_inputs=names,
        freed_uncounted=names,
        net_floor_bytes=18432,
        net_floor_node="op67",
    )
    return model.Memory(**{**base, **kw})


def test_the_high_water_mark_is_no_lower_bound_past_a_freed_input_of_a_data_dependent_size():
    """nu29 D3: "device high-water ≥ 76.9 KiB" subtracted only the freed inputs of a known size: 28 of a size known
    only when the graph runs were freed before that point, so 76.9 KiB is no lower bound. What is said is what holds:
    at least the estimate up to the first such free, no bound after it while such buffers are live (else at most the
    estimate); the freed inputs said "≥"; the curve's line at the bound it names."""
    m = _backward_memory()
    for text in (m.high_water_text, m.curve_high_water_text):
        assert "76.9 KiB" not in text and "≥ 18 KiB" in text and "op67" in text, text
    assert (
        "not bounded" in m.high_water_text and "28 inputs of a size known only when the graph runs" in m.high_water_text
    )
    assert m.high_water_line_bytes == 18432
    assert m.held_text.endswith(
        ", ≥ 38.3 KiB of the inputs freed on the way (not counting 28 of a size known only when the graph runs)"
    )
    assert "≥ 38.3 KiB" in m.peak_note
    # no buffer of such a size live anywhere: at most the estimate too
    bounded = _backward_memory(uncounted=[], uncounted_at=[])
    assert "between 18 KiB and 76.9 KiB" in bounded.high_water_text, bounded.high_water_text
    assert bounded.curve_high_water_text.startswith("device high-water between 18 KiB and 76.9 KiB")
    # a report made before freed_uncounted: whether those inputs were freed is not known, so no estimate is said
    old = _backward_memory(freed_uncounted=None, net_floor_bytes=None, net_floor_node="")
    assert "≥" not in old.high_water_text and "not estimated" in old.high_water_text, old.high_water_text
    assert old.curve_high_water_text == "" and old.high_water_line_bytes is None
    # nothing of such a size freed: the estimate as it was ("≥" where such buffers are live)
    plain = _backward_memory(uncounted_inputs=[], freed_uncounted=[], net_floor_bytes=None, net_floor_node="")
    assert "estimated ≥ 76.9 KiB above the level at the call" in plain.high_water_text
    assert plain.high_water_line_bytes == 78720


def test_a_report_made_before_two_member_ranges_read_up_names_its_memory_rows_as_its_view():
    """nu29 D6: a report made before derived 39 named two experts a backward ran last first
    ``model.moe.experts.2-1`` in its Memory view's axis (``MemoryRegion.repeat``) and rows (``peak_by_module``),
    worked out at capture; its module view, derived on load, now reads ``experts.1-2``: the memory follows it."""
    from inductor_lens.report.finish import _memory_labels

    old = "model.moe.experts.2-1"
    mem = model.Memory(
        regions=[
            model.MemoryRegion(module="model.moe.experts.3", label="3", first=0, last=1),
            model.MemoryRegion(module="model.moe.experts.2", label="2", first=2, last=3, repeat=old),
            model.MemoryRegion(module="model.moe.experts.1", label="1", first=4, last=5, repeat=old),
        ],
        peak_by_module=[
            model.BytesBy(bytes=16896, module=old + ".up", count=4, instances=2),
            model.BytesBy(bytes=8448, module="model.moe.experts.0.up", count=2),
        ],
    )
    mods = ["model.moe.experts.2", "model.moe.experts.1"]
    view = model.ModuleView(
        repeats=[
            model.ModuleRepeat(
                key="repeat:model.moe.experts.1-2", label="model.moe.experts.1-2", parent="model.moe", modules=mods
            )
        ]
    )
    now = _memory_labels(mem, view)
    assert [g.repeat for g in now.regions] == ["", "model.moe.experts.1-2", "model.moe.experts.1-2"]
    assert [r.module for r in now.peak_by_module] == ["model.moe.experts.1-2.up", "model.moe.experts.0.up"]
    same = model.ModuleView(repeats=[dataclasses.replace(view.repeats[0], label=old, key="repeat:" + old)])
    assert _memory_labels(mem, same) is mem
