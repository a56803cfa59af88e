-- A GA with llm_mutate (scripted answers that only add comments: near
-- duplicates of their parents) for tests/llm/novelty.sh; novelty=T turns the
-- near-duplicate filter on, bandit=1 the operator bandit.
local avo = require "avo"
local args = ...
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/synthetic.lua", population = 6, generations = 4,
  crossover_rate = 0.3, crossover = "crossover", operators = { param_tweak = 1, llm_mutate = 1 },
  novelty = args.novelty and { threshold = tonumber(args.novelty) } or nil,
  bandit = args.bandit == "1",
  -- The seed's neighbourhood alone (no space-filling share), where
  -- param_tweak's children improve and the bandit has a trend to follow.
  spread = 0,
}
