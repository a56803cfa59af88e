#!/bin/sh
# Run one Lua assert script through the engine: `avo run SCRIPT`.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$AVO_SOURCE_ROOT"
exec "$AVO" run "$1" --db "$tmp/test.db" --jobs 2
