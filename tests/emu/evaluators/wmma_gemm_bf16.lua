-- WMMA GEMM with __nv_bfloat16 inputs: tests/emu/evaluators/wmma_gemm.lua.
return require "tests.emu.evaluators.wmma_gemm" ("bf16")
