-- avo.retime — re-timing the bests at the end of every run (and resume):
-- the top k verified candidates of the best's evaluator, its seed and its
-- baselines are timed again in `rounds` interleaved rounds, one evaluation
-- at a time, each in a fresh worker process (a new judge and candidate),
-- each round in a fresh order.  The search keeps the maximum of noisy
-- measurements (the winner's curse); the re-timed #1 is the run's best in
-- every view (the summary, the status line, `avo best`/`show`/`runs`, the
-- report, the exports: cli/paired.c reads what this module stores), with
-- its ratios to the seed and to each baseline *paired*: candidate/baseline
-- within each round, then the median and 95% interval over the rounds,
-- overall and per config (M.paired, M.pair_all; `avo rebench` uses the same
-- functions).  Measurements land in the archive as a rebench set (as `avo
-- rebench` stores them) and the figures as an event of kind "retimed":
--
--   {set = id, evaluator = name, unit =, top =, rounds =, paired = true,
--    best = the re-timed #1's id,
--    ranked = {{id, rank, recorded, median, mean, sd, low, high, scores,
--               configs = {{name, scores}, ...},
--               paired = {{against = "seed" | baseline name, id (the seed's),
--                          median, low, high, ratios,
--                          configs = {{name, median, low, high}, ...}}, ...},
--               vs = {baseline = paired median}}, ...},
--    dropped = {{id, recorded, why}, ...},
--    seed = {id, recorded, median, low, high, scores, configs} or {id, recorded, why},
--    baselines = {{name, median, low, high, scores, configs} or {name, why}, ...}}
--
-- (Events from before pairing lack `paired` and `seed`, and their `vs` is a
-- ratio of medians; the views say so.)  Baselines are not stored as rebench
-- results, which are candidates'.
--
-- A candidate not ok in every round is dropped (never ranked).  `low` and
-- `high` bound where another process's measurement is expected to fall
-- (95% prediction interval from the rounds: mean +- t * sd * sqrt(1 + 1/n)),
-- so the interval reflects variation between processes, not the spread of
-- samples within one; for a paired ratio, where another round's ratio falls.

local core = require "avo.core"
local avo = require "avo"
local sched = require "avo.sched"
local baselines = require "avo.baselines"
local pipeline = require "avo.pipeline"

local M = {}

-- Defaults: the top 5, 3 rounds (15 evaluations after the search; small
-- next to a run, and bench/noise.sh shows 3 rounds' interval covering the
-- run-to-run variation).
M.TOP, M.ROUNDS = 5, 3

function M.median(xs)
  local sorted = { table.unpack(xs) }
  table.sort(sorted)
  local n = #sorted
  if n == 0 then return 0 end
  if n % 2 == 1 then return sorted[(n + 1) // 2] end
  return (sorted[n // 2] + sorted[n // 2 + 1]) / 2
end

function M.mean_std(xs)
  local n, sum = #xs, 0
  for _, x in ipairs(xs) do sum = sum + x end
  local mean = n > 0 and sum / n or 0
  local var = 0
  for _, x in ipairs(xs) do var = var + (x - mean) ^ 2 end
  return mean, n > 1 and math.sqrt(var / (n - 1)) or 0
end

-- Student's t, two-sided 95%, by degrees of freedom (1..30; beyond: 1.96).
local T95 = { 12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060,
  2.056, 2.052, 2.048, 2.045, 2.042 }

-- The 95% prediction interval of one more measurement from `xs` (>= 2
-- values): low, high.  One value: that value twice (no spread known).
function M.interval(xs)
  local n = #xs
  local mean, sd = M.mean_std(xs)
  if n < 2 then return mean, mean end
  local t = T95[n - 1] or 1.96
  local half = t * sd * math.sqrt(1 + 1 / n)
  return math.max(mean - half, 0), mean + half
end

-- The top `top` ok records of evaluator `name` among `records`, by score.
local function top_of(records, name, top)
  local list = {}
  for _, rec in ipairs(records) do
    if rec.status == "ok" and rec.evaluator == name and rec.score > 0 then
      list[#list + 1] = rec
    end
  end
  table.sort(list, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.id < b.id
  end)
  local out, seen = {}, {}
  for _, rec in ipairs(list) do
    if #out >= top then break end
    if not seen[rec.id] then
      seen[rec.id] = true
      out[#out + 1] = rec
    end
  end
  return out
end

-- Whether evaluator `ev` times anything worth re-timing.
local function times(ev)
  return ev and sched.measures_time(ev.backend) and not (ev.timing and ev.timing.enabled == false)
end

-- Per-config throughput of a result (baselines.rate: GFLOP/s, else GB/s,
-- else 1/time), by config name; {} when it has none.
function M.config_rates(result)
  local out = {}
  for _, c in ipairs(type(result.configs) == "table" and result.configs or {}) do
    local v = baselines.rate(c)
    if c.name and v and c.correct ~= false and not c.unavailable then out[c.name] = v end
  end
  return out
end

local function array(t) return setmetatable(t, core.json_array_mt) end

-- The paired ratio of `xs` to `ys`, two lists of scores by round: the ratio
-- xs[r] / ys[r] in each round r where both measured, and the median and the
-- 95% prediction interval of those per-round ratios (of another round's):
-- {median, low, high, ratios}, or nil when no round has both.  Pairing by
-- round cancels what a round's load does to both (the noisy neighbour, the
-- turbo state), which a ratio of two medians does not.
function M.paired(xs, ys)
  local ratios = {}
  for round = 1, math.max(#xs, #ys) do
    local x, y = xs[round], ys[round]
    if type(x) == "number" and type(y) == "number" and x > 0 and y > 0 then
      ratios[#ratios + 1] = x / y
    end
  end
  if #ratios == 0 then return nil end
  -- The interval of a ratio is taken on its logarithm (M.interval there,
  -- then back): a ratio is multiplicative, so 0.5x and 2x are as far from
  -- 1x, and the bounds stay positive.
  local logs = {}
  for i, x in ipairs(ratios) do logs[i] = math.log(x) end
  local mean, sd = M.mean_std(logs)
  local half = 0
  if #logs > 1 then half = (T95[#logs - 1] or 1.96) * sd * math.sqrt(1 + 1 / #logs) end
  return { median = M.median(ratios), low = math.exp(mean - half), high = math.exp(mean + half),
           ratios = array(ratios) }
end

-- The summary of one entry's rounds: {median, mean, sd, low, high, scores,
-- configs = {{name, scores}, ...}} in `names` order.
local function summary_of(scores, per_config, names)
  local mean, sd = M.mean_std(scores)
  local low, high = M.interval(scores)
  local configs = array({})
  for _, name in ipairs(names) do
    local xs = {}
    for round = 1, #scores do xs[round] = per_config[round] and per_config[round][name] or 0 end
    configs[#configs + 1] = { name = name, scores = array(xs) }
  end
  return { median = M.median(scores), mean = mean, sd = sd, low = low, high = high,
           scores = array({ table.unpack(scores) }), configs = configs }
end

-- One paired ratio of `entry` to `against` (both summary_of), overall and per
-- config: {against = label, median, low, high, ratios, configs = {{name,
-- median, low, high}, ...}}, or nil.
local function pair(entry, against, label, extra)
  local p = M.paired(entry.scores, against.scores)
  if not p then return nil end
  p.against = label
  for k, v in pairs(extra or {}) do p[k] = v end
  local theirs = {}
  for _, c in ipairs(against.configs or {}) do theirs[c.name] = c.scores end
  p.configs = array({})
  for _, c in ipairs(entry.configs or {}) do
    local q = theirs[c.name] and M.paired(c.scores, theirs[c.name])
    if q then
      p.configs[#p.configs + 1] = { name = c.name, median = q.median, low = q.low, high = q.high }
    end
  end
  return p
end

-- The paired ratios of every ranked entry of `data` to the seed (data.seed)
-- and to each baseline of data.baselines that measured in every round:
-- entry.paired = {{against = "seed", id =, ...}, {against = NAME, ...}, ...}
-- (the seed first, the baselines in the evaluator's order), and entry.vs =
-- {NAME = the paired median} (what archives before pairing held: the ratio
-- of medians).  The one place these figures are computed: the end of a run
-- and `avo rebench` both call it, and every view reads what it stored.
function M.pair_all(data)
  data.paired = true
  for _, e in ipairs(data.ranked) do
    e.paired = array({})
    local seed = data.seed
    if seed and seed.median and seed.id ~= e.id then
      e.paired[#e.paired + 1] = pair(e, seed, "seed", { id = seed.id })
    end
    for _, b in ipairs(data.baselines or {}) do
      local p = b.median and pair(e, b, b.name)
      if p then
        e.paired[#e.paired + 1] = p
        e.vs = e.vs or {}
        e.vs[b.name] = p.median
      end
    end
  end
  data.best = data.ranked[1] and data.ranked[1].id or nil
end

-- The seed of evaluator `name` among `records` (the first verified record
-- whose operator is "seed"), or nil.
local function seed_of(records, name)
  for _, rec in ipairs(records) do
    if rec.status == "ok" and rec.evaluator == name and rec.operator == "seed" then return rec end
  end
  return nil
end

-- Time `entries` in `rounds` interleaved rounds, a fresh order each round
-- (rng:shuffle), one evaluation at a time: each entry is a candidate record
-- ({id, source, knobs}) or a baseline ({id = "baseline:NAME", baseline}).
-- `store(entry, round, score, result)` is called for every measurement.
-- Returns scores[id][round], per_config[id][round][config], failed[id]
-- (why an entry was not ok in some round; it is not timed after that).
function M.time_rounds(ev, entries, rounds, rng, cache_dir, store)
  local scores, per_config, failed = {}, {}, {}
  for _, c in ipairs(entries) do scores[c.id], per_config[c.id] = {}, {} end
  for round = 1, rounds do
    local order = rng:shuffle({ table.unpack(entries) })
    for _, c in ipairs(order) do
      if not failed[c.id] then
        local seed = rng.gen:next() << 21 ~ rng.gen:next()
        local result, score
        if c.baseline then
          result = sched.await(sched.submit(ev:baseline_job(c.baseline, seed, cache_dir),
            ev:deadline()))
          local status, reason, s = ev:baseline_verdict(result)
          result.status, result.reason, score = status, reason, s or 0
        else
          result = sched.await(sched.submit(ev:job({ source = c.source, knobs = c.knobs }, seed,
            cache_dir), ev:deadline()))
          score = result.status == "ok" and ev:score_of(result) or 0
        end
        if result.status ~= "ok" or not (score > 0) then
          failed[c.id] = ("%s in round %d: %s"):format(result.status, round,
            (tostring(result.reason or ""):gsub("%s+", " ")):sub(1, 160))
        end
        scores[c.id][round] = score
        per_config[c.id][round] = M.config_rates(result)
        result.id = nil
        if store then store(c, round, score, result) end
      end
    end
  end
  return scores, per_config, failed
end

-- The baselines of evaluator `ev` that measured in run `r` (its
-- baseline_rows), as entries for M.time_rounds.
function M.baseline_entries(ev, rows)
  local extra = {}
  for _, b in ipairs(ev.baseline_list or {}) do
    for _, row in ipairs(rows or {}) do
      if row.evaluator == ev.name and row.status == "ok" and row.score
          and (row.name == b.name or row.name == b.name .. "@" .. ev.name) then
        extra[#extra + 1] = { id = "baseline:" .. row.name, name = row.name, baseline = b }
        break
      end
    end
  end
  return extra
end

-- The event data of timed `entries` (M.time_rounds' results): ranked
-- candidates (`chosen`, by median), dropped ones, the seed (`seed`, when it
-- was timed), the baselines (`extra`), each paired (M.pair_all).
function M.collect(ev, chosen, seed, extra, scores, per_config, failed, head)
  local names = {}
  for _, c in ipairs(ev.configs or {}) do names[#names + 1] = c.name end
  local data = head
  data.evaluator, data.unit = ev.name, ev.unit
  data.ranked, data.dropped = array({}), array({})
  for _, c in ipairs(chosen) do
    if failed[c.id] then
      data.dropped[#data.dropped + 1] = { id = c.id, recorded = c.score, why = failed[c.id] }
    else
      local e = summary_of(scores[c.id], per_config[c.id], names)
      e.id, e.recorded = c.id, c.score
      data.ranked[#data.ranked + 1] = e
    end
  end
  if seed then
    if failed[seed.id] then
      data.seed = { id = seed.id, recorded = seed.score, why = failed[seed.id] }
    else
      data.seed = summary_of(scores[seed.id], per_config[seed.id], names)
      data.seed.id, data.seed.recorded = seed.id, seed.score
    end
  end
  data.baselines = array({})
  for _, e in ipairs(extra) do
    if failed[e.id] then
      data.baselines[#data.baselines + 1] = { name = e.name, why = failed[e.id] }
    else
      local b = summary_of(scores[e.id], per_config[e.id], names)
      b.name, b.mean, b.sd = e.name, nil, nil
      data.baselines[#data.baselines + 1] = b
    end
  end
  table.sort(data.ranked, function(a, b)
    if a.median ~= b.median then return a.median > b.median end
    return a.id < b.id
  end)
  for i, e in ipairs(data.ranked) do e.rank = i end
  M.pair_all(data)
  return data
end

-- Re-time run `r`'s bests (r as avo._begin made it, inside sched.run).
-- opts: top, rounds (defaults M.TOP, M.ROUNDS; top 0 turns it off), log
-- (function(line)).  Returns the event data above, or nil with why not.
function M.run(r, opts)
  opts = opts or {}
  local top = opts.top or M.TOP
  local rounds = opts.rounds or M.ROUNDS
  if top < 1 or rounds < 1 then return nil, "off" end
  local best = r.best
  if not best then return nil, "no verified candidate" end
  local ev = r.evaluator_objects and r.evaluator_objects[best.evaluator]
  if not times(ev) then return nil, "the evaluator times nothing" end
  local ok_records = pipeline.ok_records(r)
  local chosen = top_of(ok_records, best.evaluator, top)
  -- The seed is timed in the same rounds (once, if it is among the top), so
  -- the speedup over it is paired too.
  local seed = seed_of(ok_records, best.evaluator)
  local entries = { table.unpack(chosen) }
  local seed_in_top = false
  for _, c in ipairs(chosen) do seed_in_top = seed_in_top or (seed and c.id == seed.id) end
  if seed and not seed_in_top then entries[#entries + 1] = seed end
  local set_id = assert(r.archive:rebench_begin(r.run_id, { top = top, rounds = rounds,
    evaluator = ev._origin, fingerprint = ev.fingerprint, at_end = true }))
  if opts.log then
    opts.log(("avo: re-timing the top %d of %s%s: %d rounds, interleaved, each evaluation a " ..
      "fresh process"):format(#chosen, ev.name, seed and not seed_in_top and " and its seed" or "",
      rounds))
  end
  local rng = avo.rng("avo.retime") -- a stream of its own: the search's stay as they were
  -- The evaluator's baselines that measured in the run are timed in the
  -- same rounds (not stored as rebench results, which are candidates').
  local extra = M.baseline_entries(ev, r.baseline_rows)
  for _, e in ipairs(extra) do entries[#entries + 1] = e end
  local scores, per_config, failed = M.time_rounds(ev, entries, rounds, rng, r.cache_dir,
    function(c, round, score, result)
      if not c.baseline then assert(r.archive:rebench_add(set_id, c.id, round, score, result)) end
    end)
  local data = M.collect(ev, chosen, seed, extra, scores, per_config, failed,
    { set = set_id, top = top, rounds = rounds })
  r.archive:event(r.run_id, "retimed", data)
  return data
end

-- One paired ratio as every view prints it: "0.22x openblas [0.20, 0.24]"
-- (median and 95% interval of the per-round ratios; "seed #1" for the seed).
function M.ratio_text(p)
  local label = p.against == "seed" and ("seed #%d"):format(p.id or 0) or tostring(p.against)
  return ("%.2fx %s [%.2f, %.2f]"):format(p.median, label, p.low, p.high)
end

-- Entry `e`'s paired ratios, joined: "8.13x seed #1 [7.90, 8.40], 0.22x
-- openblas [0.20, 0.24]" ("" when it has none).
function M.paired_text(e)
  local parts = {}
  for _, p in ipairs(e.paired or {}) do parts[#parts + 1] = M.ratio_text(p) end
  return table.concat(parts, ", ")
end

-- The re-timed entry of candidate `id` in `data`, or nil.
function M.entry(data, id)
  for _, e in ipairs(data and data.ranked or {}) do
    if e.id == id then return e end
  end
  return nil
end

-- The lines that give the re-timed best (data.ranked[1]) first in a
-- summary, `described` its "#7 (param_tweak, generation 2)":
--   best #7 (...), re-timed: 23.34 GFLOP/s [17.3, 28.36] (median of 3 rounds, each a
--     fresh process); recorded 22.63 GFLOP/s
--     paired per round (median [95% interval]): 8.13x seed #1 [7.90, 8.40],
--     0.22x openblas [0.20, 0.24]
--     openblas per config, paired: 128x128x128 0.24x [0.21, 0.27], ...
-- nil when no candidate re-timed ok in every round.
function M.headline(data, described)
  local e = data.ranked[1]
  if not e then return nil end
  local unit = data.unit or "score"
  local out = { ("best %s, re-timed: %.4g %s [%.4g, %.4g] (median of %d rounds, each a fresh " ..
    "process); recorded %.4g %s"):format(described, e.median, unit, e.low, e.high, data.rounds,
    e.recorded, unit) }
  local text = M.paired_text(e)
  if text ~= "" then
    out[#out + 1] = "  paired per round (median [95% interval]): " .. text
  end
  for _, p in ipairs(e.paired or {}) do
    if p.against ~= "seed" and #(p.configs or {}) > 0 then
      local parts = {}
      for _, c in ipairs(p.configs) do
        parts[#parts + 1] = ("%s %.2fx [%.2f, %.2f]"):format(c.name, c.median, c.low, c.high)
      end
      out[#out + 1] = ("  %s per config, paired: %s"):format(p.against, table.concat(parts, ", "))
    end
  end
  return out
end

-- The summary's lines for `data` (M.run's), unit of the scores: the
-- ranking after re-timing.
function M.lines(data)
  local unit = data.unit or "score"
  local out = { ("re-timed: top %d of %s, %d rounds interleaved, each a fresh process " ..
    "(median, 95%% interval of another process's measurement):"):format(
      #data.ranked + #data.dropped, data.evaluator, data.rounds) }
  for _, e in ipairs(data.ranked) do
    local text = M.paired_text(e)
    out[#out + 1] = ("  %d. #%d %.4g %s [%.4g, %.4g] (recorded %.4g, %+.1f%%)%s"):format(e.rank,
      e.id, e.median, unit, e.low, e.high, e.recorded,
      e.recorded > 0 and (e.median / e.recorded - 1) * 100 or 0,
      text ~= "" and (", " .. text) or "")
  end
  local seed = data.seed
  if seed and not M.entry(data, seed.id) then
    if seed.median then
      out[#out + 1] = ("  seed #%d in the same rounds: %.4g %s [%.4g, %.4g] (recorded %.4g)")
        :format(seed.id, seed.median, unit, seed.low, seed.high, seed.recorded)
    else
      out[#out + 1] = ("  seed #%d in the same rounds: %s"):format(seed.id, seed.why)
    end
  end
  for _, b in ipairs(data.baselines or {}) do
    if b.median then
      out[#out + 1] = ("  baseline %s in the same rounds: %.4g %s [%.4g, %.4g]"):format(b.name,
        b.median, unit, b.low, b.high)
    else
      out[#out + 1] = ("  baseline %s in the same rounds: %s"):format(b.name, b.why)
    end
  end
  for _, e in ipairs(data.dropped) do
    out[#out + 1] = ("  -  #%d out: %s"):format(e.id, e.why)
  end
  return out
end

return M
