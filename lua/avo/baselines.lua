-- avo.baselines — measure an evaluator's baselines (its `baselines` field,
-- docs/evaluators.md) once per run and device, store them in the archive's
-- baselines table, and say how the run's best compares with them.
--
-- Baseline jobs run beside the search: they are submitted to the pool when
-- a run first uses the evaluator and recorded by their completion handler,
-- so no task waits for them.  They are not evaluations: they do not count
-- against --max-evals, draw no input seed from the run's stream, make no
-- candidate and never become the best.  A baseline already stored for the
-- run and device is not measured again on resume (one stored with status
-- "error", an infrastructure fault, is).

local core = require "avo.core"
local sched = require "avo.sched"

local M = {}

-- The device key of a result: "cpu" for the CPU backend, "cuda:N" for the
-- GPU that ran it (pinned, or as the pool's worker label says), "cuda" when
-- no GPU answered.
local function device_of(ev, job, result)
  if ev.backend ~= "cuda" then return "cpu" end
  if job.device then return ("cuda:%d"):format(job.device) end
  local worker = type(result.worker) == "table" and result.worker or {}
  if math.type(worker.device) == "integer" and worker.device >= 0 then
    return ("cuda:%d"):format(worker.device)
  end
  return "cuda"
end

-- The archive row of one baseline measurement.
function M.row(ev, b, job, result)
  local status, reason, score = ev:baseline_verdict(result)
  local lib = type(result.baseline) == "table" and result.baseline or {}
  local device = type(result.device) == "table" and result.device or {}
  local stored = {}
  for k, v in pairs(result) do
    if k ~= "log" or status ~= "ok" then stored[k] = v end
  end
  stored.configs = result.configs or setmetatable({}, core.json_array_mt)
  M.note_environment(stored.baseline)
  return {
    name = b.name, device = device_of(ev, job, result), evaluator = ev.name,
    device_name = type(device.name) == "string" and device.name or nil,
    status = status, reason = reason,
    library = lib.library or b.library, version = lib.version or b.version,
    path = lib.path or b.path, result = stored, score = score,
  }
end

-- A library baseline's `environment` is what avo set for the library's
-- kernel and threads (eval/cpu/cpulib.h); the worker may run in a cleaned
-- environment, so the user's own values are compared here, in the engine:
-- each that differs is added to `env_overridden`, and every display of the
-- baseline says it was not used (M.library_text).
function M.note_environment(lib)
  if type(lib) ~= "table" or type(lib.environment) ~= "table" then return end
  local over = type(lib.env_overridden) == "table" and lib.env_overridden or {}
  for name, value in pairs(lib.environment) do
    local theirs = os.getenv(name)
    if theirs and theirs ~= value then over[name] = theirs end
  end
  for _, name in ipairs(type(lib.environment_unset) == "table" and lib.environment_unset or {}) do
    if type(name) == "string" and os.getenv(name) then over[name] = os.getenv(name) end
  end
  if next(over) then lib.env_overridden = over end
end

-- The GPUs to measure on: one job per device worker the pool was given
-- (--devices), else one job for whichever GPU takes it (false).
local function devices_for(r, ev)
  if ev.backend ~= "cuda" or not (r.pool and r.pool.devices) then return { false } end
  local list = r.pool:devices()
  if #list == 0 then return { false } end
  return list
end

-- A seed for baseline inputs drawn from the run's own "baselines" stream,
-- never from the candidates' (which must stay in step on resume).
local function baseline_seed(r)
  r.baseline_rng = r.baseline_rng or core.rng(r.seed, "baselines")
  return r.baseline_rng:next() << 21 ~ r.baseline_rng:next()
end

-- Text for one stored row: "cublas: unavailable (libcublasLt.so.13 not found)".
function M.describe(row, unit)
  if row.status == "ok" and row.score then
    return ("%s: %.4g %s"):format(row.name, row.score, unit or "")
  end
  local what = row.status == "ok" and "partial" or row.status
  return ("%s: %s (%s)"):format(row.name, what, row.reason or "no reason given")
end

-- Start the baselines of `ev` for run `r` (the state avo._begin made).
-- Rows land in r.baseline_rows as they finish; returns the tickets of the
-- jobs submitted (avo eval awaits them).
function M.start(r, ev)
  local list = ev.baseline_list or {}
  -- (An in-process evaluator has none: the evaluator refuses them at load.)
  if #list == 0 then return {} end
  r.baseline_rows = r.baseline_rows or {}
  local rec = r.recorded
  if rec and (rec.mode == "replay" or rec.origin) then return {} end -- replays measure nothing
  local stored = {}
  if rec and rec.mode == "resume" then
    for _, row in ipairs(assert(r.archive:baselines(r.run_id))) do
      if row.status ~= "error" then
        stored[row.name .. "\0" .. row.device] = true
        stored[row.name .. "\0*"] = true
        r.baseline_rows[#r.baseline_rows + 1] = row
      end
    end
  end
  local tickets = {}
  r.baseline_owner = r.baseline_owner or {}
  for _, b in ipairs(list) do
    -- Rows are keyed by (run, device, name): a second evaluator of the run
    -- naming the same baseline gets its rows as "name@evaluator".
    local owner = r.baseline_owner[b.name]
    if owner and owner ~= ev.fingerprint then
      local copy = setmetatable({ name = b.name .. "@" .. ev.name }, { __index = b })
      b = copy
    end
    r.baseline_owner[b.name] = r.baseline_owner[b.name] or ev.fingerprint
    for _, d in ipairs(devices_for(r, ev)) do
      local key = b.name .. "\0" .. (d and ("cuda:%d"):format(d) or "*")
      if not stored[key] then
        local job = ev:baseline_job(b, baseline_seed(r), r.cache_dir, d or nil)
        r.baselines_running = (r.baselines_running or 0) + 1
        tickets[#tickets + 1] = sched.submit(job, ev:deadline(), function(result)
          r.baselines_running = r.baselines_running - 1
          local row = M.row(ev, b, job, result)
          local id, err = r.archive:baseline_put(r.run_id, row)
          if not id then error("avo: cannot record a baseline in the archive: " .. err, 0) end
          row.id = id
          r.baseline_rows[#r.baseline_rows + 1] = row
          if r.on_log and row.status ~= "ok" then
            r.on_log(("avo: baseline %s on %s: %s"):format(row.name, row.device,
              (M.describe(row, ev.unit):gsub("^[^:]*: ", ""))))
          end
          return row
        end)
      end
    end
  end
  return tickets
end

-- Whether baseline `row` belongs to `evaluator` (a name; nil: unknown, as
-- in a migrated archive, which matches only rows of unknown evaluator).
function M.owned(row, evaluator)
  return row.evaluator == evaluator
end

-- The rows of `rows` that belong to `evaluator` (M.owned).
function M.of(rows, evaluator)
  local out = {}
  for _, row in ipairs(rows or {}) do
    if M.owned(row, evaluator) then out[#out + 1] = row end
  end
  return out
end

-- A config entry's throughput: GFLOP/s, else GB/s, else 1/time (and which).
local function rate(c)
  if type(c.gflops) == "number" and c.gflops > 0 then return c.gflops, "gflops" end
  if type(c.gbs) == "number" and c.gbs > 0 then return c.gbs, "gbs" end
  if type(c.median_s) == "number" and c.median_s > 0 then return 1 / c.median_s, "time" end
  return nil
end
M.rate = rate

-- The per-config ratios of record `rec` (its configs) to baseline `row`
-- (its result's configs), as text: "128x128x128 0.05x, 256x256x256 0.02x";
-- a config the baseline has no time for says why ("odd unavailable").
function M.config_text(rec, row)
  local of_row = {}
  local result = type(row.result) == "table" and row.result or {}
  for _, c in ipairs(result.configs or {}) do of_row[c.name] = c end
  local parts = {}
  for _, c in ipairs(rec.configs or {}) do
    local b = of_row[c.name]
    local mine, kind = rate(c)
    local theirs, bkind
    if b and b.correct ~= false and not b.unavailable then theirs, bkind = rate(b) end
    if mine and theirs and kind == bkind then
      parts[#parts + 1] = ("%s %.2fx"):format(c.name, mine / theirs)
    elseif mine then
      parts[#parts + 1] = ("%s %s"):format(c.name, not b and "not measured"
        or b.unavailable and "unavailable" or b.correct == false and "wrong" or "no time")
    end
  end
  return table.concat(parts, ", ")
end

-- What a library baseline ran as, for the line that shows its figure:
-- "core SkylakeX, 1 thread", and where avo replaced a variable of the
-- environment that picks the library's kernel or threads (eval/cpu/cpulib.h),
-- "; OPENBLAS_CORETYPE=Haswell in the environment not used". "" when the
-- row recorded none of it (a kernel baseline, an older archive).
function M.library_text(row)
  local result = type(row.result) == "table" and row.result or {}
  local lib = type(result.baseline) == "table" and result.baseline or {}
  local info = type(lib.info) == "table" and lib.info or {}
  local what = {}
  if info.core then what[#what + 1] = "core " .. tostring(info.core) end
  if math.type(lib.threads) == "integer" then
    what[#what + 1] = ("%d thread%s"):format(lib.threads, lib.threads == 1 and "" or "s")
  end
  local text = table.concat(what, ", ")
  local over = type(lib.env_overridden) == "table" and lib.env_overridden or {}
  local names = {}
  for name, value in pairs(over) do
    if type(value) == "string" then names[#names + 1] = ("%s=%s"):format(name, value) end
  end
  table.sort(names)
  if #names > 0 then
    text = text .. "; " .. table.concat(names, " ") .. " in the environment not used"
  end
  return text
end

-- The strongest baseline with a score among `rows`: the row, or nil.
-- `evaluator` (optional): only that evaluator's rows.
function M.strongest(rows, evaluator)
  local best
  for _, row in ipairs(rows or {}) do
    if (evaluator == nil or M.owned(row, evaluator))
        and row.status == "ok" and type(row.score) == "number" and row.score > 0
        and (not best or row.score > best.score) then
      best = row
    end
  end
  return best
end

-- The status line's words on baselines: "0.41x cudnn_sdpa" against the
-- strongest of the best's own evaluator, "cublas unavailable" when none has
-- a score, "baselines running" while they run; nil without baselines.
-- `best` is the run's best record (its evaluator and score) or nil.
function M.status_text(r, best)
  local rows = r.baseline_rows or {}
  if best then rows = M.of(rows, best.evaluator) end
  local strongest = M.strongest(rows)
  if strongest and best then
    return ("%.2fx %s"):format(best.score / strongest.score, strongest.name)
  end
  if strongest then return nil end
  if (r.baselines_running or 0) > 0 then return "baselines running" end
  local failed = {}
  for _, row in ipairs(rows) do
    failed[#failed + 1] = ("%s %s"):format(row.name, row.status == "ok" and "partial" or row.status)
  end
  return #failed > 0 and table.concat(failed, ", ") or nil
end

return M
