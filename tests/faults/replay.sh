#!/bin/sh
# A replay killed part-way is finished from the recording, never by live
# evaluation (AVO_TEST_SLOW_MS would make a live one take 2 s each): again
# with `avo replay` into the same output, or with `avo resume` of the
# output.  Either way the lineage is the recorded one.
. "$(dirname "$0")/lib.sh"
AVO_TEST_SLOW_MS=0 expect_exit 0 "$AVO" run tests/faults/replay_big.lua --db "$tmp/orig.db"
lineage "$tmp/orig.db" > "$tmp/orig.txt"
n=$(q "$tmp/orig.db" "SELECT count(*) FROM candidates")
for how in replay resume; do
    out="$tmp/$how.db"
    AVO_TEST_SLOW_MS=0 "$AVO" replay --db "$tmp/orig.db" --out "$out" >"$tmp/replay.out" 2>&1 &
    pid=$!
    wait_for "$out" "SELECT count(*) >= 20 FROM candidates"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    got=$(q "$out" "SELECT count(*) FROM candidates")
    [ "$got" -lt "$n" ] || fail "the replay finished before it was killed ($got of $n)"
    whole "$out"
    export AVO_TEST_SLOW_MS=2000
    if [ $how = replay ]; then
        expect_exit 0 "$AVO" replay --db "$tmp/orig.db" --out "$out"
        expect_in "$tmp/err" "continuing the replay of run 1"
        expect_in "$tmp/out" "replay identical: $n candidates"
    else
        expect_exit 0 "$AVO" resume --db "$out"
    fi
    export AVO_TEST_SLOW_MS=0
    lineage "$out" > "$tmp/$how.txt"
    cmp -s "$tmp/orig.txt" "$tmp/$how.txt" || fail "lineage after a killed replay and $how differs"
done
# A finished replay is not written again.
expect_exit 2 "$AVO" replay --db "$tmp/orig.db" --out "$tmp/replay.db"
expect_in "$tmp/err" "holds no unfinished replay of run 1"

# A run that is not the archive's first replays identical: candidates are
# compared by their place in the run, not by archive id (run 2's first
# candidate is #n+1 in its archive, #1 in the replay's).
export AVO_TEST_SLOW_MS=0
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/two.db" --seed 3
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/two.db" --seed 4
n2=$(q "$tmp/two.db" "SELECT count(*) FROM candidates WHERE run_id = 2")
[ "$(q "$tmp/two.db" "SELECT min(id) FROM candidates WHERE run_id = 2")" -gt 1 ] ||
    fail "run 2 starts at candidate 1"
expect_exit 0 "$AVO" replay --db "$tmp/two.db" --out "$tmp/run2.db" --run 2
expect_in "$tmp/out" "replay identical: $n2 candidates"
expect_exit 0 "$AVO" replay --db "$tmp/two.db" --out "$tmp/run1.db" --run 1
# and a real difference is still found and named by its place in the run
# (a recorded operator changed by hand)
sqlite3 "$tmp/two.db" "UPDATE candidates SET operator = 'tampered' WHERE id =
    (SELECT min(id) + 3 FROM candidates WHERE run_id = 2)"
expect_exit 1 "$AVO" replay --db "$tmp/two.db" --out "$tmp/run2b.db" --run 2
expect_in "$tmp/out" "replay diverged: candidate 4 of the run differs"

# A replay stopped by SIGINT is recorded `interrupted`, exits 130, and the
# same command finishes it identical.
"$AVO" replay --db "$tmp/orig.db" --out "$tmp/int.db" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/int.db" "SELECT count(*) >= 10 FROM candidates"
kill -s INT "$pid"
set +e; wait "$pid"; got=$?; set -e
[ "$got" = 130 ] || { cat "$tmp/err"; fail "replay after SIGINT: exit $got, expected 130"; }
[ "$(q "$tmp/int.db" "SELECT status FROM runs")" = interrupted ] || fail "replay not 'interrupted'"
expect_in "$tmp/err" "avo: replay interrupted by signal 2; the same \`avo replay --db $tmp/orig.db --out $tmp/int.db\` continues it"
expect_exit 0 "$AVO" replay --db "$tmp/orig.db" --out "$tmp/int.db"
expect_in "$tmp/out" "replay identical: $n candidates"
echo "replay: ok"
