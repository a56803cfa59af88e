#!/bin/sh
# Local-server defaults.  Calls in flight at once per server: one on a local
# server that says nothing about itself, its slots where llama.cpp's /props
# gives them, 8 on a batching server (vLLM), AVO_LLM_CONCURRENCY above all.
# Context windows from the server's metadata or a "too long" error
# (tests/llm/window.lua), the default window of a server that says nothing,
# token estimates.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT AVO_LLM_CONCURRENCY
start_fake_server
export AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=inflight-openai AVO_LLM_API_KEY="$FAKE_LLM_KEY"

peers() {
    expect_exit 0 "$AVO" run tests/llm/reserve.lua --db "$tmp/$1.db" callers=6
    grep -q "answered 6, refused 0" "$tmp/err" || fail "$1: calls refused: $(cat "$tmp/err")"
    sed -n 's/.*peers \([0-9]*\).*/\1/p' "$tmp/err"
}
[ "$(AVO_LLM_BASE_URL="$FAKE_BASE/v1" peers plain)" = 1 ] || fail "a plain local server got several calls at once"
[ "$(AVO_LLM_BASE_URL="$FAKE_BASE/slots2/v1" peers slots)" = 2 ] || fail "2 slots: not 2 calls at once"
[ "$(AVO_LLM_BASE_URL="$FAKE_BASE/slots2/v1" AVO_LLM_CONCURRENCY=3 peers env)" = 3 ] \
    || fail "AVO_LLM_CONCURRENCY=3 not obeyed"
n=$(AVO_LLM_BASE_URL="$FAKE_BASE/vllm8192/v1" peers vllm)
[ "$n" -ge 2 ] || fail "vLLM (batching) got one call at a time"
q "$tmp/slots.db" "SELECT json_extract(data, '$.slots') FROM events WHERE kind = 'llm_server'" \
    | grep -qx 2 || fail "what was learned of the server is not in the archive"

AVO_LLM_BASE_URL="$FAKE_BASE/v1" AVO_LLM_CONCURRENCY=0 \
    expect_exit 1 "$AVO" run tests/llm/reserve.lua --db "$tmp/bad.db" callers=1
expect_in "$tmp/err" "AVO_LLM_CONCURRENCY) must be an integer >= 1, got 0"

expect_exit 0 "$AVO" run tests/llm/window.lua --db "$tmp/w.db" base="$FAKE_BASE"
expect_in "$tmp/err" "window: ok"
expect_in "$tmp/err" "has a context window of 2048 tokens (from an error)"

# The agent inside a small window (compaction before and during a step,
# nothing sent beyond the window): tests/agent/window.sh.
echo "llm local: ok"
