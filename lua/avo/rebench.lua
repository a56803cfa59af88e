-- avo.rebench — `avo rebench`: re-time the top versions of a run and its
-- seed, interleaved in rounds on one worker, and store the set.

local core = require "avo.core"
local avo = require "avo"
local sched = require "avo.sched"
local S = require "avo.session"
local scaleout = require "avo.scaleout"
local retime = require "avo.retime"

local M = {}

---------------------------------------------------------------- avo rebench

-- The statistics the end-of-run re-timing uses too (avo.retime).
local mean_std = retime.mean_std

-- The evaluator a run used, reloaded from where it was found then.
local function run_evaluator(archive, run_id)
  local events = assert(archive:events(run_id, "evaluator"))
  local last = events[#events]
  if not last then return nil, "the run recorded no evaluator" end
  local ok, ev = pcall(avo.evaluator, last.data.origin)
  if not ok then return nil, tostring(ev) end
  return ev, nil, ev.fingerprint ~= last.data.fingerprint
end

-- The top `top` verified candidates of run `run_id` by recorded score, the
-- run's re-timed #1 when they do not include it, and the seed.  Returns
-- the list and the seed (nil when it is not verified).
local function choose(archive, run_id, top)
  local ok_cands, seed = {}, nil
  for _, c in ipairs(assert(archive:candidates(run_id, true))) do
    if c.status == "ok" then ok_cands[#ok_cands + 1] = c end
    if c.operator == "seed" and c.status == "ok" and not seed then seed = c end
  end
  table.sort(ok_cands, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.id < b.id
  end)
  local chosen, seen = {}, {}
  for i = 1, math.min(top, #ok_cands) do
    chosen[#chosen + 1] = ok_cands[i]
    seen[ok_cands[i].id] = true
  end
  -- The run's best, its re-timed #1 (avo.retime), is timed too when the
  -- recorded scores do not put it in the top K.
  local retimed = assert(archive:events(run_id, "retimed"))
  local last = retimed[#retimed] and retimed[#retimed].data or {}
  local first = last.best or (last.ranked and last.ranked[1] and last.ranked[1].id)
  for _, c in ipairs(ok_cands) do
    if c.id == first and not seen[c.id] then
      chosen[#chosen + 1] = c
      seen[c.id] = true
    end
  end
  if seed and not seen[seed.id] then chosen[#chosen + 1] = seed end
  return chosen, seed
end

-- The GPUs every candidate is timed on: CUDA on several GPUs times each
-- candidate on each device (pinned jobs, the devices in parallel), so
-- devices can be compared; `devices` (already checked) or every GPU.
-- { false } (the pool's choice) otherwise.
local function devices_of(ev, devices, pool)
  if ev.backend ~= "cuda" then return { false } end
  local list = devices and assert(scaleout.parse_devices(devices, core.cuda_devices))
  if not list then
    local n = core.cuda_devices()
    if n > 1 then
      list = {}
      for d = 0, n - 1 do list[#list + 1] = d end
    end
  end
  if not list or #list == 0 then return { false } end
  pool:set_devices(list)
  return list
end

-- Times every entry (candidates, then baselines) `rounds` times, in a
-- fresh order each round so drift over time falls on all alike, on every
-- device; files each candidate's results in set `set_id`.  Returns the
-- per-round scores (the mean over devices), the per-config rates (first
-- device), the scores by device, and for each entry that was not ok its
-- first such round (and device), status and reason: such a candidate is
-- shown failed, never ranked.
local function time_rounds(ev, run, archive, set_id, entries, devices, rounds)
  local order_rng = avo.rng("rebench")
  local scores, per_config, by_device, failed = {}, {}, {}, {}
  for _, c in ipairs(entries) do
    scores[c.id], per_config[c.id], by_device[c.id] = {}, {}, {}
    for k = 1, #devices do by_device[c.id][k] = {} end
  end
  for round = 1, rounds do
    local order = order_rng:shuffle({ table.unpack(entries) })
    for _, c in ipairs(order) do
      local seed_value = run.inputs:next() << 21 ~ run.inputs:next()
      local tickets = {}
      for k, d in ipairs(devices) do
        local job = c.baseline and ev:baseline_job(c.baseline, seed_value, run.cache_dir)
          or ev:job({ source = c.source, knobs = c.knobs }, seed_value, run.cache_dir)
        if d then job.device = d end
        tickets[k] = sched.submit(job, ev:deadline())
      end
      local sum = 0
      for k, ticket in ipairs(tickets) do
        local result = sched.await(ticket)
        local score
        if c.baseline then
          local status, reason, v = ev:baseline_verdict(result)
          result.status, result.reason, score = status, reason, v or 0
        else
          score = ev:score_of(result)
        end
        if (result.status ~= "ok" or not (score > 0)) and not failed[c.id] then
          failed[c.id] = ("%s in round %d%s: %s"):format(result.status, round,
            devices[k] and (" on gpu " .. devices[k]) or "",
            tostring(result.reason or ""):gsub("%s+", " "):sub(1, 160))
        end
        by_device[c.id][k][round] = score
        sum = sum + score
        if k == 1 then per_config[c.id][round] = retime.config_rates(result) end
        result.id = nil
        if not c.baseline then
          assert(archive:rebench_add(set_id, c.id, (round - 1) * #devices + k, score, result))
        end
      end
      scores[c.id][round] = sum / #devices
    end
  end
  return scores, per_config, by_device, failed
end

-- The set as a table: rank, recorded and re-timed figures, the paired
-- ratios per round, the failed, the baselines, and with several GPUs each
-- candidate on each device against the first.
local function print_set(data, info, ev, set_id, rounds, chosen, seed, devices, by_device)
  local by_id = {}
  for _, c in ipairs(chosen) do by_id[c.id] = c end
  local unit = ev.unit
  io.stdout:write(("rebench set %d of run %d (%s, %d rounds)\n"):format(set_id, info.id, ev.name,
    rounds))
  io.stdout:write(("%-5s %-7s %-22s %12s %14s %22s  %s\n"):format("rank", "cand", "operator",
    "recorded", "median " .. unit, "interval", "paired per round (median [95% interval])"))
  for _, e in ipairs(data.ranked) do
    local c = by_id[e.id]
    local text = retime.paired_text(e)
    if seed and e.id == seed.id then text = "the seed" .. (text ~= "" and (", " .. text) or "") end
    io.stdout:write(("%-5s %-7s %-22s %12.4g %14.4g %22s  %s\n"):format(e.rank, "#" .. e.id,
      c.operator:sub(1, 22), c.score, e.median, ("[%.4g, %.4g]"):format(e.low, e.high), text))
  end
  for _, e in ipairs(data.dropped) do
    io.stdout:write(("%-5s %-7s %-22s %12.4g failed: %s\n"):format("-", "#" .. e.id,
      by_id[e.id].operator:sub(1, 22), e.recorded, core.inert(e.why, true)))
  end
  for _, b in ipairs(data.baselines) do
    if b.median then
      io.stdout:write(("baseline %s in the same rounds: %.4g %s [%.4g, %.4g]\n"):format(b.name,
        b.median, unit, b.low, b.high))
    else
      io.stdout:write(("baseline %s in the same rounds: %s\n"):format(b.name, core.inert(b.why, true)))
    end
  end
  if #data.dropped > 0 then
    io.stdout:write(("%d candidate(s) not ok in every round: not ranked\n"):format(#data.dropped))
  end
  if #devices < 2 then return end
  -- The same candidates on each GPU: the ratio to the first GPU shows a
  -- device that is slower (clocks, thermals, a neighbour) for all alike.
  local head = { ("%-7s"):format("cand") }
  for _, d in ipairs(devices) do head[#head + 1] = ("%18s"):format("gpu " .. d) end
  io.stdout:write("per device (mean +- std ", unit, "; ratio to gpu ", devices[1], "):\n",
    table.concat(head, " "), "\n")
  for _, e in ipairs(data.ranked) do
    local row = { ("%-7s"):format("#" .. e.id) }
    local first = mean_std(by_device[e.id][1])
    for k = 1, #devices do
      local m, sd = mean_std(by_device[e.id][k])
      row[#row + 1] = ("%18s"):format(("%.4g +- %.2g (%.2fx)"):format(m, sd,
        first > 0 and m / first or 0))
    end
    io.stdout:write(table.concat(row, " "), "\n")
  end
end

-- opts: db, run, top, rounds, devices ("0,2"), json
function M.rebench(opts)
  local db, top, rounds = opts.db, opts.top or 5, opts.rounds or 5
  -- --devices is checked as `avo run` checks it, whatever the run's backend.
  if opts.devices then
    local list, derr = scaleout.parse_devices(opts.devices, core.cuda_devices)
    if not list then
      S.eprintf("avo: %s\n", derr)
      return 2
    end
  end
  local archive, pool = S.open_engine({ jobs = 1 }, db)
  if not archive then return 1 end
  local function give_up(code, ...)
    S.eprintf(...)
    archive:close()
    pool:close()
    return code
  end
  local info, err = archive:run_get(opts.run or 0)
  if not info then return give_up(1, "avo: %s\n", err or ("no run in " .. db)) end
  local ev, everr, changed = run_evaluator(archive, info.id)
  if not ev then return give_up(1, "avo: cannot rebench run %d: %s\n", info.id, everr) end
  if opts.devices and ev.backend ~= "cuda" then
    return give_up(2, "avo: --devices applies to CUDA runs; run %d's evaluator %s is a %s one\n",
      info.id, ev.name or ev._origin, ev.backend)
  end
  if not sched.measures_time(ev.backend) then
    return give_up(1, "avo: run %d used the in-process test backend; there is nothing to time\n",
      info.id)
  end
  if changed then
    S.eprintf("avo: warning: evaluator %s changed since run %d; timing with the current one\n",
      ev._origin, info.id)
  end
  local chosen, seed = choose(archive, info.id, top)
  if #chosen == 0 then
    return give_up(1, "avo: run %d has no verified candidate to rebench\n", info.id)
  end

  local set_id = assert(archive:rebench_begin(info.id, { top = top, rounds = rounds,
    evaluator = ev._origin, fingerprint = ev.fingerprint, engine = S.engine_version() }))
  local run = S.begin_run{ archive = archive, pool = pool, run_id = info.id, seed = info.seed }
  local devices = devices_of(ev, opts.devices, pool)
  -- The run's baselines of this evaluator that measured are timed in the
  -- same rounds (avo.retime), so every ratio below is paired by round.
  local extra = retime.baseline_entries(ev, assert(archive:baselines(info.id)))
  local entries = { table.unpack(chosen) }
  for _, e in ipairs(extra) do entries[#entries + 1] = e end
  S.eprintf("avo: rebench of run %d: %d candidates%s x %d rounds, interleaved, one at a time%s\n",
    info.id, #chosen, #extra > 0 and (" and %d baseline(s)"):format(#extra) or "", rounds,
    devices[1] and (" on each of %d GPUs"):format(#devices) or "")
  local ok, scores, per_config, by_device, failed = pcall(sched.run, function()
    return time_rounds(ev, run, archive, set_id, entries, devices, rounds)
  end)
  avo._end()
  pool:close()
  if not ok then
    archive:close()
    S.eprintf("avo: %s\n", tostring(scores))
    return 1
  end

  -- Ranked by the median of the rounds, only candidates ok in every round
  -- (and on every device); each paired per round with the seed and the
  -- baselines (avo.retime computes the figures, as at the end of a run).
  local data = retime.collect(ev, chosen, seed, extra, scores, per_config, failed,
    { set = set_id, top = top, rounds = rounds, rebench = true })
  assert(archive:event(info.id, "rebenched", data))
  if opts.json then
    io.stdout:write(core.json_encode(data), "\n")
  else
    print_set(data, info, ev, set_id, rounds, chosen, seed, devices, by_device)
  end
  archive:close()
  return 0
end

return M
