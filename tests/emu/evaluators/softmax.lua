-- cuda/softmax for the CPU emulator: rows that allow float4, rows that do not,
-- and a long row.
return require "tests.emu.evaluators.small" ("softmax", {
  { name = "16x1024", rows = 16, cols = 1024 },
  { name = "16x1000", rows = 16, cols = 1000 },
  { name = "4x8192", rows = 4, cols = 8192 },
})
