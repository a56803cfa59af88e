-- avo.experiment_report — `avo experiment report`: the statistics and
-- figures of an experiment (avo.experiment), computed from the archive
-- alone, so a reader with the archive can recompute every number:
--
--   per workload and budget, each arm's best score over its seeds (the
--   re-timed best when every finished run of that workload and budget
--   re-timed its bests at its end, avo.retime: the best's median in fresh
--   processes, and its ratios to the seed and the baselines paired round by
--   round; otherwise the best as recorded in the search, so labelled): n,
--   median, interquartile range (quartiles by linear interpolation, type 7),
--   a 95% percentile bootstrap confidence interval of the median (2000
--   resamples from a fixed PCG32 stream); every pair of arms: the two-sided
--   Mann-Whitney U test (exact distribution without ties and n1 + n2 <= 60,
--   otherwise the normal approximation with tie and continuity correction),
--   the Vargha-Delaney A12 effect size, and p-values adjusted by Holm's method
--   within the workload and budget; learning curves (best so far against
--   evaluations and against wall time, median and interquartile band over
--   seeds) as inline SVG; the cells that failed (with their reason), are
--   unfinished or missing; a methods paragraph from what was stored.
--
-- What is computed here the view layer renders (cli/view/experiment.c and
-- its sections, called by cli/cli_lua.c): PREFIX.html (self-contained),
-- PREFIX.csv (one row per arm, workload and budget) and PREFIX.json
-- (everything, per cell too), and a short table on stdout.

local core = require "avo.core"
local E = require "avo.experiment"

local M = {}

local BOOTSTRAP = 2000

------------------------------------------------------------ statistics

local function sorted(v)
  local s = {}
  for i, x in ipairs(v) do s[i] = x end
  table.sort(s)
  return s
end

-- Quantile q of a sorted array by linear interpolation (R type 7, numpy's
-- default, Python's statistics.quantiles(method="inclusive")).
local function quantile(s, q)
  local n = #s
  if n == 0 then return nil end
  if n == 1 then return s[1] end
  local h = (n - 1) * q + 1
  local lo = math.floor(h)
  if lo >= n then return s[n] end
  return s[lo] + (h - lo) * (s[lo + 1] - s[lo])
end
M.quantile = quantile

-- Percentile bootstrap 95% interval of the median of v.
local function bootstrap_ci(v, rng)
  local n = #v
  if n < 2 then return v[1], v[1] end
  local medians = {}
  local draw = {}
  for b = 1, BOOTSTRAP do
    for i = 1, n do draw[i] = v[rng:below(n) + 1] end
    medians[b] = quantile(sorted(draw), 0.5)
  end
  table.sort(medians)
  return quantile(medians, 0.025), quantile(medians, 0.975)
end

-- erfc(x) for x >= 0 (W. J. Cody's rational approximations are overkill
-- here; Numerical Recipes' erfcc has a relative error below 1.2e-7).
local function erfc(x)
  local z = math.abs(x)
  local t = 1 / (1 + 0.5 * z)
  local r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 +
    t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 +
    t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
  return x >= 0 and r or 2 - r
end

-- Counts of each U = 0..m*n over all arrangements of m and n untied
-- values: the coefficients of the Gaussian binomial [m+n choose m]_q.
local function u_counts(m, n)
  local c = { [0] = 1 }
  local top = 0
  for i = 1, m do
    -- multiply by (1 - q^(n+i)), then divide by (1 - q^i)
    local k = n + i
    local new_top = top + k
    for u = new_top, 0, -1 do
      c[u] = (c[u] or 0) - (u >= k and (c[u - k] or 0) or 0)
    end
    top = new_top
    for u = i, top do c[u] = c[u] + c[u - i] end
    top = top - i
  end
  return c, top
end

-- Two-sided Mann-Whitney U test of a against b.  Returns U (of a: pairs
-- a > b, ties one half), A12 = U / (n1 n2), p and the method used.
local function mann_whitney(a, b)
  local n1, n2 = #a, #b
  local u, ties = 0, false
  for _, x in ipairs(a) do
    for _, y in ipairs(b) do
      if x > y then u = u + 1 elseif x == y then u = u + 0.5 end
    end
  end
  -- ties anywhere in the pooled sample
  local pooled = {}
  for _, x in ipairs(a) do pooled[#pooled + 1] = x end
  for _, y in ipairs(b) do pooled[#pooled + 1] = y end
  table.sort(pooled)
  local tie_term = 0
  local i = 1
  while i <= #pooled do
    local j = i
    while j < #pooled and pooled[j + 1] == pooled[i] do j = j + 1 end
    local t = j - i + 1
    if t > 1 then ties = true tie_term = tie_term + t * t * t - t end
    i = j + 1
  end
  local a12 = u / (n1 * n2)
  local p, method
  if not ties and n1 + n2 <= 60 then
    local counts, top = u_counts(n1, n2)
    local total, below, above = 0, 0, 0
    for k = 0, top do
      total = total + counts[k]
      if k <= u then below = below + counts[k] end
      if k >= u then above = above + counts[k] end
    end
    p = math.min(1, 2 * math.min(below, above) / total)
    method = "exact"
  else
    local N = n1 + n2
    local mu = n1 * n2 / 2
    local var = n1 * n2 / 12 * ((N + 1) - tie_term / (N * (N - 1)))
    if var <= 0 then
      p = 1
    else
      local z = math.max(0, math.abs(u - mu) - 0.5) / math.sqrt(var)
      p = math.min(1, erfc(z / math.sqrt(2)))
    end
    method = "normal"
  end
  return u, a12, p, method
end
M.mann_whitney = mann_whitney
M.erfc = erfc

-- Vargha and Delaney's magnitude labels for A12.
local function magnitude(a12)
  local d = math.abs(a12 - 0.5)
  if d < 0.06 then return "negligible" end
  if d < 0.14 then return "small" end
  if d < 0.21 then return "medium" end
  return "large"
end

-- Holm's step-down adjustment of the p-values in `tests` (field p), into
-- field p_holm.
local function holm(tests)
  local order = {}
  for i = 1, #tests do order[i] = i end
  table.sort(order, function(x, y) return tests[x].p < tests[y].p end)
  local m, running = #tests, 0
  for rank, i in ipairs(order) do
    running = math.max(running, math.min(1, (m - rank + 1) * tests[i].p))
    tests[i].p_holm = running
  end
end

M.holm = holm
M.magnitude = magnitude

------------------------------------------------------------ the data

-- A run's re-timed best (its latest "retimed" event, avo.retime, or
-- "rebenched" one, `avo rebench` of the run later) when its figures are
-- paired: { id, score = its median, low, high, recorded,
-- rounds, paired = { { against = "seed" or a baseline, median, low, high } } }
-- (against the seed 1 when the seed is that best); nil when the run
-- re-timed nothing (re-timing off, nothing timed).
local function retimed_best(archive, run_id)
  local last
  for _, kind in ipairs({ "retimed", "rebenched" }) do
    local events = archive:events(run_id, kind) or {}
    local e = events[#events]
    if e and (not last or e.id > last.id) then last = e end
  end
  local data = last and last.data
  local top = type(data) == "table" and data.paired and data.ranked and data.ranked[1]
  if not top or type(top.median) ~= "number" then return nil end
  local paired = {}
  -- the seed re-timed best of its run: its ratio to itself is 1, exactly
  -- (so an arm's median ratio counts the runs that did not beat the seed)
  if type(data.seed) == "table" and data.seed.id == top.id then
    paired[1] = { against = "seed", median = 1, low = 1, high = 1 }
  end
  for _, p in ipairs(top.paired or {}) do
    paired[#paired + 1] = { against = p.against, median = p.median, low = p.low, high = p.high }
  end
  return { id = top.id, score = top.median, low = top.low, high = top.high,
    recorded = top.recorded, rounds = data.rounds, paired = paired }
end

-- Per cell: its run, state, best score and best-so-far curves.
local function cell_data(archive, exp)
  local runs = E.cell_runs(archive, exp.id)
  local recorded = {}
  for _, c in ipairs(assert(archive:experiment_cells(exp.id))) do recorded[c.cell] = c end
  local out = {}
  for i, plan in ipairs(exp.plan) do
    local c = { key = plan.key, arm = plan.arm, workload = plan.workload, budget = plan.budget,
      seed = plan.seed }
    local r = runs[plan.key]
    local rec = recorded[plan.key]
    if not r then
      c.state = "missing"
      if rec and rec.status == "failed" then c.state, c.reason = "failed", rec.reason end
    else
      c.run_id = r.id
      c.state = (r.status == "done" or r.status == "stopped") and "finished"
        or r.status == "failed" and "failed" or "unfinished"
      -- a run that stopped on an error (exit status 2: a strategy refused
      -- its options) is a failed cell; the runner recorded why
      if c.state == "finished" and rec and rec.status == "failed" and rec.run_id == r.id then
        c.state = "failed"
      end
      if c.state == "failed" then
        c.reason = rec and rec.reason or "the run failed (no reason recorded)"
      end
      c.unit = r.unit
      local cands = assert(archive:candidates(r.id))
      local evaluated = {}
      for _, k in ipairs(cands) do
        if k.status ~= "pending" and k.evaluated_at then evaluated[#evaluated + 1] = k end
      end
      table.sort(evaluated, function(x, y)
        if x.evaluated_at ~= y.evaluated_at then return x.evaluated_at < y.evaluated_at end
        return x.id < y.id
      end)
      local best
      c.by_evals, c.by_time = {}, {}
      for n, k in ipairs(evaluated) do
        if k.status == "ok" and k.score and (not best or k.score > best) then best = k.score end
        c.by_evals[n] = best or false
        c.by_time[n] = { k.evaluated_at - r.started_at, best or false }
      end
      c.evaluations = #evaluated
      c.best = best
      c.retimed = retimed_best(archive, r.id)
      c.seconds = (r.ended_at or (evaluated[#evaluated] or {}).evaluated_at or r.started_at)
        - r.started_at
      if c.state == "finished" and not best then
        c.state, c.reason = "no verified candidate", ("none of %d evaluations passed"):format(
          #evaluated)
      end
      c.sandbox = {}
      for _, k in ipairs(cands) do
        if type(k.result) == "table" and k.result.sandbox then c.sandbox[k.result.sandbox] = true end
      end
      local calls = archive:llm_calls(r.id) or {}
      c.llm = { calls = #calls, input_tokens = 0, output_tokens = 0, cost_usd = 0, models = {} }
      for _, call in ipairs(calls) do
        c.llm.input_tokens = c.llm.input_tokens + (call.input_tokens or 0)
        c.llm.output_tokens = c.llm.output_tokens + (call.output_tokens or 0)
        c.llm.cost_usd = c.llm.cost_usd + (call.cost_usd or 0)
        c.llm.models[(call.provider or "?") .. "/" .. (call.model or "?")] = true
      end
    end
    out[i] = c
  end
  return out, runs
end

-- Median and quartiles of the best-so-far over seeds at x, for each x of
-- `xs` where every cell has one; `value(cell, x)` is a cell's best so far
-- at x or nil.
local function band(cells, xs, value)
  local pts = {}
  for _, x in ipairs(xs) do
    local v = {}
    for _, c in ipairs(cells) do
      local y = value(c, x)
      if y then v[#v + 1] = y end
    end
    -- only where every seed has a value: a median over the few early
    -- seeds would jump about (and not be a median over the seeds)
    if #v > 0 and #v == #cells then
      local s = sorted(v)
      pts[#pts + 1] = { x = x, med = quantile(s, 0.5), lo = quantile(s, 0.25),
        hi = quantile(s, 0.75), n = #v }
    end
  end
  return pts
end

local function at_evals(c, x)
  if not c.by_evals or #c.by_evals == 0 then return nil end
  local y = c.by_evals[math.min(x, #c.by_evals)]
  return y or nil
end

local function at_time(c, t)
  if not c.by_time then return nil end
  local y
  for _, p in ipairs(c.by_time) do
    if p[1] <= t then y = p[2] else break end
  end
  return y or nil
end

-- "retimed" when every finished cell of a workload and budget has a
-- paired re-timed best (so all its arms are compared on re-timed figures),
-- else "recorded" (the search's own maxima); nil without finished cells.
local function group_figure(cells, workload, budget)
  local figure
  for _, c in ipairs(cells) do
    if c.workload == workload and c.budget == budget and c.state == "finished" then
      if not c.retimed then return "recorded" end
      figure = "retimed"
    end
  end
  return figure
end

-- An arm's paired ratios over its finished cells: per "against" (the seed,
-- each baseline) the median and quartiles of the cells' paired medians.
local function paired_summary(arm_cells)
  local by, order = {}, {}
  for _, c in ipairs(arm_cells) do
    if c.state == "finished" and c.retimed then
      for _, p in ipairs(c.retimed.paired) do
        local name = p.against or "?"
        if not by[name] then
          by[name] = {}
          order[#order + 1] = name
        end
        by[name][#by[name] + 1] = p.median
      end
    end
  end
  local out = {}
  for _, name in ipairs(order) do
    local s = sorted(by[name])
    out[#out + 1] = { against = name, n = #s, median = quantile(s, 0.5),
      q1 = quantile(s, 0.25), q3 = quantile(s, 0.75) }
  end
  return out
end

-- The statistics of every workload x budget group.
local function analyse(exp, cells, def)
  local groups = {}
  local rng = core.rng(1, "experiment-report/bootstrap")
  for _, w in ipairs(def.workloads) do
    for _, b in ipairs(def.budgets) do
      local g = { workload = w.name, evaluator = w.evaluator, budget = b.name, arms = {},
        tests = {}, problems = {} }
      g.figure = group_figure(cells, w.name, b.name)
      for _, a in ipairs(def.arms) do
        local arm = { arm = a.name, values = {}, recorded_values = {}, cells = {} }
        for _, c in ipairs(cells) do
          if c.workload == w.name and c.budget == b.name and c.arm == a.name then
            arm.cells[#arm.cells + 1] = c
            g.unit = g.unit or c.unit
            if c.state == "finished" then
              arm.values[#arm.values + 1] = g.figure == "retimed" and c.retimed.score or c.best
              arm.recorded_values[#arm.recorded_values + 1] = c.best
            else
              g.problems[#g.problems + 1] = c
            end
          end
        end
        local s = sorted(arm.values)
        arm.n, arm.planned = #s, #arm.cells
        if #s > 0 then
          arm.median, arm.q1, arm.q3 = quantile(s, 0.5), quantile(s, 0.25), quantile(s, 0.75)
          arm.min, arm.max = s[1], s[#s]
          arm.ci_lo, arm.ci_hi = bootstrap_ci(arm.values, rng)
          local r = sorted(arm.recorded_values)
          arm.recorded = { median = quantile(r, 0.5), q1 = quantile(r, 0.25),
            q3 = quantile(r, 0.75) }
        end
        if g.figure == "retimed" then arm.paired = paired_summary(arm.cells) end
        g.arms[#g.arms + 1] = arm
      end
      for i = 1, #g.arms do
        for j = i + 1, #g.arms do
          local x, y = g.arms[i], g.arms[j]
          if x.n > 0 and y.n > 0 then
            local u, a12, p, method = mann_whitney(x.values, y.values)
            g.tests[#g.tests + 1] = { a = x.arm, b = y.arm, u = u, a12 = a12, p = p,
              method = method, magnitude = magnitude(a12), n_a = x.n, n_b = y.n }
          end
        end
      end
      holm(g.tests)
      -- learning curves
      local max_evals, max_time = 0, 0
      for _, arm in ipairs(g.arms) do
        for _, c in ipairs(arm.cells) do
          max_evals = math.max(max_evals, c.evaluations or 0)
          max_time = math.max(max_time, c.seconds or 0)
        end
      end
      local xs_e, xs_t = {}, {}
      local step = math.max(1, max_evals // 200)
      for x = 1, max_evals, step do xs_e[#xs_e + 1] = x end
      if max_evals > 0 and xs_e[#xs_e] ~= max_evals then xs_e[#xs_e + 1] = max_evals end
      for k = 0, 100 do xs_t[#xs_t + 1] = max_time * k / 100 end
      for _, arm in ipairs(g.arms) do
        local finished = {}
        for _, c in ipairs(arm.cells) do
          if c.by_evals then finished[#finished + 1] = c end
        end
        arm.curve_evals = band(finished, xs_e, at_evals)
        arm.curve_time = band(finished, xs_t, at_time)
      end
      groups[#groups + 1] = g
    end
  end
  return groups
end

------------------------------------------------------------ the report

-- What the best scores are: re-timed (and how) or as recorded.
local function retimed_note(groups)
  local re, rec = {}, {}
  for _, g in ipairs(groups) do
    local name = g.workload .. "/" .. g.budget
    if g.figure == "retimed" then re[#re + 1] = name elseif g.figure then rec[#rec + 1] = name end
  end
  local text = {}
  if #re > 0 then
    text[#text + 1] = ("Best scores of %s are re-timed: at the end of each run its best " ..
      "candidates, the seed and the baselines were timed again in the same interleaved rounds, " ..
      "each evaluation a fresh process; a run's best is the median of its re-timed #1 over the " ..
      "rounds, and its ratios to the seed and to each baseline are paired round by round " ..
      "(median over rounds), so machine drift between runs does not enter them.")
      :format(table.concat(re, ", "))
  end
  if #rec > 0 then
    text[#text + 1] = ("Best scores of %s are as recorded in the search: not every run " ..
      "re-timed its bests (re-timing off, an evaluator that times nothing, or a run that " ..
      "ended before its re-timing), so none is compared re-timed; where they are timings they are " ..
      "the maximum of noisy measurements, not paired, and a run that evaluates more " ..
      "candidates draws more noise in its favour.")
      :format(table.concat(rec, ", "))
  end
  return table.concat(text, " ")
end

-- The methods paragraph, from what the archive holds.
local function methods(exp, def, cells, groups)
  local m = exp.machine or {}
  local counts = { finished = 0, failed = 0, unfinished = 0, missing = 0 }
  local sandboxes, models = {}, {}
  local llm = { calls = 0, input_tokens = 0, output_tokens = 0, cost_usd = 0 }
  local evals = 0
  for _, c in ipairs(cells) do
    local k = c.state == "no verified candidate" and "finished" or c.state
    counts[k] = (counts[k] or 0) + 1
    evals = evals + (c.evaluations or 0)
    for s in pairs(c.sandbox or {}) do sandboxes[s] = true end
    if c.llm then
      for mod in pairs(c.llm.models) do models[mod] = true end
      for _, f in ipairs({ "calls", "input_tokens", "output_tokens", "cost_usd" }) do
        llm[f] = llm[f] + c.llm[f]
      end
    end
  end
  local function keys(t)
    local k = {}
    for x in pairs(t) do k[#k + 1] = x end
    table.sort(k)
    return k
  end
  local arms = {}
  for _, a in ipairs(def.arms) do
    arms[#arms + 1] = a.strategy and ("%s (strategy %s)"):format(a.name, a.strategy)
      or a.script and ("%s (script %s)"):format(a.name, a.script)
      or a.run and ("%s (a function)"):format(a.name) or a.name
  end
  local workloads = {}
  for _, w in ipairs(def.workloads) do
    workloads[#workloads + 1] = ("%s (evaluator %s)"):format(w.name, w.evaluator)
  end
  local budgets = {}
  for _, b in ipairs(def.budgets) do budgets[#budgets + 1] = b.name end
  local seeds = {}
  for _, s in ipairs(def.seeds) do seeds[#seeds + 1] = tostring(s) end
  local text = {
    ("Experiment \"%s\" (archive experiment #%d, definition hash %s) was run with %s on %s " ..
      "(%s), compiling candidates with %s."):format(exp.name, exp.id, exp.hash:sub(1, 12),
      m.engine or exp.engine_version or "avo", m.host or "an unrecorded machine",
      m.os or "unknown OS", m.compiler or "an unrecorded compiler"),
    ("It compares %d arms — %s — on %d workload(s) — %s — under the budget(s) %s, each with " ..
      "the seeds %s: %d runs planned, %d finished, %d failed, %d unfinished and %d missing, " ..
      "%d evaluations in all.")
      :format(#def.arms, table.concat(arms, ", "), #def.workloads, table.concat(workloads, ", "),
        table.concat(budgets, ", "), table.concat(seeds, ", "), #cells, counts.finished,
        counts.failed, counts.unfinished, counts.missing, evals),
    #keys(sandboxes) > 0 and ("Candidates ran in sandboxed worker processes (%s).")
      :format(table.concat(keys(sandboxes), ", "))
      or "No candidate recorded a sandbox mechanism (in-process test backend or none evaluated).",
    llm.calls > 0 and ("LLM calls: %d to %s, %d input and %d output tokens, $%.4f.")
      :format(llm.calls, table.concat(keys(models), ", "), llm.input_tokens, llm.output_tokens,
        llm.cost_usd) or "No LLM was called.",
    ("For each arm, workload and budget we report the median best score over seeds with its " ..
      "interquartile range (linear interpolation) and a 95%% percentile bootstrap confidence " ..
      "interval of the median (%d resamples); arms are compared pairwise with the two-sided " ..
      "Mann-Whitney U test (exact without ties, otherwise the normal approximation with tie " ..
      "and continuity correction) and the Vargha-Delaney A12 effect size, p-values adjusted " ..
      "with Holm's method within each workload and budget. Runs that failed or did not finish " ..
      "are listed and not part of the statistics."):format(BOOTSTRAP),
    retimed_note(groups),
  }
  return table.concat(text, " "), counts, llm
end

local function array(t) return setmetatable(t, core.json_array_mt) end

-- The arms, workloads, budgets and seeds of an experiment from its stored
-- plan (what was run), in the plan's order; what the stored definition
-- says of each (strategy, evaluator) where it still loads.
local function grid_of(exp)
  local def = E.load_definition(exp.source, exp.path or "experiment.lua") or {}
  local function index(list)
    local t = {}
    for _, x in ipairs(list or {}) do t[x.name] = x end
    return t
  end
  local arms, workloads = index(def.arms), index(def.workloads)
  local grid = { description = def.description, arms = {}, workloads = {}, budgets = {},
    seeds = {} }
  local seen = { arms = {}, workloads = {}, budgets = {}, seeds = {} }
  local function add(kind, name, entry)
    if not seen[kind][name] then
      seen[kind][name] = true
      grid[kind][#grid[kind] + 1] = entry
    end
  end
  for _, c in ipairs(exp.plan) do
    local a = arms[c.arm] or {}
    add("arms", c.arm, { name = c.arm, strategy = a.strategy, script = a.script, run = a.run })
    add("workloads", c.workload, { name = c.workload,
      evaluator = (workloads[c.workload] or {}).evaluator or "?" })
    add("budgets", c.budget, { name = c.budget })
    add("seeds", c.seed, c.seed)
  end
  return grid
end

-- opts: db, experiment, out.  Returns 0 and what the view layer renders
-- (cli/view/experiment.c, called by `avo experiment report` in
-- cli/cli_lua.c): { document = the JSON file's content, description = the
-- definition's, out = the files' prefix }; or 1 after printing why not.
function M.main(opts)
  local db = opts.db or "avo.db"
  local archive, exp = E.open_selected(db, opts.experiment, core.archive_read)
  if not archive then return 1 end
  local def = grid_of(exp)
  local cells = cell_data(archive, exp)
  archive:close()
  local groups = analyse(exp, cells, def)
  local methods_text, counts, llm = methods(exp, def, cells, groups)
  local prefix = opts.out or "experiment-report"
  -- JSON: the groups without curves' cell references, and every cell.
  local jgroups = {}
  for gi, g in ipairs(groups) do
    local arms = {}
    for ai, a in ipairs(g.arms) do
      local cells_of = {}
      for _, c in ipairs(a.cells) do cells_of[#cells_of + 1] = c.key end
      arms[ai] = { arm = a.arm, n = a.n, planned = a.planned, median = a.median, q1 = a.q1,
        q3 = a.q3, ci_low = a.ci_lo, ci_high = a.ci_hi, min = a.min, max = a.max,
        values = array(a.values), cells = array(cells_of), recorded = a.recorded,
        paired = a.paired and array(a.paired),
        curve_evals = array(a.curve_evals), curve_time = array(a.curve_time) }
    end
    jgroups[gi] = { workload = g.workload, evaluator = g.evaluator, budget = g.budget,
      unit = g.unit, figure = g.figure, arms = array(arms), tests = array(g.tests) }
  end
  local jcells = {}
  for i, c in ipairs(cells) do
    jcells[i] = { key = c.key, arm = c.arm, workload = c.workload, budget = c.budget,
      seed = c.seed, state = c.state, reason = c.reason, run_id = c.run_id, best = c.best,
      retimed = c.retimed and { id = c.retimed.id, score = c.retimed.score, low = c.retimed.low,
        high = c.retimed.high, recorded = c.retimed.recorded, rounds = c.retimed.rounds,
        paired = array(c.retimed.paired) },
      evaluations = c.evaluations, seconds = c.seconds }
  end
  local doc = {
    experiment = { id = exp.id, name = exp.name, hash = exp.hash, path = exp.path,
      machine = exp.machine, engine_version = exp.engine_version, created_at = exp.created_at },
    methods = methods_text, counts = counts, llm = llm, groups = array(jgroups),
    cells = array(jcells), bootstrap_resamples = BOOTSTRAP,
  }
  -- The view layer (cli/view/experiment.c) renders and writes the files.
  return 0, { document = doc, description = def.description, out = prefix }
end

return M
