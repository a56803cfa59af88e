#!/bin/sh
# A server that ignores max_tokens (llama-cpp-python writing tool arguments):
# avo streams the answer and stops reading at the call's max_tokens, so one
# call cannot run past what it reserved and --max-tokens holds to "budget
# plus one call".
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT AVO_LLM_STREAM AVO_LLM_MODEL AVO_LLM_BASE_URL
export FAKE_LLM_LOG="$tmp/requests.jsonl"
start_fake_server
export AVO_LLM_PROVIDER=openai AVO_LLM_API_KEY="$FAKE_LLM_KEY"

expect_exit 0 "$AVO" run tests/llm/stream.lua --db "$tmp/one.db" base="$FAKE_BASE" mode=one
expect_in "$tmp/err" "stream one: ok"
expect_in "$tmp/err" "went on past max_tokens 64; its answer is cut there"
expect_in "$tmp/err" "streams no answer to a request with tools; such requests go unstreamed"
[ "$(grep -c '"empty_stream": true' "$FAKE_LLM_LOG")" -eq 1 ] || fail "tool requests streamed again"
sent=$(sed -n 's/.*"runon_sent": \([0-9]*\).*/\1/p' "$FAKE_LLM_LOG" | sort -n | head -1)
[ -n "$sent" ] && [ "$sent" -lt 1500 ] || fail "the server wrote $sent chunks: the client read on"

# A server that cannot stream tool calls and ignores max_tokens, slowly
# (llama-cpp-python on a CPU): its unstreamed calls are cut at their
# reserve, charged it, counted apart from failures and faults; a fast
# server's are not.  Replayed: cut again, same tokens.
AVO_LLM_MIN_TOKENS_PER_S=50 FAKE_LLM_SLOW_S=20 expect_exit 0 "$AVO" run tests/llm/stream.lua \
    --db "$tmp/cut.db" base="$FAKE_BASE" mode=cut
expect_in "$tmp/err" "stream cut: ok"
expect_in "$tmp/err" "LLM calls (0 failed; 1 cut at their reserve)"
expect_in "$tmp/err" "/slow/v1 cut a call at its reserve of 64 tokens (~"
expect_in "$tmp/err" "tok/s): the server does not stream tool calls and ignores max_tokens"
if grep -q "infrastructure fault" "$tmp/err"; then fail "a cut counted as an outage"; fi
[ "$(grep -c 'cut a call' "$tmp/err")" -eq 1 ] || fail "the cut was not logged once"
[ "$(q "$tmp/cut.db" "SELECT count(*) FROM llm_calls WHERE json_extract(response, '$.cut')")" \
    -eq 1 ] || fail "the cut call is not recorded as cut"
took=$(q "$tmp/cut.db" "SELECT CAST(latency_s * 10 AS INTEGER) FROM llm_calls WHERE json_extract(response, '$.cut')")
[ "$took" -ge 30 ] && [ "$took" -lt 80 ] || fail "the cut came after $took tenths of a second, not near ~4.6 s"
used=$(sed -n 's/.*stream cut: ok, \([0-9]*\) tokens.*/\1/p' "$tmp/err")
expect_exit 0 "$AVO" run tests/llm/stream.lua --db "$tmp/cutr.db" --llm-replay "$tmp/cut.db" \
    base="$FAKE_BASE" mode=cut
expect_in "$tmp/err" "stream cut: ok, $used tokens"
expect_exit 0 "$AVO" replay --db "$tmp/cut.db" --out "$tmp/cutrr.db"
expect_in "$tmp/out" "replay identical"

# A slow streamed answer shows its progress on the status line (heartbeat
# lines without a terminal): the count of tokens read so far.
AVO_STATUS_INTERVAL=0.5 expect_exit 0 "$AVO" run tests/llm/stream.lua --db "$tmp/p.db" \
    base="$FAKE_BASE" mode=progress
expect_in "$tmp/err" "stream progress: ok"
grep -Eq "1 in flight \(oldest [0-9]+s, [1-9][0-9]* tok streamed\)" "$tmp/err" ||
    { cat "$tmp/err"; fail "the status line did not show the streamed tokens"; }

expect_exit 0 "$AVO" run tests/llm/stream.lua --db "$tmp/b.db" --max-tokens 500 \
    base="$FAKE_BASE" mode=budget
used=$(sed -n 's/.*answered, \([0-9]*\) tokens.*/\1/p' "$tmp/err")
# One call reserves its prompt estimate and max_tokens (64): at most ~80.
[ -n "$used" ] && [ "$used" -le 580 ] || fail "budget 500 overshot: $used tokens"
[ "$used" -ge 500 ] || fail "budget 500 not reached: $used tokens"
max=$(q "$tmp/b.db" "SELECT max(output_tokens) FROM llm_calls")
[ "$max" -le 64 ] || fail "a call used $max output tokens, max_tokens 64"
# A server that streams without a usage chunk: the tokens are counted here,
# so --max-tokens still holds.
kill "$fake_pid" 2>/dev/null || true
wait "$fake_pid" 2>/dev/null || true
rm -f "$tmp/port"
FAKE_LLM_NO_USAGE=1 start_fake_server
export AVO_LLM_API_KEY="$FAKE_LLM_KEY"
AVO_LLM_MODEL=plain-openai AVO_LLM_BASE_URL="$FAKE_BASE/v1" expect_exit 0 "$AVO" run \
    tests/llm/ga_llm.lua --db "$tmp/n.db" --seed 3 --max-tokens 20000 generations=200
[ "$(q "$tmp/n.db" "SELECT min(input_tokens) FROM llm_calls WHERE status = 'ok'")" -gt 100 ] \
    || fail "a streamed answer without usage counted no prompt tokens"
[ "$(q "$tmp/n.db" "SELECT max(generation) FROM candidates")" -lt 200 ] \
    || fail "--max-tokens did not stop a server that reports no usage"
echo "llm stream: ok"
