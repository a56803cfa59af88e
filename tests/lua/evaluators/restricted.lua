-- A deterministic workload whose knob space has restrictions (tests/e2e/
-- surrogate.sh): the sgemm knobs, valid when BM and BN are both 0 or both
-- set, BK <= 64 and no TILE with UNROLL 8.  A configuration outside them is
-- a compile error, so a strategy that proposes one shows in the archive.
-- AVO_TEST_TINY=1 leaves 6 valid configurations (ORDER 0..1 x UNROLL 1..4,
-- everything else at its first value); AVO_TEST_RESTRICT_ERROR=1 makes the
-- restrictions function raise.
local tiny = os.getenv("AVO_TEST_TINY") == "1"
local broken = os.getenv("AVO_TEST_RESTRICT_ERROR") == "1"

local function valid(k)
  if tiny then
    return k.ORDER ~= 2 and k.BM == 0 and k.BN == 0 and k.BK == 0 and k.UNROLL ~= 8
      and k.TILE == 0 and k.PACK == 0
  end
  return (k.BM == 0) == (k.BN == 0) and k.BK <= 64 and not (k.TILE > 0 and k.UNROLL == 8)
end

local function log2(x) return x > 0 and math.log(x, 2) or 0 end

return {
  name = "restricted",
  description = "deterministic landscape over the sgemm knobs with restrictions (tests only)",
  backend = "test",
  kernel = "kernels/cpu/sgemm.c",
  configs = { { name = "one" } },
  restrictions = function(k)
    if broken then error("planted failure") end
    return valid(k)
  end,
  test_compile = function(cand)
    if not valid(cand.knobs) then return "outside the restrictions" end
  end,
  test_score = function(cand)
    local k = cand.knobs
    -- Peaks at BM = 64, BN = 128, BK = 32, UNROLL 4, TILE 2, ORDER 1, with
    -- interactions between the tile sizes and the unroll.
    local s = 10 - (log2(k.BM) - 6) ^ 2 - (log2(k.BN) - 7) ^ 2 - 0.5 * (log2(k.BK) - 5) ^ 2
      - (log2(k.UNROLL) - 2) ^ 2 - 0.3 * (k.TILE - 2) ^ 2 + (k.ORDER == 1 and 2 or 0) + k.PACK
      + 0.1 * (log2(k.BM) - log2(k.BN)) * log2(k.UNROLL)
    return math.max(s, 0.1)
  end,
}
