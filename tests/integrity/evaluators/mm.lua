-- The integrity workload seeded with the honest kernel (evaluators/mm_common.lua).
return require "tests.integrity.evaluators.mm_common" ("tests/integrity/kernels/honest.c")
