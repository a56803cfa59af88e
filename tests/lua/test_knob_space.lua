-- The summary's knob-space line (avo.session knob_space): the count of
-- combinations stays right when it is past an integer's range.
local S = require "avo.session"

local function space(counts)
  local knobs, source = {}, "kernel"
  for i, n in ipairs(counts) do
    local values = {}
    for v = 1, n do values[v] = v end
    knobs[i] = { name = "K" .. i, values = values }
  end
  local run = { evaluator_objects = { ev = {
    knobs = knobs, kernel_source = source, kernel_path = "./kernels/k.c" } } }
  return run, { id = 5, evaluator = "ev", source = source, knobs = { K1 = counts[1] } }
end

local run, best = space({ 3, 4, 2 })
local line = S.knob_space(run, best)
assert(line:find("the 3 knobs kernels/k.c declares (K1 K2 K3: 24 combinations)", 1, true), line)
assert(line:find("at #5, K1=3 is the last value declared", 1, true), line)

-- 48 knobs of 4 values: 4^48 ~ 7.9e28, far past 2^63.
local counts = {}
for i = 1, 48 do counts[i] = 4 end
run, best = space(counts)
line = S.knob_space(run, best)
assert(line:find(": about 7.9e+28 combinations)", 1, true), line)
assert(not line:find("-%d"), "no negative count: " .. line)

-- A best whose source is not the seed's is not bounded by the knobs.
best.source = "edited"
assert(S.knob_space(run, best) == nil)
print("knob_space: ok")
