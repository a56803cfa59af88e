#!/bin/sh
# A real single-node Slurm (Debian's slurm-wlm and munge), started here with
# a config in a temp dir and stopped by PID at the end, runs avo's remote
# workers (`avo run --slurm`):
#   1. a CPU sgemm evolution on 3 worker tasks (asked for with srun's own
#      -n 3, which --jobs then follows); one worker process is killed
#      mid-job; the run still finishes, its job ran elsewhere, every
#      evaluation is in the archive exactly once, and the step is gone after;
#   2. an srun that cannot start its step (no such partition): the run ends
#      with a clear message instead of waiting forever, `failed`, exit 3,
#      and `avo resume --slurm` finishes it on a working step; workers that
#      cannot start (--export=NONE: no secret) are named with their reason;
#   3. Ctrl-C (SIGINT) and kill -9 of the engine: the step is cancelled.
# Needs root and slurmctld, slurmd, munged, srun (skip 77 naming what is
# missing, or when the daemons cannot start).
. "$(dirname "$0")/../e2e/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: the test Slurm runs its daemons as root"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: sqlite3 not found"; exit 77; }

s="$tmp/slurm"
engine=""
# The test's own status survives its cleanup (a skip stays a skip), and a
# cleanup that cannot remove everything only says so.
cleanup() {
    rc=$?
    set +e
    [ -n "$engine" ] && kill -9 $engine 2>/dev/null
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

avo_jobs() { squeue -h -o %j | grep -c '^avo-' || true; }
wait_no_avo_jobs() {
    for _ in $(seq 100); do
        [ "$(avo_jobs)" = 0 ] && return 0
        sleep 0.2
    done
    squeue; fail "$1: the Slurm job of the workers is still there"
}

# --- 1. an evolution on 3 Slurm worker tasks; one worker killed mid-job
db="$tmp/run.db"
"$AVO" run examples/quickstart.lua --db "$db" --slurm "--time=30 -n 3" \
    --listen 127.0.0.1:0 --max-evals 24 --retime 0 >"$tmp/run.out" 2>"$tmp/run.err" &
engine=$!
token=""
for _ in $(seq 100); do
    token=$(sed -n 's/.*(Slurm job name avo-\([^;]*\);.*/\1/p' "$tmp/run.err" 2>/dev/null || true)
    [ -n "$token" ] && break
    sleep 0.1
done
[ -n "$token" ] || { cat "$tmp/run.err"; fail "the engine did not start srun"; }
killed=0
for _ in $(seq 1200); do
    for w in $(pgrep -f -- "worker --connect .* --run $token" || true); do
        child=$(pgrep -P "$w" | head -n1 || true)
        # a worker whose serving process has a compiler or runner: mid-job
        if [ -n "$child" ] && pgrep -P "$child" >/dev/null &&
           [ "$(q "$db" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 5 ]; then
            kill -9 "$w"
            killed=1
            break 2
        fi
    done
    sleep 0.05
done
[ $killed = 1 ] || { cat "$tmp/run.err"; fail "no worker was ever seen mid-job"; }
set +e
wait $engine; rc=$?
set -e
engine=""
[ $rc = 0 ] || { cat "$tmp/run.err"; fail "the run exited $rc"; }
err="$tmp/run.err"
expect_in "$err" "srun started 3 worker tasks"
expect_in "$err" "(seed 1, 3 jobs)"
expect_in "$err" "queued again"
expect_in "$err" "done after 24 evaluations"
[ "$(grep -c ' connected$' "$err")" -ge 3 ] || { cat "$err"; fail "expected 3 workers to connect"; }
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 24 ] || fail "expected 24 candidates"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 0 ] ||
    fail "a candidate was never answered"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 24 ] ||
    fail "every candidate should pass: $(q "$db" "SELECT status, reason FROM candidates WHERE status != 'ok'")"
[ "$(q "$db" "SELECT count(DISTINCT key) FROM candidates")" = 24 ] || fail "a candidate was evaluated twice"
[ "$(q "$db" "SELECT count(*) FROM evaluations")" = 144 ] ||
    fail "expected 24 candidates x 6 configs evaluations, got $(q "$db" "SELECT count(*) FROM evaluations")"
[ "$(q "$db" "SELECT count(*) FROM (SELECT candidate_id, config FROM evaluations
    GROUP BY 1, 2 HAVING count(*) > 1)")" = 0 ] || fail "an evaluation is recorded twice"
[ "$(q "$db" "SELECT count(DISTINCT json_extract(result, '\$.worker.name')) FROM candidates")" -ge 2 ] ||
    fail "the evaluations should spread over the Slurm workers"
wait_no_avo_jobs "after the run"

# --- 2. srun cannot start the step: the run ends with a clear message,
# failed (exit 3) and resumable
expect_exit 3 "$AVO" run examples/quickstart.lua --db "$tmp/bad.db" --slurm "--partition=nosuch" \
    --jobs 2 --listen 127.0.0.1:0 --max-evals 10 --retime 0
expect_in "$tmp/err" "no workers left: the Slurm step ended (srun exited with status 1; see $tmp/bad.db.slurm.log)"
expect_in "$tmp/err" "run stopped early"
expect_in "$tmp/bad.db.slurm.log" "nosuch"
[ "$(q "$tmp/bad.db" "SELECT status FROM runs")" = failed ] || fail "the run should be recorded as failed"
pending=$(q "$tmp/bad.db" "SELECT count(*) FROM candidates WHERE status = 'pending'")
expect_in "$tmp/err" "$pending candidate(s) left pending"
# Workers that cannot start say why (here: srun passes them no environment,
# so no secret); the engine prints their words, exit 3.
expect_exit 3 "$AVO" run examples/quickstart.lua --db "$tmp/noenv.db" --slurm "--export=NONE" \
    --jobs 2 --listen 127.0.0.1:0 --max-evals 10 --retime 0
expect_in "$tmp/err" "the workers said: no worker secret"
[ "$(q "$tmp/noenv.db" "SELECT status FROM runs")" = failed ] || fail "--export=NONE: run not failed"
# The failed run resumes on a working Slurm step.
expect_exit 0 "$AVO" resume --db "$tmp/bad.db" --slurm "--time=30" --jobs 2 --listen 127.0.0.1:0
expect_in "$tmp/err" "srun started 2 worker tasks"
[ "$(q "$tmp/bad.db" "SELECT status FROM runs")" = done ] || fail "resume --slurm: run not done"
[ "$(q "$tmp/bad.db" "SELECT count(*) FROM candidates WHERE status <> 'ok'")" = 0 ] ||
    fail "resume --slurm: $(q "$tmp/bad.db" "SELECT status, reason FROM candidates WHERE status <> 'ok'")"
[ "$(q "$tmp/bad.db" "SELECT count(*) FROM candidates")" = 10 ] || fail "resume --slurm: expected 10 candidates"
wait_no_avo_jobs "after the resume"

# --- 3. Ctrl-C and kill -9 of the engine cancel the workers' step
for sig in INT KILL; do
    db="$tmp/sig$sig.db"
    "$AVO" run examples/quickstart.lua --db "$db" --slurm "--time=30" --jobs 2 \
        --listen 127.0.0.1:0 --max-evals 400 >"$db.out" 2>"$db.err" &
    engine=$!
    for _ in $(seq 600); do
        [ "$(q "$db" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 3 ] && break
        sleep 0.1
    done
    [ "$(avo_jobs)" -ge 1 ] || fail "SIG$sig: no Slurm job while the run is going"
    run_token=$(sed -n 's/.*(Slurm job name avo-\([^;]*\);.*/\1/p' "$db.err" | head -n1)
    [ -n "$run_token" ] || { cat "$db.err"; fail "SIG$sig: the engine did not name its Slurm job"; }
    kill -$sig $engine
    set +e
    wait $engine
    set -e
    engine=""
    wait_no_avo_jobs "after SIG$sig to the engine"
    # this run's workers only (other checkouts and tests may run theirs): the
    # supervisors name the run; the serving children are "$AVO worker"
    pat="worker --connect .* --run $run_token|^$AVO worker\$"
    [ -z "$(pgrep -f -- "$pat" || true)" ] ||
        { pgrep -af -- "$pat"; fail "SIG$sig: workers outlived the run"; }
done
echo "slurm: ok"
