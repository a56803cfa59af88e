-- One agent step end to end against the loopback fake server
-- (tests/llm/fake_server.py, model "agent..."), in each tool-calling shape:
-- the tool calls travel as OpenAI function calls and as Anthropic tool_use
-- blocks, the results come back as tool messages / tool_result blocks.
-- Also: a llama.cpp-style server (model "lcpp-agent..."), which drops the
-- tools of a request without tool_choice, still gets tool calls; and an
-- answer whose tool-call arguments are not JSON ("agentbadargs...") is
-- answered with the parse error and the step goes on.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")

local base = assert(os.getenv("AVO_TEST_LLM_BASE"), "AVO_TEST_LLM_BASE not set")
local seed = t.seed()
local openai = { provider = "openai", base_url = base .. "/v1" }
local anthropic = { provider = "anthropic", base_url = base }
local cases = {
  { shape = openai, model = "agent-openai", turns = 4 },
  { shape = anthropic, model = "agent-anthropic", turns = 4 },
  { shape = openai, model = "lcpp-agent-openai", turns = 4 },
  { shape = openai, model = "agentbadargs-openai", turns = 5 },
  { shape = anthropic, model = "agentbadargs-anthropic", turns = 5 },
}
for _, case in ipairs(cases) do
  local shape = case.shape
  -- Each case starts from its own variant, so each commits a new version.
  local start = avo.evaluate(t.ev, { source = seed.source .. "// " .. case.model .. "\n",
    knobs = {}, operator = "manual", parents = { { id = seed.id, role = "parent" } } })
  local rec, why = t.step({ provider = shape.provider, base_url = shape.base_url,
    model = case.model, max_tokens = 256, retries = 0 }, start)
  assert(rec, case.model .. ": " .. tostring(why))
  assert(rec.note == "raise SPEED to 1.25" and rec.parents[1].id == start.id)
  assert(math.abs(rec.score / start.score - 1.25) < 1e-9)
  assert(rec.source:find("#define SPEED 1.25\n", 1, true), case.model)
end
local committed = t.find_attempts(function(a) return a.outcome == "committed" end)
assert(#committed == #cases and #avo.attempts.list() == #cases,
  "one evaluation and one commit per case")
local n, by_model, bad_answers = 0, {}, 0
for _, row in ipairs(t.llm_requests(...)) do
  assert(row.status == "ok", row.error)
  n = n + 1
  by_model[row.model] = (by_model[row.model] or 0) + 1
  for _, m in ipairs(row.request.messages) do
    if m.role == "tool" and m.content:find("error: edit: malformed arguments", 1, true) then
      bad_answers = bad_answers + 1
    end
  end
end
for _, case in ipairs(cases) do
  assert(by_model[case.model] == case.turns, ("%s: %d turns, want %d"):format(case.model,
    by_model[case.model] or 0, case.turns))
end
assert(n == 22, "turns in all, got " .. n)
-- The bad call's answer is in each later request of its two steps (4 each).
assert(bad_answers == 8, "the malformed call was answered with its error: " .. bad_answers)
io.stderr:write("agent http: ok\n")
