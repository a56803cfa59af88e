-- avo.retime's paired figures (issue 30): each ratio is candidate / baseline
-- within a round, then the median and the 95% interval over the rounds,
-- overall and per config; the seed is paired like a baseline; the text every
-- view prints comes from these figures.
local retime = require "avo.retime"

local function close(a, b) return math.abs(a - b) <= 1e-12 * math.max(1, math.abs(b)) end

-- Paired by round, not a ratio of medians: a load that slows a whole round
-- cancels out.
local p = retime.paired({ 10, 20, 30 }, { 5, 10, 15 })
assert(close(p.median, 2) and close(p.low, 2) and close(p.high, 2), "every round 2x")
assert(#p.ratios == 3 and getmetatable(p.ratios), "ratios kept, as a JSON array")
p = retime.paired({ 10, 21, 28 }, { 5, 10, 14 })
assert(close(p.median, 2) and p.low <= 2 and p.high >= 2.1, "median and interval of 2, 2.1, 2")
-- Only rounds where both measured count; none: nil.
p = retime.paired({ 10, 0, 12 }, { 5, 10, 6 })
assert(#p.ratios == 2 and close(p.median, 2), "a round without a score is left out")
assert(retime.paired({ 1 }, {}) == nil)

-- collect: ranked by median, paired with the seed and each baseline, per
-- config too; the seed not paired with itself; a failed baseline not paired.
local ev = { name = "toy", unit = "GFLOP/s", configs = { { name = "a" }, { name = "b" } } }
local function cfg(x) return { a = x, b = 2 * x } end
local chosen = { { id = 7, score = 9 }, { id = 3, score = 8 }, { id = 1, score = 1 } }
local seed = chosen[3]
local extra = { { id = "baseline:blas", name = "blas" }, { id = "baseline:gone", name = "gone" } }
local scores = { [7] = { 8, 16 }, [3] = { 9, 9 }, [1] = { 1, 2 },
                 ["baseline:blas"] = { 4, 8 }, ["baseline:gone"] = { 5 } }
local per_config = {}
for id, xs in pairs(scores) do
  per_config[id] = {}
  for r, x in ipairs(xs) do per_config[id][r] = cfg(x) end
end
local data = retime.collect(ev, chosen, seed, extra, scores, per_config,
  { ["baseline:gone"] = "crashed in round 2: x" }, { set = 1, top = 3, rounds = 2 })
assert(data.paired == true and data.best == 7, "ranked by median: #7 (12) before #3 (9)")
assert(data.ranked[1].id == 7 and data.ranked[2].id == 3 and data.ranked[3].id == 1)
local e = data.ranked[1]
assert(#e.paired == 2 and e.paired[1].against == "seed" and e.paired[1].id == 1, "seed first")
assert(close(e.paired[1].median, 8) and close(e.paired[2].median, 2), "8/1, 16/2; 8/4, 16/8")
assert(close(e.vs.blas, 2) and e.vs.gone == nil, "vs: the paired median; no failed baseline")
assert(#e.paired[2].configs == 2 and e.paired[2].configs[2].name == "b"
  and close(e.paired[2].configs[2].median, 2), "per config, in the evaluator's order")
local s = data.ranked[3]
assert(#s.paired == 1 and s.paired[1].against == "blas", "the seed is not paired with itself")
assert(data.seed.id == 1 and data.seed.median == 1.5, "the seed's own rounds")
assert(data.baselines[2].why and not data.baselines[2].median, "a failed baseline says why")

-- The text: one format for every view.
assert(retime.ratio_text(e.paired[1]) == "8.00x seed #1 [8.00, 8.00]",
  retime.ratio_text(e.paired[1]))
assert(retime.paired_text(e) == "8.00x seed #1 [8.00, 8.00], 2.00x blas [2.00, 2.00]")
local head = retime.headline(data, "#7 (manual, generation 0)")
assert(head[1]:find("^best #7 %(manual, generation 0%), re%-timed: 12 GFLOP/s %["), head[1])
assert(head[1]:find("; recorded 9 GFLOP/s$"), head[1])
assert(head[2] == "  paired per round (median [95% interval]): " .. retime.paired_text(e), head[2])
assert(head[3] == "  blas per config, paired: a 2.00x [2.00, 2.00], b 2.00x [2.00, 2.00]", head[3])
local lines = table.concat(retime.lines(data), "\n")
assert(lines:find("  1. #7 12 GFLOP/s", 1, true), lines)
assert(lines:find("baseline gone in the same rounds: crashed", 1, true), lines)
-- Nothing ranked: no headline.
assert(retime.headline({ ranked = {}, rounds = 1 }, "#1") == nil)
print("test_retime: ok")
