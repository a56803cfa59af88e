-- agent: the agentic variation operator of the AVO paper,
-- Vary(P_t) = Agent(P_t, K, f).  One variation step is one agent session:
-- the model gets the task, the evaluator's description, the current best and
-- the lineage, and works through tools (the provider's tool calling) on a
-- private working copy until it commits a better version or gives up.
--
-- Tools: list_lineage, read_version(id), diff(a, b), kb_search(query),
-- kb_read(doc), notes_read, notes_append(text), read_source, edit(search,
-- replace), write_source(source), set_knobs(knobs), compile, evaluate,
-- commit(message), give_up(reason).  A call with bad arguments, or one that
-- fails, answers the model with an error message and the step goes on.
--
-- Every `evaluate` is an attempt (archive table attempts): it makes no
-- candidate.  `commit` passes the commit gate — correct on every config and
-- aggregate >= the incumbent's (ties accepted).  When the gain is within the
-- timing noise (the largest per-config spread of the two measurements, or
-- the `noise` option), candidate and incumbent are re-timed alternately
-- `retime_rounds` times (avo.evaluate{retime = true}) and the commit stands
-- only if the candidate's mean is at least the incumbent's.  A committed
-- version becomes a candidate (operator "agent", parent the incumbent, note
-- the commit message) without being evaluated again.
--
-- compile: a compile-only job (job field compile_only) on both backends, so
-- the CUDA path reports registers, spills and shared memory; nothing runs.
--
-- Memory: each lineage keeps its conversation across steps.  When it grows
-- past its threshold it is compacted into a summary by one LLM call at the
-- start of the next step; the summary is an event "agent_compaction" in the
-- archive (a failed compaction is logged and is an event
-- "agent_compaction_failed").  Token counts are estimates
-- (avo.llm.estimate_tokens: what the server's tokenizer counted per
-- character, else 3 characters a token).  Without a known window the
-- threshold is `context_tokens`.  With one (avo.llm.context_window: the
-- server's /props or /models, a "too long" error, the context_window
-- option, else 8192 for a self-hosted server) everything sent is kept
-- inside it with a margin (window_plan): each turn answers in at most a
-- quarter of the window, the prompt (system prompt, tool schemas, history,
-- the new step's prompt) is compacted before it would outgrow the rest, in
-- the middle of a step too (during_step in the event; the step goes on from
-- the summary with its working copy), tool results are cut to the room
-- left, the compaction call's own transcript is cut to fit, and a step
-- prompt whose kernel alone does not fit leaves the source to read_source.
-- The run's notes (tools
-- notes_read/notes_append) are shared by all lineages and recorded as events
-- "agent_note".
--
-- Escalation (small models): after `escalate_after` turns without a change
-- to the working copy or a measurement, or in a step's last turns without
-- an evaluation, the next request forces the tool that moves the step on
-- (Step:escalation: evaluate, commit, else set_knobs/edit), by a named
-- tool_choice or an answer constrained to the tool's argument schema
-- (llama-server, which takes no named tool_choice; a server seen to ignore
-- it; force_with = "schema").  Each forced call is logged and an event
-- "agent_forced"; a step without an evaluation is logged and marked in its
-- "agent_step" event (unevaluated), never silent.  Some of these decisions
-- follow the clock (the pace of turns); `avo replay` takes them from the
-- recorded events instead (avo.recorded_events).
--
-- Use: inside strategies/avo.lua (one or more lineages), or in ga as one
-- operator among others: operators = { agent = 1, param_tweak = 1 }; there
-- apply(ctx, parents) returns the committed version as a candidate (already
-- in the archive, so evaluating it again answers from there), or nil, why.
--
-- Options (ctx.options; the strategy's agent table):
--   provider, model, base_url, api_key_env, temperature, max_tokens,
--   timeout, retries        passed to avo.llm.chat
--   max_turns        LLM calls per step (default 24)
--   max_step_tokens  input + output tokens per step (default 400000)
--   max_evaluations  evaluate/commit measurements per step (default 8)
--   max_seconds      wall time per step (default 1800)
--   context_tokens   conversation size that triggers compaction (60000; less
--                    on a server with a smaller context window)
--   context_window   the model's context window in tokens, where the server
--                    does not say (else AVO_LLM_CONTEXT_WINDOW)
--   retime_rounds    interleaved re-timings of each side (default 3)
--   escalate_after   idle turns before the next tool is forced (default 3
--                    where the model's window is known and <= 32k tokens,
--                    else 8; 0: never)
--   force_with       "auto" (default: named tool_choice where the server
--                    takes it, else a schema), "tool_choice" or "schema"
--   noise            relative noise threshold instead of the measured spread
--   kb               knowledge-base file (avo.kb.open); default: the run's
--                    archive (avo.kb.search / avo.kb.read)
--   prompt           prompt module (default "prompts/agent")
--   lineage          lineage name when used outside strategies/avo (default "ga")

local avo = require "avo"
-- avo.core for its content hash only (the attempts' identity); JSON is avo.json.
local core = require "avo.core"
local patch = require "avo.patch"
local llm = require "operators.lib.llm"

local M = {}
M.name = "agent"
M.llm = true -- calls a language model (avo.outcome logs its failures)
-- Steps share the lineage's conversation: the ga strategy calls it in order.
M.concurrent = false

M.DEFAULTS = {
  max_turns = 24, max_step_tokens = 400000, max_evaluations = 8, max_seconds = 1800,
  context_tokens = 60000, retime_rounds = 3, force_with = "auto",
  -- escalate_after: 3 turns for a model with a small window (<= 32k, a
  -- small local model), else 8 (a capable model explores first).
}

local array = avo.json.array

------------------------------------------------------------------ options

local function read_options(o)
  local cfg = {}
  for k, v in pairs(M.DEFAULTS) do cfg[k] = v end
  for k, v in pairs(o or {}) do cfg[k] = v end
  for _, k in ipairs({ "max_turns", "max_step_tokens", "max_evaluations", "context_tokens",
                       "retime_rounds", "escalate_after" }) do
    local least = (k == "retime_rounds" or k == "escalate_after") and 0 or 1
    local given = k ~= "escalate_after" or cfg[k] ~= nil -- (escalate_after: nil, the default)
    if given and (math.type(cfg[k]) ~= "integer" or cfg[k] < least) then
      error(("agent: option '%s' must be an integer >= %d, got %s"):format(k, least,
        tostring(cfg[k])), 0)
    end
  end
  if type(cfg.max_seconds) ~= "number" or cfg.max_seconds <= 0 then
    error("agent: option 'max_seconds' must be a number > 0", 0)
  end
  local fw = cfg.force_with
  if fw ~= "auto" and fw ~= "tool_choice" and fw ~= "schema" then
    error(("agent: option 'force_with' must be \"auto\", \"tool_choice\" or \"schema\", got %s")
      :format(tostring(cfg.force_with)), 0)
  end
  if cfg.noise ~= nil and (type(cfg.noise) ~= "number" or cfg.noise < 0) then
    error("agent: option 'noise' must be a number >= 0", 0)
  end
  return cfg
end

local PROMPT = { needs = "step", who = "agent: ",
  shape = "an agent prompt module returns {system =, step = function, ...}" }

function M.load_prompt(spec) return llm.load_prompt(spec, PROMPT) end

------------------------------------------------------------------ helpers

local function excerpt(text, n)
  text = tostring(text or "")
  if #text > n then return text:sub(1, n) .. "\n... (" .. (#text - n) .. " more bytes)" end
  return text
end

local function knob_text(values)
  local names = {}
  for k in pairs(values or {}) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = k .. "=" .. tostring(values[k]) end
  return #parts > 0 and table.concat(parts, ", ") or "none"
end

local function same_knobs(a, b)
  return knob_text(a) == knob_text(b)
end

-- Per-config lines of a record or measurement, rates relative to `against`.
local STYLE = { rate = "%.6g", spread = "%.2f" }
local function config_lines(rec, unit, against)
  return llm.config_lines(rec, unit, STYLE, against)
end

-- Tokens of a message list (with `system` and `tools` when given), as
-- avo.llm estimates them for the model of `cfg` (default: 3 characters a
-- token).
function M.estimate_tokens(messages, cfg, system, tools)
  local req = { messages = messages, system = system, tools = tools }
  if cfg and avo.llm.estimate_tokens then
    return avo.llm.estimate_tokens(llm.chat_options(cfg), req)
  end
  return math.ceil(avo.llm.request_chars(req) / 3)
end

------------------------------------------------------------------ lineages

-- State of one lineage across steps: conversation, compacted summary,
-- committed versions, supervisor directions, counters.
function M.new_lineage(name, incumbent)
  return {
    name = name, step = 0, messages = {}, summary = nil, committed = {},
    directions = {}, directions_left = 0, events = {}, incumbent = incumbent,
    attempts = {}, -- {step, hash, score, status, outcome} of every measurement
    tokens = 0,
  }
end

-- The run's notes (scratchpad), shared by the lineages of this run.
local notes = { entries = {} }

function M.notes() return notes.entries end

local default_lineages = {}

------------------------------------------------------------------ the KB

local function kb_handle(cfg)
  if cfg.kb then
    if not cfg._kb then
      local ok, kb, err = pcall(avo.kb.open, cfg.kb)
      if not ok then return nil, tostring(kb) end
      if not kb then return nil, err end
      cfg._kb = kb
    end
    local kb = cfg._kb
    return { search = function(q, n) return kb:search(q, n) end,
             read = function(d) return kb:read(d) end }
  end
  if type(avo.kb) ~= "table" or type(avo.kb.search) ~= "function" then
    return nil, "no knowledge base is available in this build (avo.kb missing)"
  end
  return { search = avo.kb.search, read = avo.kb.read }
end

------------------------------------------------------------------ tools

local TOOLS = {
  { name = "list_lineage", description = "The versions committed in this lineage and the run's best versions (id, score, message).",
    parameters = { type = "object", properties = {} } },
  { name = "read_version", description = "One version of the archive: source, diff to its parent, knobs, per-config scores, resource usage.",
    parameters = { type = "object", properties = { id = { type = "integer" } }, required = array{ "id" } } },
  { name = "diff", description = "Unified diff and score comparison of two versions (ids).",
    parameters = { type = "object", properties = { a = { type = "integer" }, b = { type = "integer" } },
                   required = array{ "a", "b" } } },
  { name = "kb_search", description = "Search the knowledge base of optimisation notes; ranked snippets.",
    parameters = { type = "object", properties = { query = { type = "string" } }, required = array{ "query" } } },
  { name = "kb_read", description = "Read one knowledge-base document (path or id from kb_search).",
    parameters = { type = "object", properties = { doc = { type = "string" } }, required = array{ "doc" } } },
  { name = "notes_read", description = "Read the run's notes (your scratchpad across steps).",
    parameters = { type = "object", properties = {} } },
  { name = "notes_append", description = "Append a note for later steps (what worked, what did not, ideas).",
    parameters = { type = "object", properties = { text = { type = "string" } }, required = array{ "text" } } },
  { name = "read_source", description = "The working copy's source and knob values.",
    parameters = { type = "object", properties = {} } },
  { name = "edit", description = "Replace the one place where `search` occurs in the working copy (exact lines; whitespace-tolerant) with `replace`.",
    parameters = { type = "object", properties = { search = { type = "string" }, replace = { type = "string" } },
                   required = array{ "search", "replace" } } },
  { name = "write_source", description = "Replace the whole working copy.",
    parameters = { type = "object", properties = { source = { type = "string" } }, required = array{ "source" } } },
  { name = "set_knobs", description = "Set knob values (// avo:param) of the working copy.",
    parameters = { type = "object", properties = { knobs = { type = "object" } }, required = array{ "knobs" } } },
  { name = "compile", description = "Compile the working copy only: status, log and resource usage.",
    parameters = { type = "object", properties = {} } },
  { name = "evaluate", description = "Verify and time the working copy on every config: score vector, failures, comparison with the best. Costs one evaluation.",
    parameters = { type = "object", properties = {} } },
  { name = "commit", description = "Commit the working copy as a new version (gate: correct everywhere and at least as fast as the best). Ends the step when accepted.",
    parameters = { type = "object", properties = { message = { type = "string" } }, required = array{ "message" } } },
  { name = "give_up", description = "End this step without a new version, with the reason.",
    parameters = { type = "object", properties = { reason = { type = "string" } }, required = array{ "reason" } } },
}
M.TOOLS = TOOLS

local TOOL_BY_NAME = {}
for _, t in ipairs(TOOLS) do TOOL_BY_NAME[t.name] = t end

-- The tools of a step from `source`: set_knobs's schema names the kernel's
-- knobs and their values (a server that constrains tool arguments to the
-- schema, as llama-cpp-python does, then writes only valid settings).  The
-- list stays the same through the step, so a server's prompt cache keeps
-- its prefix.
function M.tools_for(source)
  local ok, domain = pcall(avo.knobs, source)
  if not ok or type(domain) ~= "table" or #domain == 0 then return TOOLS end
  local props, names = {}, array()
  for _, k in ipairs(domain) do
    local values = array()
    for i, v in ipairs(k.values) do values[i] = v end
    props[k.name] = { enum = values }
    names[#names + 1] = k.name
  end
  local out = array()
  for i, t in ipairs(TOOLS) do
    out[i] = t
    if t.name == "set_knobs" then
      -- Every knob required: a grammar cannot ask for "at least one", and
      -- an empty object or the current values change nothing (the handler
      -- takes fewer all the same).
      out[i] = { name = t.name, description = t.description .. " Give every knob a value.",
        parameters = { type = "object",
          properties = { knobs = { type = "object", properties = props, required = names,
                                   additionalProperties = false } },
          required = array{ "knobs" } } }
    end
  end
  return out
end

local JSON_TYPES = { integer = "integer", string = "string", object = "table" }

-- nil when `args` fits the tool's schema, else a message for the model.
local function check_args(tool, args)
  if type(args) ~= "table" then return "arguments must be a JSON object" end
  local props = tool.parameters.properties
  for _, name in ipairs(tool.parameters.required or {}) do
    if args[name] == nil then return ("missing argument '%s'"):format(name) end
  end
  for name, v in pairs(args) do
    local p = props[name]
    if not p then
      local known = {}
      for k in pairs(props) do known[#known + 1] = k end
      table.sort(known)
      return ("unknown argument '%s' (arguments: %s)"):format(tostring(name),
        #known > 0 and table.concat(known, ", ") or "none")
    end
    local want = JSON_TYPES[p.type]
    local ok = (want == "integer" and math.type(v) == "integer")
      or (want == "integer" and type(v) == "number" and math.tointeger(v))
      or (want ~= "integer" and type(v) == want)
    if not ok then
      return ("argument '%s' must be %s %s, got %s"):format(name,
        p.type == "integer" and "an" or "a", p.type, type(v) == "table" and "an object or array"
        or type(v))
    end
  end
  return nil
end

------------------------------------------------------------------ a step

local Step = {}
Step.__index = Step

function Step:chat_options()
  local o = llm.chat_options(self.cfg)
  o.stream = "agent/" .. self.lineage.name
  return o
end

function Step:measure(what)
  if self.evaluations >= self.cfg.max_evaluations then
    return nil, ("the evaluation budget of this step (%d) is spent; commit what you have or " ..
      "give_up"):format(self.cfg.max_evaluations)
  end
  if avo.exhausted() then return nil, "the run's budget is exhausted; give_up" end
  self.evaluations = self.evaluations + 1
  local work = self.work
  local cand = { source = work.source, knobs = work.knobs }
  local m = avo.evaluate(self.ev, cand, { attempt = { lineage = self.lineage.name,
    step = self.lineage.step } })
  if m.status == "skipped" then return nil, "the run's evaluation budget is exhausted; give_up" end
  local entry = { step = self.lineage.step, hash = core.hash(work.source .. "\0" ..
    knob_text(work.knobs)), score = m.score, status = m.status, outcome = m.outcome,
    attempt_id = m.attempt_id, why = what }
  self.lineage.attempts[#self.lineage.attempts + 1] = entry
  m.entry = entry
  self.measured = { source = work.source, knobs = work.knobs, m = m }
  return m
end

function Step:set_outcome(m, outcome, reason, candidate_id)
  m.outcome = outcome
  if m.entry then m.entry.outcome = outcome end
  avo.attempts.update(m.attempt_id, outcome, reason, candidate_id)
end

function Step:describe_measurement(m)
  local inc = self.lineage.incumbent
  local out = {}
  out[#out + 1] = ("attempt #%d: %s, %.6g %s"):format(m.attempt_id, m.status, m.score,
    self.ev.unit or "")
  if m.status == "ok" and inc and (inc.score or 0) > 0 then
    out[#out + 1] = ("vs best #%d (%.6g): %.4fx"):format(inc.id, inc.score, m.score / inc.score)
  end
  if m.reason then out[#out + 1] = "reason: " .. m.reason end
  local lines = config_lines(m, self.ev.unit, inc)
  if #lines > 0 then out[#out + 1] = "per config:\n- " .. table.concat(lines, "\n- ") end
  if m.status ~= "ok" and m.log and m.log ~= "" then
    out[#out + 1] = "log:\n" .. excerpt(m.log, 3000)
  end
  return table.concat(out, "\n")
end

-- Relative timing noise of two measurements: the largest per-config spread.
local function noise_of(cfg, a, b)
  if cfg.noise then return cfg.noise end
  local worst = 0
  for _, rec in ipairs({ a, b }) do
    for _, c in ipairs(rec.configs or {}) do
      if type(c.spread) == "number" and c.spread > worst then worst = c.spread end
    end
  end
  return worst
end

-- Interleaved re-timing: incumbent, candidate, incumbent, ... Returns
-- confirmed, mean candidate / mean incumbent, or nil and why.
function Step:retime(cand_src, cand_knobs, inc)
  local sums = { cand = 0, inc = 0 }
  local info = { lineage = self.lineage.name, step = self.lineage.step }
  for _ = 1, self.cfg.retime_rounds do
    for _, side in ipairs({ "inc", "cand" }) do
      local c = side == "inc" and { source = inc.source, knobs = inc.knobs or {} }
        or { source = cand_src, knobs = cand_knobs }
      local i = { lineage = info.lineage, step = info.step,
                  candidate_id = side == "inc" and inc.id or nil }
      local m = avo.evaluate(self.ev, c, { retime = true, attempt = i })
      if m.status == "skipped" then return nil, "the run's evaluation budget is exhausted" end
      if m.status ~= "ok" then return false, 0, ("re-timing of the %s failed: %s"):format(
        side == "inc" and "best" or "candidate", m.reason or m.status) end
      sums[side] = sums[side] + m.score
    end
  end
  local ratio = sums.inc > 0 and sums.cand / sums.inc or math.huge
  return sums.cand >= sums.inc, ratio
end

-- The commit gate.  Returns the new record, or nil and a message for the model.
function Step:commit(message)
  local work, inc = self.work, self.lineage.incumbent
  if work.source == inc.source and same_knobs(work.knobs, inc.knobs) then
    return nil, "the working copy is the current best unchanged; edit it first"
  end
  local m = self.measured
  if not (m and m.source == work.source and same_knobs(m.knobs, work.knobs)) then
    local mm, err = self:measure("commit")
    if not mm then return nil, err end
    m = self.measured
  end
  m = m.m
  if m.status ~= "ok" then
    local outcome = m.status == "compile_error" and "compile_error" or "rejected_incorrect"
    self:set_outcome(m, outcome, message)
    return nil, ("commit rejected: the working copy is not correct on every config (%s: %s)")
      :format(m.status, m.reason or "")
  end
  local best = inc.score or 0
  if m.score < best then
    self:set_outcome(m, "rejected_slower", message)
    return nil, ("commit rejected: %.6g is slower than the best #%d (%.6g, %.4fx)"):format(
      m.score, inc.id, best, best > 0 and m.score / best or 0)
  end
  local gain = best > 0 and m.score / best - 1 or math.huge
  local noise = noise_of(self.cfg, m, inc)
  local retimed
  if gain <= noise then
    local confirmed, ratio, why = self:retime(work.source, work.knobs, inc)
    if confirmed == nil then return nil, "commit not possible: " .. ratio end
    if not confirmed then
      self:set_outcome(m, "rejected_noise", message)
      return nil, ("commit rejected: the gain (%.2f%%) is within the timing noise (%.2f%%) and " ..
        "interleaved re-timing did not confirm it (%s)"):format(gain * 100, noise * 100,
        why or ("candidate/best = %.4f"):format(ratio))
    end
    retimed = ratio
  end
  local cand = {
    source = work.source, knobs = work.knobs, operator = M.name,
    parents = { { id = inc.id, role = "parent" } }, note = message,
    generation = self.ctx.generation or self.lineage.step,
  }
  local rec = avo.evaluate(self.ev, cand, { measured = m })
  if rec.duplicate then
    self:set_outcome(m, "duplicate", message, rec.id)
    return nil, ("this version is already #%d in the archive; change something"):format(rec.id)
  end
  self:set_outcome(m, "committed", message, rec.id)
  rec.retimed = retimed
  return rec
end

------------------------------------------------------------------ handlers

local H = {}

function H.list_lineage(self)
  local lines = {}
  for _, rec in ipairs(self.lineage.committed) do
    lines[#lines + 1] = ("#%d step %d: %.6g — %s"):format(rec.id, rec.step or 0, rec.score,
      rec.note or "")
  end
  local top = {}
  for _, rec in ipairs(avo.lineage.top(5)) do
    top[#top + 1] = ("#%d (%s): %.6g — %s"):format(rec.id, rec.operator, rec.score,
      excerpt(rec.note or "", 120))
  end
  return ("current best of lineage %s: #%d (%.6g %s)\ncommitted in this lineage:\n%s\n" ..
    "run's best versions:\n%s"):format(self.lineage.name, self.lineage.incumbent.id,
    self.lineage.incumbent.score, self.ev.unit or "",
    #lines > 0 and ("- " .. table.concat(lines, "\n- ")) or "(none yet)",
    #top > 0 and ("- " .. table.concat(top, "\n- ")) or "(none)")
end

local function get_version(id)
  local rec = avo.lineage.get(id)
  if not rec then return nil, ("no version #%d"):format(id) end
  return rec
end

function H.read_version(self, args)
  local rec, err = get_version(math.tointeger(args.id))
  if not rec then return nil, err end
  local out = { ("#%d (%s, generation %d): %s, score %.6g %s"):format(rec.id, rec.operator,
    rec.generation or 0, rec.status, rec.score or 0, self.ev.unit or "") }
  if rec.note then out[#out + 1] = "note: " .. rec.note end
  out[#out + 1] = "knobs: " .. knob_text(rec.knobs)
  local lines = config_lines(rec, self.ev.unit)
  if #lines > 0 then out[#out + 1] = "per config:\n- " .. table.concat(lines, "\n- ") end
  local res = rec.result and rec.result.compile
  if res and res.kernels then
    for _, k in ipairs(res.kernels) do
      out[#out + 1] = ("resources %s: %d registers, spill %s/%s bytes, %d B static shared"):format(
        k.name, k.registers or -1, tostring(k.spill_store_bytes), tostring(k.spill_load_bytes),
        k.static_shared_bytes or 0)
    end
  end
  local parent = rec.parents and rec.parents[1]
  local prec = parent and avo.lineage.get(parent.id)
  if prec then
    out[#out + 1] = ("diff to parent #%d:\n%s"):format(prec.id,
      excerpt(avo.diff(prec.source, rec.source), 6000))
  end
  out[#out + 1] = "source:\n" .. rec.source
  return table.concat(out, "\n")
end

function H.diff(self, args)
  local a, err = get_version(math.tointeger(args.a))
  if not a then return nil, err end
  local b, berr = get_version(math.tointeger(args.b))
  if not b then return nil, berr end
  local out = { ("#%d: %.6g, #%d: %.6g %s (b/a = %.4f)"):format(a.id, a.score or 0, b.id,
    b.score or 0, self.ev.unit or "", (a.score or 0) > 0 and (b.score or 0) / a.score or 0) }
  if not same_knobs(a.knobs, b.knobs) then
    out[#out + 1] = ("knobs: %s -> %s"):format(knob_text(a.knobs), knob_text(b.knobs))
  end
  local lines = config_lines(b, self.ev.unit, a)
  if #lines > 0 then out[#out + 1] = "b per config:\n- " .. table.concat(lines, "\n- ") end
  local d = avo.diff(a.source, b.source)
  out[#out + 1] = d == "" and "sources are identical" or excerpt(d, 8000)
  return table.concat(out, "\n")
end

function H.kb_search(self, args)
  local kb, err = kb_handle(self.cfg)
  if not kb then return nil, "knowledge base unavailable: " .. err end
  local hits, serr = kb.search(args.query, 8)
  if not hits then return nil, "knowledge base unavailable: " .. tostring(serr) end
  if #hits == 0 then return "no matches" end
  local out = {}
  for i, h in ipairs(hits) do
    out[i] = ("%d. %s §%s %s\n   %s"):format(i, tostring(h.doc), tostring(h.section or ""),
      tostring(h.title or ""), tostring(h.snippet or ""):gsub("%s+", " "))
  end
  return table.concat(out, "\n")
end

function H.kb_read(self, args)
  local kb, err = kb_handle(self.cfg)
  if not kb then return nil, "knowledge base unavailable: " .. err end
  local doc, rerr = kb.read(args.doc)
  if not doc then return nil, tostring(rerr or ("no document " .. args.doc)) end
  if type(doc) == "table" then doc = doc.text or "" end
  return excerpt(doc, 12000)
end

function H.notes_read(self)
  if #notes.entries == 0 then return "(no notes yet)" end
  local out = {}
  for i, n in ipairs(notes.entries) do
    out[i] = ("%d. [%s step %d] %s"):format(i, n.lineage, n.step, n.text)
  end
  return table.concat(out, "\n")
end

function H.notes_append(self, args)
  local n = { lineage = self.lineage.name, step = self.lineage.step, text = args.text }
  notes.entries[#notes.entries + 1] = n
  avo.event("agent_note", n)
  return ("noted (%d notes)"):format(#notes.entries)
end

function H.read_source(self)
  self.source_shown = true
  return ("knobs: %s\n%s"):format(knob_text(self.work.knobs), self.work.source)
end

local function set_source(self, new, how)
  local ok, err = patch.check_regions(self.lineage.incumbent.source, new)
  if not ok then return nil, err end
  -- Empty, truncated, mostly deleted, or without the entry point: refused
  -- before anything compiles or runs it.
  local bad = llm.check_edit(self.work.source, new, how, nil, self.ev.entry)
  if bad then return nil, bad end
  local pok, domain = pcall(avo.knobs, new)
  if not pok then return nil, "bad knob declaration: " .. tostring(domain) end
  -- Keep the knob values the new source still declares.
  local knobs = {}
  for _, k in ipairs(domain) do
    local v = self.work.knobs[k.name]
    local found
    for _, allowed in ipairs(k.values) do
      if v ~= nil and tostring(allowed) == tostring(v) then found = allowed break end
    end
    knobs[k.name] = found or k.values[1]
  end
  self.work.source, self.work.knobs = new, knobs
  return true
end

function H.edit(self, args)
  local new, err = patch.apply_blocks(self.work.source, { { search = args.search,
    replace = args.replace } })
  if not new then return nil, err end
  if new == self.work.source then return nil, "the edit leaves the working copy unchanged" end
  local ok, serr = set_source(self, new, "edit")
  if not ok then return nil, serr end
  return "edited; the working copy has changed (compile or evaluate it)"
end

function H.write_source(self, args)
  if not args.source:match("%S") then return nil, "the source is empty" end
  local ok, err = set_source(self, args.source, "rewrite")
  if not ok then return nil, err end
  return "the working copy is replaced"
end

function H.set_knobs(self, args)
  local domain = avo.knobs(self.work.source)
  local by_name = {}
  for _, k in ipairs(domain) do by_name[k.name] = k end
  local knobs = {}
  for k, v in pairs(self.work.knobs) do knobs[k] = v end
  for name, v in pairs(args.knobs) do
    local k = by_name[name]
    if not k then return nil, ("the working copy declares no knob '%s'"):format(tostring(name)) end
    local found
    for _, allowed in ipairs(k.values) do
      if tostring(allowed) == tostring(v) then found = allowed break end
    end
    if found == nil then
      local vals = {}
      for i, x in ipairs(k.values) do vals[i] = tostring(x) end
      return nil, ("knob %s takes one of %s"):format(name, table.concat(vals, ", "))
    end
    knobs[name] = found
  end
  if same_knobs(knobs, self.work.knobs) then
    return nil, ("the knobs are unchanged (%s); choose other values"):format(knob_text(knobs))
  end
  self.work.knobs = knobs
  return "knobs: " .. knob_text(knobs)
end

function H.compile(self)
  local r = avo.compile(self.ev, { source = self.work.source, knobs = self.work.knobs })
  local out = { ("compile: %s%s"):format(r.status == "ok" and "ok" or r.status,
    r.reason and (" — " .. r.reason) or "") }
  local res = r.compile
  for _, k in ipairs(res and res.kernels or {}) do
    out[#out + 1] = ("%s: %d registers, spill %s/%s bytes, %d B static shared"):format(k.name,
      k.registers or -1, tostring(k.spill_store_bytes), tostring(k.spill_load_bytes),
      k.static_shared_bytes or 0)
  end
  if r.log and r.log:match("%S") then out[#out + 1] = "log:\n" .. excerpt(r.log, 4000) end
  return table.concat(out, "\n")
end

function H.evaluate(self)
  local m, err = self:measure("evaluate")
  if not m then return nil, err end
  return self:describe_measurement(m)
end

function H.commit(self, args)
  local rec, err = self:commit(args.message)
  if not rec then
    self.commit_refused = self.measured -- not forced to commit it again
    return nil, err
  end
  self.result = rec
  self.done = true
  return ("committed as #%d (%.6g %s)%s"):format(rec.id, rec.score, self.ev.unit or "",
    rec.retimed and (", confirmed by re-timing (%.4fx)"):format(rec.retimed) or "")
end

function H.give_up(self, args)
  self.done = true
  self.why = "gave up: " .. args.reason
  return "step ended"
end

-- Run one tool call; returns the text for the tool message.
function Step:call_tool(tc)
  self.tool_calls = self.tool_calls + 1
  if self.done then return "ignored: the step has already ended" end
  local tool = TOOL_BY_NAME[tc.name]
  if not tool then
    local names = {}
    for _, t in ipairs(TOOLS) do names[#names + 1] = t.name end
    self.errors = self.errors + 1
    return ("error: unknown tool '%s' (tools: %s)"):format(tostring(tc.name),
      table.concat(names, ", "))
  end
  if tc.error then
    -- The provider's answer carried arguments that are not a JSON object.
    self.errors = self.errors + 1
    return ("error: %s: %s; send the arguments as one JSON object"):format(tc.name, tc.error)
  end
  local bad = check_args(tool, tc.arguments)
  if bad then
    self.errors = self.errors + 1
    return ("error: %s: %s"):format(tc.name, bad)
  end
  local ok, out, err = pcall(H[tc.name], self, tc.arguments)
  if not ok then
    self.errors = self.errors + 1
    return ("error: %s failed: %s"):format(tc.name, tostring(out))
  end
  if out == nil then
    self.errors = self.errors + 1
    return ("error: %s: %s"):format(tc.name, tostring(err))
  end
  return out
end

------------------------------------------------------------------ escalation

-- Whether the working copy differs from what was last measured (from the
-- step's starting version when nothing was).
function Step:unevaluated()
  local work, m = self.work, self.measured
  local ref = m or self.lineage.incumbent
  return not (ref.source == work.source and same_knobs(ref.knobs, work.knobs))
end

-- Whether the working copy was measured correct and at least as fast as
-- the best, and differs from it: what commit would accept (unless its
-- re-timing already refused it).
function Step:committable()
  local m, inc = self.measured, self.lineage.incumbent
  return m and m ~= self.commit_refused and not self:unevaluated() and m.m.status == "ok"
    and (m.m.score or 0) >= (inc.score or 0)
    and not (m.source == inc.source and same_knobs(m.knobs, inc.knobs)) or false
end

-- The tool the next request forces, and why, or nil (the model chooses).
-- A model that has gone `escalate_after` turns without changing the
-- working copy or measuring it, or whose step is about to end without an
-- evaluation, is made to take the next step of edit -> evaluate -> commit:
-- evaluate an unmeasured change, commit a measured improvement, else make
-- a change (set_knobs where the kernel declares knobs, else edit; with
-- force_with = "schema" the two alternate, edit's `search` being one of the
-- working copy's own lines).  Once forced, the model is driven: a change
-- it was made to make is evaluated next, an improvement committed.
function Step:escalation()
  local k = self.cfg.escalate_after
  if k == 0 or not self.force_with then return nil end
  if self.replayed then
    -- Replay: what the recorded run forced (its pace was its own clock's).
    local e = self.replayed[("%s/%d/%d"):format(self.lineage.name, self.lineage.step,
      self.turns + 1)]
    if e then return e.tool, e.why end
    return nil
  end
  local left = self:turns_left()
  local idle = self.idle >= k
  if self:unevaluated() then
    if idle or self.driven or left <= 1 then
      return "evaluate", idle and ("%d turn%s without an evaluation of the change"):format(
        self.idle, self.idle == 1 and "" or "s")
        or self.driven and "the forced change is evaluated" or "the step's last turn"
    end
  elseif self:committable() then
    if idle or self.driven or left <= 1 then
      return "commit", "the working copy measured at least as fast as the best"
    end
  elseif idle or (self.evaluations == 0 and left <= 2) then
    local tool = "edit"
    local knobs = select(2, pcall(avo.knobs, self.work.source))
    if type(knobs) == "table" and #knobs > 0 and not (self.force_with == "schema" and
        self.forced_edits % 2 == 1) then
      tool = "set_knobs"
    end
    local why = idle and ("%d turn%s without a change to the working copy"):format(self.idle,
      self.idle == 1 and "" or "s")
      or ("the step would end without an evaluation: about %d turn%s left"):format(left,
        left == 1 and "" or "s")
    -- An edit needs the source in view (compaction and elision take it away).
    if tool == "edit" and not self.source_shown then return "read_source", why end
    return tool, why
  end
  return nil
end

-- Turns the step has left, this one included: of its turn budget, and of
-- its time (and the run's --max-time) at the pace of its turns so far (of
-- the lineage's earlier steps before its first), so that a slow model is
-- made to evaluate before the clock ends the step.
function Step:turns_left()
  local left = self.cfg.max_turns - self.turns
  local b = avo.budget()
  local spent = b.elapsed - self.started
  -- The pace: this step's turns so far, else the lineage's earlier steps.
  local lin = self.lineage
  local pace = self.turns > 0 and spent / self.turns
    or (lin.turns_done or 0) > 0 and lin.turn_seconds / lin.turns_done or nil
  if pace and pace > 0 then
    local secs = self.cfg.max_seconds - spent
    if b.max_seconds then secs = math.min(secs, b.max_seconds - b.elapsed) end
    left = math.min(left, math.floor(secs / pace))
  end
  return left
end

-- The schema of the forced call's arguments, tighter than the tool's own
-- where constrained decoding can use it: set_knobs sets one knob to a value
-- other than its current one, edit's `search` is a line that occurs once in
-- the working copy (inside an evolve region where the kernel marks them).
function Step:forced_schema(tool)
  if tool == "set_knobs" then
    local ok, domain = pcall(avo.knobs, self.work.source)
    local choices = array()
    for _, kn in ipairs(ok and domain or {}) do
      local values = array()
      for _, v in ipairs(kn.values) do
        if tostring(v) ~= tostring(self.work.knobs[kn.name]) then values[#values + 1] = v end
      end
      if #values > 0 then
        choices[#choices + 1] = { type = "object", properties = { [kn.name] = { enum = values } },
          required = array{ kn.name }, additionalProperties = false }
      end
    end
    if #choices > 0 then
      return { type = "object", properties = { knobs = { anyOf = choices } },
               required = array{ "knobs" }, additionalProperties = false }
    end
  elseif tool == "edit" then
    local lines, seen = {}, {}
    local inside = not self.regions
    for line in (self.work.source .. "\n"):gmatch("([^\n]*)\n") do
      if line:find(patch.BEGIN_MARK, 1, true) then inside = true
      elseif line:find(patch.END_MARK, 1, true) then inside = not self.regions
      elseif inside and line:match("%S") and #line <= 200 then
        seen[line] = (seen[line] or 0) + 1
        if seen[line] == 1 then lines[#lines + 1] = line end
      end
    end
    local once = array()
    for _, line in ipairs(lines) do
      if seen[line] == 1 and #once < 400 then once[#once + 1] = line end
    end
    if #once > 0 then
      return { type = "object", properties = { search = { enum = once },
        replace = { type = "string", maxLength = 2000 } },
        required = array{ "search", "replace" }, additionalProperties = false }
    end
  end
  return TOOL_BY_NAME[tool].parameters
end

-- What the forced request adds to the conversation: which tool, and for
-- set_knobs the knobs and their values (the model cannot see the
-- constrained schema in tool_choice mode: the tools it is shown stay the
-- same, so that a server's prompt cache keeps its prefix).
function Step:forced_message(tool, why)
  local text = ("The step must go on (%s): call %s now."):format(why, tool)
  if tool == "set_knobs" then
    local ok, domain = pcall(avo.knobs, self.work.source)
    local parts = {}
    for _, kn in ipairs(ok and domain or {}) do
      local vals = {}
      for i, v in ipairs(kn.values) do vals[i] = tostring(v) end
      parts[#parts + 1] = ("%s in {%s} (now %s)"):format(kn.name, table.concat(vals, ", "),
        tostring(self.work.knobs[kn.name]))
    end
    text = text .. " Change one knob to another of its values. Knobs: " ..
      table.concat(parts, "; ") .. "."
  elseif tool == "edit" then
    text = text .. " `search` is one line of the working copy, copied exactly; `replace` " ..
      "is what it becomes."
  elseif tool == "commit" then
    text = text .. " `message` says what changed and why it is faster."
  end
  return text
end

local force_fallback = {} -- server -> true once it ignored a named tool_choice

-- One forced turn: the request makes the model call `tool` (a named
-- tool_choice, or an answer constrained to the tool's argument schema,
-- force_with = "schema"), the answer comes back as that tool call.
-- Returns the response as avo.llm.chat does, or nil and why.
function Step:forced_call(chat, messages, tool, why)
  local note = { role = "user", content = self:forced_message(tool, why) }
  messages[#messages + 1] = note
  local req = {}
  for k, v in pairs(chat) do req[k] = v end
  req.messages = messages
  -- An answer that is only arguments is short (a change, a message).
  if tool ~= "edit" then req.max_tokens = math.min(chat.max_tokens or 4096, 512) end
  if self.force_with == "tool_choice" then
    req.tool_choice = { name = tool }
    local resp, err = avo.llm.chat(req)
    local obeyed = not resp
    for _, tc in ipairs(resp and resp.tool_calls or {}) do obeyed = obeyed or tc.name == tool end
    if not obeyed and self.cfg.force_with == "auto" and self.can_schema then
      -- The server ignores a named tool_choice (older Ollama): from now
      -- on its forced calls are answers constrained to the schema.
      avo.log("agent %s: the server answered a request that forces %s without calling it (it " ..
        "ignores a named tool_choice); forced calls go as answers constrained to the tool's " ..
        "schema from now on", self.lineage.name, tool)
      avo.event("agent_force_fallback", { lineage = self.lineage.name, step = self.lineage.step,
        tool = tool })
      self.force_with = "schema"
      force_fallback[self.server_key] = true
    end
    return resp, err
  end
  req.tools, req.tool_choice = nil, nil
  req.schema = self:forced_schema(tool)
  local resp, err = avo.llm.chat(req)
  if not resp then return nil, err end
  local args, derr = core.json_decode(resp.content ~= "" and resp.content or "{}")
  local call = { id = ("forced_%d_%d"):format(self.lineage.step, self.turns + 1), name = tool,
                 arguments = type(args) == "table" and args or {} }
  if type(args) ~= "table" then
    call.error = ("malformed arguments (%s): %s"):format(derr or "not a JSON object",
      excerpt(resp.content, 200))
  end
  resp.tool_calls = array{ call }
  resp.message = { role = "assistant", content = "", tool_calls = array{ { id = call.id,
    name = tool, arguments = call.arguments } } }
  return resp
end

------------------------------------------------------------------ memory

-- The conversation as text for the compaction call; with `limit` (bytes),
-- the newest messages that fit, the oldest left out (and said so).
local function transcript(messages, limit)
  local out = {}
  for _, m in ipairs(messages) do
    local text = m.content or ""
    if m.role == "tool" then text = "[tool result] " .. excerpt(text, limit and 800 or 1500) end
    if limit and m.role ~= "tool" then text = excerpt(text, math.max(400, limit // 3)) end
    for _, tc in ipairs(m.tool_calls or {}) do
      text = text .. ("\n[call %s %s]"):format(tc.name, excerpt(avo.json.encode(tc.arguments or {}), 600))
    end
    out[#out + 1] = ("%s: %s"):format(m.role, text)
  end
  if not limit then return table.concat(out, "\n") end
  local kept, size = {}, 0
  for i = #out, 1, -1 do
    if size + #out[i] + 1 > limit then
      table.insert(kept, 1, ("(%d earlier messages left out: the context window is small)"):format(i))
      break
    end
    size = size + #out[i] + 1
    table.insert(kept, 1, out[i])
  end
  return table.concat(kept, "\n")
end

-- The model's context window as the agent uses it, or nil when unknown:
-- { window, from, answer = max_tokens of a turn (at most a quarter of the
-- window), margin (a sixteenth, at least 128: estimates are estimates),
-- room = prompt tokens a call may send, tpc = tokens per character }.
function M.window_plan(cfg)
  local chat = llm.chat_options(cfg)
  local window, max_tokens, from = avo.llm.context_window(chat)
  if not window then return nil end
  local answer = math.min(max_tokens or 4096, math.max(128, window // 4))
  local margin = math.max(128, window // 16)
  return { window = window, from = from, answer = answer, margin = margin,
           room = window - answer - margin, tpc = (avo.llm.tokens_per_char(chat)) }
end

-- Conversation size (tokens) past which the lineage is compacted: the
-- context_tokens option, lowered to 80% of what the model's context window
-- leaves beside the answer's max_tokens and `overhead` (system prompt and
-- tool schemas, in tokens) where that window is known.  Returns the
-- threshold and the window (or nil).
function M.compaction_threshold(cfg, overhead)
  local plan = M.window_plan(cfg)
  if not plan then return cfg.context_tokens, nil end
  return math.min(cfg.context_tokens, math.max(plan.room - (overhead or 0), 128)), plan.window
end

-- Compact the lineage's conversation into a summary (one LLM call).  With
-- a window plan the call fits it: its answer takes at most an eighth of the
-- window, the transcript what is left (newest messages first), and the
-- summary is cut to an eighth.  Returns true, or nil and why (the
-- conversation is then kept; the failure is logged and an event).
function M.compact(lineage, cfg, prompt, threshold, window, during_step, plan)
  local before = M.estimate_tokens(lineage.messages, cfg)
  local chat = llm.chat_options(cfg)
  chat.stream = "agent/" .. lineage.name
  chat.system = prompt.compact_system
  local limit
  if plan then
    chat.max_tokens = math.min(plan.answer, math.max(128, plan.window // 8))
    local fixed = M.estimate_tokens({ { role = "user", content = prompt.compact{ transcript = "",
      summary = lineage.summary } } }, cfg, chat.system)
    local room = plan.window - chat.max_tokens - plan.margin - fixed
    limit = math.max(0, math.floor(room / avo.llm.tokens_per_char(chat)))
  end
  chat.messages = { { role = "user", content = prompt.compact{
    transcript = transcript(lineage.messages, limit), summary = lineage.summary } } }
  local resp, err = avo.llm.chat(chat)
  if not resp then
    avo.log("agent %s: compaction failed (step %d): %s", lineage.name, lineage.step, err)
    avo.event("agent_compaction_failed", { lineage = lineage.name, step = lineage.step,
      tokens_before = before, threshold = threshold, context_window = window,
      during_step = during_step or nil, error = err })
    return nil, err
  end
  local summary = resp.content
  if plan then summary = excerpt(summary, math.max(200, math.floor(plan.window / 8 / plan.tpc))) end
  lineage.summary = summary
  lineage.messages = {}
  avo.event("agent_compaction", { lineage = lineage.name, step = lineage.step,
    tokens_before = before, threshold = threshold, context_window = window,
    during_step = during_step or nil, summary = summary, call_id = resp.call_id })
  return true
end

------------------------------------------------------------------ step

-- The step's first message and how big a first request would be: `p`
-- (the step's plan) gains history, directions, message(omit_source) and
-- first_request(message).
local function step_prompt(p)
  local lineage, inc, ev, cfg, prompt = p.lineage, p.inc, p.ev, p.cfg, p.prompt
  local history = {}
  for _, rec in ipairs(lineage.committed) do
    history[#history + 1] = ("#%d step %d: %.6g %s — %s"):format(rec.id, rec.step or 0,
      rec.score, ev.unit or "", rec.note or "")
  end
  local directions = {}
  if lineage.directions_left > 0 then
    directions = lineage.directions
    lineage.directions_left = lineage.directions_left - 1
  end
  function p.message(omit_source)
    return prompt.step{
      evaluator = ev.name, description = ev.description, unit = ev.unit, lineage = lineage.name,
      step = lineage.step,
      best = { id = inc.id, score = inc.score, knobs = knob_text(inc.knobs),
               source = omit_source and "(not repeated here: the model's context window is " ..
                 "small; read_source shows the working copy, which starts as this version)"
                 or inc.source,
               omitted = omit_source or nil, configs = config_lines(inc, ev.unit) },
      history = history, directions = directions, events = lineage.events,
      summary = #lineage.messages == 0 and lineage.summary or nil,
      limits = { turns = cfg.max_turns, evaluations = cfg.max_evaluations,
                 seconds = math.floor(cfg.max_seconds) },
      regions = patch.fixed_segments(inc.source) ~= nil, notes = #notes.entries,
    }
  end
  -- Tokens of the whole request the first turn would send.
  function p.first_request(message)
    local msgs = {}
    for i, m in ipairs(lineage.messages) do msgs[i] = m end
    msgs[#msgs + 1] = { role = "user", content = message }
    return M.estimate_tokens(msgs, cfg, prompt.system, p.tools)
  end
end

-- Before the step: compact the lineage's conversation when it is past its
-- threshold or the first request would not fit; returns the step's message.
local function compact_before(p, message)
  local lineage, cfg, plan = p.lineage, p.cfg, p.plan
  local history_tokens = M.estimate_tokens(lineage.messages, cfg)
  if not (#lineage.messages > 0 and (history_tokens > p.threshold or
      (plan and p.first_request(message) > plan.room))) then
    return message
  end
  -- A compaction call costs about three turns (its prompt is all new to
  -- the server: measured 155 s beside 50 s turns); with the time for
  -- fewer than six turns left (at the lineage's pace) the step needs it
  -- for changing and evaluating: the conversation is dropped instead
  -- (the summary of earlier compactions is kept), and said.
  local b = avo.budget()
  local secs = cfg.max_seconds
  if b.max_seconds then secs = math.min(secs, b.max_seconds - b.elapsed) end
  local pace = (lineage.turns_done or 0) > 0 and lineage.turn_seconds / lineage.turns_done
  local short = pace and cfg.escalate_after > 0 and secs < 6 * pace
  local recorded = avo.recorded_events and avo.recorded_events("agent_compaction_skipped")
  if recorded then
    -- Replay: as the recorded run decided by its clock.
    short = false
    for _, e in ipairs(recorded) do
      if e.lineage == lineage.name and e.step == lineage.step then
        short, secs, pace = true, e.seconds_left, e.turn_seconds
      end
    end
  end
  if short then
    avo.log("agent %s step %d: no time for a compaction call (%.0f s left, %.0f s a turn): " ..
      "the conversation of earlier steps is dropped%s", lineage.name, lineage.step, secs, pace,
      lineage.summary and ", their summary kept" or "")
    avo.event("agent_compaction_skipped", { lineage = lineage.name, step = lineage.step,
      seconds_left = secs, turn_seconds = pace, tokens_before = history_tokens })
    lineage.messages = {}
    return p.message()
  elseif M.compact(lineage, cfg, p.prompt, p.threshold, p.window, nil, plan) then
    return p.message()
  end
  return message
end

-- How a call is forced (escalation): a named tool_choice where the
-- server understands one, else an answer constrained to the tool's
-- argument schema (llama-server: a grammar), else not at all; under
-- replay, what the recorded run forced.
function Step:setup_forcing()
  local cfg = self.cfg
  if cfg.escalate_after > 0 then
    local chat_opts = llm.chat_options(cfg)
    self.server_key = tostring(chat_opts.base_url or os.getenv("AVO_LLM_BASE_URL")) .. " " ..
      tostring(chat_opts.model or os.getenv("AVO_LLM_MODEL"))
    if cfg.force_with ~= "auto" then
      self.force_with = cfg.force_with
    else
      local caps = avo.llm.capabilities(chat_opts)
      self.can_schema = caps.schema
      self.force_with = caps.named_tool_choice and not force_fallback[self.server_key] and
        "tool_choice" or caps.schema and "schema" or nil
    end
  end
  for k, v in pairs(self.lineage.incumbent.knobs or {}) do self.work.knobs[k] = v end
  local forced_before = avo.recorded_events and avo.recorded_events("agent_forced")
  if forced_before then
    self.replayed = {}
    for _, e in ipairs(forced_before) do
      self.replayed[("%s/%s/%s"):format(e.lineage, e.step, e.turn)] = e
    end
  end
end

-- Prompt tokens of the next turn as things stand.
function Step:prompt_tokens()
  return M.estimate_tokens(self.messages, self.cfg, self.plan_of.prompt.system, self.plan_of.tools)
end

-- The status line: step, turn, tool calls and errors of this lineage.
function Step:progress()
  local lineage, cfg = self.lineage, self.cfg
  if avo.llm.set_progress then
    avo.llm.set_progress("agent/" .. lineage.name, ("agent %s step %d turn %d/%d, %d tool " ..
      "calls (%d errors%s), %d evals"):format(lineage.name, lineage.step, self.turns,
      cfg.max_turns, self.tool_calls, self.errors,
      self.forced > 0 and (", %d forced"):format(self.forced) or "", self.evaluations))
  end
end

-- Why the step cannot go on, or nil: one of its budgets or the run's is
-- spent.
function Step:spent()
  local cfg = self.cfg
  if self.turns >= cfg.max_turns then return ("turn budget of the step (%d) exhausted"):format(cfg.max_turns) end
  if self.tokens >= cfg.max_step_tokens then return "token budget of the step exhausted" end
  if avo.budget().elapsed - self.started >= cfg.max_seconds then return "time budget of the step exhausted" end
  if avo.exhausted() then return "run budget exhausted" end
end

-- The step itself outgrew the window: compact (at most 4 times a step),
-- keep the working copy, and go on from the summary.  Returns why the step
-- cannot go on, or nil.
function Step:fit_window()
  local p = self.plan_of
  local plan, lineage = p.plan, self.lineage
  if not plan then return nil end
  local messages = self.messages
  if self:prompt_tokens() > plan.room then
    -- First drop the text of older tool results (the model can ask
    -- again); that keeps the exact conversation, compaction does not.
    for i = 1, #messages - 1 do
      local m = messages[i]
      if m.role == "tool" and #(m.content or "") > 200 and not m.elided then
        m.content = ("[%d bytes of tool output elided to fit the context window; call the " ..
          "tool again to see it]"):format(#m.content)
        m.elided = true
        self.elided = (self.elided or 0) + 1
        self.source_shown = false
        if self:prompt_tokens() <= plan.room then break end
      end
    end
  end
  if not (self:prompt_tokens() > plan.room) then return nil end
  if self.compactions >= 4 then
    return "the step's conversation outgrew the context window 4 times"
  end
  self.compactions = self.compactions + 1
  local ok = M.compact(lineage, self.cfg, p.prompt, p.threshold, p.window, true, plan)
  self.source_shown = false
  if ok then
    self.messages = lineage.messages
    self.messages[1] = { role = "user", content = ("Your conversation so far was compacted " ..
      "into this summary:\n\n%s\n\nYou are still in step %d; your working copy is kept " ..
      "(read_source shows it). Go on: edit, compile, evaluate, then commit, or give_up " ..
      "with the reason."):format(lineage.summary or "", lineage.step) }
  end
  if self:prompt_tokens() > plan.room then
    local why = ("the conversation does not fit the model's context window (%d tokens from %s) " ..
      "even after compaction"):format(plan.window, plan.from)
    avo.log("agent %s: %s", lineage.name, why)
    return why
  end
end

-- The model's answer of one turn: forced (escalation) or its own choice.
function Step:ask(chat)
  local lineage = self.lineage
  local force, force_why = self:escalation()
  if not force then return force, avo.llm.chat(chat) end
  self.forced = self.forced + 1
  self.forced_by_tool[force] = (self.forced_by_tool[force] or 0) + 1
  avo.log("agent %s step %d turn %d: forcing %s (%s; %s)", lineage.name, lineage.step,
    self.turns + 1, force, force_why, self.force_with == "tool_choice" and "named tool_choice"
    or "answer constrained to its argument schema")
  avo.event("agent_forced", { lineage = lineage.name, step = lineage.step,
    turn = self.turns + 1, tool = force, why = force_why, with = self.force_with })
  return force, self:forced_call(chat, self.messages, force, force_why)
end

-- Run the tool calls of answer `resp` (each result cut to the room left
-- in the window), or nudge a model that called none.
function Step:run_tools(resp)
  local lineage, cfg, plan, messages = self.lineage, self.cfg, self.plan_of.plan, self.messages
  if #resp.tool_calls == 0 then
    self.no_tools = (self.no_tools or 0) + 1
    if self.no_tools == 2 and self.tool_calls == 0 then
      avo.log("agent %s: the model answered %d turns without tool calls although the " ..
        "request offers tools; a llama.cpp-family server needs a chat format that emits " ..
        "tool calls (llama-cpp-python: --chat_format chatml-function-calling; llama-server: " ..
        "--jinja)", lineage.name, self.no_tools)
      avo.event("agent_no_tool_calls", { lineage = lineage.name, step = lineage.step,
        turns = self.no_tools })
    end
    messages[#messages + 1] = { role = "user", content = "Work through the tools: edit, " ..
      "compile, evaluate, then commit, or give_up with the reason." }
    return
  end
  for _, tc in ipairs(resp.tool_calls) do
    local out = self:call_tool(tc)
    if plan then
      -- Cut the result to the room left in the window (a small window
      -- cannot hold a big kernel twice); the next turn compacts if
      -- even that does not fit.
      local left = plan.room - self:prompt_tokens() - 64
      local tpc = avo.llm.tokens_per_char(llm.chat_options(cfg)) -- learnt as it goes
      local cap = math.max(600, math.floor(left / tpc) - 160)
      if #out > cap then
        out = out:sub(1, cap) .. ("\n... (%d more bytes cut: the model's context window " ..
          "is small; ask for less at a time)"):format(#out - cap)
      end
    end
    messages[#messages + 1] = { role = "tool", tool_call_id = tc.id, content = out }
    self:progress()
  end
end

-- One turn: ask the model, run its tool calls, and move the escalation
-- state (idle turns, driven).  Returns why the step cannot go on, or nil.
function Step:turn(chat)
  chat.messages = self.messages
  local before = { evaluations = self.evaluations, source = self.work.source,
                   knobs = knob_text(self.work.knobs) }
  local force, resp, err = self:ask(chat)
  self.turns = self.turns + 1
  if not resp then return "llm: " .. err end
  self.tokens = self.tokens + resp.usage.input_tokens + resp.usage.output_tokens
  self.messages[#self.messages + 1] = resp.message
  self:run_tools(resp)
  -- Progress of the turn: the working copy changed or was measured.
  local moved = self.evaluations > before.evaluations or self.work.source ~= before.source
    or knob_text(self.work.knobs) ~= before.knobs
  if force and moved and (force == "set_knobs" or force == "edit") then
    self.forced_edits = self.forced_edits + 1
  end
  self.idle = moved and 0 or self.idle + 1
  -- A forced step that moved drives the next (evaluate, then commit);
  -- the model's own progress hands it the wheel again.
  if moved then self.driven = force ~= nil end
end

-- After the turns: the lineage's pace and tokens, the step's event, and
-- the committed record (or nil and why).
function Step:finish(why, omitted)
  local lineage = self.lineage
  self:progress()
  lineage.turns_done = (lineage.turns_done or 0) + self.turns
  lineage.turn_seconds = (lineage.turn_seconds or 0) + (avo.budget().elapsed - self.started)
  if self.evaluations == 0 then
    -- Never silent: a step that measured nothing says so (and why it ended).
    avo.log("agent %s step %d: no evaluation in this step (%d turns, %d tool calls, " ..
      "%d errors%s): %s",
      lineage.name, lineage.step, self.turns, self.tool_calls, self.errors,
      self.forced > 0 and (", %d forced"):format(self.forced) or "",
      self.result and "committed" or (self.why or why or "no commit"))
    lineage.unevaluated_steps = (lineage.unevaluated_steps or 0) + 1
  end
  lineage.tokens = lineage.tokens + self.tokens
  avo.event("agent_step", { lineage = lineage.name, step = lineage.step, turns = self.turns,
    tokens = self.tokens, evaluations = self.evaluations, tool_calls = self.tool_calls,
    tool_errors = self.errors, committed = self.result and self.result.id or nil,
    compactions = self.compactions > 0 and self.compactions or nil, source_omitted = omitted,
    elided = self.elided, forced = self.forced > 0 and self.forced or nil,
    forced_tools = self.forced > 0 and self.forced_by_tool or nil,
    unevaluated = self.evaluations == 0 or nil,
    why = self.result and nil or (self.why or why) })
  if self.result then
    local rec = self.result
    rec.step = lineage.step
    lineage.committed[#lineage.committed + 1] = rec
    lineage.incumbent = rec
    lineage.directions_left = 0
    return rec
  end
  return nil, self.why or why or "no commit"
end

-- One variation step of `lineage` from its incumbent (a verified record).
-- Returns the committed record, or nil and why.
--
-- The step's states: prepare (its message, compacting the lineage's
-- conversation first when needed), then turns until a budget is spent, the
-- window cannot hold the conversation, the model's call fails, or a tool
-- ends the step (commit, give_up); then finish.  Each turn's escalation
-- (Step:escalation) decides whether the model chooses its tool or is made
-- to take the next of edit -> evaluate -> commit.
function M.step(ctx, lineage)
  local cfg = read_options(ctx.options)
  local prompt = M.load_prompt(cfg.prompt or "prompts/agent")
  local ev = ctx.ev
  local inc = lineage.incumbent
  if not (inc and inc.id and inc.status == "ok") then
    return nil, "the agent needs a verified incumbent (an evaluated, correct parent)"
  end
  lineage.step = lineage.step + 1

  local plan = M.window_plan(cfg)
  if cfg.escalate_after == nil then
    cfg.escalate_after = plan and plan.window <= 32768 and 3 or 8
  end
  local tools = M.tools_for(inc.source)
  local overhead = M.estimate_tokens({}, cfg, prompt.system, tools)
  local threshold, window = M.compaction_threshold(cfg, overhead)
  local p = { lineage = lineage, inc = inc, ev = ev, cfg = cfg, prompt = prompt, plan = plan,
              tools = tools, threshold = threshold, window = window }
  step_prompt(p)
  local message = compact_before(p, p.message())
  local omitted
  if plan and p.first_request(message) > plan.room then
    -- The kernel alone fills the window: the model reads it through
    -- read_source, cut to the room left.
    message, omitted = p.message(true), true
  end
  if plan and p.first_request(message) > plan.room then
    local why = ("the step's prompt does not fit the model's context window (%d tokens from " ..
      "%s; about %d needed of %d left beside the answer and a margin): set a larger window " ..
      "on the server"):format(plan.window, plan.from, p.first_request(message), plan.room)
    avo.log("agent %s: %s", lineage.name, why)
    lineage.unevaluated_steps = (lineage.unevaluated_steps or 0) + 1
    avo.event("agent_step", { lineage = lineage.name, step = lineage.step, turns = 0, tokens = 0,
      evaluations = 0, tool_calls = 0, tool_errors = 0, unevaluated = true, why = why })
    return nil, why
  end
  lineage.events = {}
  local messages = lineage.messages
  messages[#messages + 1] = { role = "user", content = message }

  local self = setmetatable({
    ctx = ctx, cfg = cfg, ev = ev, lineage = lineage, evaluations = 0, turns = 0,
    tokens = 0, tool_calls = 0, errors = 0, done = false, compactions = 0,
    work = { source = inc.source, knobs = {} },
    idle = 0, forced = 0, forced_edits = 0, forced_by_tool = {}, source_shown = not omitted,
    regions = patch.fixed_segments(inc.source) ~= nil,
    messages = messages, plan_of = p,
  }, Step)
  self:setup_forcing()

  self.started = avo.budget().elapsed
  local chat = self:chat_options()
  chat.system = prompt.system
  chat.tools = tools
  if plan then chat.max_tokens = plan.answer end
  local why
  while not self.done do
    self:progress()
    why = self:spent() or self:fit_window() or self:turn(chat)
    if why then break end
  end
  return self:finish(why, omitted)
end

------------------------------------------------------------------ operator

-- As an operator (ga): the parent is the incumbent of the lineage named by
-- the `lineage` option; the committed version comes back as a candidate.
function M.apply(ctx, parents)
  local parent = parents[1]
  if not (parent and parent.id and parent.status == "ok") then
    return nil, "the agent needs an evaluated, correct parent"
  end
  local name = (ctx.options or {}).lineage or "ga"
  local lineage = default_lineages[name]
  if not lineage then
    lineage = M.new_lineage(name, parent)
    default_lineages[name] = lineage
  end
  if lineage.incumbent.id ~= parent.id then
    lineage.events[#lineage.events + 1] = ("the search hands you #%d as the version to improve")
      :format(parent.id)
    lineage.incumbent = parent
  end
  local rec, why = M.step(ctx, lineage)
  if not rec then return nil, why end
  return { source = rec.source, knobs = rec.knobs, operator = M.name, parents = rec.parents,
           note = rec.note, generation = ctx.generation }
end

return M
