-- A broken evaluator is refused with a message naming the field.
local avo = require "avo"

local function good()
  return {
    name = "t", description = "d", backend = "cpu", kernel = "kernels/cpu/sgemm.c",
    entry = "sgemm", reference = { source = "kernels/cpu/sgemm_ref.c", entry = "sgemm_ref" },
    args = {
      { name = "M", kind = "scalar", type = "i32" },
      { name = "N", kind = "scalar", type = "i32" },
      { name = "K", kind = "scalar", type = "i32" },
      { name = "A", kind = "in", type = "f32", length = function(c) return c.M * c.K end },
      { name = "B", kind = "in", type = "f32", length = function(c) return c.K * c.N end },
      { name = "C", kind = "out", type = "f32", length = function(c) return c.M * c.N end },
    },
    configs = { { name = "s", M = 4, N = 4, K = 4 } },
    tolerance = { atol = 1e-4, rtol = 1e-4 },
    flops = function(c) return 2 * c.M * c.N * c.K end,
  }
end

assert(avo.evaluator(good()).name == "t", "the good evaluator loads")

local function expect(mutate, pattern)
  local ev = good()
  mutate(ev)
  local ok, err = pcall(avo.evaluator, ev)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):find(pattern, 1, true),
    ("error %q does not mention %q"):format(tostring(err), pattern))
end

expect(function(e) e.name = nil end, "'name' is missing")
expect(function(e) e.description = nil end, "'description' is missing")
expect(function(e) e.backend = "fpga" end, "'backend'")
expect(function(e) e.kernel = nil end, "'kernel' is missing")
expect(function(e) e.kernel = "kernels/cpu/nope.c" end, "'kernel' names 'kernels/cpu/nope.c'")
expect(function(e) e.entry = nil end, "'entry' is missing")
expect(function(e) e.reference = nil end, "'reference' is missing")
expect(function(e) e.reference.entry = nil end, "'reference.entry' is missing")
expect(function(e) e.args = nil end, "'args' is missing")
expect(function(e) e.args[4].length = nil end, "'args[4].length' is missing")
expect(function(e) e.args[2].kind = "input" end, "'args[2].kind'")
expect(function(e) e.args[2].type = "f16" end, "'args[2].type'")
expect(function(e) e.args[6].name = "A" end, "'args[6].name' repeats 'A'")
expect(function(e) e.configs = {} end, "'configs' must list at least one config")
expect(function(e) e.configs[1].name = nil end, "'configs[1].name' is missing")
expect(function(e) e.configs[1].K = nil end, "'args[3]' has no value for configs[1]")
expect(function(e) e.tolerance = nil end, "'tolerance' is missing")
expect(function(e) e.tolerance.rtol = "x" end, "'tolerance.rtol' must be a number")
expect(function(e) e.flops = nil end, "'flops' or 'bytes' is required")
expect(function(e) e.args[4].length = function() return 0 end end, "'args[4].length' must return a positive integer")
expect(function(e) e.args[4].length = function() error("oops") end end, "oops")

local ok, err = pcall(avo.evaluator, "no/such/evaluator")
assert(not ok and err:find("not found"), err)
print("test_evaluator_errors: ok")
