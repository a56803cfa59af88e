#!/bin/sh
# `avo experiment` on a real single-node Slurm (tests/slurm/cluster.sh): a
# grid whose file says `slurm = ...` runs every cell's evaluations on a
# Slurm job step of its own (two cells at once, two tasks each); every
# evaluation is recorded once, done by a remote worker, and no step is left.
# Needs root and slurmctld, slurmd, munged, srun (skip 77 naming what is
# missing, or when the daemons cannot start).
. "$(dirname "$0")/../e2e/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: the test Slurm runs its daemons as root"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: sqlite3 not found"; exit 77; }

s="$tmp/slurm"
cleanup() {
    rc=$?
    set +e
    cluster_stop
    for _ in 1 2 3 4 5; do
        rm -rf "$tmp" 2>/dev/null && break
        sleep 1
    done
    [ ! -e "$tmp" ] || echo "note: could not remove $tmp" >&2
    exit $rc
}
trap cleanup EXIT
. "$(dirname "$0")/cluster.sh"
chmod 755 "$tmp"
cluster_start "$s" || { echo "skip: $cluster_error"; cluster_logs; exit 77; }

db="$tmp/grid.db"
expect_exit 0 "$AVO" experiment tests/slurm/experiment.lua --db "$db"
expect_in "$tmp/err" "4 of 4 cells finished, 0 of them failed"
[ "$(q "$db" "SELECT count(*) FROM runs WHERE status = 'done'")" = 4 ] || fail "not every cell is done"
for log in "$db".cells/e1/*.log; do
    expect_in "$log" "srun started 2 worker tasks"
done
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 12 ] ||
    fail "expected 4 cells x 3 verified evaluations: $(q "$db" "SELECT run_id, status, reason FROM candidates")"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE json_extract(result, '\$.worker.name') IS NULL")" = 0 ] ||
    fail "an evaluation was not made by a remote worker"
expect_exit 0 "$AVO" experiment report --db "$db" --out "$tmp/rep"
python3 tests/e2e/experiment/check_report.py "$db" "$tmp/rep.json" || fail "report differs from the archive"
for _ in $(seq 100); do
    [ "$(squeue -h -o %j | grep -c '^avo-' || true)" = 0 ] && break
    sleep 0.2
done
[ "$(squeue -h -o %j | grep -c '^avo-' || true)" = 0 ] || { squeue; fail "a Slurm step outlived its cell"; }
echo "slurm experiment: ok"
