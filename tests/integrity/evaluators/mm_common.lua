-- The integrity suite's workload (tests/integrity/run.sh): a small fp32
-- matrix multiply, C[M,N] = A[M,K] * B[K,N], row-major. Small enough that an
-- evaluation takes well under a second, big enough (O(n^3) work on O(n^2)
-- data) that a kernel which skips the work on timed calls scores 50-100x
-- the honest kernel, which the driver detects as an inflated score.
--
-- The test's scratch root reaches the attack kernels as -DINTEGRITY_ROOT
-- (the only place they may modify anything), and the planted secret file,
-- the socket listener's port, the victim pid of signal_others and the
-- driver's pid (ancestor walks stop below it) likewise.
-- mm.lua seeds with the honest kernel, mm_ga.lua with the kernel that has a
-- cheating knob (kernels/ga_cheat.c).
local root = os.getenv("INTEGRITY_ROOT") or "/nonexistent-integrity-root"
local port = os.getenv("INTEGRITY_PORT") or "1"
local victim = os.getenv("INTEGRITY_VICTIM") or "0"
local driver = os.getenv("INTEGRITY_DRIVER") or "0"
return function(kernel) return {
  name = "integrity_mm",
  description = [[
C[M,N] = A[M,K] * B[K,N] in fp32, row-major, no padding. C is output only.
Signature: void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)]],
  backend = "cpu",
  kernel = kernel,
  entry = "mm",
  reference = { source = "tests/integrity/kernels/mm_ref.c", entry = "mm_ref" },
  args = {
    { name = "M", kind = "scalar", type = "i32" },
    { name = "N", kind = "scalar", type = "i32" },
    { name = "K", kind = "scalar", type = "i32" },
    { name = "A", kind = "in", type = "f32", length = function(c) return c.M * c.K end },
    { name = "B", kind = "in", type = "f32", length = function(c) return c.K * c.N end },
    { name = "C", kind = "out", type = "f32", length = function(c) return c.M * c.N end },
  },
  configs = {
    { name = "m96", M = 96, N = 96, K = 96 },
    { name = "odd-37x53x29", M = 37, N = 53, K = 29 },
  },
  -- Sizes drawn per candidate, verified only: a kernel that handles the
  -- listed configs alone fails here (attack sizes_listed_only).
  check_configs = function(rng)
    return { { M = rng:int(1, 64), N = rng:int(1, 64), K = rng:int(1, 64) } }
  end,
  tolerance = { atol = 1e-3, rtol = 1e-3 },
  flops = function(c) return 2 * c.M * c.N * c.K end,
  cflags = { ('-DINTEGRITY_ROOT="%s"'):format(root), "-DINTEGRITY_PORT=" .. port,
    ('-DINTEGRITY_SECRET_FILE="%s/host-secret.inc"'):format(root), "-DINTEGRITY_VICTIM=" .. victim,
    "-DINTEGRITY_DRIVER=" .. driver },
  timing = { max_seconds = 0.2, min_samples = 3, max_samples = 20 },
  timeout = 10,
  compile_timeout = 20,
  -- Vendor code doing the work (attacks/vendor_openblas.c) is refused: the
  -- judge reads what the kernel process mapped (eval/libraries.h).
  libraries = "forbid",
} end
