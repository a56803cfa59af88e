-- A GA on the synthetic test evaluator for tests/serve: with
-- AVO_TEST_SLOW_MS each evaluation takes that long, so candidates arrive
-- over seconds while avo serve shows them.
local avo = require "avo"
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/synthetic.lua",
  population = 6, generations = 12, crossover_rate = 0.5,
  operators = { param_tweak = 1 },
}
