-- Strategies on the CPU sgemm knob space (evaluators/cpu/sgemm.lua: loop
-- order, cache blocks, unrolling, register tiles, packing): random sampling
-- as the baseline against ga and map_elites, 16 evaluations a run, three
-- seeds.  Every candidate is compiled, verified and timed in a sandboxed
-- worker; one run at a time keeps the timings quiet on a two-core machine
-- (a few minutes in all; the compile cache makes re-runs faster).
--
--   avo experiment examples/experiments/sgemm_strategies.lua --db sgemm.db
--   avo experiment report --db sgemm.db --out sgemm
return {
  name = "sgemm-strategies",
  description = "random vs ga vs map_elites on the CPU sgemm knobs, 16 evaluations, 3 seeds",
  arms = {
    { name = "random", strategy = "random", options = { samples = 1000, batch = 2 } },
    { name = "ga", strategy = "ga", options = { population = 6, generations = 1000, elite = 1 } },
    { name = "map_elites", strategy = "map_elites",
      options = { dims = { "TILE", "ORDER" }, initial = 6, batch = 2, iterations = 1000 } },
  },
  workloads = { sgemm = "cpu/sgemm" },
  seeds = 3,
  budgets = { { max_evals = 16 } },
  jobs = 1,     -- runs at once: timing wants the cores
  run_jobs = 1, -- evaluations in flight per run
}
