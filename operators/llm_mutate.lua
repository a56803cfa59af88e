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
local paths = require "avo.paths"

local M = {}
M.name = "llm_mutate"

local CHAT_KEYS = { "provider", "model", "base_url", "api_key_env", "temperature", "max_tokens",
                    "timeout", "retries" }

local prompts = {}

-- The prompt module `spec` (a name under operators/ or a path), cached.
function M.load_prompt(spec)
  if prompts[spec] then return prompts[spec] end
  local path = paths.find("operators", spec)
  if not path then error(("prompt '%s' not found"):format(spec), 0) end
  local chunk, err = loadfile(path, "t")
  if not chunk then error(err, 0) end
  local p = chunk()
  if type(p) ~= "table" or type(p.user) ~= "function" then
    error(path .. ": a prompt module returns {system = string, user = function}", 0)
  end
  prompts[spec] = p
  return p
end

-- "BM=32, BN=64" in source order, or "none".
function M.knob_text(source, values)
  local ok, domain = pcall(avo.knobs, source)
  local parts = {}
  for _, k in ipairs(ok and domain or {}) do
    parts[#parts + 1] = ("%s=%s"):format(k.name, tostring((values or {})[k.name] or k.values[1]))
  end
  return #parts > 0 and table.concat(parts, ", ") or "none"
end

-- Knobs for a child with `source`: each declared knob keeps the value of the
-- first parent that has a valid one (in `from` order), else its first value.
function M.child_knobs(source, from)
  local ok, domain = pcall(avo.knobs, source)
  if not ok then return nil, tostring(domain) end
  local knobs = {}
  for _, k in ipairs(domain) do
    local value = k.values[1]
    for _, parent_knobs in ipairs(from) do
      local v = parent_knobs[k.name]
      local found = false
      for _, allowed in ipairs(k.values) do
        if v ~= nil and tostring(allowed) == tostring(v) then value, found = allowed, true break end
      end
      if found then break end
    end
    knobs[k.name] = value
  end
  return knobs
end

function M.chat_options(options)
  local o = {}
  for _, k in ipairs(CHAT_KEYS) do o[k] = options[k] end
  return o
end

-- Ask, apply, and on an unusable answer ask again with the reason, at most
-- 1 + fix_attempts times.  Returns new source, response, how | nil, why.
function M.converse(options, prompt, first_message, base_source)
  local chat = M.chat_options(options)
  chat.system = prompt.system
  chat.messages = { { role = "user", content = first_message } }
  local fixes = options.fix_attempts or 1
  local why
  for attempt = 0, fixes do
    local resp, err = avo.llm.chat(chat)
    if not resp then return nil, "llm: " .. err end
    local new, how = patch.apply(base_source, resp.content)
    if new then return new, resp, how end
    why = how
    if attempt < fixes then
      chat.messages[#chat.messages + 1] = { role = "assistant", content = resp.content }
      chat.messages[#chat.messages + 1] = { role = "user",
        content = prompt.retry and prompt.retry(why) or ("Your answer could not be applied: " .. why) }
    end
  end
  return nil, "unusable answer: " .. why
end

local function config_lines(rec, unit)
  local lines = {}
  for _, c in ipairs(rec.configs or {}) do
    local rate = unit == "GB/s" and c.gbs or c.gflops
    local line = c.name .. ": "
    if c.correct == false then
      line = line .. "WRONG" .. (c.reason and (" (" .. c.reason .. ")") or "")
    elseif rate then
      line = line .. ("%.4g %s"):format(rate, unit or "")
      if c.spread then line = line .. (", spread %.1f%%"):format(c.spread * 100) end
    else
      line = line .. (c.reason or "not timed")
    end
    lines[#lines + 1] = line
  end
  return lines
end

function M.apply(ctx, parents)
  local parent = parents[1]
  if parent == nil then return nil, "needs a parent" end
  local options = ctx.options or {}
  local prompt = M.load_prompt(options.prompt or "prompts/mutate")
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
  local message = prompt.user{
    evaluator = ev.name, description = ev.description, unit = ev.unit,
    source = parent.source, knobs = M.knob_text(parent.source, parent.knobs),
    status = parent.status, score = parent.score, reason = parent.reason,
    log = parent.status ~= "ok" and log or nil,
    configs = config_lines(parent, ev.unit), inspirations = inspirations,
    regions = patch.fixed_segments(parent.source) ~= nil,
  }
  local source, resp, how = M.converse(options, prompt, message, parent.source)
  if not source then return nil, resp end
  local knobs, kerr = M.child_knobs(source, { parent.knobs or {} })
  if not knobs then return nil, "the new kernel's knob declarations: " .. kerr end
  local note = patch.explanation(resp.content) or (how == "rewrite" and "rewrite" or "edit")
  return {
    source = source, knobs = knobs, operator = M.name,
    parents = { { id = parent.id, role = "parent" } },
    note = ("%s (%s, %s)"):format(note, resp.model, how),
    generation = ctx.generation,
  }
end

return M
