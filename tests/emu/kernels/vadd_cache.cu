// Planted: caches its inputs in __device__ memory, element by element, to
// skip the work when they repeat (the output of the last launch is still in
// the buffer when the judge hands it the same buffers and inputs again, as
// timing once did).  So that a test can see a repeat, a hit executes
// __trap() (crashed) instead of skipping: every launch the judge makes, timed
// or not, must get inputs that no earlier launch saw, so it never traps.
// (Kernel printf is buffered in the worker's stdout, so it cannot report.)
// Launch: evaluator tests/e2e/evaluators/cuda_vadd.lua.
// avo:param BLOCK 256
#define CAP 4096
__device__ float seen_x[CAP], seen_y[CAP];
__device__ int seen[CAP];

extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (i < CAP && seen[i] && seen_x[i] == x[i] && seen_y[i] == y[i])
        __trap(); /* a cache hit: the work would be skipped here */
    out[i] = x[i] + y[i];
    if (i < CAP) {
        seen_x[i] = x[i];
        seen_y[i] = y[i];
        seen[i] = 1;
    }
}
