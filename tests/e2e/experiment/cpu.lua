-- The real-worker grid of tests/e2e/experiment.sh: random sampling and ga on
-- the CPU sgemm knob space, two seeds, four evaluations a run (compiled,
-- verified and timed in sandboxed workers); no re-timing at the end of a
-- cell (what this grid tests is the runner: kills, resume, SIGTERM).
return {
  name = "cpu",
  arms = {
    { name = "random", strategy = "random", options = { samples = 1000, batch = 2 } },
    { name = "ga", strategy = "ga", options = { population = 4, generations = 1000 } },
  },
  workloads = { sgemm = "cpu/sgemm" },
  seeds = { 1, 2 },
  budgets = { { max_evals = 4 } },
  jobs = 2,
  retime = 0,
}
