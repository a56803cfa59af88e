-- The AVO paper's experiment: multi-head attention forward on an NVIDIA GPU
-- (evaluators/cuda/attention_mha.lua: head dim 128, 16 heads, sequence
-- 4k..32k, causal and not, bf16), evolved by the agentic operator from the
-- FlashAttention-style seed (kernels/cuda/attention.cu) for as long as the
-- budget allows, with the knowledge base of kernels/kb (tiling, online
-- softmax, pipelining, tensor cores, Hopper features, register budgets).
--
--   AVO_LLM_PROVIDER=anthropic AVO_LLM_MODEL=claude-sonnet-4-5 AVO_LLM_API_KEY=... \
--     avo run examples/avo_attention.lua --max-time 86400 --max-usd 200 --jobs 1
--
-- Needs a GPU with the CUDA driver and toolkit (NVRTC); the agent's compile
-- tool is a compile-only job reporting registers, spills and shared memory.
-- Arguments: lineages=N, stall=K, kb=FILE (default: the run's archive), steps=N,
-- evaluator=NAME (default cuda/attention_mha; tests/emu/paper_pipeline.sh runs
-- this script on the CPU emulator with small configs).
-- Afterwards: examples/gqa_transfer.lua id=<best id> db=<this archive>.
local avo = require "avo"
local args = avo.options(..., {
  evaluator = { type = "string", default = "cuda/attention_mha" },
  steps = { type = "integer", min = 0 }, -- default below: 10 when no budget is given
  lineages = { type = "integer", default = 1, min = 1 },
  kb = { type = "string" },
  stall = { type = "integer", default = 5, min = 0 },
})

local EVALUATOR = args.evaluator

local ok, why = avo.llm.configured()
if not ok then
  avo.exit(2, "examples/avo_attention.lua: " .. why .. "\n" ..
    "for example: AVO_LLM_PROVIDER=anthropic AVO_LLM_MODEL=claude-sonnet-4-5 " ..
    "AVO_LLM_API_KEY=... avo run examples/avo_attention.lua --max-time 86400 --max-usd 200")
end

local loaded, ev = pcall(avo.evaluator, EVALUATOR)
if not loaded then
  avo.exit(1, ("examples/avo_attention.lua: the CUDA evaluator %s is not available: %s")
    :format(EVALUATOR, tostring(ev)))
end
-- The seed must run before anything is worth asking a model: this is where
-- a machine without a GPU (or without the driver) stops, with the reason.
local seed = avo.evaluate(ev, ev:seed())
if seed.status ~= "ok" then
  avo.exit(1, ("examples/avo_attention.lua: the seed kernel does not run here (%s: %s); " ..
    "this experiment needs an NVIDIA GPU with the CUDA driver (see `avo doctor`)")
    :format(seed.status, seed.reason or "no reason given"))
end

local b = avo.budget()
local budgeted = b.max_evaluations or b.max_seconds or b.max_usd or b.max_tokens
return avo.strategy("avo").run{
  evaluator = EVALUATOR,
  steps = args.steps or (not budgeted and 10 or nil),
  lineages = args.lineages,
  migration_interval = 4,
  kb = args.kb, kb_dirs = { "kernels/kb" },
  agent = { max_turns = 60, max_evaluations = 12, max_seconds = 3600, retime_rounds = 3,
            context_tokens = 80000 },
  supervisor = { stall_steps = args.stall, directions = 5 },
}
