-- The test backend grid of tests/e2e/experiment.sh: three arms (two
-- strategies and a function arm) on the NK landscape, two budgets, three
-- seeds.  GRID_FAIL=1 adds an arm that fails on purpose.
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
if os.getenv("GRID_FAIL") == "1" then
  arms[#arms + 1] = { name = "broken", run = function() error("deliberate failure in arm") end }
end
return {
  name = "grid",
  arms = arms,
  workloads = { nk = "bench/landscape.lua" },
  seeds = 3,
  budgets = { { max_evals = 12 }, { name = "long", max_evals = 30 } },
  jobs = 2,
}
