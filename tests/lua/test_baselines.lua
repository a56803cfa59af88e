-- avo.baselines: how a run's best is compared with its baselines, and how
-- a baseline result becomes a row (verdict checked like a candidate's).
local avo = require "avo"
local baselines = require "avo.baselines"

-- The strongest comparable row; a failed, wrong or partial one never counts.
local rows = {
  { name = "cublas", status = "unavailable", reason = "libcublasLt.so.13 not found" },
  { name = "fast_but_wrong", status = "wrong", reason = "config a: max error 1", score = 99 },
  { name = "partial", status = "ok", reason = "unavailable for b" },
  { name = "k1", status = "ok", score = 4 },
  { name = "k2", status = "ok", score = 8 },
}
assert(baselines.strongest(rows).name == "k2")
local best = { score = 2 } -- of unknown evaluator, as the rows
assert(baselines.status_text({ baseline_rows = rows }, best) == "0.25x k2")
assert(baselines.status_text({ baseline_rows = rows }) == nil, "no best: nothing to say")
-- Nothing comparable: each baseline by its status, never a ratio.
local bad = { rows[1], rows[2], rows[3] }
assert(baselines.strongest(bad) == nil)
local text = baselines.status_text({ baseline_rows = bad }, best)
assert(text == "cublas unavailable, fast_but_wrong wrong, partial partial", text)
assert(baselines.status_text({ baseline_rows = {}, baselines_running = 1 }, best) == "baselines running")
assert(baselines.status_text({ baseline_rows = {} }, best) == nil)

-- Only the best's own evaluator's baselines (issue 21): a GEMM best is
-- never shown against an attention library, however strong.
local mixed = {
  { name = "cudnn_sdpa", status = "ok", score = 1000, evaluator = "attention" },
  { name = "cublas", status = "ok", score = 10, evaluator = "gemm" },
}
assert(baselines.status_text({ baseline_rows = mixed }, { score = 5, evaluator = "gemm" })
  == "0.50x cublas")
assert(baselines.status_text({ baseline_rows = mixed }, { score = 5, evaluator = "other" }) == nil,
  "no baseline of its own: nothing compared")
assert(baselines.strongest(mixed, "gemm").name == "cublas")
assert(#baselines.of(mixed, "attention") == 1 and #baselines.of(mixed, nil) == 0)
-- Per config, where both have a throughput; a config the baseline lacks says so.
local per = baselines.config_text(
  { configs = { { name = "a", gflops = 2 }, { name = "b", gflops = 3 }, { name = "c", gflops = 1 } } },
  { result = { configs = { { name = "a", correct = true, gflops = 4 },
                           { name = "b", correct = false, unavailable = "no algo" } } } })
assert(per == "a 0.50x, b unavailable, c not measured", per)
assert(baselines.describe(rows[1], "GFLOP/s") == "cublas: unavailable (libcublasLt.so.13 not found)")
assert(baselines.describe(rows[4], "GFLOP/s") == "k1: 4 GFLOP/s")

-- Rows from results, on an evaluator with two configs.
local ev = avo.evaluator{
  name = "t", description = "d", backend = "cpu", kernel = "kernels/cpu/sgemm.c",
  entry = "sgemm", reference = { source = "kernels/cpu/sgemm_ref.c", entry = "sgemm_ref" },
  args = {
    { name = "M", kind = "scalar", type = "i32" }, { name = "N", kind = "scalar", type = "i32" },
    { name = "K", kind = "scalar", type = "i32" },
    { name = "A", kind = "in", type = "f32", length = function(c) return c.M * c.K end },
    { name = "B", kind = "in", type = "f32", length = function(c) return c.K * c.N end },
    { name = "C", kind = "out", type = "f32", length = function(c) return c.M * c.N end },
  },
  configs = { { name = "a", M = 4, N = 4, K = 4 }, { name = "b", M = 8, N = 8, K = 8 } },
  tolerance = { atol = 1e-4, rtol = 1e-4 },
  flops = function(c) return 2 * c.M * c.N * c.K end,
  baselines = { { name = "naive", kernel = "kernels/cpu/sgemm.c" } },
}
local b = ev.baseline_list[1]
local job = { backend = "cpu" }
local ok = baselines.row(ev, b, job, { status = "ok", configs = {
  { name = "a", correct = true, gflops = 2 }, { name = "b", correct = true, gflops = 8 } } })
assert(ok.status == "ok" and math.abs(ok.score - 4) < 1e-9 and ok.device == "cpu", ok.score)
assert(ok.library == "kernel" and ok.version == b.version and ok.path == b.path)
assert(ok.evaluator == "t", "a baseline row records its evaluator")
local wrong = baselines.row(ev, b, job, { status = "ok", configs = {
  { name = "a", correct = false, reason = "max error 3" }, { name = "b", correct = true, gflops = 8 } } })
assert(wrong.status == "wrong" and wrong.score == nil)
local partial = baselines.row(ev, b, job, { status = "ok", configs = {
  { name = "a", correct = false, unavailable = "no kernel for K=4" },
  { name = "b", correct = true, gflops = 8 } } })
assert(partial.status == "ok" and partial.score == nil, partial.status)
assert(partial.reason == "unavailable for a", partial.reason)
local failed = baselines.row(ev, b, job, { status = "unavailable", reason = "libcudnn.so.9 not found",
  configs = {}, baseline = { name = "x", library = "cuDNN", version = "9.1", path = "/l.so" } })
assert(failed.status == "unavailable" and failed.score == nil and failed.library == "cuDNN"
  and failed.version == "9.1" and failed.reason == "libcudnn.so.9 not found")
-- The device of a CUDA result: pinned, or the worker's label, or unknown.
local cuda_ev = setmetatable({ backend = "cuda" }, { __index = ev })
assert(baselines.row(cuda_ev, b, { device = 2 }, { status = "error", reason = "x" }).device == "cuda:2")
assert(baselines.row(cuda_ev, b, {}, { status = "error", reason = "x", worker = { device = 1 } }).device
  == "cuda:1")
assert(baselines.row(cuda_ev, b, {}, { status = "error", reason = "x" }).device == "cuda")
-- The vendor baseline job (docs/protocol.md "Baseline jobs"): a CUDA job
-- with "baseline" instead of source, entry and knobs, configs without launch.
local spec = dofile("tests/e2e/evaluators/cuda_vadd.lua")
spec.baselines = { "cublas", { name = "again", kernel = spec.kernel, block = 128 } }
local cev = avo.evaluator(spec)
local vjob = cev:baseline_job(cev.baseline_list[1], 7, "/tmp", 1)
assert(vjob.baseline == "cublas" and vjob.backend == "cuda" and vjob.device == 1)
assert(vjob.source == nil and vjob.entry == nil and vjob.knobs == nil)
assert(vjob.name_expressions == nil and vjob.reference.source)
for _, c in ipairs(vjob.configs) do
  assert(c.launch == nil and c.reference_launch and c.reference_launch.grid, "launch left in a config")
end
-- A kernel baseline's job is a candidate's, with its own block.
local kjob = cev:baseline_job(cev.baseline_list[2], 7, "/tmp")
assert(kjob.baseline == nil and kjob.source == cev.baseline_list[2].source and kjob.device == nil)
assert(kjob.configs[1].launch.block == 128, "the kernel baseline's block")
spec = dofile("tests/e2e/evaluators/cuda_vadd.lua")
spec.baselines = { { name = "k", kernel = spec.kernel, cflags = { "-O2" } } }
local okc, errc = pcall(avo.evaluator, spec)
assert(not okc and errc:find("'baselines[1].cflags' applies to CPU evaluators", 1, true), errc)
print("test_baselines: ok")
