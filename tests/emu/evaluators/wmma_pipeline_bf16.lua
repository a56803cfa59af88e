-- tests/emu/evaluators/wmma_pipeline.lua with __nv_bfloat16 inputs.
return require "tests.emu.evaluators.wmma_pipeline" ("bf16")
