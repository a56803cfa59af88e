#!/bin/sh
# Agent runs killed with -9 part-way and resumed: LLM answers, attempts and
# commits made before the kill are answered from the archive, events are not
# written twice, and the result equals the same run left alone (the test
# scripts' own assertions run again at the end of the resumed run).  Then
# `avo replay` of the agent run is identical.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL
export AVO_LLM_PROVIDER=scripted AVO_TEST_SLOW_MS=150

state() {
    q "$1" "SELECT 'c', id, operator, source_hash, knobs, status, score, note FROM candidates ORDER BY id;
            SELECT 'a', id, step, lineage, source_hash, knobs, status, score, outcome FROM attempts ORDER BY id;
            SELECT 'e', kind FROM events WHERE kind NOT IN ('resume', 'llm_totals') ORDER BY id;
            SELECT 'l', count(*) FROM llm_calls"
}

for name in lineages step; do
    export AVO_LLM_SCRIPT="tests/agent/$name.jsonl"
    expect_exit 0 "$AVO" run "tests/agent/$name.lua" --db "$tmp/full-$name.db" --jobs 1 db="$tmp/full-$name.db" tmp="$tmp"
    state "$tmp/full-$name.db" > "$tmp/full-$name.txt"
    resumed=0
    for delay in 0.4 0.8 1.2; do
        db="$tmp/k-$name-$delay.db"
        "$AVO" run "tests/agent/$name.lua" --db "$db" --jobs 1 db="$db" tmp="$tmp" >/dev/null 2>&1 &
        pid=$!
        sleep "$delay"
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        [ "$(q "$db" "SELECT status FROM runs")" = done ] && continue
        resumed=$((resumed + 1))
        expect_exit 0 "$AVO" resume --db "$db" --jobs 1
        expect_in "$tmp/err" "agent $name: ok"
        state "$db" > "$tmp/resumed.txt"
        cmp -s "$tmp/full-$name.txt" "$tmp/resumed.txt" || {
            diff "$tmp/full-$name.txt" "$tmp/resumed.txt" | head -8
            fail "resumed $name run differs from the uninterrupted one (kill at $delay s)"
        }
    done
    [ "$resumed" -ge 1 ] || fail "no kill landed inside the $name run"
done

expect_exit 0 "$AVO" replay --db "$tmp/full-lineages.db" --out "$tmp/replayed.db"
expect_in "$tmp/out" "replay identical"
echo "agent resume: ok"
