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

-- core.shelf (lua/lua_shelf.c): the records frozen in C memory, each
-- distinct source kept once, the verified keys in order of arrival.
local shelf = core.shelf()
local src = ("int k(void) { return 1; }\n"):rep(50)
assert(shelf:put("k1", { id = 1, score = 1.5, source = src, knobs = { A = 2 } }) == true)
local r2 = { id = 2, source = src }
assert(shelf:put("k2", r2) == true and r2.source == src, "put leaves the record as it was")
assert(shelf:put("k3", { id = 3 }) == true, "a record without source")
assert(shelf:put("bad", { f = function() end, source = src }) == false, "what cannot freeze is refused")
assert(not shelf:has("bad") and shelf:get("bad") == nil and shelf:get("nope") == nil)
local got = shelf:get("k1")
assert(got.id == 1 and math.type(got.score) == "float" and got.knobs.A == 2 and got.source == src)
assert(shelf:get("k1") ~= got, "each get thaws fresh tables")
assert(shelf:get("k2").source == src and shelf:get("k3").source == nil and shelf:has("k3"))
assert(shelf:put("k\0bin", { id = 4, source = "" }) and shelf:get("k\0bin").source == "", "keys of any bytes")
assert(shelf:put("k1", { id = 9 }) and shelf:get("k1").id == 9, "a key put again holds the latest")
assert(#shelf:ok_keys() == 0)
shelf:add_ok("k3")
shelf:add_ok("k1")
local keys = shelf:ok_keys()
assert(#keys == 2 and keys[1] == "k3" and keys[2] == "k1", "the verified keys in order of arrival")
shelf:close()
shelf:close()
local ok, err = pcall(shelf.get, shelf, "k1")
assert(not ok and tostring(err):find("closed shelf", 1, true), tostring(err))
print("freeze ok")
