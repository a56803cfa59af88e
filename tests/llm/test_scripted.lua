-- The scripted provider and the budget refusal, through avo.llm.chat.  Run by
-- tests/llm/scripted.sh with --max-tokens 40 and a small script.
local avo = require "avo"

local function ask(text)
  return avo.llm.chat{ messages = { { role = "user", content = text } } }
end

local r = assert(ask("please use the tool"))
assert(r.content == "keyed" and r.tool_calls[1].name == "lookup", "keyed entry with tool call")
assert(r.tool_calls[1].arguments.q == "x" and r.provider == "scripted" and r.model == "scripted")
assert(r.usage.input_tokens == 5 and r.usage.output_tokens == 5)
r = assert(ask("anything"))
assert(r.content == "first", r.content)
assert(not avo.exhausted(), "20 of 40 tokens used")
r = assert(ask("anything"))
assert(r.content == "second", "unkeyed entries in order: " .. r.content)
assert(avo.exhausted(), "40 tokens reached: the run is exhausted")
local none, err = ask("anything")
assert(none == nil and err:find("LLM budget exhausted (--max-tokens 40", 1, true), err)
assert(avo.llm.totals().calls == 3, "a refused call is not a call")
io.stderr:write("llm scripted: ok\n")
