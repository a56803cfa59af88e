-- param_tweak: change one or more knobs of a single parent.
--
-- The child keeps the parent's source and moves a few knobs to other values
-- of their domains (`// avo:param NAME v1 v2 ...`). Most moves go to a
-- neighbouring value in the domain list, because domains are usually ordered
-- (tile sizes, unroll factors) and small steps climb a smooth landscape; the
-- rest jump anywhere so the search can leave a local optimum.
--
-- Options (ctx.options):
--   max_changes  integer >= 1, most knobs changed in one child (default 2)
--   local_p      number in [0, 1], probability of a neighbouring move (0.7)

local avo = require "avo"
local knob_lib = require "operators.lib.knobs"

local M = {}
M.name = "param_tweak"

local DEFAULTS = { max_changes = 2, local_p = 0.7 }

-- Returns the options with defaults filled in, or nil and a message naming
-- the bad option.
local function read_options(options)
  local max_changes = options.max_changes or DEFAULTS.max_changes
  local local_p = options.local_p or DEFAULTS.local_p
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
  return { max_changes = max_changes, local_p = local_p }
end

-- Index of a value other than `current` in a domain of `n` values (n >= 2).
local function pick_other_index(rng, n, current, local_p)
  if rng:chance(local_p) then
    if current == 1 then return 2 end
    if current == n then return n - 1 end
    return rng:chance(0.5) and current - 1 or current + 1
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
  local n_changes = ctx.rng:int(1, math.min(opts.max_changes, #tunable))
  ctx.rng:shuffle(tunable)
  local chosen = table.move(tunable, 1, n_changes, 1, {})
  table.sort(chosen) -- the note lists knobs in source order

  local changes = {}
  for _, k in ipairs(chosen) do
    local knob = domain[k]
    local from = positions[k]
    local to = pick_other_index(ctx.rng, #knob.values, from, opts.local_p)
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
