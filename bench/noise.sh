#!/bin/sh
# Timing noise of honest kernels: the spread (MAD/median) avo reports and
# the run-to-run variation of the measured speed, per config of cpu/sgemm
# and cpu/softmax, over ROUNDS evaluations of each seed kernel.  With a
# second binary (an earlier avo), both are measured interleaved in the same
# run and the ratios new/baseline printed.
#
# Then whether the interval avo reports covers that variation: REPS runs
# each evaluate the sgemm and softmax seeds and re-time them at the end
# (--retime 1, 3 rounds: lua/avo/retime.lua), and the fraction of the
# ROUNDS independent `avo eval` scores above that fall inside each run's
# re-timed interval is printed beside the fraction inside the within-process
# spread the evaluation reports (score +- MAD/median, the median of its
# configs; it understates the variation between processes, issue 21).
#
#   meson compile -C build bench-noise    or    bench/noise.sh build/avo [BASELINE_AVO] [ROUNDS] [REPS]
set -eu
. "$(dirname "$0")/openblas_env.sh"  # OpenBLAS: detected core, one thread
avo=$(realpath "$1")
base=${2:-}
[ -n "$base" ] && base=$(realpath "$base")
rounds=${3:-7}
reps=${4:-3}
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

# Coverage of the reported intervals (new binary only).
cat > "$tmp/seed.lua" <<'LUA'
local avo = require "avo"
local ev = avo.evaluator((...).evaluator)
avo.evaluate(ev, ev:seed())
LUA
for ev in cpu/sgemm cpu/softmax; do
    for r in $(seq "$reps"); do
        "$avo" run "$tmp/seed.lua" --db "$tmp/cov-$(echo "$ev" | tr / _)-$r.db" --jobs 1 --seed "$r" \
            --retime 1 --retime-rounds 3 evaluator="$ev" >/dev/null 2>&1 || true
    done
done
python3 - "$tmp" "$reps" <<'PY'
import glob, json, os, sqlite3, statistics, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
print()
print(f"{'evaluator':12} {'run':>3} {'recorded':>10} {'within-process interval':>26} {'covers':>7}"
      f" {'re-timed interval':>22} {'covers':>7}")
for ev in ("cpu_sgemm", "cpu_softmax"):
    scores = []
    for path in sorted(glob.glob(os.path.join(tmp, f"new-{ev}-*.json"))):
        try:
            r = json.load(open(path))
        except ValueError:
            continue
        if r.get("status") == "ok" and r.get("score", 0) > 0:
            scores.append(r["score"])
    if not scores:
        continue
    within_cov, retimed_cov = [], []
    for rep in range(1, reps + 1):
        db = os.path.join(tmp, f"cov-{ev}-{rep}.db")
        if not os.path.exists(db):
            continue
        con = sqlite3.connect(db)
        row = con.execute("SELECT score, id FROM candidates WHERE status = 'ok'").fetchone()
        ev_row = con.execute("SELECT data FROM events WHERE kind = 'retimed'").fetchone()
        if not row or not ev_row:
            continue
        score, cid = row
        spreads = [s for (s,) in con.execute(
            "SELECT spread FROM evaluations WHERE candidate_id = ? AND spread IS NOT NULL", (cid,))]
        spread = statistics.median(spreads) if spreads else 0
        lo_w, hi_w = score * (1 - spread), score * (1 + spread)
        e = json.loads(ev_row[0])["ranked"][0]
        lo, hi = e["low"], e["high"]
        cw = sum(lo_w <= s <= hi_w for s in scores) / len(scores)
        cr = sum(lo <= s <= hi for s in scores) / len(scores)
        within_cov.append(cw)
        retimed_cov.append(cr)
        print(f"{ev:12} {rep:3} {score:10.4g} {f'[{lo_w:.4g}, {hi_w:.4g}]':>26} {cw*100:6.0f}%"
              f" {f'[{lo:.4g}, {hi:.4g}]':>22} {cr*100:6.0f}%")
    if within_cov:
        print(f"{ev:12} mean coverage of {len(scores)} independent processes: within-process "
              f"{statistics.mean(within_cov)*100:.0f}%, re-timed {statistics.mean(retimed_cov)*100:.0f}%")
PY
