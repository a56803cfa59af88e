-- Prints every configuration's score of a benchmark landscape, for the
-- Kernel Tuner cache of bench/vs_kernel_tuner.py (so both tools see the
-- values of the same Lua code):
--
--   avo run bench/dump_space.lua evaluator=bench/gemm_space.lua
--
-- Line 1: "knobs NAME=v1,v2,... NAME=..." in declaration order; line 2:
-- "optimum X" (the evaluator's own `optimum()` when it has one, else the
-- best valid score); then one line per configuration in mixed-radix order
-- (first knob slowest): its score, or "-" when the evaluator's
-- restrictions rule it out.  Nothing is evaluated.
local avo = require "avo"
local args = avo.options(..., { evaluator = { type = "string" } })
if not args.evaluator then avo.exit(2, "dump_space: give evaluator=PATH") end
local ev = avo.evaluator(args.evaluator)
local domain = ev.knobs
local parts = {}
for i, knob in ipairs(domain) do
  local values = {}
  for j, v in ipairs(knob.values) do values[j] = tostring(v) end
  parts[i] = knob.name .. "=" .. table.concat(values, ",")
end
local out = { "knobs " .. table.concat(parts, " ") }

local lines, best = {}, -math.huge
local knobs, cand = {}, { knobs = nil }
cand.knobs = knobs
local function walk(d)
  if d > #domain then
    if ev.restrictions and not ev.restrictions(knobs) then
      lines[#lines + 1] = "-"
    else
      local s = ev.test_score(cand, ev.configs[1], 0)
      if type(s) == "table" then s = s.gflops end
      best = math.max(best, s)
      lines[#lines + 1] = ("%.17g"):format(s)
    end
    return
  end
  for _, v in ipairs(domain[d].values) do
    knobs[domain[d].name] = v
    walk(d + 1)
  end
end
walk(1)
out[2] = ("optimum %.17g"):format(ev.optimum and ev.optimum() or best)
io.write(table.concat(out, "\n"), "\n", table.concat(lines, "\n"), "\n")
