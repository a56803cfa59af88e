-- Row softmax on the CPU: a memory- and exp-bound workload. The seed is the
-- textbook three-pass loop calling libm expf twice per element (~0.4 GB/s on
-- a 2-core Sapphire Rapids VM); its knobs reach ~9 GB/s.
return {
  name = "softmax",
  description = [[
Row softmax in fp32: for each row r of the row-major [rows, cols] matrix X,
Y[r,j] = exp(X[r,j] - m) / sum_j' exp(X[r,j'] - m), with m = max_j X[r,j].
X[r*cols + j], Y[r*cols + j], no padding; Y is an output only and every
element must be written. Signature:
  void softmax(int32_t rows, int32_t cols, const float *X, float *Y)
Inputs are uniform in [-100, 100], so skipping the max subtraction overflows
exp and fails; outputs far below the row max underflow to (near) 0. cols is
arbitrary (777 in one config), so vectorised or unrolled loops need remainder
code. Compiled with cc -O3 -march=native (x86-64, AVX2/AVX-512, GCC 12) and
-lm, no -ffast-math: libm expf is a scalar call and float reductions are not
reordered unless the code does it. Single thread.
Knobs of the seed kernel:
  ALGO  0 = three passes, exp computed twice; 1 = three passes, exp stored in Y
        then scaled; 2 = two passes with an online (rescaled) running max/sum.
  EXP   0 = libm expf; 1 = inline polynomial exp (vectorisable, ~2 ulp).
  ACC   independent max/sum accumulators per row (1 = serial reduction).
  NORM  0 = divide each output by the sum; 1 = multiply by 1/sum.]],
  backend = "cpu",
  kernel = "kernels/cpu/softmax.c",
  entry = "softmax",
  reference = { source = "kernels/cpu/softmax_ref.c", entry = "softmax_ref" },
  args = {
    { name = "rows", kind = "scalar", type = "i32" },
    { name = "cols", kind = "scalar", type = "i32" },
    { name = "X", kind = "in", type = "f32", range = { -100, 100 },
      length = function(c) return c.rows * c.cols end },
    { name = "Y", kind = "out", type = "f32", length = function(c) return c.rows * c.cols end },
  },
  configs = {
    { name = "256x1024", rows = 256, cols = 1024 },
    { name = "odd-1000x777", rows = 1000, cols = 777 },
    { name = "64x4096", rows = 64, cols = 4096 },
    -- 16 MiB in + 16 MiB out: does not fit in cache, so bandwidth matters.
    { name = "2048x2048", rows = 2048, cols = 2048 },
  },
  -- Two shapes per candidate that no kernel can special-case, verified only.
  check_configs = function(rng)
    return { { rows = rng:int(1, 40), cols = rng:int(1, 900) },
             { rows = rng:int(1, 8), cols = rng:int(1, 5000) } }
  end,
  -- Outputs lie in [0, 1]. An fp32 exp is within a few ulp (~2e-7 relative)
  -- and an fp32 sum of <= 4096 positive terms drifts ~sqrt(n)*u ~ 4e-6 relative
  -- (worst case n*u ~ 2.4e-4, never approached by random data); measured max
  -- error over every knob combination is 1.5e-7 absolute. rtol 1e-4 leaves
  -- ~25x headroom on the large outputs; atol 1e-6 admits flushing outputs
  -- below ~1e-38 to 0 and rounding tiny ones, while a wrong max, a dropped
  -- remainder element near the row max, or an unnormalised row fails.
  tolerance = { atol = 1e-6, rtol = 1e-4 },
  -- libm for expf; --no-as-needed records it whatever the flag order is on
  -- the compile line (with Debian's default --as-needed, a plain -lm placed
  -- before the source file is silently dropped).
  cflags = { "-Wl,--no-as-needed", "-lm" },
  bytes = function(c) return 8 * c.rows * c.cols end,
}
