-- Evaluate one kernel file in an `avo run` (tests/integrity/run.sh), so the
-- candidate is judged by a real run with an archive on disk:
--   avo run tests/integrity/eval_one.lua --db A.db kernel=FILE [evaluator=E]
-- Prints one line: "integrity-record id=ID status=S score=X reason=R" (R to
-- the end of the line, newlines flattened).
local avo = require "avo"
local args = ... or {}
local ev = avo.evaluator(args.evaluator or "tests/integrity/evaluators/mm.lua")
local path = args.kernel or error("kernel=FILE is required")
local f = assert(io.open(path))
local source = f:read("a")
f:close()
local rec = avo.evaluate(ev, { source = source, knobs = {}, operator = "manual",
  note = args.kernel })
print(("integrity-record id=%d status=%s score=%.17g reason=%s"):format(rec.id, rec.status,
  rec.score, (tostring(rec.reason or "")):gsub("\n", " ")))
