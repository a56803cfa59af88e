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
echo "replay: ok"
