"""``import-trace`` compile by compile (``capturing/trace_stream.py``): the same report as the whole import,
byte for byte, holding a bounded number of built compiles whatever the log's length; a log whose records are
out of the order it relies on is imported whole (no torch needed: real logs from tests/fixtures)."""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import io as _io
import pathlib
import re

import pytest

import inductor_lens
from inductor_lens.capturing import trace_memory, trace_stream
from inductor_lens.capturing.trace_read import TraceError
from inductor_lens.report import io as report_io
from inductor_lens.report.written import Spooled
from inductor_lens.views.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
DDP = ROOT / "tests" / "fixtures" / "dist" / "ddp-trace" / "dedicated_log_torch_trace_rank_0_9v0ognt1.log"


@pytest.fixture(autouse=True)
def _no_notebook(monkeypatch):
    """No IPython cells to localize frames in: a shell another test left in this process would make both
    imports name frames after its cells (and the streamed one step aside for the whole import)."""
    from inductor_lens.capturing import build

    monkeypatch.setattr(trace_stream, "cell_map", lambda: {})
    monkeypatch.setattr(build, "cell_map", lambda: {})


def _big_log(copies: int, out: pathlib.Path) -> pathlib.Path:
    """``copies`` of the DDP rank-0 log (2 forwards, then their 2 backwards), frame ids and times shifted
    (``benchmarks/trace_import.py``'s builder)."""
    spec = importlib.util.spec_from_file_location("bench_trace_import", ROOT / "benchmarks" / "trace_import.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    made, _ = mod.big_log(str(DDP), DDP.stat().st_size * (copies - 0.5) / 1e6, str(out))
    assert made == copies
    return out


def _same(data: bytes) -> bytes:
    return re.sub(rb'"created":"[^"]*"', b'"created":""', data)


def _streamed(log, stats=None, spill=None) -> bytes:
    sink = Spooled(report_io._dump, _io.BytesIO())
    head = trace_stream.stream_trace(str(log), sink, stats=stats, spill=spill)
    assert head is not None, "imported whole"
    sink.finish(head)
    return b"".join(sink.parts())


def test_a_real_log_streamed_is_the_report_of_the_whole_import():
    whole = report_io.dumps(inductor_lens.load_trace(str(DDP)))
    assert _same(_streamed(DDP)) == _same(whole)


def test_a_long_log_holds_a_bounded_number_of_built_compiles(tmp_path):
    log = _big_log(6, tmp_path / "dedicated_log_torch_trace_long.log")
    stats = trace_stream.StreamStats()
    with contextlib.closing(
        report_io.spool_file(tmp_path / "page.html")
    ) as spill:  # the phase events: rows of a file, not held
        data = _streamed(log, stats, spill)
    assert _same(data) == _same(report_io.dumps(inductor_lens.load_trace(str(log))))
    assert stats.compiles == 6 * 4
    assert stats.events > 6 * 100 and stats.events_held == 0
    held = trace_stream.StreamStats()  # without a spill file they are held, and the report is the same
    assert _same(_streamed(log, held)) == _same(data) and held.events_held == held.events == stats.events
    one = trace_stream.StreamStats()
    _streamed(DDP, one)
    # the graphs of one compile id (2 forwards wait for their 2 backwards) and the one being built: as many as
    # one copy of the log holds, never the 24 of the log
    assert one.compiles == 4 and stats.held_max == one.held_max <= 5


def test_a_written_forward_is_let_go_while_it_waits_for_its_backward(monkeypatch):
    """What waits for a backward is its forward's post-grad nodes (``trace_stream._Forward``), not the forward
    compile (kernels, output code, reproducers): when a backward is written, no forward compile written before
    it is alive, neither the one the builder made nor the one written."""
    from inductor_lens.report.model import Compile

    def forwards() -> dict[int, Compile]:
        return {id(o): o for o in gc.get_objects() if type(o) is Compile and o.graph_kind == "forward"}

    before = set(forwards())  # other tests' reports, alive in this process
    written: list[str] = []
    alive_at_backward: list[list[str]] = []
    add = Spooled.add

    def spy(self, c, transient=False):
        if c.graph_kind == "backward":
            alive_at_backward.append([o.id for i, o in forwards().items() if i not in before and o.id in written])
        add(self, c, transient)
        if c.graph_kind == "forward":
            written.append(c.id)

    monkeypatch.setattr(Spooled, "add", spy)
    _streamed(DDP)
    assert len(written) == len(alive_at_backward) == 2
    assert alive_at_backward == [[], []]


def test_a_compile_made_without_its_module_view_gets_it_where_no_path_could_be_inferred():
    """The streamed import makes a compile that lacks module paths without its module view (the paths inferred
    after change it: one derivation instead of two); where none could be inferred (a plain function's ops), the
    view is added as it is written, the one a capture's compile has."""
    import dataclasses

    from inductor_lens.report.finish import derive_compile
    from inductor_lens.report.module_paths import missing
    from tests._recorded import recorded

    captured = recorded("gpu_sin_cos.json").compiles[0]
    assert missing(captured) and captured.module_view is not None
    made = derive_compile(dataclasses.replace(captured, module_view=None), view=False)
    assert made.module_view is None
    written: list = []
    trace_stream._Finish(maker=None, write=written.append).add(made)
    (c,) = written
    assert c.module_view == captured.module_view
    assert [n.group_path for n in c.fused_nodes] == [n.group_path for n in captured.fused_nodes]


def test_frames_torch_gave_up_on_are_said_as_the_whole_import_says_them(tmp_path):
    text = DDP.read_text(encoding="utf-8")
    failed = text.replace(
        '"fail_type": null, "fail_reason": null',
        '"fail_type": "Unsupported", "fail_reason": "torch.* op returned non-Tensor\\nmore"',
        1,
    )
    assert failed != text
    log = tmp_path / "dedicated_log_torch_trace_failed.log"
    log.write_text(failed, encoding="utf-8")
    whole = report_io.dumps(inductor_lens.load_trace(str(log)))
    # the log says the frame failed, nothing that it ran eagerly (no graph-break record falls back to eager): said so
    assert b"compile_unsupported" in whole and b"eager_fallback" not in whole
    assert _same(_streamed(log)) == _same(whole)


def test_a_recompile_limit_is_read_from_the_log_as_the_whole_import_reads_it(tmp_path):
    """The record of a recompile limit dynamo hit (``Report.recompile_limits``) holds when dynamo began the compile it
    refused: the metrics record's ``start_time_us``, which the streamed import keeps too (``_METRICS_KEYS``)."""
    text = DDP.read_text(encoding="utf-8")
    reason = "Limit type: recompile_limit\\n  Explanation: exceeding the recompile_limit cache size limit (currently set to 8)."
    hit = text.replace(
        '"fail_type": null, "fail_reason": null', f'"fail_type": "Unsupported", "fail_reason": "{reason}"', 1
    )
    assert hit != text
    log = tmp_path / "dedicated_log_torch_trace_limit.log"
    log.write_text(hit, encoding="utf-8")
    report = inductor_lens.load_trace(str(log))
    (limit,) = report.recompile_limits
    assert limit.limit == "recompile_limit" and limit.value == 8 and limit.function
    assert limit.time_us is not None and limit.time_us >= 0
    assert _same(_streamed(log)) == _same(report_io.dumps(report))


def test_the_cli_writes_the_page_and_json_of_the_whole_import(tmp_path, monkeypatch):
    out, js = tmp_path / "p.html", tmp_path / "r.json"
    assert main(["import-trace", str(DDP), "-o", str(out), "--json", str(js), "-q"]) == 0
    streamed = js.read_bytes()
    monkeypatch.setattr(trace_stream, "stream_trace", lambda *a, **k: None)  # the whole import instead
    assert main(["import-trace", str(DDP), "-o", str(tmp_path / "w.html"), "--json", str(tmp_path / "w.json")]) == 0
    assert _same(streamed) == _same((tmp_path / "w.json").read_bytes())
    assert out.stat().st_size > 100_000 and sorted(p.name for p in tmp_path.iterdir()) == [
        "p.html",
        "r.json",
        "w.html",
        "w.json",
    ]  # no spool or temporary file left


def test_the_progress_says_the_compiles_are_being_built_once_the_log_is_read():
    """The last graphs of a log (here all of them: the forwards wait for their backwards, logged last) are built after
    the last byte is read: the line said then is not "0 compile(s) built" but what is happening, and the count it
    gives is the compiles the import then makes."""
    lines: list[str] = []
    sink = Spooled(report_io._dump, _io.BytesIO())
    head = trace_stream.stream_trace(str(DDP), sink, on_progress=lines.append)
    assert head is not None
    read, done = lines
    made = int(re.search(r"(\d+) compile\(s\), \d+ kernel\(s\)$", done)[1])
    assert read == f"read {DDP.name} ({DDP.stat().st_size / 1e6:.0f} MB): building {made} compile(s)" and made == 4
    assert (
        trace_stream.read_progress("t.log", 5 << 20, 10 << 20, 3, 1) == "reading t.log: 5 of 10 MB, 3 compile(s) built"
    )
    assert (
        trace_stream.read_progress("t.log", 10 << 20, 10 << 20, 3, 1)
        == "read t.log (10 MB), 3 compile(s) built: building 1 more"
    )


def test_a_record_of_a_compile_already_built_makes_the_import_whole(tmp_path, capsys):
    log = _big_log(2, tmp_path / "src.log")
    text = log.read_text(encoding="utf-8")
    records = re.split(r"\n(?=[^\t])", text.rstrip("\n"))
    i = next(i for i, r in enumerate(records) if '"inductor_provenance_tracking_node_mappings"' in r.split("\n")[0])
    moved = records[:i] + records[i + 1 :] + [records[i]]  # logged after the next frame started compiling
    late = tmp_path / "dedicated_log_torch_trace_late.log"
    late.write_text("\n".join(moved) + "\n", encoding="utf-8")
    sink = Spooled(report_io._dump, _io.BytesIO())
    assert trace_stream.stream_trace(str(late), sink) is None
    out, js = tmp_path / "p.html", tmp_path / "r.json"
    assert main(["import-trace", str(late), "-o", str(out), "--json", str(js)]) == 0
    assert "importing it whole" in capsys.readouterr().err
    assert _same(js.read_bytes()) == _same(report_io.dumps(inductor_lens.load_trace(str(late))))


def test_a_file_without_trace_records_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "notes.log"
    bad.write_text("just a line\nand another\n")
    with pytest.raises(TraceError, match="holds no structured-trace record"):
        trace_stream.stream_trace(str(bad), Spooled(report_io._dump, _io.BytesIO()))
    old = tmp_path / "p.html"
    old.write_bytes(b"old page")
    assert main(["import-trace", str(bad), "-o", str(old), "-q"]) != 0
    assert "holds no structured-trace record" in capsys.readouterr().err
    assert old.read_bytes() == b"old page"


def test_ctrl_c_while_importing_leaves_the_old_files_and_nothing_else(tmp_path, monkeypatch):
    page, js = tmp_path / "p.html", tmp_path / "r.json"
    page.write_bytes(b"old page")
    js.write_bytes(b"old json")
    added = []

    def interrupted(self, compile, transient=False):
        added.append(compile.id)
        if len(added) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(Spooled, "add", interrupted)
    assert main(["import-trace", str(DDP), "-o", str(page), "--json", str(js), "-q"]) == 130  # "interrupted"
    assert len(added) == 2
    assert (page.read_bytes(), js.read_bytes()) == (b"old page", b"old json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.html", "r.json"]  # no spool, no temporary file


def test_cuda_graph_recordings_read_from_the_events_a_streamed_import_keeps(tmp_path):
    """``CUDAGraphNode.record`` events keep what ``cudagraphs_of`` reads of their ``args`` (the compile id and
    direction) when every other event is cut to its phase facts and spilled: the recordings of the whole import."""
    from inductor_lens.capturing.build import _Trace
    from inductor_lens.capturing.cudagraphs import _recordings

    records = []
    for cid, backward, ts, dur in [("0/0", False, 100, 2500), ("0/0", True, 5000, 900), ("1/0", False, 9000, 1800)]:
        args = {"compile_id": cid, "is_backward": backward, "other": "x" * 100}
        records.append(({"chromium_event": {}}, {"name": "CUDAGraphNode.record", "ph": "B", "ts": ts, "args": args}))
        records.append(({"chromium_event": {}}, {"name": "inductor_compile", "ph": "B", "ts": ts + 1, "args": args}))
        records.append(
            (
                {"chromium_event": {}},
                {"name": "CUDAGraphNode.record", "ph": "E", "ts": ts + dur, "args": {"compile_id": cid}},
            )
        )
    whole = _Trace(records)
    with contextlib.closing(report_io.spool_file(tmp_path / "page.html")) as spill:
        watched = trace_stream._Watched(spill)
        for md, payload in records:
            watched.add(md, payload)
        for cid, backward in [("0/0", False), ("0/0", True), ("1/0", False)]:
            assert _recordings(watched.events, cid, backward) == _recordings(whole.events, cid, backward) != []
        assert [e["name"] for e in watched.events_between(0, None)] == [
            e["name"] for e in whole.events_between(0, None)
        ]
        assert watched.events_between(4000, 6000) == [
            {k: e[k] for k in ("name", "ph", "ts")} for e in whole.events_between(4000, 6000)
        ]
        assert watched.stats.events == 9 and watched.stats.events_held == 0


def test_import_trace_loads_nothing_it_does_not_use(tmp_path):
    """Start-up is most of a small import's memory: ``import-trace`` of a log loads no OpenSSL (hashlib: 3.6 MB of
    peak RSS), no torch, no widget machinery, no HTML entity table, no tempfile (and the compressors it brings), no
    argparse for its plain arguments (with shutil, gettext and locale: 1.8 MB), no pathlib (urllib.parse and
    ipaddress with it: 1.3 MB), no traceback."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom inductor_lens.views.cli import main\n"
        f"assert main(['import-trace', {str(DDP)!r}, '-o', {str(tmp_path / 'p.html')!r}, '-q']) == 0\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    loaded = set(out.stdout.split())
    assert "inductor_lens.capturing.trace_stream" in loaded and (tmp_path / "p.html").stat().st_size > 100_000
    unwanted = {"hashlib", "_hashlib", "_ssl", "torch", "numpy", "anywidget", "traitlets", "html.entities", "tempfile"}
    unwanted |= {"argparse", "shutil", "gettext", "locale", "lzma", "bz2", "pathlib", "urllib.parse", "ipaddress"}
    unwanted |= {"traceback", "textwrap", "inductor_lens.views.diff_cli", "inductor_lens.views.repro_cli"}
    assert loaded & unwanted == set()


WARM = ROOT / "tests" / "fixtures" / "trace-warm" / "dedicated_log_torch_trace_warm.log"


def test_a_log_of_a_warm_cache_says_its_graphs_were_read_from_the_caches_not_compiled():
    """A log of a run whose graphs AOT autograd's and Inductor's FX-graph caches gave back (``aotautograd_cache_hit``,
    ``fx_graph_cache_hit`` artifacts after the output codes): nothing was lowered or fused, the backward was loaded
    with the forward, not "compiled together" with it, and torch logged no provenance (empty maps): each compile, its
    unlinked boxes and a diagnostic say so, and the missing links are not blamed on INDUCTOR_PROVENANCE. Streamed
    (the CLI's path) the report is the same."""
    from inductor_lens.report import rules

    report = inductor_lens.load_trace(str(WARM))
    assert [(c.id, c.from_cache) for c in report.compiles] == [
        ("4/0 forward", "aot_autograd"),
        ("4/0 backward", "aot_autograd"),
    ]
    fwd, bwd = report.compiles
    assert fwd.trigger.reason.endswith("; " + rules.FROM_CACHE["aot_autograd"])
    assert "compiled together" not in bwd.trigger.reason
    assert "(the backward graph was read from the cache with the forward)" in bwd.trigger.reason
    unlinked = [n for c in report.compiles for n in c.fused_nodes if not n.fx_nodes]
    assert unlinked and {n.no_line_reason for n in unlinked} == {rules.NO_PROVENANCE_CACHED}
    codes = {d.code: d.message for d in report.diagnostics}
    assert "trace_unlinked" not in codes  # the cache explains every missing link
    assert codes["trace_cache_hit"].startswith("4/0 forward, 4/0 backward: read from torch's caches")
    assert "(2 kernel launch(es) not linked" in codes["trace_cache_hit"]
    # the output code read from the cache is what runs: the Memory view is made from it (nu20 D6)
    assert all(c.memory is not None and c.memory.source.startswith(trace_memory.SOURCE) for c in report.compiles)
    assert "trace_no_memory" not in codes and "memory" in report.views
    assert _same(_streamed(WARM)) == _same(report_io.dumps(report))


def test_a_log_of_a_cold_compile_reads_no_cache_hit():
    report = inductor_lens.load_trace(str(DDP))
    assert {c.from_cache for c in report.compiles} == {""}
    assert "trace_cache_hit" not in {d.code for d in report.diagnostics}
    assert all("read from torch's" not in c.trigger.reason for c in report.compiles)


def test_import_trace_of_rank_logs_with_json_writes_each_ranks_report(tmp_path):
    """``import-trace DIR --json job.json`` of a directory of rank logs wrote the job page and silently no JSON
    (exit 0): each rank's report is written (``job.rank0.json``, ``job.rank1.json``), as the page holds them."""
    from inductor_lens.views.cli import rank_json_paths

    page, asked = tmp_path / "job.html", tmp_path / "job.json"
    assert main(["import-trace", str(DDP.parent), "-o", str(page), "--json", str(asked), "-q"]) == 0
    assert page.stat().st_size > 100_000
    paths = rank_json_paths(str(asked), [0, 1])
    assert paths == [str(tmp_path / "job.rank0.json"), str(tmp_path / "job.rank1.json")]
    job = inductor_lens.load_trace(str(DDP.parent))
    for entry, path in zip(job.ranks, paths):
        saved = inductor_lens.load(path)
        assert (saved.rank, saved.world_size) == (entry.rank, 2)
        assert [c.id for c in saved.compiles] == [c.id for c in entry.report.compiles]
    assert rank_json_paths("out/r.json.gz", [3]) == ["out/r.rank3.json.gz"]
    assert rank_json_paths("r", [0]) == ["r.rank0.json"]
