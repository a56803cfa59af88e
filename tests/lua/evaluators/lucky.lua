-- synthetic.lua's landscape where a candidate's first measurement may be
-- lucky: with BK=16 it measures 5x its score the first time, its true score
-- every time after (tests/e2e/retime_elites.sh: the GA's retime_elites).
-- Deterministic, on the test backend.
local weight = { ORDER = { 1, 4, 0.5 }, UNROLL = { 1, 1.3, 1.6, 1.2 } }

local function index_of(values, v)
  for i, x in ipairs(values) do if tostring(x) == tostring(v) then return i end end
  return 1
end

local measured = {} -- knob key -> configs measured so far

return {
  name = "lucky",
  description = "a landscape with lucky first measurements (tests only)",
  backend = "test",
  kernel = "kernels/cpu/sgemm.c",
  configs = { { name = "small", size = 1 }, { name = "large", size = 2 } },
  test_score = function(cand, config)
    local k = cand.knobs
    local names = {}
    for name in pairs(k) do names[#names + 1] = name end
    table.sort(names)
    local key = config.name
    for _, name in ipairs(names) do key = key .. " " .. name .. "=" .. tostring(k[name]) end
    local first = measured[key] == nil
    measured[key] = true
    local s = weight.ORDER[index_of({ 0, 1, 2 }, k.ORDER)]
        * weight.UNROLL[index_of({ 1, 2, 4, 8 }, k.UNROLL)]
    if tostring(k.BK) == "64" then s = s * 1.5 end
    if tostring(k.BK) == "16" and first then s = s * 5 end
    return s * config.size
  end,
}
