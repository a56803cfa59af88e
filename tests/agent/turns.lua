-- The turn budget: a model that never commits nor gives up is stopped after
-- max_turns LLM calls, and the step ends without a version.
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
local rec, why = t.step({ max_turns = 3 }, seed)
assert(rec == nil and why == "turn budget of the step (3) exhausted", tostring(why))
assert(#t.llm_requests(args) == 3)
io.stderr:write("agent turns: ok\n")
