#!/usr/bin/env bash
# Create .venv and install the package editable with its lab extension built (used by lab.sh and test.sh).
# Needs python3 (3.11+) and node (18+) on PATH; everything else comes from PyPI and the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
extras=${1:-}

[ -x .venv/bin/python ] || python3 -m venv .venv
export PATH="$PWD/.venv/bin:$PATH"
python -m pip install -q --upgrade pip
# Build tools in the venv itself, so the editable install below can skip build isolation (faster, offline-friendly).
python -m pip install -q "hatchling>=1.21" "hatch-jupyter-builder>=0.10,<0.11" editables "jupyterlab>=4.6,<5"
# The frontend is built explicitly below, so the build hook is skipped here. An old build output is removed first:
# one made by a plain `pip install -e .` holds an install.json that hatchling would add twice.
rm -rf jupyter_gpu_env/labextension
[ -L .venv/share/jupyter/labextensions/jupyter-gpu-env ] && rm .venv/share/jupyter/labextensions/jupyter-gpu-env  # `develop` links it again
SKIP_JUPYTER_BUILDER=1 python -m pip install -q --no-build-isolation -e ".${extras:+[$extras]}"
# Always rebuild the frontend from source: an editable install skips it when an old build exists.
(cd labextension && jlpm install && jlpm build)
jupyter labextension develop --overwrite . >/dev/null
jupyter server extension enable --sys-prefix jupyter_gpu_env >/dev/null
