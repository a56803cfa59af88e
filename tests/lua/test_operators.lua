-- param_tweak and crossover through the real engine: domains respected,
-- knobs inherited from parents only, source crossover by three-way merge
-- over the nearest common ancestor (clean and conflicted).
local avo = require "avo"

local ev = avo.evaluator("tests/lua/evaluators/synthetic.lua")
local tweak, cross = avo.operator("param_tweak"), avo.operator("crossover")
local seed = avo.evaluate(ev, ev:seed())

local domains = {}
for _, k in ipairs(ev.knobs) do
  domains[k.name] = {}
  for _, v in ipairs(k.values) do domains[k.name][tostring(v)] = true end
end

local ctx = { ev = ev, rng = avo.rng("op.param_tweak"), generation = 1, options = {} }
for _ = 1, 200 do
  local child = assert(tweak.apply(ctx, { seed }))
  local changed = 0
  for name, v in pairs(child.knobs) do
    assert(domains[name][tostring(v)], ("knob %s=%s outside its domain"):format(name, v))
    if tostring(v) ~= tostring(seed.knobs[name]) then changed = changed + 1 end
  end
  assert(changed >= 1 and changed <= 2, "param_tweak changes 1..max_changes knobs")
  assert(child.parents[1].id == seed.id and child.source == seed.source)
end

-- A neighbouring move walks a domain of numbers in numeric order: the seed's
-- value is listed first (KC 256 64 128 512), yet from 256 a step goes to 128
-- or 512, never to 64; a domain of names is walked as written.
local walk_src = "// avo:param KC 256 64 128 512\n// avo:param MODE fast slow medium\n" ..
  "void f(void) {}\n"
local walk_ctx = { ev = ev, rng = avo.rng("op.param_tweak.walk"), generation = 1,
                   options = { local_p = 1, max_changes = 1 } }
local function moves(from)
  local seen = { KC = {}, MODE = {} }
  for _ = 1, 100 do
    local child = assert(tweak.apply(walk_ctx, { { id = seed.id, source = walk_src, knobs = from } }))
    for name, v in pairs(child.knobs) do
      if tostring(v) ~= tostring(from[name]) then seen[name][tostring(v)] = true end
    end
  end
  local function list(set)
    local out = {}
    for v in pairs(set) do out[#out + 1] = v end
    table.sort(out)
    return table.concat(out, " ")
  end
  return list(seen.KC), list(seen.MODE)
end
local kc, mode = moves({ KC = 256, MODE = "fast" })
assert(kc == "128 512", "from KC=256 a neighbouring step goes to 128 or 512, got: " .. kc)
assert(mode == "slow", "names are walked as written: fast -> slow, got: " .. mode)
kc, mode = moves({ KC = 64, MODE = "medium" })
assert(kc == "128" and mode == "slow", "from the ends: " .. kc .. " / " .. mode)
kc = moves({ KC = 512, MODE = "slow" })
assert(kc == "256", "512's only neighbour is 256, got: " .. kc)

-- The order both param_tweak and the surrogate's model walk a domain in.
local knob_lib = require "operators.lib.knobs"
local order, rank = knob_lib.order({ 256, 64, 128, 512 })
assert(table.concat(order, " ") == "2 3 1 4" and table.concat(rank, " ") == "3 1 2 4",
  "numbers in numeric order: " .. table.concat(order, " "))
order = knob_lib.order({ "fast", "slow", "medium" })
assert(table.concat(order, " ") == "1 2 3", "names as written")
order = knob_lib.order({ 4, 1.5, 4, 2 })
assert(table.concat(order, " ") == "2 4 1 3", "equal numbers keep their written order")

-- Knob crossover takes every value from one of the parents.
local a = avo.evaluate(ev, { source = seed.source, knobs = { ORDER = 1, UNROLL = 2, BK = 64 },
  operator = "manual", parents = { { id = seed.id, role = "parent" } }, generation = 1 })
local b = avo.evaluate(ev, { source = seed.source, knobs = { ORDER = 2, UNROLL = 8, BK = 16 },
  operator = "manual", parents = { { id = seed.id, role = "parent" } }, generation = 1 })
local xctx = { ev = ev, rng = avo.rng("op.crossover"), generation = 2, options = {} }
for _ = 1, 50 do
  local child = assert(cross.apply(xctx, { a, b }))
  for name, v in pairs(child.knobs) do
    local from_a = tostring(a.knobs[name] or seed.knobs[name]) == tostring(v)
    local from_b = tostring(b.knobs[name] or seed.knobs[name]) == tostring(v)
    assert(from_a or from_b, "knob " .. name .. " comes from a parent")
  end
  assert(child.parents[1].role == "ours" and child.parents[2].role == "theirs")
end

-- Knob groups (configs[i].knobs): each family's knobs come together from
-- the parent faster on that family's configs; the rest are crossed
-- uniformly.
local gev = avo.evaluator("tests/lua/evaluators/grouped.lua")
local gseed = avo.evaluate(gev, gev:seed())
local function grouped(knobs)
  return avo.evaluate(gev, { source = gseed.source, knobs = knobs, operator = "manual",
    parents = { { id = gseed.id, role = "parent" } }, generation = 1 })
end
-- ga is faster on the large configs (LG_MR 16 > 4), gb on the small one.
local ga = grouped({ LG_MR = 16, LG_KC = 64, SM_MR = 4, SM_KC = 64, MD_MR = 4, TS_MR = 4 })
local gb = grouped({ LG_MR = 4, LG_KC = 512, SM_MR = 16, SM_KC = 512, MD_MR = 16, TS_MR = 16 })
local gctx = { ev = gev, rng = avo.rng("op.crossover.groups"), generation = 2, options = {} }
local md_from = {}
for _ = 1, 40 do
  for _, order in ipairs({ { ga, gb }, { gb, ga } }) do
    local child = assert(cross.apply(gctx, order))
    assert(tostring(child.knobs.LG_MR) == "16" and tostring(child.knobs.LG_KC) == "64",
      "the LG_ knobs come together from the parent faster on the large configs")
    assert(tostring(child.knobs.SM_MR) == "16" and tostring(child.knobs.SM_KC) == "512",
      "the SM_ knobs come together from the parent faster on the small config")
    md_from[tostring(child.knobs.MD_MR) .. tostring(child.knobs.TS_MR)] = true
    if order[1] == gb then
      assert(child.note:find("LG_* (4x faster on large, large2)", 1, true), child.note)
    end
  end
end
-- Knobs in no group are still crossed uniformly: both parents' values occur.
assert(md_from["44"] or md_from["416"], "MD_/TS_ knobs from ga sometimes")
assert(md_from["1616"] or md_from["164"], "MD_/TS_ knobs from gb sometimes")
-- A parent without a correct time for a group's configs: that group is
-- crossed uniformly (both values occur), the other still by speed.
local failed = { id = -1, source = gseed.source, knobs = gb.knobs, status = "wrong", configs = {
  { name = "large", correct = false }, { name = "large2", correct = false },
  { name = "small", correct = true, median_s = 1 / 16 } } }
local lg_values = {}
for _ = 1, 40 do
  local child = assert(cross.apply(gctx, { ga, failed }))
  lg_values[tostring(child.knobs.LG_MR)] = true
  assert(tostring(child.knobs.SM_MR) == "16", "the small group still goes by speed")
end
assert(lg_values["16"] and lg_values["4"], "an unmeasured group is crossed uniformly")
-- A knob two groups name belongs to neither.
local knob_lib = require "operators.lib.knobs"
local groups = { { patterns = { "LG_*", "SHARED" } }, { patterns = { "SM_*", "SHARED" } } }
assert(knob_lib.group_of(groups, "LG_MR") == 1 and knob_lib.group_of(groups, "SM_KC") == 2)
assert(knob_lib.group_of(groups, "SHARED") == nil and knob_lib.group_of(groups, "MD_MR") == nil)
-- A group's time: median times, or with a yardstick (timing.yardstick) the
-- paired time in the seed's units (1 / vs_yardstick), which a slow moment
-- does not move: b, measured in a slow moment (every time doubled) but
-- 1.25x the seed beside it, is faster than a (1.1x the seed).
local a_rec = { configs = { { name = "x", correct = true, median_s = 1.0, vs_yardstick = 1.1 },
                            { name = "y", correct = true, median_s = 4.0, vs_yardstick = 1.1 } } }
local b_rec = { configs = { { name = "x", correct = true, median_s = 2.0, vs_yardstick = 1.25 },
                            { name = "y", correct = true, median_s = 8.0, vs_yardstick = 1.25 } } }
assert(math.abs(knob_lib.group_time(a_rec, { "x", "y" }) - 1 / 1.1) < 1e-12)
assert(knob_lib.slowdown(b_rec, a_rec, { "x", "y" }) < 1, "paired: b is the faster")
local unpaired = { configs = { { name = "x", correct = true, median_s = 1.0 },
                               { name = "y", correct = true, median_s = 4.0 } } }
assert(math.abs(knob_lib.group_time(unpaired, { "x", "y" }) - 2.0) < 1e-12)
assert(knob_lib.group_time(unpaired, { "x", "z" }) == nil, "a config not measured: no time")

-- param_tweak's per_group: 1..max_changes knobs in every knob group (LG_,
-- SM_) and among the knobs of no group (MD_, TS_), not in the whole kernel.
local function part_of(name)
  return name:match("^LG_") and "LG" or name:match("^SM_") and "SM" or "rest"
end
local per_ctx = { ev = gev, rng = avo.rng("op.param_tweak.groups"), generation = 2,
                  options = { per_group = true } }
local whole_ctx = { ev = gev, rng = avo.rng("op.param_tweak.whole"), generation = 2, options = {} }
local gvalues = knob_lib.inherit(avo.knobs(gseed.source), { gseed.knobs or {} })
local most = 0
for _ = 1, 100 do
  local changed = { LG = 0, SM = 0, rest = 0 }
  local child = assert(tweak.apply(per_ctx, { gseed }))
  for name, v in pairs(child.knobs) do
    if tostring(v) ~= tostring(gvalues[name]) then
      changed[part_of(name)] = changed[part_of(name)] + 1
    end
  end
  for part, n in pairs(changed) do
    assert(n >= 1 and n <= 2, ("per_group: %d knobs of %s changed"):format(n, part))
  end
  local total = 0
  for name, v in pairs(assert(tweak.apply(whole_ctx, { gseed })).knobs) do
    if tostring(v) ~= tostring(gvalues[name]) then total = total + 1 end
  end
  assert(total >= 1 and total <= 2, "without per_group: 1..max_changes in all")
  most = math.max(most, changed.LG + changed.SM + changed.rest)
end
assert(most > 2, "per_group changes more than max_changes knobs in all")
-- Without groups per_group changes the kernel as a whole.
local per_plain = { ev = ev, rng = avo.rng("op.param_tweak.plain"), generation = 1,
                    options = { per_group = true } }
for _ = 1, 50 do
  local changed = 0
  for name, v in pairs(assert(tweak.apply(per_plain, { seed })).knobs) do
    if tostring(v) ~= tostring(seed.knobs[name]) then changed = changed + 1 end
  end
  assert(changed >= 1 and changed <= 2)
end
local ok, err = pcall(tweak.apply, { ev = gev, rng = avo.rng("x"), options = { per_group = "yes" } },
  { gseed })
assert(not ok and err:find("param_tweak: option 'per_group' must be a boolean, got yes", 1, true),
  tostring(err))

-- assemble: the base's knobs, each group's from the parent fastest on it.
local assemble = avo.operator("assemble")
local actx = { ev = gev, rng = avo.rng("op.assemble"), generation = 3, options = {} }
local made = assert(assemble.apply(actx, { ga, gb }))
assert(tostring(made.knobs.LG_MR) == "16" and tostring(made.knobs.LG_KC) == "64",
  "the base's LG_ set stays: it is the faster one")
assert(tostring(made.knobs.SM_MR) == "16" and tostring(made.knobs.SM_KC) == "512",
  "the SM_ set comes from the parent faster on the small config")
assert(tostring(made.knobs.MD_MR) == "4" and tostring(made.knobs.TS_MR) == "4",
  "knobs of no group stay the base's")
assert(made.parents[1].id == ga.id and made.parents[1].role == "base")
assert(#made.parents == 2 and made.parents[2].id == gb.id and made.parents[2].role == "SM_*")
assert(made.note:find("SM_* from #" .. gb.id .. " (4x faster on small)", 1, true), made.note)
assert(made.source == ga.source and made.operator == "assemble")
-- Nothing faster elsewhere, a parent with another source, a parent with no
-- correct time on the group, no groups: no child, and why.
local other_source = { id = -2, source = gseed.source .. "\n", knobs = gb.knobs, status = "ok",
  configs = gb.configs }
for _, case in ipairs({
  { { ga }, "needs a base and other parents" },
  { { ga, ga }, "no group is faster in another parent" },
  { { ga, other_source }, "no group is faster in another parent" },
  { { ga, { id = -3, source = gseed.source, knobs = gb.knobs, status = "wrong",
            configs = { { name = "small", correct = false } } } }, "no group is faster" },
}) do
  local none, why = assemble.apply(actx, case[1])
  assert(none == nil and why:find(case[2], 1, true), tostring(why))
end
local none, why = assemble.apply({ ev = ev, rng = avo.rng("x"), options = {} }, { a, b })
assert(none == nil and why == "the evaluator's configs name no knob groups", why)

-- Source crossover: two edits of the seed in different places merge cleanly.
local lines = {}
for line in (seed.source .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
local function edit(at, text)
  local copy = { table.unpack(lines) }
  copy[at] = text
  return table.concat(copy, "\n")
end
local top, bottom = 2, #lines - 2
local left = avo.evaluate(ev, { source = edit(top, "/* left edit */"), knobs = seed.knobs,
  operator = "manual", parents = { { id = seed.id, role = "parent" } }, generation = 1 })
local right = avo.evaluate(ev, { source = edit(bottom, "/* right edit */"), knobs = seed.knobs,
  operator = "manual", parents = { { id = seed.id, role = "parent" } }, generation = 1 })
local child = assert(cross.apply(xctx, { left, right }))
assert(child.source:find("left edit", 1, true) and child.source:find("right edit", 1, true),
  "clean merge keeps both edits")
assert(child.note:find("merged", 1, true), child.note)

-- Conflicting edits of the same line: fall back to the higher-scoring parent.
local c1 = avo.evaluate(ev, { source = edit(top, "/* one */"), knobs = { ORDER = 1 },
  operator = "manual", parents = { { id = seed.id, role = "parent" } }, generation = 1 })
local c2 = avo.evaluate(ev, { source = edit(top, "/* two */"), knobs = { ORDER = 2 },
  operator = "manual", parents = { { id = seed.id, role = "parent" } }, generation = 1 })
assert(c1.score > c2.score)
child = assert(cross.apply(xctx, { c2, c1 }))
assert(child.source == c1.source, "conflict keeps the cleaner parent's source")
assert(child.note:find("conflict", 1, true) and child.note:find("#" .. c1.id, 1, true), child.note)
print("test_operators: ok")
