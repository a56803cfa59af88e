-- avo.experiment — `avo experiment FILE.lua`: a grid of runs one Lua file
-- declares (arms x workloads x budgets x seeds), each cell an ordinary run
-- of one archive, several at once; re-running the file resumes the grid.
-- `avo experiment report` (avo.experiment_report) and `avo experiment
-- replay` read what this stored.  docs/experiments.md describes the file.
--
-- How a cell runs: the runner writes a small cell script that embeds the
-- experiment file's text (so function arms exist in the child, and the run's
-- recorded script is self-contained for resume and replay) and starts
-- `avo run CELL.lua --db DB --seed S --max-evals N ... avo_experiment=ID
-- avo_cell=KEY` as a child process.  The KEY=VALUE pair marks the run as
-- the cell's: a runner killed at any moment finds its cells' runs again in
-- the runs table.  An interrupted cell is continued with `avo resume`.
--
-- Like avo.cli, this module prints.

local core = require "avo.core"
local avo = require "avo"
local S = require "avo.session"

local M = {}

local BUDGET_KEYS = { "max_evals", "max_time", "max_tokens", "max_usd" }
local BUDGET_FLAGS = { max_evals = "--max-evals", max_time = "--max-time",
  max_tokens = "--max-tokens", max_usd = "--max-usd" }

-- A name safe in a file name and a cell key.
local function safe(s) return (tostring(s):gsub("[^%w_.%-]", "_")) end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

-- A list of named entries from a list ({ {name=...}, ... }) or a map
-- (name -> entry, taken in name order).  `normalise(name, value)` turns one
-- into a table or raises a message.
local function named_list(value, what, normalise)
  if type(value) ~= "table" then error(("'%s' must be a table"):format(what), 0) end
  local out, seen = {}, {}
  local function add(name, v)
    if type(name) ~= "string" or name == "" then
      error(("every entry of '%s' needs a name"):format(what), 0)
    end
    if seen[name] then error(("%s '%s' is declared twice"):format(what:sub(1, -2), name), 0) end
    seen[name] = true
    local entry = normalise(name, v)
    entry.name = name
    out[#out + 1] = entry
  end
  if #value > 0 then
    for _, v in ipairs(value) do
      if type(v) ~= "table" then error(("entries of '%s' must be tables"):format(what), 0) end
      add(v.name, v)
    end
  else
    for _, k in ipairs(sorted_keys(value)) do add(k, value[k]) end
  end
  if #out == 0 then error(("'%s' is empty"):format(what), 0) end
  return out
end

local function budget_name(b)
  local parts = {}
  for _, k in ipairs(BUDGET_KEYS) do
    if b[k] then parts[#parts + 1] = k:gsub("^max_", "") .. b[k] end
  end
  return #parts > 0 and table.concat(parts, "-") or "unbounded"
end

-- Paths in an experiment file are relative to the file.  `dir` (the
-- file's directory, absolute; nil: leave paths as written) and a relative
-- path `p`: the absolute path of dir/p when that is a readable file, else
-- nil.
local function beside(dir, p)
  if not dir or p:sub(1, 1) == "/" then return nil end
  local full = dir .. "/" .. p
  local f = io.open(full, "r")
  if not f then return nil end
  local _, rerr = f:read(1) -- a directory opens, then fails here
  f:close()
  if rerr then return nil end
  return core.realpath(full) or full
end

-- An env table with each value starting "./" or "../" made an absolute
-- path relative to `dir` (the experiment file's directory; nil: as is).
local function env_beside(env, dir)
  if type(env) ~= "table" or not dir then return env end
  local out = {}
  for k, v in pairs(env) do
    if type(v) == "string" and (v:sub(1, 2) == "./" or v:sub(1, 3) == "../") then
      out[k] = core.realpath(dir .. "/" .. v) or (dir .. "/" .. v)
    else
      out[k] = v
    end
  end
  return out
end

-- The directory of the experiment file at `path`, absolute when it can be
-- found (a cell records it, so it reads the same from any directory).
local function dir_of(path)
  local d = path:match("^(.*)/[^/]*$") or "."
  if d == "" then d = "/" end
  return core.realpath(d) or d
end

-- Check and complete the table an experiment file returned.  Raises a
-- message naming what is wrong.  `dir`: the file's directory, against which
-- its relative paths are resolved (an arm's script, a workload's evaluator
-- path when a file is there, env values starting ./ or ../); nil keeps
-- every path as written (what the experiment's hash covers).
local function normalise(def, path, dir)
  if type(def) ~= "table" then error("must return a table (the experiment)", 0) end
  local out = {
    name = def.name or (path:match("([^/]+)%.lua$") or path),
    description = def.description,
    jobs = def.jobs, run_jobs = def.run_jobs or 1,
    env = env_beside(def.env or {}, dir),
    slurm = def.slurm, listen = def.listen, retime = def.retime,
  }
  -- retime = K or {top = K, rounds = N}: each cell's `avo run --retime K
  -- --retime-rounds N` (the run's own default when absent)
  if type(out.retime) == "table" then
    out.retime, out.retime_rounds = def.retime.top, def.retime.rounds
    for k in pairs(def.retime) do
      if k ~= "top" and k ~= "rounds" then
        error(("retime: unknown key '%s' (top, rounds)"):format(tostring(k)), 0)
      end
    end
  end
  for k, lo in pairs({ retime = 0, retime_rounds = 1 }) do
    local v = out[k]
    if v ~= nil and (math.type(v) ~= "integer" or v < lo or v > 1000) then
      error(("'retime' must be an integer top K from 0 to 1000, or {top = K, rounds = N}" ..
        " with N from 1 to 1000"), 0)
    end
  end
  if out.slurm ~= nil and type(out.slurm) ~= "string" then
    error("'slurm' must be a string of srun options", 0)
  end
  if out.listen ~= nil and type(out.listen) ~= "string" then
    error("'listen' must be a string HOST:PORT", 0)
  end
  if type(out.name) ~= "string" then error("'name' must be a string", 0) end
  out.arms = named_list(def.arms, "arms", function(name, a)
    if type(a) == "string" then a = { strategy = a } end
    if type(a) == "function" then a = { run = a } end
    if type(a) ~= "table" then error(("arm '%s' must be a table"):format(name), 0) end
    local kinds = (a.strategy and 1 or 0) + (a.script and 1 or 0) + (a.run and 1 or 0)
    if kinds ~= 1 then
      error(("arm '%s' needs exactly one of strategy, script or run"):format(name), 0)
    end
    if a.run and type(a.run) ~= "function" then
      error(("arm '%s': run must be a function"):format(name), 0)
    end
    if a.script ~= nil and type(a.script) ~= "string" then
      error(("arm '%s': script must be a path"):format(name), 0)
    end
    return { strategy = a.strategy, script = a.script and (beside(dir, a.script) or a.script),
      run = a.run, options = a.options or {}, args = a.args or {},
      env = env_beside(a.env or {}, dir) }
  end)
  out.workloads = named_list(def.workloads, "workloads", function(name, w)
    if type(w) == "string" then w = { evaluator = w } end
    if type(w) ~= "table" or type(w.evaluator) ~= "string" then
      error(("workload '%s' needs an evaluator (name or path)"):format(name), 0)
    end
    return { evaluator = beside(dir, w.evaluator) or w.evaluator, options = w.options or {} }
  end)
  local seeds = def.seeds or 1
  if math.type(seeds) == "integer" then
    if seeds < 1 then error("'seeds' must be >= 1", 0) end
    local list = {}
    for i = 1, seeds do list[i] = i end
    seeds = list
  end
  if type(seeds) ~= "table" or #seeds == 0 then
    error("'seeds' must be a count or a list of integers", 0)
  end
  for _, s in ipairs(seeds) do
    if math.type(s) ~= "integer" or s < 0 then error("'seeds' must be integers >= 0", 0) end
  end
  out.seeds = seeds
  local budgets = def.budgets or { def.budget or {} }
  if type(budgets) ~= "table" or #budgets == 0 then
    error("'budgets' must be a list of budget tables", 0)
  end
  out.budgets = {}
  for i, b in ipairs(budgets) do
    if type(b) ~= "table" then error(("budget %d must be a table"):format(i), 0) end
    local nb = { name = b.name }
    for _, k in ipairs(BUDGET_KEYS) do
      if b[k] ~= nil then
        if type(b[k]) ~= "number" or b[k] <= 0 then
          error(("budget %d: %s must be a number > 0"):format(i, k), 0)
        end
        nb[k] = b[k]
      end
    end
    for k in pairs(b) do
      if k ~= "name" and not BUDGET_FLAGS[k] then
        error(("budget %d: unknown key '%s' (max_evals, max_time, max_tokens, max_usd)")
          :format(i, tostring(k)), 0)
      end
    end
    nb.name = nb.name or budget_name(nb)
    out.budgets[i] = nb
  end
  if out.jobs ~= nil and (math.type(out.jobs) ~= "integer" or out.jobs < 1) then
    error("'jobs' must be an integer >= 1", 0)
  end
  if math.type(out.run_jobs) ~= "integer" or out.run_jobs < 1 then
    error("'run_jobs' must be an integer >= 1", 0)
  end
  return out
end

-- Load an experiment definition from its text; `dir` as normalise's.
-- Returns def or nil, message.
local function load_definition(source, path, dir)
  local chunk, err = load(source, "@" .. path, "t")
  if not chunk then return nil, err end
  local ok, def = pcall(chunk)
  if not ok then return nil, tostring(def) end
  local nok, out = pcall(normalise, def, path, dir)
  if not nok then return nil, path .. ": " .. tostring(out) end
  return out
end
M.load_definition = load_definition

-- The cells of a definition, in a fixed order (workload, budget, arm, seed).
local function plan(def)
  local cells = {}
  for _, w in ipairs(def.workloads) do
    for _, b in ipairs(def.budgets) do
      for _, a in ipairs(def.arms) do
        for _, s in ipairs(def.seeds) do
          cells[#cells + 1] = {
            key = ("%s/%s/%s/s%d"):format(a.name, w.name, b.name, s),
            arm = a.name, workload = w.name, budget = b.name, seed = s,
          }
        end
      end
    end
  end
  return cells
end
M.plan = plan

-- Refuse before anything runs: each arm's strategy must load, each script
-- read and compile, each workload's evaluator load.  Returns the texts of
-- script arms (by arm name) or nil, message naming the culprit.
local function check_loadable(def, dir)
  local scripts = {}
  for _, a in ipairs(def.arms) do
    if a.strategy then
      local ok, err = pcall(avo.strategy, a.strategy)
      if not ok then return nil, ("arm '%s': %s"):format(a.name, tostring(err)) end
    elseif a.script then
      local text, rerr = S.read_file(a.script)
      if not text then
        return nil, ("arm '%s': cannot read script %s (a relative path is read beside the " ..
          "experiment file, in %s, then in the current directory)"):format(a.name, rerr, dir)
      end
      local chunk, lerr = load(text, "@" .. a.script, "t")
      if not chunk then return nil, ("arm '%s': %s"):format(a.name, lerr) end
      scripts[a.name] = text
    end
  end
  for _, w in ipairs(def.workloads) do
    local ok, err = pcall(avo.evaluator, w.evaluator)
    if not ok then return nil, ("workload '%s': %s"):format(w.name, tostring(err)) end
  end
  return scripts
end

-- A Lua long string holding `text` (a level of '=' the text does not close).
local function long_string(text)
  local eq = ""
  while text:find("]" .. eq .. "]", 1, true) do eq = eq .. "=" end
  return "[" .. eq .. "[\n" .. text .. "]" .. eq .. "]"
end

-- The script of one cell: self-contained (the experiment's text and any
-- script arm's text inside), so resume and replay need nothing but the
-- archive.
local function cell_script(exp, cell, scripts)
  local arm_script = scripts[cell.arm]
  return table.concat({
    ("-- avo experiment %q (#%d), cell %s\n"):format(exp.name, exp.id, cell.key),
    "return require(\"avo.experiment\").cell{\n",
    ("  path = %q, dir = %q, arm = %q, workload = %q,\n"):format(exp.path, exp.dir,
      cell.arm, cell.workload),
    "  source = ", long_string(exp.source), ",\n",
    arm_script and ("  script = " .. long_string(arm_script) .. ",\n") or "",
    "}\n",
  })
end

-- Run one cell inside its `avo run`: load the definition from the embedded
-- text and run the arm on the workload.  Strategy arms get the arm's options
-- with evaluator = the workload's; script arms are called with the arm's
-- args (evaluator too) as `...`, and a strategy they return is run with the
-- options; function arms are called as run(options, {arm=, workload=}).
function M.cell(spec)
  -- cells written before `dir` was recorded resolve against the path as given
  local def, err = load_definition(spec.source, spec.path, spec.dir or dir_of(spec.path))
  if not def then error(err, 0) end
  local arm, workload
  for _, a in ipairs(def.arms) do if a.name == spec.arm then arm = a end end
  for _, w in ipairs(def.workloads) do if w.name == spec.workload then workload = w end end
  if not arm or not workload then
    error(("experiment %s has no arm '%s' or workload '%s'"):format(spec.path, spec.arm,
      spec.workload), 0)
  end
  local options = {}
  for k, v in pairs(workload.options) do options[k] = v end
  for k, v in pairs(arm.options) do options[k] = v end
  options.evaluator = workload.evaluator
  if arm.strategy then return avo.strategy(arm.strategy).run(options) end
  if arm.run then return arm.run(options, { arm = arm.name, workload = workload.name }) end
  local args = { evaluator = workload.evaluator }
  for k, v in pairs(arm.args) do args[k] = tostring(v) end
  local chunk, lerr = load(spec.script, "@" .. arm.script, "t")
  if not chunk then error(lerr, 0) end
  local ret = chunk(args)
  if type(ret) == "table" and type(ret.run) == "function" and ret.id == nil then
    return ret.run(options)
  end
  return ret
end

------------------------------------------------------------ the archive

-- The latest experiment named `name`, or nil.
local function latest_named(archive, name)
  local found
  for _, e in ipairs(assert(archive:experiments())) do
    if e.name == name then found = e end
  end
  return found
end

-- The runs of experiment `id`, by cell key (the latest run of a cell).
local function cell_runs(archive, id)
  local by_cell = {}
  for _, r in ipairs(assert(archive:runs())) do
    local args = type(r.config) == "table" and r.config.args or nil
    if args and tonumber(args.avo_experiment) == id and args.avo_cell then
      by_cell[args.avo_cell] = r
    end
  end
  return by_cell
end
M.cell_runs = cell_runs

-- The experiment the report/replay is about: --experiment ID or the latest.
function M.select(archive, id)
  local all = assert(archive:experiments())
  if #all == 0 then return nil, "the archive holds no experiment" end
  if not id then return all[#all] end
  for _, e in ipairs(all) do if e.id == id then return e end end
  return nil, ("the archive holds no experiment %d"):format(id)
end

-- What `avo experiment report` and `replay` start with: the archive at `db`
-- opened with `open` (core.archive or core.archive_read) and the
-- experiment `id` in it (M.select).  Returns archive, experiment, or nil
-- after printing why.
function M.open_selected(db, id, open)
  local archive, err = open(db)
  if not archive then
    S.eprintf("avo: %s\n", err)
    return nil
  end
  local whole, problem = archive:quick_check()
  if not whole then
    S.eprintf("avo: warning: archive %s is damaged (PRAGMA quick_check: %s); what follows is " ..
      "what could be read of it, and may be incomplete (README, \"A damaged archive\")\n", db,
      problem)
  end
  local exp, serr = M.select(archive, id)
  if not exp then
    S.eprintf("avo: %s: %s\n", db, serr)
    archive:close()
    return nil
  end
  return archive, exp
end

-- What the machine is, stored with the experiment.
local function machine()
  local uname
  local p = io.popen("uname -srm 2>/dev/null")
  if p then uname = p:read("l") p:close() end
  return {
    host = S.host_description(), hostname = core.hostname(), cores = core.cores(),
    compiler = S.compiler_version(), engine = S.engine_version(), os = uname or "unknown",
    cuda_devices = core.cuda_devices and core.cuda_devices() or 0,
  }
end

-- The last few non-empty lines of a log (why a cell failed).
local function log_tail(path, n)
  local text = S.read_file(path) or ""
  local lines = {}
  for line in text:gmatch("[^\n]+") do
    -- status lines and the run's opening line say nothing about a failure
    if not line:match("^gen %d") and not line:match("^avo: run %d+ of ") then
      lines[#lines + 1] = line
    end
  end
  local first = math.max(1, #lines - (n or 3) + 1)
  return table.concat(lines, " | ", first)
end

------------------------------------------------------------ avo experiment FILE

local FINISHED = { done = true, stopped = true, failed = true }

-- How a cell stands once its process ended with exit status `code`, its run
-- left with `run_status` (nil: no run): a run still `running` was cut short
-- (interrupted); any other end with a non-zero status is a failure.
-- Returns the cell's status and whether it failed.
local function outcome(run_status, code)
  local status = run_status or "failed"
  if status == "running" then status = "interrupted" end
  local failed = status == "failed" or code ~= 0 and status ~= "interrupted"
  return failed and "failed" or status, failed
end

-- Called by a cell's own `avo run`/`avo resume` as it ends (avo.session):
-- record its exit status in experiment_cells at once, so a runner killed
-- before it reaps the cell (or while the cell shuts down) loses nothing.
-- The runner, when it reaps the cell, records the same with the reason.
-- Does nothing for a run that is not a cell of an experiment in `archive`
-- (a replay's archive).  Returns true, or nil and why.
function M.record_exit(archive, run_id, args, code)
  local id, key = tonumber(args.avo_experiment), args.avo_cell
  if not id or type(key) ~= "string" then return true end
  local exps, err = archive:experiments()
  if not exps then return nil, err end
  local exp
  for _, e in ipairs(exps) do if e.id == id then exp = e end end
  if not exp then return true end
  local run_status
  for _, r in ipairs(assert(archive:runs())) do
    if r.id == run_id then run_status = r.status end
  end
  local status = outcome(run_status, code)
  local reason
  for _, rc in ipairs(assert(archive:experiment_cells(id))) do
    if rc.cell == key and rc.run_id == run_id then reason = rc.reason end
  end
  return archive:experiment_cell_put(id, { cell = key, run_id = run_id, status = status,
    reason = reason, exit_code = code })
end

-- The experiment's identity: its file, the script arms' texts (a changed
-- script is a changed experiment) and what the file declared once
-- evaluated (a file that reads the environment may declare another grid
-- from the same text), its paths as written: the same file run from
-- another directory is the same experiment.
local function definition_hash(def, source, path, scripts)
  local hashed = { source }
  for _, a in ipairs(def.arms) do
    if scripts[a.name] then hashed[#hashed + 1] = a.name .. "\0" .. scripts[a.name] end
  end
  local written = assert(load_definition(source, path, nil))
  local declared = { name = written.name, env = written.env, run_jobs = written.run_jobs,
    slurm = written.slurm, listen = written.listen,
    budgets = written.budgets, seeds = written.seeds, arms = {}, workloads = written.workloads }
  for i, a in ipairs(written.arms) do
    declared.arms[i] = { name = a.name, strategy = a.strategy, script = a.script,
      run = a.run and "function" or nil, options = a.options, args = a.args, env = a.env }
  end
  local eok, encoded = pcall(core.json_encode, declared)
  hashed[#hashed + 1] = eok and encoded or ""
  return core.hash(table.concat(hashed, "\0"))
end

-- The experiment this file declares in `archive`: the latest of its name
-- when the hash is the same (resumed), else a new one; one of another hash
-- is refused unless `new`.  Returns the experiment, or nil and the exit
-- status after saying why.
local function open_experiment(archive, db, def, source, path, hash, cells, new)
  local exp = latest_named(archive, def.name)
  if exp and exp.hash ~= hash and not new then
    S.eprintf("avo: experiment '%s' (#%d) in %s was declared by a different file (hash %s, " ..
      "now %s): refusing to mix them; --new starts a new experiment beside it\n",
      def.name, exp.id, db, exp.hash:sub(1, 12), hash:sub(1, 12))
    return nil, 2
  end
  if exp and exp.hash == hash then
    S.eprintf("avo: experiment '%s' #%d: resuming (%d cells) in %s\n", def.name, exp.id,
      #cells, db)
    return exp
  end
  local plan_rows = {}
  for i, c in ipairs(cells) do plan_rows[i] = c end
  local id, err = archive:experiment_add{
    name = def.name, path = path, source = source, hash = hash,
    plan = setmetatable(plan_rows, core.json_array_mt), machine = machine(),
    engine_version = S.engine_version(),
  }
  if not id then
    S.eprintf("avo: %s\n", err)
    return nil, 1
  end
  S.eprintf("avo: experiment '%s' #%d: %d cells (%d arms x %d workloads x %d budgets x %d " ..
    "seeds) into %s\n", def.name, id, #cells, #def.arms, #def.workloads, #def.budgets,
    #def.seeds, db)
  return { id = id, name = def.name, path = path, source = source, hash = hash }
end

-- What each cell needs: kept (its run finished), resumed (its run was cut
-- short) or started (no run yet, or a failed one retried: a retry is a new
-- run of the cell).  Returns the cells to run, in order (c.resume_run set
-- on those resumed), how many were kept and how many of those failed.
local function triage(archive, exp, cells, dir, retry_failed)
  local runs = cell_runs(archive, exp.id)
  local recorded = {}
  for _, rc in ipairs(assert(archive:experiment_cells(exp.id))) do recorded[rc.cell] = rc end
  local queue, kept, failed = {}, 0, 0
  for _, c in ipairs(cells) do
    local r = runs[c.key]
    local rec = recorded[c.key]
    local failed_before = r and (r.status == "failed" or
      rec and rec.status == "failed" and rec.run_id == r.id)
    if r and FINISHED[r.status] and not (failed_before and retry_failed) then
      kept = kept + 1
      if failed_before then failed = failed + 1 end
      -- What was recorded of this run (its exit status above all, written
      -- by the cell as it ended) is kept; a run that ended `stopped` with an
      -- error (a strategy refusing its options exits 2) stays failed, and a
      -- failure the runner never saw gets its reason from the log.
      local same = rec and rec.run_id == r.id
      local status = same and rec.status == "failed" and "failed" or r.status
      local reason = same and rec.reason or nil
      if status == "failed" and not reason then
        reason = log_tail(dir .. "/" .. safe(c.key) .. ".log", 3)
        if reason == "" then reason = nil end
      end
      if not (same and rec.status == status and rec.reason == reason) then
        archive:experiment_cell_put(exp.id, { cell = c.key, run_id = r.id, status = status,
          reason = reason, exit_code = same and rec.exit_code or nil })
      end
    else
      c.resume_run = r and not failed_before and r.id or nil
      queue[#queue + 1] = c
    end
  end
  return queue, kept, failed
end

-- The command line of cell `c` (its script written to `base`.lua when it
-- starts): `avo run` of the cell's script with its seed, budget and
-- re-timing, or `avo resume` of its run; the environment of the file and
-- the arm first; on a cluster, its workers a Slurm job step of their own
-- that connects back to it (README "Scale-out": a resumed cell runs where
-- its first part ran).
local function cell_argv(def, exp, c, scripts, exe, db, base, arm, budget)
  local argv = {}
  local function add(...)
    for _, a in ipairs({ ... }) do argv[#argv + 1] = a end
  end
  local env = {}
  for k, v in pairs(def.env) do env[k] = v end
  for k, v in pairs(arm.env) do env[k] = v end
  if next(env) then
    add("/usr/bin/env")
    for _, k in ipairs(sorted_keys(env)) do add(k .. "=" .. tostring(env[k])) end
  end
  add(exe)
  if c.resume_run then
    add("resume", "--db", db, "--run", tostring(c.resume_run), "--jobs", tostring(def.run_jobs))
  else
    local f = assert(io.open(base .. ".lua", "w"))
    f:write(cell_script(exp, c, scripts))
    f:close()
    add("run", base .. ".lua", "--db", db, "--seed", tostring(c.seed),
      "--jobs", tostring(def.run_jobs))
    for _, f in ipairs({ { "retime", "--retime" }, { "retime_rounds", "--retime-rounds" } }) do
      if def[f[1]] then add(f[2], tostring(def[f[1]])) end
    end
    for _, k in ipairs(BUDGET_KEYS) do
      if budget[k] then add(BUDGET_FLAGS[k], tostring(budget[k])) end
    end
  end
  if def.slurm then
    add("--slurm", def.slurm, "--listen", def.listen or "127.0.0.1:0")
  elseif def.listen then
    add("--listen", def.listen)
  end
  if not c.resume_run then add("avo_experiment=" .. exp.id, "avo_cell=" .. c.key) end
  return argv
end

-- opts: file, db, jobs, new, retry_failed
local function run_experiment(opts)
  local path = opts.file
  local source, rerr = S.read_file(path)
  if not source then
    S.eprintf("avo: cannot read experiment %s\n", rerr)
    return 2
  end
  local file_dir = dir_of(path)
  local def, derr = load_definition(source, path, file_dir)
  if not def then
    S.eprintf("avo: experiment %s\n", derr)
    return 2
  end
  local scripts, lerr = check_loadable(def, file_dir)
  if not scripts then
    S.eprintf("avo: experiment %s: %s; nothing was run\n", path, lerr)
    return 2
  end
  local hash = definition_hash(def, source, path, scripts)
  local cells = plan(def)

  local db = opts.db or "avo.db"
  local archive, aerr = core.archive(db)
  if not archive then
    S.eprintf("avo: %s\n", aerr)
    return 1
  end
  local exp, code = open_experiment(archive, db, def, source, path, hash, cells, opts.new)
  if not exp then
    archive:close()
    return code
  end
  exp.dir = file_dir

  local exe = assert(core.exe())
  local dir = ("%s.cells/e%d"):format(db, exp.id)
  os.execute(("mkdir -p '%s'"):format(dir:gsub("'", "'\\''")))
  -- One runner per experiment: a second would start the missing cells again.
  local locked, lock_err = core.lock(dir .. "/runner.lock")
  if not locked then
    S.eprintf("avo: experiment '%s' #%d is being run by another process (%s/runner.lock: %s)\n",
      def.name, exp.id, dir, lock_err)
    archive:close()
    return 1
  end
  local jobs = opts.jobs or def.jobs or math.max(1, core.cores() // def.run_jobs)
  local arm_of = {}
  for _, a in ipairs(def.arms) do arm_of[a.name] = a end
  local budget_of = {}
  for _, b in ipairs(def.budgets) do budget_of[b.name] = b end

  local queue, kept, failed = triage(archive, exp, cells, dir, opts.retry_failed)
  local resumed = 0
  for _, c in ipairs(queue) do if c.resume_run then resumed = resumed + 1 end end
  S.eprintf("avo: %d cells finished before, %d to run (%d to resume), %d at once\n", kept,
    #queue, resumed, jobs)

  core.catch_interrupts()
  local running, next_index, unfinished = {}, 1, 0
  local function launch(c)
    local base = dir .. "/" .. safe(c.key)
    local argv = cell_argv(def, exp, c, scripts, exe, db, base, arm_of[c.arm], budget_of[c.budget])
    local pid, err = core.spawn(argv, base .. ".log")
    if not pid then
      S.eprintf("avo: cell %s: %s\n", c.key, err)
      archive:experiment_cell_put(exp.id, { cell = c.key, status = "failed", reason = err })
      failed = failed + 1
      return
    end
    archive:experiment_cell_put(exp.id, { cell = c.key, run_id = c.resume_run,
      status = "running" })
    running[pid] = { cell = c, log = base .. ".log", started = core.monotonic() }
    S.eprintf("avo: %s cell %s\n", c.resume_run and "resuming" or "starting", c.key)
  end

  -- Record how a cell's process ended, from its run in the archive.
  local function settle(pid, code)
    local job = running[pid]
    running[pid] = nil
    local c = job.cell
    local r = cell_runs(archive, exp.id)[c.key]
    local status, cell_failed = outcome(r and r.status, code)
    local reason
    if status == "interrupted" and code ~= 0 then unfinished = unfinished + 1 end
    if cell_failed then
      reason = log_tail(job.log, 3)
      if reason == "" then reason = ("exit status %d"):format(code) end
      failed = failed + 1
    end
    archive:experiment_cell_put(exp.id, { cell = c.key, run_id = r and r.id, status = status,
      reason = reason, exit_code = code })
    S.eprintf("avo: cell %s %s (run %s, %.1fs)%s\n", c.key, status, r and r.id or "-",
      core.monotonic() - job.started, reason and (": " .. reason) or "")
  end

  local stopping = false
  while true do
    if core.interrupted() and not stopping then
      stopping = true
      S.eprintf("avo: stopping: the running cells are interrupted (re-run the file to resume)\n")
      for pid in pairs(running) do core.signal(pid, "TERM") end
    end
    while not stopping and next_index <= #queue and #sorted_keys(running) < jobs do
      launch(queue[next_index])
      next_index = next_index + 1
    end
    for pid in pairs(running) do
      local code = core.reap(pid)
      if code then settle(pid, code) end
    end
    if next(running) == nil and (stopping or next_index > #queue) then break end
    core.sleep(0.1)
  end
  archive:close()
  local sig = core.interrupted()
  if sig then return 128 + sig end
  S.eprintf("avo: experiment '%s' #%d: %d of %d cells finished, %d of them failed%s; " ..
    "`avo experiment report --db %s` summarises it\n", def.name, exp.id, #cells - unfinished,
    #cells, failed, unfinished > 0 and (", %d interrupted"):format(unfinished) or "", db)
  return (failed > 0 or unfinished > 0) and 1 or 0
end

------------------------------------------------------------ avo experiment replay

-- Re-execute every finished cell from its recording (`avo replay`) into
-- DIR/<cell>.db and say which reproduce decision for decision.
local function replay(opts)
  local db = opts.db or "avo.db"
  -- read only: a missing archive is named, never created
  local archive, exp = M.open_selected(db, opts.experiment, core.archive_read)
  if not archive then return 1 end
  local runs = cell_runs(archive, exp.id)
  archive:close()
  local dir = opts.out
  if not dir then
    local p = io.popen("mktemp -d")
    dir = p:read("l")
    p:close()
  end
  os.execute(("mkdir -p '%s'"):format(dir:gsub("'", "'\\''")))
  local exe = assert(core.exe())
  local same, differ, missing = 0, 0, 0
  io.stdout:write(("experiment '%s' #%d: replaying into %s\n"):format(exp.name, exp.id, dir))
  for _, c in ipairs(exp.plan) do
    local r = runs[c.key]
    if not r or not FINISHED[r.status] then
      missing = missing + 1
      io.stdout:write(("%-40s not finished: nothing to replay\n"):format(c.key))
    else
      local out = dir .. "/" .. safe(c.key) .. ".db"
      os.remove(out)
      local log = dir .. "/" .. safe(c.key) .. ".log"
      local pid = assert(core.spawn({ exe, "replay", "--db", db, "--run", tostring(r.id),
        "--out", out }, log))
      local code
      repeat
        core.sleep(0.05)
        code = core.reap(pid)
      until code
      if code == 0 then
        same = same + 1
        io.stdout:write(("%-40s run %d reproduces\n"):format(c.key, r.id))
      else
        differ = differ + 1
        io.stdout:write(("%-40s run %d DIFFERS: %s\n"):format(c.key, r.id,
          core.inert(log_tail(log, 2), true)))
      end
    end
  end
  io.stdout:write(("%d cells reproduce, %d differ, %d not finished\n"):format(same, differ,
    missing))
  return (differ > 0 or missing > 0) and 1 or 0
end

-- The host's entry: opts from cli/main.c (file | command, db, jobs, new,
-- experiment, out).
function M.main(opts)
  S.debug = S.debug or opts.debug
  if opts.command == "report" then return require("avo.experiment_report").main(opts) end
  if opts.command == "replay" then return replay(opts) end
  return run_experiment(opts)
end

return M
