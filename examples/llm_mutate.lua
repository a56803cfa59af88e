-- LLM-driven evolution of the CPU sgemm kernel: a GA whose mutations are
-- edits proposed by a language model (operators/llm_mutate.lua) mixed with
-- knob tweaks (param_tweak).  Configured from the environment:
--
--   AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=gpt-4o-mini AVO_LLM_API_KEY=sk-... \
--     avo run examples/llm_mutate.lua --max-usd 0.50
--
--   # a local server (vLLM, llama.cpp, Ollama): see README "LLMs"
--   AVO_LLM_PROVIDER=openai AVO_LLM_BASE_URL=http://localhost:11434/v1 \
--   AVO_LLM_MODEL=qwen2.5-coder:7b avo run examples/llm_mutate.lua
--
-- Arguments: generations=N population=N llm_weight=W (default 2, against
-- param_tweak's 1).
local avo = require "avo"
local args = ...

local ok, why = avo.llm.configured()
if not ok then
  avo.exit(2, "examples/llm_mutate.lua: " .. why .. "\n" ..
    "for example: AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=gpt-4o-mini AVO_LLM_API_KEY=sk-... " ..
    "avo run examples/llm_mutate.lua --max-usd 0.50")
end

return avo.strategy("ga").run{
  evaluator = "cpu/sgemm",
  population = tonumber(args.population) or 8,
  generations = tonumber(args.generations) or 10,
  crossover_rate = 0.2,
  operators = { llm_mutate = tonumber(args.llm_weight) or 2, param_tweak = 1 },
  operator_options = { llm_mutate = { top = 1, diverse = 1, temperature = 0.7 } },
}
