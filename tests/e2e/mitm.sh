#!/bin/sh
# A man in the middle of a cluster run (issue 18): tests/e2e/mitm_proxy.py
# sits between `avo run --listen` and `avo worker --connect` without the
# run's secret, and on each new connection makes one manipulation: a hello
# that claims another host, a job or a result with one bit flipped, dropped,
# delivered twice, two messages swapped, random or clear-text frames
# injected, an earlier connection's stream replayed into a new one, a stream
# cut in the middle of a result, a forged length that swallows the rest.
# Every manipulation must fail: the
# connection is dropped, the job queued again (not counted against its
# candidate, the cut stream included: issue 33), the worker
# reconnects and finishes the run honestly.  Afterwards every candidate has
# its honest status (all quickstart candidates pass), each is evaluated once,
# and `avo best` shows an honest rate; every frame on the wire was padded.  Both rounds of attacks run on one
# engine, so each manipulation is shown to fail twice (the forged length,
# which may take 30 s to show, once).  (No re-timing at the end of the
# runs: the runs' own evaluations cross the proxy.)
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
export AVO_WORKER_SECRET=mitm-secret-0123456789abcdef
# On any failure, show what the proxy did and what both ends said.
fail() {
    for f in "$tmp/proxy.log" "${db:-}.err" "$tmp/w.err"; do
        [ -f "$f" ] && { echo "--- $f"; grep -v '^avo: \[' "$f" || true; }
    done
    echo "FAIL: $*" >&2
    exit 1
}
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

db="$tmp/m.db"
# The attacks below hit consecutive connections, so mostly the same job:
# more than the pool's 8 cuts per job (AVO_POOL_MAX_CUTS, tested below).
AVO_POOL_MAX_CUTS=64 "$AVO" run examples/quickstart.lua --db "$db" --jobs 0 --listen 127.0.0.1:0 --max-evals 32 --retime 0 \
    >"$db.out" 2>"$db.err" &
engine=$!
pids="$pids $engine"
address=""
for _ in $(seq 300); do
    address=$(sed -n 's/^avo: workers connect to \([^ ]*\) .*/\1/p' "$db.err" 2>/dev/null || true)
    [ -n "$address" ] && break
    sleep 0.1
done
[ -n "$address" ] || { cat "$db.err"; fail "the engine did not listen"; }

attacks="flip_job drop_job flip_result drop_result replay_result reorder inject inject_plain
         truncate session_replay"
# shellcheck disable=SC2086 # one argument per attack
python3 tests/e2e/mitm_proxy.py "$tmp/port" "$address" "$tmp/proxy.log" hello_host \
    $attacks $attacks inject_length &
pids="$pids $!"
for _ in $(seq 300); do
    [ -s "$tmp/port" ] && break
    sleep 0.1
done
[ -s "$tmp/port" ] || fail "the proxy did not listen"
proxy="127.0.0.1:$(cat "$tmp/port")"

# A hello whose host was rewritten fails the MAC: refused, the worker exits 3.
expect_exit 3 "$AVO" worker --connect "$proxy" --retry 5
expect_in "$tmp/err" "refused by the engine: authentication failed"

# One worker through the proxy, reconnecting after each manipulation.
"$AVO" worker --connect "$proxy" --retry 60 2>"$tmp/w.err" &
w=$!
pids="$pids $w"
set +e
wait "$engine"; rc=$?
wait "$w"; w_rc=$?
set -e
err="$db.err"
[ $rc = 0 ] || { cat "$err"; fail "the engine exited $rc"; }
[ $w_rc = 0 ] || { cat "$tmp/w.err" "$tmp/proxy.log" "$err"; fail "the worker exited $w_rc (expected 0: bye)"; }

# Every attack fired, twice (hello_host and inject_length once).
for a in hello_host inject_length $attacks; do
    n=$(grep -c " $a fired\$" "$tmp/proxy.log" || true)
    want=2
    case $a in hello_host | inject_length) want=1 ;; esac
    [ "$n" = $want ] || { cat "$tmp/proxy.log"; cat "$err"; fail "attack $a fired $n times, expected $want"; }
done

# ...and each failed the way it must.
expect_in "$err" "authentication failed: the worker does not know this run's secret"
expect_in "$err" "(it left: the engine's stream failed authentication"  # flip_job, seen by the worker
expect_in "$tmp/w.err" "the engine's stream failed authentication"
expect_in "$err" "never received the engine's last message (lost on the way)"  # drop_job
expect_in "$err" "(its stream failed authentication (a forged, replayed, reordered, dropped or injected message))"
expect_in "$err" "dropped (connection closed); job"  # truncate: not counted (issue 33)
# inject_length: "never received the engine's last message" once the worker
# has a job (its heartbeats are swallowed), "no complete message for 30 s"
# while it has none; neither counts.
expect_in "$err" "not counted against it"
expect_in "$err" "done after 32 evaluations"
# Nothing counted against a job, the cut streams neither (issue 33).
if grep -q "giving up" "$err"; then cat "$err"; fail "a job was given up"; fi
n=$(grep -c "lost (" "$err" || true)
[ "$n" = 0 ] || { cat "$err"; fail "$n losses counted against jobs; none may"; }
# Nothing reached the archive from a manipulated stream.
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 32 ] || fail "expected 32 candidates"
[ "$(q "$db" "SELECT count(DISTINCT key) FROM candidates")" = 32 ] || fail "a candidate was evaluated twice"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 32 ] ||
    fail "every candidate should end with its honest status (ok): $(q "$db" "SELECT status, reason FROM candidates WHERE status != 'ok'")"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'
               AND (SELECT count(*) FROM evaluations WHERE candidate_id = id) != 6")" = 0 ] ||
    fail "an ok candidate lacks or repeats a config's evaluation"
# Honest numbers: no rate a CPU core cannot reach, and `avo best` agrees.
[ "$(q "$db" "SELECT count(*) FROM evaluations WHERE gflops > 1000 OR median_s < 1e-7")" = 0 ] ||
    fail "an evaluation claims an impossible rate: $(q "$db" "SELECT gflops, median_s FROM evaluations ORDER BY gflops DESC LIMIT 3")"
"$AVO" best --db "$db" --json >"$tmp/best.json"
python3 - "$tmp/best.json" <<'EOF'
import json, sys
# The forged result claimed 1e9 GFLOP/s in 1e-9 s; read the figures as
# numbers (a text search also matched an honest 0.002721000000000001 s).
best = json.load(open(sys.argv[1]))
assert best["score"] < 1000, best["score"]
for c in best["configs"]:
    assert c["gflops"] < 1000 and c["median_s"] > 1e-7, c
EOF

# Every encrypted frame, both ways, is padded to a power of two (>= 256
# bytes, plus the 17 of its tag): its length says nothing of the candidate.
# The jobs of the run fall in at most two size classes (the candidates',
# and the OpenBLAS baseline's), and a cut job (its length in the proxy's
# log) shares its length with at least 4 other jobs.
# check_padding FRAMES_FILE [PROXY_LOG]
check_padding() {
    python3 - "$@" <<'EOF2' || fail "frames on the wire are not padded"
import re, sys
lengths = [(d, int(n)) for d, n in (line.split() for line in open(sys.argv[1]))]
assert len(lengths) > 10, lengths
bad = [(d, n) for d, n in lengths if n - 17 < 256 or (n - 17) & (n - 18)]
assert not bad, "frames not padded: %s" % bad[:5]
jobs = [n for d, n in lengths if d == "e2w" and n > 300]
assert len(set(jobs)) <= 2, "jobs in %d size classes: %s" % (len(set(jobs)), sorted(set(jobs)))
if len(sys.argv) > 2:
    cut = [int(n) for n in re.findall(r"cut_job fired \(job #\d+, (\d+) bytes\)",
                                      open(sys.argv[2]).read())]
    assert cut, "no cut logged"
    for n in cut:
        assert jobs.count(n) - len(cut) >= 4, "the cut job's length %d is rare: %s" % (n, jobs)
EOF2
}
check_padding "$tmp/proxy.log.frames"

# --- issue 33: a proxy that cuts the connection whenever the chosen job
# (the 5th of the run) is in flight, again on each reconnection.  A cut
# connection is never the candidate's fault: the job is queued again
# without counting, the candidate ends ok with its real score.  Cut
# AVO_POOL_MAX_CUTS (8) times, the job is left pending, the run ends
# `failed`, exit 3, and `avo resume` evaluates it honestly.
# cut_run NAME CUTS EVALS: an engine, a proxy cutting job 5 CUTS times, one
# worker; sets $rc, $db, $err
cut_run() {
    db="$tmp/$1.db"
    err="$db.err"
    "$AVO" run examples/quickstart.lua --db "$db" --jobs 0 --listen 127.0.0.1:0 --max-evals "$3" --retime 0 \
        >"$db.out" 2>"$err" &
    engine=$!
    pids="$pids $engine"
    address=""
    for _ in $(seq 300); do
        address=$(sed -n 's/^avo: workers connect to \([^ ]*\) .*/\1/p' "$err" 2>/dev/null || true)
        [ -n "$address" ] && break
        sleep 0.1
    done
    [ -n "$address" ] || fail "the engine did not listen"
    python3 tests/e2e/mitm_proxy.py "$tmp/$1.port" "$address" "$tmp/$1.log" --cut-job 5 --cuts "$2" &
    pids="$pids $!"
    for _ in $(seq 300); do
        [ -s "$tmp/$1.port" ] && break
        sleep 0.1
    done
    [ -s "$tmp/$1.port" ] || fail "the proxy did not listen"
    "$AVO" worker --connect "127.0.0.1:$(cat "$tmp/$1.port")" --retry 10 2>"$tmp/$1.w.err" &
    w=$!
    pids="$pids $w"
    set +e
    wait "$engine"; rc=$?
    set -e
    kill "$w" 2>/dev/null || true
}

cut_run cut3 3 12
[ $rc = 0 ] || { cat "$tmp/cut3.log" "$err"; fail "the run with a job cut 3 times exited $rc"; }
[ "$(grep -c " cut_job fired" "$tmp/cut3.log")" = 3 ] || { cat "$tmp/cut3.log"; fail "expected 3 cuts"; }
# the same job each time, queued again without counting against it
ticket=$(sed -n 's/.*connection closed); job \([0-9]*\) queued again, not counted against it$/\1/p' "$err" | sort | uniq -c |
    awk '$1 == 3 {print $2}')
[ -n "$ticket" ] || { cat "$err"; fail "the cut job was not queued again 3 times, uncounted"; }
if grep -q "giving up\|vanished\|misbehaved" "$err"; then cat "$err"; fail "a cut job was charged"; fi
expect_in "$err" "done after 12 evaluations"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 12 ] ||
    fail "every candidate should pass: $(q "$db" "SELECT id, status, reason FROM candidates WHERE status != 'ok'")"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok' AND score > 0
               AND (SELECT count(*) FROM evaluations WHERE candidate_id = id AND gflops > 0) = 6")" = 12 ] ||
    fail "a candidate lacks its real score: $(q "$db" "SELECT id, score FROM candidates")"
check_padding "$tmp/cut3.log.frames" "$tmp/cut3.log"

# Cut as often as the pool allows: pending, exit 3, resumable, never charged.
cut_run cut8 8 8
[ $rc = 3 ] || { cat "$tmp/cut8.log" "$err"; fail "a job cut 8 times: the run exited $rc, expected 3"; }
expect_in "$err" "its connection was lost 8 times, giving up (not counted against it)"
expect_in "$err" "the network's fault, not the candidate's"
expect_in "$err" "1 evaluation(s) failed on infrastructure faults on every try and were left unfinished"
[ "$(q "$db" "SELECT status FROM runs")" = failed ] || fail "the run should be recorded failed"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 1 ] ||
    fail "the cut candidate should be pending: $(q "$db" "SELECT id, status, reason FROM candidates")"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status NOT IN ('ok', 'pending')")" = 0 ] ||
    fail "a candidate was charged: $(q "$db" "SELECT id, status, reason FROM candidates WHERE status NOT IN ('ok', 'pending')")"
expect_exit 0 "$AVO" resume --db "$db" --jobs 1
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status != 'ok'")" = 0 ] ||
    fail "after resume every candidate should pass: $(q "$db" "SELECT id, status, reason FROM candidates WHERE status != 'ok'")"
echo "mitm: ok"
