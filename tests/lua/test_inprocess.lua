-- The in-process backend (lua/avo/inprocess.lua) behind sched.submit, the
-- interface the worker pool implements: answered at once, never retried as
-- an infrastructure fault, nothing to re-time; trial counts re-measurements.
local avo = require "avo"
local sched = require "avo.sched"

local calls, trials = 0, {}
local ev = avo.evaluator{
  name = "inprocess", description = "the in-process executor (tests only)", backend = "test",
  kernel = "kernels/cpu/sgemm.c", configs = { { name = "one" } },
  test_score = function(cand, _, trial)
    calls = calls + 1
    trials[#trials + 1] = trial
    if cand.source:find("RAISE", 1, true) then error("planted failure") end
    return 2
  end,
  test_compile = function(cand)
    if cand.source:find("NOCOMPILE", 1, true) then return "line 1: planted\nmore" end
    return nil
  end,
}

-- The executor's answers cannot be the machine's fault; the pool's can.
assert(sched.fallible{ backend = "test" } == false, "in-process jobs are not retried")
assert(sched.fallible{ backend = "cpu" } == true, "pool jobs are")
assert(sched.measures_time("test") == false and sched.measures_time("cpu") == true)

-- A candidate: one call per config, recorded as a finished evaluation.
local ok = avo.evaluate(ev, { source = "int ok;" })
assert(ok.status == "ok" and ok.score == 2 and calls == 1 and trials[1] == 0, ok.reason)

-- test_score raising: status "error", finished, tried once (no retries,
-- no control job, not left unfinished for resume).
calls = 0
local before = avo.budget().evaluations
local bad = avo.evaluate(ev, { source = "int RAISE;" })
assert(bad.status == "error" and bad.reason:find("test_score: .*planted failure"), bad.reason)
assert(calls == 1, ("test_score ran %d times: an in-process failure was retried"):format(calls))
assert(avo.budget().evaluations == before + 1, "the failed evaluation counts once")
local rows = assert(avo.lineage.get(bad.id))
assert(rows.status == "error", "the archive holds it as finished with its error, not pending")

-- test_compile: the candidate is a compile_error with the message's first
-- line; avo.compile runs test_compile alone.
calls = 0
local ce = avo.evaluate(ev, { source = "int NOCOMPILE;" })
assert(ce.status == "compile_error" and ce.reason == "compile error: line 1: planted", ce.reason)
local c1 = avo.compile(ev, { source = "int x;" })
assert(c1.status == "ok" and #c1.configs == 0, "compile only: no configs")
local c2 = avo.compile(ev, { source = "int NOCOMPILE2;" })
assert(c2.status == "compile_error" and c2.log == "line 1: planted\nmore")
assert(calls == 0, "compiling never scores")

-- Attempts: each re-measurement of the same candidate is the next trial.
trials = {}
for _ = 1, 3 do
  local a = avo.evaluate(ev, { source = "int again;" }, { attempt = { lineage = "t" } })
  assert(a.status == "ok" and a.attempt_id, a.reason)
end
assert(table.concat(trials, ",") == "0,1,2", "trials: " .. table.concat(trials, ","))

-- sched.submit of an in-process job completes its ticket before returning.
local job = ev:job({ source = "int direct;" }, 1, "/nonexistent", 0)
local ticket = sched.submit(job, ev:deadline(), function(result) return { wrapped = result } end)
local got = sched.await(ticket)
assert(got.wrapped.status == "ok" and got.wrapped.configs[1].gflops == 2, "handler ran at once")
print("test_inprocess: ok")
