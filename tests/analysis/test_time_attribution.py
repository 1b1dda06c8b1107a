"""Where measured time is attributed: fused-node boxes, modules and lines, launch by launch (report/lines.py).

The step is nu31's (a small ResNet's training forward on a CPU, /tmp/nu31/fp32.json), built by hand to the size of its
question: Inductor emits the stem's BatchNorm+ReLU kernel once and calls it twice, for ``model.bn`` (train.py:32) and
``model.block1.bn1`` (train.py:17), 19.0 ms per launch; block2's last kernel (BatchNorm, add, ReLU and the pool's mean)
is one launch of four lines (18, 19, 20 and 35), 15.7 ms."""

from __future__ import annotations

import json

import pytest

import inductor_lens
from inductor_lens.analysis.perf import Measured, apply_profile
from inductor_lens.report.model import Compile, Frame, FusedNode, Kernel, Trigger

FILE = "/home/me/train.py"
CODE = {
    17: "out = F.relu(self.bn1(self.conv1(x)))",
    18: "out = self.bn2(self.conv2(out))",
    19: "sc = x if self.short is None else self.short(x)",
    20: "return F.relu(out + sc)",
    32: "x = F.relu(self.bn(self.stem(x)))",
    35: "x = self.pool(x).flatten(1)",
}
BN_RELU = "cpp_fused__native_batch_norm_legit_functional_copy__relu_1"
LAST = "cpp_fused__native_batch_norm_legit_functional_add_copy__mean_relu_5"


def _line(n: int) -> Frame:
    return Frame(file=FILE, line=n, function="forward", code=CODE[n], stage="user")


def _node(name: str, kernel: str, module: str, lines: list[int]) -> FusedNode:
    return FusedNode(
        name=name,
        kind="pointwise",
        fx_nodes=[name],
        kernel=kernel,
        module_stack=[m for m in ("model", module) if m],
        user_stack=[[_line(n)] for n in lines],
        user_lines=[_line(n) for n in lines],
    )


def _step():
    """The forward as apply_profile gets it: the shared kernel's two launches timed together (38.0 ms in 2 calls)."""
    fused = [
        _node("op7", BN_RELU, "model.bn", [32]),
        _node("op11", BN_RELU, "", [32]),  # the F.relu of the forward: the top level's op, same launch
        _node("op13", BN_RELU, "model.block1.bn1", [17]),
        _node("op17", BN_RELU, "model.block1", [17]),
        _node("op36", LAST, "model.block2.short.1", [19, 18, 20]),
        _node("op40", LAST, "model.pool", [35]),
    ]
    kernels = [
        Kernel(
            name=BN_RELU,
            language="cpp",
            source="",
            fused_nodes=["op7", "op11", "op13", "op17"],
            call_sites=[["op7", "op11"], ["op13", "op17"]],
            user_lines=[_line(32), _line(17)],
        ),
        Kernel(
            name=LAST,
            language="cpp",
            source="",
            fused_nodes=["op36", "op40"],
            call_sites=[["op36", "op40"]],
            user_lines=[_line(19), _line(18), _line(20), _line(35)],
        ),
    ]
    c = Compile(
        id="0/0 forward",
        compile_id="0/0",
        graph_kind="forward",
        trigger=Trigger("first_call", ""),
        fused_nodes=fused,
        kernels=kernels,
    )
    report = inductor_lens.Report(torch_version="2.13", device="cpu", compiles=[c])
    m = Measured(device="cpu", runs=3, warmup=1, step_us=[60_000.0, 60_000.0, 60_000.0])
    m.kernels = {("0/0 forward", BN_RELU): [38_000.0] * 3, ("0/0 forward", LAST): [15_700.0] * 3}
    m.calls = {("0/0 forward", BN_RELU): 2.0, ("0/0 forward", LAST): 1.0}
    return apply_profile(report, m, None)


def test_a_kernel_called_for_two_layers_puts_each_launchs_time_on_its_own_box_and_module():
    """nu31 D3: both launches' 38.0 ms landed on the first launch's box and module (``model.bn``); block1.bn1's box
    showed no time (white under colour by time) and ``by_module`` gave it none. Each launch's time goes to its own
    fused node (the box's time and share, ``FusedNode.time``) and module; the boxes add up to the kernel."""
    out = _step()
    c = out.compiles[0]
    times = {n.name: n.time for n in c.fused_nodes if n.time is not None}
    assert {name: t.us for name, t in times.items()} == {"op7": 19_000.0, "op13": 19_000.0, "op36": 15_700.0}
    assert times["op7"].share == times["op13"].share == round(19_000 / 53_700, 4)
    assert (times["op7"].launches, times["op13"].launches) == (1.0, 1.0)
    assert times["op13"].text.startswith(f"call 2 of 2 of {BN_RELU}: 19.0 ms per run")
    assert times["op36"].text == ""  # one launch: nothing to say
    by_module = {r.module: r.us for r in out.profile.by_module}
    assert by_module == {"model.bn": 19_000.0, "model.block1.bn1": 19_000.0, "model.block2.short.1": 15_700.0}
    assert sum(by_module.values()) == out.profile.attributed_us == 53_700.0


def test_the_source_views_line_times_split_a_shared_kernel_as_the_roofline_does_and_add_up():
    """nu31 D4: the Source view gave each line the whole time of every kernel it shares (line 35, the pool, 15.7 ms:
    all of block2's BatchNorm kernel; the forward's lines added to 289 ms against 217 ms), while the Roofline's time by
    line split it. One rule, in Python: each launch split evenly among its lines (``Compile.time_by_line``, what the
    Source view says, and ``StepProfile.by_line``, the Roofline's), adding up to the kernels' time."""
    out = _step()
    rows = {r.line: r for r in out.compiles[0].time_by_line}
    assert {n: r.us for n, r in rows.items()} == {
        32: 19_000.0,
        17: 19_000.0,
        19: 3_925.0,
        18: 3_925.0,
        20: 3_925.0,
        35: 3_925.0,
    }
    assert sum(r.us for r in rows.values()) == pytest.approx(53_700.0)
    assert [(r.line, r.us) for r in out.profile.by_line] == [(r.line, r.us) for r in out.compiles[0].time_by_line]
    # what the line's tooltip says: its share, of what whole, and why
    assert rows[35].whole_us == 15_700.0
    assert rows[35].text == (
        "3.92 ms measured per run: this line's share of its kernel's 15.7 ms, which it shares with other lines "
        "(a launch's time is split evenly among its lines)"
    )
    # line 17 has all of the kernel's second launch; its first is line 32's
    assert rows[17].text.startswith("19.0 ms measured per run: this line's share of its kernel's 38.0 ms")


def test_a_report_profiled_before_it_is_attributed_by_launch_when_loaded():
    """fp32.json as nu31 wrote it (derived 34): its stored ``by_module`` put both launches on ``model.bn`` and its
    fused nodes had no time. Loaded, it is attributed again, launch by launch."""
    out = _step()
    data = json.loads(out.to_json())
    data["derived"] = 34
    data["profile"]["by_module"] = [{"module": "model.bn", "us": 38_000.0, "kernels": [BN_RELU]}]
    for c in data["compiles"]:
        c["time_by_line"] = []
        for n in c["fused_nodes"]:
            n.pop("time", None)
    again = inductor_lens.load(data)
    assert {r.module: r.us for r in again.profile.by_module}["model.block1.bn1"] == 19_000.0
    assert {n.name: n.time.us for n in again.compiles[0].fused_nodes if n.time} == {
        "op7": 19_000.0,
        "op13": 19_000.0,
        "op36": 15_700.0,
    }
    assert again.compiles[0].time_by_line == out.compiles[0].time_by_line
