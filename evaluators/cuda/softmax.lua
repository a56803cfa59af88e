-- Row softmax on the GPU (memory-bound): Y[r, :] = softmax(X[r, :]), fp32.
-- Seed: kernels/cuda/softmax.cu (one CTA per row; knobs BLOCK WARP_REDUCE VEC).
return {
  name = "softmax",
  description = [[
Y[r, c] = exp(X[r, c] - max_c X[r, :]) / sum_c exp(X[r, c] - max) for a rows x cols
fp32 matrix, row-major, on an NVIDIA GPU. Y is output only: every element must be
written. Signature:
  extern "C" __global__ void softmax(int rows, int cols, const float *X, float *Y)
cols need not be a multiple of anything (one config has 1000 columns).
Launch: grid = rows, block = BLOCK threads (one CTA per row).]],
  backend = "cuda",
  kernel = "kernels/cuda/softmax.cu",
  entry = "softmax",
  reference = {
    source = "kernels/cuda/softmax_ref.cu", entry = "softmax_ref",
    grid = function(c) return (c.rows + 127) // 128 end,
    block = 128,
  },
  grid = function(c) return c.rows end,
  block = function(c, k) return k.BLOCK end,
  args = {
    { name = "rows", kind = "scalar", type = "i32" },
    { name = "cols", kind = "scalar", type = "i32" },
    { name = "X", kind = "in", type = "f32", range = { -8, 8 },
      length = function(c) return c.rows * c.cols end },
    { name = "Y", kind = "out", type = "f32", length = function(c) return c.rows * c.cols end },
  },
  configs = {
    { name = "4096x1024", rows = 4096, cols = 1024 },
    { name = "1024x8192", rows = 1024, cols = 8192 },
    { name = "8192x1000", rows = 8192, cols = 1000 },
  },
  -- Probabilities are <= 1; exp and the sum in any order stay within ~1e-6
  -- relative; a wrong max or a missing term is off by far more.
  tolerance = { atol = 1e-6, rtol = 1e-4 },
  bytes = function(c) return 8 * c.rows * c.cols end,
  timeout = 60,
}
