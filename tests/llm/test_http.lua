-- avo.llm.chat against the loopback fake server (tests/llm/fake_server.py),
-- in both API shapes, all scenarios in flight at once.  Run by
-- tests/llm/http.sh, which starts the server and sets AVO_TEST_LLM_BASE.
local avo = require "avo"

local base = assert(os.getenv("AVO_TEST_LLM_BASE"), "AVO_TEST_LLM_BASE not set")
local shapes = {
  { provider = "openai", base_url = base .. "/v1" },
  { provider = "anthropic", base_url = base },
}

local function ask(shape, model, extra)
  local opts = { provider = shape.provider, base_url = shape.base_url, model = model,
                 messages = { { role = "user", content = "hello " .. model } },
                 temperature = 0, max_tokens = 64, backoff = 0.05 }
  for k, v in pairs(extra or {}) do opts[k] = v end
  return avo.llm.chat(opts)
end

local weather = { { name = "get_weather", description = "Weather of a city",
  parameters = { type = "object", properties = { city = { type = "string" } },
                 required = { "city" } } } }

-- Each scenario returns nothing or raises; all run as concurrent tasks.
local scenarios = {}

scenarios.plain = function(s)
  local r, err = ask(s, "plain-" .. s.provider, { system = "be brief" })
  assert(r, err)
  assert(r.content == "echo: hello plain-" .. s.provider, r.content)
  assert(r.usage.input_tokens == 11 and r.usage.output_tokens == 7)
  assert(r.attempts == 1 and r.provider == s.provider and r.call_id)
  assert(#r.tool_calls == 0 and r.message.role == "assistant")
end

scenarios.tools = function(s)
  local model = "tools-" .. s.provider
  local msgs = { { role = "user", content = "weather in Paris?" } }
  local r, err = ask(s, model, { messages = msgs, tools = weather })
  assert(r, err)
  assert(#r.tool_calls == 1, "one tool call")
  local tc = r.tool_calls[1]
  assert(tc.name == "get_weather" and tc.arguments.city == "Paris" and tc.id)
  msgs[#msgs + 1] = r.message
  msgs[#msgs + 1] = { role = "tool", tool_call_id = tc.id, content = "sunny, 21 C" }
  local r2, err2 = ask(s, model, { messages = msgs, tools = weather })
  assert(r2, err2)
  assert(r2.content == "tool said: sunny, 21 C", r2.content)
end

scenarios.retry429 = function(s)
  local r, err = ask(s, "retry429-" .. s.provider)
  assert(r, err)
  assert(r.attempts == 2, "one retry after 429")
  assert(r.latency_s >= 0.9, "Retry-After: 1 honoured, latency " .. r.latency_s)
end

scenarios.fail500 = function(s)
  local r, err = ask(s, "fail500-" .. s.provider)
  assert(r, err)
  assert(r.attempts == 3, "two retries after 500")
end

scenarios.fail500_gives_up = function(s)
  local r, err = ask(s, "fail500-giveup-" .. s.provider, { retries = 1 })
  assert(not r and err:find("HTTP 500", 1, true) and err:find("internal error", 1, true)
    and err:find("2 attempts", 1, true), err)
end

scenarios.stall = function(s)
  local r, err = ask(s, "stall-" .. s.provider, { timeout = 1, retries = 0 })
  assert(not r and err:find("timed out", 1, true), err)
end

scenarios.malformed = function(s)
  local r, err = ask(s, "malformed-" .. s.provider)
  assert(not r and err:find("malformed JSON", 1, true), err)
end

scenarios.truncated = function(s)
  local r, err = ask(s, "truncated-" .. s.provider)
  assert(not r and err:find("malformed JSON", 1, true), err)
end

scenarios.cut = function(s)
  local r, err = ask(s, "cut-" .. s.provider, { retries = 0 })
  assert(not r and err:find("network error", 1, true), err)
end

scenarios.auth401 = function(s)
  local r, err = ask(s, "auth401-" .. s.provider)
  assert(not r, "401 fails")
  assert(err:find("authentication failed (401)", 1, true), err)
  assert(err:find("invalid x-api-key", 1, true), "provider message: " .. err)
  assert(err:find("check AVO_LLM_API_KEY", 1, true), err)
  assert(not err:find(os.getenv("AVO_LLM_API_KEY"), 1, true), "no key in messages")
end

-- Arguments that are not a JSON object do not fail the call: the tool call
-- carries the parse error for the caller to answer.
scenarios.badargs = function(s)
  local r, err = ask(s, "badargs-" .. s.provider, { tools = weather })
  assert(r, err)
  local tc = r.tool_calls[1]
  assert(tc and tc.name == "get_weather" and next(tc.arguments) == nil, "one call, no arguments")
  assert(type(tc.error) == "string" and tc.error:find("malformed arguments", 1, true)
    and tc.error:find("oops", 1, true), tostring(tc.error))
end

-- A llama.cpp-style server drops tools sent without tool_choice: avo sends
-- tool_choice, so the model is offered the tools and calls one.
scenarios.lcpp_tools = function(s)
  local r, err = ask(s, "lcpp-tools-" .. s.provider, { tools = weather })
  assert(r, err)
  assert(#r.tool_calls == 1 and r.tool_calls[1].name == "get_weather", r.content)
end

local tasks, names = {}, {}
for _, s in ipairs(shapes) do
  for name, fn in pairs(scenarios) do
    names[#tasks + 1] = s.provider .. "/" .. name
    tasks[#tasks + 1] = avo.spawn(function() return pcall(fn, s) end)
  end
end
local failures = {}
for i, t in ipairs(tasks) do
  local ok, err = avo.join(t)
  if not ok then failures[#failures + 1] = names[i] .. ": " .. tostring(err) end
end
assert(#failures == 0, "\n" .. table.concat(failures, "\n"))

-- Bad arguments raise.
assert(not pcall(avo.llm.chat, { messages = {} }), "empty messages raise")
assert(not pcall(avo.llm.chat, { messages = { { role = "robot", content = "x" } } }))
assert(not pcall(avo.llm.chat, "hi"))

-- Accounting.
local t = avo.llm.totals()
assert(t.calls == 2 * 13, "every attempt sequence is one call, got " .. t.calls)
assert(t.failed == 2 * 6, "failed calls, got " .. t.failed)
-- Of those, the infrastructure's: 500 after every retry, a timeout, a cut
-- transfer, a 200 that is not JSON and one cut off (not a 401).
assert(t.faults == 2 * 5, "infrastructure faults, got " .. t.faults)
assert(t.input_tokens > 0 and t.output_tokens > 0)
io.stderr:write("llm http: ok (", t.calls, " calls)\n")
