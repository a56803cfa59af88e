-- The AVO loop (strategies/avo.lua) on the CPU sgemm kernel: an agent with
-- tools — lineage, knowledge base (kernels/kb), edit, compile, evaluate,
-- commit — evolves one lineage from the naive seed, under a supervisor that
-- steps in when the search stalls.  Configured from the environment like
-- every LLM example (README "LLMs"):
--
--   AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=gpt-4.1 AVO_LLM_API_KEY=sk-... \
--     avo run examples/avo_cpu.lua --max-time 3600 --max-usd 5
--
--   # offline demo: scripted answers (one commit, two stalls, a supervisor call)
--   AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=examples/avo_cpu.jsonl \
--     avo run examples/avo_cpu.lua steps=4 stall=2
--
-- A local server (examples/local_llm.md): the agent compacts its memory
-- before the server's context window overflows (the window is asked of the
-- server); max_tokens=N bounds each answer, context_tokens=N the memory.
--
-- Arguments: steps=N (default 10 when no budget is given), lineages=N,
-- max_tokens=N, context_tokens=N, max_turns=N (LLM calls per step, 30),
-- stall=K (supervisor after K steps without a commit, default 3),
-- escalate_after=K (force the next tool after K turns without progress,
-- default 3 for a small model window, else 8; 0: never), force_with=auto|tool_choice|schema (how),
-- kb=FILE (knowledge base, default: the run's archive; kernels/kb is indexed
-- into it),
-- evaluator=NAME (default cpu/sgemm).
local avo = require "avo"
local args = avo.options(..., {
  evaluator = { type = "string", default = "cpu/sgemm" },
  steps = { type = "integer", min = 0 }, -- default below: 10 when no budget is given
  lineages = { type = "integer", default = 1, min = 1 },
  kb = { type = "string" },
  max_turns = { type = "integer", default = 30, min = 1 },
  max_tokens = { type = "integer", min = 1 },
  context_tokens = { type = "integer", min = 1 },
  stall = { type = "integer", default = 3, min = 0 },
  escalate_after = { type = "integer", min = 0 },
  force_with = { type = "string" },
})

local ok, why = avo.llm.configured()
if not ok then
  avo.exit(2, "examples/avo_cpu.lua: " .. why .. "\n" ..
    "for example: AVO_LLM_PROVIDER=openai AVO_LLM_MODEL=gpt-4.1 AVO_LLM_API_KEY=sk-... " ..
    "avo run examples/avo_cpu.lua --max-time 3600 --max-usd 5\n" ..
    "or offline: AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=examples/avo_cpu.jsonl " ..
    "avo run examples/avo_cpu.lua steps=4 stall=2")
end

local b = avo.budget()
local budgeted = b.max_evaluations or b.max_seconds or b.max_usd or b.max_tokens
return avo.strategy("avo").run{
  evaluator = args.evaluator,
  steps = args.steps or (not budgeted and 10 or nil),
  lineages = args.lineages,
  kb = args.kb, kb_dirs = { "kernels/kb" },
  agent = { max_turns = args.max_turns, max_evaluations = 8, retime_rounds = 3,
            max_tokens = args.max_tokens, context_tokens = args.context_tokens,
            escalate_after = args.escalate_after, force_with = args.force_with },
  supervisor = { stall_steps = args.stall, directions = 4 },
}
