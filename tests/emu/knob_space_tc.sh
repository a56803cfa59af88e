#!/bin/sh
# The tensor-core seeds' knob spaces on the CPU emulator (WMMA and cp.async
# emulated; tests/emu/knob_space.lua): every combination of the attention
# seed (kernels/cuda/attention_wmma.cu) and a seeded sample of the GEMM's 972
# per input type (kernels/cuda/gemm_wmma.cu) is correct or invalid, never
# wrong, crashed or failing to compile.  Apart from knob_space.sh because the
# attention sweep alone takes minutes.  Skips (77) without the emulator or
# NVRTC.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
# Invalid: 27 of the 81 give a warp fewer than 16 rows (BLOCK_M / WARPS), 12
# need more shared memory than the device has (BLOCK_N = 128 with 2 or 3
# stages, or BLOCK_M = 128 with 3).
sweep attention_small_tc
expect_in "$tmp/out" "knob space of attention_small_tc: 81 of 81 combinations: invalid 39, ok 42"
# Invalid: a warp tile larger than the CTA tile, or more than 1024 threads.
sweep gemm_bf16_tc sample=16
expect_in "$tmp/out" "knob space of gemm_bf16_tc: 16 of 972 combinations: invalid 7, ok 9"
sweep gemm_f16_tc sample=16
expect_in "$tmp/out" "knob space of gemm_f16_tc: 16 of 972 combinations: invalid 7, ok 9"
echo "knob_space_tc: ok"
