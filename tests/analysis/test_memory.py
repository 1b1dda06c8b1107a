"""The pure memory computations (torch-free): live bytes from buffer lifetimes, reuses in the output code,
kernel-internal buffers, the peak, and the memory deltas of ``diff``."""

import dataclasses
import pathlib

import inductor_lens
from inductor_lens.analysis.diff import memory_delta
from inductor_lens.analysis.memory import allocated, reuses, timeline
from inductor_lens.report import model

ORDER = ["op0", "op1", "op2", "op3"]


def _buf(name, node, size, users=(), out=False, internal=False):
    return {"name": name, "node": node, "bytes": size, "users": list(users), "is_output": out, "internal": internal}


def test_lifetimes_from_writer_to_last_reader_and_outputs_to_the_end():
    bufs = [
        _buf("buf0", "op0", 100, ["op1", "op2"]),  # freed after op2
        _buf("buf1", "op1", 10, ["op3"]),
        _buf("buf2", "op2", 1000, []),  # read by nobody after its writer (an extern's unused output)
        _buf("buf3", "op3", 7, out=True),
    ]
    points, peak, node, alive = timeline(ORDER, bufs)
    assert [p.live_bytes for p in points] == [100, 110, 1110, 17]
    assert (peak, node) == (1110, "op2")
    assert [b.name for b in alive] == ["buf2", "buf0", "buf1"]  # largest first
    assert [b.name for b in points[2].frees] == ["buf2", "buf0"]
    assert [b.name for b in points[3].allocates] == ["buf3"] and [b.name for b in points[3].frees] == ["buf1"]


def test_peak_node_is_the_first_of_equal_maxima():
    bufs = [_buf("a", "op0", 5, ["op1"]), _buf("b", "op2", 5, ["op3"])]
    points, peak, node, _ = timeline(ORDER, bufs)
    assert [p.live_bytes for p in points] == [5, 5, 5, 5] and (peak, node) == (5, "op0")


CODE = """
def call(self, args):
    primals_1, relu = args
    buf0 = empty_strided_cpu((4, 32), (32, 1), torch.float32)
    buf1 = buf0; del buf0  # reuse
    buf2 = empty_strided_cuda((8,), (1,), torch.float32)
    buf3 = reinterpret_tensor(buf2, (2, 4), (4, 1), 0); del buf2  # reuse
    buf5 = relu; del relu  # reuse
"""


def test_output_code_reuses_and_allocations():
    assert reuses(CODE) == {"buf1": "buf0", "buf3": "buf2", "buf5": "relu"}
    assert allocated(CODE) == {"buf0", "buf2"}
    assert allocated("") is None


def test_a_reused_storage_counts_once_and_an_input_reuse_costs_nothing():
    bufs = [
        _buf("buf0", "op0", 512, ["op1"]),
        _buf("buf1", "op1", 512, ["op2"]),  # written into buf0's storage
        _buf("buf5", "op2", 64, ["op3"]),  # written into the input relu's storage
    ]
    points, peak, _, _ = timeline(ORDER, bufs, aliases=reuses(CODE))
    assert [p.live_bytes for p in points] == [512, 512, 512, 0]
    assert peak == 512
    points, _, _, _ = timeline(ORDER, bufs)  # without the output code's reuses: two storages
    assert [p.live_bytes for p in points] == [512, 1024, 576, 64]


def test_kernel_internal_buffers_cost_only_when_the_output_code_allocates_them():
    bufs = [_buf("buf0", "op0", 16, internal=True), _buf("buf9", "op0", 32, internal=True)]
    assert [p.live_bytes for p in timeline(ORDER, bufs, made={"buf0"})[0]] == [16, 0, 0, 0]
    assert [p.live_bytes for p in timeline(ORDER, bufs)[0]] == [0, 0, 0, 0]


def _mem(peak, saved, lines):
    return model.Memory(
        peak_bytes=peak,
        saved_bytes=saved,
        saved_by_line=[model.BytesBy(b, file="t.py", line=ln) for ln, b in lines],
    )


def test_memory_delta_of_two_compiles():
    d = memory_delta(_mem(1000, 300, [(3, 200), (4, 100)]), _mem(700, 100, [(3, 100), (4, 100)]))
    assert d["peak_bytes"] == {"a": 1000, "b": 700, "delta": -300}
    assert d["saved_bytes"] == {"a": 300, "b": 100, "delta": -200}
    assert d["measured_peak_bytes"] == {"a": None, "b": None, "delta": None}
    assert d["saved_by_line"] == [{"file": "t.py", "line": 3, "a": 200, "b": 100, "delta": -100}]
    assert memory_delta(None, None) == {}
    assert memory_delta(None, _mem(5, 0, []))["peak_bytes"] == {"a": None, "b": 5, "delta": None}


def test_diff_carries_the_memory_deltas_into_json_and_text():
    path = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_training.json"
    a = inductor_lens.load(path)

    def put(report, mem):
        return dataclasses.replace(report, compiles=[dataclasses.replace(c, memory=mem) for c in report.compiles])

    d = inductor_lens.diff(put(a, _mem(1000, 300, [])), put(a, _mem(1500, 300, [])))
    assert all(c.memory["peak_bytes"]["delta"] == 500 for c in d.compiles)
    assert "memory peak_bytes: 1000 -> 1500 (+500 bytes)" in d.text()
    assert "memory saved_bytes" not in d.text()  # unchanged
    assert d.to_dict()["compiles"][0]["memory"]["saved_bytes"]["delta"] == 0
