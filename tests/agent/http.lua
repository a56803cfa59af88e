-- One agent step end to end against the loopback fake server
-- (tests/llm/fake_server.py, model "agent..."), in each tool-calling shape:
-- the tool calls travel as OpenAI function calls and as Anthropic tool_use
-- blocks, the results come back as tool messages / tool_result blocks.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")

local base = assert(os.getenv("AVO_TEST_LLM_BASE"), "AVO_TEST_LLM_BASE not set")
local seed = t.seed()
for _, shape in ipairs({ { provider = "openai", base_url = base .. "/v1" },
                         { provider = "anthropic", base_url = base } }) do
  -- Each shape starts from its own variant, so each commits a new version.
  local start = avo.evaluate(t.ev, { source = seed.source .. "// " .. shape.provider .. "\n",
    knobs = {}, operator = "manual", parents = { { id = seed.id, role = "parent" } } })
  local rec, why = t.step({ provider = shape.provider, base_url = shape.base_url,
    model = "agent-" .. shape.provider, max_tokens = 256, retries = 0 }, start)
  assert(rec, shape.provider .. ": " .. tostring(why))
  assert(rec.note == "raise SPEED to 1.25" and rec.parents[1].id == start.id)
  assert(math.abs(rec.score / start.score - 1.25) < 1e-9)
  assert(rec.source:find("#define SPEED 1.25\n", 1, true), shape.provider)
end
local committed = t.find_attempts(function(a) return a.outcome == "committed" end)
assert(#committed == 2 and #avo.attempts.list() == 2, "one evaluation and one commit per shape")
local n = 0
for _, row in ipairs(t.llm_requests(...)) do
  assert(row.status == "ok", row.error)
  n = n + 1
end
assert(n == 8, "4 turns per shape, got " .. n)
io.stderr:write("agent http: ok\n")
