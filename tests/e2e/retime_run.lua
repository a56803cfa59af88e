-- Four axpy variants, then the end of the run re-times the bests
-- (tests/e2e/retime.sh).  RETIME_BREAK=1 replaces the source of the
-- best-scoring variant in the run's record after its evaluation, so its
-- re-timing fails to compile: it must be dropped, never ranked.
-- RETIME_TOP/RETIME_ROUNDS set avo.retime{} from the script.
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/axpy.lua")
local seed = ev:seed()
local recs = {}
for i = 1, 4 do
  recs[i] = avo.evaluate(ev, { source = seed.source .. "\n// variant " .. i,
                               knobs = { UNROLL = 1 }, operator = "manual" })
end
if os.getenv("RETIME_TOP") then
  avo.retime{ top = tonumber(os.getenv("RETIME_TOP")),
              rounds = tonumber(os.getenv("RETIME_ROUNDS") or "2") }
end
if os.getenv("RETIME_BREAK") then
  local best = recs[1]
  for _, r in ipairs(recs) do if r.score > best.score then best = r end end
  best.source = "this is not C"
  print(("broken: #%d"):format(best.id))
end
