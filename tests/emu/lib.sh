# Shared by the emulator's tests (sourced): skip (77) saying why when the
# emulator was not built or NVRTC is missing (the emulator compiles with the
# real NVRTC first), else put the emulated libcuda and libnvrtc first in the
# loader's path.  The real NVRTC is the one `avo doctor` finds before the
# emulator's stand-in is in the way (a toolkit or the pip wheels); the
# stand-in forwards to it (AVO_EMU_REAL_NVRTC), and avo takes the stand-in by
# name (AVO_NVRTC), whatever else is installed.
if [ -z "${AVO_EMU_LIB_DIR:-}" ]; then
    echo "skip: the CPU emulator was not built (needs a C++ compiler and libboost-context-dev)"
    exit 77
fi
case "${AVO_NVRTC:-}" in "$AVO_EMU_LIB_DIR"/*) unset AVO_NVRTC ;; esac
if [ -z "${AVO_EMU_REAL_NVRTC:-}" ]; then
    # meson test puts the emulator's folder in LD_LIBRARY_PATH already: ask
    # without it, or the stand-in would answer for the real NVRTC.
    real_path=$(printf '%s\n' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -vxF "$AVO_EMU_LIB_DIR" |
        paste -sd: -)
    nvrtc_line=$(LD_LIBRARY_PATH=$real_path "$AVO" doctor | grep "^NVRTC " || true)
    AVO_EMU_REAL_NVRTC=$(printf '%s\n' "$nvrtc_line" | sed -n 's/^NVRTC  *[0-9][0-9.]* (\([^;]*\);.*/\1/p')
    if [ -z "$AVO_EMU_REAL_NVRTC" ]; then
        echo "skip: NVRTC not available (avo doctor: ${nvrtc_line:-no NVRTC line})"
        exit 77
    fi
fi
export AVO_EMU_REAL_NVRTC
export AVO_NVRTC="$AVO_EMU_LIB_DIR/libnvrtc.so.13"
export LD_LIBRARY_PATH="$AVO_EMU_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The vendor baselines (cublas, cudnn_sdpa) of the shipped evaluators run on
# the mock libraries beside the emulator: the real ones need a real GPU.
export AVO_CUBLASLT="${AVO_CUBLASLT:-$AVO_EMU_LIB_DIR/libcublasLt.so.13}"
export AVO_CUDNN="${AVO_CUDNN:-$AVO_EMU_LIB_DIR/libcudnn.so.9}"
nvrtc_line=$("$AVO" doctor 2>&1 | grep "^NVRTC " || true)
case "$nvrtc_line" in
    "NVRTC "*" ($AVO_NVRTC; from \$AVO_NVRTC)") ;;
    *) echo "FAIL: avo does not take the emulator's NVRTC (real: $AVO_EMU_REAL_NVRTC): $nvrtc_line" >&2
       exit 1 ;;
esac
# Cubins cached before the emulator's headers last changed have host modules
# built with the old headers, which the driver refuses: compile them again.
if [ -d "${AVO_CACHE:-}/cuda" ] &&
    [ -n "$(find "$AVO_SOURCE_ROOT/tests/emu/include" -newer "$AVO_CACHE/cuda" 2>/dev/null)" ]; then
    rm -rf "$AVO_CACHE/cuda"
fi
# sweep EVALUATOR [sample=N]: the knob space of tests/emu/evaluators/EVALUATOR.lua
# (tests/emu/knob_space.lua; needs tests/e2e/lib.sh): every combination, or a
# seeded sample, must be ok or invalid; prints the tally line.  (No
# re-timing at the end: the emulator's times mean nothing.)
sweep() {
    expect_exit 0 "$AVO" run tests/emu/knob_space.lua --db "$tmp/$1.db" --jobs 2 --retime 0 \
        evaluator=tests/emu/evaluators/$1.lua ${2:-}
    grep "^knob space" "$tmp/out"
}
