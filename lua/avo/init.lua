-- avo — the API that scripts, strategies and operators program against
-- (documented in docs/lua-api.md).  The engine state of the current run
-- (archive, pool, budgets, streams) is installed by avo.cli through
-- avo._begin and is private to this module.

local core = require "avo.core"
local sched = require "avo.sched"
local knobs = require "avo.knobs"
local evaluator = require "avo.evaluator"
local paths = require "avo.paths"
local llm = require "avo.llm"
local baselines = require "avo.baselines"

local avo = {}
avo.version = core.version

local run -- the current run, see avo._begin

local function need_run(fname)
  if not run then error(("avo.%s: only available inside 'avo run'"):format(fname), 3) end
  return run
end

------------------------------------------------------------------ loading

local loaded = { strategies = {}, operators = {} }

local function load_part(kind, name)
  if type(name) ~= "string" then
    error(("expected a %s name, got %s"):format(kind:sub(1, -2), type(name)), 3)
  end
  local cache = loaded[kind]
  if cache[name] then return cache[name] end
  local path = paths.find(kind, name)
  if not path then
    error(("%s '%s' not found (looked in %s)"):format(kind:sub(1, -2), name,
      table.concat(paths.search_dirs(kind), ", ")), 3)
  end
  local chunk, err = loadfile(path, "t")
  if not chunk then error(err, 0) end
  local module = chunk()
  if type(module) ~= "table" then
    error(("%s: must return a table, got %s"):format(path, type(module)), 0)
  end
  cache[name] = module
  return module
end

function avo.evaluator(spec) return evaluator.load(spec) end

function avo.strategy(name)
  local s = load_part("strategies", name)
  if type(s.run) ~= "function" then error(("strategy '%s' has no run function"):format(name), 2) end
  return s
end

function avo.operator(name)
  local op = load_part("operators", name)
  if type(op.apply) ~= "function" then
    error(("operator '%s' has no apply function"):format(name), 2)
  end
  op.name = op.name or name
  return op
end

------------------------------------------------------------ randomness

local Rng = {}
Rng.__index = Rng

function avo.rng(name)
  local r = need_run("rng")
  if type(name) ~= "string" then error("avo.rng: stream name must be a string", 2) end
  if not r.streams[name] then
    r.streams[name] = setmetatable({ gen = core.rng(r.seed, name), name = name }, Rng)
  end
  return r.streams[name]
end

-- Uniform integer in [lo, hi].
function Rng:int(lo, hi)
  if not hi then lo, hi = 1, lo end
  if hi < lo then error(("rng:int: empty range [%d, %d]"):format(lo, hi), 2) end
  return lo + self.gen:below(hi - lo + 1)
end

function Rng:float() return self.gen:double() end

function Rng:chance(p) return self.gen:double() < p end

function Rng:choice(array)
  if #array == 0 then error("rng:choice: empty array", 2) end
  return array[1 + self.gen:below(#array)]
end

function Rng:shuffle(array)
  for i = #array, 2, -1 do
    local j = 1 + self.gen:below(i)
    array[i], array[j] = array[j], array[i]
  end
  return array
end

-- A key of `weights` drawn with probability proportional to its weight.
function Rng:weighted(weights)
  local keys, total = {}, 0
  for k, w in pairs(weights) do
    if type(w) ~= "number" or w < 0 then
      error(("rng:weighted: weight of '%s' must be a number >= 0"):format(tostring(k)), 2)
    end
    if w > 0 then keys[#keys + 1] = k; total = total + w end
  end
  if total == 0 then error("rng:weighted: all weights are zero", 2) end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local x = self.gen:double() * total
  for _, k in ipairs(keys) do
    x = x - weights[k]
    if x < 0 then return k end
  end
  return keys[#keys]
end

--------------------------------------------------------------- knobs etc.

function avo.knobs(source)
  local ok, list = pcall(knobs.parse, source)
  if not ok then error("avo.knobs: " .. list, 2) end
  return list
end

function avo.merge3(base, ours, theirs)
  local merged, n = core.merge3(base, ours, theirs)
  if not merged then error("avo.merge3: " .. n, 2) end
  return merged, n
end

avo.lineage = {}

function avo.lineage.get(id)
  local r = need_run("lineage.get")
  local rec = r.archive:get(id, true)
  return rec
end

function avo.lineage.common_ancestor(a, b)
  local r = need_run("lineage.common_ancestor")
  return r.archive:common_ancestor(a, b)
end

-- Verified records of this run with distinct sources, best first (score,
-- then lower id); each source once, by its best record.
local function distinct_sources(r)
  local sorted = table.move(r.ok_records, 1, #r.ok_records, 1, {})
  table.sort(sorted, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.id < b.id
  end)
  local out, seen = {}, {}
  for _, rec in ipairs(sorted) do
    if not seen[rec.source] then
      seen[rec.source] = true
      out[#out + 1] = rec
    end
  end
  return out
end

-- Up to n of the best verified records of this run, one per source.
function avo.lineage.top(n)
  local r = need_run("lineage.top")
  return table.move(distinct_sources(r), 1, n, 1, {})
end

-- Up to n verified records, one per source, drawn with `rng` from those
-- whose id is not a key of `exclude` (ids -> true); id order before the
-- draw, so the choice is reproducible.
function avo.lineage.diverse(n, rng, exclude)
  local r = need_run("lineage.diverse")
  local pool = {}
  for _, rec in ipairs(distinct_sources(r)) do
    if not (exclude and exclude[rec.id]) then pool[#pool + 1] = rec end
  end
  table.sort(pool, function(a, b) return a.id < b.id end)
  if rng then rng:shuffle(pool) end
  return table.move(pool, 1, n, 1, {})
end

------------------------------------------------------------ evaluation

-- Evaluation budget check, counting submissions (duplicates are free).  An
-- exhausted LLM budget does not stop evaluations: children already paid for
-- are still evaluated.
--
-- The time limit and a signal are the run's only budget checks that a
-- re-execution cannot reproduce, so the first check that finds one is
-- recorded (event "run_stop" {why, check = its number among the counted
-- checks}); a replay of that run is stopped at the same check instead of
-- by its own clock (r.stop_at).  `count` is false for checks whose number
-- depends on timing (an LLM call waiting for a slot).
local function stopped(r, count)
  if count ~= false then r.checks = r.checks + 1 end
  if r.stop_at then return r.checks >= r.stop_at end
  local why = core.interrupted() and "signal"
    or (r.max_seconds and core.monotonic() - r.started >= r.max_seconds and "max-time")
  if why and not r.stop_recorded and r.archive then
    r.stop_recorded = true
    r.archive:event(r.run_id, "run_stop", { why = why, check = r.checks,
      submitted = r.submitted, elapsed_s = core.monotonic() - r.started })
  end
  return why ~= nil and why ~= false
end

local function evaluations_exhausted(r, count)
  if stopped(r, count) then return true end
  if r.pool and r.pool.gone and r.pool:gone() then return true end
  if r.max_evaluations and r.submitted >= r.max_evaluations then return true end
  return false
end

-- Whole-run budget check: evaluations, time, interruption, LLM spend.
function avo.exhausted()
  local r = need_run("exhausted")
  return evaluations_exhausted(r) or llm.exhausted()
end

-- How the bests are re-timed when the run ends (avo.retime): {top = K,
-- rounds = N}; top 0 turns it off.  A strategy calls it to change the
-- defaults; the command line's --retime/--retime-rounds win over it.
function avo.retime(opts)
  local r = need_run("retime")
  if type(opts) ~= "table" then error("avo.retime: expects a table {top =, rounds =}", 2) end
  for _, k in ipairs({ "top", "rounds" }) do
    local v = opts[k]
    if v ~= nil and (math.type(v) ~= "integer" or v < 0 or v > 1000) then
      error(("avo.retime: '%s' must be an integer from 0 to 1000"):format(k), 2)
    end
  end
  if opts.rounds == 0 then error("avo.retime: 'rounds' must be at least 1", 2) end
  r.retime_script = { top = opts.top, rounds = opts.rounds }
end

function avo.budget()
  local r = need_run("budget")
  return {
    evaluations = r.submitted, max_evaluations = r.max_evaluations,
    elapsed = core.monotonic() - r.started, max_seconds = r.max_seconds,
    llm = llm.totals(), max_usd = r.max_usd, max_tokens = r.max_tokens,
  }
end

function avo.best() return need_run("best").best end

-- The baselines of this run measured so far (rows of the archive's
-- baselines table: name, device, status, reason, score, ...).  With
-- { wait = true }, first waits for every baseline started so far.
function avo.baselines(opts)
  local r = need_run("baselines")
  if opts ~= nil and type(opts) ~= "table" then error("avo.baselines: options must be a table", 2) end
  if opts and opts.wait then
    for _, t in ipairs(r.baseline_tickets) do sched.await(t) end
  end
  return table.move(r.baseline_rows, 1, #r.baseline_rows, 1, {})
end
function avo.seed_record() return need_run("seed_record").seed_record end

local function check_candidate(c, i)
  local where = i and ("candidate %d"):format(i) or "candidate"
  if type(c) ~= "table" then error(("%s must be a table"):format(where), 4) end
  if type(c.source) ~= "string" then error(("%s needs a 'source' string"):format(where), 4) end
  if c.knobs ~= nil and type(c.knobs) ~= "table" then
    error(("%s: 'knobs' must be a table"):format(where), 4)
  end
  if c.operator ~= nil and type(c.operator) ~= "string" then
    error(("%s: 'operator' must be a string"):format(where), 4)
  end
  if c.parents ~= nil and type(c.parents) ~= "table" then
    error(("%s: 'parents' must be an array of {id=, role=}"):format(where), 4)
  end
end

-- The record a strategy sees: the candidate plus its outcome.
local function make_record(r, id, cand, result, score, ev)
  local rec = {
    id = id, run_id = r.run_id, source = cand.source, knobs = cand.knobs or {},
    evaluator = ev and ev.name, -- its baselines are the only ones it is compared with
    operator = cand.operator or "manual", parents = cand.parents or {},
    note = cand.note, generation = cand.generation or 0, model = cand.model,
    status = result.status, reason = result.reason, log = result.log,
    score = score, configs = result.configs or {}, checks = result.checks,
    artifacts = result.artifacts,
    sandbox = result.sandbox, -- the mechanism that isolated it (core/sandbox.h)
  }
  return rec
end

-- Update the run's statistics with a finished record.
local function account(r, rec, cand)
  r.finished = r.finished + 1
  -- A pruned candidate (a cascade stopped it early) did not fail.
  if rec.status == "pruned" then
    r.pruned = r.pruned + 1
  elseif rec.status ~= "ok" then
    r.failed = r.failed + 1
  end
  if rec.status == "ok" and (not r.best or rec.score > r.best.score) then r.best = rec end
  if rec.status == "ok" then r.ok_records[#r.ok_records + 1] = rec end
  if cand.operator == "seed" and not r.seed_record then r.seed_record = rec end
  if r.on_record then r.on_record(rec) end
end

local cascade -- defined below submit

-- Record a finished evaluation: archive first, then statistics.  `score`
-- is given when the result is a recorded one (replay), else computed.
local function on_result(r, ev, id, cand, result, score)
  local recorded = score ~= nil
  score = score or ev:score_of(result)
  r.unit = r.unit or ev.unit
  if result.status == "ok" and not ev:verified(result) then
    result.status = "wrong"
    result.reason = result.reason or "not every config was verified"
  end
  -- The latest verified candidate of each evaluator: the control that
  -- tells a broken machine from a candidate that fails it (submit_job).
  if result.status == "ok" and cand.source then
    r.controls[ev.fingerprint] = { source = cand.source, knobs = cand.knobs or {} }
  end
  -- Evaluator feedback for later prompts; a recorded result keeps its own.
  if not recorded then result.artifacts = ev:artifacts_of(result, cand) end
  local ok, err = r.archive:finish(id, result, score)
  if not ok then error("avo: cannot record evaluation in the archive: " .. err, 0) end
  local rec = make_record(r, id, cand, result, score, ev)
  account(r, rec, cand)
  return rec
end

------------------------------------------------- infrastructure faults

-- A result is an infrastructure fault, not the candidate's, when the backend
-- says so (status "error": the cache cannot be written, the compiler was
-- killed from outside or its disk is full, the sandbox could not be set up,
-- the judge failed) or when the worker process died while running the job
-- (the pool's `worker_lost`: killed from outside, out of memory).  The
-- backend decides from what the trusted side observed, but a candidate may
-- still provoke one (kill its judge, fill a disk): submit_job settles that.
local function infra_fault(result)
  return result.status == "error" or result.worker_lost == true
end

local controls_run = 0

-- A control job for `ev`: its latest verified candidate of this run, with
-- a comment that makes the source new to the compile cache (so the control
-- compiles too), or nil when the run has none yet.
local function control_job(r, ev, job)
  local c = r.controls[ev.fingerprint]
  if not c then return nil end
  controls_run = controls_run + 1
  local source = c.source .. ("\n/* avo: control evaluation %d */\n"):format(controls_run)
  return ev:job({ source = source, knobs = c.knobs }, job.seed, job.cache_dir)
end

-- The record of a candidate that failed "for the machine" on every try
-- while a control passed on the same machine right after: its own doing.
local function charged(result, tries)
  local out = {}
  for k, v in pairs(result) do out[k] = v end
  out.status = "crashed"
  out.reason = ("failed for the machine on all %d tries while a verified candidate passed " ..
    "right after (charged to the candidate): %s"):format(tries, tostring(result.reason or
    (result.worker_lost and "worker lost") or "error"))
  out.worker_lost = nil
  return out
end

-- Submit `job`; done(result) turns its result into the ticket's value.  An
-- infrastructure fault is retried up to r.infra_retries times (each try a
-- fresh judge, maybe another worker).  A job whose tries all fault is then
-- compared with a control (control_job, run as another try of the same
-- ticket): if the control passes, the machine works and the candidate is
-- charged (status "crashed", the reason says why); if it faults too, or the
-- run has no verified candidate yet, the fault is the machine's and the
-- job reaches done with result.infrastructure (left pending for resume).
-- When r.infra_limit faults in a row (over all jobs) are reached, a control
-- runs first as well: only if it fails too (or there is none) is the
-- environment broken and the run stopped (an error {avo_environment=});
-- otherwise the streak starts over, so hostile candidates, one after the
-- other or side by side, never stop a run.
local function submit_job(r, job, deadline, done, ev)
  local tries, probing, last = 0, nil, nil
  local function stop(why)
    error({ avo_environment = ("avo: the environment is broken: %d infrastructure faults " ..
      "in a row (the last: %s); stopped.  No candidate was charged with them: fix the " ..
      "environment and `avo resume` evaluates them again"):format(r.infra_streak, why) }, 0)
  end
  local function log(text) if r.on_log then r.on_log(text) end end
  local function retry_or_settle(key, why)
    if tries <= r.infra_retries then
      log(("avo: infrastructure fault, not the candidate's (%s); retry %d of %d")
        :format(why, tries, r.infra_retries))
      return sched.retry(key, job, deadline)
    end
    local control = ev and control_job(r, ev, job)
    if control then
      probing = "charge"
      log(("avo: the same fault on all %d tries (%s); running a verified candidate as a " ..
        "control"):format(tries, why))
      return sched.retry(key, control, deadline)
    end
    last.infrastructure = true
    return done(last)
  end
  return sched.submit(job, deadline, function(result, key)
    if probing then
      local purpose = probing
      probing = nil
      local why = tostring(last.reason or last.status)
      if result.status ~= "ok" then
        if infra_fault(result) then r.infra_faults = r.infra_faults + 1 end
        if purpose == "limit" then stop(why) end
        last.infrastructure = true
        return done(last)
      end
      r.infra_streak = 0 -- the machine works
      if purpose == "charge" then
        log(("avo: the control passed: candidate charged with its fault (%s)"):format(why))
        return done(charged(last, tries))
      end
      return retry_or_settle(key, why)
    end
    if not infra_fault(result) then
      r.infra_streak = 0
      return done(result)
    end
    -- Every worker gone for good (remote or Slurm): not a broken machine but
    -- the end of the run; the job stays pending for resume, no retry.
    if r.pool and r.pool.gone and r.pool:gone() then
      result.infrastructure = true
      return done(result)
    end
    tries = tries + 1
    last = result
    r.infra_streak = r.infra_streak + 1
    r.infra_faults = r.infra_faults + 1
    local why = tostring(result.reason or result.status)
    if r.infra_streak >= r.infra_limit then
      local control = ev and control_job(r, ev, job)
      if not control then stop(why) end
      probing = "limit"
      log(("avo: %d infrastructure faults in a row (the last: %s); running a verified " ..
        "candidate as a control"):format(r.infra_streak, why))
      return sched.retry(key, control, deadline)
    end
    return retry_or_settle(key, why)
  end)
end

-- A candidate whose evaluation hit infrastructure faults on every try: it
-- stays pending in the archive (so `avo resume` evaluates it again) and the
-- strategy sees a failed record with status "error".  It is counted as
-- pending (r.infra_unfinished), never as finished or failed, as the
-- archive counts it (`avo runs`).
local function unfinished(r, id, cand, result, ev)
  r.infra_unfinished = r.infra_unfinished + 1
  result.reason = ("infrastructure fault, not the candidate's (%s); left unfinished for " ..
    "avo resume"):format(tostring(result.reason or "worker lost"))
  result.status = "error"
  local rec = make_record(r, id, cand, result, 0, ev)
  if r.on_record then r.on_record(rec) end
  return rec
end

local function duplicate_of(rec)
  local copy = {}
  for k, v in pairs(rec) do copy[k] = v end
  copy.duplicate = true
  return copy
end

-- The worker result a recorded candidate (archive object) stands for.
local function recorded_result(old)
  local result = {}
  for k, v in pairs(old.result or {}) do result[k] = v end
  result.status, result.reason, result.log = old.status, old.reason, old.log
  result.configs = old.configs or setmetatable({}, core.json_array_mt)
  return result
end

-- A replay met a candidate the recorded run never evaluated.
local function diverge(r, cand, why)
  error({ avo_divergence = why or ("evaluation %d (operator %s, generation %d) is not in the " ..
    "recorded run: the strategy made a different candidate"):format(r.submitted,
    cand.operator or "manual", cand.generation or 0) }, 0)
end

-- First use of an evaluator in a run: record what identifies it, and check
-- it against the recorded run being resumed or replayed.
-- Write an event to the run's archive.  While a resumed run re-executes
-- the part it had already done, the events it emits again are the recorded
-- ones, in the same order: those are skipped instead of written twice.
local function emit(r, kind, data)
  local rec = r.recorded
  if rec and rec.mode == "resume" and rec.events then
    local next_event = rec.events[rec.next_event]
    if next_event and next_event.kind == kind then
      rec.next_event = rec.next_event + 1
      return true
    end
    rec.events = nil -- past the recorded part: write from now on
  end
  return r.archive:event(r.run_id, kind, data)
end

local function note_evaluator(r, ev)
  if r.evaluators[ev.fingerprint] then return end
  r.evaluators[ev.fingerprint] = true
  if r.pool and r.pool.allow_fingerprint then r.pool:allow_fingerprint(ev.fingerprint) end
  local rec = r.recorded
  local before = rec and rec.evaluators[ev._origin]
  if before and before ~= ev.fingerprint then
    local why = ("evaluator %s (%s) changed since the recorded run (fingerprint %s -> %s)")
      :format(ev.name, ev._origin, before:sub(1, 12), ev.fingerprint:sub(1, 12))
    if rec.mode == "replay" then error({ avo_divergence = why }, 0) end
    error({ avo_refusal = "avo: cannot resume: " .. why }, 0)
  end
  -- By name, for re-timing the bests at the end (avo.retime).
  r.evaluator_objects = r.evaluator_objects or {}
  r.evaluator_objects[ev.name] = r.evaluator_objects[ev.name] or ev
  emit(r, "evaluator", { name = ev.name, origin = ev._origin, fingerprint = ev.fingerprint,
    backend = ev.backend, unit = ev.unit })
  -- The evaluator's baselines run beside the search (avo.baselines).
  local tickets = baselines.start(r, ev)
  for _, t in ipairs(tickets) do r.baseline_tickets[#r.baseline_tickets + 1] = t end
end

-- Submit one candidate; returns a ticket key and whether it is a duplicate.
local function submit(r, ev, cand)
  local key = ev:key(cand)
  local known = r.by_key[key]
  if known then return known, true end
  if evaluations_exhausted(r) then
    return sched.complete_now({ status = "skipped", reason = "budget exhausted", score = 0,
      source = cand.source, knobs = cand.knobs or {}, operator = cand.operator,
      parents = cand.parents or {}, configs = {} }), false
  end
  note_evaluator(r, ev)
  r.submitted = r.submitted + 1
  -- Drawn for every evaluation, answered from a record or not, so resumed
  -- and replayed runs stay in step with the original.
  local seed = r.inputs:next() << 21 ~ r.inputs:next()
  local old = r.recorded and r.recorded.by_key[key]
  if r.recorded and r.recorded.mode == "replay" and not (old and old.status ~= "pending") then
    diverge(r, cand)
  end
  -- Resuming: an infrastructure fault recorded as a verdict (status "error",
  -- as older versions did) is evaluated again like a pending one.
  if old and r.recorded.mode == "resume" and old.status == "error" then
    old = setmetatable({ status = "pending" }, { __index = old })
  end
  -- Resuming a replay: what the replay had not finished is answered from
  -- the run it replays (recorded.origin), never evaluated live.
  local from_origin
  if r.recorded and r.recorded.origin and not (old and old.status ~= "pending") then
    from_origin = r.recorded.origin.by_key[key]
    if not (from_origin and from_origin.status ~= "pending") then diverge(r, cand) end
  end

  local id
  if old and r.recorded.mode == "resume" then
    id = old.id -- the row exists; a pending one is evaluated again below
  else
    local err
    id, err = r.archive:add{
      run_id = r.run_id, generation = cand.generation or 0, operator = cand.operator or "manual",
      source = cand.source, knobs = cand.knobs or {}, note = cand.note, key = key,
      parents = cand.parents or {}, evaluator = ev.name,
    }
    if not id then error("avo: cannot record candidate in the archive: " .. err, 0) end
  end

  local ticket
  if ev._stages and not (old and old.status ~= "pending") then
    ticket = cascade(r, ev, id, cand, seed)
  elseif old and old.status ~= "pending" then
    local rec
    if r.recorded.mode == "resume" then
      r.unit = r.unit or ev.unit -- the status line's unit while recorded answers replay
      rec = make_record(r, id, cand, recorded_result(old), old.score or 0, ev)
      account(r, rec, cand)
    else
      rec = on_result(r, ev, id, cand, recorded_result(old), old.score or 0)
    end
    ticket = sched.complete_now(rec)
  elseif from_origin then
    ticket = sched.complete_now(on_result(r, ev, id, cand, recorded_result(from_origin),
      from_origin.score or 0))
  elseif ev.backend == "test" then
    ticket = sched.complete_now(on_result(r, ev, id, cand, ev:test_result(cand)))
  else
    ticket = submit_job(r, ev:job(cand, seed, r.cache_dir), ev:deadline(), function(result)
      if result.infrastructure then return unfinished(r, id, cand, result, ev) end
      return on_result(r, ev, id, cand, result)
    end, ev)
  end
  r.by_key[key] = ticket
  return ticket, false
end

-- Worker result of `view` (an evaluator or a cascade stage's view) for
-- `cand`: in-process for the test backend, else a job awaited in the task.
local function measure(r, view, cand, seed)
  if view.backend == "test" then return view:test_result(cand) end
  return sched.await(sched.submit(view:job(cand, seed, r.cache_dir), view:deadline(),
    function(result) return result end))
end

-- Cascade evaluation (the evaluator's `cascade`, ev._stages): the configs
-- of each stage in turn, in a task of its own.  A candidate that fails a
-- stage stops there (its result holds the configs run so far); one whose
-- score on a stage's configs is below min_ratio x the run's best on the
-- same configs stops as "pruned".  Returns a ticket for the record.
cascade = function(r, ev, id, cand, seed)
  local ticket = sched.event()
  local function run_stages()
    local configs, final, last = {}, nil, nil
    for i, stage in ipairs(ev._stages) do
      local view = stage.view
      local result = measure(r, view, cand, seed)
      last = result
      for _, c in ipairs(result.configs or {}) do configs[#configs + 1] = c end
      if result.status ~= "ok" or not view:verified(result) then
        final = result
        final.status = result.status == "ok" and "wrong" or result.status
        final.reason = ("cascade stage %d: %s"):format(i, result.reason or
          "not every config was verified")
        break
      end
      local best = r.best
      if stage.min_ratio and best and best.configs and i < #ev._stages then
        local theirs, have = {}, {}
        for _, c in ipairs(best.configs) do have[c.name] = c end
        for _, name in ipairs(stage.names) do theirs[#theirs + 1] = have[name] end
        local best_score = #theirs == #stage.names and
          view:score_of({ status = "ok", configs = theirs }) or 0
        local mine = view:score_of(result)
        if best_score > 0 and mine < stage.min_ratio * best_score then
          final = result
          final.status = "pruned"
          final.reason = ("cascade stage %d (%s): %.4g %s, below %g x the best's %.4g (#%d)")
            :format(i, table.concat(stage.names, ", "), mine, ev.unit or "", stage.min_ratio,
              best_score, best.id)
          break
        end
      end
    end
    if not final then
      final = last
      local order = {}
      for i, c in ipairs(ev.configs) do order[c.name] = i end
      table.sort(configs, function(a, b) return (order[a.name] or 0) < (order[b.name] or 0) end)
    end
    final.configs = setmetatable(configs, core.json_array_mt)
    sched.resolve(ticket, on_result(r, ev, id, cand, final), true)
  end
  sched.spawn(function()
    -- An error here is the awaiting task's error, not a silent hang.
    local ok, err = xpcall(run_stages, debug.traceback)
    if not ok then sched.fail(ticket, err) end
  end)
  return ticket
end

function avo.evaluate_all(ev, cands)
  local r = need_run("evaluate_all")
  if getmetatable(ev) ~= evaluator.Evaluator then
    error("avo.evaluate_all: first argument must be an evaluator (avo.evaluator(...))", 2)
  end
  if type(cands) ~= "table" then error("avo.evaluate_all: expected an array of candidates", 2) end
  local tickets, dup = {}, {}
  for i, c in ipairs(cands) do
    check_candidate(c, i)
    tickets[i], dup[i] = submit(r, ev, c)
  end
  local records = {}
  for i, t in ipairs(tickets) do
    local rec = sched.await(t)
    records[i] = dup[i] and duplicate_of(rec) or rec
  end
  return records
end

-------------------------------------------- attempts, re-timing, compiling

-- An attempt is a measurement that makes no candidate: an agent's trial
-- version, or a re-timing of a version already measured.  It bypasses the
-- dedupe by (source, knobs), takes a fresh input seed, counts against the
-- evaluation budget and lands in the archive's attempts table.

local ATTEMPT_KEYS = { lineage = "string", step = "number", outcome = "string",
                       reason = "string", candidate_id = "number" }

local function check_attempt(a)
  if type(a) ~= "table" then error("avo.evaluate: 'attempt' must be a table", 4) end
  for k, want in pairs(ATTEMPT_KEYS) do
    if a[k] ~= nil and type(a[k]) ~= want then
      error(("avo.evaluate: attempt.%s must be a %s"):format(k, want), 4)
    end
  end
end

-- The attempt row of a finished measurement; returns the record.  `score`
-- is given for a recorded measurement (replay), else computed.
local function finish_attempt(r, ev, cand, info, result, score)
  if result.status == "ok" and not ev:verified(result) then
    result.status = "wrong"
    result.reason = result.reason or "not every config was verified"
  end
  -- The latest verified candidate of each evaluator: the control that
  -- tells a broken machine from a candidate that fails it (submit_job).
  if result.status == "ok" and cand.source then
    r.controls[ev.fingerprint] = { source = cand.source, knobs = cand.knobs or {} }
  end
  score = score or ev:score_of(result)
  local outcome = info.outcome or (result.status == "ok" and "evaluated" or
    (result.status == "compile_error" and "compile_error") or
    (result.status == "wrong" and "incorrect") or "failed")
  local reason = info.reason or result.reason
  local id, err = r.archive:attempt_add(r.run_id, {
    step = math.tointeger(info.step) or 0, lineage = info.lineage or "main",
    source = cand.source, knobs = cand.knobs or {}, status = result.status, score = score,
    outcome = outcome, reason = reason, candidate_id = info.candidate_id,
    configs = result.configs or setmetatable({}, core.json_array_mt),
  })
  if not id then error("avo: cannot record an attempt in the archive: " .. err, 0) end
  r.attempts = r.attempts + 1
  return {
    attempt_id = id, source = cand.source, knobs = cand.knobs or {}, status = result.status,
    reason = result.reason, log = result.log, score = score, configs = result.configs or {},
    outcome = outcome, result = result, compile = result.compile,
  }
end

-- The recorded run's next attempt, when it measured this very candidate.
-- Attempts bypass the dedupe, so they are matched by order: re-executing
-- the same script with the same answers makes the same attempts in the
-- same order.
local function recorded_attempt(r, cand)
  local rec = r.recorded
  local row = rec and rec.attempts and rec.attempts[rec.next_attempt]
  local from_origin = false
  if not row and rec and rec.origin then -- resuming a replay: past what it wrote
    row, from_origin = rec.origin.attempts[rec.next_attempt], true
  end
  if not row or row.source_hash ~= core.hash(cand.source)
      or core.json_encode(row.knobs or {}) ~= core.json_encode(cand.knobs or {}) then
    return nil
  end
  rec.next_attempt = rec.next_attempt + 1
  return row, from_origin
end

local function measure(r, ev, cand, info)
  local key = ev:key(cand)
  if evaluations_exhausted(r) then
    return { status = "skipped", reason = "budget exhausted", score = 0, configs = {},
             source = cand.source, knobs = cand.knobs or {} }
  end
  note_evaluator(r, ev)
  r.submitted = r.submitted + 1
  local seed = r.inputs:next() << 21 ~ r.inputs:next()
  local trial = r.trials[key] or 0
  r.trials[key] = trial + 1
  local old, from_origin = recorded_attempt(r, cand)
  if old and old.status ~= "pending" then
    -- A verified attempt's reason column holds what the agent later said
    -- about it (commit message, rejection), not what the measurement said.
    local reason = old.status ~= "ok" and old.reason or nil
    local result = { status = old.status, reason = reason,
                     configs = old.configs or setmetatable({}, core.json_array_mt) }
    if r.recorded.mode == "replay" or from_origin then
      return finish_attempt(r, ev, cand, info, result, old.score or 0)
    end
    -- Resuming: the row is already in the archive; answer from it.
    r.attempts = r.attempts + 1
    return {
      attempt_id = old.id, source = cand.source, knobs = cand.knobs or {}, status = old.status,
      reason = reason, score = old.score or 0, configs = result.configs,
      outcome = old.outcome, result = result,
    }
  elseif r.recorded and (r.recorded.mode == "replay" or r.recorded.origin) then
    diverge(r, cand, ("attempt %d (%s) is not in the recorded run"):format(
      r.recorded.next_attempt, cand.operator or "agent"))
  end
  if ev.backend == "test" then
    return finish_attempt(r, ev, cand, info, ev:test_result(cand, trial))
  end
  return sched.await(submit_job(r, ev:job(cand, seed, r.cache_dir), ev:deadline(),
    function(result) return finish_attempt(r, ev, cand, info, result) end, ev))
end

-- A candidate from an earlier measurement (an attempt's record), recorded
-- without running it again; a (source, knobs) already evaluated answers as
-- a duplicate.
local function adopt(r, ev, cand, measured)
  local key = ev:key(cand)
  local known = r.by_key[key]
  if known then return duplicate_of(sched.await(known)) end
  local old = r.recorded and r.recorded.mode == "resume" and r.recorded.by_key[key]
  if old and old.status ~= "pending" then
    -- Committed before the run was killed: the row exists.
    local rec = make_record(r, old.id, cand, recorded_result(old), old.score or 0, ev)
    account(r, rec, cand)
    r.by_key[key] = sched.complete_now(rec)
    return rec
  end
  local id, err = r.archive:add{
    run_id = r.run_id, generation = cand.generation or 0, operator = cand.operator or "manual",
    source = cand.source, knobs = cand.knobs or {}, note = cand.note, key = key,
    parents = cand.parents or {}, evaluator = ev.name,
  }
  if not id then error("avo: cannot record candidate in the archive: " .. err, 0) end
  local result = {}
  for k, v in pairs(measured.result or {}) do result[k] = v end
  result.status, result.reason = measured.status, measured.reason
  result.configs = measured.configs
  local rec = on_result(r, ev, id, cand, result, measured.score)
  r.by_key[key] = sched.complete_now(rec)
  return rec
end

--[[
avo.evaluate(ev, cand [, opts]) -> record
  opts.attempt  = {lineage =, step =, outcome =, reason =, candidate_id =}:
                  measure without making a candidate; the record has
                  attempt_id (no id) and the raw worker `result`
  opts.retime   = true: an attempt re-timing `cand` (outcome "retime")
  opts.measured = a record returned for an attempt: make `cand` a candidate
                  with that measurement, without evaluating it again
]]
function avo.evaluate(ev, cand, opts)
  if getmetatable(ev) ~= evaluator.Evaluator then
    error("avo.evaluate: first argument must be an evaluator (avo.evaluator(...))", 2)
  end
  check_candidate(cand)
  if opts == nil then return avo.evaluate_all(ev, { cand })[1] end
  if type(opts) ~= "table" then error("avo.evaluate: options must be a table", 2) end
  local r = need_run("evaluate")
  if opts.measured ~= nil then
    if type(opts.measured) ~= "table" or type(opts.measured.status) ~= "string" then
      error("avo.evaluate: 'measured' must be a record returned by an attempt", 2)
    end
    return adopt(r, ev, cand, opts.measured)
  end
  if opts.attempt == nil and not opts.retime then return avo.evaluate_all(ev, { cand })[1] end
  local info = opts.attempt or {}
  check_attempt(info)
  if opts.retime then
    local copy = {}
    for k, v in pairs(info) do copy[k] = v end
    copy.outcome = copy.outcome or "retime"
    info = copy
  end
  return measure(r, ev, cand, info)
end

-- Compile `cand` only (job mode compile_only; the test backend's
-- test_compile): {status, reason, log, compile = resources (CUDA)}.  Not an
-- evaluation: nothing is archived and the budget is not charged.
function avo.compile(ev, cand)
  local r = need_run("compile")
  if getmetatable(ev) ~= evaluator.Evaluator then
    error("avo.compile: first argument must be an evaluator (avo.evaluator(...))", 2)
  end
  check_candidate(cand)
  if ev.backend == "test" then return ev:test_result(cand, 0, true) end
  local job = ev:job(cand, 1, r.cache_dir)
  job.compile_only = true
  return sched.await(sched.submit(job, ev:deadline(), function(result) return result end))
end

avo.attempts = {}

-- Set an attempt's outcome (and reason, candidate id when given).
function avo.attempts.update(id, outcome, reason, candidate_id)
  local r = need_run("attempts.update")
  local ok, err = r.archive:attempt_update(id, outcome, reason, candidate_id)
  if not ok then error("avo.attempts.update: " .. err, 2) end
  return true
end

-- This run's attempts, oldest first (rows of the attempts table).
function avo.attempts.list()
  local r = need_run("attempts.list")
  return assert(r.archive:attempts(r.run_id))
end

-- Unified diff from text a to text b ("" when equal).
function avo.diff(a, b, name)
  if type(a) ~= "string" or type(b) ~= "string" then error("avo.diff: expected two strings", 2) end
  local d, err = core.diff(a, b, name)
  if not d then error("avo.diff: " .. err, 2) end
  return d
end

------------------------------------------------------- tasks and output

avo.spawn = sched.spawn
avo.join = sched.join

function avo.log(fmt, ...)
  local msg = select("#", ...) > 0 and fmt:format(...) or tostring(fmt)
  if run then
    if run.on_log then run.on_log(msg) end
    emit(run, "log", { message = msg })
  else
    io.stderr:write(msg, "\n")
  end
end

-- An event of kind `kind` with a JSON-able payload in the run's archive.
function avo.event(kind, data)
  local r = need_run("event")
  if type(kind) ~= "string" or kind == "" then error("avo.event: kind must be a string", 2) end
  local ok, err = emit(r, kind, data)
  if not ok then error("avo.event: " .. tostring(err), 2) end
  return true
end

-- Under `avo replay`: the payloads of the recorded run's events of `kind`,
-- in order (for decisions a re-execution cannot make again by itself, such
-- as those that depend on the clock: the agent's forced calls); nil in any
-- other run.
function avo.recorded_events(kind)
  local r = need_run("recorded_events")
  local rec = r.recorded
  if not (rec and rec.mode == "replay" and rec.events) then return nil end
  local out = {}
  for _, e in ipairs(rec.events) do
    if e.kind == kind then out[#out + 1] = e.data or {} end
  end
  return out
end

-- What one call of operator `op` (its module) came to: a child, or nil and
-- why.  Counted per operator (avo.outcomes(), the status line) and, for
-- operators that call a language model (op.llm) or that failed, written as
-- an event "operator_outcome" {operator, outcome, reason}: outcome
-- "applied", "rejected" (an answer or edit that could not be used), "call
-- failed" (the LLM call itself failed: reasons starting "llm: ") or
-- "refused" (no call was made: a budget is spent or the run is stopping,
-- reasons starting "llm: " and naming it; avo.llm.is_refusal).
-- Failures of LLM operators are also logged, so they are seen as they
-- happen.
function avo.outcome(op, child, why)
  local r = need_run("outcome")
  local name = type(op) == "table" and op.name or tostring(op)
  local outcome = child and "applied" or
    ((type(why) == "string" and why:sub(1, 5) == "llm: ") and
      (llm.is_refusal(why:sub(6)) and "refused" or "call failed") or "rejected")
  local counts = r.outcomes[name]
  if not counts then
    counts = { applied = 0, rejected = 0, ["call failed"] = 0, refused = 0 }
    r.outcomes[name] = counts
    r.outcome_order[#r.outcome_order + 1] = name
  end
  counts[outcome] = counts[outcome] + 1
  local uses_llm = type(op) == "table" and op.llm
  if uses_llm or not child then
    emit(r, "operator_outcome", { operator = name, outcome = outcome,
                                  reason = not child and tostring(why or "no reason") or nil })
  end
  if uses_llm and not child then
    local reason = tostring(why or "no reason"):gsub("%s+", " ")
    if #reason > 240 then reason = reason:sub(1, 240) .. "..." end
    avo.log("%s: %s: %s", name, outcome, reason)
  end
end

-- Operator outcomes so far: array of {operator, applied, rejected,
-- call_failed} in order of first use.
function avo.outcomes()
  local r = need_run("outcomes")
  local out = {}
  for _, name in ipairs(r.outcome_order) do
    local c = r.outcomes[name]
    out[#out + 1] = { operator = name, applied = c.applied, rejected = c.rejected,
                      call_failed = c["call failed"], refused = c.refused }
  end
  return out
end

function avo.progress(info)
  local r = need_run("progress")
  if type(info) ~= "table" then error("avo.progress: expected a table", 2) end
  r.generation = info.generation or r.generation
  emit(r, "generation", {
    generation = r.generation, finished = r.finished, failed = r.failed,
    best = r.best and r.best.id, best_score = r.best and r.best.score,
  })
  if r.on_progress then r.on_progress(info) end
end

--------------------------------------------------------- knowledge base

-- avo.kb.open(path) opens the knowledge base of any SQLite file (lua/lua_kb.h).
-- avo.kb.search and avo.kb.read consult the current run's archive, opened on
-- first use and closed by avo._end.  Expected failures (no such document)
-- return nil, message, which the agent operator hands on to the model.
avo.kb = {}

function avo.kb.open(path)
  if type(path) ~= "string" then error("avo.kb.open: expected a file path", 2) end
  return core.kb(path)
end

local function run_kb(r)
  if not r.kb then
    if not r.db then return nil, "this run has no archive file to hold a knowledge base" end
    local kb, err = core.kb(r.db)
    if not kb then return nil, err end
    r.kb = kb
  end
  return r.kb
end

-- Index the documents under dir into the current run's archive; the stats
-- table of kb:add_dir, or nil, message.
function avo.kb.add_dir(dir)
  local r = need_run("kb.add_dir")
  if type(dir) ~= "string" then error("avo.kb.add_dir: expected a directory", 2) end
  local kb, err = run_kb(r)
  if not kb then return nil, err end
  return kb:add_dir(dir)
end

function avo.kb.search(query, limit)
  local r = need_run("kb.search")
  if type(query) ~= "string" then error("avo.kb.search: expected a query string", 2) end
  if limit ~= nil and (math.type(limit) ~= "integer" or limit < 1 or limit > 1000) then
    error("avo.kb.search: limit must be an integer from 1 to 1000", 2)
  end
  local kb, err = run_kb(r)
  if not kb then return nil, err end
  return kb:search(query, limit)
end

function avo.kb.read(doc)
  local r = need_run("kb.read")
  if type(doc) ~= "string" and math.type(doc) ~= "integer" then
    error("avo.kb.read: expected a document path or id", 2)
  end
  local kb, err = run_kb(r)
  if not kb then return nil, err end
  return kb:read(tostring(doc))
end

----------------------------------------------------- engine entry points

-- A non-negative integer setting from the environment (default when
-- unset); anything else is an error naming the variable.
function avo._setting(name, default, min)
  local text = os.getenv(name)
  if text == nil or text == "" then return default end
  local v = math.tointeger(tonumber(text))
  if not v or v < min then
    error(("avo: %s='%s' must be an integer >= %d"):format(name, text, min), 0)
  end
  return v
end

-- Install the run state (called by avo.cli).
function avo._begin(state)
  run = state
  run.streams, run.by_key, run.evaluators = {}, {}, {}
  run.submitted, run.finished, run.failed, run.pruned = 0, 0, 0, 0
  run.inputs = core.rng(run.seed, "inputs")
  run.ok_records = {}
  run.baseline_rows, run.baseline_tickets = {}, {}
  run.attempts, run.trials = 0, {}
  run.outcomes, run.outcome_order = {}, {}
  run.infra_streak, run.infra_faults, run.infra_unfinished = 0, 0, 0
  run.controls = {}
  run.infra_retries = run.infra_retries or avo._setting("AVO_INFRA_RETRIES", 2, 0)
  run.infra_limit = run.infra_limit or avo._setting("AVO_INFRA_LIMIT", 5, 1)
  run.checks = 0
  run.stop_at = run.recorded and run.recorded.mode == "replay" and run.recorded.stop
    and math.tointeger(run.recorded.stop.check) or nil
  llm._begin(run, { exhausted = avo.exhausted, log = avo.log, stop_reason = function()
                      if core.interrupted() then return "a signal" end
                      if run.stop_at and run.checks >= run.stop_at then return "the recorded stop" end
                      if run.max_seconds and core.monotonic() - run.started >= run.max_seconds then
                        return ("--max-time %gs"):format(run.max_seconds)
                      end
                      if run.max_evaluations and run.submitted >= run.max_evaluations then
                        return ("--max-evals %d"):format(run.max_evaluations)
                      end
                      return "every worker gone"
                    end,
                    exhausted_now = function()
                      return evaluations_exhausted(run, false) or llm.exhausted()
                    end,
                    event = function(kind, data) emit(run, kind, data) end })
  return run
end

function avo._end()
  llm._end()
  if run and run.kb then run.kb:close() end
  run = nil
end

------------------------------------------------------------------ llm

-- avo.llm.chat{...} and friends: see lua/avo/llm.lua and docs/lua-api.md.
avo.llm = llm

--[[
avo.options(args, spec [, who]) -> table
  The script's KEY=VALUE arguments (strings), checked against `spec` and
  converted: spec maps each accepted name to { type = "integer" | "number" |
  "string" | "boolean", default = value, min = n, max = n }.  An unknown
  name, or a value that is not of its type (abc, nan, inf for numbers) or
  out of range, is a usage error: the run ends at once with exit status 2
  (recorded as stopped) and a message naming the script's line and the
  argument.
]]
function avo.options(args, spec, who)
  if args == nil then args = {} end
  if type(args) ~= "table" or type(spec) ~= "table" then
    error("avo.options: expected the script's arguments (...) and a table of options", 2)
  end
  who = who or "argument"
  -- "script:line: " of the caller, as error(msg, 2) would say it.
  local function refuse(msg)
    local info = debug.getinfo(3, "Sl")
    local where = info and info.currentline > 0 and
      ("%s:%d: "):format(info.short_src, info.currentline) or ""
    error({ avo_exit = 2, message = "avo: " .. where .. msg }, 0)
  end
  local names = {}
  for name in pairs(spec) do names[#names + 1] = name end
  table.sort(names)
  local out = {}
  for name, text in pairs(args) do
    local s = spec[name]
    if not s then
      refuse(("%s '%s' is not an option of this script (options: %s)"):format(who, tostring(name),
        #names > 0 and table.concat(names, ", ") or "none"))
    end
    local v = text
    if type(text) == "string" then
      if s.type == "integer" then
        v = math.tointeger(tonumber(text))
      elseif s.type == "number" then
        v = tonumber(text)
        if v and (v ~= v or v == math.huge or v == -math.huge) then v = nil end
      elseif s.type == "boolean" then
        v = ({ ["true"] = true, ["1"] = true, yes = true, ["false"] = false, ["0"] = false,
               no = false })[text]
      end
    end
    local expected = s.type == "integer" and "an integer" or s.type == "number" and
      "a finite number" or s.type == "boolean" and "true or false" or "a string"
    if s.min and s.max then expected = ("%s from %s to %s"):format(expected, s.min, s.max)
    elseif s.min then expected = ("%s >= %s"):format(expected, s.min)
    elseif s.max then expected = ("%s <= %s"):format(expected, s.max) end
    if v == nil or (type(v) == "number" and ((s.min and v < s.min) or (s.max and v > s.max))) then
      refuse(("%s %s=%s must be %s"):format(who, name, tostring(text), expected))
    end
    out[name] = v
  end
  for name, s in pairs(spec) do
    if out[name] == nil then out[name] = s.default end
  end
  return out
end

-- End the run early with exit status `status` (an integer from 0 to 255,
-- what a process can exit with) after printing `message` (for example a
-- script that lacks configuration: avo.exit(2, "set X")).  The run is
-- recorded as stopped.  Any other status is refused (an error in the
-- script: exit 1, run failed) rather than truncated by the kernel to its
-- low 8 bits (256 would exit 0).
function avo.exit(status, message)
  local code = math.tointeger(status)
  if not code or code < 0 or code > 255 then
    error(("avo.exit: status must be an integer from 0 to 255, got %s"):format(
      type(status) == "number" and tostring(status) or type(status)), 2)
  end
  if message ~= nil and type(message) ~= "string" then
    error(("avo.exit: message must be a string, got %s"):format(type(message)), 2)
  end
  error({ avo_exit = code, message = message }, 0)
end

return avo
