-- A broken evaluator is refused with a message naming the field.
local avo = require "avo"

local function good()
  return {
    name = "t", description = "d", backend = "cpu", kernel = "kernels/cpu/sgemm.c",
    entry = "sgemm", reference = { source = "kernels/cpu/sgemm_ref.c", entry = "sgemm_ref" },
    args = {
      { name = "M", kind = "scalar", type = "i32" },
      { name = "N", kind = "scalar", type = "i32" },
      { name = "K", kind = "scalar", type = "i32" },
      { name = "A", kind = "in", type = "f32", length = function(c) return c.M * c.K end },
      { name = "B", kind = "in", type = "f32", length = function(c) return c.K * c.N end },
      { name = "C", kind = "out", type = "f32", length = function(c) return c.M * c.N end },
    },
    configs = { { name = "s", M = 4, N = 4, K = 4 } },
    tolerance = { atol = 1e-4, rtol = 1e-4 },
    flops = function(c) return 2 * c.M * c.N * c.K end,
  }
end

assert(avo.evaluator(good()).name == "t", "the good evaluator loads")

local function expect(mutate, pattern)
  local ev = good()
  mutate(ev)
  local ok, err = pcall(avo.evaluator, ev)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):find(pattern, 1, true),
    ("error %q does not mention %q"):format(tostring(err), pattern))
end

expect(function(e) e.name = nil end, "'name' is missing")
expect(function(e) e.score_of = function() return 1 end end,
  "'score_of' has the name of an evaluator method (ev:score_of); rename it")
expect(function(e) e.seed = 7 end, "'seed' has the name of an evaluator method")
expect(function(e) e.description = nil end, "'description' is missing")
expect(function(e) e.backend = "fpga" end, "'backend'")
expect(function(e) e.kernel = nil end, "'kernel' is missing")
expect(function(e) e.kernel = "kernels/cpu/nope.c" end, "'kernel' names 'kernels/cpu/nope.c'")
expect(function(e) e.entry = nil end, "'entry' is missing")
expect(function(e) e.reference = nil end, "'reference' is missing")
expect(function(e) e.reference.entry = nil end, "'reference.entry' is missing")
expect(function(e) e.args = nil end, "'args' is missing")
expect(function(e) e.args[4].length = nil end, "'args[4].length' is missing")
expect(function(e) e.args[2].kind = "input" end, "'args[2].kind'")
expect(function(e) e.args[2].type = "f16" end, "'args[2].type'")
expect(function(e) e.args[6].name = "A" end, "'args[6].name' repeats 'A'")
expect(function(e) e.configs = {} end, "'configs' must list at least one config")
expect(function(e) e.configs[1].name = nil end, "'configs[1].name' is missing")
expect(function(e) e.configs[1].K = nil end, "'args[3]' has no value for configs[1]")
-- configs[i].knobs: the knobs a config's time depends on, each named.
assert(avo.evaluator((function() local e = good(); e.configs[1].knobs = { "B*", "UNROLL" }
  return e end)()).configs[1].knobs[2] == "UNROLL", "knob names and prefixes are accepted")
expect(function(e) e.configs[1].knobs = "NOPE_*" end,
  "'configs[1].knobs' names \"NOPE_*\", which matches none of the kernel's knobs (ORDER, BM,")
expect(function(e) e.configs[1].knobs = { "BM", "BX" } end, "names \"BX\", which matches none")
expect(function(e) e.configs[1].knobs = "B*M" end,
  "'configs[1].knobs' has \"B*M\" at 1: a knob name or a prefix ending in '*'")
expect(function(e) e.configs[1].knobs = {} end, "'configs[1].knobs' must be a knob name")
expect(function(e) e.configs[1].knobs = 3 end, "'configs[1].knobs' must be a knob name")
expect(function(e) e.tolerance = nil end, "'tolerance' is missing")
expect(function(e) e.tolerance.rtol = "x" end, "'tolerance.rtol' must be a number")
expect(function(e) e.flops = nil end, "'flops' or 'bytes' is required")
expect(function(e) e.args[4].length = function() return 0 end end, "'args[4].length' must return a positive integer")
expect(function(e) e.args[4].length = function() error("oops") end end, "oops")

-- Values that would make every candidate fail, or reach the job as JSON
-- null and be replaced by a default, are refused at load with the value.
expect(function(e) e.tolerance.atol = -1 end, "'tolerance.atol' must be a finite number >= 0, got -1")
expect(function(e) e.tolerance.rtol = 0 / 0 end, "'tolerance.rtol' must be a finite number >= 0, got ")
expect(function(e) e.tolerance.atol = math.huge end, "'tolerance.atol' must be a finite number >= 0, got inf")
expect(function(e) e.tolerance.atol = "1e-3" end, "'tolerance.atol' must be a number, got string \"1e-3\"")
expect(function(e) e.configs[1].M = 3000000000 end,
  "'args[1]' is 3000000000 for configs[1] (s), out of range for i32")
expect(function(e) e.configs[1].N = 0 / 0 end, "'args[2]' is ")
expect(function(e) e.configs[1].K = math.huge end, "'args[3]' is inf for configs[1] (s)")
expect(function(e) e.configs[1].K = "128" end,
  "'args[3]' is string \"128\" for configs[1] (s): a scalar must be a number")
expect(function(e) e.configs[1].M, e.configs[1].N, e.configs[1].K = 40000, 40000, 4 end,
  "'args' needs 5.962 GiB of buffers for configs[1] (s), over the 4096 MiB")
expect(function(e) e.args[4].length = function() return 2.5 end end,
  "'args[4].length' must return a positive integer for configs[1], got 2.5")
expect(function(e) e.flops = function() return 0 / 0 end end, "'flops' must return a finite number >= 0")
expect(function(e) e.timeout = -5 end, "'timeout' must be a finite number > 0, got -5")
expect(function(e) e.compile_timeout = 0 / 0 end, "'compile_timeout' must be a finite number > 0")
expect(function(e) e.timing = { max_seconds = math.huge } end, "'timing.max_seconds' must be a finite")
expect(function(e) e.timing = { min_samples = "3" } end, "'timing.min_samples' must be a number")
do -- each error names the evaluator (a file's path when loaded from one)
  local ev = good()
  ev.tolerance.atol = -1
  local ok, err = pcall(avo.evaluator, ev)
  assert(not ok and tostring(err):find(": evaluator field 'tolerance.atol'", 1, true), tostring(err))
end

-- Baselines: names checked against the registry (eval/baseline.h) and the
-- backend; kernel baselines checked field by field.
expect(function(e) e.baselines = "cublas" end, "'baselines' must be an array")
expect(function(e) e.baselines = { "cublass" } end,
  "'baselines[1]' names an unknown baseline 'cublass' (known: cublas (cuda), cudnn_sdpa (cuda)")
expect(function(e) e.baselines = { "cublas" } end,
  "'baselines[1]' 'cublas' (cuBLASLt) serves cuda evaluators, and this evaluator's backend is 'cpu'")
expect(function(e) e.baselines = { 7 } end, "'baselines[1]' must be a baseline's name")
expect(function(e) e.baselines = { { kernel = "kernels/cpu/sgemm.c" } } end,
  "'baselines[1].name' is missing")
expect(function(e) e.baselines = { { name = "naive" } } end,
  "'baselines[1]' needs exactly one of 'kernel' (a file) or 'source' (the text)")
expect(function(e) e.baselines = { { name = "naive", kernel = "k.c", source = "x" } } end,
  "needs exactly one of 'kernel'")
expect(function(e) e.baselines = { { name = "naive", kernel = "kernels/cpu/none.c" } } end,
  "'baselines[1].kernel' names 'kernels/cpu/none.c', which cannot be read")
expect(function(e) e.baselines = { { name = "naive", kernel = "kernels/cpu/sgemm.c", knob = {} } } end,
  "'baselines[1]' has an unknown field 'knob'")
expect(function(e) e.baselines = { { name = "naive", kernel = "kernels/cpu/sgemm.c",
  grid = 1 } } end, "'baselines[1].grid' applies to CUDA evaluators only")
expect(function(e) e.baselines = { { name = "naive", kernel = "kernels/cpu/sgemm.c",
  cflags = { 3 } } } end, "'baselines[1].cflags[1]' must be a string")
expect(function(e) e.baselines = { { name = "naive", kernel = "kernels/cpu/sgemm.c",
  name_expressions = { "k<1>" } } } end,
  "'baselines[1].name_expressions' applies to CUDA evaluators only")
expect(function(e) e.baselines = { { name = "cublas", source = "x" } } end,
  "'cublas' is a vendor baseline's name")
expect(function(e) e.baselines = { { name = "a b", source = "x" } } end,
  "'baselines[1].name' must be letters")
expect(function(e) e.baselines = { { name = "n", source = "x" }, { name = "n", source = "y" } } end,
  "'baselines[2]' repeats the name 'n'")
expect(function(e) e.baselines = { { name = "n", source = "// avo:param X\n" } } end,
  "'baselines[1]' has a bad knob declaration")
do
  local e = good()
  e.baselines = { { name = "naive", kernel = "kernels/cpu/sgemm.c", knobs = { ORDER = 1 } } }
  local ev = avo.evaluator(e)
  local b = ev.baseline_list[1]
  assert(b.kind == "kernel" and b.library == "kernel" and b.path:find("kernels/cpu/sgemm.c", 1, true))
  assert(b.knobs.ORDER == 1 and b.entry == "sgemm" and #b.version == 40, b.version)
  local job = ev:baseline_job(b, 5, "/tmp")
  assert(job.source == b.source and job.knobs.ORDER == 1 and job.entry == "sgemm")
end

-- Library baselines (a C library function behind a call adapter, CPU only).
local function lib(extra)
  local b = { name = "blas", kernel = "kernels/cpu/sgemm_openblas.c", library = "libopenblas.so.0",
              symbol = "cblas_sgemm" }
  for k, v in pairs(extra or {}) do b[k] = v end
  return b
end
expect(function(e) e.baselines = { lib{ symbol = false } } end,
  "'baselines[1].symbol' must be a string")
expect(function(e)
  local b = lib()
  b.library = nil
  e.baselines = { b }
end, "'baselines[1].library' is missing")
expect(function(e) e.baselines = { lib{ library = "openblas" } } end,
  "'baselines[1].library' must be a shared library's file name (libx.so.N) or an absolute path")
expect(function(e) e.baselines = { lib{ symbol = "cblas sgemm" } } end,
  "'baselines[1].symbol' must be a C function's name")
expect(function(e) e.baselines = { lib{ describe = { version = 3 } } } end,
  "'baselines[1].describe.version' must name a function of the library")
expect(function(e) e.baselines = { lib{ threads = 0 } } end,
  "'baselines[1].threads' must be an integer from 1 to 256")
expect(function(e) e.baselines = { lib{ thread_count = 1 } } end,
  "'baselines[1].thread_count' must be a string")
expect(function(e)
  e.backend, e.grid, e.block = "cuda", 1, 1
  e.reference.grid, e.reference.block = 1, 1
  e.baselines = { lib() }
end, "library baselines are for CPU evaluators")
do
  local e = good()
  e.baselines = { lib{ threads = 2, describe = { version = "openblas_get_config" },
                       install = "apt-get install libopenblas0" } }
  local ev = avo.evaluator(e)
  local b = ev.baseline_list[1]
  assert(b.kind == "library" and b.library == "libopenblas.so.0" and b.threads == 2)
  local job = ev:baseline_job(b, 5, "/tmp")
  assert(job.library.file == "libopenblas.so.0" and job.library.symbol == "cblas_sgemm")
  assert(job.library.describe.version == "openblas_get_config" and job.threads == 2)
  assert(job.library.install == "apt-get install libopenblas0")
  -- The engine's own cflags stay the evaluator's: the worker links the adapter alone.
  assert(#job.cflags == 0, "the library is not in the job's cflags (the reference would link it)")
end
do
  local e = good()
  e.backend = "test"
  e.test_score = function() return 1 end
  e.baselines = { { name = "n", source = "x" } }
  local ok, err = pcall(avo.evaluator, e)
  assert(not ok and err:find("'baselines' is not supported by the test backend", 1, true), err)
end

local ok, err = pcall(avo.evaluator, "no/such/evaluator")
assert(not ok and err:find("not found"), err)
print("test_evaluator_errors: ok")

-- CUDA evaluators: launch geometry, headers, element types, tolerances.
local function cuda(mutate, pattern)
  expect(function(e)
    e.backend, e.kernel, e.entry = "cuda", "kernels/cuda/gemm.cu", "gemm"
    e.reference = { source = "kernels/cuda/gemm_ref.cu", entry = "gemm_ref", grid = 1, block = 256 }
    e.grid = function(c, k) return 1 end
    e.block = 256
    mutate(e)
  end, pattern)
end
cuda(function(e) e.grid = nil end, "'grid' must be a function(config, knobs)")
cuda(function(e) e.block = "wide" end, "'block' must be a function(config, knobs)")
cuda(function(e) e.reference.block = nil end, "'reference.block'")
cuda(function(e) e.args[4].type = "f8" end, "'args[4].type' must be f32, f64, i32, i64, f16 or bf16")
cuda(function(e) e.headers = { ["../x.h"] = "int x;" } end, "relative header name without '..'")
cuda(function(e) e.headers = { ["x.h"] = 42 } end, "must be the header's text or a file name")
cuda(function(e) e.tolerance.bf17 = { atol = 1 } end, "'tolerance.bf17' is not an element type")
cuda(function(e) e.tolerance.bf16 = { atol = 0 / 0 } end, "'tolerance.bf16.atol' must be a finite number >= 0")
cuda(function(e) e.tolerance.f16 = { rtol = -1 } end, "'tolerance.f16.rtol' must be a finite number >= 0, got -1")
cuda(function(e) e.nvrtc_options = { 7 } end, "'nvrtc_options[1]' must be a string")
cuda(function(e) e.reference.grid = nil end, "'reference.grid'")
-- bf16 is for CUDA only
expect(function(e) e.args[4].type = "bf16" end, "'args[4].type' must be f32, f64, i32 or i64")
-- a good CUDA evaluator builds jobs with concrete launch numbers
local ev = avo.evaluator("cuda/gemm_bf16")
local job = ev:job(ev:seed(), 1, "/tmp")
assert(job.backend == "cuda" and job.configs[1].launch.block[1] == 32, "launch from knobs")
assert(job.configs[1].reference_launch.block[1] == 16, "reference launch")
assert(job.nvrtc_options[1] == "-DIN_T=__nv_bfloat16", "nvrtc options")
local bad = ev:job({ source = "x", knobs = { BN = 0 } }, 1, "/tmp")
assert(bad.configs[1].launch.error, "a failing grid function becomes a launch error")
-- CUDA check configs get their launch geometry from the same functions,
-- called with the check config's own table.
do
  local e = good()
  e.backend, e.kernel, e.entry = "cuda", "kernels/cuda/gemm.cu", "gemm"
  e.reference = { source = "kernels/cuda/gemm_ref.cu", entry = "gemm_ref",
                  grid = function(c) return c.N end, block = 16 }
  e.grid = function(c, k) return c.M end
  e.block = 256
  e.check_configs = { { name = "odd", M = 3, N = 5, K = 7 } }
  local cev = avo.evaluator(e)
  local cjob = cev:job(cev:seed(), 1, "/tmp")
  local chk = cjob.check_configs[1]
  assert(chk and chk.name == "odd" and chk.scalars.M == 3, "check config in the CUDA job")
  assert(chk.launch.grid == 3 and chk.launch.block == 256, "check config launch")
  assert(chk.reference_launch.grid == 5, "check config reference launch")
  assert(cjob.configs[1].launch.grid == 4, "timed config launch unchanged")
end
