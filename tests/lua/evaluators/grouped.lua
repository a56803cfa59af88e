-- A separable landscape for the engine's tests (test backend): the kernel
-- sgemm_fast.c dispatches each shape family to its own knob set, and here
-- config "large" is scored by the LG_ knobs alone, "small" by the SM_ knobs
-- alone (a larger MR is faster), which each config declares.  The MD_ and
-- TS_ knobs score nothing and belong to no config.
local function index_of(values, v)
  for i, x in ipairs(values) do if tostring(x) == tostring(v) then return i end end
  return 1
end
local MR = { 8, 4, 6, 10, 12, 14, 16 }

return {
  name = "grouped",
  description = "per-family landscape over sgemm_fast's knobs (tests only)",
  backend = "test",
  kernel = "kernels/cpu/sgemm_fast.c",
  configs = {
    { name = "large", family = "LG", knobs = "LG_*" },
    { name = "large2", family = "LG", knobs = { "LG_*" } },
    { name = "small", family = "SM", knobs = "SM_*" },
    { name = "free", family = "LG" },
  },
  test_score = function(cand, config)
    return MR[index_of(MR, cand.knobs[config.family .. "_MR"])]
  end,
}
