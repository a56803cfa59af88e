-- Memory: the conversation of a lineage persists across steps; past the
-- context budget it is compacted by one LLM call into a summary, kept in
-- the archive and given to the next step instead of the transcript.
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
local _, _, lineage = t.step({}, seed)
assert(#lineage.messages == 3, "step 1: prompt, answer, tool result")
t.step({}, seed, lineage)
local calls = t.llm_requests(args)
assert(#calls == 2 and #calls[2].request.messages == 4, "step 2 sees step 1")
t.step({ context_tokens = 200 }, seed, lineage)
calls = t.llm_requests(args)
assert(#calls == 4, #calls)
assert(calls[3].request.system:find("condense", 1, true), "the compaction call")
assert(t.request_text(calls[3]):find("[call give_up", 1, true), "it reads the transcript")
local first = calls[4].request.messages
assert(#first == 1, "step 3 starts from the summary alone")
assert(first[1].content:find("Memory of earlier steps (compacted)\nSUMMARY: giving up twice; SPEED is the lever.", 1, true), first[1].content)
local ev = t.events(args, "agent_compaction")
assert(#ev == 1 and ev[1].data.summary == "SUMMARY: giving up twice; SPEED is the lever.")
assert(ev[1].data.step == 3 and ev[1].data.tokens_before > 200 and ev[1].data.call_id == 3)
assert(lineage.summary and #lineage.messages == 3)
io.stderr:write("agent compaction: ok\n")
