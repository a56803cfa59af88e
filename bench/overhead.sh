#!/bin/sh
# Engine overhead per candidate (scheduling, IPC, archive) with a trivial
# kernel, and evaluations per second.  Baseline, measured in the same run:
# the time the workers themselves spend per candidate (runner fork, dlopen,
# verification; compile cache warm).
#
#   meson compile -C build bench      or      bench/overhead.sh build/avo [COUNT]
set -eu
avo=$(realpath "$1")
count=${2:-300}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AVO_CACHE="$tmp/cache"

# Pass 1 fills the compile cache; it is not measured.
"$avo" run bench/overhead.lua --db "$tmp/warm.db" --jobs 2 count="$count" >/dev/null 2>&1

measure() {
    jobs=$1
    db="$tmp/j$jobs.db"
    start=$(date +%s.%N)
    "$avo" run bench/overhead.lua --db "$db" --jobs "$jobs" count="$count" >/dev/null 2>&1
    end=$(date +%s.%N)
    python3 - "$db" "$start" "$end" "$jobs" "$count" <<'PY'
import json, sqlite3, statistics, sys
db, start, end, jobs, count = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
con = sqlite3.connect(db)
rows = con.execute("SELECT created_at, evaluated_at, result FROM candidates ORDER BY id").fetchall()
assert len(rows) == count, (len(rows), count)
worker = [json.loads(r[2]).get("run_s", 0) + json.loads(r[2]).get("compile_s", 0) for r in rows]
span = rows[-1][1] - rows[0][0]             # first submission to last result
per_cand = span / count * jobs               # wall time each slot spent per candidate
overhead = [per_cand - w for w in worker]
print(f"jobs={jobs}: {count} candidates in {span:.2f} s (process {end-start:.2f} s): "
      f"{count/span:.1f} evals/s")
print(f"  per candidate: wall/slot {per_cand*1e3:.2f} ms, worker median {statistics.median(worker)*1e3:.2f} ms, "
      f"engine overhead median {statistics.median(overhead)*1e3:.2f} ms "
      f"(ratio to worker time {statistics.median(overhead)/max(statistics.median(worker),1e-9):.2f})")
PY
}
measure 1
measure 2
