-- tests/emu/evaluators/wmma_pipeline.lua with __half inputs.
return require "tests.emu.evaluators.wmma_pipeline" ("f16")
