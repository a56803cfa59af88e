-- The tensor-core seed of the GEMM evaluators (gemm_bf16_tc, gemm_f16_tc),
-- passed to gemm_common.lua as `seed`: kernels/cuda/gemm_wmma.cu, WMMA
-- m16n16k16 with fp32 accumulation, knobs BM BN BK (CTA tile), WM WN (warp
-- tile) and STAGES (cp.async pipeline depth).

-- Warps of a CTA; an error (the candidate is `invalid`) when the warp tile
-- does not divide the CTA tile into 16 x 16 fragments.
local function warps(k)
  if k.WM % 16 ~= 0 or k.WN % 16 ~= 0 or k.BK % 16 ~= 0 then
    error(("WM = %d, WN = %d and BK = %d must be multiples of 16"):format(k.WM, k.WN, k.BK), 0)
  end
  if k.BM % k.WM ~= 0 or k.BN % k.WN ~= 0 then
    error(("the warp tile %dx%d does not divide the CTA tile %dx%d"):format(k.WM, k.WN, k.BM, k.BN), 0)
  end
  return (k.BM // k.WM) * (k.BN // k.WN)
end

return {
  kernel = "kernels/cuda/gemm_wmma.cu",
  block = function(c, k) return 32 * warps(k) end,
  -- STAGES buffers of A [BM][BK+8] and B [BK][BN+8] (2-byte elements), then
  -- a 16 x 16 fp32 staging area per warp for the epilogue.
  shared_bytes = function(c, k)
    return k.STAGES * (k.BM * (k.BK + 8) + k.BK * (k.BN + 8)) * 2 + warps(k) * 1024
  end,
  launch = [[
Tensor cores: mma.h (nvcuda::wmma) and cuda_pipeline.h (cp.async) may be
included. Launch: grid = (ceil(N/BN), ceil(M/BM)), block = (BM/WM)*(BN/WN)*32
threads, dynamic shared memory STAGES*(BM*(BK+8) + BK*(BN+8))*2 +
(BM/WM)*(BN/WN)*1024 bytes (the opt-in above 48 KiB is automatic); a warp
tile that does not divide the CTA tile, more than 1024 threads or more shared
memory than the GPU has is invalid.]],
}
