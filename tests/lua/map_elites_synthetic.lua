-- A MAP-Elites run on the deterministic test backend (tests/e2e/map_elites.sh).
local avo = require "avo"
return avo.strategy("map_elites").run{
  evaluator = "tests/lua/evaluators/synthetic.lua",
  dims = { "TILE", "ORDER" },
  initial = 4, batch = 6, iterations = 6, crossover_rate = 0.3,
  operators = { param_tweak = 1 },
}
