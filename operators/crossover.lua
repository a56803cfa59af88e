-- crossover: combine two parents, "ours" (first) and "theirs" (second).
--
-- Source: when the parents' sources differ, they are merged three-way over
-- their nearest common ancestor, the way git merges two branches. A conflict
-- is not resolved by guessing; the child keeps the source of the cleaner
-- parent (higher score, ties to the lower id) and the note says so.
--
-- Knobs: uniform crossover. Each knob comes from either parent with
-- probability 1/2. The domain is re-parsed from the child's source, so a knob
-- the merged source no longer declares is dropped and a value outside its
-- domain is never passed on.
--
-- Knob groups: where the evaluator's configs say which knobs their time
-- depends on (configs[i].knobs, e.g. "LG_*" for a kernel that dispatches
-- the large shapes to a knob set of their own), the knobs of each group come
-- together from the parent that is faster on that group's configs (the
-- geometric mean of its median times), so a child assembles the best knob
-- set per shape family its parents have.  A knob in no group or in several,
-- or a group a parent has no correct time for, is crossed uniformly.
--
-- No options.

local avo = require "avo"
local knob_lib = require "operators.lib.knobs"
local index_of = knob_lib.index_of

local M = {}
M.name = "crossover"

-- The parent the child falls back to: higher score, ties to the lower id.
local function cleaner(a, b)
  local sa, sb = a.score or 0, b.score or 0
  if sa ~= sb then return sa > sb and a or b end
  if a.id ~= nil and b.id ~= nil and b.id < a.id then return b end
  return a
end

local function ref(record)
  return "#" .. tostring(record.id)
end

-- Returns the child's source and a note on how it was made (nil when the
-- parents share their source).
local function cross_sources(a, b)
  if a.source == b.source then return a.source, nil end

  local base_id = avo.lineage.common_ancestor(a.id, b.id)
  local base = base_id and avo.lineage.get(base_id)
  if not base then
    local keep = cleaner(a, b)
    return keep.source, "no common ancestor; kept source of " .. ref(keep)
  end

  local merged, n_conflicts = avo.merge3(base.source, a.source, b.source)
  if n_conflicts == 0 then
    return merged, string.format("merged sources of %s and %s over #%s",
      ref(a), ref(b), tostring(base_id))
  end
  local keep = cleaner(a, b)
  return keep.source, string.format("merge conflict (%d hunks) over #%s; kept source of %s",
    n_conflicts, tostring(base_id), ref(keep))
end

-- For each of the evaluator's knob groups, which parent its knobs come
-- from ("a" or "b"; nil: crossed uniformly), and a note naming the groups
-- taken from b.
local function group_parents(ev, a, b)
  local groups = knob_lib.groups(ev)
  if not groups then return nil, {} end
  local take, notes = {}, {}
  for i, g in ipairs(groups) do
    local slower = knob_lib.slowdown(a, b, g.configs)
    if slower and slower ~= 1 then
      take[i] = slower > 1 and "b" or "a"
      if take[i] == "b" then
        notes[#notes + 1] = ("%s (%.3gx faster on %s)"):format(table.concat(g.patterns, " "),
          slower, table.concat(g.configs, ", "))
      end
    end
  end
  return { groups = groups, take = take }, notes
end

-- Crossover of knob values over the child's domain: a grouped knob from
-- the parent its group takes (`by_group`), any other uniformly.  Returns
-- the knobs and the names of knobs taken from `b` where the parents
-- disagreed.
local function cross_knobs(rng, domain, a, b, by_group)
  local knobs, from_b = {}, {}
  local ka, kb = a.knobs or {}, b.knobs or {}
  for _, knob in ipairs(domain) do
    local ia = index_of(knob.values, ka[knob.name])
    local ib = index_of(knob.values, kb[knob.name])
    local g = by_group and knob_lib.group_of(by_group.groups, knob.name)
    local side = g and by_group.take[g]
    local i
    if ia and ib and ia ~= ib then
      if side == "b" or (side == nil and rng:chance(0.5)) then
        i = ib
        from_b[#from_b + 1] = knob.name
      else
        i = ia
      end
    else
      -- One parent (or neither) has a valid value; neither leaves the knob at
      -- its first value, the one the evaluator compiles by default.
      i = ia or ib or 1
    end
    knobs[knob.name] = knob.values[i]
  end
  return knobs, from_b
end

---@param ctx avo.OperatorContext
---@param parents avo.Record[]
---@return avo.Candidate? child
---@return string? why_not
function M.apply(ctx, parents)
  local a, b = parents[1], parents[2]
  if a == nil or b == nil then return nil, "needs two parents" end

  local source, source_note = cross_sources(a, b)
  local by_group, group_notes = group_parents(ctx.ev, a, b)
  local knobs, from_b = cross_knobs(ctx.rng, avo.knobs(source), a, b, by_group)

  local notes = { source_note }
  if #group_notes > 0 then
    notes[#notes + 1] = ("from %s: %s"):format(ref(b), table.concat(group_notes, "; "))
  end
  if #from_b > 0 then
    notes[#notes + 1] = string.format("knobs %s from %s, rest from %s",
      table.concat(from_b, ", "), ref(b), ref(a))
  else
    notes[#notes + 1] = "knobs from " .. ref(a)
  end

  return {
    source = source,
    knobs = knobs,
    operator = M.name,
    parents = { { id = a.id, role = "ours" }, { id = b.id, role = "theirs" } },
    note = table.concat(notes, "; "),
    generation = ctx.generation,
  }
end

return M
