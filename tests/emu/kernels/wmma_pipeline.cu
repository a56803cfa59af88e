// A seed-shaped tensor-core GEMM for the emulator's tests (tests/emu/wmma.sh):
// C = A * B with IN_T (__half or __nv_bfloat16) inputs, float accumulators,
// 64x64 tiles of C on four warps (2x2, each 32x32 as 2x2 m16n16k16
// fragments), A and B slices of 32 along K copied into padded shared-memory
// stages with cp.async, STAGES deep.  Sizes: M and N multiples of 64, K of
// 32.  PLANT 1 waits for one stage too few (computes on a stage still in
// flight).  Evaluator: tests/emu/evaluators/wmma_pipeline.lua (dynamic
// shared memory: STAGES * 9728 bytes).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

using namespace nvcuda;

// avo:param STAGES 2 3 4
// avo:param PLANT 0 1

#ifndef IN_T
#define IN_T __half
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef PLANT
#define PLANT 0
#endif

#define BM 64
#define BN 64
#define BK 32
#define LDA (BK + 8) // halves: 80-byte rows
#define LDB (BN + 8) // 144-byte rows
#define STAGE_ELEMS (BM * LDA + BK * LDB)

__device__ void load_stage(int N, int K, const IN_T *A, const IN_T *B, IN_T *stage, int kt)
{
    IN_T *sa = stage, *sb = stage + BM * LDA;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN, k0 = kt * BK;
    for (int c = threadIdx.x; c < BM * BK / 8; c += blockDim.x) { // 16-byte chunks
        int r = c / (BK / 8), kc = c % (BK / 8) * 8;
        __pipeline_memcpy_async(sa + r * LDA + kc, A + (size_t)(row0 + r) * K + k0 + kc, 16);
    }
    for (int c = threadIdx.x; c < BK * BN / 8; c += blockDim.x) {
        int k = c / (BN / 8), nc = c % (BN / 8) * 8;
        __pipeline_memcpy_async(sb + k * LDB + nc, B + (size_t)(k0 + k) * N + col0 + nc, 16);
    }
}

extern "C" __global__ void gemm(int M, int N, int K, const IN_T *A, const IN_T *B, float *C)
{
    extern __shared__ __align__(128) unsigned char smem[];
    IN_T *stages = (IN_T *)smem;
    const int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2, KT = K / BK;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT)
            load_stage(N, K, A, B, stages + s * STAGE_ELEMS, s);
        __pipeline_commit();
    }
    for (int kt = 0; kt < KT; kt++) {
        __pipeline_wait_prior(PLANT ? STAGES - 1 : STAGES - 2);
        __syncthreads();
        const IN_T *sa = stages + (kt % STAGES) * STAGE_ELEMS, *sb = sa + BM * LDA;
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, IN_T, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, IN_T, wmma::row_major> b[2];
            for (int i = 0; i < 2; i++)
                wmma::load_matrix_sync(a[i], sa + (wr * 32 + i * 16) * LDA + kk, LDA);
            for (int j = 0; j < 2; j++)
                wmma::load_matrix_sync(b[j], sb + kk * LDB + wc * 32 + j * 16, LDB);
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        int next = kt + STAGES - 1;
        if (next < KT)
            load_stage(N, K, A, B, stages + (next % STAGES) * STAGE_ELEMS, next);
        __pipeline_commit();
    }
    const int row0 = blockIdx.y * BM + wr * 32, col0 = blockIdx.x * BN + wc * 32;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(C + (size_t)(row0 + i * 16) * N + col0 + j * 16, acc[i][j], N,
                                    wmma::mem_row_major);
}
