-- param_tweak: change one or more knobs of a single parent.
--
-- The child keeps the parent's source and moves a few knobs to other values
-- of their domains (`// avo:param NAME v1 v2 ...`). Most moves go to a
-- neighbouring value, because tile sizes and unroll factors make a smooth
-- landscape that small steps climb; the rest jump anywhere so the search can
-- leave a local optimum. A domain of numbers is walked in numeric order, not
-- in the order written: a domain lists the seed's value first (`KC 256 64
-- 128 ... 1024`), so by position 256's only neighbour would be 64 and every
-- climb upwards would pass through the smallest values. Other domains are
-- walked in the order written.
--
-- Options (ctx.options):
--   max_changes  integer >= 1, most knobs changed in one child (default 2)
--   local_p      number in [0, 1], probability of a neighbouring move (0.7)
--   per_group    boolean (default false): where the evaluator's configs
--                name knob groups (configs[i].knobs), change 1..max_changes
--                knobs in every group, and in the knobs of no group, rather
--                than in the kernel as a whole.  Every evaluation measures
--                every group, so each child then tries a step in each shape
--                family at once (the assemble operator and group crossover
--                keep the steps that won).

local avo = require "avo"
local knob_lib = require "operators.lib.knobs"

local M = {}
M.name = "param_tweak"

local DEFAULTS = { max_changes = 2, local_p = 0.7, per_group = false }

-- Returns the options with defaults filled in, or nil and a message naming
-- the bad option.
local function read_options(options)
  local max_changes = options.max_changes or DEFAULTS.max_changes
  local local_p = options.local_p or DEFAULTS.local_p
  local per_group = options.per_group
  if per_group == nil then per_group = DEFAULTS.per_group end
  if math.type(max_changes) ~= "integer" or max_changes < 1 then
    return nil, string.format(
      "param_tweak: option 'max_changes' must be an integer >= 1, got %s",
      tostring(max_changes))
  end
  if type(local_p) ~= "number" or local_p < 0 or local_p > 1 then
    return nil, string.format(
      "param_tweak: option 'local_p' must be a number in [0, 1], got %s",
      tostring(local_p))
  end
  if type(per_group) ~= "boolean" then
    return nil, string.format(
      "param_tweak: option 'per_group' must be a boolean, got %s", tostring(per_group))
  end
  return { max_changes = max_changes, local_p = local_p, per_group = per_group }
end

-- The tunable knobs (indices into `domain`) split into the parts a child
-- changes apart: one part in all, or with `per_group` one per knob group of
-- the evaluator and one for the knobs of no group (empty parts dropped).
local function parts_of(ev, domain, tunable, per_group)
  local groups = per_group and knob_lib.groups(ev)
  if not groups then return { tunable } end
  local by_group, parts = {}, {}
  for _, k in ipairs(tunable) do
    local g = knob_lib.group_of(groups, domain[k].name) or 0
    if not by_group[g] then
      by_group[g] = {}
      parts[#parts + 1] = by_group[g]
    end
    table.insert(by_group[g], k)
  end
  return parts
end

-- Index of a value other than `current` in `values` (at least two).
local function pick_other_index(rng, values, current, local_p)
  local n = #values
  if rng:chance(local_p) then
    local order, rank = knob_lib.order(values)
    local r = rank[current]
    if r == 1 then return order[2] end
    if r == n then return order[n - 1] end
    return order[rng:chance(0.5) and r - 1 or r + 1]
  end
  -- Uniform over the n - 1 other indices: draw from 1..n-1 and step over
  -- the current one.
  local i = rng:int(1, n - 1)
  if i >= current then i = i + 1 end
  return i
end

---@param ctx avo.OperatorContext
---@param parents avo.Record[]
---@return avo.Candidate? child
---@return string? why_not
function M.apply(ctx, parents)
  local opts, err = read_options(ctx.options or {})
  if not opts then error(err, 2) end
  local parent = parents[1]
  if parent == nil then return nil, "needs a parent" end

  local domain = avo.knobs(parent.source)
  -- Only knobs with at least two values can change.
  local tunable = {}
  for k, knob in ipairs(domain) do
    if #knob.values >= 2 then tunable[#tunable + 1] = k end
  end
  if #tunable == 0 then return nil, "no knobs" end

  -- The parent's values completed from the domain: a knob the parent does
  -- not set, or sets outside its domain, starts at its first value.
  local knobs, positions = knob_lib.inherit(domain, { parent.knobs or {} })
  local chosen = {}
  for _, part in ipairs(parts_of(ctx.ev, domain, tunable, opts.per_group)) do
    local n_changes = ctx.rng:int(1, math.min(opts.max_changes, #part))
    ctx.rng:shuffle(part)
    table.move(part, 1, n_changes, #chosen + 1, chosen)
  end
  table.sort(chosen) -- the note lists knobs in source order

  local changes = {}
  for _, k in ipairs(chosen) do
    local knob = domain[k]
    local from = positions[k]
    local to = pick_other_index(ctx.rng, knob.values, from, opts.local_p)
    knobs[knob.name] = knob.values[to]
    changes[#changes + 1] = string.format("%s %s->%s", knob.name,
      tostring(knob.values[from]), tostring(knob.values[to]))
  end

  return {
    source = parent.source,
    knobs = knobs,
    operator = M.name,
    parents = { { id = parent.id, role = "parent" } },
    note = table.concat(changes, ", "),
    generation = ctx.generation,
  }
end

return M
