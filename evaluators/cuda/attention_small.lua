-- Attention forward, small MHA and GQA configs (causal and not) for quick runs and tests;
-- S = 300 is not a multiple of any tile.
-- Kernel, reference, launch and score: attention_common.lua.
local configs = {}
for _, causal in ipairs({ 0, 1 }) do
  configs[#configs + 1] = { name = "mha-s300" .. (causal == 1 and "-causal" or ""), B = 2, Hq = 4,
    Hkv = 4, S = 300, causal = causal }
  configs[#configs + 1] = { name = "gqa-s512" .. (causal == 1 and "-causal" or ""), B = 1, Hq = 8,
    Hkv = 2, S = 512, causal = causal }
end

return require "evaluators.cuda.attention_common" {
  name = "attention_small",
  configs = configs,
  timeout = 60,
}
