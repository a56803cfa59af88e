#!/bin/sh
# One script for a GPU machine: the GPU test suite (seed kernels, planted
# wrong / out-of-bounds / stale / second-call / crash / hang kernels), the
# seed attention kernel timed on the AVO paper's MHA configs (cheapest first,
# 90 s in all), the vendor comparison (tests/gpu/vendor_table.lua, 200 s: per
# config of the tensor-core GEMM and attention evaluators, seed / best of a
# short search / cuBLAS or cuDNN in TFLOPS and the ratio), and a GA on the
# GEMM with what is left.  The summary table comes last, within
# AVO_GPU_CHECK_SECONDS (570) of the start on one H200: the GA ends early
# when the parts before it overran.
#
#   tests/gpu/device-check.sh [BUILD_DIR]
#
# The device image has no avo libraries and no package registry: prepare
# BUILD_DIR here with tools/gpu-bundle and carry it; a BUILD_DIR holding a
# prebuilt avo and lib/ is used as it is.  Without one, it builds from source
# (needs the -dev packages of tools/install-deps).
set -eu
started=$(date +%s)
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
# The device tool runs one command for at most 600 s: the summary must be out
# by then, so the GA (5 minutes) gives up what the earlier parts overran.
export AVO_GPU_DEADLINE=$((started + ${AVO_GPU_CHECK_SECONDS:-570}))
export AVO_GPU_PAPER=1 AVO_GPU_PAPER_SECONDS=${AVO_GPU_PAPER_SECONDS:-90}
export AVO_GPU_VENDOR=1 AVO_GPU_VENDOR_SECONDS=${AVO_GPU_VENDOR_SECONDS:-200}
export AVO_GPU_GA_SECONDS=${AVO_GPU_GA_SECONDS:-300} AVO_GPU_GA_GENERATIONS=${AVO_GPU_GA_GENERATIONS:-1000}
exec sh "$root/tests/gpu/run.sh"
