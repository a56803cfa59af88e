-- axpy with a yardstick (timing.yardstick): the judge times the seed
-- (tests/e2e/kernels/axpy.c at UNROLL=1) beside every candidate, and the
-- score is the paired speed-up over it (tests/e2e/yardstick.sh).
return {
  name = "axpy_yardstick",
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
  configs = { { name = "n4096", n = 4096, a = 2.5 }, { name = "n65536", n = 65536, a = -0.5 } },
  tolerance = { atol = 1e-6, rtol = 1e-5 },
  flops = function(c) return 2 * c.n end,
  timing = { max_seconds = 0.3, min_samples = 5, yardstick = true },
  timeout = 10,
}
