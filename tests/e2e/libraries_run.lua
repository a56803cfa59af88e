-- The honest loop and the OpenBLAS-dlopening kernel on
-- tests/e2e/evaluators/mm_libraries.lua, into one archive
-- (tests/e2e/libraries.sh).
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/mm_libraries.lua")
avo.evaluate(ev, ev:seed())
local f = assert(io.open("tests/e2e/kernels/mm_openblas.c"))
avo.evaluate(ev, { source = f:read("a"), operator = "manual" })
f:close()
avo.progress{ generation = 1 }
