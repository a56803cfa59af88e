-- avo.llm.http — one call over HTTP: how it goes to its server (streaming,
-- tool results, JSON answers), its attempts through the C client, its cut
-- at the reserve, and its answer settled.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local sched = require "avo.sched"
local S = require "avo.llm.state"
local config = require "avo.llm.config"
local families = require "avo.llm.families"
local transport = require "avo.llm.transport"
local server = require "avo.llm.server"
local budget = require "avo.llm.budget"

local M = S.api
local env = config.env
local SHAPES = families.SHAPES
local json_answer = families.json_answer
local read_http = families.read_http
local client = transport.client
local learn_from_error = server.learn_from_error
local learn_ratio = server.learn_ratio
local server_of = server.server_of
local acquire = budget.acquire
local cut_after = budget.cut_after
local learn_rate = budget.learn_rate
local release = budget.release
local settle = budget.settle
local time_left = budget.time_left

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
  end, true) -- awaited once, just below: the answer is not kept after
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

return {
  http_value = http_value,
}
