-- The avo API as strategies and operators use it, on the deterministic test
-- backend (tests/lua/evaluators/synthetic.lua).
local avo = require "avo"

local ev = avo.evaluator("tests/lua/evaluators/synthetic.lua")
assert(ev.name == "synthetic")
assert(#ev.knobs >= 3 and ev.knobs[1].name == "ORDER", "knobs parsed from the kernel")

-- Streams: named, reproducible, independent.
local a, b = avo.rng("x"), avo.rng("y")
assert(avo.rng("x") == a, "same name, same stream object")
local xs = {}
for i = 1, 5 do xs[i] = a:int(1, 1000000) end
assert(xs[1] ~= xs[2] or xs[2] ~= xs[3], "stream produces varied values")
for _ = 1, 1000 do
  local v = b:int(3, 7)
  assert(v >= 3 and v <= 7 and math.type(v) == "integer")
  local f = b:float()
  assert(f >= 0 and f < 1)
end
local counts = {}
for _ = 1, 2000 do
  local k = b:weighted({ heavy = 9, light = 1, never = 0 })
  counts[k] = (counts[k] or 0) + 1
end
assert(not counts.never and counts.heavy > counts.light * 4, "weighted follows weights")
local arr = b:shuffle({ 1, 2, 3, 4, 5 })
table.sort(arr)
assert(table.concat(arr, ",") == "1,2,3,4,5", "shuffle permutes")

-- Seed evaluation and records.
local seed = ev:seed()
assert(seed.operator == "seed" and seed.knobs.ORDER == 0)
local rec = avo.evaluate(ev, seed)
assert(rec.id and rec.status == "ok", "seed evaluated")
assert(math.abs(rec.score - math.sqrt(1 * 2)) < 1e-9, "default score is the geometric mean")
assert(#rec.configs == 2 and rec.configs[1].name == "small")
assert(avo.seed_record().id == rec.id)

-- evaluate_all keeps order; duplicates are answered from the archive.
local kids = {}
for i, order in ipairs({ 1, 2, 0 }) do
  kids[i] = { source = seed.source, knobs = { ORDER = order, UNROLL = 1 }, operator = "manual",
              parents = { { id = rec.id, role = "parent" } }, generation = 1 }
end
local recs = avo.evaluate_all(ev, kids)
assert(recs[1].knobs.ORDER == 1 and recs[2].knobs.ORDER == 2 and recs[3].knobs.ORDER == 0)
assert(recs[1].score > recs[3].score, "ORDER=1 scores higher")
local again = avo.evaluate(ev, kids[1])
assert(again.duplicate and again.id == recs[1].id, "duplicate returns the earlier record")
-- (The run keeps the earlier record frozen (core.freeze): the copy holds the
-- same values, integers and floats as they were, arrays still marked.)
local function same(a, b, path)
  assert(type(a) == type(b), path .. ": " .. type(a) .. " vs " .. type(b))
  if type(a) == "number" then
    assert(math.type(a) == math.type(b) and a == b, path .. ": " .. tostring(a) .. " vs " .. tostring(b))
  elseif type(a) == "table" then
    assert(getmetatable(a) == getmetatable(b), path .. ": metatables differ")
    for k, v in pairs(a) do same(v, b[k], path .. "." .. tostring(k)) end
    for k in pairs(b) do assert(a[k] ~= nil, path .. "." .. tostring(k) .. ": extra") end
  else
    assert(a == b, path .. ": " .. tostring(a) .. " vs " .. tostring(b))
  end
end
local copy = {}
for k, v in pairs(again) do copy[k] = v end
copy.duplicate = nil
same(recs[1], copy, "duplicate")
assert(avo.best().id == recs[1].id, "best tracks the highest score")

-- Lineage through the archive.
local got = avo.lineage.get(recs[1].id)
assert(got.source == seed.source and got.parents[1].id == rec.id)
assert(avo.lineage.common_ancestor(recs[1].id, recs[2].id) == rec.id)

-- Three-way merge.
local base = "a\nb\nc\nd\ne\nf\ng\n"
local merged, n = avo.merge3(base, "A\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\ne\nf\nG\n")
assert(n == 0 and merged == "A\nb\nc\nd\ne\nf\nG\n", "clean merge")
local _, conflicts = avo.merge3(base, "X\nb\nc\nd\ne\nf\ng\n", "Y\nb\nc\nd\ne\nf\ng\n")
assert(conflicts >= 1, "conflicting edits are reported")

-- Tasks run concurrently and join.
local t1 = avo.spawn(function() return avo.evaluate(ev, { source = seed.source,
  knobs = { ORDER = 1, UNROLL = 2 }, operator = "manual" }).score end)
local t2 = avo.spawn(function() return "second" end)
assert(avo.join(t1) > 0 and avo.join(t2) == "second")
local bad = avo.spawn(function() error("boom") end)
local ok, err = pcall(avo.join, bad)
assert(not ok and err:find("boom"), "join re-raises a task's error")

-- Misuse raises clear errors.
ok, err = pcall(avo.evaluate, ev, { knobs = {} })
assert(not ok and err:find("source"), "candidate without source: " .. tostring(err))
ok, err = pcall(avo.evaluate, {}, seed)
assert(not ok and err:find("evaluator"), err)
ok, err = pcall(avo.strategy, "no_such_strategy")
assert(not ok and err:find("strategy 'no_such_strategy' not found (looked in ", 1, true), err)
assert(not err:find("strategie '", 1, true), err)
-- ... naming what exists, the shipped parts among them
assert(err:find("; strategies there: ", 1, true) and err:find("%f[%w]ga,") and
  err:find("map_elites", 1, true) and not err:find("%f[%w]lib%f[^%w]"), err)
ok, err = pcall(avo.operator, "nope")
assert(not ok and err:find("operator 'nope' not found (looked in ", 1, true), err)
assert(err:find("; operators there: ", 1, true) and err:find("param_tweak", 1, true), err)
ok, err = pcall(avo.evaluator, "cpu/nope")
assert(not ok and err:find("evaluator 'cpu/nope' not found (looked in ", 1, true), err)
assert(err:find("; evaluators there: ", 1, true) and err:find("cpu/sgemm,", 1, true) and
  not err:find("_common", 1, true), err)

-- Knob parser errors name the line.
ok, err = pcall(avo.knobs, "int x;\n// avo:param 9bad 1 2\n")
assert(not ok and err:find("line 2"), err)
-- ... the second time too (the parse of a source is remembered).
local again
ok, again = pcall(avo.knobs, "int x;\n// avo:param 9bad 1 2\n")
assert(not ok and again == err, again)
assert(not pcall(avo.knobs, nil) and not pcall(avo.knobs, {}))
-- Each caller gets its own list: changing one changes no later parse.
local src = "// avo:param BM 16 32 64\n// avo:param NAME a b\nint x;\n"
local k1 = avo.knobs(src)
assert(#k1 == 2 and k1[1].name == "BM" and k1[1].values[3] == 64 and k1[2].values[2] == "b")
assert(k1[1].line == 1 and k1[2].line == 2)
k1[1].values[1], k1[2].name = 999, "changed"
table.remove(k1)
local k2 = avo.knobs(src)
assert(#k2 == 2 and k2[1].values[1] == 16 and k2[2].name == "NAME", "a parse changed by a caller")
-- Many distinct sources (more than the parses remembered) parse alike.
for i = 1, 600 do
  local k = avo.knobs(("// avo:param K%d %d %d\n"):format(i, i, i + 1))
  assert(#k == 1 and k[1].name == "K" .. i and k[1].values[2] == i + 1)
end
assert(avo.knobs(src)[1].values[2] == 32)
-- A declaration read before, in another source on another line (as an
-- LLM's edit moves it): its line is this source's, its values its own.
local moved = avo.knobs("int y;\n\n" .. src)
assert(moved[1].line == 3 and moved[2].line == 4 and moved[1].values[3] == 64)
moved[1].values[3] = 0
assert(avo.knobs("/* x */\n" .. src)[1].values[3] == 64, "a parse changed by a caller")
-- Each malformed declaration, at its line, however often it was read.
local BAD = {
  { "// avo:param 9x 1\n", "'avo:param' needs a C identifier, got \"9x\"" },
  { "// avo:param N\n", "knob N has no values" },
  { "// avo:param N 1 $2\n", 'knob N has a bad value "$2"' },
  { "// avo:param N 1 2\n// avo:param N 1 $2\n", "knob N declared twice" }, -- (named so first)
}
for round = 1, 2 do
  for i, case in ipairs(BAD) do
    local text = ("\n"):rep(i + round) .. case[1]
    local line = i + round + select(2, case[1]:gsub("\n", "")) -- (the last declaration's)
    ok, err = pcall(avo.knobs, text)
    assert(not ok and err:find(("line %d: %s"):format(line, case[2]), 1, true), err)
  end
end

-- The lineage: of each distinct source its best record (score, then the
-- lower id).  90 sources (more than diverse shuffles whole), two knob
-- settings each, the better one second on every third source.
local best_of, sources = {}, {}
for i = 1, 90 do
  local src = seed.source .. ("\n/* variant %d */\n"):format(i)
  sources[i] = src
  local orders = i % 3 == 0 and { 0, 1 } or { 1, 0 }
  for _, order in ipairs(orders) do
    local r = avo.evaluate(ev, { source = src, knobs = { ORDER = order, UNROLL = 1 }, operator = "manual",
                                 parents = { { id = rec.id, role = "parent" } }, generation = 2 })
    assert(r.status == "ok")
    local b = best_of[src]
    if not b or r.score > b.score or (r.score == b.score and r.id < b.id) then best_of[src] = r end
  end
end
local top = avo.lineage.top(5)
assert(#top == 5)
for i, t in ipairs(top) do
  assert(best_of[t.source] == nil or best_of[t.source].id == t.id, "top holds each source's best")
  if i > 1 then
    assert(top[i - 1].score > t.score or (top[i - 1].score == t.score and top[i - 1].id < t.id),
      "top is best first")
  end
end
local function diverse_ids(n, exclude)
  local out, ids, seen = avo.lineage.diverse(n, avo.rng("lineage-test"), exclude), {}, {}
  for i, d in ipairs(out) do
    local b = best_of[d.source]
    if b then
      assert(d.id == b.id and d.score == b.score and d.knobs.ORDER == b.knobs.ORDER,
        "diverse gives each source's best record, whole")
    end
    assert(not seen[d.source], "one record per source")
    assert(not (exclude and exclude[d.id]), "an excluded record")
    seen[d.source] = true
    ids[i] = d.id
  end
  return table.concat(ids, ",")
end
local drawn = diverse_ids(10)
assert(#avo.lineage.diverse(10, avo.rng("lineage-test-2")) == 10)
-- Nearly everything excluded: the few left, all of them.
local exclude = {}
for _, b in pairs(best_of) do exclude[b.id] = true end
local kept = {}
for i = 1, 3 do
  exclude[best_of[sources[i]].id] = nil
  kept[best_of[sources[i]].id] = true
end
for _, t in ipairs(avo.lineage.top(100)) do
  if not best_of[t.source] then exclude[t.id] = true end
end
local few = avo.lineage.diverse(10, avo.rng("lineage-few"), exclude)
assert(#few == 3 and kept[few[1].id] and kept[few[2].id] and kept[few[3].id], #few)
assert(diverse_ids(3, exclude) ~= nil)
assert(drawn ~= "", "diverse drew records")

-- strategies.lib.moments (the surrogate's standardization, constant time
-- per score) agrees with the two-pass sums over every score, a failed one
-- (false) counting as the worst, and a copy taken before scores are added
-- is what the moments were.
local moments = require "strategies.lib.moments"
local core = require "avo.core"
local mrng = core.rng(3, "moments")
for _ = 1, 500 do
  local n = mrng:below(300) + 1
  local scores, m = {}, moments.new()
  local offset = mrng:below(2) == 0 and 0 or 1e4 -- a large mean, a small spread
  for i = 1, n do
    local k = mrng:below(10)
    scores[i] = k == 0 and false or k == 1 and mrng:below(5) + offset or mrng:double() * 10 - 3 + offset
    moments.add(m, scores[i])
  end
  local worst = mrng:below(2) == 0 and offset or offset - 3.5
  local sum = 0
  for i = 1, n do sum = sum + (scores[i] or worst) end
  local mean = sum / n
  local var = 0
  for i = 1, n do var = var + ((scores[i] or worst) - mean) ^ 2 end
  local sd = math.sqrt(var / n)
  if sd == 0 then sd = 1 end
  local before = moments.copy(m)
  moments.add(m, 99)
  moments.add(m, false)
  local m2, s2 = moments.of(before, worst)
  assert(math.abs(m2 - mean) <= 1e-9 * math.max(1, math.abs(mean)) and math.abs(s2 - sd) <= 1e-9 * sd,
    ("%a %a %a %a"):format(mean, m2, sd, s2))
end
assert(select(2, moments.of(moments.new(), 0)) == 1, "no score: sd 1")
local flat = moments.new()
moments.add(flat, 2); moments.add(flat, 2)
assert(select(2, moments.of(flat, 0)) == 1, "no spread: sd 1")

local budget = avo.budget()
assert(budget.evaluations >= 5 and budget.elapsed >= 0)
print("test_api: ok")
