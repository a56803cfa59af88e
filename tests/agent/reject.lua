-- A slower version is refused by the commit gate (the step goes on, the
-- attempt says why), then the agent gives up: no candidate is made.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
local rec, why = t.step({}, seed)
assert(rec == nil and why == "gave up: nothing beats the seed here", tostring(why))
local attempts = avo.attempts.list()
assert(#attempts == 1 and attempts[1].outcome == "rejected_slower", attempts[1].outcome)
assert(attempts[1].reason == "slower but simpler" and attempts[1].candidate_id == nil)
assert(math.abs(attempts[1].score - 0.8 * math.sqrt(2)) < 1e-9)
assert(avo.best().id == seed.id, "no new candidate")
local calls = t.llm_requests(args)
assert(#calls == 4, #calls)
local msgs = calls[4].request.messages
assert(msgs[#msgs].role == "tool" and msgs[#msgs].content:find("commit rejected: 1.13137 is slower than the best #1", 1, true),
  msgs[#msgs].content)
local step = t.events(args, "agent_step")[1].data
assert(step.why == "gave up: nothing beats the seed here" and step.committed == nil)

-- The API under the agent: misuse raises, diff is a unified diff.
local ok, err = pcall(avo.evaluate, t.ev, seed, { attempt = { step = "one" } })
assert(not ok and err:find("attempt.step must be a number", 1, true), err)
ok, err = pcall(avo.evaluate, t.ev, seed, { measured = 3 })
assert(not ok and err:find("'measured' must be a record", 1, true), err)
local d = avo.diff("a\nb\n", "a\nc\n", "k.c")
assert(d:find("--- a/k.c", 1, true) and d:find("-b\n+c", 1, true), d)
assert(avo.diff("x\n", "x\n") == "")
local c = avo.compile(t.ev, { source = seed.source .. "@@\n" })
assert(c.status == "compile_error" and c.log:find("expected ';'", 1, true))
io.stderr:write("agent reject: ok\n")
