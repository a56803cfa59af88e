#!/bin/sh
# Crossover by knob group against uniform crossover, on a separable space
# with measurement noise (bench/families.lua: the 48 knobs of sgemm_fast.c in
# four families, each an NK landscape scoring its own configs, ~3% noise per
# measurement, known optimum). The same GA (examples/sgemm_fast.lua's:
# population 12, elite 2, tournaments of 3, param_tweak of up to 2 knobs)
# runs EVALS evaluations (default 300) for SEEDS seeds (default 20) in three
# arms: configs declaring their family's knobs and half the children crossed
# ("grouped 0.5"), the same configs without the declaration ("uniform 0.5"),
# and uniform at the GA's former rate ("uniform 0.3"). Prints each arm's
# median noise-free best / optimum and, per seed, grouped's true best over
# each uniform arm's (median, and how many seeds grouped wins). In-process
# scoring: a minute or so on two cores, no timing in it.
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
  crossover_rate = { type = "number", default = 0.5 } })
local land = dofile("bench/families.lua")
local best = avo.strategy("ga").run{ evaluator = args.ev, population = 12, elite = 2,
  tournament = 3, crossover_rate = args.crossover_rate, operators = { param_tweak = 1 },
  operator_options = { param_tweak = { max_changes = 2 } } }
print(("true %.9g optimum %.9g"):format(land.true_score(best.knobs), land.optimum()))
LUA
cat >"$tmp/flat.lua" <<'LUA'
local e = dofile("bench/families.lua") -- the same space, no configs[i].knobs
for _, c in ipairs(e.configs) do c.knobs = nil end
return e
LUA
for seed in $(seq 1 "$seeds"); do
    for arm in "grouped 0.5 bench/families.lua" "uniform 0.5 $tmp/flat.lua" "uniform 0.3 $tmp/flat.lua"; do
        set -- $arm
        line=$("$avo" run "$tmp/run.lua" "ev=$3" "crossover_rate=$2" --db "$tmp/s$seed-$1-$2.db" \
            --seed "$seed" --max-evals "$evals" --retime 0 2>"$tmp/err" | grep '^true') ||
            { cat "$tmp/err" >&2; exit 1; }
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
for arm in ("uniform 0.5", "uniform 0.3"):
    ratios = [g[s] / rows[arm][s] for s in g]
    wins = sum(r > 1 for r in ratios)
    print(f"  grouped 0.5 / {arm}: median {statistics.median(ratios):.4f} per seed, "
          f"grouped ahead on {wins} of {len(ratios)} seeds")
PY
