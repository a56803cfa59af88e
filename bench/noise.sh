#!/bin/sh
# Timing noise of honest kernels: the spread (MAD/median) avo reports and
# the run-to-run variation of the measured speed, per config of cpu/sgemm
# and cpu/softmax, over ROUNDS evaluations of each seed kernel.  With a
# second binary (an earlier avo), both are measured interleaved in the same
# run and the ratios new/baseline printed.
#
#   meson compile -C build bench-noise    or    bench/noise.sh build/avo [BASELINE_AVO] [ROUNDS]
set -eu
avo=$(realpath "$1")
base=${2:-}
[ -n "$base" ] && base=$(realpath "$base")
rounds=${3:-7}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AVO_CACHE="$tmp/cache"
for ev in cpu/sgemm cpu/softmax; do
    kernel=kernels/$ev.c
    for r in $(seq "$rounds"); do
        for who in new ${base:+base}; do
            bin=$avo
            [ "$who" = base ] && bin=$base
            "$bin" eval "$kernel" --evaluator "$ev" --json >"$tmp/$who-$(echo "$ev" | tr / _)-$r.json" 2>/dev/null || true
        done
    done
done
python3 - "$tmp" "$rounds" ${base:+base} <<'PY'
import glob, json, os, statistics, sys
tmp, rounds, has_base = sys.argv[1], int(sys.argv[2]), len(sys.argv) > 3
def load(who, ev):
    rows = {}
    for path in sorted(glob.glob(os.path.join(tmp, f"{who}-{ev}-*.json"))):
        try:
            r = json.load(open(path))
        except ValueError:
            continue
        for c in r.get("configs", []):
            rate = c.get("gflops") or c.get("gbs") or 0
            if c.get("correct") and rate > 0:
                rows.setdefault(c["name"], []).append((c.get("spread", 0), rate))
    return rows
print(f"{'evaluator/config':32} {'who':5} {'median spread':>14} {'speed cv':>9} {'median rate':>12}")
for ev in ("cpu_sgemm", "cpu_softmax"):
    new = load("new", ev)
    base = load("base", ev) if has_base else {}
    for name in new:
        stats = {}
        for who, rows in (("new", new), ("base", base)):
            if name not in rows:
                continue
            spreads = [s for s, _ in rows[name]]
            rates = [r for _, r in rows[name]]
            cv = statistics.pstdev(rates) / statistics.mean(rates) if len(rates) > 1 else 0
            stats[who] = (statistics.median(spreads), cv, statistics.median(rates))
            print(f"{ev + '/' + name:32} {who:5} {stats[who][0]*100:13.2f}% {cv*100:8.2f}% {stats[who][2]:12.4g}")
        if "base" in stats and stats["base"][0] > 0:
            n, b = stats["new"], stats["base"]
            print(f"{'':32} ratio spread {n[0]/b[0]:.2f}, cv {n[1]/max(b[1],1e-9):.2f}, rate {n[2]/b[2]:.2f}")
PY
