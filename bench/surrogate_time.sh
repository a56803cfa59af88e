#!/bin/sh
# The surrogate strategy's decision time as its run grows: COUNT
# evaluations (default 1000) on each landscape (the NK landscape and the
# GEMM space, scored in-process, so the gap between two candidates is the
# time the strategy took to choose), printed as milliseconds per candidate
# for each BLOCK of candidates (default 100).
#
#   bench/surrogate_time.sh build/avo [COUNT] [BLOCK]
set -eu
avo=$(realpath "$1")
count=${2:-1000}
block=${3:-100}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for landscape in landscape gemm_space; do
    cat >"$tmp/run.lua" <<LUA
local avo = require "avo"
return avo.strategy("surrogate").run{ evaluator = "bench/$landscape.lua" }
LUA
    "$avo" run "$tmp/run.lua" --db "$tmp/$landscape.db" --jobs 1 --max-evals "$count" \
        --retime 0 >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    python3 - "$tmp/$landscape.db" "$landscape" "$block" <<'PY'
import sqlite3, sys
db, name, block = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = [r[0] for r in sqlite3.connect(db).execute("SELECT created_at FROM candidates ORDER BY id")]
parts = []
for lo in range(0, len(t) - 1, block):
    hi = min(lo + block, len(t) - 1)
    parts.append(f"{lo + 1}-{hi + 1}: {(t[hi] - t[lo]) / (hi - lo) * 1e3:.1f}")
print(f"surrogate on {name}, ms per candidate by block: " + ", ".join(parts))
PY
done
