-- tests/emu/kernels/wmma_pipeline.cu (WMMA fed by a cp.async pipeline)
-- judged by the shipped GEMM evaluators' reference:
--
--   return require "tests.emu.evaluators.wmma_pipeline" ("bf16")
local SPECS = {
  bf16 = { name = "wmma_pipeline_bf16", type = "bf16", c_type = "__nv_bfloat16", bytes = 2 },
  f16 = { name = "wmma_pipeline_f16", type = "f16", c_type = "__half", bytes = 2 },
}
return function(type)
  local ev = {}
  for k, v in pairs(require("evaluators.cuda.gemm_common")(SPECS[type])) do ev[k] = v end
  ev.kernel = "tests/emu/kernels/wmma_pipeline.cu"
  ev.grid = function(c) return { c.N // 64, c.M // 64 } end
  ev.block = 128
  ev.shared_bytes = function(c, k) return k.STAGES * 9728 end
  ev.configs = {
    { name = "128x128x96", M = 128, N = 128, K = 96 },
    { name = "64x192x64", M = 64, N = 192, K = 64 },
  }
  ev.timing = { min_samples = 1, max_samples = 2, max_seconds = 0.2 }
  return ev
end
