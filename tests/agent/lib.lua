-- Helpers of the agent tests (tests/agent/*.lua, run by tests/agent/run.sh
-- with the scripted provider answering from tests/agent/<name>.jsonl).
local avo = require "avo"
local core = require "avo.core"

local M = {}

M.ev = avo.evaluator("tests/agent/evaluators/synth.lua")
M.agent = avo.operator("agent")

-- The seed record of the synth workload.
function M.seed()
  local rec = avo.evaluate(M.ev, M.ev:seed())
  assert(rec.status == "ok", rec.reason)
  return rec
end

-- One agent step of a fresh lineage from `incumbent`.
function M.step(options, incumbent, lineage)
  lineage = lineage or M.agent.new_lineage("main", incumbent)
  local rec, why = M.agent.step({ ev = M.ev, rng = avo.rng("op.agent"), generation = 1,
                                  options = options or {} }, lineage)
  return rec, why, lineage
end

-- A second connection to this run's archive (its path is the script
-- argument db=...), for the rows the API does not hand back.
function M.archive(args)
  return assert(core.archive(assert(args.db, "pass db=FILE")))
end

function M.events(args, kind)
  local ar = M.archive(args)
  local rows = assert(ar:events(1, kind))
  ar:close()
  return rows
end

function M.llm_requests(args)
  local ar = M.archive(args)
  local rows = assert(ar:llm_calls(0))
  ar:close()
  return rows
end

-- The text of every message of a recorded request.
function M.request_text(row)
  local parts = { row.request.system or "" }
  for _, m in ipairs(row.request.messages) do parts[#parts + 1] = m.content or "" end
  return table.concat(parts, "\n")
end

function M.find_attempts(pred)
  local out = {}
  for _, a in ipairs(avo.attempts.list()) do
    if pred(a) then out[#out + 1] = a end
  end
  return out
end

return M
