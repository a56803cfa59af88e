-- llm_crossover: a language model combines two parents, "ours" (A) and
-- "theirs" (B), into one kernel.  The answer is a full kernel in a fenced
-- code block (or SEARCH/REPLACE blocks against A), applied and checked like
-- llm_mutate's (evolve regions of A, one bounded retry with the reason).
-- Knobs the child declares keep A's value, else B's, else the first.
--
-- Options: as llm_mutate (provider, model, ..., fix_attempts), and
--   prompt   prompt module (default "prompts/crossover")

local patch = require "avo.patch"
local llm = require "operators.lib.llm"

local M = {}
M.name = "llm_crossover"
M.llm = true -- calls a language model (avo.outcome logs its failures)

---@param ctx avo.OperatorContext
---@param parents avo.Record[]
---@return avo.Candidate? child
---@return string? why_not
function M.apply(ctx, parents)
  local a, b = parents[1], parents[2]
  if a == nil or b == nil then return nil, "needs two parents" end
  local options = ctx.options or {}
  local prompt = llm.load_prompt(options.prompt or "prompts/crossover", llm.USER_PROMPT)
  local ev = ctx.ev
  local function view(r)
    return { id = r.id or 0, score = r.score, status = r.status, source = r.source,
             knobs = llm.knob_text(r.source, r.knobs) }
  end
  local message = prompt.user{
    evaluator = ev.name, description = ev.description, unit = ev.unit,
    a = view(a), b = view(b), regions = patch.fixed_segments(a.source) ~= nil,
  }
  local source, resp, how = llm.converse(options, prompt, message, a.source,
    ctx.rng and ctx.rng.name, ev.entry)
  if not source then return nil, resp end
  local knobs, kerr = llm.child_knobs(source, { a.knobs or {}, b.knobs or {} })
  if not knobs then return nil, "the new kernel's knob declarations: " .. kerr end
  local note = patch.explanation(resp.content) or "combined"
  return {
    source = source, knobs = knobs, operator = M.name,
    parents = { { id = a.id, role = "ours" }, { id = b.id, role = "theirs" } },
    note = ("%s (%s, %s)"):format(note, resp.model, how), model = resp.model,
    generation = ctx.generation,
  }
end

return M
