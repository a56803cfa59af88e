-- One agent step against the loopback fake server with escalation
-- (tests/agent/escalate.sh).  Args: base=URL (the fake server's root with
-- its path segments), model=NAME, escalate_after=K (default: the agent's), max_turns=N,
-- force_with=auto|tool_choice|schema (default auto), knobs=1 (the kernel
-- declares a knob, VEC 1 2 4, so a forced change is set_knobs),
-- max_seconds=S (the step's time), noise=X (the kernel's NOISE line),
-- max_seconds2=S (then a second step of the lineage, with S seconds),
-- big=1 (a 9 KB kernel: the second step needs a compaction in 8k).
-- Prints "step: committed #ID (evaluations E)" or "step: WHY (evaluations E)".
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
local source = seed.source .. "// " .. args.model .. "\n"
if args.big == "1" then
  -- A 9 KB kernel, as tests/agent/window.lua: steps need compaction in 8k.
  local pad = {}
  for i = 1, 160 do
    pad[i] = ("// acc%d += a[(size_t)i * K + k] * b[k * N + j]; /* %03d */"):format(i % 8, i)
  end
  source = source .. table.concat(pad, "\n") .. "\n"
end
if args.noise then source = source:gsub("#define NOISE 0.0", "#define NOISE " .. args.noise) end
if args.knobs == "1" then source = "// avo:param VEC 1 2 4\n" .. source end
local start = avo.evaluate(t.ev, { source = source, knobs = args.knobs == "1" and { VEC = 1 } or {},
  operator = "manual", parents = { { id = seed.id, role = "parent" } } })
assert(start.status == "ok", start.reason)
local opts = { provider = "openai", base_url = args.base .. "/v1",
  model = args.model, retries = 0, max_tokens = 512,
  escalate_after = args.escalate_after and math.tointeger(tonumber(args.escalate_after)),
  max_turns = math.tointeger(tonumber(args.max_turns or "12")),
  max_seconds = tonumber(args.max_seconds or "1800"), force_with = args.force_with }
local rec, why, lineage = t.step(opts, start)
if args.max_seconds2 then
  -- A second step of the same lineage with that much time.
  io.stderr:write(("step 1: %s\n"):format(rec and "committed" or why))
  opts.max_seconds = tonumber(args.max_seconds2)
  rec, why = t.step(opts, lineage.incumbent, lineage)
end
io.stderr:write(("step: %s (unevaluated steps %d)\n"):format(
  rec and ("committed #" .. rec.id .. " knobs " .. require("avo.core").json_encode(rec.knobs or {}))
  or why, lineage.unevaluated_steps or 0))
