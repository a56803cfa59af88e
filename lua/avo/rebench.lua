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
local median, mean_std = retime.median, retime.mean_std

-- The evaluator a run used, reloaded from where it was found then.
local function run_evaluator(archive, run_id)
  local events = assert(archive:events(run_id, "evaluator"))
  local last = events[#events]
  if not last then return nil, "the run recorded no evaluator" end
  local ok, ev = pcall(avo.evaluator, last.data.origin)
  if not ok then return nil, tostring(ev) end
  return ev, nil, ev.fingerprint ~= last.data.fingerprint
end

-- opts: db, run, top, rounds, devices ("0,2")
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
  local info, err = archive:run_get(opts.run or 0)
  if not info then
    S.eprintf("avo: %s\n", err or ("no run in " .. db))
    return 1
  end
  local ev, everr, changed = run_evaluator(archive, info.id)
  if not ev then
    S.eprintf("avo: cannot rebench run %d: %s\n", info.id, everr)
    return 1
  end
  if opts.devices and ev.backend ~= "cuda" then
    S.eprintf("avo: --devices applies to CUDA runs; run %d's evaluator %s is a %s one\n",
      info.id, ev.name or ev._origin, ev.backend)
    archive:close()
    pool:close()
    return 2
  end
  if not sched.measures_time(ev.backend) then
    S.eprintf("avo: run %d used the in-process test backend; there is nothing to time\n", info.id)
    return 1
  end
  if changed then
    S.eprintf("avo: warning: evaluator %s changed since run %d; timing with the current one\n",
      ev._origin, info.id)
  end

  -- The top K verified candidates and the seed.
  local ok_cands, seed = {}, nil
  for _, c in ipairs(assert(archive:candidates(info.id, true))) do
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
  if seed and not seen[seed.id] then chosen[#chosen + 1] = seed end
  if #chosen == 0 then
    S.eprintf("avo: run %d has no verified candidate to rebench\n", info.id)
    return 1
  end

  local set_id = assert(archive:rebench_begin(info.id, { top = top, rounds = rounds,
    evaluator = ev._origin, fingerprint = ev.fingerprint, engine = S.engine_version() }))
  local run = S.begin_run{ archive = archive, pool = pool, run_id = info.id, seed = info.seed }
  -- CUDA on several GPUs: every candidate is timed on each device (pinned
  -- jobs, the devices in parallel), so devices can be compared.
  local devices = { false }
  if ev.backend == "cuda" then
    local list, derr
    if opts.devices then
      list, derr = scaleout.parse_devices(opts.devices, core.cuda_devices)
      if not list then
        S.eprintf("avo: %s\n", derr)
        archive:close()
        pool:close()
        return 2
      end
    end
    if not list then
      local n = core.cuda_devices()
      if n > 1 then
        list = {}
        for d = 0, n - 1 do list[#list + 1] = d end
      end
    end
    if list and #list > 0 then
      pool:set_devices(list)
      devices = list
    end
  end
  local order_rng = avo.rng("rebench")
  -- failed[id]: the first round (and device) a candidate was not ok, with
  -- its status and reason; such a candidate is shown failed, never ranked.
  local scores, by_device, failed = {}, {}, {}
  for _, c in ipairs(chosen) do
    scores[c.id], by_device[c.id] = {}, {}
    for k = 1, #devices do by_device[c.id][k] = {} end
  end
  S.eprintf("avo: rebench of run %d: %d candidates x %d rounds, interleaved, one at a time%s\n",
    info.id, #chosen, rounds, devices[1] and (" on each of %d GPUs"):format(#devices) or "")
  local ok, rerr = pcall(sched.run, function()
    for round = 1, rounds do
      -- A fresh order each round, so drift over time falls on all alike.
      local order = order_rng:shuffle({ table.unpack(chosen) })
      for _, c in ipairs(order) do
        local cand = { source = c.source, knobs = c.knobs }
        local seed_value = run.inputs:next() << 21 ~ run.inputs:next()
        local tickets = {}
        for k, d in ipairs(devices) do
          local job = ev:job(cand, seed_value, run.cache_dir)
          if d then job.device = d end
          tickets[k] = sched.submit(job, ev:deadline())
        end
        local sum = 0
        for k, ticket in ipairs(tickets) do
          local result = sched.await(ticket)
          local score = ev:score_of(result)
          if result.status ~= "ok" and not failed[c.id] then
            failed[c.id] = ("%s in round %d%s: %s"):format(result.status, round,
              devices[k] and (" on gpu " .. devices[k]) or "",
              tostring(result.reason or ""):gsub("%s+", " "):sub(1, 160))
          end
          by_device[c.id][k][round] = score
          sum = sum + score
          result.id = nil
          assert(archive:rebench_add(set_id, c.id, (round - 1) * #devices + k, score, result))
        end
        scores[c.id][round] = sum / #devices
      end
    end
  end)
  avo._end()
  pool:close()
  if not ok then
    archive:close()
    S.eprintf("avo: %s\n", tostring(rerr))
    return 1
  end

  -- Ranked by the median of the rounds, only candidates ok in every round
  -- (and on every device); the paired speedup needs an ok seed too.
  local unit = ev.unit
  local ranked, dropped = {}, {}
  for _, c in ipairs(chosen) do
    if failed[c.id] then dropped[#dropped + 1] = c else ranked[#ranked + 1] = c end
  end
  local medians = {}
  for _, c in ipairs(ranked) do medians[c.id] = median(scores[c.id]) end
  table.sort(ranked, function(a, b)
    if medians[a.id] ~= medians[b.id] then return medians[a.id] > medians[b.id] end
    return a.id < b.id
  end)
  local base_ok = seed and not failed[seed.id]
  io.stdout:write(("rebench set %d of run %d (%s, %d rounds)\n"):format(set_id, info.id, ev.name,
    rounds))
  io.stdout:write(("%-5s %-7s %-22s %12s %14s %22s %20s\n"):format("rank", "cand", "operator",
    "recorded", "median " .. unit, "mean +- std", "speedup vs seed"))
  for rank, c in ipairs(ranked) do
    local mean, std = mean_std(scores[c.id])
    local speedup = "-"
    if base_ok then
      local ratios = {}
      for r = 1, rounds do
        local base = scores[seed.id][r]
        if base and base > 0 then ratios[#ratios + 1] = scores[c.id][r] / base end
      end
      local m, sd = mean_std(ratios)
      speedup = ("%.2fx +- %.2f"):format(m, sd)
    end
    io.stdout:write(("%-5s %-7s %-22s %12.4g %14.4g %22s %20s\n"):format(rank, "#" .. c.id,
      c.operator:sub(1, 22), c.score, medians[c.id], ("%.4g +- %.2g"):format(mean, std), speedup))
  end
  for _, c in ipairs(dropped) do
    io.stdout:write(("%-5s %-7s %-22s %12.4g failed: %s\n"):format("-", "#" .. c.id,
      c.operator:sub(1, 22), c.score, core.inert(failed[c.id], true)))
  end
  if #dropped > 0 then
    io.stdout:write(("%d candidate(s) not ok in every round: not ranked\n"):format(#dropped))
  end
  if #devices > 1 then
    -- The same candidates on each GPU: the ratio to the first GPU shows a
    -- device that is slower (clocks, thermals, a neighbour) for all alike.
    local head = { ("%-7s"):format("cand") }
    for _, d in ipairs(devices) do head[#head + 1] = ("%18s"):format("gpu " .. d) end
    io.stdout:write("per device (mean +- std ", unit, "; ratio to gpu ", devices[1], "):\n",
      table.concat(head, " "), "\n")
    for _, c in ipairs(ranked) do
      local row = { ("%-7s"):format("#" .. c.id) }
      local first = mean_std(by_device[c.id][1])
      for k = 1, #devices do
        local m, sd = mean_std(by_device[c.id][k])
        row[#row + 1] = ("%18s"):format(("%.4g +- %.2g (%.2fx)"):format(m, sd,
          first > 0 and m / first or 0))
      end
      io.stdout:write(table.concat(row, " "), "\n")
    end
  end
  archive:close()
  return 0
end


return M
