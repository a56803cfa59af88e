-- Per-call limits against a server that ignores max_tokens (tests/llm/
-- stream.sh): answers are streamed and read only up to the call's
-- max_tokens.  Args: base=URL (the fake server's root), mode=one|budget|progress|cut.
local avo = require "avo"
local core = require "avo.core"
local args = ...
local base = args.base .. "/v1"
local function ask(extra)
  local o = { base_url = base, model = "runon-openai", max_tokens = 64, retries = 0,
              messages = { { role = "user", content = "count to a million" } } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return avo.llm.chat(o)
end
if args.mode == "one" then
  local t0 = core.monotonic()
  local r, err = ask()
  assert(r, err)
  assert(r.usage.output_tokens <= 64, "output tokens " .. r.usage.output_tokens)
  assert(r.stop_reason == "length", tostring(r.stop_reason))
  local n = select(2, r.content:gsub("tok ", ""))
  assert(n == 64, "tokens read: " .. n)
  assert(core.monotonic() - t0 < 2.5, "the call went on after its limit")
  -- Without streaming the server's 3000 tokens all arrive.
  r, err = ask{ sse = false }
  assert(r, err)
  assert(r.usage.output_tokens == 3000, "unstreamed: " .. r.usage.output_tokens)
  -- A server that cannot stream tool calls (llama-cpp-python): asked
  -- again unstreamed, and from then on unstreamed.
  local weather = { { name = "get_weather", parameters = { type = "object",
    properties = { city = { type = "string" } } } } }
  for _ = 1, 2 do
    r, err = ask{ model = "lcpy-tools-openai", tools = weather }
    assert(r and r.tool_calls[1] and r.tool_calls[1].name == "get_weather", tostring(err))
  end
  io.stderr:write("stream one: ok\n")
elseif args.mode == "cut" then
  -- A server that streams no tool call and ignores max_tokens, slowly
  -- (base .../slow): each unstreamed call is cut at its reserve of 64
  -- tokens (AVO_LLM_MIN_TOKENS_PER_S=50: ~1.3 s, a quarter more and 2 s),
  -- charged the reserve, and the run goes on.  The same under replay.
  local weather = { { name = "get_weather", parameters = { type = "object",
    properties = { city = { type = "string" } } } } }
  local t0 = core.monotonic()
  local r, err = ask{ base_url = args.base .. "/slow/v1", model = "lcpy-slowtools-openai",
                      tools = weather }
  local took = core.monotonic() - t0
  assert(not r, "the slow call was not cut")
  assert(not avo.llm.is_refusal(err), err)
  assert(err:find("cut a call at its reserve of 64 tokens", 1, true), err)
  assert(took < 8, ("cut after %.1f s"):format(took)) -- (stream.sh checks the recorded time)
  local t = avo.llm.totals()
  assert(t.cut == 1 and t.failed == 0 and t.faults == 0 and t.fault_streak == 0,
    ("cut %d failed %d faults %d streak %d"):format(t.cut, t.failed, t.faults, t.fault_streak))
  assert(t.output_tokens == 64, "charged output " .. t.output_tokens)
  assert(t.input_tokens > 0, "no prompt charged")
  assert(avo.llm.status_text():find("1 cut at their reserve", 1, true), avo.llm.status_text())
  -- A fast server of the same kind (base .../fast): unstreamed, never cut.
  for _ = 1, 3 do
    r, err = ask{ base_url = args.base .. "/fast/v1", model = "lcpy-tools-openai",
                  tools = weather }
    assert(r and r.tool_calls[1] and r.tool_calls[1].name == "get_weather", tostring(err))
  end
  t = avo.llm.totals()
  assert(t.cut == 1 and t.failed == 0, ("cut %d failed %d"):format(t.cut, t.failed))
  io.stderr:write(("stream cut: ok, %d tokens\n"):format(t.input_tokens + t.output_tokens))
elseif args.mode == "progress" then
  -- A slow answer in flight: the status line counts its streamed tokens.
  local r, err = ask{ model = "slowrunon-openai" }
  assert(r and r.stop_reason == "length", tostring(err))
  io.stderr:write("stream progress: ok\n")
else
  -- --max-tokens: "budget plus one call" holds with such a server.
  local answered = 0
  for _ = 1, 30 do
    local r = ask()
    if not r then break end
    answered = answered + 1
  end
  local t = avo.llm.totals()
  io.stderr:write(("stream budget: %d answered, %d tokens\n"):format(answered,
    t.input_tokens + t.output_tokens))
end
