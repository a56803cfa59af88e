#!/bin/sh
# avo's strategies against Kernel Tuner's, in its simulation mode, on the
# same landscapes (the NK landscape, bench/landscape.lua, and a GEMM space
# with restrictions, bench/gemm_space.lua) at equal budgets of unique
# evaluations (50 and 150), 10 seeds: median, quartiles and range of best
# found / optimum per strategy, and a one-sided Mann-Whitney U test of avo's
# best strategy against Kernel Tuner's (bench/vs_kernel_tuner.py).  Takes
# about half an hour on one core; not part of the test suites.
#
#   meson compile -C build bench-vs-kernel-tuner
#   bench/vs_kernel_tuner.sh build/avo [--seeds N] [--budgets 50,150] [--landscapes nk,gemm] ...
#
# Needs a Python with kernel_tuner (and scipy for the exact U test):
# `tools/install-deps --bench` makes /opt/avo/kernel-tuner; AVO_KT_PYTHON
# names another interpreter.
set -eu
avo=$(realpath "$1")
shift
cd "$(dirname "$0")/.."
python=${AVO_KT_PYTHON:-/opt/avo/kernel-tuner/bin/python}
if ! "$python" -c 'import kernel_tuner' 2>/dev/null; then
    echo "vs_kernel_tuner: no kernel_tuner in $python: run tools/install-deps --bench" \
         "(or set AVO_KT_PYTHON to a Python that has it)" >&2
    exit 1
fi
exec nice "$python" bench/vs_kernel_tuner.py "$avo" "$@"
