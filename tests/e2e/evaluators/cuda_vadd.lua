-- out = x + y on the GPU: the small workload of the CUDA tests.
return {
  name = "cuda_vadd",
  description = "out[i] = x[i] + y[i], fp32, on the GPU",
  backend = "cuda",
  kernel = "tests/e2e/kernels/cuda_vadd.cu",
  entry = "vadd",
  reference = {
    source = "tests/e2e/kernels/cuda_vadd_ref.cu", entry = "vadd_ref",
    grid = 64, block = 256,
  },
  grid = function(c, k) return (c.n + k.BLOCK - 1) // k.BLOCK end,
  block = function(c, k) return k.BLOCK end,
  args = {
    { name = "n", kind = "scalar", type = "i32" },
    { name = "x", kind = "in", type = "f32", length = function(c) return c.n end },
    { name = "y", kind = "in", type = "f32", length = function(c) return c.n end },
    { name = "out", kind = "out", type = "f32", length = function(c) return c.n end },
  },
  configs = { { name = "n1000", n = 1000 }, { name = "n1m", n = 1 << 20 } },
  tolerance = { atol = 1e-6, rtol = 1e-6 },
  bytes = function(c) return 12 * c.n end,
  timing = { max_seconds = 0.5, min_samples = 3 },
  timeout = 10,
}
