-- linesearch: orthogonal line search over the knobs, one knob at a time, as
-- ATLAS tunes its kernels, with every knob group searched at once.
--
--   return avo.strategy("linesearch").run{ evaluator = "cpu/sgemm_fast" }
--
-- The search keeps an incumbent (where it starts: below).  A line tries
-- every value of one knob with the others at the incumbent's, then
-- keeps the fastest value, and the next line takes the next knob; a sweep
-- is a line per knob, in the order the kernel declares them.  Knobs
-- interact (a deeper k block pays only with another packing), so the sweeps
-- go on until one changes nothing, `sweeps` are done, or the run's budget
-- is spent.
--
-- Where the evaluator's configs name knob groups (configs[i].knobs: a
-- kernel that dispatches shape families to knob sets of their own), each
-- group is a problem of its own that every evaluation measures at once:
-- a line moves one knob in every group together (the group's i-th knob),
-- the n-th candidate of the line setting each group's knob to its n-th
-- value, and each group's value is judged on that group's configs alone
-- (the geometric mean of their median times).  The knobs of no group are
-- a part of their own, judged on the score.  So a line costs as many
-- evaluations as the longest domain among its knobs, not their sum.
--
-- The first incumbent is the best of the seed and `restart` configurations
-- spread over the valid space (as ga's generation 0 is), so a poor seed
-- does not hold the climb in its corner and an expert one stays.
--
-- In a line of groups the incumbent's own value is measured again (the
-- candidates where a group keeps its value measure it at the same moment
-- as the others; their median counts), so a value is kept only when it
-- beat the incumbent measured beside it by more than `margin`; a line of
-- one knob of no group compares with the incumbent's own record.  After a line
-- that changed something the new incumbent is evaluated as a whole: it is
-- a combination no line measured, and the run's best is among these.
-- Values outside the evaluator's restrictions are not tried.
--
-- A sweep that moves nothing is a point no single knob improves (in a
-- space whose restrictions tie knobs together, often a poor one).  With
-- budget left the search restarts: `restart` configurations spread over
-- the valid space away from the seed and every point a climb stalled at
-- (space.spread, stream "linesearch/restart<n>"; the start's is
-- "linesearch/restart0") are evaluated, and the sweeps go on from the best
-- of them.
--
-- Options:
--   evaluator  spec for avo.evaluator (required)
--   sweeps     integer >= 1, most sweeps (default 10; with --max-evals the
--              budget usually ends the search first)
--   margin     number in [0, 1), how much faster (as a fraction of the
--              incumbent's time) a value must be to be kept (default 0)
--   restart    integer >= 0, configurations sampled at a restart (default
--              8; 0: stop at the first sweep that moves nothing)

local avo = require "avo"
local knob_lib = require "operators.lib.knobs"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"
local space = require "strategies.lib.space"
local median = require("avo.retime").median

local M = {}

local function bad(name, expected, got) return options.bad("linesearch", name, expected, got) end

local function read_options(opts)
  local ok, err = options.check_common("linesearch", opts,
    { evaluator = true, sweeps = true, margin = true, restart = true })
  if not ok then return nil, err end
  local cfg = { evaluator = opts.evaluator, sweeps = opts.sweeps or 10, margin = opts.margin or 0,
                restart = opts.restart or 8 }
  if not options.is_integer_at_least(cfg.sweeps, 1) then
    return bad("sweeps", "an integer >= 1", cfg.sweeps)
  end
  if type(cfg.margin) ~= "number" or cfg.margin < 0 or cfg.margin >= 1 then
    return bad("margin", "a number in [0, 1)", cfg.margin)
  end
  if not options.is_integer_at_least(cfg.restart, 0) then
    return bad("restart", "an integer >= 0", cfg.restart)
  end
  return cfg
end

-- The parts searched apart: one per knob group of `ev` (judged on the
-- group's configs) and one for the knobs of no group (judged on the
-- score), each the list of its tunable knobs' indices in `domain`.
local function parts_of(ev, domain)
  local groups = knob_lib.groups(ev)
  local parts, by_group = {}, {}
  for k, knob in ipairs(domain) do
    if #knob.values >= 2 then
      local g = groups and knob_lib.group_of(groups, knob.name) or 0
      if not by_group[g] then
        by_group[g] = { knobs = {}, configs = g ~= 0 and groups[g].configs or nil,
                        name = g ~= 0 and table.concat(groups[g].patterns, " ") or "other knobs" }
        parts[#parts + 1] = by_group[g]
      end
      table.insert(by_group[g].knobs, k)
    end
  end
  return parts
end

-- What a record costs on part `part` (lower is better): the geometric mean
-- of its median times on the part's configs, or 1/score for the knobs of
-- no group; nil when it has no correct measurement there.
local function cost(part, record)
  if record.status ~= "ok" then return nil end
  if not part.configs then
    return (record.score or 0) > 0 and 1 / record.score or nil
  end
  return knob_lib.group_time(record, part.configs)
end

-- The lines of one sweep: each a list of { part index, knob index }.  The
-- groups' i-th knobs move together in line i; the knobs of no group come
-- after, one line each, so what the score says of them is not mixed with
-- the groups' moves.
local function sweep_lines(parts)
  local lines, longest = {}, 0
  for _, part in ipairs(parts) do
    if part.configs then longest = math.max(longest, #part.knobs) end
  end
  for i = 1, longest do
    local line = {}
    for p, part in ipairs(parts) do
      if part.configs and part.knobs[i] then line[#line + 1] = { p, part.knobs[i] } end
    end
    lines[#lines + 1] = line
  end
  for p, part in ipairs(parts) do
    if not part.configs then
      for _, k in ipairs(part.knobs) do lines[#lines + 1] = { { p, k } } end
    end
  end
  return lines
end

-- The candidates of a line (sweep_lines): the n-th sets each moving knob
-- to its n-th value (a knob whose domain is shorter, or whose n-th value
-- the restrictions rule out, keeps the incumbent's).  Returns the
-- candidates, per candidate the value index of each moving knob, and the
-- incumbent's value indices.
local function line_candidates(state, number, moving, incumbent)
  local knobs_now, positions = knob_lib.inherit(state.domain, { incumbent.knobs or {} })
  local longest = 0
  for _, pk in ipairs(moving) do longest = math.max(longest, #state.domain[pk[2]].values) end
  local candidates, at = {}, {}
  for n = 1, longest do
    local knobs = {}
    for name, v in pairs(knobs_now) do knobs[name] = v end
    local where, changes = {}, {}
    for m, pk in ipairs(moving) do
      local k = pk[2]
      local knob = state.domain[k]
      where[m] = positions[k]
      if n <= #knob.values and n ~= positions[k] then
        knobs[knob.name] = knob.values[n]
        if space.allows(state.ev, knobs) then
          where[m] = n
          changes[#changes + 1] = ("%s=%s"):format(knob.name, tostring(knob.values[n]))
        else
          knobs[knob.name] = knobs_now[knob.name]
        end
      end
    end
    if #changes > 0 then
      candidates[#candidates + 1] = {
        source = incumbent.source, knobs = knobs, operator = "linesearch",
        parents = { { id = incumbent.id, role = "parent" } },
        note = ("sweep %d, line %d: %s"):format(state.sweep, number, table.concat(changes, ", ")),
        generation = state.generation,
      }
      at[#at + 1] = where
    end
  end
  return candidates, at, positions
end

-- What a line decided: the incumbent's knobs with each moving knob at the
-- value fastest on its part, where that beat the incumbent's value by more
-- than `margin` (the incumbent measured in this line where it was, else its
-- own record), and a note per move.  `at`, `positions`: line_candidates's.
local function decide(state, margin, moving, incumbent, evaluated, at, positions)
  local domain = state.domain
  local knobs = knob_lib.inherit(domain, { incumbent.knobs or {} })
  local moves = {}
  for m, pk in ipairs(moving) do
    local part, k = state.parts[pk[1]], pk[2]
    local by_value = {}
    for i, r in ipairs(evaluated) do
      local c = r.status ~= "skipped" and cost(part, r)
      if c then
        local n = at[i][m]
        by_value[n] = by_value[n] or {}
        table.insert(by_value[n], c)
      end
    end
    local here = positions[k]
    local incumbent_cost = by_value[here] and median(by_value[here]) or cost(part, incumbent)
    local pick, pick_cost = nil, incumbent_cost and incumbent_cost * (1 - margin)
    for n = 1, #domain[k].values do
      local c = by_value[n] and median(by_value[n])
      if c and n ~= here and pick_cost and c < pick_cost then pick, pick_cost = n, c end
    end
    if pick then
      local knob = domain[k]
      knobs[knob.name] = knob.values[pick]
      moves[#moves + 1] = ("%s %s->%s (%.3gx faster on %s)"):format(knob.name,
        tostring(knob.values[here]), tostring(knob.values[pick]), incumbent_cost / pick_cost,
        part.name)
    end
  end
  return knobs, moves
end

-- A restart (see the header): the best of `n` configurations spread over
-- the valid space away from `incumbents` (the seed and the points climbs
-- stalled at), or nil when the space gives none or none of them is ok.
local function restart(state, n, incumbents, number)
  local seen, near = {}, {}
  for _, r in ipairs(incumbents) do
    near[#near + 1] = space.full(state.domain, r.knobs)
    seen[records.candidate_key{ knobs = near[#near] }] = true
  end
  local picks = space.spread(avo.rng(("linesearch/restart%d"):format(number)), state.domain,
    state.ev, n, function(k) return not seen[records.candidate_key{ knobs = k }] end, near)
  local candidates = {}
  for _, knobs in ipairs(picks) do
    candidates[#candidates + 1] = {
      source = incumbents[1].source, knobs = knobs, operator = "linesearch",
      parents = { { id = incumbents[#incumbents].id, role = "parent" } },
      note = number == 0 and "start: space-filling sample beside the seed"
        or ("restart %d: no knob moved in sweep %d; space-filling sample"):format(number,
          state.sweep),
      generation = state.generation,
    }
  end
  local best
  for _, r in ipairs(#candidates > 0 and avo.evaluate_all(state.ev, candidates) or {}) do
    if r.status == "ok" and (best == nil or records.better(r, best)) then best = r end
  end
  return best
end

---@param opts avo.StrategyOptions
---@return avo.Record? # the best record
function M.run(opts)
  local cfg, ev, seed = records.start(read_options, opts)
  if not seed then return nil end
  local domain = avo.knobs(seed.source)
  local state = { ev = ev, domain = domain, parts = parts_of(ev, domain), generation = 0,
                  sweep = 0, restarts = 0 }
  local best, incumbent = seed, seed
  local incumbents = { seed } -- the seed and every point a climb stalled at
  if #state.parts == 0 or seed.status ~= "ok" then return best end
  local lines = sweep_lines(state.parts)
  -- The first climb starts from the best of the seed and a sample spread
  -- over the space (a poor seed does not hold it in its corner).
  local from = cfg.restart > 0 and restart(state, cfg.restart, incumbents, 0)
  if from and records.better(from, seed) then best, incumbent = from, from end

  for sweep = 1, cfg.sweeps do
    state.sweep = sweep
    local changed_in_sweep = false
    for number, moving in ipairs(lines) do
      if avo.exhausted() then return best end
      state.generation = state.generation + 1
      local candidates, at, positions = line_candidates(state, number, moving, incumbent)
      local evaluated = #candidates > 0 and avo.evaluate_all(ev, candidates) or {}
      for _, r in ipairs(evaluated) do
        if r.status ~= "skipped" and records.better(r, best) then best = r end
      end
      local knobs, moves = decide(state, cfg.margin, moving, incumbent, evaluated, at, positions)
      if #moves > 0 and space.allows(ev, knobs) and not avo.exhausted() then
        local r = avo.evaluate_all(ev, { {
          source = incumbent.source, knobs = knobs, operator = "linesearch",
          parents = { { id = incumbent.id, role = "parent" } },
          note = ("sweep %d, line %d, new incumbent: %s"):format(sweep, number,
            table.concat(moves, "; ")),
          generation = state.generation,
        } })[1]
        if r and r.status == "ok" then
          incumbent = r
          changed_in_sweep = true
          if records.better(r, best) then best = r end
        end
      end
      avo.progress{ generation = state.generation }
    end
    if not changed_in_sweep then
      if cfg.restart == 0 or avo.exhausted() then break end
      state.restarts = state.restarts + 1
      state.generation = state.generation + 1
      if incumbents[#incumbents] ~= incumbent then incumbents[#incumbents + 1] = incumbent end
      local from = restart(state, cfg.restart, incumbents, state.restarts)
      if not from then break end
      if records.better(from, best) then best = from end
      incumbent = from
      avo.progress{ generation = state.generation }
    end
  end
  return best
end

return M
