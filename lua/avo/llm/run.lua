-- avo.llm.run — the run hooks (_begin, _end), totals and the status line.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local sched = require "avo.sched"
local S = require "avo.llm.state"
local config = require "avo.llm.config"
local replay = require "avo.llm.replay"
local server = require "avo.llm.server"
local budget = require "avo.llm.budget"

local M = S.api
local env = config.env
local load_user_prices = config.load_user_prices
local load_replay = replay.load_replay
local replay_idle = replay.replay_idle
local learn_ratio = server.learn_ratio
local budget_message = budget.budget_message

-------------------------------------------------------------- run hooks

-- Totals of the current run: calls, failed, cut (cut at their reserve:
-- not failed, not faults), faults (failed for the
-- infrastructure), fault_streak (the last calls, in a row), input_tokens,
-- output_tokens, cost_usd, latency_s.
function M.totals()
  return S.current and S.current.totals or nil
end

-- HTTP calls in flight, calls waiting for a slot or budget, and the age in
-- seconds of the oldest call in flight (0 when none).
function M.in_flight()
  if not S.current then return 0, 0, 0 end
  local n, oldest = 0, nil
  for slot in pairs(S.current.in_flight) do
    n = n + 1
    oldest = math.min(oldest or slot.since, slot.since)
  end
  return n, S.current.gate.n, oldest and (core.monotonic() - oldest) or 0
end

-- The LLM part of the status line: totals, calls in flight with the oldest
-- one's age and the tokens streamed so far, calls waiting, and the outcomes (avo.outcomes()) of operators
-- that had answers rejected or calls fail.  nil when there is nothing.
function M.status_text(outcomes)
  if not S.current then return nil end
  local t, parts = S.current.totals, {}
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
    local streamed = S.current.client and S.current.client:streamed() or 0
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
  for k in pairs(S.current.progress) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = S.current.progress[k] end
  if #parts == 0 then return nil end
  return table.concat(parts, ", ")
end

--[[
avo.llm.set_progress(key, text | nil)
A part of the status line for the LLM work of `key` (the agent: its
lineage's step, turn, tool calls and errors); nil removes it.
]]
function M.set_progress(key, text)
  if S.current then S.current.progress[key] = text end
end

-- true once --max-usd or --max-tokens is spent.
function M.exhausted()
  return S.current ~= nil and budget_message() ~= nil
end

-- Called by avo._begin: `run` carries archive, run_id, seed, max_usd,
-- max_tokens, llm_replay; `hooks` exhausted (whole-run budget) and log.
function M._begin(run, hooks)
  hooks = hooks or {}
  S.current = {
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
    gate = { head = 1, tail = 0, n = 0, count = {}, classes = 0 }, -- calls waiting in acquire (budget.lua)
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
    S.current.replay = load_replay(replay, run.llm_replay_run)
    local rp = S.current.replay
    sched.on_idle(function() return replay_idle(rp) end)
    -- What the recorded run learned from its servers' metadata (what it
    -- learned from errors is learned again when those are replayed).
    local ar = core.archive(replay)
    for _, e in ipairs(ar and ar:events(S.current.replay.run_id or 0, "llm_server") or {}) do
      local d = e.data or {}
      if d.model and d.context_tokens and d.from ~= "an error" then
        S.current.replay_contexts[d.model] = d.context_tokens
        if d.from == "default" or d.from == "the user" then
          S.current.replay_assumed[d.model] = d.context_tokens
        end
      end
      if d.model and type(d.tokens_per_char) == "number" then
        learn_ratio(d.model, d.tokens_per_char, 1)
      end
      if type(d.family) == "string" then S.current.replay_family = d.family end
    end
    if ar then ar:close() end
  end
  if run.llm_resume then S.current.resume = load_replay(run.llm_resume) end
end

-- Called by avo._end: record the totals and close the client.
function M._end()
  if not S.current then return end
  local t = S.current.totals
  if t.calls > 0 and S.current.run.archive then
    S.current.run.archive:event(S.current.run.run_id, "llm_totals", t)
  end
  if S.current.replay and S.current.replay.drifted > 0 and S.current.log then
    S.current.log(("llm replay: %d calls answered by their place in the run although their " ..
      "prompts differ from the recorded ones (measured values)"):format(S.current.replay.drifted))
  end
  if S.current.client then S.current.client:close() end
  if S.current.replay then sched.on_idle(nil) end
  S.current = nil
end

return {
}
