-- Knob helpers shared by the operators: matching a parent's knob values
-- against the domain a kernel declares (`// avo:param NAME v1 v2 ...`).
--
--   local knobs = require "operators.lib.knobs"

local avo_knobs = require "avo.knobs"

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

-- The positions of `values` (a knob's domain) in the order the knob is
-- ordered by, and each position's rank in it: numeric order when every
-- value is a number, else the order written.  A domain lists the seed's
-- value first (`KC 256 64 128 ... 1024`), so the written order of numbers
-- is not their order: by it 256 and 64 would be neighbours, 256 and 320
-- four steps apart.
function M.order(values)
  local order, numeric = {}, true
  for i, v in ipairs(values) do
    order[i] = i
    numeric = numeric and type(v) == "number"
  end
  if numeric then
    table.sort(order, function(a, b)
      if values[a] ~= values[b] then return values[a] < values[b] end
      return a < b
    end)
  end
  local rank = {}
  for r, i in ipairs(order) do rank[i] = r end
  return order, rank
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

-- The knob groups of evaluator `ev`: configs that declare the same
-- `knobs` (evaluator field configs[i].knobs: the knobs their time depends
-- on) form one group, { patterns =, configs = { names } }.  nil when no
-- config declares any.
function M.groups(ev)
  local groups, by_text = {}, {}
  for _, c in ipairs(ev and ev.configs or {}) do
    if type(c.knobs) == "table" and #c.knobs > 0 then
      local text = table.concat(c.knobs, " ")
      local g = by_text[text]
      if not g then
        g = { patterns = c.knobs, configs = {} }
        by_text[text] = g
        groups[#groups + 1] = g
      end
      g.configs[#g.configs + 1] = c.name
    end
  end
  return #groups > 0 and groups or nil
end

-- Index in `groups` of the one group whose patterns name knob `name`, or
-- nil when none does or several do (a knob shared by groups belongs to
-- none of them).
function M.group_of(groups, name)
  local found
  for i, g in ipairs(groups) do
    for _, pattern in ipairs(g.patterns) do
      if avo_knobs.matches(pattern, name) then
        if found then return nil end
        found = i
        break
      end
    end
  end
  return found
end

-- The geometric mean of `record`'s median times on the configs named in
-- `names`, or nil unless it measured every one of them correctly.  Where
-- the judge timed a yardstick beside it (timing.yardstick), a config's time
-- is in the yardstick's units (1 / vs_yardstick: its time over the seed's
-- in the same samples), so records measured at different moments compare
-- by what the moment did to neither.
function M.group_time(record, names)
  local times = {}
  for _, c in ipairs(record.configs or {}) do
    if c.correct and type(c.vs_yardstick) == "number" and c.vs_yardstick > 0 then
      times[c.name] = 1 / c.vs_yardstick
    elseif c.correct and type(c.median_s) == "number" and c.median_s > 0 then
      times[c.name] = c.median_s
    end
  end
  local sum = 0
  for _, name in ipairs(names) do
    if not times[name] then return nil end
    sum = sum + math.log(times[name])
  end
  return math.exp(sum / #names)
end

-- How much slower `a` is than `b` on the configs named in `names`: the
-- geometric mean of a's median time over b's, or nil unless both measured
-- every one of them correctly.
function M.slowdown(a, b, names)
  local ta, tb = M.group_time(a, names), M.group_time(b, names)
  return ta and tb and ta / tb or nil
end

return M
