-- Every kind of broken kernel is recorded with its status and reason, and
-- the run goes on to evaluate a good kernel afterwards.
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/axpy.lua")

local function read(name)
  local f = assert(io.open("tests/e2e/kernels/" .. name .. ".c"))
  local s = f:read("a")
  f:close()
  return s
end

local cases = {
  { "axpy_compile_error", "compile_error", "compile error" },
  { "axpy_segv", "crashed", "SIGSEGV" },
  { "axpy_abort", "crashed", "SIGABRT" },
  { "axpy_hang", "timeout", "timed out" },
  { "axpy_wrong", "wrong", "max error" },
}
local cands = {}
for i, c in ipairs(cases) do
  cands[i] = { source = read(c[1]), knobs = {}, operator = "manual", note = c[1] }
end
local recs = avo.evaluate_all(ev, cands)
for i, c in ipairs(cases) do
  local r = recs[i]
  assert(r.status == c[2], ("%s: status %s, expected %s (%s)"):format(c[1], r.status, c[2],
    tostring(r.reason)))
  assert(r.reason and r.reason:find(c[3], 1, true),
    ("%s: reason %q lacks %q"):format(c[1], tostring(r.reason), c[3]))
  assert(r.score == 0, c[1] .. " scores 0")
end
assert(recs[5].reason:find("n1000", 1, true), "wrong answer names the config")
assert(recs[1].log and recs[1].log:find("error", 1, true), "compile log is kept")

-- A source that is not UTF-8 (a Latin-1 comment) cannot travel to a worker
-- as JSON text: it is invalid, named where its first bad byte is.
local seed = ev:seed()
local latin1 = avo.evaluate(ev, { source = "/* caf\xe9 */\n" .. seed.source, knobs = {},
                                  operator = "manual", note = "axpy_latin1" })
assert(latin1.status == "invalid", "latin-1 source: status " .. tostring(latin1.status))
assert(latin1.reason:find("not valid UTF-8: byte 0xE9 at line 1, column 7", 1, true),
  "latin-1 source: reason " .. tostring(latin1.reason))

local good = avo.evaluate(ev, seed)
assert(good.status == "ok" and good.score > 0, "the run goes on: " .. tostring(good.reason))
print("failures: ok")
