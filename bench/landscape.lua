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

local function value(x, i) return x[i] or 0 end

local function score(x)
  local s = 1
  for i = 1, N do
    s = s + contribution(i, value(x, i), value(x, i + 1), value(x, i + 2))
  end
  return s
end

-- The best score, by dynamic programming along the chain: F[a][b] is the
-- best sum of the contributions of knobs i..N given x_i = a, x_{i+1} = b;
-- positions past N hold 0.
local function optimum()
  local function domain(j) return j <= N and V - 1 or 0 end
  local F = { [0] = { [0] = 0 } } -- F_{N+1}
  for i = N, 1, -1 do
    local G = {}
    for a = 0, domain(i) do
      G[a] = {}
      for b = 0, domain(i + 1) do
        local top = -math.huge
        for c = 0, domain(i + 2) do
          top = math.max(top, contribution(i, a, b, c) + F[b][c])
        end
        G[a][b] = top
      end
    end
    F = G
  end
  local top = -math.huge
  for a = 0, V - 1 do
    for b = 0, V - 1 do top = math.max(top, F[a][b]) end
  end
  return 1 + top
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
