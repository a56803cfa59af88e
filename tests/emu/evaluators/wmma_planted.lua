-- The planted WMMA mistakes of tests/emu/kernels/wmma_planted.cu, judged by
-- the shipped f16 GEMM evaluator's reference; one warp per 16x16 tile, so the
-- sizes are multiples of 16.
local ev = {}
local base = require("evaluators.cuda.gemm_common") {
  name = "wmma_planted", type = "f16", c_type = "__half", bytes = 2,
}
for k, v in pairs(base) do ev[k] = v end
ev.kernel = "tests/emu/kernels/wmma_planted.cu"
ev.grid = function(c) return { c.N // 16, c.M // 16 } end
ev.block = 32
ev.configs = { { name = "32x48x64", M = 32, N = 48, K = 64 } }
ev.timing = { min_samples = 1, max_samples = 2, max_seconds = 0.2 }
return ev
