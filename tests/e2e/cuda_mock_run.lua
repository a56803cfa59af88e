-- One worker (--jobs 1): a candidate that hits a sticky error, then a good
-- one; the pool must replace the retired worker and the second must pass.
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/cuda_vadd_mock.lua")
local seed = ev:seed()
local crash = { source = seed.source, knobs = { MODE = 5 }, operator = "manual" }
local good = { source = seed.source, knobs = { MODE = 0 }, operator = "manual" }
local r1 = avo.evaluate(ev, crash)
local r2 = avo.evaluate(ev, good)
print("first: " .. r1.status .. " " .. tostring(r1.reason))
print("second: " .. r2.status .. " " .. tostring(r2.score))
assert(r1.status == "crashed", r1.status)
assert(r2.status == "ok", tostring(r2.reason))
