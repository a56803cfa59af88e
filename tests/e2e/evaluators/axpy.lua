-- out = a*x + y: the small workload of the failure tests.
return {
  name = "axpy",
  description = "out[i] = a * x[i] + y[i], fp32",
  backend = "cpu",
  kernel = "tests/e2e/kernels/axpy.c",
  entry = "axpy",
  reference = { source = "tests/e2e/kernels/axpy_ref.c", entry = "axpy_ref" },
  args = {
    { name = "n", kind = "scalar", type = "i32" },
    { name = "a", kind = "scalar", type = "f32" },
    { name = "x", kind = "in", type = "f32", length = function(c) return c.n end },
    { name = "y", kind = "in", type = "f32", length = function(c) return c.n end },
    { name = "out", kind = "out", type = "f32", length = function(c) return c.n end },
  },
  configs = { { name = "n1000", n = 1000, a = 2.5 }, { name = "n4097", n = 4097, a = -0.5 } },
  tolerance = { atol = 1e-6, rtol = 1e-5 },
  flops = function(c) return 2 * c.n end,
  bytes = function(c) return 12 * c.n end,
  timing = { max_seconds = 0.2, min_samples = 3 },
  timeout = 3,
}
