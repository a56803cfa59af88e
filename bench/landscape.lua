-- A rugged synthetic search space for comparing strategies without noise
-- (bench/landscape.sh): an NK landscape over the ten knobs of
-- bench/landscape.c (4^10 ≈ 1M points).  Knob i contributes c_i(x_i,
-- x_{i+1}, x_{i+2}), a fixed pseudo-random table in [0, 1), so every knob
-- interacts with its neighbours and no single knob dominates; the score is
-- 1 + the sum.  The test backend scores in-process: runs are exact and fast.
-- `optimum()` (dynamic programming along the chain) is the best score there
-- is; `landscape_score(x)` scores knob values x[1..10].
local N, V = 10, 4

-- Contribution of knob i with values a, b, c (0-based): a 64-bit mix of the
-- arguments, scaled to [0, 1).
local function contribution(i, a, b, c)
  local h = ((i * 64 + a * 16 + b * 4 + c) + 1) * 0x9E3779B97F4A7C15
  h = (h ~ (h >> 31)) * 0xBF58476D1CE4E5B9
  h = (h ~ (h >> 27)) * 0x94D049BB133111EB
  h = h ~ (h >> 31)
  return ((h >> 11) & ((1 << 53) - 1)) / (1 << 53)
end

local nk = dofile("bench/nk.lua")

local function score(x)
  local full = {}
  for i = 1, N do full[i] = x[i] or 0 end -- a knob not set is at its first value
  return nk.score(contribution, full)
end

local function optimum()
  local sizes = {}
  for i = 1, N do sizes[i] = V end
  return nk.optimum(contribution, sizes)
end

return {
  name = "landscape",
  description = "NK landscape (N = 10, K = 2) over ten 4-valued knobs (benchmarks only)",
  backend = "test",
  kernel = "bench/landscape.c",
  configs = { { name = "nk" } },
  test_score = function(cand)
    local x = {}
    for i = 1, N do x[i] = cand.knobs["K" .. i] end
    return score(x)
  end,
  optimum = optimum,
  landscape_score = score,
}
