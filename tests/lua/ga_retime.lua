-- The GA re-timing its elites (retime_elites) on lucky.lua's landscape
-- (tests/e2e/retime_elites.sh).  RETIME=K sets the option.
local avo = require "avo"
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/lucky.lua",
  population = 6, generations = 6, crossover_rate = 0.5, elite = 2,
  operators = { param_tweak = 1 },
  retime_elites = math.tointeger(tonumber(os.getenv("RETIME") or "2")),
}
