#!/bin/sh
# Calls that wait for a slot: each server's calls wait for that server's
# slots and no other's, go as slots free up, and are all answered; with an
# LLM budget spent while they wait, the waiting ones are refused and the
# run ends (no call waits for ever).  Every release looks again at the
# waiting calls in the order they came (lua/avo/llm/budget.lua).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT AVO_LLM_CONCURRENCY
start_fake_server
export AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=inflight-openai AVO_LLM_API_KEY="$FAKE_LLM_KEY"
a="$FAKE_BASE/slots2/v1" b="$FAKE_BASE/slots3/v1"

# 7 calls to each: A has 2 slots, B 3; both are full at once.
expect_exit 0 "$AVO" run tests/llm/gate.lua --db "$tmp/g.db" a="$a" b="$b"
expect_in "$tmp/err" "gate: answered 14, refused 0, peers 5, A 2, B 3"
[ "$(q "$tmp/g.db" "SELECT count(*) FROM llm_calls WHERE status = 'ok'")" = 16 ] ||
    fail "not every call recorded as answered"

# A budget of about three calls: the calls waiting when it is spent are
# refused, the run ends.
expect_exit 0 "$AVO" run tests/llm/gate.lua --db "$tmp/h.db" --max-tokens 150 a="$a" b="$b"
grep -Eq "gate: answered [1-9][0-9]*, refused [1-9]" "$tmp/err" ||
    fail "expected answered and refused calls: $(cat "$tmp/err")"
answered=$(sed -n 's/.*gate: answered \([0-9]*\),.*/\1/p' "$tmp/err")
refused=$(sed -n 's/.*refused \([0-9]*\),.*/\1/p' "$tmp/err")
[ $((answered + refused)) -eq 14 ] || fail "calls lost: $(cat "$tmp/err")"
echo "llm gate: ok"
