-- cuda/attention_small for the CPU emulator: MHA and GQA, causal and not,
-- sequence lengths that are no multiple of any tile.
return require "tests.emu.evaluators.small" ("attention_small", {
  { name = "mha-s70", B = 1, Hq = 2, Hkv = 2, S = 70, causal = 0 },
  { name = "gqa-s100-causal", B = 1, Hq = 4, Hkv = 2, S = 100, causal = 1 },
  { name = "gqa-s48", B = 2, Hq = 4, Hkv = 1, S = 48, causal = 0 },
})
