// Planted: caches its result keyed on its inputs in __device__ memory and
// skips the work for elements whose inputs it has seen, leaving the output
// it wrote last time (correct when the judge hands it the same buffers and
// inputs again, as timing once did).  Every timed launch must get inputs it
// has never seen, so it never skips; a skipped element would be left
// poisoned.  It says so on stderr the first time it skips.
// Launch: evaluator tests/e2e/evaluators/cuda_vadd.lua.
// avo:param BLOCK 256
#define CAP 4096
__device__ float seen_x[CAP], seen_y[CAP];
__device__ int seen[CAP];
__device__ unsigned long long hits;

extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (i < CAP && seen[i] && seen_x[i] == x[i] && seen_y[i] == y[i]) {
        if (atomicAdd(&hits, 1ull) == 0)
            printf("avo planted: cache hit at element %d, work skipped\n", i);
        return;
    }
    out[i] = x[i] + y[i];
    if (i < CAP) {
        seen_x[i] = x[i];
        seen_y[i] = y[i];
        seen[i] = 1;
    }
}
