// Planted: an illegal address (far outside any allocation): a sticky error.
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i + (1ll << 40) / 4] = x[i] + y[i];
}
