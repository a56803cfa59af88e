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

# The whole chain with the shipped evaluators (evaluator field -> baseline
# job -> worker -> library -> archive -> display): avo eval shows each
# baseline and the candidate's ratio per config ...
expect_exit 0 "$AVO" eval kernels/cuda/gemm.cu --evaluator tests/emu/evaluators/gemm_bf16.lua
expect_in "$tmp/out" "  cublas       ok       score "
expect_in "$tmp/out" "(cuBLASLt 13.0.42; cuda:0, avo CPU emulator)"
grep -Eq "^  odd-100x77x53 +[0-9.e-]+ \| cublas [0-9.e-]+ \([0-9.]+x\)" "$tmp/out" ||
    { cat "$tmp/out"; fail "no per-config row against cublas"; }
expect_exit 0 "$AVO" eval kernels/cuda/attention.cu --evaluator tests/emu/evaluators/attention_small.lua
expect_in "$tmp/out" "  cudnn_sdpa   ok       score "
grep -Eq "^  gqa-s100-causal +[0-9.e-]+ \| cudnn_sdpa [0-9.e-]+ \([0-9.]+x\)" "$tmp/out" ||
    { cat "$tmp/out"; fail "no per-config row against cudnn_sdpa"; }
# ... a wrong library is shown wrong, never compared with ...
AVO_MOCK_BASELINE_WRONG=1 expect_exit 0 "$AVO" eval kernels/cuda/gemm.cu \
    --evaluator tests/emu/evaluators/gemm_bf16.lua
expect_in "$tmp/out" "  cublas       wrong    config 64: max error"
grep -q "cublas [0-9.e-]* (" "$tmp/out" && fail "a wrong baseline was compared with"
# ... and device-check's comparison table (tests/gpu/vendor_table.lua)
# lists seed, best and baseline per config with the ratio.
expect_exit 0 "$AVO" run tests/gpu/vendor_table.lua --db "$tmp/vt.db" --jobs 1 seconds=200 \
    search=0 evaluators=tests/emu/evaluators/gemm_bf16_tc.lua,tests/emu/evaluators/attention_small_tc.lua
expect_in "$tmp/out" "tests/emu/evaluators/gemm_bf16_tc.lua: seed ok"
expect_in "$tmp/out" "  cublas: cuBLASLt 13.0.42 on avo CPU emulator, ok"
expect_in "$tmp/out" "  cudnn_sdpa: cuDNN 9.19.99 on avo CPU emulator, ok"
grep -Eq "^  gqa-s48 +[0-9.e-]+ +[0-9.e-]+ +[0-9.e-]+ +[0-9.]+x$" "$tmp/out" ||
    { cat "$tmp/out"; fail "no table row for gqa-s48"; }
[ "$(q "$tmp/vt.db" "SELECT group_concat(name || ':' || status) FROM baselines ORDER BY name")" = \
    "cublas:ok,cudnn_sdpa:ok" ] || fail "baselines stored: $(q "$tmp/vt.db" "SELECT name, status FROM baselines")"
echo "baselines: ok"
