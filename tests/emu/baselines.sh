#!/bin/sh
# Vendor baselines (issue 14) in the CUDA worker, without a GPU: baseline
# jobs sent to `avo worker` under the CPU emulator with the mock cuBLASLt
# and cuDNN of this directory (tests/emu/baselines.py): cublas with f32,
# bf16 and f16 inputs and cudnn_sdpa on MHA/GQA, causal or not, verified
# against the real references and timed; a mock that answers wrong is
# `wrong`, one whose call fails `crashed`; a missing library `unavailable` with the reason; a config the
# library refuses `unavailable` while the others run; an unknown baseline
# or a signature the baseline cannot read `invalid`, naming the argument.
# `avo doctor` lists both baselines with the mocks' versions and paths, and
# says why one is unavailable.  Needs the emulator and NVRTC (skip 77).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
export AVO_CUBLASLT="$AVO_EMU_LIB_DIR/libcublasLt.so.13"
export AVO_CUDNN="$AVO_EMU_LIB_DIR/libcudnn.so.9"

"$AVO" doctor >"$tmp/doctor"
expect_in "$tmp/doctor" "baseline        cublas      cuBLASLt 13.0.42 ($AVO_CUBLASLT)"
expect_in "$tmp/doctor" "baseline        cudnn_sdpa  cuDNN 9.19.99 ($AVO_CUDNN)"
AVO_CUBLASLT=/nonexistent "$AVO" doctor >"$tmp/doctor"
expect_in "$tmp/doctor" "baseline        cublas      UNAVAILABLE: cannot load /nonexistent (from \$AVO_CUBLASLT)"
expect_in "$tmp/doctor" "baseline        cudnn_sdpa  cuDNN 9.19.99"

for case in cublas cudnn wrong missing refused invalid; do
    python3 tests/emu/baselines.py $case
done
echo "baselines: ok"
