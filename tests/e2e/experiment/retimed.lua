-- The re-timed grid of tests/e2e/experiment.sh: random sampling and ga on
-- axpy (a small timed CPU kernel), two seeds, each cell re-timing its top 2
-- with the seed in 2 rounds at its end; the report's best scores are the
-- re-timed ones, with their paired ratios to the seed (1 where the seed is
-- the best).
return {
  name = "retimed",
  arms = {
    { name = "random", strategy = "random", options = { samples = 1000, batch = 2 } },
    { name = "ga", strategy = "ga", options = { population = 3, generations = 1000 } },
  },
  workloads = { axpy = "../evaluators/axpy.lua" },
  seeds = 2,
  -- "seed": the seed alone, so each run's re-timed best is the seed
  budgets = { { max_evals = 3 }, { name = "seed", max_evals = 1 } },
  jobs = 2,
  retime = { top = 2, rounds = 2 },
}
