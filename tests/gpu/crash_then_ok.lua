-- One worker (--jobs 1): a kernel that hits an illegal address (sticky
-- error: crashed, the worker retires), then the correct kernel, which must
-- pass on the fresh worker's fresh context.
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/cuda_vadd.lua")
local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end
local r1 = avo.evaluate(ev, { source = read("tests/e2e/kernels/cuda_vadd_crash.cu"), knobs = {} })
local r2 = avo.evaluate(ev, { source = read("tests/e2e/kernels/cuda_vadd.cu"), knobs = { BLOCK = 256 } })
print("first: " .. r1.status .. " " .. tostring(r1.reason))
print("second: " .. r2.status .. " " .. tostring(r2.score))
assert(r1.status == "crashed", "expected the illegal address to crash, got " .. r1.status)
assert(r2.status == "ok", "the fresh worker failed: " .. tostring(r2.reason))
