/*
 * Tiled GEMM seed kernel: C[M,N] = A[M,K] * B[K,N], row-major, C overwritten.
 * Inputs are IN_T (float, __nv_bfloat16 or __half, chosen by the evaluator
 * with -DIN_T=...), products are summed in fp32, C is fp32.
 *
 * One CTA computes a BM x BN tile of C with (BN/TN) x (BM/TM) threads; each
 * thread keeps a TM x TN register tile.  The CTA walks K in steps of BK,
 * staging a BK x BM slice of A (transposed) and a BK x BN slice of B in shared
 * memory as fp32.  Every size works: loads and stores are bounds-checked.
 *
 * Launch (evaluators/cuda/gemm_*.lua): grid = (ceil(N/BN), ceil(M/BM)),
 * block = (BN/TN, BM/TM).  Combinations with more than 1024 threads per
 * block are rejected by the launch check (status invalid).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// avo:param BM 32 64 128
// avo:param BN 32 64 128
// avo:param BK 8 16 32
// avo:param TM 1 2 4 8
// avo:param TN 1 2 4 8
// avo:param UNROLL 1 2 4

#ifndef IN_T
#define IN_T float
#endif
#ifndef BM
#define BM 32
#endif
#ifndef BN
#define BN 32
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 1
#endif
#ifndef TN
#define TN 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

extern "C" __global__ void gemm(int M, int N, int K, const IN_T *__restrict__ A,
                                const IN_T *__restrict__ B, float *__restrict__ C)
{
    __shared__ float As[BK][BM]; /* As[k][m] = A[row0 + m, k0 + k] */
    __shared__ float Bs[BK][BN]; /* Bs[k][n] = B[k0 + k, col0 + n] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * blockDim.x + tx, nthreads = blockDim.x * blockDim.y;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BK * BM; e += nthreads) {
            int m = e / BK, k = e % BK; /* consecutive threads walk k: A is row-major */
            int r = row0 + m, c = k0 + k;
            As[k][m] = (r < M && c < K) ? to_float(A[(size_t)r * K + c]) : 0.0f;
        }
        for (int e = tid; e < BK * BN; e += nthreads) {
            int k = e / BN, n = e % BN;
            int r = k0 + k, c = col0 + n;
            Bs[k][n] = (r < K && c < N) ? to_float(B[(size_t)r * N + c]) : 0.0f;
        }
        __syncthreads();
#pragma unroll UNROLL
        for (int k = 0; k < BK; k++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
                a[i] = As[k][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; j++)
                b[j] = Bs[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int r = row0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            int c = col0 + tx * TN + j;
            if (r < M && c < N)
                C[(size_t)r * N + c] = acc[i][j];
        }
    }
}
