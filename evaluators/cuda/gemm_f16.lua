-- Tiled GEMM on the GPU, fp16 inputs: C[M,N] = A[M,K] * B[K,N], fp32 sums and output.
-- Kernel, reference, launch and configs: gemm_common.lua.
return require "evaluators.cuda.gemm_common" {
  name = "gemm_f16", type = "f16", c_type = "__half", bytes = 2,
}
