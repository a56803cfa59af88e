-- The integrity workload seeded with kernels/ga_cheat.c, whose CHEAT knob
-- enables a timing cheat (run.sh, GA test).
return require "tests.integrity.evaluators.mm_common" ("tests/integrity/kernels/ga_cheat.c")
