#!/bin/sh
# Search features of the ga family: novelty rejection before evaluation
# (near-duplicate sources by normalized-token similarity) and the operator
# bandit (weights shift toward operators whose children improve), both
# recorded as events and replayed identically.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL
export AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/llm/script.jsonl

# Without the filter, comment-only answers become children and are evaluated.
expect_exit 0 "$AVO" run tests/llm/novelty.lua --db "$tmp/plain.db" --seed 3
[ "$(q "$tmp/plain.db" "SELECT count(*) FROM candidates WHERE operator = 'llm_mutate'")" -ge 1 ] \
    || fail "expected llm_mutate children without the filter"

# With it, they are rejected before evaluation, logged and recorded.
expect_exit 0 "$AVO" run tests/llm/novelty.lua --db "$tmp/n.db" --seed 3 novelty=0.9 bandit=1
[ "$(q "$tmp/n.db" "SELECT count(*) FROM candidates WHERE operator = 'llm_mutate'")" -eq 0 ] \
    || fail "a near-duplicate was evaluated"
expect_in "$tmp/err" "llm_mutate: rejected before evaluation: near-duplicate of #"
expect_in "$tmp/err" "(token similarity 1.000 >= 0.9)"
[ "$(q "$tmp/n.db" "SELECT count(*) FROM events WHERE kind = 'novelty_rejected'")" -ge 1 ] \
    || fail "no novelty_rejected event"

# The bandit: one operator_weights event per generation, each weight the
# posterior mean win rate of its operator (configured weights are 1).
[ "$(q "$tmp/n.db" "SELECT count(*) FROM events WHERE kind = 'operator_weights'")" -eq 4 ] \
    || fail "expected one operator_weights event per generation"
bad=$(q "$tmp/n.db" "SELECT count(*) FROM events, json_each(json_extract(data, '$.weights')) w
    WHERE kind = 'operator_weights' AND abs(w.value - max(0.05,
      (json_extract(data, '$.stats.' || w.key || '.wins') + 1.0) /
      (json_extract(data, '$.stats.' || w.key || '.trials') + 2))) > 1e-9")
[ "$bad" -eq 0 ] || fail "$bad weights do not follow the win rates"
q "$tmp/n.db" "SELECT json_extract(data, '$.weights.param_tweak') > json_extract(data, '$.weights.llm_mutate')
               FROM events WHERE kind = 'operator_weights' ORDER BY id DESC LIMIT 1" | grep -qx 1 \
    || fail "the weights did not shift toward the operator whose children improve"

# Models of a model list are weighed by their children too.
AVO_LLM_MODEL="m1=1,m2=1" expect_exit 0 "$AVO" run tests/llm/novelty.lua --db "$tmp/m.db" --seed 3 bandit=1
[ "$(q "$tmp/m.db" "SELECT count(*) FROM events, json_each(json_extract(data, '$.model_bias'))
     WHERE kind = 'operator_weights'")" -ge 1 ] || fail "no model bias recorded"
bad=$(q "$tmp/m.db" "SELECT count(*) FROM events, json_each(json_extract(data, '$.model_bias')) w
    WHERE kind = 'operator_weights' AND abs(w.value - max(0.05,
      (json_extract(data, '$.model_stats.' || w.key || '.wins') + 1.0) /
      (json_extract(data, '$.model_stats.' || w.key || '.trials') + 2))) > 1e-9")
[ "$bad" -eq 0 ] || fail "$bad model biases do not follow the win rates"

# Replayed: the same decisions.
unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT
expect_exit 0 "$AVO" replay --db "$tmp/n.db" --out "$tmp/r.db"
expect_in "$tmp/out" "replay identical"
expect_exit 0 "$AVO" replay --db "$tmp/m.db" --out "$tmp/r2.db"
expect_in "$tmp/out" "replay identical"

# Bad options name themselves.
cat > "$tmp/bad.lua" <<'LUA'
local avo = require "avo"
return avo.strategy("ga").run{ evaluator = "tests/lua/evaluators/synthetic.lua",
  novelty = { threshold = 2 } }
LUA
expect_exit 1 "$AVO" run "$tmp/bad.lua" --db "$tmp/b.db"
expect_in "$tmp/err" "novelty"
expect_in "$tmp/err" "threshold in (0, 1]"
echo "llm novelty: ok"
