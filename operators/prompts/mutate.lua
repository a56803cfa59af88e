-- Prompt of operators/llm_mutate.lua.  Copy this file to
-- <dir>/operators/prompts/mutate.lua on $AVO_PATH (or pass
-- operator_options = { llm_mutate = { prompt = "path.lua" } }) to change it.
--
-- `system` is the system prompt; `user(v)` builds the request from:
--   v.evaluator    name;   v.description  the evaluator's description
--   v.source       parent source;  v.knobs "NAME=value, ..." or "none"
--   v.status, v.score, v.unit, v.reason, v.log (failure details, may be nil);
--                  v.status is nil for a parent not evaluated yet (a child
--                  another operator just made, e.g. crossover+llm_mutate)
--   v.made_by      for an unevaluated parent: "crossover of #3 and #7 (...)"
--   v.configs      per-config lines ("name: 12.3 GFLOP/s, spread 1.2%")
--   v.artifacts    the evaluator's feedback on the parent (artifacts()), or nil
--   v.inspirations array of {id, score, source, note}
--   v.regions      true when the kernel marks evolve regions
local M = {}

M.system = [[
You are an expert performance engineer who improves compute kernels. You are
given a kernel, its measured performance and, sometimes, better or different
kernels from the same search. Propose ONE focused change that makes the kernel
faster while keeping it exactly correct for every size.

Answer with a one-line explanation, then SEARCH/REPLACE blocks:

<<<<<<< SEARCH
lines copied exactly from the current kernel
=======
the lines that replace them
>>>>>>> REPLACE

Each SEARCH must match exactly one place in the current kernel. Use several
blocks for several places. Only if the change rewrites most of the kernel,
answer instead with the complete new kernel in one fenced code block.]]

local function fence(text)
  return "```c\n" .. text .. (text:sub(-1) == "\n" and "" or "\n") .. "```"
end

function M.user(v)
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(("## Task: %s\n%s\n"):format(v.evaluator, v.description or ""))
  add("## Current kernel\n" .. fence(v.source))
  add(("Knob values it is compiled with: %s"):format(v.knobs))
  if v.status == "ok" then
    add(("Result: correct, score %.4g %s."):format(v.score or 0, v.unit or ""))
  elseif v.status == nil then
    add("Result: not evaluated yet" .. (v.made_by and (" — it was just made by " .. v.made_by)
      or "") .. "; its correctness and speed are unknown.")
  else
    add(("Result: FAILED (%s): %s"):format(v.status or "?", v.reason or "no reason given"))
    if v.log and v.log ~= "" then add("Diagnostics:\n" .. fence(v.log)) end
  end
  if #v.configs > 0 then add("Per-config results:\n- " .. table.concat(v.configs, "\n- ")) end
  if v.artifacts then add("Evaluator feedback:\n" .. v.artifacts) end
  for _, insp in ipairs(v.inspirations) do
    add(("## Another kernel from this search (#%d, score %.4g %s)\n%s"):format(insp.id,
      insp.score or 0, v.unit or "", fence(insp.source)))
  end
  if v.regions then
    add("Only change code between the lines marked avo:evolve-begin and avo:evolve-end; " ..
      "edits anywhere else are rejected.")
  end
  if v.status == "ok" then
    add("Make it faster.")
  elseif v.status == nil then
    add("Make it faster, and keep it exactly correct.")
  else
    add("Fix it, and keep it fast.")
  end
  return table.concat(out, "\n\n")
end

-- Sent after an answer that could not be applied.
function M.retry(why)
  return "Your answer could not be applied: " .. why ..
    "\nAnswer again with SEARCH/REPLACE blocks that match the current kernel exactly."
end

return M
