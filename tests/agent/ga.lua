-- The agent as one operator of ga: its committed version comes back as a
-- candidate already in the archive (ga's evaluation is a duplicate).
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local best = avo.strategy("ga").run{
  evaluator = "tests/agent/evaluators/synth.lua", population = 2, generations = 1,
  crossover_rate = 0, operators = { agent = 1, param_tweak = 1 },
}
assert(best.operator == "agent" and best.note == "SPEED 1.2", tostring(best.note))
local n = 0
for _, c in ipairs(assert(t.archive(args):candidates(1, false))) do
  if c.operator == "agent" then n = n + 1 end
end
assert(n == 1, "one agent candidate")
io.stderr:write("agent ga: ok\n")
