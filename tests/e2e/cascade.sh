#!/bin/sh
# Cascade evaluation: an evaluator's `cascade` runs its cheap configs first
# and stops a candidate there when it is wrong, or clearly worse than the
# best (below min_ratio x the best's score on those configs: "pruned"),
# without running the rest.  Replayed identically; a bad cascade is an error
# naming the field.
. "$(dirname "$0")/lib.sh"
cat > "$tmp/ga.lua" <<'LUA'
local avo = require "avo"
return avo.strategy("ga").run{ evaluator = "tests/lua/evaluators/cascade.lua", population = 6,
                               generations = 3 }
LUA
AVO_TEST_CASCADE_LOG="$tmp/configs.log" expect_exit 0 "$AVO" run "$tmp/ga.lua" --db "$tmp/c.db" --seed 1
pruned=$(q "$tmp/c.db" "SELECT count(*) FROM candidates WHERE status = 'pruned'
                        AND reason LIKE 'cascade stage 1 (small): % below 0.9 x the best''s %'")
[ "$pruned" -ge 1 ] || fail "no candidate was pruned at the first stage"
q "$tmp/c.db" "SELECT reason FROM candidates WHERE status = 'wrong'" | grep -q "^cascade stage 1: " \
    || fail "a candidate wrong on the first stage is not stopped there"
# Only candidates that passed the first stage ran the second.
ok=$(q "$tmp/c.db" "SELECT count(*) FROM candidates WHERE status = 'ok'")
large=$(grep -c '^large$' "$tmp/configs.log")
[ "$large" -eq "$ok" ] || fail "$large evaluations of 'large' for $ok candidates that passed stage 1"
[ "$(q "$tmp/c.db" "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
     WHERE c.status = 'pruned' AND e.config = 'large'")" -eq 0 ] || fail "a pruned candidate has a 'large' result"
expect_exit 0 "$AVO" replay --db "$tmp/c.db" --out "$tmp/r.db"
expect_in "$tmp/out" "replay identical"

cat > "$tmp/bad.lua" <<'LUA'
local ev = dofile("tests/lua/evaluators/synthetic.lua")
ev.cascade = { { configs = { "tiny" } } }
return ev
LUA
cat > "$tmp/run_bad.lua" <<LUA
local avo = require "avo"
avo.evaluator("$tmp/bad.lua")
LUA
expect_exit 1 "$AVO" run "$tmp/run_bad.lua" --db "$tmp/b.db"
expect_in "$tmp/err" "evaluator field 'cascade[1]' names no config 'tiny'"
# An error while a cascade runs is the run's error (not a hang).
cat > "$tmp/err_ev.lua" <<'LUA'
local ev = dofile("tests/lua/evaluators/cascade.lua")
ev.artifacts = function() error("feedback broke") end
return ev
LUA
cat > "$tmp/run_err.lua" <<LUA
local avo = require "avo"
local ev = avo.evaluator("$tmp/err_ev.lua")
avo.evaluate(ev, ev:seed())
LUA
expect_exit 1 "$AVO" run "$tmp/run_err.lua" --db "$tmp/e.db"
expect_in "$tmp/err" "artifacts() failed"
expect_in "$tmp/err" "feedback broke"
echo "cascade: ok"
