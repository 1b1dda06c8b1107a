"""The notebooks in ``notebooks/`` are living docs: each one runs headlessly in a real kernel (nbclient)
and any error fails the test. The notebooks assert their own claims (``assert`` cells), so a change in
what Inductor does shows up here, not in a reader's browser."""

from __future__ import annotations

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# nbformat and nbclient are imported by the tests that use them, not at collection: nbformat imports jsonschema,
# whose optional IRI checker (rfc3987_syntax) builds 38 grammars at import, ~3 CPU-s in every worker that collects.
# Every notebook runs here. 04 runs on a GPU where there is one; on CPU it loads the reports recorded on
# an H200 (tests/fixtures), and it is committed WITH the outputs of that real GPU run.
NOTEBOOKS = [
    REPO / "notebooks" / name
    for name in (
        "01_when_does_inductor_run.ipynb",
        "02_fusion_in_a_model.ipynb",
        "03_training_step.ipynb",
        "04_gpu_triton.ipynb",
    )
]
SAVED_OUTPUTS = {"04_gpu_triton.ipynb"}


def test_the_notebooks_exist():
    missing = [p.name for p in NOTEBOOKS if not p.exists()]
    assert not missing, f"missing notebooks: {missing}"


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_without_error(path, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    if path.name not in SAVED_OUTPUTS:
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
            f"{path.name} is committed with outputs: clear them (CI re-executes it)"
        )
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets, f"{path.name} never showed the lens widget"
    if path.name == "01_when_does_inductor_run.ipynb":
        # its claim, in the fresh kernel it runs in here (a kernel that compiled before says so, and may run it again):
        # loading the lens imports no part of Inductor, torch.compile() imports lowering.py
        text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
        assert "lowering imported before torch.compile: False" in text, text[:2000]
        assert "lowering imported after torch.compile:  True" in text, text[:2000]


def test_gpu_notebook_keeps_the_outputs_of_a_real_gpu_run():
    import nbformat

    nb = nbformat.read(REPO / "notebooks" / "04_gpu_triton.ipynb", as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "GPU: NVIDIA H200" in text and "torch 2.11.0 on cuda" in text and "triton_" in text
