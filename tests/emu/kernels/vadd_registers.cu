// Correct, but holds 64 running sums per thread across a loop the compiler
// cannot see the end of: far more than 64 registers per thread, so a block
// of 1024 threads cannot launch (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: invalid).
// avo:param BLOCK 1024 128
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc[64];
#pragma unroll
    for (int k = 0; k < 64; k++)
        acc[k] = 0.0f;
    for (int r = 0; r < n % 7 + 1; r++)
#pragma unroll
        for (int k = 0; k < 64; k++)
            acc[k] = fmaf(acc[k], 0.5f, x[(i + k * 17 + r) % n]);
    float zero = 0.0f;
#pragma unroll
    for (int k = 0; k < 64; k++)
        zero += acc[k] * 0.0f + (acc[k] != acc[k] ? 1.0f : 0.0f); /* 0 for finite inputs */
    if (i < n)
        out[i] = x[i] + y[i] + zero;
}
