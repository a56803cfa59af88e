-- cuda/gemm_f16_tc (tensor-core seed) for the CPU emulator: the configs of
-- tests/emu/evaluators/gemm_f16.lua.
return require "tests.emu.evaluators.small" ("gemm_f16_tc",
  require("tests.emu.evaluators.gemm_f16").configs)
