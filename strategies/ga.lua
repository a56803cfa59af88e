-- ga: a generational genetic algorithm.
--
--   return avo.strategy("ga").run{ evaluator = "cpu/sgemm", generations = 30 }
--
-- The seed is evaluated first; the initial population is the seed plus
-- param_tweak children of it. Each generation keeps the `elite` best records
-- and fills the rest with children: two tournament winners are crossed with
-- probability `crossover_rate`, and the child (or, without crossover, the
-- first winner) is varied by an operator drawn from the `operators` weights.
-- Failed records score 0 and so lose tournaments without special cases.
--
-- The children of a generation are made by concurrent tasks, so operators
-- that call an LLM have their requests in flight together.  Every random
-- choice for a child comes from streams named by generation, slot and
-- attempt ("select/g3.c2.a1" for tournaments, "ga/..." for rates and
-- operator choice, "op.<name>/..." inside each operator), so a run seed
-- fixes every decision however the answers interleave.  Operators that keep
-- state between calls (`concurrent = false`, like the agent) are called in
-- slot order.
--
-- Options:
--   evaluator         spec for avo.evaluator (required)
--   population        integer >= 2 (default 8)
--   generations       integer >= 0 (default 20)
--   elite             integer in [0, population) (default 1)
--   tournament        integer >= 1, tournament size (default 3)
--   crossover_rate    number in [0, 1] (default 0.3)
--   mutation_rate     number in [0, 1], chance that a crossover child is
--                     also mutated (default 1.0)
--   operators         map operator name -> weight >= 0 for mutation
--                     (default { param_tweak = 1 })
--   crossover         name of the crossover operator (default "crossover")
--   operator_options  map operator name -> that operator's options table

local avo = require "avo"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"

local M = {}

-- Attempts to find a child unlike any other in its generation before the
-- slot is left empty; small knob spaces run out of new children.
local MAX_ATTEMPTS = 10

local FALLBACK_OPERATOR = "param_tweak"

---------------------------------------------------------------------------
-- Options

local is_integer_at_least, is_probability = options.is_integer_at_least, options.is_probability

local function bad(name, expected, got) return options.bad("ga", name, expected, got) end

-- Returns the operator weights without zero entries, or nil and a message.
local function read_weights(weights)
  if type(weights) ~= "table" then
    return bad("operators", "a table of operator name -> weight", weights)
  end
  local positive = {}
  for name, w in pairs(weights) do
    if type(name) ~= "string" or type(w) ~= "number" or w < 0 then
      return bad("operators", "a table of operator name -> weight >= 0",
        tostring(name) .. " = " .. tostring(w))
    end
    if w > 0 then positive[name] = w end
  end
  if next(positive) == nil then
    return bad("operators", "a table with at least one positive weight", "none")
  end
  return positive
end

-- Returns the options with defaults filled in, or nil and a message naming
-- the bad option.
local function read_options(opts)
  local ok, err = options.check_common("ga", opts)
  if not ok then return nil, err end
  local cfg = {
    evaluator = opts.evaluator,
    population = opts.population or 8,
    generations = opts.generations or 20,
    elite = opts.elite or 1,
    tournament = opts.tournament or 3,
    crossover_rate = opts.crossover_rate or 0.3,
    mutation_rate = opts.mutation_rate or 1.0,
    crossover = opts.crossover or "crossover",
    operator_options = opts.operator_options or {},
  }
  if not is_integer_at_least(cfg.population, 2) then
    return bad("population", "an integer >= 2", cfg.population)
  end
  if not is_integer_at_least(cfg.generations, 0) then
    return bad("generations", "an integer >= 0", cfg.generations)
  end
  if not is_integer_at_least(cfg.elite, 0) or cfg.elite >= cfg.population then
    return bad("elite", "an integer in [0, population)", cfg.elite)
  end
  if not is_integer_at_least(cfg.tournament, 1) then
    return bad("tournament", "an integer >= 1", cfg.tournament)
  end
  if not is_probability(cfg.crossover_rate) then
    return bad("crossover_rate", "a number in [0, 1]", cfg.crossover_rate)
  end
  if not is_probability(cfg.mutation_rate) then
    return bad("mutation_rate", "a number in [0, 1]", cfg.mutation_rate)
  end
  if type(cfg.crossover) ~= "string" then
    return bad("crossover", "an operator name", cfg.crossover)
  end
  if type(cfg.operator_options) ~= "table" then
    return bad("operator_options", "a table of operator name -> options", cfg.operator_options)
  end
  local weights, err = read_weights(opts.operators or { param_tweak = 1 })
  if not weights then return nil, err end
  cfg.operators = weights
  return cfg
end

---------------------------------------------------------------------------
-- Records

-- Ranking used everywhere: higher score first, ties to the lower id.
local better, ranked, candidate_key = records.better, records.ranked, records.candidate_key

---------------------------------------------------------------------------
-- Operators

-- Loads operators once.  Every call gets the random stream of the child it
-- works for (see child_streams), so what an operator draws never depends on
-- what other children's operators drew before it.
local function new_operators(ev, cfg)
  local loaded = {}
  local ops = {}

  local function entry_of(name)
    local entry = loaded[name]
    if not entry then
      entry = { module = avo.operator(name), options = cfg.operator_options[name] or {} }
      loaded[name] = entry
    end
    return entry
  end

  -- Operators that keep state across calls (the agent's conversation)
  -- declare `concurrent = false`; their calls are made in child order.
  function ops.concurrent(name) return entry_of(name).module.concurrent ~= false end

  function ops.apply(name, parents, generation, streams)
    local entry = entry_of(name)
    if entry.module.concurrent == false and streams.wait_turn then streams.wait_turn() end
    local ctx = { ev = ev, rng = avo.rng("op." .. name .. "/" .. streams.tag),
                  generation = generation, options = entry.options }
    return entry.module.apply(ctx, parents)
  end

  return ops
end

-- A child built by two operators in a row keeps the first one's parents
-- (the second worked on an unevaluated candidate, which has no id).
local function chain(first, second)
  second.parents = first.parents
  second.operator = first.operator .. "+" .. second.operator
  second.note = (first.note or "") .. "; then " .. (second.note or "")
  return second
end

---------------------------------------------------------------------------
-- One generation

-- The random streams of one attempt at one child: selection, rates and
-- operator choice, and (in ops.apply) each operator's draws.  They are named
-- by generation, slot and attempt, so children can be made concurrently (LLM
-- calls in flight together) and a seed still fixes every decision.
local function child_streams(generation, slot, attempt)
  local tag = ("g%d.c%d.a%d"):format(generation, slot, attempt)
  return { tag = tag, select = avo.rng("select/" .. tag), rng = avo.rng("ga/" .. tag) }
end

-- Tournament selection: `size` draws with replacement, best one wins. A
-- record with id `exclude` is left out unless it is the only one.
local function tournament(rng, population, size, exclude)
  local pool = population
  if exclude ~= nil then
    pool = {}
    for _, r in ipairs(population) do
      if r.id ~= exclude then pool[#pool + 1] = r end
    end
    if #pool == 0 then pool = population end
  end
  local winner
  for _ = 1, size do
    local r = pool[rng:int(1, #pool)]
    if winner == nil or better(r, winner) then winner = r end
  end
  return winner
end

-- Varies `parent` (a record, or a crossover child not yet evaluated) with an
-- operator drawn by weight. An operator that cannot produce a child is left
-- out and another drawn; param_tweak is the last resort.
local function mutate(state, streams, parent, generation)
  local remaining = {}
  for name, w in pairs(state.cfg.operators) do remaining[name] = w end
  while next(remaining) ~= nil do
    local name = streams.rng:weighted(remaining)
    local child = state.ops.apply(name, { parent }, generation, streams)
    if child then return child end
    remaining[name] = nil
  end
  if state.cfg.operators[FALLBACK_OPERATOR] == nil then
    return state.ops.apply(FALLBACK_OPERATOR, { parent }, generation, streams)
  end
  return nil
end

-- One child from the population, or nil when no operator could make one.
local function make_child(state, streams, population, generation)
  local cfg = state.cfg
  local first = tournament(streams.select, population, cfg.tournament)
  local crossed
  if #population >= 2 and streams.rng:chance(cfg.crossover_rate) then
    local second = tournament(streams.select, population, cfg.tournament, first.id)
    crossed = state.ops.apply(cfg.crossover, { first, second }, generation, streams)
  end
  -- Without crossover the child would be a clone of its parent, which the
  -- archive already holds, so it is always mutated.
  if crossed == nil then return mutate(state, streams, first, generation) end
  if not streams.rng:chance(cfg.mutation_rate) then return crossed end
  local mutated = mutate(state, streams, crossed, generation)
  return mutated and chain(crossed, mutated) or crossed
end

-- Up to `n` new candidates, none equal to another or to a member of
-- `population`.  The children of a round are made by concurrent tasks, so
-- their LLM calls are in flight together; they are accepted in slot order,
-- and a slot whose child is a duplicate (or none) tries again next round
-- with fresh streams.
local function breed(state, population, generation, n)
  local seen = {}
  for _, r in ipairs(population) do seen[candidate_key(r)] = true end
  local made, pending = {}, {}
  for slot = 1, n do pending[slot] = slot end
  for attempt = 1, MAX_ATTEMPTS do
    if #pending == 0 then break end
    local tasks = {}
    for i, slot in ipairs(pending) do
      local streams = child_streams(generation, slot, attempt)
      -- A non-concurrent operator waits for every earlier child of this
      -- round, which makes its calls in slot order, run after run.
      streams.wait_turn = function()
        for j = 1, i - 1 do avo.join(tasks[j]) end
      end
      tasks[i] = avo.spawn(make_child, state, streams, population, generation)
    end
    local retry = {}
    for i, slot in ipairs(pending) do
      local child = avo.join(tasks[i])
      local key = child and candidate_key(child)
      if key and not seen[key] then
        seen[key] = true
        made[slot] = child
      else
        retry[#retry + 1] = slot
      end
    end
    pending = retry
  end
  local children = {}
  for slot = 1, n do
    if made[slot] then children[#children + 1] = made[slot] end
  end
  return children
end

-- Evaluates candidates; returns the records that were run (skipped ones are
-- dropped) and keeps track of the best record seen.
local function evaluate(state, candidates)
  local kept = {}
  if #candidates == 0 then return kept end
  for _, r in ipairs(avo.evaluate_all(state.ev, candidates)) do
    if r.status ~= "skipped" then
      kept[#kept + 1] = r
      if state.best == nil or better(r, state.best) then state.best = r end
    end
  end
  return kept
end

-- Elites followed by children, each record once (the archive may answer a
-- child with an earlier record that is already an elite).
local function next_population(elites, children)
  local population, ids = {}, {}
  for _, list in ipairs({ elites, children }) do
    for _, r in ipairs(list) do
      if not ids[r.id] then
        ids[r.id] = true
        population[#population + 1] = r
      end
    end
  end
  return population
end

---------------------------------------------------------------------------
-- Run

-- A param_tweak child of `parent` not in `seen`, or nil when MAX_ATTEMPTS
-- draws found none or the parent has no knobs.
local function fresh_tweak(state, parent, seen)
  for _ = 1, MAX_ATTEMPTS do
    state.tweaks = state.tweaks + 1
    local child = state.ops.apply(FALLBACK_OPERATOR, { parent }, 0,
      { tag = ("g0.c%d"):format(state.tweaks) })
    if child == nil then return nil end
    local key = candidate_key(child)
    if not seen[key] then
      seen[key] = true
      return child
    end
  end
  return nil
end

-- Seed plus param_tweak children of it, generation 0.
local function initial_population(state)
  local seed_candidate = state.ev:seed()
  seed_candidate.generation = seed_candidate.generation or 0
  local population = evaluate(state, { seed_candidate })
  if #population == 0 or avo.exhausted() then return population end

  local seed = population[1]
  local seen = { [candidate_key(seed)] = true }
  local children = {}
  for _ = 2, state.cfg.population do
    local child = fresh_tweak(state, seed, seen)
    if child == nil then break end
    children[#children + 1] = child
  end
  return next_population(population, evaluate(state, children))
end

function M.run(opts)
  local cfg, err = read_options(opts)
  if not cfg then error(err, 2) end

  local ev = avo.evaluator(cfg.evaluator)
  local state = {
    cfg = cfg,
    ev = ev,
    ops = new_operators(ev, cfg),
    tweaks = 0, -- param_tweak children of the seed made so far
    best = nil,
  }

  local population = initial_population(state)
  avo.progress{ generation = 0 }

  for g = 1, cfg.generations do
    if #population == 0 or avo.exhausted() then break end
    local n_elites = math.min(cfg.elite, #population)
    local elites = table.move(ranked(population), 1, n_elites, 1, {})
    local candidates = breed(state, population, g, cfg.population - #elites)
    if #candidates == 0 then
      avo.log("ga: generation %d produced no new children; stopping", g)
      break
    end
    population = next_population(elites, evaluate(state, candidates))
    avo.progress{ generation = g }
  end

  return state.best
end

return M
