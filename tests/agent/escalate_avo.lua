-- strategies/avo with a model that never changes anything and escalation
-- off (tests/agent/escalate.sh): two steps, both without an evaluation,
-- counted in the summary.
local avo = require "avo"
avo.strategy("avo").run{
  evaluator = "tests/agent/evaluators/synth.lua", steps = 2, supervisor = false,
  agent = { max_turns = 3, escalate_after = 0, retries = 0 },
}
