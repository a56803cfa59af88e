-- Ranking and identity of records and candidates, shared by the strategies.
--
--   local records = require "strategies.lib.records"

local M = {}

-- Higher score first, ties to the lower id, so that selection never depends
-- on table order.
function M.better(a, b)
  local sa, sb = a.score or 0, b.score or 0
  if sa ~= sb then return sa > sb end
  return (a.id or math.huge) < (b.id or math.huge)
end

-- A copy of `list`, best first.
function M.ranked(list)
  local copy = table.move(list, 1, #list, 1, {})
  table.sort(copy, M.better)
  return copy
end

-- Identity of a candidate for deduplication within a run or generation: its
-- source and its knobs in name order.
function M.candidate_key(c)
  local names = {}
  for name in pairs(c.knobs or {}) do names[#names + 1] = name end
  table.sort(names)
  local parts = { c.source or "" }
  for _, name in ipairs(names) do
    parts[#parts + 1] = name .. "=" .. tostring(c.knobs[name])
  end
  return table.concat(parts, "\0")
end

return M
