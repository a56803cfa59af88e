-- synthetic.lua's landscape where a candidate's first measurement may be
-- lucky: with BK=16 it measures 5x its score the first time, its true score
-- every time after (tests/e2e/retime_elites.sh: the GA's retime_elites).
-- Deterministic, on the test backend.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
local synthetic = dofile(here .. "synthetic.lua")

local measured = {} -- candidate knobs and config -> measured before

return {
  name = "lucky",
  description = "a landscape with lucky first measurements (tests only)",
  backend = "test",
  kernel = synthetic.kernel,
  configs = synthetic.configs,
  test_score = function(cand, config)
    local names = {}
    for name in pairs(cand.knobs) do names[#names + 1] = name end
    table.sort(names)
    local key = config.name
    for _, name in ipairs(names) do key = key .. " " .. name .. "=" .. tostring(cand.knobs[name]) end
    local first = measured[key] == nil
    measured[key] = true
    local s = synthetic.test_score(cand, config)
    if tostring(cand.knobs.BK) == "16" and first then s = s * 5 end
    return s
  end,
}
