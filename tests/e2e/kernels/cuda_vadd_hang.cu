// Planted: never returns (spins on the clock, which never goes negative).
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (clock64() >= 0)
        ;
    if (i < n)
        out[i] = x[i] + y[i];
}
