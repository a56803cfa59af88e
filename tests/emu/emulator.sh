#!/bin/sh
# The CPU emulator itself (tests/emu): a kernel through its harder paths
# (file-scope extern __shared__, shuffles in every direction, ballot,
# atomics on a __device__ global) is correct; what kernels print never
# reaches the engine's channel; a shared-memory overrun, __trap and a barrier
# no thread set can complete each crash the candidate with a GPU's sticky
# error, and the next evaluation gets a fresh worker; a block needing more
# registers than a multiprocessor has is invalid; inline PTX fails the
# emulated compile with the assembler's message after NVRTC's log.  A
# kernel that caches results in __device__ memory keyed on its inputs and
# skips the work when they repeat never sees them repeat (every launch gets
# inputs no launch saw before; the planted kernel traps on a repeat): ok.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
V=tests/e2e/evaluators/cuda_vadd.lua
VS=tests/emu/evaluators/vadd_shared.lua
K=tests/emu/kernels

"$AVO" doctor >"$tmp/doctor"
expect_in "$tmp/doctor" "[0] avo CPU emulator: sm_90"

for block in 256 64; do
    expect_exit 0 "$AVO" eval $K/vadd_features.cu --evaluator $VS --param BLOCK=$block
    expect_in "$tmp/out" "ok"
done

expect_exit 0 "$AVO" eval $K/vadd_printf.cu --evaluator $V --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok", r
' "$tmp/out"
expect_in "$tmp/err" "thread 17 of vadd says hello"

expect_exit 1 "$AVO" eval $K/vadd_shared_overflow.cu --evaluator $VS
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_ILLEGAL_ADDRESS in config n1000"
expect_in "$tmp/err" "avo emulator: kernel vadd: segmentation fault"

expect_exit 1 "$AVO" eval $K/vadd_trap.cu --evaluator $V
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_LAUNCH_FAILED in config n1000"
expect_in "$tmp/err" "__trap()"

expect_exit 1 "$AVO" eval $K/vadd_divergent.cu --evaluator $V
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_LAUNCH_FAILED"
expect_in "$tmp/err" "cannot go on: 8 threads wait at __syncthreads, 248 at a warp operation"

# 168 registers per thread: 128 threads launch, 1024 do not (invalid, not crashed).
expect_exit 0 "$AVO" eval $K/vadd_registers.cu --evaluator $V --param BLOCK=128
expect_exit 1 "$AVO" eval $K/vadd_registers.cu --evaluator $V --param BLOCK=1024
expect_in "$tmp/out" "invalid — config n1000: launch out of resources ("
expect_in "$tmp/out" "registers per thread; CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)"

expect_exit 1 "$AVO" eval $K/vadd_ptx.cu --evaluator $V
expect_in "$tmp/out" "compile_error"
expect_in "$tmp/out" "ptxas info    : Compiling entry function 'vadd'"
expect_in "$tmp/out" "avo emulator: the host compile (c++) failed"
expect_in "$tmp/out" "no such instruction"
expect_exit 0 "$AVO" eval $K/vadd_cache.cu --evaluator $V --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok", r
for c in r["configs"]:
    assert c["correct"] and c["samples"] >= 1, c
' "$tmp/out"
echo "emulator: ok"
