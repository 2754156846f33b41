#!/usr/bin/env bash
# Install everything the tests need (Debian packages included) and run every test and linter:
# ruff, mypy, stylelint/eslint/prettier, the frontend's unit tests (jest), the Galata UI tests on Debian's Chromium,
# then pytest (whose summary ends the output).
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: UI tests; squashfs-tools, squashfuse: images; slurm-wlm, munge: a real single-node SLURM.
apt_packages=(chromium squashfs-tools squashfuse slurm-wlm munge)
missing=()
for p in "${apt_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

bash scripts/setup-dev.sh test
export PATH="$PWD/.venv/bin:$PATH"

echo "== lint"
ruff check .
ruff format --check .
mypy  # the package, as configured in pyproject.toml
(cd labextension && jlpm lint:check)

echo "== frontend unit tests (jest)"
(cd labextension && jlpm test)

echo "== UI tests (Galata on /usr/bin/chromium)"
(cd ui-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 jlpm install && jlpm test)

echo "== Python tests"
python -m pytest -q -p no:cacheprovider "$@"
