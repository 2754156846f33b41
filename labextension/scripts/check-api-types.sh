#!/usr/bin/env bash
# Fail when src/api/schema.d.ts is not what openapi-typescript makes of
# ../docs/openapi.json now (regenerate with `jlpm build:api-types`).
set -euo pipefail
cd "$(dirname "$0")/.."
committed=src/api/schema.d.ts
fresh=$(mktemp --suffix=.d.ts)
trap 'rm -f "$fresh" "$fresh.log"' EXIT
if ! openapi-typescript ../docs/openapi.json --output "$fresh" >"$fresh.log" 2>&1; then
  cat "$fresh.log" >&2
  echo "openapi-typescript could not read ../docs/openapi.json." >&2
  exit 1
fi
if ! cmp -s "$fresh" "$committed"; then
  echo "$committed is stale: it differs from what docs/openapi.json generates." >&2
  diff -u "$committed" "$fresh" | head -40 >&2 || true
  echo "Run 'jlpm build:api-types' in labextension/ and commit the result." >&2
  exit 1
fi
echo "$committed matches docs/openapi.json."
