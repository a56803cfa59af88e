-- Strategies at equal budget on the noise-free NK landscape
-- (bench/landscape.lua: ten 4-valued knobs, known optimum): random sampling
-- as the baseline, ga, islands, map_elites and surrogate, each for five seeds at 200
-- evaluations.  The test backend scores in-process, so the whole grid takes
-- well under a minute on two cores:
--
--   avo experiment bench/landscape_experiment.lua --db landscape.db
--   avo experiment report --db landscape.db --out landscape
local EVALS, SEEDS = 200, 5
return {
  name = "landscape",
  description = "strategies at equal budget on an NK landscape (N = 10, K = 2)",
  arms = {
    { name = "random", strategy = "random", options = { samples = 100000, batch = 8 } },
    { name = "ga", strategy = "ga",
      options = { population = 16, generations = 1000, elite = 2, crossover_rate = 0.3 } },
    { name = "islands", strategy = "islands",
      options = { islands = 4, population = 8, generations = 1000, elite = 1,
        migration_interval = 5 } },
    { name = "map_elites", strategy = "map_elites",
      options = { dims = { "K1", "K2" }, initial = 16, batch = 8, iterations = 1000 } },
    { name = "surrogate", strategy = "surrogate", options = { iterations = 1000 } },
  },
  workloads = { nk = "bench/landscape.lua" },
  seeds = SEEDS,
  budgets = { { max_evals = EVALS } },
  jobs = 2,
}
