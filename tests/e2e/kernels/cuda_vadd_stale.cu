// Planted: computes only on its first launch and then leaves out untouched,
// hoping the previous (correct) result is still there.
// avo:param BLOCK 256
__device__ unsigned long long launches_seen;
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long total = (unsigned long long)gridDim.x * blockDim.x;
    if (atomicAdd(&launches_seen, 1ull) >= total)
        return;
    if (i < n)
        out[i] = x[i] + y[i];
}
