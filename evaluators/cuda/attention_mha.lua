-- Attention forward, MHA, the AVO paper's benchmark configurations: head dim 128,
-- 16 heads, seq 4096..32768 with 32768 tokens in total (batch 8, 4, 2, 1), causal and not.
-- Kernel, reference, launch and score: attention_common.lua.
local configs = {}
for _, causal in ipairs({ 0, 1 }) do
  for _, S in ipairs({ 4096, 8192, 16384, 32768 }) do
    configs[#configs + 1] = {
      name = ("mha%s-s%d"):format(causal == 1 and "-causal" or "", S),
      B = 32768 // S, Hq = 16, Hkv = 16, S = S, causal = causal,
    }
  end
end

return require "evaluators.cuda.attention_common" {
  name = "attention_mha",
  configs = configs,
  timing = { min_samples = 3, max_samples = 10, max_seconds = 5 },
  timeout = 900,
}
