#!/usr/bin/env bash
# Install everything and start JupyterLab on 127.0.0.1 with jupyter-gpu-env on its embedded defaults.
# Where the machine has no managed conda environment (/envs, /opt/conda/envs), a small demo one is built
# offline first (python + ipykernel from this machine's CPython and PyPI wheels) so that clone, kernel,
# pack and send-to-batch can all be tried. Extra arguments go to `jupyter lab` (e.g. --port 9999).
# A second run with nothing changed starts in seconds: setup-dev.sh and the demo builder skip what is done.
set -euo pipefail
cd "$(dirname "$0")/.."

# mksquashfs packs images and squashfuse mounts them for image kernels. Installed where this user may
# (root, or sudo without a password, or with one typed at a terminal); otherwise a note says what packing
# lacks, and the panel says it again when a pack is asked for.
missing=()
command -v mksquashfs >/dev/null || missing+=(squashfs-tools)
command -v squashfuse >/dev/null || missing+=(squashfuse)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=() can_install=false
  if command -v apt-get >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      can_install=true
    elif command -v sudo >/dev/null && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
      sudo=(sudo) can_install=true
    fi
  fi
  if $can_install && "${sudo[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; then
    echo "Installed ${missing[*]} (for packing environments into images)"
  else
    echo "note: could not install ${missing[*]}; packing environments into images needs them" >&2
  fi
fi

bash scripts/setup-dev.sh
export PATH="$PWD/.venv/bin:$PATH"

# The demo's settings go to the .venv's Jupyter configuration, where the server and `jupyter gpu-env`
# both read them (see jupyter_gpu_env/demo/settings.py); a machine with its own environments gets none.
if [ ! -d /envs ] && [ ! -d /opt/conda/envs ] && [ -z "${GPU_ENV_NO_DEMO:-}" ]; then
  demo=${XDG_CACHE_HOME:-$HOME/.cache}/jupyter-gpu-env/demo
  [ -d "$demo/envs/demo-python/conda-meta" ] ||
    echo "No managed environments here: building the demo one in $demo (once; about 10 s)"
  python -m jupyter_gpu_env.demo build --channel "$demo/channel" --env "$demo/envs/demo-python" --configure --quiet
else
  python -m jupyter_gpu_env.demo unconfigure
fi

# The lab's terminals run a login shell, whose /etc/profile sets PATH anew: without this, `jupyter gpu-env`
# is not found in them (see jupyter_gpu_env/demo/settings.py, terminal_settings).
python -m jupyter_gpu_env.demo terminal "$PWD/.venv/bin" >/dev/null

token=${JUPYTER_TOKEN:-$(python -c 'import secrets; print(secrets.token_hex(16))')}
echo "JupyterLab will be at http://127.0.0.1:${PORT:-8888}/lab?token=$token"
allow_root=()
[ "$(id -u)" = 0 ] && allow_root=(--allow-root)
exec jupyter lab --ip 127.0.0.1 --port "${PORT:-8888}" --no-browser "${allow_root[@]}" \
  --IdentityProvider.token="$token" "$@"
