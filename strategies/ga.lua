-- ga: a generational genetic algorithm.
--
--   return avo.strategy("ga").run{ evaluator = "cpu/sgemm", generations = 30 }
--
-- The seed is evaluated first; the initial population is the seed plus a
-- space-filling sample of the valid knob space (a `spread` share of it,
-- operator "spread", strategies/lib/space.lua) and param_tweak children of
-- the seed for the rest. Each generation keeps the `elite` best records
-- and fills the rest with children: two tournament winners are crossed with
-- probability `crossover_rate`, and the child (or, without crossover, the
-- first winner) is varied by an operator drawn from the `operators` weights.
-- Failed records score 0 and so lose tournaments without special cases.
--
-- The children of a generation are made by concurrent tasks, so operators
-- that call an LLM have their requests in flight together.  Every random
-- choice for a child comes from streams named by generation, slot and
-- attempt ("select/g3.c2.a1" for tournaments, "ga/..." for rates and
-- operator choice, "op.<name>/..." inside each operator), so a run seed
-- fixes every decision however the answers interleave.  Operators that keep
-- state between calls (`concurrent = false`, like the agent) are called in
-- slot order.
--
-- Options:
--   evaluator         spec for avo.evaluator (required)
--   population        integer >= 2 (default 8)
--   generations       integer >= 0 (default 20; without it, a run given
--                     --max-evals runs until that budget is spent)
--   elite             integer in [0, population) (default 1)
--   tournament        integer >= 1, tournament size (default 3)
--   crossover_rate    number in [0, 1] (default 0.3)
--   mutation_rate     number in [0, 1], chance that a crossover child is
--                     also mutated (default 1.0)
--   operators         map operator name -> weight >= 0 for mutation
--                     (default { param_tweak = 1 })
--   crossover         name of the crossover operator (default "crossover")
--   spread            number in [0, 1], share of generation 0 (after the
--                     seed, rounded up) drawn space-filling over the valid
--                     knob space, the rest param_tweak children of the seed
--                     (default 0.5; 0: the seed's neighbourhood only)
--   assemble          boolean (default false): where the evaluator's configs
--                     name knob groups (configs[i].knobs), the first child
--                     of every generation is the assemble operator's: the
--                     best record's knobs with each group's knobs taken
--                     from the member fastest on that group's configs
--                     (operators/assemble.lua), so a step one shape family
--                     won in a child that lost overall is kept
--   retime_elites     integer >= 0 (default 0): every generation, each
--                     elite measured fewer than retime_elites + 1 times is
--                     timed once more (an attempt, outcome "retime", counted
--                     against the budget), and the generation ranks and
--                     assembles it by the median of its measurements, score
--                     and per config: a lucky measurement (the winner's
--                     curse) no longer keeps a record elite
--   operator_options  map operator name -> that operator's options table
--   novelty           reject near-duplicates before evaluation: a child with
--                     the knob values of a source the run has and a
--                     normalized-token similarity >= threshold to it is
--                     dropped and its slot tries again (event
--                     novelty_rejected); { threshold = 0.95, shingle = 3 }
--                     (strategies/lib/novelty.lua), true for the defaults;
--                     default off (only exact duplicates are dropped)
--   bandit            true or { floor = 0.05 }: after each generation the
--                     operator weights become configured weight x posterior
--                     mean rate of children that beat their parent (at least
--                     floor x the configured weight), and the models of an
--                     LLM model list likewise; event operator_weights

local avo = require "avo"
local ga_core = require "strategies.lib.ga_core"

-- The generation logic lives in strategies/lib/ga_core.lua, shared with
-- strategies/islands.lua.
local M = {}

---@param opts avo.StrategyOptions
---@return avo.Record? # the best record
function M.run(opts)
  local cfg, err = ga_core.read_options("ga", opts)
  if not cfg then error(err, 2) end

  local state = ga_core.new_state(cfg, avo.evaluator(cfg.evaluator))
  local population = ga_core.initial_population(state)
  avo.progress{ generation = 0 }

  for g = 1, ga_core.last_generation(cfg) do
    if #population == 0 or avo.exhausted() then break end
    local next_population = ga_core.step(state, population, g)
    if next_population == nil then
      avo.log("ga: generation %d produced no new children; stopping", g)
      break
    end
    population = next_population
    avo.progress{ generation = g }
  end

  return state.best
end

return M
