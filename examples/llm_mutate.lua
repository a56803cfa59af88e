-- LLM-driven evolution of the CPU sgemm kernel: a GA whose mutations are
-- edits proposed by a language model (operators/llm_mutate.lua) mixed with
-- knob tweaks (param_tweak).  Configured from the environment:
--
--   AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=gpt-4o-mini AVO_LLM_API_KEY=sk-... \
--     avo run examples/llm_mutate.lua --max-usd 0.50
--
--   # a local server (vLLM, llama.cpp, Ollama): see README "LLMs" and
--   # examples/local_llm.md; one call at a time unless the server says it
--   # has more slots (AVO_LLM_CONCURRENCY=N to choose)
--   AVO_LLM_PROVIDER=openai AVO_LLM_BASE_URL=http://localhost:11434/v1 \
--   AVO_LLM_MODEL=qwen2.5-coder:7b avo run examples/llm_mutate.lua max_tokens=1024 diverse=0
--
-- Arguments: generations=N population=N llm_weight=W (default 2, against
-- param_tweak's 1), max_tokens=N (of an answer; a small local model wants
-- 1024 or so), top=N and diverse=N (other kernels shown in the prompt,
-- default 1 each; 0 keeps prompts short for a small context window),
-- fix_attempts=N (tries after an answer that does not apply, default 1).
local avo = require "avo"
local args = avo.options(..., {
  population = { type = "integer", default = 8, min = 2 },
  generations = { type = "integer", default = 10, min = 0 },
  llm_weight = { type = "number", default = 2, min = 0 },
  top = { type = "integer", default = 1, min = 0 },
  diverse = { type = "integer", default = 1, min = 0 },
  max_tokens = { type = "integer", min = 1 },
  fix_attempts = { type = "integer", min = 0 },
})

local ok, why = avo.llm.configured()
if not ok then
  avo.exit(2, "examples/llm_mutate.lua: " .. why .. "\n" ..
    "for example: AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=gpt-4o-mini AVO_LLM_API_KEY=sk-... " ..
    "avo run examples/llm_mutate.lua --max-usd 0.50")
end

return avo.strategy("ga").run{
  evaluator = "cpu/sgemm",
  population = args.population,
  generations = args.generations,
  crossover_rate = 0.2,
  operators = { llm_mutate = args.llm_weight, param_tweak = 1 },
  operator_options = { llm_mutate = {
    top = args.top, diverse = args.diverse, temperature = 0.7,
    max_tokens = args.max_tokens, fix_attempts = args.fix_attempts,
  } },
}
