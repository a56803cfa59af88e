-- tests/faults/outside_kill.sh: evaluate the kernel in $KERNEL once with the
-- evaluator in $EVALUATOR and print "record STATUS RETRIED REASON".
local avo = require "avo"
local ev = avo.evaluator(os.getenv("EVALUATOR"))
local f = assert(io.open(os.getenv("KERNEL")))
local src = f:read("a")
f:close()
local rec = avo.evaluate(ev, { source = src, operator = "seed" })
print(("record %s %s %s"):format(rec.status, rec.reason and rec.reason:match("retry") and "retried"
  or "-", rec.reason or ""))
