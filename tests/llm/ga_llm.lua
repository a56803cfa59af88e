-- A GA with llm_mutate on the deterministic test backend, answered by the
-- scripted provider (tests/llm/script.jsonl) or replayed from an archive.
-- Used by tests/llm/replay.sh and tests/llm/budget.sh.
local avo = require "avo"
local args = ...
return avo.strategy("ga").run{
  evaluator = "tests/lua/evaluators/synthetic.lua",
  population = 6, generations = tonumber(args.generations) or 4, crossover_rate = 0.3,
  crossover = args.crossover or "llm_crossover",
  operators = { param_tweak = 1, llm_mutate = 2 },
  operator_options = { llm_mutate = { temperature = tonumber(args.temperature) or 0,
                                      max_tokens = tonumber(args.max_tokens) } },
}
