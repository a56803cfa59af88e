-- avo.retime — re-timing the bests at the end of every run (and resume):
-- the top k verified candidates of the best's evaluator are timed again in
-- `rounds` interleaved rounds, one evaluation at a time, each in a fresh
-- worker process (a new judge and candidate), each round in a fresh order.
-- The search keeps the maximum of noisy measurements (the winner's curse);
-- the re-timed medians, and the spread between processes, are what the
-- summary, `avo best` and the report give.  Measurements land in the
-- archive as a rebench set (as `avo rebench` stores them) and the ranking as
-- an event of kind "retimed":
--
--   {set = id, evaluator = name, unit =, top =, rounds =,
--    ranked = {{id, rank, recorded, median, mean, sd, low, high, scores,
--               vs = {baseline = median / its median}}, ...},
--    dropped = {{id, recorded, why}, ...},
--    baselines = {{name, median, low, high, scores} or {name, why}, ...}}
--
-- The evaluator's baselines that measured in the run are timed in the same
-- rounds (not stored as rebench results, which are candidates'), so the
-- ratio of a re-timed best to a library is measured under one load.
--
-- A candidate not ok in every round is dropped (never ranked).  `low` and
-- `high` bound where another process's measurement is expected to fall
-- (95% prediction interval from the rounds: mean +- t * sd * sqrt(1 + 1/n)),
-- so the interval reflects variation between processes, not the spread of
-- samples within one.

local core = require "avo.core"
local avo = require "avo"
local sched = require "avo.sched"

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
  local chosen = top_of(r.ok_records or {}, best.evaluator, top)
  local set_id = assert(r.archive:rebench_begin(r.run_id, { top = top, rounds = rounds,
    evaluator = ev._origin, fingerprint = ev.fingerprint, at_end = true }))
  if opts.log then
    opts.log(("avo: re-timing the top %d of %s: %d rounds, interleaved, each evaluation a " ..
      "fresh process"):format(#chosen, ev.name, rounds))
  end
  local rng = avo.rng("avo.retime") -- a stream of its own: the search's stay as they were
  -- The evaluator's baselines that measured in the run are timed in the
  -- same rounds, so the ratios to them compare like with like.
  local extra = {}
  for _, b in ipairs(ev.baseline_list or {}) do
    for _, row in ipairs(r.baseline_rows or {}) do
      if row.evaluator == ev.name and row.status == "ok" and row.score
          and (row.name == b.name or row.name == b.name .. "@" .. ev.name) then
        extra[#extra + 1] = { id = "baseline:" .. row.name, name = row.name, baseline = b }
        break
      end
    end
  end
  local entries = { table.unpack(chosen) }
  for _, e in ipairs(extra) do entries[#entries + 1] = e end
  local scores, failed = {}, {}
  for _, c in ipairs(entries) do scores[c.id] = {} end
  for round = 1, rounds do
    local order = rng:shuffle({ table.unpack(entries) })
    for _, c in ipairs(order) do
      if not failed[c.id] then
        local seed = rng.gen:next() << 21 ~ rng.gen:next()
        local job, result, score
        if c.baseline then
          job = ev:baseline_job(c.baseline, seed, r.cache_dir)
          result = sched.await(sched.submit(job, ev:deadline()))
          local status, reason, s = ev:baseline_verdict(result)
          result.status, result.reason, score = status, reason, s or 0
        else
          job = ev:job({ source = c.source, knobs = c.knobs }, seed, r.cache_dir)
          result = sched.await(sched.submit(job, ev:deadline()))
          score = result.status == "ok" and ev:score_of(result) or 0
        end
        if result.status ~= "ok" or not (score > 0) then
          failed[c.id] = ("%s in round %d: %s"):format(result.status, round,
            (tostring(result.reason or ""):gsub("%s+", " ")):sub(1, 160))
        end
        scores[c.id][round] = score
        result.id = nil
        if not c.baseline then
          assert(r.archive:rebench_add(set_id, c.id, round, score, result))
        end
      end
    end
  end
  local data = { set = set_id, evaluator = ev.name, unit = ev.unit, top = top, rounds = rounds,
                 ranked = setmetatable({}, core.json_array_mt),
                 dropped = setmetatable({}, core.json_array_mt) }
  for _, c in ipairs(chosen) do
    if failed[c.id] then
      data.dropped[#data.dropped + 1] = { id = c.id, recorded = c.score, why = failed[c.id] }
    else
      local xs = scores[c.id]
      local mean, sd = M.mean_std(xs)
      local low, high = M.interval(xs)
      data.ranked[#data.ranked + 1] = { id = c.id, recorded = c.score, median = M.median(xs),
        mean = mean, sd = sd, low = low, high = high,
        scores = setmetatable({ table.unpack(xs) }, core.json_array_mt) }
    end
  end
  data.baselines = setmetatable({}, core.json_array_mt)
  for _, e in ipairs(extra) do
    if failed[e.id] then
      data.baselines[#data.baselines + 1] = { name = e.name, why = failed[e.id] }
    else
      local xs = scores[e.id]
      local low, high = M.interval(xs)
      data.baselines[#data.baselines + 1] = { name = e.name, median = M.median(xs), low = low,
        high = high, scores = setmetatable({ table.unpack(xs) }, core.json_array_mt) }
    end
  end
  -- Each ranked candidate's ratio to each re-timed baseline (medians).
  for _, e in ipairs(data.ranked) do
    for _, b in ipairs(data.baselines) do
      if b.median and b.median > 0 then
        e.vs = e.vs or {}
        e.vs[b.name] = e.median / b.median
      end
    end
  end
  table.sort(data.ranked, function(a, b)
    if a.median ~= b.median then return a.median > b.median end
    return a.id < b.id
  end)
  for i, e in ipairs(data.ranked) do e.rank = i end
  r.archive:event(r.run_id, "retimed", data)
  return data
end

-- The summary's lines for `data` (M.run's), unit of the scores.
function M.lines(data)
  local unit = data.unit or "score"
  local out = { ("re-timed: top %d of %s, %d rounds interleaved, each a fresh process " ..
    "(median, 95%% interval of another process's measurement):"):format(
      #data.ranked + #data.dropped, data.evaluator, data.rounds) }
  for _, e in ipairs(data.ranked) do
    local vs = {}
    for _, b in ipairs(data.baselines or {}) do
      if e.vs and e.vs[b.name] then vs[#vs + 1] = (", %.2fx %s"):format(e.vs[b.name], b.name) end
    end
    out[#out + 1] = ("  %d. #%d %.4g %s [%.4g, %.4g] (recorded %.4g, %+.1f%%)%s"):format(e.rank,
      e.id, e.median, unit, e.low, e.high, e.recorded,
      e.recorded > 0 and (e.median / e.recorded - 1) * 100 or 0, table.concat(vs))
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
