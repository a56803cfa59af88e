-- GEMM on the GPU's tensor cores, bf16 inputs: C[M,N] = A[M,K] * B[K,N], fp32 sums and output.
-- Configs, reference and tolerance: gemm_common.lua (as gemm_bf16); seed: gemm_tc.lua.
return require "evaluators.cuda.gemm_common" {
  name = "gemm_bf16_tc", type = "bf16", c_type = "__nv_bfloat16", bytes = 2,
  seed = require "evaluators.cuda.gemm_tc",
}
