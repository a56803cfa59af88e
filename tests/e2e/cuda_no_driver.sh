#!/bin/sh
# Without an NVIDIA driver (this machine, CI), a CUDA evaluation fails at
# once as an infrastructure fault naming the missing driver: `avo eval`
# exits 3, `avo run` stops with exit 3 after its retries, nothing is
# charged to the kernel, and nothing loops (a CPU worker once received the
# compile-only copy of the job over and over).  Without NVRTC as well the
# compile fails first, and the fault names the missing NVRTC instead
# (tests/e2e/cuda_wheels.sh runs this test both ways).  A machine with a
# driver skips (77).
. "$(dirname "$0")/lib.sh"
"$AVO" doctor >"$tmp/doctor" 2>&1
if ! grep -q "^driver *MISSING" "$tmp/doctor"; then
    echo "skip: this machine has an NVIDIA driver"; exit 77
fi
missing="no NVIDIA driver"
grep -q "^NVRTC *MISSING" "$tmp/doctor" && missing="cannot load libnvrtc"
ev=tests/e2e/evaluators/cuda_vadd.lua
expect_exit 3 timeout 60 "$AVO" eval tests/e2e/kernels/cuda_vadd.cu --evaluator $ev
expect_in "$tmp/out" "error — infrastructure fault, not the candidate's ($missing"
expect_exit 3 timeout 120 "$AVO" run examples/gpu_quick.lua --db "$tmp/r.db" --jobs 1 \
    evaluator=$ev generations=1
[ "$(q "$tmp/r.db" "SELECT count(*) FROM candidates WHERE status NOT IN ('error', 'pending')")" = 0 ] ||
    fail "a candidate was charged with the missing driver: $(q "$tmp/r.db" "SELECT status, reason FROM candidates")"
[ "$(q "$tmp/r.db" "SELECT status FROM runs")" = failed ] || fail "run status: $(q "$tmp/r.db" "SELECT status FROM runs")"
expect_in "$tmp/err" "$missing"
echo "cuda_no_driver: ok ($missing)"
