-- The agent tests' deterministic workload (test backend): a candidate's
-- rate is the number on its `#define SPEED` line (times the config's size),
-- its per-config spread the NOISE line.  Marks in the source stand in for
-- what a compiler and a runner would find:
--   "@@"     a compile error (test_compile)
--   "WRONG"  wrong results on the large config
--   "LUCKY"  the first measurement is 3% fast, re-timings 3% slow
-- AVO_TEST_SLOW_MS makes each measurement take that long, so tests can
-- kill a run part-way.
local slow = (tonumber(os.getenv("AVO_TEST_SLOW_MS")) or 0) / 1000

local function number(source, name)
  return tonumber(source:match("#define%s+" .. name .. "%s+([%d.]+)")) or 0
end

return {
  name = "agent_synth",
  description = "Double every element of x (test stand-in; SPEED sets the rate).",
  backend = "test",
  kernel = "tests/agent/kernels/synth.c",
  configs = { { name = "small", size = 1 }, { name = "large", size = 2 } },
  test_compile = function(cand)
    local at = cand.source:find("@@", 1, true)
    if at then
      local line = select(2, cand.source:sub(1, at):gsub("\n", "")) + 1
      return ("kernel.c:%d: error: expected ';' before '@@' token"):format(line)
    end
  end,
  test_score = function(cand, config, trial)
    local t0 = os.clock()
    while os.clock() - t0 < slow do end
    local src = cand.source
    local rate = number(src, "SPEED") * config.size
    if src:find("LUCKY", 1, true) then rate = rate * (trial == 0 and 1.03 or 0.97) end
    local wrong = src:find("WRONG", 1, true) and config.name == "large"
    return { gflops = rate, spread = number(src, "NOISE"), correct = not wrong,
             reason = wrong and "max error 0.5 > tolerance" or nil }
  end,
}
