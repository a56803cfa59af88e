-- The knob space of a kernel as strategies search it: the domain
-- (`// avo:param` lines) less the configurations the evaluator's optional
-- `restrictions(knobs)` rules out (docs/evaluators.md, "Knobs").  A
-- strategy asks `allows` before it proposes a candidate, so a configuration
-- that cannot compile or launch costs no evaluation.
--
--   local space = require "strategies.lib.space"
--   if space.allows(ev, child.knobs) then ... end
--   local knobs = space.sample(rng, domain, ev, function(k) return not seen[key(k)] end)
--   local first = space.spread(rng, domain, ev, 7, accept, { seed_knobs })

local M = {}

-- Uniform draws before `sample` lists the space instead: enough for spaces
-- where 1 in 100 of the draws is valid and new.
M.SAMPLE_ATTEMPTS = 2000

-- The largest space `sample` lists; beyond it, a space whose valid new
-- configurations are too rare to draw counts as used up.
M.LIST_LIMIT = 1 << 21

-- True when the evaluator has no restrictions or they accept `knobs` (a
-- map name -> value).  An error in the restrictions function is raised
-- with the evaluator's name: it is the evaluator's bug, not the candidate's.
function M.allows(ev, knobs)
  local restrict = ev and ev.restrictions
  if restrict == nil then return true end
  local ok, verdict = pcall(restrict, knobs or {})
  if not ok then
    error(("evaluator %s: restrictions: %s"):format(tostring(ev.name), tostring(verdict)), 0)
  end
  return verdict == true
end

-- True when the evaluator restricts its knob space.
function M.restricted(ev) return ev ~= nil and ev.restrictions ~= nil end

-- Every configuration of `domain` that is allowed and accepted, in
-- mixed-radix order, or nil when the space is larger than LIST_LIMIT.
local function list(domain, ev, accept)
  local size = 1
  for _, knob in ipairs(domain) do size = size * #knob.values end
  if size > M.LIST_LIMIT then return nil end
  local found, knobs = {}, {}
  local function walk(d)
    if d > #domain then
      if M.allows(ev, knobs) and (accept == nil or accept(knobs)) then
        local copy = {}
        for k, v in pairs(knobs) do copy[k] = v end
        found[#found + 1] = copy
      end
      return
    end
    for _, v in ipairs(domain[d].values) do
      knobs[domain[d].name] = v
      walk(d + 1)
    end
  end
  walk(1)
  return found
end

-- One uniform draw over the valid configurations of `domain` (the array of
-- avo.knobs) that `accept(knobs)` takes (nil: any), or nil when there is
-- none.  Rejection sampling, and when SAMPLE_ATTEMPTS draws found none, a
-- choice from the list of them all (where the space is small enough to list),
-- so the draw is uniform over what is allowed and accepted and a nearly used
-- up space is searched to its end.
function M.sample(rng, domain, ev, accept)
  for _ = 1, M.SAMPLE_ATTEMPTS do
    local knobs = {}
    for _, knob in ipairs(domain) do knobs[knob.name] = rng:choice(knob.values) end
    if M.allows(ev, knobs) and (accept == nil or accept(knobs)) then return knobs end
  end
  local all = list(domain, ev, accept)
  if all == nil or #all == 0 then return nil end
  return all[rng:int(1, #all)]
end

-- `knobs` completed with each knob's first value (the seed's, as the
-- compiler sees a knob not set).
function M.full(domain, knobs)
  local k = {}
  for _, knob in ipairs(domain) do
    local v = (knobs or {})[knob.name]
    if v == nil then v = knob.values[1] end
    k[knob.name] = v
  end
  return k
end

-- Draws per point of `spread`: the best of this many uniform valid draws
-- (Mitchell's best-candidate algorithm) is about as even as a Latin
-- hypercube on a box, and unlike one it stays inside any restrictions.
M.SPREAD_DRAWS = 10

-- Distance of two configurations: the count of knobs whose values differ.
-- (Position differences would push every point to the ends of each knob's
-- range; counting differences spreads the values of each knob evenly, as a
-- Latin hypercube does, and suits knobs that are categories.)
local function distance(domain, a, b)
  local sum = 0
  for _, knob in ipairs(domain) do
    if a[knob.name] ~= b[knob.name] then sum = sum + 1 end
  end
  return sum
end

-- Identity of a configuration of `domain` (a knob map): its knobs' values
-- as text, in domain order.  Two maps of the domain's knobs have the same
-- key when records.candidate_key (without the source) would say so, at a
-- fraction of its cost.
function M.key(domain, knobs)
  local parts = {}
  for i, knob in ipairs(domain) do parts[i] = tostring(knobs[knob.name]) end
  return table.concat(parts, "\0")
end
local key = M.key

-- Up to `n` valid configurations of `domain` that `accept` takes (nil: any)
-- spread over the space: each is, of SPREAD_DRAWS uniform draws (M.sample),
-- the one farthest from every configuration chosen so far and from those
-- of `near` (an array of knob maps: the seed, so the sample covers what the
-- seed does not).  Fewer when the space runs out.  Reproducible from `rng`.
function M.spread(rng, domain, ev, n, accept, near)
  local points, chosen, taken = {}, {}, {}
  for _, k in ipairs(near or {}) do
    points[#points + 1] = k
    taken[key(domain, k)] = true
  end
  local function fresh(k)
    return not taken[key(domain, k)] and (accept == nil or accept(k))
  end
  for _ = 1, n do
    local best, best_d
    for _ = 1, M.SPREAD_DRAWS do
      local k = M.sample(rng, domain, ev, fresh)
      if k == nil then break end
      local d = math.huge
      for _, p in ipairs(points) do d = math.min(d, distance(domain, k, p)) end
      if best == nil or d > best_d then best, best_d = k, d end
    end
    if best == nil then break end
    points[#points + 1] = best
    chosen[#chosen + 1] = best
    taken[key(domain, best)] = true
  end
  return chosen
end

return M
