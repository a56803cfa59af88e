#!/bin/sh
# The BLAS-style sgemm seed (kernels/cpu/sgemm_fast.c, evaluator
# cpu/sgemm_fast, examples/sgemm_fast.lua): the seed and the corners of its
# knob space are correct on every ISA path, its reference agrees with the
# plain one, broken variants are judged wrong, and a short evolution runs.
# Behaviour only; how fast it is goes to bench/sgemm_vs_openblas.sh.
. "$(dirname "$0")/lib.sh"

json_ok() { # FILE: status ok, every config and check correct
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok" and r["score"] > 0, r
assert r["configs"] and all(c["correct"] for c in r["configs"]), r["configs"]
assert r["checks"] and all(c["correct"] for c in r["checks"]), r["checks"]' "$1"
}

# The seed, on the host's widest ISA: every shape timed and reported, the
# score the geometric mean of their speed-ups over the seed timed beside
# them (timing.yardstick: issue 30, no one shape carries it, and the score
# is paired), GFLOP/s reported per shape.
expect_exit 0 "$AVO" eval kernels/cpu/sgemm_fast.c --evaluator cpu/sgemm_fast --json
json_ok "$tmp/out"
python3 - "$tmp/out" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
names = [c["name"] for c in r["configs"]]
assert names == ["sq-512", "sq-1024", "odd-383x271x445", "odd-500x300x700",
                 "tall-4096x64x256", "small-64x64x64"], names
assert r["unit"] == "x seed", r["unit"]
assert all(c["gflops"] > 0 and c["yardstick_s"] > 0 for c in r["configs"]), r["configs"]
geo = math.exp(sum(math.log(c["vs_yardstick"]) for c in r["configs"]) / len(names))
assert abs(r["score"] - geo) < 1e-9 * geo, (r["score"], geo)
PY

# The dispatch is a rule over sizes: a kernel whose large-family instance
# is broken (it drops the last k step) is wrong at 512^3 and 1024^3 and
# right on the small shape (and on the check sizes, all small or skinny).
sed 's/gemm_LG(M, N, K, A, B, C);/gemm_LG(M, N, K - 1, A, B, C);/' kernels/cpu/sgemm_fast.c \
    > "$tmp/large.c"
! cmp -s kernels/cpu/sgemm_fast.c "$tmp/large.c" || fail "the large-family variant is the seed"
expect_exit 0 "$AVO" eval "$tmp/large.c" --evaluator cpu/sgemm_fast --config small-64x64x64 \
    --config odd-383x271x445 --config tall-4096x64x256
for config in sq-512 sq-1024; do
    expect_exit 1 "$AVO" eval "$tmp/large.c" --evaluator cpu/sgemm_fast --config $config
    expect_in "$tmp/out" "wrong"
done

# Corners of the knob space, on the shapes of each family (several jc/pc/ic
# passes, ragged blocks and tiles): the largest tile (spills), the smallest,
# every unroll, prefetch (the C tile early and late) and distance, edge
# handling, loop order, packing schedule (B packed inside the k loop too) and
# in-place sliver.
corner() { # FAMILY CONFIG KNOBS...
    fam=$1 config=$2
    shift 2
    params=""
    for kv in "$@"; do params="$params --param ${fam}_$kv"; done
    # shellcheck disable=SC2086
    expect_exit 0 "$AVO" eval kernels/cpu/sgemm_fast.c --evaluator cpu/sgemm_fast \
        --config "$config" $params --json
    json_ok "$tmp/out" || fail "$fam knobs $*"
}
corner MD odd-383x271x445 MR=16 NV=4 UNROLL=8 PREFETCH=2 PF_DIST=32 EDGE=1 PACK=3
corner MD odd-383x271x445 MR=4 NV=1 KC=64 MC=48 NC=256 UNROLL=1 PREFETCH=1 LOOP=1 INPLACE=3
corner MD odd-500x300x700 MR=14 NV=2 KC=192 MC=72 NC=256 UNROLL=2 EDGE=1 LOOP=1 PACK=1 INPLACE=1
corner MD odd-500x300x700 MR=6 NV=4 KC=512 MC=384 NC=4096 PACK=2 INPLACE=2 EDGE=1
corner LG sq-512 MR=12 NV=2 KC=384 MC=144 NC=512 EDGE=1 LOOP=1 PACK=3 INPLACE=1 PREFETCH=2 PF_DIST=4
corner TS tall-4096x64x256 MR=10 NV=3 KC=128 MC=288 EDGE=1 PACK=2 INPLACE=3 UNROLL=8
corner LG sq-1024 KC=1024 MC=48 INPLACE=2 PREFETCH=3 PF_DIST=16 UNROLL=8 PACK=4
corner MD odd-500x300x700 MR=6 NV=3 KC=128 PACK=5 LOOP=1
corner TS tall-4096x64x256 PACK=4 EDGE=1 INPLACE=2
corner MD odd-383x271x445 KC=64 PREFETCH=4 PF_DIST=32 UNROLL=2 EDGE=1
corner SM small-64x64x64 MR=14 NV=1 PREFETCH=3 PF_DIST=2 UNROLL=1 INPLACE=3
corner SM small-64x64x64 MR=6 NV=1 KC=64 EDGE=1 LOOP=1 PACK=3 INPLACE=3
corner SM small-64x64x64 MR=16 NV=1 UNROLL=2 INPLACE=2
# the inputs' first blocks prefetched at entry: into L1 with whole inputs
# (64^3, rows contiguous), into L2 with ragged rows that start mid-line
corner SM small-64x64x64 PF_INPUTS=1 INPLACE=3
corner MD odd-383x271x445 PF_INPUTS=2 MC=48 KC=128 INPLACE=1
corner TS tall-4096x64x256 PF_INPUTS=1 PACK=4
# A slivers packed row by row, KC apart: K shorter than KC (445 < 512, the
# rows' tails unused), ragged slivers (383 rows), packed at first use
corner MD odd-383x271x445 ALAYOUT=1 KC=512 MR=6 NV=4 EDGE=1
corner LG sq-512 ALAYOUT=1 KC=192 MR=14 PACK=5 LOOP=1
corner SM small-64x64x64 ALAYOUT=1 MR=10 INPLACE=1

# The AVX2 and portable micro-kernels, compiled for narrower ISAs (x86 flags).
isas="avx2 generic"
if ! ${CC:-cc} -dM -E - </dev/null | grep -q "__x86_64__"; then
    echo "note: not an x86-64 compiler: the AVX2 and SSE builds are not judged here" >&2
    isas=""
fi
for isa in $isas; do
    export AVO_TEST_ISA=$isa
    expect_exit 0 "$AVO" eval kernels/cpu/sgemm_fast.c \
        --evaluator tests/e2e/evaluators/sgemm_fast_isa.lua --param MD_MR=6 --param MD_NV=2 --json
    json_ok "$tmp/out"
    # masked (AVX2) or buffered (portable) edges, sliver read in place
    expect_exit 0 "$AVO" eval kernels/cpu/sgemm_fast.c \
        --evaluator tests/e2e/evaluators/sgemm_fast_isa.lua --param MD_MR=4 --param MD_NV=3 \
        --param MD_EDGE=1 --param MD_INPLACE=3 --param MD_PACK=3 --json
    json_ok "$tmp/out"
    # A slivers packed row by row
    expect_exit 0 "$AVO" eval kernels/cpu/sgemm_fast.c \
        --evaluator tests/e2e/evaluators/sgemm_fast_isa.lua --param MD_MR=6 --param MD_ALAYOUT=1 \
        --param MD_KC=512 --json
    json_ok "$tmp/out"
    # B packed inside the k loop (aligned stores of narrower vectors), the C
    # tile prefetched late
    expect_exit 0 "$AVO" eval kernels/cpu/sgemm_fast.c \
        --evaluator tests/e2e/evaluators/sgemm_fast_isa.lua --param MD_NV=3 --param MD_PACK=5 \
        --param MD_PREFETCH=4 --param MD_PF_DIST=4 --param MD_PF_INPUTS=1 --json
    json_ok "$tmp/out"
    # and those flags do select that path on this host
    if [ $isa = avx2 ]; then flag=-mno-avx512f; else flag=-mno-avx; fi
    ${CC:-cc} -O3 -march=native $flag -dM -E - </dev/null > "$tmp/macros"
    ! grep -q "__AVX512F__" "$tmp/macros" || fail "$flag leaves AVX-512 on"
    if [ $isa = avx2 ]; then expect_in "$tmp/macros" "__AVX__"; else ! grep -q "__AVX__" "$tmp/macros" || fail "-mno-avx leaves AVX on"; fi
done

# Broken variants are wrong: a later k block that overwrites instead of
# adding (caught on every config with K > KC), and an edge tile that drops
# its last row (caught on the odd config and the check sizes).
sed 's/(size_t)N, pc > 0, /(size_t)N, 0, /' kernels/cpu/sgemm_fast.c > "$tmp/overwrite.c"
sed 's/for (int r = 0; r < mr; r++)/for (int r = 0; r + 1 < mr; r++)/' kernels/cpu/sgemm_fast.c > "$tmp/edge.c"
for bad in overwrite edge; do
    ! cmp -s kernels/cpu/sgemm_fast.c "$tmp/$bad.c" || fail "the $bad variant is the seed (sed found nothing)"
    expect_exit 1 "$AVO" eval "$tmp/$bad.c" --evaluator cpu/sgemm_fast --config odd-383x271x445
    expect_in "$tmp/out" "wrong"
done

# The vectorised reference sums exactly as the plain one: same bits.
cat > "$tmp/refs.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void sgemm_ref(int32_t, int32_t, int32_t, const float *, const float *, float *);
void sgemm_fast_ref(int32_t, int32_t, int32_t, const float *, const float *, float *);
int main(void)
{
    static const int32_t sizes[][3] = {{1, 1, 1}, {7, 33, 5}, {97, 61, 130}, {64, 80, 300}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int32_t M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
        float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
        float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
        for (int32_t i = 0; i < M * K; i++) A[i] = (float)rand() / RAND_MAX * 2 - 1;
        for (int32_t i = 0; i < K * N; i++) B[i] = (float)rand() / RAND_MAX * 2 - 1;
        sgemm_ref(M, N, K, A, B, C1);
        sgemm_fast_ref(M, N, K, A, B, C2);
        if (memcmp(C1, C2, sizeof(float) * M * N)) {
            printf("references differ at %dx%dx%d\n", M, N, K);
            return 1;
        }
        free(A), free(B), free(C1), free(C2);
    }
    return 0;
}
C
${CC:-cc} -O3 -march=native "$tmp/refs.c" kernels/cpu/sgemm_ref.c kernels/cpu/sgemm_fast_ref.c \
    -o "$tmp/refs" || fail "cannot build the reference comparison"
"$tmp/refs" || fail "the two sgemm references disagree"

# A short evolution of the example: every candidate evaluated and correct
# (no knob combination is wrong), the search moved off the seed.  Then the
# budget: without generations=, --max-evals governs (the GA does not stop
# at its default 20 generations short of it).
db="$tmp/f.db"
expect_exit 0 "$AVO" run examples/sgemm_fast.lua --db "$db" --jobs 2 generations=2 population=4 --retime 0
expect_in "$tmp/out" "best #"
n=$(q "$db" "SELECT count(*) FROM candidates")
[ "$n" -ge 8 ] || fail "expected at least 8 candidates, got $n"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status <> 'ok'")" = 0 ] ||
    fail "candidates not ok: $(q "$db" "SELECT id, status, reason FROM candidates WHERE status <> 'ok'")"
[ "$(q "$db" "SELECT count(DISTINCT knobs) FROM candidates")" -ge 4 ] || fail "the search did not move"
[ "$(q "$db" "SELECT status FROM runs")" = done ] || fail "run not marked done"
# param_tweak's per_group: the seed's tweaked child steps in every family.
note=$(q "$db" "SELECT note FROM candidates WHERE operator = 'param_tweak' AND generation = 0 LIMIT 1")
for f in LG MD TS SM; do
    case "$note" in *"${f}_"*) ;; *) fail "the seed's param_tweak child left family $f alone: $note" ;; esac
done
# strategy=linesearch: 8 configurations spread beside the seed, then the
# first line moves the four families' MR together; a strategy it does not
# know is an error naming the script's line.
expect_exit 0 "$AVO" run examples/sgemm_fast.lua --db "$tmp/l.db" --jobs 2 --max-evals 11 \
    --retime 0 strategy=linesearch
[ "$(q "$tmp/l.db" "SELECT count(*) FROM candidates WHERE note = 'start: space-filling sample beside the seed'")" = 8 ] ||
    fail "linesearch's start sample: $(q "$tmp/l.db" "SELECT id, note FROM candidates")"
line1=$(q "$tmp/l.db" "SELECT note FROM candidates WHERE id = 10")
echo "$line1" | grep -Eq '^sweep 1, line 1: ([A-Z]{2}_MR=[0-9]+(, |$)){2,4}$' ||
    fail "linesearch's first line: $line1"
[ "$(q "$tmp/l.db" "SELECT count(*) FROM candidates WHERE status <> 'ok'")" = 0 ] ||
    fail "linesearch candidates not ok"
expect_exit 1 "$AVO" run examples/sgemm_fast.lua --db "$tmp/l2.db" strategy=anneal
expect_in "$tmp/err" "examples/sgemm_fast.lua:"
expect_in "$tmp/err" "strategy=anneal: expected ga or linesearch"
# The budget (issue 30): without generations=, --max-evals governs, so the
# GA does not stop at its default 20 generations short of it (4 + 20 x 3 =
# 64 candidates); with generations= given, that count holds. On the
# synthetic workload (no compiling), so only the GA's loop is judged.
cat > "$tmp/budget.lua" <<'LUA'
local avo = require "avo"
local args = avo.options(..., { generations = { type = "integer", min = 0 } })
return avo.strategy("ga").run{ evaluator = "tests/lua/evaluators/synthetic.lua",
  population = 4, generations = args.generations }
LUA
expect_exit 0 "$AVO" run "$tmp/budget.lua" --db "$tmp/b.db" --max-evals 120
[ "$(q "$tmp/b.db" "SELECT count(*) FROM candidates")" = 120 ] ||
    fail "--max-evals 120 made $(q "$tmp/b.db" "SELECT count(*) FROM candidates") candidates"
expect_exit 0 "$AVO" run "$tmp/budget.lua" --db "$tmp/g.db" --max-evals 120 generations=3
n=$(q "$tmp/g.db" "SELECT count(*) FROM candidates")
[ "$n" -le 13 ] || fail "generations=3 ran past its 3 generations: $n candidates"
echo "sgemm_fast: ok"
