#!/usr/bin/env bash
# Runs the capture and model test layers against other torch releases, each in its own venv, OUTSIDE CI
# (a torch newer than the CPU wheel on disk is a multi-GB CUDA build). Record the results in README's table.
#
#   scripts/test_torch_versions.sh torch==2.14.1 [torch==2.15.0 ...]
#   PYTHON=/root/.pyenv/versions/3.12.1/bin/python scripts/test_torch_versions.sh torch==2.13.0
#   make test-torch TORCH=torch==2.15.0
#
# Venvs live in $LENS_TORCH_VENVS (default build/torch-venvs/<spec>-py<X.Y>) and are reused. A pip
# constraints file that caps torch (/etc/xdg/pip on these machines) is bypassed for a release above
# the cap only: PIP_CONFIG_FILE=/dev/null for that one install.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENVS=${LENS_TORCH_VENVS:-build/torch-venvs}
LAYERS=${LENS_TORCH_TESTS:-"tests/capturing/test_capture.py tests/report/test_model.py tests/report/test_report_io.py tests/analysis/test_gpu_fixtures.py tests/views/test_html_export.py"}
PYV=$("$PYTHON" -c 'import sys; print(f"{sys.version_info.major}.{sys.version_info.minor}")')
[ $# -gt 0 ] || { echo "usage: $0 torch==X.Y.Z [...]" >&2; exit 2; }
status=0
for spec in "$@"; do
  venv="$VENVS/${spec//[=<> ]/}-py$PYV"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import torch, pytest, anywidget, orjson' 2>/dev/null; then
    [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
    if ! "$venv/bin/pip" install -q "$spec"; then
      echo "== $spec: the pip constraints cap it; installing it with PIP_CONFIG_FILE=/dev/null" >&2
      PIP_CONFIG_FILE=/dev/null "$venv/bin/pip" install -q "$spec"
    fi
    # the package's own dependencies and the test tools of these layers, never another torch
    echo "$spec" > "$venv/torch-constraint.txt"
    "$venv/bin/pip" install -q -c "$venv/torch-constraint.txt" packaging anywidget ipywidgets traitlets orjson pytest numpy
  fi
  got=$("$venv/bin/python" -c 'import sys, torch; print(f"torch {torch.__version__}, Python {sys.version.split()[0]}")')
  echo "== $spec -> $got: $LAYERS"
  # shellcheck disable=SC2086
  if PYTHONPATH="$PWD" "$venv/bin/python" -m pytest -q -p no:cacheprovider -m "not browser" $LAYERS; then
    echo "== RESULT $got: passed"
  else
    echo "== RESULT $got: FAILED"; status=1
  fi
done
exit $status
