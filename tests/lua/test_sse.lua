-- core.sse_join (core/sse.c): a streamed Chat Completions answer joined
-- into one completion, as avo.llm reads a self-hosted server's answers.
-- Checked case by case, then against the Lua reading it replaced, on
-- random streams of well-formed, odd and broken events.
local core = require "avo.core"
local json = require "avo.json"

local function sse(events, eol)
  eol = eol or "\n"
  local out = {}
  for _, e in ipairs(events) do
    out[#out + 1] = "data: " .. (type(e) == "string" and e or json.encode(e)) .. eol .. eol
  end
  return table.concat(out)
end
local function delta(d, finish)
  return { choices = { { index = 0, delta = d, finish_reason = finish } } }
end

-- Content joined; the last finish reason and usage kept; [DONE] ignored.
local body = sse{ delta{ role = "assistant" }, delta{ content = "Hel" }, delta{ content = "lo" },
  delta({}, "stop"), { choices = json.array(), usage = { prompt_tokens = 7, completion_tokens = 2 } },
  "[DONE]" }
local doc, n = core.sse_join(body)
assert(doc.choices[1].message.content == "Hello", doc.choices[1].message.content)
assert(doc.choices[1].finish_reason == "stop" and n == 2, n)
assert(doc.usage.prompt_tokens == 7 and doc.usage.completion_tokens == 2)
assert(doc.choices[1].message.tool_calls == nil, "no tool calls: none listed")

-- sse-starlette's form: a ping comment first, CR LF line ends, "data:"
-- with no space.
body = ": ping - 2026-01-01 00:00:00\r\n\r\n" ..
  'data:{"choices":[{"delta":{"content":"a b "}}]}\r\n\r\n' ..
  sse({ delta{ content = "c" } }, "\r\n") .. "data: [DONE]\r\n\r\n"
doc, n = core.sse_join(body)
assert(doc.choices[1].message.content == "a b c" and n == 2, doc.choices[1].message.content)
assert(doc.usage == nil and doc.choices[1].finish_reason == nil, "no usage chunk: none")

-- Tool calls gathered by index, their arguments joined, in index order.
body = sse{
  delta{ tool_calls = { { index = 1, id = "b", type = "function", ["function"] = { name = "g", arguments = "" } } } },
  delta{ tool_calls = { { index = 0, id = "a", type = "function", ["function"] = { name = "f", arguments = '{"x"' } } } },
  delta{ tool_calls = { { index = 0, ["function"] = { arguments = ":1}" } } } },
  delta{ tool_calls = { { index = 1, ["function"] = { arguments = "{}" } } } },
  delta({}, "tool_calls") }
doc, n = core.sse_join(body)
local calls = doc.choices[1].message.tool_calls
assert(#calls == 2 and n == 4, #calls)
assert(calls[1].id == "a" and calls[1]["function"].name == "f" and calls[1]["function"].arguments == '{"x":1}')
assert(calls[2].id == "b" and calls[2]["function"].name == "g" and calls[2]["function"].arguments == "{}")
assert(calls[1].type == "function" and doc.choices[1].finish_reason == "tool_calls")

-- A cap (the call's max_tokens, the server went on): deltas past it are
-- dropped, the count is the cap.
body = sse{ delta{ content = "1" }, delta{ content = "2" }, delta{ content = "3" }, delta({}, "stop") }
doc, n = core.sse_join(body, 2)
assert(doc.choices[1].message.content == "12" and n == 2 and doc.choices[1].finish_reason == nil)
doc, n = core.sse_join(body, 0)
assert(doc.choices[1].message.content == "" and n == 0)

-- Not a stream: nil (the body is read as one JSON completion instead).
assert(core.sse_join('{"choices":[]}') == nil)
assert(core.sse_join("") == nil and core.sse_join(": ping only\n\n") == nil)
assert(core.sse_join("  \n data: {}") ~= nil, "white space may open a stream")
-- Lines that are no JSON object, nulls and holes are skipped.
body = "data: {broken\n\ndata: 5\n\nevent: x\n\n" ..
  sse{ delta{ content = "ok" }, '{"choices":[null]}', '{"choices":[{"delta":{"content":null}}]}',
       '{"choices":[{"delta":{"tool_calls":[null,{"index":0}]}}]}' }
doc, n = core.sse_join(body)
assert(doc.choices[1].message.content == "ok" and n == 2, n)
assert(doc.choices[1].message.tool_calls == nil, "a list that opens with null has no calls")

-- The reference: the Lua reading core.sse_join replaced.
local function lua_join(b, cap)
  if type(b) ~= "string" or not (b:match("^%s*data:") or (b:match("^%s*:") and b:find("\ndata:"))) then
    return nil
  end
  local content, cs, finish, usage, deltas = {}, {}, nil, nil, 0
  for line in b:gmatch("[^\n]+") do
    local data = line:match("^data:%s?(.-)%s*$")
    if data and data ~= "[DONE]" then
      local ev = core.json_decode(data)
      if type(ev) == "table" then
        if type(ev.usage) == "table" then usage = ev.usage end
        local ch = type(ev.choices) == "table" and ev.choices[1]
        local d = type(ch) == "table" and type(ch.delta) == "table" and ch.delta or {}
        if d.content ~= nil or d.tool_calls ~= nil then deltas = deltas + 1 end
        if type(ch) == "table" and not (cap and deltas > cap) then
          if type(ch.finish_reason) == "string" then finish = ch.finish_reason end
          if type(d.content) == "string" then content[#content + 1] = d.content end
          for _, tc in ipairs(type(d.tool_calls) == "table" and d.tool_calls or {}) do
            -- (A call that is no object has nothing: the Lua reading raised
            -- on a number or a boolean there.)
            if type(tc) ~= "table" then tc = {} end
            local i = (math.tointeger(tc.index) or #cs) + 1
            local acc = cs[i] or { type = "function", ["function"] = { arguments = "" } }
            cs[i] = acc
            if type(tc.id) == "string" then acc.id = tc.id end
            local fn = type(tc["function"]) == "table" and tc["function"] or {}
            if type(fn.name) == "string" then acc["function"].name = fn.name end
            if type(fn.arguments) == "string" then
              acc["function"].arguments = acc["function"].arguments .. fn.arguments
            end
          end
        end
      end
    end
  end
  local list = {}
  for i = 1, #cs do list[i] = cs[i] end
  return { choices = { { message = { content = table.concat(content),
             tool_calls = #list > 0 and list or nil }, finish_reason = finish } },
           usage = usage }, math.min(deltas, cap or deltas)
end

-- Random streams: contents, tool calls with and without indices, usage,
-- finish reasons, broken lines, comments, CR LF.
local rng = core.rng(20261206, "test_sse")
local function pick(list) return list[rng:below(#list) + 1] end
local WORDS = { "x", "for (i = 0; i < n; ++i)", " ", "\t", "é", "\"q\"", "\\n", "" }
local function random_event()
  local k = rng:below(10)
  if k == 0 then return pick{ "{broken", "5", "[DONE]", '""', "[1,2]", "{}" } end
  if k == 1 then return { choices = json.array(), usage = { prompt_tokens = rng:below(99), completion_tokens = 3 } } end
  if k == 2 then return delta({}, pick{ "stop", "length", "tool_calls" }) end
  if k <= 5 then return delta{ content = pick(WORDS) } end
  local tc = { ["function"] = { arguments = pick(WORDS) } }
  if rng:below(3) > 0 then tc.index = rng:below(3) end
  -- (Indices as reals: integral ones count, others are as if absent.)
  if tc.index and rng:below(6) == 0 then tc.index = tc.index + pick{ 0.0, 0.5, -2.0, 1e300 } end
  if rng:below(3) == 0 then tc.id = "call_" .. rng:below(9) end
  if rng:below(3) == 0 then tc["function"].name = pick{ "read", "edit" } end
  return delta{ tool_calls = { tc } }
end
for round = 1, 400 do
  local lines = {}
  if rng:below(4) == 0 then lines[1] = ": ping\r\n" end
  local eol = rng:below(2) == 0 and "\n" or "\r\n"
  for _ = 1, rng:below(30) do
    local e = random_event()
    lines[#lines + 1] = "data:" .. (rng:below(2) == 0 and " " or "") ..
      (type(e) == "string" and e or json.encode(e)) .. eol .. eol
  end
  local b = table.concat(lines)
  local cap = rng:below(3) == 0 and rng:below(10) or nil
  local want, wn = lua_join(b, cap)
  local got, gn = core.sse_join(b, cap)
  if want == nil then
    assert(got == nil, ("round %d: not a stream, yet joined"):format(round))
  else
    assert(json.encode(got) == json.encode(want) and gn == wn,
      ("round %d: %s %s\n  want %s %s\n  got  %s %s"):format(round, b, tostring(cap),
        json.encode(want), wn, json.encode(got), gn))
  end
end
-- Text that is JSON or not only by its details (core/sse.c reads events
-- with yajl, the Lua reading with jansson): each as a value in the places
-- an event is read, and as a whole event, read alike.
local ODD = { "01", "1.", ".5", "-", "1e5", "1E-2", "-0", "1e400", "123456789012345678901234",
  "9223372036854775807", "-9223372036854775808", "9223372036854775808", "2.0", "1.5",
  '"\\u0000"', '"a\\u0000b"', '"\\ud800"', '"\\ud83d\\ude00"', '"\\u00e9"', '"\\/"',
  '"tab\there"', '"\255"', '"\195\169"', "[1,]", '{"a":1,}', "[1 2]", "true", "false", "null",
  "nul", "NaN", "Infinity", "[]", "{}", '{"a":1}x', "{} {}", '""', "'x'", "[[[[[[[[1]]]]]]]]",
  ("["):rep(2047) .. ("]"):rep(2047), ("["):rep(2049) .. ("]"):rep(2049), '{"\\u0000":1}',
  ("["):rep(2048) .. ("]"):rep(2048), '{"a":1,"a":2}', "/* c */ 1", "\0", "", '"\\udc00"',
  '"\\ud800\\u0041"', '"\\\\ud800"', '"a\nb"', '"\\x"', '"\\u12"', "1e-400", "-1.5e+3" }
local function with(value)
  return {
    value,
    '{"choices":[{"delta":{"content":' .. value .. '}}]}',
    '{"choices":[{"delta":{"content":"x","tool_calls":[{"index":' .. value .. ',"id":' .. value ..
      ',"function":{"name":' .. value .. ',"arguments":' .. value .. '}}]}}]}',
    '{"choices":[{"delta":{"content":"y"},"finish_reason":' .. value .. '}],"usage":' .. value .. '}',
    '{"choices":[{"delta":{"tool_calls":[' .. value .. ',{"index":0,"id":"k"}]}}]}',
    '{"choices":' .. value .. ',"usage":{"prompt_tokens":' .. value .. '}}',
    '{"choices":[' .. value .. ',{"delta":{"content":"z"}}]}',
  }
end
for _, value in ipairs(ODD) do
  for _, payload in ipairs(with(value)) do
    for _, b in ipairs{ "data: " .. payload .. "\n\n",
                        sse{ delta{ content = "a" } } .. "data: " .. payload .. "\n\n" .. sse{ delta{ content = "b" } } } do
      local want, wn = lua_join(b)
      local got, gn = core.sse_join(b)
      assert((want == nil) == (got == nil), ("%q: joined by one reading only"):format(b))
      if want then
        assert(json.encode(got) == json.encode(want) and gn == wn,
          ("%q:\n  want %s %s\n  got  %s %s"):format(b, json.encode(want), wn, json.encode(got), gn))
      end
    end
  end
end
-- Repeated keys: the last one counts, whatever it is.
doc = core.sse_join('data: {"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}\n\n' ..
  'data: {"choices":[{"delta":{"content":"c","content":null}}]}\n\n')
assert(doc.choices[1].message.content == "b", doc.choices[1].message.content)
print("test_sse: ok")
