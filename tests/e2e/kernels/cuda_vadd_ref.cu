extern "C" __global__ void vadd_ref(int n, const float *x, const float *y, float *out)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = x[i] + y[i];
}
