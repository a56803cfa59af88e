-- assemble: the fastest knob set of every knob group among several parents.
--
-- Where the evaluator's configs name the knobs their time depends on
-- (configs[i].knobs, e.g. "LG_*" for a kernel that dispatches its large
-- shapes to a knob set of their own), each group is a separate problem that
-- every evaluation measures at once.  The child takes the source and every
-- knob of the first parent (the base: the strategy's best), then, group by
-- group, the group's knobs from the parent fastest on that group's configs
-- (the geometric mean of its median times; knob_lib.slowdown).  So a family
-- improved in a child that lost overall is not lost with it.
--
-- Only parents with the base's source take part (their knobs mean the same
-- thing), and a group only moves to a parent that measured every config of
-- it correctly.  A knob in no group or in several stays the base's.  Without
-- groups, or when no group is faster elsewhere, there is no child (the
-- strategy breeds as usual).
--
-- Parents in the lineage: the base ("base") and, for each group taken
-- elsewhere, that parent with the group's patterns as its role ("LG_*").
--
-- No options.

local avo = require "avo"
local knob_lib = require "operators.lib.knobs"

local M = {}
M.name = "assemble"

-- The parent among `parents` (same source as base) fastest on `configs`,
-- and how much faster than the base; nil when none beats it.
local function fastest(base, parents, configs)
  local best, best_ratio = nil, 1
  for _, p in ipairs(parents) do
    if p ~= base and p.source == base.source then
      -- slowdown(base, p) > 1: the base is slower, p faster.
      local ratio = knob_lib.slowdown(base, p, configs)
      if ratio and ratio > best_ratio then best, best_ratio = p, ratio end
    end
  end
  return best, best_ratio
end

---@param ctx avo.OperatorContext
---@param parents avo.Record[]
---@return avo.Candidate? child
---@return string? why_not
function M.apply(ctx, parents)
  local base = parents[1]
  if base == nil or #parents < 2 then return nil, "needs a base and other parents" end
  local groups = knob_lib.groups(ctx.ev)
  if not groups then return nil, "the evaluator's configs name no knob groups" end

  local domain = avo.knobs(base.source)
  local knobs = knob_lib.inherit(domain, { base.knobs or {} })
  local lineage = { { id = base.id, role = "base" } }
  local notes = {}
  for i, g in ipairs(groups) do
    local donor, ratio = fastest(base, parents, g.configs)
    if donor then
      local moved = {}
      for _, knob in ipairs(domain) do
        if knob_lib.group_of(groups, knob.name) == i then
          local at = knob_lib.index_of(knob.values, (donor.knobs or {})[knob.name])
          if at and knob.values[at] ~= knobs[knob.name] then
            knobs[knob.name] = knob.values[at]
            moved[#moved + 1] = knob.name
          end
        end
      end
      if #moved > 0 then
        local role = table.concat(g.patterns, " ")
        lineage[#lineage + 1] = { id = donor.id, role = role }
        notes[#notes + 1] = ("%s from #%s (%.3gx faster on %s)"):format(role,
          tostring(donor.id), ratio, table.concat(g.configs, ", "))
      end
    end
  end
  if #notes == 0 then return nil, "no group is faster in another parent" end

  return {
    source = base.source,
    knobs = knobs,
    operator = M.name,
    parents = lineage,
    note = ("base #%s; %s"):format(tostring(base.id), table.concat(notes, "; ")),
    generation = ctx.generation,
  }
end

return M
