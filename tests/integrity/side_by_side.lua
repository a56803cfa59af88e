-- Evaluate several kernel files at once in one `avo run` (tests/integrity/
-- run.sh, with --jobs 2): concurrent candidates, so an attack has
-- neighbours, and a run that must go on whatever they do.
--   avo run tests/integrity/side_by_side.lua --db A.db kernels=A.c,B.c,... [evaluator=E]
-- Prints one line per kernel: "integrity-record I FILE status=S score=X reason=R".
local avo = require "avo"
local args = ... or {}
local ev = avo.evaluator(args.evaluator or "tests/integrity/evaluators/mm.lua")
local files, cands = {}, {}
for path in tostring(args.kernels or error("kernels=A.c,B.c,... is required")):gmatch("[^,]+") do
  local f = assert(io.open(path))
  -- each its own candidate, the same file twice included
  local source = f:read("a") .. ("\n/* side by side %d */\n"):format(#files + 1)
  f:close()
  files[#files + 1] = path
  cands[#cands + 1] = { source = source, knobs = {}, operator = "manual", note = path }
end
for i, rec in ipairs(avo.evaluate_all(ev, cands)) do
  print(("integrity-record %d %s status=%s score=%.17g reason=%s"):format(i, files[i], rec.status,
    rec.score, tostring(rec.reason or ""):gsub("%s+", " ")))
end
