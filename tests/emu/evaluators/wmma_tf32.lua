-- tests/emu/kernels/wmma_tf32.cu judged by the shipped f32 GEMM evaluator's
-- reference; tf32 keeps 10 mantissa bits of each input, hence the tolerance.
local ev = {}
local base = require("evaluators.cuda.gemm_common") {
  name = "wmma_tf32", type = "f32", c_type = "float", bytes = 4,
}
for k, v in pairs(base) do ev[k] = v end
ev.kernel = "tests/emu/kernels/wmma_tf32.cu"
ev.grid = function(c) return { c.N // 16, c.M // 16 } end
ev.block = 32
ev.configs = { { name = "32x48x64", M = 32, N = 48, K = 64 } }
ev.tolerance = { atol = 2e-2, rtol = 1e-2 }
ev.timing = { min_samples = 1, max_samples = 2, max_seconds = 0.2 }
return ev
