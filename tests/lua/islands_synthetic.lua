-- An islands run on the deterministic test backend (used by
-- tests/e2e/islands.sh); options can be overridden as NAME=VALUE arguments.
local avo = require "avo"
local args = ... or {}

local function arg(name, default)
  local v = args[name]
  if v == nil then return default end
  return math.tointeger(tonumber(v)) or tonumber(v) or v
end

return avo.strategy("islands").run{
  evaluator = "tests/lua/evaluators/synthetic.lua",
  islands = arg("islands", 3), population = arg("population", 5),
  generations = arg("generations", 6), migration_interval = arg("migration_interval", 2),
  migrants = arg("migrants", 2), topology = arg("topology", "ring"),
  crossover_rate = 0.5, operators = { param_tweak = 1 },
}
