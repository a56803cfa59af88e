#!/bin/sh
# Tensor cores and cp.async on the CPU emulator (tests/emu/include/mma.h,
# cuda_pipeline_primitives.h), judged by avo against references written
# without them: a WMMA GEMM through every shape x matrix_a layout x matrix_b
# layout x accumulator memory layout, for __nv_bfloat16, __half with float
# and with __half accumulators, and tf32 in both layouts, is correct; the
# planted mistakes are caught the way a GPU would show them (pointers that
# differ across the lanes, a partial warp and position-dependent changes to
# a fragment trap, naming WMMA; a misaligned pointer or ldm is
# CUDA_ERROR_MISALIGNED_ADDRESS; code that assumes a fragment layout is
# wrong); a four-warp GEMM of WMMA fed by a 2- to 4-stage cp.async pipeline
# is correct and wrong when it waits for one stage too few; a 1- to 4-stage
# cp.async pipeline is correct, a copy of 12 bytes
# traps, a misaligned copy is CUDA_ERROR_MISALIGNED_ADDRESS and reading a
# stage before waiting for it is wrong.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
K=tests/emu/kernels
E=tests/emu/evaluators

all_correct() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok", r
for c in r["configs"]:
    assert c["correct"], c
' "$tmp/out"
}

for ev in wmma_gemm_bf16 wmma_gemm_f16; do
    expect_exit 0 "$AVO" eval $K/wmma_gemm.cu --evaluator $E/$ev.lua --json
    all_correct
done
expect_exit 0 "$AVO" eval $K/wmma_gemm.cu --evaluator $E/wmma_gemm_f16.lua --param ACC_HALF=1 --json
all_correct
for layouts in "LA=0 LB=1" "LA=1 LB=0"; do
    set -- $layouts
    expect_exit 0 "$AVO" eval $K/wmma_tf32.cu --evaluator $E/wmma_tf32.lua --param "$1" \
        --param "$2" --json
    all_correct
done

# Seed-shaped: four warps, WMMA fed by a cp.async pipeline; waiting for one
# stage too few is wrong.
for run in "bf16 2" "bf16 4" "f16 3"; do
    set -- $run
    expect_exit 0 "$AVO" eval $K/wmma_pipeline.cu --evaluator $E/wmma_pipeline_$1.lua \
        --param STAGES=$2 --json
    all_correct
done
expect_exit 1 "$AVO" eval $K/wmma_pipeline.cu --evaluator $E/wmma_pipeline_bf16.lua \
    --param STAGES=3 --param PLANT=1
expect_in "$tmp/out" "on wmma_pipeline_bf16: wrong — config 128x128x96"

planted() {
    expect_exit "$2" "$AVO" eval $K/wmma_planted.cu --evaluator $E/wmma_planted.lua --param PLANT=$1
}
planted 0 0
expect_in "$tmp/out" "on wmma_planted: ok"
planted 1 1
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_LAUNCH_FAILED"
expect_in "$tmp/err" "avo emulator: kernel gemm: WMMA load_matrix_sync: lanes 0 and 1 of warp 0 differ in pointer"
planted 2 1
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_MISALIGNED_ADDRESS"
expect_in "$tmp/err" "is not 256-bit aligned"
planted 3 1
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_MISALIGNED_ADDRESS"
expect_in "$tmp/err" "WMMA load_matrix_sync: ldm 20 is not a multiple of 8 elements"
planted 4 1
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_LAUNCH_FAILED"
expect_in "$tmp/err" "WMMA load_matrix_sync in a partial warp (lanes 0x0000ffff of warp 0)"
planted 5 1
expect_in "$tmp/out" "on wmma_planted: wrong — config 32x48x64: max error"
planted 6 1
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_LAUNCH_FAILED"
expect_in "$tmp/err" "WMMA mma_sync: the copies of an element of a matrix_a fragment differ"

pipeline() {
    expect_exit "$1" "$AVO" eval $K/vadd_pipeline.cu --evaluator $E/vadd_pipeline.lua \
        --param STAGES=$2 --param PLANT=$3
}
for stages in 1 2 4; do
    pipeline 0 $stages 0
    expect_in "$tmp/out" "on cuda_vadd_pipeline: ok"
done
pipeline 1 3 1
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_LAUNCH_FAILED"
expect_in "$tmp/err" "cp.async: __pipeline_memcpy_async of 12 bytes (zfill 0): the size must be 4, 8 or 16"
pipeline 1 3 2
expect_in "$tmp/out" "on cuda_vadd_pipeline: wrong — config n1000"
pipeline 1 3 3
expect_in "$tmp/out" "crashed — crashed with CUDA_ERROR_MISALIGNED_ADDRESS"
expect_in "$tmp/err" "both must be aligned to the size"
echo "wmma: ok"
