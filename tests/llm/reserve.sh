#!/bin/sh
# Budgets hold with calls in flight together: each call reserves its worst
# case before it is sent, so --max-tokens is exceeded by at most one call's
# worth however many tasks ask at once; with room in the budget the calls
# still go out together.  And --max-time cancels a call in flight: a run
# whose only call would take 60 s ends at its time limit with that call
# recorded as cancelled.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT
start_fake_server
export AVO_LLM_PROVIDER=openai AVO_LLM_BASE_URL="$FAKE_BASE/v1" AVO_LLM_MODEL=inflight-openai \
    AVO_LLM_API_KEY="$FAKE_LLM_KEY" AVO_LLM_CONCURRENCY=10

# Every answer is 18 tokens; each call reserves 40 + its prompt (> 50).
expect_exit 0 "$AVO" run tests/llm/reserve.lua --db "$tmp/r.db" --max-tokens 50
expect_in "$tmp/err" "reserve: used"
used=$(q "$tmp/r.db" "SELECT sum(input_tokens + output_tokens) FROM llm_calls")
most=$(q "$tmp/r.db" "SELECT max(input_tokens + output_tokens) FROM llm_calls")
[ "$used" -le $((50 + most)) ] || fail "--max-tokens 50 overshot by more than one call: $used tokens"
[ "$used" -ge 50 ] || fail "the budget was not used: $used tokens"
grep -q "refused [1-9]" "$tmp/err" || fail "no call was refused: $(cat "$tmp/err")"

# Room for every call: they are in flight together.
expect_exit 0 "$AVO" run tests/llm/reserve.lua --db "$tmp/s.db" --max-tokens 100000
grep -q "answered 10, refused 0" "$tmp/err" || fail "calls refused: $(cat "$tmp/err")"
grep -Eq "peers ([2-9]|10)" "$tmp/err" || fail "calls were not in flight together: $(cat "$tmp/err")"

# --max-time 2 against a 60 s answer: cancelled at the limit, not waited for.
cat > "$tmp/slow.lua" <<'LUA'
local avo = require "avo"
local r, err = avo.llm.chat{ messages = { { role = "user", content = "hi" } }, timeout = 120 }
assert(not r, "the call should have been cancelled")
io.stderr:write("slow: ", err, "\n")
LUA
AVO_LLM_MODEL=sleep60-openai expect_exit 0 "$AVO" run "$tmp/slow.lua" --db "$tmp/t.db" --max-time 2
expect_in "$tmp/err" "slow: openai: call cancelled at the run's time limit (--max-time)"
[ "$(q "$tmp/t.db" "SELECT status FROM llm_calls")" = error ] || fail "cancelled call not recorded"
# Recorded latency: the 2 s limit, far from the server's 60 s.
q "$tmp/t.db" "SELECT latency_s < 30 FROM llm_calls" | grep -qx 1 || fail "the call was waited for"
echo "llm reserve: ok"
