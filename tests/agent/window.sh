#!/bin/sh
# The agent inside an 8k context window (issue 24): a server that answers
# prompts beyond its n_ctx with HTTP 400 and llama.cpp's error body.  Each
# step evaluates and no request ever reaches the server over its window:
#   - the window and the tokenizer from the server (/props, /tokenize);
#   - a server that says nothing of itself: 8192 assumed (and said), the
#     estimate 3 characters a token, then what the answers' usage counted;
#   - a compaction call that fails: logged and an event, never silent.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../llm/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_PROVIDER AVO_LLM_MODEL AVO_LLM_SCRIPT AVO_LLM_BASE_URL \
    AVO_LLM_CONTEXT_WINDOW
export FAKE_LLM_LOG="$tmp/requests.jsonl"
start_fake_server
export AVO_LLM_API_KEY="$FAKE_LLM_KEY"

check() { # check DB NAME: every step evaluated, nothing over the window
    [ "$(q "$1" "SELECT count(*) FROM events WHERE kind = 'agent_step'")" -eq 3 ] \
        || fail "$2: not 3 steps"
    [ "$(q "$1" "SELECT count(*) FROM events WHERE kind = 'agent_step'
                 AND json_extract(data, '$.evaluations') >= 1")" -eq 3 ] \
        || fail "$2: a step without an evaluation: $(q "$1" "SELECT data FROM events WHERE kind = 'agent_step'")"
    [ "$(q "$1" "SELECT count(*) FROM llm_calls WHERE status != 'ok'")" -eq 0 ] \
        || fail "$2: failed calls: $(q "$1" "SELECT error FROM llm_calls WHERE status != 'ok'")"
    [ "$(q "$1" "SELECT count(*) FROM events WHERE kind = 'agent_compaction'")" -ge 1 ] \
        || fail "$2: never compacted"
    if grep -q '"status": 400' "$FAKE_LLM_LOG"; then fail "$2: a request beyond n_ctx: $(grep '"status": 400' "$FAKE_LLM_LOG" | head -3)"; fi
    [ "$(grep -c '"status": 200' "$FAKE_LLM_LOG")" -ge 9 ] || fail "$2: too few requests reached the server"
}

# The server says its window (/props n_ctx 8192) and counts tokens (/tokenize).
expect_exit 0 "$AVO" run tests/agent/window.lua --db "$tmp/a.db" --jobs 1 \
    base="$FAKE_BASE/ctx8192" model=agent-openai
expect_in "$tmp/err" "agent window: ok"
expect_in "$tmp/err" "context window of 8192 tokens (from GET /props)"
check "$tmp/a.db" props
[ "$(q "$tmp/a.db" "SELECT count(*) FROM events WHERE kind = 'agent_compaction'
     AND json_extract(data, '$.step') >= 2 AND json_extract(data, '$.during_step') IS NULL
     AND json_extract(data, '$.context_window') = 8192")" -ge 1 ] \
    || fail "no compaction at the start of a step"
[ "$(q "$tmp/a.db" "SELECT count(*) FROM events WHERE kind = 'agent_compaction'
     AND json_extract(data, '$.during_step')")" -ge 1 ] || fail "no compaction during a step"
q "$tmp/a.db" "SELECT json_extract(data, '$.tokens_per_char') > 0.34 FROM events WHERE kind = 'llm_server'" \
    | grep -qx 1 || fail "the server's tokenizer was not asked"

# A server that says nothing of itself but has n_ctx 8192 all the same.
: > "$FAKE_LLM_LOG"
expect_exit 0 "$AVO" run tests/agent/window.lua --db "$tmp/b.db" --jobs 1 \
    base="$FAKE_BASE/limit8192" model=agent-openai
expect_in "$tmp/err" "says nothing of its context window; assuming 8192 tokens"
check "$tmp/b.db" default

# The user's window where the server says nothing.
: > "$FAKE_LLM_LOG"
AVO_LLM_CONTEXT_WINDOW=6000 expect_exit 0 "$AVO" run tests/agent/window.lua --db "$tmp/c.db" \
    --jobs 1 base="$FAKE_BASE/limit6000" model=agent-openai
check "$tmp/c.db" user
if grep -q "assuming 8192" "$tmp/err"; then fail "the user's window was not used"; fi

# A compaction that fails is said and recorded; the step that cannot go on
# says why.
: > "$FAKE_LLM_LOG"
expect_exit 0 "$AVO" run tests/agent/window.lua --db "$tmp/d.db" --jobs 1 \
    base="$FAKE_BASE/ctx8192" model=agentnocompact-openai
expect_in "$tmp/err" "compaction failed"
[ "$(q "$tmp/d.db" "SELECT count(*) FROM events WHERE kind = 'agent_compaction_failed'
     AND json_extract(data, '$.error') LIKE '%compaction refused%'")" -ge 1 ] \
    || fail "no agent_compaction_failed event"
if grep -q '"status": 400' "$FAKE_LLM_LOG"; then fail "failed compaction: a request beyond n_ctx"; fi
echo "agent window: ok"
