-- The statistics of `avo experiment report` (lua/avo/experiment_report.lua)
-- against values computed by hand and published tables; the end-to-end test
-- (tests/e2e/experiment.sh) checks them on real grids against Python.
local R = require "avo.experiment_report"
local E = require "avo.experiment"

local function near(a, b, tol, what)
  assert(math.abs(a - b) <= (tol or 1e-12), ("%s: %.17g, expected %.17g"):format(what, a, b))
end

-- Quantiles by linear interpolation (numpy's default).
local q = R.quantile
near(q({ 1, 2, 3, 4 }, 0.25), 1.75, nil, "q1 of 1..4")
near(q({ 1, 2, 3, 4 }, 0.5), 2.5, nil, "median of 1..4")
near(q({ 1, 2, 3, 4 }, 0.75), 3.25, nil, "q3 of 1..4")
near(q({ 7 }, 0.25), 7, nil, "one value")
assert(q({}, 0.5) == nil, "no values: no quantile")
near(q({ 1, 3, 3, 10, 20 }, 0.5), 3, nil, "odd median")

-- Mann-Whitney U: complete separation of 3 and 3 has p = 2/20 (exact).
local u, a12, p, method = R.mann_whitney({ 4, 5, 6 }, { 1, 2, 3 })
assert(u == 9 and a12 == 1 and method == "exact", "separated samples")
near(p, 0.1, 1e-12, "exact p, 3 vs 3")
u, a12, p = R.mann_whitney({ 1, 2, 3 }, { 4, 5, 6 })
assert(u == 0 and a12 == 0, "reversed")
near(p, 0.1, 1e-12, "exact p is two-sided")
-- 5 vs 5 separated: 2 / C(10, 5) = 2/252.
_, _, p = R.mann_whitney({ 6, 7, 8, 9, 10 }, { 1, 2, 3, 4, 5 })
near(p, 2 / 252, 1e-12, "exact p, 5 vs 5")
-- Interleaved, no ties: a = {1,3,5,7,9}, b = {2,4,6,8,10}: U = 10.
u, a12, p = R.mann_whitney({ 1, 3, 5, 7, 9 }, { 2, 4, 6, 8, 10 })
assert(u == 10 and math.abs(a12 - 0.4) < 1e-12, "interleaved U")
near(p, 0.6904761904761905, 1e-12, "exact p of U = 10, 5 vs 5") -- scipy: 0.690476...
-- Ties: the normal approximation with tie and continuity correction.
u, a12, p, method = R.mann_whitney({ 1, 2, 2, 3 }, { 2, 3, 4, 4 })
assert(method == "normal" and u == 2.5, "tied samples use the normal approximation, U " .. u)
-- by hand: mu 8, ties in {1,2,2,2,3,3,4,4}: 2 x3, 3 x2, 4 x2: sum t^3 - t = 36;
-- var = 16/12 * (9 - 36/56); z = (|2.5 - 8| - 0.5) / sqrt(var); p = erfc(z / sqrt 2),
-- 0.13416918012812581 by Python's math.erfc
near(p, 0.13416918012812581, 3e-7, "normal p with ties")
-- All equal: no variance, p = 1, A12 = 0.5.
u, a12, p = R.mann_whitney({ 5, 5 }, { 5, 5, 5 })
assert(u == 3 and a12 == 0.5 and p == 1, "all tied")
-- erfc against known values
near(R.erfc(0), 1, 1e-7, "erfc(0)")
near(R.erfc(1), 0.15729920705028513, 2e-7, "erfc(1)")
near(R.erfc(-1), 1.8427007929497148, 2e-7, "erfc(-1)")

-- Holm: p = {0.01, 0.04, 0.03} over 3 tests -> {0.03, 0.06, 0.06}.
local tests = { { p = 0.01 }, { p = 0.04 }, { p = 0.03 } }
R.holm(tests)
near(tests[1].p_holm, 0.03, 1e-12, "holm first")
near(tests[3].p_holm, 0.06, 1e-12, "holm second")
near(tests[2].p_holm, 0.06, 1e-12, "holm third (monotone)")
tests = { { p = 0.6 }, { p = 0.7 } }
R.holm(tests)
assert(tests[1].p_holm == 1 and tests[2].p_holm == 1, "holm caps at 1")

assert(R.magnitude(0.5) == "negligible" and R.magnitude(0.6) == "small" and
  R.magnitude(0.3) == "medium" and R.magnitude(0.95) == "large", "A12 magnitudes")

-- The definition: checks and the plan.
local def, err = E.load_definition([[return { arms = { b = "ga", a = { strategy = "random" } },
  workloads = { w = "bench/landscape.lua" }, seeds = { 3, 7 },
  budgets = { { max_evals = 5 }, { name = "t", max_time = 2 } } }]], "x.lua")
assert(def, err)
assert(def.name == "x" and def.arms[1].name == "a" and def.arms[2].name == "b", "map arms by name")
local plan = E.plan(def)
assert(#plan == 8, "2 arms x 2 budgets x 2 seeds")
assert(plan[1].key == "a/w/evals5/s3" and plan[8].key == "b/w/t/s7", plan[1].key .. " " .. plan[8].key)
for _, bad in ipairs({
  { "return 1", "must return a table" },
  { "return { arms = {}, workloads = { w = 'x' } }", "'arms' is empty" },
  { "return { arms = { a = { strategy = 'ga', run = print } }, workloads = { w = 'x' } }",
    "exactly one of strategy, script or run" },
  { "return { arms = { a = 'ga' }, workloads = { w = 'x' }, seeds = 0 }", "'seeds' must be >= 1" },
  { "return { arms = { a = 'ga' }, workloads = { w = 'x' }, budgets = { { max_evals = -1 } } }",
    "max_evals must be a number > 0" },
  { "return { arms = { a = 'ga' }, workloads = { w = 'x' }, budgets = { { evals = 3 } } }",
    "unknown key 'evals'" },
  { "return { arms = { { name = 'a', strategy = 'ga' }, { name = 'a', strategy = 'ga' } }, " ..
    "workloads = { w = 'x' } }", "arm 'a' is declared twice" },
  { "return { arms = { a = 'ga' }, workloads = { w = 3 } }", "workload 'w' needs an evaluator" },
  { "return { arms = { a = 'ga' }, workloads = { w = 'x' }, jobs = 0 }", "'jobs' must be an integer" },
  { "return { arms = { a = 'ga' }, workloads = { w = 'x' }, slurm = 1 }", "'slurm' must be a string" },
  { "return {", "expected" },
}) do
  local d, e = E.load_definition(bad[1], "bad.lua")
  assert(not d and e:find(bad[2], 1, true), ("%q: got %s"):format(bad[1], tostring(e)))
end
print("experiment stats: ok")
