// cuda_vadd for the mock driver tests: MODE only changes the block size,
// which the mock (tests/mock/libcuda_mock.c) reads as the behaviour to fake.
// avo:param MODE 0 1 2 3 4 5 6 7 8 9 10 11 12
extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[i] + y[i];
}
