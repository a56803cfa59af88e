-- Edits are checked before evaluation (issue 24): llm_mutate refuses an
-- empty code block, a truncated kernel (braces), an answer that deletes
-- most of the kernel, one without the entry point and one cut off at its
-- token limit; each goes back to the model with its reason and the fixed
-- answer is the child.  Without fix attempts no child is made at all.  The
-- agent's write_source refuses the same.
local avo = require "avo"
local t = dofile("tests/agent/lib.lua")
local args = ...

local seed = t.seed()
local op = avo.operator("llm_mutate")
-- The synth workload has no entry point of its own: name its function.
local ev = setmetatable({ entry = "kernel" }, { __index = t.ev })
local function mutate(options)
  return op.apply({ ev = ev, rng = avo.rng("op.llm_mutate"), generation = 1,
                    options = options or {} }, { seed })
end
local reasons = {
  "the new kernel is empty (an empty code block is no rewrite)",
  "the new kernel's braces do not balance (2 unclosed): it looks truncated",
  "bytes of the kernel: the rewrite deletes most of it",
  "the new kernel does not define 'kernel', the entry point the evaluator calls",
  "the answer was cut off at its token limit",
}
for i, reason in ipairs(reasons) do
  local child, why = mutate()
  assert(child, ("case %d: %s"):format(i, tostring(why)))
  assert(child.source:find("#define SPEED 1.5", 1, true), "case " .. i .. ": the fixed answer")
end
local calls = t.llm_requests(args)
assert(#calls == 2 * #reasons, #calls)
for i, reason in ipairs(reasons) do
  local msgs = calls[2 * i].request.messages
  local last = msgs[#msgs].content
  assert(last:find(reason, 1, true), ("case %d: the retry says why: %s"):format(i, last))
end
-- No fix attempt left: refused, no child.
local child, why = mutate({ fix_attempts = 0 })
assert(child == nil and why:find("unusable answer: the new kernel is empty", 1, true), tostring(why))
-- The agent's write_source is checked the same way: the tool answers the
-- reason and nothing is evaluated.
local rec, gave = t.step({}, seed)
assert(rec == nil and gave == "gave up: refused", tostring(gave))
calls = t.llm_requests(args)
local msgs = calls[#calls].request.messages
assert(msgs[#msgs].role == "tool" and msgs[#msgs].content:find("error: write_source: the new " ..
  "kernel keeps 33 of the 264 bytes", 1, true), msgs[#msgs].content)
assert(#avo.attempts.list() == 0, "nothing evaluated")
-- The checks themselves.
local llm = require "operators.lib.llm"
local base = seed.source
assert(llm.check_edit(base, base:gsub("1.0", "1.1"), "blocks", {}, "kernel") == nil)
assert(llm.check_edit(base, base .. "/* { unbalanced in a comment */\n", "blocks", {}) == nil)
assert(llm.check_edit(base, "  \n", "rewrite", {}):find("empty", 1, true))
assert(llm.check_edit(base, base, "blocks", { stop_reason = "max_tokens" }):find("cut off", 1, true))
io.stderr:write("agent edits: ok\n")
