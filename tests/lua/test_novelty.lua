-- strategies/lib/novelty.lua: normalized tokens, shingle similarity, the
-- near-duplicate filter.
local novelty = require "strategies.lib.novelty"

local a = [[
// sum of a row
float f(const float *x, int n) {
    float s = 0;   /* running sum */
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}
]]
-- Comments and whitespace differ only.
local a2 = "float f(const float *x,int n){float s=0;for(int i=0;i<n;i++)s+=x[i];return s;} // new"
-- A real change: unrolled by two.
local b = [[
float f(const float *x, int n) {
    float s0 = 0, s1 = 0;
    int i = 0;
    for (; i + 1 < n; i += 2) { s0 += x[i]; s1 += x[i + 1]; }
    for (; i < n; i++) s0 += x[i];
    return s0 + s1;
}
]]

local toks = novelty.tokens(a)
assert(toks[1] == "float" and toks[2] == "f" and toks[3] == "(", table.concat(toks, " "))
for _, t in ipairs(toks) do assert(not t:find("sum", 1, true), "comments are dropped") end
assert(table.concat(novelty.tokens("i+=2.5f;"), " ") == "i + = 2.5f ;")

assert(novelty.similarity(a, a2) == 1, "comments and whitespace do not count")
local s = novelty.similarity(a, b)
assert(s > 0 and s < 0.5, "a real change is far: " .. s)

-- The filter: same knobs and similar source -> rejected; other knobs -> not.
local f = novelty.new{ threshold = 0.9 }
f:add{ id = 7, source = a, knobs = { U = 1 } }
local why = f:check{ source = a2, knobs = { U = 1 } }
assert(why and why:find("near-duplicate of #7 (token similarity 1.000 >= 0.9)", 1, true), tostring(why))
assert(f:check{ source = a2, knobs = { U = 2 } } == nil, "other knob values are a new candidate")
assert(f:check{ source = b, knobs = { U = 1 } } == nil, "a real change passes")
assert(f:check{ source = a, knobs = { U = 1 } } == nil, "the very same source is left to the exact dedupe")

-- Options.
assert(novelty.read(nil) == false and novelty.read(false) == false)
assert(novelty.read(true).threshold == 0.95)
local o, err = novelty.read{ threshold = 0 }
assert(o == nil and err:find("threshold", 1, true))
o, err = novelty.read{ shingle = 0 }
assert(o == nil and err:find("shingle", 1, true))
io.stderr:write("novelty: ok\n")
