-- An agent step against a server that streams no tool call and ignores
-- max_tokens, slowly (fake server "lcpy-slowtools...", as llama-cpp-python
-- on a CPU): its call is cut at its reserve, the step ends with that
-- reason, no outage is counted, and the lineage's next step (a server that
-- answers) commits.  Run by tests/agent/http.sh.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")

local base = assert(os.getenv("AVO_TEST_LLM_BASE"), "AVO_TEST_LLM_BASE not set")
local seed = t.seed()
local rec, why, lineage = t.step({ provider = "openai", base_url = base .. "/slow/v1",
  model = "lcpy-slowtools-openai", max_tokens = 64, retries = 0 }, seed)
assert(not rec, "the slow step committed")
assert(tostring(why):find("cut a call at its reserve of 64 tokens", 1, true), tostring(why))
local tot = avo.llm.totals()
assert(tot.cut == 1 and tot.failed == 0 and tot.faults == 0 and tot.fault_streak == 0,
  ("cut %d failed %d faults %d"):format(tot.cut, tot.failed, tot.faults))
rec, why = t.step({ provider = "openai", base_url = base .. "/v1", model = "agent-openai",
  max_tokens = 256, retries = 0 }, seed, lineage)
assert(rec and rec.note == "raise SPEED to 1.25", tostring(why))
io.stderr:write("agent cut: ok\n")
