-- A small fp32 matrix multiply whose `libraries` rule comes from the
-- environment (tests/e2e/libraries.sh): MM_LIBRARIES unset (the default,
-- the result names them), "allow", "forbid", or a comma-separated list of
-- file name prefixes; "bad" sets a value the evaluator must refuse.
local rule = os.getenv("MM_LIBRARIES")
if rule and rule ~= "allow" and rule ~= "forbid" and rule ~= "bad" then
  local list = {}
  for p in rule:gmatch("[^,]+") do list[#list + 1] = p end
  rule = list
elseif rule == "bad" then
  rule = 42
end
return {
  name = "mm_libraries",
  description = "C[M,N] = A[M,K] * B[K,N], fp32, row-major",
  backend = "cpu",
  kernel = "tests/integrity/kernels/honest.c",
  entry = "mm",
  reference = { source = "tests/integrity/kernels/mm_ref.c", entry = "mm_ref" },
  args = {
    { name = "M", kind = "scalar", type = "i32" },
    { name = "N", kind = "scalar", type = "i32" },
    { name = "K", kind = "scalar", type = "i32" },
    { name = "A", kind = "in", type = "f32", length = function(c) return c.M * c.K end },
    { name = "B", kind = "in", type = "f32", length = function(c) return c.K * c.N end },
    { name = "C", kind = "out", type = "f32", length = function(c) return c.M * c.N end },
  },
  configs = { { name = "m64", M = 64, N = 64, K = 64 }, { name = "odd", M = 37, N = 53, K = 29 } },
  tolerance = { atol = 1e-3, rtol = 1e-3 },
  flops = function(c) return 2 * c.M * c.N * c.K end,
  timing = { max_seconds = 0.2, min_samples = 3, max_samples = 20 },
  timeout = 10,
  libraries = rule,
}
