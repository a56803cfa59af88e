// Correct, and prints from its first 256 threads on every launch: what a
// kernel prints must never reach the engine's channel.
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 256)
        printf("avo test kernel: thread %d of vadd says hello\n", i);
    if (i < n)
        out[i] = x[i] + y[i];
}
