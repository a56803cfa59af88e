// Planted: writes one block's worth past its dynamic shared memory.
// Launch: evaluator vadd_shared.lua (dynamic shared memory 4 * BLOCK bytes).
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    extern __shared__ float stage[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x + blockDim.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = stage[threadIdx.x + blockDim.x] + y[i];
}
