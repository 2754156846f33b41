#!/usr/bin/env bash
# Install everything and start JupyterLab on 127.0.0.1 with jupyter-gpu-env on its embedded defaults.
# Extra arguments go to `jupyter lab` (e.g. --port 9999).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-dev.sh
export PATH="$PWD/.venv/bin:$PATH"
token=${JUPYTER_TOKEN:-$(python -c 'import secrets; print(secrets.token_hex(16))')}
echo "JupyterLab will be at http://127.0.0.1:${PORT:-8888}/lab?token=$token"
allow_root=()
[ "$(id -u)" = 0 ] && allow_root=(--allow-root)
exec jupyter lab --ip 127.0.0.1 --port "${PORT:-8888}" --no-browser "${allow_root[@]}" \
  --IdentityProvider.token="$token" "$@"
