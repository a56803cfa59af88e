#!/bin/sh
# Every knob combination of the seed softmax and attention kernels, and a
# seeded sample of the GEMM's 1296 per input type, is correct or invalid on
# the CPU emulator (tests/emu/knob_space.lua).  Skips (77) without the
# emulator or NVRTC.
. "$(dirname "$0")/../e2e/lib.sh"
if [ -z "${AVO_EMU_LIB_DIR:-}" ]; then
    echo "skip: the CPU emulator was not built (needs a C++ compiler and libboost-context-dev)"
    exit 77
fi
export LD_LIBRARY_PATH="$AVO_EMU_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$AVO" doctor | grep -q "^NVRTC  *[0-9]"; then
    echo "skip: NVRTC not available"; exit 77
fi
sweep() {
    expect_exit 0 "$AVO" run tests/emu/knob_space.lua --db "$tmp/$1.db" --jobs 2 \
        evaluator=tests/emu/evaluators/$1.lua ${2:-}
    grep "^knob space" "$tmp/out"
}
sweep softmax
sweep attention_small
sweep gemm_f32 sample=32
sweep gemm_bf16 sample=16
sweep gemm_f16 sample=16
