"""The path of a user who installs from a package index and has no Node.js.

Builds the sdist (with node: it carries the built front end), then a wheel FROM THE SDIST with node and
npm absent from PATH, installs that wheel into a fresh venv that holds only torch and a Jupyter kernel,
and, still without node, runs ``inductor-lens demo``, one ``%%inductor_lens`` cell in a real IPython
kernel (nbclient) and the export. Nothing from the source tree is importable there (no PYTHONPATH; cwd
is a temp dir), so it runs the installed files.

Speed: the "torch + Jupyter kernel" layer (what the user had before installing us) is built once per torch
and Python version, kept under build/test-venvs/ and never modified; each run makes a new venv on top
of it (a .pth file puts the layer on sys.path, as --system-site-packages does for the system one) and
pip installs the wheel WITH its dependencies into that new venv: pip sees torch there and installs the
rest (anywidget, ipywidgets, ...) itself.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.wheel

REPO = pathlib.Path(__file__).resolve().parents[2]
TORCH = os.environ.get("INDUCTOR_LENS_TEST_TORCH", "torch==2.13.0")
NODE_TOOLS = {"node", "nodejs", "npm", "npx", "corepack", "yarn", "pnpm"}
PY = f"{sys.version_info.major}.{sys.version_info.minor}"


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    )
    return r


def _path_without_node(shim: pathlib.Path) -> str:
    """A directory of links to every program on PATH except Node.js and its package managers."""
    shim.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not d or not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            target = os.path.join(d, name)
            if name in NODE_TOOLS or (shim / name).exists() or not os.access(target, os.X_OK):
                continue
            (shim / name).symlink_to(target)
    return str(shim)


def _site_packages(venv: pathlib.Path) -> pathlib.Path:
    return venv / "lib" / f"python{PY}" / "site-packages"


def _torch_layer() -> pathlib.Path:
    """A venv with only torch and a Jupyter kernel, built once (``ready`` marks it complete), then only read."""
    name = TORCH.replace("=", "").replace(" ", "")
    layer = REPO / "build" / "test-venvs" / f"{name}-py{PY}"
    if (layer / "ready").exists():
        return layer
    shutil.rmtree(layer, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(layer)])
    _run([str(layer / "bin" / "pip"), "install", "-q", TORCH, "ipykernel", "nbclient", "nbformat"], timeout=1800)
    (layer / "ready").write_text(TORCH + "\n")
    return layer


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """(sdist, wheel): the sdist built from the tree, the wheel built from the sdist without node."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(REPO)], timeout=900)
    sdist = next(out.glob("inductor_lens-*.tar.gz"))
    env = dict(
        os.environ,
        PATH=os.pathsep.join(
            [str(pathlib.Path(sys.executable).parent), _path_without_node(tmp_path_factory.mktemp("nonode") / "bin")]
        ),
    )
    assert shutil.which("node", path=env["PATH"]) is None and shutil.which("npm", path=env["PATH"]) is None
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(sdist)], env=env, timeout=900)
    return sdist, next(out.glob("inductor_lens-*.whl"))


@pytest.fixture(scope="module")
def user_venv(dist, tmp_path_factory):
    """(venv, env): a new venv over the torch layer with the wheel installed; env has no node on PATH."""
    layer = _torch_layer()
    root = tmp_path_factory.mktemp("user")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    (_site_packages(venv) / "_torch_layer.pth").write_text(str(_site_packages(layer)) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), _path_without_node(root / "bin")])
    _run([str(venv / "bin" / "pip"), "install", "-q", str(dist[1])], env=env, cwd=root, timeout=900)
    assert not list(_site_packages(venv).glob("torch-*.dist-info")), "pip installed a second torch"
    return venv, env, root


def test_sdist_carries_the_sources_and_the_built_bundle(dist):
    import tarfile

    with tarfile.open(dist[0]) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for f in (
        "inductor_lens/static/lens.js",
        "inductor_lens/static/lens.css",
        "inductor_lens/static/layout-worker.js",
        "inductor_lens/static/bundle-source.sha256",
        "js/package-lock.json",
        "js/src/index.js",
        "hatch_build.py",
    ):
        assert f in names, f
    assert not [n for n in names if "node_modules" in n]


def test_wheel_carries_the_bundle_and_the_console_script(dist):
    import zipfile

    with zipfile.ZipFile(dist[1]) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    assert {"inductor_lens/static/lens.js", "inductor_lens/static/layout-worker.js"} <= names
    assert "inductor-lens = inductor_lens.views.cli:main" in entry_points
    assert not [n for n in names if n.startswith(("js/", "tests/"))]


def test_installed_package_is_the_wheel_not_the_tree(user_venv):
    venv, env, root = user_venv
    r = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import inductor_lens, torch, shutil; "
            "print(inductor_lens.__file__); print(torch.__version__); print(shutil.which('node'))",
        ],
        env=env,
        cwd=root,
    )
    file, torch_version, node = r.stdout.split()
    assert pathlib.Path(file).is_relative_to(_site_packages(venv)), file
    assert torch_version.split("+")[0] == TORCH.split("==")[-1]
    assert node == "None"


def test_demo_runs_without_node(user_venv):
    venv, env, root = user_venv
    r = _run(
        [str(venv / "bin" / "inductor-lens"), "demo", "-o", "demo.html", "--json", "demo.json"],
        env=env,
        cwd=root,
        timeout=1800,
    )
    assert "demo.html" in r.stderr + r.stdout
    page = (root / "demo.html").read_text(encoding="utf-8")
    report = json.loads((root / "demo.json").read_text(encoding="utf-8"))
    assert _payload(page, "il-bundle") == (_site_packages(venv) / "inductor_lens" / "static" / "lens.js").read_bytes()
    assert any(k["name"].startswith("cpp_fused") for c in report["compiles"] for k in c["kernels"])


NOTEBOOK = textwrap.dedent("""\
    import nbformat
    from nbclient import NotebookClient
    cells = ["%load_ext inductor_lens",
             "%%inductor_lens -f f --export cell.html --json cell.json\\n"
             "import torch\\n"
             "def f(x):\\n"
             "    return torch.sin(x) ** 2 + torch.cos(x) ** 2\\n"
             "f(torch.randn(64))",
             "import inductor_lens\\n"
             "inductor_lens.load('cell.json').save_html('api.html')\\n"
             "print(inductor_lens.__file__)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    nbformat.write(nb, "ran.ipynb")
""")


def test_magic_and_export_in_a_real_kernel_without_node(user_venv):
    venv, env, root = user_venv
    (root / "run_nb.py").write_text(NOTEBOOK)
    _run([str(venv / "bin" / "python"), "run_nb.py"], env=env, cwd=root, timeout=1800)
    nb = json.loads((root / "ran.ipynb").read_text(encoding="utf-8"))
    outputs = [o for c in nb["cells"] for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert [o for o in nb["cells"][1]["outputs"] if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    texts = [o.get("text", "") for o in nb["cells"][2]["outputs"]]  # a saved stream's text may be a list of lines
    installed = "".join("".join(t) if isinstance(t, list) else t for t in texts).strip()
    assert pathlib.Path(installed).is_relative_to(_site_packages(venv)), installed
    report = json.loads((root / "cell.json").read_text(encoding="utf-8"))
    assert any(k["name"].startswith("cpp_fused") for c in report["compiles"] for k in c["kernels"])
    bundle = (_site_packages(venv) / "inductor_lens" / "static" / "lens.js").read_bytes()
    for page in ("cell.html", "api.html"):
        text = (root / page).read_text(encoding="utf-8")
        assert _payload(text, "il-bundle") == bundle, f"{page} does not inline the installed front end"
        assert b"cpp_fused" in _payload(text, "il-report"), page


def _payload(page: str, script_id: str) -> bytes:
    """The gzip'd base64 payload of one ``<script id=...>`` block of an exported page."""
    import base64
    import gzip
    import re

    m = re.search(rf'<script type="application/octet-stream" id="{script_id}">([^<]*)</script>', page)
    assert m, f"no {script_id} block in the page"
    return gzip.decompress(base64.b64decode(m.group(1)))
