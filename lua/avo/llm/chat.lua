-- avo.llm.chat — one call, answered by resume, replay, the script or HTTP.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local S = require "avo.llm.state"
local config = require "avo.llm.config"
local families = require "avo.llm.families"
local faults = require "avo.llm.faults"
local replay = require "avo.llm.replay"
local server = require "avo.llm.server"
local budget = require "avo.llm.budget"
local http = require "avo.llm.http"

local M = S.api
local check_messages = config.check_messages
local check_tool_choice = config.check_tool_choice
local check_tools = config.check_tools
local pick_model = config.pick_model
local resolve = config.resolve
local canonical = families.canonical
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
local budget_message = budget.budget_message
local refuse = budget.refuse
local settle = budget.settle
local stopping = budget.stopping
local http_value = http.http_value

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
