"""The one atomic writer (``report.io.atomic_write``): every file the lens writes goes through it (no torch)."""

from __future__ import annotations

import os

import pytest

from inductor_lens.report import io as report_io
from inductor_lens.report.model import Report


def test_text_is_written_as_utf8_and_bytes_as_they_are(tmp_path):
    report_io.atomic_write(tmp_path / "t.json", '{"title": "é"}')
    report_io.atomic_write(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "t.json").read_bytes() == b'{"title": "\xc3\xa9"}'
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.bin", "t.json"]


def test_a_directory_as_target_is_a_clear_error_naming_it_not_a_temp_file(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as e:
        Report(torch_version="2.13.0", device="cpu").save_html(target)
    assert e.value.filename == str(target)
    assert ".tmp" not in str(e.value) and str(target) in str(e.value)
    assert report_io.describe_os_error(e.value) == "it is a directory, not a file (give a file name)"
    assert os.listdir(target) == [] and sorted(os.listdir(tmp_path)) == ["out"], "nothing was left behind"


def test_no_other_module_writes_through_its_own_temp_file_and_rename():
    """One writer: ``os.replace``/``os.rename`` appear in ``report/io.py`` only."""
    import inductor_lens

    root = os.path.dirname(inductor_lens.__file__)
    others = []
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".py") and os.path.relpath(path, root) != os.path.join("report", "io.py"):
                text = open(path, encoding="utf-8").read()
                if "os.replace(" in text or "os.rename(" in text:
                    others.append(os.path.relpath(path, root))
    assert others == []
