-- sgemm_fast: tune a BLAS-style sgemm (packed panels, register-blocked
-- micro-kernel, cache blocking) with a genetic algorithm, to within reach of
-- OpenBLAS on one thread.
--
--   avo run examples/sgemm_fast.lua --max-evals 300
--   avo run examples/sgemm_fast.lua generations=3 population=4   (a short run)
--   avo run examples/sgemm_fast.lua strategy=linesearch --max-evals 300
--
-- The seed (kernels/cpu/sgemm_fast.c) is already at OpenBLAS's speed; it
-- picks one of four knob sets by the call's shape (small, tall-skinny,
-- large, mid-size), and each set has the register tile (MR x NV vectors),
-- cache blocks (KC MC NC), k-unrolling, prefetch distance, edge handling,
-- loop order and packing knobs, so the search tunes each shape family apart.
-- The evaluator times six shapes (512^3, 1024^3, two odd ones, a
-- tall-skinny and a small one), each beside the seed on the same inputs and
-- CPU (timing.yardstick), and scores the geometric mean of the paired
-- speed-ups (x seed), so two children measured at different moments compare
-- by what the moment did to neither; each shape
-- names its family's knobs (configs[i].knobs), so a crossover child takes
-- each family's knob set from the parent faster on that family's shapes.
-- Each family is its own problem that every evaluation measures at once, so
-- every child takes a step in each family (param_tweak's per_group), and the
-- first child of each generation assembles the fastest set per family found
-- in the population (the GA's assemble, operators/assemble.lua): a step one
-- family won in a child that lost overall is kept.
--
-- --max-evals is the budget: without generations= the GA runs until it is
-- spent (300 evaluations for --max-evals 300). bench/sgemm_vs_openblas.sh
-- runs this search, then times its best, the seed and OpenBLAS in the same
-- rounds on the six shapes, with the machine's FMA peak (docs/benchmarks.md).
-- The quickstart's naive kernel shows the search from far below; this one
-- shows where it ends.

local avo = require "avo"
local args = avo.options(..., {
  population = { type = "integer", default = 12, min = 2 },
  -- No default: with --max-evals the GA runs until that budget is spent
  -- (300 means 300 evaluations); without it, the GA's 20 generations.
  generations = { type = "integer", min = 0 },
  strategy = { type = "string", default = "ga" },
  -- retime_elites=K: the GA times each elite up to K more times and ranks
  -- it by the median (strategies/ga.lua; docs/benchmarks.md)
  retime_elites = { type = "integer", default = 0, min = 0 },
})

-- strategy=linesearch runs the ATLAS-style line search instead
-- (strategies/linesearch.lua): a knob at a time, all four families at once.
-- Over 300 evaluations it ended where the GA does (docs/benchmarks.md).
if args.strategy == "linesearch" then
  return avo.strategy("linesearch").run{ evaluator = "cpu/sgemm_fast" }
elseif args.strategy ~= "ga" then
  error(("strategy=%s: expected ga or linesearch"):format(args.strategy))
end

return avo.strategy("ga").run{
  evaluator = "cpu/sgemm_fast",
  population = args.population,
  generations = args.generations,
  elite = 2,
  tournament = 3,
  crossover_rate = 0.5,
  assemble = true,
  retime_elites = args.retime_elites,
  operators = { param_tweak = 1 },
  operator_options = { param_tweak = { max_changes = 2, per_group = true } },
}
