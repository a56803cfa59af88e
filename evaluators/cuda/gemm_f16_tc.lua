-- GEMM on the GPU's tensor cores, fp16 inputs: C[M,N] = A[M,K] * B[K,N], fp32 sums and output.
-- Configs, reference and tolerance: gemm_common.lua (as gemm_f16); seed: gemm_tc.lua.
return require "evaluators.cuda.gemm_common" {
  name = "gemm_f16_tc", type = "f16", c_type = "__half", bytes = 2,
  seed = require "evaluators.cuda.gemm_tc",
}
