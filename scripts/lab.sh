#!/usr/bin/env bash
# Install everything and start JupyterLab on 127.0.0.1 with jupyter-gpu-env on its embedded defaults.
# Where the machine has no managed conda environment (/envs, /opt/conda/envs), a small demo one is built
# offline first (python + ipykernel from this machine's CPython and PyPI wheels) so that clone, kernel,
# pack and send-to-batch can all be tried. Extra arguments go to `jupyter lab` (e.g. --port 9999).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-dev.sh
export PATH="$PWD/.venv/bin:$PATH"

demo_args=()
if [ ! -d /envs ] && [ ! -d /opt/conda/envs ] && [ -z "${GPU_ENV_NO_DEMO:-}" ]; then
  demo=${XDG_CACHE_HOME:-$HOME/.cache}/jupyter-gpu-env/demo
  echo "No managed environments here: building the demo one in $demo (once; about 10 s)"
  python -m jupyter_gpu_env.demo build --channel "$demo/channel" --env "$demo/envs/demo-python" --quiet
  demo_args=(--GpuEnvApp.managed_env_dirs="$demo/envs" --GpuEnvApp.conda_channels="$demo/channel")
fi

token=${JUPYTER_TOKEN:-$(python -c 'import secrets; print(secrets.token_hex(16))')}
echo "JupyterLab will be at http://127.0.0.1:${PORT:-8888}/lab?token=$token"
allow_root=()
[ "$(id -u)" = 0 ] && allow_root=(--allow-root)
exec jupyter lab --ip 127.0.0.1 --port "${PORT:-8888}" --no-browser "${allow_root[@]}" \
  --IdentityProvider.token="$token" "${demo_args[@]}" "$@"
