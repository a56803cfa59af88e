-- avo.llm.families — server families: each provider's request and answer, HTTP results read.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local S = require "avo.llm.state"
local config = require "avo.llm.config"

local M = S.api
local array = config.array
local excerpt = config.excerpt
local scrub = config.scrub

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
-- (In C, core/sse.c: a server streams about a token per event, and the
-- Lua reading of thousands of small documents was most of an LLM
-- candidate's engine time on a fast local server.)
local function join_stream(body, cap)
  if type(body) ~= "string" then return nil end
  return core.sse_join(body, cap)
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
        (S.current.ratios[c.model] or M.DEFAULT_TOKENS_PER_CHAR)) or 0, completion_tokens = chunks }
      estimated = true
    end
    if result.stopped then
      estimated = true
      -- Stopped at the call's max_tokens (the server went on): the answer
      -- is cut there, and its usage counted here (a chunk is a token).
      doc.choices[1].finish_reason = "length"
      doc.usage = { prompt_tokens = c and math.ceil(M.request_chars(c) *
        (S.current.ratios[c.model] or M.DEFAULT_TOKENS_PER_CHAR)) or 0,
        completion_tokens = chunks }
      if S.current.log and not S.current.warned_stopped then
        S.current.warned_stopped = true
        S.current.log(("llm: %s went on past max_tokens %d; its answer is cut there (streamed " ..
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

return {
  SHAPES = SHAPES,
  canonical = canonical,
  json_answer = json_answer,
  read_http = read_http,
}
