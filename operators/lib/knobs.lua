-- Knob helpers shared by the operators: matching a parent's knob values
-- against the domain a kernel declares (`// avo:param NAME v1 v2 ...`).
--
--   local knobs = require "operators.lib.knobs"

local M = {}

-- Position of `value` in `values`, or nil. Compared as strings because a
-- record read back from the archive may carry "32" where the parser gave 32.
function M.index_of(values, value)
  if value == nil then return nil end
  local wanted = tostring(value)
  for i, v in ipairs(values) do
    if tostring(v) == wanted then return i end
  end
  return nil
end

-- Knob values for a child over `domain` (a knob list, avo.knobs): each knob
-- takes the value of the first table in `from` (parents' knob values, in
-- priority order) that holds one of its domain's values, else its first
-- value (the seed's, which the evaluator compiles by default).  Returns the
-- values by name and their positions by domain index.
function M.inherit(domain, from)
  local values, positions = {}, {}
  for k, knob in ipairs(domain) do
    local i
    for _, parent_knobs in ipairs(from) do
      i = M.index_of(knob.values, parent_knobs[knob.name])
      if i then break end
    end
    i = i or 1
    values[knob.name] = knob.values[i]
    positions[k] = i
  end
  return values, positions
end

return M
