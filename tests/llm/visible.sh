#!/bin/sh
# Failures of the LLM operators are visible: each rejected answer and each
# failed call is logged as it happens and recorded as an operator_outcome
# event; the status line counts them and, without a terminal, is printed
# while calls are in flight; `avo report` lists the failed calls and the
# rejection reasons.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT
start_fake_server
# "plain" answers text no patch can apply; "auth401" fails the call.
export AVO_LLM_PROVIDER=openai AVO_LLM_BASE_URL="$FAKE_BASE/v1" AVO_LLM_API_KEY="$FAKE_LLM_KEY" \
    AVO_LLM_MODEL="plain-openai=1, auth401-openai=1" AVO_LLM_CONCURRENCY=4
cat > "$tmp/ga.lua" <<'LUA'
local avo = require "avo"
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/synthetic.lua", population = 4, generations = 2,
  crossover_rate = 0, operators = { llm_mutate = 1 },
  operator_options = { llm_mutate = { fix_attempts = 0, retries = 0 } },
}
LUA
expect_exit 0 "$AVO" run "$tmp/ga.lua" --db "$tmp/v.db" --seed 2
expect_in "$tmp/err" "llm_mutate: rejected: unusable answer"
expect_in "$tmp/err" "llm_mutate: call failed: llm: openai: authentication failed (401)"
grep -Eq "llm_mutate 0 applied/[1-9][0-9]* rejected/[1-9][0-9]* failed" "$tmp/err" \
    || fail "the status line does not count the outcomes: $(cat "$tmp/err")"
[ "$(q "$tmp/v.db" "SELECT count(*) FROM events WHERE kind = 'operator_outcome'
     AND json_extract(data, '$.outcome') = 'rejected'")" -ge 1 ] || fail "no rejected outcome event"
[ "$(q "$tmp/v.db" "SELECT count(*) FROM events WHERE kind = 'operator_outcome'
     AND json_extract(data, '$.outcome') = 'call failed'")" -ge 1 ] || fail "no failed-call outcome event"

expect_exit 0 "$AVO" report --db "$tmp/v.db" --out "$tmp/r.html"
expect_in "$tmp/r.html" "<h3>Failed LLM calls</h3>"
expect_in "$tmp/r.html" "auth401-openai: openai: authentication failed (401)"
expect_in "$tmp/r.html" "<h3>Operators that made no child</h3>"
expect_in "$tmp/r.html" "llm_mutate — rejected: unusable answer"

# No terminal and a call of 3 s: status lines with the call's age meanwhile.
cat > "$tmp/slow.lua" <<'LUA'
local avo = require "avo"
assert(avo.llm.chat{ messages = { { role = "user", content = "hi" } } })
LUA
AVO_LLM_MODEL=sleep3-openai AVO_STATUS_INTERVAL=1 expect_exit 0 "$AVO" run "$tmp/slow.lua" --db "$tmp/s.db"
grep -Eq "1 in flight \(oldest [0-9]+s\)" "$tmp/err" || fail "no status line while the call was in flight: $(cat "$tmp/err")"
echo "llm visible: ok"
