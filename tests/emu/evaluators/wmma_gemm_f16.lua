-- WMMA GEMM with __half inputs: tests/emu/evaluators/wmma_gemm.lua.
return require "tests.emu.evaluators.wmma_gemm" ("f16")
