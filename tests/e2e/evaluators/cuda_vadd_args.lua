-- cuda_vadd with one argument more than the kernel takes.
local dir = debug.getinfo(1, "S").source:match("^@(.*)/") or "."
local ev = dofile(dir .. "/cuda_vadd.lua")
ev.name = "cuda_vadd_args"
table.insert(ev.args, { name = "extra", kind = "scalar", type = "i32", value = function() return 1 end })
return ev
