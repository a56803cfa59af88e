#!/bin/sh
# One process drives a run: a resume of a live run, and the loser of two
# concurrent resumes, are refused and change nothing; a stale owner (killed)
# is taken over; an owner on another host needs --takeover.
. "$(dirname "$0")/lib.sh"
export AVO_TEST_SLOW_MS=60
db="$tmp/c.db"
snapshot() {
    q "$db" "SELECT status, ended_at, owner FROM runs WHERE id = 1;
             SELECT count(*) FROM events WHERE run_id = 1; SELECT count(*) FROM candidates"
}

# A live run: resume is refused (exit 1, naming the owner) and the run is
# not touched; the live run then finishes alone.
"$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 5 >/dev/null 2>"$tmp/run.err" &
pid=$!
wait_for "$db" "SELECT count(*) FROM candidates WHERE status <> 'pending'"
expect_exit 1 "$AVO" resume --db "$db"
expect_in "$tmp/err" "cannot resume: run 1 in $db is live: driven by process $pid on host"
expect_exit 1 "$AVO" resume --db "$db" --run 1
expect_in "$tmp/err" "is live"
wait "$pid" || fail "the live run failed: $(cat "$tmp/run.err")"
[ "$(q "$db" "SELECT status FROM runs")" = done ] || fail "live run not done"
[ "$(q "$db" "SELECT count(*) FROM events WHERE kind = 'resume'")" = 0 ] || fail "a refused resume added events"
whole "$db"

# Killed: two resumes at once.  Exactly one drives the run; the other is
# refused before it changes anything; no candidate key twice.
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/full.db" --seed 5
lineage "$tmp/full.db" > "$tmp/full.txt"
db="$tmp/k.db"
"$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 5 >/dev/null 2>&1 &
pid=$!
wait_for "$db" "SELECT count(*) >= 3 FROM candidates WHERE status <> 'pending'"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
"$AVO" resume --db "$db" >"$tmp/r1.out" 2>"$tmp/r1.err" &
p1=$!
"$AVO" resume --db "$db" >"$tmp/r2.out" 2>"$tmp/r2.err" &
p2=$!
set +e
wait "$p1"; rc1=$?
wait "$p2"; rc2=$?
set -e
[ $((rc1 + rc2)) = 1 ] || fail "two concurrent resumes exited $rc1 and $rc2 (one must win, one be refused)"
cat "$tmp/r1.err" "$tmp/r2.err" > "$tmp/both.err"
expect_in "$tmp/both.err" "taking it over"
expect_in "$tmp/both.err" "is live"
whole "$db"
lineage "$db" > "$tmp/resumed.txt"
cmp -s "$tmp/full.txt" "$tmp/resumed.txt" || fail "lineage after concurrent resumes differs"
[ "$(q "$db" "SELECT count(*) FROM events WHERE kind = 'resume'")" = 1 ] || fail "the refused resume left a resume event"

# An owner on another host that never ended the run: this machine cannot
# tell whether it lives, so resume is refused until --takeover.
db="$tmp/h.db"
"$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 5 >/dev/null 2>&1 &
pid=$!
wait_for "$db" "SELECT count(*) FROM candidates WHERE status <> 'pending'"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
q "$db" "UPDATE runs SET owner = '{\"host\":\"elsewhere\",\"pid\":4242,\"since\":1700000000}'"
before=$(snapshot)
expect_exit 1 "$AVO" resume --db "$db"
expect_in "$tmp/err" "still marked running by process 4242 on host elsewhere"
expect_in "$tmp/err" "--takeover"
[ "$(snapshot)" = "$before" ] || fail "a refused resume changed the run"
expect_exit 0 "$AVO" resume --db "$db" --takeover
lineage "$db" > "$tmp/h.txt"
cmp -s "$tmp/full.txt" "$tmp/h.txt" || fail "lineage after --takeover differs"

# A finished run: nothing to resume, and nothing changes.
before=$(snapshot)
expect_exit 1 "$AVO" resume --db "$db" --run 1
expect_in "$tmp/err" "finished; there is nothing to resume"
[ "$(snapshot)" = "$before" ] || fail "a refused resume of a finished run changed it"
# An evaluator that changed since the run: the resume is refused after it
# reopened the run, and the run is put back exactly as it was.
cp tests/lua/evaluators/synthetic.lua "$tmp/ev.lua"
printf 'return require("avo").strategy("ga").run{ evaluator = "%s", population = 6, generations = 5 }\n' \
    "$tmp/ev.lua" > "$tmp/evrun.lua"
db="$tmp/e.db"
"$AVO" run "$tmp/evrun.lua" --db "$db" >/dev/null 2>&1 &
pid=$!
wait_for "$db" "SELECT count(*) >= 2 FROM candidates WHERE status <> 'pending'"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
printf '\n-- changed\n' >> "$tmp/ev.lua"
before=$(snapshot)
expect_exit 1 "$AVO" resume --db "$db"
expect_in "$tmp/err" "cannot resume: evaluator synthetic"
expect_in "$tmp/err" "changed since the recorded run"
[ "$(snapshot)" = "$before" ] || fail "a resume refused for a changed evaluator changed the run"
echo "concurrent: ok"
