-- A longer GA on the deterministic test backend, for tests/faults/replay.sh
-- (its replay takes long enough to be killed part-way).
local avo = require "avo"
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/synthetic.lua",
  population = 16, generations = 40, crossover_rate = 0.5,
  operators = { param_tweak = 1 },
}
