-- The sgemm seed and a variant on cpu/sgemm, whose baseline is OpenBLAS
-- (tests/e2e/openblas.sh).  OPENBLAS_EVALUATOR replaces the evaluator (a
-- copy with a broken library entry); OPENBLAS_SECOND adds a second
-- evaluator whose candidates must never be compared with OpenBLAS.
local avo = require "avo"
local ev = avo.evaluator(os.getenv("OPENBLAS_EVALUATOR") or "cpu/sgemm")
local seed = ev:seed()
avo.evaluate(ev, seed)
local knobs = {}
for k, v in pairs(seed.knobs) do knobs[k] = v end
knobs.ORDER = 1
avo.evaluate(ev, { source = seed.source, knobs = knobs, operator = "manual" })
if os.getenv("OPENBLAS_SECOND") then
  local second = avo.evaluator(os.getenv("OPENBLAS_SECOND"))
  avo.evaluate(second, second:seed())
end
avo.progress{ generation = 1 }
