-- The grid of tests/slurm/experiment.sh: two arms on the quickstart
-- evaluator, two seeds, each cell's workers a Slurm job step of two tasks.
return {
  name = "slurm-grid",
  arms = {
    { name = "random", strategy = "random", options = { samples = 1000, batch = 2 } },
    { name = "ga", strategy = "ga", options = { population = 4, generations = 1000 } },
  },
  workloads = { axpy = "tests/e2e/evaluators/axpy.lua" },
  seeds = 2,
  budgets = { { max_evals = 3 } },
  jobs = 2,
  run_jobs = 2,
  slurm = "--time=30",
}
