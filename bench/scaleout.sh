#!/bin/sh
# Throughput of 1, 2 and 4 workers: local (pipes) vs remote over TCP on
# loopback (`avo worker --connect`) vs Slurm (`--slurm`, a single-node Slurm
# started here as root like tests/slurm; skipped with a note when it cannot
# start).  Trivial candidates (bench/overhead.lua, compile cache warm), so
# the numbers are the engine's and the transport's, not a kernel's.  Each
# cell is the median of REPS runs; ratios are to local with the same number
# of workers, measured in this run.  The network path's cost per candidate
# is (wall time per candidate per worker) remote minus local, in the steady
# state (first result to last); starting the workers shows as the delay to
# the first result.
#
#   meson compile -C build bench-scaleout   or   bench/scaleout.sh build/avo [COUNT] [REPS]
set -eu
avo=$(realpath "$1")
count=${2:-150}
reps=${3:-3}
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
chmod 755 "$tmp"
export AVO_CACHE="$tmp/cache"
export AVO_WORKER_SECRET=bench-secret-0123456789abcdef
have_slurm=0
cleanup() {
    [ $have_slurm = 1 ] && cluster_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
. "$root/tests/slurm/cluster.sh"

# Fill the compile cache; not measured.
"$avo" run bench/overhead.lua --db "$tmp/warm.db" --jobs 2 count="$count" >/dev/null 2>&1

if cluster_start "$tmp/slurm" >/dev/null 2>&1; then
    have_slurm=1
else
    echo "note: no Slurm column: ${cluster_error:-the test cluster did not start}"
fi

# one MODE WORKERS REP: run the benchmark once; prints "evals/s per_candidate_s"
one() {
    mode=$1 workers=$2 rep=$3
    db="$tmp/$mode-$workers-$rep.db"
    case $mode in
    local)
        "$avo" run bench/overhead.lua --db "$db" --jobs "$workers" count="$count" >/dev/null 2>&1 ;;
    tcp)
        "$avo" run bench/overhead.lua --db "$db" --jobs 0 --listen 127.0.0.1:0 \
            count="$count" >/dev/null 2>"$db.err" &
        engine=$!
        address=""
        while [ -z "$address" ]; do
            sleep 0.05
            address=$(sed -n 's/^avo: workers connect to \([^ ]*\) .*/\1/p' "$db.err" 2>/dev/null || true)
        done
        pids=""
        for _ in $(seq "$workers"); do
            "$avo" worker --connect "$address" 2>/dev/null &
            pids="$pids $!"
        done
        wait $engine
        for p in $pids; do wait "$p" || true; done ;;
    slurm)
        "$avo" run bench/overhead.lua --db "$db" --jobs "$workers" --slurm "" \
            --listen 127.0.0.1:0 count="$count" >/dev/null 2>&1 ;;
    esac
    python3 - "$db" "$count" "$workers" <<'PY'
import sqlite3, sys
db, count, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
first, last, start, n = sqlite3.connect(db).execute(
    "SELECT min(evaluated_at), max(evaluated_at), min(created_at), count(*) FROM candidates"
    " WHERE status = 'ok'").fetchone()
assert n == count, f"{db}: {n} of {count} candidates ok"
# Steady state: first result to last, so starting workers (an srun step,
# a connect) is reported apart, as the delay to the first result.
span = (last - first) / (count - 1)
print(f"{1 / span:.3f} {span * workers:.6f} {first - start:.3f}")
PY
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

modes="local tcp"
[ $have_slurm = 1 ] && modes="$modes slurm"
echo "scale-out: $count trivial candidates per run, median of $reps runs, $(nproc) cores"
printf "%-8s %-6s %10s %10s %16s %18s %14s\n" workers mode "evals/s" "vs local" "ms/cand/worker" \
    "network ms/cand" "first result s"
for workers in 1 2 4; do
    for mode in $modes; do
        : >"$tmp/rate" && : >"$tmp/per" && : >"$tmp/first"
        for rep in $(seq "$reps"); do
            one $mode $workers $rep >"$tmp/line"
            cut -d' ' -f1 "$tmp/line" >>"$tmp/rate"
            cut -d' ' -f2 "$tmp/line" >>"$tmp/per"
            cut -d' ' -f3 "$tmp/line" >>"$tmp/first"
        done
        rate=$(median <"$tmp/rate")
        per=$(median <"$tmp/per")
        first=$(median <"$tmp/first")
        if [ $mode = local ]; then
            base_rate=$rate base_per=$per
        fi
        awk -v w=$workers -v m=$mode -v r=$rate -v p=$per -v br=$base_rate -v bp=$base_per \
            -v f=$first 'BEGIN {
            over = (m == "local") ? "-" : sprintf("%+.2f", (p - bp) * 1000)
            printf "%-8d %-6s %10.1f %9.2fx %16.2f %18s %14.2f\n", w, m, r, r / br, p * 1000, over, f }'
    done
done
