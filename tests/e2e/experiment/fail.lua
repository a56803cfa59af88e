-- An experiment with an arm that fails on purpose (tests/e2e/experiment.sh):
-- its cells are shown failed with their reason, never dropped silently,
-- also when the run ended `stopped` with an error status.
return {
  name = "fail",
  arms = {
    { name = "random", strategy = "random", options = { samples = 100, batch = 4 } },
    { name = "broken", run = function() error("deliberate failure in arm") end },
    -- stops the run with exit status 2 (as a script refusing its setup does)
    { name = "refuses", run = function() require("avo").exit(2, "deliberately refused") end },
  },
  workloads = { nk = "bench/landscape.lua" },
  seeds = 2,
  budgets = { { max_evals = 10 } },
  jobs = 2,
}
