-- avo — the API that scripts, strategies and operators program against
-- (documented in docs/lua-api.md).  The engine state of the current run
-- (archive, pool, budgets, streams) is installed by avo.cli through
-- avo._begin and is private to this module.

local core = require "avo.core"
local sched = require "avo.sched"
local knobs = require "avo.knobs"
local evaluator = require "avo.evaluator"
local paths = require "avo.paths"
local llm = require "avo.llm"
local pipeline = require "avo.pipeline"

local avo = {}
avo.version = core.version

local run -- the current run, see avo._begin

local function need_run(fname)
  if not run then error(("avo.%s: only available inside 'avo run'"):format(fname), 3) end
  return run
end

------------------------------------------------------------------ loading

local loaded = { strategies = {}, operators = {} }

local SINGULAR = { strategies = "strategy", operators = "operator" }

local function load_part(kind, name)
  if type(name) ~= "string" then
    error(("expected a %s name, got %s"):format(SINGULAR[kind], type(name)), 3)
  end
  local cache = loaded[kind]
  if cache[name] then return cache[name] end
  local path = paths.find(kind, name)
  if not path then
    error(paths.not_found(kind, name), 3)
  end
  local chunk, err = loadfile(path, "t")
  if not chunk then error(err, 0) end
  local module = chunk()
  if type(module) ~= "table" then
    error(("%s: must return a table, got %s"):format(path, type(module)), 0)
  end
  cache[name] = module
  return module
end

---@param spec string|avo.EvaluatorSpec a name (cpu/sgemm), a path or an evaluator table
---@return avo.Evaluator
function avo.evaluator(spec) return evaluator.load(spec) end

---@param name string strategies/NAME.lua or a path
---@return avo.Strategy
function avo.strategy(name)
  local s = load_part("strategies", name)
  if type(s.run) ~= "function" then error(("strategy '%s' has no run function"):format(name), 2) end
  return s
end

---@param name string operators/NAME.lua or a path
---@return avo.Operator
function avo.operator(name)
  local op = load_part("operators", name)
  if type(op.apply) ~= "function" then
    error(("operator '%s' has no apply function"):format(name), 2)
  end
  op.name = op.name or name
  return op
end

------------------------------------------------------------ randomness

local Rng = {}
Rng.__index = Rng

-- With opts.keep == false the stream is not kept in the run's table of
-- streams: for names used once (a child's own streams, named by generation,
-- slot and attempt), which would otherwise make that table grow with every
-- candidate of a long run.
---@param name string the stream's name; same name, same stream
---@param opts? {keep?: boolean} keep = false: a stream used once, not kept by the run
---@return avo.Stream
function avo.rng(name, opts)
  local r = need_run("rng")
  if type(name) ~= "string" then error("avo.rng: stream name must be a string", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("avo.rng: options must be a table", 2) end
  if opts and opts.keep == false then
    return r.streams[name] or setmetatable({ gen = core.rng(r.seed, name), name = name }, Rng)
  end
  if not r.streams[name] then
    r.streams[name] = setmetatable({ gen = core.rng(r.seed, name), name = name }, Rng)
  end
  return r.streams[name]
end

-- Uniform integer in [lo, hi].
function Rng:int(lo, hi)
  if not hi then lo, hi = 1, lo end
  if hi < lo then error(("rng:int: empty range [%d, %d]"):format(lo, hi), 2) end
  return lo + self.gen:below(hi - lo + 1)
end

function Rng:float() return self.gen:double() end

function Rng:chance(p) return self.gen:double() < p end

function Rng:choice(array)
  if #array == 0 then error("rng:choice: empty array", 2) end
  return array[1 + self.gen:below(#array)]
end

function Rng:shuffle(array)
  for i = #array, 2, -1 do
    local j = 1 + self.gen:below(i)
    array[i], array[j] = array[j], array[i]
  end
  return array
end

-- A key of `weights` drawn with probability proportional to its weight.
function Rng:weighted(weights)
  local keys, total = {}, 0
  for k, w in pairs(weights) do
    if type(w) ~= "number" or w < 0 then
      error(("rng:weighted: weight of '%s' must be a number >= 0"):format(tostring(k)), 2)
    end
    if w > 0 then keys[#keys + 1] = k; total = total + w end
  end
  if total == 0 then error("rng:weighted: all weights are zero", 2) end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local x = self.gen:double() * total
  for _, k in ipairs(keys) do
    x = x - weights[k]
    if x < 0 then return k end
  end
  return keys[#keys]
end

--------------------------------------------------------------- knobs etc.

-- The last sources' parses (operators parse their parent's and their
-- child's declarations for every candidate): at most KNOB_MEMO of them,
-- forgotten all at once when full.  Callers get their own copy.
local KNOB_MEMO = 256
local knob_memo, knob_memo_n = {}, 0

---@param source string kernel source with `// avo:param` lines
---@return avo.Knob[]
function avo.knobs(source)
  local hit = type(source) == "string" and knob_memo[source]
  if not hit then
    local ok, list = pcall(knobs.parse, source)
    hit = { ok = ok, list = list }
    if type(source) == "string" then
      if knob_memo_n >= KNOB_MEMO then knob_memo, knob_memo_n = {}, 0 end
      knob_memo[source], knob_memo_n = hit, knob_memo_n + 1
    end
  end
  if not hit.ok then error("avo.knobs: " .. hit.list, 2) end
  return knobs.copy(hit.list)
end

---@param base string
---@param ours string
---@param theirs string
---@return string merged
---@return integer conflicts
function avo.merge3(base, ours, theirs)
  local merged, n = core.merge3(base, ours, theirs)
  if not merged then error("avo.merge3: " .. n, 2) end
  return merged, n
end

avo.lineage = {}

---@param id integer
---@return avo.Record?
function avo.lineage.get(id)
  local r = need_run("lineage.get")
  local rec = r.archive:get(id, true)
  return rec
end

---@param a integer
---@param b integer
---@return integer?
function avo.lineage.common_ancestor(a, b)
  local r = need_run("lineage.common_ancestor")
  return r.archive:common_ancestor(a, b)
end

-- Up to n of the best verified records of this run, one per source (its
-- best record: score, then lower id).  The run keeps the top ones as records
-- arrive (pipeline.lineage_add), so this costs the same all run long.
---@param n integer
---@return avo.Record[] # best first, one per source
function avo.lineage.top(n)
  local r = need_run("lineage.top")
  local top = r.lineage.top
  if n > #top and #top < #r.lineage.sources then top = pipeline.lineage_ranked(r) end
  return table.move(top, 1, math.min(n, #top), 1, {})
end

-- Up to n verified records, one per source (its best record), drawn with
-- `rng` from those whose id is not a key of `exclude` (ids -> true).  A
-- small pool is shuffled whole in id order; a large one is sampled by
-- index, so the cost does not grow with the run; both are reproducible.
local DIVERSE_SHUFFLE = 64
---@param n integer
---@param rng avo.Stream
---@param exclude? table<integer, any> ids to leave out
---@return avo.Record[]
function avo.lineage.diverse(n, rng, exclude)
  local r = need_run("lineage.diverse")
  local lin = r.lineage
  local m = #lin.sources
  if m > DIVERSE_SHUFFLE and rng then
    local out, chosen = {}, {}
    for _ = 1, 8 * n + 16 do
      if #out >= n then return out end
      local source = lin.sources[rng:int(1, m)]
      local id = lin.id[source]
      if not chosen[id] and not (exclude and exclude[id]) then
        chosen[id] = true
        out[#out + 1] = pipeline.lineage_record(r, source)
      end
    end
    -- (only when nearly everything is excluded: fall through)
  end
  local pool = {}
  for _, source in ipairs(lin.sources) do
    if not (exclude and exclude[lin.id[source]]) then pool[#pool + 1] = source end
  end
  table.sort(pool, function(a, b) return lin.id[a] < lin.id[b] end)
  if rng then rng:shuffle(pool) end
  local out = {}
  for i = 1, math.min(n, #pool) do out[i] = pipeline.lineage_record(r, pool[i]) end
  return out
end

------------------------------------------------------------ evaluation

-- Whole-run budget check: evaluations, time, interruption, LLM spend.
---@return boolean # an evaluation, time or LLM budget is spent
function avo.exhausted()
  local r = need_run("exhausted")
  return pipeline.exhausted(r) or llm.exhausted()
end

-- How the bests are re-timed when the run ends (avo.retime): {top = K,
-- rounds = N}; top 0 turns it off.  A strategy calls it to change the
-- defaults; the command line's --retime/--retime-rounds win over it.
---@param opts { top?: integer, rounds?: integer }
function avo.retime(opts)
  local r = need_run("retime")
  if type(opts) ~= "table" then error("avo.retime: expects a table {top =, rounds =}", 2) end
  for _, k in ipairs({ "top", "rounds" }) do
    local v = opts[k]
    if v ~= nil and (math.type(v) ~= "integer" or v < 0 or v > 1000) then
      error(("avo.retime: '%s' must be an integer from 0 to 1000"):format(k), 2)
    end
  end
  if opts.rounds == 0 then error("avo.retime: 'rounds' must be at least 1", 2) end
  r.retime_script = { top = opts.top, rounds = opts.rounds }
end

---@return avo.Budget
function avo.budget()
  local r = need_run("budget")
  return {
    evaluations = r.submitted, max_evaluations = r.max_evaluations,
    elapsed = core.monotonic() - r.started, max_seconds = r.max_seconds,
    llm = llm.totals(), max_usd = r.max_usd, max_tokens = r.max_tokens,
  }
end

---@return avo.Record?
function avo.best() return need_run("best").best end

-- The baselines of this run measured so far (rows of the archive's
-- baselines table: name, device, status, reason, score, ...).  With
-- { wait = true }, first waits for every baseline started so far.
---@param opts? { wait?: boolean }
---@return table[] # rows of the archive's baselines table
function avo.baselines(opts)
  local r = need_run("baselines")
  if opts ~= nil and type(opts) ~= "table" then error("avo.baselines: options must be a table", 2) end
  if opts and opts.wait then
    for _, t in ipairs(r.baseline_tickets) do sched.await(t) end
  end
  return table.move(r.baseline_rows, 1, #r.baseline_rows, 1, {})
end
---@return avo.Record?
function avo.seed_record() return need_run("seed_record").seed_record end

local function check_candidate(c, i)
  local where = i and ("candidate %d"):format(i) or "candidate"
  if type(c) ~= "table" then error(("%s must be a table"):format(where), 4) end
  if type(c.source) ~= "string" then error(("%s needs a 'source' string"):format(where), 4) end
  if c.knobs ~= nil and type(c.knobs) ~= "table" then
    error(("%s: 'knobs' must be a table"):format(where), 4)
  end
  if c.operator ~= nil and type(c.operator) ~= "string" then
    error(("%s: 'operator' must be a string"):format(where), 4)
  end
  if c.parents ~= nil and type(c.parents) ~= "table" then
    error(("%s: 'parents' must be an array of {id=, role=}"):format(where), 4)
  end
end

---@param ev avo.Evaluator
---@param cands avo.Candidate[]
---@return avo.Record[] # in the order of cands
function avo.evaluate_all(ev, cands)
  local r = need_run("evaluate_all")
  if getmetatable(ev) ~= evaluator.Evaluator then
    error("avo.evaluate_all: first argument must be an evaluator (avo.evaluator(...))", 2)
  end
  if type(cands) ~= "table" then error("avo.evaluate_all: expected an array of candidates", 2) end
  -- All submitted (each checked just before) before any is awaited.
  local tickets, dup = {}, {}
  for i, c in ipairs(cands) do
    check_candidate(c, i)
    tickets[i], dup[i] = pipeline.submit(r, ev, c)
  end
  return pipeline.records(r, tickets, dup)
end

------------------------------------------------------ attempts, compiling

-- An attempt is a measurement that makes no candidate (docs/lua-api.md;
-- lua/avo/pipeline.lua).

local ATTEMPT_KEYS = { lineage = "string", step = "number", outcome = "string",
                       reason = "string", candidate_id = "number" }

local function check_attempt(a)
  if type(a) ~= "table" then error("avo.evaluate: 'attempt' must be a table", 4) end
  for k, want in pairs(ATTEMPT_KEYS) do
    if a[k] ~= nil and type(a[k]) ~= want then
      error(("avo.evaluate: attempt.%s must be a %s"):format(k, want), 4)
    end
  end
end

--[[
avo.evaluate(ev, cand [, opts]) -> record
  opts.attempt  = {lineage =, step =, outcome =, reason =, candidate_id =}:
                  measure without making a candidate; the record has
                  attempt_id (no id) and the raw worker `result`
  opts.retime   = true: an attempt re-timing `cand` (outcome "retime")
  opts.measured = a record returned for an attempt: make `cand` a candidate
                  with that measurement, without evaluating it again
]]
---@param ev avo.Evaluator
---@param cand avo.Candidate
---@param opts? { attempt?: table, retime?: boolean, measured?: avo.Record }
---@return avo.Record
function avo.evaluate(ev, cand, opts)
  if getmetatable(ev) ~= evaluator.Evaluator then
    error("avo.evaluate: first argument must be an evaluator (avo.evaluator(...))", 2)
  end
  check_candidate(cand)
  if opts == nil then return avo.evaluate_all(ev, { cand })[1] end
  if type(opts) ~= "table" then error("avo.evaluate: options must be a table", 2) end
  local r = need_run("evaluate")
  if opts.measured ~= nil then
    if type(opts.measured) ~= "table" or type(opts.measured.status) ~= "string" then
      error("avo.evaluate: 'measured' must be a record returned by an attempt", 2)
    end
    return pipeline.adopt(r, ev, cand, opts.measured)
  end
  if opts.attempt == nil and not opts.retime then return avo.evaluate_all(ev, { cand })[1] end
  local info = opts.attempt or {}
  check_attempt(info)
  if opts.retime then
    local copy = {}
    for k, v in pairs(info) do copy[k] = v end
    copy.outcome = copy.outcome or "retime"
    info = copy
  end
  return pipeline.attempt(r, ev, cand, info)
end

-- Compile `cand` only (job mode compile_only; the in-process backend's
-- test_compile): {status, reason, log, compile = resources (CUDA)}.  Not an
-- evaluation: nothing is archived and the budget is not charged.
---@param ev avo.Evaluator
---@param cand avo.Candidate
---@return { status: string, reason: string?, log: string?, compile: table? }
function avo.compile(ev, cand)
  local r = need_run("compile")
  if getmetatable(ev) ~= evaluator.Evaluator then
    error("avo.compile: first argument must be an evaluator (avo.evaluator(...))", 2)
  end
  check_candidate(cand)
  return pipeline.compile(r, ev, cand)
end

avo.attempts = {}

-- Set an attempt's outcome (and reason, candidate id when given).
---@param id integer
---@param outcome string
---@param reason? string
---@param candidate_id? integer
function avo.attempts.update(id, outcome, reason, candidate_id)
  local r = need_run("attempts.update")
  local ok, err = r.archive:attempt_update(id, outcome, reason, candidate_id)
  if not ok then error("avo.attempts.update: " .. err, 2) end
  return true
end

-- This run's attempts, oldest first (rows of the attempts table).
---@return table[] # this run's attempt rows, oldest first
function avo.attempts.list()
  local r = need_run("attempts.list")
  return assert(r.archive:attempts(r.run_id))
end

-- Unified diff from text a to text b ("" when equal).
---@param a string
---@param b string
---@param name? string file name in the header
---@return string # unified diff from a to b
function avo.diff(a, b, name)
  if type(a) ~= "string" or type(b) ~= "string" then error("avo.diff: expected two strings", 2) end
  local d, err = core.diff(a, b, name)
  if not d then error("avo.diff: " .. err, 2) end
  return d
end

------------------------------------------------------- tasks and output

avo.spawn = sched.spawn
avo.join = sched.join

---@param fmt string string.format pattern
---@param ... any
function avo.log(fmt, ...)
  local msg = select("#", ...) > 0 and fmt:format(...) or tostring(fmt)
  if run then
    if run.on_log then run.on_log(msg) end
    pipeline.emit(run, "log", { message = msg })
  else
    io.stderr:write(core.inert(msg), "\n")
  end
end

-- An event of kind `kind` with a JSON-able payload in the run's archive.
---@param kind string
---@param data? table stored as JSON
function avo.event(kind, data)
  local r = need_run("event")
  if type(kind) ~= "string" or kind == "" then error("avo.event: kind must be a string", 2) end
  local ok, err = pipeline.emit(r, kind, data)
  if not ok then error("avo.event: " .. tostring(err), 2) end
  return true
end

-- Under `avo replay`: the payloads of the recorded run's events of `kind`,
-- in order (for decisions a re-execution cannot make again by itself, such
-- as those that depend on the clock: the agent's forced calls); nil in any
-- other run.
---@param kind string
---@return table[]? # the data of the recorded events of that kind when replaying, else nil
function avo.recorded_events(kind)
  local r = need_run("recorded_events")
  local rec = r.recorded
  if not (rec and rec.mode == "replay" and rec.events) then return nil end
  local out = {}
  for _, e in ipairs(rec.events) do
    if e.kind == kind then out[#out + 1] = e.data or {} end
  end
  return out
end

-- What one call of operator `op` (its module) came to: a child, or nil and
-- why.  Counted per operator (avo.outcomes(), the status line) and, for
-- operators that call a language model (op.llm) or that failed, written as
-- an event "operator_outcome" {operator, outcome, reason}: outcome
-- "applied", "rejected" (an answer or edit that could not be used), "call
-- failed" (the LLM call itself failed: reasons starting "llm: ") or
-- "refused" (no call was made: a budget is spent or the run is stopping,
-- reasons starting "llm: " and naming it; avo.llm.is_refusal).
-- Failures of LLM operators are also logged, so they are seen as they
-- happen.
---@param op avo.Operator|string
---@param child? avo.Candidate
---@param why? string why there is no child
function avo.outcome(op, child, why)
  local r = need_run("outcome")
  local name = type(op) == "table" and op.name or tostring(op)
  local outcome = child and "applied" or
    ((type(why) == "string" and why:sub(1, 5) == "llm: ") and
      (llm.is_refusal(why:sub(6)) and "refused" or "call failed") or "rejected")
  local counts = r.outcomes[name]
  if not counts then
    counts = { applied = 0, rejected = 0, ["call failed"] = 0, refused = 0 }
    r.outcomes[name] = counts
    r.outcome_order[#r.outcome_order + 1] = name
  end
  counts[outcome] = counts[outcome] + 1
  local uses_llm = type(op) == "table" and op.llm
  if uses_llm or not child then
    pipeline.emit(r, "operator_outcome", { operator = name, outcome = outcome,
                                  reason = not child and tostring(why or "no reason") or nil })
  end
  if uses_llm and not child then
    local reason = tostring(why or "no reason"):gsub("%s+", " ")
    if #reason > 240 then reason = reason:sub(1, 240) .. "..." end
    avo.log("%s: %s: %s", name, outcome, reason)
  end
end

-- Operator outcomes so far: array of {operator, applied, rejected,
-- call_failed} in order of first use.
---@return table<string, table<string, integer>> # per operator: applied, rejected, call failed, refused
function avo.outcomes()
  local r = need_run("outcomes")
  local out = {}
  for _, name in ipairs(r.outcome_order) do
    local c = r.outcomes[name]
    out[#out + 1] = { operator = name, applied = c.applied, rejected = c.rejected,
                      call_failed = c["call failed"], refused = c.refused }
  end
  return out
end

---@param info table what the progress line shows
function avo.progress(info)
  local r = need_run("progress")
  if type(info) ~= "table" then error("avo.progress: expected a table", 2) end
  r.generation = info.generation or r.generation
  pipeline.emit(r, "generation", {
    generation = r.generation, finished = r.finished, failed = r.failed,
    best = r.best and r.best.id, best_score = r.best and r.best.score,
  })
  if r.on_progress then r.on_progress(info) end
end

--------------------------------------------------------- knowledge base

-- avo.kb.open(path) opens the knowledge base of any SQLite file (lua/lua_kb.h).
-- avo.kb.search and avo.kb.read consult the current run's archive, on the
-- archive's own connection, opened on first use and closed by avo._end.  Expected failures (no such document)
-- return nil, message, which the agent operator hands on to the model.
avo.kb = {}

---@param path? string the knowledge base file (default: the run's archive)
function avo.kb.open(path)
  if type(path) ~= "string" then error("avo.kb.open: expected a file path", 2) end
  return core.kb(path)
end

local function run_kb(r)
  if not r.kb then
    if not r.db then return nil, "this run has no archive file to hold a knowledge base" end
    local kb, err = core.kb(r.archive)
    if not kb then return nil, err end
    r.kb = kb
  end
  return r.kb
end

-- Index the documents under dir into the current run's archive; the stats
-- table of kb:add_dir, or nil, message.
---@param dir string
---@return table # counts of files added, updated, dropped
function avo.kb.add_dir(dir)
  local r = need_run("kb.add_dir")
  if type(dir) ~= "string" then error("avo.kb.add_dir: expected a directory", 2) end
  local kb, err = run_kb(r)
  if not kb then return nil, err end
  return kb:add_dir(dir)
end

---@param query string plain words
---@param limit? integer
---@return table[] # sections ranked by relevance
function avo.kb.search(query, limit)
  local r = need_run("kb.search")
  if type(query) ~= "string" then error("avo.kb.search: expected a query string", 2) end
  if limit ~= nil and (math.type(limit) ~= "integer" or limit < 1 or limit > 1000) then
    error("avo.kb.search: limit must be an integer from 1 to 1000", 2)
  end
  local kb, err = run_kb(r)
  if not kb then return nil, err end
  return kb:search(query, limit)
end

---@param doc string|integer a path, a unique path suffix or an id
---@return table?
function avo.kb.read(doc)
  local r = need_run("kb.read")
  if type(doc) ~= "string" and math.type(doc) ~= "integer" then
    error("avo.kb.read: expected a document path or id", 2)
  end
  local kb, err = run_kb(r)
  if not kb then return nil, err end
  return kb:read(tostring(doc))
end

----------------------------------------------------- engine entry points

-- Install the run state (called by avo.cli).
function avo._begin(state)
  run = pipeline.begin(state)
  llm._begin(run, { exhausted = avo.exhausted, log = avo.log, stop_reason = function()
                      if core.interrupted() then return "a signal" end
                      if run.stop_at and run.checks >= run.stop_at then return "the recorded stop" end
                      if run.max_seconds and core.monotonic() - run.started >= run.max_seconds then
                        return ("--max-time %gs"):format(run.max_seconds)
                      end
                      if run.max_evaluations and run.submitted >= run.max_evaluations then
                        return ("--max-evals %d"):format(run.max_evaluations)
                      end
                      return "every worker gone"
                    end,
                    exhausted_now = function()
                      return pipeline.exhausted(run, false) or llm.exhausted()
                    end,
                    event = function(kind, data) pipeline.emit(run, kind, data) end })
  return run
end

function avo._end()
  llm._end()
  if run and run.kb then run.kb:close() end
  run = nil
end

------------------------------------------------------------------ llm

-- avo.llm.chat{...} and friends: see lua/avo/llm.lua and docs/lua-api.md.
avo.llm = llm

-- avo.json.encode/decode/array: see lua/avo/json.lua and docs/lua-api.md.
avo.json = require "avo.json"

--[[
avo.options(args, spec [, who]) -> table
  The script's KEY=VALUE arguments (strings), checked against `spec` and
  converted: spec maps each accepted name to { type = "integer" | "number" |
  "string" | "boolean", default = value, min = n, max = n }.  An unknown
  name, or a value that is not of its type (abc, nan, inf for numbers) or
  out of range, is a usage error: the run ends at once with exit status 2
  (recorded as stopped) and a message naming the script's line and the
  argument.
]]
---@param args? table the script's KEY=VALUE arguments (...)
---@param spec table<string, { type: "integer"|"number"|"string"|"boolean", default?: any, min?: number, max?: number }>
---@param who? string named in errors
---@return table
function avo.options(args, spec, who)
  if args == nil then args = {} end
  if type(args) ~= "table" or type(spec) ~= "table" then
    error("avo.options: expected the script's arguments (...) and a table of options", 2)
  end
  who = who or "argument"
  -- "script:line: " of the caller, as error(msg, 2) would say it.
  local function refuse(msg)
    local info = debug.getinfo(3, "Sl")
    local where = info and info.currentline > 0 and
      ("%s:%d: "):format(info.short_src, info.currentline) or ""
    error({ avo_exit = 2, message = "avo: " .. where .. msg }, 0)
  end
  local names = {}
  for name in pairs(spec) do names[#names + 1] = name end
  table.sort(names)
  local out = {}
  for name, text in pairs(args) do
    local s = spec[name]
    if not s then
      refuse(("%s '%s' is not an option of this script (options: %s)"):format(who, tostring(name),
        #names > 0 and table.concat(names, ", ") or "none"))
    end
    local v = text
    if type(text) == "string" then
      if s.type == "integer" then
        v = math.tointeger(tonumber(text))
      elseif s.type == "number" then
        v = tonumber(text)
        if v and (v ~= v or v == math.huge or v == -math.huge) then v = nil end
      elseif s.type == "boolean" then
        v = ({ ["true"] = true, ["1"] = true, yes = true, ["false"] = false, ["0"] = false,
               no = false })[text]
      end
    end
    local expected = s.type == "integer" and "an integer" or s.type == "number" and
      "a finite number" or s.type == "boolean" and "true or false" or "a string"
    if s.min and s.max then expected = ("%s from %s to %s"):format(expected, s.min, s.max)
    elseif s.min then expected = ("%s >= %s"):format(expected, s.min)
    elseif s.max then expected = ("%s <= %s"):format(expected, s.max) end
    if v == nil or (type(v) == "number" and ((s.min and v < s.min) or (s.max and v > s.max))) then
      refuse(("%s %s=%s must be %s"):format(who, name, tostring(text), expected))
    end
    out[name] = v
  end
  for name, s in pairs(spec) do
    if out[name] == nil then out[name] = s.default end
  end
  return out
end

-- End the run early with exit status `status` (an integer from 0 to 255,
-- what a process can exit with) after printing `message` (for example a
-- script that lacks configuration: avo.exit(2, "set X")).  The run is
-- recorded as stopped.  Any other status is refused (an error in the
-- script: exit 1, run failed) rather than truncated by the kernel to its
-- low 8 bits (256 would exit 0).
---@param status integer 0 to 255
---@param message? string
function avo.exit(status, message)
  local code = math.tointeger(status)
  if not code or code < 0 or code > 255 then
    error(("avo.exit: status must be an integer from 0 to 255, got %s"):format(
      type(status) == "number" and tostring(status) or type(status)), 2)
  end
  if message ~= nil and type(message) ~= "string" then
    error(("avo.exit: message must be a string, got %s"):format(type(message)), 2)
  end
  error({ avo_exit = code, message = message }, 0)
end

return avo
