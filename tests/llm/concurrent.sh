#!/bin/sh
# The ga strategy makes a generation's children concurrently, so LLM-backed
# operators have their requests in flight together: the fake server's
# rendezvous model reports how many requests it saw at once.  The server
# says it has 4 slots (llama.cpp /props), so 4 calls may be in flight (and
# a 16k window: the sgemm prompts do not fit in the default 4096).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT
start_fake_server
export AVO_LLM_PROVIDER=openai AVO_LLM_BASE_URL="$FAKE_BASE/slots4/ctx16384/v1" AVO_LLM_MODEL=rendezvous-openai \
    AVO_LLM_API_KEY="$FAKE_LLM_KEY"
cat > "$tmp/ga.lua" <<'LUA'
local avo = require "avo"
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/synthetic.lua", population = 5, generations = 1,
  crossover_rate = 0, operators = { llm_mutate = 1 },
}
LUA
expect_exit 0 "$AVO" run "$tmp/ga.lua" --db "$tmp/c.db"
calls=$(q "$tmp/c.db" "SELECT count(*) FROM llm_calls")
[ "$calls" -ge 4 ] || fail "expected an LLM call per child, got $calls"
most=$(q "$tmp/c.db" "SELECT max(CAST(substr(response, instr(response, 'peers: ') + 7, 2) AS INTEGER))
                      FROM llm_calls WHERE response LIKE '%peers: %'")
[ "${most:-0}" -ge 2 ] || fail "LLM requests of one generation were never in flight together (max $most)"
echo "llm concurrent: ok ($most requests in flight at once)"
