-- The generational GA's parts, shared by strategies/ga.lua (one population)
-- and strategies/islands.lua (several).  ga.lua's header describes the
-- algorithm and its options.
--
--   local ga_core = require "strategies.lib.ga_core"
--   local cfg = assert(ga_core.read_options("ga", opts))
--   local state = ga_core.new_state(cfg, avo.evaluator(cfg.evaluator))
--   local population = ga_core.initial_population(state)
--   population = ga_core.step(state, population, 1)
--
-- A state holds one population's options, evaluator, operators, best record
-- and random-stream prefix.  Every stream a state draws from is named by
-- `prefix`, generation, slot and attempt ("select/<prefix>g3.c2.a1"), so
-- states with different prefixes draw independently and a run seed fixes
-- every decision however tasks interleave.  ga.lua uses the empty prefix.

local avo = require "avo"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"
local novelty = require "strategies.lib.novelty"
local space = require "strategies.lib.space"
local median = require("avo.retime").median

local M = {}

-- Attempts to find a child unlike any other in its generation before the
-- slot is left empty; small knob spaces run out of new children.
local MAX_ATTEMPTS = 10

-- The same where the evaluator's restrictions rule out most mutations of a
-- valid configuration (divisibility of tiles by thread counts: 4 in 5 of
-- param_tweak's children in bench/gemm_space.lua).
local RESTRICTED_ATTEMPTS = 100

local function attempts(state)
  return space.restricted(state.ev) and RESTRICTED_ATTEMPTS or MAX_ATTEMPTS
end

local FALLBACK_OPERATOR = "param_tweak"

---------------------------------------------------------------------------
-- Options

local is_integer_at_least, is_probability = options.is_integer_at_least, options.is_probability

-- Returns the operator weights without zero entries, or nil and a message.
function M.read_weights(who, weights)
  if type(weights) ~= "table" then
    return options.bad(who, "operators", "a table of operator name -> weight", weights)
  end
  local positive = {}
  for name, w in pairs(weights) do
    if type(name) ~= "string" or type(w) ~= "number" or w < 0 then
      return options.bad(who, "operators", "a table of operator name -> weight >= 0",
        tostring(name) .. " = " .. tostring(w))
    end
    if w > 0 then positive[name] = w end
  end
  if next(positive) == nil then
    return options.bad(who, "operators", "a table with at least one positive weight", "none")
  end
  return positive
end

-- The last generation to make: `generations` when the script gave it; else,
-- when the run has an evaluation budget (--max-evals), as many as that
-- budget allows (the loop stops at avo.exhausted()), so `--max-evals 300`
-- means 300 evaluations; else the default 20.
function M.last_generation(cfg)
  if cfg.generations_given then return cfg.generations end
  if avo.budget().max_evaluations then return math.maxinteger end
  return cfg.generations
end

-- The GA options of `opts` with defaults filled in, or nil and a message
-- naming the bad option ("<who>: option 'elite' must be ...").
-- `defaults` (optional) overrides the GA's: { population = 4 } for islands.
function M.read_options(who, opts, defaults)
  local ok, err = options.check_common(who, opts)
  if not ok then return nil, err end
  local function bad(name, expected, got) return options.bad(who, name, expected, got) end
  local cfg = {
    evaluator = opts.evaluator,
    population = opts.population or (defaults or {}).population or 8,
    generations = opts.generations or 20,
    -- Without `generations`, a run given --max-evals runs until that budget
    -- is spent (M.last_generation), not 20 generations short of it.
    generations_given = opts.generations ~= nil,
    elite = opts.elite or 1,
    tournament = opts.tournament or 3,
    crossover_rate = opts.crossover_rate or 0.3,
    mutation_rate = opts.mutation_rate or 1.0,
    spread = opts.spread or 0.5,
    assemble = opts.assemble or false,
    retime_elites = opts.retime_elites or 0,
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
  if not is_probability(cfg.spread) then
    return bad("spread", "a number in [0, 1]", cfg.spread)
  end
  if type(cfg.assemble) ~= "boolean" then
    return bad("assemble", "a boolean", cfg.assemble)
  end
  if not is_integer_at_least(cfg.retime_elites, 0) then
    return bad("retime_elites", "an integer >= 0", cfg.retime_elites)
  end
  local nov, nerr = novelty.read(opts.novelty)
  if nov == nil then return bad("novelty", nerr, opts.novelty) end
  cfg.novelty = nov
  local bandit = opts.bandit
  if bandit == true then bandit = {} end
  if bandit ~= nil and bandit ~= false then
    if type(bandit) ~= "table" then return bad("bandit", "true or a table {floor =}", bandit) end
    local floor = bandit.floor or 0.05
    if type(floor) ~= "number" or floor < 0 or floor > 1 then
      return bad("bandit", "a table whose floor is a number in [0, 1]", floor)
    end
    cfg.bandit = { floor = floor }
  end
  return M.read_variation(who, opts, cfg)
end

-- The variation options every breeding strategy shares, checked into cfg:
-- crossover (operator name), operator_options, operators (weights, default
-- { param_tweak = 1 }).  Returns cfg, or nil and a message naming the option.
function M.read_variation(who, opts, cfg)
  cfg.crossover = opts.crossover or "crossover"
  cfg.operator_options = opts.operator_options or {}
  if type(cfg.crossover) ~= "string" then
    return options.bad(who, "crossover", "an operator name", cfg.crossover)
  end
  if type(cfg.operator_options) ~= "table" then
    return options.bad(who, "operator_options", "a table of operator name -> options",
      cfg.operator_options)
  end
  local weights, err = M.read_weights(who, opts.operators or { param_tweak = 1 })
  if not weights then return nil, err end
  cfg.operators = weights
  return cfg
end

---------------------------------------------------------------------------
-- Records

-- Ranking used everywhere: higher score first, ties to the lower id.
local ONCE = { keep = false } -- avo.rng option: a stream the run does not keep
local better, ranked, candidate_key = records.better, records.ranked, records.candidate_key

---------------------------------------------------------------------------
-- Operators

-- Loads operators once.  Every call gets the random stream of the child it
-- works for (see child_streams), so what an operator draws never depends on
-- what other children's operators drew before it.
function M.new_operators(ev, cfg)
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
    -- One stream per operator and attempt, not kept by the run (its name is
    -- used by this attempt only); kept here so that a chain of the same
    -- operator twice draws on, as before.
    streams.ops = streams.ops or {}
    streams.ops[name] = streams.ops[name] or avo.rng("op." .. name .. "/" .. streams.tag, ONCE)
    local ctx = { ev = ev, rng = streams.ops[name],
                  generation = generation, options = entry.options }
    local child, why = entry.module.apply(ctx, parents)
    avo.outcome(entry.module, child, why)
    return child, why
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
-- State

-- A fresh state for one population.  `prefix` (default "") starts the tag
-- of every random stream the state draws from; `wait_turn` (optional) is
-- called before the state's first call of a non-concurrent operator in a
-- generation, so a caller running several states at once can order those
-- calls across states too.
function M.new_state(cfg, ev, prefix, wait_turn)
  return {
    cfg = cfg,
    ev = ev,
    ops = M.new_operators(ev, cfg),
    streams = "ga", -- name of the stream for rates and operator choice
    prefix = prefix or "",
    wait_turn = wait_turn,
    tweaks = 0, -- param_tweak children of the seed made so far
    best = nil,
    -- near-duplicate filter (cfg.novelty), operator bandit (cfg.bandit)
    novelty = cfg.novelty and novelty.new(cfg.novelty) or nil,
    bandit = cfg.bandit and { stats = {} } or nil,
    weights = nil, -- the bandit's operator weights, once it has learned
    -- cfg.retime_elites: the measurements of re-timed records by id
    measured = { lists = {}, count = 0 },
  }
end

---------------------------------------------------------------------------
-- One generation

-- The random streams of one attempt at one child: selection, rates and
-- operator choice, and (in ops.apply) each operator's draws.  They are named
-- by generation, slot and attempt, so children can be made concurrently (LLM
-- calls in flight together) and a seed still fixes every decision.
-- Their names are used by this attempt only, so the run does not keep them
-- (ONCE): a long run's table of streams stays small.
local function child_streams(state, tag)
  return { tag = tag, select = avo.rng("select/" .. tag, ONCE),
           rng = avo.rng(state.streams .. "/" .. tag, ONCE) }
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
function M.mutate(state, streams, parent, generation)
  local remaining = {}
  for name, w in pairs(state.weights or state.cfg.operators) do remaining[name] = w end
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
  if crossed == nil then return M.mutate(state, streams, first, generation) end
  if not streams.rng:chance(cfg.mutation_rate) then return crossed end
  local mutated = M.mutate(state, streams, crossed, generation)
  return mutated and chain(crossed, mutated) or crossed
end

-- Up to `n` new candidates, none of them in `seen` (keys of
-- records.candidate_key, updated here) or outside the evaluator's
-- restrictions.  `make(streams)` makes one child in
-- its own task, so the children of a round are made concurrently and their
-- LLM calls are in flight together; `tag_of(slot, attempt)` names the random
-- streams of each try.  Children are accepted in slot order, and a slot
-- whose child is a duplicate (or none) tries again with fresh streams, so a
-- seed fixes the result however the answers interleave.
function M.breed_with(state, n, seen, tag_of, make)
  local made, pending = {}, {}
  for slot = 1, n do pending[slot] = slot end
  for attempt = 1, attempts(state) do
    if #pending == 0 then break end
    local tasks = {}
    for i, slot in ipairs(pending) do
      local streams = child_streams(state, tag_of(slot, attempt))
      -- A non-concurrent operator waits for every earlier child of this
      -- round, which makes its calls in slot order, run after run.
      streams.wait_turn = function()
        if state.wait_turn then state.wait_turn() end
        for j = 1, i - 1 do avo.join(tasks[j]) end
      end
      tasks[i] = avo.spawn(make, streams)
    end
    local retry = {}
    for i, slot in ipairs(pending) do
      local child = avo.join(tasks[i])
      local key = child and candidate_key(child)
      -- Outside the evaluator's restrictions: the slot tries again rather
      -- than spend an evaluation on a configuration that cannot run.
      if key and not space.allows(state.ev, child.knobs) then key = nil end
      local near = key and not seen[key] and state.novelty and state.novelty:check(child)
      if near then
        -- Rejected before evaluation: the slot tries again.
        avo.event("novelty_rejected", { operator = child.operator, reason = near,
          parents = child.parents })
        avo.log("%s: rejected before evaluation: %s", child.operator or "?", near)
        key = nil
      end
      if key and not seen[key] then
        seen[key] = true
        made[slot] = child
        if state.novelty then state.novelty:add(child) end
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

-- With cfg.assemble, the assemble operator's child of `population`: the
-- best record's knobs with each knob group's taken from the record fastest
-- on that group's configs; nil when it makes none or the population (or
-- `seen`) holds it already, or the evaluator's restrictions rule it out.
local function assembled(state, population, generation, seen)
  if not state.cfg.assemble or #population < 2 then return nil end
  local child = state.ops.apply("assemble", ranked(population), generation,
    { tag = ("%sg%d.assemble"):format(state.prefix, generation) })
  local key = child and candidate_key(child)
  if not key or seen[key] or not space.allows(state.ev, child.knobs) then return nil end
  seen[key] = true
  return child
end

-- Up to `n` new candidates, none equal to another or to a member of
-- `population`; with cfg.assemble the first is the assembled one.
local function breed(state, population, generation, n)
  local seen = {}
  for _, r in ipairs(population) do seen[candidate_key(r)] = true end
  if state.novelty then
    for _, r in ipairs(population) do state.novelty:add(r) end
  end
  local first = n > 0 and assembled(state, population, generation, seen)
  local children = M.breed_with(state, first and n - 1 or n, seen,
    function(slot, attempt)
      return ("%sg%d.c%d.a%d"):format(state.prefix, generation, slot, attempt)
    end,
    function(streams) return make_child(state, streams, population, generation) end)
  if first then table.insert(children, 1, first) end
  return children
end

-- The records of an evaluation that were run (skipped ones are dropped);
-- the state's best record follows them.
function M.keep(state, evaluated)
  local kept = {}
  for _, r in ipairs(evaluated) do
    if r.status ~= "skipped" then
      kept[#kept + 1] = r
      if state.best == nil or better(r, state.best) then state.best = r end
    end
  end
  return kept
end

-- Evaluates candidates; returns the records that were run.
function M.evaluate(state, candidates)
  if #candidates == 0 then return {} end
  return M.keep(state, avo.evaluate_all(state.ev, candidates))
end

-- Elites followed by children, each record once (the archive may answer a
-- child with an earlier record that is already an elite).
function M.next_population(elites, children)
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
-- Re-timing elites (cfg.retime_elites)
--
-- Every figure a generation compares is one evaluation, and the best of
-- many noisy measurements is likely a lucky one (the winner's curse): a
-- lucky elite stays elite, and assemble takes a knob group from whichever
-- member was lucky on it.  With retime_elites = K, each elite measured
-- fewer than K + 1 times is timed once more per generation (an attempt
-- with outcome "retime" and the elite's candidate_id, counted against the
-- evaluation budget; the elites' re-timings run together), and the
-- generation sees it by the median of its measurements: its score and each
-- config's figures (vs_yardstick, median_s), which tournaments, elitism and
-- assemble compare.  A re-timing that is not ok (a kernel that fails on
-- other inputs) ranks it last.  The archive keeps every measurement; the
-- candidate's recorded score stays its first.  Each generation records an
-- event "elites": {generation, lineage, elites = {{id, score (the median),
-- measurements}, ...}}, best first.

-- What pooling needs of a measurement (a record or a re-timing).
local function measurement(m)
  local configs = {}
  for i, c in ipairs(m.configs or {}) do
    configs[i] = { name = c.name, vs_yardstick = c.vs_yardstick, median_s = c.median_s }
  end
  return { status = m.status, score = m.score or 0, configs = configs }
end

-- What the generation sees of record r measured as `list` (its own
-- measurement first): a copy with the medians as its score and configs'
-- figures; score 0 when one measurement was not ok.
local function pooled(r, list)
  local view = {}
  for k, v in pairs(r) do view[k] = v end
  local scores = {}
  for _, m in ipairs(list) do
    if m.status ~= "ok" then
      view.score = 0
      return view
    end
    scores[#scores + 1] = m.score
  end
  view.score = median(scores)
  view.configs = {}
  for i, c in ipairs(r.configs or {}) do
    local copy = {}
    for k, v in pairs(c) do copy[k] = v end
    for _, field in ipairs({ "vs_yardstick", "median_s" }) do
      local xs = {}
      for _, m in ipairs(list) do
        for _, mc in ipairs(m.configs) do
          if mc.name == c.name and type(mc[field]) == "number" then xs[#xs + 1] = mc[field] end
        end
      end
      if #xs > 0 then copy[field] = median(xs) end
    end
    view.configs[i] = copy
  end
  return view
end

-- Re-timed records remembered (a record that comes back, a child the
-- archive answers with it, keeps its measurements); past this many, those
-- not in the population are forgotten, so the table stays small.
local MEASURED_MAX = 1024

-- `population` with its elites re-timed (cfg.retime_elites) and every
-- re-timed member seen by its pooled measurements.
local function retime_elites(state, population, generation)
  local measured = state.measured
  local view, here = {}, {}
  for i, r in ipairs(population) do
    here[r.id or 0] = true
    view[i] = measured.lists[r.id] and pooled(r, measured.lists[r.id]) or r
  end
  if measured.count > MEASURED_MAX then
    local keep = { lists = {}, count = 0 }
    for id, list in pairs(measured.lists) do
      if here[id] then keep.lists[id], keep.count = list, keep.count + 1 end
    end
    state.measured, measured = keep, keep
  end
  local elites = table.move(ranked(view), 1, math.min(state.cfg.elite, #view), 1, {})
  local tasks = {}
  for _, e in ipairs(elites) do
    local list = measured.lists[e.id]
    if e.status == "ok" and e.id and (not list or #list <= state.cfg.retime_elites) then
      tasks[#tasks + 1] = { elite = e, task = avo.spawn(avo.evaluate, state.ev,
        { source = e.source, knobs = e.knobs, operator = "retime" },
        { retime = true, attempt = { candidate_id = e.id, step = generation,
          lineage = state.prefix .. "ga" } }) }
    end
  end
  local again = {}
  for _, t in ipairs(tasks) do
    local res = avo.join(t.task)
    local id = t.elite.id
    if res.status ~= "skipped" then
      local list = measured.lists[id]
      if not list then
        list = { measurement(t.elite) }
        measured.lists[id], measured.count = list, measured.count + 1
      end
      list[#list + 1] = measurement(res)
      again[id] = true
    end
  end
  for i, r in ipairs(view) do
    if again[r.id] then view[i] = pooled(r, measured.lists[r.id]) end
  end
  -- What the generation now ranks first, and on how many measurements.
  local seen = {}
  for _, e in ipairs(table.move(ranked(view), 1, math.min(state.cfg.elite, #view), 1, {})) do
    local list = measured.lists[e.id]
    seen[#seen + 1] = { id = e.id, score = e.score, measurements = list and #list or 1 }
  end
  avo.event("elites", { generation = generation, lineage = state.prefix .. "ga", elites = seen })
  return view
end

-- The first half of generation `generation`: the elites kept from
-- `population` and the new candidates to evaluate (possibly none).
function M.breed(state, population, generation)
  if state.cfg.retime_elites > 0 then
    population = retime_elites(state, population, generation)
  end
  local n_elites = math.min(state.cfg.elite, #population)
  local elites = table.move(ranked(population), 1, n_elites, 1, {})
  return elites, breed(state, population, generation, state.cfg.population - #elites)
end

-- The operator bandit (cfg.bandit): after each generation, every
-- evaluated child counts as a trial of the operator that made it (the
-- mutation of "crossover+llm_mutate"), and as a win when it is correct and
-- scores above its first parent.  Each operator's weight becomes its
-- configured weight times its posterior mean win rate (wins + 1) / (trials
-- + 2), at least `floor` times the configured weight, so weight shifts
-- toward the operators whose children improve and none starves.  The
-- models of an LLM model list (AVO_LLM_MODEL="a=1,b=1") are weighed the
-- same way by the children each made (avo.llm.set_model_bias).  Recorded
-- as an event "operator_weights" per generation; weights follow from the
-- scores, so replays and resumed runs make the same choices.
function M.update_bandit(state, population, evaluated, generation)
  local b = state.bandit
  b.models = b.models or {}
  local by_id = {}
  for _, r in ipairs(population) do by_id[r.id] = r end
  local function count(stats, key, won)
    local s = stats[key] or { trials = 0, wins = 0 }
    stats[key] = s
    s.trials = s.trials + 1
    if won then s.wins = s.wins + 1 end
  end
  for _, r in ipairs(evaluated) do
    local op = tostring(r.operator or ""):match("([^+]+)$")
    local parent = by_id[(r.parents and r.parents[1] or {}).id]
    local won = not r.duplicate and r.status == "ok" and parent ~= nil and r.score > parent.score
    if state.cfg.operators[op] then count(b.stats, op, won) end
    if type(r.model) == "string" then count(b.models, r.model, won) end
  end
  local floor = state.cfg.bandit.floor
  local bias = {}
  for model, s in pairs(b.models) do
    bias[model] = math.max((s.wins + 1) / (s.trials + 2), floor)
  end
  if next(bias) then avo.llm.set_model_bias(bias) end
  local weights, names = {}, {}
  for op, w in pairs(state.cfg.operators) do
    local s = b.stats[op] or { trials = 0, wins = 0 }
    weights[op] = w * math.max((s.wins + 1) / (s.trials + 2), state.cfg.bandit.floor)
    names[#names + 1] = op
  end
  state.weights = weights
  table.sort(names)
  local stats = {}
  for _, op in ipairs(names) do stats[op] = b.stats[op] or { trials = 0, wins = 0 } end
  avo.event("operator_weights", { generation = generation, prefix = state.prefix,
                                  weights = weights, stats = stats,
                                  model_bias = next(bias) and bias or nil,
                                  model_stats = next(bias) and b.models or nil })
end

-- One whole generation: breed, evaluate, select.  Returns the next
-- population, or nil when no new child could be made.
function M.step(state, population, generation)
  local elites, candidates = M.breed(state, population, generation)
  if #candidates == 0 then return nil end
  local evaluated = M.evaluate(state, candidates)
  if state.bandit then M.update_bandit(state, population, evaluated, generation) end
  return M.next_population(elites, evaluated)
end

---------------------------------------------------------------------------
-- Generation 0

-- A param_tweak child of `parent` not in `seen` and within the evaluator's
-- restrictions, or nil when the draws found none or the parent has no knobs.
local function fresh_tweak(state, parent, seen)
  for _ = 1, attempts(state) do
    state.tweaks = state.tweaks + 1
    local child = state.ops.apply(FALLBACK_OPERATOR, { parent }, 0,
      { tag = ("%sg0.c%d"):format(state.prefix, state.tweaks) })
    if child == nil then return nil end
    local key = candidate_key(child)
    if not seen[key] and space.allows(state.ev, child.knobs) then
      seen[key] = true
      return child
    end
  end
  return nil
end

-- The evaluator's seed kernel as a generation-0 candidate.
function M.seed_candidate(state)
  return records.seed_candidate(state.ev)
end

-- Up to `n` configurations of the seed's knobs spread over the valid space
-- of `ev` (space.spread from `rng`, away from the seed) that `accept`
-- takes: fewer where the seed declares no knob to vary or the space runs
-- out.  islands.lua draws one such sample for all its islands.
function M.spread_sample(ev, seed, n, rng, accept)
  if n <= 0 then return {} end
  local domain = avo.knobs(seed.source)
  local varied = false
  for _, knob in ipairs(domain) do varied = varied or #knob.values >= 2 end
  if not varied then return {} end
  return space.spread(rng, domain, ev, n, accept, { space.full(domain, seed.knobs) })
end

-- Generation-0 candidates of the seed's source at the knob maps `picks`
-- that are not in `seen` (added to it).
local function spread_candidates(seed, picks, seen)
  local children = {}
  for _, knobs in ipairs(picks) do
    local key = candidate_key{ source = seed.source, knobs = knobs }
    if not seen[key] then
      seen[key] = true
      children[#children + 1] = { source = seed.source, knobs = knobs, operator = "spread",
                                  generation = 0, parents = { { id = seed.id, role = "parent" } },
                                  note = "space-filling sample" }
    end
  end
  return children
end

-- Up to population - 1 distinct children of the seed record (generation
-- 0): a `spread` share of them (rounded up) spread over the valid knob
-- space, so a poor seed does not hold the search in its corner (ga fell
-- below random sampling on bench/gemm_space.lua), the rest param_tweak
-- children around the seed, so a good one is refined at once.  Where the
-- space gives fewer spread points, tweaks fill the population.  `picks`
-- (optional): the spread share already drawn (islands.lua deals one
-- sample out to its islands); else it is drawn from stream
-- "<prefix>ga/initial".
function M.seed_children(state, seed, picks)
  local seen = { [candidate_key(seed)] = true }
  local n = state.cfg.population - 1
  if picks == nil then
    picks = M.spread_sample(state.ev, seed, math.ceil(n * state.cfg.spread),
      avo.rng(state.prefix .. "ga/initial"),
      function(k) return not seen[candidate_key{ source = seed.source, knobs = k }] end)
  end
  local children = spread_candidates(seed, picks, seen)
  while #children < n do
    local child = fresh_tweak(state, seed, seen)
    if child == nil then break end
    children[#children + 1] = child
  end
  return children
end

-- Seed plus its generation-0 children (M.seed_children).
function M.initial_population(state)
  local population = M.evaluate(state, { M.seed_candidate(state) })
  if #population == 0 or avo.exhausted() then return population end
  local children = M.seed_children(state, population[1])
  return M.next_population(population, M.evaluate(state, children))
end

return M
