// out = x + y on the GPU: the small workload of the CUDA tests.
// avo:param BLOCK 256 128 512
#ifndef BLOCK
#define BLOCK 256
#endif
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[i] + y[i];
}
