// Planted: lane 0 of each warp waits at __syncthreads while the other lanes
// wait at a full-warp shuffle: no barrier can ever complete.
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    if (threadIdx.x % 32 == 0)
        __syncthreads();
    else
        v = __shfl_xor_sync(0xffffffffu, v, 1);
    if (i < n)
        out[i] = v + y[i];
}
