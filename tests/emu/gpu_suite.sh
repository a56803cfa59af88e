#!/bin/sh
# The GPU test suite (tests/gpu/run.sh: seed kernels, planted wrong /
# out-of-bounds / stale / second-call / crash / hang kernels, a short GA)
# on the CPU emulator, with the small configs of tests/emu/evaluators.  The
# same script, patterns and summary as on a GPU machine; what it cannot show
# is GPU speed.  Skips (77) without the emulator or NVRTC.
set -eu
cd "$AVO_SOURCE_ROOT"
. tests/emu/lib.sh
export AVO_GPU_EVALUATORS=tests/emu/evaluators AVO_GPU_GA_SECONDS=${AVO_GPU_GA_SECONDS:-15}
exec sh tests/gpu/run.sh
