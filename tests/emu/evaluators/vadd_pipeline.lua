-- cuda_vadd through a cp.async pipeline (tests/emu/kernels/vadd_pipeline.cu):
-- two blocks walk the tiles, STAGES * 2 * 16 * BLOCK bytes of dynamic shared
-- memory; 70001 is no multiple of 4 (the 4-byte, zero-filled copies).
local ev = {}
for k, v in pairs(dofile("tests/e2e/evaluators/cuda_vadd.lua")) do ev[k] = v end
ev.name = "cuda_vadd_pipeline"
ev.kernel = "tests/emu/kernels/vadd_pipeline.cu"
ev.grid = 2
ev.shared_bytes = function(c, k) return k.STAGES * 2 * 16 * k.BLOCK end
ev.configs = { { name = "n1000", n = 1000 }, { name = "n70001", n = 70001 } }
ev.timing = { min_samples = 1, max_samples = 2, max_seconds = 0.2 }
return ev
