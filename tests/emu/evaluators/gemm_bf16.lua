-- cuda/gemm_bf16 for the CPU emulator: a square tile-multiple config and an odd one.
return require "tests.emu.evaluators.small" ("gemm_bf16", {
  { name = "64", M = 64, N = 64, K = 64 },
  { name = "odd-100x77x53", M = 100, N = 77, K = 53 },
})
