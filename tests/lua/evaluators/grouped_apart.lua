-- Two knob groups that want opposite values (tests/lua/test_group_search.lua):
-- sgemm_fast's knobs on the test backend, config "large" scored by LG_MR
-- alone (larger is faster), "small" by SM_MR alone (smaller is faster).
-- The MD_ and TS_ knobs score nothing.
local MR = { 8, 4, 6, 10, 12, 14, 16 }
local function mr(v)
  for _, x in ipairs(MR) do if tostring(x) == tostring(v) then return x end end
  return MR[1]
end

return {
  name = "grouped_apart",
  description = "two knob groups with opposite optima (tests only)",
  backend = "test",
  kernel = "kernels/cpu/sgemm_fast.c",
  configs = {
    { name = "large", knobs = "LG_*" },
    { name = "small", knobs = "SM_*" },
  },
  -- A tile of 16 rows takes no 3 or 4 vectors (as sgemm_fast's register
  -- budget), so the NV line skips them where LG_MR is 16.
  restrictions = function(k)
    return not (tostring(k.LG_MR) == "16" and tonumber(k.LG_NV) >= 3)
  end,
  test_score = function(cand, config)
    if config.name == "large" then return mr(cand.knobs.LG_MR) end
    return 20 - mr(cand.knobs.SM_MR)
  end,
}
