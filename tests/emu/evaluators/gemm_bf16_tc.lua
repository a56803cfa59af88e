-- cuda/gemm_bf16_tc (tensor-core seed) for the CPU emulator: the configs of
-- tests/emu/evaluators/gemm_bf16.lua.
return require "tests.emu.evaluators.small" ("gemm_bf16_tc",
  require("tests.emu.evaluators.gemm_bf16").configs)
