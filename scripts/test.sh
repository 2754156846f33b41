#!/usr/bin/env bash
# Install everything the tests need (Debian packages included) and run every test and linter:
# ruff, mypy, stylelint/eslint/prettier, the frontend's unit tests (jest), the Galata UI tests on Debian's Chromium,
# and pytest beside them; a summary of both ends the output.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: UI tests; squashfs-tools, squashfuse: images; slurm-wlm, munge: a real single-node SLURM;
# prometheus: a real Prometheus scrapes a test server's /metrics (and promtool checks what it serves).
apt_packages=(chromium squashfs-tools squashfuse slurm-wlm munge prometheus)
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

# The UI tests and the Python tests share nothing (Galata starts its own server on port 27888, outside
# the kernel's ephemeral range the Python tests' servers draw from) and both mostly wait on processes
# they started, so they run side by side: on CI's 2 cores that is ~13 minutes less than one after the other.
echo "== UI tests (Galata on /usr/bin/chromium), in the background: their output follows the Python tests'"
(cd ui-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 jlpm install)
ui_log=$(mktemp)
py_log=$(mktemp)
(cd ui-tests && exec setsid jlpm test) >"$ui_log" 2>&1 &
ui=$!
trap 'kill -- -"$ui" 2>/dev/null || true' EXIT  # its own process group: Chromium and the server with it

echo "== Python tests"
py_rc=0
python -m pytest -q -p no:cacheprovider "$@" | tee "$py_log" || py_rc=$?  # pipefail: pytest's status

ui_rc=0
wait "$ui" || ui_rc=$?
trap - EXIT
echo "== UI tests (Galata): output"
cat "$ui_log"
echo "== summary"
echo "UI tests: $( [ $ui_rc = 0 ] && echo passed || echo "FAILED (exit $ui_rc; see above)")"
echo "Python tests: $(tail -n 1 "$py_log")"
[ "$ui_rc" = 0 ] && [ "$py_rc" = 0 ]
