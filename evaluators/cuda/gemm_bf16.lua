-- Tiled GEMM on the GPU, bf16 inputs: C[M,N] = A[M,K] * B[K,N], fp32 sums and output.
-- Kernel, reference, launch and configs: gemm_common.lua.
return require "evaluators.cuda.gemm_common" {
  name = "gemm_bf16", type = "bf16", c_type = "__nv_bfloat16", bytes = 2,
}
