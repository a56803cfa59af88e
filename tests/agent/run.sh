#!/bin/sh
# Run one agent test: tests/agent/NAME.lua through `avo run`, answered by
# the scripted provider from tests/agent/NAME.jsonl.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL
name=$1
export AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT="tests/agent/$name.jsonl"
expect_exit 0 "$AVO" run "tests/agent/$name.lua" --db "$tmp/t.db" --jobs 1 db="$tmp/t.db" tmp="$tmp"
expect_in "$tmp/err" "agent $name: ok"
