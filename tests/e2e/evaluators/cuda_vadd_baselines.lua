-- cuda_vadd_mock with baselines (tests/e2e/baselines_cuda.sh): cublas (a
-- vendor baseline; this evaluator's arguments are not a GEMM's, so a worker
-- that runs it must refuse it: it is never measured here) and the mock's
-- correct kernel as a kernel baseline.
local dir = debug.getinfo(1, "S").source:match("^@(.*)/") or "."
local ev = dofile(dir .. "/cuda_vadd_mock.lua")
ev.name = "cuda_vadd_baselines"
ev.baselines = {
  "cublas",
  { name = "mock_vadd", kernel = "tests/e2e/kernels/cuda_vadd_mock.cu", knobs = { MODE = 0 } },
}
return ev
