-- A strategy that never yields back to the engine once it has evaluated the
-- seed: only the watchdog (a count hook) can stop it, and a pcall around the
-- loop must not swallow the stop.
local avo = require "avo"
local ev = avo.evaluator("tests/lua/evaluators/synthetic.lua")
avo.evaluate(ev, ev:seed())
local n = 0
while true do
  pcall(function()
    while true do n = n + 1 end
  end)
end
