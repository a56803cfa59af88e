-- cuda/attention_gqa for the CPU emulator: 8 query heads sharing 2 or 1 KV
-- heads, causal and not.
return require "tests.emu.evaluators.small" ("attention_gqa", {
  { name = "gqa-kv2-s64", B = 1, Hq = 8, Hkv = 2, S = 64, causal = 0 },
  { name = "gqa-kv1-causal-s90", B = 1, Hq = 8, Hkv = 1, S = 90, causal = 1 },
})
