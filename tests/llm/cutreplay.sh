#!/bin/sh
# Replay of runs cut short (issue 24): a run stopped by --max-time or by a
# signal records where (event run_stop: the budget check that found it), and
# `avo replay` stops at the same check and says "identical"; with LLM calls
# too (scripted answers).
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL AVO_LLM_REPLAY
export AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl AVO_TEST_SLOW_MS=40

# --max-time
expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/t.db" --seed 4 --max-time 4 generations=200
why=$(q "$tmp/t.db" "SELECT json_extract(data, '$.why') FROM events WHERE kind = 'run_stop'")
[ "$why" = max-time ] || fail "no run_stop max-time event (got '$why')"
# The calls not made after the stop name the limit, not a budget nobody set.
if grep -q "budget exhausted" "$tmp/err"; then fail "a --max-time stop called a budget exhausted"; fi
cat > "$tmp/late.lua" <<'LUA'
local avo = require "avo"
while not avo.exhausted() do end -- (0.5 s: the watchdog waits 5 s more)
local r, err = avo.llm.chat{ messages = { { role = "user", content = "hi" } } }
assert(not r and avo.llm.is_refusal(err), tostring(err))
io.stderr:write("late call: ", err, "\n")
LUA
expect_exit 0 "$AVO" run "$tmp/late.lua" --db "$tmp/late.db" --max-time 0.5
expect_in "$tmp/err" "late call: the run is stopping (--max-time 0.5s); no LLM call is made"
n=$(q "$tmp/t.db" "SELECT count(*) FROM candidates")
[ "$n" -gt 6 ] || fail "the run made too little to replay ($n candidates)"
unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT
expect_exit 0 "$AVO" replay --db "$tmp/t.db" --out "$tmp/rt.db"
expect_in "$tmp/out" "replay identical"

# A signal
export AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl
"$AVO" run tests/llm/ga_llm.lua --db "$tmp/s.db" --seed 4 generations=200 >/dev/null 2>&1 &
pid=$!
sleep 4
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc"
why=$(q "$tmp/s.db" "SELECT json_extract(data, '$.why') FROM events WHERE kind = 'run_stop'")
[ "$why" = signal ] || fail "no run_stop signal event (got '$why')"
unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT
expect_exit 0 "$AVO" replay --db "$tmp/s.db" --out "$tmp/rs.db"
expect_in "$tmp/out" "replay identical"

echo "llm cutreplay: ok"
