#!/bin/sh
# examples/avo_cpu.lua with its scripted answers on the real CPU sgemm:
# the archive holds committed versions, attempts and a supervisor event.
# Without configuration the AVO examples say what to set and exit 2.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL

AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=examples/avo_cpu.jsonl \
    expect_exit 0 "$AVO" run examples/avo_cpu.lua --db "$tmp/cpu.db" --jobs 2 steps=4 stall=2 \
    kb="$tmp/kb.db"
expect_in "$tmp/out" "best #"
[ "$(q "$tmp/cpu.db" "SELECT count(*) FROM candidates WHERE operator = 'agent'")" -ge 1 ] \
    || fail "no committed version"
[ "$(q "$tmp/cpu.db" "SELECT count(*) FROM attempts")" -ge 2 ] || fail "attempts not recorded"
[ "$(q "$tmp/cpu.db" "SELECT count(*) FROM attempts WHERE outcome = 'committed'")" -ge 1 ] \
    || fail "the committed attempt is not marked"
[ "$(q "$tmp/cpu.db" "SELECT count(*) FROM events WHERE kind = 'supervisor'")" -eq 1 ] \
    || fail "no supervisor event"
q "$tmp/cpu.db" "SELECT data FROM events WHERE kind = 'supervisor'" | grep -q "register-tile" \
    || fail "supervisor directions not recorded"
q "$tmp/cpu.db" "SELECT count(*) FROM llm_calls WHERE request LIKE '%Directions from the supervisor%'" \
    | grep -qv '^0$' || fail "directions not in a later prompt"

unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT
for ex in avo_cpu avo_attention; do
    expect_exit 2 "$AVO" run "examples/$ex.lua" --db "$tmp/$ex.db"
    expect_in "$tmp/err" "AVO_LLM_PROVIDER"
done
expect_exit 2 "$AVO" run examples/gqa_transfer.lua --db "$tmp/g.db"
expect_in "$tmp/err" "id=<candidate id> db="
echo "agent examples: ok"
