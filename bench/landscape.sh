#!/bin/sh
# Strategies at equal budget on a noise-free rugged search space
# (bench/landscape.lua: an NK landscape over ten 4-valued knobs, known
# optimum): random sampling — the baseline, measured in the same run — ga,
# islands, map_elites and surrogate, EVALS evaluations a run (default 200), SEEDS seeds
# (default 5), declared as an experiment (bench/landscape_experiment.lua,
# whose budget and seeds the arguments replace) and run with `avo experiment`.
# Prints each strategy's median best / optimum and its median ratio to
# random's best on the same seed, and writes the experiment report (median,
# IQR, bootstrap CI, rank tests, learning curves) as OUT.html/.csv/.json.
#
#   meson compile -C build bench-landscape
#   bench/landscape.sh build/avo [EVALS] [SEEDS] [OUT]
set -eu
. "$(dirname "$0")/openblas_env.sh"  # OpenBLAS: detected core, one thread
avo=$(realpath "$1")
evals=${2:-200}
seeds=${3:-5}
out=$(realpath -m "${4:-landscape-report}")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/optimum.lua" <<'LUA'
print(("optimum %.17g"):format(dofile("bench/landscape.lua").optimum()))
LUA
opt=$("$avo" run "$tmp/optimum.lua" --db "$tmp/optimum.db" | sed -n 's/^optimum //p')

sed "s/^local EVALS, SEEDS = .*/local EVALS, SEEDS = $evals, $seeds/" bench/landscape_experiment.lua \
    >"$tmp/landscape_experiment.lua"
"$avo" experiment "$tmp/landscape_experiment.lua" --db "$tmp/landscape.db" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; echo "landscape: the experiment failed" >&2; exit 1; }
"$avo" experiment report --db "$tmp/landscape.db" --out "$out" >/dev/null
python3 - "$out.json" "$opt" <<'PY'
import json, statistics, sys
rep = json.load(open(sys.argv[1]))
opt = float(sys.argv[2])
best = {}
for c in rep["cells"]:
    if c["state"] == "finished":
        best.setdefault(c["arm"], {})[c["seed"]] = c["best"]
evals = rep["groups"][0]["budget"]
print(f"NK landscape (N = 10, K = 2, 4^10 points), optimum {opt:.4f}, budget {evals}, "
      f"{len(best['random'])} seeds")
print(f"{'strategy':<12} {'median best/optimum':>20} {'median ratio to random':>24}")
for s in ("random", "ga", "islands", "map_elites", "surrogate"):
    frac = statistics.median(b / opt for b in best[s].values())
    ratio = statistics.median(best[s][k] / best["random"][k] for k in best[s])
    print(f"{s:<12} {frac:>20.4f} {ratio:>24.4f}")
for g in rep["groups"]:
    for t in g["tests"]:
        print(f"{t['a']} vs {t['b']}: A12 {t['a12']:.3f} ({t['magnitude']}), p {t['p']:.3g}, "
              f"Holm {t['p_holm']:.3g}")
PY
echo "report: $out.html"
