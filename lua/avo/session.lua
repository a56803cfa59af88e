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
local pipeline = require "avo.pipeline"
local retime = require "avo.retime"
local paths = require "avo.paths"

local S = {}

-- What the engine prints of a run carries what candidates and servers wrote
-- (reasons, logs, model answers, notes): every string argument is made inert
-- for a terminal (core.inert), the format itself (the engine's) is not.
local function inert_args(...)
  local args = table.pack(...)
  for i = 1, args.n do
    if type(args[i]) == "string" then args[i] = core.inert(args[i]) end
  end
  return table.unpack(args, 1, args.n)
end

function S.eprintf(fmt, ...) io.stderr:write(fmt:format(inert_args(...))) end

-- io.stdout:write with each piece made inert for a terminal (core.inert).
function S.out(...)
  for i = 1, select("#", ...) do io.stdout:write(core.inert((select(i, ...)))) end
end

-- The contents of the file at path, or nil and "PATH: reason" (a directory
-- opens but cannot be read: "PATH: Is a directory").
S.read_file = paths.read_file

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

-- The engine's CPU cache folder: the one folder rule is C's (eval/cache.h).
function S.cache_dir()
  return core.cache_dir("cpu")
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
  local first = r.retimed and r.retimed.ranked[1]
  if first then
    -- After the re-timing: its #1 and the paired ratios (avo.retime).
    local text = retime.paired_text(first)
    parts[#parts + 1] = ("best #%d %.4g %s re-timed%s"):format(first.id, first.median, self.unit,
      text ~= "" and (", " .. text .. " (paired)") or "")
  elseif r.best then
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
      io.stderr:write(core.inert(self:line(), true), "\n")
    end
    return
  end
  if not force and now - self.last < 0.2 then return end
  self.last = now
  io.stderr:write("\r\27[K", core.inert(self:line(), true))
  io.stderr:flush()
end

function Status:clear()
  if self.tty then io.stderr:write("\r\27[K") end
end

function Status:log(msg)
  self:clear()
  io.stderr:write(core.inert(msg), "\n")
  self:tick(true)
end

------------------------------------------------------------------ helpers

-- The engine of a command, in the order every command sets it up: the
-- archive at `db`, a pool of opts.jobs local workers (core.cores() when
-- nil) with opts.devices pinned when given.  Returns archive, pool, or nil
-- after printing why, prefixed with opts.who ("avo eval"; default "avo").
function S.open_engine(opts, db)
  local archive, err = core.archive(db)
  local pool
  if archive then
    local exe = assert(core.exe())
    pool, err = core.pool(opts.jobs or core.cores(), exe)
    if not pool then archive:close() end
  end
  if not pool then
    S.eprintf("%s\n", opts.who and (opts.who .. ": " .. err) or S.prefixed(err))
    return nil
  end
  if opts.devices then pool:set_devices(opts.devices) end
  return archive, pool
end

-- The workers of `avo run` and `avo resume` (scaleout.workers: local
-- --jobs, --devices; with --slurm every worker is a Slurm task, so none is
-- local) for the archive at `db`: S.open_engine.
function S.open_workers(workers, slurm, db)
  return S.open_engine({ jobs = slurm and 0 or workers.jobs, devices = workers.devices }, db)
end

-- Install the run state (avo._begin, with the engine's defaults: started
-- now, the compile cache folder) and the scheduler on its pool (`tick`:
-- called on every turn of the loop).  Returns the run state.
function S.begin_run(state, tick)
  state.started = state.started or core.monotonic()
  state.cache_dir = state.cache_dir or S.cache_dir()
  local run = avo._begin(state)
  sched.init(state.pool, tick)
  return run
end

function S.describe(rec, unit)
  return ("#%d (%s, generation %d): %.4g %s"):format(rec.id, rec.operator, rec.generation,
    rec.score, unit)
end

------------------------------------------------------------------ avo run

-- os.exit for the time of a run: it would end the process with the run
-- left `running`; instead it ends the run as avo.exit does (status
-- `stopped`, that exit code), naming where it was called.
local function exit_ends_run(code)
  local status = code
  if code == nil or code == true then status = 0 elseif code == false then status = 1 end
  local n = math.tointeger(status)
  if not n or n < 0 or n > 255 then
    error(("os.exit: status must be true, false or an integer from 0 to 255, got %s"):format(
      type(code) == "number" and tostring(code) or type(code)), 2)
  end
  local info = debug.getinfo(2, "Sl")
  local where = info and info.currentline > 0 and
    ("%s:%d: "):format(info.short_src, info.currentline) or ""
  error({ avo_exit = n, message = ("avo: %sos.exit(%d) ended the run"):format(where, n) }, 0)
end

-- The line of run_chunk that runs a returned strategy (set when it does):
-- an error raised there is the command line's (script_error_of).
local strategy_line

-- Runs a script's chunk with its KEY=VALUE arguments as `...`; a script
-- that returns a strategy-like table is run with them, numbers as numbers,
-- so its own option checks see them (abc, nan, inf stay strings and are
-- refused there).
local function run_chunk(chunk, args)
  local ret = chunk(args)
  if type(ret) == "table" and type(ret.run) == "function" and ret.id == nil then
    local typed = {}
    for k, v in pairs(args) do
      local n = tonumber(v)
      typed[k] = (n and n == n and n ~= math.huge and n ~= -math.huge)
        and (math.tointeger(n) or n) or v
    end
    strategy_line = debug.getinfo(1, "l").currentline + 1
    ret = ret.run(typed)
  end
  return ret
end

-- An error raised for the script from the engine's call of it names the
-- script.  One the returned strategy blames on that call with the command
-- line's KEY=VALUE (error(msg, 2) from its option check) is a usage error,
-- like one from avo.options: exit status 2.  (Options the script itself
-- passes through a tail call are the script's error: exit 1.)
local function script_error_of(result, script)
  result = S.script_error(result)
  if type(result) ~= "string" or not script then return result end
  local line, msg = result:match("^lua/avo/session%.lua:(%d+): (.*)$")
  if msg and strategy_line and tonumber(line) == strategy_line then
    msg = msg:gsub("\nstack traceback:.*$", "")
    return { avo_exit = S.EXIT_USAGE, message = "avo: " .. script .. ": " .. msg }
  elseif msg then
    return script .. ": " .. msg
  end
  return result
end

-- The bests re-timed in fresh processes once the search is done (not
-- after a failure, a signal or a stop, nor in a replay, which measures
-- nothing; nor when the run ends `failed` for its infrastructure: every
-- worker gone, evaluations left unfinished, the LLM server out);
-- --retime/--retime-rounds over avo.retime{} over the defaults.  `ok`:
-- the script ended without an error.  Sets run.retimed, or run.retime_why
-- where a user asks why there is none; returns false and the error where
-- the re-timing itself failed.
local function retime_at_end(ctx, run, status, ok, stopped)
  local rec = ctx.recorded
  local pool = ctx.pool
  if rec and (rec.mode == "replay" or rec.origin) then
    run.retime_why = "a replay measures nothing"
    return true
  end
  if core.interrupted() or stopped then
    run.retime_why = ("the run was stopped before its re-timing; `avo rebench --db %s --run %d` " ..
      "times its best with the seed and baselines in the same rounds"):format(ctx.db, ctx.run_id)
    return true
  end
  local broken = (pool and pool.gone and pool:gone()) or run.infra_unfinished > 0 or
    ((avo.llm.totals() or {}).fault_streak or 0) > 0
  if not ok or broken then return true end
  local want = run.retime_script or {}
  return pcall(sched.run, function()
    run.retimed, run.retime_why = retime.run(run, { top = ctx.retime or want.top,
      rounds = ctx.retime_rounds or want.rounds, log = function(msg) status:log(msg) end })
    -- The final status line gives the re-timed best.
    if run.retimed and run.retimed.ranked[1] then status:log(status:line()) end
  end)
end

-- Run a script's chunk as the main task of a run that is already in the
-- archive.  `recorded` (resume/replay) answers evaluations from a recorded
-- run.  Returns ok, error (string or divergence table), run state.
function S.execute(ctx)
  local archive, pool = ctx.archive, ctx.pool
  local status
  local began, run = pcall(S.begin_run, {
    archive = archive, pool = pool, run_id = ctx.run_id, seed = ctx.seed, db = ctx.db,
    max_evaluations = ctx.max_evals, max_seconds = ctx.max_time,
    started = core.monotonic() - (ctx.elapsed_before or 0),
    generation = 0, recorded = ctx.recorded,
    max_usd = ctx.max_usd, max_tokens = ctx.max_tokens, llm_replay = ctx.llm_replay,
    llm_replay_run = ctx.llm_replay_run,
    llm_resume = ctx.llm_resume,
  }, function()
    scaleout.tick(ctx.scaleout, pool, function(msg) status:log(msg) end)
    status:tick()
  end)
  if not began then
    -- The run's setup refused (an --llm-replay archive that does not open):
    -- a failed run with nothing evaluated.
    avo._end()
    return false, S.script_error(run), { finished = 0, failed = 0, infra_faults = 0,
      infra_unfinished = 0, started = core.monotonic() }
  end
  status = Status.new(run)
  run.on_log = function(msg) status:log(msg) end
  run.on_progress = function()
    status.beat = core.monotonic()
    if status.tty then
      status:tick(true)
    else
      io.stderr:write(core.inert(status:line(), true), "\n")
    end
  end
  run.on_record = function()
    status.unit = run.unit or status.unit
  end
  run.scaleout = ctx.scaleout
  core.catch_interrupts()
  -- Script code that never yields back (a busy loop) is stopped STOP_GRACE
  -- seconds past --max-time or a signal to stop.
  -- Past that, a task still inside one C call (which the count hook cannot
  -- reach), or a second signal, ends the process after the watchdog thread
  -- recorded the run.
  local watched, werr = core.watch(ctx.max_time and run.started + ctx.max_time or nil,
    S.STOP_GRACE, ctx.db, ctx.run_id)
  if not watched then S.eprintf("avo: warning: %s (the watchdog thread does not run)\n", werr) end

  local os_exit = os.exit
  os.exit = exit_ends_run
  strategy_line = nil
  local ok, result = pcall(sched.run, run_chunk, ctx.chunk, ctx.args or {})
  os.exit = os_exit
  local stopped = core.unwatch()
  if stopped then ok, result = false, { avo_stopped = "avo: " .. stopped } end
  local rok, rerr = retime_at_end(ctx, run, status, ok, stopped)
  if not rok then ok, result = false, rerr end
  if not ok then result = script_error_of(result, ctx.script) end
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
function S.print_baselines(rows, unit, best, indent)
  local out = { write = function(_, ...) S.out(indent or "", ...) end }
  for _, row in ipairs(rows or {}) do
    local where = row.device_name and ("%s, %s"):format(row.device, row.device_name) or row.device
    local mine = not best or baselines.owned(row, best.evaluator)
    if not mine then
      out:write(("baseline %s (%s): of evaluator %s, not compared with the best (of %s)\n")
        :format(row.name, where, row.evaluator or "unknown", best.evaluator or "unknown"))
    elseif row.status == "ok" and row.score then
      local version = row.version or "?"
      if version:match("^%x+$") then version = version:sub(1, 12) end
      local what = { ("%s %s"):format(row.library or "?", version) }
      local ran = baselines.library_text(row)
      if ran ~= "" then what[#what + 1] = ran end
      what[#what + 1] = where
      out:write(("baseline %s (%s): %.4g %s%s\n"):format(row.name,
        table.concat(what, ", "), row.score, unit,
        best and (", best is %.2fx"):format(best.score / row.score) or ""))
      local per = best and baselines.config_text(best, row) or ""
      if per ~= "" then out:write("  best per config: ", per, "\n") end
    else
      out:write(("baseline %s (%s): %s\n"):format(row.name, where,
        (baselines.describe(row, unit):gsub("^[^:]*: ", ""))))
    end
  end
end

-- Run `run`'s record of candidate `id` (a verified one), or nil.
function S.record_of(run, id)
  for _, rec in ipairs(run.shelf and pipeline.ok_records(run) or {}) do
    if rec.id == id then return rec end
  end
  return nil
end

-- Why run `run`'s figures are not paired (it was not re-timed).
function S.unpaired_why(run)
  local why = run.retime_why
  if why == "off" then return "re-timing is off (--retime 0 or avo.retime{top = 0})" end
  if why then return "not re-timed (" .. why .. ")" end
  return "not re-timed (the run did not end, or a replay)"
end

-- The knob space that bounds a best which differs from its seed in knobs
-- only: the knobs its kernel declares (`// avo:param`), their combinations,
-- and the knobs the best has at the last value declared (where the space
-- ends).  nil when the best's source is not the seed's (the search edited
-- the code, so the knobs do not bound it) or the kernel declares none.
function S.knob_space(run, best)
  local ev = run.evaluator_objects and run.evaluator_objects[best.evaluator]
  if not ev or not ev.knobs or #ev.knobs == 0 or best.source ~= ev.kernel_source then
    return nil
  end
  -- A float product: sgemm_fast.c's 56 knobs are ~4e34 combinations,
  -- past an integer's range (it wrapped to a negative count).
  local names, combinations, at_end = {}, 1.0, {}
  for _, k in ipairs(ev.knobs) do
    names[#names + 1] = k.name
    combinations = combinations * #k.values
    local v = (best.knobs or {})[k.name]
    if #k.values > 1 and v ~= nil and tostring(v) == tostring(k.values[#k.values]) then
      at_end[#at_end + 1] = ("%s=%s"):format(k.name, tostring(v))
    end
  end
  return ("knob space: #%d is the seed's source with other knob values, so the %d knobs %s " ..
    "declares (%s: %s combinations) bound the climb; what its code does not write, no knob " ..
    "reaches%s"):format(best.id, #names,
    ((ev.kernel_path or ev.kernel or "its kernel"):gsub("^%./", "")), table.concat(names, " "),
    combinations < 2^53 and ("%d"):format(combinations) or ("about %.1e"):format(combinations),
    #at_end > 0 and ("; at #%d, %s %s declared"):format(best.id,
      table.concat(at_end, ", "), #at_end == 1 and "is the last value" or "are the last values")
      or "")
end

-- The closing lines of a run.
function S.summarise(run, final, db)
  local unit = run.unit or "score"
  local extra = ""
  if (run.pruned or 0) > 0 then extra = extra .. (", %d pruned"):format(run.pruned) end
  if (run.infra_unfinished or 0) > 0 then
    extra = extra .. (", %d left pending"):format(run.infra_unfinished)
  end
  S.eprintf("avo: %s after %d evaluations (%d failed%s) in %s\n", final, run.finished, run.failed,
    extra,
    S.format_duration(core.monotonic() - run.started))
  local llm = run.llm
  if llm and llm.calls > 0 then
    S.eprintf("avo: %d LLM calls (%d failed%s%s), %d tokens in, %d out, $%.4f\n", llm.calls,
      llm.failed, (llm.faults or 0) > 0 and (", %d of them infrastructure faults"):format(
        llm.faults) or "", (llm.cut or 0) > 0 and ("; %d cut at their reserve"):format(llm.cut)
        or "", llm.input_tokens, llm.output_tokens, llm.cost_usd)
  end
  local best = run.best
  if best then
    -- The re-timed #1 heads the summary with its paired ratios; the
    -- search's own (recorded, maximum of noisy) figures follow, labelled.
    local retimed = run.retimed
    local first = retimed and retimed.ranked[1]
    -- (The record of the re-timed #1 is in the run; if not, its id names it.)
    local shown = first and S.record_of(run, first.id) or best
    local described = first and (shown.id == first.id
      and S.describe(shown, unit):match("^(.-): ") or ("#%d"):format(first.id))
    local head = first and retime.headline(retimed, described)
    if head then
      for _, line in ipairs(head) do S.out(line, "\n") end
      local limit = shown.id == first.id and S.knob_space(run, shown)
      if limit then S.out(limit, "\n") end
      S.out("recorded in the search (maximum of noisy measurements, unpaired):\n")
    else
      S.out(("unpaired: %s; the figures below are the search's own measurements " ..
        "(maximum of noisy ones), not timed in the same rounds\n"):format(S.unpaired_why(run)))
    end
    local indent = head and "  " or ""
    S.out(indent, "best ", S.describe(best, unit), "\n")
    local seed_rec = run.seed_record
    if seed_rec and seed_rec.score > 0 then
      S.out(indent, ("speedup over the seed kernel: %.2fx (seed #%d: %.4g %s)\n"):format(
        best.score / seed_rec.score, seed_rec.id, seed_rec.score, unit))
    end
    S.print_baselines(run.baseline_rows, unit, best, indent)
    local limit = not head and S.knob_space(run, shown)
    if limit then S.out(limit, "\n") end
    if retimed then
      for _, line in ipairs(retime.lines(retimed)) do S.out(line, "\n") end
    end
    S.out(("inspect it: avo show %d --db %s --source\n"):format(
      first and first.id or best.id, db))
  elseif run.finished == 0 then
    S.print_baselines(run.baseline_rows, unit)
    S.out("no candidate was evaluated\n")
  else
    S.print_baselines(run.baseline_rows, unit)
    S.out("no candidate passed verification\n")
  end
end

-- tostring(value) that cannot raise: an error object whose __tostring
-- fails (or returns no string) is described instead, so the engine still
-- prints one line and records how the run ended.
function S.error_string(value)
  local ok, text = pcall(tostring, value)
  if ok and type(text) == "string" then return text end
  local why = type(text) == "string" and text:match("^[^\n]*") or ("a " .. type(text))
  return ("the error value (a %s) cannot be shown: its __tostring failed: %s"):format(type(value),
    why)
end

-- What a script raised, as the engine handles it: a string, or a table the
-- engine made (avo.exit, a divergence, ...: no metatable).  Anything else
-- (a table with a metatable, a userdata, nil, ...) becomes its text now,
-- so that no metamethod of the script runs in the engine's own code.
function S.script_error(err)
  if type(err) == "string" or (type(err) == "table" and getmetatable(err) == nil) then
    if type(err) == "table" and err.avo_exit ~= nil and err.message ~= nil then
      err.message = S.error_string(err.message)
    end
    return err
  end
  return S.error_string(err)
end

-- --debug (or AVO_DEBUG=1): errors keep their Lua traceback.
S.debug = os.getenv("AVO_DEBUG") ~= nil and os.getenv("AVO_DEBUG") ~= ""

function S.error_text(err)
  if err == nil or err == false then
    return ("error(%s): the script raised an error without a message"):format(tostring(err))
  end
  if type(err) == "string" and not S.debug then
    return (err:gsub("\nstack traceback:.*$", ""))
  end
  if type(err) == "table" and err.avo_divergence then return err.avo_divergence end
  if type(err) == "table" then
    local text = err.avo_stopped or err.avo_environment or err.avo_refusal
      or err.avo_configuration
    if text then return text end
  end
  return S.error_string(err)
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
local function finish(archive, run_id, ok, result, run, db, gone)
  local sig = core.interrupted()
  local final, code
  if not ok and type(result) == "table" and result.avo_exit then
    final, code = "stopped", result.avo_exit
    if result.message then S.eprintf("%s\n", S.error_string(result.message)) end
  elseif sig then
    final, code = "interrupted", 128 + sig
    if not ok then S.eprintf("%s\n", S.prefixed(S.error_text(result))) end
  elseif ok and gone then
    -- Every worker left for good (remote or Slurm): the infrastructure
    -- failed, not the run; what was not evaluated stays pending for resume.
    final, code = "failed", S.EXIT_ENVIRONMENT
    S.eprintf("avo: run stopped early: %s; %d candidate(s) left pending: `avo resume --db %s` " ..
      "(with --listen, --slurm or local --jobs) evaluates them\n", gone, run.infra_unfinished, db)
  elseif ok and run.infra_unfinished > 0 then
    final, code = "failed", S.EXIT_ENVIRONMENT
    S.eprintf("avo: %d evaluation(s) failed on infrastructure faults on every try and were " ..
      "left unfinished (not charged to the candidates): fix the environment and `avo resume " ..
      "--db %s` evaluates them again\n", run.infra_unfinished, db)
  elseif ok and run.llm and (run.llm.fault_streak or 0) > 0 then
    -- The run ran out of work while the LLM server was out: not done.
    final, code = "failed", S.EXIT_ENVIRONMENT
    S.eprintf("avo: the run ended while the LLM server was out (its last %d call(s) failed " ..
      "for the infrastructure): bring it back and `avo resume --db %s` asks them again\n",
      run.llm.fault_streak, db)
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

-- Record how a run that executed ended (above).  An error in the engine's
-- own code there still records the run `failed` and prints one line (the
-- traceback with --debug): no way out leaves a run `running`.
function S.finish(archive, run_id, ...)
  local ok, code = xpcall(finish, debug.traceback, archive, run_id, ...)
  if ok then return code end
  archive:run_end(run_id, "failed")
  local text = S.error_string(code)
  S.eprintf("avo: internal error while ending run %d: %s\n", run_id,
    S.debug and text or text:match("^[^\n]*"))
  return S.EXIT_FAILURE
end

-- "avo: " before a message that does not start with it already.
-- The end of `avo run` and `avo resume`, once the run is claimed: start
-- its remote workers (scaleout.start with `scale`: listen, slurm, jobs,
-- db), execute it (S.execute(ctx)), record how it ended (S.finish), close
-- pool, workers and archive; returns the exit status.  A scale-out that
-- cannot start fails the run.  `refused(message)` (optional) takes over a
-- run the engine refused to go on with (avo_refusal) and returns the status.
function S.run_to_end(ctx, scale, refused)
  local archive, pool = ctx.archive, ctx.pool
  local st, serr = scaleout.start(pool, scale, ctx.run_id,
    function(line) S.eprintf("%s\n", line) end)
  if serr then
    S.eprintf("avo: %s\n", serr)
    archive:run_end(ctx.run_id, "failed")
    pool:close()
    archive:close()
    return 1
  end
  ctx.scaleout = st
  local ok, result, run = S.execute(ctx)
  if not ok and refused and type(result) == "table" and result.avo_refusal then
    local code = refused(result.avo_refusal)
    scaleout.stop(st)
    return code
  end
  local code = S.finish(archive, ctx.run_id, ok, result, run, ctx.db, pool:gone())
  if type(ctx.args) == "table" and ctx.args.avo_experiment then
    -- a cell of an experiment records its own exit status (docs/experiments.md)
    local pok, rok, rerr = pcall(require("avo.experiment").record_exit, archive, ctx.run_id,
      ctx.args, code)
    if not (pok and rok) then
      S.eprintf("avo: cannot record the cell's exit status: %s\n", S.error_string(pok and rerr
        or rok))
    end
  end
  pool:close()
  scaleout.stop(st)
  archive:close()
  return code
end

function S.prefixed(msg)
  msg = S.error_string(msg)
  if msg:sub(1, 5) == "avo: " then return msg end
  return "avo: " .. msg
end

return S
