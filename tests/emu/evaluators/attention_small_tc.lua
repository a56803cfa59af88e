-- cuda/attention_small_tc (tensor-core seed) for the CPU emulator: the configs
-- of tests/emu/evaluators/attention_small.lua.
return require "tests.emu.evaluators.small" ("attention_small_tc",
  require("tests.emu.evaluators.attention_small").configs)
