#!/bin/sh
# One agent step against the loopback fake server in both tool-calling
# shapes (OpenAI-compatible and Anthropic); the key stays out of the archive.
# A call cut at its reserve (tests/agent/cut.lua).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../llm/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_PROVIDER AVO_LLM_MODEL AVO_LLM_SCRIPT AVO_LLM_BASE_URL

start_fake_server
export AVO_TEST_LLM_BASE="$FAKE_BASE"
export AVO_LLM_API_KEY="$FAKE_LLM_KEY"
expect_exit 0 "$AVO" run tests/agent/http.lua --db "$tmp/a.db" --jobs 1 db="$tmp/a.db"
expect_in "$tmp/err" "agent http: ok"
q "$tmp/a.db" "SELECT count(*) FROM llm_calls WHERE provider = 'anthropic' AND status = 'ok'" \
    | grep -qx 9 || fail "anthropic turns not recorded"
for f in "$tmp"/a.db*; do
    if grep -q "$FAKE_LLM_KEY" "$f"; then fail "API key found in $f"; fi
done

# A server that cannot stream tool calls and ignores max_tokens, slowly:
# the agent's call is cut at its reserve, the step ends, the run goes on
# (exit 0, no outage) and replays identical.
AVO_LLM_MIN_TOKENS_PER_S=50 FAKE_LLM_SLOW_S=30 expect_exit 0 "$AVO" run tests/agent/cut.lua \
    --db "$tmp/c.db" --jobs 1 db="$tmp/c.db"
expect_in "$tmp/err" "agent cut: ok"
expect_in "$tmp/err" "cut a call at its reserve of 64 tokens"
expect_in "$tmp/err" "1 cut at their reserve"
if grep -q "infrastructure fault" "$tmp/err"; then fail "a cut counted as an outage"; fi
expect_exit 0 "$AVO" replay --db "$tmp/c.db" --out "$tmp/cr.db"
expect_in "$tmp/out" "replay identical"
echo "agent http: ok"
