-- The agent (examples/avo_cpu.lua: the AVO loop with tools, commits only
-- what is correct and not slower) against parameter tweaks alone (ga with
-- the param_tweak operator) on the CPU sgemm kernel.  Offline: the agent's
-- LLM answers come from the scripted provider (examples/avo_cpu.jsonl), so
-- the grid runs anywhere in a few minutes; point AVO_LLM_* at a real model
-- (and drop the env below) for the real comparison, with a token budget.
--
--   avo experiment examples/experiments/agent_vs_tweaks.lua --db agent.db
--   avo experiment report --db agent.db --out agent
return {
  name = "agent-vs-tweaks",
  description = "AVO agent (scripted LLM answers) vs parameter tweaks on CPU sgemm",
  arms = {
    -- paths are relative to this file (an env value when it starts ./ or ../)
    { name = "agent", script = "../avo_cpu.lua", args = { steps = 4, stall = 2 },
      env = { AVO_LLM_PROVIDER = "scripted", AVO_LLM_SCRIPT = "../avo_cpu.jsonl" } },
    { name = "tweaks", strategy = "ga",
      options = { population = 4, generations = 1000, operators = { param_tweak = 1 } } },
  },
  workloads = { sgemm = "cpu/sgemm" },
  seeds = 2,
  budgets = { { max_evals = 12, max_tokens = 200000 } },
  jobs = 1,
}
