-- Evaluate `count` distinct trivial candidates (one per VARIANT value) and
-- nothing else.  bench/overhead.sh runs it twice: once to fill the compile
-- cache, once to measure.
local avo = require "avo"
local args = ... or {}
local count = tonumber(args.count) or 200

local ev = avo.evaluator{
  name = "trivial", description = "y = x (engine overhead benchmark)", backend = "cpu",
  kernel = "bench/trivial.c", entry = "copy",
  reference = { source = "bench/trivial_ref.c", entry = "copy_ref" },
  args = {
    { name = "n", kind = "scalar", type = "i32" },
    { name = "x", kind = "in", type = "f32", length = function(c) return c.n end },
    { name = "y", kind = "out", type = "f32", length = function(c) return c.n end },
  },
  configs = { { name = "n64", n = 64 } },
  tolerance = { atol = 0, rtol = 0 },
  bytes = function(c) return 8 * c.n end,
  timing = { enabled = false },
}
local seed = ev:seed()
local cands = {}
for i = 1, count do
  -- Distinct sources (a comment) so no candidate is deduplicated.
  cands[i] = { source = seed.source .. "\n/* " .. i .. " */\n", knobs = seed.knobs,
               operator = "bench" }
end
local recs = avo.evaluate_all(ev, cands)
for _, r in ipairs(recs) do
  assert(r.status == "ok", r.reason)
end
