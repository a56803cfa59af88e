-- The test backend grid of tests/e2e/experiment.sh: three arms (two
-- strategies and a function arm) on the NK landscape, two budgets, three
-- seeds.
local avo = require "avo"
local arms = {
  { name = "random", strategy = "random", options = { samples = 100000, batch = 4 } },
  { name = "ga", strategy = "ga", options = { population = 8, generations = 1000 } },
  -- a function arm: ga with a smaller population
  { name = "small_ga", run = function(opts)
      opts.population = 4
      return avo.strategy("ga").run(opts)
    end },
}
return {
  name = "grid",
  arms = arms,
  workloads = { nk = "bench/landscape.lua" },
  seeds = 3,
  budgets = { { max_evals = 12 }, { name = "long", max_evals = 30 } },
  jobs = 2,
}
