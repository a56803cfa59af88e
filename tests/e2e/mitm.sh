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
# candidate, except the cut stream, which looks like a lost node), the worker
# reconnects and finishes the run honestly.  Afterwards every candidate has
# its honest status (all quickstart candidates pass), each is evaluated once,
# and `avo best` shows an honest rate.  Both rounds of attacks run on one
# engine, so each manipulation is shown to fail twice (the forged length,
# which may take 30 s to show, once).
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
"$AVO" run examples/quickstart.lua --db "$db" --jobs 0 --listen 127.0.0.1:0 --max-evals 32 \
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
expect_in "$err" "lost (connection closed)"  # truncate
# inject_length: "never received the engine's last message" once the worker
# has a job (its heartbeats are swallowed), "no complete message for 30 s"
# while it has none; neither counts.
expect_in "$err" "not counted against it"
expect_in "$err" "done after 32 evaluations"
# Nothing but the cut stream counted against a job, and no job lost 3 workers.
if grep -q "giving up" "$err"; then cat "$err"; fail "a job was given up"; fi
n=$(grep -c "lost (" "$err" || true)
[ "$n" -le 2 ] || { cat "$err"; fail "$n losses counted against jobs; only the 2 cut streams may"; }
# Nothing reached the archive from a manipulated stream.
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 32 ] || fail "expected 32 candidates"
[ "$(q "$db" "SELECT count(DISTINCT key) FROM candidates")" = 32 ] || fail "a candidate was evaluated twice"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 32 ] ||
    fail "every candidate should end with its honest status (ok): $(q "$db" "SELECT status, reason FROM candidates WHERE status != 'ok'")"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'
               AND (SELECT count(*) FROM evaluations WHERE candidate_id = id) != 3")" = 0 ] ||
    fail "an ok candidate lacks or repeats a config's evaluation"
# Honest numbers: no rate a CPU core cannot reach, and `avo best` agrees.
[ "$(q "$db" "SELECT count(*) FROM evaluations WHERE gflops > 1000 OR median_s < 1e-7")" = 0 ] ||
    fail "an evaluation claims an impossible rate: $(q "$db" "SELECT gflops, median_s FROM evaluations ORDER BY gflops DESC LIMIT 3")"
"$AVO" best --db "$db" --json >"$tmp/best.json"
python3 - "$tmp/best.json" <<'EOF'
import json, sys
best = json.load(open(sys.argv[1]))
text = json.dumps(best)
assert "1e+09" not in text and "1000000000" not in text, text
EOF
echo "mitm: ok"
