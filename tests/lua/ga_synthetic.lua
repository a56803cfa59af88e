-- A GA run on the deterministic test backend (used by tests/e2e/determinism.sh).
local avo = require "avo"
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/synthetic.lua",
  population = 6, generations = 5, crossover_rate = 0.5,
  operators = { param_tweak = 1 },
}
