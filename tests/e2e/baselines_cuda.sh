#!/bin/sh
# Baselines of a CUDA evaluator against the mock driver (tests/mock): with
# --devices 0,1 every baseline is measured once per device (a kernel
# baseline like a candidate, on each GPU); a vendor baseline the worker
# cannot serve here (cublas on an evaluator whose arguments are no GEMM's)
# is recorded per device with its status and reason, the run goes on, and
# every display names it as such: never a score of 0 or a 0x ratio.
# Needs NVRTC (skip 77).
. "$(dirname "$0")/lib.sh"
if ! "$AVO" doctor | grep -q "^NVRTC  *[0-9]"; then
    echo "skip: NVRTC not available"; exit 77
fi
[ -n "${AVO_MOCK_CUDA_DIR:-}" ] || fail "AVO_MOCK_CUDA_DIR is not set"
export LD_LIBRARY_PATH="$AVO_MOCK_CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AVO_MOCK_DEVICES=3
export AVO_MOCK_DEVICE_DIR="$tmp/locks"
mkdir -p "$AVO_MOCK_DEVICE_DIR"
ev=tests/e2e/evaluators/cuda_vadd_baselines.lua
db=$tmp/c.db

no_zero() { # FILE: no baseline shown as zero
    if grep -Eq "x cublas|cublas 0|cublas: ok|cublas +ok" "$1"; then
        cat "$1"; fail "cublas shown as measured in $1"
    fi
}

BASELINES_EVALUATOR=$ev expect_exit 0 "$AVO" run tests/e2e/baselines_run.lua --db "$db" --jobs 1 \
    --devices 0,1
expect_in "$tmp/out" "baselines seen by the script: 4"
[ "$(q "$db" "SELECT group_concat(name || '@' || device) FROM (SELECT * FROM baselines
    ORDER BY name, device)")" = "cublas@cuda:0,cublas@cuda:1,mock_vadd@cuda:0,mock_vadd@cuda:1" ] ||
    fail "expected each baseline once per device: $(q "$db" "SELECT name, device FROM baselines")"
[ "$(q "$db" "SELECT count(*) FROM baselines WHERE name = 'cublas' AND status <> 'ok'
    AND reason <> '' AND score IS NULL AND library = 'cuBLASLt'")" = 2 ] ||
    fail "cublas rows: $(q "$db" "SELECT * FROM baselines WHERE name = 'cublas'")"
[ "$(q "$db" "SELECT count(*) FROM baselines WHERE name = 'mock_vadd' AND status = 'ok'
    AND device_name LIKE 'avo mock GPU%' AND score > 0")" = 2 ] || fail "mock_vadd rows"
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 3 ] || fail "a baseline became a candidate"
status=$(q "$db" "SELECT status FROM baselines WHERE name = 'cublas' LIMIT 1")
expect_in "$tmp/err" "avo: baseline cublas on cuda:0: $status ("
expect_in "$tmp/out" "baseline cublas (cuda:1): $status ("
# The ratio is to the strongest measured baseline (the faster mock_vadd row).
best=$(q "$db" "SELECT max(score) FROM candidates WHERE status = 'ok'")
strongest=$(q "$db" "SELECT max(score) FROM baselines WHERE status = 'ok'")
ratio=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$best" "$strongest")
expect_in "$tmp/err" "${ratio}x mock_vadd"
no_zero "$tmp/err"; no_zero "$tmp/out"

expect_exit 0 "$AVO" runs --db "$db"
# (avo runs: the re-timed #1's paired ratio, from the retimed event.)
paired=$(q "$db" "SELECT data FROM events WHERE kind = 'retimed'" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%.2f" % [p for p in d["ranked"][0]["paired"] if p["against"] == "mock_vadd"][0]["median"])')
expect_in "$tmp/out" "${paired}x mock_vadd paired"
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/r.html"
expect_in "$tmp/r.html" "mock_vadd (cuda:1)</text>"
expect_in "$tmp/r.html" "<td>$status ("
if grep -q "cublas (cuda:0)</text>" "$tmp/r.html"; then fail "cublas got a reference line"; fi
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/b.csv" --what baselines
python3 - "$tmp/b.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
cublas = [r for r in rows if r["baseline"] == "cublas"]
assert len(cublas) == 2 and all(r["score"] == "" and r["reason"] for r in cublas), cublas
PY

# Only cublas: no ratio at all, the status line and runs say what happened.
cat > "$tmp/only_cublas.lua" <<LUA
local ev = dofile("$AVO_SOURCE_ROOT/$ev")
ev.baselines = { "cublas" }
return ev
LUA
BASELINES_EVALUATOR=$tmp/only_cublas.lua expect_exit 0 "$AVO" run tests/e2e/baselines_run.lua \
    --db "$tmp/o.db" --jobs 1
expect_in "$tmp/err" "cublas $status |"
no_zero "$tmp/err"; no_zero "$tmp/out"
expect_exit 0 "$AVO" runs --db "$tmp/o.db"
expect_in "$tmp/out" "cublas $status"
no_zero "$tmp/out"

# avo eval: a row per baseline, the candidate's ratio only to mock_vadd.
expect_exit 0 "$AVO" eval tests/e2e/kernels/cuda_vadd_mock.cu --evaluator $ev
expect_in "$tmp/out" "mock_vadd    ok       score"
expect_in "$tmp/out" "cublas       $status"
no_zero "$tmp/out"
echo "baselines_cuda: ok"
