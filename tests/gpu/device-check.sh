#!/bin/sh
# One script for a GPU machine: the GPU test suite (seed kernels, planted
# wrong / out-of-bounds / stale / second-call / crash / hang kernels), the
# seed attention kernel timed on the AVO paper's MHA configs (cheapest first,
# 150 s in all), and a short GA on the GEMM (90 s).  The summary table comes
# last.  Sized for about 5 minutes on
# one H200, so a 10-minute device call leaves room for a rerun.
#
#   tests/gpu/device-check.sh [BUILD_DIR]
#
# The device image has no avo libraries and no package registry: prepare
# BUILD_DIR here with tools/gpu-bundle and carry it; a BUILD_DIR holding a
# prebuilt avo and lib/ is used as it is.  Without one, it builds from source
# (needs the -dev packages of tools/install-deps).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
cd "$root"
if [ -x "$build/avo" ] && [ -d "$build/lib" ]; then
    export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
    [ -f "$build/build.ninja" ] || meson setup "$build" "$root" >/dev/null
    meson compile -C "$build" >/dev/null
    meson test -C "$build" --suite unit --suite e2e --no-rebuild --print-errorlogs -q \
        cuda cuda_compile cuda_mock || echo "warning: CPU-side CUDA tests failed (see above)"
fi
export AVO="$build/avo" AVO_SOURCE_ROOT="$root"
export AVO_GPU_PAPER=1 AVO_GPU_PAPER_SECONDS=${AVO_GPU_PAPER_SECONDS:-150}
export AVO_GPU_GA_SECONDS=${AVO_GPU_GA_SECONDS:-90}
exec sh "$root/tests/gpu/run.sh"
