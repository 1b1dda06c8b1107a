"""Writing and loading reports: atomic writes, unencodable values, and every kind of bad input (no torch)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os

import pytest

import inductor_lens
from inductor_lens.report import io as report_io
from inductor_lens.report import stream as _report_stream
from inductor_lens.report.model import Compile, Frame, Kernel, Report, ReportError, Trigger
from tests._synthetic_report import hostile_report


def _report(**kw) -> Report:
    k = Kernel(
        name="cpp_fused_0", language="cpp", source="void k() {}", profile={"total_us": 1.0, "calls": 1, "share": 0.5}
    )
    c = Compile(
        id="0/0 inference",
        compile_id="0/0",
        graph_kind="inference",
        trigger=Trigger(kind="first_call", reason="", user_stack=[Frame(file="s.py", line=1, function="f")]),
        kernels=[k],
    )
    return Report(torch_version="2.13.0", device="cpu", compiles=[c], **kw)


def _valid_dict() -> dict:
    """The written report, expanded (the written form interns stacks: the bad inputs below edit fields)."""
    from inductor_lens.report import intern as _intern

    return _intern.expand(json.loads(report_io.dumps(_report())))


# -- writers never destroy data -------------------------------------------------------------------


class _Boom(Exception):
    pass


@pytest.mark.parametrize("writer", ["json", "html"])
def test_a_writer_failing_midway_leaves_the_old_file_byte_for_byte(tmp_path, monkeypatch, writer):
    path = tmp_path / ("old.json" if writer == "json" else "old.html")
    old = os.urandom(30_000)
    path.write_bytes(old)
    real_fdopen = os.fdopen

    class HalfFile:  # writes half of what it is given, then the disk "fails"
        def __init__(self, f):
            self.f = f

        def write(self, data):
            self.f.write(data[: len(data) // 2])
            raise _Boom("disk failed mid-write")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(report_io.os, "fdopen", lambda fd, mode: HalfFile(real_fdopen(fd, mode)))
    save = _report().save_json if writer == "json" else _report().save_html
    with pytest.raises(_Boom):
        save(path)
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name], "the temporary file was left behind"


def test_serialization_failing_never_opens_the_target(tmp_path, monkeypatch):
    path = tmp_path / "old.json"
    path.write_bytes(b'{"old": 1}' * 3000)

    def fail(*a, **k):
        raise _Boom("cannot serialize")

    monkeypatch.setattr(report_io, "dumps", fail)
    monkeypatch.setattr(report_io, "written", fail)  # a Report is written compile by compile
    with pytest.raises(_Boom):
        report_io.save_json(_report(), path)
    assert path.read_bytes() == b'{"old": 1}' * 3000


def test_a_missing_folder_is_named_never_a_temporary_file(tmp_path):
    """Both writers (``save_json``, ``save_html``: spooled beside the file) name the missing folder the user gave."""
    missing = tmp_path / "no" / "such"
    for save in (_report().save_json, _report().save_html):
        with pytest.raises(FileNotFoundError) as e:
            save(missing / "r.out")
        assert e.value.filename == str(missing) and "does not exist" in str(e.value), e.value
        assert ".tmp" not in str(e.value) and "spool" not in str(e.value)
    assert not (tmp_path / "no").exists()


def test_replace_keeps_the_files_permissions(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{}")
    os.chmod(path, 0o640)
    _report().save_json(path)
    assert os.stat(path).st_mode & 0o777 == 0o640
    new = tmp_path / "new.json"
    _report().save_json(new)
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(new).st_mode & 0o777 == 0o666 & ~umask


def test_lone_surrogates_anywhere_are_escaped_visibly_not_dropped(tmp_path):
    bad = "argv \udcff and \ud800"
    r = _report(title=bad)
    r.compiles[0].kernels[0].metadata["note"] = bad
    out = r.save_json(tmp_path / "r.json")
    back = inductor_lens.load(out)
    assert back.title == "argv \\udcff and \\ud800"
    assert back.compiles[0].kernels[0].metadata["note"] == "argv \\udcff and \\ud800"
    assert any("lone surrogates" in str(d) for d in back.diagnostics)
    page = tmp_path / "r.html"
    r.save_html(page)
    assert "argv \\udcff and \\ud800" in page.read_text(encoding="utf-8")


def test_surrogate_escape_in_loaded_json_is_made_writable(tmp_path):
    d = _valid_dict()
    d["title"] = "x"
    text = json.dumps(d).replace('"title": "x"', '"title": "x\\ud800"')
    r = inductor_lens.load(text)
    assert r.title == "x\\ud800"
    r.save_html(tmp_path / "p.html")  # no UnicodeEncodeError


def test_nan_and_infinity_become_null_and_the_report_says_so(tmp_path):
    r = _report()
    k = r.compiles[0].kernels[0]
    k = dataclasses.replace(k, profile=dataclasses.replace(k.profile, share=float("nan"), total_us=float("inf")))
    r = dataclasses.replace(r, compiles=[dataclasses.replace(r.compiles[0], kernels=[k])])
    raw = report_io.dumps(r)
    data = json.loads(raw, parse_constant=lambda token: pytest.fail(f"{token} written into the JSON"))
    assert data["compiles"][0]["kernels"][0]["profile"]["share"] is None
    assert any("NaN or infinite" in str(d) and "profile.share" in str(d) for d in data["diagnostics"])
    # and a NaN written by another tool is read as null, with a diagnostic
    text = raw.decode().replace('"share":null', '"share":NaN')
    back = inductor_lens.load(text)
    assert back.compiles[0].kernels[0].profile.share is None


def test_gzip_is_written_for_gz_and_read_whatever_the_name(tmp_path):
    r = hostile_report()
    p = r.save_json(tmp_path / "r.json.gz")
    raw = open(p, "rb").read()
    assert raw[:2] == b"\x1f\x8b"
    assert inductor_lens.load(p) == r
    os.rename(p, tmp_path / "renamed.json")
    assert inductor_lens.load(tmp_path / "renamed.json") == r


# -- loading bad reports --------------------------------------------------------------------------


def _bad_inputs(tmp_path):
    """(name, path or source, expected words in the one-line error)."""
    good = json.dumps(_valid_dict())
    out = []

    def file(name, data: bytes, words):
        p = tmp_path / name
        p.write_bytes(data)
        out.append((name, p, words))

    def typed(name, mutate, words):
        d = _valid_dict()
        mutate(d)
        file(name, json.dumps(d).encode(), words)

    file("not-json.json", b"hello, I am not JSON", "not valid JSON")
    file("exported.html", b"<!DOCTYPE html>\n<html><head><title>lens</title>", "an HTML page, not a JSON report")
    file("truncated.json", good[: len(good) // 2].encode(), "truncated")
    file("empty.json", b"", "empty file")
    file("binary.json", b"\xff\xfe\x00garbage", "not UTF-8")
    file("truncated.json.gz", gzip.compress(good.encode())[:40], "gzip")
    file("gz-of-garbage.json.gz", gzip.compress(b"not json at all"), "not valid JSON")
    file("deep.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply")
    file("deep-object.json", (b'{"a":' * 100_000) + b"1" + b"}" * 100_000, "nested too deeply")
    file("array.json", b"[1, 2, 3]", "a JSON object, not an array")
    file("null.json", b"null", "a JSON object, not null")
    file("no-version.json", b'{"torch_version": "2", "device": "cpu"}', "no 'schema_version'")
    for v, words in (
        (0, "schema_version 0 does not exist"),
        (-5, "schema_version -5 does not exist"),
        ("true", "not a boolean"),
        ('"2"', "not a string"),
        (1.5, "not a number"),
        (999, "newer than this inductor_lens reads"),
    ):
        typed(f"version-{v}.json", lambda d, v=v: d.update(schema_version=json.loads(str(v))), words)
    typed(
        "share-lots.json",
        lambda d: d["compiles"][0]["kernels"][0]["profile"].update(share="lots"),
        "compiles[0].kernels[0].profile.share: expected a number or null, got a string ('lots')",
    )
    typed(
        "calls-list.json",
        lambda d: d["compiles"][0]["kernels"][0]["profile"].update(calls=[1]),
        "profile.calls: expected a number or null",
    )
    typed(
        "profile-string.json",
        lambda d: d["compiles"][0]["kernels"][0].update(profile="fast"),
        "profile: expected an object or null",
    )
    typed(
        "line-string.json",
        lambda d: d["compiles"][0]["trigger"]["user_stack"][0].update(line="7"),
        "user_stack[0].line: expected a whole number, got a string ('7')",
    )
    typed(
        "name-number.json",
        lambda d: d["compiles"][0]["kernels"][0].update(name=3),
        "kernels[0].name: expected a string, got a number",
    )
    typed("compiles-object.json", lambda d: d.update(compiles={}), "compiles: expected an array")
    typed("kernel-null.json", lambda d: d["compiles"][0]["kernels"].append(None), "kernels[1]: expected an object")
    typed("missing-field.json", lambda d: d["compiles"][0].pop("trigger"), "missing field 'trigger'")
    typed("device-bool.json", lambda d: d.update(device=True), "device: expected a string, got a boolean")
    typed(
        "metadata-deep.json",
        lambda d: d["compiles"][0]["kernels"][0].update(metadata=_nest(300)),
        "nested more than 200 levels",
    )
    out.append(("directory", tmp_path, "is a directory"))
    out.append(("missing", tmp_path / "missing.json", "no such file"))
    unreadable = tmp_path / "unreadable.json"
    unreadable.write_text(good)
    os.chmod(unreadable, 0)
    if not os.access(unreadable, os.R_OK):  # root reads anything
        out.append(("unreadable", unreadable, "cannot be read"))
    return out


def _nest(n):
    d: dict = {}
    for _ in range(n):
        d = {"x": d}
    return d


def test_every_bad_input_is_one_line_naming_the_file(tmp_path):
    cases = _bad_inputs(tmp_path)
    assert len(cases) >= 29
    for name, path, words in cases:
        with pytest.raises(ReportError) as info:
            inductor_lens.load(path)
        message = str(info.value)
        assert "\n" not in message, (name, message)
        assert message.startswith(str(path)), (name, message)
        assert words in message, (name, message)


def test_a_missing_file_is_also_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        inductor_lens.load(tmp_path / "nope.json")


def test_a_valid_report_still_loads_and_a_parsed_dict_is_not_changed():
    d = _valid_dict()
    d["title"] = "t\ud800"
    before = json.dumps(d)
    r = inductor_lens.load(d)
    assert r.title == "t\\ud800" and json.dumps(d) == before


# -- the line layout: one compile per line, read one at a time ------------------------------------


def _three_compiles() -> Report:
    """Three distinct compiles sharing one stack frame (so the written form interns it)."""
    shared = Frame(file="model.py", line=3, function="forward", code="return x.sin()")
    compiles = []
    for i in range(3):
        k = Kernel(
            name=f"cpp_fused_sin_{i}",
            language="cpp",
            source=f"void k{i}() {{}}\n" * 12,
            user_stack=[[shared, Frame(file="model.py", line=10 + i, function="f")]],
        )
        compiles.append(
            Compile(
                id=f"{i}/0 inference",
                compile_id=f"{i}/0",
                graph_kind="inference",
                trigger=Trigger(kind="first_call", reason="", user_stack=[shared]),
                kernels=[k],
                output_code=f"# compile {i}\n" * 20,
            )
        )
    return Report(torch_version="2.13.0", device="cpu", compiles=compiles)


def _read_by_lines(path) -> bool:
    """Whether every compile of ``path`` was read from its own line (else the file was parsed whole)."""
    return report_io.read_parts(path, str(path), lambda parts: (list(parts.compiles), parts.layout)[1])


def test_the_writer_puts_each_compile_on_its_own_line_and_reads_it_back_exactly(tmp_path):
    from inductor_lens.report import intern as _intern

    r = _three_compiles()
    raw = report_io.dumps(r)
    written = _intern.compact(r.to_dict())
    lines = raw.decode().split("\n")
    assert lines[0].endswith('"compiles":[') and lines[-2:] == ["]}", ""]
    assert len(lines) == 1 + 3 + 2
    for i, line in enumerate(lines[1:4]):  # each compile whole on its line, a comma after all but the last
        assert line.endswith(",") == (i < 2)
        assert json.loads(line.rstrip(",")) == written["compiles"][i]
    assert json.loads(raw) == written  # still one ordinary JSON document
    assert r.to_json() == raw.decode()  # to_json() is what save_json writes
    head = json.loads(lines[0][: -len('"compiles":[')].rstrip(",") + "}")
    assert head["interned"] == written["interned"]  # the tables come before any compile
    for path, data in ((tmp_path / "r.json", raw), (tmp_path / "r.json.gz", gzip.compress(raw))):
        path.write_bytes(data)
        assert _read_by_lines(path) is True
        assert inductor_lens.load(path) == r


def test_a_file_not_in_the_line_layout_is_read_whole_and_loads_the_same(tmp_path):
    r = _three_compiles()
    one_line = json.dumps(r.to_dict(compact=True)).encode()  # written by an older lens: one line
    expanded = json.dumps(r.to_dict(), indent=1).encode()  # by another tool: expanded, indented
    lines = report_io.dumps(r).split(b"\n")
    joined = b"\n".join(lines[:2] + [lines[2] + lines[3]] + lines[4:])  # two compiles on one line
    nan = report_io.dumps(r).replace(b'"device":"cpu"', b'"device":"cpu","x":NaN')  # the first line not JSON
    late_nan = b"\n".join(lines[:3] + [lines[3].replace(b'"graph_kind"', b'"y":NaN,"graph_kind"')] + lines[4:])
    for i, data in enumerate((one_line, expanded, joined, nan, late_nan)):
        path = tmp_path / f"r{i}.json"
        path.write_bytes(data)
        assert _read_by_lines(path) is False
        back = inductor_lens.load(path)
        assert back.compiles == r.compiles and back.torch_version == "2.13.0", i


def test_equal_frames_are_one_object_in_a_loaded_report(tmp_path):
    r = _three_compiles()
    for data in (report_io.dumps(r), json.dumps(r.to_dict()).encode()):  # compact and expanded files
        back = inductor_lens.load(data)
        frames = [c.trigger.user_stack[0] for c in back.compiles] + [
            k.user_stack[0][0] for c in back.compiles for k in c.kernels
        ]
        assert len(frames) == 6 and all(f is frames[0] for f in frames)
        assert back == r


def _bad_json_reports(tmp_path):
    """``(name, path, data)`` of each bad input that parses as JSON into a report-shaped dict (with compiles)."""
    for name, path, _words in _bad_inputs(tmp_path):
        if not str(path).endswith(".json") or not path.is_file():
            continue
        try:
            d = json.loads(path.read_bytes())
        except (ValueError, RecursionError):
            continue
        if isinstance(d, dict) and isinstance(d.get("compiles"), list):
            yield name, path, d


@pytest.mark.parametrize("where", ["first", "last"])
def test_the_per_compile_check_reports_what_the_whole_check_reports(tmp_path, where):
    """Every typed bad input, written in the line layout and read compile by compile, fails with the very
    message that checking the whole parsed report gives."""
    tried = 0
    for name, _path, d in _bad_json_reports(tmp_path):
        if d.get("schema_version") != 2:
            continue
        good = _valid_dict()["compiles"][0]
        d["compiles"] = [good, *d["compiles"]] if where == "last" else [*d["compiles"], good]
        with pytest.raises(ReportError) as whole:
            report_io.check(d, "r.json")
        laid = tmp_path / f"laid-{name}"
        laid.write_bytes(_report_stream.encode(d, lambda v: json.dumps(v).encode()))  # orjson stops at depth 255
        with pytest.raises(ReportError) as parts:
            report_io.load(laid, name="r.json")
        assert str(parts.value) == str(whole.value), name
        tried += _read_by_lines(laid)
    assert tried >= 8  # each typed bad input inside a compile or before them


def test_a_compile_error_comes_before_an_error_in_a_later_field_as_in_the_whole_check(tmp_path):
    d = _valid_dict()
    d["compiles"][0]["kernels"][0]["name"] = 3
    d["title"] = 5  # after "compiles" among Report's fields: the whole check meets the compile first
    d["device"] = "cpu"
    path = tmp_path / "two.json"
    path.write_bytes(report_io.encode(d))
    with pytest.raises(ReportError, match=r"compiles\[0\]\.kernels\[0\]\.name: expected a string"):
        inductor_lens.load(path)
    d["compiles"][0]["kernels"][0]["name"] = "k"
    path.write_bytes(report_io.encode(d))
    with pytest.raises(ReportError, match=r"two.json: title: expected a string, got a number"):
        inductor_lens.load(path)
    d["device"] = True  # before "compiles": found before any compile is read
    path.write_bytes(report_io.encode(d))
    with pytest.raises(ReportError, match=r"device: expected a string"):
        inductor_lens.load(path)


def _kernels_sharing_one_stack(compiles: int, kernels: int) -> Report:
    """``compiles`` x ``kernels`` kernels whose compiler stack is one and the same stack (as Inductor's call
    path is for every kernel of a run), and nodes whose module path is one and the same."""
    from inductor_lens.report.model import Graph, GraphNode

    path = [Frame(file="torch/_inductor/graph.py", line=n, function=f"step{n}", code=f"step{n}()") for n in range(1, 5)]
    out = []
    for c in range(compiles):
        ks = [
            Kernel(name=f"cpp_fused_{c}_{i}", language="cpp", source="", compiler_stack=list(path))
            for i in range(kernels)
        ]
        nodes = [
            GraphNode(
                name=f"n{i}",
                op="call_function",
                target="aten.sin",
                shape=[4, 8],
                module_stack=["layers.0", "layers.0.mlp"],
            )
            for i in range(3)
        ]
        out.append(
            Compile(
                id=f"{c}/0 inference",
                compile_id=f"{c}/0",
                graph_kind="inference",
                trigger=Trigger(kind="first_call", reason=""),
                kernels=ks,
                graphs={"pre_grad": Graph(nodes=nodes)},
            )
        )
    return Report(torch_version="2.13.0", device="cpu", compiles=out)


def test_an_interned_stack_is_one_list_of_frames_after_load(tmp_path):
    r = _kernels_sharing_one_stack(compiles=3, kernels=40)
    path = tmp_path / "r.json"
    report_io.save_json(r, path)
    assert len(json.loads(path.read_bytes())["interned"]["stacks"]) == 1  # written once
    back = inductor_lens.load(path)
    assert back == r
    stacks = [k.compiler_stack for c in back.compiles for k in c.kernels]
    assert len(stacks) == 120 and all(s is stacks[0] for s in stacks)
    assert [f.line for f in stacks[0]] == [1, 2, 3, 4]
    nodes = [n for c in back.compiles for n in c.graphs["pre_grad"].nodes]
    assert len(nodes) == 9 and all(n.module_stack is nodes[0].module_stack and n.shape is nodes[0].shape for n in nodes)
    assert nodes[0].module_stack == ["layers.0", "layers.0.mlp"] and nodes[0].shape == [4, 8]


@pytest.mark.parametrize(
    "field, value, problem",
    [
        ("function", 5, "function: expected a string, got a number (5)"),
        ("line", "7", "line: expected a whole number, got a string ('7')"),
    ],
)
def test_a_bad_frame_in_the_interned_tables_is_named_where_it_is_first_used(tmp_path, field, value, problem):
    """An interned stack is checked once, at its first use: the error has the path the whole check gives."""
    r = _kernels_sharing_one_stack(compiles=3, kernels=5)
    data = json.loads(report_io.dumps(r))
    (frame,) = [f for f in data["interned"]["frames"] if f[1] == 3]  # [file, line, function, code, stage]
    frame[{"line": 1, "function": 2}[field]] = value
    path = tmp_path / "bad.json"
    path.write_bytes(report_io.encode(data))
    assert _read_by_lines(path) is True
    expected = f"bad.json: compiles[0].kernels[0].compiler_stack[2].{problem}"
    with pytest.raises(ReportError) as e:
        report_io.load(path, name="bad.json")
    assert str(e.value) == expected
    with pytest.raises(ReportError) as whole:
        report_io.check(data, "bad.json")
    assert str(whole.value) == expected
    with pytest.raises(ReportError) as shown:  # the check `show` runs, without building
        report_io.read_parts(path, "bad.json", lambda parts: list(parts.checked()))
    assert str(shown.value) == expected


# -- long texts: held as references to the file's lines, read as str ------------------------------


def _texts_report() -> Report:
    """Two compiles whose long texts repeat lines (a kernel's source is in its compile's output code, the
    second compile's guards repeat the first's), and long strings in places that are not texts."""
    from inductor_lens.report.model import Cost, Graph

    compiles = []
    for i in range(2):
        src = "\n".join(f"    tmp{n} = x{n} * {i if n == 3 else 2}  # line {n} of the kernel" for n in range(12))
        k = Kernel(
            name=f"cpp_fused_{i}",
            language="cpp",
            source=src,
            metadata={"source": "not a text field: " + "y" * 100, "code": ["z" * 90]},
            cost=Cost(source="a long note on how the cost was obtained " * 3),
        )
        compiles.append(
            Compile(
                id=f"{i}/0 inference",
                compile_id=f"{i}/0",
                graph_kind="inference",
                trigger=Trigger(kind="first_call", reason=""),
                kernels=[k],
                output_code=f"# compile {i}\n{src}\ncall({i})\n",
                guards="\n".join(f"TENSOR_MATCH: check_tensor(L['x'], size=[{n}, 8], stride=[8, 1])" for n in range(5)),
                graphs={
                    "post_grad": Graph(code="def forward(self, x):\n" + "    y = torch.sin(x)  # a graph line\n" * 4)
                },
            )
        )
    return Report(torch_version="2.13.0", device="cpu", compiles=compiles)


def test_a_loaded_reports_long_texts_are_line_references_that_read_as_the_same_str(tmp_path):
    import copy
    import dataclasses
    import pickle

    from inductor_lens.report import text as _text

    r = _texts_report()
    path = tmp_path / "r.json"
    report_io.save_json(r, path)
    back = inductor_lens.load(path)
    assert back == r and back.to_dict() == r.to_dict()
    c, k = back.compiles[1], back.compiles[1].kernels[0]
    held = {
        "output_code": _text.held(c, "output_code"),
        "guards": _text.held(c, "guards"),
        "source": _text.held(k, "source"),
        "code": _text.held(c.graphs["post_grad"], "code"),
    }
    assert all(type(v) is _text.LinesText for v in held.values()), held
    assert type(k.source) is str and k.source == r.compiles[1].kernels[0].source  # read: joined
    assert type(c.output_code) is str and c.output_code.endswith("call(1)\n")
    # only the model's text fields: long strings elsewhere are plain strings
    assert type(k.metadata["source"]) is str and type(k.metadata["code"][0]) is str
    assert type(k.cost.source) is str and k.cost.source == r.compiles[1].kernels[0].cost.source
    # a loaded report copies, pickles, replaces and writes like any other
    assert pickle.loads(pickle.dumps(back)) == r and copy.deepcopy(back) == r
    assert dataclasses.replace(k, name="x").source == k.source
    report_io.save_json(back, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert inductor_lens.load(tmp_path / "again.json") == r


@pytest.mark.parametrize(
    "ids, problem",
    [
        ([0, 10**6], "IndexError: a text's line 1000000 is not in the report's"),
        ([0, -1], "OverflowError"),
        ([0, "1"], "TypeError"),
    ],
)
def test_a_text_naming_a_line_that_is_not_there_is_a_damaged_report(tmp_path, ids, problem):
    data = json.loads(report_io.dumps(_texts_report()))
    assert data["compiles"][0]["kernels"][0]["source"].keys() == {"@g"}
    data["compiles"][0]["kernels"][0]["source"] = {"@g": ids}
    path = tmp_path / "bad.json"
    path.write_bytes(report_io.encode(data))
    assert _read_by_lines(path) is True
    for read in (lambda: report_io.load(path, name="bad.json"), lambda: report_io.check(data, "bad.json")):
        with pytest.raises(ReportError) as e:
            read()
        assert str(e.value).startswith("bad.json: its interned tables are damaged (") and problem in str(e.value)
        assert "\n" not in str(e.value)


@pytest.mark.parametrize("lines", [[None], [5], "abc", {"0": "x"}])
def test_a_line_table_that_is_not_strings_is_a_damaged_report_at_load_not_later(tmp_path, lines):
    data = json.loads(report_io.dumps(_texts_report()))
    data["interned"]["lines"] = lines if not isinstance(lines, list) else data["interned"]["lines"][:-1] + lines
    path = tmp_path / "bad.json"
    path.write_bytes(report_io.encode(data))
    with pytest.raises(ReportError, match=r"^bad.json: its interned tables are damaged \(TypeError: interned lines"):
        report_io.load(path, name="bad.json")


def test_show_of_a_line_layout_report_with_nan_embeds_the_fixed_texts(tmp_path):
    """A report whose compile holds NaN is embedded as fixed data (not the file's bytes): its texts must be
    plain strings again by then, not the line references a loaded report keeps."""
    from inductor_lens.views import cli

    raw = report_io.dumps(_texts_report())
    head, first, rest = raw.split(b"\n", 2)
    assert b'"time_us":null' in first
    first = first.replace(b'"time_us":null', b'"time_us":NaN', 1)
    path = tmp_path / "nan.json"
    path.write_bytes(b"\n".join([head, first, rest]))
    assert cli.main(["show", str(path), "-o", str(tmp_path / "page.html")]) == 0
    assert (tmp_path / "page.html").read_text().lstrip().lower().startswith("<!doctype html")


# -- large reports: each compile checked as written, built when first read -------------------------


def _fixture_report() -> Report:
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_gpt2_block.json"
    r = inductor_lens.load(path.read_bytes())  # one recorded compile, and a copy of it under another id
    copy = dataclasses.replace(r.compiles[0], id="1/0 forward", compile_id="1/0", label="the copy")
    return dataclasses.replace(r, compiles=[*r.compiles, copy])


def test_every_compile_the_lens_writes_passes_the_check_of_the_written_form(tmp_path):
    """The compact-form check must say "right" for what the lens writes (else every load takes the slow,
    exact path) and "not sure" for each typed bad input (whose message the exact path then words)."""
    from inductor_lens.report import intern as _intern
    from inductor_lens.report.fastcheck import CompactCheck

    for r in (_fixture_report(), _texts_report(), _three_compiles(), _report()):
        data = json.loads(report_io.dumps(r))
        fast = CompactCheck(_intern.Expander(data["interned"]))
        assert data["compiles"] and all(fast.ok(c) for c in data["compiles"])
    refused = 0
    for name, _path, d in _bad_json_reports(tmp_path):
        if not d["compiles"]:
            continue
        written = _intern.compact(d)
        fast = CompactCheck(_intern.Expander(written["interned"]))
        ok = all(fast.ok(c) for c in written["compiles"])
        try:
            report_io.check(d, name)
        except ReportError as e:
            if "compiles[" in str(e):  # the exact check refuses a compile: the compact one must not be sure
                assert not ok, name
                refused += 1
    assert refused >= 8


def test_a_damaged_reference_inside_free_form_data_is_not_passed_by_the_written_form_check():
    from inductor_lens.report import intern as _intern
    from inductor_lens.report.fastcheck import CompactCheck

    data = json.loads(report_io.dumps(_texts_report()))
    fast = CompactCheck(_intern.Expander(data["interned"]))
    k = data["compiles"][0]["kernels"][0]
    assert fast.ok(data["compiles"][0])
    for bad in ({"@s": 10**6}, {"@s": 1.0}, {"@g": [10**6]}, {"@g": [-1]}, {"@g": "0"}):
        k["metadata"] = {"x": [bad]}
        assert not fast.ok(data["compiles"][0]), bad
        k["metadata"] = bad
        assert not fast.ok(data["compiles"][0]), bad
    k["metadata"] = {}
    k["source"] = {"@g": [0, len(data["interned"]["lines"])]}
    assert not fast.ok(data["compiles"][0])


def test_a_loaded_report_builds_each_compile_when_first_read_and_equals_the_saved_one(tmp_path):
    import pickle
    import threading

    from inductor_lens.report import lazy

    r = _fixture_report()
    path = tmp_path / "r.json"
    report_io.save_json(r, path)
    back = inductor_lens.load(path)
    assert len(back.compiles) == len(r.compiles) >= 2
    assert all(lazy.pending(c) for c in back.compiles)  # nothing built but what names each compile
    assert repr(back) == repr(r)  # counts the kernels without building them
    assert [c.id for c in back.compiles] == [c.id for c in r.compiles]
    assert [c.label for c in back.compiles] == [c.label for c in r.compiles]
    assert back.compiles[0].trigger == r.compiles[0].trigger
    assert all(lazy.pending(c) for c in back.compiles)
    first = back.compiles[0]
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(first.kernels)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not lazy.pending(first) and lazy.pending(back.compiles[1])
    assert len(seen) == 4 and all(s is seen[0] for s in seen)  # built once
    assert first.kernels == r.compiles[0].kernels and type(first.kernels[0].source) is str
    assert first == r.compiles[0]
    assert pickle.loads(pickle.dumps(back.compiles[1])) == r.compiles[1]
    assert back == r and back.to_dict() == r.to_dict()
    again = tmp_path / "again.json"
    report_io.save_json(inductor_lens.load(path), again)  # written from pending compiles: the same bytes
    assert again.read_bytes() == path.read_bytes()
