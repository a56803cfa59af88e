-- mock_avo: a pure-Lua stand-in for the engine's `avo` module, enough to run
-- strategies and operators under plain `lua5.4` before the engine exists.
--
-- It follows docs/lua-api.md for everything strategies and operators call.
-- Evaluation is synchronous and fake: the evaluator spec is a table
--
--   { name = "toy", source = "...", score = function(knobs, source) ... end }
--
-- whose `score` returns a number (status "ok") or nil and a reason (status
-- "wrong", score 0). The archive is an in-memory table; `mock.reset` starts
-- a new run. Functions starting with `_` are test hooks, not engine API.

local avo = { lineage = {} }

local run -- the current run's state, see avo._reset

---------------------------------------------------------------------------
-- Test hooks

-- Starts a new run: empty archive, new run seed, optional evaluation budget.
function avo._reset(opts)
  opts = opts or {}
  run = {
    seed = opts.seed or 1,
    max_evaluations = opts.max_evaluations,
    next_id = 1,
    records = {},      -- id -> record
    by_key = {},       -- candidate key -> record
    evaluated = {},    -- records in evaluation order
    progress = {},     -- generations reported
    logs = {},
    streams = {},
    best = nil,
    seed_record = nil,
  }
end

function avo._run() return run end

-- Puts a record straight into the archive (for lineage tests). Returns it.
function avo._add_record(fields)
  local record = {}
  for k, v in pairs(fields) do record[k] = v end
  record.id = run.next_id
  run.next_id = run.next_id + 1
  record.status = record.status or "ok"
  record.score = record.score or 0
  record.knobs = record.knobs or {}
  record.parents = record.parents or {}
  run.records[record.id] = record
  return record
end

---------------------------------------------------------------------------
-- Loading parts

local loaded = { operators = {}, strategies = {} }

local function load_part(kind, folder, name)
  if not loaded[kind][name] then
    local path = name:find("/", 1, true) and name or (folder .. "/" .. name .. ".lua")
    loaded[kind][name] = dofile(path)
  end
  return loaded[kind][name]
end

function avo.operator(name) return load_part("operators", "operators", name) end
function avo.strategy(name) return load_part("strategies", "strategies", name) end

---------------------------------------------------------------------------
-- Knobs

-- Integers become Lua integers; identifiers stay strings.
local function knob_value(word)
  return math.tointeger(tonumber(word)) or word
end

function avo.knobs(source)
  local knobs = {}
  for line in (source or ""):gmatch("[^\n]+") do
    local name, rest = line:match("^%s*//%s*avo:param%s+([%a_][%w_]*)%s+(.-)%s*$")
    if name then
      local values = {}
      for word in rest:gmatch("%S+") do values[#values + 1] = knob_value(word) end
      knobs[#knobs + 1] = { name = name, values = values }
    end
  end
  return knobs
end

---------------------------------------------------------------------------
-- Evaluators

local Evaluator = {}
Evaluator.__index = Evaluator

function Evaluator:seed()
  local knobs = {}
  for _, knob in ipairs(self.knobs) do knobs[knob.name] = knob.values[1] end
  return { source = self.source, knobs = knobs, operator = "seed",
           parents = {}, note = "seed" }
end

function avo.evaluator(spec)
  if type(spec) ~= "table" then error("mock evaluator: spec must be a table", 2) end
  for _, field in ipairs({ "name", "source", "score" }) do
    if spec[field] == nil then error("mock evaluator: field '" .. field .. "' is required", 2) end
  end
  local ev = setmetatable({}, Evaluator)
  for k, v in pairs(spec) do ev[k] = v end
  ev.knobs = avo.knobs(spec.source)
  return ev
end

---------------------------------------------------------------------------
-- Evaluation

local function candidate_key(c)
  local names = {}
  for name in pairs(c.knobs or {}) do names[#names + 1] = name end
  table.sort(names)
  local parts = { c.source }
  for _, name in ipairs(names) do parts[#parts + 1] = name .. "=" .. tostring(c.knobs[name]) end
  return table.concat(parts, "\0")
end

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

function avo.exhausted()
  return run.max_evaluations ~= nil and #run.evaluated >= run.max_evaluations
end

function avo.evaluate(ev, cand)
  assert(type(cand.source) == "string", "candidate without source")
  local key = candidate_key(cand)
  local earlier = run.by_key[key]
  if earlier then
    local dup = copy(earlier)
    dup.duplicate = true
    return dup
  end
  local record = copy(cand)
  record.knobs = record.knobs or {}
  record.parents = record.parents or {}
  if avo.exhausted() then
    record.status, record.score, record.reason = "skipped", 0, "budget"
    return record
  end
  local score, reason = ev.score(record.knobs, record.source)
  if score then
    record.status, record.score = "ok", score
  else
    record.status, record.score, record.reason = "wrong", 0, reason or "wrong"
  end
  record.id = run.next_id
  run.next_id = run.next_id + 1
  record.configs = {}
  record.duplicate = false
  run.records[record.id] = record
  run.by_key[key] = record
  run.evaluated[#run.evaluated + 1] = record
  run.seed_record = run.seed_record or record
  if run.best == nil or record.score > run.best.score then run.best = record end
  return record
end

function avo.evaluate_all(ev, cands)
  local records = {}
  for i, c in ipairs(cands) do records[i] = avo.evaluate(ev, c) end
  return records
end

function avo.budget()
  return { evaluations = #run.evaluated, max_evaluations = run.max_evaluations,
           elapsed = 0, max_seconds = nil }
end

function avo.best() return run.best end
function avo.seed_record() return run.seed_record end

---------------------------------------------------------------------------
-- Randomness: a 64-bit LCG per stream (Knuth's MMIX constants), seeded from
-- the run seed and an FNV-1a hash of the stream name. Deterministic, not
-- statistically strong; enough for tests.

local Rng = {}
Rng.__index = Rng

local function fnv1a(s)
  local h = -3750763034362895579 -- 14695981039346656037 as a signed integer
  for i = 1, #s do
    h = (h ~ s:byte(i)) * 1099511628211
  end
  return h
end

function Rng:next31()
  self.state = self.state * 6364136223846793005 + 1442695040888963407
  return (self.state >> 33) & 0x7fffffff
end

function Rng:float() return self:next31() / 2147483648.0 end

function Rng:int(lo, hi)
  assert(math.type(lo) == "integer" and math.type(hi) == "integer" and lo <= hi,
    "rng:int needs integers lo <= hi")
  return lo + self:next31() % (hi - lo + 1)
end

function Rng:chance(p) return self:float() < p end

function Rng:choice(array)
  assert(#array > 0, "rng:choice of an empty array")
  return array[self:int(1, #array)]
end

function Rng:shuffle(array)
  for i = #array, 2, -1 do
    local j = self:int(1, i)
    array[i], array[j] = array[j], array[i]
  end
  return array
end

function Rng:weighted(map)
  local keys, total = {}, 0
  for k, w in pairs(map) do
    keys[#keys + 1] = k
    total = total + w
  end
  assert(total > 0, "rng:weighted needs a positive total weight")
  table.sort(keys)
  local x = self:float() * total
  for _, k in ipairs(keys) do
    x = x - map[k]
    if x < 0 then return k end
  end
  return keys[#keys]
end

function avo.rng(name)
  local stream = run.streams[name]
  if not stream then
    stream = setmetatable({ state = fnv1a(name) ~ (run.seed * 0x9E3779B97F4A7C15) }, Rng)
    stream:next31() -- mix the seed in before the first draw
    run.streams[name] = stream
  end
  return stream
end

---------------------------------------------------------------------------
-- Lineage and merge

function avo.lineage.get(id) return run.records[id] end

-- Distance (in parent edges) from `id` to each of its ancestors, itself at 0.
local function ancestors(id)
  local dist, queue, head = { [id] = 0 }, { id }, 1
  while queue[head] do
    local cur = queue[head]
    head = head + 1
    local record = run.records[cur]
    for _, p in ipairs(record and record.parents or {}) do
      if p.id and dist[p.id] == nil then
        dist[p.id] = dist[cur] + 1
        queue[#queue + 1] = p.id
      end
    end
  end
  return dist
end

-- The common ancestor nearest to both (smallest summed distance, then id).
function avo.lineage.common_ancestor(a, b)
  if a == nil or b == nil then return nil end
  local da, db = ancestors(a), ancestors(b)
  local best, best_d
  for id, d in pairs(da) do
    if db[id] then
      local total = d + db[id]
      if best == nil or total < best_d or (total == best_d and id < best) then
        best, best_d = id, total
      end
    end
  end
  return best
end

local function lines(text)
  local out = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do out[#out + 1] = line end
  return out
end

-- Line-wise three-way merge for texts with the same number of lines; texts
-- of different shapes merge only when one side is unchanged. Counts runs of
-- conflicting lines as hunks.
function avo.merge3(base, ours, theirs)
  if ours == theirs or theirs == base then return ours, 0 end
  if ours == base then return theirs, 0 end
  local lb, lo, lt = lines(base), lines(ours), lines(theirs)
  if #lb ~= #lo or #lb ~= #lt then return ours, 1 end
  local out, hunks, in_conflict = {}, 0, false
  for i = 1, #lb do
    local line, conflict = lo[i], false
    if lo[i] == lt[i] or lt[i] == lb[i] then
      line = lo[i]
    elseif lo[i] == lb[i] then
      line = lt[i]
    else
      conflict = true
    end
    if conflict and not in_conflict then hunks = hunks + 1 end
    in_conflict = conflict
    out[i] = line
  end
  return table.concat(out, "\n"), hunks
end

---------------------------------------------------------------------------
-- Output

function avo.progress(t)
  run.progress[#run.progress + 1] = t.generation
end

function avo.log(fmt, ...)
  run.logs[#run.logs + 1] = string.format(fmt, ...)
end

-- Tasks run to completion at once: evaluation is synchronous here.
function avo.spawn(fn, ...)
  local results = table.pack(pcall(fn, ...))
  return { results = results }
end

function avo.join(task)
  local r = task.results
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

avo._reset()
return avo
