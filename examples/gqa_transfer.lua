-- Transfer: start from an attention kernel evolved for MHA (a candidate of
-- an earlier run, e.g. examples/avo_attention.lua) and let the agent adapt
-- it to grouped-query attention (evaluators/cuda/attention_gqa.lua: 32
-- query heads sharing 8 or 4 KV heads), as in the AVO paper.
--
--   avo run examples/gqa_transfer.lua id=<candidate id> db=<mha archive> \
--       --db gqa.db --max-time 7200 --max-usd 30 --jobs 1
--
-- The version is read from the other archive and evaluated on GQA first;
-- the lineage starts from it (it keeps its note and knobs).  Arguments:
-- id=N db=FILE (required), steps=N, stall=K, kb=FILE (default: the run's
-- archive), evaluator=NAME (default cuda/attention_gqa).
local avo = require "avo"
local core = require "avo.core"
local args = avo.options(..., {
  id = { type = "integer", min = 1 }, -- required
  db = { type = "string" },           -- required
  evaluator = { type = "string", default = "cuda/attention_gqa" },
  steps = { type = "integer", min = 0 }, -- default below: 10 when no budget is given
  kb = { type = "string" },
  stall = { type = "integer", default = 4, min = 0 },
})

local EVALUATOR = args.evaluator
local usage = "usage: avo run examples/gqa_transfer.lua id=<candidate id> db=<archive of the MHA run>"

local id = args.id
if not id or not args.db then avo.exit(2, "examples/gqa_transfer.lua: " .. usage) end
local ok, why = avo.llm.configured()
if not ok then avo.exit(2, "examples/gqa_transfer.lua: " .. why) end

local other, err = core.archive_read(args.db)
if not other then avo.exit(1, ("examples/gqa_transfer.lua: cannot open %s: %s"):format(args.db, err)) end
local mha = other:get(id, true)
other:close()
if not mha then avo.exit(1, ("examples/gqa_transfer.lua: %s has no candidate #%d"):format(args.db, id)) end
if mha.status ~= "ok" then
  avo.exit(1, ("examples/gqa_transfer.lua: #%d of %s did not pass verification (%s)"):format(id,
    args.db, mha.status))
end

local loaded, ev = pcall(avo.evaluator, EVALUATOR)
if not loaded then
  avo.exit(1, ("examples/gqa_transfer.lua: the CUDA evaluator %s is not available: %s")
    :format(EVALUATOR, tostring(ev)))
end
local start = { source = mha.source, knobs = mha.knobs or {}, operator = "transfer",
                note = ("MHA version #%d of %s (%.6g on MHA)"):format(id, args.db,
                  mha.score or 0), generation = 0 }
local first = avo.evaluate(ev, start)
if first.status ~= "ok" then
  avo.exit(1, ("examples/gqa_transfer.lua: MHA #%d does not run correctly on GQA here " ..
    "(%s: %s); a GPU with the CUDA driver is needed, and the kernel must index K/V by " ..
    "h / (Hq / Hkv)"):format(id, first.status, first.reason or ""))
end

local b = avo.budget()
local budgeted = b.max_evaluations or b.max_seconds or b.max_usd or b.max_tokens
return avo.strategy("avo").run{
  evaluator = EVALUATOR, start = start,
  steps = args.steps or (not budgeted and 10 or nil),
  kb = args.kb, kb_dirs = { "kernels/kb" },
  agent = { max_turns = 60, max_evaluations = 12, max_seconds = 3600, context_tokens = 80000 },
  supervisor = { stall_steps = args.stall },
}
