-- avo.inprocess — the in-process backend (an evaluator's backend = "test",
-- docs/evaluators.md): an executor of jobs like the worker pool, behind the
-- same sched.submit, that compiles and times nothing.  The evaluator's own
-- test_score(candidate, config, trial) stands in for a measurement, so the
-- engine's tests run the whole pipeline (archive, replay, budgets,
-- cascades, attempts) deterministically and in a fraction of a second.
--
-- The executor interface (lua/avo/sched.lua) that the pool (avo.Pool,
-- lua/core.c) and this module both provide:
--   executor:submit(job, deadline) -> ticket      answered later (the pool:
--                                                   core.wait delivers it)
--                                 -> nil, result  answered at once (here)
--   executor.fallible      false: a failed answer is never the machine's
--                          (no retries, no control jobs; submit_job)
--   executor.measures_time false: nothing to re-time (retime, rebench)
-- The pool is userdata: its missing fields read as nil, "the default".

local core = require "avo.core"

local M = {
  backend = "test",     -- the evaluators' backend name whose jobs run here
  fallible = false,     -- deterministic, inside the engine: no infrastructure to fail
  measures_time = false, -- its "rates" are made up by test_score
}

-- The job for candidate `cand` of evaluator (or cascade view) `ev`.  It
-- never leaves the process, so it holds the evaluator itself.  `trial`
-- counts earlier measurements of the same candidate (re-timing, attempts).
function M.job(ev, cand, trial)
  return { backend = M.backend, evaluator = ev, candidate = cand, trial = trial }
end

-- Compile status: `test_compile(cand)` (optional) returns nil when the
-- candidate "compiles", else the compiler message.
local function compile_error(ev, cand)
  if not ev.test_compile then return nil end
  local ok, msg = pcall(ev.test_compile, cand)
  if not ok then return "test_compile: " .. tostring(msg) end
  return msg
end

-- The worker result of `job` (M.job; job.compile_only: compile only).  An
-- empty list of configs is marked a JSON array, as the archive requires
-- (a compile error or a failing test_score could not be recorded before).
-- test_score(cand, config, trial) returns a rate, or a table {gflops =,
-- spread =, correct =, reason =} to stand in for noise and wrong answers.
function M.result(job)
  local ev, cand = job.evaluator, job.candidate
  local cerr = compile_error(ev, cand)
  if cerr then
    return { status = "compile_error", reason = "compile error: " .. cerr:match("[^\n]*"),
             log = cerr, configs = setmetatable({}, core.json_array_mt) }
  end
  if job.compile_only then return { status = "ok", configs = {}, log = "" } end
  local configs = {}
  for i, c in ipairs(ev.configs) do
    local ok, v = pcall(ev.test_score, cand, c, job.trial or 0)
    if not ok then
      return { status = "error", reason = "test_score: " .. tostring(v),
               configs = setmetatable({}, core.json_array_mt) }
    end
    if type(v) == "table" then
      local rate = v.gflops or 0
      configs[i] = { name = c.name, correct = v.correct ~= false, gflops = rate,
                     median_s = 1 / math.max(rate, 1e-9), spread = v.spread, reason = v.reason }
    else
      configs[i] = { name = c.name, correct = true, gflops = v, median_s = 1 / math.max(v, 1e-9) }
    end
  end
  return { status = "ok", configs = configs }
end

-- The executor's submit: the answer at once, no ticket.
function M:submit(job)
  return nil, M.result(job)
end

return M
