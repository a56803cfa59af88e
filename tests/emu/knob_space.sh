#!/bin/sh
# Every knob combination of the seed softmax and attention kernels, and a
# seeded sample of the GEMM's 1296 per input type, is correct or invalid on
# the CPU emulator (tests/emu/knob_space.lua).  Skips (77) without the
# emulator or NVRTC.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
sweep softmax
expect_in "$tmp/out" "knob space of softmax: 24 of 24 combinations: ok 24"
# 9 of the 48 ask for more than 1024 threads per block (BLOCK_M * TPR).
sweep attention_small
expect_in "$tmp/out" "knob space of attention_small: 48 of 48 combinations: invalid 9, ok 39"
sweep gemm_f32 sample=32
sweep gemm_bf16 sample=16
sweep gemm_f16 sample=16
