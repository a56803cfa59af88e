// Uses inline PTX, which the emulator cannot run: NVRTC compiles it, the
// emulated compile must fail with the host toolchain's message after NVRTC's
// log.
// avo:param BLOCK 256
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[i] + y[i] + (lane > 31 ? 1.0f : 0.0f);
}
