-- Where avo stands against the vendor libraries on this GPU (issue 14,
-- tests/gpu/device-check.sh): for each evaluator, its tensor-core seed, the
-- best a short search found, and the evaluator's baselines (cuBLASLt for the
-- GEMMs, cuDNN's fused attention for attention), timed in this run by the
-- same harness; then one table per evaluator, per config, in TFLOPS.
--
--   avo run tests/gpu/vendor_table.lua --jobs 1 --db vt.db seconds=300 search=60
--
-- seconds: the whole script's budget; an evaluator not started within it is
-- listed as not run.  search: seconds of (1+4) param_tweak search from the
-- seed per evaluator (0: the seed only; attention gets what is left of its
-- share, its configs are large).  A baseline that did not measure a config
-- is shown with its status and reason, never as a number.
local avo = require "avo"
local args = avo.options(..., {
  seconds = { type = "integer", default = 300, min = 10 },
  search = { type = "integer", default = 60, min = 0 },
  evaluators = { type = "string",
    default = "cuda/gemm_bf16_tc,cuda/gemm_f16_tc,cuda/attention_mha_tc,cuda/attention_gqa_tc" },
})

local function elapsed() return avo.budget().elapsed end
local function tflops(c)
  if not (c and c.correct and c.median_s and c.median_s > 0) then return nil end
  return c.tflops or (c.gflops and c.gflops / 1000)
end
local function by_name(list)
  local out = {}
  for _, c in ipairs(list or {}) do out[c.name] = c end
  return out
end

-- (1+4): four param_tweak children of the best per round, while time lasts.
local tweak = avo.operator("param_tweak")
local rng = avo.rng("vendor_table")
local function search(ev, best, until_s)
  local round = 0
  while elapsed() < until_s do
    round = round + 1
    local children = {}
    for i = 1, 4 do
      local child = tweak.apply({ rng = rng, options = { max_changes = 2 }, generation = round },
        { best })
      if child then children[#children + 1] = child end
    end
    if #children == 0 then break end
    for _, rec in ipairs(avo.evaluate_all(ev, children)) do
      if rec.status == "ok" and (best.status ~= "ok" or rec.score > best.score) then best = rec end
    end
  end
  return best, round
end

local function cell(v) return v and ("%.4g"):format(v) or "-" end
local owner = {} -- baseline name -> the section whose evaluator named it first
-- One evaluator's table, from the baselines measured so far.
local function print_section(s, rows)
  io.write(("\n%s"):format(s.name))
  if s.skipped then
    io.write(": ", s.skipped, "\n")
  else
    io.write((": seed %s%s, best after %d search rounds %s\n"):format(s.seed.status,
      s.seed.reason and (" (" .. s.seed.reason .. ")") or "", s.rounds,
      s.best.status == "ok" and ("score %.4g %s"):format(s.best.score, s.ev.unit) or s.best.status))
    -- Its baselines: the first evaluator naming one owns the plain name,
    -- later ones get name@evaluator (lua/avo/baselines.lua).
    local own = {}
    for _, b in ipairs(s.ev.baseline_list or {}) do
      local want = owner[b.name] == s and b.name or b.name .. "@" .. s.ev.name
      for _, row in ipairs(rows) do
        if row.name == want then own[#own + 1] = row end
      end
    end
    for _, row in ipairs(own) do
      io.write(("  %s: %s %s on %s, %s%s\n"):format(row.name, row.library or "?",
        row.version or "?", row.device_name or row.device, row.status,
        row.reason and (" (" .. row.reason .. ")") or ""))
    end
    io.write(("  %-24s %9s %9s"):format("config", "seed", "best"))
    for _, row in ipairs(own) do io.write(("  %12s %7s"):format(row.name:sub(1, 12), "ratio")) end
    io.write("\n")
    local seed_c, best_c = by_name(s.seed.configs), by_name(s.best.configs)
    for _, c in ipairs(s.ev.configs) do
      local b = tflops(best_c[c.name])
      io.write(("  %-24s %9s %9s"):format(c.name:sub(1, 24), cell(tflops(seed_c[c.name])), cell(b)))
      for _, row in ipairs(own) do
        local bc = row.result and by_name(row.result.configs)[c.name]
        local t = tflops(bc)
        if t then
          io.write(("  %12s %7s"):format(cell(t), b and ("%.2fx"):format(b / t) or "-"))
        else
          local why = not bc and "not run" or bc.unavailable and "unavail." or "wrong"
          io.write(("  %12s %7s"):format(why, "-"))
        end
      end
      io.write("\n")
    end
  end
end

local names = {}
for name in args.evaluators:gmatch("[^,%s]+") do names[#names + 1] = name end
io.write("\nvendor comparison (TFLOPS; ratio = best / baseline)\n")
io.stdout:flush()
-- Each evaluator's table is printed once it is measured, so a run cut
-- short still shows what it finished.
for i, name in ipairs(names) do
  local s = { name = name }
  local left = args.seconds - elapsed()
  if left < 15 then
    s.skipped = ("not run: %d s budget spent"):format(args.seconds)
  else
    local ev = avo.evaluator(name)
    s.ev = ev
    for _, b in ipairs(ev.baseline_list or {}) do owner[b.name] = owner[b.name] or s end
    s.seed = avo.evaluate(ev, ev:seed())
    s.best, s.rounds = s.seed, 0
    -- This evaluator's share of what is left, the search at most `search`.
    local share = left / (#names - i + 1)
    local until_s = math.min(elapsed() + args.search, elapsed() + share - 5)
    if s.seed.status == "ok" and args.search > 0 then
      s.best, s.rounds = search(ev, s.seed, until_s)
    end
  end
  print_section(s, avo.baselines{ wait = true })
  io.stdout:flush()
end
io.write("(end of the vendor comparison)\n")
