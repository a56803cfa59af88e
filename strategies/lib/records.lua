-- Ranking and identity of records and candidates, shared by the strategies.
--
--   local records = require "strategies.lib.records"

local avo = require "avo"

local M = {}

-- The evaluator's seed kernel as a generation-0 candidate.
function M.seed_candidate(ev)
  local seed_candidate = ev:seed()
  seed_candidate.generation = seed_candidate.generation or 0
  return seed_candidate
end

-- Evaluate `ev`'s seed kernel, the first thing a strategy does: its record,
-- or nil when the budget was spent before it.  `evaluate(candidates)`
-- (optional; default avo.evaluate_all with `ev`) is a strategy's own, for
-- one that files every record it gets.
function M.evaluate_seed(ev, evaluate)
  local list = { M.seed_candidate(ev) }
  local seed
  if evaluate then seed = evaluate(list)[1] else seed = avo.evaluate_all(ev, list)[1] end
  if seed == nil or seed.status == "skipped" then return nil end
  return seed
end

-- The opening of a strategy's run(opts) that searches from the seed: its
-- options (`read_options(opts)` -> cfg, or nil and a message, raised as the
-- caller's usage error), its evaluator and the seed's record (M.evaluate_seed;
-- nil when the budget was spent before it).  Returns cfg, ev, seed.
function M.start(read_options, opts)
  local cfg, err = read_options(opts)
  if not cfg then error(err, 3) end -- blames run's caller, as run's own error(err, 2)
  local ev = avo.evaluator(cfg.evaluator)
  return cfg, ev, M.evaluate_seed(ev)
end

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
