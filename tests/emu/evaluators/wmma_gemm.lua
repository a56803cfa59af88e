-- The WMMA GEMM of the emulator's tests (tests/emu/kernels/wmma_gemm.cu and
-- the planted kernels beside it), judged by the shipped GEMM evaluator's
-- reference (kernels/cuda/gemm_ref.cu: no tensor cores):
--
--   return require "tests.emu.evaluators.wmma_gemm" ("f16")
--
-- One warp per 32x32 tile of C; 160x160 has 25 tiles, so VARIANT 24 runs
-- each of the kernel's 24 WMMA combinations at least once.  The tolerance
-- admits __half accumulators; a fragment element in the wrong place is off
-- by O(1).
local SPECS = {
  bf16 = { name = "wmma_gemm_bf16", type = "bf16", c_type = "__nv_bfloat16", bytes = 2 },
  f16 = { name = "wmma_gemm_f16", type = "f16", c_type = "__half", bytes = 2 },
}
return function(type)
  local spec = SPECS[type]
  local ev = {}
  for k, v in pairs(require("evaluators.cuda.gemm_common")(spec)) do ev[k] = v end
  ev.kernel = "tests/emu/kernels/wmma_gemm.cu"
  ev.grid = function(c) return { (c.N + 31) // 32, (c.M + 31) // 32 } end
  ev.block = 32
  ev.configs = {
    { name = "160x160x48", M = 160, N = 160, K = 48 },
    { name = "odd-70x100x37", M = 70, N = 100, K = 37 },
  }
  ev.tolerance = { atol = 2e-2, rtol = 1e-2 }
  ev.timing = { min_samples = 1, max_samples = 2, max_seconds = 0.2 }
  return ev
end
