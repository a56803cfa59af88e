#!/bin/sh
# CUDA without a GPU: every shipped .cu kernel compiles for sm_80 and sm_90a
# through `avo eval --compile-only`, printing registers, spills and shared
# memory; a syntax error shows NVRTC's log; an include of a host path is
# refused; a launch the target cannot run is invalid.  Skips (77) when
# libnvrtc cannot be loaded.
. "$(dirname "$0")/lib.sh"
"$AVO" doctor >"$tmp/doctor" 2>&1 || fail "avo doctor exited non-zero"
expect_in "$tmp/doctor" "host compiler"
if grep -q "^NVRTC *MISSING" "$tmp/doctor"; then
    echo "skip: $(grep '^NVRTC' "$tmp/doctor")"
    exit 77
fi
expect_in "$tmp/doctor" "driver"

# evaluator -> seed kernel
for pair in gemm_f32:gemm gemm_bf16:gemm gemm_f16:gemm softmax:softmax \
            attention_small:attention attention_mha:attention attention_gqa:attention \
            gemm_bf16_tc:gemm_wmma gemm_f16_tc:gemm_wmma attention_small_tc:attention_wmma \
            attention_mha_tc:attention_wmma attention_gqa_tc:attention_wmma; do
    ev=${pair%%:*} kernel=${pair#*:}
    for arch in sm_80 sm_90a; do
        expect_exit 0 "$AVO" eval "kernels/cuda/$kernel.cu" --evaluator "cuda/$ev" --compile-only --arch "$arch"
        expect_in "$tmp/out" "ok (compile only, $arch"
        expect_in "$tmp/out" "registers"
        expect_in "$tmp/out" "spill st/ld"
        expect_in "$tmp/out" "smem bytes"
        expect_in "$tmp/out" "(entry)"
        echo "$ev $arch: $(grep '(entry)' "$tmp/out")"
    done
done
# every .cu file in kernels/cuda is covered above (seeds) or is a reference
for f in kernels/cuda/*.cu; do
    case "$f" in
    *_ref.cu|*/gemm.cu|*/softmax.cu|*/attention.cu|*/gemm_wmma.cu|*/attention_wmma.cu) ;;
    *) fail "kernels/cuda/$(basename "$f") is not compiled by this test" ;;
    esac
done
# the references compile too (compiled as candidates of the same evaluators)
for spec in gemm_f32:gemm_ref:gemm softmax:softmax_ref:softmax attention_small:attention_ref:attention_fwd; do
    ev=${spec%%:*} rest=${spec#*:} ref=${rest%%:*} entry=${rest#*:}
    sed "s/__global__ void $ref(/__global__ void $entry(/" "kernels/cuda/$ref.cu" >"$tmp/ref.cu"
    expect_exit 0 "$AVO" eval "$tmp/ref.cu" --evaluator "cuda/$ev" --compile-only --arch sm_90a
done

# knobs reach NVRTC; opt-in shared memory (64 KiB dynamic) is accepted
expect_exit 0 "$AVO" eval kernels/cuda/attention.cu --evaluator cuda/attention_small --compile-only --arch sm_90a --param BLOCK_N=64 --param TPR=4
# the tensor-core seeds' knobs reach NVRTC (a larger warp tile, more stages);
# the pipeline depth shows in the seed's dynamic shared memory, which a
# combination too large for the target makes invalid
expect_exit 0 "$AVO" eval kernels/cuda/gemm_wmma.cu --evaluator cuda/gemm_f16_tc --compile-only --arch sm_80 --param WN=64 --param STAGES=4
expect_exit 1 "$AVO" eval kernels/cuda/attention_wmma.cu --evaluator cuda/attention_mha_tc --compile-only --arch sm_90a --param BLOCK_M=128 --param BLOCK_N=128 --param STAGES=3
expect_in "$tmp/out" "too much shared memory: 0 bytes static + 382464 dynamic"
expect_exit 1 "$AVO" eval kernels/cuda/gemm_wmma.cu --evaluator cuda/gemm_bf16_tc --compile-only --arch sm_80 --param WM=16 --param WN=16
expect_in "$tmp/out" "block.x = 2048 is larger than the device allows (1024)"
# Knobs the evaluator's launch functions refuse are invalid when only
# compiling too (the agent's compile tool must not say "ok").
expect_exit 1 "$AVO" eval kernels/cuda/gemm_wmma.cu --evaluator cuda/gemm_bf16_tc --compile-only --arch sm_90a --param WM=48
expect_in "$tmp/out" "invalid (compile only, sm_90a, NVRTC) — config '512': evaluator block(512) failed: the warp tile 48x32 does not divide the CTA tile 128x128"
# JSON report
expect_exit 0 "$AVO" eval kernels/cuda/gemm.cu --evaluator cuda/gemm_f32 --compile-only --arch sm_80 --param BM=64 --param TM=4 --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
k = [k for k in r["compile"]["kernels"] if k["entry"]][0]
assert r["status"] == "ok" and k["registers"] > 0 and k["static_shared_bytes"] == 4*8*(64+32), k
assert r["sandbox"] == "cuda-context", r.get("sandbox")  # no host sandbox around device code
assert k["spill_store_bytes"] == 0 and len(k["params"]) == 6, k
' "$tmp/out"

# the compile process can also be a fresh exec of avo (what a worker holding a
# CUDA context uses): same report, same log on errors
AVO_NVRTC_EXEC=1 AVO_CACHE="$tmp/cache-exec" expect_exit 0 "$AVO" eval kernels/cuda/attention.cu --evaluator cuda/attention_small --compile-only --arch sm_80
expect_in "$tmp/out" "attention_fwd (entry)"
sed 's/acc\[i\]\[j\] = 0.0f;/acc[i][j] = 0.0f/' kernels/cuda/gemm.cu >"$tmp/syntax.cu"
AVO_NVRTC_EXEC=1 AVO_CACHE="$tmp/cache-exec" expect_exit 1 "$AVO" eval "$tmp/syntax.cu" --evaluator cuda/gemm_f32 --compile-only --arch sm_80
expect_in "$tmp/out" "error: expected a \";\""

# a syntax error shows NVRTC's log
sed 's/acc\[i\]\[j\] = 0.0f;/acc[i][j] = 0.0f/' kernels/cuda/gemm.cu >"$tmp/syntax.cu"
expect_exit 1 "$AVO" eval "$tmp/syntax.cu" --evaluator cuda/gemm_f32 --compile-only --arch sm_80
expect_in "$tmp/out" "compile_error"
expect_in "$tmp/out" "log:"
expect_in "$tmp/out" "error: expected a \";\""

# an include of a host path is refused before compiling, in every spelling
for inc in '#include </etc/passwd>' '#include "../../etc/passwd"' '/* */ #  include "/etc/hostname"' '#include <stdio.h>'; do
    { echo "$inc"; cat kernels/cuda/softmax.cu; } >"$tmp/host.cu"
    expect_exit 1 "$AVO" eval "$tmp/host.cu" --evaluator cuda/softmax --compile-only --arch sm_80
    expect_in "$tmp/out" "compile_error"
    expect_in "$tmp/out" "is not a header the evaluator provides"
done

# launches the target cannot run are invalid: too many threads, too much shared memory
expect_exit 1 "$AVO" eval kernels/cuda/attention.cu --evaluator cuda/attention_small --compile-only --arch sm_90a --param BLOCK_M=128 --param TPR=32
expect_in "$tmp/out" "invalid"
expect_in "$tmp/out" "block.x = 4096 is larger than the device allows (1024)"
expect_exit 1 "$AVO" eval tests/e2e/kernels/cuda_vadd.cu --evaluator tests/e2e/evaluators/cuda_vadd_smem.lua --compile-only --arch sm_80
expect_in "$tmp/out" "too much shared memory"
# a non-integer grid from the evaluator is invalid
expect_exit 1 "$AVO" eval tests/e2e/kernels/cuda_vadd.cu --evaluator tests/e2e/evaluators/cuda_vadd_badgrid.lua --compile-only --arch sm_80
expect_in "$tmp/out" "must be a positive integer, got 12.5"
# the evaluator's argument list is checked against the kernel's parameters
expect_exit 1 "$AVO" eval tests/e2e/kernels/cuda_vadd.cu --evaluator tests/e2e/evaluators/cuda_vadd_args.lua --compile-only --arch sm_80
expect_in "$tmp/out" "takes 4 parameters, the evaluator gives 5"

# without --arch and without a GPU: a clear message
if ! grep -q "^GPUs" "$tmp/doctor"; then
    expect_exit 1 "$AVO" eval kernels/cuda/softmax.cu --evaluator cuda/softmax --compile-only
    expect_in "$tmp/out" "--arch sm_90a"
fi
# --compile-only is for CUDA evaluators
expect_exit 2 "$AVO" eval kernels/cpu/softmax.c --evaluator cpu/softmax --compile-only
echo "cuda_compile: ok"
