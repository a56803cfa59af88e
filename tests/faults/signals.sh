#!/bin/sh
# Signals: SIGINT, SIGTERM and SIGHUP end a run cleanly with status
# `interrupted` and exit 128 + the signal (130, 143, 129); the run resumes
# to the lineage of a run left alone.  A strategy stuck in a busy loop (even
# inside pcall) is stopped by the watchdog a few seconds after --max-time or
# a signal, instead of running until SIGKILL; so is one stuck inside a C
# call, which the count hook cannot reach (the watchdog thread records the
# run and ends the process).  A second signal ends the run at once, still
# recorded `interrupted`, with a line saying so; it resumes to the same
# lineage.
. "$(dirname "$0")/lib.sh"
export AVO_TEST_SLOW_MS=60
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/full.db" --seed 9
lineage "$tmp/full.db" > "$tmp/full.txt"

for sig in INT:130 TERM:143 HUP:129; do
    name=${sig%%:*} code=${sig##*:}
    db="$tmp/$name.db"
    "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 9 >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    wait_for "$db" "SELECT count(*) >= 2 FROM candidates WHERE status <> 'pending'"
    kill -s "$name" "$pid"
    set +e; wait "$pid"; got=$?; set -e
    [ "$got" = "$code" ] || { cat "$tmp/err"; fail "SIG$name: exit $got, expected $code"; }
    [ "$(q "$db" "SELECT status FROM runs")" = interrupted ] || fail "SIG$name: run not 'interrupted'"
    expect_in "$tmp/err" "avo: interrupted after"
    # Its figures are unpaired, and it says how to pair them.
    expect_in "$tmp/out" "unpaired: not re-timed (the run was stopped before its re-timing; \`avo rebench --db $db --run 1\`"
    whole "$db"
    expect_exit 0 "$AVO" resume --db "$db"
    lineage "$db" > "$tmp/resumed.txt"
    cmp -s "$tmp/full.txt" "$tmp/resumed.txt" || fail "SIG$name: resumed lineage differs"
done

# The busy loop (tests/faults/busy_loop.lua loops inside pcall forever).
expect_exit 1 "$AVO" run tests/faults/busy_loop.lua --db "$tmp/b.db" --max-time 1
expect_in "$tmp/err" "the script still ran 5 s after --max-time"
[ "$(q "$tmp/b.db" "SELECT status FROM runs")" = failed ] || fail "busy loop run not 'failed'"

"$AVO" run tests/faults/busy_loop.lua --db "$tmp/b2.db" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/b2.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'"
kill -s INT "$pid"
set +e; wait "$pid"; got=$?; set -e
[ "$got" = 130 ] || { cat "$tmp/err"; fail "busy loop after SIGINT: exit $got, expected 130"; }
expect_in "$tmp/err" "the script still ran 5 s after the signal to stop"
[ "$(q "$tmp/b2.db" "SELECT status FROM runs")" = interrupted ] || fail "busy loop run not 'interrupted'"

# Inside one C call (tests/faults/busy_c.lua): after --max-time the run is
# `failed`, exit 1; after SIGTERM `interrupted`, exit 143; each within the
# grace (5 s) and the watchdog's margin (1 s), not minutes.
start=$(date +%s)
expect_exit 1 "$AVO" run tests/faults/busy_c.lua --db "$tmp/c.db" --max-time 1
[ $(($(date +%s) - start)) -lt 60 ] || fail "the C busy loop ran $(($(date +%s) - start)) s"
expect_in "$tmp/err" "the script still ran 5 s after --max-time, inside one call the count hook cannot interrupt"
expect_in "$tmp/err" "run 1 recorded as failed (\`avo resume --db $tmp/c.db\` continues it)"
[ "$(q "$tmp/c.db" "SELECT status FROM runs")" = failed ] || fail "C busy run not 'failed'"
whole "$tmp/c.db"

"$AVO" run tests/faults/busy_c.lua --db "$tmp/c2.db" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/c2.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'"
kill -s TERM "$pid"
set +e; wait "$pid"; got=$?; set -e
[ "$got" = 143 ] || { cat "$tmp/err"; fail "C busy loop after SIGTERM: exit $got, expected 143"; }
expect_in "$tmp/err" "the script still ran 5 s after the signal to stop, inside one call"
expect_in "$tmp/err" "run 1 recorded as interrupted"
[ "$(q "$tmp/c2.db" "SELECT status FROM runs")" = interrupted ] || fail "C busy run not 'interrupted'"
whole "$tmp/c2.db"

# A second signal (SIGINT, then SIGTERM while the run winds down).
export AVO_TEST_SLOW_MS=400
db="$tmp/second.db"
"$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 9 >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$db" "SELECT count(*) >= 2 FROM candidates WHERE status <> 'pending'"
kill -s INT "$pid"
sleep 0.1
kill -s TERM "$pid"
set +e; wait "$pid"; got=$?; set -e
[ "$got" = 143 ] || { cat "$tmp/err"; fail "second signal: exit $got, expected 143"; }
expect_in "$tmp/err" "avo: a second SIGTERM: stopped at once; run 1 recorded as interrupted"
[ "$(q "$db" "SELECT status FROM runs")" = interrupted ] || fail "second signal: run not 'interrupted'"
whole "$db"
export AVO_TEST_SLOW_MS=60
expect_exit 0 "$AVO" resume --db "$db"
lineage "$db" > "$tmp/resumed.txt"
cmp -s "$tmp/full.txt" "$tmp/resumed.txt" || fail "second signal: resumed lineage differs"
echo "signals: ok"
