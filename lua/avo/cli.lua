-- avo.cli — the commands implemented in Lua: run and eval.  Each takes the
-- options table built by core/main.c and returns the process exit status.
-- This is the only Lua module that prints.

local core = require "avo.core"
local avo = require "avo"
local sched = require "avo.sched"

local M = {}

local function eprintf(fmt, ...) io.stderr:write(fmt:format(...)) end

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

-- First line of `cc --version`, recorded with every run.
local function compiler_version()
  local p = io.popen((os.getenv("CC") or "cc") .. " --version 2>/dev/null")
  local line = p and p:read("l") or nil
  if p then p:close() end
  return line or "unknown"
end

local function host_description()
  local model
  local f = io.open("/proc/cpuinfo")
  if f then
    for line in f:lines() do
      model = line:match("^model name%s*:%s*(.+)$")
      if model then break end
    end
    f:close()
  end
  return ("%s, %d cores, %s"):format(core.hostname(), core.cores(), model or "unknown cpu")
end

local function cache_dir()
  local base = os.getenv("AVO_CACHE") or ((os.getenv("XDG_CACHE_HOME") or
    ((os.getenv("HOME") or "/tmp") .. "/.cache")) .. "/avo")
  return base .. "/cpu"
end

-- 0.000273 -> "273us"
local function format_seconds(s)
  if s >= 1 then return ("%.3gs"):format(s) end
  if s >= 1e-3 then return ("%.3gms"):format(s * 1e3) end
  return ("%.3gus"):format(s * 1e6)
end

local function format_duration(s)
  s = math.floor(s)
  return ("%d:%02d"):format(s // 60, s % 60)
end

-------------------------------------------------------------- status line

local Status = {}
Status.__index = Status

function Status.new(run, unit)
  return setmetatable({ run = run, tty = core.isatty(2), unit = unit or "score", last = 0 }, Status)
end

function Status:line()
  local r = self.run
  local pending, running = r.pool:pending()
  local parts = {
    ("gen %d"):format(r.generation or 0),
    ("evals %d (%d running)"):format(r.finished, running),
    ("failed %d"):format(r.failed),
  }
  if r.best then
    local best = ("best %.4g %s"):format(r.best.score, self.unit)
    if r.seed_record and r.seed_record.score > 0 then
      best = best .. (" (%.2fx seed)"):format(r.best.score / r.seed_record.score)
    end
    parts[#parts + 1] = best
  end
  local elapsed = core.monotonic() - r.started
  parts[#parts + 1] = ("%.2f eval/s"):format(r.finished / math.max(elapsed, 1e-9))
  parts[#parts + 1] = format_duration(elapsed)
  return table.concat(parts, " | ")
end

function Status:tick(force)
  if not self.tty then return end
  local now = core.monotonic()
  if not force and now - self.last < 0.2 then return end
  self.last = now
  io.stderr:write("\r\27[K", self:line())
  io.stderr:flush()
end

function Status:clear()
  if self.tty then io.stderr:write("\r\27[K") end
end

function Status:log(msg)
  self:clear()
  io.stderr:write(msg, "\n")
  self:tick(true)
end

------------------------------------------------------------------ helpers

local function open_engine(opts, db)
  local archive, err = core.archive(db)
  if not archive then return nil, err end
  local exe = assert(core.exe())
  local pool, perr = core.pool(opts.jobs or core.cores(), exe)
  if not pool then archive:close() return nil, perr end
  return archive, pool
end

local function describe(rec, unit)
  return ("#%d (%s, generation %d): %.4g %s"):format(rec.id, rec.operator, rec.generation,
    rec.score, unit)
end

------------------------------------------------------------------ avo run

-- opts: script, db, seed, jobs, max_evals, max_time, args (table of strings)
function M.run(opts)
  local script = opts.script
  local source, rerr = read_file(script)
  if not source then
    eprintf("avo: cannot read script %s: %s\n", script, rerr)
    return 2
  end
  local chunk, serr = load(source, "@" .. script, "t")
  if not chunk then
    eprintf("avo: %s\n", serr)
    return 1
  end
  local db = opts.db or "avo.db"
  local seed = opts.seed or 1
  local jobs = opts.jobs or core.cores()
  local archive, pool = open_engine({ jobs = jobs }, db)
  if not archive then
    eprintf("avo: %s\n", pool)
    return 1
  end

  local config = {
    jobs = jobs, max_evals = opts.max_evals, max_time = opts.max_time, db = db,
    args = opts.args or {},
  }
  local run_id, err = archive:run_begin{
    script_path = script, script_source = source, config = config, seed = seed,
    engine_version = core.version, compiler = compiler_version(), host = host_description(),
  }
  if not run_id then
    eprintf("avo: %s\n", err)
    return 1
  end

  local run = avo._begin{
    archive = archive, pool = pool, run_id = run_id, seed = seed, db = db,
    max_evaluations = opts.max_evals, max_seconds = opts.max_time,
    started = core.monotonic(), cache_dir = cache_dir(), generation = 0,
  }
  local status = Status.new(run)
  run.on_log = function(msg) status:log(msg) end
  run.on_record = function(rec)
    if rec.operator == "seed" then
      status.unit = run.unit or status.unit
    end
  end
  run.on_progress = function(info)
    if status.tty then
      status:tick(true)
    else
      io.stderr:write(status:line(), "\n")
    end
  end
  sched.init(pool, function() status:tick() end)
  core.catch_interrupts()
  eprintf("avo: run %d of %s into %s (seed %d, %d jobs)\n", run_id, script, db, seed, jobs)

  -- Scripts get their KEY=VALUE arguments as `...`; a script that returns a
  -- strategy-like table is run with them.
  local ok, result = pcall(sched.run, function()
    local ret = chunk(opts.args or {})
    if type(ret) == "table" and type(ret.run) == "function" and ret.id == nil then
      ret = ret.run(opts.args or {})
    end
    return ret
  end)
  status:clear()
  local final = core.interrupted() and "stopped" or (ok and "done" or "failed")
  archive:run_end(run_id, final)
  avo._end()

  if not ok then
    eprintf("avo: %s\n", tostring(result))
    pool:close()
    archive:close()
    return 1
  end

  local unit = run.unit or status.unit
  local best = run.best
  eprintf("avo: %s after %d evaluations (%d failed) in %s\n", final, run.finished, run.failed,
    format_duration(core.monotonic() - run.started))
  if best then
    io.stdout:write("best ", describe(best, unit), "\n")
    local seed_rec = run.seed_record
    if seed_rec and seed_rec.score > 0 then
      io.stdout:write(("speedup over the seed kernel: %.2fx (seed #%d: %.4g %s)\n"):format(
        best.score / seed_rec.score, seed_rec.id, seed_rec.score, unit))
    end
    io.stdout:write(("inspect it: avo show %d --db %s --source\n"):format(best.id, db))
  elseif run.finished == 0 then
    io.stdout:write("no candidate was evaluated\n")
  else
    io.stdout:write("no candidate passed verification\n")
  end
  pool:close()
  archive:close()
  return 0
end

------------------------------------------------------------------ avo eval

local function parse_value(s)
  return math.tointeger(tonumber(s)) or tonumber(s) or s
end

-- opts: kernel, evaluator, params (array of "NAME=VALUE"), json, seed
function M.eval(opts)
  local ok, ev = pcall(avo.evaluator, opts.evaluator)
  if not ok then
    eprintf("avo eval: %s\n", tostring(ev))
    return 1
  end
  local source, rerr = read_file(opts.kernel)
  if not source then
    eprintf("avo eval: cannot read kernel %s: %s\n", opts.kernel, rerr)
    return 2
  end
  local kok, declared = pcall(avo.knobs, source)
  if not kok then
    eprintf("avo eval: %s: %s\n", opts.kernel, tostring(declared))
    return 1
  end
  local values, domain = {}, {}
  for _, k in ipairs(declared) do
    values[k.name] = k.values[1]
    domain[k.name] = k
  end
  for _, p in ipairs(opts.params or {}) do
    local name, value = p:match("^([%a_][%w_]*)=(.+)$")
    if not name then
      eprintf("avo eval: --param expects NAME=VALUE, got '%s'\n", p)
      return 2
    end
    if not domain[name] then
      local names = {}
      for _, k in ipairs(declared) do names[#names + 1] = k.name end
      eprintf("avo eval: %s declares no knob '%s' (knobs: %s)\n", opts.kernel, name,
        #names > 0 and table.concat(names, ", ") or "none")
      return 2
    end
    values[name] = parse_value(value)
  end

  local archive, pool = open_engine({ jobs = 1 }, ":memory:")
  if not archive then
    eprintf("avo eval: %s\n", pool)
    return 1
  end
  local run_id = assert(archive:run_begin{ script_path = opts.kernel, seed = opts.seed or 1,
    config = { command = "eval" }, engine_version = core.version })
  local run = avo._begin{
    archive = archive, pool = pool, run_id = run_id, seed = opts.seed or 1,
    started = core.monotonic(), cache_dir = cache_dir(),
  }
  sched.init(pool)
  local rec = sched.run(function()
    return avo.evaluate(ev, { source = source, knobs = values, operator = "manual",
      note = "avo eval " .. opts.kernel })
  end)
  avo._end()
  pool:close()
  archive:close()

  if opts.json then
    rec.source = nil
    rec.unit = ev.unit
    io.stdout:write(core.json_encode(rec), "\n")
  else
    io.stdout:write(("%s on %s: %s"):format(opts.kernel, ev.name, rec.status))
    if rec.reason then io.stdout:write(" — ", rec.reason) end
    io.stdout:write("\n")
    io.stdout:write(("%-16s %8s %12s %10s %8s %11s\n"):format("config", "correct", ev.unit,
      "median", "spread", "max error"))
    for _, c in ipairs(rec.configs) do
      local rate = ev.unit == "GB/s" and c.gbs or c.gflops
      local timed = c.correct and c.median_s and c.median_s > 0
      io.stdout:write(("%-16s %8s %12s %10s %8s %11s\n"):format(c.name,
        c.correct and "yes" or "NO",
        timed and rate and ("%.3f"):format(rate) or "-",
        timed and format_seconds(c.median_s) or "-",
        timed and c.spread and ("%.1f%%"):format(c.spread * 100) or "-",
        c.max_error and ("%.3g"):format(c.max_error) or "-"))
      if c.reason then io.stdout:write("  ", c.reason, "\n") end
    end
    if rec.status == "ok" then
      io.stdout:write(("score %.4g %s\n"):format(rec.score, ev.unit))
    elseif rec.log and rec.log ~= "" then
      io.stdout:write("log:\n", rec.log, "\n")
    end
  end
  return rec.status == "ok" and 0 or 1
end

return M
