-- `require` finds modules under the avo roots ($AVO_PATH, ".", the source
-- tree; lua/avo/paths.lua), names every place it looked when a module is
-- missing, and an evaluator's fingerprint covers the shared modules it
-- requires.  Parts that need their own $AVO_PATH run in a child `avo run`.
local avo = require "avo"
local core = require "avo.core"

-- Shipped shared modules, from the current directory (the source root).
local records, path = require "strategies.lib.records"
assert(type(records.better) == "function", "strategies.lib.records loads")
assert(path == "./strategies/lib/records.lua", "found under '.': " .. tostring(path))

local ok, err = pcall(require, "no.such.module")
assert(not ok, "a missing module is an error")
for _, want in ipairs({ "module 'no.such.module' not found", "no file './no/such/module.lua'",
                        "no file '" .. core.source_root .. "/no/such/module.lua'" }) do
  assert(err:find(want, 1, true), ("%q does not mention %q"):format(err, want))
end

-- A shared evaluator module is refused as an evaluator, saying why.
ok, err = pcall(avo.evaluator, "cuda/attention_common")
assert(not ok and err:find("shared by evaluators (load it with require)", 1, true), err)

------------------------------------------------------------ with $AVO_PATH

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute(("mkdir -p %s/root/avotest %s/root/evaluators/t"):format(tmp, tmp)))
local root = tmp .. "/root"

local function write(name, text)
  local f = assert(io.open(tmp .. "/" .. name, "w"))
  f:write(text)
  f:close()
end

write("root/avotest/greeting.lua", [[
return { hello = "from AVO_PATH", inner = require "avotest.inner", name = ... }
]])
write("root/avotest/inner.lua", [[return "inner"]])
write("root/avotest/broken.lua", [[return {]])
local function write_common(comment)
  write("root/evaluators/t/shared_common.lua", comment .. [[

return function(spec)
  return { name = spec.name, description = "d", backend = "test",
           kernel = "kernels/cpu/sgemm.c", configs = { { name = "c" } },
           test_score = function() return 1 end }
end
]])
end
write_common("-- version 1")
-- The evaluator requires a module that requires another one.
write("root/evaluators/t/ev.lua", [[
assert(require "avotest.greeting")
return require "evaluators.t.shared_common" { name = "t" }
]])
write("child.lua", ([[
local avo = require "avo"
local root = %q
local greeting, path = require "avotest.greeting"
assert(greeting.hello == "from AVO_PATH" and greeting.inner == "inner", "module from $AVO_PATH")
assert(greeting.name == "avotest.greeting", "the loader gets the module name")
assert(path == root .. "/avotest/greeting.lua", "found at " .. tostring(path))
assert(require "avotest.greeting" == greeting, "loaded once")

local ok, err = pcall(require, "avotest.missing")
assert(not ok, "missing module")
for _, want in ipairs({ "no file '" .. root .. "/avotest/missing.lua'",
                        "no file './avotest/missing.lua'" }) do
  assert(err:find(want, 1, true), ("%%q does not mention %%q"):format(err, want))
end
ok, err = pcall(require, "avotest.broken")
assert(not ok and err:find("error loading module 'avotest.broken' from file '" .. root
  .. "/avotest/broken.lua'", 1, true), err)

local ev = avo.evaluator("t/ev")
local modules = table.concat(ev._modules, " ")
for _, want in ipairs({ "/evaluators/t/shared_common.lua", "/avotest/greeting.lua",
                        "/avotest/inner.lua" }) do
  assert(modules:find(want, 1, true), modules .. " lacks " .. want)
end
print("FINGERPRINT " .. ev.fingerprint)
]]):format(root))

local function child()
  local p = assert(io.popen(("AVO_PATH=%s %s run %s/child.lua --db %s/child.db 2>&1"):format(
    root, os.getenv("AVO"), tmp, tmp)))
  local out = p:read("a")
  local closed, _, code = p:close()
  assert(closed and code == 0, "child run failed:\n" .. out)
  return assert(out:match("FINGERPRINT (%x+)"), out)
end

local first = child()
assert(child() == first, "same files, same fingerprint")
write_common("-- version 2")
assert(child() ~= first, "a change to a required module changes the evaluator's fingerprint")

os.execute(("rm -rf %s"):format(tmp))
print("test_require: ok")
