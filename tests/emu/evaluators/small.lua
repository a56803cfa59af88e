-- A GPU evaluator of evaluators/cuda with configs small enough for the CPU
-- emulator (tests/emu) and a short timing budget; everything else — kernel,
-- reference, launch, tolerances, score — is the real evaluator's.
--
--   return require "tests.emu.evaluators.small" ("gemm_f32", { configs... })
return function(name, configs)
  local ev = {}
  for k, v in pairs(require("evaluators.cuda." .. name)) do ev[k] = v end
  ev.configs = configs
  ev.timing = { min_samples = 2, max_samples = 4, max_seconds = 0.5 }
  return ev
end
