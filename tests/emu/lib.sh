# Shared by the emulator's tests (sourced): skip (77) saying why when the
# emulator was not built or NVRTC is missing (the emulator compiles with the
# real NVRTC first), else put the emulated libcuda and libnvrtc first in the
# loader's path.
if [ -z "${AVO_EMU_LIB_DIR:-}" ]; then
    echo "skip: the CPU emulator was not built (needs a C++ compiler and libboost-context-dev)"
    exit 77
fi
export LD_LIBRARY_PATH="$AVO_EMU_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$AVO" doctor | grep -q "^NVRTC  *[0-9]"; then
    echo "skip: NVRTC not available"
    exit 77
fi
