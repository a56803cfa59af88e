-- Prompts of operators/agent.lua and the supervisor of strategies/avo.lua.
-- Copy this file to <dir>/operators/prompts/agent.lua on $AVO_PATH (or pass
-- the agent option prompt = "path.lua") to change them.
--
--   system                 the agent's system prompt
--   step(v)                the user message that opens a variation step:
--     v.evaluator, v.description, v.unit, v.lineage, v.step
--     v.best        {id, score, source, knobs, configs = {lines}, omitted}
--                   (omitted: source is a note that the kernel does not fit
--                   the model's context window, not code)
--     v.history     lines "#12 step 3: 15.2 GFLOP/s — message"
--     v.directions  supervisor directions (may be empty)
--     v.events      what happened since the last step (migrations), lines
--     v.summary     compacted memory of earlier steps, or nil
--     v.limits      {turns, evaluations, seconds}
--     v.regions     true when the kernel marks evolve regions
--     v.notes       number of entries in the run's notes
--   compact_system, compact(v)  the memory compaction call: v.transcript,
--                                v.summary (earlier summary or nil)
--   supervisor_system, supervisor(v)  the supervisor call: v.evaluator,
--     v.description, v.unit, v.lineage, v.trigger, v.best, v.committed
--     (lines), v.attempts (lines), v.notes (text), v.n (directions wanted)
local M = {}

M.system = [[
You are an autonomous performance engineer evolving one compute kernel. Each
step you work on a private working copy of the current best version: study
the lineage and the knowledge base, edit, compile, evaluate, and commit a new
version only when it is correct on every configuration and at least as fast
as the best committed one. Evaluations are expensive: compile first, think
about why a change should help, and measure. When a direction does not pay
off, say so in the notes for later steps and try another. Call commit once
you have a better version, or give_up with the reason when this step cannot
produce one. Always work through the tools.]]

local function fence(text)
  return "```c\n" .. text .. (text:sub(-1) == "\n" and "" or "\n") .. "```"
end

function M.step(v)
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(("# Step %d of lineage %s"):format(v.step, v.lineage))
  add(("## Task: %s\n%s"):format(v.evaluator, v.description or ""))
  if v.summary then add("## Memory of earlier steps (compacted)\n" .. v.summary) end
  add(("## Current best: #%d, %.6g %s (knobs %s)\n%s"):format(v.best.id or 0, v.best.score or 0,
    v.unit or "", v.best.knobs, v.best.omitted and v.best.source or fence(v.best.source)))
  if #v.best.configs > 0 then add("Per-config results:\n- " .. table.concat(v.best.configs, "\n- ")) end
  if #v.history > 0 then
    add("## Versions committed in this lineage\n- " .. table.concat(v.history, "\n- "))
  end
  for _, e in ipairs(v.events or {}) do add("Note: " .. e) end
  if #v.directions > 0 then
    add("## Directions from the supervisor (the search has stalled; explore these)\n- " ..
      table.concat(v.directions, "\n- "))
  end
  if v.regions then
    add("Only code between the lines marked avo:evolve-begin and avo:evolve-end may change.")
  end
  add(("Limits of this step: %d turns, %d evaluations, %d s. The run's notes hold %d entr%s " ..
    "(notes_read)."):format(v.limits.turns, v.limits.evaluations, v.limits.seconds, v.notes,
    v.notes == 1 and "y" or "ies"))
  add("Your working copy starts as the current best. Make it faster.")
  return table.concat(out, "\n\n")
end

M.compact_system = [[
You condense the working memory of a kernel-optimisation agent. Keep what a
successor needs: what was tried, what it measured, what failed and why, what
was committed, and promising ideas not yet tried. Be specific (numbers,
knob values, techniques); drop chatter. At most 400 words.]]

function M.compact(v)
  local parts = {}
  if v.summary then parts[#parts + 1] = "## Earlier summary\n" .. v.summary end
  parts[#parts + 1] = "## Transcript since then\n" .. v.transcript
  parts[#parts + 1] = "Write the new summary."
  return table.concat(parts, "\n\n")
end

M.supervisor_system = [[
You supervise an autonomous agent that evolves a compute kernel. The search
has stalled. Review its trajectory and propose new, concrete directions that
differ from what it has tried: one per line, each starting with "- ".]]

function M.supervisor(v)
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(("## Task: %s\n%s"):format(v.evaluator, v.description or ""))
  add(("Lineage %s stalled: %s."):format(v.lineage, v.trigger))
  add(("## Best: #%d, %.6g %s\n%s"):format(v.best.id or 0, v.best.score or 0, v.unit or "",
    fence(v.best.source)))
  add("## Committed versions\n- " .. (#v.committed > 0 and table.concat(v.committed, "\n- ") or "none"))
  add("## Recent attempts\n- " .. (#v.attempts > 0 and table.concat(v.attempts, "\n- ") or "none"))
  if v.notes and v.notes ~= "" then add("## The agent's notes\n" .. v.notes) end
  add(("Propose %d new directions, one per line starting with \"- \"."):format(v.n))
  return table.concat(out, "\n\n")
end

return M
