-- cuda_vadd with a short deadline, for the planted hang: the engine kills the
-- worker after timeout + compile_timeout + 10 s (25 s).
local ev = dofile("tests/e2e/evaluators/cuda_vadd.lua")
ev.name = "cuda_vadd_hang"
ev.timeout = 5
ev.compile_timeout = 10
return ev
