-- Every knob combination of a seed kernel is correct or `invalid` (a launch
-- the device refuses) on the CPU emulator — never wrong, crashed, timed out
-- or failing to compile — so a search on a GPU starts from a kernel that
-- holds in all the variants it will try.  Exits with an error naming the
-- combinations that fail.
--
--   avo run tests/emu/knob_space.lua --jobs 2 evaluator=tests/emu/evaluators/softmax.lua \
--       kernel=kernels/cuda/softmax.cu [sample=N]
--
-- sample=N evaluates N combinations drawn with the run's seed instead of all.
local avo = require "avo"
local args = ... or {}
assert(args.evaluator, "usage: evaluator=PATH [kernel=PATH] [sample=N]")
local ev = avo.evaluator(args.evaluator)
local seed = ev:seed()
local source = seed.source
if args.kernel then
  local f = assert(io.open(args.kernel, "rb"))
  source = f:read("a")
  f:close()
end

local combos = { {} }
for _, knob in ipairs(avo.knobs(source)) do
  local more = {}
  for _, partial in ipairs(combos) do
    for _, v in ipairs(knob.values) do
      local c = {}
      for k, x in pairs(partial) do c[k] = x end
      c[knob.name] = v
      more[#more + 1] = c
    end
  end
  combos = more
end
local total = #combos
local sample = tonumber(args.sample)
if sample and sample < total then
  avo.rng("sample"):shuffle(combos)
  for i = #combos, sample + 1, -1 do combos[i] = nil end
end

local cands = {}
for i, knobs in ipairs(combos) do
  cands[i] = { source = source, knobs = knobs, operator = "knob_space" }
end
local records = avo.evaluate_all(ev, cands)

local function describe(knobs)
  local names = {}
  for k in pairs(knobs) do names[#names + 1] = k end
  table.sort(names)
  for i, k in ipairs(names) do names[i] = k .. "=" .. tostring(knobs[k]) end
  return table.concat(names, " ")
end

local counts, bad = {}, {}
for i, r in ipairs(records) do
  counts[r.status] = (counts[r.status] or 0) + 1
  if r.status ~= "ok" and r.status ~= "invalid" then
    bad[#bad + 1] = ("  %s: %s — %s"):format(describe(combos[i]), r.status, tostring(r.reason))
  end
end
local parts = {}
for status, n in pairs(counts) do parts[#parts + 1] = status .. " " .. n end
table.sort(parts)
print(("knob space of %s: %d of %d combinations: %s"):format(ev.name, #combos, total,
  table.concat(parts, ", ")))
if #bad > 0 then
  error("combinations that fail:\n" .. table.concat(bad, "\n"), 0)
end
assert((counts.ok or 0) > 0, "no combination is correct")
