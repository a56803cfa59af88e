-- map_elites: MAP-Elites, a quality-diversity search.  Instead of one
-- population it keeps a map of cells, each holding the best verified record
-- (its elite) whose behaviour falls in that cell, so the run ends with the
-- best kernel of every kind it found as well as the best overall.
--
--   return avo.strategy("map_elites").run{ evaluator = "cpu/sgemm",
--                                          dims = { "TILE", "ORDER" } }
--
-- The cell of a record comes from either
--   dims        knob names: each value of each knob is its own bin, in the
--               order the kernel declares them (`// avo:param`); a knob the
--               record does not set is at its first value, and a record
--               with a value outside the domain is not placed; or
--   descriptor  function(record) -> { i1, i2, ... } with 1 <= i_d <= bins[d]
--               (or nil: not placed), and `bins` = { n1, n2, ... }.  It sees
--               verified records only, so per-config results are there, e.g.
--               the ratio of two configs' rates, binned:
--                 descriptor = function(r)
--                   local x = r.configs[2].gflops / r.configs[1].gflops
--                   return { math.max(1, math.min(4, math.floor(x * 2) + 1)) }
--                 end, bins = { 4 }
--
-- The seed is evaluated first, then `initial` samples spread over the valid
-- knob space (space.spread; stream "map_elites/initial").  Then, `batch`
-- children at a time: each parent is the better elite of `tournament`
-- occupied cells drawn uniformly (2 by default: a mild pull toward good
-- cells; 1 is classic MAP-Elites' uniform choice, which measured no better
-- than random sampling on bench/gemm_space.lua at 50 evaluations);
-- with probability `crossover_rate` two different elites are crossed, else
-- one is varied by an operator drawn from the `operators` weights.  Each
-- verified record enters its cell when it scores higher than the elite there
-- (ties keep the elite).  The run stops after `iterations` batches, when the
-- budget is spent (avo.exhausted) or when a batch finds no new child.
--
-- Children of a batch are made by concurrent tasks from the map as it stood
-- when the batch began, so operators that call an LLM have their requests in
-- flight together.  Every random choice for a child comes from streams named
-- by batch, slot and attempt ("select/b3.c2.a1" for parents, "map_elites/..."
-- for the crossover draw and operator choice, "op.<name>/..." inside each
-- operator), so a run seed fixes every decision however answers interleave.
-- Operators that keep state between calls (`concurrent = false`) are called
-- in slot order.
--
-- After the initial samples (batch 0) and after each batch the strategy logs
-- coverage (occupied cells / cells) and QD-score (sum of the elites' scores)
-- and records an event "map_elites" with the whole map:
--   { batch, occupied, cells, coverage, qd_score, best, best_score, bins,
--     dims (when given), unplaced (verified records outside the map),
--     elites = { { cell = { i1, i2 }, id, score, values (knob values, with
--     dims) }, ... } in cell order }
--
-- Options:
--   evaluator         spec for avo.evaluator (required)
--   dims              array of knob names (default { "TILE", "ORDER" })
--   descriptor, bins  see above; instead of dims
--   initial           integer >= 0, space-filling samples after the seed
--                     (default 16)
--   batch             integer >= 1, children per batch (default 8)
--   tournament        integer >= 1, occupied cells drawn per parent, the
--                     best elite of them taken (default 2)
--   iterations        integer >= 0, batches after the initial samples
--                     (default 20)
--   crossover_rate    number in [0, 1] (default 0.2)
--   operators         map operator name -> weight >= 0 for mutation
--                     (default { param_tweak = 1 })
--   crossover         name of the crossover operator (default "crossover")
--   operator_options  map operator name -> that operator's options table
--
-- Returns the best record of the run, like the other strategies.

local avo = require "avo"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"
local index_of = require("operators.lib.knobs").index_of
local ga_core = require "strategies.lib.ga_core"
local space = require "strategies.lib.space"

local M = {}

local KNOWN_OPTIONS = {
  evaluator = true, dims = true, descriptor = true, bins = true, initial = true,
  batch = true, iterations = true, crossover_rate = true, operators = true, tournament = true,
  crossover = true, operator_options = true,
}

---------------------------------------------------------------------------
-- Options

local is_integer_at_least, is_probability = options.is_integer_at_least, options.is_probability

local function bad(name, expected, got) return options.bad("map_elites", name, expected, got) end

-- A Lua sequence of `n >= 1` entries and nothing else.
local function is_array(t)
  if type(t) ~= "table" or #t == 0 then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

-- A value for a message: arrays as { a, b }, other tables as { k = v }.
local function show(t)
  if type(t) ~= "table" then return tostring(t) end
  local parts = {}
  if is_array(t) then
    for i, v in ipairs(t) do parts[i] = tostring(v) end
  else
    for k, v in pairs(t) do parts[#parts + 1] = tostring(k) .. " = " .. tostring(v) end
    table.sort(parts)
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- Checks dims, or descriptor with bins; fills cfg.dims or cfg.descriptor
-- and cfg.bins (bins of dims come later, from the kernel's domain).
local function read_map(cfg, opts)
  if opts.descriptor ~= nil then
    if type(opts.descriptor) ~= "function" then
      return bad("descriptor", "a function(record) -> { i1, i2, ... }", opts.descriptor)
    end
    if opts.dims ~= nil then
      return bad("dims", "absent when 'descriptor' is given", show(opts.dims))
    end
    if not is_array(opts.bins) then
      return bad("bins", "an array of integers >= 1 (cells per descriptor dimension)",
        show(opts.bins))
    end
    for _, n in ipairs(opts.bins) do
      if not is_integer_at_least(n, 1) then
        return bad("bins", "an array of integers >= 1", show(opts.bins))
      end
    end
    cfg.descriptor, cfg.bins = opts.descriptor, table.move(opts.bins, 1, #opts.bins, 1, {})
    return true
  end
  if opts.bins ~= nil then
    return bad("bins", "absent without 'descriptor' (dims are binned by their knob values)",
      show(opts.bins))
  end
  local dims = opts.dims or { "TILE", "ORDER" }
  if not is_array(dims) then return bad("dims", "an array of knob names", show(dims)) end
  local seen = {}
  for _, name in ipairs(dims) do
    if type(name) ~= "string" or seen[name] then
      return bad("dims", "an array of distinct knob names", show(dims))
    end
    seen[name] = true
  end
  cfg.dims = table.move(dims, 1, #dims, 1, {})
  return true
end

-- Returns the options with defaults filled in, or nil and a message naming
-- the bad option.
local function read_options(opts)
  local ok, err = options.check_common("map_elites", opts, KNOWN_OPTIONS)
  if not ok then return nil, err end
  local cfg = {
    evaluator = opts.evaluator,
    initial = opts.initial or 16,
    tournament = opts.tournament or 2,
    batch = opts.batch or 8,
    iterations = opts.iterations or 20,
    crossover_rate = opts.crossover_rate or 0.2,
  }
  ok, err = read_map(cfg, opts)
  if not ok then return nil, err end
  if not is_integer_at_least(cfg.initial, 0) then
    return bad("initial", "an integer >= 0", cfg.initial)
  end
  if not is_integer_at_least(cfg.batch, 1) then
    return bad("batch", "an integer >= 1", cfg.batch)
  end
  if not is_integer_at_least(cfg.tournament, 1) then
    return bad("tournament", "an integer >= 1", cfg.tournament)
  end
  if not is_integer_at_least(cfg.iterations, 0) then
    return bad("iterations", "an integer >= 0", cfg.iterations)
  end
  if not is_probability(cfg.crossover_rate) then
    return bad("crossover_rate", "a number in [0, 1]", cfg.crossover_rate)
  end
  return ga_core.read_variation("map_elites", opts, cfg)
end

---------------------------------------------------------------------------
-- Behaviour descriptors

-- The descriptor of dims over the seed kernel's knob list, and the bins
-- (domain sizes); nil and a message naming 'dims' when a name is not a knob.
local function dims_descriptor(dims, domain)
  local by_name, names = {}, {}
  for _, knob in ipairs(domain) do
    by_name[knob.name] = knob
    names[#names + 1] = knob.name
  end
  local knobs, bins = {}, {}
  for d, name in ipairs(dims) do
    local knob = by_name[name]
    if knob == nil then
      return bad("dims", ("knob names of the seed kernel (%s)"):format(
        #names > 0 and table.concat(names, ", ") or "it declares none"), name)
    end
    knobs[d], bins[d] = knob, #knob.values
  end
  local function describe(record)
    local cell, set = {}, record.knobs or {}
    for d, knob in ipairs(knobs) do
      local v = set[knob.name]
      local i = v == nil and 1 or index_of(knob.values, v)
      if i == nil then return nil end
      cell[d] = i
    end
    return cell
  end
  -- The knob values of a cell, for the map_elites event.
  local function values(cell)
    local v = {}
    for d, knob in ipairs(knobs) do v[d] = knob.values[cell[d]] end
    return v
  end
  return describe, bins, values
end

-- A user descriptor checked on every call: nil, or one index per dimension
-- within its bins.
local function checked_descriptor(fn, bins)
  return function(record)
    local cell = fn(record)
    if cell == nil then return nil end
    local fine = is_array(cell) and #cell == #bins
    if fine then
      for d, i in ipairs(cell) do
        if not is_integer_at_least(i, 1) or i > bins[d] then fine = false end
      end
    end
    if not fine then
      error(options.message("map_elites", "descriptor",
        ("nil or %d integer(s) within bins { %s } (record #%s)"):format(
          #bins, table.concat(bins, ", "), tostring(record.id)), show(cell)), 0)
    end
    return cell
  end
end

local function cell_key(cell) return table.concat(cell, ",") end

-- Cell order: first dimension first, by index.
local function cell_before(a, b)
  for d = 1, #a do
    if a[d] ~= b[d] then return a[d] < b[d] end
  end
  return false
end

---------------------------------------------------------------------------
-- The map

-- Puts a verified record into its cell when it beats the elite there (ties
-- keep the elite).  Returns true when the map changed.
local function place(state, rec)
  if rec.status ~= "ok" then return false end
  local cell = state.describe(rec)
  if cell == nil then
    state.unplaced = state.unplaced + 1
    return false
  end
  local key = cell_key(cell)
  local elite = state.map[key]
  if elite and (rec.score or 0) <= (elite.record.score or 0) then return false end
  if elite == nil then state.occupied = state.occupied + 1 end
  state.map[key] = { cell = cell, record = rec }
  return true
end

-- The elites in cell order (a snapshot: placing records later does not
-- change it).
local function elites_of(state)
  local list = {}
  for _, e in pairs(state.map) do list[#list + 1] = e end
  table.sort(list, function(a, b) return cell_before(a.cell, b.cell) end)
  return list
end

-- Logs coverage and QD-score and records the map as a "map_elites" event.
local function report(state, batch)
  local elites = elites_of(state)
  local qd_score, listed = 0, {}
  for i, e in ipairs(elites) do
    qd_score = qd_score + (e.record.score or 0)
    listed[i] = { cell = e.cell, id = e.record.id, score = e.record.score,
                  values = state.values and state.values(e.cell) or nil }
  end
  local best = state.best
  avo.log("map_elites: batch %d: coverage %d/%d cells, QD-score %.6g, best #%s (%.6g)",
    batch, #elites, state.cells, qd_score, tostring(best and best.id), best and best.score or 0)
  avo.event("map_elites", {
    batch = batch, occupied = #elites, cells = state.cells, coverage = #elites / state.cells,
    qd_score = qd_score, best = best and best.id, best_score = best and best.score,
    dims = state.cfg.dims, bins = state.bins, unplaced = state.unplaced, elites = listed,
  })
  avo.progress{ generation = batch }
end

---------------------------------------------------------------------------
-- Operators

-- One child of elites drawn uniformly from the occupied cells, or nil.
local function make_child(state, streams, elites, batch)
  local i = streams.select:int(1, #elites)
  for _ = 2, state.cfg.tournament do -- the better of `tournament` cells drawn
    local c = streams.select:int(1, #elites)
    if records.better(elites[c].record, elites[i].record) then i = c end
  end
  local first = elites[i].record
  if #elites >= 2 and streams.rng:chance(state.cfg.crossover_rate) then
    local j = streams.select:int(1, #elites - 1)
    if j >= i then j = j + 1 end
    local crossed = state.ops.apply(state.cfg.crossover, { first, elites[j].record }, batch, streams)
    if crossed then return crossed end
  end
  return ga_core.mutate(state, streams, first, batch)
end

-- Up to `n` candidates not evaluated before in this run, made concurrently
-- (strategies/lib/ga_core.lua), with streams named by batch, slot, attempt.
local function breed(state, elites, batch, n)
  return ga_core.breed_with(state, n, state.seen,
    function(slot, attempt) return ("b%d.c%d.a%d"):format(batch, slot, attempt) end,
    function(streams) return make_child(state, streams, elites, batch) end)
end

-- Evaluates candidates and places the records, in candidate order; skipped
-- records (budget spent) are dropped.  Returns the records evaluated.
local function evaluate(state, candidates)
  local kept = {}
  if #candidates == 0 then return kept end
  for _, r in ipairs(avo.evaluate_all(state.ev, candidates)) do
    if r.status ~= "skipped" then
      kept[#kept + 1] = r
      state.seen[records.candidate_key(r)] = true
      if state.best == nil or records.better(r, state.best) then state.best = r end
      place(state, r)
    end
  end
  return kept
end

-- Up to `n` candidates spread over the configurations the evaluator's
-- restrictions allow (space.spread: each the farthest of several uniform
-- draws from the seed and the ones before), none evaluated before.
local function random_samples(state, seed, n)
  local rng = avo.rng("map_elites/initial")
  local domain = avo.knobs(seed.source)
  local function new(k) return not state.seen[records.candidate_key{ source = seed.source, knobs = k }] end
  local candidates = {}
  for _, knobs in ipairs(space.spread(rng, domain, state.ev, n, new,
                                      { space.full(domain, seed.knobs) })) do
    state.seen[records.candidate_key{ source = seed.source, knobs = knobs }] = true
    candidates[#candidates + 1] = {
      source = seed.source, knobs = knobs, operator = "random",
      parents = { { id = seed.id, role = "parent" } }, note = "space-filling sample", generation = 0,
    }
  end
  return candidates
end

---------------------------------------------------------------------------
-- Run

---@param opts avo.StrategyOptions
---@return avo.Record? # the best record
function M.run(opts)
  local cfg, err = read_options(opts)
  if not cfg then error(err, 2) end

  local ev = avo.evaluator(cfg.evaluator)
  local state = ga_core.new_state(cfg, ev)
  state.streams = "map_elites" -- rates and operator choice: "map_elites/b1.c2.a1"
  state.map, state.occupied, state.unplaced, state.seen = {}, 0, 0, {}
  if cfg.dims then
    local describe, bins, values = dims_descriptor(cfg.dims, ev.knobs or {})
    if not describe then error(bins, 2) end
    state.describe, state.bins, state.values = describe, bins, values
  else
    state.describe, state.bins = checked_descriptor(cfg.descriptor, cfg.bins), cfg.bins
  end
  state.cells = 1
  for _, n in ipairs(state.bins) do state.cells = state.cells * n end

  local seed = records.evaluate_seed(ev, function(list) return evaluate(state, list) end)
  if seed == nil then return nil end -- budget spent before the seed
  if not avo.exhausted() then
    evaluate(state, random_samples(state, seed, cfg.initial))
  end
  report(state, 0)

  for b = 1, cfg.iterations do
    if state.occupied == 0 or avo.exhausted() then break end
    local candidates = breed(state, elites_of(state), b, cfg.batch)
    if #candidates == 0 then
      avo.log("map_elites: batch %d produced no new children; stopping", b)
      break
    end
    evaluate(state, candidates)
    report(state, b)
  end

  return state.best
end

return M
