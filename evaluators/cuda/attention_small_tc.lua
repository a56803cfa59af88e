-- Attention forward on the GPU's tensor cores: the configs, timing and time
-- limit of attention_small.lua, the seed of attention_tc.lua
-- (kernels/cuda/attention_wmma.cu).  Reference and score: attention_common.lua.
local base = require "evaluators.cuda.attention_small"
return require "evaluators.cuda.attention_common" {
  name = "attention_small_tc",
  configs = base.configs,
  timing = base.timing,
  timeout = base.timeout,
  seed = require "evaluators.cuda.attention_tc",
}
