#!/bin/sh
# A GA run with LLM operators killed with -9 part-way and resumed: the LLM
# calls made before the kill are answered from the archive (not repeated),
# and the lineage equals that of the same run left alone.  Then `avo replay`
# of the LLM run (recorded scores and recorded answers) is identical.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL AVO_LLM_REPLAY
export AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl AVO_TEST_SLOW_MS=20

lineage() {
    q "$1" "SELECT c.id, c.operator, c.knobs, c.source_hash, c.note, c.status,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
}

expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/full.db" --seed 4
lineage "$tmp/full.db" > "$tmp/full.txt"
calls=$(q "$tmp/full.db" "SELECT count(*) FROM llm_calls")

"$AVO" run tests/llm/ga_llm.lua --db "$tmp/k.db" --seed 4 >/dev/null 2>&1 &
pid=$!
sleep 0.6
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
before=$(q "$tmp/k.db" "SELECT count(*) FROM llm_calls")
expect_exit 0 "$AVO" resume --db "$tmp/k.db"
lineage "$tmp/k.db" > "$tmp/resumed.txt"
cmp -s "$tmp/full.txt" "$tmp/resumed.txt" || { diff "$tmp/full.txt" "$tmp/resumed.txt" | head -5; fail "resumed LLM run differs"; }
after=$(q "$tmp/k.db" "SELECT count(*) FROM llm_calls")
[ "$after" -eq "$calls" ] || fail "LLM calls repeated on resume ($before before the kill, $after after, $calls uninterrupted)"

unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT
expect_exit 0 "$AVO" replay --db "$tmp/full.db" --out "$tmp/rep.db"
expect_in "$tmp/out" "replay identical"
echo "llm resume: ok"
