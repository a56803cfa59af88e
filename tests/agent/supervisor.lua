-- The supervisor: after k stalled steps one supervisor call reviews the
-- trajectory; its directions are in the prompt of the following step, and
-- the intervention is an event.  Then the stagnation rules on their own.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local best = avo.strategy("avo").run{
  evaluator = "tests/agent/evaluators/synth.lua", steps = 3,
  supervisor = { stall_steps = 2, repeats = 0, epsilon = 0, directions = 3 },
}
assert(best.operator == "seed")
local sup = t.events(args, "supervisor")
assert(#sup == 1, "one intervention, got " .. #sup)
local d = sup[1].data
assert(d.lineage == "main" and d.step == 2 and d.trigger == "2 steps without a commit", d.trigger)
assert(#d.directions == 3 and d.directions[1] == "try cache blocking of the inner loop", d.directions[1])
assert(d.call_id)

-- Step prompts: the directions are in the third step's, not before.
local prompts = {}
for _, row in ipairs(t.llm_requests(args)) do
  local last = row.request.messages[#row.request.messages].content or ""
  if last:find("^# Step %d") then prompts[#prompts + 1] = last end
end
assert(#prompts == 3, #prompts)
assert(not prompts[2]:find("Directions from the supervisor", 1, true))
assert(prompts[3]:find("Directions from the supervisor", 1, true) and
  prompts[3]:find("- try SIMD with 8 accumulators", 1, true), prompts[3])
-- The supervisor saw the trajectory.
local sreq
for _, row in ipairs(t.llm_requests(args)) do
  if row.request.system and row.request.system:find("You supervise", 1, true) then sreq = row end
end
assert(sreq and t.request_text(sreq):find("2 steps without a commit", 1, true))

-- The other rules, on hand-made lineages.
local S = avo.strategy("avo")
local rules = { stall_steps = 0, repeats = 2, window = 3, epsilon = 0 }
local l = { step = 3, since_commit = 0, score_at = { 1, 1, 1, 1 }, attempts = {
  { step = 1, hash = "a" }, { step = 2, hash = "a" }, { step = 3, hash = "a" } } }
assert(S.stagnation(l, rules) == "2 attempts repeat versions tried in earlier steps")
l.attempts[3].hash = "b"
assert(S.stagnation(l, rules) == nil, "one repeat is below the limit")
rules = { stall_steps = 0, repeats = 0, window = 3, epsilon = 0.01 }
l = { step = 4, since_commit = 0, score_at = { 1, 1.002, 1.004, 1.005, 1.006 }, attempts = {} }
assert((S.stagnation(l, rules) or ""):find("< epsilon 1.000%", 1, true), S.stagnation(l, rules))
l.score_at[5] = 1.1
assert(S.stagnation(l, rules) == nil, "a real gain is no stall")
assert(#S.parse_directions("intro\n- one\n2. two\n* three\nnot this", 5) == 3)
io.stderr:write("agent supervisor: ok\n")
