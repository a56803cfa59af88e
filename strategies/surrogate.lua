-- surrogate: Bayesian optimisation of the knobs.  A Gaussian-process model
-- of the score over the knob space chooses each next configuration by its
-- expected improvement, so a small budget of evaluations goes where the
-- model expects the best or knows the least.
--
--   return avo.strategy("surrogate").run{ evaluator = "cpu/sgemm" }
--
-- The seed is evaluated first, then `initial` configurations drawn uniformly
-- from the valid ones (stream "surrogate/initial"; the evaluator's
-- `restrictions` rule configurations out before they cost an evaluation,
-- strategies/lib/space.lua).  Then each round fits the model to every
-- record so far and proposes `batch` new configurations: among candidates
-- made of every one-knob change of the `top` best records, random two-knob
-- changes of them and `pool` uniform draws (stream "surrogate/r<round>"),
-- the one of highest expected improvement, then climbs from it through
-- one-knob changes while the expected improvement grows (at most 8 steps:
-- the model's optimum is often a knob or two from every candidate drawn);
-- with batch > 1 the next pick
-- believes the model's prediction for the ones picked before (the
-- "kriging believer"), so a batch spreads out and `--jobs` evaluations run
-- together.  The run stops after `iterations` rounds, when the budget is
-- spent (avo.exhausted) or when no new valid candidate is left.
--
-- The model: knob values are positions in their order (numeric order for
-- numbers, whatever order the domain lists them in; names as listed); the
-- distance of two configurations mixes the count of knobs that differ
-- (knobs as categories) and the sum of their position differences scaled
-- to [0, 1] (knobs as ordered: tile sizes, unroll factors), summed or
-- squared-summed (rough or smooth), weight `w`; covariance
-- exp(-distance / (lengthscale x knobs)), plus a noise term.  Every
-- `refit` evaluations (or a quarter of all, when that is more) the
-- lengthscale, w, the shape and the noise are chosen from a small grid by
-- marginal likelihood, so the model learns whether the order of values
-- matters and how rugged the space is.  Scores are
-- standardized; a failed record counts as the worst ok score.  All of it
-- is deterministic given the records, so a run seed fixes every choice.
-- The model's arithmetic is C (core/gp.c through require("avo.core").gp):
-- about 5 to 10 ms of CPU per candidate at 1,000 candidates and after
-- (bench/surrogate_time.sh).
--
-- Options:
--   evaluator   spec for avo.evaluator (required)
--   initial     integer >= 1, random configurations after the seed
--               (default 10: about one per knob before the model leads)
--   batch       integer >= 1, configurations proposed per round (default 1)
--   iterations  integer >= 0, rounds after the initial samples (default 1000;
--               usually the budget ends the run)
--   pool        integer >= 0, uniform draws among each round's candidates
--               (default 200)
--   top         integer >= 1, best records whose neighbours are candidates
--               (default 3)
--   xi          number >= 0, improvement (in standard deviations of the
--               scores) below which a candidate counts as no gain (0.01)
--   refit       integer >= 1, evaluations between hyperparameter fits (8)
--   max_train   integer >= 8, most observations the model trains on
--               (default 100; sync_training): beyond them, the best half
--               and the latest, so a choice costs O(max_train^2), not O(n^3)
--
-- Returns the best record of the run, like the other strategies.

local avo = require "avo"
local core = require "avo.core"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"
local space = require "strategies.lib.space"
local knob_lib = require "operators.lib.knobs"
local index_of = knob_lib.index_of
local moments = require "strategies.lib.moments"

local M = {}

local WHO = "surrogate"

local KNOWN_OPTIONS = {
  evaluator = true, initial = true, batch = true, iterations = true, pool = true,
  top = true, xi = true, refit = true, max_train = true,
}

-- The hyperparameter grid: lengthscales (per knob), category weights w,
-- noise variances (of standardized scores).
local LENGTHSCALES = { 0.03, 0.06, 0.12, 0.25, 0.5 }
local CATEGORY_WEIGHTS = { 0, 0.5, 1 }
local SHAPES = { 1, 2 }
local NOISES = { 1e-4, 1e-2 }

-- Most one-knob steps of the climb from each pick (climb).
local LOCAL_STEPS = 8

---------------------------------------------------------------------------
-- Options

local is_integer_at_least = options.is_integer_at_least

local function bad(name, expected, got) return options.bad(WHO, name, expected, got) end

-- Returns the options with defaults filled in, or nil and a message naming
-- the bad option.
local function read_options(opts)
  local ok, err = options.check_common(WHO, opts, KNOWN_OPTIONS)
  if not ok then return nil, err end
  local cfg = {
    evaluator = opts.evaluator,
    initial = opts.initial or 10,
    batch = opts.batch or 1,
    iterations = opts.iterations or 1000,
    pool = opts.pool or 200,
    top = opts.top or 3,
    xi = opts.xi or 0.01,
    refit = opts.refit or 8,
    max_train = opts.max_train or 100,
  }
  for _, name in ipairs{ "initial", "batch", "top", "refit" } do
    if not is_integer_at_least(cfg[name], 1) then return bad(name, "an integer >= 1", cfg[name]) end
  end
  for _, name in ipairs{ "iterations", "pool" } do
    if not is_integer_at_least(cfg[name], 0) then return bad(name, "an integer >= 0", cfg[name]) end
  end
  if not is_integer_at_least(cfg.max_train, 8) then
    return bad("max_train", "an integer >= 8", cfg.max_train)
  end
  if type(cfg.xi) ~= "number" or not (cfg.xi >= 0) or cfg.xi == math.huge then
    return bad("xi", "a finite number >= 0", cfg.xi)
  end
  return cfg
end

---------------------------------------------------------------------------
-- Encoding and distances

-- The knobs that can change (two or more values), with their positions.
local function tunable_knobs(domain)
  local list = {}
  for _, knob in ipairs(domain) do
    if #knob.values >= 2 then list[#list + 1] = knob end
  end
  return list
end

-- Each tunable knob's value positions by the value's text (the first of
-- equal texts, as index_of finds it: a record read back from the archive
-- may carry "32" where the parser gave 32), and the position of its first
-- value (the seed's).
local function positions_of(knobs_list)
  local positions, firsts = {}, {}
  for d, knob in ipairs(knobs_list) do
    local p = {}
    local _, rank = knob_lib.order(knob.values)
    for i, v in ipairs(knob.values) do
      local text = tostring(v)
      if p[text] == nil then p[text] = rank[i] end
    end
    positions[d], firsts[d] = p, rank[1]
  end
  return positions, firsts
end

-- A configuration as value positions, one per tunable knob; a knob not set
-- (or set outside its domain) is at its first value, as the compiler sees it.
-- Strings and integers are looked up as they are once seen (a float goes
-- through its text each time: 32.0 and 32 are one table key but not one text).
local function encode(state, knobs)
  local x, positions, seen = {}, state.positions, state.seen_values
  for d, knob in ipairs(state.knobs) do
    local v = knobs[knob.name]
    local at = v ~= nil and math.type(v) ~= "float" and seen[d][v]
    if not at then
      at = v ~= nil and positions[d][tostring(v)] or state.first_positions[d]
      if v ~= nil and math.type(v) ~= "float" then seen[d][v] = at end
    end
    x[d] = at
  end
  return x
end

---------------------------------------------------------------------------
-- The Gaussian process: its arithmetic is core.gp (core/gp.c): the
-- training encodings and their distances, the Cholesky factor (grown a row
-- per new training position), the covariance factors and the expected
-- improvement of each candidate, in the order of operations this file had
-- when it did them itself (the same picks, about 30 times faster).

-- The candidate of highest expected improvement among `encodings` (false
-- entries are skipped) when it is above `floor` (default: any): index,
-- mean, expected improvement, or nil.  core.gp visits the candidates in
-- order of a bound of their improvement (the mean, with the deviation
-- bounded by the most correlated observation alone) and solves for the
-- exact deviation only while a bound can beat the best found.
local function best_candidate(state, encodings, best, xi, floor)
  return state.gp:best(encodings, best, xi, floor)
end

---------------------------------------------------------------------------
-- Observations

-- Standardized scores of the observations; a failed record is the worst
-- ok score (0 when none is ok).  Returns the best standardized score of a
-- record, the mean and deviation of the scores, and the score of a failed
-- record; observation i's standardized score is ((state.scores[i] or worst)
-- - mean) / sd.  In constant time (strategies/lib/moments.lua: kept as
-- scores come, observe), so a round costs the same at 100 observations as
-- at 100,000.
local function standardized(state)
  local worst = state.worst
  if worst == math.huge then worst = 0 end
  local mean, sd = moments.of(state.moments, worst)
  -- The best of the standardized scores of records (not believed ones):
  -- the best score standardized, as (s - mean) / sd only grows with s.
  return (math.max(state.top_score or worst, worst) - mean) / sd, mean, sd, worst
end

-- Adds an observation (a record, or { believed = score } for a pending
-- pick) with its encoding.
-- The `top` best ok records are kept in order as they come (state.tops),
-- so a round does not rank every record again.
local function observe(state, rec, knobs)
  local n = state.n + 1
  state.n = n
  state.xs[n] = encode(state, knobs) -- the record itself is not kept: only its score
  state.scores[n] = rec.believed or (rec.status == "ok" and (rec.score or 0))
  moments.add(state.moments, state.scores[n])
  if rec.status == "ok" then
    state.worst = math.min(state.worst, state.scores[n])
    state.top_score = math.max(state.top_score or state.scores[n], state.scores[n])
    -- Ranked as they come (best first, ties to the earlier), so the training
    -- set's choice does not sort every record again: after the last of a
    -- score, found by bisection.
    local ranked, score = state.ranked, state.scores[n]
    local lo, hi = 1, #ranked + 1
    while lo < hi do
      local mid = (lo + hi) // 2
      if state.scores[ranked[mid]] >= score then lo = mid + 1 else hi = mid end
    end
    -- Only the best max_train / 2 are ever read (sync_training): the list
    -- stops there, so keeping it costs the same at any length.
    local cap = state.cfg.max_train // 2
    if lo <= cap then
      table.insert(ranked, lo, n)
      local out = ranked[cap + 1]
      if out then -- never ranked again (scores do not change): see prune
        ranked[cap + 1] = nil
        state.unranked[#state.unranked + 1] = out
      end
    end
    local tops = state.tops
    local at = #tops + 1
    while at > 1 and records.better(rec, tops[at - 1]) do at = at - 1 end
    if at <= state.cfg.top then
      table.insert(tops, at, rec)
      tops[state.cfg.top + 1] = nil
    end
  end
end

-- Forgets the encodings and scores of the observations no training set
-- reads again, so the strategy's memory grows by its seen keys alone
-- (docs/benchmarks.md, "The surrogate's memory"): observation i is read
-- again only while it is among the
-- ranked best (which it never re-enters once it left) or within the
-- 3/4 max_train most recent a new training set takes; `keep` is the
-- current training set's (the ranked best among them), `upto` (n -
-- max_train) the last index old enough.
local function prune(state, keep, upto)
  local xs, scores = state.xs, state.scores
  for i = state.pruned + 1, upto do
    if not keep[i] then xs[i], scores[i] = nil, nil end
  end
  if upto > state.pruned then state.pruned = upto end
  local still = {}
  for _, i in ipairs(state.unranked) do
    if i > state.pruned or keep[i] then still[#still + 1] = i else xs[i], scores[i] = nil, nil end
  end
  state.unranked = still
end

-- Appends observation `i` to the training set (core.gp keeps its
-- distances to the others).
local function train_add(state, i)
  state.train[#state.train + 1] = i
  state.gp:add(state.xs[i])
end

-- The training set: every observation while there are at most max_train;
-- past that, the best half of max_train (ok records by score) and the most
-- recent observations up to three quarters of it, then each new one until
-- it holds max_train again.  So a model costs O(max_train^3) at most, a
-- round O(max_train^2) (the factor grows a row at a time, extend) and a
-- new choice comes every max_train / 4 observations; the best and the
-- region the search is in stay in it.
local function sync_training(state)
  local n, M = state.n, state.cfg.max_train
  local last = state.train[#state.train] or 0
  if n - last + #state.train > M then
    local ranked = state.ranked
    local keep, kept = {}, {}
    for j = 1, math.min(M // 2, #ranked) do keep[ranked[j]], kept[j] = true, ranked[j] end
    for i = n, 1, -1 do
      if #kept >= (3 * M) // 4 then break end
      if not keep[i] then keep[i], kept[#kept + 1] = true, i end
    end
    table.sort(kept) -- in the order they came, as every other training set
    state.train = {}
    state.gp:clear()
    for _, i in ipairs(kept) do train_add(state, i) end
    prune(state, keep, n - M)
    if not state.bounded then
      state.bounded = true
      avo.log("%s: %d observations: the model trains on the best and the latest, %d at most " ..
        "(max_train)", WHO, n, M)
    end
    return
  end
  for i = last + 1, n do train_add(state, i) end
end

local function forget_last(state)
  local n = state.n
  state.n = n - 1
  state.xs[n], state.scores[n] = nil, nil
  local train = state.train
  if train[#train] == n then
    train[#train] = nil
    state.gp:pop() -- the leading rows stay the factor
  end
end

-- The model for the training set: hyperparameters chosen by marginal
-- likelihood when `choose`, else the last ones, whose factor is extended
-- by the new training positions rather than made again.  Returns the best
-- standardized score and the mean and deviation of the scores.
local function model_for(state, choose)
  sync_training(state)
  local best, mean, sd, worst = standardized(state)
  local y, scores = {}, state.scores
  for a, i in ipairs(state.train) do y[a] = ((scores[i] or worst) - mean) / sd end
  local gp, ok = state.gp, false
  if choose or state.hyper == nil then
    local top, top_loglik
    for _, scale in ipairs(LENGTHSCALES) do
      for _, w in ipairs(CATEGORY_WEIGHTS) do
        for _, shape in ipairs(w < 1 and SHAPES or { 1 }) do
          for _, noise in ipairs(NOISES) do
            local hyper = { scale = scale * #state.knobs, w = w, shape = shape, noise = noise }
            local loglik = gp:loglik(y, hyper)
            if loglik and (top == nil or loglik > top_loglik) then top, top_loglik = hyper, loglik end
          end
        end
      end
    end
    state.hyper = top
    ok = top ~= nil and gp:fit(y, top) ~= nil
  else
    ok = gp:has_model(state.hyper) and gp:extend(y) or gp:fit(y, state.hyper) ~= nil
  end
  if not ok then -- never positive definite: the noisiest setting
    gp:fit(y, { scale = LENGTHSCALES[1] * #state.knobs, w = 1, shape = 1, noise = 1 })
  end
  return best, mean, sd
end

---------------------------------------------------------------------------
-- Candidates

-- Identity of a configuration within the run (every knob map here holds
-- all the domain's knobs, and the source is the seed's).
local function key_of(state, knobs)
  return space.key(state.domain, knobs)
end

-- Adds `knobs` to the candidate list when it is new, valid and not listed;
-- `key` is its key_of when known.
local function offer(state, list, listed, knobs, key)
  key = key or key_of(state, knobs)
  if listed[key] or state.seen[key] then return end
  listed[key] = true
  if not space.allows(state.ev, knobs) then return end
  list[#list + 1] = knobs
end

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- The knob values of a record, completed with first values.
local function full_knobs(state, rec)
  local knobs = {}
  for _, knob in ipairs(state.domain) do
    local v = (rec.knobs or {})[knob.name]
    knobs[knob.name] = index_of(knob.values, v) and v or knob.values[1]
  end
  return knobs
end

-- This round's candidates: one-knob changes of the top records, as many
-- random two-knob changes of them, and `pool` uniform draws.
local function candidates(state, rng)
  local list, listed = {}, {}
  local tops = state.tops
  local ones = 0
  for _, r in ipairs(tops) do
    local base = full_knobs(state, r)
    for _, knob in ipairs(state.knobs) do
      for _, v in ipairs(knob.values) do
        if v ~= base[knob.name] then
          local k = copy(base)
          k[knob.name] = v
          offer(state, list, listed, k)
          ones = ones + 1
        end
      end
    end
  end
  for _ = 1, ones do
    local base = full_knobs(state, tops[rng:int(1, #tops)])
    for _ = 1, 2 do
      local knob = state.knobs[rng:int(1, #state.knobs)]
      base[knob.name] = rng:choice(knob.values)
    end
    offer(state, list, listed, base)
  end
  local key
  local function new(k)
    key = key_of(state, k)
    return not listed[key] and not state.seen[key]
  end
  for _ = 1, state.cfg.pool do
    local k = space.sample(rng, state.domain, state.ev, new)
    if k == nil then break end
    offer(state, list, listed, k, key)
  end
  return list
end

---------------------------------------------------------------------------
-- Run

-- Evaluates knob settings as candidates of round `round`; the records that
-- were run join the observations.
local function evaluate(state, list, round, note)
  local cands = {}
  for i, knobs in ipairs(list) do
    state.seen[key_of(state, knobs)] = true
    cands[i] = { source = state.seed.source, knobs = knobs, operator = WHO,
                 parents = { { id = state.seed.id, role = "parent" } }, note = note,
                 generation = round }
  end
  if #cands == 0 then return end
  for _, r in ipairs(avo.evaluate_all(state.ev, cands)) do
    if r.status ~= "skipped" then
      observe(state, r, full_knobs(state, r))
      if records.better(r, state.best) then state.best = r end
      state.since_fit = state.since_fit + 1
    end
  end
end

-- Climbs from the candidate `knobs` (expected improvement `ei`) to the
-- best of its valid new one-knob changes while that improves the expected
-- improvement, at most LOCAL_STEPS times: the model's optimum is often a
-- knob or two away from every candidate drawn.  Returns knobs, mean.
local function climb(state, best, knobs, mean, ei, taken)
  for _ = 1, LOCAL_STEPS do
    local list, listed = {}, {}
    for key in pairs(taken) do listed[key] = true end
    for _, knob in ipairs(state.knobs) do
      for _, v in ipairs(knob.values) do
        if v ~= knobs[knob.name] then
          local k = copy(knobs)
          k[knob.name] = v
          offer(state, list, listed, k)
        end
      end
    end
    local encodings = {}
    for i, k in ipairs(list) do encodings[i] = encode(state, k) end
    local top, top_mean, top_ei = best_candidate(state, encodings, best, state.cfg.xi, ei)
    if top == nil then break end
    knobs, mean, ei = list[top], top_mean, top_ei
  end
  return knobs, mean
end

-- Up to `batch` picks of highest expected improvement, each later pick
-- believing the model's mean for the earlier ones.
local function propose(state, round)
  local rng = avo.rng(("%s/r%d"):format(WHO, round), { keep = false }) -- used once
  local list = candidates(state, rng)
  local encodings, keys = {}, {}
  for i, knobs in ipairs(list) do encodings[i], keys[i] = encode(state, knobs), key_of(state, knobs) end
  local picks, taken = {}, {}
  local before = moments.copy(state.moments)
  -- Hyperparameters are chosen again after `refit` evaluations, or a
  -- quarter of them all when that is more: they settle as data grows.
  local choose = state.since_fit >= math.max(state.cfg.refit, state.n // 4)
    or state.hyper == nil
  if choose then state.since_fit = 0 end
  for b = 1, math.min(state.cfg.batch, #list) do
    local best, mean, sd = model_for(state, choose and b == 1)
    local top, top_mean, top_ei = best_candidate(state, encodings, best, state.cfg.xi)
    if top == nil then break end
    local knobs = list[top]
    encodings[top] = false
    local climbed
    climbed, top_mean = climb(state, best, knobs, top_mean, top_ei, taken)
    if climbed ~= knobs then -- the list may hold it too: it is taken now
      local key = key_of(state, climbed)
      for i, k in ipairs(keys) do
        if encodings[i] and k == key then encodings[i] = false end
      end
      knobs = climbed
    end
    taken[key_of(state, knobs)] = true
    picks[#picks + 1] = knobs
    if b < state.cfg.batch then
      observe(state, { believed = top_mean * sd + mean }, knobs)
    end
  end
  for _ = 1, #picks - 1 do forget_last(state) end
  state.moments = before -- as before the believed picks, exactly
  return picks
end

---@param opts avo.StrategyOptions
---@return avo.Record? # the best record
function M.run(opts)
  local cfg, ev, seed = records.start(read_options, opts)
  if not seed then return nil end
  local domain = avo.knobs(seed.source)
  local state = {
    cfg = cfg, ev = ev, seed = seed, domain = domain, knobs = tunable_knobs(domain),
    xs = {}, seen = {}, best = seed, since_fit = 0, tops = {},
    scores = {}, worst = math.huge, -- observations' scores (false: failed), least ok one
    n = 0, -- observations so far (xs and scores forget the ones never read again: prune)
    pruned = 0, unranked = {}, -- observations up to `pruned` forgotten; left the ranked list
    moments = moments.new(), -- of scores (standardized)
    ranked = {}, -- the best max_train / 2 ok observations, best first (observe)
    train = {}, -- the training set (sync_training), observation indices
  }
  if #state.knobs == 0 then
    avo.log("%s: the seed declares no knob with two values or more; nothing to search", WHO)
    return seed
  end
  local spans = {}
  for d, knob in ipairs(state.knobs) do spans[d] = #knob.values end
  local gp <close> = core.gp(spans)
  state.positions, state.first_positions = positions_of(state.knobs)
  state.gp, state.seen_values = gp, {}
  for d = 1, #state.knobs do state.seen_values[d] = {} end
  state.seen[key_of(state, full_knobs(state, seed))] = true
  observe(state, seed, full_knobs(state, seed))

  -- Uniform draws over the valid space: a spread design (space.spread)
  -- measured worse for the model on the NK landscape at 50 evaluations.
  local initial, rng = {}, avo.rng(WHO .. "/initial")
  for _ = 1, cfg.initial do
    local knobs = space.sample(rng, domain, ev, function(k) return not state.seen[key_of(state, k)] end)
    if knobs == nil then break end
    state.seen[key_of(state, knobs)] = true
    initial[#initial + 1] = knobs
  end
  if not avo.exhausted() then evaluate(state, initial, 0, "random sample") end
  avo.progress{ generation = 0 }

  for round = 1, cfg.iterations do
    if avo.exhausted() then break end
    local picks = propose(state, round)
    if #picks == 0 then
      avo.log("%s: round %d found no new valid configuration; stopping", WHO, round)
      break
    end
    evaluate(state, picks, round, "highest expected improvement")
    avo.progress{ generation = round }
  end
  if state.hyper then
    avo.log("%s: model lengthscale %.3g per knob, category weight %.2g, %s, noise %.2g", WHO,
      state.hyper.scale / #state.knobs, state.hyper.w,
      state.hyper.shape == 2 and "smooth" or "rough", state.hyper.noise)
  end
  return state.best
end

return M
