#!/bin/sh
# Searching shape families apart, on a separable space with measurement
# noise (bench/families.lua: the 48 knobs of sgemm_fast.c in four families,
# each an NK landscape scoring its own configs, ~3% noise per measurement,
# known optimum), EVALS evaluations (default 300) for SEEDS seeds (default
# 20), five arms. The GA of examples/sgemm_fast.lua before the families
# were searched at once (population 12, elite 2, tournaments of 3,
# param_tweak of up to 2 knobs) with configs declaring their family's knobs
# and half the children crossed ("grouped 0.5"), the same configs without
# the declaration ("uniform 0.5"), uniform at the GA's former rate
# ("uniform 0.3"); the example's GA now, every child stepping in each family
# and each generation starting with the assembled fastest set per family
# ("assembled 0.5"); and the line search ("linesearch 0", its defaults).
# Prints each arm's median noise-free best / optimum and, per seed, each
# arm's true best over grouped 0.5's (median, and on how many seeds it is
# ahead). In-process scoring: a few minutes on two cores, no timing in it.
#
#   bench/families.sh build/avo [EVALS] [SEEDS]
set -eu
avo=$(realpath "$1")
evals=${2:-300}
seeds=${3:-20}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/run.lua" <<'LUA'
local avo = require "avo"
local args = avo.options(..., { ev = { type = "string", default = "bench/families.lua" },
  crossover_rate = { type = "number", default = 0.5 }, arm = { type = "string" } })
local land = dofile("bench/families.lua")
local best
if args.arm == "linesearch" then
  best = avo.strategy("linesearch").run{ evaluator = args.ev }
else
  local assembled = args.arm == "assembled"
  best = avo.strategy("ga").run{ evaluator = args.ev, population = 12, elite = 2,
    tournament = 3, crossover_rate = args.crossover_rate, operators = { param_tweak = 1 },
    assemble = assembled,
    operator_options = { param_tweak = { max_changes = 2, per_group = assembled } } }
end
print(("true %.9g optimum %.9g"):format(land.true_score(best.knobs), land.optimum()))
LUA
cat >"$tmp/flat.lua" <<'LUA'
local e = dofile("bench/families.lua") -- the same space, no configs[i].knobs
for _, c in ipairs(e.configs) do c.knobs = nil end
return e
LUA
for seed in $(seq 1 "$seeds"); do
    for arm in "grouped 0.5 bench/families.lua" "uniform 0.5 $tmp/flat.lua" \
               "uniform 0.3 $tmp/flat.lua" "assembled 0.5 bench/families.lua" \
               "linesearch 0 bench/families.lua"; do
        set -- $arm
        line=$("$avo" run "$tmp/run.lua" "ev=$3" "crossover_rate=$2" "arm=$1" \
            --db "$tmp/s$seed-$1-$2.db" --seed "$seed" --max-evals "$evals" --retime 0 \
            2>"$tmp/err" | grep '^true') || { cat "$tmp/err" >&2; exit 1; }
        echo "$seed $1 $2 $line"
    done
done >"$tmp/results"
python3 - "$tmp/results" "$evals" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    seed, kind, rate, _, true, _, opt = line.split()
    rows.setdefault(f"{kind} {rate}", {})[int(seed)] = float(true) / float(opt)
print(f"families (48 knobs, 4 families, ~3% noise), {sys.argv[2]} evaluations, {len(rows['grouped 0.5'])} seeds")
for arm, v in rows.items():
    print(f"  {arm:<12} median true best / optimum {statistics.median(v.values()):.4f}")
g = rows["grouped 0.5"]
for arm in ("uniform 0.5", "uniform 0.3", "assembled 0.5", "linesearch 0"):
    ratios = [rows[arm][s] / g[s] for s in g]
    wins = sum(r > 1 for r in ratios)
    print(f"  {arm} / grouped 0.5: median {statistics.median(ratios):.4f} per seed, "
          f"ahead on {wins} of {len(ratios)} seeds")
PY
