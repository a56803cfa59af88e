#!/bin/sh
# LLM outages are infrastructure faults (issue 24): calls the server does
# not answer are retried with backoff and counted; AVO_LLM_FAULT_LIMIT calls
# in a row stop the run with exit 3 and status `failed`; `avo resume` asks
# those calls again (never answers them with the recorded failure) and
# finishes.  The agent strategy's lineages do not end on an outage.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT AVO_LLM_CONCURRENCY AVO_LLM_FAULT_LIMIT
export AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=plain-openai AVO_LLM_RETRIES=1 AVO_LLM_BACKOFF=0.05
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# llm_mutate in a GA: the server is down from the start.
AVO_LLM_BASE_URL="http://127.0.0.1:$dead/v1" \
    expect_exit 3 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/g.db" --seed 4
expect_in "$tmp/err" "llm: infrastructure fault 1 in a row (of 3 allowed)"
expect_in "$tmp/err" "the LLM server is out: 3 calls in a row failed for the infrastructure"
[ "$(q "$tmp/g.db" "SELECT status FROM runs")" = failed ] || fail "status not failed"
faults=$(q "$tmp/g.db" "SELECT count(*) FROM llm_calls WHERE json_extract(response, '$.infrastructure')")
[ "$faults" -ge 3 ] || fail "the faults are not marked in the archive ($faults)"
[ "$(q "$tmp/g.db" "SELECT max(attempts) FROM llm_calls")" -eq 2 ] || fail "no retry"

# A lower limit is obeyed.
AVO_LLM_FAULT_LIMIT=1 AVO_LLM_BASE_URL="http://127.0.0.1:$dead/v1" \
    expect_exit 3 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/one.db" --seed 4
expect_in "$tmp/err" "the LLM server is out: 1 calls in a row"

# The server is back: resume asks the failed calls again and finishes.
start_fake_server
export AVO_LLM_API_KEY="$FAKE_LLM_KEY"
AVO_LLM_BASE_URL="$FAKE_BASE/v1" expect_exit 0 "$AVO" resume --db "$tmp/g.db"
if grep -q "Couldn't connect" "$tmp/err"; then fail "resume replayed recorded failures: $(cat "$tmp/err")"; fi
[ "$(q "$tmp/g.db" "SELECT status FROM runs")" = done ] || fail "resumed run not done"
[ "$(q "$tmp/g.db" "SELECT count(*) FROM llm_calls WHERE status = 'ok'")" -ge "$faults" ] \
    || fail "the failed calls were not asked again"

# The agent strategy, the server gone in the middle of a step: the lineage
# does not end on the outage; a run that runs out of steps while the server
# is out (2 faults, under the limit) is not `done` either: exit 3, and it
# resumes once the server is back.
cat > "$tmp/avo.lua" <<LUA
local avo = require "avo"
return avo.strategy("avo").run{ evaluator = "tests/agent/evaluators/synth.lua", steps = 2,
  agent = { model = "agentoutage-openai", retries = 1, backoff = 0.05, max_turns = 6 } }
LUA
AVO_LLM_BASE_URL="$FAKE_BASE/v1" expect_exit 3 "$AVO" run "$tmp/avo.lua" --db "$tmp/a.db" --jobs 1
expect_in "$tmp/err" "the run ended while the LLM server was out (its last 2 call(s) failed"
[ "$(q "$tmp/a.db" "SELECT status FROM runs")" = failed ] || fail "agent run: status not failed"
if grep -q "lineage main stops" "$tmp/err"; then fail "the lineage ended on an outage"; fi
[ "$(q "$tmp/a.db" "SELECT count(*) FROM llm_calls WHERE status = 'ok'")" -eq 2 ] \
    || fail "not 2 answers before the outage"
kill "$fake_pid" 2>/dev/null || true
wait "$fake_pid" 2>/dev/null || true
rm -f "$tmp/port"
FAKE_LLM_UP=1 start_fake_server # the server is back
AVO_LLM_BASE_URL="$FAKE_BASE/v1" expect_exit 0 "$AVO" resume --db "$tmp/a.db" --jobs 1
[ "$(q "$tmp/a.db" "SELECT count(*) FROM events WHERE kind = 'agent_step'
     AND json_extract(data, '$.committed') IS NOT NULL")" -ge 1 ] || fail "no commit after resume"
echo "llm outage: ok"
