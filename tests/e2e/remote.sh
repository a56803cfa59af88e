#!/bin/sh
# Remote workers over TCP (docs/protocol.md, "TCP transport"): an engine with
# no local worker (--jobs 0 --listen) runs a real CPU sgemm evolution on two
# `avo worker --connect` processes; impostors are refused with clear reasons
# (wrong secret, another run, another version, an unknown evaluator
# fingerprint, garbage, an oversized hello); a worker that answers another
# job's id is dropped, and so is one that knows the secret but claims a rate
# its FLOPs and median time do not give (issue 18); a worker killed mid-job
# has its job run elsewhere; the
# archive has every evaluation exactly once.  Then workers gone for good end
# a run with a message (failed, exit 3), and bad worker invocations fail clearly.
. "$(dirname "$0")/lib.sh"
# remote_peer.py speaks the encrypted channel through PyNaCl (python3-nacl).
py=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import nacl.bindings' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "skip: python3 with PyNaCl missing (tools/install-deps --tests installs python3-nacl)"; exit 77; }
peer="$py tests/e2e/remote_peer.py"
export AVO_WORKER_SECRET=test-secret-0123456789abcdef
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

# --- bad invocations, no engine needed
expect_exit 1 "$AVO" worker --connect 127.0.0.1:1 --retry 1
expect_in "$tmp/err" "cannot reach the engine at 127.0.0.1:1"
expect_exit 2 "$AVO" worker --connect nonsense
expect_in "$tmp/err" "address 'nonsense' is not HOST:PORT"
printf 'a-secret-of-enough-length\n' >"$tmp/secret"
chmod 644 "$tmp/secret"
expect_exit 2 env -u AVO_WORKER_SECRET AVO_WORKER_SECRET_FILE="$tmp/secret" \
    "$AVO" worker --connect 127.0.0.1:1
expect_in "$tmp/err" "has mode 0644; it must be readable by its owner only"
expect_exit 2 env -u AVO_WORKER_SECRET "$AVO" worker --connect 127.0.0.1:1
expect_in "$tmp/err" "no worker secret"
expect_exit 2 env AVO_WORKER_SECRET=short "$AVO" worker --connect 127.0.0.1:1
expect_in "$tmp/err" "needs at least 16"
expect_exit 2 "$AVO" run examples/quickstart.lua --db "$tmp/x.db" --jobs 0
expect_in "$tmp/err" "--jobs 0 (no local workers) needs --listen"
expect_exit 1 "$AVO" run examples/quickstart.lua --db "$tmp/x.db" --listen nonsense
expect_in "$tmp/err" "address 'nonsense' is not HOST:PORT"

# start_engine DB ARGS...: run in the background; sets $engine and $address
start_engine() {
    db=$1; shift
    "$AVO" run examples/quickstart.lua --db "$db" --jobs 0 --listen 127.0.0.1:0 "$@" \
        >"$db.out" 2>"$db.err" &
    engine=$!
    pids="$pids $engine"
    address=""
    for _ in $(seq 100); do
        address=$(sed -n 's/^avo: workers connect to \([^ ]*\) .*/\1/p' "$db.err" 2>/dev/null || true)
        [ -n "$address" ] && return 0
        sleep 0.1
    done
    cat "$db.err"; fail "the engine did not listen"
}

start_engine "$tmp/r.db" --max-evals 20 --retime 0
for mode in wrong_secret other_run other_version other_fp garbage oversized; do
    $peer "$address" $mode >"$tmp/peer.$mode"
done
expect_in "$tmp/peer.wrong_secret" "refused: authentication failed: the worker does not know this run's secret"
expect_in "$tmp/peer.other_run" "refused: worker belongs to run '"
expect_in "$tmp/peer.other_run" "-other', this engine serves run '"
expect_in "$tmp/peer.other_version" "-other, the engine avo "
expect_in "$tmp/peer.other_fp" "refused: worker serves evaluator fingerprint ffffffffffff, which is not one of this run's evaluators"
expect_in "$tmp/peer.garbage" "refused: not an avo worker (hello is not JSON)"
expect_in "$tmp/peer.oversized" "refused: not an avo worker (oversized hello)"
# A real worker with the wrong secret: exit 3 and the engine's reason.
expect_exit 3 env AVO_WORKER_SECRET=another-secret-0123456789 "$AVO" worker --connect "$address"
expect_in "$tmp/err" "refused by the engine: authentication failed"
# An authenticated worker whose bytes try to answer another job: dropped.
$peer "$address" wrong_id >"$tmp/peer.wrong_id"
expect_in "$tmp/peer.wrong_id" "welcome"
expect_in "$tmp/peer.wrong_id" "dropped"

"$AVO" worker --connect "$address" 2>"$tmp/wa.err" &
wa=$!
"$AVO" worker --connect "$address" 2>"$tmp/wb.err" &
wb=$!
pids="$pids $wa $wb"
# Kill worker A while it is running a job: its serving process has a child
# (compiler or runner) at that moment.
killed=0
for _ in $(seq 600); do
    child=$(pgrep -P "$wa" | head -n1 || true)
    if [ -n "$child" ] && pgrep -P "$child" >/dev/null; then
        kill -9 "$wa"
        killed=1
        break
    fi
    sleep 0.05
done
[ $killed = 1 ] || fail "worker A never ran a job"
set +e
wait "$engine"; rc=$?
wait "$wb"; wb_rc=$?
set -e
[ $rc = 0 ] || { cat "$tmp/r.db.err"; fail "the engine exited $rc"; }
[ $wb_rc = 0 ] || { cat "$tmp/wb.err"; fail "worker B exited $wb_rc after the run (expected 0: bye)"; }
err="$tmp/r.db.err"
expect_in "$err" "refused a worker from 127.0.0.1:"
expect_in "$err" "authentication failed"
expect_in "$err" "worker rogue/"
expect_in "$err" "sent a result for job"
expect_in "$err" "queued again"
expect_in "$err" "done after 20 evaluations"
n=$(grep -c "queued again" "$err")
[ "$n" -ge 2 ] || { cat "$err"; fail "expected the rogue's and worker A's jobs requeued, saw $n"; }
db="$tmp/r.db"
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 20 ] || fail "expected 20 candidates"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 0 ] ||
    fail "a candidate was never answered"
[ "$(q "$db" "SELECT count(DISTINCT key) FROM candidates")" = 20 ] || fail "a candidate was evaluated twice"
# (each ok candidate: one evaluation per config of cpu/sgemm, its six shapes)
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'
               AND (SELECT count(*) FROM evaluations WHERE candidate_id = id) != 6")" = 0 ] ||
    fail "an ok candidate lacks or repeats a config's evaluation"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 20 ] ||
    fail "expected every quickstart candidate to pass: $(q "$db" "SELECT status, reason FROM candidates WHERE status != 'ok'")"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE json_extract(result, '$.worker.transport') = 'tcp'
               AND json_extract(result, '$.worker.name') NOT LIKE 'rogue/%'")" = 20 ] ||
    fail "every result should name the remote worker that produced it"

# --- workers gone for good: the run stops with a message, failed, exit 3
AVO_WORKER_GRACE=2 start_engine "$tmp/g.db" --max-evals 200 --retime 0
# (First, on this engine, whose jobs can spare a loss: a worker that knows
# the secret and forges a rate is dropped, its job queued again.)
$peer "$address" bad_rate >"$tmp/peer.bad_rate"
expect_in "$tmp/peer.bad_rate" "welcome"
expect_in "$tmp/peer.bad_rate" "dropped"
"$AVO" worker --connect "$address" 2>"$tmp/wg.err" &
wg=$!
pids="$pids $wg"
for _ in $(seq 600); do
    [ "$(q "$tmp/g.db" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 3 ] && break
    sleep 0.1
done
kill -9 "$wg"
set +e
wait "$engine"; rc=$?
set -e
[ $rc = 3 ] || { cat "$tmp/g.db.err"; fail "the engine exited $rc when its workers were gone (expected 3)"; }
expect_in "$tmp/g.db.err" "sent an invalid result: config '"
expect_in "$tmp/g.db.err" "gflops 1e+09 is not the job's work over its median time"
expect_in "$tmp/g.db.err" "no workers left: none connected for 2 s"
expect_in "$tmp/g.db.err" "run stopped early: no workers left"
[ "$(q "$tmp/g.db" "SELECT status FROM runs")" = failed ] || fail "the run should be recorded as failed"
echo "remote: ok"
