#!/bin/sh
# A GA run with llm_mutate answered by the scripted provider, then replayed
# offline from its archive (AVO_LLM_REPLAY, and --llm-replay): the same
# candidates, parents and sources.  Answers are found by each call's place in
# the run (operator stream and index), so a replay whose measurements differ
# (prompts quote them) still replays; a call whose settings differ is a
# divergence naming them, and an archive without call keys is answered by
# request hash (an unknown request is an error naming its hash).
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

# Other measurements (every score 1% higher, so every prompt differs): the
# same lineage, and the replay says how many prompts differed.
AVO_TEST_SCORE_SCALE=1.01 expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/rep3.db" \
    --seed 3 --jobs 2 --llm-replay "$tmp/rec.db"
lineage "$tmp/rep3.db" > "$tmp/rep3.txt"
cmp -s "$tmp/rec.txt" "$tmp/rep3.txt" || { diff "$tmp/rec.txt" "$tmp/rep3.txt" | head; fail "replay with other timings changed the lineage"; }
expect_in "$tmp/err" "llm replay: $n_calls calls answered by their place in the run"

# Other settings (temperature, max_tokens) are a divergence naming them,
# reported without a traceback.
expect_exit 1 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/bad.db" --seed 3 \
    --llm-replay "$tmp/rec.db" temperature=0.5 max_tokens=1000
expect_in "$tmp/err" "avo: LLM replay diverged: call op.llm_mutate/"
expect_in "$tmp/err" "max_tokens 4096 recorded, 1000 now; temperature 0 recorded, 0.5 now"
if grep -q "traceback" "$tmp/err"; then fail "divergence reported with a traceback"; fi

# An archive recorded before calls had keys: answered by request hash.
cp "$tmp/rec.db" "$tmp/old.db"
q "$tmp/old.db" "UPDATE llm_calls SET request = json_remove(request, '$.call')"
expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/rep4.db" --seed 3 --jobs 2 \
    --llm-replay "$tmp/old.db"
lineage "$tmp/rep4.db" > "$tmp/rep4.txt"
cmp -s "$tmp/rec.txt" "$tmp/rep4.txt" || fail "hash replay of an old archive changed the lineage"
AVO_LLM_REPLAY="$tmp/old.db" \
    expect_exit 1 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/bad2.db" --seed 3 temperature=0.5
expect_in "$tmp/err" "no recorded answer for request"
grep -Eq "request [0-9a-f]{40}" "$tmp/err" || fail "the error names the request hash"
echo "llm replay: ok"
