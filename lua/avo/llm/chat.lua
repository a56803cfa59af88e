-- avo.llm.chat — one call, answered by resume, replay, the script or HTTP.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local sched = require "avo.sched"
local S = require "avo.llm.state"
local config = require "avo.llm.config"
local families = require "avo.llm.families"
local transport = require "avo.llm.transport"
local faults = require "avo.llm.faults"
local replay = require "avo.llm.replay"
local server = require "avo.llm.server"
local budget = require "avo.llm.budget"

local M = S.api
local check_messages = config.check_messages
local check_tool_choice = config.check_tool_choice
local check_tools = config.check_tools
local env = config.env
local pick_model = config.pick_model
local resolve = config.resolve
local SHAPES = families.SHAPES
local canonical = families.canonical
local json_answer = families.json_answer
local read_http = families.read_http
local client = transport.client
local faulted = faults.faulted
local recorded_fault = faults.recorded_fault
local answered_in_order = replay.answered_in_order
local in_recorded_order = replay.in_recorded_order
local replay_answer = replay.replay_answer
local resumed_answer = replay.resumed_answer
local scripted_answer = replay.scripted_answer
local knowledge_now = server.knowledge_now
local learn_from_error = server.learn_from_error
local learn_ratio = server.learn_ratio
local server_of = server.server_of
local acquire = budget.acquire
local budget_message = budget.budget_message
local cut_after = budget.cut_after
local learn_rate = budget.learn_rate
local refuse = budget.refuse
local release = budget.release
local settle = budget.settle
local stopping = budget.stopping
local time_left = budget.time_left

-- The call's place in the run: its stream (the caller's, e.g. the
-- operator's random stream, else "main") and its index there.  Replay
-- finds answers by it; it is stored with the request but not hashed.
local function place(opts)
  local stream = opts.stream or "main"
  local n = (S.current.seq[stream] or 0) + 1
  S.current.seq[stream] = n
  return stream, ("%s#%d"):format(stream, n)
end

-- The model of call `call`: drawn from the configuration, or under replay
-- the recorded call's model, when it is one the run may use.
local function model_of(cfg, stream, call)
  local model = pick_model(cfg, stream)
  if cfg.provider == "replay" then
    local row = S.current.replay.by_key[call]
    local recorded = row and type(row.request) == "table" and row.request.model
    local allowed = model == false
    for _, m in ipairs(cfg.models) do allowed = allowed or m.model == recorded end
    if recorded and allowed then model = recorded end
    if model == false then model = "?" end
  end
  return model
end

-- Answered before the run was killed: use the recorded answer `resumed`
-- (already in the archive, so not recorded again), and keep a scripted
-- provider's position in step with the original run.
local function resumed_value(cfg, c, resumed)
  if cfg.provider == "scripted" then scripted_answer(c) end
  if resumed.resp and resumed.resp.provider ~= "scripted" then
    learn_ratio(c.model, resumed.resp.usage.input_tokens, M.request_chars(c))
  end
  return resumed
end

-- Call `c` answered from the recorded run, in the recorded order.
local function replayed_value(cfg, c, hash, call)
  in_recorded_order(S.current.replay, call)
  local resp, err, row = replay_answer(hash, c)
  answered_in_order(S.current.replay, call)
  if not resp then learn_from_error(cfg, c.model, err, M.request_chars(c)) end
  -- What the recorded server counted (a scripted answer's usage is made up).
  if resp and row.provider ~= "scripted" then
    learn_ratio(c.model, resp.usage.input_tokens, M.request_chars(c))
  end
  -- A call the recorded run cut at its reserve is cut again, charged
  -- what it was charged.
  local cut = not resp and type(row.response) == "table" and row.response.cut and
    { input_tokens = row.input_tokens or 0, output_tokens = row.output_tokens or 0 } or nil
  return settle("replay", c, hash, resp, err, row.latency_s, row.attempts, row.cost_usd,
    not resp and not cut and recorded_fault(row), cut)
end

-- How call `c` goes to its server: what the server is known to handle
-- decides streaming, the form of tool results and of a JSON answer.
local function http_setup(cfg, c, model)
  local srv = S.current.servers[cfg.provider .. " " .. cfg.base_url]
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
    if srv and not srv.said_tool_results and S.current.log and as ~= "user" then
      srv.said_tool_results = true
      S.current.log(("llm: %s is llama-cpp-python: tool results go to the model as user messages " ..
        "(its chatml-function-calling format shows no tool messages; " ..
        "AVO_LLM_TOOL_RESULTS=tool sends them as tool messages)"):format(cfg.base_url))
    end
  end
  if c.schema then
    srv = server_of(cfg, model)
    cfg.schema_format = srv.family and "json_object" or "json_schema"
  end
end

-- The value of an HTTP call cut at its reserve (`a`: the attempt).
local function cut_value(cfg, c, hash, a, result)
  local srv = a.srv
  local why = srv.no_tool_stream and "the server does not stream tool calls and " ..
    "ignores max_tokens" or "the server ignores max_tokens and this call is unstreamed"
  local msg = ("llm: %s cut a call at its reserve of %d tokens (~%.0f s at %.1f " ..
    "tok/s): %s"):format(cfg.base_url, c.max_tokens, a.cut_s, a.rate, why)
  if S.current.log and not srv.said_cut then
    srv.said_cut = true
    S.current.log(msg)
  end
  return settle(cfg.provider, c, hash, nil, (msg:gsub("^llm: ", cfg.provider .. ": ")),
    result.latency_s, result.attempts, nil, false,
    { input_tokens = a.prompt, output_tokens = c.max_tokens })
end

-- Settle attempt `a` of call `c` when its answer `result` arrives (so it
-- is recorded even if the waiting task has died meanwhile).
local function http_settled(cfg, c, hash, a, result)
  local srv = a.srv
  -- (No event at all: an empty body, or only ": ping" comments.)
  local b = tostring(result.body or "")
  -- (A whole JSON completion instead of a stream is used as is.)
  if a.streamed and c.tools and result.status == "ok" and not b:match("^%s*data:")
      and not b:find("\ndata:", 1, true) and not json_answer(result) then
    release(a.slot)
    return { plain_again = true }
  end
  if a.own and result.status ~= "ok" and result.cancelled then
    local v = cut_value(cfg, c, hash, a, result)
    release(a.slot)
    return v
  end
  local resp, err, kind = read_http(cfg, result, c, a.url)
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
  release(a.slot)
  return v
end

-- One attempt of call `c` over HTTP: its settled value, or nil and a
-- message when no slot was granted.
local function http_attempt(cfg, c, hash)
  local slot, serr = acquire(cfg, c)
  if not slot then return nil, serr end
  local a = { slot = slot, srv = S.current.servers[cfg.provider .. " " .. cfg.base_url] }
  -- An unstreamed call to a server that ignores max_tokens has a
  -- deadline from its reserve instead (within --max-time): cut there,
  -- it is charged its reserve, so "budget plus one call" holds.
  a.prompt = slot.tokens - c.max_tokens
  a.cut_s, a.rate = cut_after(cfg, a.srv, c, a.prompt)
  local left = time_left()
  a.own = a.cut_s and (not left or a.cut_s < left)
  local url, headers, body = SHAPES[cfg.provider].request(c, cfg)
  a.url = url
  local llm = client()
  local ticket = llm:submit{
    url = url, headers = headers, body = body, timeout = cfg.timeout,
    connect_timeout = cfg.connect_timeout, max_attempts = cfg.retries + 1,
    backoff = cfg.backoff, deadline = a.own and a.cut_s or left,
    -- A streamed answer is read up to max_tokens (a chunk is about a
    -- token; a few more for the role, finish and usage chunks; what is
    -- read past max_tokens is dropped).
    stream_limit = cfg.sse and (c.max_tokens + 4) or nil,
  }
  a.streamed = cfg.sse
  local key = sched.track(llm, ticket, function(result)
    return http_settled(cfg, c, hash, a, result)
  end)
  return sched.await(key), a.srv
end

-- Call `c` over HTTP: attempts until one is answered (a server that
-- streams no answer to a request with tools is asked again unstreamed).
local function http_value(cfg, c, hash, model)
  http_setup(cfg, c, model)
  while true do
    local value, srv = http_attempt(cfg, c, hash)
    if not value then return nil, srv end
    if not value.plain_again then return value end
    cfg.sse = false
    if srv then srv.no_tool_stream = true end
    if S.current.log then
      S.current.log(("llm: %s streams no answer to a request with tools; such requests go " ..
        "unstreamed (such a server ignores their max_tokens: each is cut at its reserve, " ..
        "timed at the server's observed pace)"):format(cfg.base_url))
    end
  end
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
  if not S.current then error("avo.llm.chat: only available inside 'avo run'", 2) end
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

  local why = budget_message() or (S.current.exhausted and S.current.exhausted() and stopping())
  if why then return refuse(why) end

  local stream, call = place(opts)
  local model = model_of(cfg, stream, call)
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
    local row = S.current.replay.by_key[call]
    c.known = row and type(row.request) == "table" and row.request.known or nil
  else
    c.known = knowledge_now(cfg, model)
  end
  S.current.task_stream[coroutine.running()] = stream

  local value, serr
  local resumed = resumed_answer(hash)
  if resumed then
    value = resumed_value(cfg, c, resumed)
  elseif cfg.provider == "replay" then
    value = replayed_value(cfg, c, hash, call)
  elseif cfg.provider == "scripted" then
    local resp, err = scripted_answer(c)
    value = settle("scripted", c, hash, resp, err, 0, 1)
  else
    value, serr = http_value(cfg, c, hash, model)
    if not value then return nil, serr end
  end
  if value.fault then
    faulted(value.err, value.kind, cfg.base_url)
  elseif value.resp then
    S.current.totals.fault_streak = 0
    if cfg.base_url then S.current.answered[cfg.base_url] = true end
  end
  if value.err then return nil, value.err end
  return value.resp
end

return {
}
