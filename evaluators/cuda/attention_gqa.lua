-- Attention forward, GQA, the AVO paper's benchmark configurations: head dim 128,
-- 32 query heads with 8 or 4 KV heads, seq 4096..32768 with 32768 tokens (batch 8..1), causal and not.
-- Kernel, reference, launch and score: attention_common.lua.
local configs = {}
for _, causal in ipairs({ 0, 1 }) do
  for _, S in ipairs({ 4096, 8192, 16384, 32768 }) do
    for _, hkv in ipairs({ 8, 4 }) do
      configs[#configs + 1] = {
        name = ("gqa-kv%d%s-s%d"):format(hkv, causal == 1 and "-causal" or "", S),
        B = 32768 // S, Hq = 32, Hkv = hkv, S = S, causal = causal,
      }
    end
  end
end

return require "evaluators.cuda.attention_common" {
  name = "attention_gqa",
  configs = configs,
  timing = { min_samples = 3, max_samples = 10, max_seconds = 5 },
  timeout = 1800,
}
