-- Mean and deviation of a growing list of scores in constant time per
-- score, for a strategy that standardizes every observation each round
-- (the surrogate): a list summed again each round costs what the run has
-- grown to.
--
--   local moments = require "strategies.lib.moments"
--   local m = moments.new()
--   moments.add(m, 3.5); moments.add(m, false) -- false: a failed record
--   local mean, sd = moments.of(m, worst)      -- failed ones count as worst
--
-- The scored values' count, mean and sum of squared deviations are kept
-- by Welford's updates; the failed ones, all at `worst` (which may change
-- as scores come), join them when asked, by Chan's formula for two groups.

local M = {}

function M.new()
  return { n = 0, mean = 0, m2 = 0, failed = 0 }
end

-- Adds score `s`: a number, or false for a failed record.
function M.add(m, s)
  if not s then
    m.failed = m.failed + 1
    return
  end
  m.n = m.n + 1
  local d = s - m.mean
  m.mean = m.mean + d / m.n
  m.m2 = m.m2 + d * (s - m.mean)
end

-- A copy of `m`, to return to after scores added for a while.
function M.copy(m)
  return { n = m.n, mean = m.mean, m2 = m.m2, failed = m.failed }
end

-- Mean and (population) standard deviation of every score added, a failed
-- one counting as `worst`; sd 1 where there is no spread (or no score).
function M.of(m, worst)
  local n = m.n + m.failed
  if n == 0 then return 0, 1 end
  local mean = (m.n * m.mean + m.failed * worst) / n
  local var = (m.m2 + m.n * (m.mean - mean) ^ 2 + m.failed * (worst - mean) ^ 2) / n
  local sd = math.sqrt(math.max(var, 0))
  if sd == 0 then sd = 1 end
  return mean, sd
end

return M
