#!/usr/bin/env bash
# Create .venv and install the package editable with its lab extension built (used by lab.sh and test.sh).
# Needs python3 (3.11+) and node (18+) on PATH; everything else comes from PyPI and the npm registry.
#
# Each step runs again only when what it reads has changed since it last succeeded: a stamp in
# .venv/gpu-env-stamps/ holds the hash of its inputs. So a second run with nothing changed takes about a
# second. Set GPU_ENV_REINSTALL=1 to run every step anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
extras=${1:-}

[ -x .venv/bin/python ] || python3 -m venv .venv
export PATH="$PWD/.venv/bin:$PATH"
stamps=.venv/gpu-env-stamps
mkdir -p "$stamps"

# The hash of the named files and of every file under the named folders, names included.
inputs_hash() {
  find "$@" -type f -not -name '*.tsbuildinfo' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}
# Whether stamp $1 holds hash $2 (and the step need not run).
fresh() { [ -z "${GPU_ENV_REINSTALL:-}" ] && [ "$(cat "$stamps/$1" 2>/dev/null)" = "$2" ]; }

# -- the Python package and its dependencies: pyproject.toml and this script
python_inputs=$(inputs_hash pyproject.toml scripts/setup-dev.sh)
python_fresh=false
# An install with the test extras serves a run without them too.
if fresh "python-${extras:-base}" "$python_inputs" || { [ -z "$extras" ] && fresh python-test "$python_inputs"; }; then
  python_fresh=true
fi
[ -L .venv/share/jupyter/labextensions/jupyter-gpu-env ] || python_fresh=false  # linked by the last step
if ! $python_fresh; then
  python -m pip install -q --upgrade pip
  # Build tools in the venv itself, so the editable install below can skip build isolation (faster, offline-friendly).
  python -m pip install -q "hatchling>=1.21" "hatch-jupyter-builder>=0.10,<0.11" editables "jupyterlab>=4.6,<5"
  # The frontend is built explicitly below, so the build hook is skipped here. An old build output is removed first:
  # one made by a plain `pip install -e .` holds an install.json that hatchling would add twice.
  rm -rf jupyter_gpu_env/labextension "$stamps/frontend-build"
  [ -L .venv/share/jupyter/labextensions/jupyter-gpu-env ] && rm .venv/share/jupyter/labextensions/jupyter-gpu-env  # `develop` links it again
  SKIP_JUPYTER_BUILDER=1 python -m pip install -q --no-build-isolation -e ".${extras:+[$extras]}"
fi

# -- the frontend's dependencies: package.json and the lock
deps_inputs=$(inputs_hash labextension/package.json labextension/yarn.lock labextension/.yarnrc.yml)
if ! fresh frontend-deps "$deps_inputs" || [ ! -d labextension/node_modules ]; then
  (cd labextension && jlpm install)
  echo "$deps_inputs" >"$stamps/frontend-deps"
fi

# -- the frontend's build: its sources, styles, settings schema and build configuration
build_inputs="$deps_inputs $(inputs_hash labextension/src labextension/style labextension/schema labextension/tsconfig.json)"
if ! fresh frontend-build "$build_inputs" || [ ! -f jupyter_gpu_env/labextension/package.json ]; then
  (cd labextension && jlpm build)
  echo "$build_inputs" >"$stamps/frontend-build"
fi

if ! $python_fresh; then
  jupyter labextension develop --overwrite . >/dev/null
  jupyter server extension enable --sys-prefix jupyter_gpu_env >/dev/null
  echo "$python_inputs" >"$stamps/python-${extras:-base}"
fi
