-- core.freeze / core.thaw (lua/lua_freeze.c): how a long run keeps the
-- records it is done with (lua/avo/pipeline.lua).
local core = require "avo.core"

local rec = {
  id = 7, score = 2.0, rate = 0.1, flag = true, off = false, name = "k",
  knobs = { A = 1, B = "x", C = 1.5 }, parents = { { id = 3, role = "parent" } },
  configs = setmetatable({}, core.json_array_mt), blob = ("\0ab"):rep(100),
  nested = { { { { 1, 2, { 3.0 } } } } },
}
local frozen = core.freeze(rec)
assert(type(frozen) == "string")
local back = core.thaw(frozen)
assert(back ~= rec and back.knobs ~= rec.knobs, "thawing makes fresh tables")
assert(math.type(back.id) == "integer" and back.id == 7)
assert(math.type(back.score) == "float" and back.score == 2.0, "a float stays a float")
assert(back.rate == 0.1 and back.flag == true and back.off == false and back.name == "k")
assert(back.knobs.A == 1 and back.knobs.B == "x" and back.knobs.C == 1.5)
assert(back.parents[1].id == 3 and back.parents[1].role == "parent" and #back.parents == 1)
assert(getmetatable(back.configs) == core.json_array_mt, "an empty array stays marked")
assert(back.blob == rec.blob, "strings with NUL bytes")
assert(math.type(back.nested[1][1][1][3][1]) == "float")
local n = 0
for _ in pairs(back) do n = n + 1 end
assert(n == 11)
assert(core.thaw(core.freeze("s")) == "s" and core.thaw(core.freeze(5)) == 5)

-- What cannot be frozen is refused (nil), so the caller keeps the table.
assert(core.freeze({ f = function() end }) == nil, "a function")
local shared = {}
assert(core.freeze({ a = shared, b = shared }) == nil, "a table met twice")
local cyclic = {}
cyclic.self = cyclic
assert(core.freeze(cyclic) == nil, "a cycle")
assert(core.freeze(setmetatable({}, {})) == nil, "another metatable")
local deep = {}
for _ = 1, 100 do deep = { deep } end
assert(core.freeze(deep) == nil, "nested too deeply")

-- A string that is no frozen value is an error, not a crash.
for _, bad in ipairs({ "", "T", "zz", frozen:sub(1, #frozen - 1), frozen .. "x" }) do
  local ok, err = pcall(core.thaw, bad)
  assert(not ok and tostring(err):find("core.thaw: not a frozen value", 1, true), tostring(err))
end
print("freeze ok")
