-- cuda_vadd against the mock driver: block = 256 - MODE picks what the mock
-- candidate does (0 correct, 1 wrong, 2 out of bounds, 3 stale output,
-- 4 wrong from the second launch, 5 illegal address, 6 out of resources).
local dir = debug.getinfo(1, "S").source:match("^@(.*)/") or "."
local ev = dofile(dir .. "/cuda_vadd.lua")
ev.name = "cuda_vadd_mock"
ev.kernel = "tests/e2e/kernels/cuda_vadd_mock.cu"
ev.block = function(c, k) return 256 - k.MODE end
ev.grid = function(c, k) return (c.n + 255 - k.MODE) // (256 - k.MODE) end
ev.arch = "sm_90a"
return ev
