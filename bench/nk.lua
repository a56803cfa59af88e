-- NK landscapes along a chain, for the synthetic benchmark spaces
-- (bench/landscape.lua, bench/families.lua): knob i contributes
-- contribution(i, x_i, x_{i+1}, x_{i+2}) (value positions from 0; positions
-- past the last knob are 0), and the score is 1 + the sum.
--
--   local nk = dofile("bench/nk.lua")
--   nk.score(contribution, x)          x[1..n]: value positions
--   nk.optimum(contribution, sizes)    sizes[i]: knob i's count of values
local M = {}

function M.score(contribution, x)
  local s = 1
  for i = 1, #x do s = s + contribution(i, x[i], x[i + 1] or 0, x[i + 2] or 0) end
  return s
end

-- The best score, by dynamic programming along the chain: F[a][b] is the
-- best sum of the contributions of knobs i..n given x_i = a, x_{i+1} = b.
function M.optimum(contribution, sizes)
  local n = #sizes
  local function last(j) return j <= n and sizes[j] - 1 or 0 end
  local F = { [0] = { [0] = 0 } } -- F_{n+1}
  for i = n, 1, -1 do
    local G = {}
    for a = 0, last(i) do
      G[a] = {}
      for b = 0, last(i + 1) do
        local top = -math.huge
        for c = 0, last(i + 2) do top = math.max(top, contribution(i, a, b, c) + F[b][c]) end
        G[a][b] = top
      end
    end
    F = G
  end
  local top = -math.huge
  for a = 0, last(1) do
    for b = 0, last(2) do top = math.max(top, F[a][b]) end
  end
  return 1 + top
end

return M
