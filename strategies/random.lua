-- random: random sampling of the seed's knob space, the baseline any other
-- strategy has to beat.
--
--   return avo.strategy("random").run{ evaluator = "cpu/sgemm", samples = 64 }
--
-- Each sample keeps the seed's source and draws every knob uniformly from
-- its domain (stream "random"), drawing again when the evaluator's
-- restrictions rule the configuration out. Samples are evaluated in batches so that
-- `--jobs` evaluations run in parallel; a sample already drawn in this run is
-- drawn again, since the archive would only answer it with the old record.
--
-- Options:
--   evaluator  spec for avo.evaluator (required)
--   samples    integer >= 0, random samples after the seed (default 64)
--   batch      integer >= 1, samples evaluated together (default 8)

local avo = require "avo"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"
local space = require "strategies.lib.space"

local M = {}

local function bad(name, expected, got) return options.bad("random", name, expected, got) end

-- Returns the options with defaults filled in, or nil and a message naming
-- the bad option.
local function read_options(opts)
  local ok, err = options.check_common("random", opts)
  if not ok then return nil, err end
  local cfg = {
    evaluator = opts.evaluator,
    samples = opts.samples or 64,
    batch = opts.batch or 8,
  }
  if not options.is_integer_at_least(cfg.samples, 0) then
    return bad("samples", "an integer >= 0", cfg.samples)
  end
  if not options.is_integer_at_least(cfg.batch, 1) then
    return bad("batch", "an integer >= 1", cfg.batch)
  end
  return cfg
end

-- Knob values in name order, as a key for "drawn before" (every sample
-- keeps the seed's source).
local function knobs_key(knobs)
  return records.candidate_key{ knobs = knobs }
end

-- One uniform draw over the valid configurations not in `seen`
-- (strategies/lib/space.lua), or nil when the draws found none.
local function draw(rng, domain, ev, seen)
  local knobs = space.sample(rng, domain, ev, function(k) return not seen[knobs_key(k)] end)
  if knobs then seen[knobs_key(knobs)] = true end
  return knobs
end

-- Up to `n` candidates for batch `index`.
local function make_batch(state, index, n)
  local candidates = {}
  for _ = 1, n do
    local knobs = draw(state.rng, state.domain, state.ev, state.seen)
    if knobs == nil then break end
    candidates[#candidates + 1] = {
      source = state.seed.source,
      knobs = knobs,
      operator = "random",
      parents = { { id = state.seed.id, role = "parent" } },
      note = "random sample",
      generation = index,
    }
  end
  return candidates
end

---@param opts avo.StrategyOptions
---@return avo.Record? # the best record
function M.run(opts)
  local cfg, ev, seed = records.start(read_options, opts)
  if not seed then return nil end

  local domain = avo.knobs(seed.source)
  local state = {
    seed = seed,
    ev = ev,
    domain = domain,
    rng = avo.rng("random"),
    seen = { [knobs_key(seed.knobs or {})] = true },
  }
  local best = seed
  local drawn, index = 0, 0
  while drawn < cfg.samples and not avo.exhausted() do
    index = index + 1
    local candidates = make_batch(state, index, math.min(cfg.batch, cfg.samples - drawn))
    if #candidates == 0 then break end -- every point of the space was drawn
    drawn = drawn + #candidates
    for _, r in ipairs(avo.evaluate_all(ev, candidates)) do
      if r.status ~= "skipped" and records.better(r, best) then best = r end
    end
    avo.progress{ generation = index }
  end
  return best
end

return M
