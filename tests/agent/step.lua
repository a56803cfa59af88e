-- A full step: kb_search -> edit -> compile error -> fix -> compile ->
-- evaluate -> commit; the committed version is a candidate of operator
-- "agent" whose parent is the incumbent; the evaluation is one attempt.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

-- A knowledge base of the team's notes in a file of its own.
local kb = assert(avo.kb.open(args.tmp .. "/kb.db"))
assert(kb:add_dir("kernels/kb"))
kb:close()

local seed = t.seed()
local rec, why = t.step({ kb = args.tmp .. "/kb.db" }, seed)
assert(rec, why)
assert(rec.operator == "agent" and rec.note == "raise SPEED to 1.5", rec.note)
assert(rec.parents[1].id == seed.id and rec.parents[1].role == "parent")
assert(math.abs(rec.score - 1.5 * math.sqrt(2)) < 1e-9, rec.score)
assert(rec.source:find("#define SPEED 1.5\n", 1, true))
assert(avo.best().id == rec.id)

local attempts = avo.attempts.list()
assert(#attempts == 1, "one evaluation, one attempt: " .. #attempts)
local a = attempts[1]
assert(a.outcome == "committed" and a.candidate_id == rec.id and a.status == "ok")
assert(a.lineage == "main" and a.step == 1 and #a.configs == 2)

-- What the model was told, from the recorded requests.
local calls = t.llm_requests(args)
assert(#calls == 7, "7 turns, got " .. #calls)
local last = calls[#calls].request.messages
local function tool_result(i) -- content of the i-th tool message
  local n = 0
  for _, m in ipairs(last) do
    if m.role == "tool" then n = n + 1 if n == i then return m.content end end
  end
end
assert(calls[1].request.tools and #calls[1].request.tools == #t.agent.TOOLS, "tools offered")
assert(calls[1].request.messages[1].content:find("Current best: #" .. seed.id, 1, true))
assert(tool_result(1):find("^1%. ") and tool_result(1):find("unroll"), "ranked snippets: " .. tool_result(1))
assert(tool_result(2):find("edited", 1, true), tool_result(2))
assert(tool_result(3):find("compile: compile_error", 1, true) and
  tool_result(3):find("expected ';'", 1, true), tool_result(3))
assert(tool_result(5):find("compile: ok", 1, true), tool_result(5))
assert(tool_result(6):find("1.5000x", 1, true), "comparison with the best: " .. tool_result(6))
local steps = t.events(args, "agent_step")
assert(#steps == 1 and steps[1].data.committed == rec.id and steps[1].data.evaluations == 1)
io.stderr:write("agent step: ok\n")
