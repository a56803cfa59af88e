// Planted: correct on its first launch, wrong from the second on.
// avo:param BLOCK 256
__device__ unsigned long long launches_seen;
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long total = (unsigned long long)gridDim.x * blockDim.x;
    bool first = atomicAdd(&launches_seen, 1ull) < total;
    if (i < n)
        out[i] = first ? x[i] + y[i] : x[i] - y[i];
}
