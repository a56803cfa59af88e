/*
 * Trusted GEMM reference: one thread per output element, products of the
 * IN_T inputs (converted exactly to fp32) summed in fp32 in k order.
 * Launch: grid = (ceil(N/16), ceil(M/16)), block = (16, 16).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef IN_T
#define IN_T float
#endif

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

extern "C" __global__ void gemm_ref(int M, int N, int K, const IN_T *A, const IN_T *B, float *C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= M || c >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum = fmaf(to_float(A[(size_t)r * K + k]), to_float(B[(size_t)k * N + c]), sum);
    C[(size_t)r * N + c] = sum;
}
