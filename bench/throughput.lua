-- The throughput benchmark's run (bench/throughput.sh): ga on a trivial
-- kernel scored in-process (the test backend), so each candidate costs the
-- engine's own work only: strategy, operator, dedupe, archive, and with
-- op=llm_mutate an LLM call to the loopback fake server.
--   op=param_tweak|llm_mutate   the mutation operator (default param_tweak)
--   population=N                ga's population (default 100)
-- The run stops at --max-evals.
local avo = require "avo"
local args = ... or {}
local op = args.op or "param_tweak"
local ev = {
  name = "throughput", description = "y = x (engine throughput benchmark)", backend = "test",
  kernel = "bench/throughput.c", entry = "copy",
  configs = { { name = "n64" } },
  -- A rugged score (a hash of the knobs), so the population never
  -- converges and the run keeps making new candidates rather than retrying
  -- duplicates; the source's hash counts too, so LLM edits score apart.
  test_score = function(cand)
    local h = 0
    for _, k in ipairs{ "A", "B", "C", "D", "E", "F", "G", "H" } do
      h = (h * 31 + (tonumber(cand.knobs[k]) or 0)) & 0xffffffff
    end
    h = (h * 0x9E3779B1 + #cand.source) & 0xffffffff
    h = (h ~ (h >> 15)) * 0x85EBCA6B & 0xffffffff
    return 1 + (h ~ (h >> 13)) / 0xffffffff
  end,
}
local options = {}
if op == "llm_mutate" then
  options.llm_mutate = { provider = "openai", model = "mutate-bench", base_url = args.base_url,
                         api_key_env = "FAKE_LLM_KEY", temperature = 0 }
end
return avo.strategy("ga").run{
  evaluator = ev, population = tonumber(args.population) or 100, generations = 1000000,
  crossover_rate = 0, operators = { [op] = 1 }, operator_options = options,
}
