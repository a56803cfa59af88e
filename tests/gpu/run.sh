#!/bin/sh
# The GPU test suite.  Exits 77 (skipped) saying why when there is no NVIDIA
# driver, no GPU or no NVRTC; otherwise runs every seed kernel for real, the
# planted failures (wrong values, out-of-bounds write, stale output, changed
# behaviour on the second call, illegal address then a fresh worker, hang ->
# timeout), a short GA on the GEMM, and prints a summary table last.
#
#   AVO=build/avo tests/gpu/run.sh
#   AVO_GPU_GA_SECONDS=60   length of the GA (default 60)
#   AVO_GPU_GA_GENERATIONS=6  its generations (a large number: until the time is up)
#   AVO_GPU_DEADLINE=T      epoch second by which the summary must be out: the GA
#                           is shortened to end 20 s before it
#   AVO_GPU_PAPER=1         also time the seed attention on the paper's MHA configs,
#                           one config at a time within AVO_GPU_PAPER_SECONDS (900)
#   AVO_GPU_VENDOR=1        also print the vendor comparison (tests/gpu/vendor_table.lua):
#                           seed / best / cuBLAS or cuDNN per config, within
#                           AVO_GPU_VENDOR_SECONDS (180), searching AVO_GPU_VENDOR_SEARCH
#                           (30) s per evaluator, on AVO_GPU_VENDOR_EVALUATORS (comma list)
#   AVO_GPU_EVALUATORS=DIR  take gemm_*, softmax and attention_small from DIR/*.lua
#                           instead of evaluators/cuda (tests/emu/evaluators: small
#                           configs for the CPU emulator, tests/emu/gpu_suite.sh)
set -u
cd "${AVO_SOURCE_ROOT:-$(dirname "$0")/../..}"
AVO=${AVO:-build/avo}
case "$AVO" in /*) ;; *) AVO="$PWD/$AVO" ;; esac
export AVO_CACHE="${AVO_CACHE:-$(mktemp -d)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$AVO" doctor >"$tmp/doctor" 2>&1
if grep -q "^driver *MISSING" "$tmp/doctor"; then
    echo "skip: $(grep '^driver' "$tmp/doctor" | sed 's/^driver *MISSING: //')"
    exit 77
fi
if grep -q "^NVRTC *MISSING" "$tmp/doctor"; then
    echo "skip: $(grep '^NVRTC' "$tmp/doctor" | sed 's/^NVRTC *MISSING: //')"
    exit 77
fi
if ! grep -q "^GPUs *[1-9]" "$tmp/doctor"; then
    echo "skip: the NVIDIA driver sees no GPU"
    exit 77
fi
cat "$tmp/doctor"

summary="$tmp/summary"
: >"$summary"
failures=0
# record NAME RESULT DETAIL
record() {
    printf '%-34s %-6s %s\n' "$1" "$2" "$3" >>"$summary"
    [ "$2" = PASS ] || failures=$((failures + 1))
    printf '%-34s %-6s %s\n' "$1" "$2" "$3"
}
# check NAME WANT_EXIT PATTERN CMD... : run, then the exit status and a line of output must match
check() {
    name=$1 want=$2 pattern=$3
    shift 3
    start=$(date +%s)
    "$@" >"$tmp/out" 2>&1
    got=$?
    secs=$(( $(date +%s) - start ))
    line=$(grep -v -m 1 "^avo emulator:" "$tmp/out" | cut -c1-110) # the emulator notes its faults first
    if [ "$got" -eq "$want" ] && grep -qE -- "$pattern" "$tmp/out"; then
        record "$name" PASS "${secs}s  $line"
    else
        record "$name" FAIL "${secs}s exit $got  $line"
        sed 's/^/    /' "$tmp/out" | head -n 40
    fi
}

V=tests/e2e/evaluators/cuda_vadd.lua
# The evaluator called NAME (gemm_f32, softmax, ...).
ev() {
    if [ -n "${AVO_GPU_EVALUATORS:-}" ]; then echo "$AVO_GPU_EVALUATORS/$1.lua"; else echo "cuda/$1"; fi
}
# Seed kernels, verified and timed.
check "seed gemm fp32" 0 "score" "$AVO" eval kernels/cuda/gemm.cu --evaluator "$(ev gemm_f32)"
check "seed gemm bf16" 0 "score" "$AVO" eval kernels/cuda/gemm.cu --evaluator "$(ev gemm_bf16)"
check "seed gemm fp16" 0 "score" "$AVO" eval kernels/cuda/gemm.cu --evaluator "$(ev gemm_f16)"
check "gemm bf16 64x64 tiles 4x4" 0 "score" "$AVO" eval kernels/cuda/gemm.cu --evaluator "$(ev gemm_bf16)" \
    --param BM=64 --param BN=64 --param BK=16 --param TM=4 --param TN=4
check "seed softmax" 0 "score" "$AVO" eval kernels/cuda/softmax.cu --evaluator "$(ev softmax)"
check "softmax warp/vec4" 0 "score" "$AVO" eval kernels/cuda/softmax.cu --evaluator "$(ev softmax)" \
    --param WARP_REDUCE=1 --param VEC=4 --param BLOCK=256
check "seed attention (small)" 0 "score" "$AVO" eval kernels/cuda/attention.cu --evaluator "$(ev attention_small)"
check "attention opt-in smem (64 KiB)" 0 "score" "$AVO" eval kernels/cuda/attention.cu \
    --evaluator "$(ev attention_small)" --param BLOCK_N=64 --param TPR=4
check "vadd correct" 0 "score" "$AVO" eval tests/e2e/kernels/cuda_vadd.cu --evaluator $V

# Planted failures.
check "planted wrong kernel" 1 "wrong .*max error" "$AVO" eval tests/e2e/kernels/cuda_vadd_wrong.cu --evaluator $V
check "planted out-of-bounds write" 1 "wrote out of bounds of buffer out" \
    "$AVO" eval tests/e2e/kernels/cuda_vadd_oob.cu --evaluator $V
check "planted stale output" 1 "output not fully written" \
    "$AVO" eval tests/e2e/kernels/cuda_vadd_stale.cu --evaluator $V
check "planted second-call change" 1 "wrong" "$AVO" eval tests/e2e/kernels/cuda_vadd_second.cu --evaluator $V
check "planted illegal address" 1 "crashed .*CUDA_ERROR_ILLEGAL_ADDRESS" \
    "$AVO" eval tests/e2e/kernels/cuda_vadd_crash.cu --evaluator $V
check "crash, then a fresh worker" 0 "second: ok" \
    "$AVO" run tests/gpu/crash_then_ok.lua --db "$tmp/crash.db" --jobs 1
check "planted hang -> timeout" 1 "timeout" "$AVO" eval tests/e2e/kernels/cuda_vadd_hang.cu \
    --evaluator tests/gpu/cuda_vadd_hang.lua
check "GPU usable after the hang" 0 "score" "$AVO" eval tests/e2e/kernels/cuda_vadd.cu --evaluator $V
check "block too large -> invalid" 1 "invalid .*larger than the device allows" \
    "$AVO" eval kernels/cuda/attention.cu --evaluator "$(ev attention_small)" --param BLOCK_M=128 --param TPR=16

if [ "${AVO_GPU_PAPER:-0}" = 1 ]; then
    # The seed attention on the paper's MHA configs, one `avo eval --config`
    # each, cheapest first, while the budget lasts: every config is either
    # timed, failed (wrong, crashed: the check fails) or not timed in budget.
    budget=${AVO_GPU_PAPER_SECONDS:-900}
    start=$(date +%s) timed=0 failed=0
    : >"$tmp/paper"
    for S in 4096 8192 16384 32768; do
        for name in "mha-causal-s$S" "mha-s$S"; do
            left=$((budget - ($(date +%s) - start)))
            if [ "$left" -lt 5 ]; then
                printf '%-18s not run: the %ss budget is spent\n' "$name" "$budget" >>"$tmp/paper"
                continue
            fi
            timeout "$left" "$AVO" eval kernels/cuda/attention.cu --evaluator cuda/attention_mha \
                --config "$name" >"$tmp/one" 2>&1
            rc=$?
            row=$(grep "^$name " "$tmp/one" | head -n 1)
            if [ "$rc" -eq 0 ]; then
                timed=$((timed + 1))
                echo "$row" | awk '{ printf "%-18s %8s %12s %10s %8s %11s\n", $1, $2, $3, $4, $5, $6 }' \
                    >>"$tmp/paper"
            elif [ "$rc" -eq 124 ]; then
                printf '%-18s not timed: still running when the budget ran out (%ss)\n' \
                    "$name" "$left" >>"$tmp/paper"
            else
                failed=$((failed + 1))
                printf '%-18s FAILED: %s\n' "$name" "$(head -n 1 "$tmp/one" | cut -c1-160)" \
                    >>"$tmp/paper"
            fi
        done
    done
    tflops=$(awk '$2 == "yes" && $3 > 0 { s += log($3); n++ } END { if (n) printf "%.3g", exp(s / n) }' \
        "$tmp/paper")
    if [ "$failed" -gt 0 ]; then
        record "seed attention, paper MHA configs" FAIL "$failed failed, $timed of 8 timed"
    elif [ "$timed" -eq 0 ]; then
        record "seed attention, paper MHA configs" SLOW "none of 8 configs timed in ${budget}s"
    else
        record "seed attention, paper MHA configs" PASS \
            "$timed of 8 configs timed in ${budget}s, geomean ${tflops} TFLOPS"
    fi
fi

if [ "${AVO_GPU_VENDOR:-0}" = 1 ]; then
    # Where avo stands against the vendor libraries (tests/gpu/vendor_table.lua):
    # per config of the tensor-core evaluators, the seed, the best of a short
    # search and cuBLAS / cuDNN, timed in this run by the same harness.
    vs=${AVO_GPU_VENDOR_SECONDS:-180}
    start=$(date +%s)
    timeout $((vs + 90)) "$AVO" run tests/gpu/vendor_table.lua --db "$tmp/vendor.db" --jobs 1 \
        --max-time "$vs" seconds="$vs" search="${AVO_GPU_VENDOR_SEARCH:-30}" \
        ${AVO_GPU_VENDOR_EVALUATORS:+evaluators=$AVO_GPU_VENDOR_EVALUATORS} \
        >"$tmp/vendor" 2>"$tmp/vendor.err"
    rc=$?
    secs=$(( $(date +%s) - start ))
    # Each baseline's line: "  NAME: LIBRARY VERSION on GPU, STATUS[ (reason)]".
    statuses=$(grep -E "^  [a-z_@0-9]+: .* on .*, [a-z]+" "$tmp/vendor" |
        sed -E 's/^  ([^:]+): .*, ([a-z_]+)( \(.*)?$/\1 \2/' | tr '\n' ' ')
    if [ "$rc" -ne 0 ] || ! grep -q "^vendor comparison" "$tmp/vendor"; then
        record "vendor comparison (cuBLAS, cuDNN)" FAIL "${secs}s exit $rc  $(tail -n 1 "$tmp/vendor.err" | cut -c1-100)"
        sed 's/^/    /' "$tmp/vendor.err" | tail -n 20
    elif echo "$statuses" | grep -Eq " (wrong|crashed|timeout|invalid|error)( |$)"; then
        record "vendor comparison (cuBLAS, cuDNN)" FAIL "${secs}s baselines: $statuses"
    else
        record "vendor comparison (cuBLAS, cuDNN)" PASS "${secs}s baselines: $statuses"
    fi
fi

ga=${AVO_GPU_GA_SECONDS:-60}
if [ -n "${AVO_GPU_DEADLINE:-}" ]; then
    left=$((AVO_GPU_DEADLINE - $(date +%s) - 20))
    [ "$left" -lt "$ga" ] && ga=$((left > 10 ? left : 10))
fi
check "GA on cuda/gemm_bf16 (${ga}s)" 0 "^best" "$AVO" run examples/gpu_quick.lua --db "$tmp/ga.db" \
    --jobs 1 --max-time "$ga" evaluator="$(ev gemm_bf16)" generations="${AVO_GPU_GA_GENERATIONS:-6}"
ga_best=$(grep -E "^(best|speedup)" "$tmp/out" | tr '\n' ' ')

echo
if [ -s "$tmp/paper" ]; then
    echo "seed attention on the paper's MHA configs (TFLOPS):"
    printf '%-18s %8s %12s %10s %8s %11s\n' config correct TFLOPS median spread "max error"
    cat "$tmp/paper"
    echo
fi
[ -n "$ga_best" ] && echo "GA: $ga_best"
if [ -s "${tmp}/vendor" ]; then
    # The tables only: the run's own summary after them mixes evaluators.
    sed -n '/^vendor comparison/,/^(end of the vendor comparison)/p' "$tmp/vendor" | sed '$d'
    echo
fi
echo
echo "GPU test summary ($(grep -c . "$summary") checks, $failures failed) on $(grep '^  \[0\]' "$tmp/doctor" | sed 's/^ *//')"
printf '%-34s %-6s %s\n' "check" "result" "detail"
cat "$summary"
[ "$failures" -eq 0 ]
