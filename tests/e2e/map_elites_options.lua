-- Bad options of strategies/map_elites.lua each give an error naming the
-- option (run by tests/e2e/map_elites.sh).
local avo = require "avo"
local me = avo.strategy("map_elites")
local EV = "tests/lua/evaluators/synthetic.lua"

local function expect_error(pattern, opts)
  local ok, err = pcall(me.run, opts)
  assert(not ok, "expected an error matching " .. pattern)
  err = tostring(err)
  assert(err:find(pattern, 1, true), ("expected %q in the error, got %q"):format(pattern, err))
end

local function ev(t) t.evaluator = EV; return t end

expect_error("map_elites: option 'evaluator' must be given", {})
expect_error("map_elites: unknown option 'dim'", ev{ dim = { "TILE" } })
expect_error("map_elites: option 'dims' must be an array of knob names, got TILE", ev{ dims = "TILE" })
expect_error("map_elites: option 'dims' must be an array of distinct knob names, got { TILE, TILE }",
  ev{ dims = { "TILE", "TILE" } })
expect_error("map_elites: option 'dims' must be knob names of the seed kernel (ORDER, BM, BN, BK, " ..
  "UNROLL, TILE, PACK), got WARP", ev{ dims = { "TILE", "WARP" } })
expect_error("map_elites: option 'bins' must be absent without 'descriptor'", ev{ bins = { 2, 2 } })
expect_error("map_elites: option 'descriptor' must be a function", ev{ descriptor = 3, bins = { 2 } })
expect_error("map_elites: option 'bins' must be an array of integers >= 1",
  ev{ descriptor = function() return { 1 } end })
expect_error("map_elites: option 'bins' must be an array of integers >= 1",
  ev{ descriptor = function() return { 1 } end, bins = { 2, 0 } })
expect_error("map_elites: option 'dims' must be absent when 'descriptor' is given",
  ev{ descriptor = function() return { 1 } end, bins = { 2 }, dims = { "TILE" } })
expect_error("map_elites: option 'initial' must be an integer >= 0, got -1", ev{ initial = -1 })
expect_error("map_elites: option 'batch' must be an integer >= 1, got 0", ev{ batch = 0 })
expect_error("map_elites: option 'tournament' must be an integer >= 1, got 0", ev{ tournament = 0 })
expect_error("map_elites: option 'iterations' must be an integer >= 0, got 1.5", ev{ iterations = 1.5 })
expect_error("map_elites: option 'crossover_rate' must be a number in [0, 1], got 2",
  ev{ crossover_rate = 2 })
expect_error("map_elites: option 'operators' must be a table with at least one positive weight",
  ev{ operators = { param_tweak = 0 } })
expect_error("map_elites: option 'operator_options' must be a table", ev{ operator_options = 1 })

-- A descriptor is checked on every record it places.
expect_error("map_elites: option 'descriptor' must be nil or 2 integer(s) within bins { 2, 3 } " ..
  "(record #1), got { 1, 4 }",
  ev{ descriptor = function() return { 1, 4 } end, bins = { 2, 3 }, initial = 0, iterations = 0 })

-- A good descriptor: one dimension from the per-config rates.
local best = me.run(ev{
  descriptor = function(r)
    return { math.min(3, math.floor(r.configs[1].gflops) + 1) }
  end,
  bins = { 3 }, initial = 4, batch = 4, iterations = 2,
})
assert(best and best.status == "ok", "descriptor run returned no best record")
print("map_elites options: ok")
