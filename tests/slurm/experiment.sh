#!/bin/sh
# `avo experiment` on a real single-node Slurm (tests/slurm/cluster.sh): a
# grid whose file says `slurm = ...` runs every cell's evaluations on a
# Slurm job step of its own (two cells at once, two tasks each); every
# evaluation is recorded once, done by a remote worker, and no step is left;
# a cell interrupted there resumes on a Slurm step again.
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
# A test stopped by meson (timeout, Ctrl-C) stops its daemons too: dash runs
# the EXIT trap only on exit, so the signals exit.
trap "exit 143" TERM
trap "exit 130" INT
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
# A cell interrupted on Slurm resumes on a Slurm step again: SIGTERM to the
# runner after the first evaluation, then a re-run: each resumed cell starts
# a step of its own, and every evaluation of the finished grid, before and
# after the interruption, was made by a remote worker.
tdb="$tmp/term.db"
"$AVO" experiment tests/slurm/experiment.lua --db "$tdb" >"$tmp/t.out" 2>"$tmp/t.err" &
pid=$!
waited=0
until [ "$(q "$tdb" "SELECT count(*) FROM candidates WHERE status = 'ok'" 2>/dev/null || echo 0)" -ge 1 ]; do
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 1500 ] || fail "no evaluation finished within 5 minutes"
done
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" = 143 ] || { cat "$tmp/t.err"; fail "SIGTERM: exit $rc, expected 143"; }
[ "$(q "$tdb" "SELECT count(*) FROM runs WHERE status = 'interrupted'")" -ge 1 ] ||
    fail "SIGTERM: no cell recorded itself interrupted"
expect_exit 0 "$AVO" experiment tests/slurm/experiment.lua --db "$tdb"
[ "$(q "$tdb" "SELECT count(*) FROM runs WHERE status = 'done'")" = 4 ] || fail "resume did not finish"
[ "$(q "$tdb" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 12 ] ||
    fail "expected 4 cells x 3 verified evaluations: $(q "$tdb" "SELECT run_id, status, count(*) FROM candidates GROUP BY 1, 2")"
[ "$(q "$tdb" "SELECT count(*) FROM candidates WHERE json_extract(result, '\$.worker.name') IS NULL")" = 0 ] ||
    fail "a resumed cell evaluated on local workers, not on its Slurm step"
resumed=0
for log in "$tdb".cells/e1/*.log; do
    grep -q "^avo: resuming run" "$log" || continue
    resumed=$((resumed + 1))
    sed -n '/^avo: resuming run/,$p' "$log" | grep -q "srun started 2 worker tasks" ||
        { cat "$log" >&2; fail "a resumed cell did not start a Slurm step"; }
done
[ "$resumed" -ge 1 ] || fail "no cell was resumed"
for _ in $(seq 100); do
    [ "$(squeue -h -o %j | grep -c '^avo-' || true)" = 0 ] && break
    sleep 0.2
done
[ "$(squeue -h -o %j | grep -c '^avo-' || true)" = 0 ] || { squeue; fail "a Slurm step outlived its cell"; }
echo "slurm experiment: ok"
