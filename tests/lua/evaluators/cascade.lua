-- The synthetic workload (tests/lua/evaluators/synthetic.lua) with a
-- cascade: the "small" config first; a candidate below 0.9 x the best there
-- is pruned before "large" runs.  A candidate with ORDER=2 is wrong on
-- "small" (stopped at stage 1).  Used by tests/e2e/cascade.sh.
local ev = dofile("tests/lua/evaluators/synthetic.lua")
local score = ev.test_score
ev.name = "cascade"
ev.cascade = { { configs = { "small" }, min_ratio = 0.9 } }
ev.test_score = function(cand, config, trial)
  -- Count the configs run, per config, in a file named by the environment.
  local log = os.getenv("AVO_TEST_CASCADE_LOG")
  if log then
    local f = assert(io.open(log, "a"))
    f:write(config.name, "\n")
    f:close()
  end
  if tostring(cand.knobs.ORDER) == "2" and config.name == "small" then
    return { gflops = 1, correct = false, reason = "wrong on small" }
  end
  return score(cand, config, trial)
end
return ev
