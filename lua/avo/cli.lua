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

local function engine_version()
  return ("avo %s (git %s)"):format(core.version, core.git_commit)
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
  local llm = avo.llm.totals()
  if llm and llm.calls > 0 then
    parts[#parts + 1] = ("llm %d calls, %d tok, $%.4f"):format(llm.calls,
      llm.input_tokens + llm.output_tokens, llm.cost_usd)
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

-- Run a script's chunk as the main task of a run that is already in the
-- archive.  `recorded` (resume/replay) answers evaluations from a recorded
-- run.  Returns ok, error (string or divergence table), run state.
local function execute(ctx)
  local archive, pool = ctx.archive, ctx.pool
  local run = avo._begin{
    archive = archive, pool = pool, run_id = ctx.run_id, seed = ctx.seed, db = ctx.db,
    max_evaluations = ctx.max_evals, max_seconds = ctx.max_time,
    started = core.monotonic() - (ctx.elapsed_before or 0), cache_dir = cache_dir(),
    generation = 0, recorded = ctx.recorded,
    max_usd = ctx.max_usd, max_tokens = ctx.max_tokens, llm_replay = ctx.llm_replay,
    llm_resume = ctx.llm_resume,
  }
  local status = Status.new(run)
  run.on_log = function(msg) status:log(msg) end
  run.on_progress = function()
    if status.tty then status:tick(true) else io.stderr:write(status:line(), "\n") end
  end
  run.on_record = function()
    status.unit = run.unit or status.unit
  end
  sched.init(pool, function() status:tick() end)
  core.catch_interrupts()

  -- Scripts get their KEY=VALUE arguments as `...`; a script that returns a
  -- strategy-like table is run with them.
  local args = ctx.args or {}
  local ok, result = pcall(sched.run, function()
    local ret = ctx.chunk(args)
    if type(ret) == "table" and type(ret.run) == "function" and ret.id == nil then
      ret = ret.run(args)
    end
    return ret
  end)
  status:clear()
  run.llm = avo.llm.totals()
  avo._end()
  run.unit = run.unit or status.unit
  return ok, result, run
end

-- The closing lines of a run.
local function summarise(run, final, db)
  local unit = run.unit or "score"
  eprintf("avo: %s after %d evaluations (%d failed) in %s\n", final, run.finished, run.failed,
    format_duration(core.monotonic() - run.started))
  local llm = run.llm
  if llm and llm.calls > 0 then
    eprintf("avo: %d LLM calls (%d failed), %d tokens in, %d out, $%.4f\n", llm.calls,
      llm.failed, llm.input_tokens, llm.output_tokens, llm.cost_usd)
  end
  local best = run.best
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
end

local function error_text(err)
  if type(err) == "table" and err.avo_divergence then return err.avo_divergence end
  return tostring(err)
end

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
    args = opts.args or {}, max_usd = opts.max_usd, max_tokens = opts.max_tokens,
    llm_replay = opts.llm_replay,
  }
  local run_id, err = archive:run_begin{
    script_path = script, script_source = source, config = config, seed = seed,
    engine_version = engine_version(), compiler = compiler_version(), host = host_description(),
  }
  if not run_id then
    eprintf("avo: %s\n", err)
    return 1
  end
  eprintf("avo: run %d of %s into %s (seed %d, %d jobs)\n", run_id, script, db, seed, jobs)
  local ok, result, run = execute{
    archive = archive, pool = pool, run_id = run_id, seed = seed, db = db, chunk = chunk,
    args = opts.args, max_evals = opts.max_evals, max_time = opts.max_time,
    max_usd = opts.max_usd, max_tokens = opts.max_tokens, llm_replay = opts.llm_replay,
  }
  -- avo.exit(status, message): the script chose to stop.
  if not ok and type(result) == "table" and result.avo_exit then
    archive:run_end(run_id, "stopped")
    if result.message then eprintf("%s\n", tostring(result.message)) end
    pool:close()
    archive:close()
    return result.avo_exit
  end
  local final = core.interrupted() and "stopped" or (ok and "done" or "failed")
  archive:run_end(run_id, final)
  if not ok then eprintf("avo: %s\n", error_text(result)) end
  if ok then summarise(run, final, db) end
  pool:close()
  archive:close()
  return ok and 0 or 1
end

-- The recorded answers of run `run_id`: candidates by key, evaluator
-- fingerprints by origin.
local function recorded_answers(archive, run_id, mode)
  local by_key, evaluators = {}, {}
  for _, c in ipairs(assert(archive:candidates(run_id, false))) do
    if c.key then by_key[c.key] = c end
  end
  for _, e in ipairs(assert(archive:events(run_id, "evaluator"))) do
    if e.data and e.data.origin then evaluators[e.data.origin] = e.data.fingerprint end
  end
  -- Events in the order the run emitted them, without the engine's own
  -- resume markers: a resumed run skips these as it emits them again.
  local events = {}
  for _, e in ipairs(assert(archive:events(run_id))) do
    if e.kind ~= "resume" then events[#events + 1] = e end
  end
  return { mode = mode, by_key = by_key, evaluators = evaluators,
           attempts = assert(archive:attempts(run_id)), next_attempt = 1,
           events = events, next_event = 1 }
end

-- The run to resume or replay, with its chunk, or nil after printing why.
local function load_recorded_run(archive, db, run_arg)
  local info, err = archive:run_get(run_arg or 0)
  if not info then
    eprintf("avo: %s\n", err or ("no run in " .. db))
    return nil
  end
  local chunk, serr = load(info.script_source or "", "@" .. (info.script_path or "script"), "t")
  if not chunk then
    eprintf("avo: recorded script does not load: %s\n", serr)
    return nil
  end
  return info, chunk
end

-- Seconds the run had been going when it was stopped: first created to
-- last evaluated candidate.
local function elapsed_of(candidates)
  local first, last
  for _, c in ipairs(candidates) do
    first = first and math.min(first, c.created_at) or c.created_at
    if c.evaluated_at then last = last and math.max(last, c.evaluated_at) or c.evaluated_at end
  end
  return (first and last) and math.max(0, last - first) or 0
end

-- opts: db, run, jobs
function M.resume(opts)
  local db = opts.db
  local archive, pool = open_engine({ jobs = opts.jobs or core.cores() }, db)
  if not archive then
    eprintf("avo: %s\n", pool)
    return 1
  end
  local info, chunk = load_recorded_run(archive, db, opts.run)
  if not info then return 1 end
  if info.status == "done" then
    eprintf("avo: run %d in %s finished; there is nothing to resume\n", info.id, db)
    return 1
  end
  local config = info.config or {}
  local recorded = recorded_answers(archive, info.id, "resume")
  local candidates = archive:candidates(info.id, false)
  local finished = 0
  for _, c in ipairs(candidates) do
    if c.status ~= "pending" then finished = finished + 1 end
  end
  archive:run_reopen(info.id)
  archive:event(info.id, "resume", { finished = finished, candidates = #candidates })
  eprintf("avo: resuming run %d of %s in %s (%d finished evaluations kept)\n", info.id,
    info.script_path, db, finished)
  local ok, result, run = execute{
    archive = archive, pool = pool, run_id = info.id, seed = info.seed, db = db, chunk = chunk,
    args = config.args, max_evals = config.max_evals, max_time = config.max_time,
    recorded = recorded, elapsed_before = elapsed_of(candidates),
    max_usd = config.max_usd, max_tokens = config.max_tokens, llm_replay = config.llm_replay,
    llm_resume = db,
  }
  local final = core.interrupted() and "stopped" or (ok and "done" or "failed")
  archive:run_end(info.id, final)
  if not ok then eprintf("avo: %s\n", error_text(result)) end
  if ok then summarise(run, final, db) end
  pool:close()
  archive:close()
  return ok and 0 or 1
end

-- What must agree for two lineages to be the same, per candidate.
local function lineage_line(c)
  local parents = {}
  for i, p in ipairs(c.parents or {}) do parents[i] = p.id .. ":" .. p.role end
  return ("#%d gen %d %s source %s knobs %s parents [%s] status %s"):format(c.id, c.generation,
    c.operator, c.source_hash, core.json_encode(c.knobs or {}), table.concat(parents, ","),
    c.status)
end

-- First difference between two runs' candidate lists, or nil.
local function first_difference(old, new)
  for i = 1, math.max(#old, #new) do
    local a, b = old[i], new[i]
    if not a then return ("the replay made more candidates (first extra: %s)"):format(lineage_line(b)) end
    if not b then return ("the replay stopped early (first missing: %s)"):format(lineage_line(a)) end
    local la, lb = lineage_line(a), lineage_line(b)
    if la ~= lb then return ("candidate %d differs:\n  recorded %s\n  replayed %s"):format(i, la, lb) end
  end
  return nil
end

-- First difference between two runs' attempts (the agent's measurements
-- that made no candidate), or nil.
local function attempts_difference(old, new)
  local function line(a)
    return ("attempt %d: lineage %s step %d source %s knobs %s %s (%s)"):format(a.id, a.lineage,
      a.step, a.source_hash, core.json_encode(a.knobs or {}), a.status, a.outcome)
  end
  for i = 1, math.max(#old, #new) do
    local a, b = old[i], new[i]
    if not (a and b) then
      return ("the replay made %s attempts than the recorded run (%d vs %d)"):format(
        b and "more" or "fewer", #new, #old)
    end
    local la, lb = line(a):gsub("^attempt %d+", ""), line(b):gsub("^attempt %d+", "")
    if la ~= lb then
      return ("attempt %d differs:\n  recorded %s\n  replayed %s"):format(i, line(a), line(b))
    end
  end
  return nil
end

-- opts: db, out, run
function M.replay(opts)
  local old_archive, err = core.archive(opts.db)
  if not old_archive then
    eprintf("avo: %s\n", err)
    return 1
  end
  local info, chunk = load_recorded_run(old_archive, opts.db, opts.run)
  if not info then return 1 end
  if io.open(opts.out, "r") then
    eprintf("avo: %s exists; replay writes a new archive\n", opts.out)
    return 2
  end
  local archive, pool = open_engine({ jobs = 1 }, opts.out)
  if not archive then
    eprintf("avo: %s\n", pool)
    return 1
  end
  local config = info.config or {}
  config.replay_of = { db = opts.db, run = info.id }
  local run_id = assert(archive:run_begin{
    script_path = info.script_path, script_source = info.script_source, config = config,
    seed = info.seed, engine_version = engine_version(), compiler = compiler_version(),
    host = host_description(),
  })
  eprintf("avo: replaying run %d of %s from %s into %s\n", info.id, info.script_path, opts.db,
    opts.out)
  local ok, result = execute{
    archive = archive, pool = pool, run_id = run_id, seed = info.seed, db = opts.out,
    chunk = chunk, args = config.args, max_evals = config.max_evals, max_time = config.max_time,
    recorded = recorded_answers(old_archive, info.id, "replay"), llm_replay = opts.db,
    max_usd = config.max_usd, max_tokens = config.max_tokens,
  }
  archive:run_end(run_id, ok and "done" or "failed")
  local diff
  if not ok then
    diff = error_text(result)
  else
    diff = first_difference(old_archive:candidates(info.id, false), archive:candidates(run_id, false))
      or attempts_difference(old_archive:attempts(info.id), archive:attempts(run_id))
  end
  pool:close()
  archive:close()
  old_archive:close()
  if diff then
    io.stdout:write("replay diverged: ", diff, "\n")
    return 1
  end
  io.stdout:write(("replay identical: %d candidates with the same parents, sources, knobs and " ..
    "decisions\n"):format(#(core.archive(opts.out):candidates(run_id, false))))
  return 0
end

---------------------------------------------------------------- avo rebench

local function mean_std(xs)
  local n, sum = #xs, 0
  for _, x in ipairs(xs) do sum = sum + x end
  local mean = n > 0 and sum / n or 0
  local var = 0
  for _, x in ipairs(xs) do var = var + (x - mean) ^ 2 end
  return mean, n > 1 and math.sqrt(var / (n - 1)) or 0
end

-- The evaluator a run used, reloaded from where it was found then.
local function run_evaluator(archive, run_id)
  local events = assert(archive:events(run_id, "evaluator"))
  local last = events[#events]
  if not last then return nil, "the run recorded no evaluator" end
  local ok, ev = pcall(avo.evaluator, last.data.origin)
  if not ok then return nil, tostring(ev) end
  return ev, nil, ev.fingerprint ~= last.data.fingerprint
end

-- opts: db, run, top, rounds
function M.rebench(opts)
  local db, top, rounds = opts.db, opts.top or 5, opts.rounds or 5
  local archive, pool = open_engine({ jobs = 1 }, db)
  if not archive then
    eprintf("avo: %s\n", pool)
    return 1
  end
  local info, err = archive:run_get(opts.run or 0)
  if not info then
    eprintf("avo: %s\n", err or ("no run in " .. db))
    return 1
  end
  local ev, everr, changed = run_evaluator(archive, info.id)
  if not ev then
    eprintf("avo: cannot rebench run %d: %s\n", info.id, everr)
    return 1
  end
  if ev.backend == "test" then
    eprintf("avo: run %d used the in-process test backend; there is nothing to time\n", info.id)
    return 1
  end
  if changed then
    eprintf("avo: warning: evaluator %s changed since run %d; timing with the current one\n",
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
    eprintf("avo: run %d has no verified candidate to rebench\n", info.id)
    return 1
  end

  local set_id = assert(archive:rebench_begin(info.id, { top = top, rounds = rounds,
    evaluator = ev._origin, fingerprint = ev.fingerprint, engine = engine_version() }))
  local run = avo._begin{ archive = archive, pool = pool, run_id = info.id, seed = info.seed,
    started = core.monotonic(), cache_dir = cache_dir() }
  sched.init(pool)
  local order_rng = avo.rng("rebench")
  local scores = {}
  for _, c in ipairs(chosen) do scores[c.id] = {} end
  eprintf("avo: rebench of run %d: %d candidates x %d rounds, interleaved, one at a time\n",
    info.id, #chosen, rounds)
  local ok, rerr = pcall(sched.run, function()
    for round = 1, rounds do
      -- A fresh order each round, so drift over time falls on all alike.
      local order = order_rng:shuffle({ table.unpack(chosen) })
      for _, c in ipairs(order) do
        local cand = { source = c.source, knobs = c.knobs }
        local seed_value = run.inputs:next() << 21 ~ run.inputs:next()
        local result = sched.await(sched.submit(ev:job(cand, seed_value, run.cache_dir),
          ev:deadline()))
        local score = ev:score_of(result)
        scores[c.id][round] = score
        result.id = nil
        assert(archive:rebench_add(set_id, c.id, round, score, result))
      end
    end
  end)
  avo._end()
  pool:close()
  if not ok then
    archive:close()
    eprintf("avo: %s\n", tostring(rerr))
    return 1
  end

  local unit = ev.unit
  io.stdout:write(("rebench set %d of run %d (%s, %d rounds)\n"):format(set_id, info.id, ev.name,
    rounds))
  io.stdout:write(("%-7s %-22s %12s %22s %20s\n"):format("cand", "operator", "recorded",
    "mean +- std " .. unit, "speedup vs seed"))
  for _, c in ipairs(chosen) do
    local mean, std = mean_std(scores[c.id])
    local speedup = "-"
    if seed then
      local ratios = {}
      for r = 1, rounds do
        local base = scores[seed.id][r]
        if base and base > 0 then ratios[#ratios + 1] = scores[c.id][r] / base end
      end
      local m, sd = mean_std(ratios)
      speedup = ("%.2fx +- %.2f"):format(m, sd)
    end
    io.stdout:write(("%-7s %-22s %12.4g %22s %20s\n"):format("#" .. c.id, c.operator:sub(1, 22),
      c.score, ("%.4g +- %.2g"):format(mean, std), speedup))
  end
  archive:close()
  return 0
end

------------------------------------------------------------------ avo eval

-- avo eval --compile-only: one CUDA compile job straight to a worker (no
-- archive, no score); prints per-kernel resources and NVRTC's log.
local function eval_compile_only(opts, ev, source, values)
  local job = ev:job({ source = source, knobs = values }, opts.seed or 1, cache_dir())
  job.compile_only = true
  local exe = assert(core.exe())
  local pool, perr = core.pool(1, exe)
  if not pool then
    eprintf("avo eval: %s\n", perr)
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
  io.stdout:write(("%s on %s: %s (compile only, %s, %s)"):format(opts.kernel, ev.name,
    result.status, compile.arch or ev.arch or "device arch", result.compiler or "NVRTC"))
  if result.reason then io.stdout:write(" — ", result.reason) end
  io.stdout:write("\n")
  if compile.kernels then
    io.stdout:write(("%-40s %9s %11s %12s %11s %10s\n"):format("kernel", "registers",
      "local bytes", "spill st/ld", "smem bytes", "params"))
    for _, k in ipairs(compile.kernels) do
      local name = k.name .. (k.entry and " (entry)" or "")
      local spill = k.spill_store_bytes >= 0 and ("%d/%d"):format(k.spill_store_bytes,
        k.spill_load_bytes) or "?"
      io.stdout:write(("%-40s %9d %11d %12s %11d %10d\n"):format(name, k.registers,
        math.max(k.local_bytes, 0), spill, k.static_shared_bytes, #(k.params or {})))
    end
  end
  if result.log and result.log ~= "" then io.stdout:write("log:\n", result.log, "\n") end
  return result.status == "ok" and 0 or 1
end

local function parse_value(s)
  return math.tointeger(tonumber(s)) or tonumber(s) or s
end

-- opts: kernel, evaluator, params (array of "NAME=VALUE"), json, seed,
-- compile_only, arch
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

  if opts.compile_only or opts.arch then
    if ev.backend ~= "cuda" then
      eprintf("avo eval: --compile-only and --arch apply to CUDA evaluators; %s is '%s'\n",
        ev.name, ev.backend)
      return 2
    end
    ev.arch = opts.arch or ev.arch
  end
  if opts.compile_only then return eval_compile_only(opts, ev, source, values) end

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
