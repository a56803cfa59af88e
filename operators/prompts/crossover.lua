-- Prompt of operators/llm_crossover.lua (override like prompts/mutate.lua).
-- `user(v)`: v.evaluator, v.description, v.unit, v.a and v.b (each {id,
-- score, status, source, knobs}), v.regions.
local M = {}

M.system = [[
You are an expert performance engineer who improves compute kernels. You are
given two correct kernels for the same task. Combine the best ideas of both
into one kernel that is faster than either while staying exactly correct for
every size. Answer with a one-line explanation, then the complete new kernel
in one fenced code block (or SEARCH/REPLACE blocks against kernel A).]]

local function fence(text)
  return "```c\n" .. text .. (text:sub(-1) == "\n" and "" or "\n") .. "```"
end

function M.user(v)
  local out = { ("## Task: %s\n%s"):format(v.evaluator, v.description or "") }
  for _, p in ipairs({ { "A", v.a }, { "B", v.b } }) do
    out[#out + 1] = ("## Kernel %s (#%d, score %.4g %s, knobs %s)\n%s"):format(p[1], p[2].id,
      p[2].score or 0, v.unit or "", p[2].knobs, fence(p[2].source))
  end
  if v.regions then
    out[#out + 1] = "Only change code between the lines marked avo:evolve-begin and " ..
      "avo:evolve-end of kernel A; edits anywhere else are rejected."
  end
  return table.concat(out, "\n\n")
end

function M.retry(why)
  return "Your answer could not be applied: " .. why .. "\nAnswer again."
end

return M
