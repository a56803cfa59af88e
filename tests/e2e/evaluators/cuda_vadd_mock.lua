-- cuda_vadd against the mock driver: block = 256 - MODE picks what the mock
-- candidate does (0 correct, 1 wrong, 2 out of bounds, 3 stale output,
-- 4 wrong from the second launch, 5 illegal address, 6 out of resources,
-- 7 copies the reference's output, 8 skips work on inputs it has seen,
-- 9 skips work after its first two launches, 10 wrong after them, 11 right
-- only at the timed sizes: the check config n777 catches it, 12 writes the
-- element before its output).
local dir = debug.getinfo(1, "S").source:match("^@(.*)/") or "."
local ev = dofile(dir .. "/cuda_vadd.lua")
ev.name = "cuda_vadd_mock"
ev.kernel = "tests/e2e/kernels/cuda_vadd_mock.cu"
ev.block = function(c, k) return 256 - k.MODE end
ev.grid = function(c, k) return (c.n + 255 - k.MODE) // (256 - k.MODE) end
ev.arch = "sm_90a"
-- The mock's L2 flush (100 MB of host memset per run) and the judge's fresh
-- inputs per timed launch cost host time that counts against max_seconds:
-- 2 s keeps at least min_samples samples on a loaded 2-core machine.
ev.timing = { max_seconds = 2, min_samples = 3 }
ev.check_configs = { { name = "n777", n = 777 } }
return ev
