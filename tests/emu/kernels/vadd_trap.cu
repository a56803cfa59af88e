// Planted: traps in its first thread.
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        __trap();
    if (i < n)
        out[i] = x[i] + y[i];
}
