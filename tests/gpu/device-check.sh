#!/bin/sh
# One script for a GPU machine: build, run the GPU test suite (seed kernels,
# planted wrong / out-of-bounds / stale / second-call / crash / hang kernels),
# time the seed attention kernel on the AVO paper's MHA configs and run a
# 5-minute GA on the GEMM.  The summary table comes last.  Sized for about
# 10 minutes on one H200.
#
#   tests/gpu/device-check.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
cd "$root"
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" >/dev/null
fi
meson compile -C "$build" >/dev/null
meson test -C "$build" --suite unit --suite e2e --no-rebuild --print-errorlogs -q \
    cuda cuda_compile cuda_mock || echo "warning: CPU-side CUDA tests failed (see above)"
export AVO="$build/avo" AVO_SOURCE_ROOT="$root"
export AVO_GPU_PAPER=1 AVO_GPU_PAPER_SECONDS=${AVO_GPU_PAPER_SECONDS:-180}
export AVO_GPU_GA_SECONDS=${AVO_GPU_GA_SECONDS:-300}
exec sh "$root/tests/gpu/run.sh"
