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

-- tool_choice: nil or "auto" (the model decides), "required", "none", or
-- { name = TOOL } (that tool, one of `tools`, must be called).
local function check_tool_choice(choice, tools)
  if choice == nil or choice == "auto" or choice == "required" or choice == "none" then return end
  if type(choice) ~= "table" or type(choice.name) ~= "string" then
    error("avo.llm.chat: 'tool_choice' must be \"auto\", \"required\", \"none\" or " ..
      "{name = TOOL}", 3)
  end
  for _, t in ipairs(tools or {}) do
    if t.name == choice.name then return end
  end
  error(("avo.llm.chat: tool_choice names '%s', which is not one of the request's tools")
    :format(choice.name), 3)
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
    elseif provider == "replay" and next(replay.by_key) then
      -- Several models recorded and none configured: each call takes the
      -- model its recorded counterpart used (chat).
      models = { { model = false, weight = 1 } }
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
    if type(m) ~= "table" or (type(m.model) ~= "string" and m.model ~= false) or
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
  if cfg.base_url then
    local c = opts.concurrency or tonumber(env("AVO_LLM_CONCURRENCY") or "")
    if c ~= nil and (type(c) ~= "number" or c ~= math.floor(c) or c < 1) then
      return nil, ("concurrency (AVO_LLM_CONCURRENCY) must be an integer >= 1, got %s"):format(
        tostring(c))
    end
    cfg.concurrency = c and math.tointeger(c)
  end
  -- Streamed answers (server-sent events), read only up to the call's
  -- max_tokens: by default from self-hosted OpenAI-compatible servers, some
  -- of which ignore max_tokens (llama-cpp-python while it writes tool
  -- arguments).  opts.sse or AVO_LLM_STREAM=0|1 decide otherwise.
  local sse = opts.sse
  if sse == nil and env("AVO_LLM_STREAM") then sse = env("AVO_LLM_STREAM") ~= "0" end
  if sse == nil then sse = provider == "openai" and cfg.base_url ~= DEFAULT_BASE.openai end
  cfg.sse = provider == "openai" and sse == true
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

-- The model of a call in `stream` (see chat): drawn by weight from the
-- stream's own random stream "llm.models/<stream>", so which model answers
-- a call depends on its place in the run, not on the order in which
-- concurrent tasks happen to ask.
local function pick_model(cfg, stream)
  if #cfg.models == 1 then return cfg.models[1].model end
  local bias = state.model_bias
  local function weight(m) return (m.weight or 1) * (bias[m.model] or 1) end
  local total = 0
  for _, m in ipairs(cfg.models) do total = total + weight(m) end
  if total <= 0 then error("avo.llm: every model weight is zero", 0) end
  local rng = state.model_rngs[stream]
  if not rng then
    rng = core.rng(state.run.seed, "llm.models/" .. stream)
    state.model_rngs[stream] = rng
  end
  local x = rng:double() * total
  for _, m in ipairs(cfg.models) do
    x = x - weight(m)
    if x < 0 then return m.model end
  end
  return cfg.models[#cfg.models].model
end

-- Factors on the configured weights of models in a model list (the ga
-- bandit sets them from how the children of each model fare): model name
-- -> factor > 0; models not named keep factor 1.
function M.set_model_bias(bias)
  if not state then error("avo.llm.set_model_bias: only available inside 'avo run'", 2) end
  if type(bias) ~= "table" then error("avo.llm.set_model_bias: expected a table", 2) end
  for k, v in pairs(bias) do
    if type(k) ~= "string" or type(v) ~= "number" or v <= 0 then
      error("avo.llm.set_model_bias: expected model name -> number > 0", 2)
    end
  end
  state.model_bias = bias
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
  -- (tool_choice "auto" is every request's default and is not stored, so
  -- that the hashes of calls recorded before it existed stay the same.)
  local choice = opts.tool_choice
  if choice == "auto" or not tools then choice = nil end
  if type(choice) == "table" then choice = { name = choice.name } end
  return { model = model, system = opts.system, messages = messages, tools = tools,
           tool_choice = choice, schema = opts.schema,
           temperature = cfg.temperature, max_tokens = cfg.max_tokens }
end

local openai = {}

function openai.request(c, cfg)
  local messages = array()
  if c.system then messages[1] = { role = "system", content = c.system } end
  local called = {} -- tool_call_id -> name, for tool results sent as user messages
  for _, m in ipairs(c.messages) do
    local out = { role = m.role, content = m.content }
    if m.role == "tool" then out.tool_call_id = m.tool_call_id end
    for _, tc in ipairs(m.tool_calls or {}) do called[tc.id] = tc.name end
    if m.role == "tool" and cfg.tool_results_as_user then
      -- llama-cpp-python's chatml-function-calling renders no tool
      -- messages at all: the model would never see a result.
      out = { role = "user", content = ("[result of %s]\n%s"):format(
        called[m.tool_call_id] or "the tool", m.content or "") }
    end
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
  if cfg.sse then body.stream, body.stream_options = true, { include_usage = true } end
  if c.tools then
    body.tools = array()
    for i, t in ipairs(c.tools) do
      body.tools[i] = { type = "function", ["function"] = { name = t.name,
        description = t.description, parameters = t.parameters } }
    end
    -- Servers of the llama.cpp family ignore `tools` unless tool_choice is
    -- given; "auto" is also every hosted API's default.  A named tool is
    -- OpenAI's {type = "function", function = {name}} (llama-cpp-python's
    -- chatml-function-calling then writes its arguments under a grammar
    -- made from the tool's schema).
    body.tool_choice = c.tool_choice or "auto"
    if type(c.tool_choice) == "table" then
      body.tool_choice = { type = "function", ["function"] = { name = c.tool_choice.name } }
    end
  end
  if c.schema then
    -- An answer constrained to a JSON schema: the llama.cpp family (its
    -- server and llama-cpp-python) takes {type = "json_object", schema}
    -- and turns it into a grammar; OpenAI, vLLM and Ollama take json_schema.
    if cfg.schema_format == "json_object" then
      body.response_format = { type = "json_object", schema = c.schema }
    else
      body.response_format = { type = "json_schema",
        json_schema = { name = "answer", schema = c.schema, strict = true } }
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
    local args, bad = fn.arguments, nil
    if type(args) == "string" then
      local decoded, err = core.json_decode(args ~= "" and args or "{}")
      if type(decoded) ~= "table" then
        -- Not the end of the answer: the caller tells the model (the
        -- agent answers the call with this error) and goes on.
        bad = ("malformed arguments (%s): %s"):format(err or "not a JSON object",
          excerpt(args, 200))
        decoded = {}
      end
      args = decoded
    end
    out.tool_calls[i] = { id = tostring(tc.id or ("call_" .. i)), name = fn.name,
                          arguments = type(args) == "table" and args or {}, error = bad }
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
    body.tool_choice = { type = "auto" }
    if type(c.tool_choice) == "table" then
      body.tool_choice = { type = "tool", name = c.tool_choice.name }
    elseif c.tool_choice == "required" then
      body.tool_choice = { type = "any" }
    elseif c.tool_choice == "none" then
      body.tool_choice = { type = "none" }
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
      if type(block.name) ~= "string" then
        return nil, ("unexpected answer: tool_use block %d has no name"):format(i)
      end
      local bad
      if block.input ~= nil and type(block.input) ~= "table" then
        bad = ("malformed arguments (not a JSON object): %s"):format(
          excerpt(core.json_encode(block.input), 200))
      end
      out.tool_calls[#out.tool_calls + 1] = { id = tostring(block.id or ("toolu_" .. i)),
        name = block.name, arguments = (not bad and block.input) or {}, error = bad }
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
    if type(e) == "table" and type(e.message) == "string" then
      -- llama.cpp's overflow error carries the counts beside the message.
      if math.tointeger(e.n_ctx) then
        return ("%s (n_prompt_tokens %s, n_ctx %d)"):format(e.message,
          tostring(math.tointeger(e.n_prompt_tokens) or "?"), math.tointeger(e.n_ctx))
      end
      return e.message
    end
    if type(e) == "string" then return e end
    if type(doc.message) == "string" then return doc.message end
    if type(doc.detail) == "string" then return doc.detail end
  end
  if type(body) == "string" and body:match("%S") then return excerpt(body, 200) end
  return nil
end

-- The answer document of a streamed (server-sent events) Chat Completions
-- answer: the deltas joined into one choices[1].message, the usage of the
-- last chunk that has one, the finish reason; nil when `body` is not a
-- stream (a server may answer a streamed request with plain JSON).
-- With `cap`, deltas past the first `cap` are dropped (an answer stopped
-- at max_tokens: a chunk is about a token).  Returns doc, deltas joined.
local function join_stream(body, cap)
  -- (An event stream may open with comments, ": ping ..." from
  -- sse-starlette while the prompt is read, and end lines with CR LF.)
  if type(body) ~= "string" or not (body:match("^%s*data:") or
      (body:match("^%s*:") and body:find("\ndata:"))) then
    return nil
  end
  local content, calls, finish, usage, deltas = {}, {}, nil, nil, 0
  for line in body:gmatch("[^\n]+") do
    local data = line:match("^data:%s?(.-)%s*$")
    if data and data ~= "[DONE]" then
      local ev = core.json_decode(data)
      if type(ev) == "table" then
        if type(ev.usage) == "table" then usage = ev.usage end
        local ch = type(ev.choices) == "table" and ev.choices[1]
        local d = type(ch) == "table" and type(ch.delta) == "table" and ch.delta or {}
        if d.content ~= nil or d.tool_calls ~= nil then deltas = deltas + 1 end
        if type(ch) == "table" and not (cap and deltas > cap) then
          if type(ch.finish_reason) == "string" then finish = ch.finish_reason end
          if type(d.content) == "string" then content[#content + 1] = d.content end
          for _, tc in ipairs(type(d.tool_calls) == "table" and d.tool_calls or {}) do
            local i = (math.tointeger(tc.index) or #calls) + 1
            local acc = calls[i] or { type = "function", ["function"] = { arguments = "" } }
            calls[i] = acc
            if type(tc.id) == "string" then acc.id = tc.id end
            local fn = type(tc["function"]) == "table" and tc["function"] or {}
            if type(fn.name) == "string" then acc["function"].name = fn.name end
            if type(fn.arguments) == "string" then
              acc["function"].arguments = acc["function"].arguments .. fn.arguments
            end
          end
        end
      end
    end
  end
  local list = array()
  for i = 1, #calls do list[i] = calls[i] end
  return { choices = { { message = { content = table.concat(content),
             tool_calls = #list > 0 and list or nil }, finish_reason = finish } },
           usage = usage }, math.min(deltas, cap or deltas)
end

-- What a server answered, for a message: the status and the body's first
-- bytes, made inert (they are shown on a terminal).
local function answered_text(status, body)
  local b = tostring(body or "")
  if not b:match("%S") then return ("HTTP %d with an empty body"):format(status) end
  return ('HTTP %d with "%s%s"'):format(status,
    core.inert((b:sub(1, 120):gsub("%s+", " ")), true), #b > 120 and "..." or "")
end

-- Whether a streamed request was answered with one whole JSON document
-- (Content-Type application/json) instead of server-sent events: read_http
-- reads it as an unstreamed answer (join_stream finds no stream in it),
-- never asked again.  By its body, which a stream never opens with "{"
-- (a server may label an empty stream of ": ping" comments JSON).
local function json_answer(result)
  return tostring(result.body or ""):match("^%s*{") ~= nil
end

-- Turn the C client's answer into (response) or (nil, message, kind):
-- kind "refused" when the URL is no chat endpoint (HTTP 404, 405, 501:
-- every call will hear the same), "garbage" when a 2xx answer is no chat
-- completion (not JSON, or not of the provider's shape), else nil.
local function read_http(cfg, result, c, url)
  local body = scrub(result.body, cfg.key)
  local status = result.http_status or 0
  local name = cfg.provider
  if result.status ~= "ok" and result.cancelled then
    return nil, ("%s: call cancelled at the run's time limit (--max-time): %s"):format(name,
      scrub(result.error or "cancelled", cfg.key))
  end
  if result.status ~= "ok" and (status == 404 or status == 405 or status == 501) then
    return nil, ("%s: %s is not a chat endpoint of this provider: it answered %s"):format(name,
      url or cfg.base_url, answered_text(status, body)), "refused"
  end
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
  local doc, jerr, estimated
  local streamed, chunks = join_stream(body, result.stopped and c and c.max_tokens or nil)
  if streamed then
    doc = streamed
    if not result.stopped and type(doc.usage) ~= "table" then
      -- A server that streams without a usage chunk (no support for
      -- stream_options.include_usage): counted here, a chunk a token.
      doc.usage = { prompt_tokens = c and math.ceil(M.request_chars(c) *
        (state.ratios[c.model] or M.DEFAULT_TOKENS_PER_CHAR)) or 0, completion_tokens = chunks }
      estimated = true
    end
    if result.stopped then
      estimated = true
      -- Stopped at the call's max_tokens (the server went on): the answer
      -- is cut there, and its usage counted here (a chunk is a token).
      doc.choices[1].finish_reason = "length"
      doc.usage = { prompt_tokens = c and math.ceil(M.request_chars(c) *
        (state.ratios[c.model] or M.DEFAULT_TOKENS_PER_CHAR)) or 0,
        completion_tokens = chunks }
      if state.log and not state.warned_stopped then
        state.warned_stopped = true
        state.log(("llm: %s went on past max_tokens %d; its answer is cut there (streamed " ..
          "answers are read only up to the call's max_tokens)"):format(cfg.base_url,
          c and c.max_tokens or 0))
      end
    end
  else
    doc, jerr = core.json_decode(body or "")
  end
  if type(doc) ~= "table" then
    return nil, ("%s: %s answered no chat completion (malformed JSON: %s): %s"):format(name,
      url or cfg.base_url, jerr or "not an object", answered_text(status, body)), "garbage"
  end
  local out, perr = SHAPES[cfg.provider].parse(doc)
  if not out then
    -- A completion the model botched (a tool call without a name) is the
    -- model's; a document that is no completion at all is the server's.
    local shaped = cfg.provider == "anthropic" and type(doc.content) == "table" or
      cfg.provider == "openai" and type(doc.choices) == "table" and type(doc.choices[1]) == "table"
      and type(doc.choices[1].message) == "table"
    if shaped then return nil, ("%s: %s"):format(name, perr) end
    return nil, ("%s: %s answered no chat completion (%s): %s"):format(name, url or cfg.base_url,
      perr, answered_text(status, body)), "garbage"
  end
  out.usage_estimated = estimated -- not the server's count: nothing to learn from
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

-- The recorded calls of `path`: by request hash (every run's calls, for
-- resuming) and, for replay, by call key (request.call, "stream#n") of run
-- `run_id` (default: the last run that made calls).
local function load_replay(path, run_id)
  local ar, err = core.archive_read(path)
  if not ar then error("LLM replay: " .. err, 0) end
  local rows, rerr = ar:llm_calls(0)
  ar:close()
  if not rows then error("LLM replay: " .. tostring(rerr), 0) end
  if not run_id then
    for _, row in ipairs(rows) do run_id = math.max(run_id or 0, row.run_id) end
  end
  local by_hash, by_key, models, n_models = {}, {}, {}, 0
  for _, row in ipairs(rows) do
    local q = by_hash[row.request_hash] or { next = 1 }
    q[#q + 1] = row
    by_hash[row.request_hash] = q
    local call = type(row.request) == "table" and row.request.call
    if row.run_id == run_id and type(call) == "string" then by_key[call] = row end
    if row.model and not models[row.model] then
      models[row.model] = true
      n_models = n_models + 1
    end
  end
  local only
  if n_models == 1 then only = next(models) end
  -- The order in which the recorded run's calls were answered (rows are
  -- oldest first; a call asked again after a fault counts where it was
  -- last answered).
  local rank, n = {}, 0
  for _, row in ipairs(rows) do
    local call = type(row.request) == "table" and row.request.call
    if row.run_id == run_id and type(call) == "string" and by_key[call] == row then
      n = n + 1
      rank[call] = n
    end
  end
  return { path = path, by_hash = by_hash, by_key = by_key, only_model = only, calls = #rows,
           run_id = run_id, drifted = 0, rank = rank, done = {}, low = 1, waiting = {} }
end

-- Under replay, a call is answered once every call the recorded run had
-- answered before it is: answers come in the order the recorded server's
-- pace gave them, so tasks that ran side by side (agent lineages) meet as
-- they did.  A call the replay never makes would hold the later ones
-- forever: when every task waits (sched.on_idle), the earliest waiting call
-- goes on.
local function in_recorded_order(rp, call)
  local rank = rp.rank[call]
  while rank and rp.low < rank do
    local ev = sched.event()
    rp.waiting[#rp.waiting + 1] = { rank = rank, ev = ev }
    sched.await(ev)
  end
end

-- Wake every waiting call, earliest first, to look again.
local function wake_in_order(rp)
  local waiting = rp.waiting
  rp.waiting = {}
  table.sort(waiting, function(a, b) return a.rank < b.rank end)
  for _, w in ipairs(waiting) do sched.resolve(w.ev) end
end

local function answered_in_order(rp, call)
  local rank = rp.rank[call]
  if not rank then return end
  rp.done[rank] = true
  while rp.done[rp.low] do rp.low = rp.low + 1 end
  wake_in_order(rp)
end

-- sched.on_idle under replay: the calls before the earliest waiting one
-- will not come; it goes on.
local function replay_idle(rp)
  local first
  for _, w in ipairs(rp.waiting) do first = math.min(first or w.rank, w.rank) end
  if not first then return false end
  rp.low = first
  wake_in_order(rp)
  return true
end

--[[
avo.llm.is_fault(result) -> boolean
Whether the C client's answer `result` is an infrastructure fault: no
answer at all (connection refused or cut, timeout) or a status a retry may
cure (429, 408, 5xx) after every retry, but not a call cancelled at the
run's time limit.
]]
function M.is_fault(result)
  if type(result) ~= "table" or result.status == "ok" or result.cancelled then return false end
  return (result.http_status or 0) == 0 or result.retryable == true
end

-- Whether recorded call `row` failed for the infrastructure (marked so
-- since issue 24; older archives: by its message).
local function recorded_fault(row)
  if row.status == "ok" then return false end
  if type(row.response) == "table" and row.response.infrastructure then return true end
  local e = tostring(row.error or "")
  return e:find(": network error: ", 1, true) ~= nil or e:find(": timed out (", 1, true) ~= nil
    or e:match(": HTTP 5%d%d") ~= nil or e:match(": HTTP 429") ~= nil
end

-- The limit of LLM calls in a row that the infrastructure fails (each after
-- its own retries with backoff): AVO_LLM_FAULT_LIMIT, default 3.
local function fault_limit()
  local n = math.tointeger(tonumber(env("AVO_LLM_FAULT_LIMIT") or ""))
  if n and n >= 1 then return n end
  return 3
end

-- The run stops on a configuration error: the server `err` names is not
-- one the run can talk to (exit 1, status `failed`; `avo resume` asks the
-- calls again once it is fixed).
local function misconfigured(err)
  error({ avo_configuration = ("avo: LLM configuration error: %s; check AVO_LLM_BASE_URL " ..
    "(or base_url), AVO_LLM_PROVIDER and AVO_LLM_MODEL, then `avo resume` asks the calls " ..
    "again"):format(tostring(err)) }, 0)
end

-- Count a call the infrastructure failed; past the limit (in a row) the
-- run stops as an environment failure: exit 3, status `failed`, and `avo
-- resume` asks the failed calls again.  Under --llm-replay the recorded
-- faults are counted but stop nothing (the recorded run decides).  `kind`
-- (see read_http) "refused" stops the run at once, and "garbage" at the
-- limit from a server `url` that never answered with a completion, as a
-- configuration error: no retry or resume would cure either.
local function faulted(err, kind, url)
  if kind == "refused" and not state.replay then misconfigured(err) end
  local t = state.totals
  t.faults = t.faults + 1
  state.totals.fault_streak = state.totals.fault_streak + 1
  if state.log then
    state.log(("llm: infrastructure fault %d in a row (of %d allowed): %s"):format(
      state.totals.fault_streak, fault_limit(), tostring(err)))
  end
  if state.replay or state.totals.fault_streak < fault_limit() then return end
  if kind == "garbage" and url and not state.answered[url] then misconfigured(err) end
  error({ avo_environment = ("avo: the LLM server is out: %d calls in a row failed for the " ..
    "infrastructure, each after its retries (the last: %s); stopped.  Bring the server back " ..
    "and `avo resume` asks these calls again (AVO_LLM_FAULT_LIMIT sets the limit)"):format(
    state.totals.fault_streak, tostring(err)) }, 0)
end

--[[
avo.llm.fault_streak() -> n
LLM calls in a row that the infrastructure failed (0 after an answer).
]]
function M.fault_streak()
  return state and state.totals.fault_streak or 0
end

-- When resuming a run: the answer recorded for the next occurrence of
-- `hash` before the run stopped, or nil once those are used up.
local function resumed_answer(hash)
  local q = state.resume and state.resume.by_hash[hash]
  if not q or q.next > #q then return nil end
  local row = q[q.next]
  q.next = q.next + 1
  -- The infrastructure failed this call (the server was down): ask again.
  if row.status ~= "ok" and recorded_fault(row) then
    state.reasked = (state.reasked or 0) + 1
    return nil
  end
  if row.status ~= "ok" then
    if type(row.response) == "table" and row.response.cut then
      -- Cut at its reserve: charged what it was charged.
      local t = state.totals
      t.calls, t.cut = t.calls + 1, t.cut + 1
      t.input_tokens = t.input_tokens + (row.input_tokens or 0)
      t.output_tokens = t.output_tokens + (row.output_tokens or 0)
      t.cost_usd = t.cost_usd + (row.cost_usd or 0)
      return { err = row.error or "recorded call cut", cut = true }
    end
    return { err = row.error or "recorded call failed" }
  end
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

-- "a, b" for the tool names of a canonical request.
local function tool_names(c)
  local names = {}
  for _, t in ipairs(c.tools or {}) do names[#names + 1] = t.name end
  return table.concat(names, ", ")
end

-- What differs between the recorded request `old` and `c` other than the
-- text of the messages (which holds measured values, so may differ), or nil.
local function setting_difference(old, c)
  local diffs = {}
  local function cmp(name, a, b)
    if a ~= b then
      diffs[#diffs + 1] = ("%s %s recorded, %s now"):format(name, tostring(a), tostring(b))
    end
  end
  cmp("model", old.model, c.model)
  cmp("max_tokens", math.tointeger(old.max_tokens) or old.max_tokens, c.max_tokens)
  cmp("temperature", old.temperature, c.temperature)
  cmp("tools", "[" .. tool_names(old) .. "]", "[" .. tool_names(c) .. "]")
  if old.system ~= c.system then diffs[#diffs + 1] = "the system prompt differs" end
  local om = type(old.messages) == "table" and old.messages or {}
  if #om ~= #c.messages then
    diffs[#diffs + 1] = ("%d messages recorded, %d now"):format(#om, #c.messages)
  else
    for i, m in ipairs(c.messages) do
      if type(om[i]) ~= "table" or om[i].role ~= m.role then
        diffs[#diffs + 1] = ("message %d is from %s, recorded from %s"):format(i, m.role,
          type(om[i]) == "table" and tostring(om[i].role) or "nobody")
        break
      end
    end
  end
  if #diffs == 0 then return nil end
  return table.concat(diffs, "; ")
end

local function diverge(why)
  error({ avo_divergence = "LLM replay diverged: " .. why }, 0)
end

-- The recorded answer of call `c` (key c.call): the recorded run's call at
-- the same place in its own sequence (stream and index), checked against
-- the request hash: a request whose text differs (prompts quote measured
-- timings) is answered all the same, one whose settings differ is a
-- divergence.  Archives recorded before calls had keys are answered by
-- request hash (the last answer again when the recorded run made the
-- request fewer times).
local function replay_answer(hash, c)
  local rp = state.replay
  local row = rp.by_key[c.call]
  if row then
    if row.request_hash ~= hash then
      local diff = setting_difference(row.request, c)
      if diff then
        diverge(("call %s (model %s) differs from the recorded run %d in %s: %s"):format(c.call,
          c.model, rp.run_id, rp.path, diff))
      end
      rp.drifted = rp.drifted + 1
    end
  elseif next(rp.by_key) then
    diverge(("the recorded run %d in %s made no call %s (request %s): the run took " ..
      "another path"):format(rp.run_id, rp.path, c.call, hash))
  else
    local q = rp.by_hash[hash]
    if not q then
      diverge(("no recorded answer for request %s in %s (same script, seed and " ..
        "model as the recorded run?)"):format(hash, rp.path))
    end
    row = q[math.min(q.next, #q)]
    q.next = q.next + 1
  end
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

------------------------------------------------------------------ client

local function client()
  if not state.client then
    local c, err = core.llm(state.run.seed)
    if not c then error("avo.llm: " .. err, 0) end
    state.client = c
    sched.add_source(c, "l")
  end
  return state.client
end

---------------------------------------------------------- server metadata

-- Servers on this machine or a private network: single-user servers
-- (llama.cpp, Ollama, ...) that often serve one request at a time.
local function is_local(url)
  local host = (url:match("^https?://%[([^%]]+)%]") or url:match("^https?://([^/:]+)") or "")
    :lower()
  return host == "localhost" or host == "::1" or host == "0.0.0.0" or host:match("^127%.") ~= nil
    or host:match("^10%.") ~= nil or host:match("^192%.168%.") ~= nil
    or host:match("%.local$") ~= nil
end

-- The context window named in a provider's "too long" error, or nil.
-- Wordings: OpenAI and vLLM "maximum context length is N tokens",
-- llama-cpp-python "exceed context window of N", llama.cpp "context size
-- (N tokens)", Anthropic "N tokens > M maximum".
function M.context_from_error(text)
  if type(text) ~= "string" then return nil end
  local n = text:match("maximum context length is (%d+)") or text:match("context window of (%d+)")
    or text:match("available context size %((%d+) tokens%)") or text:match("context size of (%d+)")
    or text:match("n_ctx[%s=:]+(%d+)") or text:match("%d+ tokens > (%d+) maximum")
  return n and math.tointeger(tonumber(n)) or nil
end

------------------------------------------------------------ token estimates

-- Tokens per character where nothing was measured: 3 characters a token.
-- Code tokenizes denser than prose (SmolLM2's tokenizer gives 3.3-3.5
-- characters a token on C kernels), so the common 4 was 15-20% low.
M.DEFAULT_TOKENS_PER_CHAR = 1 / 3

-- Context window assumed for a self-hosted OpenAI-compatible server that
-- says nothing of its own (llama.cpp's default n_ctx is 4096 to 8192 per
-- version; Ollama's 2048 to 8192), unless the user names one.
M.DEFAULT_WINDOW = 8192

-- What the server's tokenizer is asked to count once (llama.cpp POST
-- /tokenize, llama-cpp-python POST /extras/tokenize): a piece of a kernel,
-- since kernels are most of what the prompts carry.
local TOKENIZE_SAMPLE = [[
// avo:param BM 32 64
#include <stddef.h>
static inline float dot4(const float *a, const float *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}
void sgemm(int M, int N, int K, const float *restrict A, const float *restrict B,
           float *restrict C) {
  for (int i0 = 0; i0 < M; i0 += BM) {
    for (int j = 0; j < N; j++) {
      for (int i = i0; i < i0 + BM && i < M; i++) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += A[(size_t)i * K + k] * B[(size_t)k * N + j];
        C[(size_t)i * N + j] = acc; /* row-major, no transposition */
      }
    }
  }
}
]]

--[[
avo.llm.request_chars{ system = ?, messages = {...}, tools = ? } -> n
The characters of a request as the token estimates count them: texts, tool
calls and tool schemas, and a few characters a message for its framing.
]]
function M.request_chars(req)
  local n = #(req.system or "") + 16
  for _, m in ipairs(req.messages or {}) do
    n = n + #(m.content or "") + 8
    for _, tc in ipairs(m.tool_calls or {}) do
      n = n + #(tc.name or "") + #core.json_encode(tc.arguments or {}) + 16
    end
  end
  if req.tools and #req.tools > 0 then
    for _, t in ipairs(req.tools) do
      n = n + #(t.name or "") + #(t.description or "") +
        #core.json_encode(t.parameters or {}) + 24
    end
  end
  return n
end

-- Remember that `model` counted `tokens` for `chars` characters: the
-- estimates use the densest ratio seen (prompt_tokens of every answer, the
-- server's tokenizer, a "too long" error's count), never a thinner one.
local function learn_ratio(model, tokens, chars)
  if not (model and tokens and tokens > 0 and chars and chars > 0) then return end
  local r = tokens / chars
  if r > (state.ratios[model] or 0) then state.ratios[model] = r end
end

-- What the run knew of its server when a call was made, stored with the
-- call's request (not hashed): the tokens per character learned by model
-- (state.ratios) and the model's context window as the server told it
-- (metadata or an error).  The estimates an operator makes just before a
-- call (its max_tokens, whether to compact) rest on it; answers teach it in
-- the order they arrive, which concurrent tasks make a matter of timing, so
-- a replay uses the recorded knowledge of the call a task is about to
-- make, never what the replay itself has learned so far.
local function knowledge_now(cfg, model)
  local ratios = {}
  for m, r in pairs(state.ratios) do ratios[m] = r end
  local srv = cfg.base_url and state.servers[cfg.provider .. " " .. cfg.base_url]
  return { ratios = ratios, context_tokens = srv and model and srv.contexts[model] or nil }
end

-- Under replay: the recorded knowledge (above) of the next call in
-- `stream`, or in the stream of the current task's last call; nil when
-- there is none (a task before its first call, an archive from before).
local function recorded_knowledge(stream)
  local rp = state.replay
  if not rp then return nil end
  stream = stream or state.task_stream[coroutine.running()]
  if not stream then return nil end
  local row = rp.by_key[("%s#%d"):format(stream, (state.seq[stream] or 0) + 1)]
  local known = row and type(row.request) == "table" and row.request.known
  return type(known) == "table" and known or nil
end

--[[
avo.llm.tokens_per_char{ model = ?, provider = ?, ... } -> ratio, measured
Tokens per character the estimates use for the model the options name:
what its server counted (see learn_ratio) with 5% on top, else
DEFAULT_TOKENS_PER_CHAR; `measured` says which.
]]
function M.tokens_per_char(opts)
  if not state then error("avo.llm.tokens_per_char: only available inside 'avo run'", 2) end
  local cfg = resolve(opts or {})
  local known = recorded_knowledge(opts and opts.stream)
  local ratios = known and type(known.ratios) == "table" and known.ratios or state.ratios
  local worst, measured = nil, true
  for _, m in ipairs(cfg and cfg.models or {}) do
    local r = m.model and ratios[m.model]
    if not r then measured = false break end
    worst = math.max(worst or 0, r * 1.05)
  end
  if not measured or not worst then return M.DEFAULT_TOKENS_PER_CHAR, false end
  return worst, true
end

--[[
avo.llm.estimate_tokens(opts, { system = ?, messages = {...}, tools = ? }) -> n
Tokens the request would take with the model `opts` names: request_chars
times tokens_per_char, rounded up.
]]
function M.estimate_tokens(opts, req)
  return math.ceil(M.request_chars(req) * (M.tokens_per_char(opts)))
end

-- Record what was learned about a server (also read back by --llm-replay).
local function learned(srv, model, what)
  local data = { base_url = srv.base_url, model = model, from = what.from,
                 context_tokens = what.context_tokens, slots = what.slots,
                 tokens_per_char = what.tokens_per_char, family = srv.family }
  if state.event then state.event("llm_server", data) end
  if state.log and what.context_tokens and what.from == "default" then
    state.log(("llm: %s%s says nothing of its context window; assuming %d tokens (set " ..
      "AVO_LLM_CONTEXT_WINDOW or the operator's context_window option if it has more)")
      :format(srv.base_url or "", model and (" model " .. model) or "", what.context_tokens))
  elseif state.log and what.context_tokens then
    state.log(("llm: %s%s has a context window of %d tokens (from %s)"):format(srv.base_url or "",
      model and (" model " .. model) or "", what.context_tokens, what.from))
  end
end

-- Context window in the model entry of a GET /models answer (vLLM
-- max_model_len, LM Studio/OpenRouter context_length), when the list has
-- `model` or only one entry; the second value is llama.cpp's
-- meta.n_ctx_train (what the model was trained with: the server's own
-- window, from /props, may be smaller), the third the entry's owner.
local function models_context(doc, model)
  local data = type(doc) == "table" and type(doc.data) == "table" and doc.data or {}
  local entry
  for _, e in ipairs(data) do
    if type(e) == "table" and e.id == model then entry = e end
  end
  if not entry and #data == 1 then entry = data[1] end
  if type(entry) ~= "table" then return nil end
  local meta = type(entry.meta) == "table" and entry.meta or {}
  local n = entry.max_model_len or entry.context_length or entry.context_window or entry.n_ctx
    or meta.n_ctx
  return math.tointeger(n), math.tointeger(meta.n_ctx_train), entry.owned_by
end

-- What is known of the server of `cfg`: slots, context windows by model,
-- whether it is local.  The first call to an OpenAI-compatible server
-- other than api.openai.com asks it (GET /models and llama.cpp's GET
-- /props, 5 s at most; failures are ignored); other callers wait for that.
local function server_of(cfg, model)
  local key = cfg.provider .. " " .. cfg.base_url
  local srv = state.servers[key]
  if srv then
    while srv.pending do
      local ev = sched.event()
      srv.waiting[#srv.waiting + 1] = ev
      sched.await(ev)
    end
    return srv
  end
  srv = { base_url = cfg.base_url, contexts = {}, waiting = {}, is_local = is_local(cfg.base_url) }
  state.servers[key] = srv
  if cfg.provider ~= "openai" or cfg.base_url == DEFAULT_BASE.openai or
      env("AVO_LLM_DISCOVER") == "0" then
    return srv
  end
  srv.pending = true
  local llm = client()
  local headers = array()
  if cfg.key then headers[1] = "Authorization: Bearer " .. cfg.key end
  local function get(url)
    local ticket = llm:submit{ url = url, method = "GET", headers = headers, timeout = 5,
      connect_timeout = math.min(cfg.connect_timeout, 5), max_attempts = 1 }
    return sched.track(llm, ticket, function(result)
      if result.status ~= "ok" then return false end
      return core.json_decode(result.body or "") or false
    end)
  end
  local function post(url, body)
    local h = array({ "Content-Type: application/json" })
    for _, x in ipairs(headers) do h[#h + 1] = x end
    local ticket = llm:submit{ url = url, headers = h, body = core.json_encode(body),
      timeout = 5, connect_timeout = math.min(cfg.connect_timeout, 5), max_attempts = 1 }
    return sched.track(llm, ticket, function(result)
      if result.status ~= "ok" then return false end
      return core.json_decode(result.body or "") or false
    end)
  end
  local root = cfg.base_url:gsub("/v1$", "")
  local k_models = get(cfg.base_url .. "/models")
  local k_props = get(root .. "/props")
  local k_tok = post(root .. "/tokenize", { content = TOKENIZE_SAMPLE })
  local k_xtok = post(root .. "/extras/tokenize", { input = TOKENIZE_SAMPLE, model = model })
  local models, props = sched.await(k_models), sched.await(k_props)
  local tok, xtok = sched.await(k_tok), sched.await(k_xtok)
  local counted
  for _, doc in ipairs({ tok, xtok }) do
    if not counted and type(doc) == "table" and type(doc.tokens) == "table" and #doc.tokens > 0 then
      counted = #doc.tokens
    end
  end
  if counted and model then
    learn_ratio(model, counted, #TOKENIZE_SAMPLE)
    srv.tokens_per_char = counted / #TOKENIZE_SAMPLE
  end
  local ctx, trained, owner = models_context(models, model)
  if type(owner) == "string" and owner:lower():find("vllm", 1, true) then srv.batching = true end
  local from = ctx and "GET /models"
  -- The llama.cpp family: its server answers /props, llama-cpp-python
  -- /extras/tokenize (M.capabilities).
  if type(props) == "table" then
    srv.family = "llama.cpp"
  elseif type(xtok) == "table" and type(xtok.tokens) == "table" then
    srv.family = "llama-cpp-python"
  end
  if type(props) == "table" then
    local slots = math.tointeger(props.total_slots)
    local gen = type(props.default_generation_settings) == "table"
      and props.default_generation_settings or {}
    local n_ctx = math.tointeger(gen.n_ctx) or math.tointeger(props.n_ctx)
    if slots and slots >= 1 then srv.slots = slots end
    if n_ctx and n_ctx > 0 then ctx, from = n_ctx, "GET /props" end
  end
  if not ctx and trained then ctx, from = trained, "GET /models (n_ctx_train)" end
  if model and ctx then srv.contexts[model] = ctx end
  if ctx or srv.slots or srv.tokens_per_char then
    learned(srv, model, { slots = srv.slots, context_tokens = ctx,
                          from = from or (srv.slots and "GET /props") or "POST tokenize",
                          tokens_per_char = srv.tokens_per_char })
  end
  srv.pending = nil
  local waiting = srv.waiting
  srv.waiting = {}
  for _, ev in ipairs(waiting) do sched.resolve(ev) end
  return srv
end

-- Calls in flight at once to the server of `cfg`: AVO_LLM_CONCURRENCY (or
-- the concurrency option), else the server's slots (llama.cpp /props),
-- else 1 for a local server that does not batch, else 8.
local function concurrency_of(cfg, srv)
  if cfg.concurrency then return cfg.concurrency end
  if srv.slots then return srv.slots end
  if srv.is_local and not srv.batching then return 1 end
  return 8
end

-- A failed call's error may name the context window: remember it.
local function learn_from_error(cfg, model, err, chars)
  local counted = type(err) == "string" and err:match("n_prompt_tokens (%d+)")
  learn_ratio(model, tonumber(counted), chars)
  local n = M.context_from_error(err)
  if not n then return end
  local srv = cfg.base_url and state.servers[cfg.provider .. " " .. cfg.base_url]
  if srv then
    if srv.contexts[model] == n then return end
    srv.contexts[model] = n
    learned(srv, model, { context_tokens = n, from = "an error" })
  else
    if state.replay_contexts[model] == n then return end
    state.replay_contexts[model] = n
    learned({}, model, { context_tokens = n, from = "an error" })
  end
end

--[[
avo.llm.context_window{ model = ?, provider = ?, base_url = ?, max_tokens = ?,
                        context_window = ? } -> tokens | nil, max_tokens, from
The context window of the model the options name, as far as known: from
the server's metadata (asked on first use; the task may yield) or from an
error of an earlier call; under --llm-replay, what the recorded run knew.
The second value is the max_tokens a call with these options asks for, the
third where the window comes from: "the server", "the recorded run", "the
user" (opts.context_window or AVO_LLM_CONTEXT_WINDOW, when the server says
nothing) or "default" (M.DEFAULT_WINDOW, for a self-hosted OpenAI-compatible
server that says nothing and no user setting).
]]
function M.context_window(opts)
  if not state then error("avo.llm.context_window: only available inside 'avo run'", 2) end
  opts = opts or {}
  local cfg, cerr = resolve(opts)
  if not cfg then error("avo.llm: " .. cerr, 2) end
  local model = #cfg.models == 1 and cfg.models[1].model or nil
  local user = opts.context_window or tonumber(env("AVO_LLM_CONTEXT_WINDOW") or "")
  if user ~= nil and (math.type(user) ~= "integer" and not math.tointeger(user) or user < 256) then
    error("avo.llm: context_window (AVO_LLM_CONTEXT_WINDOW) must be an integer >= 256, got " ..
      tostring(user), 2)
  end
  user = user and math.tointeger(user)
  if cfg.provider == "replay" then
    local known = recorded_knowledge(opts.stream)
    if known and math.tointeger(known.context_tokens) then
      return math.tointeger(known.context_tokens), cfg.max_tokens, "the recorded run"
    end
    -- (The server had told nothing by then: what the recorded run assumed
    -- or was told by its user.)
    local n = model and (known and state.replay_assumed[model] or state.replay_contexts[model])
    if n then return n, cfg.max_tokens, "the recorded run" end
    if user then return user, cfg.max_tokens, "the user" end
    return nil, cfg.max_tokens
  end
  if not cfg.base_url then
    if user then return user, cfg.max_tokens, "the user" end
    return nil, cfg.max_tokens
  end
  local srv = server_of(cfg, model)
  local n = model and srv.contexts[model]
  if n then return n, cfg.max_tokens, "the server" end
  if user then
    -- Recorded once, so that --llm-replay and `avo replay` use it too
    -- without the setting.
    srv.user_said = srv.user_said or {}
    if model and srv.user_said[model] ~= user then
      srv.user_said[model] = user
      learned(srv, model, { context_tokens = user, from = "the user" })
    end
    return user, cfg.max_tokens, "the user"
  end
  -- A self-hosted server that says nothing: assume a small window (said
  -- once, and recorded so that --llm-replay assumes it too).
  if cfg.provider == "openai" and cfg.base_url ~= DEFAULT_BASE.openai then
    local key = model or "?"
    if not srv.assumed then srv.assumed = {} end
    if not srv.assumed[key] then
      srv.assumed[key] = true
      learned(srv, model, { context_tokens = M.DEFAULT_WINDOW, from = "default" })
    end
    return M.DEFAULT_WINDOW, cfg.max_tokens, "default"
  end
  return nil, cfg.max_tokens
end

--[[
avo.llm.capabilities{ provider = ?, base_url = ?, model = ? } -> table
How a call may force the model's hand, as far as the server says: family
("llama.cpp" for llama-server, which answers /props; "llama-cpp-python",
which answers /extras/tokenize; nil otherwise), named_tool_choice (whether
tool_choice = {name = TOOL} is understood: not by llama-server, which takes
only "auto", "required" and "none"), schema (whether an answer may be
constrained to a JSON schema, opts.schema: llama.cpp family and OpenAI-
compatible servers; not Anthropic).  Under --llm-replay: what the recorded
run found (event llm_server, family).  The task may yield (the server is
asked on first use).
]]
function M.capabilities(opts)
  if not state then error("avo.llm.capabilities: only available inside 'avo run'", 2) end
  local cfg, cerr = resolve(opts or {})
  if not cfg then error("avo.llm: " .. cerr, 2) end
  if cfg.provider == "replay" then
    -- As the recorded run found its server, so that forced calls go the
    -- same way (the requests, and so their hashes, are the same).
    local family = state.replay_family
    return { family = family, named_tool_choice = family ~= "llama.cpp", schema = true }
  end
  if not cfg.base_url then
    return { named_tool_choice = true, schema = cfg.provider ~= "anthropic" }
  end
  if cfg.provider ~= "openai" then return { named_tool_choice = true, schema = false } end
  local srv = server_of(cfg, #cfg.models == 1 and cfg.models[1].model or nil)
  return { family = srv.family, named_tool_choice = srv.family ~= "llama.cpp", schema = true }
end

-------------------------------------------------------------- reservations

-- Why no more calls are made when the run's own budget (not the LLM's) is
-- spent: which limit stopped it.
local function stopping()
  local what = state.stop_reason and state.stop_reason() or "its budget"
  return ("the run is stopping (%s); no LLM call is made"):format(what)
end

--[[
avo.llm.is_refusal(message) -> boolean
Whether a chat() failure message is a refusal (no call was made: an LLM
budget is spent or the run is stopping), not a failed call.
]]
function M.is_refusal(message)
  message = tostring(message or "")
  return message:find("^LLM budget exhausted") ~= nil
    or message:find("^the run is stopping") ~= nil
end

-- Refuse a call for `why` (logged once per run).
local function refuse(why)
  if not state.refused and state.log then
    state.log("llm: " .. why .. (why:find("no LLM call", 1, true) and "" or "; no more calls"))
  end
  state.refused = true
  return nil, why
end

-- Seconds left of the run's --max-time, or nil without one.
local function time_left()
  local r = state.run
  if not r.max_seconds or not r.started then return nil end
  return math.max(0, r.max_seconds - (core.monotonic() - r.started))
end

-- Whether a call to provider key `pkey` must wait: the provider has
-- `limit` calls in flight, or the calls in flight have reserved what is
-- left of --max-tokens / --max-usd (each reserves its worst case, prompt
-- estimate + max_tokens, until its answer settles it).  With nothing in
-- flight a call always goes, so the budgets are overshot by at most one
-- call's worth.
local function must_wait(pkey, limit)
  if limit and (state.flight[pkey] or 0) >= limit then return true end
  local t, r, res = state.totals, state.run, state.reserved
  if res.calls == 0 then return false end
  if r.max_tokens and t.input_tokens + t.output_tokens + res.tokens >= r.max_tokens then
    return true
  end
  if r.max_usd and t.cost_usd + res.usd >= r.max_usd then return true end
  return false
end

-- Wait (the task yields) until call `c` may go, then reserve its worst
-- case.  Returns the reservation (release it when the answer arrives), or
-- nil and why the call is refused.
local function acquire(cfg, c)
  local pkey = cfg.provider .. " " .. cfg.base_url
  local limit = concurrency_of(cfg, server_of(cfg, c.model))
  local ratio = state.ratios[c.model]
  local prompt = math.ceil(M.request_chars(c) * (ratio and ratio * 1.05 or M.DEFAULT_TOKENS_PER_CHAR))
  local slot = { pkey = pkey, tokens = prompt + c.max_tokens,
                 usd = cost_of(c.model, prompt, c.max_tokens) }
  while true do
    -- (exhausted_now: a check that the replay of a stopped run need not
    -- make in step; how often a call waits here depends on timing.)
    local check = state.exhausted_now or state.exhausted
    local why = budget_message() or (check and check() and stopping())
    if why then return refuse(why) end
    if not must_wait(pkey, limit) then break end
    local ev = sched.event()
    state.gate[#state.gate + 1] = ev
    sched.await(ev)
  end
  state.flight[pkey] = (state.flight[pkey] or 0) + 1
  slot.since = core.monotonic()
  state.in_flight[slot] = true
  local res = state.reserved
  res.calls, res.tokens, res.usd = res.calls + 1, res.tokens + slot.tokens, res.usd + slot.usd
  return slot
end

-- Give back a reservation and let every waiting call look again.
local function release(slot)
  state.flight[slot.pkey] = state.flight[slot.pkey] - 1
  state.in_flight[slot] = nil
  local res = state.reserved
  res.calls, res.tokens, res.usd = res.calls - 1, res.tokens - slot.tokens, res.usd - slot.usd
  local gate = state.gate
  state.gate = {}
  for _, ev in ipairs(gate) do sched.resolve(ev) end
end

-- Account one call, record it, and return the value chat() returns.
-- `cut`, for a call cut at its reserve (see cut_after): the tokens it is
-- charged ({input_tokens, output_tokens}); it is counted apart from the
-- failed calls.
local function settle(provider, c, hash, resp, err, latency, attempts, cost_override, fault, cut)
  local t = state.totals
  local usage = resp and resp.usage or cut or { input_tokens = 0, output_tokens = 0 }
  local cost = cost_override or cost_of(c.model, usage.input_tokens, usage.output_tokens)
  t.calls = t.calls + 1
  if cut then
    t.cut = t.cut + 1
  elseif not resp then
    t.failed = t.failed + 1
  end
  t.input_tokens = t.input_tokens + usage.input_tokens
  t.output_tokens = t.output_tokens + usage.output_tokens
  t.cost_usd = t.cost_usd + cost
  t.latency_s = t.latency_s + (latency or 0)
  local stored = resp and { content = resp.content, tool_calls = resp.tool_calls,
                            stop_reason = resp.stop_reason } or nil
  -- A call the infrastructure failed is marked so that `avo resume` asks
  -- it again instead of answering with the failure.
  if fault then stored = { infrastructure = true } end
  if cut then stored = { cut = true } end
  local id, rerr = state.run.archive:llm_record(state.run.run_id, {
    provider = provider, model = c.model, request_hash = hash, request = c,
    response = stored, status = resp and "ok" or "error", error = err,
    input_tokens = usage.input_tokens, output_tokens = usage.output_tokens,
    cost_usd = cost, latency_s = latency or 0, attempts = attempts or 1,
  })
  if not id then error("avo: cannot record an LLM call in the archive: " .. rerr, 0) end
  if not resp then return { err = err, fault = fault, cut = cut and true or nil } end
  resp.model, resp.provider, resp.cost_usd = c.model, provider, cost
  resp.latency_s, resp.attempts, resp.call_id = latency or 0, attempts or 1, id
  resp.message = { role = "assistant", content = resp.content,
                   tool_calls = #resp.tool_calls > 0 and resp.tool_calls or nil }
  return { resp = resp }
end

---------------------------------------------------------------- the call

-- Conservative rates for a server whose speed nothing has shown yet
-- (AVO_LLM_MIN_TOKENS_PER_S, AVO_LLM_MIN_PROMPT_TOKENS_PER_S): a CPU
-- server running a small model writes a few tokens a second.
M.MIN_TOKENS_PER_S = 2
M.MIN_PROMPT_TOKENS_PER_S = 50

local function rate_setting(name, default)
  local v = tonumber(env(name) or "")
  if v and v > 0 then return v end
  return default
end

-- Learn server `srv`'s output rate from an answer: its output tokens over
-- its latency less the prompt's time at the prompt rate.  Short answers
-- (their time is mostly the prompt's) teach nothing.
local function learn_rate(srv, resp, latency)
  if not srv or not resp or not latency or latency <= 0 then return end
  local out = resp.usage.output_tokens or 0
  if out < 16 then return end
  local prompt_s = (resp.usage.input_tokens or 0) /
    rate_setting("AVO_LLM_MIN_PROMPT_TOKENS_PER_S", M.MIN_PROMPT_TOKENS_PER_S)
  local gen_s = math.max(latency - prompt_s, latency / 4)
  srv.rate_tokens = (srv.rate_tokens or 0) + out
  srv.rate_seconds = (srv.rate_seconds or 0) + gen_s
end

-- Seconds after which an unstreamed call `c` to server `srv` is cut at its
-- reserve, and the output rate that bound comes from; nil when the call is
-- bounded otherwise (streamed answers are read up to max_tokens; a server
-- that honours max_tokens stops there itself).  Its prompt (`prompt`
-- tokens) at the prompt rate, its max_tokens at the server's observed
-- output rate (the conservative default before any answer showed it), a
-- quarter more and 2 s for the unevenness of the server's pace.
local function cut_after(cfg, srv, c, prompt)
  if cfg.sse or not srv or not (srv.no_tool_stream or srv.ignores_max_tokens) then return nil end
  local rate = srv.rate_seconds and srv.rate_seconds > 0 and srv.rate_tokens / srv.rate_seconds
    or rate_setting("AVO_LLM_MIN_TOKENS_PER_S", M.MIN_TOKENS_PER_S)
  local prompt_s = prompt / rate_setting("AVO_LLM_MIN_PROMPT_TOKENS_PER_S",
    M.MIN_PROMPT_TOKENS_PER_S)
  return (prompt_s + c.max_tokens / rate) * 1.25 + 2, rate
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
  check_tool_choice(opts.tool_choice, opts.tools)
  if opts.schema ~= nil and (type(opts.schema) ~= "table" or opts.tools) then
    error("avo.llm.chat: 'schema' must be a JSON schema table, in a request without tools", 2)
  end
  if opts.system ~= nil and type(opts.system) ~= "string" then
    error("avo.llm.chat: 'system' must be a string", 2)
  end
  if opts.stream ~= nil and type(opts.stream) ~= "string" then
    error("avo.llm.chat: 'stream' must be a string", 2)
  end
  local cfg, cerr = resolve(opts)
  if not cfg then error("avo.llm: " .. cerr, 2) end

  local why = budget_message() or (state.exhausted and state.exhausted() and stopping())
  if why then return refuse(why) end

  -- The call's place in the run: its stream (the caller's, e.g. the
  -- operator's random stream, else "main") and its index there.  Replay
  -- finds answers by it; it is stored with the request but not hashed.
  local stream = opts.stream or "main"
  local n = (state.seq[stream] or 0) + 1
  state.seq[stream] = n
  local call = ("%s#%d"):format(stream, n)
  local model = pick_model(cfg, stream)
  if cfg.provider == "replay" then
    -- The recorded call's model, when it is one the run may use.
    local row = state.replay.by_key[call]
    local recorded = row and type(row.request) == "table" and row.request.model
    local allowed = model == false
    for _, m in ipairs(cfg.models) do allowed = allowed or m.model == recorded end
    if recorded and allowed then model = recorded end
    if model == false then model = "?" end
  end
  if opts.schema and cfg.provider == "anthropic" then
    error("avo.llm.chat: 'schema' (a JSON-constrained answer) needs an OpenAI-compatible " ..
      "provider; with Anthropic force a tool (tool_choice) instead", 2)
  end
  local c = canonical(opts, model, cfg)
  local hash = core.hash(core.json_encode(c))
  c.call = call
  -- (What the estimates before this call knew; a replay stores the
  -- recorded run's again.)
  if cfg.provider == "replay" then
    local row = state.replay.by_key[call]
    c.known = row and type(row.request) == "table" and row.request.known or nil
  else
    c.known = knowledge_now(cfg, model)
  end
  state.task_stream[coroutine.running()] = stream

  local value
  local resumed = resumed_answer(hash)
  if resumed then
    -- Answered before the run was killed: use the recorded answer (already
    -- in the archive, so not recorded again), and keep a scripted
    -- provider's position in step with the original run.
    if cfg.provider == "scripted" then scripted_answer(c) end
    value = resumed
    if value.resp and value.resp.provider ~= "scripted" then
      learn_ratio(c.model, value.resp.usage.input_tokens, M.request_chars(c))
    end
  elseif cfg.provider == "replay" then
    in_recorded_order(state.replay, call)
    local resp, err, row = replay_answer(hash, c)
    answered_in_order(state.replay, call)
    if not resp then learn_from_error(cfg, c.model, err, M.request_chars(c)) end
    -- What the recorded server counted (a scripted answer's usage is made up).
    if resp and row.provider ~= "scripted" then
      learn_ratio(c.model, resp.usage.input_tokens, M.request_chars(c))
    end
    -- A call the recorded run cut at its reserve is cut again, charged
    -- what it was charged.
    local cut = not resp and type(row.response) == "table" and row.response.cut and
      { input_tokens = row.input_tokens or 0, output_tokens = row.output_tokens or 0 } or nil
    value = settle("replay", c, hash, resp, err, row.latency_s, row.attempts, row.cost_usd,
      not resp and not cut and recorded_fault(row), cut)
  elseif cfg.provider == "scripted" then
    local resp, err = scripted_answer(c)
    value = settle("scripted", c, hash, resp, err, 0, 1)
  else
    local srv = state.servers[cfg.provider .. " " .. cfg.base_url]
    -- llama-cpp-python's chatml-function-calling cannot stream a request
    -- with tools and tool_choice "auto" (it answers 200 with a stream that
    -- has no event, maybe a ping comment): such a server gets its tool
    -- requests unstreamed.
    -- A named tool_choice streams there (its arguments are written under
    -- a grammar, without the "auto" choice's first pass).
    if cfg.sse and c.tools and srv and srv.no_tool_stream and type(c.tool_choice) ~= "table" then
      cfg.sse = false
    end
    -- Tool results as user messages (AVO_LLM_TOOL_RESULTS=user|tool): by
    -- default for llama-cpp-python, whose chatml-function-calling format
    -- (the one that yields tool calls) shows the model no tool message.
    local as = env("AVO_LLM_TOOL_RESULTS")
    if as == "user" or (as ~= "tool" and srv and srv.family == "llama-cpp-python") then
      cfg.tool_results_as_user = true
      if srv and not srv.said_tool_results and state.log and as ~= "user" then
        srv.said_tool_results = true
        state.log(("llm: %s is llama-cpp-python: tool results go to the model as user messages " ..
          "(its chatml-function-calling format shows no tool messages; " ..
          "AVO_LLM_TOOL_RESULTS=tool sends them as tool messages)"):format(cfg.base_url))
      end
    end
    if c.schema then
      srv = server_of(cfg, model)
      cfg.schema_format = srv.family and "json_object" or "json_schema"
    end
    while not value do
      local slot, serr = acquire(cfg, c)
      if not slot then return nil, serr end
      srv = state.servers[cfg.provider .. " " .. cfg.base_url]
      -- An unstreamed call to a server that ignores max_tokens has a
      -- deadline from its reserve instead (within --max-time): cut there,
      -- it is charged its reserve, so "budget plus one call" holds.
      local prompt = slot.tokens - c.max_tokens
      local cut_s, rate = cut_after(cfg, srv, c, prompt)
      local left = time_left()
      local own = cut_s and (not left or cut_s < left)
      local url, headers, body = SHAPES[cfg.provider].request(c, cfg)
      local llm = client()
      local ticket = llm:submit{
        url = url, headers = headers, body = body, timeout = cfg.timeout,
        connect_timeout = cfg.connect_timeout, max_attempts = cfg.retries + 1,
        backoff = cfg.backoff, deadline = own and cut_s or left,
        -- A streamed answer is read up to max_tokens (a chunk is about a
        -- token; a few more for the role, finish and usage chunks; what is
        -- read past max_tokens is dropped).
        stream_limit = cfg.sse and (c.max_tokens + 4) or nil,
      }
      local streamed = cfg.sse
      -- Settled when the answer arrives, so it is recorded even if the
      -- waiting task has died meanwhile.
      local key = sched.track(llm, ticket, function(result)
        -- (No event at all: an empty body, or only ": ping" comments.)
        local b = tostring(result.body or "")
        -- (A whole JSON completion instead of a stream is used as is.)
        if streamed and c.tools and result.status == "ok" and not b:match("^%s*data:")
            and not b:find("\ndata:", 1, true) and not json_answer(result) then
          release(slot)
          return { plain_again = true }
        end
        if own and result.status ~= "ok" and result.cancelled then
          local why = srv.no_tool_stream and "the server does not stream tool calls and " ..
            "ignores max_tokens" or "the server ignores max_tokens and this call is unstreamed"
          local msg = ("llm: %s cut a call at its reserve of %d tokens (~%.0f s at %.1f " ..
            "tok/s): %s"):format(cfg.base_url, c.max_tokens, cut_s, rate, why)
          if state.log and not srv.said_cut then
            srv.said_cut = true
            state.log(msg)
          end
          local v = settle(cfg.provider, c, hash, nil, (msg:gsub("^llm: ", cfg.provider .. ": ")),
            result.latency_s, result.attempts, nil, false,
            { input_tokens = prompt, output_tokens = c.max_tokens })
          release(slot)
          return v
        end
        local resp, err, kind = read_http(cfg, result, c, url)
        if not resp then learn_from_error(cfg, c.model, err, M.request_chars(c)) end
        if resp and not resp.usage_estimated then
          learn_ratio(c.model, resp.usage.input_tokens, M.request_chars(c))
        end
        if resp and srv then
          if result.stopped or resp.usage.output_tokens > c.max_tokens + 8 then
            srv.ignores_max_tokens = true
          end
          learn_rate(srv, resp, result.latency_s)
        end
        -- A URL that is no chat endpoint, an answer that is no completion:
        -- the infrastructure's, asked again by `avo resume`.
        local v = settle(cfg.provider, c, hash, resp, err, result.latency_s, result.attempts,
          nil, not resp and (M.is_fault(result) or kind ~= nil))
        v.kind = kind
        release(slot)
        return v
      end, true) -- awaited once, just below: the answer is not kept after
      value = sched.await(key)
      if value.plain_again then
        value = nil
        cfg.sse = false
        if srv then srv.no_tool_stream = true end
        if state.log then
          state.log(("llm: %s streams no answer to a request with tools; such requests go " ..
            "unstreamed (such a server ignores their max_tokens: each is cut at its reserve, " ..
            "timed at the server's observed pace)"):format(cfg.base_url))
        end
      end
    end
  end
  if value.fault then
    faulted(value.err, value.kind, cfg.base_url)
  elseif value.resp then
    state.totals.fault_streak = 0
    if cfg.base_url then state.answered[cfg.base_url] = true end
  end
  if value.err then return nil, value.err end
  return value.resp
end

-------------------------------------------------------------- run hooks

-- Totals of the current run: calls, failed, cut (cut at their reserve:
-- not failed, not faults), faults (failed for the
-- infrastructure), fault_streak (the last calls, in a row), input_tokens,
-- output_tokens, cost_usd, latency_s.
function M.totals()
  return state and state.totals or nil
end

-- HTTP calls in flight, calls waiting for a slot or budget, and the age in
-- seconds of the oldest call in flight (0 when none).
function M.in_flight()
  if not state then return 0, 0, 0 end
  local n, oldest = 0, nil
  for slot in pairs(state.in_flight) do
    n = n + 1
    oldest = math.min(oldest or slot.since, slot.since)
  end
  return n, #state.gate, oldest and (core.monotonic() - oldest) or 0
end

-- The LLM part of the status line: totals, calls in flight with the oldest
-- one's age and the tokens streamed so far, calls waiting, and the outcomes (avo.outcomes()) of operators
-- that had answers rejected or calls fail.  nil when there is nothing.
function M.status_text(outcomes)
  if not state then return nil end
  local t, parts = state.totals, {}
  if t.calls > 0 then
    local odd = {}
    if t.failed > 0 then odd[#odd + 1] = ("%d failed"):format(t.failed) end
    if t.cut > 0 then odd[#odd + 1] = ("%d cut at their reserve"):format(t.cut) end
    parts[1] = ("llm %d calls%s, %d tok, $%.4f"):format(t.calls,
      #odd > 0 and (" (%s)"):format(table.concat(odd, ", ")) or "",
      t.input_tokens + t.output_tokens, t.cost_usd)
  end
  local n, waiting, age = M.in_flight()
  if n > 0 then
    -- Answers streamed (self-hosted servers) show their tokens as they come.
    local streamed = state.client and state.client:streamed() or 0
    parts[#parts + 1] = ("%d in flight (oldest %ds%s)"):format(n, math.floor(age),
      streamed > 0 and (", %d tok streamed"):format(streamed) or "")
  end
  if waiting > 0 then parts[#parts + 1] = ("%d waiting"):format(waiting) end
  for _, o in ipairs(outcomes or {}) do
    if o.rejected + o.call_failed + (o.refused or 0) > 0 then
      parts[#parts + 1] = ("%s %d applied/%d rejected/%d failed%s"):format(o.operator, o.applied,
        o.rejected, o.call_failed, (o.refused or 0) > 0 and ("/%d refused"):format(o.refused) or "")
    end
  end
  local keys = {}
  for k in pairs(state.progress) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = state.progress[k] end
  if #parts == 0 then return nil end
  return table.concat(parts, ", ")
end

--[[
avo.llm.set_progress(key, text | nil)
A part of the status line for the LLM work of `key` (the agent: its
lineage's step, turn, tool calls and errors); nil removes it.
]]
function M.set_progress(key, text)
  if state then state.progress[key] = text end
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
    run = run, exhausted = hooks.exhausted, exhausted_now = hooks.exhausted_now, log = hooks.log,
    stop_reason = hooks.stop_reason, progress = {},
    warned = {},
    -- faults: calls the infrastructure failed; fault_streak: in a row
    totals = { calls = 0, failed = 0, cut = 0, faults = 0, fault_streak = 0, input_tokens = 0,
               output_tokens = 0, cost_usd = 0, latency_s = 0 },
    model_rngs = {}, -- stream -> random stream of its model draws
    model_bias = {}, -- model -> factor on its weight (set_model_bias)
    reserved = { calls = 0, tokens = 0, usd = 0 }, -- worst cases of the calls in flight
    flight = {}, -- provider key -> calls in flight
    gate = {},   -- events of the calls waiting in acquire
    in_flight = {}, -- reservations of the calls in flight (set), with .since
    seq = {},    -- stream -> calls made in it
    servers = {}, -- "provider base_url" -> what is known of it (server_of)
    replay_contexts = {}, -- model -> context window, under --llm-replay
    replay_assumed = {}, -- model -> window the recorded run assumed or was told by its user
    task_stream = setmetatable({}, { __mode = "k" }), -- task -> stream of its last call
    ratios = {}, -- model -> the most tokens per character its server counted
    answered = {}, -- base_url -> true once it gave a chat completion
    event = hooks.event,
  }
  load_user_prices()
  local replay = run.llm_replay or env("AVO_LLM_REPLAY")
  if replay then
    state.replay = load_replay(replay, run.llm_replay_run)
    local rp = state.replay
    sched.on_idle(function() return replay_idle(rp) end)
    -- What the recorded run learned from its servers' metadata (what it
    -- learned from errors is learned again when those are replayed).
    local ar = core.archive(replay)
    for _, e in ipairs(ar and ar:events(state.replay.run_id or 0, "llm_server") or {}) do
      local d = e.data or {}
      if d.model and d.context_tokens and d.from ~= "an error" then
        state.replay_contexts[d.model] = d.context_tokens
        if d.from == "default" or d.from == "the user" then
          state.replay_assumed[d.model] = d.context_tokens
        end
      end
      if d.model and type(d.tokens_per_char) == "number" then
        learn_ratio(d.model, d.tokens_per_char, 1)
      end
      if type(d.family) == "string" then state.replay_family = d.family end
    end
    if ar then ar:close() end
  end
  if run.llm_resume then state.resume = load_replay(run.llm_resume) end
end

-- Called by avo._end: record the totals and close the client.
function M._end()
  if not state then return end
  local t = state.totals
  if t.calls > 0 and state.run.archive then
    state.run.archive:event(state.run.run_id, "llm_totals", t)
  end
  if state.replay and state.replay.drifted > 0 and state.log then
    state.log(("llm replay: %d calls answered by their place in the run although their " ..
      "prompts differ from the recorded ones (measured values)"):format(state.replay.drifted))
  end
  if state.client then state.client:close() end
  if state.replay then sched.on_idle(nil) end
  state = nil
end

return M
