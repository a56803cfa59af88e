-- An experiment with an arm that fails on purpose (tests/e2e/experiment.sh):
-- its cells are shown failed with their reason, never dropped silently.
return {
  name = "fail",
  arms = {
    { name = "random", strategy = "random", options = { samples = 100, batch = 4 } },
    { name = "broken", run = function() error("deliberate failure in arm") end },
  },
  workloads = { nk = "bench/landscape.lua" },
  seeds = 2,
  budgets = { { max_evals = 10 } },
  jobs = 2,
}
