-- avo: the AVO paper's protocol — continuous evolution of one lineage by the
-- agentic variation operator (operators/agent.lua), with a supervisor; and,
-- beyond the paper, several lineages at once with migration.
--
--   return avo.strategy("avo").run{ evaluator = "cpu/sgemm",
--     agent = { max_turns = 30 }, supervisor = { stall_steps = 4 } }
--
-- The seed (or `start`) is evaluated; each lineage starts from it and runs
-- agent steps until the run's budget (--max-time, --max-evals, --max-usd,
-- --max-tokens: avo.exhausted()) or `steps` is spent.  Each step either
-- commits a version through the agent's commit gate (it becomes the
-- lineage's incumbent) or ends without one.
--
-- Supervisor: after each step of a lineage, stagnation is checked —
--   stall_steps   k steps in a row without a commit (default 4)
--   repeats       attempts of a (source, knobs) fingerprint already tried in
--                 an earlier step, counted over the last `window` steps
--                 (default 3; 0 disables)
--   epsilon       relative gain of the incumbent over the last `window`
--                 steps below it (default 0.005; 0 disables)
-- On stagnation one supervisor LLM call reviews the trajectory (committed
-- versions, recent attempts, notes) and its directions (lines "- ...") are
-- put in the prompts of the lineage's next `direction_steps` steps (default
-- 3, or until a commit).  Every intervention is an event "supervisor"
-- {lineage, step, trigger, directions, call_id}; the counters then restart.
--
-- Lineages: `lineages = N` runs N agent lineages as concurrent tasks (LLM
-- calls and evaluations of one overlap with the others').  Every
-- `migration_interval` steps (default 4) they meet: the best version of all
-- replaces the incumbent of every lineage that is behind it (event
-- "migration" {from, to, id, score}), and the receiving agent is told.
--
-- Options:
--   evaluator          spec for avo.evaluator (required)
--   start              a candidate {source, knobs} to start from instead of
--                      the evaluator's seed kernel (note, operator kept)
--   steps              steps per lineage at most (default: until exhausted)
--   lineages           integer >= 1 (default 1)
--   migration_interval integer >= 1 (default 4)
--   agent              the agent operator's options (operators/agent.lua)
--   supervisor         { enabled = true, stall_steps, repeats, window,
--                        epsilon, directions = 4, direction_steps = 3,
--                        provider, model, ... (chat options) }
--   kb, kb_dirs        knowledge-base file for the agent (default: the run's
--                      archive), and directories to index into it first

local avo = require "avo"
local options = require "strategies.lib.options"
local records = require "strategies.lib.records"
local CHAT_KEYS = require("operators.lib.llm").CHAT_KEYS

local M = {}

local SUPERVISOR_DEFAULTS = { enabled = true, stall_steps = 4, repeats = 3, window = 5,
  epsilon = 0.005, directions = 4, direction_steps = 3 }

local function bad(name, expected, got)
  error(options.message("avo strategy", name, expected, got), 3)
end

local function read_options(opts)
  local ok, err = options.check_common("avo strategy", opts)
  if not ok then error(err, 2) end -- at the read_options call, as bad()
  local cfg = {
    evaluator = opts.evaluator, start = opts.start, steps = opts.steps or math.huge,
    lineages = opts.lineages or 1, migration_interval = opts.migration_interval or 4,
    agent = opts.agent or {}, kb = opts.kb, kb_dirs = opts.kb_dirs,
  }
  if cfg.steps ~= math.huge and (math.type(cfg.steps) ~= "integer" or cfg.steps < 0) then
    bad("steps", "an integer >= 0", cfg.steps)
  end
  if not options.is_integer_at_least(cfg.lineages, 1) then
    bad("lineages", "an integer >= 1", cfg.lineages)
  end
  if not options.is_integer_at_least(cfg.migration_interval, 1) then
    bad("migration_interval", "an integer >= 1", cfg.migration_interval)
  end
  if type(cfg.agent) ~= "table" then bad("agent", "a table of agent options", cfg.agent) end
  if cfg.start ~= nil and (type(cfg.start) ~= "table" or type(cfg.start.source) ~= "string") then
    bad("start", "a candidate table with a source", cfg.start)
  end
  local sup = {}
  for k, v in pairs(SUPERVISOR_DEFAULTS) do sup[k] = v end
  if opts.supervisor == false then
    sup.enabled = false
  elseif opts.supervisor ~= nil then
    if type(opts.supervisor) ~= "table" then bad("supervisor", "a table or false", opts.supervisor) end
    for k, v in pairs(opts.supervisor) do sup[k] = v end
  end
  for _, k in ipairs({ "stall_steps", "repeats", "window", "directions", "direction_steps" }) do
    if math.type(sup[k]) ~= "integer" or sup[k] < 0 then
      bad("supervisor." .. k, "an integer >= 0", sup[k])
    end
  end
  if type(sup.epsilon) ~= "number" or sup.epsilon < 0 then
    bad("supervisor.epsilon", "a number >= 0", sup.epsilon)
  end
  cfg.supervisor = sup
  if cfg.kb ~= nil then cfg.agent.kb = cfg.agent.kb or cfg.kb end
  return cfg
end

------------------------------------------------------------------ supervisor

-- The reason the lineage is stalled, or nil.
---@param lineage avo.agent.Lineage
---@param sup table the supervisor options (stagnation rules)
---@return string? # why the lineage is stalled
function M.stagnation(lineage, sup)
  local steps = lineage.step - (lineage.watch_from or 0)
  if sup.stall_steps > 0 and lineage.since_commit >= sup.stall_steps then
    return ("%d steps without a commit"):format(lineage.since_commit)
  end
  if sup.repeats > 0 then
    local first_step, repeats = {}, 0
    for _, a in ipairs(lineage.attempts) do
      local s = first_step[a.hash]
      if s == nil then
        first_step[a.hash] = a.step
      elseif s < a.step and a.step > lineage.step - sup.window and
          a.step > (lineage.watch_from or 0) then
        repeats = repeats + 1
      end
    end
    if repeats >= sup.repeats then
      return ("%d attempts repeat versions tried in earlier steps"):format(repeats)
    end
  end
  if sup.epsilon > 0 and steps >= sup.window and #lineage.score_at > sup.window then
    local now = lineage.score_at[#lineage.score_at]
    local before = lineage.score_at[#lineage.score_at - sup.window]
    if before > 0 and now / before - 1 < sup.epsilon then
      return ("gain over the last %d steps %.3f%% < epsilon %.3f%%"):format(sup.window,
        (now / before - 1) * 100, sup.epsilon * 100)
    end
  end
  return nil
end

-- Directions from the supervisor's answer: lines starting "- ", "* " or "1. ".
---@param text string the supervisor's answer
---@param n integer at most this many
---@return string[]
function M.parse_directions(text, n)
  local out = {}
  for line in (text or ""):gmatch("[^\n]+") do
    local d = line:match("^%s*[-*]%s+(.+)$") or line:match("^%s*%d+[.)]%s+(.+)$")
    if d and #out < n then out[#out + 1] = d:gsub("%s+$", "") end
  end
  return out
end

local function supervise(state, lineage, trigger)
  local sup, ev, agent = state.cfg.supervisor, state.ev, state.agent
  local prompt = agent.load_prompt(state.cfg.agent.prompt or "prompts/agent")
  local committed, attempts = {}, {}
  for _, rec in ipairs(lineage.committed) do
    committed[#committed + 1] = ("#%d step %d: %.6g — %s"):format(rec.id, rec.step or 0,
      rec.score, rec.note or "")
  end
  local from = math.max(1, #lineage.attempts - 11)
  for i = from, #lineage.attempts do
    local a = lineage.attempts[i]
    attempts[#attempts + 1] = ("step %d: %s, %.6g, %s (%s)"):format(a.step, a.status, a.score or 0,
      a.outcome or "?", a.hash:sub(1, 8))
  end
  local note_lines = {}
  for _, n in ipairs(agent.notes()) do note_lines[#note_lines + 1] = "- " .. n.text end
  local inc = lineage.incumbent
  local chat = {}
  for _, k in ipairs(CHAT_KEYS) do chat[k] = sup[k] or state.cfg.agent[k] end
  chat.stream = "supervisor/" .. lineage.name
  chat.system = prompt.supervisor_system
  chat.messages = { { role = "user", content = prompt.supervisor{
    evaluator = ev.name, description = ev.description, unit = ev.unit, lineage = lineage.name,
    trigger = trigger, best = { id = inc.id, score = inc.score, source = inc.source },
    committed = committed, attempts = attempts, notes = table.concat(note_lines, "\n"),
    n = sup.directions } } }
  local resp, err = avo.llm.chat(chat)
  local directions = resp and M.parse_directions(resp.content, sup.directions) or {}
  avo.event("supervisor", { lineage = lineage.name, step = lineage.step, trigger = trigger,
    directions = avo.json.array(directions), call_id = resp and resp.call_id,
    error = not resp and err or nil })
  avo.log("avo: supervisor on lineage %s (step %d, %s): %s", lineage.name, lineage.step, trigger,
    resp and (#directions .. " directions") or ("call failed: " .. tostring(err)))
  if #directions > 0 then
    lineage.directions = directions
    lineage.directions_left = sup.direction_steps
  end
  -- Watch afresh from here, so one stall makes one intervention.
  lineage.since_commit = 0
  lineage.watch_from = lineage.step
  lineage.interventions = (lineage.interventions or 0) + 1
end

------------------------------------------------------------------ the loop

local better = records.better

local function run_steps(state, lineage, n)
  for _ = 1, n do
    if lineage.step >= state.cfg.steps or avo.exhausted() then return end
    local ctx = { ev = state.ev, rng = lineage.rng, generation = lineage.step + 1,
                  options = state.cfg.agent }
    local rec, why = state.agent.step(ctx, lineage)
    if rec then
      lineage.since_commit = 0
      if better(rec, state.best) then state.best = rec end
      avo.log("avo: lineage %s step %d committed #%d (%.6g %s)", lineage.name, lineage.step,
        rec.id, rec.score, state.ev.unit or "")
    else
      lineage.since_commit = lineage.since_commit + 1
      avo.log("avo: lineage %s step %d: no commit (%s)", lineage.name, lineage.step, why)
    end
    lineage.score_at[#lineage.score_at + 1] = lineage.incumbent.score
    state.steps = state.steps + 1
    avo.progress{ generation = state.steps }
    local sup = state.cfg.supervisor
    if sup.enabled then
      local trigger = M.stagnation(lineage, sup)
      if trigger and not avo.exhausted() then supervise(state, lineage, trigger) end
    end
    -- A step that could not even start (no LLM, no budget) ends the lineage;
    -- an LLM outage does not (the next step asks again, and past
    -- AVO_LLM_FAULT_LIMIT calls in a row the run stops, resumable).
    if not rec and (why or ""):match("^llm:") and lineage.messages[#lineage.messages]
        and lineage.messages[#lineage.messages].role == "user"
        and avo.llm.fault_streak() == 0 then
      lineage.stopped = why
      avo.log("avo: lineage %s stops: %s", lineage.name, why)
      avo.event("lineage_stopped", { lineage = lineage.name, step = lineage.step, why = why })
      return
    end
  end
end

local function migrate(state)
  local best = state.best
  for _, l in ipairs(state.lineages) do
    if l.incumbent.id ~= best.id and better(best, l.incumbent) then
      local from
      for _, o in ipairs(state.lineages) do
        if o.incumbent.id == best.id then from = o.name break end
      end
      avo.event("migration", { from = from, to = l.name, id = best.id, score = best.score,
        replaced = l.incumbent.id })
      l.events[#l.events + 1] = ("version #%d (%.6g %s) from lineage %s migrated into this " ..
        "lineage and is now your current best"):format(best.id, best.score, state.ev.unit or "",
        from or "?")
      l.incumbent = best
      l.migrations = (l.migrations or 0) + 1
    end
  end
end

-- Index kb_dirs into the agent's knowledge base: its kb file, else the
-- run's own archive (one file then holds the experiment and what its agent
-- read).
local function index_kb(cfg)
  if not cfg.kb_dirs then return end
  local where = cfg.agent.kb or "the run's archive"
  local kb, err
  if cfg.agent.kb then
    kb, err = avo.kb.open(cfg.agent.kb)
  else
    kb = { add_dir = function(_, dir) return avo.kb.add_dir(dir) end, close = function() end }
  end
  if not kb then error("avo strategy: knowledge base " .. where .. ": " .. err, 3) end
  for _, dir in ipairs(cfg.kb_dirs) do
    dir = require("avo.paths").find_dir(dir) or dir -- like evaluators: from any directory
    local stats, aerr = kb:add_dir(dir)
    if not stats then error("avo strategy: indexing " .. dir .. " into " .. where .. ": " .. aerr, 3) end
  end
  kb:close()
end

---@param opts avo.StrategyOptions
---@return avo.Record? # the best record
function M.run(opts)
  local cfg = read_options(opts)
  local b = avo.budget()
  if cfg.steps == math.huge and not (b.max_evaluations or b.max_seconds or b.max_usd or
      b.max_tokens) then
    error("avo strategy: evolution is continuous; give a budget (--max-time, --max-evals, " ..
      "--max-usd or --max-tokens) or steps = N", 2)
  end
  local ev = avo.evaluator(cfg.evaluator)
  local agent = avo.operator("agent")
  index_kb(cfg)

  local start = cfg.start and {
    source = cfg.start.source, knobs = cfg.start.knobs or {}, operator = cfg.start.operator or "start",
    parents = cfg.start.parents or {}, note = cfg.start.note, generation = 0,
  } or ev:seed()
  local seed = avo.evaluate(ev, start)
  if seed.status ~= "ok" then
    avo.log("avo: the starting kernel failed (%s: %s); nothing to evolve", seed.status,
      seed.reason or "")
    return seed.status == "skipped" and nil or seed
  end
  avo.progress{ generation = 0 }

  local state = { cfg = cfg, ev = ev, agent = agent, best = seed, steps = 0, lineages = {} }
  for i = 1, cfg.lineages do
    local l = agent.new_lineage(cfg.lineages == 1 and "main" or ("L" .. i), seed)
    l.since_commit, l.score_at, l.rng = 0, { seed.score }, avo.rng("op.agent." .. i)
    state.lineages[i] = l
  end

  local interval = cfg.lineages == 1 and math.huge or cfg.migration_interval
  while not avo.exhausted() do
    local active = {}
    for _, l in ipairs(state.lineages) do
      if l.step < cfg.steps and not l.stopped then active[#active + 1] = l end
    end
    if #active == 0 then break end
    if #active == 1 then
      run_steps(state, active[1], interval)
    else
      local tasks = {}
      for i, l in ipairs(active) do tasks[i] = avo.spawn(run_steps, state, l, interval) end
      for _, t in ipairs(tasks) do avo.join(t) end
    end
    if cfg.lineages > 1 then migrate(state) end
  end

  local committed, attempts, unevaluated = 0, #avo.attempts.list(), 0
  for _, l in ipairs(state.lineages) do
    committed = committed + #l.committed
    unevaluated = unevaluated + (l.unevaluated_steps or 0)
  end
  avo.event("avo_summary", { steps = state.steps, committed = committed, attempts = attempts,
    best = state.best.id, best_score = state.best.score, unevaluated_steps = unevaluated })
  avo.log("avo: %d steps%s, %d attempts, %d versions committed; best #%d (%.6g %s)", state.steps,
    unevaluated > 0 and (" (%d without an evaluation)"):format(unevaluated) or "",
    attempts, committed, state.best.id, state.best.score, ev.unit or "")
  return state.best
end

return M
