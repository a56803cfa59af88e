-- avo.recorded — commands that re-execute a recorded run: `avo resume`
-- (continue a killed run in its own archive) and `avo replay` (re-run it
-- into a new archive with recorded scores and LLM answers and compare).
-- Both re-execute the recorded script from the start with the recorded
-- seed; avo.init answers every evaluation, attempt and event the recording
-- holds instead of repeating it.

local core = require "avo.core"
local avo = require "avo"
local S = require "avo.session"
local scaleout = require "avo.scaleout"

local M = {}

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
  -- (Nor where the time limit or a signal stopped it: a replay stops at
  -- the same budget check, a resumed run goes on; a resume after a stop
  -- voids it.)
  local events, stop = {}, nil
  for _, e in ipairs(assert(archive:events(run_id))) do
    if e.kind == "run_stop" then
      stop = stop or e.data
    elseif e.kind == "resume" then
      stop = nil
    else
      events[#events + 1] = e
    end
  end
  return { mode = mode, by_key = by_key, evaluators = evaluators, stop = stop,
           attempts = assert(archive:attempts(run_id)), next_attempt = 1,
           events = events, next_event = 1 }
end

-- The run to resume or replay, with its chunk, or nil after printing why.
local function load_recorded_run(archive, db, run_arg)
  local info, err = archive:run_get(run_arg or 0)
  if not info then
    S.eprintf("avo: %s\n", err or ("no run in " .. db))
    return nil
  end
  local chunk, serr = load(info.script_source or "", "@" .. (info.script_path or "script"), "t")
  if not chunk then
    S.eprintf("avo: recorded script does not load: %s\n", serr)
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

-- The run `avo resume` continues when no --run is given: the latest run
-- that did not finish and that no live process drives, else the latest
-- unfinished one (the claim then says who drives it).  Returns its id and
-- the other unfinished runs' ids, or nil, message.
local function pick_unfinished(archive, db)
  local runs, err = archive:runs()
  if not runs then return nil, err end
  local unfinished = {}
  for _, r in ipairs(runs) do
    if r.status ~= "done" then unfinished[#unfinished + 1] = r.id end
  end
  if #unfinished == 0 then
    return nil, (#runs == 0 and "no run in %s" or "every run in %s finished; there is " ..
      "nothing to resume"):format(db)
  end
  local pick = unfinished[#unfinished]
  for i = #unfinished, 1, -1 do
    if not archive:run_live(unfinished[i]) then pick = unfinished[i] break end
  end
  local others = {}
  for _, id in ipairs(unfinished) do
    if id ~= pick then others[#others + 1] = id end
  end
  return pick, others
end

-- opts: db, run, jobs, takeover
function M.resume(opts)
  S.debug = S.debug or opts.debug
  local db = opts.db
  -- Workers as `avo run` takes them: local --jobs, --devices, remote
  -- workers on --listen, a Slurm step with --slurm.
  local workers, werr = scaleout.workers(opts, core.cores())
  if not workers then
    S.eprintf("avo: %s\n", werr)
    return 2
  end
  local archive, pool = S.open_workers(workers, opts.slurm, db)
  if not archive then return 1 end
  local function refuse(msg)
    S.eprintf("%s\n", S.prefixed(msg))
    pool:close()
    archive:close()
    return 1
  end
  local run_arg = opts.run
  if not run_arg then
    local id, others = pick_unfinished(archive, db)
    if not id then return refuse(others) end
    if #others > 0 then
      local list = {}
      for i, o in ipairs(others) do list[i] = tostring(o) end
      S.eprintf("avo: runs %s of %s did not finish either; --run ID resumes one of them\n",
        table.concat(list, ", "), db)
    end
    run_arg = id
  end
  local info, chunk = load_recorded_run(archive, db, run_arg)
  if not info then
    pool:close()
    archive:close()
    return 1
  end
  if info.status == "done" then
    return refuse(("run %d in %s finished; there is nothing to resume"):format(info.id, db))
  end
  local claimed, previous = archive:run_claim(info.id, opts.takeover)
  if not claimed then return refuse("cannot resume: " .. previous) end
  if previous then
    S.eprintf("avo: run %d was left running by process %s on %s, which is gone; taking it over\n",
      info.id, tostring(previous.pid), tostring(previous.host))
  end
  local config = info.config or {}
  local recorded = recorded_answers(archive, info.id, "resume")
  local llm_replay = config.llm_replay
  if config.replay_of then
    -- A replay: what it had not written comes from the run it replays.
    local of = config.replay_of
    local original, oerr = core.archive_read(of.db)
    if not original then return refuse("cannot resume the replay: " .. oerr) end
    recorded.origin = recorded_answers(original, of.run, "replay")
    original:close()
    llm_replay = of.db
  end
  local candidates = archive:candidates(info.id, false)
  local finished = 0
  for _, c in ipairs(candidates) do
    if c.status ~= "pending" then finished = finished + 1 end
  end
  -- What a refusal found while re-executing (an evaluator that changed)
  -- puts back, so a refused resume leaves the run as it was.
  local last_event = 0
  for _, e in ipairs(assert(archive:events(info.id))) do last_event = math.max(last_event, e.id) end
  archive:run_reopen(info.id)
  archive:event(info.id, "resume", { finished = finished, candidates = #candidates })
  S.eprintf("avo: resuming run %d of %s in %s (%d finished evaluations kept)\n", info.id,
    info.script_path, db, finished)
  if (config.slurm or config.listen) and not (opts.slurm or opts.listen) then
    S.eprintf("avo: run %d had remote workers (%s); this resume uses local ones only (give " ..
      "--slurm or --listen to use remote workers again)\n", info.id, config.slurm and
      ("--slurm '" .. tostring(config.slurm) .. "'") or ("--listen " .. tostring(config.listen)))
  end
  return S.run_to_end({
    archive = archive, pool = pool, run_id = info.id, seed = info.seed, db = db, chunk = chunk,
    script = info.script_path,
    args = config.args, max_evals = config.max_evals, max_time = config.max_time,
    recorded = recorded, elapsed_before = elapsed_of(candidates),
    max_usd = config.max_usd, max_tokens = config.max_tokens, llm_replay = llm_replay,
    llm_resume = db, retime = config.retime, retime_rounds = config.retime_rounds,
  }, { listen = opts.listen, slurm = opts.slurm, jobs = workers.jobs, db = db },
  function(why)
    -- A refusal found while re-executing (an evaluator that changed) puts
    -- the run back as it was.
    local rok, rerr = archive:run_restore(info.id, { status = info.status,
      ended_at = info.ended_at, owner = info.owner }, last_event)
    if not rok then S.eprintf("avo: cannot restore run %d: %s\n", info.id, rerr) end
    return refuse(why)
  end)
end

-- What must agree for two lineages to be the same, per candidate.  Ids
-- are counted from the run's first candidate (#1 is its first), so a run
-- that is not the archive's first compares with its replay, which starts
-- a fresh archive; a parent outside the run keeps its archive id.
local function lineage_line(c, number)
  local parents = {}
  for i, p in ipairs(c.parents or {}) do
    parents[i] = (number[p.id] or ("archive #" .. p.id)) .. ":" .. p.role
  end
  return ("#%d gen %d %s source %s knobs %s parents [%s] status %s"):format(number[c.id],
    c.generation, c.operator, c.source_hash, core.json_encode(c.knobs or {}),
    table.concat(parents, ","), c.status)
end

-- candidate id -> its number in the run (1 for the first), for lineage_line.
local function numbering(candidates)
  local number = {}
  for i, c in ipairs(candidates) do number[c.id] = i end
  return number
end

-- First difference between two runs' candidate lists, or nil.
local function first_difference(old, new)
  local old_number, new_number = numbering(old), numbering(new)
  for i = 1, math.max(#old, #new) do
    local a, b = old[i], new[i]
    if not a then
      return ("the replay made more candidates (first extra: %s)"):format(lineage_line(b, new_number))
    end
    if not b then
      return ("the replay stopped early (first missing: %s)"):format(lineage_line(a, old_number))
    end
    local la, lb = lineage_line(a, old_number), lineage_line(b, new_number)
    if la ~= lb then
      return ("candidate %d of the run differs (#%d recorded, #%d replayed):\n  recorded %s\n" ..
        "  replayed %s"):format(i, a.id, b.id, la, lb)
    end
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

-- The unfinished replay of run `run` of `db` in `archive`, or nil.
local function unfinished_replay(archive, db, run)
  for _, r in ipairs(archive:runs() or {}) do
    local info = r.status ~= "done" and archive:run_get(r.id)
    local of = info and info.config and info.config.replay_of
    if of and of.db == db and of.run == run then return r.id end
  end
  return nil
end

-- opts: db, out, run
function M.replay(opts)
  local old_archive, err = core.archive_read(opts.db)
  if not old_archive then
    S.eprintf("avo: %s\n", err)
    return 1
  end
  local info, chunk = load_recorded_run(old_archive, opts.db, opts.run)
  if not info then return 1 end
  local existing = io.open(opts.out, "r")
  if existing then existing:close() end
  local archive, pool = S.open_engine({ jobs = 1 }, opts.out)
  if not archive then return 1 end
  local config = info.config or {}
  config.replay_of = { db = opts.db, run = info.id }
  local run_id, recorded
  if existing then
    -- A replay killed part-way: continue it, answering what it had not
    -- written from the recording too (never live).
    run_id = unfinished_replay(archive, opts.db, info.id)
    if not run_id then
      S.eprintf("avo: %s exists and holds no unfinished replay of run %d of %s; replay writes a " ..
        "new archive\n", opts.out, info.id, opts.db)
      pool:close()
      archive:close()
      return 2
    end
    local claimed, cerr = archive:run_claim(run_id)
    if not claimed then
      S.eprintf("avo: cannot continue the replay: %s\n", cerr)
      pool:close()
      archive:close()
      return 1
    end
    recorded = recorded_answers(archive, run_id, "resume")
    recorded.origin = recorded_answers(old_archive, info.id, "replay")
    archive:run_reopen(run_id)
    archive:event(run_id, "resume", { replay_of = config.replay_of })
    S.eprintf("avo: continuing the replay of run %d of %s from %s in %s\n", info.id,
      info.script_path, opts.db, opts.out)
  else
    run_id = assert(archive:run_begin{
      script_path = info.script_path, script_source = info.script_source, config = config,
      seed = info.seed, engine_version = S.engine_version(), compiler = S.compiler_version(),
      host = S.host_description(),
    })
    assert(archive:run_claim(run_id))
    recorded = recorded_answers(old_archive, info.id, "replay")
    S.eprintf("avo: replaying run %d of %s from %s into %s\n", info.id, info.script_path,
      opts.db, opts.out)
  end
  local ok, result = S.execute{
    archive = archive, pool = pool, run_id = run_id, seed = info.seed, db = opts.out,
    chunk = chunk, args = config.args, max_evals = config.max_evals, max_time = config.max_time,
    recorded = recorded, llm_replay = opts.db, llm_replay_run = info.id,
    max_usd = config.max_usd, max_tokens = config.max_tokens, script = info.script_path,
  }
  -- A signal stopped the replay part-way: `interrupted`, 128 + N, as a run
  -- (the same `avo replay --out` continues it), never compared as finished.
  local sig = core.interrupted()
  if sig then
    archive:run_end(run_id, "interrupted")
    S.eprintf("avo: replay interrupted by signal %d; the same `avo replay --db %s --out %s%s` " ..
      "continues it\n", sig, opts.db, opts.out, opts.run and (" --run " .. opts.run) or "")
    pool:close()
    archive:close()
    old_archive:close()
    return 128 + sig
  end
  archive:run_end(run_id, ok and "done" or "failed")
  local diff
  if not ok then
    diff = S.error_text(result)
  else
    diff = first_difference(old_archive:candidates(info.id, false), archive:candidates(run_id, false))
      or attempts_difference(old_archive:attempts(info.id), archive:attempts(run_id))
  end
  pool:close()
  archive:close()
  old_archive:close()
  if diff then
    io.stdout:write("replay diverged: ", core.inert(diff), "\n")
    return 1
  end
  io.stdout:write(("replay identical: %d candidates with the same parents, sources, knobs and " ..
    "decisions\n"):format(#(core.archive(opts.out):candidates(run_id, false))))
  return 0
end


return M
