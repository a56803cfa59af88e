#!/bin/sh
# A GA run with llm_mutate answered by the scripted provider, then replayed
# offline from its archive (AVO_LLM_REPLAY, and --llm-replay): the same
# candidates, parents and sources.  A request the archive does not hold is an
# error naming its hash.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_PROVIDER AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL AVO_LLM_REPLAY

lineage() {
    q "$1" "SELECT c.id, c.operator, c.knobs, c.source_hash, c.note,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
}

AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl \
    expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/rec.db" --seed 3 --jobs 2
n_llm=$(q "$tmp/rec.db" "SELECT count(*) FROM candidates WHERE operator LIKE '%llm_mutate%'")
[ "$n_llm" -ge 3 ] || fail "expected llm_mutate children, got $n_llm"
n_calls=$(q "$tmp/rec.db" "SELECT count(*) FROM llm_calls")
[ "$n_calls" -gt "$n_llm" ] || fail "expected retried calls too ($n_calls calls, $n_llm children)"
q "$tmp/rec.db" "SELECT count(*) FROM llm_calls WHERE request LIKE '%could not be applied%'" \
    | grep -qv '^0$' || fail "no retry carrying the error was recorded"

# Replay: no provider, no script; answers come from rec.db.
AVO_LLM_REPLAY="$tmp/rec.db" \
    expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/rep.db" --seed 3 --jobs 1
expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/rep2.db" --seed 3 --jobs 2 \
    --llm-replay "$tmp/rec.db"
lineage "$tmp/rec.db" > "$tmp/rec.txt"
lineage "$tmp/rep.db" > "$tmp/rep.txt"
lineage "$tmp/rep2.db" > "$tmp/rep2.txt"
cmp -s "$tmp/rec.txt" "$tmp/rep.txt" || { diff "$tmp/rec.txt" "$tmp/rep.txt" | head; fail "replay changed the lineage"; }
cmp -s "$tmp/rec.txt" "$tmp/rep2.txt" || fail "--llm-replay changed the lineage"
[ "$(q "$tmp/rep.db" "SELECT count(*) FROM llm_calls WHERE provider = 'replay'")" -eq "$n_calls" ] \
    || fail "replayed calls not recorded"

# A different request (another temperature) is not in the archive.
AVO_LLM_REPLAY="$tmp/rec.db" \
    expect_exit 1 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/bad.db" --seed 3 temperature=0.5
expect_in "$tmp/err" "no recorded answer for request"
grep -Eq "request [0-9a-f]{40}" "$tmp/err" || fail "the error names the request hash"
echo "llm replay: ok"
