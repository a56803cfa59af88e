-- A separable synthetic search space with noise, for the knob groups of
-- crossover (bench/families.sh): the 48 knobs of kernels/cpu/sgemm_fast.c
-- in its four families (LG, MD, TS, SM), each family an NK landscape over
-- its own twelve knobs (knob i interacts with knobs i+1 and i+2 of its
-- family, a fixed pseudo-random table in [0, 1)), and six configs as
-- cpu/sgemm_fast's: two scored by the LG knobs alone, two by MD, one by TS,
-- one by SM, each declaring its family (configs[i].knobs).  A config's
-- rate is 1 + its family's sum, times a fixed per-candidate "measurement
-- noise" of about NOISE (default 3%, a lognormal factor hashed from the
-- candidate's knobs and the config): a search that keeps its luckiest
-- measurement pays for it as on a real machine.  `true_score(knobs)` is the
-- noise-free geometric mean; `optimum()` the best there is (dynamic
-- programming along each family's chain).  The test backend scores
-- in-process: runs are exact and fast.
local FAMILIES = { "LG", "MD", "TS", "SM" }
local NOISE = tonumber(os.getenv("AVO_FAMILIES_NOISE")) or 0.03

-- The knob domains, parsed from the kernel: per family, its knobs in order.
local domains = {}
-- (the kernel beside this file's folder, wherever the run was started)
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "bench/"
for line in io.lines(here .. "../kernels/cpu/sgemm_fast.c") do
  local name, values = line:match("^// avo:param (%u%u_[%u_]+) (.+)$")
  if name then
    local family = name:sub(1, 2)
    domains[family] = domains[family] or {}
    local list = {}
    for v in values:gmatch("%S+") do list[#list + 1] = v end
    table.insert(domains[family], { name = name, values = list })
  end
end

local function mix(h)
  h = (h ~ (h >> 31)) * 0xBF58476D1CE4E5B9
  h = (h ~ (h >> 27)) * 0x94D049BB133111EB
  return h ~ (h >> 31)
end

local function unit(h) return ((h >> 11) & ((1 << 53) - 1)) / (1 << 53) end

-- Contribution of knob i of family f with value positions a, b, c.
local function contribution(f, i, a, b, c)
  return unit(mix(((f * 64 + i) * 4096 + a * 256 + b * 16 + c + 1) * 0x9E3779B97F4A7C15))
end

local function positions(family, knobs)
  local x = {}
  for i, k in ipairs(domains[family]) do
    local want, at = tostring(knobs[k.name] or k.values[1]), 0
    for j, v in ipairs(k.values) do if v == want then at = j - 1 break end end
    x[i] = at
  end
  return x
end

local function family_rate(f, x)
  local s, n = 1, #x
  for i = 1, n do s = s + contribution(f, i, x[i], x[i + 1] or 0, x[i + 2] or 0) end
  return s
end

-- The best rate of family f (bench/landscape.lua's dynamic programming, kept
-- in each file: a workload is copied alone, as tests/e2e/experiment.sh
-- does): F[a][b] is the best sum of contributions i..n
-- given x_i = a, x_{i+1} = b (positions past n hold 0).
local function family_optimum(f)
  local dom = domains[FAMILIES[f]]
  local n = #dom
  local function size(j) return j <= n and #dom[j].values - 1 or 0 end
  local F = { [0] = { [0] = 0 } }
  for i = n, 1, -1 do
    local G = {}
    for a = 0, size(i) do
      G[a] = {}
      for b = 0, size(i + 1) do
        local top = -math.huge
        for c = 0, size(i + 2) do top = math.max(top, contribution(f, i, a, b, c) + F[b][c]) end
        G[a][b] = top
      end
    end
    F = G
  end
  local top = -math.huge
  for a = 0, size(1) do for b = 0, size(2) do top = math.max(top, F[a][b]) end end
  return 1 + top
end

local CONFIGS = {
  { name = "sq-512", family = 1 }, { name = "sq-1024", family = 1 },
  { name = "odd-383x271x445", family = 2 }, { name = "odd-500x300x700", family = 2 },
  { name = "tall-4096x64x256", family = 3 }, { name = "small-64x64x64", family = 4 },
}

local function geomean(rates)
  local sum = 0
  for _, r in ipairs(rates) do sum = sum + math.log(r) end
  return math.exp(sum / #rates)
end

local configs = {}
for i, c in ipairs(CONFIGS) do
  configs[i] = { name = c.name, family = c.family, knobs = FAMILIES[c.family] .. "_*" }
end

return {
  name = "families",
  description = "four NK landscapes, one per knob family of sgemm_fast, with noise (benchmarks only)",
  backend = "test",
  kernel = "kernels/cpu/sgemm_fast.c",
  configs = configs,
  test_score = function(cand, config)
    local f = config.family
    local rate = family_rate(f, positions(FAMILIES[f], cand.knobs))
    local key = 0
    for _, fam in ipairs(FAMILIES) do
      for _, p in ipairs(positions(fam, cand.knobs)) do key = key * 31 + p + 1 end
    end
    local u1 = math.max(unit(mix((key + #config.name) * 0x9E3779B97F4A7C15)), 1e-12)
    local u2 = unit(mix((key * 7 + f) * 0xD1B54A32D192ED03))
    local z = math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
    return rate * math.exp(NOISE * z)
  end,
  true_score = function(knobs)
    local rates = {}
    for i, c in ipairs(CONFIGS) do rates[i] = family_rate(c.family, positions(FAMILIES[c.family], knobs)) end
    return geomean(rates)
  end,
  optimum = function()
    local rates = {}
    for i, c in ipairs(CONFIGS) do rates[i] = family_optimum(c.family) end
    return geomean(rates)
  end,
}
