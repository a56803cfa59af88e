-- cpu/sgemm_fast compiled for a narrower ISA than the host's, so its AVX2
-- and portable micro-kernels are judged on an AVX-512 machine too:
-- AVO_TEST_ISA=avx2 adds -mno-avx512f (8-lane vectors, _mm256_broadcast_ss),
-- generic adds -mno-avx (4-lane vectors, plain broadcasts). Only the odd
-- config (every kind of edge tile) and the check sizes, to stay cheap.
local base = require "evaluators.cpu.sgemm_fast"
local isa = os.getenv("AVO_TEST_ISA") or "avx2"
local flags = { avx2 = { "-mno-avx512f" }, generic = { "-mno-avx" } }
local e = {}
for k, v in pairs(base) do e[k] = v end
e.name = "sgemm_fast_" .. isa
e.cflags = assert(flags[isa], "AVO_TEST_ISA must be avx2 or generic")
e.configs = { base.configs[3] }
return e
