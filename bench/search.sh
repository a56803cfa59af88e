#!/bin/sh
# Search quality at equal budget: the ga strategy against random sampling of
# the knob space (the baseline, measured in the same run) on cpu/sgemm, over
# several seeds.  Prints each run's best and the median ratio ga / random.
#
#   meson compile -C build bench-search      or      bench/search.sh build/avo [EVALS] [SEEDS]
set -eu
. "$(dirname "$0")/openblas_env.sh"  # OpenBLAS: detected core, one thread
avo=$(realpath "$1")
evals=${2:-48}
seeds=${3:-3}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AVO_CACHE="${AVO_CACHE:-$tmp/cache}"

cat > "$tmp/random.lua" <<LUA
local avo = require "avo"
return avo.strategy("random").run{ evaluator = "cpu/sgemm", samples = $evals, batch = 8 }
LUA
cat > "$tmp/ga.lua" <<LUA
local avo = require "avo"
return avo.strategy("ga").run{ evaluator = "cpu/sgemm", population = 8, generations = 100,
                               elite = 2, crossover_rate = 0.3 }
LUA

best() { sqlite3 "$1" "SELECT max(score) FROM candidates WHERE status = 'ok'"; }

: > "$tmp/ratios"
for seed in $(seq 1 "$seeds"); do
    "$avo" run "$tmp/random.lua" --db "$tmp/r$seed.db" --seed "$seed" --max-evals "$evals" >/dev/null 2>&1
    "$avo" run "$tmp/ga.lua" --db "$tmp/g$seed.db" --seed "$seed" --max-evals "$evals" >/dev/null 2>&1
    r=$(best "$tmp/r$seed.db")
    g=$(best "$tmp/g$seed.db")
    ratio=$(python3 -c "print(f'{$g / $r:.3f}')")
    echo "$ratio" >> "$tmp/ratios"
    printf 'seed %d: random best %.2f GFLOP/s, ga best %.2f GFLOP/s, ga/random %s\n' "$seed" "$r" "$g" "$ratio"
done
python3 -c "
import statistics
r = [float(x) for x in open('$tmp/ratios')]
print(f'median ga/random over {len(r)} seeds at {$evals} evaluations each: {statistics.median(r):.3f}')"
