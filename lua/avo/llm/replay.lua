-- avo.llm.replay — scripted answers, replay of a recorded run, resume.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local sched = require "avo.sched"
local S = require "avo.llm.state"
local config = require "avo.llm.config"
local faults = require "avo.llm.faults"

local M = S.api
local array = config.array
local env = config.env
local recorded_fault = faults.recorded_fault

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
  local s = S.current.script
  if not s then
    local path = env("AVO_LLM_SCRIPT")
    if not path then error("AVO_LLM_PROVIDER=scripted needs AVO_LLM_SCRIPT=FILE.jsonl", 0) end
    s = load_script(path)
    S.current.script = s
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


-- When resuming a run: the answer recorded for the next occurrence of
-- `hash` before the run stopped, or nil once those are used up.
local function resumed_answer(hash)
  local q = S.current.resume and S.current.resume.by_hash[hash]
  if not q or q.next > #q then return nil end
  local row = q[q.next]
  q.next = q.next + 1
  -- The infrastructure failed this call (the server was down): ask again.
  if row.status ~= "ok" and recorded_fault(row) then
    S.current.reasked = (S.current.reasked or 0) + 1
    return nil
  end
  if row.status ~= "ok" then
    if type(row.response) == "table" and row.response.cut then
      -- Cut at its reserve: charged what it was charged.
      local t = S.current.totals
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
  local t = S.current.totals
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
  local rp = S.current.replay
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

return {
  answered_in_order = answered_in_order,
  in_recorded_order = in_recorded_order,
  load_replay = load_replay,
  replay_answer = replay_answer,
  replay_idle = replay_idle,
  resumed_answer = resumed_answer,
  scripted_answer = scripted_answer,
}
