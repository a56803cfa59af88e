#!/bin/sh
# What an LLM candidate costs the engine: llm_mutate runs of COUNT
# candidates of bench/throughput.lua (ga, population POPULATION) against
# the loopback fake LLM server, an OLD and a NEW binary alternating, ROUNDS
# rounds (--jobs 1, AVO_LLM_CONCURRENCY=8, as bench/vs_openevolve.sh).
# Prints each run's wall and engine CPU (user + system, from
# /usr/bin/time) and the server's CPU, then the medians and new/old.  The
# figures of docs/benchmarks.md's seventh pass.
#
#   bench/llm_cost.sh OLD_AVO NEW_AVO [COUNT=2000] [ROUNDS=3] [POPULATION=100]
set -eu
[ $# -ge 2 ] || { sed -n '2,10p' "$0"; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") count=${3:-2000} rounds=${4:-3} population=${5:-100}
cd "$(dirname "$0")/.."
. bench/fake_llm.sh
start_fake_llm llm_cost
base=$fake_base
tick=$(getconf CLK_TCK)

# server_cpu: the server's user + system seconds so far
server_cpu() {
    awk -v t="$tick" '{ printf "%.2f\n", ($14 + $15) / t }' "/proc/$server/stat"
}

# one AVO NAME: one run; appends "wall cpu server" to $tmp/NAME
one() {
    s0=$(server_cpu)
    rm -f "$tmp/a.db"*
    AVO_LLM_CONCURRENCY=8 /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$1" run bench/throughput.lua \
        --db "$tmp/a.db" --max-evals "$count" --jobs 1 --retime 0 op=llm_mutate \
        population="$population" base_url="$base" >/dev/null 2>"$tmp/err" ||
        { tail -n 5 "$tmp/err" >&2; exit 1; }
    s1=$(server_cpu)
    awk -v s0="$s0" -v s1="$s1" '{ printf "%.2f %.2f %.2f\n", $1, $2 + $3, s1 - s0 }' \
        "$tmp/time" | tee -a "$tmp/$2" | sed "s/^/  $2: wall, engine CPU, server CPU (s): /"
}

echo "llm_mutate, $count candidates, population $population, $rounds rounds alternating"
r=0
while [ $r -lt "$rounds" ]; do
    r=$((r + 1))
    one "$old" old
    one "$new" new
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for col in 1 2; do
    o=$(cut -d' ' -f$col "$tmp/old" | median)
    n=$(cut -d' ' -f$col "$tmp/new" | median)
    what=$([ $col = 1 ] && echo "wall" || echo "engine CPU")
    awk -v o="$o" -v n="$n" -v w="$what" -v c="$count" \
        'BEGIN { printf "median %s: old %.2f s, new %.2f s, new/old %.2f (new %.3f ms a candidate)\n", w, o, n, n / o, 1000 * n / c }'
done
