-- avo.pipeline — the evaluation engine behind avo.evaluate, avo.evaluate_all
-- and avo.compile (lua/avo/init.lua is the API; this is what it runs).
--
-- Every evaluation, a candidate's (evaluate_all) or an attempt's (attempt),
-- goes the same way:
--   1. open_evaluation: the budget, the evaluator's first use, the count
--      and the input seed.  Drawn for every evaluation, answered from a
--      record or not, in this order: that is what keeps a resumed or
--      replayed run in step with the original (tests/faults/replay.sh,
--      tests/e2e/replay.sh).
--   2. the recorded run's answer, if any (resume, replay): candidates are
--      matched by key, attempts by order; a replay that meets one the
--      recorded run does not have diverges.
--   3. otherwise the job goes to its executor through sched.submit (the
--      worker pool, or the in-process backend: lua/avo/inprocess.lua),
--      with infrastructure faults retried and settled by submit_job.
-- The run state `r` is the table avo._begin installs (P.begin).

local core = require "avo.core"
local sched = require "avo.sched"
local baselines = require "avo.baselines"

local P = {}

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

-- Whether no further evaluation may start: stopped (above), every worker
-- gone, or the evaluation budget spent.
function P.exhausted(r, count)
  if stopped(r, count) then return true end
  if r.pool and r.pool.gone and r.pool:gone() then return true end
  if r.max_evaluations and r.submitted >= r.max_evaluations then return true end
  return false
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
    sandbox = result.sandbox, -- the mechanism that isolated it (eval/sandbox.h)
    cpu = result.cpu, -- the CPU its judge and it were pinned to (eval/cpu/pin.c)
    -- what the judge saw it load beyond its object and the runtime (eval/libraries.h)
    libraries = result.libraries, libraries_unobserved = result.libraries_unobserved,
  }
  return rec
end

-- The verified records by source, kept as records arrive so that
-- avo.lineage.top and .diverse cost the same at the 100,000th candidate as
-- at the 10th (sorting every record per call made llm_mutate's prompts
-- grow with the run).  r.lineage, of each distinct source its best record
-- (score, then lower id), kept by its dedupe key, not as a table: an LLM
-- run has a new source a candidate, and a table each (some ten objects)
-- that every collection marks made its cost per candidate grow with the
-- run (the records themselves are on the shelf):
--   key      source -> the dedupe key of its best record
--   score    source -> that record's score
--   id       source -> that record's id
--   sources  the distinct sources in order of first arrival
--   top      the best LINEAGE_TOP representatives (records), best first:
--            always the true top of all representatives (a replaced
--            representative is outscored by its replacement, which takes
--            its place or better)
P.LINEAGE_TOP = 64

local function lineage_better(a, b)
  if a.score ~= b.score then return a.score > b.score end
  return a.id < b.id
end

-- A verified record `rec` of dedupe key `key` has arrived.
function P.lineage_add(r, rec, key)
  local lin, source = r.lineage, rec.source
  local old = lin.id[source]
  if old and not lineage_better(rec, { score = lin.score[source], id = old }) then return end
  lin.key[source], lin.score[source], lin.id[source] = key, rec.score, rec.id
  if not old then lin.sources[#lin.sources + 1] = source end
  local top = lin.top
  if old then
    for i = 1, #top do
      if top[i].id == old then table.remove(top, i); break end
    end
  end
  if #top >= P.LINEAGE_TOP and not lineage_better(rec, top[#top]) then return end
  local at = #top + 1
  while at > 1 and lineage_better(rec, top[at - 1]) do at = at - 1 end
  table.insert(top, at, rec)
  if #top > P.LINEAGE_TOP then top[#top] = nil end
end

-- Every representative, best first (the slow path, for n beyond the top kept).
function P.lineage_ranked(r)
  local all = {}
  for _, source in ipairs(r.lineage.sources) do all[#all + 1] = P.lineage_record(r, source) end
  table.sort(all, lineage_better)
  return all
end

------------------------------------------------- what the run keeps per candidate

-- A run keeps every candidate's record for the whole run: its duplicates
-- are answered with a copy of it, and the verified ones are re-timed and
-- summed up at the end.  As tables, each is some ten objects that every
-- garbage collection marks and sweeps, and the engine's cost per candidate
-- grew with the run (bench/throughput.sh), so a record the tasks are done
-- with is kept frozen in C memory the collector never sees (core.shelf;
-- one that cannot freeze stays a table in r.done).
--   r.by_key   dedupe key -> ticket, while tasks may still await it
--   r.handed   ticket -> how many of the tasks it was handed to have not
--              awaited it yet (P.submit hands it out, P.records awaits it)
--   r.shelf    dedupe key -> the record, frozen, with its source; and the
--              keys of the verified records, in order of arrival
--   r.done     dedupe key -> a record that cannot freeze

local function hand_out(r, ticket, key)
  r.handed[ticket] = (r.handed[ticket] or 0) + 1
  if key then r.ticket_key[ticket] = key end
  return ticket
end

-- (The shelf keeps each distinct source once: the records of one source
-- share it rather than each a copy.)
local function keep_done(r, key, rec)
  if not r.shelf:put(key, rec) then r.done[key] = rec end
end

local function thawed(r, key)
  return r.done[key] or r.shelf:get(key)
end

-- A task awaited `ticket`, whose value is `rec`: once every task it was
-- handed to has, the scheduler drops the value and the record is kept
-- frozen under its key.
local function taken(r, ticket, rec)
  local n = (r.handed[ticket] or 1) - 1
  if n > 0 then
    r.handed[ticket] = n
    return
  end
  r.handed[ticket] = nil
  local key = r.ticket_key[ticket]
  r.ticket_key[ticket] = nil
  if key and r.by_key[key] == ticket then
    r.by_key[key] = nil
    keep_done(r, key, rec)
  end
  sched.forget(ticket)
end

-- A ticket for a duplicate of the candidate with `key`, or nil when the run
-- has none.
local function known_ticket(r, key)
  local ticket = r.by_key[key]
  if ticket then return hand_out(r, ticket) end
  local kept = thawed(r, key)
  if kept then return hand_out(r, sched.complete_now(kept)) end
  return nil
end

-- The record of the candidate with `key`, wherever the run keeps it.
local function record_by_key(r, key)
  local ticket = r.by_key[key]
  if ticket then return sched.peek(ticket) end
  return thawed(r, key)
end

-- The best record of `source` among the run's (lineage): the one the run
-- holds while tasks may still await it, else thawed (a fresh table).
function P.lineage_record(r, source)
  return record_by_key(r, r.lineage.key[source])
end

-- The run's verified records, in order of arrival: thawed (fresh tables),
-- but the run's best is the very table the script was given, as before
-- records were frozen (what a script did to it, the re-timing sees).
function P.ok_records(r)
  local out = {}
  for _, key in ipairs(r.shelf:ok_keys()) do
    local rec = record_by_key(r, key)
    if r.best and rec.id == r.best.id then rec = r.best end
    out[#out + 1] = rec
  end
  return out
end

-- Update the run's statistics with a finished record (of dedupe key `key`).
local function account(r, rec, cand, key)
  r.finished = r.finished + 1
  -- A pruned candidate (a cascade stopped it early) did not fail.
  if rec.status == "pruned" then
    r.pruned = r.pruned + 1
  elseif rec.status ~= "ok" then
    r.failed = r.failed + 1
  end
  if rec.status == "ok" and (not r.best or rec.score > r.best.score) then r.best = rec end
  if rec.status == "ok" then
    r.shelf:add_ok(key)
    P.lineage_add(r, rec, key)
  end
  if cand.operator == "seed" and not r.seed_record then r.seed_record = rec end
  if r.on_record then r.on_record(rec) end
end

-- The verdict on a finished measurement, a candidate's or an attempt's: a
-- result "ok" that does not verify every config is "wrong"; a verified one
-- becomes its evaluator's control (the latest verified candidate, which
-- tells a broken machine from a candidate that fails it: submit_job).
local function settle(r, ev, cand, result)
  if result.status == "ok" and not ev:verified(result) then
    result.status = "wrong"
    result.reason = result.reason or "not every config was verified"
  end
  if result.status == "ok" and cand.source then
    r.controls[ev.fingerprint] = { source = cand.source, knobs = cand.knobs or {} }
  end
end

-- Record a finished evaluation: archive first, then statistics.  `score`
-- is given when the result is a recorded one (replay), else computed.
local function on_result(r, ev, id, cand, key, result, score)
  local recorded = score ~= nil
  score = score or ev:score_of(result)
  r.unit = r.unit or ev.unit
  settle(r, ev, cand, result)
  -- Evaluator feedback for later prompts; a recorded result keeps its own.
  if not recorded then result.artifacts = ev:artifacts_of(result, cand) end
  local ok, err = r.archive:finish(id, result, score)
  if not ok then error("avo: cannot record evaluation in the archive: " .. err, 0) end
  local rec = make_record(r, id, cand, result, score, ev)
  account(r, rec, cand, key)
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
  -- An executor whose answers cannot be the machine's fault (in-process:
  -- deterministic, no worker) needs none of this.
  if not sched.fallible(job) then return sched.submit(job, deadline, done) end
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
    -- A job whose connection to remote workers was lost again and again
    -- (the pool requeued it AVO_POOL_MAX_CUTS times): the network's doing,
    -- which no candidate is ever charged with, so no retry and no control
    -- that could charge it; it stays pending for resume.  In a row, it
    -- stops the run as any broken environment does.
    if result.connection_lost then
      result.connection_lost = nil
      r.infra_streak = r.infra_streak + 1
      r.infra_faults = r.infra_faults + 1
      local why = tostring(result.reason)
      log(("avo: infrastructure fault, not the candidate's (%s)"):format(why))
      if r.infra_streak >= r.infra_limit then stop(why) end
      result.infrastructure = true
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

-- Write an event to the run's archive.  While a resumed run re-executes
-- the part it had already done, the events it emits again are the recorded
-- ones, in the same order: those are skipped instead of written twice.
function P.emit(r, kind, data)
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

-- First use of an evaluator in a run: record what identifies it, and check
-- it against the recorded run being resumed or replayed.
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
  P.emit(r, "evaluator", { name = ev.name, origin = ev._origin, fingerprint = ev.fingerprint,
    backend = ev.backend, unit = ev.unit })
  -- The evaluator's baselines run beside the search (avo.baselines).
  local tickets = baselines.start(r, ev)
  for _, t in ipairs(tickets) do r.baseline_tickets[#r.baseline_tickets + 1] = t end
end

------------------------------------------------- the opening, written once

-- Step 1 of every evaluation (the header above): nil when the budget is spent
-- (nothing noted, counted or drawn), else the input seed of this one.
local function open_evaluation(r, ev)
  if P.exhausted(r) then return nil end
  note_evaluator(r, ev)
  r.submitted = r.submitted + 1
  return r.inputs:next() << 21 ~ r.inputs:next()
end

-- What a spent budget answers instead of an evaluation.
local function skipped(cand)
  return { status = "skipped", reason = "budget exhausted", score = 0, configs = {},
           source = cand.source, knobs = cand.knobs or {} }
end

-- Why `source` cannot travel to a worker, or nil: jobs are JSON text, so
-- a source must be UTF-8 (a Latin-1 comment in a seed file, bytes an
-- operator spliced).  That is the job's fault, not the engine's: the
-- candidate is `invalid`, named where the first bad byte is.
local function not_text(source)
  local ok, at = utf8.len(source or "")
  if ok then return nil end
  local before = source:sub(1, at - 1)
  local line = 1 + select(2, before:gsub("\n", ""))
  local column = at - (before:match(".*\n()") or 1) + 1
  return ("source is not valid UTF-8: byte 0x%02X at line %d, column %d (avo sends sources " ..
    "to workers as UTF-8 text; convert the file, e.g. iconv -f latin1 -t utf-8)")
    :format(source:byte(at), line, column)
end

local function invalid(why)
  return { status = "invalid", reason = why, configs = setmetatable({}, core.json_array_mt) }
end

-- Step 3: `cand`'s job for `ev` (its `trial`-th measurement, for the
-- in-process backend's test_score) to its executor; done(result) turns the
-- result into the ticket's value.
local function run_job(r, ev, cand, seed, trial, done)
  local why = not_text(cand.source)
  if why then return sched.complete_now(done(invalid(why))) end
  return submit_job(r, ev:job(cand, seed, r.cache_dir, trial), ev:deadline(), done, ev)
end

------------------------------------------------------------- candidates

-- Step 2 for a candidate: the recorded row of `key` (old; a finished one
-- answers) and, resuming a replay, the row of the run it replays
-- (from_origin).  A replay with no finished answer diverges.
local function recorded_candidate(r, key, cand)
  local rec = r.recorded
  if not rec then return nil, nil end
  local old = rec.by_key[key]
  if rec.mode == "replay" and not (old and old.status ~= "pending") then diverge(r, cand) end
  -- Resuming: an infrastructure fault recorded as a verdict (status "error",
  -- as older versions did) is evaluated again like a pending one.
  if old and rec.mode == "resume" and old.status == "error" then
    old = setmetatable({ status = "pending" }, { __index = old })
  end
  -- Resuming a replay: what the replay had not finished is answered from
  -- the run it replays (recorded.origin), never evaluated live.
  local from_origin
  if rec.origin and not (old and old.status ~= "pending") then
    from_origin = rec.origin.by_key[key]
    if not (from_origin and from_origin.status ~= "pending") then diverge(r, cand) end
  end
  return old, from_origin
end

local cascade -- defined below submit

-- Submit one candidate; returns a ticket key and whether it is a duplicate.
function P.submit(r, ev, cand)
  local key = ev:key(cand)
  local known = known_ticket(r, key)
  if known then return known, true end
  local seed = open_evaluation(r, ev)
  if not seed then
    local rec = skipped(cand)
    rec.operator, rec.parents = cand.operator, cand.parents or {}
    return sched.complete_now(rec), false
  end
  local old, from_origin = recorded_candidate(r, key, cand)

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
    ticket = cascade(r, ev, id, cand, key, seed)
  elseif old and old.status ~= "pending" then
    local rec
    if r.recorded.mode == "resume" then
      r.unit = r.unit or ev.unit -- the status line's unit while recorded answers replay
      rec = make_record(r, id, cand, recorded_result(old), old.score or 0, ev)
      account(r, rec, cand, key)
    else
      rec = on_result(r, ev, id, cand, key, recorded_result(old), old.score or 0)
    end
    ticket = sched.complete_now(rec)
  elseif from_origin then
    ticket = sched.complete_now(on_result(r, ev, id, cand, key, recorded_result(from_origin),
      from_origin.score or 0))
  else
    ticket = run_job(r, ev, cand, seed, nil, function(result)
      if result.infrastructure then return unfinished(r, id, cand, result, ev) end
      return on_result(r, ev, id, cand, key, result)
    end)
  end
  r.by_key[key] = ticket
  return hand_out(r, ticket, key), false
end

-- Cascade evaluation (the evaluator's `cascade`, ev._stages): the configs
-- of each stage in turn, in a task of its own, each stage's job awaited
-- there (no infrastructure retries: a stage is part of one evaluation).
-- A candidate that fails a stage stops there (its result holds the configs
-- run so far); one whose score on a stage's configs is below min_ratio x
-- the run's best on the same configs stops as "pruned".  Returns a ticket
-- for the record.
cascade = function(r, ev, id, cand, key, seed)
  local why = not_text(cand.source)
  if why then return sched.complete_now(on_result(r, ev, id, cand, key, invalid(why))) end
  local ticket = sched.event()
  local function run_stages()
    local configs, final, last = {}, nil, nil
    for i, stage in ipairs(ev._stages) do
      local view = stage.view
      local result = sched.await(sched.submit(view:job(cand, seed, r.cache_dir), view:deadline()))
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
    sched.resolve(ticket, on_result(r, ev, id, cand, key, final), true)
  end
  sched.spawn(function()
    -- An error here is the awaiting task's error, not a silent hang.
    local ok, err = xpcall(run_stages, debug.traceback)
    if not ok then sched.fail(ticket, err) end
  end)
  return ticket
end

-- The records of the tickets P.submit returned, awaited in order; a
-- duplicate's (dup[i]) is a copy marked `duplicate`.
function P.records(r, tickets, dup)
  local records = {}
  for i, t in ipairs(tickets) do
    local rec = sched.await(t)
    taken(r, t, rec)
    records[i] = dup[i] and duplicate_of(rec) or rec
  end
  return records
end

--------------------------------------------------------------- attempts

-- An attempt is a measurement that makes no candidate: an agent's trial
-- version, or a re-timing of a version already measured.  It bypasses the
-- dedupe by (source, knobs), takes a fresh input seed, counts against the
-- evaluation budget and lands in the archive's attempts table.

-- The attempt row of a finished measurement; returns the record.  `score`
-- is given for a recorded measurement (replay), else computed.
local function finish_attempt(r, ev, cand, info, result, score)
  settle(r, ev, cand, result)
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

-- Step 2 for an attempt: the recorded run's next attempt, when it measured
-- this very candidate (row, and whether it comes from the run a resumed
-- replay replays).  Attempts bypass the dedupe, so they are matched by
-- order: re-executing the same script with the same answers makes the same
-- attempts in the same order.  A replay with no finished answer diverges.
local function recorded_attempt(r, cand)
  local rec = r.recorded
  local row = rec and rec.attempts and rec.attempts[rec.next_attempt]
  local from_origin = false
  if not row and rec and rec.origin then -- resuming a replay: past what it wrote
    row, from_origin = rec.origin.attempts[rec.next_attempt], true
  end
  if not row or row.source_hash ~= core.hash(cand.source)
      or core.json_encode(row.knobs or {}) ~= core.json_encode(cand.knobs or {}) then
    row = nil
  else
    rec.next_attempt = rec.next_attempt + 1
  end
  if not (row and row.status ~= "pending") and rec and (rec.mode == "replay" or rec.origin) then
    diverge(r, cand, ("attempt %d (%s) is not in the recorded run"):format(
      rec.next_attempt, cand.operator or "agent"))
  end
  return row, from_origin
end

-- Measure `cand` with `ev` as an attempt (`info`: lineage, step, outcome,
-- reason, candidate_id); returns the attempt's record.
function P.attempt(r, ev, cand, info)
  local key = ev:key(cand)
  local seed = open_evaluation(r, ev)
  if not seed then return skipped(cand) end
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
  end
  return sched.await(run_job(r, ev, cand, seed, trial,
    function(result) return finish_attempt(r, ev, cand, info, result) end))
end

-- A candidate from an earlier measurement (an attempt's record), recorded
-- without running it again; a (source, knobs) already evaluated answers as
-- a duplicate.
function P.adopt(r, ev, cand, measured)
  local key = ev:key(cand)
  local known = known_ticket(r, key)
  if known then
    local rec = sched.await(known)
    taken(r, known, rec)
    return duplicate_of(rec)
  end
  local old = r.recorded and r.recorded.mode == "resume" and r.recorded.by_key[key]
  if old and old.status ~= "pending" then
    -- Committed before the run was killed: the row exists.
    local rec = make_record(r, old.id, cand, recorded_result(old), old.score or 0, ev)
    account(r, rec, cand, key)
    keep_done(r, key, rec)
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
  local rec = on_result(r, ev, id, cand, key, result, measured.score)
  keep_done(r, key, rec)
  return rec
end

------------------------------------------------------- compiling, setup

-- Compile `cand` only (job mode compile_only; the in-process backend's
-- test_compile): {status, reason, log, compile = resources (CUDA)}.  Not an
-- evaluation: nothing is archived and the budget is not charged.
function P.compile(r, ev, cand)
  local why = not_text(cand.source)
  if why then return invalid(why) end
  local job = ev:job(cand, 1, r.cache_dir, 0)
  job.compile_only = true
  return sched.await(sched.submit(job, ev:deadline()))
end

-- A non-negative integer setting from the environment (default when
-- unset); anything else is an error naming the variable.
function P.setting(name, default, min)
  local text = os.getenv(name)
  if text == nil or text == "" then return default end
  local v = math.tointeger(tonumber(text))
  if not v or v < min then
    error(("avo: %s='%s' must be an integer >= %d"):format(name, text, min), 0)
  end
  return v
end

-- Fill in the engine's part of the run state `run` (avo._begin's table:
-- archive, pool, run_id, seed, budgets, recorded, callbacks); returns it.
function P.begin(run)
  run.streams, run.by_key, run.evaluators = {}, {}, {}
  run.handed, run.ticket_key, run.done, run.shelf = {}, {}, {}, core.shelf()
  run.submitted, run.finished, run.failed, run.pruned = 0, 0, 0, 0
  run.inputs = core.rng(run.seed, "inputs")
  run.lineage = { key = {}, score = {}, id = {}, sources = {}, top = {} }
  run.baseline_rows, run.baseline_tickets = {}, {}
  run.attempts, run.trials = 0, {}
  run.outcomes, run.outcome_order = {}, {}
  run.infra_streak, run.infra_faults, run.infra_unfinished = 0, 0, 0
  run.controls = {}
  run.infra_retries = run.infra_retries or P.setting("AVO_INFRA_RETRIES", 2, 0)
  run.infra_limit = run.infra_limit or P.setting("AVO_INFRA_LIMIT", 5, 1)
  run.checks = 0
  run.stop_at = run.recorded and run.recorded.mode == "replay" and run.recorded.stop
    and math.tointeger(run.recorded.stop.check) or nil
  return run
end

return P
