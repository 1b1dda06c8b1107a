"""Shared test set-up. Real compiles are slow on CPU: each test model is captured once per run
(``tests/_capture_fixtures.py``; under xdist, the first worker that needs it writes it for the others) and its
report shared by all tests; browser fixtures (Chromium, a real
JupyterLab server) live in ``tests/_browser_fixtures.py``. Neither module imports torch or playwright at
collection: a test that needs no compile (model, JS, recorded GPU reports) never loads them.

Parallel runs (``make test``: pytest-xdist): every test of a file goes to the same worker (its
module-scoped captures and servers are made once), except the files in ``INDEPENDENT``, whose tests share
nothing and are spread one by one (``pytest_xdist_make_scheduler`` below); files start heaviest first
(``WEIGHT``: seconds measured on the 2-core machine), so that no worker is left alone with a long file at
the end.

Markers (pyproject.toml) select layers: ``make test-fast`` runs ``-m "not browser and not kernel and not
slow and not wheel"``. The markers that follow from a fixture are added here, so a test cannot use a
compile, a kernel or a browser without carrying its marker.
"""

import atexit
import gc
import os
import shutil
import sys
import tempfile

import pytest

# torch's compile workers (TORCHINDUCTOR_COMPILE_THREADS: a thread per core builds the C++ kernels apart from the
# compile) cost each compiling process about 1 CPU-second that the suite's two busy workers do not win back, over
# about 20 such processes (this worker, notebook and IPython kernels, CLI runs, torchrun ranks): they inherit this.
# Users get the workers: ``test_cli.py``'s ``ran`` (the console script, a real compile and its report) runs without
# this variable and checks that its compile had them, so a capture that worked only without them fails there.
COMPILE_THREADS = "TORCHINDUCTOR_COMPILE_THREADS"
os.environ.setdefault(COMPILE_THREADS, "1")

# Inductor checks which vector instruction sets the CPU runs (avx512, avx2...) once per process, before its first C++
# kernel: it builds a test program for each and loads it in a Python subprocess of its own (0.6-0.7 CPU-s a process
# here, in about 25 compiling processes of the suite). TORCHINDUCTOR_VEC_ISA_OK=1 takes the CPU's flags as they are
# (/proc/cpuinfo), the same pick on this machine. Users get the check: ``ran`` (test_cli.py) runs without this
# variable too and checks that its compile picked what the suite's processes pick.
VEC_ISA_OK = "TORCHINDUCTOR_VEC_ISA_OK"
os.environ.setdefault(VEC_ISA_OK, "1")

# Bytecode is written (and read) in this run even where the shell says not to (PYTHONDONTWRITEBYTECODE, set on the
# machines this suite runs on): without it each worker rewrites the asserts of every test module at collection
# (about 7 CPU-s of a worker's 22), and each of the ~50 processes the suite starts (kernels, ranks, CLI runs)
# compiles the package from source (0.15-0.2 CPU-s each). The files go where Python puts them (__pycache__/, ignored).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Every notebook kernel the suite starts ("python3": nbclient, the magic's kernel, JupyterLab, the wheel's user venv)
# is this interpreter's (or that venv's). A "python3" kernel spec in the user's Jupyter data folder wins over the
# running environment's own (jupyter_client looks there first): one left by `ipykernel install --user` from another
# venv ran every notebook test in that venv, against the inductor_lens installed there. The folder is one of the
# run's own, empty of kernels, and JUPYTER_PATH's extra folders are left out; processes started here inherit both.
os.environ["JUPYTER_DATA_DIR"] = _JUPYTER_DATA = tempfile.mkdtemp(prefix="inductor-lens-jupyter-data-")
os.environ.pop("JUPYTER_PATH", None)
atexit.register(shutil.rmtree, _JUPYTER_DATA, ignore_errors=True)

pytest_plugins = ["tests._capture_fixtures", "tests._browser_fixtures", "tests._kernel"]

# Python's cyclic garbage collector scans, at each full collection, every object the process holds: here the millions
# that importing torch, dynamo and Inductor leave (their modules, functions, decompositions), ~0.35 CPU-s a collection
# and 15 of a worker's ~135 CPU-s over tests/capturing and tests/analysis (measured with gc.callbacks). Between tests,
# once a wave of imports has landed (the first compile imports dynamo and Inductor), what is alive is frozen
# (gc.freeze(): collections skip it, after a gc.collect() that frees the garbage of the tests before): later
# collections scan what the tests make (that half of the suite: 189-198 CPU-s against 200-207 without, interleaved
# runs). Tests that check what a collection frees make and drop their objects inside the test, after any freeze.
_FROZEN_AT = [0]  # len(sys.modules) at the last freeze
_FREEZE_AFTER = 300  # modules imported since


def _freeze_imports() -> None:
    if len(sys.modules) - _FROZEN_AT[0] > _FREEZE_AFTER:
        gc.collect()
        gc.freeze()
        _FROZEN_AT[0] = len(sys.modules)


def pytest_collection_finish(session):
    _freeze_imports()


def pytest_runtest_logfinish(nodeid, location):
    _freeze_imports()


FIXTURE_MARKERS = {
    "kernel": "kernel",
    "ipython_kernel": "kernel",
    "chromium_browser": "browser",
    "offline_page": "browser",
    "offline_context": "browser",
    "jupyter_lab": "browser",
    "lab_page": "browser",
}


# files whose tests need nothing from each other (no module fixture): spread test by test
INDEPENDENT = {"test_notebooks.py", "test_observer.py", "test_aot_cpp.py", "test_inspect.py"}
# files (or a test: "file::test") that share a session server (JupyterLab) or kernel (tests/_kernel.py), a loaded
# report (tests/_recorded.py) or a session capture: one scope, so that one worker starts, loads or captures them once
# (the session kernel is used by test_diff.py too). Without it, each worker would make its own: slower, as right.
SHARED = {
    "test_diff.py": "jupyter",
    "test_magic_browser.py": "jupyter",
    "test_widget_browser.py": "jupyter",
    "test_magic.py": "jupyter",
    "test_cells_kernel.py": "jupyter",
    # the readers of the 32-layer Llama reports (tests/_recorded.py loads each once per process: 2 CPU-s a load)
    "test_written.py": "llama8b",
    "test_llama8b_fixture.py": "llama8b",
    "test_modules.py": "llama8b",
    "test_module_paths.py": "llama8b",
    "test_module_paths_truth.py": "llama8b",
    "test_llama8b_page.py": "llama8b",
    # the users of the session fixture aoti_pair (tests/_capture_fixtures.py: two AOTInductor builds, ~13 CPU-s each)
    "test_names.py": "aoti",
    "test_observer.py::test_export_with_a_dynamic_batch_and_aoti_package_gives_the_same_results": "aoti",
    # the three tests that import transformers (4.5 CPU-s with its GPT-2 and Llama classes, once per process)
    "test_inspect.py::test_hf_gpt2_with_labels_and_backward": "transformers",
    "test_observer.py::test_hf_gpt2_at_several_sequence_lengths": "transformers",
    "test_settings.py::test_a_transformers_model_is_named_with_its_own_module_paths_and_argument_names": "transformers",
}
# rough seconds per file (or per test of an INDEPENDENT file), the order files are handed to workers
WEIGHT = {
    "test_reproducer.py": 45,
    "test_llama8b_page.py": 25,
    "test_torchrun.py": 80,
    "test_diff.py": 70,
    "test_magic_browser.py": 70,
    "test_widget_browser.py": 70,
    "test_cli.py": 60,
    "test_magic.py": 40,
    "test_perf.py": 35,
    "test_capture.py": 28,
    "test_trace_import.py": 65,
    "test_marimo.py": 21,
    "test_notebooks.py": 20,
    "test_cells_kernel.py": 15,
    "test_aot_cpp.py": 12,
    "test_concurrent.py": 8,
    "test_written.py": 8,  # and the rest of the 'llama8b' scope with it: about 25 s
    "test_observer.py": 6,
    "test_inspect.py": 6,
    # the long tests of INDEPENDENT files: early, so that the short ones fill the end of the run
    "test_inspect.py::test_hf_gpt2_with_labels_and_backward": 21,
    "test_observer.py::test_hf_gpt2_at_several_sequence_lengths": 15,
    "test_observer.py::test_export_with_a_dynamic_batch_and_aoti_package_gives_the_same_results": 39,
}


def _weight(item) -> int:
    name = item.path.name
    return WEIGHT.get(f"{name}::{getattr(item, 'originalname', item.name)}", WEIGHT.get(name, 1))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config, items):
    capture = config.pluginmanager.get_plugin("tests._capture_fixtures")
    markers = dict(FIXTURE_MARKERS, **{name: "compile" for name in capture.CAPTURE_FIXTURES})
    for item in items:
        for name in set(getattr(item, "fixturenames", ())) & markers.keys():
            item.add_marker(getattr(pytest.mark, markers[name]))
    items.sort(key=lambda item: -_weight(item))  # stable: a file's own order is kept


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: without it (a plain pytest run) never called
def pytest_xdist_make_scheduler(config, log):
    """xdist's scheduler by scope, the scope being the file, the test itself in an INDEPENDENT file, or the
    SHARED scope's name (of the test, else of its file). Scopes go to workers in collection order (heaviest first,
    above)."""
    from xdist.scheduler import LoadScopeScheduling

    class FileOrTestScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            file, _, test = nodeid.partition("::")
            name = file.rsplit("/", 1)[-1]
            shared = SHARED.get(f"{name}::{test}")
            if shared is None and name not in INDEPENDENT:
                shared = SHARED.get(name, file)
            return shared or nodeid

    return FileOrTestScheduling(config, log)
