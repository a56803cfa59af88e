-- cuda_vadd with a grid function that returns a fraction.
local dir = debug.getinfo(1, "S").source:match("^@(.*)/") or "."
local ev = dofile(dir .. "/cuda_vadd.lua")
ev.name = "cuda_vadd_badgrid"
ev.grid = function(c, k) return { 4, 12.5 } end
return ev
