-- avo.llm — chat with a language model from inside a task (avo.llm.chat).
--
-- Providers: "openai" (Chat Completions: hosted, vLLM, llama.cpp server,
-- Ollama, ...), "anthropic" (Messages API), "scripted" (answers from a JSONL
-- file, for tests and demos).  With a replay archive (AVO_LLM_REPLAY or
-- `avo run --llm-replay`), every call is answered from an earlier run's
-- llm_calls by request hash instead, offline.
--
-- The HTTP work (transfers, timeouts, retries with backoff) is in C
-- (core/llm.c) and runs in the engine's event loop: an HTTP call submits a
-- request and the task yields until the answer arrives, while other tasks
-- and evaluations go on.  This module builds each provider's request, parses
-- its answer, accounts tokens and cost, enforces the budgets and records
-- every call in the archive.
--
-- Errors: bad arguments and misconfiguration raise; a call that fails
-- (network, HTTP status, unparsable answer, budget exhausted) returns nil and
-- a message.  API keys are never stored, logged or put in a message.

local core = require "avo.core"
local sched = require "avo.sched"

local M = {}

M.ANTHROPIC_VERSION = "2023-06-01"

local DEFAULT_BASE = {
  openai = "https://api.openai.com/v1",
  anthropic = "https://api.anthropic.com",
}
local KEY_FALLBACK = { openai = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY" }
local PROVIDERS = { openai = true, anthropic = true, scripted = true }

local state -- the current run's LLM state, see M._begin

------------------------------------------------------------------ prices

M.prices = {}
for k, v in pairs(require "avo.prices") do M.prices[k] = v end

local function load_user_prices()
  local path = os.getenv("AVO_LLM_PRICES")
  if not path or path == "" then return end
  local chunk, err = loadfile(path, "t")
  if not chunk then error("AVO_LLM_PRICES: " .. err, 0) end
  local t = chunk()
  if type(t) ~= "table" then error("AVO_LLM_PRICES: " .. path .. " must return a table", 0) end
  for k, v in pairs(t) do M.prices[k] = v end
end

-- Price entry of `model`: exact name, else the longest prefix key.
function M.price_of(model)
  if M.prices[model] then return M.prices[model] end
  local best, len = nil, 0
  for k, v in pairs(M.prices) do
    if #k > len and model:sub(1, #k) == k then best, len = v, #k end
  end
  return best
end

local function cost_of(model, input, output)
  local p = M.price_of(model or "")
  if not p then
    if state and state.run.max_usd and not state.warned[model] then
      state.warned[model] = true
      if state.log then
        state.log(("llm: no price for model '%s' in avo.prices; its calls count as $0"):format(
          tostring(model)))
      end
    end
    return 0
  end
  return (input * (p.input or 0) + output * (p.output or 0)) / 1e6
end

----------------------------------------------------------------- helpers

local function env(name)
  local v = os.getenv(name)
  if v == "" then return nil end
  return v
end

-- `text` with every occurrence of `secret` replaced.
local function scrub(text, secret)
  if type(text) ~= "string" or not secret or #secret < 4 then return text end
  local out, pos = {}, 1
  while true do
    local s, e = text:find(secret, pos, true)
    if not s then break end
    out[#out + 1] = text:sub(pos, s - 1)
    out[#out + 1] = "[redacted]"
    pos = e + 1
  end
  out[#out + 1] = text:sub(pos)
  return table.concat(out)
end

local function array(t)
  return setmetatable(t or {}, core.json_array_mt)
end

local function excerpt(text, n)
  text = tostring(text):gsub("%s+", " ")
  if #text > n then text = text:sub(1, n) .. "..." end
  return text
end

-- "a=3, b" -> { {model="a", weight=3}, {model="b", weight=1} }
local function parse_model_list(spec)
  local list = {}
  for item in spec:gmatch("[^,]+") do
    item = item:match("^%s*(.-)%s*$")
    local name, w = item:match("^(.-)%s*=%s*([%d.]+)$")
    list[#list + 1] = { model = name or item, weight = tonumber(w) or 1 }
  end
  return list
end

------------------------------------------------------------- validation

local ROLES = { user = true, assistant = true, tool = true, system = true }

local function check_messages(messages)
  if type(messages) ~= "table" or #messages == 0 then
    error("avo.llm.chat: 'messages' must be a non-empty array of {role=, content=}", 3)
  end
  for i, m in ipairs(messages) do
    local where = ("avo.llm.chat: messages[%d]"):format(i)
    if type(m) ~= "table" then error(where .. " must be a table", 3) end
    if not ROLES[m.role] then
      error(where .. ": role must be user, assistant, tool or system, got " .. tostring(m.role), 3)
    end
    if m.content ~= nil and type(m.content) ~= "string" then
      error(where .. ": content must be a string", 3)
    end
    if m.content == nil and not (m.role == "assistant" and m.tool_calls) then
      error(where .. ": content is missing", 3)
    end
    if m.role == "tool" and type(m.tool_call_id) ~= "string" then
      error(where .. ": a tool message needs tool_call_id", 3)
    end
    if m.tool_calls ~= nil then
      if m.role ~= "assistant" or type(m.tool_calls) ~= "table" then
        error(where .. ": only assistant messages carry tool_calls (an array)", 3)
      end
      for j, tc in ipairs(m.tool_calls) do
        if type(tc) ~= "table" or type(tc.id) ~= "string" or type(tc.name) ~= "string" then
          error(("%s.tool_calls[%d] needs id and name strings"):format(where, j), 3)
        end
      end
    end
  end
end

local function check_tools(tools)
  if tools == nil then return end
  if type(tools) ~= "table" then error("avo.llm.chat: 'tools' must be an array", 3) end
  for i, t in ipairs(tools) do
    if type(t) ~= "table" or type(t.name) ~= "string" then
      error(("avo.llm.chat: tools[%d] needs a name"):format(i), 3)
    end
    if t.parameters ~= nil and type(t.parameters) ~= "table" then
      error(("avo.llm.chat: tools[%d].parameters must be a JSON schema table"):format(i), 3)
    end
  end
end

------------------------------------------------------------ configuration

-- Resolved configuration of one call: provider, model list, base_url, key
-- and the name of the variable it came from, limits.
local function resolve(opts)
  local replay = state and state.replay
  local provider = opts.provider or env("AVO_LLM_PROVIDER")
  if replay then provider = "replay" end
  if not provider then
    return nil, "no LLM configured: set AVO_LLM_PROVIDER (openai | anthropic | scripted), " ..
      "AVO_LLM_MODEL and AVO_LLM_API_KEY (and AVO_LLM_BASE_URL for a local server), " ..
      "or AVO_LLM_REPLAY=old.db"
  end
  if provider ~= "replay" and not PROVIDERS[provider] then
    return nil, ("unknown LLM provider '%s' (openai | anthropic | scripted)"):format(provider)
  end
  local cfg = { provider = provider }
  local models = opts.model or env("AVO_LLM_MODEL")
  if type(models) == "string" then models = parse_model_list(models) end
  if models == nil then
    if provider == "scripted" then
      models = { { model = "scripted", weight = 1 } }
    elseif provider == "replay" and replay.only_model then
      models = { { model = replay.only_model, weight = 1 } }
    else
      return nil, "no model configured: set AVO_LLM_MODEL (or model= in the operator's options)"
    end
  end
  if type(models) ~= "table" or #models == 0 then
    return nil, "model must be a name or an array of {model=, weight=}"
  end
  for i, m in ipairs(models) do
    if type(m) == "string" then models[i] = { model = m, weight = 1 } end
    m = models[i]
    if type(m) ~= "table" or type(m.model) ~= "string" or
        (m.weight ~= nil and (type(m.weight) ~= "number" or m.weight < 0)) then
      return nil, ("model list entry %d must be {model = name, weight = number >= 0}"):format(i)
    end
  end
  cfg.models = models
  if provider == "openai" or provider == "anthropic" then
    cfg.base_url = (opts.base_url or env("AVO_LLM_BASE_URL") or DEFAULT_BASE[provider])
      :gsub("/+$", "")
    for _, name in ipairs({ opts.api_key_env or "AVO_LLM_API_KEY", "AVO_LLM_API_KEY",
                            KEY_FALLBACK[provider] }) do
      if env(name) then cfg.key, cfg.key_env = env(name), name break end
    end
    cfg.key_env = cfg.key_env or "AVO_LLM_API_KEY"
  end
  local function num(v, name, default)
    v = v or tonumber(env(name) or "")
    return v or default
  end
  cfg.temperature = num(opts.temperature, "AVO_LLM_TEMPERATURE", nil)
  cfg.max_tokens = math.tointeger(num(opts.max_tokens, "AVO_LLM_MAX_TOKENS", 4096))
  cfg.timeout = num(opts.timeout, "AVO_LLM_TIMEOUT", 300)
  cfg.connect_timeout = num(opts.connect_timeout, "AVO_LLM_CONNECT_TIMEOUT", 10)
  cfg.retries = math.tointeger(num(opts.retries, "AVO_LLM_RETRIES", 3))
  cfg.backoff = num(opts.backoff, "AVO_LLM_BACKOFF", 1)
  if not cfg.max_tokens or cfg.max_tokens < 1 then return nil, "max_tokens must be >= 1" end
  if not cfg.retries or cfg.retries < 0 then return nil, "retries must be an integer >= 0" end
  return cfg
end

-- true, or false and what to set (for examples that need a model).
function M.configured()
  if env("AVO_LLM_REPLAY") then return true end
  local cfg, err = resolve({})
  if not cfg then return false, err end
  if cfg.provider == "scripted" and not env("AVO_LLM_SCRIPT") then
    return false, "AVO_LLM_PROVIDER=scripted needs AVO_LLM_SCRIPT=FILE.jsonl"
  end
  return true
end

local function pick_model(cfg)
  if #cfg.models == 1 then return cfg.models[1].model end
  local total = 0
  for _, m in ipairs(cfg.models) do total = total + (m.weight or 1) end
  if total <= 0 then error("avo.llm: every model weight is zero", 0) end
  local x = state.model_rng:double() * total
  for _, m in ipairs(cfg.models) do
    x = x - (m.weight or 1)
    if x < 0 then return m.model end
  end
  return cfg.models[#cfg.models].model
end

---------------------------------------------------------------- providers

-- Provider-neutral request: what is hashed, stored and replayed.
local function canonical(opts, model, cfg)
  local messages = array()
  for i, m in ipairs(opts.messages) do
    local c = { role = m.role, content = m.content, tool_call_id = m.tool_call_id }
    if m.tool_calls and #m.tool_calls > 0 then
      c.tool_calls = array()
      for j, tc in ipairs(m.tool_calls) do
        c.tool_calls[j] = { id = tc.id, name = tc.name, arguments = tc.arguments or {} }
      end
    end
    messages[i] = c
  end
  local tools
  if opts.tools and #opts.tools > 0 then
    tools = array()
    for i, t in ipairs(opts.tools) do
      tools[i] = { name = t.name, description = t.description,
                   parameters = t.parameters or { type = "object", properties = {} } }
    end
  end
  return { model = model, system = opts.system, messages = messages, tools = tools,
           temperature = cfg.temperature, max_tokens = cfg.max_tokens }
end

local openai = {}

function openai.request(c, cfg)
  local messages = array()
  if c.system then messages[1] = { role = "system", content = c.system } end
  for _, m in ipairs(c.messages) do
    local out = { role = m.role, content = m.content }
    if m.role == "tool" then out.tool_call_id = m.tool_call_id end
    if m.tool_calls then
      out.tool_calls = array()
      for j, tc in ipairs(m.tool_calls) do
        out.tool_calls[j] = { id = tc.id, type = "function",
          ["function"] = { name = tc.name, arguments = core.json_encode(tc.arguments) } }
      end
    end
    if out.content == nil and not out.tool_calls then out.content = "" end
    messages[#messages + 1] = out
  end
  local body = { model = c.model, messages = messages, temperature = c.temperature,
                 max_tokens = c.max_tokens }
  if c.tools then
    body.tools = array()
    for i, t in ipairs(c.tools) do
      body.tools[i] = { type = "function", ["function"] = { name = t.name,
        description = t.description, parameters = t.parameters } }
    end
  end
  local headers = { "Content-Type: application/json" }
  if cfg.key then headers[#headers + 1] = "Authorization: Bearer " .. cfg.key end
  return cfg.base_url .. "/chat/completions", headers, core.json_encode(body)
end

function openai.parse(doc)
  local choice = type(doc.choices) == "table" and doc.choices[1]
  local msg = type(choice) == "table" and choice.message
  if type(msg) ~= "table" then return nil, "unexpected answer: no choices[1].message" end
  local out = { content = type(msg.content) == "string" and msg.content or "",
                tool_calls = array(), stop_reason = choice.finish_reason }
  for i, tc in ipairs(type(msg.tool_calls) == "table" and msg.tool_calls or {}) do
    local fn = type(tc) == "table" and tc["function"]
    if type(fn) ~= "table" or type(fn.name) ~= "string" then
      return nil, ("unexpected answer: tool_calls[%d] has no function name"):format(i)
    end
    local args = fn.arguments
    if type(args) == "string" then
      local decoded, err = core.json_decode(args ~= "" and args or "{}")
      if type(decoded) ~= "table" then
        return nil, ("tool call '%s' has malformed arguments: %s"):format(fn.name,
          err or "not a JSON object")
      end
      args = decoded
    end
    out.tool_calls[i] = { id = tostring(tc.id or ("call_" .. i)), name = fn.name,
                          arguments = type(args) == "table" and args or {} }
  end
  local u = type(doc.usage) == "table" and doc.usage or {}
  out.usage = { input_tokens = math.tointeger(u.prompt_tokens) or 0,
                output_tokens = math.tointeger(u.completion_tokens) or 0 }
  return out
end

local anthropic = {}

function anthropic.request(c, cfg)
  local messages = array()
  local system = c.system
  local function push(role, block)
    local last = messages[#messages]
    if last and last.role == role then
      if type(last.content) == "string" then
        last.content = array({ { type = "text", text = last.content } })
      end
      last.content[#last.content + 1] = block
    else
      messages[#messages + 1] = { role = role, content = array({ block }) }
    end
  end
  for _, m in ipairs(c.messages) do
    if m.role == "system" then
      system = system and (system .. "\n\n" .. m.content) or m.content
    elseif m.role == "tool" then
      push("user", { type = "tool_result", tool_use_id = m.tool_call_id, content = m.content })
    elseif m.role == "assistant" then
      if m.content and m.content ~= "" then push("assistant", { type = "text", text = m.content }) end
      for _, tc in ipairs(m.tool_calls or {}) do
        push("assistant", { type = "tool_use", id = tc.id, name = tc.name,
                            input = tc.arguments or {} })
      end
    else
      push("user", { type = "text", text = m.content })
    end
  end
  local body = { model = c.model, max_tokens = c.max_tokens, system = system,
                 messages = messages, temperature = c.temperature }
  if c.tools then
    body.tools = array()
    for i, t in ipairs(c.tools) do
      body.tools[i] = { name = t.name, description = t.description, input_schema = t.parameters }
    end
  end
  local headers = { "Content-Type: application/json",
                    "anthropic-version: " .. M.ANTHROPIC_VERSION }
  if cfg.key then headers[#headers + 1] = "x-api-key: " .. cfg.key end
  local url = cfg.base_url:match("/v1$") and (cfg.base_url .. "/messages")
    or (cfg.base_url .. "/v1/messages")
  return url, headers, core.json_encode(body)
end

function anthropic.parse(doc)
  if type(doc.content) ~= "table" then return nil, "unexpected answer: no content array" end
  local texts, out = {}, { tool_calls = array(), stop_reason = doc.stop_reason }
  for i, block in ipairs(doc.content) do
    if type(block) ~= "table" then return nil, ("unexpected answer: content[%d]"):format(i) end
    if block.type == "text" and type(block.text) == "string" then
      texts[#texts + 1] = block.text
    elseif block.type == "tool_use" then
      if type(block.name) ~= "string" or (block.input ~= nil and type(block.input) ~= "table") then
        return nil, ("unexpected answer: malformed tool_use block %d"):format(i)
      end
      out.tool_calls[#out.tool_calls + 1] = { id = tostring(block.id or ("toolu_" .. i)),
        name = block.name, arguments = block.input or {} }
    end
  end
  out.content = table.concat(texts)
  local u = type(doc.usage) == "table" and doc.usage or {}
  out.usage = { input_tokens = math.tointeger(u.input_tokens) or 0,
                output_tokens = math.tointeger(u.output_tokens) or 0 }
  return out
end

local SHAPES = { openai = openai, anthropic = anthropic }

-- The provider's own error message from an error body, if any.
local function provider_message(body)
  local doc = type(body) == "string" and core.json_decode(body)
  if type(doc) == "table" then
    local e = doc.error
    if type(e) == "table" and type(e.message) == "string" then return e.message end
    if type(e) == "string" then return e end
    if type(doc.message) == "string" then return doc.message end
    if type(doc.detail) == "string" then return doc.detail end
  end
  if type(body) == "string" and body:match("%S") then return excerpt(body, 200) end
  return nil
end

-- Turn the C client's answer into (response) or (nil, message).
local function read_http(cfg, result)
  local body = scrub(result.body, cfg.key)
  local status = result.http_status or 0
  local name = cfg.provider
  if result.status ~= "ok" then
    local pmsg = provider_message(body)
    local tail = pmsg and (": " .. pmsg) or ""
    if status == 401 or status == 403 then
      return nil, ("%s: authentication failed (%d)%s; check %s"):format(name, status, tail,
        cfg.key_env)
    end
    if status >= 400 and not result.retryable then
      return nil, ("%s rejected the request (HTTP %d)%s"):format(name, status, tail)
    end
    return nil, ("%s: %s%s"):format(name, scrub(result.error or "failed", cfg.key),
      status > 0 and tail or "")
  end
  local doc, jerr = core.json_decode(body or "")
  if type(doc) ~= "table" then
    return nil, ("%s: malformed JSON in the answer (HTTP %d): %s"):format(name, status,
      jerr or "not an object")
  end
  local out, perr = SHAPES[cfg.provider].parse(doc)
  if not out then return nil, ("%s: %s"):format(name, perr) end
  return out
end

--------------------------------------------------------- scripted, replay

local function load_script(path)
  local f, err = io.open(path, "rb")
  if not f then error("AVO_LLM_SCRIPT: cannot read " .. tostring(err), 0) end
  local entries, n = {}, 0
  for line in f:lines() do
    n = n + 1
    if line:match("%S") then
      local e, jerr = core.json_decode(line)
      if type(e) ~= "table" then
        f:close()
        error(("%s:%d: not a JSON object: %s"):format(path, n, jerr or "wrong type"), 0)
      end
      e.line = n
      entries[#entries + 1] = e
    end
  end
  f:close()
  if #entries == 0 then error("AVO_LLM_SCRIPT: " .. path .. " has no answers", 0) end
  return { path = path, entries = entries, next = 1 }
end

local function request_text(c)
  local parts = { c.system or "" }
  for _, m in ipairs(c.messages) do parts[#parts + 1] = m.content or "" end
  return table.concat(parts, "\n")
end

-- Scripted answer: the first entry whose `match` occurs in the last message,
-- else the next unkeyed entry in file order (cycling).
local function scripted_answer(c)
  local s = state.script
  if not s then
    local path = env("AVO_LLM_SCRIPT")
    if not path then error("AVO_LLM_PROVIDER=scripted needs AVO_LLM_SCRIPT=FILE.jsonl", 0) end
    s = load_script(path)
    state.script = s
  end
  local last = c.messages[#c.messages].content or ""
  local entry
  for _, e in ipairs(s.entries) do
    if type(e.match) == "string" and last:find(e.match, 1, true) then entry = e break end
  end
  if not entry then
    local unkeyed = {}
    for _, e in ipairs(s.entries) do if e.match == nil then unkeyed[#unkeyed + 1] = e end end
    if #unkeyed == 0 then
      return nil, ("scripted: no answer in %s matches the request"):format(s.path)
    end
    entry = unkeyed[(s.next - 1) % #unkeyed + 1]
    s.next = s.next + 1
  end
  if entry.error then return nil, "scripted: " .. tostring(entry.error) end
  local content = type(entry.content) == "string" and entry.content or ""
  local u = type(entry.usage) == "table" and entry.usage or {}
  return {
    content = content,
    tool_calls = array(entry.tool_calls or {}),
    stop_reason = entry.stop_reason or "stop",
    usage = { input_tokens = math.tointeger(u.input_tokens) or (#request_text(c) + 3) // 4,
              output_tokens = math.tointeger(u.output_tokens) or (#content + 3) // 4 },
  }
end

local function load_replay(path)
  local ar, err = core.archive_read(path)
  if not ar then error("LLM replay: " .. err, 0) end
  local rows, rerr = ar:llm_calls(0)
  ar:close()
  if not rows then error("LLM replay: " .. tostring(rerr), 0) end
  local by_hash, models, n_models = {}, {}, 0
  for _, row in ipairs(rows) do
    local q = by_hash[row.request_hash] or { next = 1 }
    q[#q + 1] = row
    by_hash[row.request_hash] = q
    if row.model and not models[row.model] then
      models[row.model] = true
      n_models = n_models + 1
    end
  end
  local only
  if n_models == 1 then only = next(models) end
  return { path = path, by_hash = by_hash, only_model = only, calls = #rows }
end

-- When resuming a run: the answer recorded for the next occurrence of
-- `hash` before the run stopped, or nil once those are used up.
local function resumed_answer(hash)
  local q = state.resume and state.resume.by_hash[hash]
  if not q or q.next > #q then return nil end
  local row = q[q.next]
  q.next = q.next + 1
  if row.status ~= "ok" then return { err = row.error or "recorded call failed" } end
  local r = row.response or {}
  local resp = {
    content = r.content or "", tool_calls = array(r.tool_calls or {}),
    stop_reason = r.stop_reason, model = row.model, provider = row.provider,
    usage = { input_tokens = row.input_tokens or 0, output_tokens = row.output_tokens or 0 },
    cost_usd = row.cost_usd or 0, latency_s = row.latency_s or 0, attempts = row.attempts or 1,
  }
  resp.message = { role = "assistant", content = resp.content, tool_calls = resp.tool_calls }
  local t = state.totals
  t.calls = t.calls + 1
  t.input_tokens = t.input_tokens + resp.usage.input_tokens
  t.output_tokens = t.output_tokens + resp.usage.output_tokens
  t.cost_usd = t.cost_usd + resp.cost_usd
  return { resp = resp }
end

-- The recorded answer of the next occurrence of `hash` (the last one again
-- when the recorded run made this request fewer times).
local function replay_answer(hash)
  local q = state.replay.by_hash[hash]
  if not q then
    error(("LLM replay: no recorded answer for request %s in %s (same script, seed and " ..
      "model as the recorded run?)"):format(hash, state.replay.path), 0)
  end
  local row = q[math.min(q.next, #q)]
  q.next = q.next + 1
  if row.status ~= "ok" then return nil, row.error or "recorded call failed", row end
  local r = row.response or {}
  return {
    content = r.content or "", tool_calls = array(r.tool_calls or {}),
    stop_reason = r.stop_reason,
    usage = { input_tokens = row.input_tokens or 0, output_tokens = row.output_tokens or 0 },
  }, nil, row
end

--------------------------------------------------------------- accounting

local function budget_message()
  local t, r = state.totals, state.run
  if r.max_usd and t.cost_usd >= r.max_usd then
    return ("LLM budget exhausted (--max-usd %g reached: $%.4f spent)"):format(r.max_usd,
      t.cost_usd)
  end
  if r.max_tokens and t.input_tokens + t.output_tokens >= r.max_tokens then
    return ("LLM budget exhausted (--max-tokens %d reached: %d tokens used)"):format(
      r.max_tokens, t.input_tokens + t.output_tokens)
  end
  return nil
end

-- Account one call, record it, and return the value chat() returns.
local function settle(provider, c, hash, resp, err, latency, attempts, cost_override)
  local t = state.totals
  local usage = resp and resp.usage or { input_tokens = 0, output_tokens = 0 }
  local cost = cost_override or cost_of(c.model, usage.input_tokens, usage.output_tokens)
  t.calls = t.calls + 1
  if not resp then t.failed = t.failed + 1 end
  t.input_tokens = t.input_tokens + usage.input_tokens
  t.output_tokens = t.output_tokens + usage.output_tokens
  t.cost_usd = t.cost_usd + cost
  t.latency_s = t.latency_s + (latency or 0)
  local stored = resp and { content = resp.content, tool_calls = resp.tool_calls,
                            stop_reason = resp.stop_reason } or nil
  local id, rerr = state.run.archive:llm_record(state.run.run_id, {
    provider = provider, model = c.model, request_hash = hash, request = c,
    response = stored, status = resp and "ok" or "error", error = err,
    input_tokens = usage.input_tokens, output_tokens = usage.output_tokens,
    cost_usd = cost, latency_s = latency or 0, attempts = attempts or 1,
  })
  if not id then error("avo: cannot record an LLM call in the archive: " .. rerr, 0) end
  if not resp then return { err = err } end
  resp.model, resp.provider, resp.cost_usd = c.model, provider, cost
  resp.latency_s, resp.attempts, resp.call_id = latency or 0, attempts or 1, id
  resp.message = { role = "assistant", content = resp.content,
                   tool_calls = #resp.tool_calls > 0 and resp.tool_calls or nil }
  return { resp = resp }
end

---------------------------------------------------------------- the call

local function client()
  if not state.client then
    local c, err = core.llm(state.run.seed)
    if not c then error("avo.llm: " .. err, 0) end
    state.client = c
    sched.add_source(c, "l")
  end
  return state.client
end

--[[
avo.llm.chat{ messages = {...}, system = ?, tools = ?, model = ?, provider = ?,
              base_url = ?, api_key_env = ?, temperature = ?, max_tokens = ?,
              timeout = ?, connect_timeout = ?, retries = ?, backoff = ? }
  -> response | nil, message

messages: { {role = "user"|"assistant"|"tool"|"system", content = "...",
             tool_calls = {{id=, name=, arguments = table}} (assistant),
             tool_call_id = "..." (tool)}, ... }
tools:    { {name =, description =, parameters = JSON schema table}, ... }
response: { content = "...", tool_calls = {{id, name, arguments}},
            message = {role = "assistant", content, tool_calls}, stop_reason,
            usage = {input_tokens, output_tokens}, cost_usd, latency_s,
            attempts, model, provider, call_id }
]]
function M.chat(opts)
  if not state then error("avo.llm.chat: only available inside 'avo run'", 2) end
  if type(opts) ~= "table" then error("avo.llm.chat: expected a table of options", 2) end
  check_messages(opts.messages)
  check_tools(opts.tools)
  if opts.system ~= nil and type(opts.system) ~= "string" then
    error("avo.llm.chat: 'system' must be a string", 2)
  end
  local cfg, cerr = resolve(opts)
  if not cfg then error("avo.llm: " .. cerr, 2) end

  local why = budget_message() or (state.exhausted and state.exhausted() and "budget exhausted")
  if why then
    if not state.refused and state.log then state.log("llm: " .. why .. "; no more calls") end
    state.refused = true
    return nil, why
  end

  local c = canonical(opts, pick_model(cfg), cfg)
  local hash = core.hash(core.json_encode(c))

  local value
  local resumed = resumed_answer(hash)
  if resumed then
    -- Answered before the run was killed: use the recorded answer (already
    -- in the archive, so not recorded again), and keep a scripted
    -- provider's position in step with the original run.
    if cfg.provider == "scripted" then scripted_answer(c) end
    value = resumed
  elseif cfg.provider == "replay" then
    local resp, err, row = replay_answer(hash)
    value = settle("replay", c, hash, resp, err, row.latency_s, row.attempts, row.cost_usd)
  elseif cfg.provider == "scripted" then
    local resp, err = scripted_answer(c)
    value = settle("scripted", c, hash, resp, err, 0, 1)
  else
    local url, headers, body = SHAPES[cfg.provider].request(c, cfg)
    local llm = client()
    local ticket = llm:submit{
      url = url, headers = headers, body = body, timeout = cfg.timeout,
      connect_timeout = cfg.connect_timeout, max_attempts = cfg.retries + 1,
      backoff = cfg.backoff,
    }
    -- Settled when the answer arrives, so it is recorded even if the
    -- waiting task has died meanwhile.
    local key = sched.track(llm, ticket, function(result)
      local resp, err = read_http(cfg, result)
      return settle(cfg.provider, c, hash, resp, err, result.latency_s, result.attempts)
    end)
    value = sched.await(key)
  end
  if value.err then return nil, value.err end
  return value.resp
end

-------------------------------------------------------------- run hooks

-- Totals of the current run: calls, failed, input_tokens, output_tokens,
-- cost_usd, latency_s.
function M.totals()
  return state and state.totals or nil
end

-- true once --max-usd or --max-tokens is spent.
function M.exhausted()
  return state ~= nil and budget_message() ~= nil
end

-- Called by avo._begin: `run` carries archive, run_id, seed, max_usd,
-- max_tokens, llm_replay; `hooks` exhausted (whole-run budget) and log.
function M._begin(run, hooks)
  hooks = hooks or {}
  state = {
    run = run, exhausted = hooks.exhausted, log = hooks.log, warned = {},
    totals = { calls = 0, failed = 0, input_tokens = 0, output_tokens = 0, cost_usd = 0,
               latency_s = 0 },
    model_rng = core.rng(run.seed, "llm.models"),
  }
  load_user_prices()
  local replay = run.llm_replay or env("AVO_LLM_REPLAY")
  if replay then state.replay = load_replay(replay) end
  if run.llm_resume then state.resume = load_replay(run.llm_resume) end
end

-- Called by avo._end: record the totals and close the client.
function M._end()
  if not state then return end
  local t = state.totals
  if t.calls > 0 and state.run.archive then
    state.run.archive:event(state.run.run_id, "llm_totals", t)
  end
  if state.client then state.client:close() end
  state = nil
end

return M
