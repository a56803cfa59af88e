-- avo.llm.budget — budget and deadlines: refusals, reservations, accounting, cut deadlines.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local sched = require "avo.sched"
local S = require "avo.llm.state"
local config = require "avo.llm.config"
local server = require "avo.llm.server"

local M = S.api
local cost_of = config.cost_of
local env = config.env
local concurrency_of = server.concurrency_of
local server_of = server.server_of

--------------------------------------------------------------- accounting

local function budget_message()
  local t, r = S.current.totals, S.current.run
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

-------------------------------------------------------------- reservations

-- Why no more calls are made when the run's own budget (not the LLM's) is
-- spent: which limit stopped it.
local function stopping()
  local what = S.current.stop_reason and S.current.stop_reason() or "its budget"
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
  if not S.current.refused and S.current.log then
    S.current.log("llm: " .. why .. (why:find("no LLM call", 1, true) and "" or "; no more calls"))
  end
  S.current.refused = true
  return nil, why
end

-- Seconds left of the run's --max-time, or nil without one.
local function time_left()
  local r = S.current.run
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
  if limit and (S.current.flight[pkey] or 0) >= limit then return true end
  local t, r, res = S.current.totals, S.current.run, S.current.reserved
  if res.calls == 0 then return false end
  if r.max_tokens and t.input_tokens + t.output_tokens + res.tokens >= r.max_tokens then
    return true
  end
  if r.max_usd and t.cost_usd + res.usd >= r.max_usd then return true end
  return false
end

local GO = {} -- the verdict of a call that may go now

-- Whether a call to provider key `pkey` (at most `limit` in flight) goes
-- (GO), is refused (why), or waits (nil).
local function verdict(pkey, limit)
  -- (exhausted_now: a check that the replay of a stopped run need not
  -- make in step; how often a call waits here depends on timing.)
  local check = S.current.exhausted_now or S.current.exhausted
  local why = budget_message() or (check and check() and stopping())
  if why then return why end
  if not must_wait(pkey, limit) then return GO end
  return nil
end

--[[
The calls waiting for a slot (S.current.gate): a FIFO of { ev, pkey,
limit, class } from g.head to g.tail (false where one left from the
middle), with g.n waiting in all and g.count[class] of each class (pkey
and limit).  Each release looks at them again, in order, in one pass run
by the loop where the waiting tasks would have run had it woken them all
(sched.defer): a call that may go, or is refused, is resumed there; one
that must wait stays, and so does every later call of its class until a
resumed call may have changed what they wait on.  So a release costs the
calls it lets go, not every call waiting, and the order in which calls go
is the one waking them all gives.
]]
local function enqueue(pkey, limit, ev)
  local g, class = S.current.gate, pkey .. "\0" .. tostring(limit)
  g.tail = g.tail + 1
  g[g.tail] = { ev = ev, pkey = pkey, limit = limit, class = class }
  g.n = g.n + 1
  g.count[class] = (g.count[class] or 0) + 1
  if g.count[class] == 1 then g.classes = g.classes + 1 end
end

local function dequeue(g, i)
  local w = g[i]
  g[i] = false
  g.n = g.n - 1
  g.count[w.class] = g.count[w.class] - 1
  if g.count[w.class] == 0 then
    g.count[w.class] = nil
    g.classes = g.classes - 1
  end
  return w
end

-- Drop the calls that went from the front of the gate.
local function advance(g)
  while g.head <= g.tail and g[g.head] == false do
    g[g.head] = nil
    g.head = g.head + 1
  end
end

-- Close the holes left by calls that went from the middle of the gate
-- (only where calls of another class waited ahead of them).
local function compact(g)
  advance(g)
  local j = g.head - 1
  for i = g.head, g.tail do
    local w = g[i]
    g[i] = nil
    if w then
      j = j + 1
      g[j] = w
    end
  end
  g.tail = j
end

local function pass()
  local g = S.current and S.current.gate
  if not g then return end
  g.pass = false
  local blocked, nblocked, holes = {}, 0, false
  local last = g.tail -- (calls that begin to wait meanwhile wait for the next pass)
  local i = g.head
  while i <= last and nblocked < g.classes do
    local w = g[i]
    if w and not blocked[w.class] then
      local ok, v = pcall(verdict, w.pkey, w.limit)
      if ok and v == nil then
        blocked[w.class] = true
        nblocked = nblocked + 1
      else
        -- (Should the check raise, the call's task makes it again, and
        -- raises there.)
        dequeue(g, i)
        if i == g.head then advance(g) else holes = true end
        sched.resume_now(w.ev, ok and v or false)
        blocked, nblocked = {}, 0
      end
    end
    i = i + 1
  end
  -- (A pass costs the calls it lets go: the gate is rewritten only when
  -- one left from behind a waiting call of another class.)
  if holes then compact(g) end
end

-- Wait (the task yields) until call `c` may go, then reserve its worst
-- case.  Returns the reservation (release it when the answer arrives), or
-- nil and why the call is refused.
local function acquire(cfg, c)
  local pkey = cfg.provider .. " " .. cfg.base_url
  local limit = concurrency_of(cfg, server_of(cfg, c.model))
  local ratio = S.current.ratios[c.model]
  local prompt = math.ceil(M.request_chars(c) * (ratio and ratio * 1.05 or M.DEFAULT_TOKENS_PER_CHAR))
  local slot = { pkey = pkey, tokens = prompt + c.max_tokens,
                 usd = cost_of(c.model, prompt, c.max_tokens) }
  local v = verdict(pkey, limit)
  while v == nil do
    local ev = sched.event()
    enqueue(pkey, limit, ev)
    v = sched.await(ev)
    if v == false then v = verdict(pkey, limit) end
  end
  if v ~= GO then return refuse(v) end
  S.current.flight[pkey] = (S.current.flight[pkey] or 0) + 1
  slot.since = core.monotonic()
  S.current.in_flight[slot] = true
  local res = S.current.reserved
  res.calls, res.tokens, res.usd = res.calls + 1, res.tokens + slot.tokens, res.usd + slot.usd
  return slot
end

-- Give back a reservation and let the waiting calls look again (pass).
local function release(slot)
  S.current.flight[slot.pkey] = S.current.flight[slot.pkey] - 1
  S.current.in_flight[slot] = nil
  local res = S.current.reserved
  res.calls, res.tokens, res.usd = res.calls - 1, res.tokens - slot.tokens, res.usd - slot.usd
  local g = S.current.gate
  if g.n > 0 and not g.pass then
    g.pass = true
    sched.defer(pass)
  end
end

-- Account one call, record it, and return the value chat() returns.
-- `cut`, for a call cut at its reserve (see cut_after): the tokens it is
-- charged ({input_tokens, output_tokens}); it is counted apart from the
-- failed calls.
local function settle(provider, c, hash, resp, err, latency, attempts, cost_override, fault, cut)
  local t = S.current.totals
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
  local id, rerr = S.current.run.archive:llm_record(S.current.run.run_id, {
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

return {
  acquire = acquire,
  budget_message = budget_message,
  cut_after = cut_after,
  learn_rate = learn_rate,
  refuse = refuse,
  release = release,
  settle = settle,
  stopping = stopping,
  time_left = time_left,
}
