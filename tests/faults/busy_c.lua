-- A strategy stuck inside one C call once it has evaluated the seed: a
-- string.find that backtracks for minutes.  The count hook never runs inside
-- a C function, so only the watchdog thread (lua/watchdog.c) can end it.
local avo = require "avo"
local ev = avo.evaluator("tests/lua/evaluators/synthetic.lua")
avo.evaluate(ev, ev:seed())
local s = ("a"):rep(5000)
while true do pcall(string.find, s, ".-.-.-.-.-b") end
