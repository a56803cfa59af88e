#!/bin/sh
# --max-tokens and --max-usd stop new LLM calls; the run ends cleanly with
# its results kept and the totals in the archive.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY
export AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl

# Every scripted answer is 150 tokens: the 4th call reaches 600.
expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/t.db" --seed 3 --jobs 2 \
    --max-tokens 600 generations=30
expect_in "$tmp/err" "avo: 4 LLM calls (0 failed), 400 tokens in, 200 out"
expect_in "$tmp/out" "best #"
[ "$(q "$tmp/t.db" "SELECT status FROM runs")" = done ] || fail "run not done"
[ "$(q "$tmp/t.db" "SELECT count(*) FROM llm_calls")" -eq 4 ] || fail "calls after the budget"
[ "$(q "$tmp/t.db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" -ge 6 ] \
    || fail "results not kept"
[ "$(q "$tmp/t.db" "SELECT max(generation) FROM candidates")" -lt 30 ] || fail "run did not stop early"
q "$tmp/t.db" "SELECT json_extract(data, '$.input_tokens') + json_extract(data, '$.output_tokens')
               FROM events WHERE kind = 'llm_totals'" | grep -qx 600 || fail "totals not in the archive"
# Calls not made for the budget are refusals, not failed calls; avo runs
# lists the LLM budgets.
[ "$(q "$tmp/t.db" "SELECT count(*) FROM events WHERE kind = 'operator_outcome'
     AND json_extract(data, '$.outcome') = 'refused'")" -ge 1 ] || fail "no refusal counted"
[ "$(q "$tmp/t.db" "SELECT count(*) FROM events WHERE kind = 'operator_outcome'
     AND json_extract(data, '$.outcome') = 'call failed'")" -eq 0 ] || fail "refusals counted as failed calls"
expect_exit 0 "$AVO" runs --db "$tmp/t.db"
expect_in "$tmp/out" "max-tokens 600"

# Dollars: price the scripted model, 150 tokens = $0.00015 at $1/M tokens.
cat > "$tmp/prices.lua" <<'LUA'
return { scripted = { input = 1, output = 1 } }
LUA
AVO_LLM_PRICES="$tmp/prices.lua" expect_exit 0 "$AVO" run tests/llm/ga_llm.lua \
    --db "$tmp/u.db" --seed 3 --jobs 2 --max-usd 0.0003 generations=30
expect_in "$tmp/err" "avo: 2 LLM calls"
expect_exit 0 "$AVO" runs --db "$tmp/u.db"
expect_in "$tmp/out" "max-usd 0.0003"
[ "$(q "$tmp/u.db" "SELECT count(*) FROM llm_calls")" -eq 2 ] || fail "usd budget not enforced"
q "$tmp/u.db" "SELECT round(sum(cost_usd), 6) FROM llm_calls" | grep -qx 0.0003 || fail "cost not recorded"
echo "llm budget: ok"
