-- avo.session — what every command that runs the engine shares: opening
-- the archive and the worker pool, recording what a run ran on, executing a
-- script as the main task under the scheduler, the status line, and the
-- closing summary.  Used by avo.cli (run, eval), avo.recorded (resume,
-- replay) and avo.rebench.  Like avo.cli, it prints.

local core = require "avo.core"
local avo = require "avo"
local sched = require "avo.sched"
local scaleout = require "avo.scaleout"
local baselines = require "avo.baselines"
local retime = require "avo.retime"

local S = {}

function S.eprintf(fmt, ...) io.stderr:write(fmt:format(...)) end

function S.read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

-- First line of `cc --version`, recorded with every run.
function S.compiler_version()
  local p = io.popen((os.getenv("CC") or "cc") .. " --version 2>/dev/null")
  local line = p and p:read("l") or nil
  if p then p:close() end
  return line or "unknown"
end

function S.engine_version()
  return ("avo %s (git %s)"):format(core.version, core.git_commit)
end

function S.host_description()
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

function S.cache_dir()
  local base = os.getenv("AVO_CACHE") or ((os.getenv("XDG_CACHE_HOME") or
    ((os.getenv("HOME") or "/tmp") .. "/.cache")) .. "/avo")
  return base .. "/cpu"
end

-- 0.000273 -> "273us"
function S.format_seconds(s)
  if s >= 1 then return ("%.3gs"):format(s) end
  if s >= 1e-3 then return ("%.3gms"):format(s * 1e3) end
  return ("%.3gus"):format(s * 1e6)
end

function S.format_duration(s)
  s = math.floor(s)
  return ("%d:%02d"):format(s // 60, s % 60)
end

-------------------------------------------------------------- status line

local Status = {}
S.Status = Status
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
    local against = baselines.status_text(r, r.best)
    if against then best = best .. ", " .. against end
    parts[#parts + 1] = best
  else
    local against = baselines.status_text(r)
    if against then parts[#parts + 1] = against end
  end
  local llm = avo.llm.status_text(avo.outcomes())
  if llm then parts[#parts + 1] = llm end
  local workers = scaleout.status(r.scaleout, r.pool)
  if workers then parts[#parts + 1] = workers end
  local elapsed = core.monotonic() - r.started
  parts[#parts + 1] = ("%.2f eval/s"):format(r.finished / math.max(elapsed, 1e-9))
  parts[#parts + 1] = S.format_duration(elapsed)
  return table.concat(parts, " | ")
end

-- Seconds between status lines without a terminal while LLM calls are in
-- flight (a slow call otherwise leaves the log silent for minutes).
local HEARTBEAT = tonumber(os.getenv("AVO_STATUS_INTERVAL") or "") or 30

function Status:tick(force)
  local now = core.monotonic()
  if not self.tty then
    if avo.llm.in_flight() > 0 and now - (self.beat or self.run.started) >= HEARTBEAT then
      self.beat = now
      io.stderr:write(self:line(), "\n")
    end
    return
  end
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

function S.open_engine(opts, db)
  local archive, err = core.archive(db)
  if not archive then return nil, err end
  local exe = assert(core.exe())
  local pool, perr = core.pool(opts.jobs or core.cores(), exe)
  if not pool then archive:close() return nil, perr end
  return archive, pool
end

function S.describe(rec, unit)
  return ("#%d (%s, generation %d): %.4g %s"):format(rec.id, rec.operator, rec.generation,
    rec.score, unit)
end

------------------------------------------------------------------ avo run

-- Run a script's chunk as the main task of a run that is already in the
-- archive.  `recorded` (resume/replay) answers evaluations from a recorded
-- run.  Returns ok, error (string or divergence table), run state.
function S.execute(ctx)
  local archive, pool = ctx.archive, ctx.pool
  local run = avo._begin{
    archive = archive, pool = pool, run_id = ctx.run_id, seed = ctx.seed, db = ctx.db,
    max_evaluations = ctx.max_evals, max_seconds = ctx.max_time,
    started = core.monotonic() - (ctx.elapsed_before or 0), cache_dir = S.cache_dir(),
    generation = 0, recorded = ctx.recorded,
    max_usd = ctx.max_usd, max_tokens = ctx.max_tokens, llm_replay = ctx.llm_replay,
    llm_replay_run = ctx.llm_replay_run,
    llm_resume = ctx.llm_resume,
  }
  local status = Status.new(run)
  run.on_log = function(msg) status:log(msg) end
  run.on_progress = function()
    status.beat = core.monotonic()
    if status.tty then status:tick(true) else io.stderr:write(status:line(), "\n") end
  end
  run.on_record = function()
    status.unit = run.unit or status.unit
  end
  run.scaleout = ctx.scaleout
  sched.init(pool, function()
    scaleout.tick(ctx.scaleout, pool, function(msg) status:log(msg) end)
    status:tick()
  end)
  core.catch_interrupts()
  -- Script code that never yields back (a busy loop) is stopped STOP_GRACE
  -- seconds past --max-time or a signal to stop.
  core.watch(ctx.max_time and run.started + ctx.max_time or nil, S.STOP_GRACE)

  -- Scripts get their KEY=VALUE arguments as `...`; a script that returns a
  -- strategy-like table is run with them.
  local args = ctx.args or {}
  local run_line -- the line below that runs a returned strategy
  local ok, result = pcall(sched.run, function()
    local ret = ctx.chunk(args)
    if type(ret) == "table" and type(ret.run) == "function" and ret.id == nil then
      -- A strategy run with the command line's KEY=VALUE: numbers as numbers,
      -- so its own option checks see them (abc, nan, inf stay strings and are
      -- refused there).
      local typed = {}
      for k, v in pairs(args) do
        local n = tonumber(v)
        typed[k] = (n and n == n and n ~= math.huge and n ~= -math.huge)
          and (math.tointeger(n) or n) or v
      end
      run_line = debug.getinfo(1, "l").currentline + 1
      ret = ret.run(typed)
    end
    return ret
  end)
  local stopped = core.unwatch()
  if stopped then ok, result = false, { avo_stopped = "avo: " .. stopped } end
  -- The bests re-timed in fresh processes once the search is done (not
  -- after a failure, a signal or a stop, nor in a replay, which measures
  -- nothing); --retime/--retime-rounds over avo.retime{} over the defaults.
  local rec = ctx.recorded
  if ok and not core.interrupted() and not (rec and (rec.mode == "replay" or rec.origin)) then
    local want = run.retime_script or {}
    local rok, rerr = pcall(sched.run, function()
      run.retimed = retime.run(run, { top = ctx.retime or want.top,
        rounds = ctx.retime_rounds or want.rounds, log = function(msg) status:log(msg) end })
    end)
    if not rok then ok, result = false, rerr end
  end
  -- An error raised for the script from the engine's call of it names the
  -- script.  One the returned strategy blames on that call with the command
  -- line's KEY=VALUE (error(msg, 2) from its option check) is a usage error,
  -- like one from avo.options: exit status 2.  (Options the script itself
  -- passes through a tail call are the script's error: exit 1.)
  if not ok and type(result) == "string" and ctx.script then
    local line, msg = result:match("^lua/avo/session%.lua:(%d+): (.*)$")
    if msg and run_line and tonumber(line) == run_line then
      msg = msg:gsub("\nstack traceback:.*$", "")
      result = { avo_exit = S.EXIT_USAGE, message = "avo: " .. ctx.script .. ": " .. msg }
    elseif msg then
      result = ctx.script .. ": " .. msg
    end
  end
  status:clear()
  run.llm = avo.llm.totals()
  avo._end()
  run.unit = run.unit or status.unit
  return ok, result, run
end

-- One line per baseline of the run: its score and the best's ratio to it
-- (overall and per config), or its status and reason (never a zero for one
-- that did not measure).  Only baselines of the best's own evaluator are
-- compared with; another evaluator's are listed as such.
function S.print_baselines(rows, unit, best)
  for _, row in ipairs(rows or {}) do
    local where = row.device_name and ("%s, %s"):format(row.device, row.device_name) or row.device
    local mine = not best or baselines.owned(row, best.evaluator)
    if not mine then
      io.stdout:write(("baseline %s (%s): of evaluator %s, not compared with the best (of %s)\n")
        :format(row.name, where, row.evaluator or "unknown", best.evaluator or "unknown"))
    elseif row.status == "ok" and row.score then
      local result = type(row.result) == "table" and row.result or {}
      local lib = type(result.baseline) == "table" and result.baseline or {}
      local version = row.version or "?"
      if version:match("^%x+$") then version = version:sub(1, 12) end
      local what = { ("%s %s"):format(row.library or "?", version) }
      local info = type(lib.info) == "table" and lib.info or {}
      if info.core then what[#what + 1] = "core " .. tostring(info.core) end
      if math.type(lib.threads) == "integer" then
        what[#what + 1] = ("%d thread%s"):format(lib.threads, lib.threads == 1 and "" or "s")
      end
      what[#what + 1] = where
      io.stdout:write(("baseline %s (%s): %.4g %s%s\n"):format(row.name,
        table.concat(what, ", "), row.score, unit,
        best and (", best is %.2fx"):format(best.score / row.score) or ""))
      local per = best and baselines.config_text(best, row) or ""
      if per ~= "" then io.stdout:write("  best per config: ", per, "\n") end
    else
      io.stdout:write(("baseline %s (%s): %s\n"):format(row.name, where,
        (baselines.describe(row, unit):gsub("^[^:]*: ", ""))))
    end
  end
end

-- The closing lines of a run.
function S.summarise(run, final, db)
  local unit = run.unit or "score"
  S.eprintf("avo: %s after %d evaluations (%d failed) in %s\n", final, run.finished, run.failed,
    S.format_duration(core.monotonic() - run.started))
  local llm = run.llm
  if llm and llm.calls > 0 then
    S.eprintf("avo: %d LLM calls (%d failed), %d tokens in, %d out, $%.4f\n", llm.calls,
      llm.failed, llm.input_tokens, llm.output_tokens, llm.cost_usd)
  end
  local best = run.best
  if best then
    io.stdout:write("best ", S.describe(best, unit), "\n")
    local seed_rec = run.seed_record
    if seed_rec and seed_rec.score > 0 then
      io.stdout:write(("speedup over the seed kernel: %.2fx (seed #%d: %.4g %s)\n"):format(
        best.score / seed_rec.score, seed_rec.id, seed_rec.score, unit))
    end
    S.print_baselines(run.baseline_rows, unit, best)
    if run.retimed then
      for _, line in ipairs(retime.lines(run.retimed)) do io.stdout:write(line, "\n") end
    end
    io.stdout:write(("inspect it: avo show %d --db %s --source\n"):format(best.id, db))
  elseif run.finished == 0 then
    S.print_baselines(run.baseline_rows, unit)
    io.stdout:write("no candidate was evaluated\n")
  else
    S.print_baselines(run.baseline_rows, unit)
    io.stdout:write("no candidate passed verification\n")
  end
end

-- --debug (or AVO_DEBUG=1): errors keep their Lua traceback.
S.debug = os.getenv("AVO_DEBUG") ~= nil and os.getenv("AVO_DEBUG") ~= ""

function S.error_text(err)
  if type(err) == "string" and not S.debug then
    return (err:gsub("\nstack traceback:.*$", ""))
  end
  if type(err) == "table" and err.avo_divergence then return err.avo_divergence end
  if type(err) == "table" then
    local text = err.avo_stopped or err.avo_environment or err.avo_refusal
    if text then return text end
  end
  return tostring(err)
end

-- Seconds script code may go on past --max-time or a signal to stop
-- before the watchdog stops it (docs: README "Exit status").
S.STOP_GRACE = 5

-- Exit statuses (README "Exit status").
S.EXIT_OK, S.EXIT_FAILURE, S.EXIT_USAGE = 0, 1, 2
S.EXIT_ENVIRONMENT = 3 -- the environment is broken (infrastructure faults)

-- Record how a run that executed ended, print why, and return the exit
-- status: 128 + the signal number when a signal stopped it (status
-- `interrupted`), the script's avo.exit status (`stopped`), 0 (`done`) or
-- 1 (`failed`; 3 when the environment broke).
function S.finish(archive, run_id, ok, result, run, db, gone)
  local sig = core.interrupted()
  local final, code
  if not ok and type(result) == "table" and result.avo_exit then
    final, code = "stopped", result.avo_exit
    if result.message then S.eprintf("%s\n", tostring(result.message)) end
  elseif sig then
    final, code = "interrupted", 128 + sig
    if not ok then S.eprintf("%s\n", S.prefixed(S.error_text(result))) end
  elseif ok and gone then
    -- Every worker left for good (remote or Slurm): an end, not a failure.
    final, code = "stopped", S.EXIT_OK
    S.eprintf("avo: run stopped early: %s\n", gone)
  elseif ok and run.infra_unfinished > 0 then
    final, code = "failed", S.EXIT_ENVIRONMENT
    S.eprintf("avo: %d evaluation(s) failed on infrastructure faults on every try and were " ..
      "left unfinished (not charged to the candidates): fix the environment and `avo resume " ..
      "--db %s` evaluates them again\n", run.infra_unfinished, db)
  elseif ok then
    final, code = "done", S.EXIT_OK
  else
    final = "failed"
    code = type(result) == "table" and result.avo_environment and S.EXIT_ENVIRONMENT
      or S.EXIT_FAILURE
    S.eprintf("%s\n", S.prefixed(S.error_text(result)))
  end
  local wok, werr = archive:run_end(run_id, final)
  if not wok then
    S.eprintf("avo: cannot record the end of run %d: %s\n", run_id, werr)
    if code == S.EXIT_OK then code = S.EXIT_FAILURE end
  end
  if ok or sig then S.summarise(run, final, db) end
  if run.infra_faults > 0 then
    S.eprintf("avo: %d infrastructure fault(s) retried or left unfinished in this run\n",
      run.infra_faults)
  end
  return code
end

-- "avo: " before a message that does not start with it already.
function S.prefixed(msg)
  msg = tostring(msg)
  if msg:sub(1, 5) == "avo: " then return msg end
  return "avo: " .. msg
end

return S
