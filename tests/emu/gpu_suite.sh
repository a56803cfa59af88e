#!/bin/sh
# The GPU test suite (tests/gpu/run.sh: seed kernels, planted wrong /
# out-of-bounds / stale / second-call / crash / hang kernels, the vendor
# comparison against the mock cuBLASLt and cuDNN, a short GA)
# on the CPU emulator, with the small configs of tests/emu/evaluators.  The
# same script, patterns and summary as on a GPU machine; what it cannot show
# is GPU speed.  Skips (77) without the emulator or NVRTC.
set -eu
cd "$AVO_SOURCE_ROOT"
. tests/emu/lib.sh
export AVO_GPU_EVALUATORS=tests/emu/evaluators AVO_GPU_GA_SECONDS=${AVO_GPU_GA_SECONDS:-15}
export AVO_GPU_VENDOR=1 AVO_GPU_VENDOR_SECONDS=60 AVO_GPU_VENDOR_SEARCH=0 \
    AVO_GPU_VENDOR_EVALUATORS=tests/emu/evaluators/gemm_bf16_tc.lua,tests/emu/evaluators/attention_small_tc.lua
exec sh tests/gpu/run.sh
