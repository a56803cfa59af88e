-- avo.json (docs/lua-api.md, "JSON"): what plug-ins use instead of reaching
-- into avo.core.
local avo = require "avo"
local json = require "avo.json"
assert(avo.json == json, "avo.json is the module require \"avo.json\" returns")

-- Encoding: compact, keys sorted, arrays by their keys, [] only when marked.
assert(json.encode({ b = 1, a = { 1, 2, 3 }, c = "x" }) == '{"a":[1,2,3],"b":1,"c":"x"}')
assert(json.encode({}) == "{}", "an empty table is an object")
assert(json.encode(json.array()) == "[]", "a marked empty table is an array")
local t = {}
assert(json.array(t) == t and getmetatable(t) == json.array_mt, "array marks the table it is given")
assert(json.encode({ n = 3, f = 0.5, s = "q\"" }) == '{"f":0.5,"n":3,"s":"q\\""}')
assert(json.encode("text") == '"text"' and json.encode(7) == "7", "scalars encode too")

-- What JSON cannot hold is an error naming the call.
local ok, err = pcall(json.encode, { f = function() end })
assert(not ok and err:find("avo.json.encode: ", 1, true), err)
ok, err = pcall(json.decode, 42)
assert(not ok and err:find("avo.json.decode: expected a string, got number", 1, true), err)

-- Decoding: integers stay integers, null inside a container is absent.
local v = json.decode('{"a":[1,2.5,"x"],"b":null,"c":{"d":true}}')
assert(math.type(v.a[1]) == "integer" and v.a[2] == 2.5 and v.a[3] == "x")
assert(v.b == nil and v.c.d == true)
assert(json.decode("null") == nil)
-- Text that is not JSON: nil and the parser's message.
local bad, why = json.decode("{not json")
assert(bad == nil and type(why) == "string" and #why > 0, "a parse error is nil, message")
-- A round trip keeps the text: decoded arrays come back marked, so an
-- empty one stays [].
local text = '{"k":[1,{"z":[]}],"m":"é"}'
assert(json.encode(json.decode(text)) == text)
assert(getmetatable(json.decode("[]")) == json.array_mt)
print("test_json: ok")
