#!/bin/sh
# Escalation (issue 24): a model that only looks around (the fake server's
# "idle" model, as SmolLM2-135M behaved) is made to change, evaluate and
# commit; each server gets the forced request in the shape it understands:
#   - an OpenAI-compatible server: a named tool_choice after K idle turns,
#     then evaluate and commit, driven;
#   - llama-server (answers /props, takes no named tool_choice): an answer
#     constrained to the tool's argument schema (response_format json_object
#     + schema, no tools), edit's `search` one of the kernel's own lines;
#   - llama-cpp-python (answers /extras/tokenize): a named tool_choice,
#     streamed (only "auto" cannot stream there), tool results as user
#     messages;
#   - set_knobs forced with a schema of the knobs' other values;
#   - force_with=schema on a generic server: response_format json_schema;
#   - a server that ignores a named tool_choice: schema answers from then on;
#   - the step's last turns (by its turn budget, or its time at the pace
#     of its turns) force an evaluation even before K idle turns;
#   - a commit refused by re-timing is not forced again;
#   - the default K: 3 for a small window, 8 for a large one;
#   - escalate_after=0: nothing is forced, and the step that measured
#     nothing says so (log, event, the avo strategy's summary count).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../llm/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_PROVIDER AVO_LLM_MODEL AVO_LLM_SCRIPT AVO_LLM_BASE_URL \
    AVO_LLM_CONTEXT_WINDOW AVO_LLM_STREAM
export FAKE_LLM_LOG="$tmp/requests.jsonl"
start_fake_server
export AVO_LLM_API_KEY="$FAKE_LLM_KEY"

run() { # run NAME ARGS...: one step into $tmp/NAME.db, requests in $tmp/NAME.jsonl
    name=$1; shift
    : > "$FAKE_LLM_LOG"
    expect_exit 0 "$AVO" run tests/agent/escalate.lua --db "$tmp/$name.db" --jobs 1 "$@"
    cp "$FAKE_LLM_LOG" "$tmp/$name.jsonl"
}
forced() { # forced DB: the tools forced, in order
    q "$1" "SELECT group_concat(json_extract(data, '$.tool'), ',') FROM events WHERE kind = 'agent_forced'"
}
chat() { grep '"status": 200' "$1"; }

# An OpenAI-compatible server: two idle turns, then edit, evaluate, commit forced.
run plain base="$FAKE_BASE" model=idle-openai escalate_after=2
expect_in "$tmp/err" "step: committed"
expect_in "$tmp/err" "forcing edit (2 turns without a change to the working copy; named tool_choice)"
expect_in "$tmp/err" "forcing evaluate (the forced change is evaluated"
[ "$(forced "$tmp/plain.db")" = "edit,evaluate,commit" ] || fail "plain: forced $(forced "$tmp/plain.db")"
[ "$(chat "$tmp/plain.jsonl" | head -2 | grep -c '"tool_choice": "auto"')" -eq 2 ] \
    || fail "plain: the first two turns were not the model's own: $(head -2 "$tmp/plain.jsonl")"
for tool in edit evaluate commit; do
    grep -q "\"tool_choice\": {\"function\": {\"name\": \"$tool\"}, \"type\": \"function\"}" \
        "$tmp/plain.jsonl" || fail "plain: no named tool_choice $tool: $(cat "$tmp/plain.jsonl")"
done
if grep -q response_format "$tmp/plain.jsonl"; then fail "plain: a schema sent to a server of no known family"; fi
[ "$(q "$tmp/plain.db" "SELECT json_extract(data, '$.forced') || ' ' || json_extract(data, '$.evaluations')
     FROM events WHERE kind = 'agent_step'")" = "3 1" ] || fail "plain: agent_step forced/evaluations"

# llama-server: the window from /props; forced calls constrained by a schema.
run lcpp base="$FAKE_BASE/ctx8192" model=lcpp-idle-openai escalate_after=2
expect_in "$tmp/err" "step: committed"
expect_in "$tmp/err" "forcing edit (2 turns without a change to the working copy; answer constrained to its argument schema)"
[ "$(forced "$tmp/lcpp.db")" = "edit,evaluate,commit" ] || fail "lcpp: forced $(forced "$tmp/lcpp.db")"
if grep -q '"tool_choice": {' "$tmp/lcpp.jsonl"; then fail "lcpp: a named tool_choice sent to llama-server"; fi
n=$(chat "$tmp/lcpp.jsonl" | grep '"response_format": {"schema": .*"type": "json_object"}' | grep -c '"tools": 0,')
[ "$n" -eq 3 ] || fail "lcpp: $n schema-constrained requests without tools, not 3: $(cat "$tmp/lcpp.jsonl")"
chat "$tmp/lcpp.jsonl" | grep '"response_format"' | head -1 | grep -q '"enum": \[.*"#define SPEED 1.0"' \
    || fail "lcpp: edit's search is not one of the kernel's lines: $(grep response_format "$tmp/lcpp.jsonl" | head -1)"

# ... and replays offline: the forced calls go the same way (the family
# the recorded run found), no request reaches the server.
: > "$FAKE_LLM_LOG"
expect_exit 0 "$AVO" run tests/agent/escalate.lua --db "$tmp/lcpp-again.db" --jobs 1 \
    --llm-replay "$tmp/lcpp.db" base="$FAKE_BASE/ctx8192" model=lcpp-idle-openai escalate_after=2
expect_in "$tmp/err" "step: committed"
[ "$(forced "$tmp/lcpp-again.db")" = "edit,evaluate,commit" ] || fail "lcpp replay: forced $(forced "$tmp/lcpp-again.db")"
if grep -q chat "$FAKE_LLM_LOG" || grep -q '"status"' "$FAKE_LLM_LOG"; then fail "lcpp replay: asked the server"; fi

# llama-cpp-python: named tool_choice, streamed.
run lcpy base="$FAKE_BASE/xtok" model=lcpy-idle-openai escalate_after=2
expect_in "$tmp/err" "step: committed"
expect_in "$tmp/err" "named tool_choice"
[ "$(chat "$tmp/lcpy.jsonl" | grep '"tool_choice": {' | grep -c '"stream": true')" -eq 3 ] \
    || fail "lcpy: forced requests not streamed: $(cat "$tmp/lcpy.jsonl")"

# ... and its tool results go as user messages (chatml-function-calling
# renders no tool message), said once; elsewhere they stay tool messages.
expect_in "$tmp/err" "is llama-cpp-python: tool results go to the model as user messages"
if grep -q '"tool_messages": [1-9]' "$tmp/lcpy.jsonl"; then fail "lcpy: tool messages sent"; fi
grep -q '"tool_messages": [1-9]' "$tmp/plain.jsonl" || fail "plain: no tool messages"

# ... and `avo replay` of it is identical without the server, and without
# the window setting of the recorded run (AVO_LLM_CONTEXT_WINDOW, recorded).
export AVO_LLM_CONTEXT_WINDOW=6000
run lcpyw base="$FAKE_BASE/xtok" model=lcpy-idle-openai
unset AVO_LLM_CONTEXT_WINDOW
expect_in "$tmp/err" "has a context window of 6000 tokens (from the user)"
: > "$FAKE_LLM_LOG"
expect_exit 0 "$AVO" replay --db "$tmp/lcpyw.db" --out "$tmp/lcpyw-again.db"
cat "$tmp/out" "$tmp/err" > "$tmp/both"
expect_in "$tmp/both" "replay identical"
if grep -q '"status"' "$FAKE_LLM_LOG"; then fail "lcpyw replay: asked the server"; fi

# set_knobs: a kernel with knobs; the schema offers only the other values.
run knobs base="$FAKE_BASE/ctx8192" model=lcpp-idle-openai escalate_after=1 knobs=1
expect_in "$tmp/err" "forcing set_knobs"
chat "$tmp/knobs.jsonl" | grep '"response_format"' | head -1 \
    | grep -q '"anyOf": \[{"additionalProperties": false, "properties": {"VEC": {"enum": \[2, 4\]}}' \
    || fail "knobs: set_knobs schema: $(grep response_format "$tmp/knobs.jsonl" | head -1)"
expect_in "$tmp/err" 'knobs {"VEC":2}'
expect_in "$tmp/err" "forcing set_knobs (1 turn without a change to the working copy"
expect_in "$tmp/err" "forcing commit (the working copy measured at least as fast as the best" 

# force_with=schema on a server of no known family: OpenAI's json_schema.
run schema base="$FAKE_BASE" model=idle-openai escalate_after=2 force_with=schema
expect_in "$tmp/err" "step: committed"
grep -q '"response_format": {"json_schema": {"name": "answer", "schema": .*"type": "json_schema"}' "$tmp/schema.jsonl" \
    || fail "schema: no json_schema response_format: $(cat "$tmp/schema.jsonl")"

# A server that ignores a named tool_choice: said once, then schema answers.
run notc base="$FAKE_BASE" model=idlenotc-openai escalate_after=2
expect_in "$tmp/err" "without calling it (it ignores a named tool_choice); forced calls go as answers constrained"
expect_in "$tmp/err" "step: committed"
[ "$(q "$tmp/notc.db" "SELECT count(*) FROM events WHERE kind = 'agent_force_fallback'")" -eq 1 ] \
    || fail "notc: no agent_force_fallback event"
grep -q '"response_format": {"json_schema"' "$tmp/notc.jsonl" || fail "notc: no schema after the fallback"

# The last turns of a step force an evaluation before K idle turns.
run last base="$FAKE_BASE" model=idle-openai escalate_after=50 max_turns=4
[ "$(forced "$tmp/last.db")" = "edit,evaluate" ] || fail "last: forced $(forced "$tmp/last.db")"
expect_in "$tmp/err" "forcing edit (the step would end without an evaluation"
[ "$(q "$tmp/last.db" "SELECT json_extract(data, '$.evaluations') FROM events WHERE kind = 'agent_step'")" -eq 1 ] \
    || fail "last: no evaluation"

# ... and before its time runs out, at the pace of its turns so far (1 s a
# turn, 12 s a step: the evaluation comes before the clock ends the step).
run slow base="$FAKE_BASE" model=idleslow-openai escalate_after=50 max_turns=50 max_seconds=12
expect_in "$tmp/err" "forcing edit (the step would end without an evaluation: about"
[ "$(q "$tmp/slow.db" "SELECT json_extract(data, '$.evaluations') FROM events WHERE kind = 'agent_step'")" -ge 1 ] \
    || fail "slow: no evaluation before the step's time ran out"
# Replayed, the clock runs differently: the forced calls are the recorded ones.
expect_exit 0 "$AVO" replay --db "$tmp/slow.db" --out "$tmp/slow-again.db"
cat "$tmp/out" "$tmp/err" > "$tmp/both"
expect_in "$tmp/both" "replay identical"
[ "$(forced "$tmp/slow-again.db")" = "$(forced "$tmp/slow.db")" ] || fail "slow replay: other forced calls"

# A step's first turn already knows the pace of the lineage's earlier
# steps (1 s a turn): with 2.5 s it forces a change at once.
run pace base="$FAKE_BASE" model=idleslow-openai escalate_after=50 max_turns=4 max_seconds2=2.5
[ "$(q "$tmp/pace.db" "SELECT min(json_extract(data, '$.turn')) FROM events WHERE kind = 'agent_forced'
     AND json_extract(data, '$.step') = 2")" = 1 ] \
    || fail "pace: step 2 did not force at its first turn: $(q "$tmp/pace.db" "SELECT data FROM events WHERE kind = 'agent_forced'")"

# ... and a step that would need a compaction call but has time for fewer
# than six turns drops the old conversation instead, and says so.
run nocompact base="$FAKE_BASE/ctx8192" model=idleslow-openai escalate_after=50 max_turns=6 \
    max_seconds2=2.5 big=1
expect_in "$tmp/err" "agent main step 2: no time for a compaction call"
[ "$(q "$tmp/nocompact.db" "SELECT count(*) FROM events WHERE kind = 'agent_compaction_skipped'")" -eq 1 ] \
    || fail "nocompact: no agent_compaction_skipped event"
[ "$(q "$tmp/nocompact.db" "SELECT count(*) FROM events WHERE kind = 'agent_compaction'
     AND json_extract(data, '$.during_step') IS NULL")" -eq 0 ] || fail "nocompact: compacted at the start anyway"

# A commit that re-timing refused is not forced again: the next forced
# call is a new change.
run lucky base="$FAKE_BASE" model=idlelucky-openai escalate_after=2 max_turns=8 noise=0.05
case "$(forced "$tmp/lucky.db")" in
    edit,evaluate,commit,edit*) ;;
    *) fail "lucky: forced $(forced "$tmp/lucky.db")" ;;
esac
[ "$(q "$tmp/lucky.db" "SELECT count(*) FROM attempts WHERE outcome = 'rejected_noise'")" -eq 1 ] \
    || fail "lucky: the commit was not refused by re-timing once"
[ "$(q "$tmp/lucky.db" "SELECT count(*) FROM events WHERE kind = 'agent_forced'
     AND json_extract(data, '$.tool') = 'commit'")" -eq 1 ] || fail "lucky: a refused commit forced again"

# The default: 3 idle turns for a small window (8192 assumed here), 8 for
# a large one (a capable model explores first).
run small base="$FAKE_BASE" model=idle-openai
expect_in "$tmp/err" "turn 4: forcing edit (3 turns without a change"
run large base="$FAKE_BASE/ctx65536" model=idle-openai
expect_in "$tmp/err" "turn 9: forcing edit (8 turns without a change"

# No escalation: nothing forced, and the step says it measured nothing.
run off base="$FAKE_BASE" model=idle-openai escalate_after=0 max_turns=4
expect_in "$tmp/err" "agent main step 1: no evaluation in this step (4 turns, 4 tool calls, 0 errors)"
expect_in "$tmp/err" "unevaluated steps 1"
[ "$(forced "$tmp/off.db")" = "" ] || fail "off: forced $(forced "$tmp/off.db")"
if grep -q '"tool_choice": {' "$tmp/off.jsonl"; then fail "off: a forced request"; fi
[ "$(q "$tmp/off.db" "SELECT json_extract(data, '$.unevaluated') FROM events WHERE kind = 'agent_step'")" -eq 1 ] \
    || fail "off: agent_step does not say unevaluated"

# Through strategies/avo: the summary counts the steps without an evaluation.
: > "$FAKE_LLM_LOG"
AVO_LLM_PROVIDER=openai AVO_LLM_BASE_URL="$FAKE_BASE/v1" AVO_LLM_MODEL=idle-openai \
    expect_exit 0 "$AVO" run tests/agent/escalate_avo.lua --db "$tmp/avo.db" --jobs 1
expect_in "$tmp/err" "avo: 2 steps (2 without an evaluation)"
[ "$(q "$tmp/avo.db" "SELECT json_extract(data, '$.unevaluated_steps') FROM events WHERE kind = 'avo_summary'")" -eq 2 ] \
    || fail "avo_summary: unevaluated_steps"
# Bad options are refused, naming them.
expect_exit 1 "$AVO" run tests/agent/escalate.lua --db "$tmp/bad.db" --jobs 1 base="$FAKE_BASE" \
    model=idle-openai force_with=grammar
expect_in "$tmp/err" "agent: option 'force_with' must be \"auto\", \"tool_choice\" or \"schema\", got grammar"
expect_exit 1 "$AVO" run tests/agent/escalate.lua --db "$tmp/bad2.db" --jobs 1 base="$FAKE_BASE" \
    model=idle-openai escalate_after=-1
expect_in "$tmp/err" "agent: option 'escalate_after' must be an integer >= 0, got -1"
expect_exit 0 "$AVO" run tests/agent/escalate_api.lua --db "$tmp/api.db" --jobs 1
expect_in "$tmp/err" "escalate api: ok"
echo "agent escalate: ok"
