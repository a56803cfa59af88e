#!/bin/sh
# The scripted provider (keyed and ordered answers) and the refusal of calls
# past --max-tokens; a script without LLM configuration exits 2.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL
cat > "$tmp/s.jsonl" <<'JSONL'
{"match": "use the tool", "content": "keyed", "tool_calls": [{"id": "t1", "name": "lookup", "arguments": {"q": "x"}}], "usage": {"input_tokens": 5, "output_tokens": 5}}
{"content": "first", "usage": {"input_tokens": 10, "output_tokens": 5}}
{"content": "second", "usage": {"input_tokens": 10, "output_tokens": 5}}
JSONL
AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT="$tmp/s.jsonl" \
    expect_exit 0 "$AVO" run tests/llm/test_scripted.lua --db "$tmp/s.db" --max-tokens 40
expect_in "$tmp/err" "llm scripted: ok"
expect_in "$tmp/err" "llm: LLM budget exhausted"

# crossover+llm_mutate: the parent llm_mutate sees is the unevaluated
# crossover child, described as such (not as a failure to fix).
AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl \
    expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/x.db" --seed 3 --jobs 2 crossover=crossover
[ "$(q "$tmp/x.db" "SELECT count(*) FROM candidates WHERE operator = 'crossover+llm_mutate'")" -ge 1 ] \
    || fail "no crossover+llm_mutate child"
[ "$(q "$tmp/x.db" "SELECT count(*) FROM llm_calls WHERE request LIKE '%not evaluated yet — it was just made by crossover from #%'")" -ge 1 ] \
    || fail "the unevaluated parent is not described as such"
[ "$(q "$tmp/x.db" "SELECT count(*) FROM llm_calls WHERE request LIKE '%FAILED (?)%'")" -eq 0 ] \
    || fail "an unevaluated parent was described as a failure"

# Evaluator feedback (artifacts) is stored with the result and shown in the
# next prompt about the candidate; a replay keeps it.
cat > "$tmp/fb.lua" <<'LUA'
local avo = require "avo"
return avo.strategy("ga").run{
  evaluator = "tests/llm/evaluators/feedback.lua", population = 4, generations = 2,
  crossover_rate = 0, operators = { llm_mutate = 1 },
}
LUA
AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl \
    expect_exit 0 "$AVO" run "$tmp/fb.lua" --db "$tmp/fb.db"
[ "$(q "$tmp/fb.db" "SELECT count(*) FROM llm_calls WHERE request LIKE '%Evaluator feedback:\nhint: try BK=64\nstatus: ok\nunroll: %'")" -ge 1 ] \
    || fail "the evaluator's feedback is not in the prompts"
q "$tmp/fb.db" "SELECT json_extract(result, '$.artifacts') FROM candidates WHERE id = 1" \
    | grep -q "hint: try BK=64" || fail "the feedback is not stored with the result"
expect_exit 0 "$AVO" replay --db "$tmp/fb.db" --out "$tmp/fb2.db"
expect_in "$tmp/out" "replay identical"

# The example without configuration says what to set and exits 2.
(
    unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT
    expect_exit 2 "$AVO" run examples/llm_mutate.lua --db "$tmp/e.db"
)
expect_in "$tmp/err" "AVO_LLM_PROVIDER"
[ "$(q "$tmp/e.db" "SELECT status FROM runs")" = stopped ] || fail "run not marked stopped"
echo "llm scripted: ok"
