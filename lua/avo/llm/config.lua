-- avo.llm.config — prices, validation of chat options and the configuration of a call.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local S = require "avo.llm.state"

local M = S.api

M.ANTHROPIC_VERSION = "2023-06-01"

local DEFAULT_BASE = {
  openai = "https://api.openai.com/v1",
  anthropic = "https://api.anthropic.com",
}
local KEY_FALLBACK = { openai = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY" }
local PROVIDERS = { openai = true, anthropic = true, scripted = true }


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
    if S.current and S.current.run.max_usd and not S.current.warned[model] then
      S.current.warned[model] = true
      if S.current.log then
        S.current.log(("llm: no price for model '%s' in avo.prices; its calls count as $0"):format(
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
  local replay = S.current and S.current.replay
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
  local bias = S.current.model_bias
  local function weight(m) return (m.weight or 1) * (bias[m.model] or 1) end
  local total = 0
  for _, m in ipairs(cfg.models) do total = total + weight(m) end
  if total <= 0 then error("avo.llm: every model weight is zero", 0) end
  local rng = S.current.model_rngs[stream]
  if not rng then
    rng = core.rng(S.current.run.seed, "llm.models/" .. stream)
    S.current.model_rngs[stream] = rng
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
  if not S.current then error("avo.llm.set_model_bias: only available inside 'avo run'", 2) end
  if type(bias) ~= "table" then error("avo.llm.set_model_bias: expected a table", 2) end
  for k, v in pairs(bias) do
    if type(k) ~= "string" or type(v) ~= "number" or v <= 0 then
      error("avo.llm.set_model_bias: expected model name -> number > 0", 2)
    end
  end
  S.current.model_bias = bias
end

return {
  DEFAULT_BASE = DEFAULT_BASE,
  array = array,
  check_messages = check_messages,
  check_tool_choice = check_tool_choice,
  check_tools = check_tools,
  cost_of = cost_of,
  env = env,
  excerpt = excerpt,
  load_user_prices = load_user_prices,
  pick_model = pick_model,
  resolve = resolve,
  scrub = scrub,
}
