-- The knob space of a kernel as strategies search it: the domain
-- (`// avo:param` lines) less the configurations the evaluator's optional
-- `restrictions(knobs)` rules out (docs/evaluators.md, "Knobs").  A
-- strategy asks `allows` before it proposes a candidate, so a configuration
-- that cannot compile or launch costs no evaluation.
--
--   local space = require "strategies.lib.space"
--   if space.allows(ev, child.knobs) then ... end
--   local knobs = space.sample(rng, domain, ev, function(k) return not seen[key(k)] end)

local M = {}

-- Draws before `sample` gives up: enough for spaces where 1 in 1000 of the
-- uniform draws is valid and new.
M.SAMPLE_ATTEMPTS = 20000

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

-- One uniform draw over the valid configurations of `domain` (the array of
-- avo.knobs) that `accept(knobs)` takes (nil: any), or nil when
-- SAMPLE_ATTEMPTS draws found none.  Rejection sampling, so the draw is
-- uniform over what is allowed and accepted.
function M.sample(rng, domain, ev, accept)
  for _ = 1, M.SAMPLE_ATTEMPTS do
    local knobs = {}
    for _, knob in ipairs(domain) do knobs[knob.name] = rng:choice(knob.values) end
    if M.allows(ev, knobs) and (accept == nil or accept(knobs)) then return knobs end
  end
  return nil
end

return M
