-- A synthetic GEMM tuning space with the structure of real kernel spaces,
-- for comparing strategies without noise (bench/vs_kernel_tuner.sh): the
-- fourteen knobs of CLBlast's xgemm kernel (bench/gemm_space.c: tile sizes,
-- thread-block shapes, vector widths, strides, local-memory caching;
-- 1,327,104 combinations), Kernel Tuner's restrictions of its GEMM example
-- (divisibility of tiles by threads x vector widths, at most 1024 threads),
-- which leave 18% of them valid, and a performance model in GFLOP/s whose terms
-- interact: register tile per thread (FMAs per load, spills past 128
-- registers), occupancy from threads and local memory, vector loads that
-- need the matching stride, local-memory caching that pays off only with
-- re-use, an unrolled inner loop that costs registers — plus a fixed
-- pseudo-random +-4% per configuration, the ruggedness of real
-- measurements.  The median valid configuration scores 0.23 of the best,
-- 1% of them 0.74 or more, 17 of them 0.95 or more: good configurations are
-- a thin tail, as in measured GEMM spaces.  A configuration outside the restrictions is a compile
-- error (as the real kernel would be); `restrictions(knobs)` lets a
-- strategy skip it without spending an evaluation, as Kernel Tuner does.
local NAMES = { "MWG", "NWG", "KWG", "MDIMC", "NDIMC", "MDIMA", "NDIMB", "KWI",
                "VWM", "VWN", "STRM", "STRN", "SA", "SB" }

-- Kernel Tuner's restrictions of the CLBlast GEMM example, plus its block
-- size limit.
local function restrictions(k)
  local threads = k.MDIMC * k.NDIMC
  return k.KWG % k.KWI == 0
    and k.MWG % (k.MDIMC * k.VWM) == 0
    and k.NWG % (k.NDIMC * k.VWN) == 0
    and k.MWG % (k.MDIMA * k.VWM) == 0
    and k.NWG % (k.NDIMB * k.VWN) == 0
    and threads % k.MDIMA == 0 and threads % k.NDIMB == 0
    and k.KWG % (threads // k.MDIMA) == 0
    and k.KWG % (threads // k.NDIMB) == 0
    and threads <= 1024
end

-- A fixed pseudo-random number in [-1, 1) per configuration (splitmix64 of
-- the knob values).
local function jitter(k)
  local h = 0x9E3779B97F4A7C15
  for _, name in ipairs(NAMES) do
    h = (h ~ k[name]) * 0xBF58476D1CE4E5B9
    h = h ~ (h >> 29)
  end
  h = (h ~ (h >> 31)) * 0x94D049BB133111EB
  h = h ~ (h >> 32)
  return ((h >> 11) & ((1 << 53) - 1)) / (1 << 52) - 1
end

local function log2(x) return math.log(x, 2) end

-- GFLOP/s of a valid configuration (a model, not a measurement).
local function gflops(k)
  local peak = 2000
  local threads = k.MDIMC * k.NDIMC
  local mwi, nwi = k.MWG // k.MDIMC, k.NWG // k.NDIMC -- register tile per thread
  -- FMAs per value loaded into registers: the register tile's intensity.
  local intensity = (mwi * nwi) / (mwi + nwi)
  local compute = intensity / (intensity + 1.5)
  -- Registers: the C tile, the A and B fragments (times the unroll), and
  -- addressing; past 128 the kernel spills.
  local regs = mwi * nwi + (mwi + nwi) * (k.KWI == 8 and 2 or 1) + 24
  local spill = regs > 128 and (128 / regs) ^ 2 or 1
  -- Occupancy: resident blocks per SM from threads (2048) and local memory
  -- (64 KiB), warps of 32; latency needs ~16 warps, large tiles fewer.
  local lmem = (k.SA * k.MWG + k.SB * k.NWG) * k.KWG * 4
  local blocks = 2048 // threads
  if lmem > 0 then blocks = math.min(blocks, 65536 // lmem) end
  local warps = blocks * threads / 32
  local need = math.max(4, 24 - 2 * log2(mwi * nwi))
  local occupancy = (warps / need) / (warps / need + 0.5)
  -- Global loads: vector widths help when the stride matches (STRM/STRN = 0
  -- is unit stride within a thread), and coalescing wants wide thread
  -- shapes along the loaded dimension.
  local function loads(vw, strided, dim)
    local v = strided == 0 and (1 + 0.35 * log2(vw)) or (1 + 0.1 * log2(vw)) / (1 + 0.15 * log2(vw))
    return v * math.min(1, dim / 16) ^ 0.3
  end
  local memory = (loads(k.VWM, k.STRM, k.MDIMA) * loads(k.VWN, k.STRN, k.NDIMB)) ^ 0.5 / 1.7
  -- Local-memory caching: re-use across the block's threads pays when the
  -- block tile is large against the thread tile; otherwise it is overhead.
  local function caching(s, reuse) return s == 1 and (0.8 + 0.12 * log2(reuse)) or 1 end
  local cache = caching(k.SA, k.NDIMC) * caching(k.SB, k.MDIMC)
  local per_k = (mwi + nwi) / (mwi * nwi) -- loads per FMA without caching
  local bandwidth = 0.35 / (per_k / cache) * memory
  bandwidth = bandwidth / (bandwidth + 0.4)
  -- A deeper k-tile amortizes synchronization; unrolling by 8 helps when
  -- there are registers to spare.
  local kloop = (k.KWG == 32 and 1.06 or 1) * (k.KWI == 8 and (regs <= 96 and 1.08 or 0.93) or 1)
  local efficiency = compute * spill * occupancy * bandwidth * kloop
  -- Squared: in measured GEMM spaces the median configuration runs at a
  -- quarter of the best or less.
  return peak * efficiency ^ 2 * (1 + 0.04 * jitter(k))
end

local function knobs_of(cand)
  local k = {}
  for _, name in ipairs(NAMES) do k[name] = cand.knobs[name] end
  return k
end

return {
  name = "gemm_space",
  description = "synthetic CLBlast-style GEMM tuning space with restrictions (benchmarks only)",
  backend = "test",
  kernel = "bench/gemm_space.c",
  configs = { { name = "gemm" } },
  restrictions = restrictions,
  test_compile = function(cand)
    if not restrictions(knobs_of(cand)) then return "configuration outside the restrictions" end
    return nil
  end,
  test_score = function(cand) return gflops(knobs_of(cand)) end,
  names = NAMES,
  landscape_score = gflops,
}
