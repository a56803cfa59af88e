-- The tensor-core seed of the attention evaluators (attention_mha_tc,
-- attention_gqa_tc, tests/emu's attention_small_tc), passed to
-- attention_common.lua as `seed`: kernels/cuda/attention_wmma.cu,
-- FlashAttention-2 style with WMMA for Q K^T and P V; knobs BLOCK_M BLOCK_N
-- WARPS STAGES.

local D = 128

-- Rows of the CTA's query tile per warp; an error (the candidate is
-- `invalid`) unless it is a positive multiple of 16 (one WMMA fragment).
local function rows_per_warp(k)
  local rows = k.BLOCK_M // k.WARPS
  if k.BLOCK_M % k.WARPS ~= 0 or rows % 16 ~= 0 or rows == 0 or k.BLOCK_N % 16 ~= 0 then
    error(("BLOCK_M / WARPS = %d / %d and BLOCK_N = %d must be positive multiples of 16")
      :format(k.BLOCK_M, k.WARPS, k.BLOCK_N), 0)
  end
  return rows
end

return {
  kernel = "kernels/cuda/attention_wmma.cu",
  block = function(c, k)
    rows_per_warp(k)
    return 32 * k.WARPS
  end,
  -- Q [BLOCK_M][D+8] bf16, STAGES x K and V [BLOCK_N][D+8] bf16, S
  -- [BLOCK_M][BLOCK_N+4] fp32, P hi and lo [BLOCK_M][BLOCK_N+8] bf16, 3 fp32
  -- per row.
  shared_bytes = function(c, k)
    rows_per_warp(k)
    local m, n = k.BLOCK_M, k.BLOCK_N
    return 2 * m * (D + 8) + k.STAGES * 4 * n * (D + 8) + 4 * m * (n + 4) + 4 * m * (n + 8) + 12 * m
  end,
  launch = [[
Tensor cores: mma.h (nvcuda::wmma) and cuda_pipeline.h (cp.async) may be
included. Launch: grid = (ceil(S/BLOCK_M), B*Hq), block = WARPS*32 threads,
dynamic shared memory 2*BLOCK_M*136 + STAGES*4*BLOCK_N*136 +
4*BLOCK_M*(BLOCK_N+4) + 4*BLOCK_M*(BLOCK_N+8) + 12*BLOCK_M bytes (the opt-in
above 48 KiB is automatic); BLOCK_M/WARPS not a multiple of 16 or more shared
memory than the GPU has is invalid.]],
}
