-- The GA of run.sh: seeded with kernels/ga_cheat.c (evaluators/mm_ga.lua),
-- whose CHEAT knob skips the work on timed calls and whose ADAPT knob is the
-- gap-measuring adaptive cheat. Short, but long enough that param_tweak
-- tries ADAPT = 1 (run.sh checks that it did).
local avo = require "avo"
local args = ... or {}
return avo.strategy("ga").run{
  evaluator = args.evaluator or "tests/integrity/evaluators/mm_ga.lua",
  population = 4, generations = 4, elite = 1, tournament = 2, crossover_rate = 0.3,
  operators = { param_tweak = 1 },
}
