"""The big TORCH_TRACE log that ``benchmarks/trace_import.py`` and ``benchmarks/peers.py`` build from a real one
is a valid log: every payload's ``has_payload`` md5 is right (tlparse checks it, and a peer fed corrupt records
compares nothing), and each copy is a distinct compile."""

import hashlib
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import inductor_lens

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "fixtures" / "dist" / "ddp-trace" / "dedicated_log_torch_trace_rank_0_9v0ognt1.log"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_trace_import", ROOT / "benchmarks" / "trace_import.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _md5s(path) -> tuple[int, int]:
    """(payloads, wrong md5s), counted here independently of the benchmark's own checker."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    checked = bad = 0
    for record in re.split(r"\n(?=[^\t])", text.rstrip("\n")):
        header, _, rest = record.partition("\n")
        m = re.search(r'"has_payload": "([0-9a-f]{32})"', header)
        if m:
            payload = "\n".join(ln[1:] for ln in rest.split("\n")) if rest else ""
            checked += 1
            bad += hashlib.md5(payload.encode()).hexdigest() != m.group(1)
    return checked, bad


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("biglog") / "dedicated_log_torch_trace_big.log"
    copies, size = _bench().big_log(str(SOURCE), 3.0, str(out))
    return out, copies, size


def test_every_payload_md5_of_the_built_log_is_right(built):
    out, copies, size = built
    assert copies == 3 and size >= 3e6
    source_checked, source_bad = _md5s(SOURCE)
    assert source_bad == 0 and source_checked > 100
    checked, bad = _md5s(out)
    assert (checked, bad) == (copies * source_checked, 0)
    assert _bench().md5_errors(str(out)) == (checked, 0)


def test_the_md5_check_can_fail(built, tmp_path):
    out, _, _ = built
    text = out.read_text(encoding="utf-8")
    i = text.index('\t"ts": ', len(text) // 2)  # one time stamp of a late copy edited, its md5 left alone
    broken = tmp_path / "broken.log"
    broken.write_text(text[: i + 7] + "9" + text[i + 7 :], encoding="utf-8")
    assert _md5s(broken)[1] == 1
    assert _bench().md5_errors(str(broken))[1] == 1


def test_each_copy_is_its_own_compile(built):
    out, copies, _ = built
    one = inductor_lens.load_trace(str(SOURCE))
    big = inductor_lens.load_trace(str(out))
    assert len(big.compiles) == copies * len(one.compiles)
    assert len({c.id for c in big.compiles}) == len(big.compiles)
    assert len(big.kernels) == copies * len(one.kernels)


#: tlparse (a test dependency): beside this Python (the venv's bin, not always on the PATH), else on the PATH
TLPARSE = shutil.which("tlparse", path=os.path.dirname(sys.executable)) or shutil.which("tlparse")


@pytest.mark.skipif(TLPARSE is None, reason="tlparse is not installed (pip install tlparse, in the test extra)")
def test_tlparse_reads_every_record_of_the_built_log_as_ok(built, tmp_path):
    out, _, _ = built
    proc = subprocess.run(
        [TLPARSE, str(out), "-o", str(tmp_path / "tl"), "--overwrite", "--no-browser"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    stats = re.search(r"Stats \{([^}]*)\}", proc.stdout + proc.stderr)
    assert stats, (proc.stdout + proc.stderr)[-2000:]
    counts = {k.strip(): int(v) for k, v in (kv.split(":") for kv in stats.group(1).split(","))}
    assert counts.get("ok", 0) > 1000
    assert "fail_payload_md5" not in counts, counts
