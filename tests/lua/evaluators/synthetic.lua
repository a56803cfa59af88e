-- A deterministic workload for the engine's own tests: the "test" backend
-- scores a candidate from its knobs in-process instead of compiling and
-- timing it, so runs are exactly reproducible.  The kernel only supplies the
-- knob declarations.
local weight = { ORDER = { 1, 4, 0.5 }, UNROLL = { 1, 1.3, 1.6, 1.2 } }

-- AVO_TEST_SLOW_MS makes each evaluation take that long, so tests can kill
-- a run part-way.
local slow = (tonumber(os.getenv("AVO_TEST_SLOW_MS")) or 0) / 1000
-- AVO_TEST_SCORE_SCALE multiplies every score: "measurements" that differ
-- between two runs but rank the candidates alike (LLM replay tests).
local scale = tonumber(os.getenv("AVO_TEST_SCORE_SCALE")) or 1

local function index_of(values, v)
  for i, x in ipairs(values) do if tostring(x) == tostring(v) then return i end end
  return 1
end

return {
  name = "synthetic",
  description = "deterministic landscape over the sgemm knobs (tests only)",
  backend = "test",
  kernel = "kernels/cpu/sgemm.c",
  configs = { { name = "small", size = 1 }, { name = "large", size = 2 } },
  test_score = function(cand, config)
    local t0 = os.clock()
    while os.clock() - t0 < slow do end
    local k = cand.knobs
    local s = weight.ORDER[index_of({ 0, 1, 2 }, k.ORDER)]
        * weight.UNROLL[index_of({ 1, 2, 4, 8 }, k.UNROLL)]
    if tostring(k.BK) == "64" then s = s * 1.5 end
    return s * config.size * scale
  end,
}
