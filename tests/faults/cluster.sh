#!/bin/sh
# Cluster faults with remote workers started by hand (`avo run --jobs 0
# --listen`; the Slurm cases are in tests/slurm):
#   - remote workers compile into their own AVO_CACHE, never the engine's
#     path (issue 20, item 16);
#   - a worker that stops answering (its supervisor or its serving process
#     SIGSTOPped) loses its job to another worker; no candidate is charged a
#     timeout for it (item 14);
#   - a worker whose serving process is killed mid-job says so itself (issue
#     33): the job is retried as an infrastructure fault;
#   - losing every worker ends the run `failed`, exit 3, its unevaluated
#     candidates pending and counted as pending in the summary and in `avo
#     runs` (item 11); `avo resume --listen` finishes it on new remote
#     workers (item 12);
#   - resume's and rebench's worker options are checked as `avo run` checks
#     them (items 12, 15).
# (The runs re-time nothing at their end, --retime 0: not what is tested.)
. "$(dirname "$0")/lib.sh"
export AVO_WORKER_SECRET=test-secret-0123456789abcdef
chmod 755 "$tmp" # compilers and kernels run as sandbox uids under the caches
pids=""
cleanup() {
    rc=$?
    for p in $pids; do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$tmp" 2>/dev/null || echo "note: could not remove $tmp" >&2
    exit $rc
}
trap cleanup EXIT

# start_engine DB CMD ARGS...: `avo CMD` in the background; sets $engine, $address
start_engine() {
    db=$1; shift
    "$AVO" "$@" >"$db.out" 2>"$db.err" &
    engine=$!
    pids="$pids $engine"
    address=""
    for _ in $(seq 200); do
        address=$(sed -n 's/^avo: workers connect to \([^ ]*\) .*/\1/p' "$db.err" 2>/dev/null || true)
        [ -n "$address" ] && return 0
        sleep 0.1
    done
    cat "$db.err"; fail "the engine did not listen"
}
# start_worker NAME: a remote worker with a cache of its own; sets $worker
start_worker() {
    AVO_CACHE="$tmp/cache-$1" "$AVO" worker --connect "$address" 2>"$tmp/w$1.err" &
    worker=$!
    pids="$pids $worker"
}
# busy SUPERVISOR: true while its serving process runs a job (has a child)
busy() {
    child=$(pgrep -P "$1" | head -n1 || true)
    [ -n "$child" ] && pgrep -P "$child" >/dev/null
}
wait_busy() {
    for _ in $(seq 600); do busy "$1" && return 0; sleep 0.05; done
    fail "worker $1 never ran a job"
}

# --- a worker stopped mid-job (its supervisor, then another's serving
# process) loses its job; every candidate passes, none timed out
export AVO_CACHE="$tmp/engine-cache"
start_engine "$tmp/h.db" run examples/quickstart.lua --db "$tmp/h.db" --jobs 0 --retime 0 \
    --listen 127.0.0.1:0 --max-evals 16
start_worker a; wa=$worker
start_worker b; wb=$worker
start_worker c; wc=$worker
wait_busy "$wa"
kill -STOP "$wa"
wait_busy "$wb"
served=$(pgrep -P "$wb" | head -n1)
kill -STOP "$served"
set +e
wait "$engine"; rc=$?
set -e
[ $rc = 0 ] || { cat "$tmp/h.db.err"; fail "the run with stopped workers exited $rc"; }
# A stopped worker is found by its silence, or (when it was stopped before
# its heartbeat could count the job it had just opened) by a message it
# never acknowledged; either way its job goes to another worker.
n=$(grep -Ec "stopped answering: no heartbeat for [0-9]* s while running job|dropped \(never received the engine's last message" "$tmp/h.db.err" || true)
[ "$n" = 2 ] || { cat "$tmp/h.db.err"; fail "expected both stopped workers to lose their jobs, saw $n"; }
expect_in "$tmp/h.db.err" "queued again"
[ "$(q "$tmp/h.db" "SELECT count(*) FROM candidates WHERE status = 'timeout'")" = 0 ] ||
    fail "a candidate was charged a timeout for a stopped worker"
[ "$(q "$tmp/h.db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 16 ] ||
    fail "every candidate should pass: $(q "$tmp/h.db" "SELECT status, reason FROM candidates WHERE status <> 'ok'")"
[ "$(q "$tmp/h.db" "SELECT status FROM runs")" = done ] || fail "the run should be done"
# The workers' own caches hold the objects; the engine's path holds none.
[ "$(find "$tmp/cache-c/cpu" -name '*.so' | wc -l)" -ge 1 ] ||
    fail "worker c did not compile into its own AVO_CACHE"
[ "$(find "$tmp/engine-cache" -name '*.so' 2>/dev/null | wc -l)" = 0 ] ||
    fail "a remote worker wrote into the cache path the engine sent"
for p in $wa $wb $wc; do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done
kill -9 "$served" 2>/dev/null || true

# --- issue 33: the serving process of a remote worker killed mid-job.  Its
# supervisor says so on the authenticated channel ("died"), so the engine
# treats it as a local worker's death (worker_lost: an infrastructure fault,
# retried), and reconnects with a fresh process; a cut connection would
# not have been charged at all.  Every candidate passes.
start_engine "$tmp/d.db" run examples/quickstart.lua --db "$tmp/d.db" --jobs 0 --retime 0 \
    --listen 127.0.0.1:0 --max-evals 8
start_worker d; wd=$worker
# past the baseline's job (the first), on a candidate's
for _ in $(seq 600); do
    [ "$(q "$tmp/d.db" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 1 ] && break
    sleep 0.1
done
wait_busy "$wd"
served=$(pgrep -P "$wd" | head -n1)
kill -9 "$served"
set +e
wait "$engine"; rc=$?
set -e
err="$tmp/d.db.err"
[ $rc = 0 ] || { cat "$err"; fail "the run whose serving process was killed exited $rc"; }
expect_in "$err" "its serving process died while running job"
expect_in "$err" "infrastructure fault, not the candidate's (worker died with signal 9 (Killed) (on remote worker"
expect_in "$tmp/wd.err" "the serving process died; reconnecting with a fresh one"
if grep -q "lost (\|giving up" "$err"; then cat "$err"; fail "a job was charged for the death"; fi
[ "$(q "$tmp/d.db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 8 ] ||
    fail "every candidate should pass: $(q "$tmp/d.db" "SELECT status, reason FROM candidates WHERE status <> 'ok'")"
kill -9 "$wd" 2>/dev/null || true

# --- every worker lost: failed, exit 3, the rest pending everywhere
AVO_WORKER_GRACE=2 start_engine "$tmp/g.db" run examples/quickstart.lua --db "$tmp/g.db" \
    --jobs 0 --listen 127.0.0.1:0 --max-evals 12 --retime 0
start_worker g; wg=$worker
for _ in $(seq 600); do
    [ "$(q "$tmp/g.db" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 3 ] && break
    sleep 0.1
done
wait_busy "$wg"
kill -9 "$wg"
set +e
wait "$engine"; rc=$?
set -e
err="$tmp/g.db.err"
[ $rc = 3 ] || { cat "$err"; fail "losing every worker exited $rc, expected 3"; }
expect_in "$err" "no workers left: none connected for 2 s"
expect_in "$err" "avo resume --db $tmp/g.db"
[ "$(q "$tmp/g.db" "SELECT status FROM runs")" = failed ] || fail "the run should be recorded failed"
pending=$(q "$tmp/g.db" "SELECT count(*) FROM candidates WHERE status = 'pending'")
failed=$(q "$tmp/g.db" "SELECT count(*) FROM candidates WHERE status NOT IN ('ok', 'pending')")
finished=$(q "$tmp/g.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")
[ "$pending" -ge 1 ] || fail "no candidate was left pending"
expect_in "$err" "$pending candidate(s) left pending"
expect_in "$err" "failed after $finished evaluations ($failed failed, $pending left pending)"
expect_exit 0 "$AVO" runs --db "$tmp/g.db"
expect_in "$tmp/out" "run 1: $pending candidate(s) pending"

# --- resume: its worker options checked as `avo run` checks them
expect_exit 2 "$AVO" resume --db "$tmp/g.db" --jobs 0
expect_in "$tmp/err" "--jobs 0 (no local workers) needs --listen"
# (device 99 is visible nowhere: the same refusal with or without GPUs)
expect_exit 2 "$AVO" run examples/quickstart.lua --db "$tmp/x.db" --devices 99
cp "$tmp/err" "$tmp/run-devices.err"
expect_in "$tmp/err" "--devices 99:"
expect_exit 2 "$AVO" resume --db "$tmp/g.db" --devices 99
cmp -s "$tmp/err" "$tmp/run-devices.err" || { cat "$tmp/err" "$tmp/run-devices.err"; fail "resume --devices 99 is not refused as run refuses it"; }
expect_exit 2 "$AVO" rebench --db "$tmp/h.db" --devices 99
cmp -s "$tmp/err" "$tmp/run-devices.err" || { cat "$tmp/err" "$tmp/run-devices.err"; fail "rebench --devices 99 is not refused as run refuses it"; }
# --devices 0 on this CPU run: refused either way (no GPU, or not a CUDA run)
expect_exit 2 "$AVO" rebench --db "$tmp/h.db" --devices 0
grep -qE "no CUDA device is visible|applies to CUDA runs" "$tmp/err" || { cat "$tmp/err"; fail "rebench --devices 0 of a CPU run not refused"; }
expect_exit 2 "$AVO" run examples/quickstart.lua --db "$tmp/x.db" --slurm '-n 3' --jobs 2
expect_in "$tmp/err" "--slurm '-n 3' asks srun for 3 tasks and --jobs for 2"
expect_exit 2 "$AVO" resume --db "$tmp/g.db" --slurm '--ntasks=3' --jobs 2
expect_in "$tmp/err" "asks srun for 3 tasks and --jobs for 2"
[ "$(q "$tmp/g.db" "SELECT status FROM runs")" = failed ] || fail "a refused resume changed the run"

# --- resumed without remote workers (a copy): it says the run had them,
# and local workers finish it
q "$tmp/g.db" ".backup $tmp/local.db"
expect_exit 0 "$AVO" resume --db "$tmp/local.db" --jobs 2
expect_in "$tmp/err" "run 1 had remote workers (--listen 127.0.0.1:0); this resume uses local ones only"
[ "$(q "$tmp/local.db" "SELECT status FROM runs")" = done ] || fail "the local resume should be done"

# --- resume on a new remote worker finishes the run
start_engine "$tmp/g.db" resume --db "$tmp/g.db" --jobs 0 --listen 127.0.0.1:0
start_worker r
set +e
wait "$engine"; rc=$?
set -e
[ $rc = 0 ] || { cat "$tmp/g.db.err"; fail "resume with --listen exited $rc"; }
! grep -q "this resume uses local ones only" "$tmp/g.db.err" || fail "resume --listen said it used local workers"
[ "$(q "$tmp/g.db" "SELECT status FROM runs")" = done ] || fail "the resumed run should be done"
[ "$(q "$tmp/g.db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 0 ] ||
    fail "resume left candidates pending"
[ "$(q "$tmp/g.db" "SELECT count(*) FROM candidates")" = 12 ] ||
    fail "expected 12 candidates after the resume, got $(q "$tmp/g.db" "SELECT count(*) FROM candidates")"
[ "$(q "$tmp/g.db" "SELECT count(DISTINCT key) FROM candidates")" = 12 ] || fail "a candidate was evaluated twice"
echo "cluster: ok"
