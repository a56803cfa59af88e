-- Tiled GEMM on the GPU, fp32 inputs: C[M,N] = A[M,K] * B[K,N], fp32 sums and output.
-- Kernel, reference, launch and configs: gemm_common.lua.
return require "evaluators.cuda.gemm_common" {
  name = "gemm_f32", type = "f32", c_type = "float", bytes = 4,
}
