-- The seed and two variants on an evaluator with baselines
-- (tests/e2e/baselines.sh).  With --jobs 1 the baseline jobs, queued when
-- the evaluator is first used, finish before the seed: the progress line
-- after it shows the best against them.
local avo = require "avo"
local ev = avo.evaluator(os.getenv("BASELINES_EVALUATOR") or "tests/e2e/evaluators/axpy_baselines.lua")
local seed = ev:seed()
avo.evaluate(ev, seed)
for i = 1, 2 do
  avo.evaluate(ev, { source = seed.source .. "\n// variant " .. i, knobs = { UNROLL = 1 },
                     operator = "manual" })
end
-- A second evaluator naming a baseline of the same name: its rows are
-- "plain@<its name>", never over the first one's.
if os.getenv("BASELINES_SECOND") then
  local second = avo.evaluator(os.getenv("BASELINES_SECOND"))
  avo.evaluate(second, second:seed())
end
-- With --devices 0,1 each GPU has its worker, and one may still be timing
-- its baselines when the other has run all three evaluations (seen in a
-- chroot under load: 3 rows of 4): wait for every baseline started.
avo.baselines{ wait = true }
avo.progress{ generation = 1 }
local rows = avo.baselines()
print(("baselines seen by the script: %d"):format(#rows))
assert(avo.budget().evaluations == (os.getenv("BASELINES_SECOND") and 4 or 3),
  "baselines counted as evaluations")
