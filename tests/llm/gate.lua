-- Calls waiting for a slot (tests/llm/gate.sh): callers to two servers at
-- once, their base URLs A and B (each says its slots: llama.cpp /props),
-- asked alternately (after one call to each).  Each server's calls wait for its own slots only, and
-- every waiting call is answered or refused.  Prints "answered N, refused
-- M, peers P, A Q, B R": P the most calls in flight at once in all, Q and
-- R to each server.
local avo = require "avo"
local args = ...
local tasks, urls = {}, { A = args.a, B = args.b }
-- (A call to each first: the first call to a server asks it what it is,
-- which the calls after it wait for.)
for _, url in pairs(urls) do
  assert(avo.llm.chat{ messages = { { role = "user", content = "hello" } }, base_url = url,
                       max_tokens = 40, retries = 0 })
end
for i = 1, tonumber(args.callers or 14) do
  local which = i % 2 == 1 and "A" or "B"
  tasks[i] = { which = which, task = avo.spawn(function()
    return avo.llm.chat{ messages = { { role = "user", content = "call " .. i } },
                         base_url = urls[which], max_tokens = 40, retries = 0 }
  end) }
end
local answered, refused, peers, here = 0, 0, 0, { A = 0, B = 0 }
for _, t in ipairs(tasks) do
  local r, err = avo.join(t.task)
  if r then
    answered = answered + 1
    local p, h = r.content:match("peers: (%d+), here: (%d+)")
    peers = math.max(peers, tonumber(p))
    here[t.which] = math.max(here[t.which], tonumber(h))
  else
    assert(avo.llm.is_refusal(err), err)
    refused = refused + 1
  end
end
io.stderr:write(("gate: answered %d, refused %d, peers %d, A %d, B %d\n"):format(answered, refused,
  peers, here.A, here.B))
