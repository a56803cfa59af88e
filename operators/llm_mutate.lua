-- llm_mutate: a language model edits one parent.
--
-- The prompt (operators/prompts/mutate.lua, overridable) carries the
-- parent's source, knob values, score vector or failure details, the best
-- and a few other kernels of the run as inspiration, and the evaluator's
-- description.  The answer is applied by avo.patch: SEARCH/REPLACE blocks
-- (exact match first, then whitespace-tolerant; a block matching several
-- places is rejected) or a full rewrite in a fenced code block.  Where the
-- kernel marks evolve regions, edits outside them are rejected.  An answer
-- that cannot be applied gets `fix_attempts` more tries (default 1), each
-- carrying the reason back to the model.
--
-- Where the model's context window is known (avo.llm.context_window), the
-- other kernels are dropped until the prompt leaves a quarter of the window
-- to the answer, and each call's max_tokens is what the window leaves
-- beside its prompt and a margin.  Kernels that are empty, truncated,
-- mostly deleted or without the entry point are refused (llm.check_edit).
--
-- A failed call (network, budget exhausted, ...) means no child: apply
-- returns nil and the reason, and the strategy picks another operator.
--
-- Options (ctx.options):
--   provider, model, base_url, api_key_env, temperature, max_tokens,
--   timeout, retries     passed to avo.llm.chat (default: the environment)
--   top          best kernels of the run shown as inspiration (default 1)
--   diverse      other kernels shown, drawn at random (default 1)
--   fix_attempts further tries after an unusable answer (default 1)
--   prompt       prompt module name or path (default "prompts/mutate")

local avo = require "avo"
local patch = require "avo.patch"
local llm = require "operators.lib.llm"

local M = {}
M.name = "llm_mutate"
M.llm = true -- calls a language model (avo.outcome logs its failures)

local STYLE = { rate = "%.4g", spread = "%.1f" } -- of the per-config lines

---@param ctx avo.OperatorContext
---@param parents avo.Record[]
---@return avo.Candidate? child
---@return string? why_not
function M.apply(ctx, parents)
  local parent = parents[1]
  if parent == nil then return nil, "needs a parent" end
  local options = ctx.options or {}
  local prompt = llm.load_prompt(options.prompt or "prompts/mutate", llm.USER_PROMPT)
  local ev = ctx.ev

  local inspirations, shown = {}, { [parent.id or -1] = true }
  for _, rec in ipairs(avo.lineage.top((options.top or 1) + 1)) do
    if not shown[rec.id] and rec.source ~= parent.source and #inspirations < (options.top or 1) then
      shown[rec.id] = true
      inspirations[#inspirations + 1] = rec
    end
  end
  for _, rec in ipairs(avo.lineage.diverse((options.diverse or 1) + 1, ctx.rng, shown)) do
    if rec.source ~= parent.source and #inspirations < (options.top or 1) + (options.diverse or 1) then
      shown[rec.id] = true
      inspirations[#inspirations + 1] = rec
    end
  end

  local log = parent.log
  if log and #log > 2000 then log = "..." .. log:sub(-2000) end
  -- A parent without a status was made by another operator in the same
  -- step (crossover+llm_mutate) and has not been evaluated.
  local made_by
  if parent.status == nil then
    local ids = {}
    for _, p in ipairs(parent.parents or {}) do
      if p.id then ids[#ids + 1] = "#" .. p.id end
    end
    made_by = (parent.operator or "another operator") ..
      (#ids > 0 and (" from " .. table.concat(ids, " and ")) or "") ..
      (parent.note and (" (" .. parent.note .. ")") or "")
  end
  local function render()
    return prompt.user{
      evaluator = ev.name, description = ev.description, unit = ev.unit,
      source = parent.source, knobs = llm.knob_text(parent.source, parent.knobs),
      status = parent.status, score = parent.score, reason = parent.reason,
      log = parent.status ~= "ok" and log or nil,
      configs = llm.config_lines(parent, ev.unit, STYLE), inspirations = inspirations,
      regions = patch.fixed_segments(parent.source) ~= nil, made_by = made_by,
      artifacts = parent.artifacts,
    }
  end
  local message = render()
  -- A small context window: fewer other kernels, until the prompt leaves
  -- room for the answer.
  while #inspirations > 0 and not llm.fits(options, prompt.system, message,
      ctx.rng and ctx.rng.name) do
    table.remove(inspirations)
    message = render()
  end
  local source, resp, how = llm.converse(options, prompt, message, parent.source,
    ctx.rng and ctx.rng.name, ev.entry)
  if not source then return nil, resp end
  local knobs, kerr = llm.child_knobs(source, { parent.knobs or {} })
  if not knobs then return nil, "the new kernel's knob declarations: " .. kerr end
  local note = patch.explanation(resp.content) or (how == "rewrite" and "rewrite" or "edit")
  return {
    source = source, knobs = knobs, operator = M.name,
    parents = { { id = parent.id, role = "parent" } },
    note = ("%s (%s, %s)"):format(note, resp.model, how), model = resp.model,
    generation = ctx.generation,
  }
end

return M
