-- avo.patch: SEARCH/REPLACE blocks, rewrites and evolve regions.
local patch = require "avo.patch"

local function block(search, replace)
  return "<<<<<<< SEARCH\n" .. search .. "\n=======\n" .. replace .. "\n>>>>>>> REPLACE\n"
end

local src = [[
int f(int x)
{
    int y = x * 2;
    return y + 1;
}
int g(int x)
{
    return x;
}
]]

-- Exact match.
local out, how = patch.apply(src, "Double less.\n" .. block("    int y = x * 2;", "    int y = x * 3;"))
assert(how == "blocks", how)
assert(out == src:gsub("x %* 2", "x * 3"), out)

-- Whitespace-tolerant: different indentation and spacing still matches one place.
out = assert(patch.apply(src, block("\tint  y =  x * 2; ", "    int y = x << 1;")))
assert(out:find("    int y = x << 1;\n", 1, true) and not out:find("x * 2", 1, true), out)
out = assert(patch.apply(src, block("  int   y = x * 2;\n      return y + 1;",
  "    return 2 * x + 1;")))
assert(out:find("{\n    return 2 * x + 1;\n}\nint g", 1, true), out)

-- Ambiguous: "return" lines of f and g both match "    return x;"-like text.
local twice = "int a;\nint b;\nint a;\n"
local bad, err = patch.apply(twice, block("int a;", "int c;"))
assert(not bad and err:find("matches 2 places", 1, true), err)
bad, err = patch.apply("x  = 1;\ny = 2;\nx = 1;\n", block("x = 1 ;", "x = 3;"))
assert(not bad and err:find("does not match", 1, true), err)
bad, err = patch.apply("x  = 1;\ny = 2;\nx   = 1;\n", block("x = 1;", "x = 3;"))
assert(not bad and err:find("matches 2 places", 1, true), "tolerant ambiguity: " .. tostring(err))

-- Not found, empty, unclosed.
bad, err = patch.apply(src, block("int z = 0;", "int z = 1;"))
assert(not bad and err:find("does not match", 1, true) and err:find("int z = 0;", 1, true), err)
bad, err = patch.apply(src, block("", "x"))
assert(not bad and err:find("empty", 1, true), err)
bad, err = patch.apply(src, "<<<<<<< SEARCH\nint f(int x)\n=======\nint f(long x)\n")
assert(not bad and err:find("not closed", 1, true), err)
bad, err = patch.apply(src, "I would make it faster.")
assert(not bad and err:find("neither", 1, true), err)

-- Several blocks in one answer, applied in order.
out = assert(patch.apply(src, block("int y = x * 2;", "int y = x * 4;") ..
  "and\n" .. block("    return x;", "    return -x;")))
assert(out:find("x * 4", 1, true) and out:find("return -x;", 1, true), out)
-- A later block sees the earlier block's result.
out = assert(patch.apply(src, block("x * 2", "x * 5") .. block("x * 5", "x * 6")))
assert(out:find("x * 6", 1, true), out)
-- One bad block rejects the whole answer.
bad, err = patch.apply(src, block("x * 2", "x * 5") .. block("nope", "x"))
assert(not bad and err:find("SEARCH block 2", 1, true), err)

-- Full rewrite in a fenced block (the longest one).
out, how = patch.apply(src, "Rewritten:\n```c\nint f(int x) { return 2 * x + 1; }\n```\n" ..
  "```\nx\n```\n")
assert(how == "rewrite" and out == "int f(int x) { return 2 * x + 1; }\n", out)
bad, err = patch.apply(src, "```c\nint f(void);\n") -- truncated fence
assert(not bad, "an unclosed fence is no rewrite")
bad, err = patch.apply(src, "```c\n" .. src .. "```\n")
assert(not bad and err:find("unchanged", 1, true), err)

-- Evolve regions.
local marked = [[
#include <stddef.h>
static const int LIMIT = 4;
// avo:evolve-begin
static int body(int x)
{
    return x + LIMIT;
}
// avo:evolve-end
int entry(int x) { return body(x); }
]]
out = assert(patch.apply(marked, block("    return x + LIMIT;", "    return LIMIT + x;")))
assert(out:find("LIMIT + x", 1, true))
bad, err = patch.apply(marked, block("static const int LIMIT = 4;", "static const int LIMIT = 8;"))
assert(not bad and err:find("outside the evolve regions", 1, true), err)
assert(err:find("lines 1%-3"), err)
bad, err = patch.apply(marked, block("int entry(int x) { return body(x); }",
  "int entry(int x) { return 0; }"))
assert(not bad and err:find("outside the evolve regions", 1, true), err)
bad, err = patch.apply(marked, block("// avo:evolve-end", ""))
assert(not bad and err:find("markers", 1, true), err)
-- A rewrite must keep the outside too.
local rewritten = marked:gsub("return x %+ LIMIT;", "return x + LIMIT + 0;")
out = assert(patch.apply(marked, "```c\n" .. rewritten .. "```"))
assert(out == rewritten)
bad, err = patch.apply(marked, "```c\n" .. rewritten:gsub("stddef", "stdint") .. "```")
assert(not bad and err:find("outside the evolve regions", 1, true), err)
-- Two regions; the fixed middle stays.
local two = "a0\n// avo:evolve-begin\nbee\n// avo:evolve-end\ncee\n// avo:evolve-begin\n" ..
  "dee\n// avo:evolve-end\ne0\n"
out = assert(patch.apply(two, block("bee", "B1\nB2") .. block("dee", "")))
assert(out == "a0\n// avo:evolve-begin\nB1\nB2\n// avo:evolve-end\ncee\n// avo:evolve-begin\n" ..
  "\n// avo:evolve-end\ne0\n", out)
bad, err = patch.apply(two, block("cee", "C"))
assert(not bad and err:find("outside", 1, true), err)
-- Broken markers in the parent.
bad, err = patch.apply("// avo:evolve-begin\nx\n", block("x", "y"))
assert(not bad and err:find("not closed", 1, true), err)

assert(patch.explanation("Unrolled the loop.\n" .. block("a", "b")) == "Unrolled the loop.")
io.stderr:write("patch: ok\n")
