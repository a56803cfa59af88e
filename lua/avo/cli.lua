-- avo.cli — the commands implemented in Lua, called by the host as
-- require("avo.cli")[command](options) with the options cli/main.c parsed;
-- each returns the process exit status.  run and eval are here; resume and
-- replay live in avo.recorded, rebench in avo.rebench, and what they share
-- in avo.session.  These modules (and avo.session) are the Lua side that
-- prints.

local core = require "avo.core"
local avo = require "avo"
local sched = require "avo.sched"
local S = require "avo.session"
local scaleout = require "avo.scaleout"
local baselines = require "avo.baselines"

local M = {}

-- Text-mode output: each piece made inert for a terminal (core.inert), since
-- logs, reasons and notes carry what candidates and servers wrote.
local out = S.out

-- A reason or note shown on one line: its newlines shown, not taken.
local function oneline(text)
  return core.inert(text, true)
end

-- opts: script, db, seed, jobs, max_evals, max_time, args (table of strings)
function M.run(opts)
  local workers, werr = scaleout.workers(opts, core.cores())
  if not workers then
    S.eprintf("avo: %s\n", werr)
    return 2
  end
  S.debug = S.debug or opts.debug
  local script = opts.script
  local source, rerr = S.read_file(script)
  if not source then
    S.eprintf("avo: cannot read script %s\n", rerr)
    return 2
  end
  local chunk, serr = load(source, "@" .. script, "t")
  if not chunk then
    S.eprintf("avo: %s\n", serr)
    return 1
  end
  local db = opts.db or "avo.db"
  local seed = opts.seed or 1
  local jobs = workers.jobs
  -- With --slurm every worker is a Slurm task; --jobs counts them.
  local archive, pool = S.open_workers(workers, opts.slurm, db)
  if not archive then return 1 end
  local config = {
    jobs = jobs, max_evals = opts.max_evals, max_time = opts.max_time, db = db,
    args = opts.args or {}, max_usd = opts.max_usd, max_tokens = opts.max_tokens,
    llm_replay = opts.llm_replay, devices = opts.devices, listen = opts.listen,
    slurm = opts.slurm, retime = opts.retime, retime_rounds = opts.retime_rounds,
  }
  local run_id, err = archive:run_begin{
    script_path = script, script_source = source, config = config, seed = seed,
    engine_version = S.engine_version(), compiler = S.compiler_version(), host = S.host_description(),
  }
  if not run_id then
    S.eprintf("avo: %s\n", err)
    return 1
  end
  local claimed, cerr = archive:run_claim(run_id)
  if not claimed then
    S.eprintf("avo: %s\n", cerr)
    return 1
  end
  S.eprintf("avo: run %d of %s into %s (seed %d, %d jobs)\n", run_id, script, db, seed, jobs)
  return S.run_to_end({
    archive = archive, pool = pool, run_id = run_id, seed = seed, db = db, chunk = chunk,
    script = script,
    args = opts.args, max_evals = opts.max_evals, max_time = opts.max_time,
    max_usd = opts.max_usd, max_tokens = opts.max_tokens, llm_replay = opts.llm_replay,
    retime = opts.retime, retime_rounds = opts.retime_rounds,
  }, { listen = opts.listen, slurm = opts.slurm, jobs = jobs, db = db })
end

-- The recorded answers of run `run_id`: candidates by key, evaluator
-- fingerprints by origin.
------------------------------------------------------------------ avo eval

-- avo eval --compile-only: one CUDA compile job straight to a worker (no
-- archive, no score); prints per-kernel resources and NVRTC's log.
local function eval_compile_only(opts, ev, source, values)
  local job = ev:job({ source = source, knobs = values }, opts.seed or 1, S.cache_dir())
  job.compile_only = true
  local exe = assert(core.exe())
  local pool, perr = core.pool(1, exe)
  if not pool then
    S.eprintf("avo eval: %s\n", perr)
    return 1
  end
  sched.init(pool)
  local result = sched.run(function()
    return sched.await(sched.submit(job, ev:deadline(), function(r) return r end))
  end)
  pool:close()
  if opts.json then
    io.stdout:write(core.json_encode(result), "\n")
    return result.status == "ok" and 0 or 1
  end
  local compile = result.compile or {}
  out(("%s on %s: %s (compile only, %s, %s)"):format(opts.kernel, ev.name,
    result.status, compile.arch or ev.arch or "device arch", result.compiler or "NVRTC"))
  if result.reason then out(" — ", oneline(result.reason)) end
  out("\n")
  if compile.kernels then
    out(("%-40s %9s %11s %12s %11s %10s\n"):format("kernel", "registers",
      "local bytes", "spill st/ld", "smem bytes", "params"))
    for _, k in ipairs(compile.kernels) do
      local name = k.name .. (k.entry and " (entry)" or "")
      local spill = k.spill_store_bytes >= 0 and ("%d/%d"):format(k.spill_store_bytes,
        k.spill_load_bytes) or "?"
      out(("%-40s %9d %11d %12s %11d %10d\n"):format(name, k.registers,
        math.max(k.local_bytes, 0), spill, k.static_shared_bytes, #(k.params or {})))
    end
  end
  if result.log and result.log ~= "" then out("log:\n", result.log, "\n") end
  return result.status == "ok" and 0 or 1
end

-- The unit of per-config rates: the score's where that is a rate, else GFLOP/s.
local function config_unit(ev)
  return (ev.unit == "GB/s" or ev.unit == "TFLOPS") and ev.unit or "GFLOP/s"
end

-- One config's rate in `unit`, or nil.
local function rate_of(c, unit)
  if unit == "GB/s" then return c.gbs end
  if unit == "TFLOPS" then return c.gflops and c.gflops / 1000 end
  return c.gflops
end

-- avo eval: a row per baseline beside the candidate's score (its score and
-- the candidate's ratio to it, or its status and reason), then per config
-- the candidate's rate against each baseline's.  A baseline or config that
-- did not measure is named as such, never shown as 0.
local function eval_baselines(ev, rec, rows, unit, rate)
  out("baselines:\n")
  local width = 12
  for _, row in ipairs(rows) do width = math.max(width, #row.name) end
  for _, row in ipairs(rows) do
    local where = row.device_name and ("%s, %s"):format(row.device, row.device_name) or row.device
    local lib = ("%s %s"):format(row.library or "?", row.version and row.version:sub(1, 12) or "?")
    local ran = baselines.library_text(row)
    if ran ~= "" then lib = lib .. ", " .. ran end
    if row.status == "ok" and row.score then
      local ratio = rec.status == "ok" and rec.score > 0 and
        (", candidate %.2fx"):format(rec.score / row.score) or ""
      out(("  %-" .. width .. "s %-8s score %.4g %s%s (%s; %s)\n"):format(row.name,
        row.status, row.score, ev.unit, ratio, lib, where))
    else
      out(("  %-" .. width .. "s %-8s %s (%s; %s)\n"):format(row.name,
        row.status == "ok" and "partial" or row.status,
        oneline(row.reason or "no reason given"), lib, where))
    end
  end
  local mine = {}
  for _, c in ipairs(rec.configs or {}) do mine[c.name] = c end
  local measured = {}
  for _, row in ipairs(rows) do
    if row.result and row.result.configs and #row.result.configs > 0 then
      measured[#measured + 1] = row
    end
  end
  if #measured == 0 then return end
  out(("per config (%s; candidate / baseline):\n"):format(unit))
  for _, c in ipairs(ev.configs) do
    local own = mine[c.name]
    local own_rate = own and own.correct and own.median_s and own.median_s > 0 and rate(own, unit)
    local cells = {}
    for _, row in ipairs(measured) do
      local theirs
      for _, bc in ipairs(row.result.configs) do
        if bc.name == c.name then theirs = bc end
      end
      local text
      if not theirs then
        text = "not measured"
      elseif theirs.unavailable then
        text = "unavailable (" .. oneline(theirs.unavailable) .. ")"
      elseif not theirs.correct then
        text = "wrong" .. (theirs.reason and (" (" .. oneline(theirs.reason) .. ")") or "")
      else
        local r = rate(theirs, unit)
        text = r and r > 0 and (own_rate and ("%.4g (%.2fx)"):format(r, own_rate / r)
          or ("%.4g"):format(r)) or "no time"
      end
      cells[#cells + 1] = row.name .. " " .. text
    end
    out(("  %-16s %s | %s\n"):format(c.name, own_rate and ("%.4g"):format(own_rate) or "-",
      table.concat(cells, " | ")))
  end
end

local function parse_value(s)
  return math.tointeger(tonumber(s)) or tonumber(s) or s
end

-- The knob values `--param NAME=VALUE` sets over the kernel's first
-- values; nil after saying why (a malformed one, a knob not declared).
local function eval_knobs(opts, declared)
  local values, domain = {}, {}
  for _, k in ipairs(declared) do
    values[k.name] = k.values[1]
    domain[k.name] = k
  end
  for _, p in ipairs(opts.params or {}) do
    local name, value = p:match("^([%a_][%w_]*)=(.+)$")
    if not name then
      S.eprintf("avo eval: --param expects NAME=VALUE, got '%s'\n", p)
      return nil
    end
    if not domain[name] then
      local names = {}
      for _, k in ipairs(declared) do names[#names + 1] = k.name end
      S.eprintf("avo eval: %s declares no knob '%s' (knobs: %s)\n", opts.kernel, name,
        #names > 0 and table.concat(names, ", ") or "none")
      return nil
    end
    values[name] = parse_value(value)
  end
  return values
end

-- A candidate's record as `avo eval` prints it: the verdict, each config's
-- rate, time, spread and error, the checks, the libraries seen, the score
-- or the log, and the evaluator's baselines beside it.
local function print_eval(opts, ev, rec, run)
  out(("%s on %s: %s"):format(opts.kernel, ev.name, rec.status))
  if rec.reason then out(" — ", oneline(rec.reason)) end
  out("\n")
  -- Each config's rate in the score's unit where that is a rate, else GFLOP/s.
  local per_config = config_unit(ev)
  local width = 16
  for _, c in ipairs(rec.configs) do width = math.max(width, #c.name) end
  -- With a yardstick (timing.yardstick): each config's paired speed-up
  -- over the seed timed beside it, the column the score is made of.
  local paired = false
  for _, c in ipairs(rec.configs) do paired = paired or c.vs_yardstick ~= nil end
  local row = "%-" .. width .. "s %8s %12s %10s %8s %11s" .. (paired and " %8s\n" or "\n")
  out(row:format("config", "correct", per_config, "median", "spread", "max error", "x seed"))
  for _, c in ipairs(rec.configs) do
    local rate = rate_of(c, per_config)
    local timed = c.correct and c.median_s and c.median_s > 0
    out(row:format(c.name,
      c.correct and "yes" or "NO",
      timed and rate and ("%.4g"):format(rate) or "-",
      timed and S.format_seconds(c.median_s) or "-",
      timed and c.spread and ("%.1f%%"):format(c.spread * 100) or "-",
      c.max_error and ("%.3g"):format(c.max_error) or "-",
      timed and c.vs_yardstick and ("%.3f"):format(c.vs_yardstick) or "-"))
    if c.reason then out("  ", oneline(c.reason), "\n") end
  end
  -- Check configs: verified only, never timed.
  if rec.checks and #rec.checks > 0 then
    local good = 0
    for _, c in ipairs(rec.checks) do if c.correct then good = good + 1 end end
    out(("checks: %d of %d correct\n"):format(good, #rec.checks))
    for _, c in ipairs(rec.checks) do
      if not c.correct then
        out(("  %s: %s\n"):format(c.name, oneline(c.reason or "wrong")))
      end
    end
  end
  -- Libraries the judge saw the kernel load (eval/libraries.h): vendor
  -- code doing the work is said, whatever the verdict.
  if rec.libraries and #rec.libraries > 0 then
    io.stdout:write(("libraries %s\n"):format(table.concat(rec.libraries, ", ")))
  elseif rec.libraries_unobserved then
    io.stdout:write(("libraries not observed: %s\n"):format(rec.libraries_unobserved))
  end
  if rec.status == "ok" then
    out(("score %.4g %s\n"):format(rec.score, ev.unit))
  elseif rec.log and rec.log ~= "" then
    out("log:\n", rec.log, "\n")
  end
  if #run.baseline_rows > 0 then
    eval_baselines(ev, rec, run.baseline_rows, per_config, rate_of)
  end
end

-- opts: kernel, evaluator, params (array of "NAME=VALUE"), configs (array of
-- names), json, seed, compile_only, arch
function M.eval(opts)
  local ok, ev = pcall(avo.evaluator, opts.evaluator)
  if not ok then
    S.eprintf("avo eval: %s\n", tostring(ev))
    return 1
  end
  if opts.configs then
    local cok, cerr = pcall(ev.only_configs, ev, opts.configs)
    if not cok then
      S.eprintf("avo eval: %s\n", tostring(cerr))
      return 2
    end
  end
  local source, rerr = S.read_file(opts.kernel)
  if not source then
    S.eprintf("avo eval: cannot read kernel %s\n", rerr)
    return 2
  end
  local kok, declared = pcall(avo.knobs, source)
  if not kok then
    S.eprintf("avo eval: %s: %s\n", opts.kernel, tostring(declared))
    return 1
  end
  local values = eval_knobs(opts, declared)
  if not values then return 2 end
  if opts.compile_only or opts.arch then
    if ev.backend ~= "cuda" then
      S.eprintf("avo eval: --compile-only and --arch apply to CUDA evaluators; %s is '%s'\n",
        ev.name, ev.backend)
      return 2
    end
    ev.arch = opts.arch or ev.arch
  end
  if opts.compile_only then return eval_compile_only(opts, ev, source, values) end

  local archive, pool = S.open_engine({ jobs = 1, who = "avo eval" }, ":memory:")
  if not archive then return 1 end
  local run_id = assert(archive:run_begin{ script_path = opts.kernel, seed = opts.seed or 1,
    config = { command = "eval" }, engine_version = core.version })
  local run = S.begin_run{ archive = archive, pool = pool, run_id = run_id, seed = opts.seed or 1 }
  local ok, rec = pcall(sched.run, function()
    local rec = avo.evaluate(ev, { source = source, knobs = values, operator = "manual",
      note = "avo eval " .. opts.kernel })
    -- The evaluator's baselines, started beside the candidate, are shown with it.
    for _, t in ipairs(run.baseline_tickets) do sched.await(t) end
    return rec
  end)
  avo._end()
  pool:close()
  archive:close()
  if not ok then
    S.eprintf("%s\n", S.prefixed(S.error_text(rec)))
    return type(rec) == "table" and rec.avo_environment and S.EXIT_ENVIRONMENT or 1
  end

  if opts.json then
    rec.source = nil
    rec.unit = ev.unit
    rec.baselines = setmetatable(run.baseline_rows, core.json_array_mt)
    io.stdout:write(core.json_encode(rec), "\n")
  else
    print_eval(opts, ev, rec, run)
  end
  -- An infrastructure fault (no driver, a dead worker) says nothing about
  -- the kernel: exit 3, as a run that stops on one does.
  if rec.status == "error" or rec.worker_lost then return S.EXIT_ENVIRONMENT end
  return rec.status == "ok" and 0 or 1
end


-- The commands implemented in their own modules.
M.resume = function(opts) return require("avo.recorded").resume(opts) end
M.replay = function(opts) return require("avo.recorded").replay(opts) end
M.rebench = function(opts) return require("avo.rebench").rebench(opts) end
M.experiment = function(opts) return require("avo.experiment").main(opts) end

return M
