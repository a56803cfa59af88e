-- avo.experiment_report — `avo experiment report`: the statistics and
-- figures of an experiment (avo.experiment), computed from the archive
-- alone, so a reader with the archive can recompute every number:
--
--   per workload and budget, each arm's best score over its seeds: n,
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
-- Writes PREFIX.html (self-contained), PREFIX.csv (one row per arm, workload
-- and budget) and PREFIX.json (everything, per cell too).  Prints.

local core = require "avo.core"
local S = require "avo.session"
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

-- The statistics of every workload x budget group.
local function analyse(exp, cells, def)
  local groups = {}
  local rng = core.rng(1, "experiment-report/bootstrap")
  for _, w in ipairs(def.workloads) do
    for _, b in ipairs(def.budgets) do
      local g = { workload = w.name, evaluator = w.evaluator, budget = b.name, arms = {},
        tests = {}, problems = {} }
      for _, a in ipairs(def.arms) do
        local arm = { arm = a.name, values = {}, cells = {} }
        for _, c in ipairs(cells) do
          if c.workload == w.name and c.budget == b.name and c.arm == a.name then
            arm.cells[#arm.cells + 1] = c
            g.unit = g.unit or c.unit
            if c.state == "finished" then
              arm.values[#arm.values + 1] = c.best
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
        end
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

------------------------------------------------------------ rendering

local palette = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
  "#e377c2", "#17becf", "#7f7f7f", "#bcbd22" }

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;" }))
end

local function num(v, fmt)
  if v == nil then return "-" end
  return (fmt or "%.6g"):format(v)
end

-- A step of 1, 2 or 5 x 10^k giving about `target` ticks over [lo, hi].
local function nice_ticks(lo, hi, target)
  if hi <= lo then hi = lo + 1 end
  local raw = (hi - lo) / target
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag
  for _, m in ipairs({ 1, 2, 5, 10 }) do
    if raw <= m * mag then step = m * mag break end
  end
  local ticks = {}
  local t = math.ceil(lo / step) * step
  while t <= hi + step * 1e-9 do
    ticks[#ticks + 1] = t
    t = t + step
  end
  return ticks
end

-- One learning-curve plot: per arm the median line and the interquartile
-- band; curve field `field` of each arm.
local function svg_plot(g, field, xlabel)
  local W, H, L, R, T, B = 640, 300, 64, 150, 16, 40
  local xmax, ylo, yhi = 0, math.huge, -math.huge
  for _, arm in ipairs(g.arms) do
    for _, p in ipairs(arm[field]) do
      xmax = math.max(xmax, p.x)
      ylo, yhi = math.min(ylo, p.lo), math.max(yhi, p.hi)
    end
  end
  if xmax == 0 or ylo == math.huge then return "<p>no evaluations to plot</p>" end
  if yhi == ylo then yhi, ylo = yhi + 0.5, ylo - 0.5 end
  local pad = (yhi - ylo) * 0.05
  ylo, yhi = ylo - pad, yhi + pad
  local function px(x) return L + (W - L - R) * x / xmax end
  local function py(y) return T + (H - T - B) * (1 - (y - ylo) / (yhi - ylo)) end
  local out = { ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" ' ..
    'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">'):format(W, H, W, H) }
  out[#out + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>')
    :format(L, T, W - L - R, H - T - B)
  for _, t in ipairs(nice_ticks(0, xmax, 6)) do
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>' ..
      '<text x="%.1f" y="%d" text-anchor="middle">%s</text>'):format(px(t), H - B, px(t),
      H - B + 4, px(t), H - B + 16, ("%g"):format(t))
  end
  for _, t in ipairs(nice_ticks(ylo, yhi, 5)) do
    if t >= ylo and t <= yhi then
      out[#out + 1] = ('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' ..
        '<text x="%d" y="%.1f" text-anchor="end">%s</text>'):format(L, py(t), W - R, py(t),
        L - 4, py(t) + 4, ("%.4g"):format(t))
    end
  end
  out[#out + 1] = ('<text x="%d" y="%d" text-anchor="middle">%s</text>'):format(
    (L + W - R) // 2, H - 6, esc(xlabel))
  out[#out + 1] = ('<text x="12" y="%d" transform="rotate(-90 12 %d)" text-anchor="middle">' ..
    'best so far (%s)</text>'):format((T + H - B) // 2, (T + H - B) // 2, esc(g.unit or "score"))
  for i, arm in ipairs(g.arms) do
    local color = palette[(i - 1) % #palette + 1]
    local pts = arm[field]
    if #pts > 0 then
      local upper, lower, line = {}, {}, {}
      for _, p in ipairs(pts) do
        upper[#upper + 1] = ("%.1f,%.1f"):format(px(p.x), py(p.hi))
        line[#line + 1] = ("%.1f,%.1f"):format(px(p.x), py(p.med))
      end
      for k = #pts, 1, -1 do lower[#lower + 1] = ("%.1f,%.1f"):format(px(pts[k].x), py(pts[k].lo)) end
      out[#out + 1] = ('<polygon points="%s %s" fill="%s" fill-opacity="0.15" stroke="none"/>')
        :format(table.concat(upper, " "), table.concat(lower, " "), color)
      out[#out + 1] = ('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"/>')
        :format(table.concat(line, " "), color)
    end
    out[#out + 1] = ('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>' ..
      '<text x="%d" y="%d">%s</text>'):format(W - R + 10, T + 10 + 16 * (i - 1), W - R + 28,
      T + 10 + 16 * (i - 1), color, W - R + 32, T + 14 + 16 * (i - 1), esc(arm.arm))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
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
  }
  return table.concat(text, " "), counts, llm
end

local STYLE = [[
body { font-family: sans-serif; margin: 2em auto; max-width: 1000px; color: #222 }
table { border-collapse: collapse; margin: 0.5em 0 1.5em }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right }
th { background: #f4f4f4 } td.l, th.l { text-align: left }
.bad { color: #b00 } .note { color: #666; font-size: 90% }
]]

local function html(exp, def, cells, groups, methods_text, counts)
  local o = {}
  local function w(...) for _, s in ipairs({ ... }) do o[#o + 1] = s end end
  w("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>experiment ",
    esc(exp.name), "</title><style>", STYLE, "</style></head><body>")
  w("<h1>Experiment ", esc(exp.name), " (#", tostring(exp.id), ")</h1>")
  if def.description then w("<p>", esc(def.description), "</p>") end
  w("<h2>Methods</h2><p>", esc(methods_text), "</p>")
  local incomplete = counts.missing + counts.unfinished
  if incomplete > 0 or counts.failed > 0 then
    w("<h2>Cells not in the statistics</h2>")
    if incomplete > 0 then
      w(("<p class=\"bad\">The experiment is incomplete: %d of %d cells are missing or " ..
        "unfinished; re-run <code>avo experiment %s</code> to finish it.</p>"):format(incomplete,
        #cells, esc(exp.path or "FILE.lua")))
    end
    w("<table><tr><th class=l>cell</th><th class=l>state</th><th>run</th>",
      "<th class=l>reason</th></tr>")
    for _, c in ipairs(cells) do
      if c.state ~= "finished" then
        w(("<tr><td class=l>%s</td><td class='l bad'>%s</td><td>%s</td><td class=l>%s</td></tr>")
          :format(esc(c.key), esc(c.state), c.run_id and tostring(c.run_id) or "-",
          esc(c.reason or "")))
      end
    end
    w("</table>")
  end
  for _, g in ipairs(groups) do
    w(("<h2>%s, budget %s</h2>"):format(esc(g.workload), esc(g.budget)))
    w(("<p class=note>best score per run (%s), higher is better</p>"):format(esc(g.unit or "score")))
    w("<table><tr><th class=l>arm</th><th>n / planned</th><th>median</th><th>Q1</th><th>Q3</th>",
      "<th>IQR</th><th>95% CI of median</th><th>min</th><th>max</th></tr>")
    for _, a in ipairs(g.arms) do
      w(("<tr><td class=l>%s</td><td>%d / %d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>" ..
        "<td>%s – %s</td><td>%s</td><td>%s</td></tr>"):format(esc(a.arm), a.n, a.planned,
        num(a.median), num(a.q1), num(a.q3), a.q1 and num(a.q3 - a.q1) or "-", num(a.ci_lo),
        num(a.ci_hi), num(a.min), num(a.max)))
    end
    w("</table>")
    if #g.tests > 0 then
      w("<table><tr><th class=l>A vs B</th><th>U</th><th>A12</th><th class=l>effect</th>",
        "<th>p</th><th>p (Holm)</th><th class=l>test</th></tr>")
      for _, t in ipairs(g.tests) do
        w(("<tr><td class=l>%s vs %s</td><td>%g</td><td>%.3f</td><td class=l>%s</td>" ..
          "<td>%.4g</td><td>%.4g</td><td class=l>%s</td></tr>"):format(esc(t.a), esc(t.b), t.u,
          t.a12, t.magnitude, t.p, t.p_holm, t.method))
      end
      w("</table><p class=note>A12: probability that a run of A beats a run of B (0.5: no " ..
        "difference).</p>")
    end
    w("<h3>Learning curves (median and interquartile band over seeds)</h3>")
    w(svg_plot(g, "curve_evals", "evaluations"))
    w(svg_plot(g, "curve_time", "wall time (s)"))
  end
  w("<h2>Cells</h2><table><tr><th class=l>cell</th><th class=l>state</th><th>run</th>",
    "<th>evaluations</th><th>best</th><th>seconds</th></tr>")
  for _, c in ipairs(cells) do
    w(("<tr><td class=l>%s</td><td class=l>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>")
      :format(esc(c.key), esc(c.state), c.run_id and tostring(c.run_id) or "-",
      c.evaluations and tostring(c.evaluations) or "-", num(c.best),
      c.seconds and ("%.1f"):format(c.seconds) or "-"))
  end
  w("</table><p class=note>Every number here is computed from the archive's runs and ",
    "candidates; the JSON and CSV beside this file hold them.</p></body></html>\n")
  return table.concat(o)
end

local function csv_field(v)
  if v == nil then return "" end
  if type(v) == "number" then return ("%.17g"):format(v) end
  local s = tostring(v)
  if s:find('[,"\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

local function csv(groups)
  local o = { "workload,budget,arm,n,planned,median,q1,q3,ci_low,ci_high,min,max\n" }
  for _, g in ipairs(groups) do
    for _, a in ipairs(g.arms) do
      local row = { g.workload, g.budget, a.arm, a.n, a.planned, a.median, a.q1, a.q3, a.ci_lo,
        a.ci_hi, a.min, a.max }
      local f = {}
      for i = 1, 12 do f[i] = csv_field(row[i]) end
      o[#o + 1] = table.concat(f, ",") .. "\n"
    end
  end
  return table.concat(o)
end

-- The reason in a Lua I/O error "PATH: reason", for a message naming the
-- path the user gave rather than a temporary's.
local function io_reason(err) return tostring(err):match(": ([^:]*)$") or tostring(err) end

-- Write each {path, text} of `files` whole or not at all: every text goes
-- to a temporary beside its path first (checked through write and close:
-- a full disk fails there), and only when all are written are they
-- renamed into place; a failure removes the temporaries, leaving any old
-- files as they were.  Returns true, or nil and "PATH: reason".
local function write_all(files)
  local temps, failure = {}, nil
  for i, f in ipairs(files) do
    local tmp = ("%s.tmp.%s"):format(f[1], core.hash(f[1] .. core.now()):sub(1, 12))
    local out, err = io.open(tmp, "wb")
    if out then
      temps[i] = tmp
      local ok, werr = out:write(f[2])
      local cok, cerr = out:close()
      if not ok or not cok then err = werr or cerr end
    end
    if err then
      failure = ("%s: %s"):format(f[1], io_reason(err))
      break
    end
  end
  for i, f in ipairs(files) do
    if failure then break end
    local ok, err = os.rename(temps[i], f[1])
    if ok then temps[i] = nil else failure = ("%s: %s"):format(f[1], io_reason(err)) end
  end
  for _, tmp in pairs(temps) do os.remove(tmp) end
  if failure then return nil, failure end
  return true
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

-- opts: db, experiment, out
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
        values = array(a.values), cells = array(cells_of),
        curve_evals = array(a.curve_evals), curve_time = array(a.curve_time) }
    end
    jgroups[gi] = { workload = g.workload, evaluator = g.evaluator, budget = g.budget,
      unit = g.unit, arms = array(arms), tests = array(g.tests) }
  end
  local jcells = {}
  for i, c in ipairs(cells) do
    jcells[i] = { key = c.key, arm = c.arm, workload = c.workload, budget = c.budget,
      seed = c.seed, state = c.state, reason = c.reason, run_id = c.run_id, best = c.best,
      evaluations = c.evaluations, seconds = c.seconds }
  end
  local json = core.json_encode{
    experiment = { id = exp.id, name = exp.name, hash = exp.hash, path = exp.path,
      machine = exp.machine, engine_version = exp.engine_version, created_at = exp.created_at },
    methods = methods_text, counts = counts, llm = llm, groups = array(jgroups),
    cells = array(jcells), bootstrap_resamples = BOOTSTRAP,
  }
  local ok, werr = write_all({
    { prefix .. ".html", html(exp, def, cells, groups, methods_text, counts) },
    { prefix .. ".csv", csv(groups) },
    { prefix .. ".json", json .. "\n" },
  })
  if not ok then
    S.eprintf("avo: cannot write %s\n", werr)
    return 1
  end
  -- A short table on stdout too.
  for _, g in ipairs(groups) do
    S.out(("%s, budget %s (%s):\n"):format(g.workload, g.budget, g.unit or "score"))
    for _, a in ipairs(g.arms) do
      S.out(("  %-14s n=%d/%d median %s IQR [%s, %s] 95%% CI [%s, %s]\n"):format(a.arm,
        a.n, a.planned, num(a.median, "%.4g"), num(a.q1, "%.4g"), num(a.q3, "%.4g"),
        num(a.ci_lo, "%.4g"), num(a.ci_hi, "%.4g")))
    end
    for _, t in ipairs(g.tests) do
      S.out(("  %s vs %s: U=%g A12=%.3f (%s) p=%.4g p_holm=%.4g\n"):format(t.a, t.b,
        t.u, t.a12, t.magnitude, t.p, t.p_holm))
    end
  end
  local incomplete = counts.missing + counts.unfinished
  if incomplete > 0 then
    S.out(("incomplete: %d of %d cells missing or unfinished\n"):format(incomplete,
      #cells))
  end
  if counts.failed > 0 then
    S.out(("%d cell(s) failed (listed in the report with their reason)\n")
      :format(counts.failed))
  end
  S.out(("wrote %s.html, %s.csv, %s.json\n"):format(prefix, prefix, prefix))
  return 0
end

return M
