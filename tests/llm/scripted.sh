#!/bin/sh
# The scripted provider (keyed and ordered answers) and the refusal of calls
# past --max-tokens; a script without LLM configuration exits 2.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL
cat > "$tmp/s.jsonl" <<'JSONL'
{"match": "use the tool", "content": "keyed", "tool_calls": [{"id": "t1", "name": "lookup", "arguments": {"q": "x"}}], "usage": {"input_tokens": 5, "output_tokens": 5}}
{"content": "first", "usage": {"input_tokens": 10, "output_tokens": 5}}
{"content": "second", "usage": {"input_tokens": 10, "output_tokens": 5}}
JSONL
AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT="$tmp/s.jsonl" \
    expect_exit 0 "$AVO" run tests/llm/test_scripted.lua --db "$tmp/s.db" --max-tokens 40
expect_in "$tmp/err" "llm scripted: ok"
expect_in "$tmp/err" "llm: LLM budget exhausted"

# The example without configuration says what to set and exits 2.
(
    unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT
    expect_exit 2 "$AVO" run examples/llm_mutate.lua --db "$tmp/e.db"
)
expect_in "$tmp/err" "AVO_LLM_PROVIDER"
[ "$(q "$tmp/e.db" "SELECT status FROM runs")" = stopped ] || fail "run not marked stopped"
echo "llm scripted: ok"
