#!/bin/sh
# Strategies at equal budget on a noise-free rugged search space
# (bench/landscape.lua: an NK landscape over ten 4-valued knobs, known
# optimum): random sampling — the baseline, measured in the same run — ga,
# islands, map_elites and surrogate, each with --max-evals EVALS for SEEDS seeds.
# Prints each strategy's median best / optimum and its median ratio to
# random's best on the same seed.
#
#   meson compile -C build bench-landscape   or   bench/landscape.sh build/avo [EVALS] [SEEDS]
set -eu
avo=$(realpath "$1")
evals=${2:-200}
seeds=${3:-5}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

EV=bench/landscape.lua
strategy() { # NAME OPTIONS
    printf 'local avo = require "avo"\nreturn avo.strategy("%s").run{ evaluator = "%s", %s }\n' \
        "$1" "$EV" "$2" >"$tmp/$1.lua"
}
strategy random "samples = $evals, batch = 8"
strategy ga "population = 16, generations = 1000, elite = 2, crossover_rate = 0.3"
strategy islands "islands = 4, population = 8, generations = 1000, elite = 1, migration_interval = 5"
strategy map_elites "dims = { 'K1', 'K2' }, initial = 16, batch = 8, iterations = 1000"
strategy surrogate "iterations = 1000"
cat >"$tmp/optimum.lua" <<'LUA'
print(("optimum %.17g"):format(dofile("bench/landscape.lua").optimum()))
LUA
opt=$("$avo" run "$tmp/optimum.lua" --db "$tmp/optimum.db" | sed -n 's/^optimum //p')

: >"$tmp/results"
for seed in $(seq 1 "$seeds"); do
    for s in random ga islands map_elites surrogate; do
        "$avo" run "$tmp/$s.lua" --db "$tmp/$s$seed.db" --seed "$seed" --max-evals "$evals" \
            >/dev/null 2>&1 || { echo "landscape: $s (seed $seed) failed" >&2; exit 1; }
        best=$(sqlite3 "$tmp/$s$seed.db" "SELECT max(score) FROM candidates WHERE status = 'ok'")
        echo "$seed $s $best" >>"$tmp/results"
    done
done
python3 - "$tmp/results" "$opt" "$evals" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
opt, evals = float(sys.argv[2]), sys.argv[3]
best = {}
for seed, s, b in rows:
    best.setdefault(s, {})[seed] = float(b)
print(f"NK landscape (N = 10, K = 2, 4^10 points), optimum {opt:.4f}, {evals} evaluations a run, "
      f"{len(best['random'])} seeds")
print(f"{'strategy':<12} {'median best/optimum':>20} {'median ratio to random':>24}")
for s in ("random", "ga", "islands", "map_elites", "surrogate"):
    frac = statistics.median(b / opt for b in best[s].values())
    ratio = statistics.median(best[s][k] / best["random"][k] for k in best[s])
    print(f"{s:<12} {frac:>20.4f} {ratio:>24.4f}")
PY
