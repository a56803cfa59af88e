# Shared by the emulator's tests (sourced): skip (77) saying why when the
# emulator was not built or NVRTC is missing (the emulator compiles with the
# real NVRTC first), else put the emulated libcuda and libnvrtc first in the
# loader's path.
if [ -z "${AVO_EMU_LIB_DIR:-}" ]; then
    echo "skip: the CPU emulator was not built (needs a C++ compiler and libboost-context-dev)"
    exit 77
fi
export LD_LIBRARY_PATH="$AVO_EMU_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The vendor baselines (cublas, cudnn_sdpa) of the shipped evaluators run on
# the mock libraries beside the emulator: the real ones need a real GPU.
export AVO_CUBLASLT="${AVO_CUBLASLT:-$AVO_EMU_LIB_DIR/libcublasLt.so.13}"
export AVO_CUDNN="${AVO_CUDNN:-$AVO_EMU_LIB_DIR/libcudnn.so.9}"
if ! "$AVO" doctor | grep -q "^NVRTC  *[0-9]"; then
    echo "skip: NVRTC not available"
    exit 77
fi
# Cubins cached before the emulator's headers last changed have host modules
# built with the old headers, which the driver refuses: compile them again.
if [ -d "${AVO_CACHE:-}/cuda" ] &&
    [ -n "$(find "$AVO_SOURCE_ROOT/tests/emu/include" -newer "$AVO_CACHE/cuda" 2>/dev/null)" ]; then
    rm -rf "$AVO_CACHE/cuda"
fi
# sweep EVALUATOR [sample=N]: the knob space of tests/emu/evaluators/EVALUATOR.lua
# (tests/emu/knob_space.lua; needs tests/e2e/lib.sh): every combination, or a
# seeded sample, must be ok or invalid; prints the tally line.
sweep() {
    expect_exit 0 "$AVO" run tests/emu/knob_space.lua --db "$tmp/$1.db" --jobs 2 \
        evaluator=tests/emu/evaluators/$1.lua ${2:-}
    grep "^knob space" "$tmp/out"
}
