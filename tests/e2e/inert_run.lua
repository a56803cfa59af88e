-- Text that candidates and a model wrote, carrying terminal escapes (window
-- title, an OSC 52 clipboard write, a screen clear, a CR and a fake status
-- line, a C1 CSI): a model's answer logged as an operator's note and kept as
-- a candidate's note, a kernel whose compile log and one whose run output
-- carry them.  tests/e2e/inert.sh checks that none reaches the terminal raw.
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/axpy.lua")
local EVIL = "\27]0;pwned\7\27]52;c;ZWNobyBwd25lZA==\7\27[2J\rstatus ok score 99999\u{9b}31m"

local resp = assert(avo.llm.chat{ messages = { { role = "user", content = "hello" } } })
avo.log("model said: %s", resp.content)

local seed = ev:seed().source
local c_evil = EVIL:gsub("\27", "\\033"):gsub("\7", "\\a"):gsub("\r", "\\r")
  :gsub("\u{9b}", "\\302\\233")
local cands = {
  { source = '#error "' .. EVIL .. '"\n' .. seed, knobs = {}, operator = "manual",
    note = resp.content },
  { source = "#include <stdio.h>\n#include <stdlib.h>\n" ..
      seed:gsub("{", '{ fprintf(stderr, "' .. c_evil .. '\\377\\n"); fflush(stderr); abort();', 1),
    knobs = {}, operator = "manual", note = "abort " .. resp.content },
}
avo.evaluate_all(ev, cands)
assert(avo.evaluate(ev, ev:seed()).status == "ok")
