-- Helpers shared by the LLM operators (llm_mutate, llm_crossover, agent) and
-- the avo strategy: prompt modules, chat options, the ask-and-patch loop,
-- and how knobs and per-config results are shown to a model.
--
--   local llm = require "operators.lib.llm"

local avo = require "avo"
local patch = require "avo.patch"
local paths = require "avo.paths"
local knob_lib = require "operators.lib.knobs"

local M = {}

-- Options passed through to avo.llm.chat.
M.CHAT_KEYS = { "provider", "model", "base_url", "api_key_env", "temperature", "max_tokens",
                "timeout", "retries", "backoff", "context_window" }

-- The chat options among `options` (keys: M.CHAT_KEYS unless given).
function M.chat_options(options, keys)
  local o = {}
  for _, k in ipairs(keys or M.CHAT_KEYS) do o[k] = options[k] end
  return o
end

local prompts = {} -- spec -> { module =, path = }

-- The prompt module `spec` (a name under operators/ or a path), loaded once.
-- `kind.needs` names the function the caller calls; a module without it is
-- an error `<path>: <kind.shape>`.  `kind.who` prefixes the not-found error.
function M.load_prompt(spec, kind)
  local entry = prompts[spec]
  if not entry then
    local path = paths.find("operators", spec)
    if not path then error(("%sprompt '%s' not found"):format(kind.who or "", spec), 0) end
    local chunk, err = loadfile(path, "t")
    if not chunk then error(err, 0) end
    entry = { module = chunk(), path = path }
    prompts[spec] = entry
  end
  local p = entry.module
  if type(p) ~= "table" or type(p[kind.needs]) ~= "function" then
    error(entry.path .. ": " .. kind.shape, 0)
  end
  return p
end

-- The kind of prompt module llm_mutate and llm_crossover load.
M.USER_PROMPT = { needs = "user", shape = "a prompt module returns {system = string, user = function}" }

-- "BM=32, BN=64": the knobs `source` declares, in source order, with their
-- values in `values` (else their first value), or "none".
function M.knob_text(source, values)
  local ok, domain = pcall(avo.knobs, source)
  local parts = {}
  for _, k in ipairs(ok and domain or {}) do
    parts[#parts + 1] = ("%s=%s"):format(k.name, tostring((values or {})[k.name] or k.values[1]))
  end
  return #parts > 0 and table.concat(parts, ", ") or "none"
end

-- One line per config of a record or measurement: "name: RATE UNIT, spread
-- S%", "name: WRONG (reason)" or "name: reason".  `style.rate` and
-- `style.spread` format the numbers; with `against` (a record) each rate is
-- also given relative to that record's.
function M.config_lines(rec, unit, style, against)
  local by_name = {}
  for _, c in ipairs(against and against.configs or {}) do by_name[c.name] = c end
  local lines = {}
  for _, c in ipairs(rec.configs or {}) do
    local rate = unit == "GB/s" and c.gbs or c.gflops
    local line = c.name .. ": "
    if c.correct == false then
      line = line .. "WRONG" .. (c.reason and (" (" .. c.reason .. ")") or "")
    elseif rate then
      line = line .. (style.rate .. " %s"):format(rate, unit or "")
      if c.spread then line = line .. (", spread " .. style.spread .. "%%"):format(c.spread * 100) end
      local o = by_name[c.name]
      local orate = o and (unit == "GB/s" and o.gbs or o.gflops)
      if orate and orate > 0 then line = line .. (", %.3fx the best"):format(rate / orate) end
    else
      line = line .. (c.reason or "not timed")
    end
    lines[#lines + 1] = line
  end
  return lines
end

-- Knobs for a child with `source`: each declared knob keeps the value of the
-- first parent that has a valid one (in `from` order), else its first value.
-- Returns nil and why when the source's knob declarations do not parse.
function M.child_knobs(source, from)
  local ok, domain = pcall(avo.knobs, source)
  if not ok then return nil, tostring(domain) end
  return (knob_lib.inherit(domain, from))
end

-- `source` without comments, string and character literals (what the
-- structural checks of check_edit look at).
local function code_only(source)
  return (source:gsub("/%*.-%*/", " "):gsub("//[^\n]*", " "):gsub('"[^"\n]*"', '""')
    :gsub("'[^'\n]*'", "''"))
end

-- Unclosed braces of `source` (negative: too many closing ones).
local function brace_balance(source)
  local code = code_only(source)
  local _, open = code:gsub("{", "")
  local _, close = code:gsub("}", "")
  return open - close
end

--[[
check_edit(base, new, how, resp, entry) -> nil | why
Whether the kernel `new` made from `base` by an answer (`how`: "blocks",
"rewrite", "edit", "write") may be evaluated: nil, or why not, for the
model.  Refused: an empty kernel; an answer cut off at its token limit
(stop reason "length" / "max_tokens"); braces that no longer balance (a
truncated kernel); a kernel that keeps less than half of `base` (an
answer that deletes most of it, e.g. an empty or partial code block taken
as a rewrite); and one without the definition of `entry` (the evaluator's
entry point) where `base` has it.
]]
function M.check_edit(base, new, how, resp, entry)
  if not new:match("%S") then
    return "the new kernel is empty (an empty code block is no rewrite)"
  end
  local stop = resp and resp.stop_reason
  if stop == "length" or stop == "max_tokens" then
    return "the answer was cut off at its token limit, so the edit may be incomplete; send " ..
      "a shorter edit (SEARCH/REPLACE blocks of only the lines that change)"
  end
  local was, now = brace_balance(base), brace_balance(new)
  if now ~= was then
    return ("the new kernel's braces do not balance (%d unclosed): it looks truncated; send " ..
      "the complete code"):format(now - was)
  end
  if #new * 2 < #base then
    return ("the new kernel keeps %d of the %d bytes of the kernel: %s deletes most of it; " ..
      "send SEARCH/REPLACE blocks, or the whole kernel in one code block"):format(#new, #base,
      how == "rewrite" and "the rewrite" or "the edit")
  end
  if type(entry) == "string" and entry ~= "" then
    local pat = "[%w_%*%s]" .. entry:gsub("%p", "%%%0") .. "%s*%("
    if code_only(base):find(pat) and not code_only(new):find(pat) then
      return ("the new kernel does not define '%s', the entry point the evaluator calls"):format(
        entry)
    end
  end
  return nil
end

-- The model's context window for `options` (avo.llm.context_window), or
-- nil when unknown: {tokens, margin (a sixteenth, at least 128),
-- max_tokens (what a call asks for at most)}.  `stream`: the calls'
-- stream (what the run knew at its next call, under --llm-replay).
function M.window_of(options, stream)
  local chat = M.chat_options(options)
  chat.stream = stream
  local n, max_tokens = avo.llm.context_window(chat)
  if not n then return nil end
  return { tokens = n, margin = math.max(128, n // 16), max_tokens = max_tokens or 4096 }
end

-- Whether `message` (a first user message) with `system` leaves at least
-- a quarter of the model's window to the answer (true without a known
-- window): operators drop optional context (other kernels) until it does.
-- `stream` as for window_of.
function M.fits(options, system, message, stream)
  local w = M.window_of(options, stream)
  if not w then return true end
  local chat = M.chat_options(options)
  chat.stream = stream
  local n = avo.llm.estimate_tokens(chat, { system = system,
    messages = { { role = "user", content = message } } })
  return n + w.margin + math.min(w.max_tokens, w.tokens // 4) <= w.tokens
end

-- Ask, apply, and on an unusable answer ask again with the reason, at most
-- 1 + options.fix_attempts (default 1) times.  An answer whose kernel
-- check_edit refuses (with `entry`, the evaluator's entry point) is
-- unusable too: it is never evaluated.  `stream` (the operator's random
-- stream name, ctx.rng.name) places the calls in the run for --llm-replay.
-- Returns new source, response, how | nil, why.
function M.converse(options, prompt, first_message, base_source, stream, entry)
  local chat = M.chat_options(options)
  chat.stream = stream
  chat.system = prompt.system
  chat.messages = { { role = "user", content = first_message } }
  local fixes = options.fix_attempts or 1
  local why
  local window = M.window_of(options, stream)
  for attempt = 0, fixes do
    if window then
      -- The answer gets what the window leaves beside the prompt and a
      -- margin (at most max_tokens); too little left and no call is made.
      local prompt_tokens = avo.llm.estimate_tokens(chat, chat)
      local left = window.tokens - window.margin - prompt_tokens
      if left < 128 then
        return nil, ("the prompt (about %d tokens) does not fit the model's context window " ..
          "(%d tokens)"):format(prompt_tokens, window.tokens)
      end
      chat.max_tokens = math.min(window.max_tokens, left)
    end
    local resp, err = avo.llm.chat(chat)
    if not resp then return nil, "llm: " .. err end
    local new, how = patch.apply(base_source, resp.content)
    if new then
      local bad = M.check_edit(base_source, new, how, resp, entry)
      if not bad then return new, resp, how end
      how = bad
    end
    why = how
    if attempt < fixes then
      chat.messages[#chat.messages + 1] = { role = "assistant", content = resp.content }
      chat.messages[#chat.messages + 1] = { role = "user",
        content = prompt.retry and prompt.retry(why) or ("Your answer could not be applied: " .. why) }
    end
  end
  return nil, "unusable answer: " .. why
end

return M
