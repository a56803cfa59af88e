-- tests/faults/infra.sh: a seed, then six candidates that fail "for the
-- machine" on every try (the test's compiler kills itself on them) and one
-- honest candidate after them, all submitted at once.  Prints one line per
-- record: "record I STATUS REASON".
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/axpy.lua")
local f = assert(io.open("tests/e2e/kernels/axpy.c"))
local src = f:read("a")
f:close()
local seed = avo.evaluate(ev, { source = src, operator = "seed" })
print(("record 0 %s %s"):format(seed.status, seed.reason or ""))
local cands = {}
for i = 1, 6 do cands[i] = { source = src .. ("\n/* HOSTILE-FAULT %d */\n"):format(i) } end
cands[7] = { source = src .. "\n/* an honest one after them */\n" }
for i, rec in ipairs(avo.evaluate_all(ev, cands)) do
  print(("record %d %s %s"):format(i, rec.status, rec.reason or ""))
end
