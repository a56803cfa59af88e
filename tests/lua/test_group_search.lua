-- The strategies that search knob groups apart, on the test backend.
-- ga's assemble: generations start with the assembled child.  linesearch:
-- the groups' knobs move together and are judged on their own configs, the
-- knobs of no group one at a time on the score, the new incumbent is
-- evaluated as a whole, restrictions and margin hold, the start and the
-- restarts sample the space, bad options are refused.
local avo = require "avo"
local linesearch = avo.strategy("linesearch")
local gev = avo.evaluator("tests/lua/evaluators/grouped.lua")

-- Records of this run from id `from` on.
local function records_from(from)
  local list = {}
  for id = from, from + 100000 do
    local r = avo.lineage.get(id)
    if not r then break end
    list[#list + 1] = r
  end
  return list
end

-- The id of this run's newest record.
local function last_id()
  local id = 0
  while avo.lineage.get(id + 1) do id = id + 1 end
  return id
end

local function changed(r, seed)
  local names = {}
  for name, v in pairs(r.knobs) do
    if tostring(v) ~= tostring(seed.knobs[name] or "") then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

-- The GA's assemble: every generation after the first starts with the
-- assembled child where the population holds a group faster elsewhere.
local strategy_ga = avo.strategy("ga")
local bad_ok, bad_err = pcall(strategy_ga.run, { evaluator = gev, assemble = 1 })
assert(not bad_ok and tostring(bad_err):find("option 'assemble' must be a boolean", 1, true),
  tostring(bad_err))
local last = last_id()
strategy_ga.run{ evaluator = gev, population = 6, generations = 4, assemble = true,
  operator_options = { param_tweak = { per_group = true } } }
local assembled = {}
for id = last + 1, last + 1000 do
  local r = avo.lineage.get(id)
  if not r then break end
  if r.operator == "assemble" then assembled[#assembled + 1] = r end
end
assert(#assembled >= 1, "the GA with assemble evaluated assembled children")
for _, r in ipairs(assembled) do
  assert(r.generation >= 1 and r.note:find("^base #%d+; ") and r.note:find("faster on"), r.note)
end

-- Opposite optima: LG_MR wants 16, SM_MR wants 4.
local apart = avo.evaluator("tests/lua/evaluators/grouped_apart.lua")
local start = avo.evaluate(apart, apart:seed())
local best = linesearch.run{ evaluator = apart, sweeps = 1, restart = 0 }
local list = records_from(start.id + 1)
assert(tostring(best.knobs.LG_MR) == "16" and tostring(best.knobs.SM_MR) == "4",
  "each group's knob took its own part's best value")
-- Line 1: the n-th candidate sets LG_MR and SM_MR to their n-th values,
-- nothing else; then the new incumbent, a combination no candidate held.
local seed = start -- linesearch's own seed is this record again
for i = 1, 6 do
  local names = changed(list[i], seed)
  assert(#names == 2 and names[1] == "LG_MR" and names[2] == "SM_MR",
    ("line 1 moves LG_MR and SM_MR together: %s"):format(table.concat(names, " ")))
  assert(list[i].note:find("^sweep 1, line 1: LG_MR=%d+, SM_MR=%d+$"), list[i].note)
end
local inc = list[7]
assert(inc.note:find("sweep 1, line 1, new incumbent: LG_MR 8%->16 %(2x faster on LG_%*%)"),
  inc.note)
assert(inc.note:find("SM_MR 8->4 (1.33x faster on SM_*)", 1, true), inc.note)
assert(inc.parents[1].id == seed.id and inc.id == best.id and inc.operator == "linesearch")
-- Groups' knobs move together, the others (MD_, TS_) one at a time later
-- in the sweep, and never a value the restrictions rule out.
local solo = 0
for _, r in ipairs(list) do
  assert(not (tostring(r.knobs.LG_MR) == "16" and tonumber(r.knobs.LG_NV) >= 3),
    "a value outside the restrictions was tried: " .. r.note)
  local names = changed(r, inc)
  if r.id > inc.id and #names > 0 and not r.note:find("incumbent") then
    local grouped = names[1]:match("^LG_") or names[1]:match("^SM_")
    if not grouped then
      solo = solo + 1
      assert(#names == 1 and (names[1]:match("^MD_") or names[1]:match("^TS_")), r.note)
    end
  end
end
assert(solo > 0, "the knobs of no group have lines of their own")

-- margin: no value is faster by more than 99%, so nothing moves, and the
-- search stops after one sweep.
local grouped = gev
local before = last_id()
local kept = linesearch.run{ evaluator = grouped, margin = 0.99, restart = 0 }
for _, r in ipairs(records_from(before + 1)) do
  assert(not r.note:find("incumbent") and r.note:find("^sweep 1,"), r.note)
end
assert(tostring(kept.knobs.LG_MR) == "16", "the best record is still reported")

-- The start and the restarts: the first climb starts from the best of the
-- seed and a spread sample; a sweep that moves nothing restarts from the
-- best of a new sample away from the points climbs stalled at.  Nothing
-- outside the restrictions is evaluated (restricted.lua fails it).
local restricted = avo.evaluator("tests/lua/evaluators/restricted.lua")
local first = last_id()
avo.evaluate(restricted, restricted:seed())
local climbed = linesearch.run{ evaluator = restricted, restart = 3, sweeps = 6 }
local starts, restarts = 0, {}
for _, r in ipairs(records_from(first + 1)) do
  assert(r.status == "ok", ("%s: %s"):format(r.note, tostring(r.reason)))
  if r.note == "start: space-filling sample beside the seed" then
    starts = starts + 1
    assert(r.generation == 0, "the start sample comes first")
  end
  local n = r.note:match("^restart (%d+): no knob moved in sweep %d+; space%-filling sample$")
  if n then
    restarts[n] = (restarts[n] or 0) + 1
  end
end
assert(starts == 3, "3 start samples, got " .. starts)
assert(restarts["1"] == 3, "a sweep that moved nothing restarted with 3 samples")
assert(climbed.score >= avo.lineage.get(first + 1).score)

-- Bad options.
for _, case in ipairs({
  { { evaluator = grouped, sweeps = 0 }, "linesearch: option 'sweeps' must be an integer >= 1, got 0" },
  { { evaluator = grouped, margin = 1 }, "linesearch: option 'margin' must be a number in [0, 1), got 1" },
  { { evaluator = grouped, restart = -1 }, "linesearch: option 'restart' must be an integer >= 0, got -1" },
  { { evaluator = grouped, population = 4 }, "linesearch: unknown option 'population'" },
  { {}, "linesearch: option 'evaluator' must be given, got nil" },
}) do
  local ok, err = pcall(linesearch.run, case[1])
  assert(not ok and tostring(err):find(case[2], 1, true), tostring(err))
end
print("test_group_search: ok")
