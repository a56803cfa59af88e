-- Shared by the tiled GEMM evaluators (gemm_f32, gemm_bf16, gemm_f16): one
-- seed kernel compiled for the input element type, fp32 sums and output.
--
--   return require "evaluators.cuda.gemm_common" {
--     name = "gemm_bf16", type = "bf16", c_type = "__nv_bfloat16", bytes = 2 }
--
-- `type` is the evaluator element type of A and B, `c_type` its CUDA name
-- (the kernel's IN_T), `bytes` its size.  `seed` (optional) replaces the
-- seed kernel and its launch: { kernel =, block =, shared_bytes =, launch = }
-- (`launch` is the description's text about them); by default:
-- Seed: kernels/cuda/gemm.cu (shared-memory tiles, register tiles; knobs BM BN BK TM TN UNROLL).
-- gemm_bf16_tc/gemm_f16_tc pass kernels/cuda/gemm_wmma.cu (tensor cores).

local TYPE_NAMES = { f32 = "fp32", bf16 = "bf16", f16 = "fp16" }

-- The SIMT seed: one thread per TM x TN register tile.
local SIMT_SEED = {
  kernel = "kernels/cuda/gemm.cu",
  block = function(c, k) return { k.BN // k.TN, k.BM // k.TM } end,
  launch = [[
Launch: grid = (ceil(N/BN), ceil(M/BM)), block =
(BN/TN, BM/TM); more than 1024 threads per block is invalid.]],
}

-- The evaluator table for `spec` (name, type, c_type, bytes).
return function(spec)
  local type_name, in_bytes = TYPE_NAMES[spec.type], spec.bytes
  local seed = spec.seed or SIMT_SEED
  return {
    name = spec.name,
    description = ([[
C[M,N] = A[M,K] * B[K,N] on an NVIDIA GPU. A and B are dense row-major %s
(%s), C is dense row-major fp32 and is output only: every element must be
written. Products are accumulated in fp32. Signature:
  extern "C" __global__ void gemm(int M, int N, int K, const %s *A,
                                  const %s *B, float *C)
M, N, K are arbitrary positive sizes (one config is 1000x777x513), so tiles
need bounds checks. %s]]):format(spec.c_type, type_name, spec.c_type, spec.c_type, seed.launch),
    backend = "cuda",
    kernel = seed.kernel,
    entry = "gemm",
    nvrtc_options = { "-DIN_T=" .. spec.c_type },
    reference = {
      source = "kernels/cuda/gemm_ref.cu", entry = "gemm_ref",
      grid = function(c) return { (c.N + 15) // 16, (c.M + 15) // 16 } end,
      block = { 16, 16 },
    },
    grid = function(c, k) return { (c.N + k.BN - 1) // k.BN, (c.M + k.BM - 1) // k.BM } end,
    block = seed.block,
    shared_bytes = seed.shared_bytes,
    args = {
      { name = "M", kind = "scalar", type = "i32" },
      { name = "N", kind = "scalar", type = "i32" },
      { name = "K", kind = "scalar", type = "i32" },
      { name = "A", kind = "in", type = spec.type, length = function(c) return c.M * c.K end },
      { name = "B", kind = "in", type = spec.type, length = function(c) return c.K * c.N end },
      { name = "C", kind = "out", type = "f32", length = function(c) return c.M * c.N end },
    },
    configs = {
      { name = "512", M = 512, N = 512, K = 512 },
      { name = "1024", M = 1024, N = 1024, K = 1024 },
      { name = "2048x1024x4096", M = 2048, N = 1024, K = 4096 },
      { name = "odd-1000x777x513", M = 1000, N = 777, K = 513 },
    },
    -- Inputs uniform in [-1, 1] (exact in every input type), K <= 4096, fp32
    -- sums in any order: |error| ~ sqrt(K) * 6e-8 * |terms| ~ 1e-5 typically,
    -- < 1e-3 always; one dropped product (~0.25) fails at once.
    tolerance = { atol = 2e-3, rtol = 2e-3 },
    -- cuBLASLt, timed in the same run by the same harness (docs/evaluators.md).
    baselines = { "cublas" },
    flops = function(c) return 2 * c.M * c.N * c.K end,
    bytes = function(c) return in_bytes * (c.M * c.K + c.K * c.N) + 4 * c.M * c.N end,
    timeout = 120,
  }
end
