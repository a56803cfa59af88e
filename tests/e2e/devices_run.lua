-- Nine distinct CUDA candidates in flight at once against the mock driver
-- (tests/e2e/devices.sh): each timing worker owns one device.
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/cuda_vadd_mock.lua")
local seed = ev:seed()
local cands = {}
for i = 1, 9 do
  cands[i] = { source = seed.source .. "\n// variant " .. i, knobs = { MODE = 0 },
               operator = "manual" }
end
for _, r in ipairs(avo.evaluate_all(ev, cands)) do
  assert(r.status == "ok", tostring(r.reason))
end
print("devices run: ok")
