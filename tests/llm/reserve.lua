-- Concurrent callers under a token budget (tests/llm/reserve.sh): ten tasks
-- ask the fake server's "inflight" model at once.  Each call reserves its
-- worst case (prompt estimate + max_tokens) before it is sent, so with a
-- small --max-tokens the calls wait for each other's answers instead of
-- all going out before any is counted.  Prints "used N, refused M".
local avo = require "avo"
local args = ...
local tasks = {}
for i = 1, tonumber(args.callers or 10) do
  tasks[i] = avo.spawn(function()
    return avo.llm.chat{ messages = { { role = "user", content = "call " .. i } },
                         max_tokens = 40, retries = 0 }
  end)
end
local refused, answered, peers = 0, 0, 0
for _, t in ipairs(tasks) do
  local r, err = avo.join(t)
  if r then
    answered = answered + 1
    peers = math.max(peers, tonumber(r.content:match("peers: (%d+)")) or 0)
  else
    assert(err:find("LLM budget exhausted", 1, true), err)
    refused = refused + 1
  end
end
local t = avo.llm.totals()
io.stderr:write(("reserve: used %d, answered %d, refused %d, peers %d\n"):format(
  t.input_tokens + t.output_tokens, answered, refused, peers))
