-- Answers the tools cannot use — plain text, wrong argument types, missing
-- and unknown arguments, an unknown tool, a version that does not exist, a
-- SEARCH text that does not match — each get an error message and the step
-- goes on until the agent gives up.
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
-- (No escalation: the answers are the script's, in order.)
local rec, why = t.step({ escalate_after = 0 }, seed)
assert(rec == nil and why == "gave up: enough", tostring(why))
local calls = t.llm_requests(args)
assert(#calls == 8, "every bad call answered, the step went on: " .. #calls)
local msgs = calls[8].request.messages
local tool_msgs, nudges = {}, 0
for _, m in ipairs(msgs) do
  if m.role == "tool" then tool_msgs[#tool_msgs + 1] = m.content end
  if m.role == "user" and m.content:find("Work through the tools", 1, true) then nudges = nudges + 1 end
end
assert(nudges == 1, "a text-only answer is nudged")
local want = {
  "error: read_version: argument 'id' must be an integer, got string",
  "error: edit: missing argument 'replace'",
  "error: unknown tool 'frobnicate' (tools: list_lineage",
  "error: read_version: no version #999",
  "error: edit: SEARCH block 1 does not match the source",
  "error: evaluate: unknown argument 'extra' (arguments: none)",
}
for i, w in ipairs(want) do
  assert(tool_msgs[i] and tool_msgs[i]:find(w, 1, true), ("tool answer %d: %s"):format(i,
    tostring(tool_msgs[i])))
end
local step = t.events(args, "agent_step")[1].data
assert(step.tool_errors == 6 and step.tool_calls == 7 and step.evaluations == 0)
io.stderr:write("agent badargs: ok\n")
