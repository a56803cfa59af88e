-- islands: an island-model GA — several GA populations evolving side by
-- side, exchanging their best records now and then.
--
--   return avo.strategy("islands").run{ evaluator = "cpu/sgemm", islands = 4,
--     population = 8, generations = 30, migration_interval = 5, migrants = 2 }
--
-- The seed is evaluated once; each island's initial population is the seed
-- plus children of its own (ga.lua: a spread share space-filling, the rest
-- param_tweak children of the seed).  The space-filling shares of all
-- islands are one sample (stream "islands/initial") dealt out in turn, so
-- the islands start apart from each other, not only from the seed.  Every generation each island runs
-- the GA's generation (strategies/lib/ga_core.lua, as in ga.lua): elites
-- kept, children bred by tournament, crossover and mutation.  The islands
-- breed as concurrent tasks, so their operators' LLM calls are in flight
-- together, and then meet: the children of all islands are evaluated as one
-- batch in island order, so candidate ids, input seeds and which children a
-- spent budget skips do not depend on how the tasks interleave.  Every
-- random stream of island i is tagged "i<i>." ("select/i2.g3.c1.a1",
-- "op.param_tweak/i2.g0.c4"), so a run seed fixes every decision.  Calls of
-- operators that keep state (`concurrent = false`, like the agent) are made
-- in island order, then slot order.
--
-- Migration: after every `migration_interval`-th generation (not after the
-- last one), with more than one island, the best `migrants` records of each
-- island (as they stood before this migration) move to the islands it sends
-- to — `topology = "ring"`: island i sends to island i + 1 and the last to
-- the first; `"all"`: every island sends to every other.  A receiver drops
-- migrants it already holds, takes the best of the rest (at most
-- population - 1) and keeps its own best records around them, so its worst
-- are replaced and it never outgrows `population`.  Migrants are records
-- that move: they are not evaluated again and keep their id, generation,
-- operator and note.  Each migration is an event "migration" {generation,
-- topology, moves = [{to, migrants = [{id, score, from}], replaced = [id],
-- population = [id]}]} and one log line.
--
-- Returns the best record of all islands.
--
-- Options: those of ga.lua (evaluator, population — per island, default 4
-- here, not 8: see POPULATION —, generations, elite, tournament, crossover_rate, mutation_rate, operators,
-- crossover, operator_options), and
--   islands            integer >= 1 (default 4)
--   migration_interval integer >= 1, generations between migrations
--                      (default 5)
--   migrants           integer in [1, population), records each island
--                      sends (default 1)
--   topology           "ring" or "all" (default "ring")

local avo = require "avo"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"
local ga_core = require "strategies.lib.ga_core"

local M = {}

local WHO = "islands"

local better, ranked = records.better, records.ranked

---------------------------------------------------------------------------
-- Options

-- Records per island by default: half of ga's 8.  Four islands of 8 spent
-- 29 of a 50-evaluation budget on generation 0 and reached one generation,
-- below random sampling on bench/gemm_space.lua (docs/benchmarks.md);
-- islands of 4 breed 12 children a generation, about four generations in 50.
local POPULATION = 4

-- The GA's options and the islands' own, with defaults filled in, or nil
-- and a message naming the bad option.
local function read_options(opts)
  local cfg, err = ga_core.read_options(WHO, opts, { population = POPULATION })
  if not cfg then return nil, err end
  cfg.islands = opts.islands or 4
  cfg.migration_interval = opts.migration_interval or 5
  cfg.migrants = opts.migrants or 1
  cfg.topology = opts.topology or "ring"
  if not options.is_integer_at_least(cfg.islands, 1) then
    return options.bad(WHO, "islands", "an integer >= 1", cfg.islands)
  end
  if not options.is_integer_at_least(cfg.migration_interval, 1) then
    return options.bad(WHO, "migration_interval", "an integer >= 1", cfg.migration_interval)
  end
  if not options.is_integer_at_least(cfg.migrants, 1) or cfg.migrants >= cfg.population then
    return options.bad(WHO, "migrants", "an integer in [1, population)", cfg.migrants)
  end
  if cfg.topology ~= "ring" and cfg.topology ~= "all" then
    return options.bad(WHO, "topology", '"ring" or "all"', cfg.topology)
  end
  if cfg.retime_elites ~= 0 then -- ga's option: not offered by islands yet
    return options.bad(WHO, "retime_elites", "0 (only ga re-times its elites)", cfg.retime_elites)
  end
  return cfg
end

---------------------------------------------------------------------------
-- Migration

-- The islands that send to island `i` of `n`, in island order.
---@param i integer
---@param n integer
---@param topology "ring"|"all"
---@return integer[]
function M.sources(i, n, topology)
  local list = {}
  if n < 2 then return list end
  if topology == "ring" then
    list[1] = (i - 2) % n + 1
  else
    for j = 1, n do
      if j ~= i then list[#list + 1] = j end
    end
  end
  return list
end

local function array() return avo.json.array() end

-- Moves records between `populations` (an array of arrays of records) by
-- cfg.migrants, cfg.topology and cfg.population, as the header says.
-- Returns the new populations (survivors in their old order, then migrants
-- best first) and one move per island {to, migrants = [{id, score, from}],
-- replaced = [id], population = [id]}.  The arguments are not modified.
---@param populations avo.Record[][]
---@param cfg { migrants: integer, topology: "ring"|"all", population: integer }
---@return avo.Record[][] populations
---@return table[] moves
function M.migrate(populations, cfg)
  local n = #populations
  local picks = {}
  for i, pop in ipairs(populations) do
    picks[i] = table.move(ranked(pop), 1, math.min(cfg.migrants, #pop), 1, {})
  end
  local result, moves = {}, {}
  for i, pop in ipairs(populations) do
    local held, origin, incoming = {}, {}, {}
    for _, r in ipairs(pop) do held[r.id] = true end
    for _, j in ipairs(M.sources(i, n, cfg.topology)) do
      for _, r in ipairs(picks[j]) do
        if not held[r.id] then
          held[r.id] = true
          origin[r.id] = j
          incoming[#incoming + 1] = r
        end
      end
    end
    incoming = ranked(incoming)
    local n_in = math.min(#incoming, cfg.population - 1)
    local n_keep = math.min(#pop, cfg.population - n_in)
    local keep = {}
    for k, r in ipairs(ranked(pop)) do
      if k <= n_keep then keep[r.id] = true end
    end
    local population, move = {}, { to = i, migrants = array(), replaced = array(),
                                     population = array() }
    for _, r in ipairs(pop) do
      if keep[r.id] then
        population[#population + 1] = r
      else
        move.replaced[#move.replaced + 1] = r.id
      end
    end
    for k = 1, n_in do
      local r = incoming[k]
      population[#population + 1] = r
      move.migrants[#move.migrants + 1] = { id = r.id, score = r.score, from = origin[r.id] }
    end
    for _, r in ipairs(population) do move.population[#move.population + 1] = r.id end
    result[i], moves[i] = population, move
  end
  return result, moves
end

-- Migrates between the islands after generation `g`: event and log line.
local function migrate(islands, cfg, g, unit)
  local populations = {}
  for i, island in ipairs(islands) do populations[i] = island.population end
  local moved, moves = M.migrate(populations, cfg)
  local n_moved, parts = 0, {}
  for i, island in ipairs(islands) do
    island.population = moved[i]
    local ids = {}
    for _, m in ipairs(moves[i].migrants) do ids[#ids + 1] = "#" .. m.id end
    n_moved = n_moved + #ids
    if #ids > 0 then parts[#parts + 1] = ("%d<-%s"):format(i, table.concat(ids, ",")) end
  end
  local best
  for _, island in ipairs(islands) do
    local top = ranked(island.population)[1]
    if top and (best == nil or better(top, best)) then best = top end
  end
  avo.event("migration", { generation = g, topology = cfg.topology, moves = moves })
  avo.log("islands: migration after generation %d (%s): %d records moved%s; best #%s (%.6g %s)",
    g, cfg.topology, n_moved, #parts > 0 and (" (" .. table.concat(parts, " ") .. ")") or "",
    best and best.id or "?", best and best.score or 0, unit or "")
end

---------------------------------------------------------------------------
-- Run

-- Evaluates the candidates of every island as one batch, in island order;
-- returns per island the records that were run.
local function evaluate_batch(ev, islands, candidates)
  local batch, first = {}, {}
  for i = 1, #islands do
    first[i] = #batch + 1
    table.move(candidates[i], 1, #candidates[i], #batch + 1, batch)
  end
  local evaluated = #batch > 0 and avo.evaluate_all(ev, batch) or {}
  local kept = {}
  for i, island in ipairs(islands) do
    local mine = table.move(evaluated, first[i], first[i] + #candidates[i] - 1, 1, {})
    kept[i] = ga_core.keep(island.state, mine)
  end
  return kept
end

-- One space-filling sample for all the islands (stream "islands/initial"):
-- each island's spread share of generation 0, drawn together so that the
-- islands' points are spread from each other's too, not only from the seed.
local function spread_sample(ev, cfg, seed)
  local share = math.ceil((cfg.population - 1) * cfg.spread)
  return ga_core.spread_sample(ev, seed, share * cfg.islands, avo.rng(WHO .. "/initial"))
end

-- `list` dealt out to `n` hands in turn: hand i gets items i, i + n, ...
local function deal(list, n)
  local hands = {}
  for i = 1, n do hands[i] = {} end
  for k, item in ipairs(list) do
    local hand = hands[(k - 1) % n + 1]
    hand[#hand + 1] = item
  end
  return hands
end

---@param opts avo.StrategyOptions
---@return avo.Record? # the best record
function M.run(opts)
  local cfg, err = read_options(opts)
  if not cfg then error(err, 2) end
  local ev = avo.evaluator(cfg.evaluator)

  -- This generation's breeding task of each island; a non-concurrent
  -- operator's call on island i waits for islands 1..i-1 to finish theirs.
  local breeding = {}
  local islands = {}
  for i = 1, cfg.islands do
    local function wait_turn()
      for k = 1, i - 1 do
        if breeding[k] then avo.join(breeding[k]) end
      end
    end
    islands[i] = { state = ga_core.new_state(cfg, ev, ("i%d."):format(i), wait_turn),
                   population = {} }
  end

  -- Generation 0: one seed for all, its children (ga_core.seed_children) per island.
  local seed = records.evaluate_seed(ev)
  if not seed then return nil end
  for _, island in ipairs(islands) do island.population = ga_core.keep(island.state, { seed }) end
  if not avo.exhausted() then
    local shares = deal(spread_sample(ev, cfg, seed), #islands)
    local children = {}
    for i, island in ipairs(islands) do
      children[i] = ga_core.seed_children(island.state, seed, shares[i])
    end
    local kept = evaluate_batch(ev, islands, children)
    for i, island in ipairs(islands) do
      island.population = ga_core.next_population(island.population, kept[i])
    end
  end
  avo.progress{ generation = 0 }

  for g = 1, cfg.generations do
    if avo.exhausted() then break end
    breeding = {}
    for i, island in ipairs(islands) do
      breeding[i] = avo.spawn(ga_core.breed, island.state, island.population, g)
    end
    local elites, candidates, n_children = {}, {}, 0
    for i = 1, #islands do
      elites[i], candidates[i] = avo.join(breeding[i])
      n_children = n_children + #candidates[i]
    end
    breeding = {}
    if n_children == 0 then
      avo.log("islands: generation %d produced no new children on any island; stopping", g)
      break
    end
    local kept = evaluate_batch(ev, islands, candidates)
    for i, island in ipairs(islands) do
      if #candidates[i] == 0 then
        avo.log("islands: island %d made no new children in generation %d; it waits for migrants",
          i, g)
      else
        island.population = ga_core.next_population(elites[i], kept[i])
      end
    end
    avo.progress{ generation = g }
    if #islands > 1 and g % cfg.migration_interval == 0 and g < cfg.generations
        and not avo.exhausted() then
      migrate(islands, cfg, g, ev.unit)
    end
  end

  local best
  for _, island in ipairs(islands) do
    local b = island.state.best
    if b and (best == nil or better(b, best)) then best = b end
  end
  return best
end

return M
