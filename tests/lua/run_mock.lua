-- Runs the strategies and operators against tests/lua/mock_avo.lua.
--
--   cd /work/main && lua5.4 tests/lua/run_mock.lua
--
-- Exits 0 when every test passes, 1 otherwise.

package.path = "tests/lua/?.lua;" .. package.path
local avo = require "mock_avo"
package.loaded.avo = avo -- `require "avo"` in strategies/operators gets the mock

---------------------------------------------------------------------------
-- A toy landscape: the seed (first values) scores 1, the optimum
-- BM = BN = 64, UNROLL = 4, ORDER = ikj scores 6 * 6 * 2.5 * 3 = 270, and
-- BM = BN = 128 is a wrong kernel.

local TOY_SOURCE = table.concat({
  "// avo:param BM 8 16 32 64 128",
  "// avo:param BN 8 16 32 64 128",
  "// avo:param UNROLL 1 2 4 8",
  "// avo:param ORDER ijk ikj kij",
  "void sgemm(void) {}",
}, "\n")

local TILE = { [8] = 1, [16] = 2, [32] = 4, [64] = 6, [128] = 3 }
local UNROLL = { [1] = 1, [2] = 1.5, [4] = 2.5, [8] = 2 }
local ORDER = { ijk = 1, ikj = 3, kij = 2 }

local function toy_score(k)
  if k.BM == 128 and k.BN == 128 then return nil, "too much shared data" end
  return TILE[k.BM] * TILE[k.BN] * UNROLL[k.UNROLL] * ORDER[k.ORDER]
end

local TOY = { name = "toy", source = TOY_SOURCE, score = toy_score }

local function domain_of(source)
  local d = {}
  for _, knob in ipairs(avo.knobs(source)) do d[knob.name] = knob.values end
  return d
end

local function contains(values, v)
  for _, x in ipairs(values) do if x == v then return true end end
  return false
end

local function ctx_for(name, options)
  return { ev = avo.evaluator(TOY), rng = avo.rng("op." .. name),
           generation = 1, options = options or {} }
end

-- The evaluation trace of a run: what was evaluated, from which parents.
local function trace()
  local lines = {}
  for _, r in ipairs(avo._run().evaluated) do
    local parents = {}
    for _, p in ipairs(r.parents) do parents[#parents + 1] = p.role .. "#" .. tostring(p.id) end
    lines[#lines + 1] = string.format("%d %s [%s] %s", r.id, r.operator,
      table.concat(parents, ","), r.note or "")
  end
  return table.concat(lines, "\n")
end

local function expect_error(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):find(pattern), "error was: " .. tostring(err))
  return err
end

---------------------------------------------------------------------------

local tests = {}
local function test(name, fn) tests[#tests + 1] = { name = name, fn = fn } end

test("knob parser reads names, integers and identifiers", function()
  local knobs = avo.knobs(TOY_SOURCE)
  assert(#knobs == 4 and knobs[1].name == "BM" and knobs[4].name == "ORDER")
  assert(math.type(knobs[1].values[2]) == "integer" and knobs[1].values[2] == 16)
  assert(knobs[4].values[2] == "ikj")
end)

test("param_tweak stays inside the domains", function()
  avo._reset{ seed = 3 }
  local pt = avo.operator("param_tweak")
  local domain = domain_of(TOY_SOURCE)
  local parent = avo._add_record{ source = TOY_SOURCE,
    knobs = { BM = 8, BN = 128, UNROLL = 4, ORDER = "kij" } }
  local ctx = ctx_for("param_tweak", { max_changes = 3 })
  local seen_far = false
  for _ = 1, 2000 do
    local child = assert(pt.apply(ctx, { parent }))
    assert(child.source == parent.source and child.operator == "param_tweak")
    assert(child.parents[1].id == parent.id and child.parents[1].role == "parent")
    assert(child.generation == 1)
    local changed = 0
    for name, values in pairs(domain) do
      assert(contains(values, child.knobs[name]), name .. " out of domain")
      if child.knobs[name] ~= parent.knobs[name] then changed = changed + 1 end
    end
    assert(changed >= 1 and changed <= 3, "changed " .. changed .. " knobs")
    if child.knobs.BM == 128 then seen_far = true end -- only a non-local move
  end
  assert(seen_far, "non-local moves never happened")
end)

test("param_tweak makes only neighbouring moves with local_p = 1", function()
  avo._reset{ seed = 4 }
  local pt = avo.operator("param_tweak")
  local parent = avo._add_record{ source = TOY_SOURCE,
    knobs = { BM = 32, BN = 32, UNROLL = 2, ORDER = "ikj" } }
  local ctx = ctx_for("param_tweak", { max_changes = 1, local_p = 1 })
  for _ = 1, 500 do
    local child = pt.apply(ctx, { parent })
    assert(contains({ 16, 32, 64 }, child.knobs.BM))
    assert(contains({ 1, 2, 4 }, child.knobs.UNROLL))
    assert(child.note:match("^%u+ %w+%->%w+$"), child.note)
  end
end)

test("param_tweak: no knobs, bad options", function()
  avo._reset()
  local pt = avo.operator("param_tweak")
  local parent = avo._add_record{ source = "void f(void) {}" }
  local child, why = pt.apply(ctx_for("param_tweak"), { parent })
  assert(child == nil and why == "no knobs")
  local with_knobs = avo._add_record{ source = TOY_SOURCE }
  expect_error("param_tweak: option 'max_changes' must be an integer >= 1, got %-1",
    pt.apply, ctx_for("param_tweak", { max_changes = -1 }), { with_knobs })
  expect_error("param_tweak: option 'local_p'",
    pt.apply, ctx_for("param_tweak", { local_p = 2 }), { with_knobs })
end)

test("crossover takes each knob from one of its parents", function()
  avo._reset{ seed = 5 }
  local cx = avo.operator("crossover")
  local a = avo._add_record{ source = TOY_SOURCE,
    knobs = { BM = 16, BN = 16, UNROLL = 1, ORDER = "ijk", GONE = 3 } }
  local b = avo._add_record{ source = TOY_SOURCE,
    knobs = { BM = 64, BN = 32, UNROLL = 8 } } -- no ORDER
  local ctx = ctx_for("crossover")
  local from = { BM = {}, BN = {}, UNROLL = {} }
  for _ = 1, 400 do
    local child = assert(cx.apply(ctx, { a, b }))
    assert(child.source == TOY_SOURCE and child.operator == "crossover")
    assert(child.parents[1].id == a.id and child.parents[1].role == "ours")
    assert(child.parents[2].id == b.id and child.parents[2].role == "theirs")
    assert(child.knobs.GONE == nil, "knob outside the source's domain kept")
    assert(child.knobs.ORDER == "ijk", "knob only one parent has")
    for name, seen in pairs(from) do
      local v = child.knobs[name]
      assert(v == a.knobs[name] or v == b.knobs[name], name .. " from neither parent")
      seen[v] = true
    end
  end
  for name, seen in pairs(from) do
    assert(seen[a.knobs[name]] and seen[b.knobs[name]], name .. " never from both parents")
  end
  assert(cx.apply(ctx, { a }) == nil, "one parent must not cross")
end)

-- Three versions of a kernel with one knob; `line2` is the line the
-- children edit.
local function kernel(line2, line4)
  return table.concat({ "// avo:param U 1 2 4", line2, "int x;", line4 }, "\n")
end

test("crossover merges sources over the common ancestor", function()
  avo._reset()
  local cx = avo.operator("crossover")
  local base = avo._add_record{ source = kernel("a", "b"), knobs = { U = 1 } }
  local a = avo._add_record{ source = kernel("A", "b"), knobs = { U = 2 },
    parents = { { id = base.id, role = "parent" } }, score = 5 }
  local b = avo._add_record{ source = kernel("a", "B"), knobs = { U = 4 },
    parents = { { id = base.id, role = "parent" } }, score = 7 }
  local child = cx.apply(ctx_for("crossover"), { a, b })
  assert(child.source == kernel("A", "B"), child.source)
  assert(child.note:find(string.format("merged sources of #%d and #%d over #%d",
    a.id, b.id, base.id), 1, true), child.note)
  assert(child.knobs.U == 2 or child.knobs.U == 4)
end)

test("conflicted merge keeps the higher-score parent's source", function()
  avo._reset()
  local cx = avo.operator("crossover")
  local base = avo._add_record{ source = kernel("a", "b") }
  local a = avo._add_record{ source = kernel("X", "b"), score = 5,
    parents = { { id = base.id, role = "parent" } } }
  local b = avo._add_record{ source = kernel("Y", "b"), score = 7,
    parents = { { id = base.id, role = "parent" } } }
  local child = cx.apply(ctx_for("crossover"), { a, b })
  assert(child.source == b.source, "kept the lower-score parent")
  local want = string.format("merge conflict (1 hunks) over #%d; kept source of #%d", base.id, b.id)
  assert(child.note:find(want, 1, true), child.note)

  -- Equal scores: the lower id wins, whichever parent is "ours".
  b.score = 5
  child = cx.apply(ctx_for("crossover"), { b, a })
  assert(child.source == a.source)
  assert(child.note:find("kept source of #" .. a.id, 1, true), child.note)

  -- No common ancestor at all.
  local stranger = avo._add_record{ source = kernel("Z", "z"), score = 9 }
  child = cx.apply(ctx_for("crossover"), { a, stranger })
  assert(child.source == stranger.source)
  assert(child.note:find("no common ancestor; kept source of #" .. stranger.id, 1, true))
end)

test("ga improves on the toy landscape", function()
  avo._reset{ seed = 7 }
  local best = avo.strategy("ga").run{ evaluator = TOY, population = 10, generations = 25 }
  local seed = avo.seed_record()
  assert(seed.operator == "seed" and seed.score == 1)
  assert(best.score >= seed.score)
  assert(best.score >= 100, "ga best only " .. best.score)
  assert(best == avo.best() or best.score == avo.best().score)
  local domain = domain_of(TOY_SOURCE)
  local ops = {}
  for _, r in ipairs(avo._run().evaluated) do
    ops[r.operator] = true
    for name, values in pairs(domain) do
      assert(contains(values, r.knobs[name]), "record " .. r.id .. " " .. name)
    end
  end
  assert(ops["crossover+param_tweak"] and ops.param_tweak, "both operator paths used")
  local p = avo._run().progress
  assert(#p == 26 and p[1] == 0 and p[26] == 25, "progress " .. #p)
end)

test("ga: same seed, same parent choices; another seed, others", function()
  local function run_ga(seed)
    avo._reset{ seed = seed }
    avo.strategy("ga").run{ evaluator = TOY, population = 6, generations = 6,
      crossover_rate = 0.5 }
    return trace()
  end
  local first = run_ga(11)
  assert(first == run_ga(11), "same seed gave another run")
  assert(first ~= run_ga(12), "another seed gave the same run")
end)

test("ga never puts two identical children in one generation", function()
  avo._reset{ seed = 13 }
  -- Watch every batch the strategy submits: no (source, knobs) twice.
  local evaluate_all = avo.evaluate_all
  local batches = 0
  avo.evaluate_all = function(ev, cands)
    local keys = {}
    for _, c in ipairs(cands) do
      local k = c.knobs
      local key = c.source .. k.BM .. "," .. k.BN .. "," .. k.UNROLL .. "," .. k.ORDER
      assert(not keys[key], "identical children in one batch")
      keys[key] = true
    end
    batches = batches + 1
    return evaluate_all(ev, cands)
  end
  local ok, err = pcall(avo.strategy("ga").run,
    { evaluator = TOY, population = 12, generations = 10, crossover_rate = 0.6 })
  avo.evaluate_all = evaluate_all
  assert(ok, err)
  assert(batches == 12, "batches " .. batches) -- seed, initial children, 10 generations
end)

test("ga respects the evaluation budget", function()
  avo._reset{ seed = 2, max_evaluations = 15 }
  local best = avo.strategy("ga").run{ evaluator = TOY, population = 8, generations = 50 }
  assert(#avo._run().evaluated == 15, "evaluated " .. #avo._run().evaluated)
  assert(best and best.status == "ok" and best.score >= 1)
end)

test("ga on a knob-less kernel returns the seed", function()
  avo._reset()
  local ev = { name = "flat", source = "void f(void) {}", score = function() return 3 end }
  local best = avo.strategy("ga").run{ evaluator = ev }
  assert(best.operator == "seed" and best.score == 3)
  assert(#avo._run().evaluated == 1)
  assert(avo._run().logs[1]:find("no new children"))
end)

test("ga option errors name the option and the caller's line", function()
  avo._reset()
  local ga = avo.strategy("ga")
  local err = expect_error("ga: option 'population' must be an integer >= 2, got %-1",
    ga.run, { evaluator = TOY, population = -1 })
  assert(err:find("run_mock.lua", 1, true) or err:find("^ga:"), err)
  expect_error("ga: option 'elite'", ga.run, { evaluator = TOY, population = 4, elite = 4 })
  expect_error("ga: option 'crossover_rate'", ga.run, { evaluator = TOY, crossover_rate = 1.5 })
  expect_error("ga: option 'operators'", ga.run, { evaluator = TOY, operators = { param_tweak = 0 } })
  expect_error("ga: option 'evaluator'", ga.run, {})
end)

test("random samples the domain and reports batches", function()
  avo._reset{ seed = 9 }
  local best = avo.strategy("random").run{ evaluator = TOY, samples = 20, batch = 8 }
  local evaluated = avo._run().evaluated
  assert(#evaluated == 21, "evaluated " .. #evaluated)
  local domain = domain_of(TOY_SOURCE)
  for i = 2, #evaluated do
    local r = evaluated[i]
    assert(r.operator == "random" and r.parents[1].id == evaluated[1].id)
    for name, values in pairs(domain) do assert(contains(values, r.knobs[name])) end
  end
  assert(best.score >= evaluated[1].score)
  local p = avo._run().progress
  assert(#p == 3 and p[3] == 3)
  expect_error("random: option 'batch' must be an integer >= 1, got 0",
    avo.strategy("random").run, { evaluator = TOY, batch = 0 })
end)

test("random stops when a small space is used up", function()
  avo._reset{ seed = 9 }
  local ev = { name = "tiny", source = "// avo:param U 1 2\n// avo:param V 1 2",
               score = function(k) return k.U * k.V end }
  local best = avo.strategy("random").run{ evaluator = ev, samples = 50 }
  assert(#avo._run().evaluated == 4, "evaluated " .. #avo._run().evaluated)
  assert(best.score == 4)
end)

---------------------------------------------------------------------------

local failed = 0
for _, t in ipairs(tests) do
  local ok, err = xpcall(t.fn, debug.traceback)
  if ok then
    print("ok    " .. t.name)
  else
    failed = failed + 1
    print("FAIL  " .. t.name .. "\n" .. err)
  end
end
print(string.format("%d tests, %d failed", #tests, failed))
os.exit(failed == 0 and 0 or 1)
