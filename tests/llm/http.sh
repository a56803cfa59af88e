#!/bin/sh
# The LLM client against a loopback server: both API shapes, retries,
# timeouts, bad answers, 401; then the API key must appear nowhere in the
# archive or the output.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"

start_fake_server
export AVO_TEST_LLM_BASE="$FAKE_BASE"
export AVO_LLM_API_KEY="$FAKE_LLM_KEY"
# The failures are on purpose: no stop for an outage (tests/llm/outage.sh).
AVO_LLM_FAULT_LIMIT=1000 expect_exit 0 "$AVO" run tests/llm/test_http.lua --db "$tmp/http.db" --jobs 1
expect_in "$tmp/err" "llm http: ok"
n=$(q "$tmp/http.db" "SELECT count(*) FROM llm_calls")
[ "$n" -eq 26 ] || fail "expected 26 recorded calls, got $n"
q "$tmp/http.db" "SELECT count(*) FROM llm_calls WHERE provider = 'anthropic' AND status = 'ok'" \
    | grep -qx 7 || fail "anthropic successes not recorded"
for f in "$tmp"/http.db*; do
    if grep -q "$FAKE_LLM_KEY" "$f"; then fail "API key found in $f"; fi
done
if grep -q "$FAKE_LLM_KEY" "$tmp/out" "$tmp/err"; then fail "API key in the output"; fi
echo "llm http: ok"
