-- Two lineages in the event loop: L1 commits in its first step, L2 does
-- not; at the meeting point L1's version migrates into L2, whose next step
-- is told and starts from it.  The agent's notes are shared by both.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local best = avo.strategy("avo").run{
  evaluator = "tests/agent/evaluators/synth.lua", steps = 2, lineages = 2,
  migration_interval = 1, supervisor = false,
}
assert(best.operator == "agent" and best.note == "double SPEED", best.note)
local mig = t.events(args, "migration")
assert(#mig == 1, "one migration, got " .. #mig)
assert(mig[1].data.from == "L1" and mig[1].data.to == "L2" and mig[1].data.id == best.id)
local prompts = {}
for _, row in ipairs(t.llm_requests(args)) do
  for _, m in ipairs(row.request.messages) do
    if m.role == "user" and m.content:find("^# Step 2 of lineage L2") then prompts[#prompts + 1] = m.content end
  end
end
assert(#prompts >= 1 and prompts[1]:find("migrated into this lineage", 1, true) and
  prompts[1]:find("Current best: #" .. best.id, 1, true), prompts[1])
local notes = t.events(args, "agent_note")
assert(#notes == 1 and notes[1].data.lineage == "L2" and notes[1].data.text == "SPEED is the lever")
local steps = t.events(args, "agent_step")
assert(#steps == 4)
local summary = t.events(args, "avo_summary")[1].data
assert(summary.steps == 4 and summary.committed == 1 and summary.attempts == 1)
io.stderr:write("agent lineages: ok\n")
