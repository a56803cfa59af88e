// Planted: writes a few elements past the end of out (no fault: inside the
// allocation's slack, caught by the guard canaries).
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[i] + y[i];
    if (i < 4)
        out[n + i] = 0.0f;
}
