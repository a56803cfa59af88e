-- The agent inside an 8k context window (tests/agent/window.sh): a 9 KB
-- kernel, three steps against a server that answers a prompt beyond its
-- n_ctx with HTTP 400 as llama.cpp does.  Args: base=URL (the fake
-- server's root with its path segments), model=NAME, steps=N.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
-- Code-like padding: denser in tokens than prose, as real kernels are.
local pad = {}
for i = 1, 160 do
  pad[i] = ("// acc%d += a[(size_t)i * K + k] * b[k * N + j]; /* %03d */"):format(i % 8, i)
end
local big = avo.evaluate(t.ev, { source = seed.source .. table.concat(pad, "\n") .. "\n",
  knobs = {}, operator = "manual", parents = { { id = seed.id, role = "parent" } } })
assert(big.status == "ok" and #big.source > 9000, "the big kernel: " .. #big.source)
local opts = { provider = "openai", base_url = args.base .. "/v1", model = args.model,
               max_turns = 10, retries = 0 }
local lineage = t.agent.new_lineage("main", big)
local inc = big
for step = 1, tonumber(args.steps or 3) do
  local rec, why = t.step(opts, inc, lineage)
  io.stderr:write(("step %d: %s\n"):format(step, rec and ("committed #" .. rec.id) or why))
  if rec then inc = rec end
end
io.stderr:write("agent window: ok\n")
