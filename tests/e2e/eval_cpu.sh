#!/bin/sh
# avo eval: the score vector of a good kernel; a wrong kernel names the
# failing config and its max error; knob errors are usage errors.
. "$(dirname "$0")/lib.sh"
expect_exit 0 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua
expect_in "$tmp/out" "n1000"
expect_in "$tmp/out" "n4097"
expect_in "$tmp/out" "score"

expect_exit 1 "$AVO" eval tests/e2e/kernels/axpy_wrong.c --evaluator tests/e2e/evaluators/axpy.lua
expect_in "$tmp/out" "wrong"
expect_in "$tmp/out" "n1000"
expect_in "$tmp/out" "max error"

expect_exit 0 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua --param UNROLL=4 --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"]=="ok" and r["score"]>0 and r["knobs"]["UNROLL"]==4, r' "$tmp/out"

expect_exit 2 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua --param NOPE=1
expect_in "$tmp/err" "declares no knob 'NOPE'"
expect_exit 2 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua --param UNROLL
expect_in "$tmp/err" "NAME=VALUE"

# --config: only the named configs, in the order given; an unknown name is a
# usage error that lists the evaluator's configs.
expect_exit 0 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua \
    --config n4097 --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [c["name"] for c in r["configs"]] == ["n4097"] and r["score"] > 0, r' "$tmp/out"
expect_exit 2 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua --config n5
expect_in "$tmp/err" "has no config 'n5' (configs: n1000, n4097"
expect_exit 2 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua \
    --config n1000 --config n1000
expect_in "$tmp/err" "config 'n1000' is named twice"
expect_exit 1 "$AVO" eval tests/e2e/kernels/axpy_compile_error.c --evaluator tests/e2e/evaluators/axpy.lua
expect_in "$tmp/out" "compile_error"

# The shipped CPU workloads evaluate their seed kernels.
expect_exit 0 "$AVO" eval kernels/cpu/sgemm.c --evaluator cpu/sgemm
expect_in "$tmp/out" "checks: 2 of 2 correct"
# Check configs in both outputs: a kernel correct only at the listed sizes
# fails its check, named, and --json carries the checks.
expect_exit 1 "$AVO" eval tests/integrity/attacks/sizes_listed_only.c \
    --evaluator tests/integrity/evaluators/mm.lua
expect_in "$tmp/out" "checks: 0 of 1 correct"
expect_in "$tmp/out" "  check-1: config check-1: output not fully written"
expect_exit 1 "$AVO" eval tests/integrity/attacks/sizes_listed_only.c \
    --evaluator tests/integrity/evaluators/mm.lua --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"] == "wrong" and [(c["name"], c["correct"]) for c in r["checks"]] == [("check-1", False)], r' "$tmp/out"
expect_exit 0 "$AVO" eval kernels/cpu/softmax.c --evaluator cpu/softmax
echo "eval_cpu: ok"
