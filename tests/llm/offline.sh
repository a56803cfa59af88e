#!/bin/sh
# Replay is offline, always (issue 33): runs of each LLM operator
# (llm_mutate, llm_crossover, the agent's lineages) against OpenAI-style
# servers, the server stopped, then `avo replay` and --llm-replay: the same
# lineage.  What the runs took from the servers (context windows from
# /props or an assumed default, tokens per character from the tokenizer
# and from each answer's usage, the server's family) is recorded with each
# call and replayed, also where concurrent calls learned it in an order
# that timing decided.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/server.sh"
unset AVO_LLM_REPLAY AVO_LLM_SCRIPT AVO_LLM_CONCURRENCY AVO_LLM_FAULT_LIMIT AVO_LLM_STREAM \
    AVO_LLM_CONTEXT_WINDOW AVO_LLM_MAX_TOKENS
export AVO_LLM_PROVIDER=openai

lineage() {
    q "$1" "SELECT c.id, c.operator, c.knobs, c.source_hash, c.note,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
}

# Two agent lineages side by side: which one reaches a version first (the
# other's attempt is then a duplicate) follows the order the server
# answered them in, which the replay keeps.
cat > "$tmp/agent.lua" <<'LUA'
local avo = require "avo"
return avo.strategy("avo").run{ evaluator = "tests/agent/evaluators/synth.lua", steps = 2,
  lineages = 2, migration_interval = 1, agent = { model = "agent-openai", max_turns = 6 } }
LUA

# Record against live servers: a llama.cpp-like one (window 6000 from
# /props, a tokenizer, prompts counted; several calls in flight) and one
# that says nothing of itself (an assumed window).
start_fake_server
export AVO_LLM_API_KEY="$FAKE_LLM_KEY"
n=0
for base in "$FAKE_BASE/slots2/ctx6000/v1" "$FAKE_BASE/v1"; do
    n=$((n + 1))
    AVO_LLM_BASE_URL=$base AVO_LLM_MODEL=editslow-openai expect_exit 0 "$AVO" run tests/llm/ga_llm.lua \
        --db "$tmp/ga$n.db" --seed 2 --jobs 2 crossover=llm_crossover
    [ "$(q "$tmp/ga$n.db" "SELECT count(*) FROM candidates WHERE operator LIKE 'llm_mutate%'")" -ge 2 ] ||
        fail "no llm_mutate children against $base"
    # (Two kernels do not fit a window of 6000 tokens: no crossover call there.)
    [ $n -eq 1 ] ||
        [ "$(q "$tmp/ga$n.db" "SELECT count(*) FROM candidates WHERE operator LIKE 'llm_crossover%'")" -ge 1 ] ||
        fail "no llm_crossover children against $base"
    AVO_LLM_BASE_URL=$base expect_exit 0 "$AVO" run "$tmp/agent.lua" --db "$tmp/ag$n.db" --jobs 2
    [ "$(q "$tmp/ag$n.db" "SELECT count(*) FROM candidates WHERE operator = 'agent'")" -ge 1 ] ||
        fail "no agent commits against $base"
done
expect_in "$tmp/err" "says nothing of its context window; assuming 8192 tokens"
q "$tmp/ga1.db" "SELECT count(*) FROM llm_calls WHERE json_extract(request, '$.known.context_tokens') = 6000" \
    | grep -qv '^0$' || fail "the server's window is not recorded with the calls"
kill "$fake_pid"
wait "$fake_pid" 2>/dev/null || true
trap 'rc=$?; rm -rf "$tmp"; exit $rc' EXIT

# The servers are gone: every replay answers from the archive alone.
export AVO_LLM_BASE_URL="$FAKE_BASE/v1"
for db in ga1 ga2 ag1 ag2; do
    expect_exit 0 "$AVO" replay --db "$tmp/$db.db" --out "$tmp/$db-r.db"
    expect_in "$tmp/out" "replay identical"
    if grep -q "Couldn't connect\|infrastructure fault" "$tmp/err"; then
        fail "$db: the replay reached for the network: $(cat "$tmp/err")"
    fi
done
for n in 1 2; do
    AVO_LLM_MODEL=editslow-openai expect_exit 0 "$AVO" run tests/llm/ga_llm.lua --db "$tmp/ga$n-l.db" \
        --seed 2 --jobs 2 crossover=llm_crossover --llm-replay "$tmp/ga$n.db"
    lineage "$tmp/ga$n.db" > "$tmp/a.txt"
    lineage "$tmp/ga$n-l.db" > "$tmp/b.txt"
    cmp -s "$tmp/a.txt" "$tmp/b.txt" || { diff "$tmp/a.txt" "$tmp/b.txt" | head; fail "--llm-replay of ga$n changed the lineage"; }
    expect_exit 0 "$AVO" run "$tmp/agent.lua" --db "$tmp/ag$n-l.db" --jobs 2 --llm-replay "$tmp/ag$n.db"
    lineage "$tmp/ag$n.db" > "$tmp/a.txt"
    lineage "$tmp/ag$n-l.db" > "$tmp/b.txt"
    cmp -s "$tmp/a.txt" "$tmp/b.txt" || { diff "$tmp/a.txt" "$tmp/b.txt" | head; fail "--llm-replay of ag$n changed the lineage"; }
done
echo "llm offline: ok"
