-- gpu_quick: a short GA over the knobs of the bf16 tiled GEMM on the GPU.
--
--   avo run examples/gpu_quick.lua --jobs 1 --max-time 60
--   avo run examples/gpu_quick.lua --jobs 1 evaluator=cuda/gemm_f32 generations=4
--
-- One worker per GPU (--jobs 1): timing must own the device.  Every candidate
-- is compiled with NVRTC, verified against the reference kernel on fresh
-- inputs (poisoned outputs, guard canaries, at least two launches) and timed
-- with CUDA events, L2 flushed before every sample.  Knob combinations the
-- GPU cannot launch (more than 1024 threads per block) come back `invalid`.
local avo = require "avo"
local args = avo.options(..., {
  evaluator = { type = "string", default = "cuda/gemm_bf16" },
  population = { type = "integer", default = 8, min = 2 },
  generations = { type = "integer", default = 6, min = 0 },
})

return avo.strategy("ga").run{
  evaluator = args.evaluator,
  population = args.population,
  generations = args.generations,
  elite = 2,
  tournament = 3,
  crossover_rate = 0.3,
  operators = { param_tweak = 1 },
  operator_options = { param_tweak = { max_changes = 2 } },
}
