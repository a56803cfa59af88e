#!/bin/sh
# LLM faults are classified (issue 33): a URL that is no chat endpoint
# (404, 405, 501) is a configuration error at once, naming the URL and what
# it answered (made inert); 2xx answers that are no chat completion are
# infrastructure faults: a configuration error when the server never gave
# one, else exit 3 as an outage; never `done`.  A streamed request answered
# with one whole JSON completion is used as is, not asked again.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT AVO_LLM_CONCURRENCY AVO_LLM_FAULT_LIMIT AVO_LLM_STREAM
export FAKE_LLM_LOG="$tmp/requests.jsonl"
start_fake_server
export AVO_LLM_PROVIDER=openai AVO_LLM_API_KEY="$FAKE_LLM_KEY" AVO_LLM_BASE_URL="$FAKE_BASE/v1"
export AVO_LLM_RETRIES=2 AVO_LLM_BACKOFF=0.05

# inert FILE: no raw ESC, BEL or CR.
inert() {
    if LC_ALL=C grep -q "$(printf '[\033\007\r]')" "$1"; then
        cat -v "$1"; fail "$1 carries raw control characters"
    fi
}
status() { q "$1" "SELECT status FROM runs"; }

# 501, 404, 405: one call, no retry, a configuration error naming the URL.
for m in notimpl:501 gone404:404 noput405:405; do
    model=${m%%:*}-openai code=${m##*:}
    AVO_LLM_MODEL=$model expect_exit 1 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/$model.db" --seed 2
    inert "$tmp/err"; inert "$tmp/out"
    expect_in "$tmp/err" "avo: LLM configuration error: openai: $FAKE_BASE/v1/chat/completions is not a chat endpoint of this provider: it answered HTTP $code"
    expect_in "$tmp/err" "check AVO_LLM_BASE_URL"
    if grep -q "server is out" "$tmp/err"; then fail "$code reported as an outage"; fi
    [ "$(status "$tmp/$model.db")" = failed ] || fail "$model: run not failed"
    # (Calls already in flight when the first answer came are answered too.)
    [ "$(q "$tmp/$model.db" "SELECT max(attempts) FROM llm_calls")" = 1 ] ||
        fail "$model: retried"
    [ "$(q "$tmp/$model.db" "SELECT count(*) FROM llm_calls
          WHERE json_extract(response, '$.infrastructure') IS NOT 1")" = 0 ] ||
        fail "$model: a call is not marked for resume to ask again"
done
expect_in "$tmp/err" 'answered HTTP 405 with "Method Not Allowed"'
AVO_LLM_MODEL=notimpl-openai expect_exit 1 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/n.db" --seed 2
expect_in "$tmp/err" 'it answered HTTP 501 with "<html>Not Implemented\e]0;pwned\x07\e[2J</html>"'

# 200 with garbage from the first call: a configuration error at the fault
# limit (3 calls in a row), not `done` after a few seconds.
for model in malformed-openai notcompletion-openai; do
    AVO_LLM_MODEL=$model expect_exit 1 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/$model.db" --seed 2
    inert "$tmp/err"
    expect_in "$tmp/err" "llm: infrastructure fault 3 in a row (of 3 allowed)"
    expect_in "$tmp/err" "avo: LLM configuration error: openai: $FAKE_BASE/v1/chat/completions answered no chat completion"
    [ "$(status "$tmp/$model.db")" = failed ] || fail "$model: run not failed"
done
expect_in "$tmp/err" "(unexpected answer: no choices[1].message): HTTP 200 with \"{\"object\": \"list\", \"data\": []}\""

# Garbage after good answers: an outage (exit 3), resumable.
AVO_LLM_MODEL=garbageafter-openai expect_exit 3 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/g.db" --seed 2
inert "$tmp/err"
expect_in "$tmp/err" "the LLM server is out: 3 calls in a row failed for the infrastructure"
expect_in "$tmp/err" 'answered no chat completion (malformed JSON'
[ "$(status "$tmp/g.db")" = failed ] || fail "garbage after answers: run not failed"

# A streamed request with tools answered with a whole JSON completion: used
# as is, one request.
cat > "$tmp/json.lua" <<'LUA'
local avo = require "avo"
local weather = { { name = "get_weather", parameters = { type = "object",
  properties = { city = { type = "string" } } } } }
local r, err = avo.llm.chat{ model = "jsonstream-tools-openai", tools = weather, sse = true,
  messages = { { role = "user", content = "weather in Paris?" } } }
assert(r and r.tool_calls[1] and r.tool_calls[1].name == "get_weather", tostring(err))
r, err = avo.llm.chat{ model = "jsonstream-plain-openai", sse = true,
  messages = { { role = "user", content = "hi" } } }
assert(r and r.content == "echo: hi", tostring(err))
io.stderr:write("json stream: ok\n")
LUA
: > "$FAKE_LLM_LOG"
expect_exit 0 "$AVO" run "$tmp/json.lua" --db "$tmp/j.db"
expect_in "$tmp/err" "json stream: ok"
if grep -q "streams no answer" "$tmp/err"; then fail "a JSON completion was discarded"; fi
[ "$(grep -c '"model": "jsonstream-' "$FAKE_LLM_LOG")" -eq 2 ] || fail "a JSON completion was asked again"
[ "$(grep -c '"stream": true' "$FAKE_LLM_LOG")" -eq 2 ] || fail "the requests were not streamed"
echo "llm faults: ok"
