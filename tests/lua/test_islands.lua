-- strategies/islands.lua's migration on hand-made populations: who sends to
-- whom, the best records move, the worst are replaced, nothing is repeated,
-- a population never outgrows `population`, the inputs stay untouched.
local avo = require "avo"
local islands = avo.strategy("islands")

local function ids(list)
  local out = {}
  for i, r in ipairs(list) do out[i] = r.id end
  return table.concat(out, ",")
end
local function rec(id, score) return { id = id, score = score } end

-- Sources.
assert(table.concat(islands.sources(1, 3, "ring"), ",") == "3")
assert(table.concat(islands.sources(2, 3, "ring"), ",") == "1")
assert(table.concat(islands.sources(2, 4, "all"), ",") == "1,3,4")
assert(#islands.sources(1, 1, "ring") == 0 and #islands.sources(1, 1, "all") == 0)

-- Ring, two migrants: island 1 gets island 3's best two (#9, #8), losing its
-- worst two (#2, #3); survivors keep their order, migrants follow best first.
local pops = {
  { rec(1, 5), rec(2, 1), rec(3, 2), rec(4, 4) },
  { rec(5, 3), rec(6, 6), rec(7, 2), rec(8, 1) },
  { rec(9, 9), rec(10, 0), rec(11, 8), rec(8, 1) },
}
local cfg = { migrants = 2, topology = "ring", population = 4 }
local new, moves = islands.migrate(pops, cfg)
assert(ids(new[1]) == "1,4,9,11", ids(new[1]))
assert(ids(new[2]) == "5,6,1,4", ids(new[2]))
assert(ids(new[3]) == "9,11,6,5", ids(new[3]))
assert(moves[1].to == 1 and moves[1].migrants[1].id == 9 and moves[1].migrants[1].from == 3)
assert(table.concat(moves[1].replaced, ",") == "2,3", table.concat(moves[1].replaced, ","))
assert(table.concat(moves[1].population, ",") == "1,4,9,11")
assert(ids(pops[1]) == "1,2,3,4", "the input populations are not modified")
for i = 1, 3 do
  for _, m in ipairs(moves[i].migrants) do
    local found = false
    for _, r in ipairs(new[i]) do found = found or r.id == m.id end
    assert(found, "migrant #" .. m.id .. " is in island " .. i)
  end
end

-- A migrant the receiver already holds does not move and replaces nothing.
new, moves = islands.migrate({ { rec(1, 5), rec(2, 1) }, { rec(1, 5), rec(3, 0) } },
  { migrants = 1, topology = "ring", population = 2 })
assert(#moves[1].migrants == 0 and #moves[1].replaced == 0 and ids(new[1]) == "1,2")
assert(ids(new[2]) == "1,3")

-- All: every other island's best, ranked, at most population - 1 of them; a
-- short population fills free slots before replacing anything.
new, moves = islands.migrate({
  { rec(1, 1), rec(2, 2), rec(3, 3) },
  { rec(4, 7) },
  { rec(5, 5), rec(6, 6), rec(7, 0) },
}, { migrants = 1, topology = "all", population = 3 })
assert(ids(new[1]) == "3,4,6", ids(new[1]))
assert(ids(new[2]) == "4,6,3", ids(new[2]))
assert(#moves[2].replaced == 0)
assert(ids(new[3]) == "6,4,3", ids(new[3]))
assert(moves[3].migrants[1].from == 2 and moves[3].migrants[2].from == 1)

-- Options are checked before anything runs, naming the option.
local function refused(opts, want, no_evaluator)
  if not no_evaluator then opts.evaluator = "tests/lua/evaluators/synthetic.lua" end
  local ok, err = pcall(islands.run, opts)
  assert(not ok and err:find(want, 1, true), ("%s does not say %q"):format(tostring(err), want))
end
refused({ islands = 2.5 }, "islands: option 'islands' must be an integer >= 1, got 2.5")
refused({ migrants = 0 }, "islands: option 'migrants' must be an integer in [1, population), got 0")
refused({ population = 3, migrants = 3 }, "option 'migrants' must be an integer in [1, population)")
refused({ topology = 1 }, "islands: option 'topology' must be \"ring\" or \"all\", got 1")
refused({ migration_interval = "5" }, "islands: option 'migration_interval' must be an integer >= 1")
refused({ elite = 8 }, "islands: option 'elite' must be an integer in [0, population), got 8")
refused({ operators = {} }, "islands: option 'operators' must be a table with at least one")
refused({}, "islands: option 'evaluator' must be given", true)
print("test_islands: ok")
