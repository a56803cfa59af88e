-- cuda_vadd with 4 * BLOCK bytes of dynamic shared memory, for the emulator's
-- shared-memory kernels (tests/emu/kernels/vadd_features.cu, ...).
local ev = {}
for k, v in pairs(dofile("tests/e2e/evaluators/cuda_vadd.lua")) do ev[k] = v end
ev.name = "cuda_vadd_shared"
ev.shared_bytes = function(c, k) return 4 * k.BLOCK end
return ev
