#!/bin/sh
# The CUDA backend's device side against a mock driver (tests/mock): the
# correct kernel is verified and timed; wrong values, an out-of-bounds write,
# stale output, a kernel that changes on its second launch, a sticky fault
# (crashed, and the next evaluation on a fresh worker works) and launch out
# of resources (invalid) each get their status.  A kernel that copies the
# reference's output (the judge zeroes the reference's device buffers before
# any candidate launch) is wrong; one that skips work when its inputs repeat
# never sees them repeat (every timed launch has fresh inputs).  Kernels
# that skip the work or go wrong only after the two verification launches
# are caught by the checks of the timed launches; one right only at the timed
# sizes fails its check config.  Needs NVRTC
# (skip 77).
. "$(dirname "$0")/lib.sh"
if ! "$AVO" doctor | grep -q "^NVRTC  *[0-9]"; then
    echo "skip: NVRTC not available"; exit 77
fi
[ -n "${AVO_MOCK_CUDA_DIR:-}" ] || fail "AVO_MOCK_CUDA_DIR is not set"
export LD_LIBRARY_PATH="$AVO_MOCK_CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ev=tests/e2e/evaluators/cuda_vadd_mock.lua
k=tests/e2e/kernels/cuda_vadd_mock.cu
"$AVO" doctor >"$tmp/doctor"
expect_in "$tmp/doctor" "avo mock GPU: sm_90"

expect_exit 0 "$AVO" eval $k --evaluator $ev
expect_in "$tmp/out" "n1m"
expect_in "$tmp/out" "score"
expect_exit 0 "$AVO" eval $k --evaluator $ev --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok" and r["score"] > 0, r
for c in r["configs"]:
    assert c["correct"] and c["samples"] >= 3 and c["median_s"] > 0, c
    assert abs(c["sm_clock_mhz"] - 1980) < 1, c
' "$tmp/out"

expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=1
expect_in "$tmp/out" "wrong — config n1000: max error 1.0e-02"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=2
expect_in "$tmp/out" "wrote out of bounds of buffer out"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=12
expect_in "$tmp/out" "wrong — config n1000: wrote out of bounds of buffer out"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=3
expect_in "$tmp/out" "output not fully written"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=4
expect_in "$tmp/out" "wrong"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=5
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_ILLEGAL_ADDRESS in config n1000"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=6
expect_in "$tmp/out" "invalid — config n1000: launch out of resources"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=7
expect_in "$tmp/out" "wrong — config n1000: max error"
expect_exit 0 "$AVO" eval $k --evaluator $ev --param MODE=8 --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok", r
for c in r["configs"]:
    assert c["correct"] and c["samples"] >= 1 and c["batch"] >= 1, c
' "$tmp/out"
if grep -q "cache hit" "$tmp/err"; then
    fail "a launch saw inputs it had seen before: $(grep -c "cache hit" "$tmp/err") cache hits"
fi

expect_exit 0 "$AVO" run tests/e2e/cuda_mock_run.lua --db "$tmp/run.db" --jobs 1
expect_in "$tmp/out" "first: crashed"
expect_in "$tmp/out" "second: ok"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=9
expect_in "$tmp/out" "wrong — config n1000: timed runs left output out unwritten (work skipped)"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=10
expect_in "$tmp/out" "wrong — config n1000: output of timed runs differs from reference: max error 1.0e+00"
expect_exit 1 "$AVO" eval $k --evaluator $ev --param MODE=11
expect_in "$tmp/out" "wrong — config n777: max error 1.0e+00"
echo "cuda_mock: ok"
