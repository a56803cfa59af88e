-- A gain within the timing noise: candidate and incumbent are re-timed
-- alternately.  A lucky first measurement is refused; a steady gain is
-- confirmed and committed.  Re-timings are attempts, not candidates.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
local rec, why = t.step({ retime_rounds = 3 }, seed)
assert(rec, why)
assert(rec.note == "steady 1% gain" and rec.retimed and rec.retimed > 1, tostring(rec.retimed))
local outcomes = {}
for _, a in ipairs(avo.attempts.list()) do outcomes[a.outcome] = (outcomes[a.outcome] or 0) + 1 end
assert(outcomes.rejected_noise == 1 and outcomes.committed == 1, "outcomes")
assert(outcomes.retime == 12, "3 rounds x 2 sides x 2 commits: " .. tostring(outcomes.retime))
local inc_retimes = t.find_attempts(function(a) return a.outcome == "retime" and a.candidate_id == seed.id end)
assert(#inc_retimes == 6, "the incumbent's re-timings name it")
local msgs = t.llm_requests(args)[4].request.messages
assert(msgs[#msgs].content:find("within the timing noise (5.00%) and interleaved re-timing did not confirm", 1, true),
  msgs[#msgs].content)
-- Only the seed and the committed version are candidates.
assert(#assert(t.archive(args):candidates(1, false)) == 2)
io.stderr:write("agent retime: ok\n")
